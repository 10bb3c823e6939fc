"""Where episodes are encoded: in this process, in local worker processes, or as tasks on a Ray cluster.

Every executor yields results in input order and keeps at most a few episodes per worker in flight, so
memory stays bounded and the assembled output equals the serial one.
"""

from __future__ import annotations

import os
import select
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robokit import heap
from robokit.converters import get_converter
from robokit.converters.staging import alive
from robokit.converters.streaming import Encoded, EpisodeContext, StreamingConverter, encode_safely
from robokit.errors import ConversionError, OptionError
from robokit.export.items import EpisodeRef, open_item
from robokit.limits import MAX_WORKERS
from robokit.timeline import Episode

EXECUTORS = ("local", "ray")
Jobs = tuple[tuple[str, Any], ...]  # (format name, its plan)
_IN_FLIGHT_PER_WORKER = 2


@dataclass(frozen=True)
class EpisodeTask:
    """One episode to encode for every format, picklable: where to open it, its input index, the plans, and
    the spill folder for its payloads (None: returned in memory)."""

    ref: EpisodeRef
    index: int
    jobs: Jobs
    spill: Path | None = None


def encode_all(ctx: EpisodeContext, jobs: Jobs) -> list[Encoded]:
    """The episode encoded for each format in `jobs` (its read and resampling shared)."""
    encoded = [encode_safely(get_converter(name), ctx, plan) for name, plan in jobs]  # type: ignore[arg-type]
    heap.trim()
    return encoded


_opened: dict[str, list[Episode]] = {}  # per worker process: the last item opened (items hold many episodes)


def encode_task(task: EpisodeTask) -> list[Encoded]:
    """Open the task's episode again (episodes do not pickle) and encode it; runs in a worker."""
    key = repr((task.ref.item, task.ref.verify, task.ref.mapping))
    if key not in _opened:
        _opened.clear()
        _opened[key] = open_item(task.ref.item, task.ref.verify, mapping=dict(task.ref.mapping))
    ctx = EpisodeContext(_opened[key][task.ref.position], task.index, task.spill, local=False)
    return encode_all(ctx, task.jobs)


