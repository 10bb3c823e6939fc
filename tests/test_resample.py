"""resample(): the grid, each stream kind, the report and the errors."""

from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from robokit.errors import ChannelError, ResampleError
from robokit.resample import ResampledEpisode, resample
from robokit.timeline import (
    Episode,
    EpisodeMeta,
    EventStream,
    Frame,
    ImageStream,
    NumericStream,
    PoseStream,
    Stream,
)

MS = 1_000_000
S = 1_000_000_000
T0 = 1_700_000_000 * S  # epoch-sized timestamps, to catch float64 precision loss


def episode(*streams: Stream) -> Episode:
    return Episode(EpisodeMeta("mem://test", "ep0"), {s.name: s for s in streams}, warnings=["kept"])


def ramp(name: str, ts_ms: npt.ArrayLike, slope: float = 2.0) -> NumericStream:
    ts = T0 + np.round(np.asarray(ts_ms) * MS).astype(np.int64)
    secs = (ts - T0) / S
    values = np.column_stack([slope * secs + 1.0, -3.0 * secs])
    return NumericStream(name, ts, values, ("a", "b"), "rad")


class CountingSource:
    """Frames that count how often they are decoded."""

    def __init__(self, n: int) -> None:
        self.decoded = 0
        self.n = n

    def iter_frames(self, positions: Sequence[int]) -> Iterator[Frame]:
        for p in positions:
            self.decoded += 1
            yield Frame("raw", pixels=np.full((2, 2), p, dtype=np.uint8))


def test_grid_ticks_are_rounded_multiples_of_the_period() -> None:
    out = resample(episode(ramp("x", [0, 1000])), 3)
    report = out.resample_report
    np.testing.assert_array_equal(out["x"].timestamps - T0, [0, 333_333_333, 666_666_667, S])
    assert (report.fps, report.method, report.count) == (3, "nearest", 4)
    assert (report.start_ns, report.end_ns) == (T0, T0 + S)
    assert isinstance(out, ResampledEpisode) and isinstance(out, Episode)


def test_linear_on_a_ramp_is_exact() -> None:
    src = ramp("x", [0, 7, 19, 20, 33, 58, 71, 100])
    out = resample(episode(src), 50, "linear")["x"]
    assert isinstance(out, NumericStream)
    secs = (out.timestamps - T0) / S
    np.testing.assert_allclose(out.values, np.column_stack([2 * secs + 1, -3 * secs]), rtol=0, atol=1e-12)
    assert (out.names, out.unit) == (("a", "b"), "rad")
    assert resample(episode(src), 50, "linear").resample_report.streams["x"].max_offset_ns == 0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=2, max_size=40, unique=True), st.floats(1, 500))
def test_linear_is_exact_on_affine_data_with_any_timing(ts_ms: list[int], fps: float) -> None:
    ts = sorted(ts_ms)
    assume((ts[-1] - ts[0]) * fps >= 1000)
    out = resample(episode(ramp("x", ts)), fps, "linear")["x"]
    assert isinstance(out, NumericStream)
    secs = (out.timestamps - T0) / S
    np.testing.assert_allclose(out.values[:, 0], 2 * secs + 1, atol=1e-9)


def test_nearest_picks_and_reports_offsets() -> None:
    src = ramp("x", [0, 30, 60, 90, 120, 150, 180, 210])
    out = resample(episode(src), 10)
    stream = out["x"]
    assert isinstance(stream, NumericStream)
    np.testing.assert_array_equal(stream.timestamps - T0, [0, 100 * MS, 200 * MS])
    np.testing.assert_array_equal(stream.values, src.values[[0, 3, 7]])  # 100 ms → 90, 200 ms → 210
    report = out.resample_report.streams["x"]
    assert report.method == "nearest" and report.max_offset_ns == 10 * MS
    assert (report.samples_in, report.samples_out, report.outside) == (8, 3, 1)
    assert report.dropped_end_ns == 10 * MS and report.dropped_start_ns == 0


