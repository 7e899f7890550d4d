"""The Array API's ``take`` (and ``repeat`` by an array of counts): entries chosen by an array of
positions, whose values place them, so computed before the expression around it on the stored entries:
each stored entry goes to every place its position is taken, a sparse operand stays sparse in its
format (a CSR's rows taken are a CSR) and nothing of its whole size is built.

>>> import numpy as np, scipy.sparse as sp
>>> from compiler import array as xp
>>> A = sp.csr_array(np.array([[0, 1.0], [2.0, 0], [0, 3.0]]))
>>> rows = xp.take(A, np.array([2, 0, 2]), axis=0)
>>> rows.compute().format.shorthand, rows.todense().tolist()
('csr', [[0.0, 3.0], [0.0, 1.0], [0.0, 3.0]])
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DTypeError, ShapeError
from ..tensor import Tensor
from . import build
from .lanes import lanes, operand, result
from .lazy import Array
from .shapeops import reshape_tensor, sparse_format_like


def _positions(what: str, indices: np.ndarray, n: int, axis) -> np.ndarray:
    """``indices`` as positions in ``range(n)`` (a negative one counts from the end), or an IndexError."""
    if indices.dtype.kind not in "iu":
        raise DTypeError(f"{what}: indices must be integers, not {indices.dtype.name}")
    indices = indices.astype(np.int64)
    bad = (indices < -n) | (indices >= n)
    if bad.any():
        where = "the ravel" if axis is None else f"axis {axis}"
        raise IndexError(f"{what}: index {indices[bad][0]} is out of bounds for {where} with extent {n}")
    return np.where(indices < 0, indices + n, indices)


def _moved(t: Tensor, coords: np.ndarray, vals: np.ndarray, shape: tuple) -> Tensor:
    """``t``'s entries at new coordinates: dense as ``t`` is, else sparse in ``t``'s kind of format."""
    fmt = "dense" if t.format.is_dense or not shape else sparse_format_like(t, len(shape))
    return Tensor.from_coords(coords.reshape(len(shape), len(vals)), vals, shape, format=fmt, fill=t.fill,
                              dtype=t.dtype.name)


def _take_fibers(t: Tensor, pick: np.ndarray, shape: tuple) -> Tensor:
    """A CSR's rows (a CSC's columns) at ``pick``, by scipy's own row (column) indexing on the arrays
    the tensor shares with it: each taken row's stretch copied after the ones before, no coordinates
    sorted."""
    rows = t.mode_order[0] == 0
    s = t.to_scipy("csr" if rows else "csc")
    return Tensor.from_scipy(s[pick] if rows else s[:, pick], fill=t.fill)


def take_tensor(t: Tensor, indices: np.ndarray, axis: int, what: str = "take") -> Tensor:
    """``t``'s entries at ``indices`` along ``axis`` (any shape of indices, which replaces that axis)."""
    indices = np.asarray(indices)
    pick = _positions(what, indices.reshape(-1), t.shape[axis], axis)
    shape = t.shape[:axis] + indices.shape + t.shape[axis + 1:]
    if t.format.shorthand in ("csr", "csc") and indices.ndim == 1 and axis == t.mode_order[0] and t.fill == 0:
        return _take_fibers(t, pick, shape)
    if t.format.is_dense:
        taken = np.take(t.to_numpy(), pick.reshape(indices.shape), axis)
        return Tensor.from_numpy(np.asarray(taken, order="C"), "dense", fill=t.fill, dtype=t.dtype.name)
    coords, vals = t.to_coords()
    order = np.argsort(pick, kind="stable")
    taken = pick[order]
    lo = np.searchsorted(taken, coords[axis], "left")
    times = np.searchsorted(taken, coords[axis], "right") - lo
    entry = np.repeat(np.arange(len(vals)), times)
    # (the j-th copy of an entry is its j-th place among the sorted picks)
    copy = np.arange(len(entry)) - np.repeat(np.cumsum(times) - times, times)
    where = order[lo[entry] + copy]
    new = np.unravel_index(where, indices.shape) if indices.ndim else ()
    out = np.concatenate([coords[:axis, entry], np.array(new, dtype=np.int64).reshape(indices.ndim, len(entry)),
                          coords[axis + 1:, entry]]).astype(np.int64)
    return _moved(t, out, vals[entry], shape)


def take(x, indices, /, *, axis=None) -> Array:
    """numpy's ``take``: the entries of ``x`` at ``indices`` (ints, negative from the end) along
    ``axis`` (None: of the ravel, which the Array API allows for a 1-D ``x`` only and numpy for any).

    >>> import numpy as np
    >>> take(np.array([5.0, 0.0, 7.0]), np.array([-1, 0])).todense().tolist()
    [7.0, 5.0]
    """
    t, how = operand(x, "take")
    idx, _ = operand(indices, "take's indices")
    if axis is None:
        t, ax = (t if t.ndim == 1 else reshape_tensor(t, (math.prod(t.shape),))), 0
    else:
        if t.ndim == 0:
            raise ShapeError("take: a 0-d array has no axis to take along")
        (ax,) = build.normalize_axes("take", axis, t.ndim)
    return result(take_tensor(t, idx.to_numpy(), ax), how)


