"""What the functions whose result depends on the values (``argmax``, ``sort``, ``unique_values``, ...) read:
an operand's stored entries grouped into lanes, the 1-D fibers along one axis, with the fill standing for
every position a lane does not store. Nothing of the operand's whole size is built from a sparse one.

An operand that is an :class:`~compiler.array.lazy.Array` expression is computed first (by its own kernel);
a Tensor, numpy, scipy.sparse or pydata/sparse one is read as it is. The result is a new leaf whose
``origin`` says both, so the trace of any expression over it has a ``materialize`` step saying so.

>>> import numpy as np
>>> from compiler.tensor import Tensor
>>> t = Tensor.from_numpy(np.array([[0, 5.0, 0], [7.0, 0, 0]]), "csr")
>>> ls = lanes(t, 1)
>>> ls.lane.tolist(), ls.pos.tolist(), ls.vals.tolist(), ls.count, ls.n
([0, 1], [1, 0], [5.0, 7.0], 2, 3)
>>> first_unstored(ls).tolist()   # (row 0 stores column 1, not column 0; row 1 stores column 0)
[0, 1]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..interop import to_tensor
from ..tensor import Tensor
from .lazy import Array
from .nodes import Leaf, describe


def operand(x, what: str) -> tuple[Tensor, str]:
    """``x`` as a Tensor, and how it was had: an Array expression computed by its own kernel, any
    other operand (a stored Array, a Tensor, numpy, scipy.sparse, pydata/sparse) read as it is."""
    if isinstance(x, Array):
        if isinstance(x.node, Leaf):
            return x.node.tensor, f"{what} read the stored entries of {describe(x.node)}"
        kernel = x.lower()
        return kernel(**kernel.arguments), (f"{what} computed its operand by its own kernel "
                                             f"({kernel.program}), then read its stored entries")
    return to_tensor(x), f"{what} read the stored entries of its {type(x).__name__} operand"


def result(tensor: Tensor, how: str) -> Array:
    """``tensor`` as an Array whose trace says ``how`` it was computed."""
    return Array(Leaf(tensor, origin=f"{how} (compiler.array, before the expression around it)"))


def dense(values: np.ndarray) -> Tensor:
    """A dense result (its fill 0, as a numpy array's)."""
    values = np.asarray(values, order="C")   # (not ascontiguousarray, which makes a 0-d array 1-d)
    return Tensor.from_numpy(values, "dense", dtype=values.dtype.name)


@dataclass(frozen=True)
class Lanes:
    """A tensor's stored entries along one ``axis`` (None: the ravel, one lane): each entry's ``lane``
    (the other coordinates raveled row-major, in ``outer``), ``pos`` along the axis and value, sorted
    by lane then position; ``count`` lanes of extent ``n``, every position not stored holding ``fill``."""

    lane: np.ndarray
    pos: np.ndarray
    vals: np.ndarray
    count: int
    n: int
    outer: tuple
    fill: Any
    dtype: np.dtype


def lanes(t: Tensor, axis: int | None) -> Lanes:
    """``t``'s stored entries as :class:`Lanes` along ``axis`` (an axis in range, or None)."""
    coords, vals = t.to_coords()
    if axis is None or t.ndim == 0:
        pos = np.ravel_multi_index(tuple(coords), t.shape) if t.ndim else np.zeros(len(vals), np.int64)
        lane, outer, n = np.zeros(len(vals), np.int64), (), math.prod(t.shape)
    else:
        outer = t.shape[:axis] + t.shape[axis + 1:]
        rest = np.delete(coords, axis, axis=0)
        lane = np.ravel_multi_index(tuple(rest), outer) if outer else np.zeros(len(vals), np.int64)
        pos, n = coords[axis], t.shape[axis]
    lane, pos = lane.astype(np.int64), pos.astype(np.int64)
    # (one key, lane then position: a CSR's rows come sorted already, and one key sorts faster than two)
    key = lane * n + pos
    if len(key) > 1 and not (key[1:] > key[:-1]).all():
        order = np.argsort(key, kind="stable")
        lane, pos, vals = lane[order], pos[order], vals[order]
    return Lanes(lane, pos, vals, math.prod(outer), n, outer, t.fill, t.dtype)


def lane_starts(ls: Lanes) -> np.ndarray:
    """Where each lane's entries start (``count + 1`` offsets, as a CSR's row pointers)."""
    return np.searchsorted(ls.lane, np.arange(ls.count + 1))


def stored_counts(ls: Lanes) -> np.ndarray:
    """How many entries each lane stores."""
    return np.diff(lane_starts(ls))


def first_unstored(ls: Lanes) -> np.ndarray:
    """Each lane's first position it does not store (``n`` where it stores them all): its positions
    are sorted and distinct, so the entries before the first gap are those at their own rank."""
    rank = np.arange(len(ls.pos)) - lane_starts(ls)[ls.lane]
    return np.bincount(ls.lane[ls.pos == rank], minlength=ls.count).astype(np.int64)


def ranks(vals: np.ndarray, fill) -> tuple[np.ndarray, int]:
    """Each value's rank in numpy's sort order (NaN after every number, all NaNs one rank; -0.0 and
    0.0 one), and the fill's rank among them."""
    both = np.concatenate([vals, np.asarray([fill], dtype=vals.dtype)])
    _, inverse = np.unique(both, return_inverse=True)
    return inverse[:-1].astype(np.int64), int(inverse[-1])


__all__ = ["operand", "result", "dense", "Lanes", "lanes", "lane_starts", "stored_counts", "first_unstored",
           "ranks"]
