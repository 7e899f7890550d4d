"""Indexing by a boolean mask and assignment into an array: ``x[mask]`` and ``x[key] = value``.

A mask's result has as many entries as the mask holds True, known only from its values: the mask is
computed, and ``x[mask]`` is ``take`` of the positions it holds (on the stored entries, so a sparse ``x``
stays sparse). An assignment makes the array a new expression, ``where(selected, value placed, x)``,
lazy as any other (the Array API leaves a view's sharing of an assignment to the library: an array made
from ``x`` before keeps ``x``'s values then, and a numpy array ``x`` was made from is not written).

>>> import numpy as np
>>> from compiler import array as xp
>>> x = xp.asarray(np.arange(6.0).reshape(2, 3))
>>> x[x > 2.5].todense().tolist()
[3.0, 4.0, 5.0]
>>> x[:, ::2] = xp.asarray(np.array([[-1.0, -2.0]]))
>>> x[1, 1] = 9
>>> x.todense().tolist()
[[-1.0, 1.0, -2.0], [-1.0, 9.0, -2.0]]
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DTypeError, ShapeError
from . import build
from .indexing import take
from .lazy import (Array, asarray, astype, broadcast_to, expand_dims, install_assignment, is_mask, logical_and,
                   reshape, where)


def _mask_of(x: Array, key) -> np.ndarray:
    """The mask ``key`` computed, checked against ``x``'s leading axes."""
    mask = np.asarray(key.compute().to_numpy() if isinstance(key, Array) else key, dtype=bool)
    if mask.ndim > x.ndim or mask.shape != x.shape[:mask.ndim]:
        raise IndexError(f"a boolean index of shape {mask.shape} does not match the leading axes of the array's "
                         f"shape {x.shape}")
    return mask


def masked(x: Array, key) -> Array:
    """``x[mask]``: the entries (or sub-arrays, for a mask of fewer axes) where ``mask`` holds, in row-major
    order, along a first axis of their count; a 0-d mask adds an axis of 1 (True) or 0 (False) entries."""
    mask = _mask_of(x, key)
    rest = x.shape[mask.ndim:]
    flat = reshape(x, (math.prod(mask.shape),) + rest) if mask.ndim else expand_dims(x, axis=0)
    return take(flat, np.flatnonzero(mask), axis=0)


def _value(x: Array, value, shape: tuple):
    """``value`` as the assignment writes it: a Python or numpy scalar as it is, cast as numpy casts it into
    ``x``'s dtype; an array broadcast to ``shape`` (the region written) and converted to ``x``'s dtype."""
    if isinstance(value, (bool, int, float, complex, np.generic)):
        held = np.empty((), dtype=x.dtype)
        try:   # (numpy's own assignment of a scalar: 300 into int8, NaN into an int, 1j into a float are refused)
            held[()] = value
        except (TypeError, ValueError, OverflowError) as e:
            raise DTypeError(f"cannot assign {value!r} into an array of dtype {x.dtype.name}: {e}") from None
        return held[()]
    v = asarray(value)
    try:
        fits = len(v.shape) <= len(shape) and build.broadcast_shape("assignment", [v.shape, shape]) == shape
    except ShapeError:
        fits = False
    if not fits:
        raise ShapeError(f"could not broadcast a value of shape {v.shape} into the region of shape {shape} it "
                         f"is assigned to")
    return astype(broadcast_to(v, shape), x.dtype)


def assigned(x: Array, key, value) -> Array:
    """``x`` with ``x[key]`` replaced by ``value`` (a scalar, or an array broadcast to ``x[key]``'s shape):
    ``key`` ints, slices and ``...``, or a boolean mask."""
    if is_mask(key):
        return _assigned_masked(x, key, value)
    items, new_axes = build.basic_key(x.shape, key)
    if new_axes:
        raise IndexError("None adds an axis to read, not one to assign to")
    region = tuple(len(range(*it)) for it in items if isinstance(it, tuple))
    v = _value(x, value, region)
    if 0 in region:
        return x
    # (the positions written: one bool vector per axis, and-ed as they broadcast, fused into the kernel)
    selected = None
    for axis, it in enumerate(items):
        along = np.zeros(x.shape[axis], dtype=bool)
        along[it if isinstance(it, int) else np.arange(*it)] = True   # (a slice's stop of -1 is no slice's)
        vector = reshape(asarray(along), tuple(-1 if a == axis else 1 for a in range(x.ndim)))
        selected = vector if selected is None else logical_and(selected, vector)
    if selected is None:   # (a 0-d x: its one entry)
        return asarray(v, dtype=x.dtype) if isinstance(v, Array) else asarray(np.asarray(v, dtype=x.dtype))
    if not isinstance(v, Array):
        return where(selected, v, x)
    # (the value at each written position: its own position taken along each axis, an int's axis added back)
    placed = v
    for axis, it in enumerate(items):
        if isinstance(it, int):
            placed = expand_dims(placed, axis=axis)
            continue
        start, _, step = it
        at = np.zeros(x.shape[axis], dtype=np.int64)
        written = np.arange(*it)
        at[written] = (written - start) // step
        placed = take(placed, at, axis=axis)
    return where(selected, broadcast_to(placed, x.shape), x)


def _assigned_masked(x: Array, key, value) -> Array:
    """``x`` with ``x[mask]`` replaced: a scalar everywhere the mask holds, or an array of ``x[mask]``'s shape
    (broadcast to it) entry by entry in row-major order."""
    mask = _mask_of(x, key)
    rest = x.shape[mask.ndim:]
    count = int(mask.sum())
    v = _value(x, value, (count,) + rest)
    if count == 0:
        return x
    selected = reshape(asarray(mask), mask.shape + (1,) * len(rest))
    if not isinstance(v, Array):
        return where(selected, v, x)
    at = np.zeros(mask.shape, dtype=np.int64)
    at[mask] = np.arange(count)
    placed = reshape(take(v, at.reshape(-1), axis=0), x.shape)
    return where(selected, placed, x)


install_assignment(masked, assigned)

__all__ = ["masked", "assigned"]
