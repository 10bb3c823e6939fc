"""A ROS 2 bag of coded video (foxglove_msgs CompressedVideo, one frame per message), for tests and benchmarks.

Frames are encoded with PyAV (H.264 by default: a keyframe every `gop` frames, SPS/PPS on each keyframe,
no B-frames unless asked); each frame shows its index as a row of black/white blocks (`frame_index` reads
it back, through lossy coding), and `/joint_states` runs at the same rate.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
from rosbags.typesys import get_types_from_msg

from robokit.ros.bagwriter import START_NS, BagWriter, header, joint_state, typestore

COMPRESSED_VIDEO = "foxglove_msgs/msg/CompressedVideo"
COMPRESSED_VIDEO_MSG = "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format\n"
ENCODERS = {"h264": "libx264", "hevc": "libx265", "av1": "libsvtav1"}
FORMATS = {"h264": "h264", "hevc": "h265", "av1": "av1"}  # the message's `format`
BITS, BLOCK = 10, 16  # frame index as 10 blocks of 16×16 pixels


def video_store() -> Any:
    """The ROS 2 typestore with foxglove_msgs CompressedVideo registered."""
    ts = typestore()
    ts.register(get_types_from_msg(COMPRESSED_VIDEO_MSG, COMPRESSED_VIDEO))
    return ts


def pattern(index: int, width: int, height: int) -> np.ndarray:
    """Frame `index`: a moving gradient with the index in blocks along the top (white = 1)."""
    y, x = np.mgrid[0:height, 0:width]
    pixels = np.stack([(x + 3 * index) % 256, (y + index) % 256, np.full_like(x, 96)], axis=2).astype(np.uint8)
    for bit in range(BITS):
        pixels[:BLOCK, bit * BLOCK:(bit + 1) * BLOCK] = 255 if index >> bit & 1 else 0
    return pixels


def frame_index(pixels: np.ndarray) -> int:
    """The index `pattern` drew into a (decoded) frame."""
    blocks = pixels[2:BLOCK - 2, : BITS * BLOCK].reshape(BLOCK - 4, BITS, BLOCK, -1)[:, :, 2:-2].mean(axis=(0, 2, 3))
    return int(sum(1 << bit for bit in range(BITS) if blocks[bit] > 128))


def encode(frames: int, width: int, height: int, fps: int, codec: str = "h264", gop: int = 30,
           bframes: int = 0) -> Iterator[tuple[bytes, bool]]:
    """(coded frame, keyframe) in decoding order, Annex B / OBUs, parameter sets on every keyframe."""
    os.environ.setdefault("SVT_LOG", "1")
    ctx: Any = av.CodecContext.create(ENCODERS[codec], "w")
    ctx.width, ctx.height, ctx.pix_fmt = width, height, "yuv420p"
    ctx.time_base, ctx.framerate = Fraction(1, fps), fps
    ctx.options = {"h264": {"preset": "ultrafast", "x264-params": f"keyint={gop}:min-keyint={gop}:scenecut=0:"
                                                                  f"bframes={bframes}"},
                   "hevc": {"preset": "ultrafast", "x265-params": f"keyint={gop}:min-keyint={gop}:scenecut=0:"
                                                                  f"bframes={bframes}:log-level=none"},
                   "av1": {"g": str(gop), "preset": "12"}}[codec]
    for i in [*range(frames), None]:
        frame = None
        if i is not None:
            frame = av.VideoFrame.from_ndarray(pattern(i, width, height), format="rgb24").reformat(format="yuv420p")
            frame.pts = i
        for packet in ctx.encode(frame):
            yield bytes(packet), bool(packet.is_keyframe)


def write_video_bag(out: Path, frames: int = 90, width: int = 320, height: int = 240, fps: int = 30,
                    codec: str = "h264", gop: int = 30, bframes: int = 0, topic: str = "/camera/front/video",
                    damage: int | None = None) -> Path:
    """Write the bag to folder `out` (which must not exist); the packet at `damage` is cut in half."""
    ts = video_store()
    period = round(1e9 / fps)
    video = ts.types[COMPRESSED_VIDEO]
    with BagWriter(out, ts, {"/joint_states": "sensor_msgs/msg/JointState", topic: COMPRESSED_VIDEO}) as bag:
        for i, (data, _) in enumerate(encode(frames, width, height, fps, codec, gop, bframes)):
            ns = START_NS + i * period
            if i == damage:
                data = data[: len(data) // 2]
            stamp = header(ts, ns, "").stamp
            bag.write(ns, topic, video(timestamp=stamp, frame_id="front", data=np.frombuffer(data, np.uint8),
                                       format=FORMATS[codec]))
            bag.write(ns, "/joint_states", joint_state(ts, header(ts, ns, ""), ("a", "b"), np.array([i, -i]) * 0.01))
    return out
