"""Index notation with shape operators as a loop program, where a wrapper expresses each operator.

The looplet strategy has no sequence combinators; it rewrites each operator into the index
expressions its wrappers lower (:mod:`compiler.looplets.wrappers`):

=========================================  ====================================================
operator                                   loop program
=========================================  ====================================================
``collapse(A[i, j], (i, j) -> k)``         the loop over ``k`` becomes loops over ``i`` then
                                           ``j``; ``k`` reads and writes ``j + i * |j|``
                                           (an offset by the outer index)
``split(b[k], k -> (i, j))``               ``b[j + i * |j|]``: an offset of ``j`` by ``i``
``concat((B[i, j], C[i, k]), (j, k)``     the loop over ``l`` becomes one loop per operand
``-> l)``                                  (BURRITO's fissioned loops): ``for j: D[i, j] =
                                           B[i, j]``, then ``for k: D[i, k + |j|] = C[i, k]``
``slice(A[j], j -> k, (s, e, 1))``         ``A[window(k, s, e)]``
``slice(A[j], j -> k, (s, e, r))``         ``A[t + (s + r * k)]`` under a loop ``t`` of one
                                           step: an offset by ``k`` (``r < 0`` too)
``slice(A[j, i], j -> k, (s, e, r))``      ``stride(A, 0, s:e:r)[k, i]`` inside the loop over
of a CSC ``A`` (its columns looped         ``i``: each column's entries the stride keeps walked
outside)                                   (:mod:`compiler.looplets.stepped`), no one-step loop
``slice(A[i, j], j -> k, (s, e, r))``      the loop over ``k`` (and its one-step loop) moved
of a CSC ``A`` (its columns sliced)        outside ``i``'s where the output takes the writes so:
                                           each kept column read at ``t + (s + r * k)``, walked
``slice(A[i, j], j -> k, (s, e, 1))``      the loop over ``k`` moved outside ``i``'s likewise:
of a CSC ``A`` (a column window)           each column read at ``window(k, s, e)``, walked
a CSC's columns (or rows) sliced into an   the columns' loop outside the rows' all the same; the
output stored rows first (a CSR)           output built by a scatter (:mod:`.scatter`)
``x[k] * collapse(C[i, j], (i, j) -> k)``  ``for j: for i: for t (one step)``: ``C`` walked column
of a CSC ``C`` (a sparse ``x`` copied      by column, ``x`` and the output (dense, or a dense
into a dense workspace first)              workspace) at ``t + (j + i * |j|)``, out of order
``x[k] + collapse(C[i, j], ...)`` (C's     ``for k: y[k] = x[k]``, then ``C``'s entries added in
fill the identity)                         column by column (:mod:`.flatten_passes`)
``collapse(B[l, m], ...) +``               ``y[k] = collapse(B[l, m], ...)``, B walked in its
``collapse(C[i, j], ...)`` (a matrix's     order, then ``C``'s entries added in as above; a
flatten, or C's again, beside a CSC's)     sparse output through a dense workspace
``collapse(A[i, j], (i, j) -> k) op``      one pair of loops ``i``, ``j`` walks both, ``Z[i, j]``
``collapse(Z[p, q], (p, q) -> k)`` (both   read at them; each call checks that ``Z.shape`` is
walked in storage order)                   ``A.shape`` (:func:`compiler.output_extents.check_walked_together`)
``out[i] = sum[j](slice(A[k, j], ...))``   ``w[i] += ...`` into a dense workspace in the loops
into a sparse vector (a CSC's columns      that walk ``A`` (``j`` outside), then ``for i:
summed)                                    out[i] = w[i]``: the fills dropped, in order
``slice(x[j], j -> i, (s, e, r)) +``       ``x[t + (s + r * (l + k * |l|))]`` under a one-step
``collapse(C[k, l], (k, l) -> i)``         loop ``t`` after ``l``'s, as a split's (carried)
``concat((slice(A[j, i], j -> p, (s, e,``  the part's loop ``p`` gets its own one-step loop
``r)), B[k, i]), (p, k) -> l)``            ``t``: ``C[t + p, i] = A[t + (s + r * p), i]``,
                                           then ``C[k + |p|, i] = B[k, i]``
``slice(split(b[k], k -> (i, j)),``        ``b[j + (t + (s + r * p)) * |j|]``: the split's
``i -> p, (s, e, r))``                     read with ``i`` the slice's offset (a window's
                                           ``p + s``), the loops ``i`` reads outside ``j``'s
``slice(collapse(A[i, j], (i, j) -> k),``  ``let i' = m // |j|, j' = m % |j|: A[i', j']`` for
``k -> p, (s, e, r))``                     the slice's ``m = t + (s + r * p)``: each entry
                                           located (a search in a sparse level), not walked
``split(collapse(A[i, j], (i, j) -> k),``  concordant (``A`` stores ``i`` first, an output taking
``k -> (p, q))``                           writes anywhere): the output's loops become ``i``
                                           then ``j``, ``let p = m // |q|, q = m % |q|`` for
                                           ``m = j + i * |j|``, walking ``A``; else ``A`` read at
                                           ``(q + p * |q|) // |j|, ... % |j|``, located
``split(slice(collapse(A[i, j], (i,``      the collapse gathered as above, at the
``j) -> k), k -> m, (s, e, r)), m ->``     slice's ``k = s + r * (q + p * |q|)``
``(p, q))``                                (``r < 0`` too)
``split(slice(b[l], l -> k, (s, e,``       ``b[t + (s + r * (q + p * |q|))]`` under a one-step
``r)), k -> (p, q))``                      loop ``t`` after ``q``'s (its cursor carried from ``q``
                                           to ``q``: up the operand, or down it for ``r < 0``);
                                           a window (``r = 1``): ``b[s + (q + p * |q|)]``, an
                                           offset of ``q``
``split(concat((x[j], y[k]), (j, k) ->``   ``coalesce(x[~(q + p * J)], y[~(q + p * J - |j|)])``:
``l), l -> (p, q:J))``                     a part read permissively where the index another
                                           operator computes falls in it (a slice of a concat too)
a collapse of a row-major CSR, COO or      ``ravel(A)[q + p * |q|]`` where the index is the inner
dense ``A[i, j]`` read at such an index    loop plus outer terms: its entries walked in storage
                                           order (:mod:`compiler.looplets.raveled`), not gathered
``broadcast(l, x[i])``                     ``x[i]`` inside the loop over ``l``
``A[2, j]``                                ``A[2, j]``
``sum[m](B[k, m])`` inside the right side  a scalar temporary computed just before the
                                           statement: ``t .= 0; for m: t[] += B[k, m]`` (before
                                           every loop when it has no free index); a shape
                                           operator making ``m`` reshapes its loops as above
=========================================  ====================================================

What no wrapper covers is refused with a :class:`~compiler.errors.StrategyError` saying why
(a split whose loops are not nested as the operator needs, a collapse or slice that would walk a
sparse operand against its storage order, a collapse or strided slice of an index another
operator than a slice, a split or (beside it) a collapse computes; a concat read at such an index
whose part's index another operator makes), naming the lattice strategy. A collapse of a concat
splits the collapse's loop over the concatenated index into one per part.

>>> from compiler.notation import parse
>>> from compiler.format import parse_format
>>> prog, _, _ = shape_program(parse("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]"),
...                         {"A": parse_format("csr"), "b": parse_format("sparse")})
>>> print(prog.body)
for i = 0:A0_size
  for j = 0:A1_size
    c[j + i * size(A, 1)] = A[i, j] + b[j + i * size(A, 1)]
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..algebra import NOVALUE
from ..errors import LATTICE_HINT, StrategyError
from ..format import parse_format
from ..notation import ast as N
from ..notation.infer import infer_shapes
from ..notation.shape import Concat, ShapeOp
from .flatten_passes import copied_beside, copy_loops, in_passes, passes_in_workspace, read_copies
from .index_walks import fresh_temp
from .language import LoopProgram
from .loop_plan import LoopPlanner, Scope
from .program import Access, Assign, Block, Declare, Literal, TensorRef
from .shape_extents import extent_ir
from .shape_reads import ShapeReads
from .slice_order import needs_workspace


def shape_program(stmt: N.Assign, formats: dict, dtype=None):
    """``(LoopProgram, ShapeInfo, reads)`` for ``stmt`` (index notation with shape operators) and
    the formats of its tensors; the extents are the tensors' sizes (the kernel serves any shape);
    ``reads`` says, for the trace, how each collapse under a split or a slice was read: ``(stage,
    note)``, the stage ``walk-reshape`` (the output's loops became the collapse's) or ``gather``
    (each entry located); and ``workspace`` when the reduction went through one
    (:func:`~.slice_order.needs_workspace`).
    What no wrapper expresses is refused naming the lattice strategy."""
    try:
        # (a sparse vector read where a flatten walked minor index first writes: read from a dense copy)
        copies = copied_beside(stmt, formats)
        planned = {**formats, **copies}
        workspace = needs_workspace(stmt, planned) or passes_in_workspace(stmt, planned)
        try:
            prog, info, reads = (_through_workspace if workspace else _shape_program)(stmt, planned, dtype)
        except StrategyError:
            # (a dense output is written in any order: its loops in the operands' storage order, where the
            # output's walked them against it, a CSC's row windows stacked)
            order = None if workspace else _operands_order(stmt, planned)
            if order is None:
                raise
            prog, info, reads = _shape_program(stmt, planned, dtype, order)
        prog, notes = read_copies(prog, stmt, copies, formats, lambda i: extent_ir(info.extents[i], formats))
        return prog, info, (*reads, *notes)
    except StrategyError as e:
        raise StrategyError(f"{e}{LATTICE_HINT}") from None


def _concatenates_along_output(stmt: N.Assign) -> bool:
    """Whether ``stmt`` concatenates along one of its output's indices (a vstack, an hstack)."""
    given = stmt.lhs.indices
    return any(isinstance(n, Concat) and n.result in given for n in N.walk(stmt.rhs))


