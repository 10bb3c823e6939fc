"""Meshes read through trimesh (OBJ, STL, PLY, GLB/GLTF) and cleaned: finite, no degenerate or repeated faces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import trimesh

from robokit.converters.scene.ply import is_point_cloud, read_header
from robokit.errors import SourceError, reading
from robokit.sources.sniff import MESH_SUFFIXES


def load_mesh(path: Path, name: str) -> trimesh.Trimesh:
    """The mesh at `path` (a multi-part scene is merged with its transforms); SourceError naming `name`."""
    if path.suffix.lower() not in MESH_SUFFIXES:
        raise SourceError(f"object {name!r}: {path}: not a mesh file; expected {', '.join(MESH_SUFFIXES)}")
    if not path.is_file():
        raise SourceError(f"object {name!r}: mesh file {path} does not exist")
    if path.suffix.lower() == ".ply":
        header = read_header(path)  # sizes checked against the file before trimesh allocates
        vertex = header.element("vertex")
        if is_point_cloud(header):
            raise SourceError(f"object {name!r}: {path} is a point cloud ({vertex.count if vertex else 0} points, "
                              "no faces): robokit needs a triangle mesh, or Gaussian splat properties for a splat")
    try:
        mesh = trimesh.load_mesh(path, process=False)
    except Exception as exc:  # trimesh raises many kinds; the message is what the user needs
        raise SourceError(f"object {name!r}: cannot load mesh {path}: {type(exc).__name__}: {exc}") from exc
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise SourceError(f"object {name!r}: {path} holds no triangles")
    return mesh


def clean_mesh(mesh: trimesh.Trimesh, name: str) -> tuple[trimesh.Trimesh, list[str]]:
    """A copy without non-finite vertices, degenerate or repeated faces, with consistent winding; plus notes."""
    with reading(f"object {name!r}: mesh"):  # trimesh's own errors on a damaged mesh (bad face indices)
        return _clean(mesh, name)


def _clean(mesh: trimesh.Trimesh, name: str) -> tuple[trimesh.Trimesh, list[str]]:
    out = mesh.copy()
    notes: list[str] = []
    finite: npt.NDArray[np.bool_] = np.asarray(np.isfinite(out.vertices).all(axis=1))
    if not finite.all():
        out.update_faces(finite[out.faces].all(axis=1))
        out.remove_unreferenced_vertices()
        notes.append(f"{name}: dropped faces on {int((~finite).sum())} non-finite vertices")
    out.merge_vertices()
    before = len(out.faces)
    out.update_faces(out.nondegenerate_faces())
    out.update_faces(out.unique_faces())
    if len(out.faces) < before:
        notes.append(f"{name}: removed {before - len(out.faces)} degenerate or repeated faces")
    out.remove_unreferenced_vertices()
    if len(out.faces) == 0:
        raise SourceError(f"object {name!r}: mesh has no usable triangles (all degenerate or non-finite)")
    trimesh.repair.fix_winding(out)
    if out.is_watertight:
        trimesh.repair.fix_inversion(out)
    return out, notes
