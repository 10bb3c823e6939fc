"""One episode as a Rerun recording (rerun-sdk): every stream on the `time` and `frame_index` timelines.

Entities: each numeric channel at `/<channel>` (Scalars, one named series per dimension), derived joint velocity
and action under `/derived`, each camera at `/cameras/<channel>` (EncodedImage: recorded JPEG/PNG bytes kept,
other frames encoded once as `images.py` says) with its calibration as a Pinhole, each TF edge at
`/tf/<child>` (Transform3D between named frames, as Rerun's own MCAP importer writes them), the end-effector
path as InstancePoses3D, the task and other events as TextLog, and robokit's notes at `/robokit/log`.
Columns are sent in batches (`send_columns`), so no per-sample Python logging call is made.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from robokit.converters.images import first_frame, image_spec, recorded_format
from robokit.converters.mcap.channels import camera_frame, nominal_camera
from robokit.converters.mcap.derived_topics import end_effector, episode_events
from robokit.converters.mcap.tftree import Edge, Note, Tree, build_tree
from robokit.converters.options import WriterOptions
from robokit.converters.streaming import EpisodeContext
from robokit.converters.videocopy import copyable
from robokit.errors import ConversionError
from robokit.timeline import Episode, EventStream, ImageStream, NumericStream, PoseStream
from robokit.timeline.video import CodedVideo

APPLICATION_ID = "robokit"
IMAGE_BATCH = 64  # frames per send_columns call: bounds the encoded bytes held at once per camera
MEDIA_TYPES = {"jpeg": "image/jpeg", "png": "image/png"}
VIDEO_CODECS = {"h264": "H264", "hevc": "H265", "av1": "AV1"}  # coded video → rr.VideoCodec (Annex B / OBUs)


@dataclass(frozen=True)
class Settings:
    """What every episode's recording shares: the writer options, the image format and JPEG quality."""

    options: WriterOptions
    image_format: str
    jpeg_quality: int


class Grid:
    """The export grid (first tick `t0`, `fps`): every time's `frame_index` is its nearest tick, from 0."""

    def __init__(self, t0: int, fps: float) -> None:
        self.t0, self.fps = t0, fps

    def indexes(self, rr: Any, timestamps: np.ndarray) -> list[Any]:
        """The `time` (ns since the Unix epoch) and `frame_index` columns of `timestamps`."""
        t = np.asarray(timestamps, dtype=np.int64)
        frame = np.maximum(np.rint((t - self.t0) * self.fps / 1e9), 0).astype(np.int64)
        return [rr.TimeColumn("time", timestamp=t.astype("datetime64[ns]")),
                rr.TimeColumn("frame_index", sequence=frame)]


def entity(rr: Any, *parts: str) -> str:
    """An entity path from channel-like names (`/` separates parts; other characters escaped as Rerun needs)."""
    return "/".join(rr.escape_entity_path_part(p) for part in parts for p in part.split("/") if p)