def take_along_axis(x, indices, /, *, axis=-1) -> Array:
    """The Array API's (and numpy's) ``take_along_axis``: ``out[..., p, ...] = x[..., indices[..., p,
    ...], ...]`` along ``axis`` (negative positions from the end), ``indices`` of ``x``'s rank and
    broadcast against it on the other axes; ``axis=None`` takes from the ravel (1-D ``indices``). A
    sparse ``x`` is read through its stored entries (each lane's sorted positions searched), its
    result sparse in its kind of format storing only what it takes of them, the rest its fill.

    >>> import numpy as np
    >>> a = np.array([[10.0, 0.0, 30.0], [0.0, 50.0, 0.0]])
    >>> take_along_axis(a, np.array([[2, 0], [-2, 0]]), axis=1).todense().tolist()
    [[30.0, 10.0], [50.0, 0.0]]
    """
    t, how = operand(x, "take_along_axis")
    pick = np.asarray(operand(indices, "take_along_axis's indices")[0].to_numpy())
    if axis is None:
        if pick.ndim != 1:
            raise ShapeError(f"take_along_axis: with axis=None the indices are 1-D, not of shape {pick.shape}")
        t, ax = (t if t.ndim == 1 else reshape_tensor(t, (math.prod(t.shape),))), 0
    else:
        if t.ndim == 0:
            raise ShapeError("take_along_axis: a 0-d array has no axis to take along")
        (ax,) = build.normalize_axes("take_along_axis", axis, t.ndim)
    if pick.ndim != t.ndim:
        raise ShapeError(f"take_along_axis: indices of shape {pick.shape} for an array of shape {t.shape}: "
                         f"they need as many axes ({t.ndim})")
    pos = _positions("take_along_axis", pick, t.shape[ax], ax)
    others = [tuple(1 if d == ax else n for d, n in enumerate(s)) for s in (t.shape, pick.shape)]
    try:
        outer = np.broadcast_shapes(*others)
    except ValueError:
        raise ShapeError(f"take_along_axis: indices of shape {pick.shape} do not broadcast against the array's "
                         f"shape {t.shape} on the axes other than {ax}") from None
    shape = outer[:ax] + (pick.shape[ax],) + outer[ax + 1:]
    if t.format.is_dense:
        taken = np.take_along_axis(t.to_numpy(), pos, ax)
        return result(Tensor.from_numpy(np.array(taken, order="C"), "dense", fill=t.fill, dtype=t.dtype.name), how)
    return result(_taken_along(t, np.broadcast_to(pos, shape), ax), how)


def _taken_along(t: Tensor, pos: np.ndarray, ax: int) -> Tensor:
    """``t``'s stored entries at ``pos`` (the result's shape, positions along ``ax``): each result lane
    reads the operand's lane it broadcasts from, its sorted positions searched for the wanted ones."""
    ls = lanes(t, ax)
    wanted = np.moveaxis(pos, ax, -1)
    out_outer = wanted.shape[:-1]
    # (the operand's lane of each result lane: an axis of extent 1 broadcasts its one coordinate)
    grid = np.indices(out_outer, dtype=np.int64).reshape(len(out_outer), math.prod(out_outer))
    mine = [g if n != 1 else np.zeros_like(g) for g, n in zip(grid, ls.outer)]
    lane = np.ravel_multi_index(tuple(mine), ls.outer) if ls.outer else np.zeros(grid.shape[1], np.int64)
    key = (lane[:, None] * ls.n + wanted.reshape(len(lane), wanted.shape[-1])).reshape(-1)
    stored = ls.lane * ls.n + ls.pos
    at = np.minimum(np.searchsorted(stored, key), max(len(stored) - 1, 0))
    hit = np.flatnonzero(stored[at] == key) if len(stored) else np.zeros(0, np.int64)
    coords = np.array(np.unravel_index(hit, wanted.shape), dtype=np.int64).reshape(wanted.ndim, len(hit))
    coords = np.concatenate([coords[:ax], coords[-1:], coords[ax:-1]])   # (the axis back in its place)
    return _moved(t, coords, ls.vals[at[hit]], pos.shape)


def repeat_by_counts(x, repeats, axis: int) -> Array:
    """``x`` (an Array) with each entry along ``axis`` repeated by its count in ``repeats`` (one
    count per position, or one for all): each stored entry at position p goes to the ``repeats[p]``
    positions after the counts before it."""
    t, how = operand(x, "repeat by an array of counts")
    counts, _ = operand(repeats, "repeat's counts")
    c = counts.to_numpy().reshape(-1)
    n = t.shape[axis]
    if c.dtype.kind not in "iu":
        raise DTypeError(f"repeat: repeats must be integers, not {c.dtype.name}")
    if len(c) == 1:
        c = np.repeat(c, n)
    if len(c) != n:
        raise ShapeError(f"repeat: {len(c)} counts for axis {axis} of extent {n} (shape {t.shape})")
    if (c < 0).any():
        raise ShapeError(f"repeat: a count is negative ({c[c < 0][0]})")
    c = c.astype(np.int64)
    shape = t.shape[:axis] + (int(c.sum()),) + t.shape[axis + 1:]
    if t.format.is_dense:
        out = Tensor.from_numpy(np.ascontiguousarray(np.repeat(t.to_numpy(), c, axis=axis)), "dense", fill=t.fill,
                                dtype=t.dtype.name)
        return result(out, how)
    coords, vals = t.to_coords()
    times = c[coords[axis]]
    entry = np.repeat(np.arange(len(vals)), times)
    copy = np.arange(len(entry)) - np.repeat(np.cumsum(times) - times, times)
    new = coords[:, entry].copy()
    new[axis] = (np.cumsum(c) - c)[coords[axis, entry]] + copy
    return result(_moved(t, new, vals[entry], shape), how)

__all__ = ["take", "take_along_axis", "take_tensor", "repeat_by_counts"]
