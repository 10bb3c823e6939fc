"""3D Gaussian splat PLY files (the graphdeco layout) read into a SplatSet, and written back.

Layout: one `vertex` element with x y z, f_dc_0..2, f_rest_0..K-1 (channel-major: all of red, then green,
then blue), opacity (a logit), scale_0..2 (log σ) and rot_0..3 (w x y z, not normalised). The reader applies
sigmoid/exp, normalises the quaternions (stored xyzw) and re-orders SH per coefficient.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from robokit.converters.scene.model import Pose, SplatSet
from robokit.errors import SourceError

_TYPES = {"char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1", "short": "i2", "int16": "i2",
          "ushort": "u2", "uint16": "u2", "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4",
          "float": "f4", "float32": "f4", "double": "f8", "float64": "f8"}
_FORMATS = {"binary_little_endian": "<", "binary_big_endian": ">", "ascii": ""}
REQUIRED = ("x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity",
            "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3")
SPLAT_MARKERS = frozenset({"f_dc_0", "opacity", "scale_0", "rot_0"})
SH_C0 = 0.28209479177387814


@dataclass(frozen=True)
class PlyElement:
    """One element of a PLY header: name, count, (property, numpy type) pairs; `lists` names list properties."""

    name: str
    count: int
    properties: tuple[tuple[str, str], ...]
    lists: tuple[str, ...] = ()
    list_bytes: int = 0  # the list properties' length fields: the least bytes they take per row

    @property
    def min_row_bytes(self) -> int:
        """The fewest bytes one row takes in a binary file (list properties may take more)."""
        return sum(np.dtype(t).itemsize for _, t in self.properties if t != "?") + self.list_bytes


@dataclass(frozen=True)
class PlyHeader:
    """A parsed PLY header and where the data starts."""

    format: str
    elements: tuple[PlyElement, ...]
    data_offset: int

    def element(self, name: str) -> PlyElement | None:
        return next((e for e in self.elements if e.name == name), None)


def read_header(path: Path) -> PlyHeader:
    """The header of the PLY at `path`; SourceError when it is not a PLY file."""
    fmt, elements = "", list[PlyElement]()
    try:
        with path.open("rb") as f:
            if f.readline().strip() != b"ply":
                raise SourceError(f"{path}: not a PLY file (no 'ply' magic line)")
            for raw in iter(f.readline, b""):
                words = raw.decode("ascii", "replace").split()
                if not words or words[0] in ("comment", "obj_info"):
                    continue
                if words[0] == "end_header":
                    return _checked(path, PlyHeader(fmt, tuple(elements), f.tell()))
                if words[0] == "format" and len(words) >= 2:
                    fmt = words[1]
                elif words[0] == "element" and len(words) == 3:
                    if not words[2].isdigit():
                        raise SourceError(f"{path}: PLY element {words[1]!r} has count {words[2]!r}")
                    elements.append(PlyElement(words[1], int(words[2]), ()))
                elif words[0] == "property" and elements and len(words) >= 3:
                    e = elements[-1]
                    if words[1] == "list":
                        size = np.dtype(_TYPES.get(words[2], "u1")).itemsize
                        elements[-1] = replace(e, lists=(*e.lists, words[-1]), list_bytes=e.list_bytes + size)
                    else:
                        prop = (words[-1], _TYPES.get(words[1], "?"))
                        elements[-1] = replace(e, properties=(*e.properties, prop))
    except (OSError, ValueError, UnicodeError) as exc:
        raise SourceError(f"{path}: cannot read PLY header: {exc}") from exc
    raise SourceError(f"{path}: PLY header has no end_header line")


def _checked(path: Path, header: PlyHeader) -> PlyHeader:
    """`header`, unless its element counts need more bytes than the file holds (checked before allocating)."""
    binary = header.format != "ascii"  # an ASCII value takes at least a digit and a separator
    need = sum(e.count * (e.min_row_bytes if binary else 2 * (len(e.properties) + len(e.lists)))
               for e in header.elements)
    have = path.stat().st_size - header.data_offset
    if need > have:
        counts = ", ".join(f"{e.count} {e.name}" for e in header.elements)
        raise SourceError(f"{path}: PLY header claims {counts}: at least {need} bytes, but the file holds {have} "
                          "after its header (truncated or damaged)")
    return header


def is_point_cloud(header: PlyHeader) -> bool:
    """Whether a PLY holds only points: vertices, but neither faces nor 3DGS splat properties."""
    face = header.element("face")
    return not is_splat_header(header) and (face is None or face.count == 0)


def is_splat_header(header: PlyHeader) -> bool:
    """Whether a PLY header looks like Gaussian splats (any 3DGS-only vertex property) rather than a mesh."""
    vertex = header.element("vertex")
    return vertex is not None and bool(SPLAT_MARKERS & {p for p, _ in vertex.properties})


def _sh_degree(path: Path, names: list[str]) -> int:
    """The SH degree implied by the f_rest_* properties; SourceError when they are not 0, 9, 24 or 45."""
    rest = sorted((n for n in names if n.startswith("f_rest_")), key=lambda n: int(n[7:]) if n[7:].isdigit() else -1)
    if rest != [f"f_rest_{i}" for i in range(len(rest))]:
        raise SourceError(f"{path}: f_rest_* properties are not numbered 0..{len(rest) - 1}: {', '.join(rest)}")
    per_channel = len(rest) // 3
    degree = round(float(np.sqrt(per_channel + 1))) - 1
    if len(rest) % 3 or (degree + 1) ** 2 - 1 != per_channel or degree > 3:
        raise SourceError(f"{path}: {len(rest)} f_rest_* properties; expected 0, 9, 24 or 45 (SH degree 0-3)")
    return degree


def _vertex_table(path: Path, header: PlyHeader) -> np.ndarray:
    """The vertex element as a structured array (binary read in one go, ASCII parsed by numpy)."""
    vertex = header.element("vertex")
    assert vertex is not None
    if header.format not in _FORMATS:
        raise SourceError(f"{path}: unknown PLY format {header.format!r}; expected {', '.join(_FORMATS)}")
    if vertex.lists or header.elements[0].name != "vertex":
        raise SourceError(f"{path}: splat PLY must start with a vertex element without list properties")
    bad = [p for p, t in vertex.properties if t == "?"]
    if bad:
        raise SourceError(f"{path}: unknown PLY property type for {', '.join(bad)}")
    order = _FORMATS[header.format]
    dtype = np.dtype([(p, order + t if order else t) for p, t in vertex.properties])
    try:
        if order:
            data = np.fromfile(path, dtype=dtype, count=vertex.count, offset=header.data_offset)
        else:
            with path.open("rb") as f:
                f.seek(header.data_offset)
                rows = np.loadtxt(f, dtype=np.float64, max_rows=vertex.count, ndmin=2)
            data = np.rec.fromarrays(rows.T, dtype=dtype) if len(rows) else np.zeros(0, dtype)
    except (OSError, ValueError) as exc:
        raise SourceError(f"{path}: cannot read {vertex.count} splats: {exc}") from exc
    if len(data) != vertex.count:
        raise SourceError(f"{path}: header says {vertex.count} splats, file holds {len(data)} (truncated?)")
    return data


def read_splat_ply(path: Path, name: str | None = None, pose: Pose | None = None) -> SplatSet:
    """A graphdeco 3DGS PLY as activated splats; SourceError naming the missing or malformed properties."""
    header = read_header(path)
    vertex = header.element("vertex")
    if vertex is None:
        raise SourceError(f"{path}: PLY has no vertex element")
    names = [p for p, _ in vertex.properties]
    missing = [p for p in REQUIRED if p not in names]
    if missing:
        raise SourceError(f"{path}: not a 3DGS splat PLY: missing propert{'y' if len(missing) == 1 else 'ies'} "
                          f"{', '.join(missing)} (has {', '.join(names)})")
    degree = _sh_degree(path, names)
    data = _vertex_table(path, header)

    def cols(*keys: str) -> npt.NDArray[np.float64]:
        return np.stack([data[k].astype(np.float64) for k in keys], axis=1) if keys else np.zeros((len(data), 0))

    positions = cols("x", "y", "z")
    log_scales = cols("scale_0", "scale_1", "scale_2")
    logits = data["opacity"].astype(np.float64)
    wxyz = cols("rot_0", "rot_1", "rot_2", "rot_3")
    n_rest = (degree + 1) ** 2 - 1
    rest = cols(*(f"f_rest_{i}" for i in range(3 * n_rest))).reshape(len(data), 3, n_rest).transpose(0, 2, 1)
    sh = np.concatenate([cols("f_dc_0", "f_dc_1", "f_dc_2")[:, None, :], rest], axis=1)
    norms = np.linalg.norm(wxyz, axis=1, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        scales = np.exp(log_scales)
        opacities = 1.0 / (1.0 + np.exp(-logits))
    values = np.hstack([positions, scales, logits[:, None], wxyz, sh.reshape(len(data), -1)])
    keep = (np.abs(values) <= np.finfo(np.float32).max).all(axis=1) & (norms[:, 0] > 0)  # NaN compares False
    if not keep.any():
        raise SourceError(f"{path}: all {len(data)} splats have non-finite or overflowing values or a zero rotation")
    xyzw = np.roll(wxyz / np.where(norms > 0, norms, 1.0), -1, axis=1)
    return SplatSet(
        name=name or path.stem,
        positions=positions[keep].astype(np.float32),
        orientations=xyzw[keep].astype(np.float32),
        scales=scales[keep].astype(np.float32),
        opacities=opacities[keep].astype(np.float32),
        sh=sh[keep].astype(np.float32),
        sh_degree=degree,
        pose=pose or Pose(),
        source=str(path),
        dropped=int((~keep).sum()),
    )


def dropped_notes(splats: SplatSet) -> list[str]:
    """The warning for splats left out of `splats` because a value was NaN, infinite or overflowed float32."""
    if not splats.dropped:
        return []
    return [f"{splats.name}: dropped {splats.dropped} of {len(splats) + splats.dropped} splats with non-finite "
            "or overflowing values (e.g. NaN, or exp of a huge log-scale) or a zero rotation"]


def write_splat_ply(path: Path, splats: SplatSet) -> Path:
    """`splats` as a binary graphdeco PLY (the inverse of read_splat_ply), for samples and tests."""
    n, k = len(splats), (splats.sh_degree + 1) ** 2
    opacity = np.clip(splats.opacities.astype(np.float64), 1e-6, 1 - 1e-6)
    rest = splats.sh[:, 1:, :].transpose(0, 2, 1).reshape(n, 3 * (k - 1))
    columns = {
        **{c: splats.positions[:, i] for i, c in enumerate("xyz")},
        **{c: np.zeros(n) for c in ("nx", "ny", "nz")},
        **{f"f_dc_{i}": splats.sh[:, 0, i] for i in range(3)},
        **{f"f_rest_{i}": rest[:, i] for i in range(3 * (k - 1))},
        "opacity": np.log(opacity / (1 - opacity)),
        **{f"scale_{i}": np.log(splats.scales[:, i]) for i in range(3)},
        **{f"rot_{i}": np.roll(splats.orientations, 1, axis=1)[:, i] for i in range(4)},
    }
    table = np.empty(n, dtype=[(c, "<f4") for c in columns])
    for c, v in columns.items():
        table[c] = v
    head = ["ply", "format binary_little_endian 1.0", f"element vertex {n}",
            *(f"property float {c}" for c in columns), "end_header"]
    with path.open("wb") as f:
        f.write(("\n".join(head) + "\n").encode("ascii"))
        f.write(table.tobytes())
    return path
