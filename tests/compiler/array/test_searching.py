"""argmax, argmin, nonzero and searchsorted (compiler.array.searching) against numpy, on dense and sparse
operands of fill 0, NaN and 2, NaN among the stored entries, all-fill and empty arrays (issue 30)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.errors import ShapeError, UsageError
from array_cases import check
from value_cases import ARRAYS, INF, KINDS, NAN, inputs, operand, same, value


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,a,fill", ARRAYS, ids=[n for n, _, _ in ARRAYS])
def test_argmax_and_argmin_match_numpy(name, a, fill, kind):
    x = operand(a, kind, fill)
    for fn in ("argmax", "argmin"):
        for axis in (None, 0, 1, -1):
            for keepdims in (False, True):
                if a.size == 0 and (axis is None or a.shape[axis] == 0):
                    with pytest.raises(ShapeError, match=f"{fn}: .* is empty"):
                        getattr(xp, fn)(x, axis=axis)
                    continue
                same(getattr(xp, fn)(x, axis=axis, keepdims=keepdims),
                     getattr(np, fn)(a, axis=axis, keepdims=keepdims))


def test_argmax_of_a_csr_whose_fill_beats_every_stored_value_is_its_first_unstored_position():
    a = np.array([[-1.0, 0.0, -3.0], [-2.0, -2.0, 0.0], [0.0, -1.0, -1.0]])
    x = Tensor.from_numpy(a, "csr")
    same(xp.argmax(x, axis=1), [1, 2, 0])
    assert value(xp.argmax(x)).to_numpy()[()] == 1 and value(xp.argmin(x)).to_numpy()[()] == 2
    # (a NaN fill beats everything, for argmin too; a stored NaN before the first unstored position wins)
    n = Tensor.from_numpy(np.array([[1.0, NAN], [NAN, 3.0]]), "coo", fill=NAN)
    same(xp.argmin(n, axis=1), [1, 0])
    s = Tensor.from_coords([[0, 1], [0, 1]], [NAN, 1.0], (2, 2), format="csr", fill=NAN)   # (a NaN stored)
    assert value(xp.argmax(s)).to_numpy()[()] == 0


def test_an_array_operand_is_computed_first_and_the_trace_says_so():
    a = np.array([[0.0, 3.0, 0.0], [4.0, 0.0, 0.0]])
    x = xp.asarray(a, format="csr")
    found = xp.argmax(x * 2 - 1, axis=1)
    notes = [s.note for s in (found + 1).lower().trace.find("materialize")]
    assert len(notes) == 1 and "argmax computed its operand by its own kernel" in notes[0], notes
    check(found + 1, np.argmax(a * 2 - 1, axis=1) + 1)
    stored = [s.note for s in xp.argmax(x, axis=0).lower().trace.find("materialize")]
    assert "argmax read the stored entries of tensor" in stored[0], stored


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,a,fill", ARRAYS, ids=[n for n, _, _ in ARRAYS])
def test_nonzero_matches_numpy(name, a, fill, kind):
    found = xp.nonzero(operand(a, kind, fill))
    want = np.nonzero(a)
    assert len(found) == len(want)
    for f, w in zip(found, want):
        same(f, w)


def test_nonzero_of_a_0d_array_is_refused():
    with pytest.raises(ShapeError, match="nonzero: a 0-d array"):
        xp.nonzero(np.float64(1.0))


SORTED = [np.array([-1.0, 0.0, 0.0, 0.0, 2.0, 2.0, 5.0]), np.array([0.0, 0.0, 1.0, NAN, NAN]),
          np.array([-3.0, -1.0, 2.0, 2.0, 2.0]), np.zeros(0), np.array([2.0, 2.0, 2.0])]


@pytest.mark.parametrize("kind", ["numpy", "csr", "coo"])
@pytest.mark.parametrize("fill", [0.0, 2.0, NAN])
@pytest.mark.parametrize("k", range(len(SORTED)))
def test_searchsorted_matches_numpy(k, fill, kind):
    s = SORTED[k]
    if not np.isnan(fill) and fill not in s and s.size:
        s = np.sort(np.append(s, fill))   # (a sparse vector's fill is a run of its sorted entries)
    elif np.isnan(fill):
        s = np.append(s, [NAN])
    x = operand(s, kind, fill)
    q = np.array([-INF, -1.0, 0.0, 1.0, 2.0, 3.0, 9.0, NAN, INF])
    for side in ("left", "right"):
        same(xp.searchsorted(x, q, side=side), np.searchsorted(s, q, side=side))
    order = np.argsort(s[::-1], stable=True)
    same(xp.searchsorted(operand(s[::-1].copy(), kind, fill), q, sorter=order),
         np.searchsorted(s[::-1], q, sorter=order))



def test_searchsorted_errors_say_what_is_wrong():
    with pytest.raises(UsageError, match="side is 'left' or 'right'"):
        xp.searchsorted(np.arange(3.0), 1.0, side="middle")
    with pytest.raises(ShapeError, match=r"x1 must be 1-D \(sorted\), got shape \(2, 2\)"):
        xp.searchsorted(np.eye(2), 1.0)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=inputs(), data=st.data())
@example(case=(np.full((2, 2), 0.0), Tensor.from_numpy(np.zeros((2, 2)), "csr"), 0.0, "csr"), data=None)
def test_property_argmax_argmin_nonzero_match_numpy(case, data):
    a, x, fill, kind = case
    axis = None if data is None else data.draw(st.sampled_from([None] + list(range(-a.ndim, a.ndim))))
    for fn in ("argmax", "argmin"):
        if (a.size if axis is None else a.shape[axis]) == 0:
            with pytest.raises(ShapeError):
                getattr(xp, fn)(x, axis=axis)
            continue
        same(getattr(xp, fn)(x, axis=axis), getattr(np, fn)(a, axis=axis))
    for f, w in zip(xp.nonzero(x), np.nonzero(a)):
        same(f, w)
    if a.ndim == 1:
        s = np.sort(a)
        q = np.array([fill, 0.0, -1.0, 2.0, NAN, INF])
        same(xp.searchsorted(s, q), np.searchsorted(s, q))
        assert value(xp.searchsorted(s, q, side="right")).dtype == np.int64
