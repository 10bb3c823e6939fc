"""A deterministic sample recording: a ROS 2 bag (MCAP storage) shaped like a real arm recording.

Topics: /joint_states (~100 Hz with jitter), /joint_commands, /camera/front/image_raw (rgb8, 30 Hz),
/camera/wrist/image_raw/compressed (JPEG, 15 Hz), their camera_info, /tf (end-effector), /tf_static
(camera extrinsics, ROS optical frames) and /task. Header stamps are the sample times; log times
lag them by 1–3 ms, as a recorder's receive time does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robokit.errors import OptionError
from robokit.limits import MAX_EPISODES
from robokit.ros.bagwriter import (
    START_NS,
    BagWriter,
    camera_info,
    header,
    joint_state,
    jpeg_image,
    raw_image,
    text,
    tf_message,
    transform,
    typestore,
)

JOINTS = ("shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "gripper")
TASKS = ("pick up the red cube and place it in the bin", "push the cube to the left")


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


def _optical_extrinsics() -> dict[str, tuple[str, np.ndarray, np.ndarray]]:
    """Camera optical frames (x right, y down, z forward) in their parents, as ROS expects."""
    from scipy.spatial.transform import Rotation  # slow to import (~0.25 s): loaded for rotation work only
    flu_to_optical = Rotation.from_matrix([[0, 0, 1], [-1, 0, 0], [0, -1, 0]])  # optical axes in FLU
    front = Rotation.from_euler("y", 30, degrees=True) * Rotation.from_euler("z", 180, degrees=True)
    return {
        "front_camera_optical": ("base_link", np.array([1.2, 0.0, 0.6]), (front * flu_to_optical).as_quat()),
        "wrist_camera_optical": ("tool0", np.array([0.0, 0.05, 0.02]), flu_to_optical.as_quat()),
    }


def write_sample_bag(out: Path, spec: SampleSpec = SampleSpec(), episode: int = 0) -> Path:
    """Write one sample episode as a ROS 2 bag directory `out` (must not exist) and return it."""
    from scipy.spatial.transform import Rotation  # slow to import (~0.25 s): loaded for rotation work only
    ts = typestore()
    rng = np.random.default_rng(spec.seed + episode)
    start = START_NS + episode * 60_000_000_000
    phase = float(rng.uniform(0, np.pi))
    task = TASKS[episode % len(TASKS)]
    with BagWriter(out, ts) as bag:

        def lag() -> int:
            return int(rng.integers(1_000_000, 3_000_000))

        joint_t = _ticks(rng, start, spec.duration_s, spec.joint_hz, 0.15)
        q = joint_trajectory((joint_t - start) / 1e9, phase)
        qd = np.gradient(q, (joint_t - start) / 1e9, axis=0)
        effort = -2.0 * q + rng.normal(0, 0.01, q.shape)
        for i, t in enumerate(joint_t.tolist()):
            hdr = header(ts, t, "base_link")
            bag.write(t + lag(), "/joint_states", joint_state(ts, hdr, JOINTS, q[i], qd[i], effort[i]))
            bag.write(t + lag(), "/joint_commands", joint_state(ts, hdr, JOINTS, q[min(i + 5, len(q) - 1)]))
            if i % 2 == 0:  # end effector at 50 Hz
                s = (t - start) / 1e9
                pos = np.array([0.5 + 0.1 * np.sin(s + phase), 0.1 * np.cos(s), 0.3 + 0.05 * np.sin(2 * s)])
                rot = Rotation.from_euler("xyz", [np.pi, 0.2 * np.sin(s), 0.3 * s]).as_quat()
                bag.write(t + lag(), "/tf", tf_message(ts, [transform(ts, t, "base_link", "tool0", pos, rot)]))

        for cam, hz, compressed in (("front", spec.front_hz, False), ("wrist", spec.wrist_hz, True)):
            frame_id = f"{cam}_camera_optical"
            for i, t in enumerate(_ticks(rng, start, spec.duration_s, hz, 0.05).tolist()):
                pixels = frame_pixels(i, spec.width, spec.height, hue=0 if cam == "front" else 96)
                hdr = header(ts, t, frame_id)
                if compressed:
                    bag.write(t + lag(), f"/camera/{cam}/image_raw/compressed", jpeg_image(ts, hdr, pixels))
                else:
                    bag.write(t + lag(), f"/camera/{cam}/image_raw", raw_image(ts, hdr, pixels))
                bag.write(t + lag(), f"/camera/{cam}/camera_info",
                          camera_info(ts, t, frame_id, spec.width, spec.height))

        static = [transform(ts, start, parent, child, tr, rot)
                  for child, (parent, tr, rot) in _optical_extrinsics().items()]
        bag.write(start, "/tf_static", tf_message(ts, static))
        bag.write(start, "/task", text(ts, task))
    return out


def write_samples(out_dir: Path, episodes: int = 2, spec: SampleSpec = SampleSpec()) -> list[Path]:
    """Write `episodes` sample bags as `out_dir/episode_NNN/` and return their paths."""
    if not 1 <= episodes <= MAX_EPISODES:
        raise OptionError(f"episodes {episodes}: expected 1 to {MAX_EPISODES}")
    if not 0 < spec.duration_s <= 3600:
        raise OptionError(f"duration {spec.duration_s:g} s: expected above 0 up to 3600 seconds")
    if not (0 < spec.width <= 4096 and 0 < spec.height <= 4096):
        raise OptionError(f"image size {spec.width}x{spec.height}: width and height must be 1 to 4096")
    return [write_sample_bag(out_dir / f"episode_{i:03d}", spec, i) for i in range(episodes)]
