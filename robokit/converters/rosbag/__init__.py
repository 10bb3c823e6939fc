"""ROS 1 bags and ROS 2 sqlite3 bags (read only; ROS 2 bags in MCAP storage are read by `converters/mcap`)."""
