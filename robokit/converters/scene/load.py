"""Build a Scene from the command line's scene inputs (description, splat PLYs, meshes) and recordings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from robokit.converters.options import WriterOptions
from robokit.converters.scene.description import read_description
from robokit.converters.scene.meshes import clean_mesh, load_mesh
from robokit.converters.scene.model import Scene, SceneLight, SceneMeta, SceneObject
from robokit.converters.scene.options import SceneOptions
from robokit.converters.scene.ply import dropped_notes, is_splat_header, read_header, read_splat_ply
from robokit.converters.scene.trajectory import episode_cameras
from robokit.errors import RobokitError, SourceError
from robokit.sources.sniff import DESCRIPTION_SUFFIXES
from robokit.timeline import Episode


def is_splat_file(path: Path) -> bool:
    """Whether a PLY holds Gaussian splats (3DGS vertex properties) rather than a mesh."""
    return path.suffix.lower() == ".ply" and is_splat_header(read_header(path))


def load_scene(paths: Sequence[Path], episodes: Sequence[Episode], options: WriterOptions) -> Scene:
    """One scene from `paths` (at most one description, any splat PLYs and meshes) plus camera trajectories.

    The episodes' cameras (those in `options.cameras`, default all) become scene cameras.

    Inputs that cannot be read are left out with the reason in `Scene.skipped`; SourceError when a path
    does not exist or nothing at all could be read.
    """
    opts = SceneOptions.from_writer(options)
    paths = [Path(p) for p in paths]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise SourceError(f"scene input(s) not found: {', '.join(missing)}")
    descriptions = [p for p in paths if p.suffix.lower() in DESCRIPTION_SUFFIXES]
    if len(descriptions) > 1:
        raise SourceError(f"give one scene description, got {len(descriptions)}: {', '.join(map(str, descriptions))}")
    if descriptions:
        scene = read_description(descriptions[0])
    else:
        scene = Scene(SceneMeta(name=paths[0].stem if paths else "scene", convention=opts.scene_frame))
    for path in paths:
        if path not in descriptions:
            _add_file(scene, path)
    scene.meta = SceneMeta(scene.meta.name, tuple(str(p) for p in paths), scene.meta.convention, scene.meta.units)
    if not scene.splats and not scene.objects:
        reasons = "; ".join(reason for _, reason in scene.skipped) or "no splat or mesh given"
        raise SourceError(f"nothing to put in the scene: {reasons}")
    if not scene.lights:
        scene.lights.append(SceneLight(scene.unique_name("sun")))
    for episode in episodes:
        prefix = f"{episode.id}_" if len(episodes) > 1 else ""
        cameras, notes = episode_cameras(episode, scene.meta.convention, prefix, options.cameras)
        for camera in cameras:
            scene.cameras.append(replace(camera, name=scene.unique_name(camera.name)))
        scene.warnings.extend(notes)
        scene.episodes += bool(cameras)
        if not cameras:  # a recording only brings cameras to a scene
            why = "none of its cameras could be placed" if episode.cameras else "it has no camera"
            scene.warnings.append(f"{episode.id}: recording contributed nothing to the scene ({why}; a recording "
                                  "given with a scene adds only its cameras)")
    return scene


def _add_file(scene: Scene, path: Path) -> None:
    """A bare splat PLY or mesh file added at the origin (a static object), or left out with its reason."""
    name = scene.unique_name(path.stem)
    try:
        if is_splat_file(path):
            splats = read_splat_ply(path, name)
            scene.splats.append(splats)
            scene.warnings.extend(dropped_notes(splats))
            return
        mesh, notes = clean_mesh(load_mesh(path, name), name)
    except RobokitError as exc:
        scene.skipped.append((name, str(exc)))
        return
    scene.warnings.extend(notes)
    scene.objects.append(SceneObject(name, mesh, source=str(path)))
