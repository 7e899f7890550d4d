"""Inputs of every kind for the array tests, and the comparison with numpy."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import sparse

from compiler import Tensor, array as xp

#: how an operand is given: numpy, Tensors of each format, scipy's and pydata's sparse arrays
KINDS = ("numpy", "dense", "csr", "csc", "coo", "scipy_csr", "scipy_csc_matrix", "scipy_coo", "pydata_coo",
         "pydata_gcxs")
#: the kinds that take any rank (scipy's and CSR/CSC take matrices)
ANY_RANK = ("numpy", "dense", "coo", "pydata_coo")


def make(a: np.ndarray, kind: str, fill=None):
    """``a`` given as ``kind`` (a sparse Tensor kind stores entries other than ``fill``, default 0)."""
    if kind == "numpy":
        return a
    if kind in ("dense", "csr", "csc", "coo"):
        fmt = {1: "sparse_vector"}.get(a.ndim, kind) if kind != "dense" else kind
        if a.ndim == 0:
            fmt = "dense"
        return Tensor.from_numpy(a, fmt, fill=fill)
    if kind == "scipy_csr":
        return sp.csr_array(a)
    if kind == "scipy_csc_matrix":
        return sp.csc_matrix(a)
    if kind == "scipy_coo":
        return sp.coo_array(a)
    if kind == "pydata_coo":
        return sparse.COO.from_numpy(a, fill_value=fill)
    if kind == "pydata_gcxs":
        return sparse.GCXS.from_numpy(a, fill_value=fill)
    raise ValueError(kind)


def kinds_for(ndim: int) -> tuple:
    return KINDS if ndim == 2 else tuple(k for k in KINDS if k in ANY_RANK or (k in ("csr", "csc") and ndim == 1))


def check(result, expected, strategy=None, maxulp=0, **kw) -> Tensor:
    """``result`` (an Array) computed equals numpy's ``expected``: values (NaN where NaN), shape, dtype;
    within ``maxulp`` units in the last place where given (a libm function against numpy's own)."""
    expected = np.asarray(expected)
    got = result.compute(strategy=strategy, **kw) if isinstance(result, xp.Array) else result
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if maxulp and expected.dtype.kind == "f":
        values = got.to_numpy()
        np.testing.assert_array_equal(np.isnan(values), np.isnan(expected))
        np.testing.assert_array_max_ulp(np.nan_to_num(values), np.nan_to_num(expected), maxulp=maxulp)
    else:
        np.testing.assert_array_equal(got.to_numpy(), expected)
    return got


def operand(shape, fmt, seed, fill=0.0, density=0.5, odd=(np.nan, np.inf, -0.0, -np.inf)):
    """A numpy array of ``shape`` (``odd`` values stored first) and it as a lazy Array of ``fmt`` and fill ``fill``.

    >>> a, x = operand((2, 3), "csr", 0)
    >>> x.shape, bool(np.isnan(a.flat[0]))
    ((2, 3), True)
    """
    r = np.random.default_rng(seed)
    a = np.where(r.random(shape) < density, r.choice([1.0, -2.0, 3.5], shape), fill)
    a.flat[:min(len(odd), a.size)] = odd[:a.size]
    return a, xp.asarray(Tensor.from_numpy(a, fmt, fill=fill))
