"""Encoded episode payloads spilled to files, so memory is bound by a threshold, not by an episode's length.

An export makes one spill folder beside its outputs (a staging folder: removed on success and on failure,
and swept like any other when the run was killed). Encoders write each episode's payload (an MCAP file,
an RLDS record, WebDataset tar members) through a `Spill`: in memory while it is small, moved to a file
in the spill folder once it passes `SPILL_ABOVE`. The handle (`Payload`) crosses worker processes; the
assemblers then stream the bytes into their output, or rename the file into place. A payload encoded in
the assembler's own process may instead be left to the assembler to produce (`EpisodeContext.deferred`),
so it is written once. Encoded frames that several formats share (`SpilledFrames`) spill the same way and
are read back one at a time. Without a spill folder (Ray tasks on other machines) payloads stay in memory.
The output bytes are the same every way.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, cast, overload

import numpy as np

from robokit import heap
from robokit.converters.staging import staging_prefix

SPILL_ABOVE = 1 << 20  # bytes of one payload (or one camera's frames) kept in memory before spilling
# (bench/export_memory.py, RLDS alone from 15 s to 120 s: peak 76 -> 82 MiB at 4 MiB, 76 -> 123 at 32 MiB)
_COPY_BLOCK = 1 << 20


@dataclass(frozen=True)
class Payload:
    """The bytes of one encoded episode for one format: in a spill file (`path`), in memory (`data`), or still
    to be produced by `writer` (only within one process: the assembler then writes them straight out)."""

    size: int
    path: Path | None = None
    data: bytes = b""
    writer: Callable[[BinaryIO], object] | None = field(default=None, compare=False, repr=False)

    def copy_to(self, out: BinaryIO) -> None:
        """Append the bytes to `out`, streamed from the spill file (removed afterwards)."""
        if self.writer is not None:
            self.writer(out)
            return
        if self.path is None:
            out.write(self.data)
            return
        with self.path.open("rb") as f:
            shutil.copyfileobj(f, out, _COPY_BLOCK)
        self.path.unlink()

    def move_to(self, dest: Path) -> None:
        """Make `dest` hold the bytes: the spill file renamed (it lies beside the output), else written."""
        if self.path is not None:
            os.replace(self.path, dest)
            return
        with dest.open("wb") as f:
            self.copy_to(f)


class _Spooled(io.BufferedIOBase):
    """A write-only stream held in memory up to `limit` bytes, then moved to a new file in `folder`."""

    def __init__(self, folder: Path | None, limit: int) -> None:
        super().__init__()
        self.folder, self.limit = folder, limit
        self.buffer_: io.BytesIO | None = io.BytesIO()
        self.path: Path | None = None
        self.disk: BinaryIO | None = None
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        n = memoryview(data).nbytes
        if self.buffer_ is not None and self.folder is not None and self.size + n > self.limit:
            fd, name = tempfile.mkstemp(dir=self.folder, suffix=".part")
            self.path, self.disk = Path(name), os.fdopen(fd, "wb")
            self.disk.write(self.buffer_.getbuffer())
            self.buffer_ = None
        target = self.disk if self.buffer_ is None else self.buffer_
        assert target is not None
        target.write(data)
        self.size += n
        return n

    def tell(self) -> int:
        return self.size

    def discard(self) -> None:
        if self.disk is not None:
            self.disk.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)


class Spill:
    """One payload being written to `file`: kept in memory while small, else in a spill file."""

    def __init__(self, folder: Path | None, limit: int | None = None) -> None:
        self._spooled = _Spooled(folder, SPILL_ABOVE if limit is None else limit)
        self.file = cast(BinaryIO, self._spooled)

    def payload(self) -> Payload:
        """Hand over what was written."""
        spooled = self._spooled
        if spooled.buffer_ is not None:
            return Payload(spooled.size, data=spooled.buffer_.getvalue())
        assert spooled.disk is not None and spooled.path is not None
        spooled.disk.close()
        return Payload(spooled.size, spooled.path)

    def discard(self) -> None:
        self._spooled.discard()


class SpilledFrames(Sequence[bytes]):
    """Encoded frames kept in memory up to `limit` bytes, beyond that in an unnamed file in the spill folder
    (each read back on access)."""

    def __init__(self, folder: Path, frames: Iterable[bytes], limit: int | None = None) -> None:
        limit = SPILL_ABOVE if limit is None else limit
        self._memory: list[bytes] | None = []
        self._file: BinaryIO | None = None
        self._lengths = heap.Ints()  # in a file past a few thousand: a long episode's frames are many
        self._offsets = heap.Ints()
        at = 0
        for data in frames:
            if self._memory is not None and at + len(data) > limit:
                # unlinked already, and open as long as the frames are: gone when they are collected
                self._file = tempfile.TemporaryFile(dir=folder)  # noqa: SIM115
                self._file.writelines(self._memory)
                self._memory = None
            if self._memory is None:
                assert self._file is not None
                self._file.write(data)
            else:
                self._memory.append(data)
            self._offsets.append(at)
            self._lengths.append(len(data))
            at += len(data)
        if self._file is not None:
            self._file.flush()

    def __len__(self) -> int:
        return len(self._lengths)

    @property
    def lengths(self) -> np.ndarray:
        """Each frame's size in bytes, (N,) int64."""
        return self._lengths.array()

    @overload
    def __getitem__(self, index: int) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...

    def __getitem__(self, index: int | slice) -> bytes | list[bytes]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if self._memory is not None:
            return self._memory[index]
        assert self._file is not None
        return os.pread(self._file.fileno(), int(self.lengths[index]), int(self._offsets.array()[index]))


@contextmanager
def spilling(folder: Path | None, limit: int | None = None) -> Iterator[Spill]:
    """A `Spill` whose file is removed when the block raises (an episode that could not be encoded)."""
    spill = Spill(folder, limit)
    try:
        yield spill
    except BaseException:
        spill.discard()
        raise


@contextmanager
def spill_folder(out_dir: Path) -> Iterator[Path]:
    """A hidden folder in `out_dir` for one export's spilled payloads, removed with whatever is left in it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=staging_prefix("spill"), dir=out_dir))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
