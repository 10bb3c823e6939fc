"""robomimic / Isaac Lab Mimic and LIBERO files: `data/demo_N/{obs/*, actions, rewards, dones, states}`.

One episode per demo in numeric order. The rate is `data@env_args` → `env_kwargs.control_freq`
(robosuite's own demo files: `data@env_info` → `control_freq`), else 20 Hz (robosuite's default) with a
warning. `mask/<filter>` lists of demo names become episode tags (`split` is train/valid/test when the
demo is in one of those, `filters` lists every filter). LIBERO's `data@problem_info` →
`language_instruction` is each episode's task.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from robokit.converters.hdf5.common import (
    Steps,
    camera,
    datasets,
    grid,
    grid_warning,
    json_attr,
    mapped_camera_channel,
    natural_key,
    numeric,
    opened,
    read_array,
    unusable,
)
from robokit.converters.hdf5.depth import depth_camera, depth_channel
from robokit.digest import source_digest
from robokit.errors import SourceError
from robokit.sources.naming import lookup
from robokit.timeline import Episode, EpisodeMeta, Loss, PoseStream, SkippedTopic, Stream, StreamOrigin
from robokit.timeline.episode import LoadedWithLosses

DEFAULT_RATE = 20.0
SPLITS = ("train", "valid", "val", "test")
# obs keys with a channel of their own (robomimic's robot0_* names and LIBERO's)
_OBS = {
    "robot0_joint_pos": "joints/position",
    "robot0_joint_vel": "joints/velocity",
    "robot0_gripper_qpos": "gripper/position",
    "robot0_gripper_qvel": "gripper/velocity",
    "joint_states": "joints/position",
    "gripper_states": "gripper/position",
}
_TOP = {"actions": "action", "rewards": "reward", "dones": "done"}
_PER_STEP = ("obs/", "actions", "rewards", "dones", "states")  # these define the episode's length
_EEF = ("obs/robot0_eef_pos", "obs/robot0_eef_quat")


def matches(f: h5py.File) -> bool:
    """A `data` group holding at least one demo group with `obs` or `actions`."""
    data = f.get("data")
    return isinstance(data, h5py.Group) and any(
        isinstance(g := data.get(k), h5py.Group) and ("obs" in g or "actions" in g) for k in data)


def _rate(path: Path, env_args: Mapping[str, Any], warnings: list[str]) -> float:
    kwargs = env_args.get("env_kwargs")
    freq = kwargs.get("control_freq") if isinstance(kwargs, Mapping) else None
    if freq is None:
        warnings.append(f"{path}: no env_args.env_kwargs.control_freq; {DEFAULT_RATE:g} Hz assumed")
        return DEFAULT_RATE
    if isinstance(freq, bool) or not isinstance(freq, int | float) or not 0 < freq <= 1e6:
        raise SourceError(f"{path}: attribute /data@env_args: env_kwargs.control_freq {freq!r} is not a rate in Hz")
    return float(freq)


def _masks(path: Path, f: h5py.File) -> dict[str, list[str]]:
    """demo name → the `mask/<filter>` filters listing it."""
    out: dict[str, list[str]] = {}
    mask = f.get("mask")
    if not isinstance(mask, h5py.Group):
        return out
    for name, ds in datasets(mask):
        values = read_array(path, ds)
        if values.dtype.kind not in "SUO" or values.ndim > 1:
            raise SourceError(f"{path}: dataset {ds.name} is not a list of demo names ({values.dtype})")
        for v in values.reshape(-1):
            demo = v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
            out.setdefault(demo, []).append(name)
    return out


def _tags(filters: list[str], env: str) -> dict[str, str]:
    tags = {"env": env} if env else {}
    split = next((s for s in SPLITS if s in filters), "")
    if split:
        tags["split"] = split
    if filters:
        tags["filters"] = ",".join(filters)
    return tags


def read(path: Path, f: h5py.File, mapping: Mapping[str, str]) -> list[Episode]:
    """Lazy episodes, one per demo of `data` in numeric order."""
    data = f["data"]
    env_args = json_attr(path, data, "env_args")
    if not env_args and "env_info" in data.attrs:  # robosuite's own demo files (what robomimic converts from)
        info = json_attr(path, data, "env_info")
        env_args = {"env_name": info.get("env_name", ""), "env_kwargs": info}
    problem = json_attr(path, data, "problem_info")
    demos = sorted((k for k in data if isinstance(data.get(k), h5py.Group)), key=natural_key)
    obs = data[demos[0]].get("obs") if demos else None
    libero = bool(problem) or (isinstance(obs, h5py.Group) and any(k.endswith("_rgb") or k == "joint_states"
                                                                   for k in obs))
    warnings: list[str] = []
    rate = _rate(path, env_args, warnings)
    warnings.append(grid_warning(path, rate))
    task = problem.get("language_instruction")
    tasks = (task,) if isinstance(task, str) and task else ()
    masks = _masks(path, f)
    robots = env_args.get("env_kwargs", {}).get("robots") if isinstance(env_args.get("env_kwargs"), dict) else None
    robot = robots if isinstance(robots, str) else ",".join(map(str, robots)) if isinstance(robots, list) else ""
    env = str(env_args.get("env_name") or problem.get("problem_name") or "")
    digest = source_digest([path])
    fmt = "libero" if libero else "robomimic"
    return [Episode(EpisodeMeta(source_uri=f"{path.resolve()}#data/{demo}", episode_id=f"{path.stem}_{demo}",
                                source_version=digest, source_format=fmt, tasks=tasks, robot_type=robot,
                                tags=_tags(masks.get(demo, []), env)),
                    loader=partial(_streams, path, demo, rate, tuple(warnings), dict(mapping)))
            for demo in demos]


def _channel(rel: str) -> str:
    """The default channel of a demo's numeric dataset."""
    if rel in _TOP:
        return _TOP[rel]
    if not rel.startswith("obs/"):
        return rel
    key = rel.removeprefix("obs/")
    if key in _OBS:
        return _OBS[key]
    return f"obs/{key}"


