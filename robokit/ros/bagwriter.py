"""ROS 2 message builders and an MCAP-storage bag writer, shared by the sample and simulator recorders.

`BagWriter` fills a hidden sibling folder and renames it into place when closed without error, so an
interrupted recording never looks complete. Messages may arrive slightly out of log-time order (a
recorder's receive lag); they are written in log-time order once no earlier message can still come.
"""

from __future__ import annotations

import heapq
import io
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
from PIL import Image
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from robokit.errors import RobokitError
from robokit.timeline import CameraInfo

START_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z: recordings start here (plus a minute per episode)

# The topics of a robokit arm recording and their message types.
TOPIC_TYPES: Mapping[str, str] = {
    "/joint_states": "sensor_msgs/msg/JointState", "/joint_commands": "sensor_msgs/msg/JointState",
    "/tf": "tf2_msgs/msg/TFMessage", "/tf_static": "tf2_msgs/msg/TFMessage",
    "/task": "std_msgs/msg/String", "/camera/front/image_raw": "sensor_msgs/msg/Image",
    "/camera/wrist/image_raw/compressed": "sensor_msgs/msg/CompressedImage",
    "/camera/front/camera_info": "sensor_msgs/msg/CameraInfo",
    "/camera/wrist/camera_info": "sensor_msgs/msg/CameraInfo",
}

Typestore = Any  # rosbags' typestore has no usable static types


def typestore() -> Typestore:
    """The ROS 2 typestore messages are built with."""
    return get_typestore(Stores.LATEST)


def stamp(ts: Typestore, ns: int) -> Any:
    return ts.types["builtin_interfaces/msg/Time"](sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def header(ts: Typestore, ns: int, frame_id: str) -> Any:
    return ts.types["std_msgs/msg/Header"](stamp=stamp(ts, ns), frame_id=frame_id)


def camera_info(ts: Typestore, ns: int, frame_id: str, width: int, height: int, fovy_deg: float = 60.0) -> Any:
    """A distortion-free CameraInfo (plumb_bob) for a camera of vertical field of view `fovy_deg`."""
    k = CameraInfo.from_fov(width, height, fovy_deg).k
    p = np.hstack([k, np.zeros((3, 1))]).ravel()
    return ts.types["sensor_msgs/msg/CameraInfo"](
        header=header(ts, ns, frame_id), height=height, width=width, distortion_model="plumb_bob",
        d=np.zeros(5), k=k.ravel(), r=np.eye(3).ravel(), p=p, binning_x=0, binning_y=0,
        roi=ts.types["sensor_msgs/msg/RegionOfInterest"](
            x_offset=0, y_offset=0, height=0, width=0, do_rectify=False
        ),
    )


def transform(ts: Typestore, ns: int, parent: str, child: str, t: np.ndarray, q_xyzw: np.ndarray) -> Any:
    """A TransformStamped of `child` in `parent` (quaternion xyzw, as ROS orders it)."""
    T = ts.types
    return T["geometry_msgs/msg/TransformStamped"](
        header=header(ts, ns, parent), child_frame_id=child,
        transform=T["geometry_msgs/msg/Transform"](
            translation=T["geometry_msgs/msg/Vector3"](x=float(t[0]), y=float(t[1]), z=float(t[2])),
            rotation=T["geometry_msgs/msg/Quaternion"](
                x=float(q_xyzw[0]), y=float(q_xyzw[1]), z=float(q_xyzw[2]), w=float(q_xyzw[3])
            ),
        ),
    )


def tf_message(ts: Typestore, transforms: list[Any]) -> Any:
    return ts.types["tf2_msgs/msg/TFMessage"](transforms=transforms)


def joint_state(ts: Typestore, hdr: Any, names: tuple[str, ...], position: np.ndarray,
                velocity: np.ndarray | None = None, effort: np.ndarray | None = None) -> Any:
    """A JointState; velocity and effort are empty when not given (as command topics publish them)."""
    empty = np.zeros(0)
    return ts.types["sensor_msgs/msg/JointState"](
        header=hdr, name=list(names), position=np.asarray(position, dtype=np.float64),
        velocity=empty if velocity is None else np.asarray(velocity, dtype=np.float64),
        effort=empty if effort is None else np.asarray(effort, dtype=np.float64))


def raw_image(ts: Typestore, hdr: Any, pixels: np.ndarray) -> Any:
    """An rgb8 Image of an H×W×3 uint8 array."""
    height, width = pixels.shape[:2]
    return ts.types["sensor_msgs/msg/Image"](
        header=hdr, height=height, width=width, encoding="rgb8", is_bigendian=0, step=width * 3,
        data=np.ascontiguousarray(pixels).reshape(-1))


def jpeg_image(ts: Typestore, hdr: Any, pixels: np.ndarray, quality: int = 90) -> Any:
    """A JPEG CompressedImage of an H×W×3 uint8 array."""
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=quality)
    return ts.types["sensor_msgs/msg/CompressedImage"](
        header=hdr, format="jpeg", data=np.frombuffer(buf.getvalue(), dtype=np.uint8))


def text(ts: Typestore, value: str) -> Any:
    return ts.types["std_msgs/msg/String"](data=value)


class BagWriter:
    """A ROS 2 bag (MCAP storage) written to a hidden folder and renamed to `out` when closed cleanly.

    `write` takes messages in any order; `advance(ns)` promises that no later message has a log time
    before `ns`, so everything before it is written out (memory stays at a few milliseconds of data).
    Files written into `folder` before closing land beside the bag's storage file.
    """

    def __init__(self, out: Path, ts: Typestore, types: Mapping[str, str] = TOPIC_TYPES) -> None:
        if out.exists():
            raise RobokitError(f"{out}: already exists; recordings are written to a new folder")
        out.parent.mkdir(parents=True, exist_ok=True)
        self.out = out
        self._tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
        self.folder = self._tmp / out.name
        self._ts = ts
        self._types = dict(types)
        self._pending: list[tuple[int, int, str, Any]] = []
        self._seq = 0
        self._writer = Writer(self.folder, version=9, storage_plugin=StoragePlugin.MCAP)
        try:
            self._writer.open()
            self._conns = {topic: self._writer.add_connection(topic, msgtype, typestore=ts)
                           for topic, msgtype in self._types.items()}
        except BaseException:
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise

    def write(self, log_ns: int, topic: str, msg: Any) -> None:
        heapq.heappush(self._pending, (log_ns, self._seq, topic, msg))
        self._seq += 1

    def advance(self, ns: int) -> None:
        """Write out every pending message logged before `ns`."""
        while self._pending and self._pending[0][0] < ns:
            log_ns, _, topic, msg = heapq.heappop(self._pending)
            self._writer.write(self._conns[topic], log_ns, self._ts.serialize_cdr(msg, self._types[topic]))

    def __enter__(self) -> BagWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if kind is None:
                self.advance(np.iinfo(np.int64).max)
            self._writer.close()
            if kind is None:
                self.folder.rename(self.out)
        finally:
            shutil.rmtree(self._tmp, ignore_errors=True)
