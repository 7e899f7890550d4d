"""Index expressions of loops, and the notation's nodes in a reduction's scope: what the looplets'
shape-operator planner (:mod:`compiler.looplets.loop_plan`, :mod:`compiler.looplets.shape_reads`) reads of
the loops it made.

>>> from compiler.looplets.program import Call, Index, Literal
>>> e = Call("window", (Index("p"), Literal(1), Literal(3)))
>>> [str(i) for i in indices_in(e)], str(substitute(e, Index("p"), Index("q")))
(['p'], 'window(q, 1, 3)')
>>> fresh_temp({"t", "i"}, {"t2"})
't3'
"""

from __future__ import annotations

from ..algebra import lookup
from ..notation import ast as N
from .program import Call, Index

_ADD, _SUB = lookup("+"), lookup("-")


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


def read_permissively(at) -> bool:
    """Whether the index ``at`` is read permissively (``~l``: fill outside the operand)."""
    return isinstance(at, Call) and at.op == "permit"


def walks_on(at, depth: dict, one_step: set) -> bool:
    """Whether the index ``at`` is its innermost loop plus terms of outer ones (``q + p·J - |A|``): a
    window of the raveled operand moving on with that loop, walked; not a loop of one step (a
    strided slice's, each entry sought) nor a multiple of the loop (a stride)."""
    loops = list(indices_in(at))
    if not loops or any(x.name not in depth for x in loops):
        return False
    inner = max(loops, key=lambda x: depth[x.name])
    if inner.name in one_step or sum(x == inner for x in loops) != 1:
        return False

    def plain(e) -> bool:     # (inner appears as a summand, not scaled)
        if e == inner:
            return True
        return isinstance(e, Call) and e.op in (_ADD, _SUB) and (plain(e.args[0]) or e.op == _ADD and plain(e.args[1]))
    return plain(at)


def affine(at):
    """An index as an expression of loops: a window's loop plus its start (``window(p, 1, 3)`` is
    ``p + 1``), else ``at`` itself."""
    if isinstance(at, Call) and at.op == "window":
        return Call(_ADD, (at.args[0], at.args[1]))
    return at


def part_step(at, part_steps: dict):
    """``(one-step loop, part's loop)`` when ``at`` is ``t + part``, a strided part's index, else None."""
    for part, t in part_steps.items():
        if at == Call(_ADD, (Index(t), Index(part))):
            return t, part
    return None


__all__ = ["affine", "fresh_temp", "indices_in", "part_step", "read_permissively", "scope_walk", "substitute",
           "walks_on"]
