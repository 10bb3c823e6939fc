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
from robokit.ros.video import COMPRESSED_VIDEO, COMPRESSED_VIDEO_MSG, FFMPEG_PACKET, FOXGLOVE_FORMATS

DEFINITIONS = {
    COMPRESSED_VIDEO: COMPRESSED_VIDEO_MSG,
    FFMPEG_PACKET: "std_msgs/Header header\nint32 width\nint32 height\nstring encoding\nuint64 pts\nuint8 flags\n"
                   "bool is_bigendian\nuint8[] data\n",
}
KINDS = {"foxglove": COMPRESSED_VIDEO, "ffmpeg": FFMPEG_PACKET, "compressed_image": "sensor_msgs/msg/CompressedImage"}
ENCODERS = {"h264": "libx264", "hevc": "libx265", "av1": "libsvtav1"}
BITS, BLOCK = 10, 16  # frame index as 10 blocks of 16×16 pixels


def video_store() -> Any:
    """The ROS 2 typestore with foxglove_msgs CompressedVideo and ffmpeg_image_transport_msgs FFMPEGPacket."""
    ts = typestore()
    for name, text in DEFINITIONS.items():
        ts.register(get_types_from_msg(text, name))
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


def coded_slices(data: bytes, codec: str) -> list[bytes]:
    """The slice NAL units of an Annex B H.264/H.265 frame (parameter sets and SEI left out): what a copy keeps."""
    units = [u.rstrip(b"\x00") for u in data.split(b"\x00\x00\x01")]
    if codec == "h264":
        return [u for u in units if u and 1 <= u[0] & 0x1F <= 5]
    return [u for u in units if u and (u[0] >> 1) & 0x3F < 32]


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


def _message(ts: Any, kind: str, ns: int, index: int, data: bytes, key: bool, codec: str, size: tuple[int, int]) -> Any:
    """Coded frame `index` as a message of `kind` (see KINDS)."""
    buffer = np.frombuffer(data, np.uint8)
    if kind == "foxglove":
        return ts.types[COMPRESSED_VIDEO](timestamp=header(ts, ns, "").stamp, frame_id="front", data=buffer,
                                          format=FOXGLOVE_FORMATS[codec])
    if kind == "ffmpeg":
        return ts.types[FFMPEG_PACKET](header=header(ts, ns, "front"), width=size[0], height=size[1],
                                       encoding=f"{ENCODERS[codec]};yuv420p;rgb8;rgb8", pts=index, flags=int(key),
                                       is_bigendian=False, data=buffer)
    return ts.types[KINDS[kind]](header=header(ts, ns, "front"), format=FOXGLOVE_FORMATS[codec], data=buffer)


def write_video_bag(out: Path, frames: int = 90, width: int = 320, height: int = 240, fps: int = 30,
                    codec: str = "h264", gop: int = 30, bframes: int = 0, topic: str = "/camera/front/video",
                    kind: str = "foxglove", damage: int | None = None, skip: int = 0) -> Path:
    """Write the bag to folder `out` (which must not exist): `frames` coded frames as `kind` messages (see KINDS),
    the first `skip` left out (a recording starting mid-GOP), the one at `damage` cut in half."""
    ts = video_store()
    period = round(1e9 / fps)
    with BagWriter(out, ts, {"/joint_states": "sensor_msgs/msg/JointState", topic: KINDS[kind]}) as bag:
        for i, (data, key) in enumerate(encode(frames, width, height, fps, codec, gop, bframes)):
            ns = START_NS + i * period
            if i >= skip:
                coded = data[: len(data) // 2] if i == damage else data
                bag.write(ns, topic, _message(ts, kind, ns, i, coded, key, codec, (width, height)))
            bag.write(ns, "/joint_states", joint_state(ts, header(ts, ns, ""), ("a", "b"), np.array([i, -i]) * 0.01))
    return out
