"""Inputs a kernel reads from arrays another owner may write, and the checks it makes of them itself.

A kernel lowered for a tensor over a scipy matrix's buffers (or any tensor whose index arrays are
writeable) is called on arrays their owner may have written since: each call checks them again
(:mod:`compiler.recheck`). Where the kernel's work does not depend on the order of a fiber's
coordinates, it checks each coordinate as it reads it instead
(:mod:`compiler.imperative.owned_coordinates`), and a call checks the tensor's positions alone, a pass
over its ``pos`` arrays rather than over every coordinate. The lowering records the checks as its
``owned-coordinates`` step.

>>> import numpy as np, scipy.sparse as sp
>>> from compiler import Tensor
>>> m = sp.csr_matrix(np.eye(3))
>>> sorted(owned_names({"A": Tensor.from_scipy(m), "B": Tensor.from_scipy(m, copy=True), "x": np.ones(3)}))
['A']
"""

from __future__ import annotations

from dataclasses import replace

from . import sealing
from .binding import array_name
from .imperative.ir_dot import ir_artifact
from .imperative.owned_coordinates import OwnedCoordinates, guard_coordinates
from .interop import is_foreign
from .levels import flatten
from .tensor import Tensor


def owned_names(tensors: dict) -> frozenset:
    """The names of ``tensors`` given as arrays another owner may write: a scipy or pydata array, or a Tensor
    whose index arrays are writeable (not sealed: :mod:`compiler.sealing`)."""
    return frozenset(name for name, value in tensors.items()
                     if is_foreign(value) or isinstance(value, Tensor) and value.levels
                     and not sealing.sealed(sealing.index_writers(value)))


def coordinate_arrays(name: str, fmt) -> list | None:
    """The :class:`OwnedCoordinates` of an input ``name`` of format ``fmt``: each level's array of stored
    coordinates with the extent its entries lie in; None where a level keeps its coordinates otherwise (several
    arrays of them, a level of several modes), which a call checks whole.

    >>> from compiler.format import parse_format
    >>> [(a.buffer, a.extent, a.mode) for a in coordinate_arrays("A", parse_format("csc"))]
    [('A1_idx', 'A1_size', 0)]
    >>> coordinate_arrays("A", parse_format("coo", ndim=2)) is None
    True
    """
    levels, _ = flatten(fmt.root)
    out, mode = [], 0
    for k, lvl in enumerate(levels):
        coords = lvl.stored_coordinates()
        if lvl.nmodes != 1 or len(coords) > 1:
            return None
        for array in coords:
            out.append(OwnedCoordinates(array_name(name, k, array), array_name(name, mode, "size"), name,
                                        fmt.mode_order[mode], array_name(name, k, lvl.starts_array)))
        mode += lvl.nmodes
    return out


def guard_owned(lowered, formats: dict, owned: frozenset, trace):
    """``(lowered, names)``: ``lowered`` with its kernel checking the coordinates it reads of the inputs
    ``owned`` where it may (:func:`~compiler.imperative.owned_coordinates.guard_coordinates`), recorded in
    ``trace``, and the names of the inputs it checks so."""
    arrays = []
    outputs = {out.output for out in lowered.outputs or (lowered,)}
    for name in sorted(owned - outputs):   # (an output's arrays the kernel writes: checked whole)
        found = coordinate_arrays(name, formats[name]) if name in formats and name not in dict(lowered.conversions) \
            else None
        arrays += found or []
    fn = lowered.function
    after, guarded = guard_coordinates(fn, arrays)
    if not guarded:
        return lowered, frozenset()
    names = ", ".join(sorted(guarded))
    note = (f"{names}: read in place from arrays their owner may write between calls, and the kernel's work does "
            f"not depend on the order of a fiber's coordinates: " +
            ("each coordinate is checked where it is read, and a call checks the positions alone" if after is not fn
             else "it reads none of them, and a call checks the positions alone"))
    trace.record("owned-coordinates", before=fn, after=after, artifacts=[ir_artifact(after)], note=note,
                 data={"tensors": sorted(guarded)})
    return replace(lowered, function=after), guarded


__all__ = ["coordinate_arrays", "guard_owned", "owned_names"]
