"""Shape operators computed on stored entries: the seam for index notation's shape operators.

The array front end emits each shape operator as index notation's node (the method of
:class:`compiler.array.fuse.Emitter` named below), so the expression is one kernel; where the
notation cannot say it, or both strategies refuse the statement, it computes the operator here, on
the operands' data, one function per operator: a sparse operand's stored entries are moved by
coordinate arithmetic (never densified), a dense one's array by numpy (the trace's ``materialize``
step says which and why). The methods are ``emit_reshape``, ``emit_concat``, ``emit_stack``,
``emit_index`` and ``emit_broadcast``:

=====================  ==============================  =========================================
function               array operators                 shape-operator node it becomes
=====================  ==============================  =========================================
``reshape_tensor``     ``reshape``                     ``Collapse`` then ``Split``
``concat_tensors``     ``concat``/``concatenate``      ``Concat``
``stack_tensors``      ``stack``                       ``Concat`` of ``Broadcast`` (new axis)
``index_tensor``       ``a[2]``, ``a[1:9:2, ::-1]``    ``Slice`` (an int: a slice of extent 1,
                                                       its axis dropped)
``squeeze_tensor``     broadcasting an extent-1 axis   ``Broadcast``
=====================  ==============================  =========================================

>>> import numpy as np
>>> from compiler.tensor import Tensor
>>> A = Tensor.from_numpy(np.array([[0, 1.0, 0], [2.0, 0, 3.0]]), "csr")
>>> index_tensor(A, ((0, 2, 1), (2, -1, -1))).to_numpy().tolist()
[[0.0, 1.0, 0.0], [3.0, 0.0, 2.0]]
>>> reshape_tensor(A, (3, 2)).format.shorthand, reshape_tensor(A, (3, 2)).nnz
('csr', 3)
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import cast_values
from ..errors import ShapeError
from ..tensor import Tensor


def _is_dense(t: Tensor) -> bool:
    return t.format.is_dense


def sparse_format_like(like: Tensor, ndim: int) -> str:
    """The format of a shape operator's sparse result: the operand's own for a matrix kept a matrix
    (csr, csc, coo, dcsr), else a sparse vector, CSR or COO by rank."""
    if ndim == 2 and like.ndim == 2 and like.format.shorthand in ("csr", "csc", "coo", "dcsr"):
        return like.format.shorthand
    return {1: "sparse_vector", 2: "csr"}.get(ndim, "coo")


def _result(like: Tensor, coords, vals, shape, dtype=None) -> Tensor:
    dtype = like.dtype if dtype is None else dtype
    if len(shape) == 0:
        value = vals[0] if len(vals) else like.fill
        return Tensor.from_numpy(np.asarray(value, dtype=dtype), "dense", fill=like.fill)
    return Tensor.from_coords(np.asarray(coords, dtype=np.int64).reshape(len(shape), len(vals)), vals, shape,
                              format=sparse_format_like(like, len(shape)), fill=like.fill, dtype=dtype)


def _dense(like: Tensor, arr: np.ndarray) -> Tensor:
    # (in arr's dtype: a concat's or stack's is its operands' promoted one, not the first operand's)
    return Tensor.from_numpy(np.array(arr, order="C"), "dense", fill=np.asarray(like.fill).astype(arr.dtype).item(),
                             dtype=arr.dtype)


def reshape_tensor(t: Tensor, shape: tuple) -> Tensor:
    """``t`` reshaped row-major to ``shape`` (the same number of entries): each stored entry's
    coordinates are linearized in ``t``'s shape and split in ``shape``."""
    if _is_dense(t):
        return _dense(t, t.to_numpy().reshape(shape))
    if math.prod(t.shape) > np.iinfo(np.int64).max:
        raise ShapeError(f"reshape: shape {t.shape} has more entries than an int64 counts")
    coords, vals = t.to_coords()
    linear = np.ravel_multi_index(tuple(coords), t.shape) if t.ndim else np.zeros(len(vals), np.int64)
    new = np.unravel_index(linear, shape) if shape else ()
    return _result(t, np.array(new, dtype=np.int64).reshape(len(shape), len(vals)), vals, shape)


def _same_fill(ts: list, dtype, lead: Tensor) -> list:
    """``ts`` with the fill of ``lead`` (converted through a dense array only for an operand of
    another fill, whose unstored entries must then be stored)."""
    f0 = np.asarray(lead.fill, dtype=dtype)
    out = []
    for t in ts:
        same = np.asarray(t.fill, dtype=dtype)
        if not (same == f0 or (np.isnan(same) and np.isnan(f0) if dtype.kind == "f" else False)):
            t = Tensor.from_numpy(t.to_numpy().astype(dtype), sparse_format_like(t, t.ndim), fill=f0.item())
        out.append(t)
    return out