def _stored_order(stmt: N.Assign, formats: dict) -> tuple:
    """The output's indices, in the order its levels store them where it concatenates along one of them (a
    CSC's columns first: a vstack's loop over rows is then split into parts inside each column, which no later
    pass reorders), else as given (its slices move its loops themselves, :meth:`~.loop_plan.LoopPlanner.plan`).

    >>> from compiler.notation import parse
    >>> from compiler.format import parse_format
    >>> stmt = parse("out[i, j] = concat((A[k, j], B[l, j]), (k, l) -> i)")
    >>> _stored_order(stmt, {"out": parse_format("csc")}), _stored_order(stmt, {"out": parse_format("csr")})
    ((Index(name='j'), Index(name='i')), (Index(name='i'), Index(name='j')))
    """
    out = formats.get(stmt.lhs.tensor)
    order = getattr(out, "mode_order", None)
    given = tuple(stmt.lhs.indices)
    if order is None or sorted(order) != list(range(len(given))) or not _concatenates_along_output(stmt):
        return given
    return tuple(given[m] for m in order)


def _operands_order(stmt: N.Assign, formats: dict) -> tuple | None:
    """The output's indices in the storage order its operands share, where the output is dense, the statement
    concatenates along one of its indices, and every operand of the output's rank stores its modes in one
    order other than the output's (None: not so).

    >>> from compiler.notation import parse
    >>> from compiler.format import parse_format
    >>> stmt = parse("out[i, j] = concat((A[k, j], B[l, j]), (k, l) -> i)")
    >>> csc, dense = parse_format("csc"), parse_format("dense", ndim=2)
    >>> _operands_order(stmt, {"out": dense, "A": csc, "B": csc}), _operands_order(stmt, {"out": csc, "A": csc})
    ((Index(name='j'), Index(name='i')), None)
    """
    out, given = formats.get(stmt.lhs.tensor), tuple(stmt.lhs.indices)
    if out is None or not out.is_dense or not _concatenates_along_output(stmt):
        return None
    orders = {tuple(formats[a.tensor].mode_order) for a in N.accesses(stmt.rhs)
              if a.tensor in formats and len(a.indices) == len(given)}
    if len(orders) != 1:
        return None
    (order,) = orders
    if order == tuple(out.mode_order) or sorted(order) != list(range(len(given))):
        return None
    return tuple(given[m] for m in order)