def test_nearest_tie_takes_the_earlier_sample() -> None:
    out = resample(episode(ramp("x", [0, 50, 150, 200])), 10)["x"]
    assert isinstance(out, NumericStream)
    np.testing.assert_array_equal(out.values[1], ramp("x", [50]).values[0])


def test_slerp_halfway() -> None:
    q = Rotation.from_euler("z", [[0.0], [90.0]], degrees=True).as_quat()
    pose = PoseStream("tf/a", T0 + np.array([0, S]), translation=np.array([[0.0, 0, 0], [2, 4, 6]]), quaternion=q)
    out = resample(episode(pose), 2, "linear")["tf/a"]
    assert isinstance(out, PoseStream)
    np.testing.assert_allclose(out.translation[1], [1, 2, 3])
    np.testing.assert_allclose(Rotation.from_quat(out.quaternion[1]).as_euler("xyz", degrees=True), [0, 0, 45])
    np.testing.assert_allclose(out.quaternion[[0, 2]], q, atol=1e-12)
    nearest = resample(episode(pose), 2)["tf/a"]
    assert isinstance(nearest, PoseStream)
    np.testing.assert_array_equal(nearest.quaternion[1], pose.quaternion[0])


def test_slerp_takes_the_short_way_and_nan_poisons_neighbours() -> None:
    s10, c10 = np.sin(np.radians(10)), np.cos(np.radians(10))
    q = np.array([[0.0, 0, 0, 1], [0, 0, -s10, -c10], [np.nan] * 4])  # 20° about z, given with w < 0
    pose = PoseStream("p", T0 + np.array([0, S, 2 * S]), translation=np.zeros((3, 3)), quaternion=q)
    out = resample(episode(pose), 2, "linear")["p"]
    assert isinstance(out, PoseStream)
    angle = Rotation.from_quat(out.quaternion[1]).magnitude()
    assert angle == pytest.approx(np.radians(10))  # half of the 20° short arc, not of 340°
    assert not np.isnan(out.quaternion[2]).any()  # exact hit on a valid sample
    assert np.isnan(out.quaternion[3:]).all()


def test_linear_nan_gives_nan_but_exact_hits_copy() -> None:
    ts = T0 + np.array([0, S, 2 * S])
    src = NumericStream("x", ts, np.array([0.0, np.nan, 4.0]))
    out = resample(episode(src), 4, "linear")["x"]
    assert isinstance(out, NumericStream)
    np.testing.assert_array_equal(np.isnan(out.values[:, 0]), [False, True, True, True, True, True, True, True, False])
    assert out.values[0, 0] == 0 and out.values[-1, 0] == 4


def test_images_are_reindexed_without_decoding() -> None:
    source = CountingSource(31)
    frame_ts = T0 + np.arange(31) * 33 * MS
    cam = ImageStream("front/rgb", frame_ts, source=source, positions=np.arange(31) + 100)
    out = resample(episode(cam, ramp("x", [0, 1000])), 10, "linear")
    stream = out["front/rgb"]
    assert isinstance(stream, ImageStream)
    assert source.decoded == 0
    gaps = np.abs(frame_ts[:, None] - stream.timestamps[None, :])
    np.testing.assert_array_equal(stream.positions, gaps.argmin(axis=0) + 100)
    np.testing.assert_array_equal(stream.positions[:4], [100, 103, 106, 109])
    report = out.resample_report.streams["front/rgb"]
    assert report.method == "nearest" and report.max_offset_ns == gaps.min(axis=0).max() == 9 * MS
    assert np.asarray(stream.frame(1).array())[0, 0] == 103 and source.decoded == 1


def test_overlap_trimming_and_dropped_time() -> None:
    a = ramp("a", np.arange(0, 2001, 10))
    b = ramp("b", np.arange(500, 3001, 10))
    out = resample(episode(a, b), 20, "linear")
    report = out.resample_report
    assert (report.start_ns - T0, report.end_ns - T0, report.count) == (500 * MS, 2000 * MS, 31)
    ra, rb = report.streams["a"], report.streams["b"]
    assert (ra.dropped_start_ns, ra.dropped_end_ns, ra.outside) == (500 * MS, 0, 50)
    assert (rb.dropped_start_ns, rb.dropped_end_ns, rb.outside) == (0, 1000 * MS, 100)
    assert out.warnings == ["kept"] and out.meta.episode_id == "ep0"


