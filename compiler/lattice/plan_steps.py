"""The statement rewrites the plan (:mod:`compiler.lattice.plan`) decides on before any CFIR is built.

Each takes concrete index notation and gives it back transformed, or None when it does not
apply: a nested reduction the formats cannot nest is precomputed into a workspace
(:func:`hoist_reductions`), a sparse output that cannot be appended in the loop order is
gathered in a workspace (:func:`auto_workspace`, taco's automatic workspace), a dense output
fed by workspaces or by a sum of many sparse terms becomes a sequence of loop nests
(:func:`as_sequence`, :func:`terms_in_sequence`), and a reduction of every entry of one
compressed matrix follows its positions in one flat loop (:func:`flat_positions`).

>>> from compiler.notation import parse
>>> from compiler.format import csr
>>> from compiler.lattice.cin import concretize
>>> p = parse("s[] = A[i, j]")
>>> flat_positions(concretize(p), p, {"A": csr()})
Schedule(fuse(i, j, ij), pos(ij, pA, A))
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..algebra import NOVALUE
from ..dtypes import typed_scalar
from ..errors import StrategyError
from ..format import Format
from ..notation.ast import Access, Assign, Call, Index, Literal, Reduce, assign_spelling
from ..values import same_value
from .algebra import derive
from .cin import Assignment, Forall, Sequence, Where, assignments, expr_accesses, loop_chain, map_parts, wrap_loops
from .precompute import precompute, with_workspace_kind, workspace_name
from .iteration_graph import IterationGraph, LoopOrderError, storage_path
from .nested_workspaces import gather_output, loops_inside, nest_workspaces, read_against_storage
from .ordering import order_statement


def output_assignment(s):
    """The assignment to the output: inside the foralls, through the consumers of wheres."""
    while isinstance(s, (Forall, Where)):
        s = s.body if isinstance(s, Forall) else s.consumer
    return s


def output_order(s) -> list[Index]:
    """The loops around the assignment to the output: foralls, through the consumers of wheres."""
    out = []
    while isinstance(s, (Forall, Where)):
        if isinstance(s, Forall):
            out.append(s.index)
            s = s.body
        else:
            s = s.consumer
    return out


def auto_workspace(stmt, out: Access, fmt, name: str | None = None, gather: bool = False):
    """``stmt`` with a workspace over the output's innermost index when the loops would scatter.

    A sparse output is appended in storage order; when a reduction loop comes between
    its indices (SpGEMM's ``i, k, j``), the result of each outer iteration is gathered
    in a dense workspace instead (taco's automatic workspace). With ``gather`` (no schedule
    or loop order was asked for: the statement's workspaces are the plan's own), the whole output
    is gathered where a workspace inside the loops keeps precompute out
    (:func:`~compiler.lattice.nested_workspaces.gather_output`). None when not needed
    or not possible (the storage-order check then explains).
    """
    path = storage_path(out, fmt)[0]
    chain, body = loop_chain(stmt)
    if not chain and isinstance(body, Where) and body.temp.workspace:
        # a workspace computed first (a precompute): its consumer appends to the output
        name = workspace_name(stmt)
        consumer = auto_workspace(body.consumer, out, fmt, name, gather)
        return None if consumer is None else replace(body, consumer=consumer)
    if isinstance(body, Where) and not body.temp.workspace:
        body = output_assignment(body)   # it reads nested reductions' temporaries
    if list(chain[:len(path)]) == list(path) or not path:
        return None
    name = name or workspace_name(stmt)
    if not isinstance(body, Assignment):
        # (the whole output gathered, where a workspace inside the loops keeps precompute out: a reduction
        # outside the output's index over one nested inside it, prod[j, k](sum[l](...)) in loops j, i)
        ws = gather_output(stmt, out, path, name) if gather and isinstance(body, Where) and body.temp.workspace \
            else None
        return ws if ws is not None and list(output_order(ws)[:len(path)]) == list(path) else None
    # the innermost index when the loops outside it already run in storage order (Gustavson's
    # row); more of the output's indices when a reduction runs outside them (CSC x CSR: k, i, j)
    # a listed workspace first; then a dense one, for a reduction both outside and inside the
    # output's index (sum over j and k of A[j, i, k]: loops j, i, k): a listed workspace would list
    # each coordinate as it is first set, so it needs its index innermost in the producer
    for kind in ("auto", "dense"):
        for n in range(1, len(path) + 1):
            try:
                ws = precompute(stmt, list(path[-n:]), name, kind=kind)
            except StrategyError:
                continue
            if list(output_order(ws)[:len(path)]) == list(path):
                # (several indices: a dense array, swept once to append; a sparse one would list the
                # positions set, but it takes three times the memory: 25 bytes per coordinate)
                return ws
    return None


def as_sequence(stmt, out: Access, out_dtype: str, dtype_of, kept=frozenset(), nested=True):
    """``y = z; y += ...`` (taco's sequence statement) for a dense output whose reductions the
    formats made workspaces of only to add them to the rest; None when it does not apply.

    CSC ``y[i] = A[i, j] * x[j] + z[i]`` gathers the sum over the columns in ``w[i]``, then
    ``y[i] = w[i] + z[i]``. Defining ``y[i] = z[i]`` first and letting the columns add into
    ``y`` itself computes the same with no workspace, and leaves the columns the outer loop,
    which ``parallelize`` can take. With several such workspaces (CSC ``y = A x + B z``: ``w``
    and ``w_2``, one inside the other's where) each goes the same way, innermost first:
    ``y = 0; y += A x; y += B z``. The combining operator must be the reductions', commutative
    and associative (the terms then add in another order), each workspace must start at its
    identity, and its dtype must be the output's (no sum kept exact in int64 for a float ``y``).
    A workspace named in ``kept`` (one the schedule asked for) stays, and so does the rest.
    Without ``nested``, only one workspace goes (``parallelize`` takes one nest's outer loop, and
    a race strategy would reach into the other nests' updates too).
    """
    if not isinstance(stmt, Where) or not stmt.temp.workspace or stmt.temp.op is None or stmt.temp.name in kept:
        return None
    w, acc = stmt.temp, stmt.temp.access()
    op = w.op
    consumer, rest = stmt.consumer, None
    if isinstance(consumer, Where):   # an inner workspace: it goes first, and its define comes back here
        # (its updates combine by its operator: the same as this one's, or y would mix two)
        inner = as_sequence(consumer, out, out_dtype, dtype_of, kept) \
            if nested and consumer.temp.op == op else None
        if inner is None:
            return None
        consumer, rest = inner.define, inner.mutate
    order, body = loop_chain(consumer)
    if not (isinstance(body, Assignment) and body.op is None and body.lhs.tensor == out.tensor
            and sorted(i.name for i in body.lhs.indices) == sorted(i.name for i in acc.indices)
            and len(set(acc.indices)) == len(acc.indices)
            and sorted(i.name for i in order) == sorted(i.name for i in out.indices)
            and op.commutative and op.associative and same_value(w.init, op.identity)):
        return None
    parts = _chain_terms(body.rhs, op)
    if parts.count(acc) != 1 or any(a.tensor == w.name for t in parts if t != acc for a in expr_accesses(t)):
        return None
    others = [t for t in parts if t != acc]
    if others:
        other = others[0]
        for t in others[1:]:
            other = Call(op, (other, t))
    else:   # y = w alone (the other terms went to inner workspaces' sequences): y starts at the identity
        other = Literal(typed_scalar(op.identity_for(np.dtype(out_dtype)), out_dtype).item(), out_dtype)
    updates = assignments(stmt.producer)
    if not updates or any(a.lhs != acc or a.op != op for a in updates if a.lhs.tensor == w.name) \
            or any(dtype_of(a.rhs) != out_dtype for a in updates if a.lhs.tensor == w.name) \
            or any(x.lhs.tensor == out.tensor for x in updates) or _reads(stmt.producer, w.name):
        return None
    mutate = _retarget(stmt.producer, w.name, body.lhs)
    return Sequence(wrap_loops(order, Assignment(body.lhs, None, other)),   # (the terms' order as written)
                    mutate if rest is None else Sequence(rest, mutate))


#: a sum of this many terms or more into a dense output runs as a sequence of loops, one per term
SEQUENCE_TERMS = 3


def _chain_terms(e, op, spine_only: bool = False) -> list:
    """The terms ``e`` combines by ``op``, left to right: ``a + (b + c)`` has ``a, b, c``, or with
    ``spine_only`` (where regrouping would round differently) ``a, b + c``."""
    if not (isinstance(e, Call) and e.op == op):
        return [e]
    left, *rest = e.args
    return _chain_terms(left, op, spine_only) + (list(rest) if spine_only else
                                                 [t for a in rest for t in _chain_terms(a, op)])


def rows_per_thread(stmt, out: Access, ofmt: Format, parallel) -> bool:
    """Whether the loop nests of a sequence made of ``stmt`` may each run on threads: there is no
    ``parallelize``, or it takes the outermost loop, over the output's outer mode (each thread then
    writes only its own rows, in every nest, and needs neither atomics nor a copy). Otherwise
    (threads that may write one element) one parallel loop runs the merged terms.
    """
    if parallel is None:
        return True
    order, path = loop_chain(stmt)[0], storage_path(out, ofmt)[0]
    return bool(order and path) and order[0] == parallel and path[0] == parallel


def terms_in_sequence(stmt, out: Access, out_dtype: str, dtype_of, fill_of, full, update=None, parallel=None):
    """``y = t1; y op= t2; ...``, one loop nest per term, for a dense output assigned a sum (any
    commutative, associative operator) of :data:`SEQUENCE_TERMS` sparse terms or more, with the
    trace's note on it (``parallel``: the index each nest's loop runs on threads); None when it
    does not apply.

    Merged, ``n`` sparse terms make up to ``2^n - 1`` lattice points at each level of the loop nest
    (``A = B + C + D + E`` over 3-D CSF tensors: 384 KB of C). One after another, each term's
    loops visit only its own entries. It applies where it computes the same: the output is dense
    and starts at the fill everywhere, every term's fill is the operator's identity (a term's
    absent entries add nothing), and every term's dtype is the output's (no sum rounded in a
    narrower type first). The terms then add in the same order as merged: a float sum is split
    only along its left spine (``(a + b) + c``, as written ``a + b + c``; ``a + (b + c)`` is two
    terms). The results are the merged kernel's up to the sign of zero: where the first term is
    absent and a later one is -0.0, the sequence adds it to the fill, ``0.0 + -0.0 = 0.0``, as
    the oracle does, while the merged kernel leaves the absent term out and keeps -0.0.

    Terms that visit every point (``full``: dense operands only) add nothing to the merge; those
    that come first stay together in the first nest (``y = B + C; y += D; ...``), and they do not
    count towards :data:`SEQUENCE_TERMS`. An ``update`` by the same operator (``y[i] += a[i] +
    b[i] + c[i]``) becomes updates only where that regroups exactly: ``y + (a + b)`` is not
    ``(y + a) + b`` in floats.
    """
    order, body = loop_chain(stmt)
    if not (isinstance(body, Assignment) and body.op == update and body.lhs.tensor == out.tensor and order):
        return None
    op = body.rhs.op if isinstance(body.rhs, Call) else None
    if op is None or op.is_user or not (op.commutative and op.associative) or op.identity is NOVALUE:
        return None
    # (integers wrap, min and max pick: those regroup exactly; float sums and products round)
    exact = op.idempotent or np.dtype(out_dtype).kind in "biu"
    if update is not None and (update != op or not exact):
        return None
    parts = _chain_terms(body.rhs, op, spine_only=not exact)
    for t in parts:
        if dtype_of(t) != out_dtype:
            return None
        fill = derive(t, fill_of)[1]
        if fill is NOVALUE or not same_value(fill, op.identity_for(np.dtype(out_dtype))):
            return None
    lead = next((k for k, t in enumerate(parts) if not full(t)), len(parts))
    sparse = sum(not full(t) for t in parts)
    if sparse < SEQUENCE_TERMS:
        return None
    first = parts[0]
    for t in parts[1:max(lead, 1)]:
        first = Call(op, (first, t))
    rest = parts[max(lead, 1):]
    seq = wrap_loops(order, Assignment(body.lhs, op, rest[-1]))
    for t in reversed(rest[:-1]):
        seq = Sequence(wrap_loops(order, Assignment(body.lhs, op, t)), seq)
    how = "(define; mutate)" if update is None else f"(each an update, {assign_spelling(update)})"
    note = (f"the {len(parts)} terms of the sum go into {out.tensor} one after another {how}: merged in one loop "
            f"they would make up to {2 ** sparse - 1} cases at each level"
            + (f"; the first {lead}, dense, together" if lead > 1 else "")
            + (f"; each runs its loop over {parallel} on the threads" if parallel is not None else ""))
    return Sequence(wrap_loops(order, Assignment(body.lhs, update, first)), seq), note


def _reads(s, name: str) -> bool:
    """Whether a right-hand side in ``s`` reads the tensor ``name``."""
    return any(a.tensor == name for x in assignments(s) for a in expr_accesses(x.rhs))


def _retarget(s, name: str, lhs: Access):
    """``s`` with its assignments to the tensor ``name`` made to ``lhs`` instead."""
    if isinstance(s, Assignment):
        return replace(s, lhs=lhs) if s.lhs.tensor == name else s
    return map_parts(s, lambda part: _retarget(part, name, lhs))


def hoist_reductions(stmt, graph: IterationGraph, formats, dense_output: bool, derived=frozenset(),
                      avoid=frozenset(), nest: bool = False, nest_refused: bool = False):
    """``(statement, steps)`` with each nested reduction that the formats cannot nest hoisted out.

    ``y[i] = A[i, j] + 1`` reduces ``A[i, j]`` over ``j`` inside the loop over ``i``;
    a CSC ``A`` must be iterated ``j`` first. Such a reduction is precomputed before
    the loop, into a workspace over the loops it shares (``w[i] += A[i, j]`` in the
    order the format allows) that the consumer reads: taco's precompute, applied
    because the formats need it. Dense when the output is dense. A workspace over a loop
    in ``derived`` (split, fused or a position loop) is not made. New names also avoid the
    names in ``avoid`` (those of the rest of the statement). With ``nest``, a reduction of a
    reduction left against a storage order goes into nested workspaces
    (:mod:`compiler.lattice.nested_workspaces`); with ``nest_refused`` too, one that no precompute
    takes (the last resort: a caller tries the rest first).
    """
    from .cin import names_in
    from .precompute import precompute_expr
    if isinstance(stmt, Where) and not stmt.temp.workspace:
        # a where outside every loop (s = sum(..) + sum(..)): each side is a statement of its own
        avoid = names_in(stmt) | set(avoid)
        producer, first = hoist_reductions(stmt.producer, graph, formats, dense_output, derived, avoid, nest,
                                           nest_refused)
        avoid |= names_in(producer)
        consumer, then = hoist_reductions(stmt.consumer, graph, formats, dense_output, derived, avoid, nest,
                                          nest_refused)
        steps = [(stage, Where(stmt.consumer, b, stmt.temp), Where(stmt.consumer, a, stmt.temp), note)
                 for stage, b, a, note in first]
        steps += [(stage, Where(b, producer, stmt.temp), Where(a, producer, stmt.temp), note)
                  for stage, b, a, note in then]
        return Where(consumer, producer, stmt.temp), steps
    steps = []
    while True:
        found = _misnested(stmt, [], formats)
        if nest and found is None and not derived and read_against_storage(stmt, formats) is not None:
            # a reduction of a reduction still against a storage order (its workspace took the
            # outer one's loop in: max[j](min[k](A[j, k, i]))): nested workspaces, if they mend it
            nested = _nested(stmt, graph, formats, avoid)
            return (stmt, steps) if nested is None else (nested[0], steps + [nested[1]])
        if found is None or any(i.name in derived for i in found[1]):
            return stmt, steps   # (a misnested reduction left is refused by the lowering, saying why)
        expr, shared, acc, path, outer, whole = found
        name = workspace_name(stmt, avoid=avoid)
        loops = ", ".join(i.name for i in shared)
        per = f" (for each {', '.join(i.name for i in outer)})" if outer else ""
        sub = graph.restricted(expr_accesses(expr))
        order_fn = lambda loops: sub.order(loops, prefer=loops)  # noqa: E731
        try:
            try:
                new = precompute_expr(stmt, expr, shared, name, order_fn=order_fn, avoid=avoid)
            except StrategyError:
                if whole is None:
                    raise
                # the body also occurs under another reduction (y = A x + rowsum(A): A[i, j] is
                # in both sums); the whole reduction occurs once
                new = precompute_expr(stmt, whole, shared, name, order_fn=order_fn, avoid=avoid)
        except StrategyError as e:
            nested = _nested(stmt, graph, formats, avoid) if nest_refused and not derived \
                and not isinstance(e, LoopOrderError) else None
            if nested is not None:
                steps.append(nested[1])
                stmt = nested[0]
                continue
            why = (f"{acc} is stored in the order {', '.join(p.name for p in path)}, but it is reduced inside the "
                   f"loop over {loops}; computing that reduction first, into a workspace over {loops}, does not "
                   f"apply either: {e}; lower it with strategy='looplets', which reads {acc.tensor} in its own order")
            # (a LoopOrderError stays one: converting an input's order may remove it)
            raise (LoopOrderError(why, e.conflicts) if isinstance(e, LoopOrderError) else StrategyError(why)) from None
        new = order_statement(new, graph, loop_chain(new)[0])
        if dense_output:
            new = with_workspace_kind(new, name, "dense")
        steps.append(("precompute", stmt, new, f"automatic: {acc} is stored in the order "
                      f"{', '.join(p.name for p in path)} but reduced inside the loop over {loops}: the reduction "
                      f"runs first{per}, into a workspace {name}[{loops}]"))
        stmt = new


def _nested(stmt, graph, formats, avoid):
    """``(statement, step)`` with nested workspaces (:func:`nest_workspaces`), or None."""
    nested = nest_workspaces(stmt, formats, graph, avoid)
    if nested is None:
        return None
    new, notes = nested
    return new, ("precompute", stmt, new, "automatic: " + "; ".join(notes) + " (nested workspaces)")


def _misnested(s, bound: list, formats):
    """``(expr, workspace indices, access, its storage path, loops kept around)`` of the first
    nested reduction with an operand that cannot be iterated inside the loops ``bound`` around
    it, or None."""
    if isinstance(s, Forall):
        return _misnested(s.body, bound + [s.index], formats)
    if not isinstance(s, Where):
        return None
    if not s.temp.workspace:
        reduced, inner = loop_chain(s.producer)
        if isinstance(inner, Assignment):
            for acc in expr_accesses(inner.rhs):
                if acc.tensor not in formats:
                    continue
                path = storage_path(acc, formats[acc.tensor])[0]
                held = [p in bound for p in path]
                if any(held[k] and not held[k - 1] for k in range(1, len(held))):
                    used = {i for a in expr_accesses(inner.rhs) for i in a.indices}
                    # (every reduction here runs inside the same loops: one misnested after this
                    # one must still find its loops around it)
                    inside = loops_inside(bound, [storage_path(a, formats[a.tensor])[0] for x in assignments(s)
                                             for a in expr_accesses(x.rhs) if a.tensor in formats])
                    whole = Reduce(s.temp.op, tuple(reduced), inner.rhs) if reduced and s.temp.op else None
                    return inner.rhs, [i for i in inside if i in used], acc, path, \
                        [i for i in bound if i not in inside], whole
        deeper = _misnested(s.producer, bound, formats)   # a reduction nested in this one
        if deeper is not None:
            return deeper
    return _misnested(s.consumer, bound, formats)


def foldable(op) -> bool:
    """Whether a run of one fill under ``op`` has a closed form in any order: a commutative
    idempotent operator takes it once, ``+`` takes it times the count."""
    return (op.idempotent and op.commutative and op.associative) or (op.name == "add" and not op.is_user)


def flat_positions(stmt, program: Assign, formats: dict):
    """The schedule ``fuse(i, j, ij) pos(ij, pA, A)`` when a scalar is a reduction of every
    entry of one compressed matrix ``A`` whose fill is the reduction's identity (a sum of
    all entries) or can be folded in after the loop (the max of a fill-0 matrix), else None:
    one flat loop over A's values instead of a loop per row.
    """
    from ..names import FreshNames
    from .algebra import Region
    from .schedule import Schedule
    chain, body = loop_chain(stmt)
    if program.lhs.indices or program.op is not None or len(chain) != 2 or not isinstance(body, Assignment) \
            or body.op is None or body.lhs.tensor != program.lhs.tensor:
        return None
    accs = {str(a): a for a in expr_accesses(body.rhs)}
    if len(accs) != 1:
        return None
    acc = next(iter(accs.values()))
    fmt = formats[acc.tensor]
    levels = fmt.levels
    if len(levels) != 2 or list(storage_path(acc, fmt)[0]) != list(chain) \
            or not (levels[0].located_by_coordinate or levels[0].compressed) or not levels[1].compressed:
        return None
    alg, fill, _ = derive(body.rhs, lambda a: formats[a.tensor].fill)
    if not isinstance(alg, Region):
        return None   # the value does not depend on A's entries (A * 0): there are no positions to follow
    # (none for a complex product: it multiplies at every coordinate, Operator.neutral_for)
    ident = body.op.neutral_for(np.asarray(fill).dtype) if fill is not NOVALUE else NOVALUE
    if ident is NOVALUE or not (same_value(fill, ident) or foldable(body.op)):
        return None   # a fill other than the identity is folded in after the flat loop
    i, j = chain
    fresh = FreshNames({x.name for x in chain} | set(formats) | {program.lhs.tensor})
    fused = fresh(i.name + j.name)
    return Schedule().fuse(i.name, j.name, fused).pos(fused, fresh(f"p{acc.tensor}"), acc.tensor)


def straddles(stmt, fuse) -> bool:
    """Whether scalar promotion would put its temporary between the fused loops (an
    output loop fused with a reduction loop); a reduction over both is promoted whole."""
    order, body = loop_chain(stmt)
    if not isinstance(body, Assignment):
        return True
    out = set(body.lhs.indices)
    names = [i.name for i in order]
    return any(i.name == fuse.outer and (i in out) != (j in out) for i, j in zip(order, order[1:])
               if j.name == fuse.inner) or fuse.outer not in names


__all__ = ["SEQUENCE_TERMS", "as_sequence", "auto_workspace", "flat_positions", "foldable", "hoist_reductions",
           "output_assignment", "output_order", "rows_per_thread", "straddles", "terms_in_sequence"]
