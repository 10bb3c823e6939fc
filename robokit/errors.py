"""Typed exceptions: every user mistake surfaces as one of these, with a message naming what and where."""

from __future__ import annotations


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
