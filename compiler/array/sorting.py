"""The Array API's sorting functions, ``sort`` and ``argsort``, along an axis, NaN last (first when
descending), ties in their order (stable). A sparse operand's fill is one run of each sorted lane, after
the stored entries below it: ``sort`` moves only the stored entries, so its result is as sparse as its
operand, in its format; ``argsort``'s positions are a dense array (every position has one), the unstored
ones taken in order.

>>> import numpy as np, scipy.sparse as sp
>>> from compiler import array as xp
>>> A = sp.csr_array(np.array([[0, 3.0, -1.0], [2.0, 0, 0]]))
>>> s = xp.sort(A, axis=1)
>>> s.compute().nnz, s.todense().tolist()
(3, [[-1.0, 0.0, 3.0], [0.0, 0.0, 2.0]])
>>> xp.argsort(A, axis=1, descending=True).todense().tolist()
[[1, 0, 2], [0, 1, 2]]
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import build
from .lanes import dense, lane_starts, lanes, operand, ranks, result, stored_counts
from .lazy import Array
from .shapeops import sparse_format_like


def _axis(what: str, t: Tensor, axis):
    """``axis`` in range (a 0-d array has none), or None for the ravel."""
    return None if axis is None else build.normalize_axes(what, axis, t.ndim)[0]


def _flip(values: np.ndarray, axis) -> np.ndarray:
    return np.flip(values, axis=-1 if axis is None else axis)


def sort(x, /, *, axis=-1, descending: bool = False, stable: bool = True) -> Array:
    """``x`` sorted along ``axis`` (None: its ravel, as numpy's), ascending with NaN last, or descending
    with NaN first (the ascending order reversed). Every sort here is stable.

    >>> import numpy as np
    >>> sort(np.array([2.0, np.nan, -1.0]), descending=True).todense().tolist()
    [nan, 2.0, -1.0]
    """
    build.real_only("sort", x)
    t, how = operand(x, "sort")
    ax = _axis("sort", t, axis)
    if t.format.is_dense:
        values = t.to_numpy() if ax is not None else t.to_numpy().reshape(-1)
        values = np.sort(values, axis=-1 if ax is None else ax, stable=True)
        return result(dense(_flip(values, ax) if descending else values), how)
    ls = lanes(t, ax)
    rank, fill_rank = ranks(ls.vals, ls.fill)
    # (each lane's stored entries in order; the fill's run of unstored positions after those before it)
    order = np.lexsort((ls.pos, -rank if descending else rank, ls.lane))
    lane, rank, vals = ls.lane[order], rank[order], ls.vals[order]
    within = np.arange(len(order)) - lane_starts(ls)[lane]
    unstored = ls.n - stored_counts(ls)
    after_fill = rank < fill_rank if descending else rank > fill_rank
    pos = within + np.where(after_fill, unstored[lane], 0)
    shape = (ls.n,) if ax is None else t.shape
    outer = np.unravel_index(lane, ls.outer) if ls.outer else ()
    coords = np.array(list(outer[:ax]) + [pos] + list(outer[ax:]) if ax is not None else [pos], dtype=np.int64)
    out = Tensor.from_coords(coords.reshape(len(shape), len(vals)), vals, shape,
                             format=sparse_format_like(t, len(shape)), fill=t.fill, dtype=t.dtype.name)
    return result(out, how)


def argsort(x, /, *, axis=-1, descending: bool = False, stable: bool = True) -> Array:
    """The positions that sort ``x`` along ``axis`` (None: its ravel), an int64 array of ``x``'s shape:
    ascending with NaN last, or descending with NaN first, ties in the order of their positions (as the
    Array API's ``argsort(x, descending=True)``, which is not the ascending order reversed).

    >>> import numpy as np
    >>> argsort(np.array([1.0, 3.0, 1.0]), descending=True).todense().tolist()
    [1, 0, 2]
    """
    build.real_only("argsort", x)
    t, how = operand(x, "argsort")
    ax = _axis("argsort", t, axis)
    if t.format.is_dense:
        values = t.to_numpy() if ax is not None else t.to_numpy().reshape(-1)
        a = -1 if ax is None else ax
        if descending:   # (the ascending order of the reversed lane, reversed: ties keep their order)
            found = values.shape[a] - 1 - _flip(np.argsort(_flip(values, ax), axis=a, stable=True), ax)
        else:
            found = np.argsort(values, axis=a, stable=True)
        return result(dense(found.astype(np.int64)), how)
    ls = lanes(t, ax)
    rank, fill_rank = ranks(ls.vals, ls.fill)
    # (every position has a place in the result: the unstored ones join the stored entries, of the fill's rank)
    open_ = np.ones((ls.count, ls.n), dtype=bool)
    open_[ls.lane, ls.pos] = False
    free_lane, free_pos = np.nonzero(open_)
    lane = np.concatenate([ls.lane, free_lane])
    pos = np.concatenate([ls.pos, free_pos])
    rank = np.concatenate([rank, np.full(len(free_pos), fill_rank, dtype=np.int64)])
    order = np.lexsort((pos, -rank if descending else rank, lane))
    found = pos[order].reshape(ls.outer + (ls.n,))
    return result(dense(found if ax is None else np.moveaxis(found, -1, ax)), how)


__all__ = ["sort", "argsort"]
