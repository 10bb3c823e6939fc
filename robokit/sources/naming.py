"""Topic → channel naming (`group/field`) and the user's topic → channel mapping file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import yaml

from robokit.converters.registry import check_text
from robokit.errors import OptionError, SourceError
from robokit.limits import MAX_MAPPING_BYTES, MAX_MAPPING_ENTRIES
from robokit.timeline.episode import TASK_CHANNEL

# Tokens that say "this is an image" rather than which camera it is.
CAMERA_TOKENS = frozenset(
    {
        "camera",
        "cameras",
        "cam",
        "image",
        "images",
        "image_raw",
        "image_rect",
        "image_rect_color",
        "image_rect_raw",
        "image_color",
        "image_mono",
        "compressed",
        "compresseddepth",
        "color",
        "rgb",
        "raw",
        "depth",
        "camera_info",
        "info",  # RealSense bags: <sensor>/info/camera_info beside <sensor>/image/data
        "data",
        "calibration",
        "video",
        "compressed_video",
        "ffmpeg",
        "h264",
        "h265",
    }
)
DEPTH_TOKEN = "depth"
TASK_TOKENS = frozenset({"task", "instruction", "language_instruction", "prompt"})


def tokens(topic: str) -> list[str]:
    """The non-empty `/`-separated parts of a topic (`foo` and `/foo` give the same)."""
    return [t for t in topic.split("/") if t]


def topic_name(topic: str, drop: frozenset[str] = frozenset(), default: str = "topic") -> str:
    """The `<name>` of a topic: its tokens minus `drop`, joined by `_` (`default` when none are left)."""
    return "_".join(t for t in tokens(topic) if t.lower() not in drop) or default


def camera_name(topic: str) -> str:
    """`/camera/front/image_raw` → `front`; `camera` when only generic tokens are left."""
    return topic_name(topic, CAMERA_TOKENS, "camera")


def image_channel(topic: str, depth: bool) -> str:
    """`<camera>/rgb`, or `<camera>/depth` for depth encodings and topics with a `depth` token."""
    is_depth = depth or DEPTH_TOKEN in (t.lower() for t in tokens(topic))
    return f"{camera_name(topic)}/{'depth' if is_depth else 'rgb'}"


def joints_group(topic: str) -> str:
    """`/joint_states` → `joints`, `/left/joint_states` → `left_joints`, `/joint_commands` → `joint_commands`."""
    parts = tokens(topic)
    if parts and parts[-1].lower() in ("joint_states", "joint_state"):
        return "_".join([*parts[:-1], "joints"])
    return "_".join(parts) or "joints"


def frame_name(frame_id: str) -> str:
    """A TF frame id without leading slashes (ROS 1 `/world` and ROS 2 `world` are the same frame)."""
    return frame_id.lstrip("/")


def event_channel(topic: str) -> str:
    """`task` when the topic's last token names an instruction, else `<name>/events`."""
    parts = tokens(topic)
    if parts and parts[-1].lower() in TASK_TOKENS:
        return TASK_CHANNEL
    return f"{topic_name(topic, frozenset({'events'}), 'events')}/events"


def apply_mapping(value: str, names: list[str], multi: bool, group: str = "") -> list[str]:
    """Rename a topic's channels with a user mapping value.

    A single-channel topic takes `value` as the channel (a bare group keeps the default field). A topic that
    gives several channels (joints, tf, odometry, imu, types flattened by field) takes the whole of `value`
    in place of their group: `group` when given (a flattened type's topic path), else each name's first part.
    """
    if not multi:
        return [value if "/" in value or "/" not in name else f"{value}/{name.split('/', 1)[1]}" for name in names]
    out = []
    for name in names:
        prefix = group if group and (name == group or name.startswith(group + "/")) else name.split("/", 1)[0]
        out.append(value + name[len(prefix):])
    return out


def load_mapping(mapping: Mapping[str, str] | str | Path | None) -> dict[str, str]:
    """A topic → channel mapping from a dict or a YAML/JSON file of `topic: channel` pairs (None → {}), at most
    MAX_MAPPING_ENTRIES pairs of MAX_TEXT characters each, a file at most MAX_MAPPING_BYTES."""
    if mapping is None:
        return {}
    if isinstance(mapping, str | Path):
        path = Path(mapping)
        try:
            if path.stat().st_size > MAX_MAPPING_BYTES:
                raise OptionError(f"{path}: a topic mapping file of {path.stat().st_size} bytes; at most "
                                  f"{MAX_MAPPING_BYTES} allowed")
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            why = err.strerror if isinstance(err, OSError) and err.strerror else err
            raise SourceError(f"{path}: cannot read the topic mapping file ({why})") from err
        try:
            data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        except (ValueError, yaml.YAMLError) as err:
            raise OptionError(f"{path}: not a valid YAML/JSON topic mapping: {err}") from err
        return _validated(data or {}, str(path))
    return _validated(mapping, "mapping")


def _validated(data: object, where: str) -> dict[str, str]:
    if not isinstance(data, Mapping):
        raise OptionError(f"{where}: a topic mapping must be `topic: channel` pairs, got {type(data).__name__}")
    if len(data) > MAX_MAPPING_ENTRIES:
        raise OptionError(f"{where}: {len(data)} topic mapping entries; at most {MAX_MAPPING_ENTRIES} allowed")
    out: dict[str, str] = {}
    for topic, channel in data.items():
        if not isinstance(topic, str) or not isinstance(channel, str) or not topic or not channel.strip("/"):
            raise OptionError(f"{where}: bad entry {topic!r}: {channel!r}; expected `topic: group/field` strings")
        out[check_text(f"{where}: topic", topic)] = check_text(f"{where}: channel", channel.strip("/"))
    return out


def lookup(mapping: Mapping[str, str], topic: str) -> str | None:
    """The user's channel for `topic`; `foo` and `/foo` match each other."""
    bare = topic.lstrip("/")
    return mapping.get(topic) or mapping.get("/" + bare) or mapping.get(bare)
