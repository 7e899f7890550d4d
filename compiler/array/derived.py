"""The Array API's functions that are other functions of the array language: ``mean`` is a sum
divided by a count, ``flip`` a slice with step -1, ``isinf(x)`` is ``abs(x) == inf``. Each builds the
same lazy expression a user could write, so it fuses into one kernel with what surrounds it.

>>> import numpy as np
>>> from compiler import array as xp
>>> x = xp.asarray(np.array([[1.0, np.nan], [3.0, 4.0]]))
>>> xp.mean(x, axis=0).todense().tolist()
[2.0, nan]
>>> xp.isnan(xp.flip(x, axis=1)).todense().tolist()
[[True, False], [False, False]]
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..errors import ShapeError, UsageError
from . import build, lazy
from .indexing import repeat_by_counts
from .lazy import (Array, abs, add, asarray, broadcast_to, concat, copysign, divide, equal, exp, less, log, log1p,
                   logical_and, logical_or, maximum, minimum, multiply, negative, not_equal, permute_dims, reshape,
                   sqrt, subtract, sum, where)


def _axes(what: str, x: Array, axis) -> tuple:
    return build.normalize_axes(what, axis, x.ndim)


def mean(x, axis=None, keepdims=False) -> Array:
    """The arithmetic mean over ``axis``: ``sum / count``, a float (NaN over an empty axis, as numpy)."""
    x = asarray(x)
    count = math.prod(x.shape[a] for a in _axes("mean", x, axis))
    # (numpy's mean of integers sums them as float64s: an int64 sum would wrap past 2^63)
    total = sum(x, axis=axis, keepdims=keepdims, dtype=None if x.dtype.kind in "fc" else np.float64)
    # (0 / 0 is NaN: numpy's mean of an empty axis, without its warning)
    return divide(total, count) if count else multiply(total, math.nan)


def var(x, axis=None, correction=0.0, keepdims=False) -> Array:
    """The variance over ``axis``: the mean squared deviation from the mean, divided by
    ``count - correction`` instead of ``count`` (numpy's ``ddof``): two passes, as numpy's, for accuracy
    (the mean is a reduction nested under the subtraction; a strategy that cannot nest it has it computed
    first, and the trace's ``materialize`` step says so). Real arrays only, as the standard's."""
    x = asarray(x)
    build.real_only("var", x, why="it is a statistic of real values")
    count = math.prod(x.shape[a] for a in _axes("var", x, axis))
    dev = subtract(x, mean(x, axis=axis, keepdims=True))
    squares = sum(multiply(dev, dev), axis=axis, keepdims=keepdims)
    if squares.dtype.kind not in "fc":
        squares = divide(squares, 1.0)
    denom = count - correction
    return divide(squares, denom) if denom > 0 else multiply(squares, math.nan)


def std(x, axis=None, correction=0.0, keepdims=False) -> Array:
    """The standard deviation over ``axis``: ``sqrt(var(x, axis, correction))``, of real arrays."""
    build.real_only("std", x, why="it is a statistic of real values")
    return sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims))


def vecdot(x1, x2, axis=-1) -> Array:
    """The dot product of ``x1`` and ``x2`` along ``axis`` (broadcast together): ``sum(conj(x1) * x2)``, the
    standard's (the conjugate of a real array is itself). As numpy's, the sum is in the product's dtype
    (of int32 arrays int32, wrapping; of bools their ``any``), not promoted as ``sum``'s."""
    x1, x2 = asarray(x1), asarray(x2)
    at = [x.shape[axis] if -x.ndim <= axis < x.ndim else None for x in (x1, x2)]
    if at[0] != at[1]:   # (the dot's axis is not broadcast: numpy's vecdot refuses 1 against n too)
        raise ShapeError(f"vecdot: axis {axis} has extent {at[0]} in the first operand (shape {x1.shape}) and "
                         f"{at[1]} in the second (shape {x2.shape}); they must be equal")
    product = multiply(conj(x1), x2)
    if product.dtype.kind == "b":
        return lazy.any(product, axis=axis)
    return sum(product, axis=axis, dtype=product.dtype)


def count_nonzero(x, axis=None, keepdims=False) -> Array:
    """How many entries are nonzero over ``axis`` (an int64 count; NaN counts, as numpy's)."""
    return sum(not_equal(x, 0), axis=axis, keepdims=keepdims, dtype=np.int64)


def square(x) -> Array:
    """``x * x``, elementwise."""
    return multiply(x, x)


def positive(x) -> Array:
    """``+x``: the array itself."""
    return asarray(x)


def reciprocal(x) -> Array:
    """``1 / x``, elementwise, a float."""
    return divide(1.0, x)


def isinf(x) -> Array:
    """Whether each entry is +inf or -inf (``abs(x) == inf``); a complex one where either part is (the
    standard's rule: ``inf + nan j`` is infinite; its ``abs`` would also call a finite overflow infinite)."""
    x = asarray(x)
    if x.dtype.kind == "c":
        return logical_or(isinf(real(x)), isinf(imag(x)))
    return equal(abs(x), math.inf)


def isfinite(x) -> Array:
    """Whether each entry is neither NaN nor infinite (``abs(x) < inf``: false for NaN); a complex one
    where both parts are."""
    x = asarray(x)
    if x.dtype.kind == "c":
        return logical_and(isfinite(real(x)), isfinite(imag(x)))
    return less(abs(x), math.inf)


def sign(x) -> Array:
    """-1, 0 or 1 by the sign of each entry (NaN stays NaN, and -0.0 gives -0.0), in ``x``'s dtype; of a
    complex entry, ``x / abs(x)`` (``0 + 0j`` for a zero of either sign), the standard's."""
    x = asarray(x)
    if x.dtype.kind == "c":   # (0 + 0j for a zero of either sign, as numpy's and the standard's)
        return where(equal(x, 0), 0, divide(x, abs(x)))
    if x.dtype.kind == "b":
        return x
    if x.dtype.kind == "u":   # (no -1 in an unsigned dtype, and no entry below 0)
        return where(x > 0, 1, x)
    return where(x > 0, 1, where(x < 0, -1, x))


def clip(x, min=None, max=None) -> Array:
    """Each entry held within ``[min, max]`` (either may be None; NaN stays NaN, as numpy's)."""
    x = asarray(x)
    build.real_only("clip", x, min, max)
    if min is not None:
        x = maximum(x, min)
    if max is not None:
        x = minimum(x, max)
    return x


def logical_xor(x1, x2) -> Array:
    """Whether exactly one of ``x1``, ``x2`` is true (nonzero)."""
    return not_equal(not_equal(x1, 0), not_equal(x2, 0))


def flip(x, axis=None) -> Array:
    """``x`` with the order of its entries reversed along ``axis`` (every axis if None)."""
    x = asarray(x)
    axes = _axes("flip", x, axis)
    return x[tuple(slice(None, None, -1) if a in axes else slice(None) for a in range(x.ndim))]


def _int(what: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise UsageError(f"{what}: {name} must be an int, not {value!r}")
    return int(value)


def roll(x, shift, axis=None) -> Array:
    """``x`` with its entries moved ``shift`` places along ``axis``, those pushed off the end coming
    back at the start: a concatenation of two slices, ``roll(v, 2)`` is ``concat([v[-2:], v[:-2]])``
    (one kernel with what surrounds it). ``axis=None`` rolls the ravel; ``shift`` and ``axis`` may be
    tuples, broadcast together, an axis named twice rolled by the sum of its shifts (as numpy's).

    >>> import numpy as np
    >>> roll(asarray(np.arange(5.0)), -7).todense().tolist()
    [2.0, 3.0, 4.0, 0.0, 1.0]
    """
    x = asarray(x)
    if axis is None:
        shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
        total = builtins.sum(_int("roll", "shift", s) for s in shifts)
        return reshape(roll(reshape(x, (-1,)), total, axis=0), x.shape) if x.ndim != 1 else roll(x, total, 0)
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise ShapeError(f"roll: {len(shifts)} shifts and {len(axes)} axes do not broadcast")
    by_axis = {}
    for s, a in zip(shifts * (len(axes) if len(shifts) == 1 else 1), axes * (len(shifts) if len(axes) == 1 else 1)):
        (a,) = _axes("roll", x, _int("roll", "axis", a))
        by_axis[a] = by_axis.get(a, 0) + _int("roll", "shift", s)
    for a, s in by_axis.items():
        n = x.shape[a]
        s = s % n if n else 0
        if s:
            key = [slice(None)] * x.ndim
            head, tail = list(key), list(key)
            head[a], tail[a] = slice(n - s, None), slice(None, n - s)
            x = concat([x[tuple(head)], x[tuple(tail)]], axis=a)
    return x


def _no_entries(x: Array, shape: tuple) -> Array:
    """An array of ``shape``, which has no entries, made of ``x`` (its dtype and fill): an empty slice
    of it reshaped, which stays one kernel where a broadcast to an extent 0 would not."""
    if not x.ndim:
        return broadcast_to(x, shape)
    return reshape(x[(slice(0, 0),) + (slice(None),) * (x.ndim - 1)], shape)


def tile(x, reps) -> Array:
    """``x`` repeated ``reps[k]`` times along each axis k (numpy's tile: ``x`` gets leading axes of extent
    1 when ``reps`` is longer, ``reps`` leading ones when shorter): a ravel of a broadcast, one kernel with
    what surrounds it; ``tile(v, 3)`` of a vector is ``broadcast_to(v[None, :], (3, n)).reshape(-1)``.

    >>> import numpy as np
    >>> tile(asarray(np.array([1.0, 0.0])), (2, 2)).todense().tolist()
    [[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0]]
    """
    x = asarray(x)
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    reps = tuple(_int("tile", "each of reps", r) for r in reps)
    if any(r < 0 for r in reps):
        raise ShapeError(f"tile: reps {reps} has a negative count")
    lead = builtins.max(0, len(reps) - x.ndim)
    reps = (1,) * (x.ndim - len(reps)) + reps
    # (a leading axis numpy adds is a new axis of extent its count; each other repeated axis gets a new
    # axis before it, broadcast to its count, then merged into it row-major)
    key, wide, out = [None] * lead, list(reps[:lead]), list(reps[:lead])
    for n, r in zip(x.shape, reps[lead:]):
        if r != 1:
            key.append(None)
            wide.append(r)
        key.append(slice(None))
        wide.append(n)
        out.append(n * r)
    if math.prod(out) == 0:
        return _no_entries(x, tuple(out))
    return reshape(broadcast_to(x[tuple(key)], tuple(wide)), tuple(out))


def repeat(x, repeats, axis=None) -> Array:
    """Each entry of ``x`` repeated ``repeats`` times along ``axis`` (None: of the ravel), as numpy's:
    an int count is a ravel of a broadcast, ``repeat(v, 3)`` is ``broadcast_to(v[:, None], (n, 3))
    .reshape(-1)``, one kernel with what surrounds it. An array of counts (one per entry along the axis)
    moves the stored entries by its running sum, computed first: the trace's ``materialize`` step says so.

    >>> import numpy as np
    >>> repeat(asarray(np.array([[1.0, 0.0], [0.0, 2.0]])), 2, axis=1).todense().tolist()
    [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 2.0, 2.0]]
    """
    x = asarray(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    (axis,) = _axes("repeat", x, _int("repeat", "axis", axis))
    if not isinstance(repeats, (int, np.integer)) or isinstance(repeats, bool):
        return repeat_by_counts(x, repeats, axis)   # (the counts' values place the entries: computed first)
    r = int(repeats)
    if r < 0:
        raise ShapeError(f"repeat: repeats {r} is negative")
    if r == 1:
        return x
    n = x.shape[axis]
    key = tuple(slice(None) for _ in range(axis + 1)) + (None,)
    wide = x.shape[:axis + 1] + (r,) + x.shape[axis + 1:]
    out = x.shape[:axis] + (n * r,) + x.shape[axis + 1:]
    if math.prod(out) == 0:
        return _no_entries(x, out)
    return reshape(broadcast_to(x[key], wide), out)


def unstack(x, axis: int = 0) -> tuple:
    """The arrays ``x`` holds along ``axis``, one per coordinate: ``x[k]`` along axis 0 (a constant index of a
    stored tensor, so each is one kernel with what surrounds it).

    >>> import numpy as np
    >>> [u.todense().tolist() for u in unstack(asarray(np.array([[1.0, 2.0], [3.0, 4.0]])), axis=1)]
    [[1.0, 3.0], [2.0, 4.0]]
    """
    x = asarray(x)
    (axis,) = _axes("unstack", x, _int("unstack", "axis", axis))
    before = (slice(None),) * axis
    return tuple(x[before + (k,)] for k in range(x.shape[axis]))


def signbit(x) -> Array:
    """Whether each entry's sign bit is set (true for -0.0, -inf and a NaN of negative sign, as numpy's):
    ``copysign(1, x) < 0`` for floats, ``x < 0`` for integers, false for bools."""
    x = asarray(x)
    build.real_only("signbit", x, why="a complex number has two sign bits")
    if x.dtype.kind == "f":
        return less(copysign(1.0, x), 0)
    return less(x, 0) if x.dtype.kind in "iu" else not_equal(x, x)


def bitwise_invert(x) -> Array:
    """``~x``: each bit of an integer flipped, a bool negated."""
    return ~asarray(x)


def squeeze(x, axis) -> Array:
    """``x`` without the axes ``axis`` (an int or a tuple), each of extent 1."""
    x = asarray(x)
    axes = _axes("squeeze", x, axis)
    for a in axes:
        if x.shape[a] != 1:
            raise ShapeError(f"squeeze: axis {a} of shape {x.shape} has extent {x.shape[a]}, not 1")
    return reshape(x, tuple(n for a, n in enumerate(x.shape) if a not in axes))


def moveaxis(x, source, destination) -> Array:
    """``x`` with the axes ``source`` moved to the places ``destination`` (the others keep their order)."""
    x = asarray(x)
    src = build.normalize_axes("moveaxis", source, x.ndim, ordered=True)
    dst = build.normalize_axes("moveaxis", destination, x.ndim, ordered=True)
    if len(src) != len(dst):
        raise ShapeError(f"moveaxis: {len(src)} source axes but {len(dst)} destinations")
    rest = [a for a in range(x.ndim) if a not in src]
    order = [None] * x.ndim
    for s, d in zip(src, dst):
        order[d] = s
    it = iter(rest)
    return permute_dims(x, tuple(a if a is not None else next(it) for a in order))


def logaddexp(x1, x2) -> Array:
    """``log(exp(x1) + exp(x2))`` without overflow: the larger plus ``log1p(exp(-|x1 - x2|))``
    (equal arguments give ``x + log(2)``, so two infinities of one sign give that infinity, as numpy)."""
    x1, x2 = asarray(x1), asarray(x2)
    build.real_only("logaddexp", x1, x2, why="it compares its arguments")
    if x1.dtype.kind not in "f":
        x1 = divide(x1, 1.0)   # (numpy's logaddexp of integers is float64)
    if x2.dtype.kind not in "f":
        x2 = divide(x2, 1.0)
    spread = log1p(exp(negative(abs(subtract(x1, x2)))))
    return where(equal(x1, x2), add(x1, math.log(2.0)), add(maximum(x1, x2), spread))


def real(x) -> Array:
    """The real part, elementwise (C's ``creal``): a float32 of a complex64, a float64 of a complex128; a
    real array itself.

    >>> import numpy as np
    >>> from compiler import array as xp
    >>> xp.real(xp.asarray(np.array([1 + 2j, -3j], dtype=np.complex64))).todense().tolist()
    [1.0, -0.0]
    """
    x = asarray(x)
    return Array(build.elementwise("real", x.node)) if x.dtype.kind == "c" else x


def imag(x) -> Array:
    """The imaginary part, elementwise (C's ``cimag``); of a real array, zeros of its dtype and shape (a
    sparse one's stores nothing: ``where`` of two equal values visits no entry)."""
    x = asarray(x)
    if x.dtype.kind == "c":
        return Array(build.elementwise("imag", x.node))
    zero = np.zeros((), x.dtype)[()]
    return where(equal(x, x), zero, zero)


def conj(x) -> Array:
    """The complex conjugate, elementwise (C's ``conj``); a real array itself."""
    x = asarray(x)
    return Array(build.elementwise("conj", x.node)) if x.dtype.kind == "c" else x


def diff(x, axis=-1, n=1, prepend=None, append=None) -> Array:
    """The ``n``-th forward difference along ``axis`` (``x[1:] - x[:-1]``, booleans by ``!=``), after
    joining ``prepend`` and ``append`` (arrays of ``x``'s shape but along ``axis``): fused, one kernel.

    >>> import numpy as np
    >>> from compiler import array as xp
    >>> xp.diff(xp.asarray(np.array([1.0, 4.0, 9.0, 16.0])), n=2).todense().tolist()
    [2.0, 2.0]
    """
    x = asarray(x)
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"diff: n must be a non-negative integer, got {n!r}")
    if x.ndim == 0:
        raise ShapeError("diff needs at least one dimension; the array is 0-d")
    (a,) = _axes("diff", x, axis)
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = concat([_along(asarray(p), x, a) for p in parts], axis=a)
    for _ in range(int(n)):
        if x.shape[a] == 0:
            break
        head = tuple(slice(1, None) if d == a else slice(None) for d in range(x.ndim))
        tail = tuple(slice(None, -1) if d == a else slice(None) for d in range(x.ndim))
        x = not_equal(x[head], x[tail]) if x.dtype.kind == "b" else subtract(x[head], x[tail])
    return x


def _along(p: Array, x: Array, axis: int) -> Array:
    """``p`` as a part to join to ``x`` along ``axis``: a 0-d one broadcast to extent 1 there."""
    if p.ndim == 0:
        return broadcast_to(p, tuple(1 if d == axis else n for d, n in enumerate(x.shape)))
    return p


def broadcast_arrays(*arrays) -> list:
    """The arrays broadcast to their common shape."""
    xs = [asarray(a) for a in arrays]
    shape = build.broadcast_shape("broadcast_arrays", [x.shape for x in xs])
    return [broadcast_to(x, shape) for x in xs]


__all__ = ["mean", "var", "std", "vecdot", "count_nonzero", "square", "positive", "reciprocal",
           "isinf", "isfinite", "sign", "clip", "logical_xor", "flip", "roll", "tile", "repeat", "squeeze",
           "moveaxis", "broadcast_arrays", "bitwise_invert", "logaddexp", "signbit", "real", "imag", "conj", "diff",
           "unstack"]
