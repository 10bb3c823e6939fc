"""Stream kinds of the timeline model: numeric series, pose series, images and events."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from robokit import heap
from robokit.timeline.images import Frame, FrameSource, MappedFrameSource, resize_frame


@dataclass(frozen=True)
class StreamOrigin:
    """Where a stream came from: topic, message type, which clock gave its timestamps, and the source's own
    description of it when the source format has one (a LeRobot feature as JSON text; see converters/extras)."""

    topic: str
    msgtype: str
    time_source: str = "log"  # "header" (message header stamp) or "log" (recorder's receive time)
    feature: str = ""  # JSON object, e.g. {"dtype": "bool", "shape": [1], "names": null}


def ints(values: np.ndarray, block: int = 512) -> Iterator[int]:
    """An integer array's values as Python ints, boxed a block at a time: `tolist()` of a long episode's
    timestamps or positions would hold one object per sample for as long as the loop over them runs. A mapped
    array's pages leave resident memory a block at a time (`heap.blocks`)."""
    for part in heap.blocks(values, block):
        yield from part.tolist()


def sort_timestamps(timestamps: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Stable time order with exact-duplicate timestamps dropped (the first sample wins).

    Returns (sorted unique int64 timestamps, the index of each kept sample, number of duplicates dropped).
    """
    ts, keep, dropped, _ = order_samples(timestamps)
    return ts, keep, dropped


def order_samples(
    timestamps: np.ndarray, content: Callable[[int], Hashable] | None = None
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Stable time order; samples sharing a timestamp are duplicates only when their `content` is equal too.

    `content(i)` is asked only for samples that share a timestamp; without it every repeated timestamp
    is a duplicate. A duplicate is dropped (the first sample
    wins); samples sharing a timestamp with different content are kept in recorded order, each moved 1 ns
    after the previous one so timestamps stay strictly increasing. Returns (timestamps, the index of each
    kept sample, duplicates dropped, samples moved).
    """
    ts = np.asarray(timestamps, dtype=np.int64)
    if len(ts) < 2 or bool(np.all(ts[1:] > ts[:-1])):  # the usual case, without the sort's n-sized temporaries
        return ts.copy() if ts is timestamps else ts, np.arange(len(ts), dtype=np.int64), 0, 0
    order = np.argsort(ts, kind="stable")
    ts_sorted = ts[order]
    same = np.zeros(len(ts_sorted), dtype=bool)
    same[1:] = ts_sorted[1:] == ts_sorted[:-1]
    keep = ~same
    if content is not None:
        run: set[Hashable] = set()
        for i in np.flatnonzero(same):
            if not same[i - 1]:
                run = {content(int(order[i - 1]))}
            this = content(int(order[i]))
            keep[i] = this not in run
            run.add(this)
    kept = ts_sorted[keep]
    steps = np.arange(len(kept), dtype=np.int64)
    spaced = np.maximum.accumulate(kept - steps) + steps if len(kept) else kept
    return spaced, order[keep], int((~keep).sum()), int((spaced != kept).sum())


@dataclass(frozen=True)
class Stream:
    """Common part of all streams: a name (`group/field`), sorted unique int64 ns timestamps, an origin."""

    kind: ClassVar[str] = "stream"
    name: str
    timestamps: np.ndarray
    origin: StreamOrigin | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        self._hold(timestamps=self.timestamps)

    def _hold(self, **arrays: np.ndarray) -> None:
        """Set the stream's arrays, a long episode's in mapped files (see `heap.mapped`)."""
        for name, array in arrays.items():
            object.__setattr__(self, name, heap.mapped(array) if isinstance(array, np.ndarray) else array)

    def __len__(self) -> int:
        return len(self.timestamps)

    @property
    def start_ns(self) -> int:
        return int(self.timestamps[0]) if len(self) else 0

    @property
    def end_ns(self) -> int:
        return int(self.timestamps[-1]) if len(self) else 0

    def take(self, indices: np.ndarray, timestamps: np.ndarray | None = None) -> Stream:
        """The samples at `indices` (repeats allowed), optionally re-stamped at `timestamps`."""
        raise NotImplementedError

    def renamed(self, name: str) -> Stream:
        return replace(self, name=name)

    def _times(self, indices: np.ndarray, timestamps: np.ndarray | None) -> np.ndarray:
        return np.asarray(self.timestamps[indices] if timestamps is None else timestamps, dtype=np.int64)


@dataclass(frozen=True)
class NumericStream(Stream):
    """An N×D float series with one name per dimension and a unit (e.g. joint positions in rad)."""

    kind: ClassVar[str] = "numeric"
    values: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    names: tuple[str, ...] = ()
    unit: str = ""

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=np.float64)
        if values.ndim == 1:
            values = values[:, None]
        super().__post_init__()
        self._hold(values=values)
        if values.shape[0] != len(self.timestamps):
            raise ValueError(f"{self.name}: {values.shape[0]} rows for {len(self.timestamps)} timestamps")
        if not self.names:
            object.__setattr__(self, "names", tuple(f"{i}" for i in range(values.shape[1])))

    @property
    def dim(self) -> int:
        return int(self.values.shape[1])

    def take(self, indices: np.ndarray, timestamps: np.ndarray | None = None) -> NumericStream:
        return replace(self, timestamps=self._times(indices, timestamps), values=self.values[indices])


