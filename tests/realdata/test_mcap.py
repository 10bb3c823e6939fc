"""Real MCAP files written by rosbag2's MCAP plugin (tests/realdata/mcap/SOURCES.md), read as plain MCAP.

Every channel the file's own Statistics count is either read into a stream or listed as skipped, with the
same number of messages: nothing of a foreign file disappears without a word.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcap.reader import make_reader

import robokit
from robokit.cli import main

FILES = sorted((Path(__file__).parent / "mcap").glob("*.mcap"))


def _statistics(path: Path) -> dict[str, int]:
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        counts: dict[str, int] = {}
        for cid, n in summary.statistics.channel_message_counts.items():
            topic = summary.channels[cid].topic
            counts[topic] = counts.get(topic, 0) + n
        for channel in summary.channels.values():  # channels that never carried a message count 0
            counts.setdefault(channel.topic, 0)
        return counts


def test_four_files_are_kept() -> None:
    assert len(FILES) == 4


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_channel_is_read_or_listed_with_its_count(path: Path) -> None:
    (episode,) = robokit.open(path)
    info = episode.info()
    seen: dict[str, int] = {}
    for row in info.streams:
        seen[row.topic] = max(seen.get(row.topic, 0), row.count)
    for skipped in info.skipped:
        seen[skipped.topic] = seen.get(skipped.topic, 0) + skipped.count
    assert seen == _statistics(path)
    assert episode.complete, episode.losses


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_info_json_lists_them(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(path), "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    listed = {r["topic"] for r in record["streams"]} | {s["topic"] for s in record["skipped"]}
    assert listed == set(_statistics(path))