def test_static_poses_are_kept_and_do_not_limit_the_grid() -> None:
    one = np.array([T0 + 100 * S])
    static = PoseStream("tf/base", one, translation=np.ones((1, 3)), quaternion=np.array([[0, 0, 0, 1.0]]), static=True)
    out = resample(episode(static, ramp("x", [0, 1000])), 5)
    assert out["tf/base"] is static
    report = out.resample_report.streams["tf/base"]
    assert report.method == "kept" and report.outside == 0 and out.resample_report.count == 6


def test_events_snap_and_late_ones_are_dropped() -> None:
    ev_ms = [-5000, -10, 140, 260, 1000, 1040, 1200]
    events = EventStream("task", T0 + np.array(ev_ms) * MS, values=("a", "b", "c", "d", "e", "f", "g"))
    out = resample(episode(events, ramp("x", [0, 1050])), 5)
    snapped = out["task"]
    assert isinstance(snapped, EventStream)
    np.testing.assert_array_equal(snapped.timestamps - T0, np.array([0, 0, 200, 200, 1000]) * MS)
    assert snapped.values == ("a", "b", "c", "d", "e")
    report = out.resample_report.streams["task"]
    assert (report.dropped, report.outside, report.max_offset_ns) == (2, 4, 60 * MS)
    assert out.resample_report.end_ns == T0 + S


def test_channels_select_and_define_the_overlap() -> None:
    ep = episode(ramp("a", [0, 1000]), ramp("b", [600, 700]))
    out = resample(ep, 10, channels=["a"])
    assert list(out.streams) == ["a"] and out.resample_report.count == 11
    assert isinstance(out["a_delta"], NumericStream)  # derived channels work after resampling


@pytest.mark.parametrize("fps", [0, -5, float("nan"), float("inf")])
def test_bad_fps(fps: float) -> None:
    with pytest.raises(ResampleError, match="fps must be a positive number"):
        resample(episode(ramp("x", [0, 1000])), fps)


def test_errors() -> None:
    ep = episode(ramp("a", [0, 1000]), ramp("b", [2000, 3000]), ramp("c", [900, 1000]))
    with pytest.raises(ResampleError, match="unknown resampling method 'cubic'"):
        resample(ep, 10, "cubic")  # type: ignore[arg-type]
    with pytest.raises(ResampleError, match="do not overlap"):
        resample(ep, 10)
    with pytest.raises(ResampleError, match="need at least 2"):
        resample(ep, 5, channels=["a", "c"])
    with pytest.raises(ChannelError, match="'nope' not found; available: a, b, c"):
        resample(ep, 10, channels=["a", "nope"])
    with pytest.raises(ResampleError, match="no numeric, pose or image stream"):
        resample(episode(EventStream("task", np.array([T0]), values=("go",))), 10)


def test_point_clouds_take_the_nearest_even_when_linear_is_asked() -> None:
    from robokit.timeline.points import PointStream

    ts = T0 + np.arange(11) * 100 * MS
    lidar = PointStream("lidar/points", ts, counts=np.arange(11), positions=np.arange(11) + 50)
    out = resample(episode(lidar, ramp("x", [0, 1000])), 4, "linear")
    stream = out["lidar/points"]
    assert isinstance(stream, PointStream) and stream.positions.tolist()[:3] == [50, 52, 55]  # 0, 250, 500 ms
    assert out.resample_report.streams["lidar/points"].method == "nearest"
    assert out.resample_report.warnings() == [
        "lidar/points: point clouds are never interpolated; the nearest cloud is used (resample linear was asked)"]
    assert resample(episode(lidar, ramp("x", [0, 1000])), 4).resample_report.warnings() == []
