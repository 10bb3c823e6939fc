"""The reader's collector: what it reports of a recording's topics."""

from __future__ import annotations

from robokit.ros.collect import grouped_notes


def test_a_note_many_topics_share_word_for_word_is_one_line() -> None:
    """A RealSense bag logs its 60 option topics at 1 ns: one line, not 60; notes with other words stay apart."""
    topics = [f"/device_0/option/{i}/value" for i in range(6)]
    note = "log timestamps near zero (simulation time or an unset clock, last at 0.000 s); kept as recorded"
    warnings = ["first", *(f"{t}: {note}" for t in topics), f"{topics[0]}: {note}", "/cam: a note", "/img: x: y"]
    assert grouped_notes(warnings) == [
        "first", f"6 topics (/device_0/option/0/value, /device_0/option/1/value, /device_0/option/2/value and 3 more): "
        f"{note}", "/cam: a note", "/img: x: y"]
    assert grouped_notes(warnings[:5]) == warnings[:5]  # four topics: as they were
