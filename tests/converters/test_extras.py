"""Extras: source features without a robokit role, carried with their description (converters/extras.py)."""

from __future__ import annotations

import numpy as np

from robokit.converters.extras import build_extras, cast, extra_channels, feature_of, field_names, with_feature
from robokit.timeline import Episode, EpisodeMeta, NumericStream, StreamOrigin


def _stream(name: str, key: str, feature: dict[str, object], values: np.ndarray) -> NumericStream:
    origin = with_feature(StreamOrigin(key, "lerobot/x"), feature)
    return NumericStream(name, np.arange(len(values), dtype=np.int64) * 10**8, values, origin=origin)


def test_feature_rides_on_the_origin_verbatim() -> None:
    feature = {"dtype": "bool", "shape": [1], "names": None, "fps": 30}
    stream = _stream("next/done", "next.done", feature, np.zeros(3))
    assert feature_of(stream) == feature and list(feature_of(stream) or {}) == ["dtype", "shape", "names", "fps"]
    assert feature_of(NumericStream("a", np.arange(2), np.zeros(2))) is None


def test_extras_are_the_described_vectors_without_a_role_and_keep_their_dtype() -> None:
    streams = {
        "joints/position": _stream("joints/position", "observation.state", {"dtype": "float32", "shape": [2]},
                                   np.zeros((4, 2))),
        "next/done": _stream("next/done", "next.done", {"dtype": "bool", "shape": [1]}, np.array([0, 0, 1, 1.0])),
        "phase": _stream("phase", "phase", {"dtype": "int16", "shape": [1]}, np.array([0, 1.0, 2, 3])),
        "grid": _stream("grid", "grid", {"dtype": "float32", "shape": [2, 1]}, np.zeros((4, 2))),
        "plain": NumericStream("plain", np.arange(4), np.zeros(4)),
    }
    episode = Episode(EpisodeMeta(source_uri="x", episode_id="x"), streams=streams)
    channels, notes = extra_channels(episode, ["joints/position"])
    assert channels == ["next/done", "phase"]
    assert len(notes) == 1 and "grid" in notes[0] and "not carried" in notes[0]
    extras = build_extras(episode.streams, channels)
    assert extras["next/done"].column().tolist() == [False, False, True, True]
    assert extras["phase"].dtype == "int16" and extras["phase"].scalar
    assert extras["next/done"].describe()["feature"] == "next.done"


def test_field_names_avoid_reserved_names_and_each_other() -> None:
    streams = {k: _stream(k, key, {"dtype": "float64", "shape": [1]}, np.zeros(2))
               for k, key in (("a", "state"), ("b", "next.reward"), ("c", "next_reward"))}
    extras = build_extras(streams, ["a", "b", "c"])
    assert sorted(field_names(extras, {"state"})) == ["extra_next_reward", "extra_state", "next_reward"]


def test_cast_rounds_integers_and_thresholds_bools() -> None:
    assert cast(np.array([0.4, 1.6]), "int64").tolist() == [0, 2]
    assert cast(np.array([0.0, 1.0]), "bool").tolist() == [False, True]
    assert cast(np.array([0.1]), "float16").dtype == np.float16
