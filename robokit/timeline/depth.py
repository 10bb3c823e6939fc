"""Depth in one unit for every writer: millimetres as uint16 (0 = no reading), the unit of ROS `16UC1`.

Readers keep depth as recorded (`16UC1`/`mono16` millimetres, `32FC1` metres); writers store millimetres
(16-bit PNG, `foxglove.RawImage` 16UC1, LeRobot's quantized depth video). Depth is never colour-converted
and never interpolated: conversion is per pixel, resizing is nearest-neighbour (`images.resize_frame`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from robokit.timeline.images import Frame, MappedFrameSource
from robokit.timeline.streams import ImageStream

DEPTH_UNITS = {"16UC1": "mm", "mono16": "mm", "32FC1": "m"}  # decoded encoding → unit of its values
MM_PER_M = 1000.0
MAX_MM = int(np.iinfo(np.uint16).max)  # 65.535 m: farther readings cannot be stored and become 0 (no reading)


def depth_unit(encoding: str) -> str:
    """`mm` or `m`: the unit of a depth encoding's values (ROS REP 118)."""
    return DEPTH_UNITS[encoding]


def to_millimetres(pixels: np.ndarray) -> np.ndarray:
    """A depth frame as (H, W) uint16 millimetres: integer frames are millimetres already; float frames are
    metres, rounded to the nearest millimetre, with NaN, ±inf, ≤ 0 and > 65.535 m becoming 0 (no reading)."""
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    if pixels.dtype.kind in "ui":
        return pixels if pixels.dtype == np.uint16 else np.clip(pixels, 0, MAX_MM).astype(np.uint16)
    mm = np.rint(np.asarray(pixels, dtype=np.float64) * MM_PER_M)
    valid = np.isfinite(mm) & (mm > 0) & (mm <= MAX_MM)
    return np.where(valid, mm, 0).astype(np.uint16)


def _millimetre_frame(frame: Frame) -> Frame:
    if frame.pixels is None and frame.format == "png":
        return frame  # 16-bit PNG bytes of a millimetre stream pass through untouched
    return Frame("raw", pixels=to_millimetres(frame.array()))


def millimetre_stream(stream: ImageStream) -> ImageStream:
    """A depth stream whose frames decode to uint16 millimetres (`16UC1`), converted lazily per frame; other
    streams unchanged."""
    if not stream.is_depth or stream.source is None:
        return stream
    if stream.encoding != "32FC1" and stream.format in ("png", "raw"):
        return replace(stream, encoding="16UC1")
    return replace(stream, source=MappedFrameSource(stream.source, _millimetre_frame), encoding="16UC1",
                   format="raw")
