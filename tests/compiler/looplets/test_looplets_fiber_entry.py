"""A fiber's first phase, up to one past its last coordinate (``lastA``), entered by whether the fiber
stores an entry (``qA < qA_stop``) where the phase starts at 0: the C no longer loads a CSR row's
last coordinate before copying the row from its start (a cache miss per row: 30% of a strided row
slice's time, issue 30's Fig. 24f), and a vstack's second part no longer cuts its rows at the first
part's column count (the call's shape inference checks the parts' columns equal). Each kernel is
checked against numpy, fills 0 and NaN, empty inputs too."""

import numpy as np
import pytest
import scipy.sparse as sp

import compiler as ss

NAN = float("nan")


def _matrix(shape, seed, fill):
    a = sp.random(*shape, density=0.4, format="csr", random_state=seed).toarray()
    a[a == 0] = fill
    a[0, :] = fill   # (an empty row, at the edge)
    if shape[1] > 2:
        a[2, 1] = 0.0 if fill != 0 else 5.0   # (a stored zero where the fill is NaN)
    return a


def _tensor(a, fill, name):
    return ss.Tensor.from_numpy(a, ss.parse_format("csr", fill=fill), name=name)


@pytest.mark.parametrize("fill", [0.0, NAN])
@pytest.mark.parametrize("rows", [slice(1, 12, 2), slice(11, None, -2), slice(None, None, 1)])
def test_a_row_slice_enters_each_row_by_its_positions(fill, rows):
    a = _matrix((13, 9), 1, fill)
    A = _tensor(a, fill, "A")
    k = ss.lower(ss.asarray(A)[rows], strategy="looplets")
    assert "qA < qA_stop" in k.c_source and "lastA" not in k.c_source
    np.testing.assert_array_equal(k().to_numpy(), a[rows])
    empty = _tensor(np.full((13, 9), fill), fill, "A")
    got = k(A=empty)
    assert got.nnz == 0 and got.shape == a[rows].shape


@pytest.mark.parametrize("fill", [0.0, NAN])
def test_a_vstack_walks_each_part_whole(fill):
    b, c = _matrix((6, 7), 2, fill), _matrix((5, 7), 3, fill)
    B, C = _tensor(b, fill, "B"), _tensor(c, fill, "C")
    k = ss.lower("D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)", strategy="looplets", B=B, C=C,
                 D=ss.parse_format("csr", fill=fill))
    # (no row of C is cut at B's column count, nor its last coordinate loaded)
    assert "seek" not in k.c_source and "lastB" not in k.c_source and "lastC" not in k.c_source
    np.testing.assert_array_equal(k(B=B, C=C).to_numpy(), np.vstack([b, c]))
    # other row counts and empty parts, through the same kernel; other column counts are refused
    c2 = _matrix((3, 7), 4, fill)
    np.testing.assert_array_equal(k(B=_tensor(np.full((2, 7), fill), fill, "B"), C=_tensor(c2, fill, "C")).to_numpy(),
                                  np.vstack([np.full((2, 7), fill), c2]))
    with pytest.raises(ss.ShapeError):
        k(B=B, C=_tensor(_matrix((5, 8), 5, fill), fill, "C"))


def test_a_merge_enters_its_first_phase_when_both_rows_store_entries():
    a, b = _matrix((6, 8), 6, 0.0), _matrix((6, 8), 7, 0.0)
    a[3, :] = 0.0   # (a row empty in one operand only)
    A, B = _tensor(a, 0.0, "A"), _tensor(b, 0.0, "B")
    k = ss.lower("C[i, j] = A[i, j] * B[i, j]", strategy="looplets", A=A, B=B, C="csr")
    assert "qA < qA_stop && qB < qB_stop" in k.c_source
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), a * b)
