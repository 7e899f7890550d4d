"""take and repeat by an array of counts (compiler.array.indexing) against numpy, on dense and sparse
operands of fill 0, NaN and 2: a sparse operand stays sparse in its format (a CSR's rows taken are a
CSR), its stored entries moved, nothing of its whole size built (issue 30)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.errors import DTypeError, ShapeError
from array_cases import check
from value_cases import ARRAYS, KINDS, inputs, operand, same, value

PICKS = [np.array([2, 0, -1, 2]), np.array([1]), np.array([], dtype=np.int64), np.array([[0, 1], [1, 0]])]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,a,fill", ARRAYS, ids=[n for n, _, _ in ARRAYS])
def test_take_matches_numpy(name, a, fill, kind):
    x = operand(a, kind, fill)
    for axis in (0, 1, None):
        n = a.size if axis is None else a.shape[axis]
        for pick in PICKS:
            if n < 3 and pick.size and pick.max() >= n:
                with pytest.raises(IndexError, match="out of bounds"):
                    xp.take(x, pick, axis=axis)
                continue
            same(xp.take(x, pick, axis=axis), np.take(a, pick, axis=axis))


def test_a_csr_s_rows_taken_stay_csr():
    a = np.array([[0, 1.0, 0], [2.0, 0, 3.0], [0, 0, 0]])
    t = value(xp.take(Tensor.from_numpy(a, "csr"), np.array([1, 1, 0]), axis=0))
    assert t.format.shorthand == "csr" and t.nnz == 5
    np.testing.assert_array_equal(t.to_numpy(), a[[1, 1, 0]])
    # (then computed with what follows, the trace naming where)
    rows = xp.take(Tensor.from_numpy(a, "csr"), np.array([2, 0]), axis=0) * 2
    check(rows, a[[2, 0]] * 2)
    assert "take read the stored entries" in rows.lower().trace.find("materialize")[0].note
    # (a CSR's rows and a CSC's columns are copied stretch by stretch, as scipy's A[rows]; index dtype kept)
    import scipy.sparse as sp
    s = sp.random_array((40, 30), density=0.2, format="csr", random_state=2)
    picks = np.array([39, 0, 5, 5, -1, 17])
    got = value(xp.take(s, picks, axis=0))
    assert got.format.shorthand == "csr" and got.levels[1].idx.dtype == s.indices.dtype
    np.testing.assert_array_equal(got.to_numpy(), s[picks].toarray())
    cols = value(xp.take(Tensor.from_scipy(s.tocsc()), picks % 30, axis=1))
    assert cols.format.shorthand == "csc"
    np.testing.assert_array_equal(cols.to_numpy(), s.toarray()[:, picks % 30])


def test_take_errors_say_what_is_wrong():
    with pytest.raises(IndexError, match="take: index 5 is out of bounds for axis 0 with extent 3"):
        xp.take(np.arange(3.0), np.array([5]), axis=0)
    with pytest.raises(DTypeError, match="take: indices must be integers, not float64"):
        xp.take(np.arange(3.0), np.array([1.0]))
    with pytest.raises(ShapeError, match="take: a 0-d array has no axis"):
        xp.take(np.float64(1.0), np.array([0]), axis=0)


@pytest.mark.parametrize("kind", KINDS)
def test_repeat_by_an_array_of_counts_matches_numpy_and_says_it_materialized(kind):
    a = np.array([[0, 1.0, 0, 2.0], [3.0, 0, 0, 0], [0, 0, 4.0, 0]])
    x = xp.asarray(operand(a, kind, 0.0))
    for axis, counts in ((0, np.array([2, 0, 1])), (1, np.array([1, 3, 0, 2])), (None, np.array([2]))):
        out = xp.repeat(x, counts, axis=axis)
        same(out, np.repeat(a, counts, axis=axis))
    notes = [s.note for s in (xp.repeat(x, np.array([2, 0, 1]), axis=0) + 1).lower().trace.find("materialize")]
    assert len(notes) == 1 and "repeat by an array of counts" in notes[0]
    with pytest.raises(ShapeError, match="repeat: 2 counts for axis 0 of extent 3"):
        xp.repeat(x, np.array([1, 2]), axis=0)
    with pytest.raises(ShapeError, match="repeat: a count is negative"):
        xp.repeat(x, np.array([1, -1, 0]), axis=0)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=inputs(), data=st.data())
def test_property_take_and_repeat_by_counts_match_numpy(case, data):
    a, x, fill, kind = case
    axis = data.draw(st.sampled_from([None] + list(range(-a.ndim, a.ndim))))
    n = a.size if axis is None else a.shape[axis]
    if n:
        pick = np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=5)), dtype=np.int64)
        same(xp.take(x, pick, axis=axis), np.take(a, pick, axis=axis))
    counts = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int64)
    same(xp.repeat(xp.asarray(x), counts, axis=axis), np.repeat(a, counts, axis=axis))


def test_compute_of_a_result_computed_already_is_that_tensor_converted_only_to_another_format():
    # (take's and sort's results are Tensors already: compute() ran a copy kernel over them)
    a = np.array([[0, 1.0, 0], [2.0, 0, np.nan], [0, -np.inf, 0]])
    for x, expected in ((xp.take(Tensor.from_numpy(a, "csr"), np.array([2, 0, -1]), axis=0), a[[2, 0, -1]]),
                        (xp.sort(Tensor.from_numpy(a, "coo", fill=np.nan), axis=1), np.sort(a, axis=1)),
                        (xp.argsort(a, axis=0), np.argsort(a, axis=0, stable=True))):
        stored = value(x)
        assert x.compute() is stored and x.compute(stored.format.shorthand) is stored
        assert x.compute(stored.format) is stored
        np.testing.assert_array_equal(x.compute().to_numpy(), expected)
    csc = xp.take(Tensor.from_numpy(a, "csr"), np.array([1, 1]), axis=0).compute("csc")
    assert csc.format.shorthand == "csc"
    np.testing.assert_array_equal(csc.to_numpy(), a[[1, 1]])
    dense = xp.sort(Tensor.from_numpy(a, "coo", fill=np.nan), axis=1).compute("dense")
    assert dense.format.is_dense and np.isnan(dense.fill)
    np.testing.assert_array_equal(dense.to_numpy(), np.sort(a, axis=1))


def along(a: np.ndarray, axis, seed=0) -> np.ndarray:
    """Positions to take along ``axis`` of ``a`` (negative ones too), of ``a``'s rank: 3 per lane."""
    axis = None if axis is None else axis % a.ndim
    n = a.size if axis is None else a.shape[axis]
    shape = (3 if n else 0,) if axis is None else a.shape[:axis] + (3 if n else 0,) + a.shape[axis + 1:]
    return np.random.default_rng(seed).integers(-n, max(n, 1), shape) if n else np.zeros(shape, np.int64)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,a,fill", ARRAYS, ids=[n for n, _, _ in ARRAYS])
