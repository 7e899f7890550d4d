"""The ``fill-write`` rewrite: ``C[...] = fill`` into a sparse output is a no-op.

A sparse output's every slot starts at its fill (its declare), and a write of the fill into a
level that stores only some coordinates stores nothing, so the lowering drops it: a loop that
only writes fills into such an output then simplifies to nothing. A dense-addressed output keeps
the write (a slot may be overwritten with the fill), and so does a write an earlier one may have
stored at (``Assign.overwrites``, :mod:`compiler.looplets.overwrites`): its fill replaces that
value. The lowerer adds :data:`FILL_WRITE` to the simplifier's rules.

>>> FILL_WRITE.name
'fill-write'
"""

from __future__ import annotations

import numpy as np

from ..rewrite import Rule
from .fibers import SubFiber
from .program import MISSING, Assign, Block, Literal
from .simplify import same_literal


def drops_fill_writes(info) -> bool:
    """Whether output ``info`` has a level that stores only some coordinates, so a write of its
    fill where nothing was stored stores nothing (a Dense or byte map level keeps every slot).

    >>> from compiler.format import parse_format
    >>> from compiler.looplets.fibers import TensorInfo
    >>> [drops_fill_writes(TensorInfo("C", parse_format(f), "output")) for f in ("csr", "dense")]
    [True, False]
    """
    return not all(l.slot_per_coordinate for l in info.levels)


def _fill_write(t):
    """``C[...] = fill`` into a sparse output (every slot starts at its fill) is a no-op, unless an
    earlier write may have stored at its coordinate."""
    if not (isinstance(t, Assign) and t.op is None and isinstance(t.rhs, Literal)):
        return None
    if isinstance(t.lhs, Literal):
        return Block(())   # (a write into a fill the output ignores: a scatter's count, compiler.looplets.scatter)
    tns = t.lhs.tns
    info = tns.tensor if isinstance(tns, SubFiber) else getattr(tns, "owner", None)
    if info is None or not drops_fill_writes(info) or t.overwrites:
        return None  # dense-addressed storage, or a value stored before: the fill replaces it
    if t.rhs.value is not MISSING and (same_literal(t.rhs.value, info.fill) or _stored_as_fill(t.rhs.value, info)):
        return Block(())
    return None


def _stored_as_fill(value, info) -> bool:
    """Whether ``value`` of another kind than the fill is stored as the fill: ``false`` into a float64 output
    of fill 0.0 is 0.0 (a bool expression into ``C="csr"``, whose values are float64 by default)."""
    dtype = np.dtype(info.format.dtype)
    if isinstance(value, bool) == isinstance(info.fill, bool):
        return False
    if dtype.kind in "fcb" or isinstance(value, bool) and dtype.kind in "iu":   # (not a float into an integer: C's
        return same_literal(dtype.type(value).item(), info.fill)                  # conversion may be undefined)
    return False


FILL_WRITE = Rule("fill-write", _fill_write, (Assign,))
