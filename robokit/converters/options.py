"""Writer options shared by every format, defined once and validated with clear messages."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal, TypeVar, cast

from robokit.converters.registry import ExtraOption, check_text
from robokit.errors import OptionError
from robokit.frames import CONVENTIONS, QUAT_ORDERS
from robokit.limits import MAX_FPS, MAX_IMAGE_SIDE

RESAMPLE_METHODS = ("nearest", "linear")
T = TypeVar("T")

# The options every format takes, declared once: WriterOptions' defaults and checks, `convert --help`.
FPS: ExtraOption[float | None] = ExtraOption("fps", float, None, "Output rate", low=0, high=MAX_FPS, above=True)
RESAMPLE = ExtraOption("resample", str, "nearest", "Resampling of every stream onto the output grid",
                       RESAMPLE_METHODS)
STATE = ExtraOption("state", str, "joints/position", "State channel")
ACTION: ExtraOption[str | None] = ExtraOption("action", str, None, "Action channel, e.g. joints/position_delta")
FRAME = ExtraOption("frame", str, "rayform", "Frame convention of poses", tuple(CONVENTIONS))
QUAT_ORDER = ExtraOption("quat_order", str, "wxyz", "Quaternion order of poses in the output", QUAT_ORDERS)
ROBOT_TYPE = ExtraOption("robot_type", str, "", "Robot type stored with datasets")
TASK: ExtraOption[str | None] = ExtraOption("task", str, None, "Task text for episodes, overriding the recording's")
OVERWRITE = ExtraOption("overwrite", bool, False, "Replace an existing output folder of the format")
COMMON_OPTIONS = (FPS, RESAMPLE, STATE, ACTION, FRAME, QUAT_ORDER, ROBOT_TYPE, TASK, OVERWRITE)


def parse_size(value: str | tuple[int, int] | list[int]) -> tuple[int, int]:
    """`WxH` (e.g. "640x480") or a pair → (width, height), both positive."""
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", value)
        if not m:
            raise OptionError(f"image_size {value!r}: expected WxH, e.g. 640x480")
        w, h = int(m[1]), int(m[2])
    else:
        if len(value) != 2:
            raise OptionError(f"image_size {value!r}: expected [width, height]")
        w, h = int(value[0]), int(value[1])
    if not (0 < w <= MAX_IMAGE_SIDE and 0 < h <= MAX_IMAGE_SIDE):
        raise OptionError(f"image_size {w}x{h}: width and height must be 1 to {MAX_IMAGE_SIDE}")
    return w, h


def _check_common(options: WriterOptions) -> None:
    """Each common option checked by its declaration (a parsed value, e.g. from text, replaces the given one);
    camera and pose names are valid UTF-8 without control characters, bounded."""
    for opt in COMMON_OPTIONS:
        given = getattr(options, opt.name)
        parsed = opt.parse(given)
        if parsed != given:
            object.__setattr__(options, opt.name, parsed)
    for name in ("cameras", "poses"):
        for value in getattr(options, name) or ():
            check_text(name, str(value))


def camera_channel(name: str) -> str:
    """A camera given as `front` or `front/rgb` → the channel name `front/rgb`."""
    return name if "/" in name else f"{name}/rgb"


@dataclass(frozen=True)
class WriterOptions:
    """What every writer takes: rate, resampling, channel selection, conventions, image size, task.

    `extra` holds format-specific options (e.g. the video codec); each writer validates its own.
    """

    fps: float | None = FPS.default  # None: the slowest selected camera's rate, else the state's rate
    resample: Literal["nearest", "linear"] = cast(Literal["nearest", "linear"], RESAMPLE.default)
    cameras: tuple[str, ...] | None = None  # channel names; None: every camera; () or ("none",): no camera
    state: str = STATE.default
    action: str | None = ACTION.default  # e.g. "joints/position_delta"; None: the source's recorded action, if any
    poses: tuple[str, ...] = ()  # pose channels to export as features, e.g. ("tf/tool0",)
    frame: str = FRAME.default
    quat_order: str = QUAT_ORDER.default
    image_size: tuple[int, int] | None = None  # (width, height)
    robot_type: str = ROBOT_TYPE.default
    task: str | None = TASK.default
    overwrite: bool = OVERWRITE.default  # replace an existing output folder of the format
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_common(self)
        if self.cameras is not None:  # ("none",): export without cameras
            object.__setattr__(self, "cameras", tuple(camera_channel(c) for c in self.cameras if c != "none"))
        if self.image_size is not None:
            object.__setattr__(self, "image_size", parse_size(self.image_size))

    def value(self, option: ExtraOption[T]) -> T:
        """A format option's typed value: as given (parsed by its declaration, the one parser), else its default."""
        return option.parse(self.extra[option.name]) if option.name in self.extra else option.default

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], extra_keys: tuple[str, ...] = ()) -> WriterOptions:
        """Build from a dict (API, config file); unknown keys raise unless listed in `extra_keys`."""
        known = {f.name for f in fields(cls)} - {"extra"}
        common = {k: v for k, v in values.items() if k in known}
        extra = {k: v for k, v in values.items() if k not in known}
        unknown = sorted(set(extra) - set(extra_keys))
        if unknown:
            raise OptionError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        for key in ("cameras", "poses"):
            if isinstance(common.get(key), str):
                common[key] = (common[key],)
            elif common.get(key) is not None:
                common[key] = tuple(common[key])
        try:
            return cls(**common, extra=extra)
        except TypeError as exc:
            raise OptionError(str(exc)) from exc
