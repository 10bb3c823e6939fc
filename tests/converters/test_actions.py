"""Every dataset writer records what its action is: the exported channel, its source, absolute or delta, unit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcap.reader import make_reader

from robokit.converters import get_converter
from robokit.converters.actions import ActionMeaning, meaning_of_channel
from robokit.converters.options import WriterOptions
from robokit.sim.meaning import read_meaning
from tests.converters.conftest import MakeEpisode

DELTA = ActionMeaning("joints/position_delta", "joints/position", "delta", "", "joints/position")


@pytest.mark.parametrize(("channel", "kind", "source"), [
    ("joint_commands/position", "absolute", "joint_commands/position"),
    ("joints/position_delta", "delta", "joints/position"),
    ("joints/position_velocity", "velocity", "joints/position"),
    ("action", "absolute", "action"),
])
def test_meaning_from_the_channel_name(channel: str, kind: str, source: str) -> None:
    meaning = meaning_of_channel(channel, "rad", "joints/position")
    assert (meaning.kind, meaning.source) == (kind, source)
    assert ActionMeaning.from_dict(json.loads(json.dumps(meaning.to_dict()))) == meaning
    assert "target = joints/position + action" in DELTA.description


@pytest.mark.parametrize(("fmt", "layout"), [("lerobot", ""), ("rlds", ""), ("webdataset", "step"),
                                             ("webdataset", "episode")])
def test_datasets_store_the_meaning(make_episode: MakeEpisode, tmp_path: Path, fmt: str, layout: str) -> None:
    extra = {"wds_samples": layout} if fmt == "webdataset" else {}
    get_converter(fmt).write([make_episode("e0")], tmp_path, WriterOptions(cameras=(), action="joints/position_delta",
                                                                 extra=extra))
    assert read_meaning(tmp_path / fmt) == DELTA


def test_lerobot_keeps_it_in_the_action_feature(make_episode: MakeEpisode, tmp_path: Path) -> None:
    get_converter("lerobot").write([make_episode("e0")], tmp_path,
                                   WriterOptions(cameras=(), action="joints/position_delta"))
    action = json.loads((tmp_path / "lerobot" / "meta" / "info.json").read_text())["features"]["action"]
    assert action["info"]["kind"] == "delta" and action["info"]["source"] == "joints/position"
    assert action["names"] == ["a", "b"]


def test_mcap_keeps_it_in_the_episode_record(make_episode: MakeEpisode, tmp_path: Path) -> None:
    get_converter("mcap").write([make_episode("e0")], tmp_path, WriterOptions(action="joints/position_delta"))
    (path,) = sorted((tmp_path / "mcap").glob("*.mcap"))
    with path.open("rb") as f:
        record = next(m.metadata for m in make_reader(f).iter_metadata() if m.name == "robokit.episode")
    meaning = ActionMeaning.from_dict(json.loads(record["action"]))
    assert meaning is not None and (meaning.kind, meaning.source) == ("delta", "joints/position")


def test_no_action_no_meaning(make_episode: MakeEpisode, tmp_path: Path) -> None:
    get_converter("lerobot").write([make_episode("e0")], tmp_path, WriterOptions(cameras=()))
    assert read_meaning(tmp_path / "lerobot") is None
    assert read_meaning(tmp_path / "nothing") is None
