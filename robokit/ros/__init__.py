"""ROS messages shared by every container that holds them (ROS 1/2 bags, MCAP): decoding into timeline streams,
bag directories, and the ROS 2 bag writer the sample and simulator recorders use."""
