"""A tiny ROS 2 bag of depth cameras in every form ROS records them, for tests of depth through every writer.

Cameras (24×16, 10 Hz, `FRAMES` frames), all showing the same millimetres (`depth_mm`):
`front` sensor_msgs/Image 16UC1 (mm), `wrist` 32FC1 (m, NaN for no reading), `side` compressedDepth PNG
16UC1, `top` compressedDepth PNG 32FC1 (quantized inverse depth, lossy as the ROS plugin is), `back`
compressedDepth RVL 16UC1. A 2-joint `/joint_states` gives the writers a state.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
from PIL import Image

from robokit.ros.bagwriter import START_NS, BagWriter, header, joint_state, typestore

WIDTH, HEIGHT, FRAMES, PERIOD_NS = 24, 16, 6, 100_000_000
TOPICS = {
    "/joint_states": "sensor_msgs/msg/JointState",
    "/front/depth/image_raw": "sensor_msgs/msg/Image",
    "/wrist/depth/image_raw": "sensor_msgs/msg/Image",
    "/side/depth/image_raw/compressedDepth": "sensor_msgs/msg/CompressedImage",
    "/top/depth/image_raw/compressedDepth": "sensor_msgs/msg/CompressedImage",
    "/back/depth/image_raw/compressedDepth": "sensor_msgs/msg/CompressedImage",
}
INV_DEPTH_QUANTIZATION, INV_DEPTH_MAX = 100.0, 10.0  # the ROS plugin's defaults (depth_quantization, depth_max)


def depth_mm(index: int) -> np.ndarray:
    """Frame `index` in uint16 millimetres: 250 mm to 8 m, a few pixels 0 (no reading)."""
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    mm = 250 + (x * 311 + y * 97 + index * 523) % 7750
    mm[(x + y + index) % 11 == 0] = 0
    out: np.ndarray = mm.astype(np.uint16)
    return out


def _png16(pixels: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return buf.getvalue()


def inverse_depth(mm: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(uint16 inverse depth, depthQuantA, depthQuantB) as compressed_depth_image_transport quantizes 32FC1."""
    quant_a = np.float32(INV_DEPTH_QUANTIZATION * (INV_DEPTH_QUANTIZATION + 1.0))
    quant_b = np.float32(1.0 - quant_a / INV_DEPTH_MAX)
    metres = mm.astype(np.float32) / np.float32(1000)
    with np.errstate(divide="ignore"):
        inv = np.where((mm > 0) & (metres < INV_DEPTH_MAX), quant_a / metres + quant_b, 0)
    return inv.astype(np.uint16), float(quant_a), float(quant_b)


def encode_rvl(values: np.ndarray) -> bytes:
    """RVL code of uint16 values (Wilson 2017): runs of zeros and of zig-zag deltas in 4-bit groups."""
    nibbles: list[int] = []

    def vle(value: int) -> None:
        while True:
            nibble = value & 0x7
            value >>= 3
            nibbles.append(nibble | (0x8 if value else 0))
            if not value:
                return

    flat, i, previous = values.ravel().astype(np.int64), 0, 0
    while i < len(flat):
        zeros = 0
        while i < len(flat) and flat[i] == 0:
            zeros, i = zeros + 1, i + 1
        start = i
        while i < len(flat) and flat[i] != 0:
            i += 1
        vle(zeros)
        vle(i - start)
        for v in flat[start:i].tolist():
            delta = v - previous
            vle((delta << 1) ^ (delta >> 31))
            previous = v
    nibbles += [0] * (-len(nibbles) % 8)
    words = [sum(n << (28 - 4 * k) for k, n in enumerate(nibbles[j:j + 8])) for j in range(0, len(nibbles), 8)]
    return struct.pack(f"<{len(words)}I", *words)


def _compressed(ts: object, hdr: object, fmt: str, config: tuple[float, float], body: bytes) -> object:
    data = struct.pack("<iff", 0, *config) + body
    return ts.types["sensor_msgs/msg/CompressedImage"](  # type: ignore[attr-defined]
        header=hdr, format=fmt, data=np.frombuffer(data, dtype=np.uint8))


def write_depth_bag(out: Path) -> Path:
    """Write the bag to folder `out` (which must not exist); returns `out`."""
    ts = typestore()
    image = ts.types["sensor_msgs/msg/Image"]
    with BagWriter(out, ts, TOPICS) as bag:
        for i in range(FRAMES):
            ns = START_NS + i * PERIOD_NS
            mm = depth_mm(i)
            metres = np.where(mm > 0, mm.astype(np.float32) / np.float32(1000), np.float32(np.nan)).astype("<f4")
            bag.write(ns, "/joint_states", joint_state(ts, header(ts, ns, ""), ("a", "b"), np.array([i, -i]) * 0.1))
            bag.write(ns, "/front/depth/image_raw", image(
                header=header(ts, ns, "front"), height=HEIGHT, width=WIDTH, encoding="16UC1", is_bigendian=0,
                step=WIDTH * 2, data=mm.astype("<u2").view(np.uint8).reshape(-1)))
            bag.write(ns, "/wrist/depth/image_raw", image(
                header=header(ts, ns, "wrist"), height=HEIGHT, width=WIDTH, encoding="32FC1", is_bigendian=0,
                step=WIDTH * 4, data=metres.view(np.uint8).reshape(-1)))
            bag.write(ns, "/side/depth/image_raw/compressedDepth", _compressed(
                ts, header(ts, ns, "side"), "16UC1; compressedDepth png", (0.0, 0.0), _png16(mm)))
            inv, quant_a, quant_b = inverse_depth(mm)
            bag.write(ns, "/top/depth/image_raw/compressedDepth", _compressed(
                ts, header(ts, ns, "top"), "32FC1; compressedDepth png", (quant_a, quant_b), _png16(inv)))
            bag.write(ns, "/back/depth/image_raw/compressedDepth", _compressed(
                ts, header(ts, ns, "back"), "16UC1; compressedDepth rvl", (0.0, 0.0),
                struct.pack("<II", WIDTH, HEIGHT) + encode_rvl(mm)))
    return out
