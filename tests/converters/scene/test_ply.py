from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robokit.converters.scene import SplatSet, is_splat_file, read_splat_ply, write_splat_ply
from robokit.converters.scene.ply import REQUIRED, dropped_notes, read_header
from robokit.errors import SourceError


def _raw_ply(path: Path, columns: dict[str, np.ndarray], fmt: str = "binary_little_endian") -> Path:
    """A PLY with exactly `columns` as float vertex properties."""
    n = len(next(iter(columns.values())))
    head = ["ply", f"format {fmt} 1.0", f"element vertex {n}", *(f"property float {c}" for c in columns),
            "end_header"]
    with path.open("wb") as f:
        f.write(("\n".join(head) + "\n").encode())
        if fmt == "ascii":
            rows = np.column_stack(list(columns.values()))
            f.write("\n".join(" ".join(f"{v:.9g}" for v in r) for r in rows).encode() + b"\n")
        else:
            order = "<" if fmt == "binary_little_endian" else ">"
            table = np.empty(n, dtype=[(c, order + "f4") for c in columns])
            for c, v in columns.items():
                table[c] = v
            f.write(table.tobytes())
    return path


def _graphdeco(n: int, degree: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    cols = {c: rng.normal(size=n) for c in ("x", "y", "z")}
    cols |= {f"f_dc_{i}": rng.normal(size=n) for i in range(3)}
    cols |= {f"f_rest_{i}": rng.normal(size=n) for i in range(3 * ((degree + 1) ** 2 - 1))}
    cols["opacity"] = rng.normal(0, 3, n)
    cols |= {f"scale_{i}": rng.normal(-4, 1, n) for i in range(3)}
    cols |= {f"rot_{i}": rng.normal(size=n) for i in range(4)}
    return {k: v.astype(np.float32) for k, v in cols.items()}


@pytest.mark.parametrize("degree", [0, 1, 3])
def test_values_are_activated_and_sh_reordered(tmp_path: Path, degree: int) -> None:
    cols = _graphdeco(50, degree)
    splats = read_splat_ply(_raw_ply(tmp_path / "s.ply", cols))
    assert len(splats) == 50 and splats.sh_degree == degree
    np.testing.assert_allclose(splats.scales, np.exp(np.stack([cols[f"scale_{i}"] for i in range(3)], 1)), rtol=1e-6)
    np.testing.assert_allclose(splats.opacities, 1 / (1 + np.exp(-cols["opacity"])), rtol=1e-6)
    wxyz = np.stack([cols[f"rot_{i}"] for i in range(4)], 1)
    wxyz /= np.linalg.norm(wxyz, axis=1, keepdims=True)
    np.testing.assert_allclose(splats.orientations, wxyz[:, [1, 2, 3, 0]], atol=1e-6)
    # the reference loop (OpenUSD py3dgsPlyToUsd): channel-major f_rest, coefficient-major output
    rest_per_channel = (degree + 1) ** 2 - 1
    for i in (0, 17, 49):
        for c in range(3):
            assert splats.sh[i, 0, c] == pytest.approx(cols[f"f_dc_{c}"][i])
            for j in range(rest_per_channel):
                assert splats.sh[i, 1 + j, c] == pytest.approx(cols[f"f_rest_{c * rest_per_channel + j}"][i])


@pytest.mark.parametrize("fmt", ["ascii", "binary_big_endian"])
def test_other_encodings_read_the_same(tmp_path: Path, fmt: str) -> None:
    cols = _graphdeco(5, 1)
    a = read_splat_ply(_raw_ply(tmp_path / "a.ply", cols))
    b = read_splat_ply(_raw_ply(tmp_path / "b.ply", cols, fmt))
    np.testing.assert_allclose(a.sh, b.sh, rtol=1e-6)
    np.testing.assert_allclose(a.positions, b.positions, rtol=1e-6)


def test_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    q = rng.normal(size=(20, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    original = SplatSet("s", rng.normal(size=(20, 3)).astype(np.float32), q.astype(np.float32),
                        rng.uniform(0.01, 0.1, (20, 3)).astype(np.float32),
                        rng.uniform(0.1, 0.9, 20).astype(np.float32), rng.normal(size=(20, 9, 3)).astype(np.float32), 2)
    back = read_splat_ply(write_splat_ply(tmp_path / "s.ply", original))
    for field in ("positions", "scales", "opacities", "sh"):
        np.testing.assert_allclose(getattr(back, field), getattr(original, field), rtol=1e-5, atol=1e-6)
    assert np.allclose(np.abs((back.orientations * original.orientations).sum(1)), 1, atol=1e-6)


def test_missing_properties_are_named(tmp_path: Path) -> None:
    cols = _graphdeco(3, 0)
    del cols["opacity"], cols["rot_3"]
    with pytest.raises(SourceError, match=r"missing properties opacity, rot_3"):
        read_splat_ply(_raw_ply(tmp_path / "bad.ply", cols))


def test_wrong_sh_count_and_truncation(tmp_path: Path) -> None:
    cols = _graphdeco(3, 1)
    del cols["f_rest_8"]
    with pytest.raises(SourceError, match="8 f_rest"):
        read_splat_ply(_raw_ply(tmp_path / "sh.ply", cols))
    path = _raw_ply(tmp_path / "cut.ply", _graphdeco(10, 0))
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(SourceError, match="truncated"):
        read_splat_ply(path)


def test_non_finite_and_overflowing_splats_dropped_and_counted(tmp_path: Path) -> None:
    cols = _graphdeco(4, 0)
    cols["x"][2] = np.nan
    cols["scale_1"][0] = 1e38  # exp overflows: never an inf scale
    splats = read_splat_ply(_raw_ply(tmp_path / "nan.ply", cols))
    assert len(splats) == 2 and splats.dropped == 2
    assert np.isfinite(splats.scales).all() and np.isfinite(splats.positions).all()
    assert "dropped 2 of 4 splats" in dropped_notes(splats)[0]
    for key in cols:
        cols[key][:] = np.nan
    with pytest.raises(SourceError, match="all 4 splats"):
        read_splat_ply(_raw_ply(tmp_path / "all.ply", cols))


def test_sniffs_splat_vs_mesh_ply(tmp_path: Path, scene_file: Path) -> None:
    assert is_splat_file(scene_file.parent / "splat.ply")
    assert not is_splat_file(scene_file.parent / "meshes" / "bin.ply")
    header = read_header(scene_file.parent / "splat.ply")
    assert set(REQUIRED) <= {p for p, _ in header.elements[0].properties}
    (tmp_path / "junk.ply").write_text("hello")
    with pytest.raises(SourceError, match="not a PLY"):
        read_header(tmp_path / "junk.ply")
