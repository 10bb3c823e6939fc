"""What an MCAP message encoding provides: schemas per message kind and one serialiser per kind.

Two implementations, chosen by name in `encoders.py`: Foxglove protobuf schemas (`protobuf.py`) and ROS 2 CDR
(`ros2.py`). Every serialiser takes the message time in ns; it becomes the message's own timestamp (header stamp).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from robokit.timeline import CameraInfo
from robokit.timeline.points import Scan

Kind = Literal["joint_states", "compressed_image", "compressed_video", "raw_image", "calibration", "transforms",
               "poses", "log", "text", "event", "point_cloud", "laser_scan"]
Level = Literal["info", "warning"]
Floats = npt.NDArray[np.float64]


class Encoder(Protocol):
    """Serialises robokit values into one encoding's messages; `schema` gives (name, encoding, data) per kind."""

    profile: str

    def schema(self, kind: Kind) -> tuple[str, str, bytes]: ...

    def channel_metadata(self, topic: str) -> dict[str, str]: ...

    def joint_states(self, stamp: int, names: Sequence[str], position: Floats | None, velocity: Floats | None,
                     effort: Floats | None) -> bytes: ...

    def compressed_image(self, stamp: int, frame_id: str, fmt: str, data: bytes) -> bytes: ...

    def compressed_video(self, stamp: int, frame_id: str, fmt: str, data: bytes) -> bytes: ...

    def raw_image(self, stamp: int, frame_id: str, pixels: np.ndarray, encoding: str) -> bytes: ...

    def calibration(self, stamp: int, frame_id: str, info: CameraInfo) -> bytes: ...

    def transforms(self, stamp: int, parents: Sequence[str], children: Sequence[str], translation: Floats,
                   quaternion: Floats) -> bytes: ...

    def poses(self, stamp: int, frame_id: str, translation: Floats, quaternion: Floats) -> bytes: ...

    def point_cloud(self, stamp: int, frame_id: str, points: np.ndarray, fields: Sequence[str]) -> bytes: ...

    def laser_scan(self, stamp: int, frame_id: str, scan: Scan) -> bytes: ...

    def log(self, stamp: int, level: Level, name: str, text: str) -> bytes: ...

    def text(self, stamp: int, name: str, text: str) -> bytes: ...

    def event(self, start: int, end: int, name: str, fields: Mapping[str, str]) -> bytes: ...


def projection(info: CameraInfo) -> tuple[list[float], list[float], list[float], list[float], str]:
    """(D, K, R, P) row-major lists and the distortion model of a pinhole calibration (R identity, P = [K | 0])."""
    k = np.asarray(info.k, dtype=np.float64).reshape(3, 3)
    d = [float(v) for v in np.asarray(info.distortion, dtype=np.float64).reshape(-1)]
    model = info.distortion_model or "plumb_bob"
    if model == "plumb_bob" and not d:
        d = [0.0] * 5
    p = np.hstack([k, np.zeros((3, 1))])
    return d, k.reshape(-1).tolist(), np.eye(3).reshape(-1).tolist(), p.reshape(-1).tolist(), model


def packed_points(points: np.ndarray) -> tuple[bytes, int]:
    """(little-endian float32 bytes, point stride) of N×C points: the data of PointCloud and PointCloud2."""
    return np.ascontiguousarray(points, dtype="<f4").tobytes(), 4 * int(points.shape[1])
