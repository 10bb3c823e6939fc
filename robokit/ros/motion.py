"""Motion messages → streams: poses, pose arrays, twists, wrenches, odometry and IMU."""

from __future__ import annotations

from typing import Any

import numpy as np

from robokit.ros.fields import frame_id, header_stamp, quat, vec3
from robokit.ros.topic_builder import Poses, Rows, TopicBuilder
from robokit.sources import naming
from robokit.timeline import Stream


class PoseBuilder(TopicBuilder):
    """`<name>/pose` (PoseStamped, PoseWithCovarianceStamped, Foxglove PoseInFrame)."""

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"pose"}), "pose")
        self.series: Poses | None = None

    def add(self, msg: Any, log_time: int, position: int) -> None:
        pose = msg.pose.pose if self.msgtype.endswith("WithCovarianceStamped") else msg.pose
        if self.series is None:
            self.series = Poses(naming.frame_name(frame_id(msg)))
        self.series.add(self.clock.add(header_stamp(msg), log_time), vec3(pose.position), quat(pose.orientation))

    def build(self) -> list[Stream]:
        return [self.series.stream(self, f"{self.name}/pose", self.name)] if self.series else []


class PosesBuilder(TopicBuilder):
    """`<name>/pose_<i>` for the i-th pose of PoseArray / Foxglove PosesInFrame messages."""

    multi = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"poses"}), "poses")
        self.series: list[Poses] = []

    def add(self, msg: Any, log_time: int, position: int) -> None:
        sample = self.clock.add(header_stamp(msg), log_time)
        for i, pose in enumerate(msg.poses):
            if i == len(self.series):
                self.series.append(Poses(naming.frame_name(frame_id(msg))))
            self.series[i].add(sample, vec3(pose.position), quat(pose.orientation))

    def build(self) -> list[Stream]:
        return [s.stream(self, f"{self.name}/pose_{i}", f"{self.name}_{i}") for i, s in enumerate(self.series)]


TWIST_NAMES = ("linear.x", "linear.y", "linear.z", "angular.x", "angular.y", "angular.z")
TWIST_UNIT = "m/s, rad/s"
WRENCH_NAMES = ("force.x", "force.y", "force.z", "torque.x", "torque.y", "torque.z")
WRENCH_UNIT = "N, N·m"


class TwistBuilder(TopicBuilder):
    """`<name>/twist`: 6 dims linear.x … angular.z (Twist, TwistStamped, TwistWithCovarianceStamped)."""

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"twist"}), "twist")
        self.rows = Rows()

    def add(self, msg: Any, log_time: int, position: int) -> None:
        twist = msg
        while hasattr(twist, "twist"):  # Stamped and WithCovariance wrappers
            twist = twist.twist
        self.rows.add(self.clock.add(header_stamp(msg), log_time), vec3(twist.linear) + vec3(twist.angular))

    def build(self) -> list[Stream]:
        return [self.rows.stream(self, f"{self.name}/twist", TWIST_NAMES, TWIST_UNIT)] if len(self.rows) else []


class WrenchBuilder(TopicBuilder):
    """`<name>/wrench`: 6 dims force.x … torque.z (Wrench, WrenchStamped)."""

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"wrench"}), "wrench")
        self.rows = Rows()

    def add(self, msg: Any, log_time: int, position: int) -> None:
        wrench = getattr(msg, "wrench", msg)
        self.rows.add(self.clock.add(header_stamp(msg), log_time), vec3(wrench.force) + vec3(wrench.torque))

    def build(self) -> list[Stream]:
        return [self.rows.stream(self, f"{self.name}/wrench", WRENCH_NAMES, WRENCH_UNIT)] if len(self.rows) else []


class OdometryBuilder(TopicBuilder):
    """`<name>/pose` and `<name>/twist` from nav_msgs Odometry or Foxglove Odometry."""

    multi = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"odom", "odometry"}), "odom")
        self.poses: Poses | None = None
        self.child = self.name
        self.rows = Rows()

    def add(self, msg: Any, log_time: int, position: int) -> None:
        sample = self.clock.add(header_stamp(msg), log_time)
        if self.msgtype == "foxglove.Odometry":
            pose, twist = msg.pose, vec3(msg.linear_velocity) + vec3(msg.angular_velocity)
            child = msg.body_frame_id
        else:
            pose, twist = msg.pose.pose, vec3(msg.twist.twist.linear) + vec3(msg.twist.twist.angular)
            child = msg.child_frame_id
        if self.poses is None:
            self.poses = Poses(naming.frame_name(frame_id(msg)))
            self.child = naming.frame_name(str(child)) or self.name
        self.poses.add(sample, vec3(pose.position), quat(pose.orientation))
        self.rows.add(sample, twist)

    def build(self) -> list[Stream]:
        if self.poses is None:
            return []
        return [
            self.poses.stream(self, f"{self.name}/pose", self.child),
            self.rows.stream(self, f"{self.name}/twist", TWIST_NAMES, TWIST_UNIT),
        ]


class ImuBuilder(TopicBuilder):
    """`<name>/orientation` (pose, zero translation), `<name>/angular_velocity`, `<name>/linear_acceleration`."""

    multi = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"imu", "data", "data_raw"}), "imu")
        self.orientation: Poses | None = None
        self.frame = self.name
        self.gyro = Rows()
        self.accel = Rows()

    def add(self, msg: Any, log_time: int, position: int) -> None:
        sample = self.clock.add(header_stamp(msg), log_time)
        if self.orientation is None:
            self.orientation = Poses("")
            self.frame = naming.frame_name(frame_id(msg)) or self.name
        covariance = np.asarray(msg.orientation_covariance, dtype=np.float64)
        if not (covariance.size and covariance[0] == -1):  # -1: the IMU gives no orientation
            self.orientation.add(sample, (0.0, 0.0, 0.0), quat(msg.orientation))
        self.gyro.add(sample, vec3(msg.angular_velocity))
        self.accel.add(sample, vec3(msg.linear_acceleration))

    def build(self) -> list[Stream]:
        if self.orientation is None:
            return []
        xyz = ("x", "y", "z")
        streams: list[Stream] = []
        if len(self.orientation.rows):
            streams.append(self.orientation.stream(self, f"{self.name}/orientation", self.frame))
        streams.append(self.gyro.stream(self, f"{self.name}/angular_velocity", xyz, "rad/s"))
        streams.append(self.accel.stream(self, f"{self.name}/linear_acceleration", xyz, "m/s²"))
        return streams
