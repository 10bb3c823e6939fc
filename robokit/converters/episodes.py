"""Episodes prepared one at a time for streaming writers, skipping the ones that cannot be converted."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from robokit.converters.options import WriterOptions
from robokit.converters.prepare import PreparedEpisode, prepare
from robokit.converters.registry import WriteResult
from robokit.errors import ChannelError, ConversionError, RobokitError
from robokit.timeline import Episode


def prepared_episodes(fmt: str, episodes: Sequence[Episode], options: WriterOptions,
                      result: WriteResult) -> Iterator[tuple[int, PreparedEpisode]]:
    """(input index, prepared episode) in input order; unconvertible episodes are skipped with a reason.

    Every episode must have the first one's cameras and state/action widths; when none can be
    converted, the first episode's error is raised.
    """
    if not episodes:
        raise ConversionError(f"{fmt}: no episodes to write")
    first: PreparedEpisode | None = None
    error: RobokitError | None = None
    for index, episode in enumerate(episodes):
        try:
            p = prepare(episode, options)
            if first is not None:
                _check_consistent(first, p)
        except (ChannelError, ConversionError) as exc:
            error = error or exc
            result.skipped.append((episode.id, str(exc)))
            result.warnings.append(f"skipped episode {episode.id}: {exc}")
            continue
        first = first or p
        result.episodes += 1
        result.frames += p.n_frames
        yield index, p
    if first is None:
        assert error is not None
        raise error


def _check_consistent(first: PreparedEpisode, p: PreparedEpisode) -> None:
    if sorted(first.cameras) != sorted(p.cameras):
        raise ConversionError(f"episode {p.source.id}: cameras {sorted(p.cameras)} differ from "
                              f"{sorted(first.cameras)} of episode {first.source.id}")
    for name, cam in p.cameras.items():
        ref = first.cameras[name]
        if (cam.width, cam.height) != (ref.width, ref.height):
            raise ConversionError(f"episode {p.source.id}: {name} is {cam.width}x{cam.height}, episode "
                                  f"{first.source.id} has {ref.width}x{ref.height}; pass image_size")
    dims = (first.state.dim, first.action.dim if first.action else None, sorted(first.poses))
    if dims != (p.state.dim, p.action.dim if p.action else None, sorted(p.poses)):
        raise ConversionError(f"episode {p.source.id}: state/action widths differ from episode {first.source.id}")


def trace(p: PreparedEpisode) -> dict[str, Any]:
    """`EpisodeMeta.trace()`, the segment defaulting to the written grid's first and last time."""
    fields = p.source.meta.trace()
    fields["segment"] = fields["segment"] or [int(p.timestamps[0]), int(p.timestamps[-1])]
    return fields
