"""LeRobot 0.6 depth features: 12-bit quantized depth in lossless HEVC (`gray12le`), as lerobot's own
`DepthEncoderConfig` writes them, so `LeRobotDataset` dequantizes them back to millimetres.

Millimetres d map to codes `rint((log(d/1000 + shift) - log(min + shift)) / (log(max + shift) - log(min + shift))
* 4095)` (lerobot's log quantizer). With min 0 m, max 10 m and shift 3.5 m a step is 0.033 % of (d + 3.5 m):
under 0.7 mm at 0.5 m, 2 mm at 10 m, within 1 % (after rounding to the millimetre) from 10 cm; 0 (no reading)
stays 0; farther than 10 m reads as 10 m (a warning counts such pixels).
The codes are stored losslessly (x265 `lossless=1`, no B-frames so episodes remux without re-encoding).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO

import av
import numpy as np

from robokit.converters.prepare import PreparedEpisode
from robokit.converters.stats import ImageStats
from robokit.converters.video import VideoEncoder
from robokit.errors import ConversionError

DEPTH_MIN = 0.0  # metres at code 0: 0 (no reading) round-trips as 0
DEPTH_MAX = 10.0  # metres at code 4095 (lerobot's default)
SHIFT = 3.5  # metres (lerobot's default)
USE_LOG = True
QMAX = 4095  # 12-bit codes
PIX_FMT = "gray12le"
X265_PARAMS = "lossless=1:bframes=0:log-level=error"
MIN_SIDE = 16  # libx265 refuses smaller frames
_LOG_MIN, _LOG_MAX = math.log(DEPTH_MIN + SHIFT), math.log(DEPTH_MAX + SHIFT)


def quantize(mm: np.ndarray) -> np.ndarray:
    """uint16 millimetres → uint16 12-bit codes (lerobot's `quantize_depth`, log mode, metres)."""
    metres = mm.astype(np.float32) / np.float32(1000.0)
    norm: np.ndarray = (np.log(metres + np.float32(SHIFT)) - _LOG_MIN) / (_LOG_MAX - _LOG_MIN)
    codes: np.ndarray = np.rint(norm * QMAX).clip(0, QMAX).astype(np.uint16)
    return codes


def dequantize(codes: np.ndarray, depth_min: float = DEPTH_MIN, depth_max: float = DEPTH_MAX, shift: float = SHIFT,
               use_log: bool = USE_LOG) -> np.ndarray:
    """12-bit codes → float millimetres clipped to [min, max] (lerobot's `dequantize_depth`; parameters in
    metres, as a depth feature's `video.depth_min`, `video.depth_max`, `video.shift`, `video.use_log`)."""
    q = codes.astype(np.float64) / QMAX
    if use_log:
        low, high = math.log(depth_min + shift), math.log(depth_max + shift)
        metres = np.exp(q * (high - low) + low) - shift
    else:
        metres = q * (depth_max - depth_min) + depth_min
    return np.asarray(np.rint(np.clip(metres, depth_min, depth_max) * 1000.0))


def millimetres_from_info(info: dict[str, Any]) -> Callable[[np.ndarray], np.ndarray]:
    """Codes → uint16 millimetres with a depth feature's quantizer (lerobot's defaults for missing fields)."""
    def get(name: str, default: float) -> float:
        value = info.get(f"video.{name}")
        return float(value) if isinstance(value, (int, float)) else default

    depth_min, depth_max = get("depth_min", 0.01), get("depth_max", 10.0)
    shift, use_log = get("shift", SHIFT), bool(info.get("video.use_log", True))
    if not (0 <= depth_min < depth_max <= 65.535) or (use_log and depth_min + shift <= 0):
        raise ValueError(f"depth quantizer out of range (depth_min {depth_min}, depth_max {depth_max}, "
                         f"shift {shift}, use_log {use_log})")

    def convert(codes: np.ndarray) -> np.ndarray:
        mm: np.ndarray = dequantize(codes, depth_min, depth_max, shift, use_log).astype(np.uint16)
        return mm

    return convert


def depth_stats() -> ImageStats:
    """Statistics of depth frames in millimetres (lerobot keeps depth stats in the recorded `depth_unit`)."""
    return ImageStats(channels=1, bins=65536, scale=1.0)


class DepthVideoEncoder(VideoEncoder):
    """Writes uint16 millimetre frames as quantized 12-bit codes to one lossless HEVC MP4."""

    def __init__(self, target: Path | BinaryIO, width: int, height: int, fps: int, gop: int) -> None:
        if width < MIN_SIDE or height < MIN_SIDE:
            raise ConversionError(f"{width}x{height} depth frames: LeRobot depth video (HEVC) needs at least "
                                  f"{MIN_SIDE}x{MIN_SIDE}; pass image_size to resize them")
        os.environ.setdefault("X265_LOG", "0")
        self.frames = 0
        self.clipped = 0  # pixels beyond DEPTH_MAX, stored as DEPTH_MAX
        self._container: Any = av.open(str(target) if isinstance(target, Path) else target, mode="w", format="mp4")
        stream: Any = self._container.add_stream("libx265", rate=fps,
                                                 options={"g": str(gop), "x265-params": X265_PARAMS})
        stream.width, stream.height, stream.pix_fmt = width, height, PIX_FMT
        self._stream: Any = stream

    def add(self, pixels: np.ndarray) -> None:
        """Encode one (H, W) uint16 millimetre frame."""
        if pixels.dtype != np.uint16 or pixels.ndim != 2:
            raise ConversionError(f"depth frame {self.frames} is {pixels.dtype} {pixels.shape}, not uint16 (H, W) "
                                  "millimetres")
        self.clipped += int(np.count_nonzero(pixels > DEPTH_MAX * 1000))
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(quantize(pixels)), format=PIX_FMT)
        frame.pts = self.frames
        for packet in self._stream.encode(frame):
            self._container.mux(packet)
        self.frames += 1


def depth_info(gop: int) -> dict[str, Any]:
    """The `info` entries of a depth feature besides the stream's own, as lerobot 0.6 records them."""
    return {"video.channels": 1, "video.g": gop, "video.crf": None, "video.preset": None, "video.fast_decode": 0,
            "video.video_backend": "pyav", "video.extra_options": {"x265-params": X265_PARAMS},
            "video.depth_min": DEPTH_MIN, "video.depth_max": DEPTH_MAX, "video.shift": SHIFT,
            "video.use_log": USE_LOG, "is_depth_map": True, "depth_unit": "mm"}


def drop_small_depth(p: PreparedEpisode, explicit: bool) -> tuple[PreparedEpisode, list[str]]:
    """Leave out depth cameras smaller than HEVC encodes, with a warning (an error when named with `cameras`)."""
    small = sorted(c for c, s in p.cameras.items() if s.is_depth and min(s.width, s.height) < MIN_SIDE)
    if not small:
        return p, []
    if explicit:
        s = p.cameras[small[0]]
        raise ConversionError(f"camera {small[0]}: {s.width}x{s.height} depth frames: LeRobot depth video (HEVC) "
                              f"needs at least {MIN_SIDE}x{MIN_SIDE}; pass image_size to resize them")
    warnings = [f"episode {p.source.id}: camera {c} left out ({p.cameras[c].width}x{p.cameras[c].height} depth "
                f"frames; LeRobot depth video needs at least {MIN_SIDE}x{MIN_SIDE}; pass image_size to keep it)"
                for c in small]
    return replace(p, cameras={c: s for c, s in p.cameras.items() if c not in small}), warnings