def _camera_name(key: str) -> str:
    for suffix in ("_image", "_rgb"):
        if key.endswith(suffix):
            return key.removesuffix(suffix)
    return key.replace("/", "_")


def _is_depth(rel: str) -> bool:
    return rel.startswith("obs/") and rel.endswith("_depth")


def _is_image(rel: str, ds: h5py.Dataset) -> bool:
    key = rel.removeprefix("obs/")
    return rel.startswith("obs/") and (key.endswith(("_image", "_rgb")) or (ds.dtype == np.uint8 and ds.ndim == 4))


def _streams(path: Path, demo: str, rate: float, file_warnings: tuple[str, ...],
             mapping: Mapping[str, str]) -> LoadedWithLosses:
    """Streams of one demo: numeric arrays read whole (small), images left in the file."""
    warnings, losses, skipped = list(file_warnings), list[Loss](), list[SkippedTopic]()
    with opened(path) as f:
        group = f.get(f"data/{demo}")
        if not isinstance(group, h5py.Group):
            raise SourceError(f"{path}: /data/{demo} is no longer a group (file changed?)")
        found = dict(datasets(group))
        usable: dict[str, h5py.Dataset] = {}
        next_obs = 0
        for rel, ds in found.items():
            if rel.startswith("next_obs/"):
                next_obs += 1
            elif ds.ndim == 0:
                skipped.append(SkippedTopic(ds.name, f"hdf5/{ds.dtype}", "a scalar, not one value per step", 1))
            elif (why := unusable(ds)) and not _is_image(rel, ds) and not _is_depth(rel):
                skipped.append(SkippedTopic(ds.name, f"hdf5/{ds.dtype}", why, _rows(ds)))
            else:
                usable[rel] = ds
        if next_obs:
            skipped.append(SkippedTopic(f"/data/{demo}/next_obs", "hdf5/group",
                                        "the next step's obs (obs shifted by one step)", next_obs))
        steps = Steps(path, f"/data/{demo}")
        n = steps.length({k: len(ds) for k, ds in usable.items() if k.startswith(_PER_STEP)}, warnings, losses)
        if "num_samples" in group.attrs and int(np.asarray(group.attrs["num_samples"]).reshape(-1)[0]) != n:
            warnings.append(f"{path}: /data/{demo}@num_samples says {group.attrs['num_samples']}, {n} steps read")
        times = grid(n, rate)
        streams: dict[str, Stream] = {}
        if all(k in usable for k in _EEF) and not any(lookup(mapping, k) for k in _EEF):
            streams["eef/pose"] = _pose(path, usable.pop(_EEF[0]), usable.pop(_EEF[1]), times)
        for rel, ds in usable.items():
            if len(ds) < n or (len(ds) > n and not rel.startswith(_PER_STEP)):
                skipped.append(SkippedTopic(ds.name, f"hdf5/{ds.dtype}", f"{len(ds)} rows, not one per step ({n})",
                                            len(ds)))
            elif _is_depth(rel):
                depth = depth_camera(path, ds, depth_channel(lookup(mapping, rel), rel.removeprefix("obs/")), times,
                                     warnings)
                if isinstance(depth, SkippedTopic):
                    skipped.append(depth)
                else:
                    streams[depth.name] = depth
            elif _is_image(rel, ds):
                name = mapped_camera_channel(lookup(mapping, rel), _camera_name(rel.removeprefix("obs/")))
                streams[name] = camera(path, ds, name, times, encoded=False)
            else:
                name = lookup(mapping, rel) or _channel(rel)
                streams[name] = numeric(path, ds, name, times)
    return streams, skipped, warnings, losses


def _rows(ds: h5py.Dataset) -> int:
    return int(ds.shape[0]) if ds.ndim else 1


def _pose(path: Path, pos: h5py.Dataset, quat: h5py.Dataset, times: np.ndarray) -> PoseStream:
    """`eef/pose` from robot0_eef_pos (T, 3) and robot0_eef_quat (T, 4, xyzw)."""
    n = len(times)
    t, q = read_array(path, pos)[:n], read_array(path, quat)[:n]
    if t.shape != (n, 3) or q.shape != (n, 4):
        raise SourceError(f"{path}: {pos.name} {t.shape} and {quat.name} {q.shape} are not (T, 3) and (T, 4)")
    return PoseStream("eef/pose", times, origin=StreamOrigin(pos.parent.name, "hdf5/eef_pos+eef_quat", "grid"),
                      translation=t, quaternion=q, parent_frame="world", child_frame="eef", convention="mujoco")
