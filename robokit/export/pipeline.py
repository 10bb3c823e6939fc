"""One pass over the episodes for every streaming format: encode each episode once, assemble each format.

Episodes are encoded (read, resampled, images and video encoded) for all formats at once, here or in
workers; each format assembles its output in its own thread from a small queue, in input order. Large
payloads travel as spill files beside the output (only Ray tasks on a cluster return them in memory). When
anything fails half-way the assemblers are aborted, so no half-written output is renamed into place.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from robokit.converters.registry import WriteResult
from robokit.converters.spill import spill_folder
from robokit.converters.streaming import Encoded, StreamingConverter
from robokit.errors import ConversionError, RobokitError
from robokit.export.executors import EpisodeTask, Jobs, encoded_here, encoded_in_order
from robokit.export.items import Inputs
from robokit.export.progress import Progress

_END, _ABORT = object(), object()
_QUEUE_EPISODES = 4


class _Aborted(Exception):
    """Raised inside an assembler when the pass stops early; its staging folder is then removed."""


class _Assembly:
    """One format assembling in its own thread from a bounded queue of encoded episodes."""

    def __init__(self, conv: StreamingConverter, plan: Any, out_dir: Path, progress: Progress) -> None:
        self.conv, self.plan, self.out_dir, self.progress = conv, plan, out_dir, progress
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=_QUEUE_EPISODES)
        self.result: WriteResult | None = None
        self.error: BaseException | None = None
        self._ended = False
        self.thread = threading.Thread(target=self._run, name=f"assemble-{conv.name}", daemon=True)
        self.thread.start()

    def _parts(self) -> Iterator[Encoded]:
        while True:
            item = self.queue.get()
            if item is _END or item is _ABORT:
                self._ended = True
                if item is _ABORT:
                    raise _Aborted
                return
            yield item
            self.progress.advance(self.conv.name, 0 if item.error else item.frames)

    def _run(self) -> None:
        try:
            self.result = self.conv.assemble(self._parts(), self.out_dir, self.plan)
        except BaseException as exc:  # reported by finish(); the queue is drained so senders never block
            self.error = exc
            while not self._ended:
                item = self.queue.get()
                self._ended = item is _END or item is _ABORT

    def put(self, part: Encoded) -> None:
        self.queue.put(part)

    def finish(self, abort: bool = False) -> WriteResult | RobokitError:
        self.queue.put(_ABORT if abort else _END)
        self.thread.join()
        if isinstance(self.error, RobokitError):
            return self.error
        if isinstance(self.error, OSError):  # e.g. a full disk: the staging folder is already gone
            exc = self.error
            return ConversionError(f"{self.conv.name}: {exc.strerror or exc} ({exc.filename or self.out_dir})")
        if self.error is not None and not abort:
            raise self.error
        assert self.result is not None or abort
        return self.result or ConversionError(f"{self.conv.name}: aborted")


def write_episodes(
    formats: Sequence[tuple[StreamingConverter, Any]], inputs: Inputs, out_dir: Path, executor: str, workers: int,
    ray_address: str | None, progress: Progress, at_once: int = 1,
) -> dict[str, WriteResult | RobokitError]:
    """Write every (converter, plan) from one pass over `inputs.episodes`; a failed format gets its error. With
    one worker, `at_once` episodes are encoded at once in this process (see `executors.auto_parallelism`)."""
    jobs: Jobs = tuple((conv.name, plan) for conv, plan in formats)
    progress.start([name for name, _ in jobs], len(inputs.episodes))
    with spill_folder(out_dir) as folder:
        spill = folder if ray_address is None else None  # a cluster's workers do not see this file system
        assemblies = [_Assembly(conv, plan, out_dir, progress) for conv, plan in formats]
        try:
            for encoded in _encoded(inputs, jobs, executor, (workers, at_once), ray_address, spill):
                for assembly, part in zip(assemblies, encoded, strict=True):
                    assembly.put(part)
        except BaseException:
            for assembly in assemblies:
                assembly.finish(abort=True)
            progress.stop()
            raise
        results = {a.conv.name: a.finish() for a in assemblies}
    progress.stop()
    return results


def _encoded(inputs: Inputs, jobs: Jobs, executor: str, parallelism: tuple[int, int], ray_address: str | None,
             spill: Path | None) -> Iterator[list[Encoded]]:
    """Here with the episodes already open, else in workers that open them again."""
    workers, at_once = parallelism
    if executor == "local" and (workers <= 1 or len(inputs.episodes) < 2):
        yield from encoded_here(inputs.episodes, jobs, spill, at_once)
        return
    tasks = [EpisodeTask(ref, index, jobs, spill) for index, ref in enumerate(inputs.refs)]
    yield from encoded_in_order(tasks, executor, workers, ray_address)
