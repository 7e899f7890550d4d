"""The Array API's searching functions whose result depends on the values: ``argmax``, ``argmin``,
``nonzero`` and ``searchsorted`` (``where`` and ``count_nonzero`` are expressions, fused). Each reads its
operand's stored entries and counts the fill once per position not stored, never building a sparse
operand densely: ``argmax`` of a CSR whose fill 0 beats every stored value is its first unstored position.

>>> import numpy as np, scipy.sparse as sp
>>> from compiler import array as xp
>>> A = sp.csr_array(np.array([[0, -1.0, 0], [-2.0, 0, 0]]))
>>> xp.argmax(A, axis=1).todense().tolist(), int(xp.argmin(A))
([0, 1], 3)
>>> [c.todense().tolist() for c in xp.nonzero(A)]
[[0, 1], [1, 0]]
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ShapeError, UsageError
from . import build
from .indexing import take_tensor
from .lanes import dense, first_unstored, lane_starts, lanes, operand, ranks, result, stored_counts
from .lazy import Array


def _arg_extreme(x, axis, keepdims: bool, what: str, largest: bool) -> Array:
    """The first position of the largest (or smallest) entry along ``axis``; NaN beats every number,
    as numpy's argmax and argmin both say."""
    build.real_only(what, x)
    t, how = operand(x, what)
    ax = None if axis is None else build.normalize_axes(what, axis, t.ndim)[0]
    n = math.prod(t.shape) if ax is None else t.shape[ax]
    if n == 0:
        raise ShapeError(f"{what}: {'the array' if ax is None else f'axis {ax}'} of shape {t.shape} is empty: "
                         f"an empty sequence has no {'largest' if largest else 'smallest'} entry")
    if t.format.is_dense:
        found = (np.argmax if largest else np.argmin)(t.to_numpy(), axis=ax, keepdims=keepdims)
        return result(dense(np.asarray(found, dtype=np.int64)), how)
    ls = lanes(t, ax)
    rank, fill_rank = ranks(ls.vals, ls.fill)
    # (one key, larger better: the rank, or minus it for argmin, NaN above both)
    top = np.iinfo(np.int64).max
    nan = ls.vals != ls.vals
    key = np.where(nan, top, rank if largest else -rank)
    fill_key = top if ls.fill != ls.fill else (fill_rank if largest else -fill_rank)
    best = np.zeros(ls.count, np.int64)
    best_key = np.full(ls.count, np.iinfo(np.int64).min)
    held = stored_counts(ls) > 0
    if len(key):
        # (each lane's best key, then the first position holding it: the entries are in lane order)
        starts = lane_starts(ls)[:-1][held]
        best_key[held] = np.maximum.reduceat(key, starts)
        best[held] = np.minimum.reduceat(np.where(key == best_key[ls.lane], ls.pos, n), starts)
    gap = first_unstored(ls)
    open_ = gap < n
    out = np.where(open_ & (fill_key > best_key), gap,
                   np.where(open_ & (fill_key == best_key), np.minimum(best, gap), best))
    shape = ls.outer if ax is None or not keepdims else t.shape[:ax] + (1,) + t.shape[ax + 1:]
    if ax is None and keepdims:
        shape = (1,) * t.ndim
    return result(dense(out.reshape(shape)), how)


def argmax(x, /, *, axis=None, keepdims: bool = False) -> Array:
    """The position of the first largest entry along ``axis`` (None: in the ravel), an int64 array;
    the first NaN where there is one (numpy's rule).

    >>> import numpy as np
    >>> int(argmax(np.array([1.0, np.nan, 3.0])))
    1
    """
    return _arg_extreme(x, axis, keepdims, "argmax", True)


def argmin(x, /, *, axis=None, keepdims: bool = False) -> Array:
    """The position of the first smallest entry along ``axis`` (None: in the ravel), an int64 array;
    the first NaN where there is one (numpy's rule)."""
    return _arg_extreme(x, axis, keepdims, "argmin", False)


def nonzero(x, /) -> tuple:
    """The coordinates of the nonzero entries (NaN counts), one int64 array per axis, row-major:
    a sparse operand's stored entries that are not 0, and where its fill is not 0 every position it does
    not store too.

    >>> import numpy as np
    >>> [c.todense().tolist() for c in nonzero(np.array([[0, 2], [3, 0]]))]
    [[0, 1], [1, 0]]
    """
    t, how = operand(x, "nonzero")
    if t.ndim == 0:
        raise ShapeError("nonzero: a 0-d array has no coordinates; use nonzero(reshape(x, (1,))) or x != 0")
    if t.format.is_dense:
        found = np.nonzero(t.to_numpy())
    else:
        coords, vals = t.to_coords()
        linear = np.ravel_multi_index(tuple(coords), t.shape)
        if t.fill == 0:
            found = np.unravel_index(np.sort(linear[vals != 0]), t.shape)
        else:   # (a position is zero only where it stores a 0: everything else)
            found = np.unravel_index(np.setdiff1d(np.arange(math.prod(t.shape)), linear[vals == 0]), t.shape)
    return tuple(result(dense(np.asarray(c, dtype=np.int64)), how) for c in found)


def searchsorted(x1, x2, /, *, side: str = "left", sorter=None) -> Array:
    """Where each value of ``x2`` would go in the sorted 1-D ``x1`` to keep it sorted: the number of
    entries of ``x1`` below it (``side="left"``) or not above it (``"right"``), NaN sorting last. A sparse
    ``x1``'s fill is one run of its sorted entries, counted once per position it does not store.
    ``sorter``: the positions that sort ``x1`` (``argsort(x1)``), if it is not sorted itself.

    >>> import numpy as np
    >>> searchsorted(np.array([1.0, 2.0, 2.0, 5.0]), np.array([2.0, 9.0]), side="right").todense().tolist()
    [3, 4]
    """
    if side not in ("left", "right"):
        raise UsageError(f"searchsorted: side is 'left' or 'right', not {side!r}")
    build.real_only("searchsorted", x1, x2)
    t, how = operand(x1, "searchsorted")
    if t.ndim != 1:
        raise ShapeError(f"searchsorted: x1 must be 1-D (sorted), got shape {t.shape}")
    if sorter is not None:
        order, _ = operand(sorter, "searchsorted's sorter")
        t = take_tensor(t, order.to_numpy(), 0, "searchsorted's sorter")
    values, _ = operand(x2, "searchsorted")
    v = values.to_numpy()
    if t.format.is_dense:
        found = np.searchsorted(t.to_numpy(), v, side=side)
    else:
        coords, vals = t.to_coords()
        vals = vals[np.argsort(coords[0], kind="stable")]
        # (below v: the stored entries below it, and every unstored position if the fill is)
        found = np.searchsorted(vals, v, side=side) + \
            (math.prod(t.shape) - len(vals)) * np.searchsorted(np.asarray([t.fill], dtype=t.dtype), v, side=side)
    return result(dense(np.asarray(found, dtype=np.int64)), how)


__all__ = ["argmax", "argmin", "nonzero", "searchsorted"]
