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

from .. import values
from ..algebra import NOVALUE, lookup
from ..binding import array_name
from ..errors import LATTICE_HINT, StrategyError
from ..format import parse_format
from ..imperative.ir import BinOp, Const, Var
from ..notation import ast as N
from ..lattice.algebra import expr_facts
from ..lattice.iteration_graph import storage_levels
from ..shortcircuit import early_exit
from ..stand_in import scatters
from ..notation.dtypes import expr_dtype, reduce_dtype
from ..notation.infer import infer_shapes
from ..notation.shape import Broadcast, Collapse, Concat, ShapeOp, Slice, Split
from . import extents as X
from .language import LoopProgram
from .program import (Access, Assign, Block, Call, Declare, Define, Extent, Index, Literal, Loop, Raveled, Size,
                      Strided, TensorRef, Variable)
from .raveled import ravels
from .stepped import steps_through
from .flatten_passes import copied_beside, copy_loops, in_passes, read_copies
from .index_walks import affine, fresh_temp, indices_in, part_step, read_permissively, scope_walk, substitute, walks_on
from .slice_order import (check_collapse_concordant, check_stride_concordant, needs_workspace, stored_after,
                          stored_before, walks_minor_first)
from .scalars import Scalar, ShortCircuitScalar

_ADD, _MUL, _SUB, _DIV, _MOD = lookup("+"), lookup("*"), lookup("-"), lookup("//"), lookup("%")


def extent_ir(entry, formats):
    """A runtime extent entry as an IR expression of the kernel's size parameters."""
    if isinstance(entry, int):
        return Const(entry, "int64")
    if isinstance(entry[0], str) and entry[0] not in ("+", "*", "//"):
        t, m = entry
        return Var(array_name(t, formats[t].mode_order.index(m), "size"))
    op, *args = entry
    args = [extent_ir(a, formats) for a in args]
    if op == "+":
        out = args[0]
        for a in args[1:]:
            out = X.add(out, a)
        return out
    return BinOp("*" if op == "*" else "/", args[0], args[1])


def _expr(entry):
    """A runtime extent entry as a program expression (sizes resolved by wrapperization)."""
    if isinstance(entry, int):
        return Literal(entry)
    if isinstance(entry[0], str) and entry[0] not in ("+", "*", "//"):
        return Size(None, "int64", entry[0], entry[1])
    op, *args = entry
    if op == "//":
        # (the minor extent in a split's offset, or the major one in a concat's of its parts)
        raise StrategyError("the looplet strategy indexes with sums and products of extents, and a split given one "
                            "extent makes the other a quotient of extents: give both, as in k -> (i:m, j:n)")
    out = _expr(args[0])
    for a in args[1:]:
        out = Call(_ADD if op == "+" else _MUL, (out, _expr(a)))
    return out


def _plus(a, b):
    return Call(_ADD, (a, b))


def _times(a, b):
    return Call(_MUL, (a, b))


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
        prog, info, reads = (_through_workspace if needs_workspace(stmt, planned) else _shape_program)(
            stmt, planned, dtype)
        prog, notes = read_copies(prog, stmt, copies, formats, lambda i: extent_ir(info.extents[i], formats))
        return prog, info, (*reads, *notes)
    except StrategyError as e:
        raise StrategyError(f"{e}{LATTICE_HINT}") from None


