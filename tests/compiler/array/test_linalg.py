"""matmul and @, tensordot and einsum against numpy, fused as one kernel (issue 30)."""

import numpy as np
import pytest
import scipy.sparse as sp

import compiler as ss
from compiler import array as xp
from array_cases import check, make

RNG = np.random.default_rng(5)
A = RNG.integers(0, 3, (3, 4)).astype(float)
B = RNG.integers(0, 3, (4, 5)).astype(float)
V = RNG.integers(0, 3, 4).astype(float)
T = RNG.integers(0, 3, (2, 3, 4)).astype(float)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("kind", ["numpy", "csr", "csc", "coo", "scipy_csr", "scipy_coo", "pydata_coo",
                                  "pydata_gcxs"])
def test_matmul_of_matrices_and_vectors(kind, strategy):
    a, b = xp.asarray(make(A, kind)), xp.asarray(make(B, kind))
    v = xp.asarray(make(V, "csr" if kind in ("csr", "csc") else "numpy"))
    check(a @ b, A @ B, strategy)
    check(a @ v, A @ V, strategy)
    check(v @ b, V @ B, strategy)
    check(v @ v, V @ V, strategy)
    check(b.T @ a.T, B.T @ A.T, strategy)
    check(xp.matmul(a, B), A @ B, strategy)
    check(A @ b, A @ B, strategy)       # numpy's array on the left defers to the Array


@pytest.mark.parametrize("kind", ["numpy", "coo", "pydata_coo"])
def test_batched_matmul_broadcasts_the_stacks(kind):
    t = xp.asarray(make(T, kind))
    check(t @ xp.asarray(make(B, "csr")), T @ B)
    check(t @ t.mT, T @ T.transpose(0, 2, 1))
    check(t[:1] @ t.mT, T[:1] @ T.transpose(0, 2, 1))


def test_bool_matmul_is_or_of_ands_as_numpy():
    a, b = A > 1, B > 0
    check(xp.asarray(make(a, "csr")) @ xp.asarray(b), a @ b)


def test_tensordot_and_einsum():
    a, b, t = xp.asarray(make(A, "csr")), xp.asarray(make(B, "csc")), xp.asarray(make(T, "coo"))
    check(xp.tensordot(a, b, 1), np.tensordot(A, B, 1))
    check(xp.tensordot(t, a, axes=([1, 2], [0, 1])), np.tensordot(T, A, axes=([1, 2], [0, 1])))
    check(xp.tensordot(a, a, 0), np.tensordot(A, A, 0))
    check(xp.einsum("ij,jk->ki", a, b), np.einsum("ij,jk->ki", A, B))
    check(xp.einsum("ij,jk,k", a, b, np.ones(5)), np.einsum("ij,jk,k", A, B, np.ones(5)))
    check(xp.einsum("kij->jik", t), np.einsum("kij->jik", T))
    check(xp.einsum("ij->", a), np.einsum("ij->", A))


def test_mismatched_shapes_name_both_and_the_operator():
    with pytest.raises(ss.ShapeError, match=r"matmul: shapes \(3, 4\) and \(3, 4\) do not match: 4 .* != 3"):
        xp.asarray(A) @ xp.asarray(A)
    with pytest.raises(ss.ShapeError, match=r"einsum 'ij,ij->i': shapes \(3, 4\) and \(4, 5\) do not match"):
        xp.einsum("ij,ij->i", A, B)
    with pytest.raises(ss.UsageError, match="a label repeated in one operand"):
        xp.einsum("ii->i", np.eye(2))
    with pytest.raises(ss.ShapeError, match=r"tensordot: axis 1 of \(3, 4\) has extent 4 but axis 0"):
        xp.tensordot(A, A, axes=([1], [0]))


def test_products_agree_with_scipy_and_convert_back_to_it():
    SA, SB = sp.random(30, 20, density=0.2, format="csr", random_state=1), \
        sp.random(20, 10, density=0.2, format="csc", random_state=2)
    got = (xp.asarray(SA) @ xp.asarray(SB)).to_scipy()
    assert isinstance(got, sp.csr_array)
    np.testing.assert_allclose(got.toarray(), (SA @ SB).toarray())
    x = np.arange(20.0)
    np.testing.assert_allclose(np.asarray(xp.asarray(SA) @ x), SA @ x)
    np.testing.assert_allclose(np.asarray(xp.asarray(SA).sum(axis=0)), np.asarray(SA.sum(axis=0)).ravel())
