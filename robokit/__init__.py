"""robokit: robot recordings in, training-ready datasets and simulator scenes out.

`open` reads recordings into lazy episodes, `resample` puts them on one grid, `export` converts recordings into
datasets and scenes (`robokit.export(...)`; the package `robokit.export` is callable), `frames` converts conventions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from robokit import frames
from robokit.errors import (
    ChannelError,
    ConversionError,
    FrameError,
    OptionError,
    ResampleError,
    RobokitError,
    SimError,
    SourceError,
)
from robokit.resample import resample  # rebinds the name: `robokit.resample` is the function
from robokit.sources import ReadOptions, open_episodes
from robokit.sources.naming import load_mapping
from robokit.timeline import (
    CameraInfo,
    Episode,
    EventStream,
    ImageStream,
    NumericStream,
    PointStream,
    PoseStream,
    Stream,
)
from robokit.version import __version__

if TYPE_CHECKING:  # type checkers cannot see a callable module: to them `robokit.export` is the function it calls
    from robokit.export.job import ExportJob, export
else:
    from robokit import export
    from robokit.export import ExportJob


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


__all__ = ["CameraInfo", "ChannelError", "ConversionError", "Episode", "EventStream", "ExportJob", "FrameError",
           "ImageStream", "NumericStream", "OptionError", "PointStream", "PoseStream", "ResampleError", "RobokitError",
           "SimError", "SourceError", "Stream", "__version__", "export", "frames", "open", "resample"]