def test_take_along_axis_matches_numpy(name, a, fill, kind):
    x = operand(a, kind, fill)
    for axis in (0, 1, -1, None):
        pick = along(a, axis)
        same(xp.take_along_axis(x, pick, axis=axis), np.take_along_axis(a, pick, axis))
    # (the indices broadcast against the array on the other axes: one row of positions for every row)
    if a.shape[1]:
        same(xp.take_along_axis(x, np.array([[-1, 0]]), axis=1), np.take_along_axis(a, np.array([[-1, 0]]), 1))


def test_take_along_axis_of_a_sparse_array_stores_only_what_it_takes_of_its_entries():
    a = np.array([[0, 1.5, 0, np.inf], [np.nan, 0, 0, 0]])
    t = value(xp.take_along_axis(Tensor.from_numpy(a, "csr"), np.array([[3, 3, 0], [0, 2, -4]]), axis=1))
    assert t.format.shorthand == "csr" and t.nnz == 4 and t.fill == 0
    np.testing.assert_array_equal(t.to_numpy(), [[np.inf, np.inf, 0], [np.nan, 0, np.nan]])
    v = value(xp.take_along_axis(Tensor.from_numpy(a[0], "coo", fill=np.inf), np.array([1, -1, 2])))
    assert v.nnz == 2 and np.isinf(v.fill)   # (the 1.5 and the 0 stored; the inf is the fill)
    np.testing.assert_array_equal(v.to_numpy(), [1.5, np.inf, 0])


def test_take_along_axis_errors_say_what_is_wrong():
    a = np.arange(6.0).reshape(2, 3)
    with pytest.raises(ShapeError, match=r"indices of shape \(3,\) for an array of shape \(2, 3\): they need as many"):
        xp.take_along_axis(a, np.array([0, 1, 2]), axis=1)
    with pytest.raises(ShapeError, match=r"do not broadcast against the array's shape \(2, 3\) on the axes other"):
        xp.take_along_axis(a, np.zeros((3, 1), np.int64), axis=1)
    with pytest.raises(IndexError, match="take_along_axis: index 3 is out of bounds for axis 1 with extent 3"):
        xp.take_along_axis(Tensor.from_numpy(a, "csr"), np.array([[3], [0]]), axis=1)
    with pytest.raises(DTypeError, match="indices must be integers"):
        xp.take_along_axis(a, np.array([[0.0], [1.0]]), axis=1)
    with pytest.raises(ShapeError, match="with axis=None the indices are 1-D"):
        xp.take_along_axis(a, np.zeros((1, 1), np.int64), axis=None)
    with pytest.raises(ShapeError, match="a 0-d array has no axis"):
        xp.take_along_axis(np.float64(1.0), np.array(0), axis=0)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=inputs(), data=st.data())
def test_property_take_along_axis_matches_numpy(case, data):
    a, x, fill, kind = case
    axis = data.draw(st.sampled_from([None] + list(range(-a.ndim, a.ndim))))
    pick = along(a, axis, data.draw(st.integers(0, 9)))
    if axis is not None and data.draw(st.booleans()):
        # (an extent-1 axis of the indices broadcasts against the array's)
        pick = pick[tuple(slice(0, 1) if d != axis % a.ndim else slice(None) for d in range(a.ndim))]
    same(xp.take_along_axis(x, pick, axis=axis), np.take_along_axis(a, pick, axis))


def test_a_slice_takes_zero_dimensional_integer_arrays_as_bounds():
    x = xp.arange(6)
    a, b = xp.asarray(1), xp.asarray(5)
    np.testing.assert_array_equal(np.asarray(x[a:b:xp.asarray(2)]), [1, 3])
    np.testing.assert_array_equal(np.asarray(x[a + a:]), [2, 3, 4, 5])
    with pytest.raises(TypeError, match="no index"):
        x[xp.asarray(1.5):]