def _shape_program(stmt: N.Assign, formats: dict, dtype, order: tuple | None = None):
    """The loop program of ``stmt``: its loops planned (:class:`~.loop_plan.LoopPlanner`), then built
    around the statement its right side reads in them (:class:`~.shape_reads.ShapeReads`); its output's indices
    looped in ``order`` where given (else :func:`_stored_order`)."""
    shapes = {t: tuple((t, m) for m in range(len(f.mode_order))) for t, f in formats.items()
              if t != stmt.lhs.tensor}
    info = infer_shapes(stmt, shapes)
    passes = in_passes(stmt, formats, lambda s: _shape_program(s, formats, dtype))
    if passes is not None:
        return passes[0], info, passes[1]
    # (a reduction at the top is the statement's own loops, writing the output inside them; where
    # planning them splits a loop into parts, it goes through a scalar instead: see below)
    rhs, red, op, init = _top_reduction(stmt, dtype)
    top_indices = list(dict.fromkeys((order or _stored_order(stmt, formats)) + red))
    # (an operator's consumed indices are bound inside it: a collapse's loops may take their names)
    produced = {i.name for n in N.walk(stmt) if isinstance(n, ShapeOp) for i in n.produced()}
    planner = LoopPlanner(stmt, formats, rhs, info.extents, {i.name for i in top_indices} | produced)
    loops, env, top_scope = planner.plan(tuple(top_indices), [i.name for i in top_indices], rhs, Scope.empty(), True)
    if red and top_scope.writes(loops) > 1:
        # (a loop split into one per part, each writing the entry: a sparse output would append it once
        # per part; the reduction goes through a scalar, the entry written once. Planned again from the
        # start over the output's indices alone, the names fresh as they were, before anything is built)
        rhs, red, op, init = stmt.rhs, (), stmt.op, None
        top_indices = list(order or _stored_order(stmt, formats))
        planner.restart(rhs, {i.name for i in top_indices} | produced)
        loops, env, top_scope = planner.plan(tuple(top_indices), [i.name for i in top_indices], rhs,
                                             Scope.empty(), True)
    reader = ShapeReads(planner)

    def statement(env, choice):
        lhs = Access(TensorRef(stmt.lhs.tensor), tuple(env[i] for i in stmt.lhs.indices), "update")
        walked = [b for bs in top_scope.walked.values() for b in bs]
        return reader.statement(lambda: Assign(lhs, op, reader.read(rhs, env, env, top_scope, choice)), walked)

    body = planner.build(loops, top_scope, env, {}, statement)
    stmts = [*reader.prologue, body]
    if init is not None:
        stmts.insert(0, Declare(TensorRef(stmt.lhs.tensor), init))
    names = list(dict.fromkeys([stmt.lhs.tensor] + [a.tensor for a in N.accesses(stmt.rhs)]))
    return LoopProgram(stmt.lhs.tensor + "_kernel", tuple(names), Block(tuple(stmts)), str(stmt), 1,
                       tuple(reader.temporaries)), replace(info, agree=tuple(planner.agree)), tuple(planner.reads)


