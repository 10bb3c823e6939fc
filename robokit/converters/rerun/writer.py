"""`--to rerun`: `<out>/rerun/<episode>.rrd`, one Rerun recording per episode (recording id = episode id).

Streams are logged on two timelines: `time` (ns since the Unix epoch) and `frame_index`, the nearest tick of the
export grid. With `--fps` every stream is resampled onto that grid; without, streams keep their recorded
timestamps and the grid runs at the default rate `prepare` would choose (so a 100 Hz joint stream has several
rows per frame_index). Episodes are encoded by the
export pipeline like the other episode writers (plan, encode anywhere, assemble in order). Rerun stamps
every row and chunk with a time-based random id, so an .rrd is not byte-reproducible: two runs hold the same
data (`rerun rrd compare` passes) in different bytes.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from robokit.converters.consumers import RERUN as RERUN_SDK
from robokit.converters.episodes import file_name
from robokit.converters.images import IMAGE_FORMAT, IMAGE_OPTIONS, JPEG_QUALITY
from robokit.converters.mcap.plan import align
from robokit.converters.options import WriterOptions
from robokit.converters.prepare import default_rate, select_cameras
from robokit.converters.registry import WriteResult
from robokit.converters.rerun.recording import Settings, record
from robokit.converters.staging import staged_dir
from robokit.converters.streaming import Encoded, EpisodeContext, accepted, write_streaming
from robokit.errors import ConversionError, OptionError
from robokit.timeline import Episode

EXTRA = "rerun"  # the optional dependency group holding rerun-sdk
SUFFIX = ".rrd"


def require_sdk() -> None:
    """OptionError (a usage error, before anything is read) when rerun-sdk is not installed."""
    if importlib.util.find_spec("rerun") is None:
        raise OptionError(f"--to rerun needs rerun-sdk: pip install 'robokit[{EXTRA}]'")


@dataclass(frozen=True)
class _Plan:
    """The settings every episode shares and one file name per input episode."""

    settings: Settings
    names: tuple[str, ...]


class RerunConverter:
    """`--to rerun`: Rerun `.rrd` recordings with a default blueprint (cameras, joint plots, 3D scene, logs)."""

    name = "rerun"
    description = "Rerun .rrd per episode: Scalars, EncodedImage + Pinhole, Transform3D, TextLog, a blueprint"
    extra_options = IMAGE_OPTIONS
    consumer = RERUN_SDK

    def check_options(self, options: WriterOptions) -> None:
        require_sdk()

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult:
        return write_streaming(self, episodes, out_dir, options)

    def plan(self, episodes: Sequence[Episode], options: WriterOptions) -> _Plan:
        require_sdk()
        settings = Settings(options, options.value(IMAGE_FORMAT), options.value(JPEG_QUALITY))
        used: set[str] = set()
        return _Plan(settings, tuple(file_name(ep.id, used, SUFFIX) for ep in episodes))

    def encode(self, ctx: EpisodeContext, plan: _Plan) -> Encoded:
        """The episode's whole .rrd on the export grid, and its warning notes."""
        ep, options = ctx.episode, plan.settings.options
        fps, why = (options.fps, "") if options.fps else default_rate(ep, select_cameras(ep, options), options.state)
        if fps <= 0:
            raise ConversionError(f"episode {ep.id}: cannot infer a frame rate; pass fps")
        aligned, frames, notes = align(ep, options)  # without fps, every stream keeps its recorded timestamps
        if why:
            notes.insert(0, ("info", f"frame_index at {fps:g} fps by default: {why}"))
        properties = {**{k: v if isinstance(v, str) else json.dumps(v) for k, v in ep.meta.trace().items()},
                      "episode_id": ep.meta.episode_id, "source_format": ep.meta.source_format,
                      "robot_type": options.robot_type or ep.meta.robot_type, "fps": f"{fps:g}",
                      "resample": options.resample, "frame": options.frame}
        with ctx.spilling() as spill:
            spill.file.write(record(ctx, aligned, fps, notes, plan.settings, properties))
            payload = spill.payload()
        return Encoded(ctx.index, ep.id, payload, frames,
                       warnings=[f"{ep.id}: {text}" for level, text in notes if level == "warning"])

    def assemble(self, parts: Iterable[Encoded], out_dir: Path, plan: _Plan) -> WriteResult:
        result = WriteResult()
        with staged_dir(out_dir / self.name, overwrite=plan.settings.options.overwrite) as root:
            for part in accepted(self.name, parts, result):
                name = plan.names[part.index]
                part.data.move_to(root / name)
                result.files.append(name)
                result.episode_files[part.episode_id] = [name]
        return result

    def check(self, format_dir: Path) -> list[str]:
        """Every .rrd starts like one; with rerun-sdk, each loads with one recording named by its file and a
        blueprint."""
        from robokit.converters.rerun.check import check_folder

        return check_folder(format_dir)


RERUN = RerunConverter()
