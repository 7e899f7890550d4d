"""cumulative_sum and cumulative_prod (compiler.array.statistics) against numpy's, on dense and sparse operands of fill 0, NaN
and 2, NaN among the stored entries, all-fill and empty arrays, with include_initial and dtypes (issue 30)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import array as xp
from compiler.errors import ShapeError
from value_cases import ARRAYS, KINDS, inputs, operand, same


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,a,fill", ARRAYS, ids=[n for n, _, _ in ARRAYS])
def test_cumulative_sum_matches_numpy(name, a, fill, kind):
    x = operand(a, kind, fill)
    for axis in (0, 1, -1):
        for initial in (False, True):
            same(xp.cumulative_sum(x, axis=axis, include_initial=initial),
                 np.cumulative_sum(a, axis=axis, include_initial=initial))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,a,fill", ARRAYS, ids=[n for n, _, _ in ARRAYS])
def test_cumulative_prod_matches_numpy(name, a, fill, kind):
    # (a fill of 2 doubles along a lane; NaN and zero absorb; include_initial starts at 1)
    x = operand(a, kind, fill)
    with np.errstate(all="ignore"):
        for axis, initial in ((0, True), (-1, False)):
            same(xp.cumulative_prod(x, axis=axis, include_initial=initial),
                 np.cumulative_prod(a, axis=axis, include_initial=initial))


def test_cumulative_prod_dtypes_are_numpys():
    i = np.array([[1, 0, 2], [5, 3, 0]], dtype=np.int32)
    same(xp.cumulative_prod(operand(i, "csr", 0), axis=0), np.cumulative_prod(i, axis=0))   # (int64)
    b = np.array([True, False, True])
    same(xp.cumulative_prod(operand(b, "csr", False), include_initial=True),
         np.cumulative_prod(b, include_initial=True))


def test_cumulative_sum_dtypes_are_numpys():
    i = np.array([[1, 0, 2], [0, 3, 0]], dtype=np.int32)
    x = operand(i, "csr", 0)
    same(xp.cumulative_sum(x, axis=1), np.cumulative_sum(i, axis=1))          # (int64, as a sum of int32)
    same(xp.cumulative_sum(x, axis=0, dtype=np.float32), np.cumulative_sum(i, axis=0, dtype=np.float32))
    b = np.array([True, False, True])
    same(xp.cumulative_sum(operand(b, "csr", False)), np.cumulative_sum(b))
    f = np.array([0.5, 0, 1.5], dtype=np.float32)
    same(xp.cumulative_sum(operand(f, "csr", 0.0), include_initial=True), np.cumulative_sum(f, include_initial=True))


def test_cumulative_sum_of_a_matrix_needs_an_axis():
    with pytest.raises(ShapeError, match=r"axis may be None only for a 1-D array; shape \(2, 2\)"):
        xp.cumulative_sum(np.eye(2))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=inputs(), data=st.data())
def test_property_cumulative_sum_matches_numpy(case, data):
    a, x, fill, kind = case
    axis = data.draw(st.sampled_from(list(range(-a.ndim, a.ndim))))
    initial = data.draw(st.booleans())
    with np.errstate(invalid="ignore"):   # (inf + -inf: numpy's sum warns, ours of a dense operand too)
        want = np.cumulative_sum(a, axis=axis, include_initial=initial)
        got = xp.cumulative_sum(x, axis=axis, include_initial=initial)
    same(got, want)
