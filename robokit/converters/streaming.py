"""Episode-parallel writing: plan (once, from the index pass), encode (per episode, anywhere), assemble (in order).

`encode` is a pure function of (episode, plan) returning picklable bytes and arrays, so episodes can be
encoded in worker processes or Ray tasks and assembled in input order by the parent. `write` runs the very
same three steps in one process, so parallel output equals serial output byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol, runtime_checkable

from robokit import heap
from robokit.converters.extras import signature as extras_signature
from robokit.converters.options import WriterOptions
from robokit.converters.points import unheld
from robokit.converters.prepare import PreparedEpisode, prepare
from robokit.converters.registry import WriteResult
from robokit.converters.spill import Payload, Spill, SpilledFrames, spill_folder, spilling
from robokit.errors import ConversionError, RobokitError, unreadable
from robokit.timeline import Episode, ImageStream


class EpisodeContext:
    """One episode being encoded for every requested format; resampling and image encoding are memoised.

    Formats asking for the same options share one `prepare` (read and resampled once), and RLDS and
    WebDataset asking for the same JPEG/PNG encoding share the encoded frames. Large payloads and frames
    go to files in `spill` (see `converters.spill`); without one they stay in memory.
    """

    def __init__(self, episode: Episode, index: int, spill: Path | None = None, local: bool = True,
                 concurrent: int = 1) -> None:
        self.episode = episode
        self.index = index
        self.spill = spill
        self.local = local  # assembled in this process (not a worker's)
        self.concurrent = concurrent  # episodes this process encodes at once (their encoders share the cores)
        self._prepared: dict[str, PreparedEpisode] = {}
        self._asked: set[str] = set()  # the prepared episodes the current format used (for its notes)
        self._images: dict[tuple[str, Any, int], Sequence[bytes]] = {}

    def prepared(self, options: WriterOptions) -> PreparedEpisode:
        key = repr(options)
        self._asked.add(key)
        if key not in self._prepared:
            self._prepared[key] = prepare(self.episode, options)
            heap.trim()  # what reading and resampling freed (it grows with the episode), before the encoders start
        return self._prepared[key]

    def notes(self) -> list[str]:
        """What `prepare` chose by default (the state channel, the fps) for the current format, once each."""
        return list(dict.fromkeys(n for key in sorted(self._asked) for n in self._prepared[key].notes))

    def spilling(self) -> AbstractContextManager[Spill]:
        """Where to write one payload of this episode (a spill file when the export has a spill folder)."""
        return spilling(self.spill)

    def deferred(self, size: Callable[[], int], write: Callable[[BinaryIO], object]) -> Payload:
        """A payload of `size()` bytes that `write` produces: left to the assembler when it runs in this process
        (the bytes are then written once, straight into the output), else written now through a spill, whose
        file gives the size (`size` is then never called: for WebDataset it means producing the members)."""
        if self.local:
            return Payload(size(), writer=write)
        with self.spilling() as spill:
            write(spill.file)
            return spill.payload()

    def images(self, channel: str, stream: ImageStream, spec: Any, quality: int) -> Sequence[bytes]:
        """Every frame of `stream` encoded as `spec` says (see `images.encoded_frames`), encoded once and kept
        in a spill file when there is a spill folder."""
        from robokit.converters.images import encoded_frames

        key = (f"{channel}@{id(stream)}", spec, quality)
        if key not in self._images:
            frames = encoded_frames(channel, stream, spec, quality)
            self._images[key] = list(frames) if self.spill is None else SpilledFrames(self.spill, frames)
        return self._images[key]


@dataclass
class Encoded:
    """One episode encoded for one format: its payload, or the reason it cannot be converted.

    `signature` is what must be equal across a dataset's episodes (cameras, image sizes, vector widths).
    """

    index: int
    episode_id: str
    data: Any = None
    frames: int = 0
    signature: Any = None
    error: str = ""
    warnings: list[str] = field(default_factory=list)


@runtime_checkable
class StreamingConverter(Protocol):
    """A converter whose per-episode work can run in other processes (the export pipeline parallelises it).

    One that writes point streams sets `holds_points = True`; for the others every point stream is a warning.
    """

    name: str

    def plan(self, episodes: Sequence[Episode], options: WriterOptions) -> Any:
        """Decisions needing every episode (ids, common fps, splits), from the index pass; picklable."""

    def encode(self, ctx: EpisodeContext, plan: Any) -> Encoded:
        """Encode one episode; raise a RobokitError (ChannelError, SourceError, ...) when it cannot be converted."""

    def assemble(self, parts: Iterable[Encoded], out_dir: Path, plan: Any) -> WriteResult:
        """Write `<out_dir>/<name>/` from the encoded episodes, in input order, atomically."""


def encode_safely(conv: StreamingConverter, ctx: EpisodeContext, plan: Any) -> Encoded:
    """`conv.encode`, an unconvertible episode (a typed error: missing channel, no overlap to resample; or a
    library refusing damaged input: a corrupt or missing video) becoming an Encoded with its reason; other
    errors (a full disk, a bug) abort."""
    ctx._asked.clear()
    try:
        part = conv.encode(ctx, plan)
    except RobokitError as exc:
        return Encoded(ctx.index, ctx.episode.id, error=str(exc))
    except Exception as exc:
        error = unreadable(exc, ctx.episode.meta.source_uri or ctx.episode.id)
        if error is None:
            raise
        return Encoded(ctx.index, ctx.episode.id, error=str(error))
    part.warnings += ctx.notes()
    if not getattr(conv, "holds_points", False):  # a format without point clouds says which streams it leaves out
        part.warnings += unheld(str(getattr(conv, "description", "")).split(" ")[0] or conv.name, ctx.episode)
    return part


def write_streaming(conv: StreamingConverter, episodes: Sequence[Episode], out_dir: Path,
                    options: WriterOptions) -> WriteResult:
    """The serial path: plan, encode each episode, assemble (what `Converter.write` does for these formats)."""
    plan = conv.plan(episodes, options)
    with spill_folder(out_dir) as spill:
        parts = (encode_safely(conv, EpisodeContext(ep, i, spill), plan) for i, ep in enumerate(episodes))
        return conv.assemble(parts, out_dir, plan)


def accepted(fmt: str, parts: Iterable[Encoded], result: WriteResult) -> Iterator[Encoded]:
    """The convertible parts in order, counted in `result`; the others skipped with their reason.

    A part whose signature differs from the first accepted one is skipped too. When none is accepted,
    the first reason is raised (as ConversionError), so a format never writes an empty dataset.
    """
    first: Encoded | None = None
    error = ""
    for part in parts:
        result.warnings += [w for w in part.warnings if w not in result.warnings]  # announcements come once
        if not part.error and first is not None and part.signature != first.signature:
            part.error = (f"episode {part.episode_id}: {describe_difference(part.signature, first.signature)} "
                          f"than episode {first.episode_id}")
        if part.error:
            error = error or part.error
            result.skipped.append((part.episode_id, part.error))
            result.warnings.append(f"skipped episode {part.episode_id}: {part.error}")
            continue
        first = first or part
        result.episodes += 1
        result.frames += part.frames
        result.episode_frames[part.episode_id] = part.frames
        yield part
    if first is None:
        raise ConversionError(error or f"{fmt}: no episodes to write")


def describe_difference(a: Any, b: Any) -> str:
    """Which fields of two signature dicts differ, for the skip message."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        return "other " + ", ".join(f"{k} ({a.get(k)} vs {b.get(k)})" for k in keys)
    return f"a different layout ({a} vs {b})"


def prepared_signature(p: PreparedEpisode) -> dict[str, Any]:
    """What tabular datasets need equal in every episode: cameras and sizes, state/action widths, poses, extras."""
    return {"cameras": sorted((name, cam.width, cam.height) for name, cam in p.cameras.items()),
            "state": p.state.dim, "action": p.action.dim if p.action else None, "poses": sorted(p.poses),
            "extras": extras_signature(p.extras)}
