"""Progress of an export as it runs: episodes assembled and frames per format (the CLI draws bars)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Progress(Protocol):
    """Told about every format's progress; called from the formats' assembler threads."""

    def start(self, formats: Sequence[str], episodes: int) -> None: ...

    def advance(self, fmt: str, frames: int) -> None: ...

    def stop(self) -> None: ...


class NoProgress:
    """Progress that shows nothing (the Python API's default; the job still logs one line per format)."""

    def start(self, formats: Sequence[str], episodes: int) -> None:
        pass

    def advance(self, fmt: str, frames: int) -> None:
        pass

    def stop(self) -> None:
        pass
