"""Magic-byte checks shared by the readers, and what makes a file a scene input (light: no mesh libraries)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

MCAP_MAGIC = b"\x89MCAP0\r\n"
ROSBAG1_MAGIC = b"#ROSBAG V2.0"
SQLITE_MAGIC = b"SQLite format 3\x00"


def head(path: Path, n: int = 16) -> bytes:
    """The first `n` bytes of a file (b"" for directories and unreadable files)."""
    if not path.is_file():
        return b""
    try:
        with path.open("rb") as f:
            return f.read(n)
    except OSError:
        return b""


SCENE_MARKERS = ("scene.json", "media", "task")  # what makes a folder a completed (annotated) scene


def is_annotated_scene(path: Path) -> bool:
    """True for a folder laid out as a completed scene (it holds scene.json, media/ or task/)."""
    return path.is_dir() and any((path / m).exists() for m in SCENE_MARKERS)


def is_mcap(path: Path) -> bool:
    return head(path, 8) == MCAP_MAGIC


def is_rosbag1(path: Path) -> bool:
    return head(path, 12) == ROSBAG1_MAGIC


def is_sqlite(path: Path) -> bool:
    return head(path, 16) == SQLITE_MAGIC


DESCRIPTION_SUFFIXES = (".yaml", ".yml", ".json")
MESH_SUFFIXES = (".obj", ".stl", ".ply", ".glb", ".gltf")
SCENE_KEYS = frozenset({"objects", "splat", "splats"})  # one of these marks a YAML/JSON file as a scene


def read_mapping(path: Path) -> dict[str, Any] | None:
    """The top-level mapping of a YAML/JSON file, or None when it cannot be parsed as one."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def is_scene_file(path: Path) -> bool:
    """Whether `path` is a scene input: a scene description, a PLY (splat or mesh; a damaged one too, whose
    loading says what is wrong) or a mesh file."""
    suffix = path.suffix.lower()
    if not path.is_file():
        return False
    if suffix in DESCRIPTION_SUFFIXES:
        data = read_mapping(path)
        return data is not None and bool(SCENE_KEYS & set(data))
    if suffix == ".ply":
        return head(path, 5).split(b"\n", 1)[0].rstrip(b"\r") == b"ply"  # the magic line
    return suffix in MESH_SUFFIXES
