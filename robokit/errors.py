"""Typed exceptions: every user mistake surfaces as one of these, with a message naming what and where."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


class RobokitError(Exception):
    """Base class: the CLI prints the message of these and exits non-zero, without a traceback."""

    exit_code = 2  # the CLI's exit status: 2 for usage errors, 1 when the inputs could not be converted


class SourceError(RobokitError):
    """A path is missing, unreadable, or not a recording robokit can read."""


class ChannelError(RobokitError):
    """A requested channel does not exist in an episode; the message lists those that do."""

    def __init__(self, missing: str, available: list[str], what: str = "channel") -> None:
        names = ", ".join(sorted(available)) or "none"
        super().__init__(f"{what} {missing!r} not found; available: {names}")
        self.missing = missing
        self.available = sorted(available)


class OptionError(RobokitError):
    """An option has an unknown name, a wrong type or a value out of range."""


class ResampleError(RobokitError):
    """Streams cannot be put on a common grid (no overlap, too few samples)."""


class FrameError(RobokitError):
    """An unknown frame convention or quaternion order was asked for."""


class ConversionError(RobokitError):
    """A writer could not convert an episode (the reason says why)."""


class SimError(RobokitError):
    """The simulator cannot run: no OpenGL context, a model that does not compile, a dataset it cannot replay."""


def _library_errors() -> tuple[type[BaseException], ...]:
    """Exception classes the libraries underneath raise on damaged input (imported only when loaded)."""
    import sqlite3
    import struct
    import sys
    import zipfile
    import zlib

    classes: list[type[BaseException]] = [
        OSError, EOFError, ValueError, LookupError, TypeError, ArithmeticError, RecursionError, MemoryError,
        struct.error, zipfile.BadZipFile, zlib.error, sqlite3.Error]
    for module, name in (("yaml", "YAMLError"), ("av", "FFmpegError"), ("pyarrow", "ArrowException")):
        cls = getattr(sys.modules.get(module), name, None)  # None also while another thread is importing it
        if isinstance(cls, type):
            classes.append(cls)
    return tuple(classes)


def unreadable(exc: BaseException, where: str) -> SourceError | None:
    """A SourceError naming `where` and the library's reason when `exc` is a library's refusal of damaged
    input (a corrupt video, a bad Parquet or zip file, a wrong JSON type, a missing file); None for anything
    else, and for a full disk, which is no fault of the input."""
    import errno

    if isinstance(exc, RobokitError) or not isinstance(exc, _library_errors()):
        return None
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return None
    if isinstance(exc, RecursionError | MemoryError):
        reason = "nested too deeply" if isinstance(exc, RecursionError) else "too large to hold in memory"
    elif isinstance(exc, OSError) and exc.strerror:
        reason = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    else:
        reason = f"{type(exc).__name__}: {exc}".strip().removesuffix(":")
    return SourceError(f"{where}: unreadable ({reason[:300]})")


@contextmanager
def reading(where: str) -> Iterator[None]:
    """Inside the block, a library's refusal of damaged input (see `unreadable`) becomes a SourceError."""
    try:
        yield
    except Exception as exc:
        error = unreadable(exc, where)
        if error is None:
            raise
        raise error from exc


def guarded(load: Callable[[], T], where: str) -> Callable[[], T]:
    """`load` reading under `reading(where)`: a reader's lazy loader whose damaged input names its source."""

    def run() -> T:
        with reading(where):
            return load()

    return run
