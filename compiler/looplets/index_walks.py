"""Index expressions of loops, and the notation's nodes in a reduction's scope: what the looplets'
shape-operator planner (:mod:`compiler.looplets.shapes`) reads of the loops it made.

>>> from compiler.looplets.program import Call, Index, Literal
>>> e = Call("window", (Index("p"), Literal(1), Literal(3)))
>>> [str(i) for i in indices_in(e)], str(substitute(e, Index("p"), Index("q")))
(['p'], 'window(q, 1, 3)')
>>> fresh_temp({"t", "i"}, {"t2"})
't3'
"""

from __future__ import annotations

from ..notation import ast as N
from .program import Call, Index


def indices_in(e):
    """The loop indices an index expression reads."""
    if isinstance(e, Index):
        yield e
    elif isinstance(e, Call):
        for a in e.args:
            yield from indices_in(a)


def substitute(e, old: Index, new):
    """The index expression ``e`` with the loop ``old`` read as ``new``."""
    if e == old:
        return new
    if isinstance(e, Call):
        return Call(e.op, tuple(substitute(a, old, new) for a in e.args))
    return e


def scope_walk(e, indices: set):
    """The nodes of ``e`` that may make one of ``indices``: not inside a reduction that binds it again."""
    if not indices:
        return
    yield e
    if isinstance(e, N.Reduce):
        indices = indices - set(e.indices)
    for c in e.children():
        yield from scope_walk(c, indices)


def fresh_temp(taken: set, tensors: set, base: str = "t") -> str:
    """A name for a temporary that no index or tensor of the statement has (``t``, ``t2``...)."""
    name, k = base, 1
    while name in taken or name in tensors:
        k += 1
        name = f"{base}{k}"
    taken.add(name)
    return name


__all__ = ["fresh_temp", "indices_in", "scope_walk", "substitute"]
