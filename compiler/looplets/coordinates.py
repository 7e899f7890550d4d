"""Coordinates a loop program computes: ``y[I[i]]``, ``x[I[i]]``, ``bins[v[i] // w]``, ``y[k]`` for
a ``let k = ...``, ``y[3]``, an offset by data ``y[i + d[j]]``.

A loop index stays inside the extent its loop runs over, which dimensionalization made the
extent of every mode it indexes, so an access at a loop index (or an offset, window or
permissive index of one) is in bounds by construction. A computed coordinate is bounded by
nothing but the data: :func:`mark_computed` wraps each in :class:`Computed`, which carries the
extent of the mode it indexes and names the access in the user's terms, and the lowerer checks
it (:class:`~compiler.imperative.guard.CheckCoordinate`) before the access, in every build.

>>> from compiler.format import parse_format
>>> from compiler.looplets.fibers import TensorInfo
>>> from compiler.looplets.program import Access, Index, Loop, TensorRef
>>> infos = {t: TensorInfo(t, parse_format("dense", ndim=1)) for t in "yIx"}
>>> I_i = Access(TensorRef("I"), (Index("i"),))
>>> body = Loop(Index("i"), None, Assign(Access(TensorRef("y"), (I_i,), "update", line=2), None,
...                                      Access(TensorRef("x"), (Index("i"),))))
>>> marked = mark_computed(body, infos, lambda line: f"line {line} of scatter")
>>> c = marked.body.lhs.idxs[0]
>>> c.extent, c.tensor, c.mode, c.where
(Var(name='y0_size'), 'y', 0, 'line 2 of scatter')
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..imperative.guard import CheckCoordinate
from ..imperative.ir import Const, Declare, Var
from .errors import ProgramError
from ..algebra import lookup
from .modifiers import Offset
from .ranges import explain, within
from .program import (Access, Assign, Block, Call, Define, Expr, Index, IndexModifier, Loop, Sieve, TensorRef, postmap,
                      show_expr, walk)


@dataclass(frozen=True)
class Computed(Expr):
    """Coordinate ``expr`` of (logical) ``mode`` of ``tensor``, of extent ``extent`` (an IR
    expression); ``where`` names the program's line, for the error an out-of-range value raises,
    and ``text`` is the coordinate as the program wrote it."""

    expr: Any
    extent: Any
    tensor: str
    mode: int
    where: str
    text: str = ""

    def label(self) -> str:
        return show_expr(self.expr)


def mark_computed(body, infos: dict, where):
    """``body`` with each computed coordinate of an access of a tensor with levels wrapped in
    :class:`Computed` (``where(line)`` names a line of the program). Run on the normalized
    program, whose accesses are in storage order."""

    def fn(n, line):
        if not (isinstance(n, Access) and isinstance(n.tns, TensorRef) and n.tns.name in infos):
            return None
        info = infos[n.tns.name]
        if not info.levels or not any(_computed(x) for x in n.idxs):
            return None
        at = where(n.line or line).replace("*/", "* /")
        idxs = tuple(Computed(_coordinate(x), info.size(m), info.name, info.format.mode_order[m], at,
                              show_expr(_coordinate(x))) if _computed(x) else x
                     for m, x in enumerate(n.idxs))
        return replace(n, idxs=idxs)

    def mark(e, line):
        return postmap(e, lambda n: fn(n, line))

    def visit(s):
        if isinstance(s, Loop):
            return replace(s, body=visit(s.body))
        if isinstance(s, Block):
            return replace(s, stmts=tuple(visit(t) for t in s.stmts))
        if isinstance(s, Sieve):
            return replace(s, cond=mark(s.cond, s.line), body=visit(s.body))
        if isinstance(s, Define):
            return replace(s, val=mark(s.val, s.line), body=visit(s.body))
        if isinstance(s, Assign):
            return replace(s, lhs=mark(s.lhs, s.line), rhs=mark(s.rhs, s.line))
        return s
    return visit(body)


def coordinate_checks(idx: Computed, v, dt, fresh, line=0, proofs=None) -> list:
    """The check of computed coordinate ``idx``, lowered to ``v`` of dtype ``dt``, against its
    mode's extent: after a local holding ``v`` when it is more than a variable or a constant
    (``fresh`` names it), so the check and the access read it once. None where every value ``v``
    can take is in the extent (:func:`compiler.looplets.ranges.within`: a uint8 pixel's bin among a
    fixed number of bins); the proof is appended to ``proofs``.

    >>> from compiler.imperative.ir import Load, Var
    >>> idx = Computed(None, Var("y0_size"), "y", 0, "line 2 of scatter")
    >>> for s in coordinate_checks(idx, Load("I_val", Var("i")), "int64", lambda n: n):
    ...     print(s)
    int64 coord = I_val[i];
    check 0 <= coord < y0_size;  // y, mode 0: line 2 of scatter
    """
    if np.dtype(dt).kind not in "iub":
        raise ProgramError(f"coordinate {idx.text} of {idx.tensor} (mode {idx.mode}) is {dt}; index a "
                           f"tensor with integers", line)
    if within(v, idx.extent):
        if proofs is not None:
            proofs.append(f"{idx.tensor}, mode {idx.mode}: {idx.where}: {explain(v, idx.extent)}")
        return []
    out = []
    if not isinstance(v, (Var, Const)):
        c = Var(fresh("coord"))
        out.append(Declare(c, "int64", v))
        v = c
    return out + [CheckCoordinate(v, idx.extent, idx.tensor, idx.mode, idx.where)]


def _computed(x) -> bool:
    return not isinstance(x, (Index, IndexModifier, Computed)) or _data_offset(x)


def _data_offset(x) -> bool:
    """An offset by a value read from a tensor, ``y[i + d[j]]``: no loop bounds ``i + d[j]``."""
    return isinstance(x, Offset) and isinstance(x.index, Index) and any(isinstance(n, Access) for n in walk(x.delta))


def _coordinate(x):
    """The program expression of computed coordinate ``x`` (an offset by data: its sum)."""
    return Call(lookup("+"), (x.index, x.delta)) if _data_offset(x) else x


__all__ = ["Computed", "coordinate_checks", "mark_computed"]
