"""sort and argsort (compiler.array.sorting) against numpy, ascending and descending (as the Array API's
reference does it on numpy: the ascending order of the reversed lane, reversed), on dense and sparse
operands of fill 0, NaN and 2, NaN among the stored entries, all-fill and empty arrays (issue 30)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.errors import ShapeError
from value_cases import ARRAYS, KINDS, NAN, inputs, operand, same, value


def np_sort(a, axis, descending):
    out = np.sort(a, axis=axis, stable=True)
    return np.flip(out, axis=-1 if axis is None else axis) if descending else out


def np_argsort(a, axis, descending):
    if not descending:
        return np.argsort(a, axis=axis, stable=True)
    ax = -1 if axis is None else axis
    flat = a.reshape(-1) if axis is None else a
    return flat.shape[ax] - 1 - np.flip(np.argsort(np.flip(flat, axis=ax), axis=ax, stable=True), axis=ax)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,a,fill", ARRAYS, ids=[n for n, _, _ in ARRAYS])
def test_sort_and_argsort_match_numpy(name, a, fill, kind):
    x = operand(a, kind, fill)
    for axis in (-1, 0, None):
        for descending in (False, True):
            same(xp.sort(x, axis=axis, descending=descending), np_sort(a, axis, descending))
            same(xp.argsort(x, axis=axis, descending=descending), np_argsort(a, axis, descending))


def test_sort_of_a_sparse_matrix_moves_only_its_stored_entries():
    a = np.array([[0, 3.0, -1.0, 0], [2.0, 0, 0, NAN]])
    s = value(xp.sort(Tensor.from_numpy(a, "csr"), axis=1))
    assert s.format.shorthand == "csr" and s.nnz == 4 and s.fill == 0
    np.testing.assert_array_equal(s.to_numpy(), np.sort(a, axis=1))
    c = value(xp.sort(Tensor.from_numpy(a, "coo"), axis=0, descending=True))
    assert c.format.shorthand == "coo" and c.nnz == 4


def test_argsort_keeps_ties_in_position_order_both_ways():
    a = np.array([1.0, 0.0, 1.0, 0.0, NAN, 1.0])
    x = Tensor.from_numpy(a, "sparse_vector")
    same(xp.argsort(x), [1, 3, 0, 2, 5, 4])
    same(xp.argsort(x, descending=True), [4, 0, 2, 5, 1, 3])


def test_sort_of_a_0d_array_along_an_axis_is_refused():
    with pytest.raises(ShapeError, match="sort: axis -1 is out of range for an array of 0 dimension"):
        xp.sort(np.float64(1.0))


def test_an_array_operand_is_sorted_after_its_own_kernel():
    a = np.array([[0.0, 3.0, 1.0], [4.0, 0.0, -2.0]])
    s = xp.sort(xp.asarray(a, format="csr") - 1, axis=1)
    same(s, np.sort(a - 1, axis=1))
    notes = [st.note for st in s.lower().trace.find("materialize")]
    assert "sort computed its operand by its own kernel" in notes[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=inputs(), data=st.data())
def test_property_sort_and_argsort_match_numpy(case, data):
    a, x, fill, kind = case
    axis = data.draw(st.sampled_from([None] + list(range(-a.ndim, a.ndim))))
    descending = data.draw(st.booleans())
    same(xp.sort(x, axis=axis, descending=descending), np_sort(a, axis, descending))
    same(xp.argsort(x, axis=axis, descending=descending), np_argsort(a, axis, descending))