def auto_parallelism(formats: Sequence[tuple[StreamingConverter, Any]], episodes: Sequence[Episode]
                     ) -> tuple[int, int]:
    """`workers=0`: (worker processes, episodes encoded at once in this process). One worker per CPU, divided by
    the cores one episode already keeps busy (LeRobot encodes its cameras in parallel threads), so memory holds
    one copy of the pipeline per busy core, not per CPU. When that leaves one process (2 cameras on 2 cores), it
    overlaps two episodes: an episode's small cameras finish first, and the next episode's encoders take the
    free cores (`video.encode_later` keeps the encoders to one per core, earlier episodes first)."""
    busy = max((int(conv.busy_cores(episodes, plan)) for conv, plan in formats  # type: ignore[attr-defined]
                if hasattr(conv, "busy_cores")), default=1)
    workers = max(1, min(MAX_WORKERS, (os.cpu_count() or 1) // max(1, busy)))
    return workers, 2 if workers == 1 else 1


def encoded_here(episodes: Sequence[Episode], jobs: Jobs, spill: Path | None, at_once: int
                 ) -> Iterator[list[Encoded]]:
    """Each episode's result in input order, encoded in this process: serially, or `at_once` episodes
    overlapping in threads."""
    pending: deque[Future[list[Encoded]]] = deque()
    for index, episode in enumerate(episodes):
        ctx = EpisodeContext(episode, index, spill, concurrent=at_once)
        if at_once <= 1:
            yield encode_all(ctx, jobs)
            continue
        pending.append(_in_thread(encode_all, ctx, jobs))
        if len(pending) >= at_once:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def _in_thread(fn: Callable[[EpisodeContext, Jobs], list[Encoded]], ctx: EpisodeContext, jobs: Jobs
               ) -> Future[list[Encoded]]:
    """`fn(ctx, jobs)` in a daemon thread: an export that stops early (an error, Ctrl-C) does not wait for it."""
    future: Future[list[Encoded]] = Future()

    def run() -> None:
        future.set_running_or_notify_cancel()
        try:
            future.set_result(fn(ctx, jobs))
        except BaseException as exc:  # re-raised by result() in the caller's thread
            future.set_exception(exc)

    threading.Thread(target=run, name=f"robokit-episode-{ctx.index}", daemon=True).start()
    return future


def encoded_in_order(tasks: Sequence[EpisodeTask], executor: str, workers: int, ray_address: str | None
                     ) -> Iterator[list[Encoded]]:
    """Each task's result, in task order, from worker processes or Ray tasks."""
    check_executor(executor)
    yield from (_local(tasks, workers) if executor == "local" else _ray(tasks, ray_address, workers))


def check_executor(executor: str) -> None:
    """OptionError naming the executors when `executor` is none of them."""
    if executor not in EXECUTORS:
        raise OptionError(f"executor {executor!r}: expected one of {', '.join(EXECUTORS)}")


def watch_parent(pid: int) -> None:
    """Worker initializer: exit as soon as process `pid` (the export) is gone, even when it was killed with -9,
    instead of waiting forever on its queue (and keeping the forkserver alive)."""

    def watch() -> None:
        try:
            fd = os.pidfd_open(pid)  # Linux: readable once the process has exited
        except ProcessLookupError:
            os._exit(1)
        except (AttributeError, OSError):
            fd = -1
        if fd >= 0:
            select.select([fd], [], [])
        else:
            while alive(pid):
                time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="robokit-parent-watch", daemon=True).start()


def _start_worker(parent: int, encoders: int) -> None:
    """A worker process: exits with the export (`watch_parent`) and runs its share of the CPUs' encoders."""
    heap.own_process()
    watch_parent(parent)
    _run_encoders(encoders)


def _local(tasks: Sequence[EpisodeTask], workers: int) -> Iterator[list[Encoded]]:
    import multiprocessing  # here: an export encoding in its own process never loads it (about 40 ms)
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # forkserver: the parent runs assembler threads, and forking a threaded process can deadlock
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=max(1, min(workers, len(tasks))), mp_context=context,
                             initializer=_start_worker, initargs=(os.getpid(), (os.cpu_count() or 1) // workers)
                             ) as pool:
        pending: deque[Future[list[Encoded]]] = deque()
        try:
            for task in tasks:
                pending.append(pool.submit(encode_task, task))
                if len(pending) >= workers * _IN_FLIGHT_PER_WORKER:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        except BrokenProcessPool as exc:
            raise ConversionError(
                "a worker process died (out of memory, or a script calling robokit.export with workers > 1 "
                "outside `if __name__ == '__main__':`); retry with workers=1 to see the episode's own error"
            ) from exc


def _ray_task(task: EpisodeTask) -> list[Encoded]:
    """A Ray task holds one CPU (Ray's default), so its encoders take turns on it."""
    _run_encoders(1)
    return encode_task(task)


def _run_encoders(count: int) -> None:
    """Let this process run `count` video encoders at once."""
    from robokit.converters.video import set_encoder_slots  # here: exports without video never import PyAV

    set_encoder_slots(count)


def _ray(tasks: Sequence[EpisodeTask], address: str | None, workers: int) -> Iterator[list[Encoded]]:
    try:
        import ray
    except ImportError as exc:
        raise OptionError("the ray executor needs Ray: pip install 'robokit[ray]'") from exc
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        remote: Any = ray.remote(_ray_task)
        cpus = int(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call]
        window = max(workers, cpus) * _IN_FLIGHT_PER_WORKER
        pending: deque[Any] = deque()
        for task in tasks:
            pending.append(remote.remote(task))
            if len(pending) >= window:
                yield ray.get(pending.popleft())
        while pending:
            yield ray.get(pending.popleft())
    finally:
        if started_here:
            ray.shutdown()
