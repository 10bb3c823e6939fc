from __future__ import annotations

import numpy as np
import pytest

from robokit.errors import ChannelError
from robokit.timeline import (
    ArrayFrameSource,
    CameraInfo,
    Episode,
    EpisodeMeta,
    EventStream,
    ImageStream,
    NumericStream,
    PoseStream,
)
from robokit.timeline.streams import ints, sort_timestamps


def test_sort_timestamps_drops_duplicates_keeping_first() -> None:
    ts, keep, dropped = sort_timestamps(np.array([30, 10, 20, 10, 40]))
    assert ts.tolist() == [10, 20, 30, 40]
    assert keep.tolist() == [1, 2, 0, 4]
    assert dropped == 1


def test_numeric_shape_checked_and_names_defaulted() -> None:
    s = NumericStream("a/b", np.array([1, 2]), values=np.array([1.0, 2.0]))
    assert s.values.shape == (2, 1) and s.names == ("0",)
    with pytest.raises(ValueError, match="rows"):
        NumericStream("a/b", np.array([1, 2, 3]), values=np.zeros((2, 1)))


def test_long_streams_hold_their_arrays_in_mapped_files() -> None:
    """A long episode's arrays (and what resampling takes from them) are mapped, values unchanged; short ones are
    not, so small episodes pay no file per stream."""
    from robokit import heap

    n = heap.MAP_ABOVE // 8 + 1
    values = np.random.default_rng(0).normal(size=(n, 3))
    long = NumericStream("joints/position", np.arange(n) * 10_000_000, values)
    assert heap.is_mapped(long.timestamps) and heap.is_mapped(long.values)
    np.testing.assert_array_equal(long.values, values)
    taken = long.take(np.arange(n)[::-1])
    assert heap.is_mapped(taken.values) and taken.values[0].tolist() == values[-1].tolist()
    pose = PoseStream("tf/x", long.timestamps, translation=values, quaternion=np.tile([0, 0, 0, 1.0], (n, 1)))
    assert heap.is_mapped(pose.translation) and heap.is_mapped(pose.quaternion)
    short = NumericStream("a/b", np.array([1, 2]), values=np.array([1.0, 2.0]))
    assert not heap.is_mapped(short.values) and not heap.is_mapped(short.timestamps)


def test_pose_quaternions_normalised_and_take() -> None:
    p = PoseStream("tf/x", np.array([0, 1]), translation=np.zeros((2, 3)),
                   quaternion=np.array([[0, 0, 0, 2.0], [0, 0, 3.0, 0]]))
    assert np.allclose(np.linalg.norm(p.quaternion, axis=1), 1)
    q = p.take(np.array([1, 1, 0]), np.array([5, 6, 7]))
    assert q.timestamps.tolist() == [5, 6, 7] and np.allclose(q.quaternion[0], [0, 0, 1, 0])
    assert p.matrices().shape == (2, 4, 4)


def test_image_stream_lazy_take_and_resize() -> None:
    frames = [np.full((4, 6, 3), i, dtype=np.uint8) for i in range(3)]
    cam = CameraInfo(6, 4, np.array([[6.0, 0, 3], [0, 6, 2], [0, 0, 1]]))
    s = ImageStream("c/rgb", np.array([0, 10, 20]), source=ArrayFrameSource(frames), width=6, height=4,
                    camera=cam)
    t = s.take(np.array([2, 0]))
    assert [f.array()[0, 0, 0] for f in t.frames()] == [2, 0]
    r = s.resized(3, 2)
    assert r.frame(1).array().shape == (2, 3, 3)
    assert r.camera is not None and r.camera.k[0, 0] == 3.0 and r.camera.k[1, 2] == 1.0


def test_camera_from_its_field_of_view() -> None:
    info = CameraInfo.from_fov(640, 480, 90.0, frame_id="front")
    np.testing.assert_allclose(info.k, [[240, 0, 319.5], [0, 240, 239.5], [0, 0, 1]])
    assert (info.width, info.height, info.frame_id, len(info.distortion)) == (640, 480, "front", 0)


def test_episode_lookup_errors_name_the_alternatives() -> None:
    ep = Episode(EpisodeMeta("x", "e"), {"task": EventStream("task", np.array([5]), values=("pick",))})
    assert ep.tasks == ("pick",)
    with pytest.raises(ChannelError, match="available: task"):
        ep["joints/position"]


def test_episode_loader_runs_once() -> None:
    calls = []

    def load():  # type: ignore[no-untyped-def]
        calls.append(1)
        return {"a/b": NumericStream("a/b", np.array([1, 3]), values=np.ones(2))}, [], ["w"]

    ep = Episode(EpisodeMeta("x", "e"), loader=load)
    assert "not loaded" in repr(ep)
    assert ep.duration_s == 2e-9 and ep.warnings == ["w"] and len(calls) == 1
    info = ep.info()
    assert info.streams[0].count == 2 and info.to_dict()["streams"][0]["channel"] == "a/b"


def test_sorted_timestamps_are_kept_as_they_are_not_aliased() -> None:
    from robokit.timeline.streams import order_samples

    ts = np.array([1, 5, 9], dtype=np.int64)
    out, keep, dropped, moved = order_samples(ts)
    assert out.tolist() == [1, 5, 9] and keep.tolist() == [0, 1, 2] and (dropped, moved) == (0, 0)
    assert out is not ts


def test_order_samples_keeps_same_time_other_content_in_recorded_order() -> None:
    from robokit.timeline.streams import order_samples

    contents = ["a", "b", "a", "c", "d"]
    asked: list[int] = []

    def content(i: int) -> str:
        asked.append(i)
        return contents[i]

    ts, keep, dropped, moved = order_samples(np.array([10, 10, 10, 5, 11]), content)
    assert keep.tolist() == [3, 0, 1, 4] and dropped == 1 and moved == 2  # the second "a" at 10 is a repeat
    assert ts.tolist() == [5, 10, 11, 12]  # "b" moved 1 ns after "a", "d" (at 11) 1 ns after "b"
    assert sorted(set(asked)) == [0, 1, 2]  # content asked only where timestamps repeat


def test_ints_boxes_every_value_in_order_a_block_at_a_time() -> None:
    values = np.arange(-5, 10_003, dtype=np.int64) * (1 << 40)
    out = list(ints(values, block=4096))
    assert out == values.tolist() and all(type(v) is int for v in out)
    assert list(ints(np.array([], dtype=np.int64))) == []
