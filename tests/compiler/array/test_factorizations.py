"""compiler.array.factorizations: the linear algebra extension's solvers and factorizations against numpy's, on
dense, CSR and COO operands and stacks of matrices; matrix_power by kernels (a sparse power stays sparse). They
were not offered: the Array API test suite found xp.linalg without them."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import array as xp
from compiler.errors import DTypeError, ShapeError, UsageError

FORMATS = [None, "csr", "coo"]


def spd(n, rng, stack=()):
    """Symmetric positive-definite matrices (a stack of them)."""
    a = rng.standard_normal(stack + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def as_array(a, fmt):
    return xp.asarray(a, format=fmt) if fmt and a.ndim == 2 else xp.asarray(a)


def dense(x):
    return np.asarray(x.todense())


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 5), fmt=st.sampled_from(FORMATS), seed=st.integers(0, 50), stacked=st.booleans())
def test_each_factorization_is_numpys(n, fmt, seed, stacked):
    rng = np.random.default_rng(seed)
    stack = (2,) if stacked else ()
    a = spd(n, rng, stack)
    a[..., 0, -1] += 0.0   # (a CSR of a full matrix: the values are what matter)
    x = as_array(a, None if stacked else fmt)
    close = dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dense(xp.linalg.cholesky(x)), np.linalg.cholesky(a), **close)
    np.testing.assert_allclose(dense(xp.linalg.cholesky(x, upper=True)),
                               np.swapaxes(np.linalg.cholesky(a), -1, -2), **close)
    np.testing.assert_allclose(dense(xp.linalg.det(x)), np.linalg.det(a), rtol=1e-9)
    sign, logabs = xp.linalg.slogdet(x)
    np.testing.assert_allclose(dense(sign), np.linalg.slogdet(a)[0])
    np.testing.assert_allclose(dense(logabs), np.linalg.slogdet(a)[1], **close)
    w, v = xp.linalg.eigh(x)
    np.testing.assert_allclose(dense(w), np.linalg.eigvalsh(a), **close)
    np.testing.assert_allclose(dense(v) @ (dense(w)[..., None] * np.swapaxes(dense(v), -1, -2)), a, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(dense(xp.linalg.eigvalsh(x)), np.linalg.eigvalsh(a), **close)
    np.testing.assert_allclose(dense(xp.linalg.inv(x)), np.linalg.inv(a), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dense(xp.linalg.pinv(x)), np.linalg.pinv(a), rtol=1e-9, atol=1e-12)
    assert dense(xp.linalg.matrix_rank(x)).tolist() == np.linalg.matrix_rank(a).tolist()
    q, r = xp.linalg.qr(x)
    np.testing.assert_allclose(dense(q) @ dense(r), a, rtol=1e-9, atol=1e-9)
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    np.testing.assert_allclose(dense(s), np.linalg.svd(a, compute_uv=False), **close)
    np.testing.assert_allclose((dense(u) * dense(s)[..., None, :]) @ dense(vh), a, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(dense(xp.linalg.svdvals(x)), np.linalg.svd(a, compute_uv=False), **close)
    b = rng.standard_normal(stack + (n, 2))
    np.testing.assert_allclose(dense(xp.linalg.solve(x, xp.asarray(b))), np.linalg.solve(a, b), rtol=1e-9, atol=1e-12)
    if not stacked:
        y = rng.standard_normal(n)
        np.testing.assert_allclose(dense(xp.linalg.solve(x, y)), np.linalg.solve(a, y), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("power", [0, 1, 2, 3, 5, -1, -2])
def test_matrix_power_is_numpys_and_keeps_a_sparse_matrix_sparse(power):
    m = sp.random(30, 30, density=0.05, format="csr", random_state=4) + sp.eye(30, format="csr")
    x = xp.asarray(m)
    got = xp.linalg.matrix_power(x, power)
    want = np.linalg.matrix_power(m.toarray(), power)
    np.testing.assert_allclose(dense(got), want, rtol=1e-9, atol=1e-9)
    if power > 1:
        assert got.compute().format.shorthand == "csr"


def test_bad_operands_are_refused_naming_the_function():
    with pytest.raises(ShapeError, match=r"linalg.inv: needs square matrices, not shape \(2, 3\)"):
        xp.linalg.inv(xp.asarray(np.zeros((2, 3))))
    with pytest.raises(ShapeError, match="linalg.det: needs a matrix"):
        xp.linalg.det(xp.asarray(np.zeros(3)))
    with pytest.raises(DTypeError, match="linalg.svdvals: of booleans"):
        xp.linalg.svdvals(xp.asarray(np.eye(2, dtype=bool)))
    with pytest.raises(UsageError, match="linalg.qr: mode is 'reduced' or 'complete'"):
        xp.linalg.qr(xp.asarray(np.eye(2)), mode="r")
    with pytest.raises(UsageError, match="the power is an int"):
        xp.linalg.matrix_power(xp.asarray(np.eye(2)), 1.5)
    with pytest.raises(np.linalg.LinAlgError):
        xp.linalg.inv(xp.asarray(np.zeros((2, 2))))
    # (integers are factored as float64, numpy's)
    assert xp.linalg.det(xp.asarray(np.array([[2, 0], [0, 3]]))).dtype == np.float64
