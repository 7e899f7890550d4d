"""The Array API linear algebra extension's factorizations and solvers (``xp.linalg.solve``, ``inv``, ``det``,
``cholesky``, ``qr``, ``svd``, ``eigh``, ...): no sparse kernel computes them, so each computes its operands and
calls numpy's LAPACK routine on their dense values, a sparse operand made dense first. For a large sparse
system, use ``scipy.sparse.linalg`` on ``x.to_scipy()`` instead. ``matrix_power`` of a non-negative power is
a product of kernels (repeated squaring, each ``@`` a kernel), so a sparse matrix's power stays sparse.

>>> import numpy as np
>>> from compiler import array as xp
>>> a = xp.asarray(np.array([[4.0, 1.0], [1.0, 3.0]]), format="csr")
>>> xp.linalg.solve(a, xp.asarray(np.array([1.0, 2.0]))).todense().round(6).tolist()
[0.090909, 0.636364]
>>> w, v = xp.linalg.eigh(a)
>>> w.todense().round(6).tolist(), round(float(xp.linalg.det(a)), 9)
([2.381966, 4.618034], 11.0)
"""

from __future__ import annotations

import builtins
from typing import NamedTuple

import numpy as np

from ..errors import DTypeError, ShapeError, UsageError
from .lazy import Array, asarray, matmul


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


def _dense(what: str, x, square: bool = False) -> np.ndarray:
    """``x`` computed, its values as a dense numpy array: a floating one (an integer's as float64, as numpy's
    routines take it), of at least two axes (square ones where ``square``)."""
    a = np.asarray(asarray(x).todense())
    if a.ndim < 2:
        raise ShapeError(f"linalg.{what}: needs a matrix or a stack of matrices, not an array of shape {a.shape}")
    if square and a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"linalg.{what}: needs square matrices, not shape {a.shape}")
    if a.dtype.kind == "b":
        raise DTypeError(f"linalg.{what}: of booleans is not defined; convert them with astype first")
    return a if a.dtype.kind in "fc" else a.astype(np.float64)


def _out(a) -> Array:
    a = np.asarray(a)   # (not ascontiguousarray: it makes a 0-d determinant 1-d)
    return asarray(a if a.flags.c_contiguous else a.copy(order="C"))


def cholesky(x, /, *, upper: bool = False) -> Array:
    """The lower (or ``upper``) Cholesky factor of each symmetric (Hermitian) positive-definite matrix."""
    low = np.linalg.cholesky(_dense("cholesky", x, square=True))
    return _out(np.conj(np.swapaxes(low, -1, -2)) if upper else low)


def det(x, /) -> Array:
    """The determinant of each square matrix."""
    return _out(np.linalg.det(_dense("det", x, square=True)))


def slogdet(x, /) -> SlogdetResult:
    """The sign (a unit complex number for a complex matrix) and the log of the absolute determinant."""
    sign, logabs = np.linalg.slogdet(_dense("slogdet", x, square=True))
    return SlogdetResult(_out(sign), _out(logabs))


def eigh(x, /) -> EighResult:
    """The eigenvalues, ascending, and eigenvectors (columns) of each symmetric (Hermitian) matrix."""
    w, v = np.linalg.eigh(_dense("eigh", x, square=True))
    return EighResult(_out(w), _out(v))


def eigvalsh(x, /) -> Array:
    """The eigenvalues, ascending, of each symmetric (Hermitian) matrix."""
    return _out(np.linalg.eigvalsh(_dense("eigvalsh", x, square=True)))


def inv(x, /) -> Array:
    """The inverse of each square matrix (numpy's LinAlgError for a singular one)."""
    return _out(np.linalg.inv(_dense("inv", x, square=True)))


def _rtol(a: np.ndarray, rtol) -> np.ndarray:
    """``rtol`` as numpy's routines take it (an Array computed); by default ``max(M, N)`` times ``a``'s epsilon."""
    if rtol is None:
        return np.asarray(builtins.max(a.shape[-2:]) * np.finfo(a.dtype).eps)
    return np.asarray(asarray(rtol).todense()) if isinstance(rtol, Array) else np.asarray(rtol)


