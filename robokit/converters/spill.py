"""Encoded episode payloads spilled to files, so memory is bound by what an encoder holds, not by episodes.

An export makes one spill folder beside its outputs (a staging folder: removed on success and on failure,
and swept like any other when the run was killed). Encoders write each episode's payload (an MCAP file,
an RLDS record, WebDataset tar members) into a file there and pass on a small `Payload` handle, across
worker processes too; assemblers then stream the bytes into their output, or rename the file into place.
Encoded frames that several formats share (`SpilledFrames`) wait there too, each read back when written out.
Without a spill folder (Ray tasks on other machines) payloads stay in memory: the output bytes are the same.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, overload

from robokit.converters.staging import staging_prefix

_COPY_BLOCK = 1 << 20


@dataclass(frozen=True)
class Payload:
    """The bytes of one encoded episode for one format: in a spill file (`path`) or in memory (`data`)."""

    size: int
    path: Path | None = None
    data: bytes = b""

    def copy_to(self, out: BinaryIO) -> None:
        """Append the bytes to `out`, streamed from the spill file (removed afterwards)."""
        if self.path is None:
            out.write(self.data)
            return
        with self.path.open("rb") as f:
            shutil.copyfileobj(f, out, _COPY_BLOCK)
        self.path.unlink()

    def move_to(self, dest: Path) -> None:
        """Make `dest` hold the bytes: the spill file renamed (it lies beside the output), else written."""
        if self.path is None:
            dest.write_bytes(self.data)
        else:
            os.replace(self.path, dest)


class Spill:
    """One payload being written: `file` is a new file in the spill folder (or a buffer without one)."""

    def __init__(self, folder: Path | None) -> None:
        self.path: Path | None = None
        if folder is None:
            self.file: BinaryIO = io.BytesIO()
        else:
            fd, name = tempfile.mkstemp(dir=folder, suffix=".part")
            self.path, self.file = Path(name), os.fdopen(fd, "wb")

    def payload(self) -> Payload:
        """Close the file and hand over what was written."""
        if self.path is None:
            assert isinstance(self.file, io.BytesIO)
            data = self.file.getvalue()
            return Payload(len(data), data=data)
        self.file.close()
        return Payload(self.path.stat().st_size, self.path)

    def discard(self) -> None:
        self.file.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)


class SpilledFrames(Sequence[bytes]):
    """Encoded frames written once to an unnamed file in the spill folder; frame i is read back on access."""

    def __init__(self, folder: Path, frames: Iterable[bytes]) -> None:
        # unlinked already, and open as long as the frames are: gone when they are collected
        self._file = tempfile.TemporaryFile(dir=folder)  # noqa: SIM115
        self.lengths: list[int] = []
        self._offsets: list[int] = []
        at = 0
        for data in frames:
            self._file.write(data)
            self._offsets.append(at)
            self.lengths.append(len(data))
            at += len(data)
        self._file.flush()

    def __len__(self) -> int:
        return len(self.lengths)

    @overload
    def __getitem__(self, index: int) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...

    def __getitem__(self, index: int | slice) -> bytes | list[bytes]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return os.pread(self._file.fileno(), self.lengths[index], self._offsets[index])


@contextmanager
def spilling(folder: Path | None) -> Iterator[Spill]:
    """A `Spill` whose file is removed when the block raises (an episode that could not be encoded)."""
    spill = Spill(folder)
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
