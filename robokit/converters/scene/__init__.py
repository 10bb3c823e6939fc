"""Scenes for simulators: Gaussian splats, meshes with collision shapes, cameras, lights, a ground plane."""

from robokit.converters.scene.load import is_splat_file, load_scene
from robokit.converters.scene.model import (
    COLLISION_MODES,
    GroundPlane,
    Pose,
    Scene,
    SceneCamera,
    SceneLight,
    SceneMeta,
    SceneObject,
    SplatSet,
)
from robokit.converters.scene.options import SCENE_OPTIONS, SceneOptions
from robokit.converters.scene.ply import read_splat_ply, write_splat_ply
from robokit.converters.scene.prepare import PreparedObject, PreparedScene, prepare_scene
from robokit.converters.scene.sample import write_sample_scene

__all__ = [
    "COLLISION_MODES",
    "SCENE_OPTIONS",
    "GroundPlane",
    "Pose",
    "PreparedObject",
    "PreparedScene",
    "Scene",
    "SceneCamera",
    "SceneLight",
    "SceneMeta",
    "SceneObject",
    "SceneOptions",
    "SplatSet",
    "is_splat_file",
    "load_scene",
    "prepare_scene",
    "read_splat_ply",
    "write_sample_scene",
    "write_splat_ply",
]
