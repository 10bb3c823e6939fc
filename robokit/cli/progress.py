"""Rich progress bars for `robokit convert` on a terminal: one bar per format, episodes and frames/s."""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


class BarsProgress:
    """One bar per format, advanced as it assembles each episode; frames and frames/s beside it."""

    def __init__(self) -> None:
        self._bars = Progress(TextColumn("{task.description:<14}"), BarColumn(), MofNCompleteColumn(),
                              TextColumn("episodes  {task.fields[frames]} frames  {task.fields[rate]}"),
                              TimeElapsedColumn(), console=Console(stderr=True))
        self._tasks: dict[str, TaskID] = {}
        self._frames: dict[str, int] = {}
        self._started = 0.0

    def start(self, formats: Sequence[str], episodes: int) -> None:
        self._started = time.perf_counter()
        for name in formats:
            self._tasks[name] = self._bars.add_task(name, total=episodes, frames=0, rate="")
            self._frames[name] = 0
        self._bars.start()

    def advance(self, fmt: str, frames: int) -> None:
        self._frames[fmt] += frames
        rate = self._frames[fmt] / max(time.perf_counter() - self._started, 1e-9)
        self._bars.update(self._tasks[fmt], advance=1, frames=self._frames[fmt], rate=f"{rate:.0f}/s")

    def stop(self) -> None:
        self._bars.stop()
