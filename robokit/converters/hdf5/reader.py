"""HDF5 demonstration files (robomimic / Isaac Lab Mimic, LIBERO, ALOHA / ACT) as lazy timeline episodes.

The HDF5 signature picks this reader, the groups inside pick the layout; a file in no known layout is read
through the user's mapping (see `mapped`), else it is a SourceError listing its datasets. A folder of HDF5
files gives their episodes in natural order (episode_2 before episode_10). Numeric datasets are read whole
when an episode loads (they are small); images stay in the file and are read one row at a time. HDF5
demonstrations store no clock: steps are placed at `index / rate` from 0, with a warning.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from robokit.converters.hdf5 import aloha, mapped, robomimic
from robokit.converters.hdf5.common import hdf5_files, is_hdf5, opened, unknown_layout
from robokit.errors import SourceError
from robokit.sources.registry import ReadOptions
from robokit.timeline import Episode
from robokit.timeline.episode import LoadedWithLosses


def read_file(path: Path, options: ReadOptions) -> list[Episode]:
    """The episodes of one HDF5 file, by its layout."""
    with opened(path) as f:
        if robomimic.matches(f):
            return robomimic.read(path, f, options.mapping)
        if aloha.matches(f):
            return aloha.read(path, f, options.mapping)
        if mapped.mapped_datasets(f, options.mapping):
            return mapped.read(path, f, options.mapping)
        raise unknown_layout(path, f)


def _noted(episode: Episode, notes: tuple[str, ...]) -> LoadedWithLosses:
    """`episode`'s streams with `notes` added to its warnings."""
    return episode.streams, episode.skipped, [*notes, *episode.warnings], episode.losses


class Hdf5Reader:
    """An HDF5 file, or a folder of them (files there that cannot be read are skipped with a warning on the
    folder's first episode; the folder fails only when none can be read)."""

    name = "hdf5"
    description = "HDF5 demonstrations (robomimic, LIBERO, ALOHA/ACT; a file or a folder of files)"

    def sniff(self, path: Path) -> bool:
        return is_hdf5(path) or (path.is_dir() and bool(hdf5_files(path)))

    def read(self, path: Path, options: ReadOptions) -> list[Episode]:
        if not path.is_dir():
            return read_file(path, options)
        episodes: list[Episode] = []
        failed: list[str] = []
        for file in hdf5_files(path):
            try:
                episodes.extend(read_file(file, options))
            except SourceError as err:
                failed.append(f"{file.name} skipped (not converted): {err}")
        if failed and not episodes:
            raise SourceError(f"{path}: none of its {len(failed)} HDF5 file(s) can be read; {failed[0]}")
        if failed:
            first = episodes[0]
            episodes[0] = Episode(first.meta, loader=partial(_noted, first, tuple(f"{path}: {f}" for f in failed)))
        return episodes


HDF5_READER = Hdf5Reader()
