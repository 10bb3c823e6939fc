"""MCAP writer: one file per episode, Foxglove protobuf or ROS 2 CDR, aligned channels plus derived topics."""
