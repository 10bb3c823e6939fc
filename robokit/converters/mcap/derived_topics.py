"""Topics robokit computes: joint velocity, the action channel, the end-effector path, episode events, the log.

Each is marked derived in its channel metadata, so robokit's reader does not take it for a recorded stream.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from robokit.converters.mcap.channels import joint_messages
from robokit.converters.mcap.encoding import Encoder
from robokit.converters.mcap.tftree import Edge, Note, Tree
from robokit.converters.mcap.topic import Topic, TopicNames, derived
from robokit.errors import ConversionError
from robokit.timeline import Episode, EventStream, NumericStream

EE_TOKENS = frozenset({"tool", "ee", "eef", "tcp", "gripper", "hand", "flange", "effector"})
_NOT_EE = frozenset({"camera", "cam", "optical"})
Event = tuple[int, int, str, dict[str, str]]  # start ns, end ns, name, fields


def velocity_topic(ep: Episode, state: str, enc: Encoder, names: TopicNames, notes: list[Note]) -> list[Topic]:
    """`/derived/joint_velocity`: the state channel's `_velocity` (np.gradient over the written timestamps)."""
    if not isinstance(ep.streams.get(state), NumericStream):
        notes.append(("info", f"no numeric state channel {state!r}: no /derived/joint_velocity"))
        return []
    v = ep[f"{state}_velocity"]
    assert isinstance(v, NumericStream)
    return [Topic(names.take("/derived/joint_velocity"), "joint_states", len(v),
                  joint_messages(enc, v.timestamps, v.names, {"velocity": v.values}),
                  derived(f"{state}_velocity: np.gradient of {state} over time"))]


def action_topic(ep: Episode, action: str | None, enc: Encoder, names: TopicNames) -> list[Topic]:
    """`/derived/action`: the action channel (e.g. `joints/position_delta`) as joint positions."""
    if not action:
        return []
    a = ep[action]
    if not isinstance(a, NumericStream):
        raise ConversionError(f"episode {ep.id}: action channel {action!r} is a {a.kind} stream, not numeric")
    return [Topic(names.take("/derived/action"), "joint_states", len(a),
                  joint_messages(enc, a.timestamps, a.names, {"position": a.values}), derived(f"action {action}"))]


def _tokens(name: str) -> set[str]:
    return set(re.split(r"[^a-z]+", name.lower()))


def end_effector(tree: Tree, preferred: Sequence[str], cameras: Iterable[str]) -> Edge | None:
    """The end-effector edge: the first of `preferred` in the tree, else a moving frame named like one (tool0, ee)."""
    by_channel = {e.channel: e for e in tree.edges}
    for name in preferred:
        if name in by_channel:
            return by_channel[name]
    skip = set(cameras)
    for e in tree.edges:
        words = _tokens(e.child)
        if not e.static and e.child not in skip and words & EE_TOKENS and not words & _NOT_EE:
            return e
    return None


def ee_path_topic(edge: Edge | None, enc: Encoder, names: TopicNames) -> list[Topic]:
    """`/derived/ee_path`: the whole end-effector trajectory as one PosesInFrame at its first sample."""
    if edge is None:
        return []
    t = int(edge.timestamps[0])

    def messages() -> Iterator[tuple[int, bytes]]:
        yield t, enc.poses(t, edge.parent, edge.translation, edge.quaternion)

    return [Topic(names.take("/derived/ee_path"), "poses", 1, messages,
                  derived(f"end-effector path of {edge.channel} in {edge.parent}"))]


def episode_events(ep: Episode, start: int, end: int, task: str) -> list[Event]:
    """The episode span, the source segment and every task instruction, in time order."""
    meta = ep.meta
    events: list[Event] = [(start, end, "episode", {"episode_id": meta.episode_id, "source": meta.source_uri,
                                                     "task": task})]
    if meta.segment:
        events.append((int(meta.segment[0]), int(meta.segment[1]), "segment",
                       {"source": meta.source_uri, "segment_version": meta.source_version}))
    tasks = ep.streams.get("task")
    if isinstance(tasks, EventStream):
        events += [(t, t, "task", {"task": v}) for t, v in zip(tasks.timestamps.tolist(), tasks.values, strict=True)]
    return sorted(events, key=lambda e: e[0])


def events_topic(events: list[Event], enc: Encoder, names: TopicNames) -> list[Topic]:
    """`/episode/events`: foxglove.Event (protobuf) or rcl_interfaces Log with JSON fields (ros2)."""

    def messages() -> Iterator[tuple[int, bytes]]:
        for start, end, name, fields in events:
            yield start, enc.event(start, end, name, fields)

    return [Topic(names.take("/episode/events"), "event", len(events), messages,
                  derived("episode, segment and task events"))]


def log_topic(notes: Sequence[Note], t0: int, enc: Encoder, names: TopicNames) -> list[Topic]:
    """`/robokit/log`: one Log per thing the conversion skipped or changed, at the episode's first time."""

    def messages() -> Iterator[tuple[int, bytes]]:
        for level, text in notes:
            yield t0, enc.log(t0, level, "robokit", text)

    return [Topic(names.take("/robokit/log"), "log", len(notes), messages,
                  derived("what the conversion skipped or changed"))] if notes else []

