from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import robokit
from robokit.errors import SourceError
from robokit.paths import dataset_files, expand, inside

FIELDS = {"chunk_index": 3, "file_index": 12, "video_key": "observation.images.front"}


def test_documented_fields_expand() -> None:
    assert expand("data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet", FIELDS, "info.json") \
        == "data/chunk-003/file-012.parquet"
    assert expand("videos/{video_key}/{chunk_index}.mp4", FIELDS, "info.json") \
        == "videos/observation.images.front/3.mp4"


@pytest.mark.parametrize("template", [
    "{chunk_index.__class__}", "{chunk_index.__class__.__mro__}", "{video_key[0]}", "{}", "{0}",
    "{chunk_index!r}", "{episode_index}", "{chunk_index:0999999999d}", "{chunk_index:{file_index}}", "{oops", 7,
])
def test_other_placeholders_are_refused(template: object) -> None:
    with pytest.raises(SourceError, match=r"info\.json"):
        expand(template, FIELDS, "info.json")


def test_paths_leaving_the_folder_are_refused(tmp_path: Path) -> None:
    assert inside(tmp_path, "data/x.parquet", "info.json") == tmp_path / "data" / "x.parquet"
    for escape in ("../x.parquet", "data/../../x.parquet", "/etc/passwd"):
        with pytest.raises(SourceError, match="outside the dataset folder"):
            inside(tmp_path, escape, "info.json")


def test_symlinks_to_outside_are_refused_unless_allowed(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "dataset", tmp_path / "elsewhere"
    (root / "data").mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / "secret.parquet").write_text("x")
    (root / "data" / "a.parquet").write_text("a")
    (root / "data" / "linked.parquet").symlink_to(elsewhere / "secret.parquet")
    with pytest.raises(SourceError, match="--allow-outside"):
        dataset_files(root)
    with pytest.raises(SourceError, match="symlink"):
        inside(root, "data/linked.parquet", "info.json")
    assert [p.name for p in dataset_files(root, allow_outside=True)] == ["a.parquet", "linked.parquet"]
    (root / "data" / "linked.parquet").unlink()
    (root / "videos").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(SourceError, match="--allow-outside"):
        dataset_files(root)


def _copy(lerobot_root: Path, tmp_path: Path) -> Path:
    root = tmp_path / "dataset"
    shutil.copytree(lerobot_root, root)
    return root


def _set_info(root: Path, **changes: object) -> None:
    info = json.loads((root / "meta" / "info.json").read_text())
    (root / "meta" / "info.json").write_text(json.dumps({**info, **changes}))


@pytest.mark.parametrize("data_path", ["../../secret/{chunk_index}.parquet", "{chunk_index.__class__}.parquet"])
def test_lerobot_template_escapes_are_refused(lerobot_root: Path, tmp_path: Path, data_path: str) -> None:
    root = _copy(lerobot_root, tmp_path)
    _set_info(root, data_path=data_path)
    (episode, *_) = robokit.open(root)
    with pytest.raises(SourceError, match="data_path"):
        episode.streams  # noqa: B018


def test_lerobot_symlinked_videos_need_allow_outside(lerobot_root: Path, tmp_path: Path) -> None:
    root = _copy(lerobot_root, tmp_path)
    shutil.move(root / "videos", tmp_path / "videos-elsewhere")
    (root / "videos").symlink_to(tmp_path / "videos-elsewhere", target_is_directory=True)
    with pytest.raises(SourceError, match="--allow-outside"):
        robokit.open(root)
    (episode, *_) = robokit.open(root, allow_outside=True)
    assert episode.streams


def test_lerobot_video_change_changes_the_source_version(lerobot_root: Path, tmp_path: Path) -> None:
    root = _copy(lerobot_root, tmp_path)
    before = robokit.open(root)[0].meta.source_version
    video = sorted((root / "videos").rglob("*.mp4"))[0]
    data = bytearray(video.read_bytes())
    data[len(data) // 2] ^= 0xFF
    video.write_bytes(data)
    assert robokit.open(root)[0].meta.source_version != before


def test_lerobot_structural_check_refuses_template_escapes(lerobot_root: Path, tmp_path: Path) -> None:
    from robokit.converters.lerobot.check import _structure

    root = _copy(lerobot_root, tmp_path)
    _set_info(root, video_path="{video_key.__class__.__init__.__globals__}.mp4")
    assert any("video_path" in p and "not allowed" in p for p in _structure(root))
    _set_info(root, video_path=json.loads((lerobot_root / "meta" / "info.json").read_text())["video_path"],
              data_path="../../{chunk_index}.parquet")
    assert any("outside the dataset folder" in p for p in _structure(root))
