"""The Array API's creation functions against numpy, dense and sparse (issue 30, item 1): a sparse array
of one value stores nothing, its value the fill, and computes with others as any operand."""

import numpy as np
import pytest
import scipy.sparse as sp

from compiler import array as xp
from compiler.errors import ShapeError, UsageError
from array_cases import check


@pytest.mark.parametrize("format", [None, "csr", "coo", "dcsr"])
def test_full_zeros_ones_match_numpy_and_store_nothing_when_sparse(format):
    for ours, want in ((xp.full((3, 4), 2.5, format=format), np.full((3, 4), 2.5)),
                       (xp.full((2, 3), np.nan, format=format), np.full((2, 3), np.nan)),
                       (xp.full((2, 2), 7, format=format), np.full((2, 2), 7)),
                       (xp.zeros((3, 2), format=format), np.zeros((3, 2))),
                       (xp.ones((2, 5), dtype=np.int32, format=format), np.ones((2, 5), np.int32)),
                       (xp.zeros((0, 3), format=format), np.zeros((0, 3)))):
        got = check(ours, want)
        if format is not None:
            assert got.nnz == 0 and ours.node.tensor.nnz == 0
            np.testing.assert_array_equal(ours.fill_value, want.flat[0] if want.size else 0)


def test_the_like_functions_take_the_shape_and_dtype():
    a = xp.asarray(sp.csr_array(np.array([[0, 2], [3, 0]], dtype=np.int32)))
    check(xp.zeros_like(a), np.zeros((2, 2), np.int32))
    check(xp.ones_like(a, dtype=np.float32), np.ones((2, 2), np.float32))
    check(xp.full_like(a, -1, format="csr"), np.full((2, 2), -1, np.int32))


@pytest.mark.parametrize("format", [None, "csr", "csc", "coo"])
@pytest.mark.parametrize("shape, k", [((4, 4), 0), ((3, 5), 2), ((5, 3), -1), ((3, 3), 4), ((3, 3), -5),
                                      ((0, 2), 0)])
def test_eye_matches_numpy_and_stores_its_diagonal(format, shape, k):
    got = check(xp.eye(*shape, k=k, format=format), np.eye(*shape, k=k))
    if format is not None:
        assert got.nnz == np.count_nonzero(np.eye(*shape, k=k))
        if -shape[0] < k < shape[1]:   # (scipy refuses a diagonal outside the matrix; numpy's is all zeros)
            assert (xp.eye(*shape, k=k, format=format).to_scipy() != sp.eye_array(*shape, k=k)).nnz == 0


def test_a_sparse_array_of_one_value_computes_with_others():
    # ones in CSR: fill 1, no entries; A * ones is A, A + ones is A + 1 everywhere (fill 1)
    a = np.array([[0.0, 2.0, 0.0], [np.inf, 0.0, -1.0]])
    A = xp.asarray(sp.csr_array(a))
    check(A * xp.ones((2, 3), format="csr"), a)
    out = check(A + xp.ones((2, 3), format="csr"), a + 1)
    assert out.fill == 1.0
    check(xp.eye(2, 3, format="csr") @ xp.asarray(np.arange(3.0)), np.eye(2, 3) @ np.arange(3.0))
    check(xp.sum(xp.full((3, 4), np.nan, format="csr"), axis=0), np.full(4, np.nan))


def test_ranges_and_errors():
    check(xp.arange(5), np.arange(5))
    check(xp.arange(2, 10, 3), np.arange(2, 10, 3))
    check(xp.arange(1.0, step=0.25), np.arange(1.0, step=0.25))
    check(xp.linspace(0, 1, 5), np.linspace(0, 1, 5))
    with pytest.raises(ShapeError, match="full: shape must be non-negative integers"):
        xp.zeros((2, -1))
    with pytest.raises(UsageError, match="dtype complex128 is no value dtype"):
        xp.full((2,), 1j)