def fill_source(parts, axis: int):
    """The operand of a concatenation of ``parts`` (tensors or array nodes) along ``axis`` whose fill it takes: its
    first non-empty one (an empty one's fill is no value of the result), as the notation's concat's
    (:meth:`compiler.notation.shape.Concat.fill_operand`).

    >>> import numpy as np
    >>> empty, full = Tensor.from_numpy(np.zeros((0, 2)), "csr", fill=1.0), Tensor.from_numpy(np.ones((1, 2)), "csr")
    >>> fill_source([empty, full], 0) is full, fill_source([empty, empty], 0) is empty
    (True, True)
    """
    return next((p for p in parts if p.shape[axis]), parts[0])


def concat_tensors(ts, axis: int) -> Tensor:
    """``ts`` joined along ``axis``: each operand's entries shifted by the extents before it."""
    ts = list(ts)
    dtype = np.result_type(*(t.dtype for t in ts))
    lead = fill_source(ts, axis)
    if all(_is_dense(t) for t in ts):
        return _dense(lead, np.concatenate([t.to_numpy().astype(dtype) for t in ts], axis=axis))
    ts = _same_fill(ts, dtype, lead)
    shape = list(ts[0].shape)
    shape[axis] = sum(t.shape[axis] for t in ts)
    all_coords, all_vals, offset = [], [], 0
    for t in ts:
        coords, vals = t.to_coords()
        coords[axis] += offset
        offset += t.shape[axis]
        all_coords.append(coords)
        all_vals.append(cast_values(vals, dtype, "concat"))
    return _result(lead, np.concatenate(all_coords, axis=1), np.concatenate(all_vals), tuple(shape), dtype)


def stack_tensors(ts, axis: int) -> Tensor:
    """``ts`` (one shape) stacked along a new axis ``axis``: operand k's entries get coordinate k."""
    ts = list(ts)
    dtype = np.result_type(*(t.dtype for t in ts))
    if all(_is_dense(t) for t in ts):
        return _dense(ts[0], np.stack([t.to_numpy().astype(dtype) for t in ts], axis=axis))
    ts = _same_fill(ts, dtype, ts[0])
    all_coords, all_vals = [], []
    for k, t in enumerate(ts):
        coords, vals = t.to_coords()
        all_coords.append(np.insert(coords, axis, np.full(len(vals), k, dtype=coords.dtype), axis=0))
        all_vals.append(cast_values(vals, dtype, "stack"))
    shape = ts[0].shape[:axis] + (len(ts),) + ts[0].shape[axis:]
    return _result(ts[0], np.concatenate(all_coords, axis=1), np.concatenate(all_vals), shape, dtype)


def index_tensor(t: Tensor, items: tuple) -> Tensor:
    """``t`` indexed per axis by ``items``: an int selects that coordinate (the axis is dropped), a
    ``(start, stop, step)`` triple as ``slice.indices`` gives keeps the entries on the strided range
    (a negative step reverses it) and renumbers them 0, 1, ..."""
    if _is_dense(t):
        # (an empty range's start may be -1, which numpy reads as the last entry)
        key = tuple(it if isinstance(it, int) else slice(0, 0) if not len(range(*it)) else
                    slice(it[0], None if it[1] < 0 else it[1], it[2]) for it in items)
        return _dense(t, t.to_numpy()[key])
    coords, vals = t.to_coords()
    keep = np.ones(len(vals), dtype=bool)
    new = []
    for c, it in zip(coords, items):
        if isinstance(it, int):
            keep &= c == it
            continue
        start, stop, step = it
        if step > 0:
            keep &= (c >= start) & (c < stop) & ((c - start) % step == 0)
            new.append((c - start) // step)
        else:
            keep &= (c <= start) & (c > stop) & ((start - c) % -step == 0)
            new.append((start - c) // -step)
    shape = tuple(len(range(*it)) for it in items if not isinstance(it, int))
    kept = np.array([c[keep] for c in new], dtype=np.int64).reshape(len(new), int(keep.sum()))
    return _result(t, kept, vals[keep], shape)


def squeeze_tensor(t: Tensor, axes: tuple) -> Tensor:
    """``t`` without its extent-1 axes ``axes`` (their one coordinate 0 read), so an access can leave
    them out where the expression broadcasts them."""
    return index_tensor(t, tuple(0 if a in axes else (0, n, 1) for a, n in enumerate(t.shape)))


#: the function that computes each kind of :class:`~compiler.array.nodes.ShapeOp`
MATERIALIZE = {
    "reshape": lambda ts, params: reshape_tensor(ts[0], params[0]),
    "concat": lambda ts, params: concat_tensors(ts, params[0]),
    "stack": lambda ts, params: stack_tensors(ts, params[0]),
    "index": lambda ts, params: index_tensor(ts[0], params[0]),
}

__all__ = ["fill_source", "sparse_format_like", "reshape_tensor", "concat_tensors", "stack_tensors",
           "index_tensor", "squeeze_tensor", "MATERIALIZE"]
