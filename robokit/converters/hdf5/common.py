"""What the HDF5 layouts share: opening files, typed errors naming file and dataset, the step grid, lazy frames."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from robokit.converters.images import frame_layout
from robokit.converters.options import camera_channel
from robokit.converters.rlds.reader import encoded_frame
from robokit.errors import SourceError
from robokit.timeline import Frame, ImageStream, Loss, NumericStream, StreamOrigin

# hdf5plugin registers the Blosc/LZ4/Zstd/Bitshuffle filters so compressed datasets open; it is a dependency,
# and where it is missing such datasets fail with h5py's error naming the filter.
with suppress(ImportError):
    import hdf5plugin  # noqa: F401

HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
SUFFIXES = (".hdf5", ".h5", ".he5", ".hdf")
_USERBLOCKS = (0, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)  # where the superblock may start
_NUMBER = re.compile(r"(\d+)")
_ENCODINGS = {1: "mono8", 3: "rgb8", 4: "rgba8"}
LISTED = 40  # datasets named in an "unknown layout" message


def is_hdf5(path: Path) -> bool:
    """True when the HDF5 signature starts the file or follows a user block (512 bytes, 1 KiB, ...)."""
    if not path.is_file():
        return False
    try:
        with path.open("rb") as f:
            for offset in _USERBLOCKS:
                f.seek(offset)
                head = f.read(8)
                if len(head) < 8:
                    return False
                if head == HDF5_MAGIC:
                    return True
    except OSError:
        return False
    return False


def hdf5_files(folder: Path) -> list[Path]:
    """The HDF5 files directly in `folder`, in natural order (episode_2 before episode_10)."""
    try:
        children = [p for p in folder.iterdir() if p.suffix.lower() in SUFFIXES]
    except OSError:
        return []
    return sorted((p for p in children if is_hdf5(p)), key=lambda p: natural_key(p.name))


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key comparing digit runs as numbers: demo_2 < demo_10."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in _NUMBER.split(name) if part)


@contextmanager
def opened(path: Path) -> Iterator[h5py.File]:
    """The file opened read-only. An error on opening, or one h5py raises while the file is used (a damaged
    object header, a dangling link, an attribute of an unexpected type), is a SourceError naming the file."""
    try:
        f = h5py.File(path, "r")
    except (OSError, ValueError) as err:
        raise SourceError(f"{path}: not a readable HDF5 file ({err})") from err
    with f:
        try:
            yield f
        except (OSError, KeyError, ValueError, TypeError, RuntimeError) as err:
            raise SourceError(f"{path}: damaged or unexpected HDF5 content ({type(err).__name__}: {err})") from err


def read_array(path: Path, ds: h5py.Dataset) -> np.ndarray:
    """A whole (small, numeric) dataset; read errors (damaged chunks, missing filters) name file and dataset."""
    try:
        return np.asarray(ds[()])
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise SourceError(f"{path}: dataset {ds.name} cannot be read ({err})") from err


def json_attr(path: Path, node: h5py.Group, name: str) -> dict[str, Any]:
    """An attribute holding a JSON object ({} when absent); bad JSON is a SourceError naming file and attribute."""
    if name not in node.attrs:
        return {}
    raw = node.attrs[name]
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    try:
        value = json.loads(text)
    except ValueError as err:
        raise SourceError(f"{path}: attribute {node.name}@{name} is not valid JSON ({err})") from err
    if not isinstance(value, dict):
        raise SourceError(f"{path}: attribute {node.name}@{name} is not a JSON object")
    return value


def unusable(ds: h5py.Dataset) -> str:
    """Why a dataset cannot be a numeric channel ("" when it can): one row of numbers per step is needed."""
    if ds.ndim == 0 or ds.dtype.kind not in "biuf":
        return "not a numeric array per step"
    if 0 in ds.shape[1:]:
        return f"no values per step (shape {tuple(ds.shape)})"
    return ""


def datasets(group: h5py.Group, prefix: str = "") -> Iterator[tuple[str, h5py.Dataset]]:
    """(path relative to `group`, dataset) for every dataset below `group`, in natural order."""
    for name in sorted(group, key=natural_key):
        item = group.get(name)
        rel = f"{prefix}{name}"
        if isinstance(item, h5py.Dataset):
            yield rel, item
        elif isinstance(item, h5py.Group):
            yield from datasets(item, rel + "/")


def unknown_layout(path: Path, f: h5py.File) -> SourceError:
    """The error for a file in no known layout: it lists the datasets (path, shape, dtype)."""
    found = list(datasets(f))
    lines = [f"  /{rel} {tuple(ds.shape)} {ds.dtype}" for rel, ds in found[:LISTED]]
    if len(found) > LISTED:
        lines.append(f"  ... and {len(found) - LISTED} more")
    listing = "\n".join(lines) or "  (no datasets)"
    return SourceError(f"{path}: HDF5 file in an unknown layout (expected robomimic `data/demo_N`, LIBERO or "
                       f"ALOHA `observations/qpos`; read it with a mapping of `dataset: channel` pairs plus `rate`); "
                       f"its datasets:\n{listing}")


def grid(n: int, rate: float) -> np.ndarray:
    """int64 ns timestamps `index / rate` from 0."""
    return np.round(np.arange(n) * (1e9 / rate)).astype(np.int64)


def grid_warning(path: Path, rate: float) -> str:
    return f"{path}: no timestamps stored; steps placed 1/{rate:g} s apart from 0 (index / rate)"


@dataclass
class Steps:
    """Collects one episode's per-step datasets and truncates them to the shortest, reporting the loss."""

    path: Path
    where: str

    def length(self, lengths: dict[str, int], warnings: list[str], losses: list[Loss]) -> int:
        """The episode's step count: the shortest per-step dataset; longer ones lose their extra rows."""
        if not lengths:
            return 0
        n = min(lengths.values())
        longer = {k: v for k, v in lengths.items() if v > n}
        if longer:
            detail = ", ".join(f"{k} {v}" for k, v in sorted(longer.items()))
            warnings.append(f"{self.path}: {self.where}: datasets differ in length; truncated to the shortest "
                            f"({n} steps; longer: {detail})")
            losses.extend(Loss(f"{self.where.rstrip('/')}/{k}", f"truncated from {v} to {n} steps", v - n)
                          for k, v in sorted(longer.items()))
        return n


