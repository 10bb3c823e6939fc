"""Which LeRobot feature key each exported stream gets, and the data columns and feature descriptions of the state,
action and extras: the source's keys and descriptions when the streams were read from LeRobot (round trips keep
every key, dtype, shape and `names` as the source had them), else lerobot's standard keys, float32 and flat names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from robokit import heap
from robokit.converters.extras import cast
from robokit.converters.lerobot.features import source_tasks, vector_feature
from robokit.converters.lerobot.layout import (
    ACTION_KEY,
    ACTION_KEYS,
    DEFAULT_FEATURES,
    IMAGE_PREFIX,
    STATE_KEY,
    STATE_KEYS,
)
from robokit.converters.options import WriterOptions
from robokit.converters.prepare import PreparedEpisode, action_channel, select_cameras, state_channel
from robokit.errors import ChannelError, ConversionError
from robokit.timeline import Episode


def pose_key(channel: str) -> str:
    """Feature name of a pose channel: `tf/tool0` → `observation.tf.tool0` (no `/` allowed)."""
    return "observation." + channel.replace("/", ".")


def camera_key(channel: str) -> str:
    """`front/rgb` → `observation.images.front`; other camera fields keep theirs (`front_depth`)."""
    group, _, kind = channel.partition("/")
    return IMAGE_PREFIX + (group if kind == "rgb" else f"{group}_{kind}")


def source_keys(episode: Episode, options: WriterOptions) -> dict[str, str]:
    """Role (`state`, `action`, `pose:<channel>`, camera channel) → the LeRobot feature key its recorded stream was
    read from; absent when the stream is derived (`joints/position_delta`) or not read from LeRobot, and for a state
    or action whose key would not be read back as one (`--state effort` is written as `observation.state`)."""
    channels = {"state": state_channel(episode, options.state)[0]}
    action = action_channel(episode, options)
    if action:
        channels["action"] = action
    channels.update({f"pose:{name}": name for name in options.poses})
    channels.update({cam: cam for cam in select_cameras(episode, options)})
    keys = {}
    for role, name in channels.items():
        stream = episode.streams.get(name)
        origin = stream.origin if stream is not None else None
        if origin is None or not origin.msgtype.startswith("lerobot/"):
            continue
        read_back_as = {"state": STATE_KEYS, "action": ACTION_KEYS}.get(role)
        if read_back_as is None or origin.topic in read_back_as:
            keys[role] = origin.topic
    return keys


def agreed_source_keys(episodes: Sequence[Episode], options: WriterOptions) -> tuple[dict[str, str], list[str]]:
    """The LeRobot feature keys every episode shares, else none (lerobot's standard keys), with a warning."""
    found: list[dict[str, str]] = []
    for ep in episodes:
        try:
            keys = source_keys(ep, options)
        except (ChannelError, KeyError):
            continue
        if keys not in found:
            found.append(keys)
    if len(found) <= 1:
        return (found[0] if found else {}), []
    return {}, [f"episodes come with different feature keys ({found[0]} vs {found[1]}): lerobot's standard keys "
                f"({STATE_KEY}, {ACTION_KEY}, {IMAGE_PREFIX}<camera>) are used"]


def feature_keys(p: PreparedEpisode, source: dict[str, str]) -> dict[str, str]:
    """Feature key per exported stream (roles as in `source_keys`): the source's LeRobot key when `source` has it
    (round trips keep every name), else the standard key; each key used once."""
    standard = {"state": STATE_KEY, **({"action": ACTION_KEY} if p.action is not None else {}),
                **{f"pose:{name}": pose_key(name) for name in p.poses}, **{cam: camera_key(cam) for cam in p.cameras}}
    taken = set(DEFAULT_FEATURES) | {key for role, key in standard.items() if role not in source}
    keys = {role: key for role, key in standard.items() if role not in source}
    for role in (r for r in standard if r in source):
        keys[role] = source[role] if source[role] not in taken else standard[role]  # taken: the standard key
        if keys[role] in taken:
            raise ConversionError(f"episode {p.source.id}: feature key {keys[role]} would be used twice")
        taken.add(keys[role])
    return keys



def agreed_tasks(episodes: Sequence[Episode]) -> tuple[dict[str, int], list[str]]:
    """The source's task table (text → index) when every episode read from LeRobot comes with the same one, so task
    indices stay as recorded; else none (tasks numbered in order of appearance), with a warning."""
    tables: list[dict[str, int]] = []
    for ep in episodes:
        try:
            table = source_tasks(ep.streams.get("task"))
        except KeyError:
            continue
        if table and table not in tables:
            tables.append(table)
    if len(tables) <= 1:
        return (tables[0] if tables else {}), []
    return {}, ["episodes come from datasets with different task tables: task indices are renumbered"]


def data_columns(p: PreparedEpisode, keys: dict[str, str]) -> tuple[dict[str, np.ndarray], dict[str, Any], list[str]]:
    """The state, action and extras columns by feature key (a long episode's mapped, `heap.mapped`), their feature
    descriptions, and a warning for each extra whose key is already used (it is not written)."""
    vectors = {"state": p.state, **({"action": p.action} if p.action is not None else {})}
    columns: dict[str, np.ndarray] = {}
    features: dict[str, Any] = {}
    for role, stream in vectors.items():
        feature = features[keys[role]] = vector_feature(stream, keys[role])
        columns[keys[role]] = heap.mapped(cast(stream.values, feature["dtype"]))
    taken = set(keys.values()) | set(DEFAULT_FEATURES)
    warnings = []
    for extra in p.extras.values():
        if extra.key in taken:
            warnings.append(f"feature {extra.key} ({extra.channel}) not written: its key is taken by an exported "
                            f"stream")
            continue
        taken.add(extra.key)
        columns[extra.key], features[extra.key] = heap.mapped(extra.column()), dict(extra.feature)
    return columns, features, warnings
