"""Executors for format tasks: local processes or an existing Ray cluster."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from robokit.errors import OptionError
from robokit.export.job import FormatReport, FormatTask, run_format

EXECUTORS = ("local", "ray")


def run_tasks(tasks: Sequence[FormatTask], executor: str, workers: int, ray_address: str | None
              ) -> list[tuple[FormatReport, list[str]]]:
    """Run every task and return their results in task order (so output equals the serial run)."""
    if executor == "local":
        with ProcessPoolExecutor(max_workers=max(1, min(workers, len(tasks)))) as pool:
            return list(pool.map(run_format, tasks))
    if executor == "ray":
        return _run_ray(tasks, ray_address)
    raise OptionError(f"executor {executor!r}: expected one of {', '.join(EXECUTORS)}")


def _run_ray(tasks: Sequence[FormatTask], address: str | None) -> list[tuple[FormatReport, list[str]]]:
    try:
        import ray
    except ImportError as exc:
        raise OptionError("the ray executor needs Ray: pip install 'robokit[ray]'") from exc
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        remote: Any = ray.remote(run_format)
        return list(ray.get([remote.remote(t) for t in tasks]))
    finally:
        if started_here:
            ray.shutdown()