def numeric(path: Path, ds: h5py.Dataset, channel: str, times: np.ndarray,
            names: tuple[str, ...] = ()) -> NumericStream:
    """A (T, D) numeric stream of the first len(times) rows of `ds` (trailing axes flattened)."""
    n = len(times)
    values = read_array(path, ds)[:n].reshape(n, int(np.prod(ds.shape[1:]))).astype(np.float64)
    names = names if len(names) == values.shape[1] else ()
    return NumericStream(channel, times, origin=StreamOrigin(ds.name, f"hdf5/{ds.dtype}", "grid"),
                         values=values, names=names)


def frame_shape(path: Path, ds: h5py.Dataset) -> tuple[int, int, int]:
    """(height, width, channels) of a raw image dataset (T, H, W[, C]); SourceError for any other shape."""
    if ds.dtype != np.uint8 or ds.ndim not in (3, 4) or (ds.ndim == 4 and ds.shape[3] not in (1, 3, 4)):
        raise SourceError(f"{path}: dataset {ds.name} is not a (T, H, W, 3) uint8 image array "
                          f"(shape {tuple(ds.shape)}, {ds.dtype})")
    return int(ds.shape[1]), int(ds.shape[2]), int(ds.shape[3]) if ds.ndim == 4 else 1


class DatasetFrames:
    """Frames of one image dataset, read one row at a time on each pass (the file is reopened, nothing cached).

    `encoded` rows are JPEG/PNG bytes zero-padded to a common length (ALOHA's `compress=True`); the padding
    is cut off (a JPEG ends with FF D9, a PNG with its IEND chunk, so trailing zeros are never image bytes)."""

    def __init__(self, path: Path, dataset: str, encoded: bool) -> None:
        self.path = path
        self.dataset = dataset
        self.encoded = encoded

    def iter_frames(self, positions: Iterable[int]) -> Iterator[Frame]:
        with opened(self.path) as f:
            ds = f[self.dataset]
            for p in positions:
                try:
                    row = np.asarray(ds[int(p)])
                except (OSError, ValueError, IndexError) as err:
                    raise SourceError(f"{self.path}: dataset {self.dataset}: frame {p} cannot be read ({err})") from err
                if self.encoded:
                    yield encoded_frame(row.tobytes().rstrip(b"\0"))
                else:
                    yield Frame("raw", pixels=row[..., 0] if row.ndim == 3 and row.shape[2] == 1 else row)


def mapped_camera_channel(user: str | None, default: str) -> str:
    """A camera's channel: the user's mapping (a bare name gets `/rgb`), else `<default>/rgb`."""
    return camera_channel(user) if user else f"{default}/rgb"


def camera(path: Path, ds: h5py.Dataset, channel: str, times: np.ndarray, encoded: bool) -> ImageStream:
    """A lazy camera stream over the first len(times) rows of an image dataset (raw or padded encoded bytes)."""
    source = DatasetFrames(path, ds.name, encoded)
    origin = StreamOrigin(ds.name, "hdf5/image", "grid")
    if encoded:
        if ds.dtype != np.uint8 or ds.ndim != 2:
            raise SourceError(f"{path}: dataset {ds.name} is not a (T, bytes) uint8 array of encoded images "
                              f"(shape {tuple(ds.shape)}, {ds.dtype})")
        h = w = c = 0
        fmt = "jpeg"
        if len(times):
            first = next(source.iter_frames([0]))
            try:
                h, w, c, _ = frame_layout(first)
            except SourceError as err:
                raise SourceError(f"{path}: dataset {ds.name}: frame 0: {err}") from err
            fmt = first.format
        return ImageStream(channel, times, origin=origin, source=source, width=w, height=h,
                           encoding=_ENCODINGS.get(c, "rgb8"), format=fmt)
    h, w, c = frame_shape(path, ds)
    return ImageStream(channel, times, origin=origin, source=source, width=w, height=h, encoding=_ENCODINGS[c])
