"""A deterministic sample recording: a ROS 2 bag (MCAP storage) shaped like a real arm recording.

Topics: /joint_states (~100 Hz with jitter), /joint_commands, /camera/front/image_raw (rgb8, 30 Hz),
/camera/wrist/image_raw/compressed (JPEG, 15 Hz), their camera_info, /tf (end-effector), /tf_static
(camera extrinsics, ROS optical frames) and /task. Header stamps are the sample times; log times
lag them by 1–3 ms, as a recorder's receive time does.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from scipy.spatial.transform import Rotation

from robokit.errors import RobokitError

JOINTS = ("shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "gripper")
TASKS = ("pick up the red cube and place it in the bin", "push the cube to the left")
_START_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z


@dataclass(frozen=True)
class SampleSpec:
    """What to generate: duration, image size, rates, seed."""

    duration_s: float = 4.0
    width: int = 160
    height: int = 120
    joint_hz: float = 100.0
    front_hz: float = 30.0
    wrist_hz: float = 15.0
    seed: int = 0


def _stamp(ts: Any, ns: int) -> Any:
    return ts.types["builtin_interfaces/msg/Time"](sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def _header(ts: Any, ns: int, frame_id: str) -> Any:
    return ts.types["std_msgs/msg/Header"](stamp=_stamp(ts, ns), frame_id=frame_id)


def _ticks(rng: np.random.Generator, start: int, duration_s: float, hz: float, jitter: float) -> np.ndarray:
    n = int(duration_s * hz) + 1
    nominal = start + np.round(np.arange(n) * 1e9 / hz).astype(np.int64)
    noise = rng.normal(0.0, jitter * 1e9 / hz, n).astype(np.int64) if jitter else 0
    return np.maximum(np.sort(nominal + noise), start)  # the recording starts at `start`


def joint_trajectory(t_s: np.ndarray, phase: float) -> np.ndarray:
    """Smooth joint positions (rad; gripper in m) for times in seconds: a reach, grasp and place."""
    k = np.arange(len(JOINTS) - 1)
    arm = 0.4 * np.sin(0.8 * t_s[:, None] * (1 + 0.2 * k) + phase + k)
    grip = 0.04 * (0.5 + 0.5 * np.tanh(3 * np.sin(0.6 * t_s + phase)))[:, None]
    return np.hstack([arm, grip])


def frame_pixels(index: int, width: int, height: int, hue: int) -> np.ndarray:
    """A synthetic RGB frame: a gradient whose brightness encodes `index`, and a moving square."""
    y, x = np.mgrid[0:height, 0:width]
    img = np.empty((height, width, 3), dtype=np.uint8)
    img[..., 0] = (x * 255 // max(1, width - 1) + hue) % 256
    img[..., 1] = y * 255 // max(1, height - 1)
    img[..., 2] = (index * 7) % 256
    side = max(4, min(width, height) // 6)
    cx = (index * 3) % max(1, width - side)
    cy = (index * 2) % max(1, height - side)
    img[cy : cy + side, cx : cx + side] = (255, 32, 32)
    return img


def _intrinsics(width: int, height: int, fovy_deg: float) -> np.ndarray:
    f = 0.5 * height / np.tan(np.radians(fovy_deg) / 2)
    return np.array([[f, 0, (width - 1) / 2], [0, f, (height - 1) / 2], [0, 0, 1]], dtype=np.float64)


def _camera_info(ts: Any, ns: int, frame_id: str, width: int, height: int) -> Any:
    k = _intrinsics(width, height, 60.0)
    p = np.hstack([k, np.zeros((3, 1))]).ravel()
    return ts.types["sensor_msgs/msg/CameraInfo"](
        header=_header(ts, ns, frame_id), height=height, width=width, distortion_model="plumb_bob",
        d=np.zeros(5), k=k.ravel(), r=np.eye(3).ravel(), p=p, binning_x=0, binning_y=0,
        roi=ts.types["sensor_msgs/msg/RegionOfInterest"](
            x_offset=0, y_offset=0, height=0, width=0, do_rectify=False
        ),
    )


def _transform(ts: Any, ns: int, parent: str, child: str, t: np.ndarray, q_xyzw: np.ndarray) -> Any:
    T = ts.types
    return T["geometry_msgs/msg/TransformStamped"](
        header=_header(ts, ns, parent), child_frame_id=child,
        transform=T["geometry_msgs/msg/Transform"](
            translation=T["geometry_msgs/msg/Vector3"](x=float(t[0]), y=float(t[1]), z=float(t[2])),
            rotation=T["geometry_msgs/msg/Quaternion"](
                x=float(q_xyzw[0]), y=float(q_xyzw[1]), z=float(q_xyzw[2]), w=float(q_xyzw[3])
            ),
        ),
    )


def _optical_extrinsics() -> dict[str, tuple[str, np.ndarray, np.ndarray]]:
    """Camera optical frames (x right, y down, z forward) in their parents, as ROS expects."""
    flu_to_optical = Rotation.from_matrix([[0, 0, 1], [-1, 0, 0], [0, -1, 0]])  # optical axes in FLU
    front = Rotation.from_euler("y", 30, degrees=True) * Rotation.from_euler("z", 180, degrees=True)
    return {
        "front_camera_optical": ("base_link", np.array([1.2, 0.0, 0.6]), (front * flu_to_optical).as_quat()),
        "wrist_camera_optical": ("tool0", np.array([0.0, 0.05, 0.02]), flu_to_optical.as_quat()),
    }


def write_sample_bag(out: Path, spec: SampleSpec = SampleSpec(), episode: int = 0) -> Path:
    """Write one sample episode as a ROS 2 bag directory `out` (must not exist) and return it."""
    if out.exists():
        raise RobokitError(f"{out}: already exists; sample bags are written to a new folder")
    ts = get_typestore(Stores.LATEST)
    T = ts.types
    rng = np.random.default_rng(spec.seed + episode)
    start = _START_NS + episode * 60_000_000_000
    phase = float(rng.uniform(0, np.pi))
    task = TASKS[episode % len(TASKS)]
    msgs: list[tuple[int, str, Any]] = []  # (log time, topic, message)

    def lag() -> int:
        return int(rng.integers(1_000_000, 3_000_000))

    joint_t = _ticks(rng, start, spec.duration_s, spec.joint_hz, 0.15)
    q = joint_trajectory((joint_t - start) / 1e9, phase)
    qd = np.gradient(q, (joint_t - start) / 1e9, axis=0)
    effort = -2.0 * q + rng.normal(0, 0.01, q.shape)
    for i, t in enumerate(joint_t.tolist()):
        hdr = _header(ts, t, "base_link")
        msgs.append((t + lag(), "/joint_states", T["sensor_msgs/msg/JointState"](
            header=hdr, name=list(JOINTS), position=q[i], velocity=qd[i], effort=effort[i])))
        cmd = q[min(i + 5, len(q) - 1)]
        msgs.append((t + lag(), "/joint_commands", T["sensor_msgs/msg/JointState"](
            header=hdr, name=list(JOINTS), position=cmd, velocity=np.zeros(0), effort=np.zeros(0))))
        if i % 2 == 0:  # end effector at 50 Hz
            s = (t - start) / 1e9
            pos = np.array([0.5 + 0.1 * np.sin(s + phase), 0.1 * np.cos(s), 0.3 + 0.05 * np.sin(2 * s)])
            rot = Rotation.from_euler("xyz", [np.pi, 0.2 * np.sin(s), 0.3 * s]).as_quat()
            msgs.append((t + lag(), "/tf", T["tf2_msgs/msg/TFMessage"](
                transforms=[_transform(ts, t, "base_link", "tool0", pos, rot)])))

    for cam, hz, compressed in (("front", spec.front_hz, False), ("wrist", spec.wrist_hz, True)):
        frame_id = f"{cam}_camera_optical"
        for i, t in enumerate(_ticks(rng, start, spec.duration_s, hz, 0.05).tolist()):
            pixels = frame_pixels(i, spec.width, spec.height, hue=0 if cam == "front" else 96)
            hdr = _header(ts, t, frame_id)
            if compressed:
                buf = io.BytesIO()
                Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
                msg = T["sensor_msgs/msg/CompressedImage"](
                    header=hdr, format="jpeg", data=np.frombuffer(buf.getvalue(), dtype=np.uint8))
                topic = f"/camera/{cam}/image_raw/compressed"
            else:
                msg = T["sensor_msgs/msg/Image"](
                    header=hdr, height=spec.height, width=spec.width, encoding="rgb8", is_bigendian=0,
                    step=spec.width * 3, data=pixels.reshape(-1))
                topic = f"/camera/{cam}/image_raw"
            msgs.append((t + lag(), topic, msg))
            msgs.append((t + lag(), f"/camera/{cam}/camera_info",
                         _camera_info(ts, t, frame_id, spec.width, spec.height)))

    static = [_transform(ts, start, parent, child, tr, rot)
              for child, (parent, tr, rot) in _optical_extrinsics().items()]
    msgs.append((start, "/tf_static", T["tf2_msgs/msg/TFMessage"](transforms=static)))
    msgs.append((start, "/task", T["std_msgs/msg/String"](data=task)))

    types = {"/joint_states": "sensor_msgs/msg/JointState", "/joint_commands": "sensor_msgs/msg/JointState",
             "/tf": "tf2_msgs/msg/TFMessage", "/tf_static": "tf2_msgs/msg/TFMessage",
             "/task": "std_msgs/msg/String", "/camera/front/image_raw": "sensor_msgs/msg/Image",
             "/camera/wrist/image_raw/compressed": "sensor_msgs/msg/CompressedImage",
             "/camera/front/camera_info": "sensor_msgs/msg/CameraInfo",
             "/camera/wrist/camera_info": "sensor_msgs/msg/CameraInfo"}
    msgs.sort(key=lambda m: m[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    with Writer(out, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conns = {topic: writer.add_connection(topic, msgtype, typestore=ts) for topic, msgtype in types.items()}
        for log_ns, topic, msg in msgs:
            writer.write(conns[topic], log_ns, ts.serialize_cdr(msg, types[topic]))
    return out


def write_samples(out_dir: Path, episodes: int = 2, spec: SampleSpec = SampleSpec()) -> list[Path]:
    """Write `episodes` sample bags as `out_dir/episode_NNN/` and return their paths."""
    if episodes < 1:
        raise RobokitError("episodes must be at least 1")
    return [write_sample_bag(out_dir / f"episode_{i:03d}", spec, i) for i in range(episodes)]
