"""Quaternion order conversion and canonical form."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.transform import Rotation

from robokit.errors import FrameError
from robokit.frames import QUAT_ORDERS, canonical, from_order, to_order

quats = arrays(np.float64, (5, 4), elements=st.floats(-1, 1)).filter(
    lambda q: bool((np.linalg.norm(q, axis=1) > 0.1).all())
)


def test_known_orders() -> None:
    q = np.array([0.1, 0.2, 0.3, 0.9])
    np.testing.assert_array_equal(to_order(q, "wxyz"), [0.9, 0.1, 0.2, 0.3])
    np.testing.assert_array_equal(from_order([0.9, 0.1, 0.2, 0.3], "wxyz"), q)
    np.testing.assert_array_equal(to_order(q, "xyzw"), q)
    assert QUAT_ORDERS == ("xyzw", "wxyz")


def test_matches_scipy_scalar_first() -> None:
    r = Rotation.from_euler("xyz", [0.3, -0.2, 1.1])
    np.testing.assert_allclose(to_order(r.as_quat(), "wxyz"), r.as_quat(scalar_first=True))


@settings(max_examples=150, deadline=None)
@given(quats, st.sampled_from(QUAT_ORDERS))
def test_order_round_trip(q: np.ndarray, order: str) -> None:
    np.testing.assert_array_equal(from_order(to_order(q, order), order), q)
    np.testing.assert_array_equal(to_order(from_order(q, order), order), q)


@settings(max_examples=150, deadline=None)
@given(quats)
def test_canonical_is_unit_w_positive_same_rotation(q: np.ndarray) -> None:
    c = canonical(q)
    np.testing.assert_allclose(np.linalg.norm(c, axis=1), 1.0, atol=1e-12)
    assert (c[:, 3] >= 0).all()
    np.testing.assert_allclose(Rotation.from_quat(c).as_matrix(), Rotation.from_quat(q).as_matrix(), atol=1e-12)


def test_canonical_of_zero_or_nan_is_nan() -> None:
    assert np.isnan(canonical(np.array([[0, 0, 0, 0], [np.nan, 0, 0, 1]]))).all()


def test_invalid_order_and_shape() -> None:
    with pytest.raises(FrameError, match=r"'zyxw'.*xyzw, wxyz"):
        to_order([0, 0, 0, 1], "zyxw")
    with pytest.raises(FrameError):
        from_order([0, 0, 0, 1], "WXYZ")
    with pytest.raises(ValueError, match="4 components"):
        to_order([0, 0, 1], "wxyz")
