"""The Array API's set functions: ``unique_values``, ``unique_counts``, ``unique_inverse`` and ``unique_all``,
over the ravel, sorted, with numpy's rules: every NaN distinct (each its own value, count 1, in the order
of its position), -0.0 and 0.0 one value. A sparse operand's fill is one more value (unless a stored entry
has it), counted once per position not stored, its index the first such position; a NaN fill is a NaN
per unstored position. Values and counts are read from the stored entries; the inverse (one index per
position) is a dense array of the operand's shape, as numpy's.

>>> import numpy as np, scipy.sparse as sp
>>> from compiler import array as xp
>>> A = sp.csr_array(np.array([[0, 2.0, 0], [2.0, 0, -1.0]]))
>>> r = xp.unique_counts(A)
>>> r.values.todense().tolist(), r.counts.todense().tolist()
([-1.0, 0.0, 2.0], [1, 3, 2])
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .lanes import dense, operand, result
from .lazy import Array

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _unique(x, what: str, inverse: bool):
    """``(values, indices, inverse or None, counts, how)`` of ``x``'s ravel, each a numpy array."""
    t, how = operand(x, what)
    size = math.prod(t.shape)
    fill_entry = None   # (the entry standing for the unstored positions of a fill that is a number)
    if t.format.is_dense:
        flat, lin = t.to_numpy().reshape(-1), np.arange(size)
        counts = np.ones(size, np.int64)
    else:
        coords, flat = t.to_coords()
        lin = np.ravel_multi_index(tuple(coords), t.shape)
        counts = np.ones(len(flat), np.int64)
        unstored = size - len(flat)
        if unstored and t.fill == t.fill:
            # (its index: the first position not stored, the first gap of the sorted stored ones)
            gap = np.flatnonzero(np.sort(lin) != np.arange(len(lin)))
            fill_entry = len(flat)
            flat = np.append(flat, np.asarray(t.fill, dtype=t.dtype))
            lin = np.append(lin, int(gap[0]) if len(gap) else len(lin))
            counts = np.append(counts, unstored)
        elif unstored:   # (a NaN fill: a NaN per unstored position, each its own value)
            free = np.setdiff1d(np.arange(size), lin)
            flat = np.concatenate([flat, np.full(len(free), t.fill, dtype=t.dtype)])
            lin, counts = np.concatenate([lin, free]), np.concatenate([counts, np.ones(len(free), np.int64)])
    # (by value, NaN last, ties by position: a group's first entry has its index)
    order = np.lexsort((lin, flat))
    vals, pos, mult = flat[order], lin[order], counts[order]
    # (a group starts where the value changes; NaN != NaN, so every NaN starts its own)
    new = np.concatenate([[True], vals[1:] != vals[:-1]]) if len(vals) else np.zeros(0, bool)
    starts = np.flatnonzero(new)
    group = np.cumsum(new) - 1
    back = None
    if inverse:
        back = np.zeros(size, np.int64)
        if fill_entry is not None:
            back[:] = group[np.flatnonzero(order == fill_entry)[0]]
        back[pos] = group
        back = back.reshape(t.shape)
    found = np.add.reduceat(mult, starts) if len(starts) else np.zeros(0, np.int64)
    return vals[starts], pos[starts].astype(np.int64), back, found.astype(np.int64), how


def unique_values(x, /) -> Array:
    """The distinct values of ``x``, sorted (every NaN distinct, last).

    >>> import numpy as np
    >>> unique_values(np.array([2.0, np.nan, 2.0, np.nan])).todense().tolist()
    [2.0, nan, nan]
    """
    values, _, _, _, how = _unique(x, "unique_values", False)
    return result(dense(values), how)


def unique_counts(x, /) -> UniqueCountsResult:
    """The distinct values of ``x``, sorted, and how many times each occurs (int64)."""
    values, _, _, counts, how = _unique(x, "unique_counts", False)
    return UniqueCountsResult(result(dense(values), how), result(dense(counts), how))


def unique_inverse(x, /) -> UniqueInverseResult:
    """The distinct values of ``x``, sorted, and for each position of ``x`` the index of its value
    among them (int64, ``x``'s shape): ``values[inverse_indices]`` is ``x``."""
    values, _, back, _, how = _unique(x, "unique_inverse", True)
    return UniqueInverseResult(result(dense(values), how), result(dense(back), how))


def unique_all(x, /) -> UniqueAllResult:
    """The distinct values of ``x``, sorted; the first position of each in the ravel; each position's
    value's index (``x``'s shape); and each value's count (all int64)."""
    values, first, back, counts, how = _unique(x, "unique_all", True)
    return UniqueAllResult(*(result(dense(a), how) for a in (values, first, back, counts)))


__all__ = ["unique_values", "unique_counts", "unique_inverse", "unique_all", "UniqueAllResult",
           "UniqueCountsResult", "UniqueInverseResult"]