def pinv(x, /, *, rtol=None) -> Array:
    """The Moore-Penrose pseudo-inverse; singular values under ``rtol`` times the largest are taken as zero
    (by default ``max(M, N)`` times the dtype's epsilon)."""
    a = _dense("pinv", x)
    return _out(np.linalg.pinv(a, rtol=_rtol(a, rtol)))


def matrix_rank(x, /, *, rtol=None) -> Array:
    """The number of singular values above ``rtol`` times the largest (by default ``max(M, N)`` times epsilon)."""
    a = _dense("matrix_rank", x)
    s = np.linalg.svd(a, compute_uv=False)
    tol = (s.max(axis=-1, initial=0.0) * _rtol(a, rtol))[..., None] if s.size else np.zeros(s.shape[:-1] + (1,))
    return _out(np.count_nonzero(s > tol, axis=-1).astype(np.int64))


def qr(x, /, *, mode: str = "reduced") -> QRResult:
    """The QR factorization of each matrix: ``mode`` ``"reduced"`` (``Q`` of ``min(M, N)`` columns) or
    ``"complete"``."""
    if mode not in ("reduced", "complete"):
        raise UsageError(f"linalg.qr: mode is 'reduced' or 'complete', not {mode!r}")
    q, r = np.linalg.qr(_dense("qr", x), mode=mode)
    return QRResult(_out(q), _out(r))


def svd(x, /, *, full_matrices: bool = True) -> SVDResult:
    """The singular value decomposition ``U @ diag(S) @ Vh`` of each matrix, ``S`` descending."""
    u, s, vh = np.linalg.svd(_dense("svd", x), full_matrices=full_matrices)
    return SVDResult(_out(u), _out(s), _out(vh))


def svdvals(x, /) -> Array:
    """The singular values of each matrix, descending."""
    return _out(np.linalg.svd(_dense("svdvals", x), compute_uv=False))


def solve(x1, x2, /) -> Array:
    """The solution ``x`` of ``x1 @ x = x2`` for each square ``x1``: ``x2`` a vector where it is 1-D, else a
    matrix (or a stack, broadcast against ``x1``'s)."""
    a = _dense("solve", x1, square=True)
    b = np.asarray(asarray(x2).todense())
    if b.dtype.kind not in "fc":
        b = b.astype(np.float64)
    if b.ndim == 1:
        if b.shape[0] != a.shape[-1]:
            raise ShapeError(f"linalg.solve: a vector of {b.shape[0]} entries for matrices of shape {a.shape[-2:]}")
        return _out(np.linalg.solve(a, b[..., None])[..., 0] if a.ndim > 2 else np.linalg.solve(a, b))
    return _out(np.linalg.solve(a, b))


def matrix_power(x, n, /) -> Array:
    """``x`` to the integer power ``n`` (each square matrix): a non-negative power by repeated squaring, each
    product a kernel (a sparse matrix's power stays sparse); a negative one the inverse's power."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)):
        raise UsageError(f"linalg.matrix_power: the power is an int, not {n!r}")
    x = asarray(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"linalg.matrix_power: needs square matrices, not shape {x.shape}")
    if n < 0:
        return matrix_power(inv(x), -int(n))
    if n == 0:
        eye = np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape)
        return _out(eye)
    out, square, n = None, x, int(n)
    while n:
        if n & 1:
            out = square if out is None else asarray(matmul(out, square).compute())
        n >>= 1
        if n:
            square = asarray(matmul(square, square).compute())
    return out


__all__ = ["EighResult", "QRResult", "SlogdetResult", "SVDResult", "cholesky", "det", "slogdet", "eigh", "eigvalsh",
           "inv", "pinv", "matrix_rank", "qr", "svd", "svdvals", "solve", "matrix_power"]
