"""What goes into one episode's MCAP: the aligned episode, its topics, its metadata record and URDF.

One clock: log time = publish time = message timestamp = timeline time (ns since the Unix epoch). With
`fps`, every stream is put on one grid by robokit.resample (all channels, not a writer's subset); without
it, streams keep their own timestamps. Everything changed or skipped on the way becomes a note, written
to `/robokit/log`.
"""

from __future__ import annotations

import json
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np

from robokit.converters.actions import meaning_of_channel
from robokit.converters.mcap.channels import camera_frame, event_topics, image_topics, numeric_topics, tf_topics
from robokit.converters.mcap.derived_topics import (
    action_topic,
    ee_path_topic,
    end_effector,
    episode_events,
    events_topic,
    log_topic,
    velocity_topic,
)
from robokit.converters.mcap.encoding import Encoder
from robokit.converters.mcap.points import point_topics
from robokit.converters.mcap.tftree import Note, build_tree
from robokit.converters.mcap.topic import Topic, TopicNames
from robokit.converters.options import WriterOptions
from robokit.converters.prepare import select_cameras
from robokit.errors import ConversionError, ResampleError
from robokit.frames.conventions import lookup
from robokit.resample import ResampledEpisode, resample
from robokit.timeline import Episode, EventStream, ImageStream, NumericStream, PoseStream
from robokit.timeline.depth import millimetre_stream
from robokit.timeline.points import PointStream

CLOCK = "log_time = publish_time = message timestamp = timeline time (ns since the Unix epoch, UTC)"


def align(ep: Episode, options: WriterOptions) -> tuple[Episode, int, list[Note]]:
    """(the episode to write, its frame count, notes): selected cameras, on the fps grid when given, resized."""
    cameras = select_cameras(ep, options)
    dropped = sorted(set(ep.cameras) - set(cameras))
    notes: list[Note] = [("info", f"{c}: camera not selected; not written") for c in dropped]
    names = [n for n in ep.streams if n not in dropped]
    if not names:
        raise ConversionError(f"episode {ep.id}: no streams to write")
    if options.fps:
        try:
            aligned = resample(ep, options.fps, options.resample, channels=names)
        except ResampleError as exc:
            raise ConversionError(f"episode {ep.id}: {exc}") from exc
        notes += _resample_notes(aligned)
        frames = aligned.resample_report.count
        out: Episode = aligned
    else:
        out = ep.select(names)
        frames = max(len(s) for s in out.streams.values())
    out = out.with_streams({n: millimetre_stream(s) if isinstance(s, ImageStream) else s  # depth: 16UC1 mm
                            for n, s in out.streams.items()})
    if options.image_size:
        w, h = options.image_size
        out = out.with_streams({n: s.resized(w, h) if isinstance(s, ImageStream) else s
                                for n, s in out.streams.items()})
        notes.append(("info", f"cameras resized to {w}x{h}"))
    return out, frames, notes


def _resample_notes(ep: ResampledEpisode) -> list[Note]:
    r = ep.resample_report
    notes: list[Note] = [("info", f"resampled to {r.fps:g} fps ({r.method}): {r.count} ticks")]
    notes += [("warning", w) for w in r.warnings()]
    for s in r.streams.values():
        if s.method != "kept" and (s.outside or s.dropped):
            notes.append(("info", f"{s.channel}: {s.samples_in} → {s.samples_out} samples ({s.method}); "
                                  f"{s.outside} outside the common time range, {s.dropped} dropped"))
    return notes


def robot_description(ep: Episode) -> str | None:
    """The URDF of a `/robot_description` topic in the recording, if there is one."""
    for name, s in ep.streams.items():
        if isinstance(s, EventStream) and name.split("/")[0] == "robot_description" and s.values \
                and "<robot" in s.values[-1]:
            return s.values[-1]
    return None


@dataclass(frozen=True)
class Plan:
    """The topics of one file (aligned channels, then derived ones, the log last), its first time and root frame."""

    topics: list[Topic]
    t0: int
    root: str
    task: str


def plan(source: Episode, ep: Episode, options: WriterOptions, image_format: str, enc: Encoder, pool: Executor,
         notes: list[Note]) -> Plan:
    """Every topic of the aligned episode `ep` (from `source`); `notes` gains what the topics changed."""
    streams = {n: x for n, x in ep.streams.items() if len(x)}
    notes += [("info", f"{n}: empty stream; not written") for n, x in ep.streams.items() if not len(x)]
    if not streams:
        raise ConversionError(f"episode {ep.id}: every stream is empty")
    t0 = min(x.start_ns for x in streams.values())
    if t0 < 0:
        raise ConversionError(f"episode {ep.id}: negative timestamps ({t0} ns); MCAP times are unsigned")
    cameras = {n: x for n, x in streams.items() if isinstance(x, ImageStream)}
    frames = {camera_frame(n, x) for n, x in cameras.items()}
    tree = build_tree({n: x for n, x in streams.items() if isinstance(x, PoseStream)}, frames, options.frame, t0)
    notes += tree.notes
    if cameras and not np.allclose(lookup(options.frame).camera, np.eye(3)):
        notes.append(("warning", f"camera frames use {options.frame} camera axes; Foxglove and ROS expect optical "
                                 "axes (x right, y down, z forward): images will not overlay the 3D scene"))
    names = TopicNames()
    topics = [
        *tf_topics(tree, enc, names),
        *numeric_topics({n: x for n, x in streams.items() if isinstance(x, NumericStream)}, enc, names),
        *image_topics(cameras, enc, names, pool, image_format, notes),
        *event_topics({n: x for n, x in streams.items() if isinstance(x, EventStream)}, enc, names, notes),
        *point_topics({n: x for n, x in streams.items() if isinstance(x, PointStream)}, enc, names, tree,
                      options.frame, notes),
    ]
    task = options.task or (source.tasks[0] if source.tasks else "")
    topics += velocity_topic(ep, options.state, enc, names, notes)
    topics += action_topic(ep, options.action, enc, names)
    topics += ee_path_topic(end_effector(tree, options.poses, frames), enc, names)
    topics += events_topic(episode_events(ep, ep.start_ns or t0, ep.end_ns or t0, task), enc, names)
    notes += [("info", f"source topic {k.topic} ({k.msgtype}) not read: {k.reason} [{k.count} messages]")
              for k in source.skipped]
    notes += [("info", f"source: {w}") for w in source.warnings]
    topics += log_topic(tuple(notes), t0, enc, names)
    return Plan(topics, t0, tree.root, task)


def episode_record(ep: Episode, p: Plan, options: WriterOptions, encoding: str) -> dict[str, str]:
    """The `robokit.episode` metadata record: traceability fields (EpisodeMeta.trace()) and how it was written."""
    meta = ep.meta
    record = {k: v if isinstance(v, str) else json.dumps(v) for k, v in meta.trace().items()}
    record.update(episode_id=meta.episode_id, source_format=meta.source_format,
                  robot_type=options.robot_type or meta.robot_type, task=p.task, tasks=json.dumps(list(ep.tasks)),
                  encoding=encoding, fps=f"{options.fps:g}" if options.fps else "", resample=options.resample,
                  frame=options.frame, quat_order=options.quat_order, root_frame=p.root, clock=CLOCK)
    if options.action:  # what /derived/action is: its source channel, absolute or delta, unit
        action = ep[options.action]
        unit = (action.unit or "") if isinstance(action, NumericStream) else ""
        record["action"] = json.dumps(meaning_of_channel(options.action, unit, options.state).to_dict())
    return record
