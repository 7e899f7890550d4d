"""The ``fill-write`` rewrite: ``C[...] = fill`` into a sparse output is a no-op.

A sparse output's every slot starts at its fill (its declare), and a write of the fill into a
level that stores only some coordinates stores nothing, so the lowering drops it: a loop that
only writes fills into such an output then simplifies to nothing. A dense-addressed output keeps
the write (a slot may be overwritten with the fill). The lowerer adds :data:`FILL_WRITE` to the
simplifier's rules.

>>> FILL_WRITE.name
'fill-write'
"""

from __future__ import annotations

from ..rewrite import Rule
from .fibers import SubFiber
from .program import MISSING, Assign, Block, Literal
from .simplify import same_value


def _fill_write(t):
    """``C[...] = fill`` into a sparse output (every slot starts at its fill) is a no-op."""
    if not (isinstance(t, Assign) and t.op is None and isinstance(t.rhs, Literal)):
        return None
    if isinstance(t.lhs, Literal):
        return Block(())   # (a write into a fill the output ignores: a scatter's count, compiler.looplets.scatter)
    tns = t.lhs.tns
    info = tns.tensor if isinstance(tns, SubFiber) else getattr(tns, "owner", None)
    if info is None or all(l.slot_per_coordinate for l in info.levels):
        return None  # dense-addressed storage: a slot may be overwritten with the fill
    if t.rhs.value is not MISSING and same_value(t.rhs.value, info.fill):
        return Block(())
    return None


FILL_WRITE = Rule("fill-write", _fill_write, (Assign,))