def _through_workspace(stmt: N.Assign, formats: dict, dtype):
    """:func:`shape_program` of ``stmt`` reduced into a dense workspace ``w`` (its loops planned as
    for a dense output: the slice's operand walked in storage order), then ``w`` copied into the
    output in the output's storage order, the fills dropped: one kernel, as
    ``for j: for i: w[i] += stride(A, 0, 1:9:2)[i, j]; for i: out[i] = w[i]``."""
    out, idxs = stmt.lhs.tensor, stmt.lhs.indices
    taken = {a.tensor for a in N.accesses(stmt)} | {i.name for n in N.walk(stmt) if isinstance(n, N.Access)
                                                    for i in n.indices if isinstance(i, N.Index)}
    w = fresh_temp(taken, set(), "w")
    fmt = formats[out]
    dense = parse_format("dense", ndim=len(idxs), fill=fmt.fill, dtype=fmt.dtype)
    prog, info, reads = _shape_program(N.Assign(N.Access(w, idxs), None, stmt.rhs), {**formats, w: dense}, dtype)
    copy = copy_loops(out, w, [i.name for i in idxs], fmt.mode_order,
                      lambda m: extent_ir(info.extents[idxs[m]], formats))
    names = tuple(dict.fromkeys((out, *(t for t in prog.tensors if t != w))))
    return replace(prog, name=out + "_kernel", tensors=names, source=str(stmt), body=Block((*prog.body.stmts, copy)),
                   temporaries=(*prog.temporaries, (w, dense))), info, \
        (*reads, ("workspace", f"{stmt.rhs}: reduced into a dense workspace {w} (its loops those of a dense "
                               f"output: the operands walked in storage order, from the reduction's identity), "
                               f"then {w} copied into {out} in its storage order, the fills dropped"))


def _top_reduction(stmt: N.Assign, dtype) -> tuple:
    """``(rhs, reduced indices, operator, initial value)`` of ``stmt`` lowered with a reduction at the top
    as the statement's own loops: its body written into the output by its operator, from its identity."""
    rhs, op = stmt.rhs, stmt.op
    if not isinstance(rhs, N.Reduce):
        return rhs, (), op, None
    if op is not None and op != rhs.op:
        raise StrategyError(f"{stmt}: the update and the reduction use different operators")
    init = None
    if op is None:
        ident = rhs.op.identity if dtype is None else rhs.op.identity_for(np.dtype(dtype))
        init = Literal(ident if ident is not NOVALUE else 0)
    return rhs.body, tuple(rhs.indices), rhs.op, init


__all__ = ["shape_program"]