def record(ctx: EpisodeContext, aligned: Episode, fps: float, notes: list[Note], settings: Settings,
           properties: Mapping[str, str]) -> bytes:
    """The episode's whole .rrd (recording id = episode id, plus its default blueprint) as bytes."""
    import rerun as rr

    from robokit.converters.rerun.blueprint import blueprint

    ep, options = ctx.episode, settings.options
    streams = {n: s for n, s in aligned.streams.items() if len(s)}
    notes += [("info", f"{n}: empty stream; not written") for n, s in aligned.streams.items() if not len(s)]
    if not streams:
        raise ConversionError(f"episode {ep.id}: every stream is empty")
    t0 = min(s.start_ns for s in streams.values())
    timed = [s.timestamps[0] for s in streams.values() if isinstance(s, NumericStream | ImageStream)]
    grid = Grid(int(min(timed)) if timed else t0, fps)
    rec = rr.RecordingStream(APPLICATION_ID, recording_id=ep.id, send_properties=False)
    sink = rec.binary_stream()
    rec.send_recording_name(ep.id)
    rec.send_recording_start_time_nanos(t0)
    rec.send_property("episode", rr.AnyValues(**properties))
    cameras = {n: s for n, s in streams.items() if isinstance(s, ImageStream)}
    frames = {camera_frame(n, s) for n, s in cameras.items()}
    tree = build_tree({n: s for n, s in streams.items() if isinstance(s, PoseStream)}, frames, options.frame, t0)
    notes += tree.notes
    numeric = {n: s for n, s in streams.items() if isinstance(s, NumericStream)}
    for name, s in sorted(numeric.items()):
        _scalars(rr, rec, grid, entity(rr, name), s)
    series = [*(entity(rr, n) for n in sorted(numeric)), *_derived(rr, rec, grid, aligned, options, numeric, notes)]
    logged = [_camera(rr, rec, grid, ctx, name, s, settings, notes) for name, s in sorted(cameras.items())]
    _transforms(rr, rec, grid, tree)
    ee = end_effector(tree, options.poses, frames)
    if ee is not None:
        rec.log("derived/ee_path", rr.InstancePoses3D(translations=ee.translation, quaternions=ee.quaternion),
                rr.CoordinateFrame(ee.parent), static=True)
    task = options.task or (ep.tasks[0] if ep.tasks else "")
    for name, event in sorted(streams.items()):
        if isinstance(event, EventStream):
            rec.send_columns(entity(rr, name), grid.indexes(rr, event.timestamps),
                             rr.TextLog.columns(text=list(event.values), level=["INFO"] * len(event)))
    events = episode_events(aligned, aligned.start_ns or t0, aligned.end_ns or t0, task)
    rec.send_columns("episode/events", grid.indexes(rr, np.array([e[0] for e in events], dtype=np.int64)),
                     rr.TextLog.columns(text=[f"{name}: {json.dumps({'end_ns': end, **fields})}"
                                              for _, end, name, fields in events],
                                        level=["INFO"] * len(events)))
    notes += [("info", f"source topic {k.topic} ({k.msgtype}) not read: {k.reason} [{k.count} messages]")
              for k in ep.skipped]
    notes += [("info", f"source: {w}") for w in ep.warnings]
    if notes:
        rec.send_columns("robokit/log", grid.indexes(rr, np.full(len(notes), t0, dtype=np.int64)),
                         rr.TextLog.columns(text=[text for _, text in notes],
                                            level=["WARN" if level == "warning" else "INFO" for level, _ in notes]))
    rec.send_blueprint(blueprint([c for c in logged if c], series, tree.root if tree.edges else ""), make_active=True,
                       make_default=True)
    rec.flush()
    data: bytes = sink.read()
    return data


def _scalars(rr: Any, rec: Any, grid: Grid, path: str, s: NumericStream) -> None:
    """A numeric stream as Scalars with one named series per dimension (names logged once, static)."""
    names = list(s.names) if len(s.names) == s.values.shape[1] else [f"{i}" for i in range(s.values.shape[1])]
    rec.log(path, rr.SeriesLines(names=names), static=True)
    rec.send_columns(path, grid.indexes(rr, s.timestamps), rr.Scalars.columns(scalars=s.values))


def _derived(rr: Any, rec: Any, grid: Grid, ep: Episode, options: WriterOptions,
             numeric: Mapping[str, NumericStream], notes: list[Note]) -> list[str]:
    """`derived/joint_velocity` (the state's np.gradient over time) and `derived/action` (the action channel);
    the entities written."""
    written = []
    if options.state in numeric:
        velocity = ep[f"{options.state}_velocity"]
        assert isinstance(velocity, NumericStream)
        _scalars(rr, rec, grid, "derived/joint_velocity", velocity)
        written.append("derived/joint_velocity")
    else:
        notes.append(("info", f"no numeric state channel {options.state!r}: no derived/joint_velocity"))
    if options.action:
        action = ep[options.action]
        if not isinstance(action, NumericStream):
            raise ConversionError(f"episode {ep.id}: action channel {options.action!r} is a {action.kind} stream, "
                                  "not numeric")
        _scalars(rr, rec, grid, "derived/action", action)
        written.append("derived/action")
    return written


