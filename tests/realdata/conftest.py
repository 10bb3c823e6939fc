"""Roots of the real LeRobot datasets (tests/realdata/lerobot, see SOURCES.md), plus the one variant built from them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

LEROBOT = Path(__file__).parent / "lerobot"
KEYS_VARIANT = "reachy2_apple_storage_v30_keys"  # built from reachy2_apple_storage_v30, never committed
G1_KEYS_VARIANT = "g1_inspire_v21_keys"  # built from g1_inspire_v21 (its camera has an MP4), never committed
_RENAMED = {"observation.state": "state", "action": "actions", "observation.image": "image",
            "observation.images.cam_high": "wrist"}


def _rename(value: Any) -> Any:
    """Rename every feature key in a column name (`stats/action/min` too), JSON key or JSON string."""
    if isinstance(value, dict):
        return {_rename(k): _rename(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v) for v in value]
    if isinstance(value, str):
        return "/".join(_RENAMED.get(part, part) for part in value.split("/"))
    return value


def build_keys_variant(dest: Path, source: str = "reachy2_apple_storage_v30") -> Path:
    """A copy of `source` with its features named `state`, `actions`, `image`/`wrist`, as openpi-style recorders
    name them (no permissively licensed dataset with those keys was found): metadata, stats, Parquet columns and
    video folders renamed."""
    shutil.copytree(LEROBOT / source, dest)
    for path in (dest / "meta").glob("*.json"):  # info.json, stats.json
        path.write_text(json.dumps(_rename(json.loads(path.read_text())), indent=4))
    for path in (dest / "meta").glob("*.jsonl"):  # v2.1 episodes_stats.jsonl
        path.write_text("".join(json.dumps(_rename(json.loads(line))) + "\n" for line in path.read_text().splitlines()))
    for path in dest.rglob("*.parquet"):
        table = pq.read_table(path)
        metadata = {k: json.dumps(_rename(json.loads(v))).encode() for k, v in (table.schema.metadata or {}).items()}
        pq.write_table(table.rename_columns([_rename(n) for n in table.column_names]).replace_schema_metadata(metadata),
                       path)
    for folder in sorted(dest.glob("videos/**/observation.*"), reverse=True):
        folder.rename(folder.with_name(_RENAMED[folder.name]))
    return dest


@pytest.fixture(scope="session")
def lerobot_roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Dataset name → root: every committed copy, and the keys variants written once per session."""
    roots = {p.name: p for p in LEROBOT.iterdir() if p.is_dir()}
    out = tmp_path_factory.mktemp("lerobot-variant")
    roots[KEYS_VARIANT] = build_keys_variant(out / KEYS_VARIANT)
    roots[G1_KEYS_VARIANT] = build_keys_variant(out / G1_KEYS_VARIANT, "g1_inspire_v21")
    return roots


# Generated stand-ins for the two ROS recordings no permissively licensed copy was found of (ros/SOURCES.md, "Gaps").
ODOM_MCAP, JOY_BAG = "generated_odometry_mcap", "generated_joy_sqlite3"
_WALL_NS = 1_778_200_000_000_000_000  # log times: wall clock (2026-05-08)
_SIM_NS = 1_234_567_890  # header stamps: simulation time, 1.78e9 s before the log times


def write_odometry_mcap(out: Path) -> Path:
    """A differential-drive robot on a circle (yaw past ±π, so both quaternion signs), as a navigation stack records
    it: /odom Odometry at 30 Hz and /amcl_pose every 1.5 s, sim-time header stamps, jittered log times."""
    from robokit.ros.bagwriter import BagWriter, header, typestore

    ts, rng = typestore(), np.random.default_rng(7)
    T = ts.types
    types = {"/odom": "nav_msgs/msg/Odometry", "/amcl_pose": "geometry_msgs/msg/PoseWithCovarianceStamped"}

    def pose(t: float) -> Any:
        yaw = 0.8 * t + 2.5
        return T["geometry_msgs/msg/Pose"](
            position=T["geometry_msgs/msg/Point"](x=np.cos(yaw), y=np.sin(yaw), z=0.0),
            orientation=T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=np.sin(yaw / 2), w=np.cos(yaw / 2)))

    def vec(x: float, z: float) -> Any:
        return T["geometry_msgs/msg/Vector3"](x=x, y=0.0, z=z)

    with BagWriter(out, ts, types) as bag:
        for i in range(180):
            t, sim = i / 30, _SIM_NS + i * 33_333_333
            cov = np.diag([0.01, 0.01, 0.0, 0.0, 0.0, 0.02]).ravel()
            bag.write(_WALL_NS + i * 33_333_333 + int(rng.integers(0, 2_000_000)), "/odom", T["nav_msgs/msg/Odometry"](
                header=header(ts, sim, "odom"), child_frame_id="base_link",
                pose=T["geometry_msgs/msg/PoseWithCovariance"](pose=pose(t), covariance=cov),
                twist=T["geometry_msgs/msg/TwistWithCovariance"](
                    twist=T["geometry_msgs/msg/Twist"](linear=vec(0.8 + 0.01 * rng.standard_normal(), 0.0),
                                                       angular=vec(0.0, 0.8)), covariance=cov)))
            if i % 45 == 0:
                bag.write(_WALL_NS + i * 33_333_333 + 5_000_000, "/amcl_pose",
                          T["geometry_msgs/msg/PoseWithCovarianceStamped"](
                              header=header(ts, sim, "map"),
                              pose=T["geometry_msgs/msg/PoseWithCovariance"](pose=pose(t), covariance=cov)))
    return out


def write_joy_bag(out: Path) -> Path:
    """A gamepad (8 axes, 11 buttons) published on change into a rosbag2 sqlite3 bag: 49 messages in 4 s."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    from robokit.ros.bagwriter import header, typestore

    ts, rng = typestore(), np.random.default_rng(11)
    log_ns = _WALL_NS + np.cumsum(rng.integers(20_000_000, 140_000_000, 49))
    axes, buttons = np.zeros(8, np.float32), np.zeros(11, np.int32)
    axes[[2, 5]] = 1.0  # released triggers rest at +1
    with Writer(out, version=9, storage_plugin=StoragePlugin.SQLITE3) as writer:
        conn = writer.add_connection("/joy", "sensor_msgs/msg/Joy", typestore=ts)
        for ns in log_ns:
            if rng.random() < 0.7:
                axes[rng.integers(0, 8)] = np.float32(np.round(rng.uniform(-1, 1), 4))
            else:
                buttons[rng.integers(0, 11)] ^= 1
            msg = ts.types["sensor_msgs/msg/Joy"](header=header(ts, int(ns) - 300_000, "joy"), axes=axes.copy(),
                                                 buttons=buttons.copy())
            writer.write(conn, int(ns), ts.serialize_cdr(msg, "sensor_msgs/msg/Joy"))
    return out


@pytest.fixture(scope="session")
def ros_roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Recording name → path: every committed copy under ros/, and the two generated stand-ins."""
    roots = {p.name: p for p in (Path(__file__).parent / "ros").iterdir() if p.name != "SOURCES.md"}
    out = tmp_path_factory.mktemp("ros-generated")
    roots[ODOM_MCAP] = write_odometry_mcap(out / ODOM_MCAP)
    roots[JOY_BAG] = write_joy_bag(out / JOY_BAG)
    return roots
