"""Declarations where their local is first set: ``int64_t p; ... p = pos[i];`` becomes ``int64_t p = pos[i];``.

A strategy declares a loop's cursors together, then sets each (the lattice's iterator model declares every cursor
of a series of loops before the first). A student reading the C should meet a local where it gets its value.
:func:`declare_where_set` moves a declaration with no value of its own down to the first statement of its scope
that mentions the local, where that statement is a plain assignment to it whose value does not read it: nothing
between them mentions the local, so nothing can tell. Where that statement is a loop that sets the local first in
each turn, and nothing after the loop mentions it, the declaration moves into the loop's body (a gather's position:
``while (...) { int64_t pC0 = idx[p]; ... }``). A local a pragma names keeps its place.

>>> from compiler.imperative.ir import Var, Declare, Assign, Load, Store
>>> p, q = Var("p"), Var("q")
>>> for s in declare_where_set([Declare(p, "int64"), Declare(q, "int64"), Assign(p, Load("pos", 0)),
...                             Store("out", p, 1.0), Assign(q, p)]):
...     print(str(s).strip())
int64 p = pos[0];
out[p] = 1.0;
int64 q = p;
"""

from __future__ import annotations

from dataclasses import replace

from .ir import Block, Declare, For, Tagged, While
from .traverse import map_bodies, pragma_names, sets_fresh, var_names

__all__ = ["DECLARED_WHERE_SET", "declare_where_set"]

#: what the trace's ``declarations`` step says
DECLARED_WHERE_SET = "each local declared with no value moved to where it is first set: int64_t p = pos[i];"


def declare_where_set(stmts) -> list:
    """``stmts`` with each declaration of no value moved to where its local is first set (module docstring)."""
    return _moved(list(stmts), pragma_names(stmts))


def _moved(stmts: list, pragmas: set) -> list:
    out = [map_bodies(s, lambda body: _moved(list(body), pragmas)) for s in stmts]
    k = 0
    while k < len(out):
        s = out[k]
        if isinstance(s, Declare) and s.init is None and s.var.name not in pragmas:
            # (the local's scope ends with these statements: nothing after them mentions it)
            placed = _placed(out[k + 1:], s, True)
            if placed is not None:
                out[k:] = placed
                continue
        k += 1
    return out


def _placed(stmts: list, declared: Declare, free_after: bool) -> list | None:
    """``stmts`` with the local of ``declared`` declared at its first mention in them, or None where it cannot be: a
    plain assignment to it whose value does not read it, at their own level or inside a provenance tag or a block
    (which share their C scope); or, where nothing after the loop mentions it (``free_after`` for what follows
    ``stmts``), a loop whose body sets it first in each turn (:func:`_declared_in_loop`)."""
    name = declared.var.name
    j = next((j for j, t in enumerate(stmts) if name in var_names(t)), None)
    if j is None:
        return None
    first, rest = stmts[j], stmts[j + 1:]
    free = free_after and all(name not in var_names(t) for t in rest)
    there = None
    if sets_fresh(first, name):
        there = Declare(declared.var, declared.dtype, first.value)
    elif isinstance(first, (Tagged, Block)):   # (one list of statements each)
        inner = _placed(list(first.body if isinstance(first, Block) else first.body.body), declared, free)
        there = None if inner is None else map_bodies(first, lambda _: inner)
    elif free and isinstance(first, (While, For)):
        there = _declared_in_loop(first, declared)
    return None if there is None else [*stmts[:j], there, *rest]


def _declared_in_loop(loop, declared: Declare):
    """``loop`` declaring the local of ``declared`` in its body where the body sets it first, each turn (a gather's
    position ``pC0``: ``while (...) { int64_t pC0 = idx[p]; ... }``), or None where it does not: the loop's own
    expressions (its condition, bounds) read it, or something in its body mentions it before a plain assignment
    (:func:`_placed`). Only where nothing after the loop mentions it (the caller's test)."""
    if isinstance(loop, For) and loop.var.name == declared.var.name:
        return None
    own = loop.cond if isinstance(loop, While) else (loop.start, loop.stop)
    if declared.var.name in var_names(own):
        return None
    body = _placed(list(loop.body.body), declared, False)
    return None if body is None else replace(loop, body=Block(tuple(body)))
