"""matmul and @, tensordot and einsum against numpy, fused as one kernel (issue 30)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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


# -- the linear algebra extension (compiler.array.linalg) ----------------------------------------------

W = np.array([[0.0, 1.5, 0.0, -2.0, 0.0], [np.nan, 0.0, np.inf, 0.0, 1.0], [0.0, -np.inf, 0.0, 0.5, 0.0]])


def _materialized(array) -> list:
    return [s.note for s in array.lower().trace.find("materialize")]


@pytest.mark.parametrize("kind", ["numpy", "csr", "coo", "scipy_csc_matrix"])
def test_diagonal_and_trace_at_every_offset(kind):
    a = xp.asarray(make(W, kind))
    with np.errstate(all="ignore"):
        for k in (-4, -1, 0, 2, 6):
            check(xp.linalg.diagonal(a, offset=k), np.diagonal(W, k))
            check(xp.linalg.trace(a, offset=k), np.trace(W, k))
    t = np.arange(24.0).reshape(2, 3, 4)
    check(xp.linalg.diagonal(xp.asarray(make(t, "coo" if kind != "numpy" else kind)), offset=-1),
          np.diagonal(t, -1, -2, -1))
    # (a strided slice of the ravel: one kernel walking the stored entries, no gather or conversion)
    assert _materialized(xp.linalg.trace(a) * 2) == []


@given(rows=st.integers(0, 5), cols=st.integers(0, 6), offset=st.integers(-7, 7), seed=st.integers(0, 3))
@settings(max_examples=7, deadline=None)
def test_property_diagonal_of_random_sparse_matrices(rows, cols, offset, seed):
    d = np.random.default_rng(seed).choice([0.0, 0.0, 1.0, -2.5, np.nan], size=(rows, cols))
    check(xp.linalg.diagonal(xp.asarray(make(d, "csr")), offset=offset), np.diagonal(d, offset))


@pytest.mark.parametrize("kind", ["numpy", "csr"])
def test_vector_and_matrix_norms_match_numpy(kind):
    a = xp.asarray(make(B, kind))
    for ord in (2, 1, -np.inf, 0, 0.5):
        for axis in (None, 1, (0, 1)) if ord == 2 else (0,):
            want = np.linalg.norm(B.reshape(-1) if axis in (None, (0, 1)) else B, ord=ord,
                                  axis=None if axis in (None, (0, 1)) else axis)
            np.testing.assert_allclose(np.asarray(xp.linalg.vector_norm(a, axis=axis, ord=ord)), want, rtol=1e-13)
    for ord in ("fro", 1, -1, np.inf, -np.inf):
        np.testing.assert_allclose(np.asarray(xp.linalg.matrix_norm(a, ord=ord)), np.linalg.norm(B, ord=ord),
                                   rtol=1e-13)
    for ord in ("fro", -1, np.inf):
        np.testing.assert_allclose(np.asarray(xp.linalg.matrix_norm(xp.asarray(T), ord=ord, keepdims=True)),
                                   np.linalg.norm(T, ord=ord, axis=(-2, -1), keepdims=True), rtol=1e-13)
    # (NaN and infinities propagate as numpy's; integers give float64)
    with np.errstate(all="ignore"):
        check(xp.linalg.vector_norm(xp.asarray(make(W, kind)), axis=1), np.linalg.norm(W, axis=1))
    check(xp.linalg.vector_norm(xp.asarray(np.array([3, 4]))), np.linalg.norm(np.array([3, 4])))
    assert _materialized(xp.linalg.matrix_norm(a, ord=1)) == []


def test_matrix_norms_needing_singular_values_are_refused_and_bad_arguments_named():
    a = xp.asarray(B)
    for ord in (2, -2, "nuc"):
        with pytest.raises(ss.errors.UsageError, match="singular values"):
            xp.linalg.matrix_norm(a, ord=ord)
    with pytest.raises(ss.errors.UsageError, match="vector_norm: ord must be a number"):
        xp.linalg.vector_norm(a, ord="fro")
    with pytest.raises(ss.errors.ShapeError, match="diagonal needs at least 2 dimensions"):
        xp.linalg.diagonal(xp.asarray(V))
    with pytest.raises(ss.errors.ShapeError, match="outer: x2 has shape"):
        xp.linalg.outer(V, B)
    with pytest.raises(ss.errors.ShapeError, match="cross: x1 of shape .4,. has no extent 3"):
        xp.linalg.cross(V, V)


def test_cross_outer_and_the_products_of_the_namespace():
    x, y = np.arange(6.0).reshape(2, 3), np.array([1.0, -2.0, 0.5])
    check(xp.linalg.cross(xp.asarray(make(x, "csr")), y), np.cross(x, y))
    check(xp.linalg.cross(xp.asarray(x.T), y[:, None], axis=0), np.cross(x.T, y[:, None], axis=0))
    check(xp.linalg.outer(xp.asarray(make(V, "csr")), y), np.outer(V, y))
    assert xp.linalg.matmul is xp.matmul and xp.linalg.tensordot is xp.tensordot
    check(xp.linalg.matrix_transpose(xp.asarray(make(A, "csr"))), A.T)
    check(xp.linalg.vecdot(xp.asarray(A), A), np.sum(A * A, axis=-1))
