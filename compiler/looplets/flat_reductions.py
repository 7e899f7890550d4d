"""A reduction of every entry of a matrix, read as the vector of its raveled entries: one walk.

``s[] = A[i, j]`` over a CSR is, as a loop program, ``for i: for j: s[] += A[i, j]``: the rows of
``A`` unfurl one by one, each a walk over its positions, and a max folds each row's gaps and NaN
after the row. Where nothing in the statement reads ``i`` or ``j`` but ``A[i, j]``, the loops visit
``A``'s entries in raveled order (rows, then each row's columns), which is the order of its stored
entries: the statement is ``for k: s[] += ravel(A)[k]`` over ``|i| * |j|`` coordinates, whose
unfurling (:class:`~compiler.looplets.raveled.RaveledFiber`, ``flat``) is one walk over all of
``A``'s positions, ``pos[0]`` to ``pos[|i|]``. The gaps of a max are then folded once, where the
matrix has fewer entries than coordinates, as the lattice's ``fuse(i, j) pos(ij, pA, A)`` does.

The rewrite keeps the order in which the entries and the gaps are visited, so it is exact for any
operator; it applies where the matrix's levels ravel in their storage order
(:func:`~compiler.looplets.raveled.ravels`: CSR, CSC, DCSR, a dense matrix, COO) and both loops run over the
matrix's whole extents, in that order (:func:`~compiler.looplets.passes.concordize` put the access in it).

>>> from compiler.format import csr
>>> from compiler.looplets.fibers import TensorInfo
>>> from compiler.looplets.language import loop_program
>>> from compiler.looplets.program import show_stmt
>>> @loop_program
... def total(s, A):
...     for i in _:
...         for j in _:
...             s += A[i, j]
>>> prog = total
>>> infos = {"A": TensorInfo.from_format("A", csr(), "input")}
>>> for line in show_stmt(ravel_reductions(prog.body, infos), 0): print(line)
for i_j = 0:A0_size * A1_size
  s[] += ravel(A)[i_j]
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import serialize
from ..imperative.ir import BinOp
from .program import Access, Assign, Extent, Index, Loop, Raveled, TensorRef, postmap, walk
from .raveled import ravels


@serialize.node
@dataclass(frozen=True)
class FlatRaveled(Raveled):
    """``ravel(A)`` read by a reduction of every entry: its walk's coordinates are read through its
    positions only (:attr:`~compiler.looplets.raveled.RaveledFiber.flat`)."""


def flat_read(outer: Loop, infos: dict):
    """The one access ``A[i, j]`` (read once or more) of a ravelled matrix that the statement ``stmt`` of
    ``for i: for j: stmt`` (``outer``) reduces, or None: ``stmt`` updates by an operator an element that
    names neither index, and reads them nowhere but in that access."""
    inner = outer.body
    stmt = inner.body if isinstance(inner, Loop) else None
    if not (isinstance(stmt, Assign) and stmt.op is not None and outer.ext is None and inner.ext is None):
        return None
    i, j = outer.idx, inner.idx
    reads = [n for n in walk(stmt.rhs) if isinstance(n, Access)]
    ours = [a for a in reads if any(x in (i, j) for x in a.idxs)]
    # (one access, read once or more: the sum of squares A[i, j] * A[i, j] walks A once)
    if not ours or any(a != ours[0] for a in ours) or any(x in (i, j) for x in walk(stmt.lhs)):
        return None
    acc = ours[0]
    info = infos.get(getattr(acc.tns, "name", None))
    if type(acc.tns) is not TensorRef or tuple(acc.idxs) != (i, j) or info is None or info.role != "input" \
            or not ravels(info.format, stored=True, flat=True):
        return None
    # (i and j nowhere else: an index read as a value, or in a read of another tensor)
    if sum(1 for n in walk(stmt.rhs) if n in (i, j)) != 2 * len(ours):
        return None
    return acc


def ravel_reductions(prog, infos: dict):
    """``prog`` with each ``for i: for j: s <<op>>= f(A[i, j])`` whose ``A[i, j]`` is its :func:`flat_read`
    as ``for i_j: s <<op>>= f(ravel(A)[i_j])`` over ``|i| * |j|`` (after
    :func:`~compiler.looplets.passes.concordize`: the access is in storage order)."""
    taken: set = set()   # (the program's index names, walked once a loop is rewritten)

    def fn(n):
        acc = flat_read(n, infos) if isinstance(n, Loop) else None
        if acc is None:
            return None
        if not taken:
            taken.update(x.name for x in walk(prog) if isinstance(x, Index))
        stmt, info = n.body.body, infos[acc.tns.name]
        name = f"{n.idx.name}_{n.body.idx.name}"
        while name in taken:
            name += "_"
        taken.add(name)
        k = Index(name)
        read = Access(FlatRaveled(acc.tns.name), (k,), acc.mode, line=acc.line, source=acc.source)
        rhs = postmap(stmt.rhs, lambda e: read if e == acc else None)
        return Loop(k, Extent(0, BinOp("*", info.size(0), info.size(1))), replace(stmt, rhs=rhs), line=n.line)
    return postmap(prog, fn)


__all__ = ["FlatRaveled", "flat_read", "ravel_reductions"]
