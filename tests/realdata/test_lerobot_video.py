"""A real LeRobot dataset's AV1 video (g1_inspire_v21, encoded by lerobot) re-exported without re-encoding: every
packet copied as lerobot wrote it, the data rewritten alone."""

from __future__ import annotations

import json
from pathlib import Path

import av
import pyarrow.parquet as pq

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions

G1 = Path(__file__).parent / "lerobot" / "g1_inspire_v21"
KEY = "observation.images.cam_high"


def _packets(path: Path) -> list[bytes]:
    with av.open(str(path)) as container:
        return [bytes(p) for p in container.demux(container.streams.video[0]) if p.size]


def test_real_av1_video_is_copied_on_re_export(tmp_path: Path) -> None:
    episodes = robokit.open(G1)
    result = get_converter("lerobot").write(episodes, tmp_path, WriterOptions(fps=30))
    assert result.episodes == 1 and [e for e, _ in result.skipped] == [episodes[0].id]  # episode 0 has no MP4
    assert not [w for w in result.warnings if "not copied" in w]
    (source,) = (G1 / "videos").rglob("episode_000001.mp4")
    (copied,) = (tmp_path / "lerobot" / "videos").rglob("*.mp4")
    assert _packets(copied) == _packets(source)
    info = json.loads((tmp_path / "lerobot" / "meta" / "info.json").read_text())["features"][KEY]["info"]
    assert (info["video.codec"], info["video.g"], info["video.crf"]) == ("av1", 2, None)
    rows = pq.read_table(next((tmp_path / "lerobot" / "data").rglob("*.parquet")))
    source_rows = pq.read_table(next((G1 / "data").rglob("episode_000001.parquet")))
    assert rows["observation.state"].to_pylist() == source_rows["observation.state"].to_pylist()