def _shape_program(stmt: N.Assign, formats: dict, dtype):
    shapes = {t: tuple((t, m) for m in range(len(f.mode_order))) for t, f in formats.items()
              if t != stmt.lhs.tensor}
    info = infer_shapes(stmt, shapes)
    passes = in_passes(stmt, formats, lambda s: _shape_program(s, formats, dtype))
    if passes is not None:
        return passes[0], info, passes[1]
    ext = info.extents
    # (a reduction at the top is the statement's own loops, writing the output inside them; where
    # planning them splits a loop into parts, it goes through a scalar instead: see below)
    rhs, red, op, init = _top_reduction(stmt, dtype)

    # -- the loops: output indices, then reduced ones; collapses and strided slices reshape them ------
    top_indices = list(dict.fromkeys(tuple(stmt.lhs.indices) + red))
    # (an operator's consumed indices are bound inside it: a collapse's loops may take their names)
    produced = {i.name for n in N.walk(stmt) if isinstance(n, ShapeOp) for i in n.produced()}
    taken = {i.name for i in top_indices} | produced

    def fresh(base: str) -> str:
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}{k}"
        taken.add(name)
        return name

    depth: dict = {}       # loop name -> how deep it is nested (a reduction's inside the statement's)
    one_step: set = set()  # the loops of one step (a strided slice's)
    split_steps: dict = {}  # a strided slice split by the loops -> the one-step loop after the split's inner one
    stepped: set = set()   # the strided slices walked in the entries they keep (no one-step loop)
    column_major: set = set()  # the collapses whose loops run minor index first (their operand's order)

    def drop_steps(sc: _Scope, loops: list, replaced: tuple) -> None:
        """Forget the one-step loops of strided slices planned after the loops ``replaced`` (a collapse
        walked after the slice takes their place: the slice is then read at the index the collapse makes,
        refused or gathered where it is converted, not a KeyError over a loop that is gone)."""
        for result, (t, name) in list(sc.steps.items()):
            if name in replaced:
                del sc.steps[result]
                loops.remove(t)
                one_step.discard(t)

    def plan(indices, names, body, outer: _Scope, top_level: bool = False):
        """The loops over ``indices`` (named ``names``) as the shape operators in ``body`` that make
        them ask: a collapsed index becomes two loops, a strided slice's gets a one-step loop after
        it, a concatenated one a loop per part (built by :func:`build`), and the output's loops
        over a concordant split of a collapse the collapse's (:func:`walks_collapse`);
        ``(loops, env, scope)``."""
        var = dict(zip(indices, names))
        loops = list(names)
        env = {i: Index(var[i]) for i in indices}
        extent_of = {var[i]: ext[i] for i in indices}
        sc = _Scope(dict(outer.collapsed), dict(outer.steps), dict(outer.fissions), {}, extent_of,
                    dict(outer.part_steps), dict(outer.part_collapsed))
        for i in indices:   # (an index bound again here is this scope's own)
            for table in (sc.collapsed, sc.steps, sc.fissions):
                table.pop(i, None)
        # (an index a collapse makes in one part of a concat and a concat in another is the collapse's
        # two loops; the concat is read where that index falls in each of its parts)
        collapsed = {n.result for n in scope_walk(body, set(indices)) if isinstance(n, Collapse)}
        for n in scope_walk(body, set(indices)):
            if top_level and walks_collapse(n, var, loops):
                # (the output's loops p, q become the collapse's i, j, walking the operand in storage
                # order; p and q are let-bound to m's quotient and remainder by |q|, for m = j + i·|j|
                # the entry's place in both: the writes ascend as the output stores them)
                (i, j), k = n.operand.indices, n.operand.result
                p, q = n.results
                ii, jj = fresh(i.name), fresh(j.name)
                drop_steps(sc, loops, (var[p], var[q]))
                at = loops.index(var[p])
                loops[at:at + 2] = [ii, jj]
                extent_of.update({ii: ext[i], jj: ext[j]})
                sc.collapsed[k] = (ii, jj, ext[i], ext[j])
                env[k] = _plus(Index(jj), _times(Index(ii), _expr(ext[j])))
                size = _expr(ext[q])
                env[p], env[q] = Variable(p.name), Variable(q.name)
                sc.walked[n] = ((env[p], Call(_DIV, (env[k], size))), (env[q], Call(_MOD, (env[k], size))))
                reads.append(("walk-reshape", f"{n}: the output's loops {p}, {q} are the collapse's {ii}, {jj}, "
                                              f"walking its operand in storage order; {p} = m // {size}, "
                                              f"{q} = m % {size} for m = {env[k]}"))
                var.update({i: ii, j: jj})
                env.update({i: Index(ii), j: Index(jj)})
            elif isinstance(n, Collapse) and var.get(n.result) in loops:
                (i, j), k = n.indices, n.result
                ii, jj = fresh(i.name), fresh(j.name)
                sc.collapsed[k] = (ii, jj, ext[i], ext[j])
                drop_steps(sc, loops, (var[k],))
                at = loops.index(var[k])
                loops[at:at + 1] = [ii, jj]
                env[k] = _plus(Index(jj), _times(Index(ii), _expr(ext[j])))
                if top_level and walks_column_major(n):
                    # (the operand walked in its storage order, minor index first: each entry written
                    # and read at t + (j' + i'·|j|) under a one-step loop t, an offset by the loops
                    # outside it, where the output and the other reads take any coordinate)
                    t = fresh("t")
                    one_step.add(t)
                    loops[at:at + 2] = [jj, ii, t]
                    extent_of[t] = 1
                    env[k] = _plus(Index(t), env[k])
                    column_major.add(n)
                    reads.append(("walk-reshape", f"{n}: the loops run {jj} outside {ii}, walking "
                                                  f"{n.operand.tensor} in its storage order; {k} = {env[k]} "
                                                  f"written and read out of order"))
                extent_of.update({ii: ext[i], jj: ext[j]})
                # (a collapse of a collapse: the outer one's index reads the loop this one replaced)
                env = {x: substitute(v, Index(var[k]), env[k]) for x, v in env.items()}
                sc.walked = {n2: tuple((v, substitute(x, Index(var[k]), env[k])) for v, x in bs)
                             for n2, bs in sc.walked.items()}
                # (the collapse's own indices are these loops: a concat making one splits it)
                var.update({i: ii, j: jj})
                env.update({i: Index(ii), j: Index(jj)})
            elif isinstance(n, Collapse) and n.result in sc.collapsed and n.result in var:
                if sc.collapsed[n.result][2:] != (ext[n.indices[0]], ext[n.indices[1]]):
                    raise StrategyError(f"{n}: {n.result} is collapsed twice from indices of different extents; "
                                        f"the looplet strategy walks one pair of loops for it")
            elif isinstance(n, Concat) and var.get(n.result) in loops and n.result not in collapsed:
                sizes = tuple(ext[j] for j in n.indices)
                if n.result in sc.fissions:
                    if tuple(x for _, x in sc.fissions[n.result]) != sizes:
                        raise StrategyError(f"{n}: {n.result} concatenates parts of other extents elsewhere; the "
                                            f"looplet strategy splits its loop one way")
                else:
                    sc.fissions[n.result] = [(fresh(j.name), x) for j, x in zip(n.indices, sizes)]
                    sc.parts[var[n.result]] = n.result
                # a part that is a strided slice gets its one-step loop inside the part's loop
                for (part, _), j, operand in zip(sc.fissions[n.result], n.indices, n.operands):
                    if part not in sc.part_steps and any(isinstance(x, Slice) and x.step != 1 and x.result == j
                                                         for x in scope_walk(operand, {j})):
                        sc.part_steps[part] = fresh("t")
                        one_step.add(sc.part_steps[part])
                # a part that is a collapse walks its two loops in place of the part's (a stack's
                # ravels concatenated: each operand's rows, then its columns, in storage order)
                for (part, size), j, operand in zip(sc.fissions[n.result], n.indices, n.operands):
                    makers = [x for x in scope_walk(operand, {j}) if isinstance(x, ShapeOp) and j in x.produced()]
                    if not makers or not all(isinstance(x, Collapse) for x in makers) or part in sc.part_collapsed:
                        continue
                    (a, b) = makers[0].indices
                    if part in sc.part_steps or any((ext[x.indices[0]], ext[x.indices[1]]) != (ext[a], ext[b])
                                                    for x in makers):
                        raise StrategyError(f"{n}: its part {j} is made by collapses of other extents or a "
                                            f"strided slice too; the looplet strategy walks one pair of loops "
                                            f"for a collapsed part")
                    ii, jj = fresh(a.name), fresh(b.name)
                    sc.part_collapsed[part] = (ii, jj, ext[a], ext[b],
                                               _plus(Index(jj), _times(Index(ii), _expr(ext[b]))))
            elif isinstance(n, Slice) and n.step != 1 and var.get(n.result) in loops and n.result not in sc.steps:
                t = fresh("t")
                one_step.add(t)
                sc.steps[n.result] = (t, var[n.result])
                loops.insert(loops.index(var[n.result]) + 1, t)
                extent_of[t] = 1
            elif isinstance(n, Split) and isinstance(n.operand, Slice) and n.operand.step not in (0, 1) and \
                    not isinstance(n.operand.operand, Collapse) and n.operand.result == n.index and \
                    var.get(n.results[1]) in loops and n.operand not in split_steps:
                # (a split of a strided slice: its read at t + (s + r·(q + p·|q|)) under a one-step loop t
                # after q's is a window of t's that ascends with q (descends, r < 0), so its cursor is
                # carried from q to q, up (down) the operand)
                t = fresh("t")
                one_step.add(t)
                split_steps[n.operand] = t
                loops.insert(loops.index(var[n.results[1]]) + 1, t)
                extent_of[t] = 1
        for n in scope_walk(body, set(indices)):
            if isinstance(n, Slice) and n.step != 1 and n.result in sc.collapsed and n not in split_steps and \
                    sc.collapsed[n.result][1] in loops and not isinstance(n.operand, Collapse):
                # (a strided slice beside a collapse making its index, x[7::-2] + c.reshape(4): read at
                # t + (s + r·(j' + i'·|j|)) under a one-step loop t after the collapse's inner loop j', as
                # a split's index: a window of t's ascending with j' (descending, r < 0), carried)
                t = fresh("t")
                one_step.add(t)
                split_steps[n] = t
                loops.insert(loops.index(sc.collapsed[n.result][1]) + 1, t)
                extent_of[t] = 1
        if top_level:
            slices = [n for n in scope_walk(body, set(indices)) if isinstance(n, Slice)]
            moved = {n.result for n in slices
                     if var.get(n.result) in loops and columns_outside(n, var, env, loops, sc, slices)}
            for k in moved & set(sc.steps):
                # (each column's row level walked in the entries a strided slice keeps, where every
                # slice making k can: no one-step loop, no seek per output row in every column)
                if all(walks_stepped(n) for n in slices if n.result == k):
                    t = sc.steps.pop(k)[0]
                    loops.remove(t)
                    one_step.discard(t)
                    stepped.update(n for n in slices if n.result == k)
            for n in slices:
                if var.get(n.result) in loops:
                    kept_outside(n, var, env, loops, sc, slices)
        for k, (t, name) in sc.steps.items():
            if k in var:
                # (a write inside the one-step loop is at t + k, so a sparse output still sees its loops in order)
                env[k] = _plus(Index(t), Index(name))
        base = max(depth.values(), default=-1) + 1
        depth.update({name: base + k for k, name in enumerate(loops)})
        depth.update({name: depth[var[l]] for l, parts in sc.fissions.items() if l in var for name, _ in parts})
        depth.update({t: depth[part] + 0.5 for part, t in sc.part_steps.items() if part in depth})
        for part, (ii, jj, *_) in sc.part_collapsed.items():
            if part in depth:
                depth.update({ii: depth[part], jj: depth[part] + 0.5})
        return loops, env, sc

    def columns_outside(e, var, env, loops, sc, slices) -> bool:
        """Move outside the loop of the slice ``e``'s result the statement's loops over the modes its
        operand stores before the sliced one, where :func:`check_stride_concordant` would refuse
        them inside (a CSC's rows sliced: each column's row level windowed, or strided by the slice's
        one-step loop, inside the loop over its columns), when the output takes its writes in that
        order: written at random (dense, or a scalar), or storing those modes first too (a CSC
        output). Such a mode's loop is its index's own, a reduced one's too (``sum(A_csc[1:9:2],
        axis=1)``), or that of a slice of it in ``slices`` (``A_csc[1:9:2, ::2]``: the columns' slice,
        moved with its one-step loop); whether it moved one."""
        lhs, out = list(stmt.lhs.indices), formats.get(stmt.lhs.tensor)
        anywhere = out is None or all(lvl.random_write for lvl in out.levels)
        if e.result not in lhs and not anywhere:
            return False
        moved = False
        for _, x in stored_before(e, formats):
            if x not in var or env.get(x) != Index(var[x]):
                # (a slice of that mode: its loop walks it)
                x = next((s.result for s in slices if s.index == x and var.get(s.result) in loops), None)
                if x is None:
                    continue
            if var[x] not in loops or loops.index(var[x]) < loops.index(var[e.result]):
                continue
            if not anywhere and (x not in lhs or
                                 out.mode_order.index(lhs.index(x)) > out.mode_order.index(lhs.index(e.result))):
                if x not in lhs or not scattered(out):
                    continue
                # (an output storing the slice's result first takes the writes by a scatter: A_csc[::-1] into a CSR)
                reads.append(("transpose", f"{e}: the loop over {x} runs outside {e.result}'s, walking "
                                           f"{e.operand.tensor if isinstance(e.operand, N.Access) else e.operand} in "
                                           f"its storage order; {stmt.lhs.tensor}, stored {e.result} first, is built "
                                           f"by a scatter"))
            block = [var[x]] + ([sc.steps[x][0]] if x in sc.steps else [])
            for name in block:
                loops.remove(name)
            at = loops.index(var[e.result])
            loops[at:at] = block
            moved = True
        return moved

    def kept_outside(e, var, env, loops, sc, slices) -> None:
        """Move the loop of the slice ``e``'s result (with a strided one's one-step loop) outside the
        statement's loops over the modes its operand stores after the sliced one (:func:`stored_after`:
        ``A_csc[:, ::2]`` or ``A_csc[:, 1:9]``, whose columns' loop ran inside the rows'), where the
        output takes its writes in that order: written at random, storing the slice's result before
        those modes (a CSC output), or by a scatter (a CSR output). Each kept column is then read at ``s + r * k`` and its rows walked, where the rows'
        loop outside located each entry. Not where another of the ``slices`` would then walk its
        operand against its order (``A_csc[:, ::2] + B_csr[:, ::2]``: B's rows inside its columns)."""
        def discordant(order) -> int:
            return sum(var.get(y) in order and order.index(var[y]) > order.index(var[n.result])
                       for n in slices if var.get(n.result) in order for _, y in stored_before(n, formats))

        lhs, out = list(stmt.lhs.indices), formats.get(stmt.lhs.tensor)
        anywhere = out is None or all(lvl.random_write for lvl in out.levels)
        if e.result not in lhs and not anywhere:
            return
        for _, x in stored_after(e, formats, windows=True):
            if x not in var or env.get(x) != Index(var[x]) or var[x] not in loops or \
                    loops.index(var[x]) > loops.index(var[e.result]):
                continue
            against = not anywhere and x in lhs and \
                out.mode_order.index(lhs.index(x)) < out.mode_order.index(lhs.index(e.result))
            # (an output storing x first takes the writes of k's loop outside x's by a scatter, as a
            # CSC of a CSR's row loops: A_csc[:, ::2] into a CSR walks A, where x's loop outside gathered)
            if against and not scattered(out):
                continue
            block = [var[e.result]] + ([sc.steps[e.result][0]] if e.result in sc.steps else [])
            order = [name for name in loops if name not in block]
            at = order.index(var[x])
            order[at:at] = block
            if discordant(order) <= discordant(loops):
                loops[:] = order
                if against:
                    reads.append(("transpose", f"{e}: the loop over {e.result} runs outside {x}'s, walking "
                                               f"{e.operand.tensor} in its storage order; {stmt.lhs.tensor}, "
                                               f"stored {x} first, is built by a scatter"))

    def walks_column_major(n) -> bool:
        """Whether the collapse ``n`` (of the statement's own loop) walks its minor index's loop outside
        its major one's (:func:`~.slice_order.walks_minor_first`: ``x + c_csc.reshape(4)``), the output
        taking writes anywhere (a dense one, a scalar, or the workspace of a sparse one)."""
        out = formats.get(stmt.lhs.tensor)
        return (out is None or all(lvl.random_write for lvl in out.levels)) and walks_minor_first(n, rhs, formats)

    def scattered(out) -> bool:
        """Whether the output ``out`` can take the statement's writes out of its storage order by a
        scatter (:func:`~compiler.stand_in.scatters`): an assignment, no reduction, of a format that scatters."""
        return stmt.op is None and not isinstance(stmt.rhs, N.Reduce) and scatters(out)

    def walks_stepped(e) -> bool:
        """Whether the strided slice ``e`` reads one access directly, at its index alone, whose level
        storing the sliced mode walks the entries a slice keeps (:func:`~.stepped.steps_through`)."""
        acc = e.operand
        if not (e.step != 1 and isinstance(acc, N.Access) and acc.tensor in formats and
                list(acc.indices).count(e.index) == 1):
            return False
        fmt = formats[acc.tensor]
        # (by storage mode: a SparseCOO level stores several modes)
        return steps_through(storage_levels(fmt)[fmt.mode_order.index(acc.indices.index(e.index))])

    def loop_index(x, node, role):
        if not (isinstance(x, Index) and x.name in depth):
            raise StrategyError(f"{node}: the looplet strategy lowers it where {role} is a loop of the kernel; "
                                f"here it is computed by another shape operator ({x}); compute the inner "
                                f"operator in a statement of its own first")
        return x

    def walks_collapse(n, var, loops) -> bool:
        """Whether ``n`` is a split of a collapse that the output's loops can walk by the collapse's
        loops: ``C[.., p, q, ..] = split(collapse(A[.., i, j, ..], (i, j) -> k), k -> (p, q))`` with
        ``p``'s loop just outside ``q``'s, every access of the collapse storing ``i`` before ``j``
        (the operand walked in its storage order), an output taking writes at any coordinate (a
        dense one: each ``(i, j)`` writes the one entry ``(p, q)`` it moves to), ``p`` and ``q``
        read nowhere else."""
        if not (isinstance(n, Split) and isinstance(n.operand, Collapse) and n.operand.result == n.index):
            return False
        (p, q), (i, j) = n.results, n.operand.indices
        if var.get(p) not in loops or loops[loops.index(var[p]) + 1:loops.index(var[p]) + 2] != [var.get(q)]:
            return False
        out = formats.get(stmt.lhs.tensor)
        if p not in stmt.lhs.indices or q not in stmt.lhs.indices:
            return False
        # (a sorted sparse output appends each fiber under the loops of its modes: its writes at
        # p, q computed inside the loops over i, j are not, and it is read by a gather instead)
        if out is not None and not all(lvl.slot_per_coordinate for lvl in out.levels):
            return False
        # (a concat making i or j splits its loop into one per part: the let-bound p, q would read
        # the loop it replaced; the collapse is gathered, each part read where the index falls in it)
        if any(isinstance(x, Concat) and x.result in (i, j) for x in N.walk(n.operand.operand)):
            return False
        for acc in N.accesses(n.operand):
            fmt = formats.get(acc.tensor)
            if fmt is not None and i in acc.indices and j in acc.indices and \
                    fmt.mode_order.index(acc.indices.index(j)) < fmt.mode_order.index(acc.indices.index(i)):
                return False
        # (an access of p or q elsewhere would be read at the let-bound quotient: located, not walked)
        for x in N.walk(rhs):
            if x is n:
                continue
            if isinstance(x, N.Access) and {p, q} & set(x.indices) or \
                    isinstance(x, ShapeOp) and {p, q} & set(x.produced()):
                return False
        return True

    def conv(e, env, top, sc, choice):
        if isinstance(e, N.Access):
            idxs = tuple(Literal(i) if isinstance(i, int) else env[i] for i in e.indices)
            return Access(TensorRef(e.tensor), idxs)
        if isinstance(e, N.Literal):
            return Literal(e.value)
        if isinstance(e, N.Call):
            return Call(e.op, tuple(conv(a, env, top, sc, choice) for a in e.args))
        if isinstance(e, N.Reduce):
            return reduce_into_scalar(e, env, top, sc, choice)
        if isinstance(e, Collapse):
            (i, j), k = e.indices, e.result
            if k not in sc.collapsed and (any(env.get(k) == at for at in made) or read_permissively(env.get(k))):
                return collapse_gather(e, env, top, sc, choice)
            walked = next((c for c in sc.part_collapsed.values() if env.get(k) == c[4]), None)
            if walked is not None:
                # (a concatenation's part: its loops are this collapse's, walked in storage order)
                ii, jj = walked[:2]
                check_collapse_concordant(e, formats)
                return conv(e.operand, {**env, i: Index(ii), j: Index(jj)}, top, sc, choice)
            if k not in sc.collapsed or env.get(k) != top.get(k):
                loop_index(env.get(k), e, f"the collapsed index {k}")
                # (a loop, but one another operator made: a concat's part of the collapsed index)
                raise StrategyError(f"{e}: the looplet strategy lowers a collapse whose index {k} is a loop of "
                                    f"the kernel's output; here another shape operator makes it ({env.get(k)}); "
                                    f"compute the collapse in a statement of its own first")
            ii, jj, _, _ = sc.collapsed[k]
            if e not in column_major:
                check_collapse_concordant(e, formats)
            # (a concat making i or j has split its loop: env holds the part's coordinate)
            return conv(e.operand, {**env, i: env.get(i, Index(ii)), j: env.get(j, Index(jj))}, top, sc, choice)
        if isinstance(e, Split):
            k, (i, j) = e.index, e.results
            if e in sc.walked:
                return conv(e.operand, {**env, k: top[k]}, top, sc, choice)
            if not (isinstance(env[i], Index) and isinstance(env[j], Index)):
                # (a slice of the split's result, i = start + step·p: k = j + i·|j| read as an offset
                # by loops outside those j reads, as the split reads its own loops)
                xi, xj = affine(env[i]), affine(env[j])
                inner, outer = list(indices_in(xj)), list(indices_in(xi))
                if not inner or not outer or any(x.name not in depth for x in inner + outer) or \
                        max(depth[x.name] for x in outer) >= min(depth[x.name] for x in inner):
                    raise StrategyError(f"{e}: looplets read a slice of {i} or {j} as an offset of the loops "
                                        f"{j} reads by those {i} reads, so {j}'s must be inside; here {i} is "
                                        f"{env[i]} and {j} is {env[j]}")
                made.append(_plus(xj, _times(xi, _expr(ext[j]))))    # (a collapse making k gathers)
                return conv(e.operand, {**env, k: made[-1]}, top, sc, choice)
            xi, xj = loop_index(env[i], e, f"{i}"), loop_index(env[j], e, f"{j}")
            if depth[xj.name] < depth[xi.name]:
                raise StrategyError(f"{e}: looplets read {k} = {i}·|{j}| + {j} as an offset of the loop over {j} "
                                    f"by the one over {i}, so {j} must be the inner loop; here the kernel's "
                                    f"loops put {j} outside {i} (a column-major walk of a row-major split is "
                                    f"discordant)")
            made.append(_plus(xj, _times(xi, _expr(ext[j]))))   # (a collapse making k gathers)
            return conv(e.operand, {**env, k: made[-1]}, top, sc, choice)
        if isinstance(e, Concat):
            l = e.result
            if l not in choice or env.get(l) != top.get(l):
                return concat_read(e, env, top, sc, choice)
            m = choice[l]
            part = sc.fissions[l][m][0]
            at = _plus(Index(sc.part_steps[part]), Index(part)) if part in sc.part_steps else \
                sc.part_collapsed[part][4] if part in sc.part_collapsed else Index(part)
            return conv(e.operands[m], {**env, e.indices[m]: at}, top, sc, choice)
        if isinstance(e, Slice):
            planned = e.result in sc.steps and env[e.result] == top[e.result]
            step = sc.steps[e.result] if planned else part_step(env[e.result], sc.part_steps)
            beside = e.result in sc.collapsed and env[e.result] == top.get(e.result)
            if not step and (beside or any(env[e.result] == at for at in made)):
                # (a slice read at an index another operator computes, a split's q + p·|q| or a collapse's
                # beside it: its operand is read at start + step·that index; a collapse gathered there,
                # each entry located)
                at = affine(env[e.result])
                at = _plus(Literal(e.start), at if e.step == 1 else _times(at, Literal(e.step)))
                if e in split_steps and split_steps[e] in depth and not isinstance(e.operand, Collapse):
                    at = _plus(Index(split_steps[e]), at)
                elif e.step != 1 and not isinstance(e.operand, Collapse):
                    at = stride_gather(e, at)
                made.append(at)
                return conv(e.operand, {**env, e.index: at}, top, sc, choice)
            if e in stepped and env[e.result] == top[e.result]:
                # (walked in the entries it keeps: its operand read at its loop, strided at unfurl)
                xk = loop_index(env[e.result], e, f"the sliced index {e.result}")
                check_stride_concordant(e, env, depth, formats, xk.name)
                acc, mode = e.operand, e.operand.indices.index(e.index)
                idxs = tuple(xk if m == mode else Literal(i) if isinstance(i, int) else env[i]
                             for m, i in enumerate(acc.indices))
                return Access(Strided(acc.tensor, mode, e.start, e.stop, e.step), idxs)
            xk = Index(step[1]) if step else loop_index(env[e.result], e, f"the sliced index {e.result}")
            if e.step != 1 and not step:
                raise StrategyError(f"{e}: the looplet strategy lowers a strided slice where {e.result} is a loop "
                                    f"of the kernel or a part of a concatenation's; here it is computed by another "
                                    f"shape operator")
            check_stride_concordant(e, env, depth, formats, xk.name)
            if e.step == 1:
                at = Call("window", (xk, Literal(e.start), Literal(e.stop)))
            else:
                at = _plus(Index(step[0]), _plus(Literal(e.start), _times(xk, Literal(e.step))))
            made.append(at)       # (a collapse making e.index reads it by a gather)
            return conv(e.operand, {**env, e.index: at}, top, sc, choice)
        if isinstance(e, Broadcast):
            return conv(e.operand, env, top, sc, choice)
        raise StrategyError(f"the looplet strategy cannot lower {e!r}")

    def collapse_gather(e, env, top, sc, choice):
        """A collapse read at the index a slice or a split of it makes of its loops (``t + (s + r·p)``,
        ``window(p, s, e)``, a split's ``q + p·|q|``, or a gathered collapse's quotient): its indices
        are that index's quotient and remainder by the minor extent, let-bound before the
        statement, and the operand is read there, each entry located (a binary search in a sparse
        level: a pass over the output's length, not over the stored entries)."""
        (i, j), k = e.indices, e.result
        at = affine(env[k])
        # (a concatenation's part read where the index falls in it: the quotient is permissive, the
        # remainder of a floor division always in range)
        permissive = read_permissively(at)
        at = at.args[0] if permissive else at
        acc = e.operand
        if isinstance(acc, N.Access) and tuple(acc.indices) == (i, j) and acc.tensor in formats and \
                ravels(formats[acc.tensor]) and walks_on(at, depth, one_step):
            # (a row-major matrix's stored entries are in raveled order: one walk, each window
            # seeking once, where the quotient and remainder would search for every coordinate)
            note = f"{e} read at {k} = {at}: ravel({acc.tensor}) walks its entries in storage order"
            if ("walk-ravel", note) not in reads:
                reads.append(("walk-ravel", note))
            return Access(Raveled(acc.tensor), (Call("permit", (at,)) if permissive else at,))
        tensors = {a.tensor for a in N.accesses(stmt.rhs)} | {stmt.lhs.tensor}
        taken.update(tensors)       # (a let's name is no tensor's either)
        major, minor = Variable(fresh(i.name)), Variable(fresh(j.name))
        size = _expr(ext[j])
        lets.extend([(major, Call(_DIV, (at, size))), (minor, Call(_MOD, (at, size)))])
        # (a collapse of a collapse gathers at the quotient, a 3-D reshape; a concat read at the
        # remainder reads each part where it falls, an hstack raveled and split)
        made.extend([major, minor])
        note = f"{e} read at {k} = {at}: {i} = {major.name}, {j} = {minor.name}, each entry located"
        if ("gather", note) not in reads:     # (each part of a fissioned loop reads it again)
            reads.append(("gather", note))
        return conv(e.operand, {**env, i: Call("permit", (major,)) if permissive else major, j: minor},
                    top, sc, choice)

    def stride_gather(e, at):
        """The coordinate ``at`` (``s + r·(q + p·|q|)``) where a strided slice reads its operand at an
        index another operator computes: no offset of a loop, so let-bound before the statement and
        each entry located (a binary search in a sparse level), as a gathered collapse's indices."""
        taken.update(tensor_names)       # (a let's name is no tensor's either)
        var = Variable(fresh(e.index.name))
        lets.append((var, at))
        note = f"{e} read at {e.index} = {var.name} = {at}, each entry located"
        if ("gather", note) not in reads:     # (each part of a fissioned loop reads it again)
            reads.append(("gather", note))
        return var

    def concat_read(e, env, top, sc, choice):
        """A concat whose index another operator computes (a split's ``q + p·|q|``, or a gathered
        collapse's quotient: a vstack raveled and split): each part read permissively where that
        index falls in it, the first part present taken, as Finch's ``coalesce(x[~l], y[~(l - |x|)])``;
        a part's index must be read by its accesses directly or made by a collapse of them."""
        l = e.result
        at = affine(env.get(l))
        quotient = isinstance(at, Variable) and any(at == x for x in made)
        if not quotient and (not isinstance(at, (Index, Call)) or not list(indices_in(at)) or
                             any(x.name not in depth for x in indices_in(at))):
            raise StrategyError(f"{e}: the looplet strategy splits the loop over {l} into one loop per operand, "
                                f"or reads it at an index of loops; here {l} is {env.get(l)}")
        parts, offset = [], None
        for j, operand in zip(e.indices, e.operands):
            reads = [a for a in N.walk(operand) if isinstance(a, N.Access) and j in a.indices]
            makers = [n for n in N.walk(operand) if isinstance(n, ShapeOp) and j in n.produced()]
            # (a collapse making the part's index is gathered where it falls in the part: a stack's
            # ravels concatenated, split into rows straddling two operands)
            if all(isinstance(n, Collapse) and _reads_directly(n) for n in makers):
                reads, makers = reads + makers, []
            if not reads or makers:
                raise StrategyError(f"{e}: the looplet strategy reads a concatenation at an index another "
                                    f"operator computes ({l} = {env.get(l)}) where each part reads its index "
                                    f"{j} in its accesses directly")
            shifted = at if offset is None else Call(_SUB, (at, offset))
            parts.append(conv(operand, {**env, j: Call("permit", (shifted,))}, top, sc, choice))
            offset = _expr(ext[j]) if offset is None else _plus(offset, _expr(ext[j]))
        return Call("coalesce", tuple(parts))

    pending: list = []         # the statements computing the scalars the statement being built reads
    lets: list = []            # (variable, value) the statement being built reads: a gathered collapse's indices
    made: list = []            # the indices slices and splits made of their loops, and gathers' quotients
    reads: list = []           # (stage, note): how each collapse read at a computed index was read, for the trace
    temporaries: list = []     # (name, format) of each
    tensor_names = {a.tensor for a in N.accesses(stmt.rhs)} | {stmt.lhs.tensor}

    once: dict = {}            # a reduction of no free index -> its temporary, computed once before the loops
    prologue: list = []

    def reduce_into_scalar(e, env, top, sc, choice):
        """A reduction inside the right-hand side, computed into a fresh scalar temporary just before
        the statement that reads it (its loops run where every loop of the kernel is bound), or once
        before every loop when it has no free index; its read. Its loops are planned as the
        statement's are: a shape operator making a reduced index reshapes or splits its loop."""
        closed = not N.free_indices(e)
        if closed and e in once:   # (each part of a fissioned loop reads the one temporary)
            return Access(TensorRef(once[e]), ())
        names = [fresh(i.name) for i in e.indices]
        loops, inner, isc = plan(tuple(e.indices), names, e.body, sc)
        t = fresh_temp(taken, tensor_names)

        def leaf(env2, choice2):
            nonlocal pending, lets
            (outer, pending), (outer_lets, lets) = (pending, []), (lets, [])
            own = {**top, **{i: env2[i] for i in e.indices}}   # (where this reduction's loops bind its indices)
            stmt_ = Assign(Access(TensorRef(t), (), "update"), e.op, conv(e.body, env2, own, isc, choice2))
            (nested, pending), (mine, lets) = (pending, outer), (lets, outer_lets)
            return _let(mine, Block((*nested, stmt_)) if nested else stmt_)

        body = build(loops, isc, 0, {**env, **inner}, choice, leaf)
        dt = reduce_dtype(e.op, expr_dtype(e.body, lambda a: formats[a.tensor].dtype))
        ident = e.op.identity_for(dt)
        if ident is NOVALUE:
            raise StrategyError(f"{e}: the looplet strategy computes a reduction inside an expression into a "
                                f"temporary that starts at the operator's identity, and {e.op} has none")
        ident = ident.item() if hasattr(ident, "item") else ident
        fill_of = lambda a: formats[a.tensor].fill   # noqa: E731
        stops = early_exit(e.op, dt, expr_facts(e.body, fill_of))[0]
        temporaries.append((t, (ShortCircuitScalar if stops else Scalar)(ident, dtype=dt)))
        values.assume(t, expr_facts(e, fill_of))
        if closed:
            once[e] = t
            prologue.extend([Declare(TensorRef(t), Literal(ident)), body])
        else:
            pending.extend([Declare(TensorRef(t), Literal(ident)), body])
        return Access(TensorRef(t), ())

    def build(loops, sc, k, env, choice, leaf):
        """The loops from the ``k``-th in, a concatenated index's loop split into one loop per part,
        around what ``leaf(env, choice)`` gives at the innermost."""
        if k == len(loops):
            return leaf(env, choice)
        name = loops[k]
        if name not in sc.parts:
            stop = extent_ir(sc.extent_of[name], formats)
            return Loop(Index(name), Extent(Const(0, "int64"), stop), build(loops, sc, k + 1, env, choice, leaf))
        i = sc.parts[name]
        parts, offset = [], None
        for m, (part, size) in enumerate(sc.fissions[i]):
            at = Index(part) if offset is None else _plus(Index(part), offset)
            step = sc.part_steps.get(part)
            walked = sc.part_collapsed.get(part)
            if walked is not None:
                # (a collapsed part's loops ii, jj: its write is at jj + ii·|j| after the parts before)
                at = walked[4] if offset is None else _plus(walked[4], offset)
            # (a strided part's one-step loop: its write is at t + the part's, as a strided loop's)
            here = at if step is None else _plus(Index(step), at)
            # (a collapse's index written through this loop, j + l·|j|, reads the part's coordinate)
            moved = {x: substitute(v, Index(name), here) for x, v in env.items()}
            inner = build(loops, sc, k + 1, {**moved, i: here}, {**choice, i: m}, leaf)
            if step is not None:
                inner = Loop(Index(step), Extent(Const(0, "int64"), Const(1, "int64")), inner)
            if walked is not None:
                ii, jj, ei, ej, _ = walked
                inner = Loop(Index(jj), Extent(Const(0, "int64"), extent_ir(ej, formats)), inner)
                parts.append(Loop(Index(ii), Extent(Const(0, "int64"), extent_ir(ei, formats)), inner))
            else:
                parts.append(Loop(Index(part), Extent(Const(0, "int64"), extent_ir(size, formats)), inner))
            offset = _expr(size) if offset is None else _plus(offset, _expr(size))
        return Block(tuple(parts))

    def statement(env, choice):
        nonlocal pending, lets
        lhs = Access(TensorRef(stmt.lhs.tensor), tuple(env[i] for i in stmt.lhs.indices), "update")
        last = Assign(lhs, op, conv(rhs, env, env, top_scope, choice))
        (before, pending), (mine, lets) = (pending, []), (lets, [])
        mine = [b for bs in top_scope.walked.values() for b in bs] + mine
        return _let(mine, Block((*before, last)) if before else last)

    loops, env, top_scope = plan(tuple(top_indices), [i.name for i in top_indices], rhs, _Scope.empty(), True)
    if red and _writes(loops, top_scope) > 1:
        # (a loop split into one per part, each writing the entry: a sparse output would append it once
        # per part; the reduction goes through a scalar, the entry written once. Planned again from the
        # start over the output's indices alone, the names fresh as they were, before anything is built)
        rhs, red, op, init = stmt.rhs, (), stmt.op, None
        top_indices = list(stmt.lhs.indices)
        taken.clear()
        taken.update({i.name for i in top_indices} | produced)
        for made_by_plan in (depth, one_step, split_steps, stepped, reads):
            made_by_plan.clear()
        loops, env, top_scope = plan(tuple(top_indices), [i.name for i in top_indices], rhs, _Scope.empty(), True)
    body = build(loops, top_scope, 0, env, {}, statement)
    stmts = [*prologue, body] if init is None else [Declare(TensorRef(stmt.lhs.tensor), init), *prologue, body]
    names = list(dict.fromkeys([stmt.lhs.tensor] + [a.tensor for a in N.accesses(stmt.rhs)]))
    return LoopProgram(stmt.lhs.tensor + "_kernel", tuple(names), Block(tuple(stmts)), str(stmt), 1,
                       tuple(temporaries)), info, tuple(reads)


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


