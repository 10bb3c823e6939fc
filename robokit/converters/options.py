"""Writer options shared by every format, defined once and validated with clear messages."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from robokit.errors import OptionError
from robokit.limits import MAX_FPS, MAX_IMAGE_SIDE

RESAMPLE_METHODS = ("nearest", "linear")


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


def _check_texts(options: WriterOptions) -> None:
    """Text options (robot type, task, channel names) are valid UTF-8 without control characters, bounded."""
    from robokit.converters.registry import check_text

    for name in ("state", "action", "robot_type", "task"):
        value = getattr(options, name)
        if value is not None and not isinstance(value, str):
            raise OptionError(f"{name} {value!r}: expected text")
        if value is not None:
            check_text(name, value)
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

    fps: float | None = None  # None: the slowest selected camera's rate, else the state's rate
    resample: Literal["nearest", "linear"] = "nearest"
    cameras: tuple[str, ...] | None = None  # channel names; None: every camera; () or ("none",): no camera
    state: str = "joints/position"
    action: str | None = None  # e.g. "joints/position_delta"; None: the source's recorded action, if any
    poses: tuple[str, ...] = ()  # pose channels to export as features, e.g. ("tf/tool0",)
    frame: str = "rayform"
    quat_order: str = "xyzw"
    image_size: tuple[int, int] | None = None  # (width, height)
    robot_type: str = ""
    task: str | None = None
    overwrite: bool = False  # replace an existing output folder of the format
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from robokit.frames import CONVENTIONS, QUAT_ORDERS

        if self.fps is not None and not (isinstance(self.fps, int | float) and 0 < self.fps <= MAX_FPS):
            raise OptionError(f"fps {self.fps!r}: expected a number above 0 up to {MAX_FPS:g}")
        if self.resample not in RESAMPLE_METHODS:
            raise OptionError(f"resample {self.resample!r}: expected one of {', '.join(RESAMPLE_METHODS)}")
        if self.frame not in CONVENTIONS:
            raise OptionError(f"frame {self.frame!r}: expected one of {', '.join(CONVENTIONS)}")
        if self.quat_order not in QUAT_ORDERS:
            raise OptionError(f"quat_order {self.quat_order!r}: expected one of {', '.join(QUAT_ORDERS)}")
        if self.cameras is not None:  # ("none",): export without cameras
            object.__setattr__(self, "cameras", tuple(camera_channel(c) for c in self.cameras if c != "none"))
        if self.image_size is not None:
            object.__setattr__(self, "image_size", parse_size(self.image_size))
        _check_texts(self)

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
