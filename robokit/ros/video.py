"""Coded video messages → packets: Foxglove CompressedVideo, CompressedImage `h264`/`h265`, FFMPEGPacket.

The index pass notes each message's keyframe flag (from the bitstream: H.264 IDR, H.265 IRAP, AV1
sequence header; FFMPEGPacket's own flag too) and decodes the first keyframe once for the frame size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robokit.ros.fields import UnsupportedMessage, as_bytes
from robokit.timeline.images import FrameSource
from robokit.timeline.video import VideoFrames, decode_packet, decoder, has_sequence_header

FFMPEG_PACKET = "ffmpeg_image_transport_msgs/msg/FFMPEGPacket"
COMPRESSED_VIDEO = "foxglove_msgs/msg/CompressedVideo"
COMPRESSED_VIDEO_MSG = "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format\n"
FOXGLOVE_FORMATS = {"h264": "h264", "hevc": "h265", "av1": "av1"}  # codec → CompressedVideo `format`
VIDEO_TYPES = ("foxglove.CompressedVideo", FFMPEG_PACKET)
_STILL_TYPES = ("sensor_msgs/msg/CompressedImage", "foxglove.CompressedImage")
_FORMATS = (("264", "h264"), ("avc", "h264"), ("265", "hevc"), ("hevc", "hevc"), ("av1", "av1"))


def video_codec(msg: Any, msgtype: str) -> str | None:
    """h264, hevc or av1 for a coded-video message; None for still images; UnsupportedMessage for other video."""
    if msgtype in _STILL_TYPES:
        fmt = str(getattr(msg, "format", "")).lower()
        return next((codec for token, codec in _FORMATS if token in fmt), None)
    if msgtype not in VIDEO_TYPES:
        return None
    # FFMPEGPacket: "codec;av_source_pixel_format;cv_bridge_target_format;ros_encoding", the codec first
    fmt = str(msg.encoding).split(";")[0] if msgtype == FFMPEG_PACKET else str(msg.format)
    fmt = fmt.lower()
    codec = next((codec for token, codec in _FORMATS if token in fmt), None)
    if codec is None:
        raise UnsupportedMessage(f"unsupported video format {fmt!r} (h264, h265 and av1 are read)")
    return codec


def is_keyframe(codec: str, data: bytes) -> bool:
    """Whether a coded frame decodes on its own: an IDR (H.264) or IRAP (H.265) picture, or an AV1 temporal unit
    carrying a sequence header."""
    return frame_kind(codec, data)[0]


def frame_kind(codec: str, data: bytes) -> tuple[bool, bool]:
    """(keyframe, B-slice) of a coded frame, from its first slice; B-slices are told for H.264 only (H.265 says
    so in its SPS, which the decoder reads; AV1 never reorders)."""
    if codec == "av1":
        return has_sequence_header(data), False
    start = data.find(b"\x00\x00\x01")
    while start >= 0 and start + 3 < len(data):
        header = data[start + 3]
        if codec == "h264" and 1 <= header & 0x1F <= 5:  # the first slice
            return header & 0x1F == 5, _h264_slice_type(data[start + 4:start + 12]) % 5 == 1
        if codec == "hevc" and (header >> 1) & 0x3F < 32:
            return 16 <= (header >> 1) & 0x3F <= 21, False
        start = data.find(b"\x00\x00\x01", start + 3)
    return False, False


def _h264_slice_type(head: bytes) -> int:
    """slice_type, the second Exp-Golomb number of an H.264 slice header (after first_mb_in_slice); -1 if cut."""
    bits = "".join(f"{b:08b}" for b in head)
    at = 0
    for _ in range(2):
        zeros = bits.find("1", at) - at
        if zeros < 0 or at + 2 * zeros + 1 > len(bits):
            return -1
        value = int(bits[at + zeros:at + 2 * zeros + 1], 2) - 1
        at += 2 * zeros + 1
    return value


class VideoTrack:
    """One topic's coded video during the index pass: keyframe flags by message position, the frame size."""

    def __init__(self, codec: str, topic: str) -> None:
        self.codec = codec
        self.topic = topic
        self.keyframes = bytearray()  # a byte per message position: 1 for a keyframe (0: not, or not decoded)
        self.size: tuple[int, int] | None = None
        self.reorders = False  # B-frames: frames decode out of display order

    def add(self, msg: Any, msgtype: str, position: int) -> None:
        data = as_bytes(msg.data)
        key, bidirectional = frame_kind(self.codec, data)
        key |= msgtype == FFMPEG_PACKET and bool(int(msg.flags) & 1)
        if position >= len(self.keyframes):
            self.keyframes.extend(bytes(position + 1 - len(self.keyframes)))
        self.keyframes[position] = key
        self.reorders |= bidirectional
        if self.size is None and key:
            self.size = self._probe(data)

    def _probe(self, data: bytes) -> tuple[int, int] | None:
        """The size of a keyframe decoded on its own, None when it does not decode (a damaged packet); notes
        whether its parameter sets announce reordered frames."""
        ctx = decoder(self.codec)
        try:
            frames = decode_packet(ctx, data, self.topic)
            self.reorders |= bool(ctx.has_b_frames)
            frames += decode_packet(ctx, None, self.topic)
        except Exception:  # a damaged keyframe: the next one gives the size
            return None
        return (frames[0].width, frames[0].height) if frames else None

    def layout(self) -> tuple[int, int, str, str]:
        """(width, height, decoded encoding, storage format) once a keyframe decoded."""
        assert self.size is not None, "layout asked before a keyframe decoded"
        return self.size[0], self.size[1], "rgb8", self.codec

    def first_keyframe(self) -> int:
        first = self.keyframes.find(1)
        return first if first >= 0 else len(self.keyframes)

    def frames(self, packets: FrameSource, label: str) -> VideoFrames:
        """The decode-on-demand frames over the topic's packets (messages without a flag count as non-key)."""
        flags = np.frombuffer(bytes(self.keyframes), dtype=np.uint8).astype(bool)
        return VideoFrames(packets, self.codec, flags, label, self.reorders)