def _writes(loops: list, scope) -> int:
    """How many times the statement is written inside ``loops``: once in each part of each loop split
    into parts (a concatenated index's), as :func:`build` makes them."""
    count = 1
    for name in loops:
        if name in scope.parts:
            count *= len(scope.fissions[scope.parts[name]])
    return count


class _Scope:
    """What one scope's loops (the statement's, or those of a reduction inside it) made of the shape
    operators over their indices, keyed by the notation's index (an inner scope's over the outer's):
    ``collapsed`` k -> (i', j', |i|, |j|),
    ``steps`` k -> (its one-step loop, k's loop), ``fissions`` l -> [(part's loop, extent)], ``parts``
    a fissioned loop's name -> its index, ``extent_of`` each loop's extent, ``part_steps`` a
    part's loop -> the one-step loop inside it (the part is a strided slice), ``part_collapsed`` a
    part's loop -> ``(i', j', |i|, |j|, j' + i'·|j|)``, the loops a collapse making it walks in its
    place, ``walked`` a split of
    a collapse walked by the collapse's loops -> its results' let bindings."""

    def __init__(self, collapsed, steps, fissions, parts, extent_of, part_steps, part_collapsed):
        self.collapsed, self.steps, self.fissions = collapsed, steps, fissions
        self.parts, self.extent_of, self.part_steps = parts, extent_of, part_steps
        self.part_collapsed = part_collapsed
        self.walked: dict = {}

    @classmethod
    def empty(cls):
        return cls({}, {}, {}, {}, {}, {}, {})


def _let(bindings: list, body):
    """``body`` under ``let v = x`` for each ``(v, x)`` of ``bindings``, the first outermost."""
    for var, val in reversed(bindings):
        body = Define(var, val, body)
    return body


def _reads_directly(e: Collapse) -> bool:
    """Whether the collapse's indices are read by its accesses directly (no operator makes them)."""
    return not any(isinstance(n, ShapeOp) and set(e.indices) & set(n.produced()) for n in N.walk(e.operand)) \
        and all(any(isinstance(a, N.Access) and i in a.indices for a in N.walk(e.operand)) for i in e.indices)


__all__ = ["shape_program", "extent_ir"]
