"""The result's format where none is asked (compiler/array/default_output.py): a product with a dense factor is
dense, as scipy's ``csr @ ndarray`` and pydata's ``COO @ ndarray`` are; other expressions over a sparse operand
stay sparse. A CSR result of ``csr @ dense`` read its operand converted to CSC and built the output by a
workspace at each call (20.8 ms against scipy's 2.8 on a 20k x 20k matrix of 1M entries times 8 columns)."""

import numpy as np
import pytest
import scipy.sparse as sp
import sparse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler import array as xp

STRATEGIES = [None, "lattice", "looplets"]
S = sp.random(6, 5, density=0.4, format="csr", random_state=2)
D = np.arange(10.0).reshape(5, 2)


def _formats(expr, strategy):
    got = expr.compute(strategy=strategy)
    return got, got.format.shorthand


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_product_with_a_dense_factor_is_dense_as_scipys(strategy):
    a, d, x = xp.asarray(S), xp.asarray(D), xp.asarray(D[:, 0])
    cases = [(a @ d, S @ D), (a @ x, S @ D[:, 0]), (xp.asarray(D.T) @ a.T, D.T @ S.T.toarray()),
             (xp.tensordot(a, d, axes=1), S @ D), (xp.einsum("ij,jk->ik", a, d), S @ D),
             (xp.einsum("ij,jk->ki", a, d), (S @ D).T),
             (xp.vecdot(a, xp.asarray(np.ones(5))), S @ np.ones(5)),
             (xp.asarray(sparse.COO.from_scipy_sparse(S)) @ d, S @ D),
             # (elementwise functions of such products, dense operands and scalars: scipy's are ndarrays too)
             (a @ x + 1, S @ D[:, 0] + 1), (xp.isnan(a @ x), np.isnan(S @ D[:, 0])),
             (a @ x + xp.asarray(np.arange(6.0)), S @ D[:, 0] + np.arange(6.0)),
             (xp.sum(a * xp.asarray(np.ones((6, 5))), axis=1), S.toarray().sum(axis=1)),
             (xp.sum(xp.astype(a, xp.float32) * xp.asarray(np.ones((6, 5), np.float32)), axis=1),
              S.toarray().astype(np.float32).sum(axis=1))]
    for n, (expr, want) in enumerate(cases):
        got, fmt = _formats(expr, strategy)
        assert fmt == "dense", (expr, fmt)
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-13)
        if n < 2:   # (a CSR times a dense operand is read as stored, rows first, into rows of the output)
            kernel = expr.lower(strategy=strategy)
            assert not kernel.trace.find("convert"), kernel.trace.find("convert")[0].note


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_other_expressions_over_a_sparse_operand_stay_sparse(strategy):
    a, d = xp.asarray(S), xp.asarray(np.ones((6, 5)))
    for expr, want, fmt in [(a @ a.T, S @ S.T, "csr"), (a * d, S.multiply(np.ones((6, 5))), "csr"),
                            ((a @ a.T) * 2 + a @ a.T, 3 * (S @ S.T), "csr"),
                            (xp.sum(a, axis=1), S.sum(axis=1).A1, "sparse_vector"),
                            (a[0] * 2, S[[0]].toarray()[0] * 2, "sparse_vector")]:
        got, shorthand = _formats(expr, strategy)
        assert shorthand == fmt, (expr, shorthand)
        np.testing.assert_allclose(got.to_numpy(), want.toarray() if sp.issparse(want) else want, rtol=1e-13)
    # (a format asked is the format given)
    assert (a @ xp.asarray(D)).compute(format="csr", strategy=strategy).format.shorthand == "csr"


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.integers(0, 5), inner=st.integers(0, 4), cols=st.integers(1, 3),
       kind=st.sampled_from(["csr", "csc", "coo"]), fill=st.sampled_from([0.0, 1.0, np.nan, np.inf]),
       density=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 3))
def test_a_sparse_times_dense_product_matches_numpy(strategy, rows, inner, cols, kind, fill, density, seed):
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((rows, inner)) < density, rng.choice([1.0, -2.0, np.inf, np.nan], (rows, inner)), fill)
    d = rng.choice([0.0, 1.5, -1.0], (inner, cols))
    x = xp.asarray(Tensor.from_numpy(a, kind, fill=fill))
    got = (x @ xp.asarray(d)).compute(strategy=strategy)
    with np.errstate(all="ignore"):
        want = a @ d
    assert got.format.is_dense and got.shape == want.shape
    np.testing.assert_array_equal(got.to_numpy(), want)