@dataclass(frozen=True)
class PoseStream(Stream):
    """Poses of `child_frame` in `parent_frame`: translation N×3 and unit quaternions N×4 (always xyzw).

    `convention` names the frame convention the poses are expressed in (see robokit.frames);
    `is_camera` marks sensor poses, whose axes follow the convention's camera axes.
    """

    kind: ClassVar[str] = "pose"
    translation: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    quaternion: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    parent_frame: str = ""
    child_frame: str = ""
    convention: str = "ros"
    static: bool = False
    is_camera: bool = False

    def __post_init__(self) -> None:
        t = np.asarray(self.translation, dtype=np.float64).reshape(-1, 3)
        q = np.asarray(self.quaternion, dtype=np.float64).reshape(-1, 4)
        if not (len(t) == len(q) == len(self.timestamps)):
            raise ValueError(f"{self.name}: {len(t)} translations, {len(q)} quaternions, {len(self)} times")
        norms = np.linalg.norm(q, axis=1, keepdims=True)
        q = np.divide(q, norms, out=np.full_like(q, np.nan), where=norms > 0)
        super().__post_init__()
        self._hold(translation=t, quaternion=q)

    def take(self, indices: np.ndarray, timestamps: np.ndarray | None = None) -> PoseStream:
        return replace(
            self,
            timestamps=self._times(indices, timestamps),
            translation=self.translation[indices],
            quaternion=self.quaternion[indices],
        )

    def matrices(self) -> np.ndarray:
        """N×4×4 homogeneous transforms (parent_from_child)."""
        from scipy.spatial.transform import Rotation

        out = np.tile(np.eye(4), (len(self), 1, 1))
        if len(self):
            out[:, :3, :3] = Rotation.from_quat(self.quaternion).as_matrix()
            out[:, :3, 3] = self.translation
        return out


@dataclass(frozen=True)
class CameraInfo:
    """Pinhole intrinsics (3×3 K, pixels, OpenCV pixel-centre convention) and distortion, when known."""

    width: int
    height: int
    k: np.ndarray
    distortion: np.ndarray = field(default_factory=lambda: np.zeros(0))
    distortion_model: str = ""
    frame_id: str = ""

    @classmethod
    def from_fov(cls, width: int, height: int, fovy_deg: float, frame_id: str = "") -> CameraInfo:
        """A centred, square-pixel, distortion-free camera with vertical field of view `fovy_deg` (for cameras
        described by their fov: simulated ones, or recordings without a calibration)."""
        f = 0.5 * height / np.tan(np.radians(fovy_deg) / 2)
        k = np.array([[f, 0, (width - 1) / 2], [0, f, (height - 1) / 2], [0, 0, 1]], dtype=np.float64)
        return cls(width, height, k, frame_id=frame_id)

    def scaled(self, width: int, height: int) -> CameraInfo:
        """The intrinsics after resizing the image to width×height."""
        sx, sy = width / self.width, height / self.height
        k = np.array(self.k, dtype=np.float64).copy()
        k[0, :] *= sx
        k[1, :] *= sy
        return replace(self, width=width, height=height, k=k)


@dataclass(frozen=True)
class ImageStream(Stream):
    """A camera stream whose frames decode on access; `positions` index frames in `source`.

    `encoding` is the pixel layout of decoded frames (rgb8, mono8, 16UC1, 32FC1, ...); `format` is how
    frames are stored (jpeg, png, raw).
    """

    kind: ClassVar[str] = "image"
    source: FrameSource | None = None
    positions: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    width: int = 0
    height: int = 0
    encoding: str = "rgb8"
    format: str = "raw"
    frame_id: str = ""
    camera: CameraInfo | None = None

    def __post_init__(self) -> None:
        positions = np.asarray(self.positions, dtype=np.int64)
        if len(positions) == 0 and len(self.timestamps):
            positions = np.arange(len(self.timestamps), dtype=np.int64)
        super().__post_init__()
        self._hold(positions=positions)
        if len(positions) != len(self.timestamps):
            raise ValueError(f"{self.name}: {len(positions)} frame positions for {len(self)} timestamps")

    @property
    def is_depth(self) -> bool:
        return self.encoding in ("16UC1", "mono16", "32FC1")

    def take(self, indices: np.ndarray, timestamps: np.ndarray | None = None) -> ImageStream:
        return replace(self, timestamps=self._times(indices, timestamps), positions=self.positions[indices])

    def frames(self, indices: Sequence[int] | None = None) -> Iterator[Frame]:
        """Frames in stream order (or at `indices`), decoded one at a time."""
        if self.source is None:
            raise ValueError(f"{self.name}: image stream has no frame source")
        positions = self.positions if indices is None else self.positions[np.asarray(indices, dtype=np.int64)]
        return self.source.iter_frames(ints(positions))

    def frame(self, index: int) -> Frame:
        return next(iter(self.frames([index])))

    def resized(self, width: int, height: int) -> ImageStream:
        """The same stream with frames resized lazily to width×height (intrinsics scaled to match)."""
        if (width, height) == (self.width, self.height) or self.source is None:
            return self
        camera = self.camera.scaled(width, height) if self.camera else None
        return replace(
            self,
            source=MappedFrameSource(self.source, resize_frame(width, height)),
            width=width,
            height=height,
            format="raw",
            camera=camera,
        )


@dataclass(frozen=True)
class EventStream(Stream):
    """Timestamped strings: task instructions, annotations, log lines."""

    kind: ClassVar[str] = "event"
    values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.values) != len(self.timestamps):
            raise ValueError(f"{self.name}: {len(self.values)} values for {len(self)} timestamps")

    def take(self, indices: np.ndarray, timestamps: np.ndarray | None = None) -> EventStream:
        return replace(
            self, timestamps=self._times(indices, timestamps), values=tuple(self.values[i] for i in indices)
        )
