"""A flatten walked minor index first (a CSC's ``c.reshape(-1)``) beside other operands: in passes.

``y[k] = x[k] + collapse(c[i, j], (i, j) -> k)`` of a CSC ``c`` walks ``c`` column by column
(:func:`~.slice_order.walks_minor_first`), so each coordinate of ``y`` and ``x`` is visited at
``t + (j + i * |j|)``: a stride of ``|j|`` through both vectors, every coordinate, the stored
entries of ``c`` few or many. Where ``c``'s fill is the operator's identity (``+`` and 0, ``*`` and
1, ``min`` and +inf), a coordinate ``c`` leaves at its fill holds ``x[k]`` itself, so the statement
runs in two passes, as scipy adds a sparse matrix to a dense one (a copy, then a scatter):

* ``for k: y[k] = x[k]``: the other operand whole, in order (:func:`flatten_passes`, the first);
* ``for j: for i: for t: y[t + (j + i * |j|)] += c[i, j]``: ``c`` walked column by column, each
  stored entry combined into its coordinate, a fill run an update by the identity, which the
  simplifier drops (the second).

``x`` may be a flatten itself, of another matrix or of ``c`` again (``b_csr.reshape(-1) +
c_csc.reshape(-1)``): its pass walks it in its own order, where one statement's loops could walk only
one of the two; into a sparse output both passes write a dense workspace (:func:`passes_in_workspace`).

A sparse vector beside such a flatten would be read at those coordinates out of order, each one
searched for. Where the passes do not apply (``x * c`` of ``c``'s fill 0, or ``c`` written first
under an operator that does not commute), :func:`copied_beside` names it: it is copied into a
dense workspace in order first and read there (:func:`read_copies`), one walk of it.

>>> from compiler.format import parse_format
>>> from compiler.notation import parse
>>> stmt = parse("y[k] = x[k] + collapse(c[i, j], (i, j) -> k)")
>>> formats = {"c": parse_format("csc"), "x": parse_format("sparse_vector")}
>>> [str(s) for s in flatten_passes(stmt, formats)]
['y[k] = x[k]', 'y[k] += collapse(c[i, j], (i, j) -> k)']
>>> both = parse("y[k] = collapse(b[i, j], (i, j) -> k) + collapse(c[i, j], (i, j) -> k)")
>>> [str(s) for s in flatten_passes(both, {**formats, "b": parse_format("csr")})]
['y[k] = collapse(b[i, j], (i, j) -> k)', 'y[k] += collapse(c[i, j], (i, j) -> k)']
>>> product = parse("y[k] = x[k] * collapse(c[i, j], (i, j) -> k)")
>>> flatten_passes(product, formats) is None, list(copied_beside(product, formats))
(True, ['x'])
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..algebra import NOVALUE
from ..format import parse_format
from ..imperative.ir import Const
from ..notation import ast as N
from ..notation.shape import Collapse, ShapeOp
from ..values import same_value
from .index_walks import fresh_temp
from .program import Access, Assign, Block, Extent, Index, Loop, TensorRef, postmap
from .slice_order import stores_minor_first


#: the trace's stage of a statement run as :func:`flatten_passes`' two: the output written whole by the
#: first, so the runtime need not fill it before the call
COPY_PASS = "copy-scatter"


def _random_write(fmt) -> bool:
    return fmt is None or all(lvl.random_write for lvl in fmt.levels)


def _flattens(e, stmt: N.Assign) -> bool:
    """Whether ``e`` is a collapse of one access making an index of the output (a flatten)."""
    return isinstance(e, Collapse) and isinstance(e.operand, N.Access) and e.result in stmt.lhs.indices


def _flattens_minor_first(e, stmt: N.Assign, formats: dict) -> bool:
    """Whether ``e`` is a flatten that the loops walk minor index first (its operand stores that index
    first in a level that cannot be located)."""
    return _flattens(e, stmt) and stores_minor_first(e, e.operand, formats)


def flatten_passes(stmt: N.Assign, formats: dict):
    """``(copy, scatter)``: ``stmt``, ``out = other op flatten`` of a flatten walked minor index first
    whose operand's fill is ``op``'s identity, as two statements run one after the other (see the
    module docstring), or None. The output takes writes anywhere (dense, or a workspace); ``other``
    holds no reduction and no shape operator but flattens (walked in their operands' order in a pass of
    their own), reads every index of the output and not the output itself;
    the flatten comes second unless ``op`` commutes (``y op= c`` computes ``y op c``)."""
    rhs = stmt.rhs
    if stmt.op is not None or not isinstance(rhs, N.Call) or len(rhs.args) != 2 or \
            not _random_write(formats.get(stmt.lhs.tensor)):
        return None
    orders = [(rhs.args[1], rhs.args[0])] + ([(rhs.args[0], rhs.args[1])] if rhs.op.commutative else [])
    for flat, other in orders:
        # (other may flatten a matrix too, walked in its own order: b_csr.reshape(-1), or c's again)
        if not _flattens_minor_first(flat, stmt, formats) or \
                any(isinstance(n, N.Reduce) or isinstance(n, ShapeOp) and not _flattens(n, stmt)
                    for n in N.walk(other)) or \
                stmt.lhs.tensor in {a.tensor for a in N.accesses(other)} or \
                not set(stmt.lhs.indices) <= set(N.free_indices(other)):   # (the first pass writes every entry)
            continue
        fmt = formats[flat.operand.tensor]
        ident = rhs.op.identity_for(np.dtype(fmt.dtype))
        if ident is not NOVALUE and same_value(ident, fmt.fill):
            return N.Assign(stmt.lhs, None, other), N.Assign(stmt.lhs, rhs.op, flat)
    return None


def passes_in_workspace(stmt: N.Assign, formats: dict) -> bool:
    """Whether ``stmt``, into an output appended in order (a sparse vector), runs as
    :func:`flatten_passes`' two statements into a dense workspace copied into it after
    (``b_csr.reshape(-1) + c_csc.reshape(-1)``: the flattens read their index beside each other,
    which one statement's loops cannot walk both in order)."""
    out = formats.get(stmt.lhs.tensor)
    if _random_write(out):
        return False
    dense = parse_format("dense", ndim=len(stmt.lhs.indices), fill=out.fill, dtype=out.dtype)
    return flatten_passes(stmt, {**formats, stmt.lhs.tensor: dense}) is not None


def copied_beside(stmt: N.Assign, formats: dict) -> dict:
    """``{vector: dense format}`` for each vector of ``stmt`` read at the index of a flatten walked
    minor index first in levels that cannot be located (a sparse ``x`` beside ``c_csc.reshape(4)``),
    and not written: planned as dense, read from a dense copy made first (:func:`read_copies`).
    Empty where :func:`flatten_passes` applies (it reads them in order)."""
    if flatten_passes(stmt, formats) is not None:
        return {}
    made = {n.result for n in N.walk(stmt.rhs) if _flattens_minor_first(n, stmt, formats)}
    copies = {}
    for acc in N.accesses(stmt.rhs):
        fmt = formats.get(acc.tensor)
        if fmt is None or acc.tensor == stmt.lhs.tensor or len(acc.indices) != 1 or not made & set(acc.indices) or \
                all(lvl.locatable for lvl in fmt.levels):
            continue
        copies[acc.tensor] = parse_format("dense", ndim=len(acc.indices), fill=fmt.fill, dtype=fmt.dtype)
    return copies


def copy_loops(dst: str, src: str, names, order, extent):
    """``for ...: dst[names] = src[names]``, the loops in storage ``order`` (outermost first), each
    over ``extent(mode)`` (an IR expression).

    >>> from compiler.imperative.ir import Var
    >>> print(copy_loops("w", "x", ["i", "j"], (1, 0), lambda m: Var(f"n{m}")))
    for j = 0:n1
      for i = 0:n0
        w[i, j] = x[i, j]
    """
    at = tuple(Index(n) for n in names)
    copy = Assign(Access(TensorRef(dst), at, "update"), None, Access(TensorRef(src), at))
    for m in reversed(order):
        copy = Loop(Index(names[m]), Extent(Const(0, "int64"), extent(m)), copy)
    return copy


def in_passes(stmt: N.Assign, formats: dict, plan):
    """``(program, reads)`` of ``stmt`` run as :func:`flatten_passes`'s two statements, each planned
    by ``plan(statement) -> (program, info, reads)``, one after the other; None where they do not
    apply."""
    passes = flatten_passes(stmt, formats)
    if passes is None:
        return None
    (first, _, r1), (second, _, r2) = (plan(s) for s in passes)
    note = (f"{stmt.rhs}: {passes[0].rhs} written whole in order first, then each stored entry of "
            f"{passes[1].rhs.operand.tensor} combined in by {stmt.rhs.op} (its fill the identity: its fill runs "
            f"skipped), the flatten's walk touching no other coordinate")
    return replace(first, tensors=tuple(dict.fromkeys((*first.tensors, *second.tensors))), source=str(stmt),
                   body=Block((*first.body.stmts, *second.body.stmts)),
                   temporaries=(*first.temporaries, *second.temporaries)), (*r1, *r2, (COPY_PASS, note))


def read_copies(prog, stmt: N.Assign, copies: dict, formats: dict, extent):
    """``(prog, notes)``: ``prog`` (``stmt``'s, planned with each tensor of ``copies`` dense) reading
    each such tensor out of order (at an index that is no plain loop) from a dense workspace instead,
    copied from it in its storage order first; ``extent(index)`` gives an index's extent (IR). A
    tensor read in order only (by the first of :func:`flatten_passes`) is left as it is."""
    if not copies:
        return prog, ()
    taken = set(prog.tensors) | {t for t, _ in prog.temporaries}
    names = {t: fresh_temp(taken, set(), f"{t}_dense") for t in copies}
    at = {a.tensor: a.indices for a in N.accesses(stmt.rhs)}
    used: set = set()

    def moved(n):
        if isinstance(n, Access) and isinstance(n.tns, TensorRef) and n.tns.name in names and n.mode == "read" \
                and not all(isinstance(i, Index) for i in n.idxs):
            used.add(n.tns.name)
            return Access(TensorRef(names[n.tns.name]), n.idxs)
        return None
    body = postmap(prog.body, moved)
    first, notes = [], []
    for t in sorted(used):
        first.append(copy_loops(names[t], t, [i.name for i in at[t]], formats[t].mode_order,
                                lambda m, t=t: extent(at[t][m])))
        notes.append(("copy", f"{t} is read at the coordinates a flatten walked minor index first writes, out "
                              f"of order: copied into a dense workspace {names[t]} in its storage order first "
                              f"and read there, where each read of {t} would search for its coordinate"))
    return replace(prog, body=Block((*first, *body.stmts)),
                   temporaries=(*prog.temporaries, *((names[t], copies[t]) for t in sorted(used)))), tuple(notes)


__all__ = ["COPY_PASS", "copied_beside", "copy_loops", "flatten_passes", "in_passes", "passes_in_workspace",
           "read_copies"]