def _camera(rr: Any, rec: Any, grid: Grid, ctx: EpisodeContext, name: str, s: ImageStream, settings: Settings,
            notes: list[Note]) -> str:
    """`cameras/<channel>`: EncodedImage (EncodedDepthImage for depth; VideoStream for coded video, its packets
    as recorded) in the camera's image plane and its Pinhole; the entity, or "" if skipped."""
    recorded = ctx.episode.streams.get(name)
    fmt = recorded_format(recorded) if isinstance(recorded, ImageStream) else "raw"
    video, why = copyable(s, tuple(VIDEO_CODECS)) if hasattr(rr, "VideoStream") else (None, "")
    try:
        spec = image_spec(name, first_frame(s), fmt, settings.image_format) if video is None else None
    except ConversionError as exc:
        notes.append(("warning", f"{name}: not written ({exc})"))
        return ""
    frame = camera_frame(name, s)
    plane = f"{frame}_image_plane"
    path = entity(rr, "cameras", name)
    camera = s.camera
    if camera is None:
        camera = nominal_camera(s)
        notes.append(("warning", f"{name}: no intrinsics; nominal calibration written"))
    k = np.asarray(camera.k, dtype=np.float64).reshape(3, 3)
    rec.log(path, rr.Pinhole(image_from_camera=k, resolution=[camera.width, camera.height], parent_frame=frame,
                               child_frame=plane), rr.CoordinateFrame(plane), static=True)
    if video is not None:
        notes.append(("info", f"{name}: {video.codec} packets passed through as VideoStream"))
        _video(rr, rec, grid, path, s, video)
        return path
    assert spec is not None
    if why:
        notes.append(("warning", f"{name}: coded video not passed through: {why}"))
    how = "passed through" if spec.format == fmt else f"encoded once as {spec.format}"
    notes.append(("info", f"{name}: {s.width}x{s.height} frames {how}"))
    media = MEDIA_TYPES[spec.format]
    # depth arrives as 16-bit PNG millimetres, which the viewer's depth default (1000 units per metre) reads
    archetype = rr.EncodedDepthImage if s.is_depth else rr.EncodedImage
    frames = ctx.images(name, s, spec, settings.jpeg_quality)
    for start, batch in _batches(frames, IMAGE_BATCH):
        rec.send_columns(path, grid.indexes(rr, s.timestamps[start:start + len(batch)]),
                         archetype.columns(blob=batch, media_type=[media] * len(batch)))
    return path


def _video(rr: Any, rec: Any, grid: Grid, path: str, s: ImageStream, video: CodedVideo) -> None:
    """VideoStream samples: one recorded packet per frame at the frame's time (no B-frames: pts = dts)."""
    rec.log(path, rr.VideoStream(codec=getattr(rr.VideoCodec, VIDEO_CODECS[video.codec])), static=True)
    batch: list[bytes] = []
    start = 0
    for i, packet in enumerate(video.packets(s.positions.tolist())):
        batch.append(packet.data)
        if len(batch) == IMAGE_BATCH or i == len(s) - 1:
            rec.send_columns(path, grid.indexes(rr, s.timestamps[start:start + len(batch)]),
                             rr.VideoStream.columns(sample=batch))
            start, batch = start + len(batch), []


def _batches(items: Sequence[bytes], size: int) -> Iterator[tuple[int, list[bytes]]]:
    for start in range(0, len(items), size):
        yield start, list(items[start:start + size])


def _transforms(rr: Any, rec: Any, grid: Grid, tree: Tree) -> None:
    """Every TF edge (and identity fill) at `tf/<child>`: Transform3D from its parent frame, with visible axes."""
    edges: list[Edge] = [*tree.edges, *tree.fills]
    for e in edges:
        path = entity(rr, "tf", e.child.replace("/", "_"))
        n = len(e.timestamps)
        rec.log(path, rr.TransformAxes3D(axis_length=0.1), static=True)
        if e.static or not e.channel:  # one value for all time
            rec.log(path, rr.Transform3D(translation=e.translation[-1], quaternion=e.quaternion[-1],
                                           parent_frame=e.parent, child_frame=e.child), static=True)
        else:
            rec.send_columns(path, grid.indexes(rr, e.timestamps),
                             rr.Transform3D.columns(translation=e.translation, quaternion=e.quaternion,
                                                    parent_frame=[e.parent] * n, child_frame=[e.child] * n))
