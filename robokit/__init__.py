"""robokit: robot recordings in, training-ready datasets and simulator scenes out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from robokit import frames
from robokit.errors import RobokitError
from robokit.resample import resample  # rebinds the name: `robokit.resample` is the function
from robokit.sources import ReadOptions, open_episodes
from robokit.sources.naming import load_mapping
from robokit.timeline import Episode

__version__ = "0.1.0"


def open(
    paths: str | Path | Iterable[str | Path],
    mapping: Mapping[str, str] | str | Path | None = None,
    *,
    verify: bool = True,
    allow_outside: bool = False,
) -> list[Episode]:
    """Lazy episodes of one or many recordings, format sniffed from the content.

    `mapping` overrides topic → channel names: a dict, or a YAML/JSON file of `topic: channel` pairs.
    `verify=False` skips the chunk CRC checks of MCAP files. `allow_outside` lets a dataset folder reach files
    through symlinks to elsewhere (refused by default).
    """
    return open_episodes(paths, ReadOptions(mapping=load_mapping(mapping), verify=verify, allow_outside=allow_outside))


__all__ = ["Episode", "RobokitError", "__version__", "frames", "open", "resample"]
