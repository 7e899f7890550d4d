"""The Array API's linear algebra extension (``xp.linalg``), for what is a kernel: products, norms,
diagonals and traces, each built of the array language, so it fuses with what surrounds it.

A diagonal is a strided slice of the raveled matrix (``x.reshape(-1)[k::n + 1]``): the shape operators
walk a CSR's stored entries once, keeping those on the diagonal. Factorizations and solvers (``inv``,
``solve``, ``cholesky``, ``svd``, ``eigh``, ``qr``, ``det``, ...) are no sparse kernels: they call numpy's
LAPACK on the computed, dense operand (:mod:`compiler.array.factorizations`).

>>> import numpy as np
>>> from compiler import array as xp
>>> a = xp.asarray(np.array([[1.0, 2.0], [3.0, 4.0]]), format="csr")
>>> xp.linalg.diagonal(a).todense().tolist(), float(xp.linalg.trace(a))
([1.0, 4.0], 5.0)
>>> round(float(xp.linalg.matrix_norm(a)), 6), float(xp.linalg.vector_norm(a, ord=1))
(5.477226, 10.0)
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..errors import ShapeError, UsageError
from . import build
from .derived import count_nonzero, vecdot
from .factorizations import (EighResult, QRResult, SlogdetResult, SVDResult, cholesky, det, eigh, eigvalsh, inv,
                             matrix_power, matrix_rank, pinv, qr, slogdet, solve, svd, svdvals)
from .lazy import (Array, abs, asarray, matmul, matrix_transpose, max, min, multiply, pow, reshape, sqrt, stack,
                   subtract, sum, tensordot)


def diagonal(x, /, *, offset: int = 0) -> Array:
    """The ``offset``-th diagonal of the last two axes (above the main one if positive), as numpy's
    ``diagonal(x, offset, -2, -1)``: a strided slice of each raveled matrix, fused."""
    x = asarray(x)
    k = build.matrix_offset("diagonal", x.node, offset, "offset")
    m, n = x.shape[-2:]
    length = builtins.max(0, builtins.min(m, n - k) if k >= 0 else builtins.min(m + k, n))
    start = k if k >= 0 else -k * n
    flat = reshape(x, x.shape[:-2] + (m * n,))
    lead = (slice(None),) * (x.ndim - 2)
    stop = start + (length - 1) * (n + 1) + 1 if length else start
    return flat[lead + (slice(start, stop, n + 1),)]


def trace(x, /, *, offset: int = 0, dtype=None) -> Array:
    """The sum of the ``offset``-th diagonal of the last two axes (of each matrix of a stack)."""
    return sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1, x2, /) -> Array:
    """The outer product of two vectors: ``x1[:, None] * x2[None, :]``, fused."""
    x1, x2 = asarray(x1), asarray(x2)
    for name, v in (("x1", x1), ("x2", x2)):
        if v.ndim != 1:
            raise ShapeError(f"outer: {name} has shape {v.shape}; both must be 1-D")
    return multiply(x1[:, None], x2[None, :])


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2) -> Array:
    """The ``ord``-norm over ``axis`` (every axis if None): ``sum(|x| ** ord) ** (1 / ord)``; ``inf`` the
    largest magnitude, ``-inf`` the smallest, 0 the count of nonzeros (a float), as numpy's. A complex array's
    norm is its magnitudes' (a real float: x * x would square, not take the modulus)."""
    x = asarray(x)
    if x.dtype.kind == "c":
        x = abs(x)
    if x.dtype.kind not in "f":
        x = multiply(x, 1.0)   # (a norm is a float: numpy's of integers is float64)
    if isinstance(ord, bool) or not isinstance(ord, (int, float, np.integer, np.floating)):
        raise UsageError(f"vector_norm: ord must be a number or ±inf, not {ord!r}")
    if ord == math.inf:
        return max(abs(x), axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return min(abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return multiply(count_nonzero(x, axis=axis, keepdims=keepdims), 1.0)
    if ord == 1:
        return sum(abs(x), axis=axis, keepdims=keepdims)
    if ord == 2:
        return sqrt(sum(multiply(x, x), axis=axis, keepdims=keepdims))
    return pow(sum(pow(abs(x), float(ord)), axis=axis, keepdims=keepdims), 1.0 / float(ord))


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro") -> Array:
    """The norm of each matrix (the last two axes): ``"fro"`` (Frobenius), 1 and -1 (the largest and
    smallest column sum of magnitudes), ``inf`` and ``-inf`` (row sums). The spectral and nuclear norms
    (2, -2, ``"nuc"``) need singular values, no sparse kernel: they are refused."""
    x = asarray(x)
    if x.ndim < 2:
        raise ShapeError(f"matrix_norm needs at least 2 dimensions; shape {x.shape}")
    if x.dtype.kind == "c":   # (the magnitudes' norm, a real float)
        x = abs(x)
    if x.dtype.kind not in "f":
        x = multiply(x, 1.0)
    if ord == "fro":
        out = sqrt(sum(multiply(x, x), axis=(-2, -1), keepdims=keepdims))
        return out
    if ord in (1, -1, math.inf, -math.inf) and not isinstance(ord, bool):
        summed = -2 if ord in (1, -1) else -1   # (1: sums over rows, each column's; inf: each row's)
        sums = sum(abs(x), axis=summed, keepdims=True)
        pick = max if ord > 0 else min
        out = pick(sums, axis=-1 if summed == -2 else -2, keepdims=True)
        return out if keepdims else reshape(out, x.shape[:-2])
    if ord in (2, -2, "nuc"):
        raise UsageError(f"matrix_norm: ord={ord!r} needs the singular values, which no sparse kernel computes; "
                         f"use numpy.linalg.norm(numpy.asarray(x), ord={ord!r})")
    raise UsageError(f"matrix_norm: ord must be 'fro', 1, -1, inf, -inf (or 2, -2, 'nuc', refused), not {ord!r}")


def cross(x1, x2, /, *, axis: int = -1) -> Array:
    """The cross product of 3-vectors along ``axis`` (broadcast together), fused: each component a
    difference of products of the operands' slices."""
    x1, x2 = asarray(x1), asarray(x2)
    shape = build.broadcast_shape("cross", [x1.shape, x2.shape])
    (a,) = build.normalize_axes("cross", axis, len(shape))
    for name, v in (("x1", x1), ("x2", x2)):
        if v.ndim < len(shape) - a or v.shape[a - len(shape)] != 3:
            raise ShapeError(f"cross: {name} of shape {v.shape} has no extent 3 along axis {axis}")

    def part(v, k):
        return v[(slice(None),) * (v.ndim - (len(shape) - a)) + (k,)]

    u = [part(x1, k) for k in range(3)]
    w = [part(x2, k) for k in range(3)]
    comps = [subtract(multiply(u[1], w[2]), multiply(u[2], w[1])),
             subtract(multiply(u[2], w[0]), multiply(u[0], w[2])),
             subtract(multiply(u[0], w[1]), multiply(u[1], w[0]))]
    return stack(comps, axis=a)


__all__ = ["cholesky", "det", "slogdet", "eigh", "eigvalsh", "inv", "pinv", "matrix_rank", "qr", "svd",
           "svdvals", "solve", "matrix_power", "EighResult", "QRResult", "SlogdetResult", "SVDResult",
           "matmul", "matrix_transpose", "tensordot", "vecdot", "diagonal", "trace", "outer", "vector_norm",
           "matrix_norm", "cross"]
