"""Precompute: a part of a statement computed into a workspace first (TACO's ``precompute``).

``forall i, j: y[i] += A[i, j] * x[j]`` with ``precompute(.., [j], "w")`` becomes a ``where``
whose producer fills ``w[j]`` and whose consumer reads it (taco.md §2.8); with an expression,
only that sub-expression moves into the workspace (:func:`precompute_expr`). Which loops go to
which side, and whether an operator distributes over the reduction it crosses, is decided here.

See :func:`precompute` for an example (SpGEMM's row workspace) and :func:`precompute_expr` for one
of a sub-expression.
"""

from __future__ import annotations

from dataclasses import replace

from ..algebra import NOVALUE, Operator
from ..errors import StrategyError
from ..names import FreshNames
from ..notation.ast import Access, Call, Index, Reduce, free_indices, reduction_name, walk
from .cin import (Assignment, Forall, Sequence, Stmt, Temporary, Where, assignments, expr_accesses, loop_chain,
                  map_parts, names_in, nested_reductions, wrap_loops)


def precompute(s: Stmt, indices, name: str, expr=None, fill_of=None, order_fn=None, kind: str = "auto") -> Stmt:
    """``consumer where producer``: compute ``expr`` into a workspace ``name[indices]`` first.

    Without ``expr`` the whole right-hand side, with its reduction, goes into the
    workspace (Gustavson's SpGEMM): ``consumer: lhs = ws[indices]``, ``producer:
    ws[indices] op= rhs``. With ``expr`` (a sub-expression of the right-hand side,
    see :func:`precompute_expr`) the consumer reads ``ws[indices]`` in its place.
    Walking the loops from the innermost out, an index of ``indices`` goes to both
    sides, one used by one side only goes to that side, and the first index used
    by both (with every loop outside it) stays around the ``where`` (taco.md §2.8).
    One index gives a sparse workspace, with a bitmap and a coordinate list (the
    consumer iterates what was set); several give a dense array over all of them
    (the schedule's ``precompute(..., format=dense)`` makes a one-index one dense too).

    >>> from compiler.lattice.cin import concretize, with_order
    >>> from compiler.notation import parse
    >>> from compiler.notation.ast import Index
    >>> s = with_order(concretize(parse("C[i, j] = A[i, k] * B[k, j]")), [Index("i"), Index("k"), Index("j")])
    >>> print(precompute(s, [Index("j")], "w"))
    forall i:
      where:
        forall j:
          C[i, j] = w[j]
      producer:
        w[j] = 0  (workspace: sparse over j: values, a bitmap and a coordinate list)
        forall k:
          forall j:
            w[j] += A[i, k] * B[k, j]
    """
    indices = tuple(Index(i) if isinstance(i, str) else i for i in indices)
    if not indices:
        raise StrategyError("precompute: a workspace needs at least one index")
    if len(set(indices)) != len(indices):
        raise StrategyError(f"precompute: workspace index repeated in {', '.join(i.name for i in indices)}")
    if expr is not None:
        return precompute_expr(s, expr, indices, name, fill_of, order_fn)
    what = f"precompute({', '.join(i.name for i in indices)})"
    order, body = loop_chain(s)
    if isinstance(body, Where) and not body.temp.workspace:
        body = _inline_temps(body, what)   # nested reductions: made temporaries again in the producer
    if not isinstance(body, Assignment):
        inside = ("the workspace of an earlier precompute" if isinstance(body, Where) else
                  "a sequence of statements" if isinstance(body, Sequence) else f"a {type(body).__name__}")
        raise StrategyError(f"{what}: precompute applies to loops that directly enclose one assignment; "
                            f"this statement has {inside} inside its loops (give the expression to precompute "
                            f"a part of it: precompute(index, name, expr))")
    for i in indices:
        if i not in order:
            raise StrategyError(f"{what}: {i} is not a loop of the statement "
                                f"(loops {', '.join(x.name for x in order)})")
        if i not in body.lhs.indices:
            raise StrategyError(f"{what}: workspace index {i} is not an index of the result "
                                f"{body.lhs}; a workspace holds part of the result")
    op = body.op
    reduced = [i for i in order if i not in body.lhs.indices]
    if op is not None and op.identity is NOVALUE:
        raise StrategyError(f"{what}: {op.name} has no identity to start the workspace from")
    ws = Temporary(name, op, op.identity if op is not None else NOVALUE, indices, kind)
    consumer_uses = set(body.lhs.indices) | set(indices)
    producer_uses = set(indices) | {i for a in expr_accesses(body.rhs) for i in a.indices}
    outside, to_consumer, to_producer = _distribute(order, indices, consumer_uses, producer_uses)
    if op is None:
        nested = next((e for e in walk(body.rhs) if isinstance(e, Reduce)), None)
        why = (f"{body} assigns its value without reducing into {body.lhs} (its {nested} is nested inside the "
               f"expression)" if nested is not None else f"{body} reduces nothing")
        raise StrategyError(f"{what}: without an expression, precompute gathers a reduction's result in the "
                            f"workspace, and {why}; name the sub-expression to compute first, "
                            f"e.g. precompute({', '.join(i.name for i in indices)}, {name}, "
                            f"expr={repr(str(nested)) if nested is not None else '...'})")
    if any(i in reduced for i in outside):
        raise StrategyError(f"{what}: the reduction over "
                            f"{', '.join(i.name for i in reduced) or 'nothing'} must be inside the workspace's "
                            f"loops, which it is not in the order {', '.join(i.name for i in order)}")
    if not ws.dense and to_producer and to_producer[-1] not in indices:
        raise StrategyError(f"{what}: a sparse workspace lists each coordinate as the producer first sets it, "
                            f"so its index must be the innermost loop of the producer (loops "
                            f"{', '.join(i.name for i in to_producer)}); give format='dense' for a workspace "
                            f"visited whole")
    consumer = wrap_loops(to_consumer, Assignment(body.lhs, None, ws.access()))
    fresh = FreshNames(names_in(s) | {name})
    producer = wrap_loops(to_producer, _with_reductions(Assignment(ws.access(), op, body.rhs), fresh))
    return wrap_loops(outside, Where(consumer, producer, ws))


def _distribute(order, indices, consumer_uses, producer_uses):
    """``(outside, consumer loops, producer loops)``: taco's forall distribution, innermost first."""
    to_consumer, to_producer = [], []
    k = len(order)
    while k > 0:
        i = order[k - 1]
        if i in indices:
            to_consumer.insert(0, i)
            to_producer.insert(0, i)
        elif i in consumer_uses and i not in producer_uses:
            to_consumer.insert(0, i)
        elif i in producer_uses and i not in consumer_uses:
            to_producer.insert(0, i)
        else:
            break
        k -= 1
    return order[:k], to_consumer, to_producer


# (operator, reduction) -> argument positions p where op(.., red_r(e), ..) == red_r(op(.., e, ..))
# when the other arguments do not use r; only then may the reduction move into the workspace
_DISTRIBUTES = {("mul", "add"): (0, 1), ("div", "add"): (0,), ("neg", "add"): (0,),
                ("add", "min"): (0, 1), ("add", "max"): (0, 1), ("sub", "min"): (0,), ("sub", "max"): (0,),
                ("and", "or"): (0, 1), ("or", "and"): (0, 1)}


def _uses(e) -> set:
    return {i for a in expr_accesses(e) for i in a.indices}


def _occurrences(e, target, path=()):
    """Paths ``((node, argument position), ...)`` from ``e`` down to each occurrence of ``target``."""
    if e == target:
        return [path]
    if isinstance(e, Call):
        return [p for k, a in enumerate(e.args) for p in _occurrences(a, target, path + ((e, k),))]
    if isinstance(e, Reduce):
        return _occurrences(e.body, target, path + ((e, 0),))
    return []


def _why_not_distributive(segment, r: Index, rop: Operator, expr):
    """Why the reduction ``rop`` over ``r`` cannot be computed on ``expr`` alone, or None if it can."""
    red = f"{reduction_name(rop)} over {r}"
    for node, k in segment:
        if isinstance(node, Reduce):
            if node.op != rop:
                return f"the {red} cannot move inside the {reduction_name(node.op)} over " \
                       f"{', '.join(i.name for i in node.indices)}"
            continue
        others = [a for n, a in enumerate(node.args) if n != k]
        user = next((a for a in others if r in _uses(a)), None)
        if user is not None:
            return f"{expr} is under the {red} and, in {node}, {user} uses {r} too, so the {red} " \
                   f"cannot be computed on {expr} alone: add {r} to the workspace's indices"
        if node.op.is_user or k not in _DISTRIBUTES.get((node.op.name, rop.name), ()):
            return f"{expr} is under the {red}, and the {red} does not distribute over " \
                   f"{node.op.name} in {node}"
    return None


def _inline_temps(s, what: str):
    """The assignment of ``s`` with the scalar temporaries of nested reductions put back as reductions."""
    if isinstance(s, Assignment):
        return s
    if isinstance(s, Where) and not s.temp.workspace:
        consumer = _inline_temps(s.consumer, what)
        loops, inner = loop_chain(s.producer)
        inner = _inline_temps(inner, what)
        if isinstance(consumer, Assignment) and isinstance(inner, Assignment) and inner.op == s.temp.op:
            value = Reduce(s.temp.op, tuple(loops), inner.rhs) if loops else inner.rhs
            return replace(consumer, rhs=_replace_access(consumer.rhs, s.temp.name, value))
    raise StrategyError(f"{what} does not apply: it needs loops around one assignment, not {type(s).__name__}")


def _replace_access(e, name, value):
    if isinstance(e, Access) and e.tensor == name:
        return value
    if isinstance(e, Call):
        return replace(e, args=tuple(_replace_access(a, name, value) for a in e.args))
    if isinstance(e, Reduce):
        return replace(e, body=_replace_access(e.body, name, value))
    return e


def precompute_expr(s: Stmt, expr, indices, name: str, fill_of=None, order_fn=None, avoid=frozenset()) -> Stmt:
    """Precompute the sub-expression ``expr`` into ``name[indices]`` (taco's ``precompute(e, i, ws)``).

    The producer computes ``ws[indices] = expr``; the consumer reads ``ws[indices]``
    wherever ``expr`` occurred. A reduction over an index of ``expr`` that is not a
    workspace index and that the consumer no longer needs moves into the producer
    (``ws[indices] += expr``), which is legal only when the operators between the
    reduction and ``expr`` distribute (``sum_j(x[i] * A[i, j]) == x[i] * sum_j(A[i, j])``);
    else :class:`StrategyError` says why. The workspace starts from the reduction's
    identity, or from ``fill_of(expr)`` (the value of ``expr`` where its operands are
    fill) when nothing is reduced. ``order_fn(loops)`` orders the producer's loops. New
    temporaries' names avoid the names in ``s`` and in ``avoid``.

    >>> from compiler.lattice.cin import concretize, with_order
    >>> from compiler.notation import parse, parse_expr
    >>> s = concretize(parse("a[i] = b[i] * (c[i] + d[i])"))
    >>> print(precompute_expr(s, parse_expr("c[i] + d[i]"), ["i"], "w", fill_of=lambda e: 0.0))
    where:
      forall i:
        a[i] = b[i] * w[i]
    producer:
      w[i] = 0.0  (workspace: sparse over i: values, a bitmap and a coordinate list)
      forall i:
        w[i] = c[i] + d[i]
    """
    indices = tuple(Index(i) if isinstance(i, str) else i for i in indices)
    what = f"precompute({expr}, {', '.join(i.name for i in indices)})"
    taken = names_in(s) | set(avoid)
    out = _precompute_in(s, expr, indices, name, fill_of, order_fn, what, taken)
    if out is None:
        # d[i] + c[i] for c[i] + d[i], or c[i] + d[i] inside (b[i] + c[i]) + d[i]: an operator that
        # is commutative and associative may be regrouped so that expr occurs as written
        regrouped = _map_rhs(s, lambda e: regroup(e, expr))
        if regrouped != s:
            out = _precompute_in(regrouped, expr, indices, name, fill_of, order_fn, what, taken)
    if out is None:
        found = "; ".join(str(a) for a in assignments(s))
        raise StrategyError(f"{what} does not apply: {expr} does not occur in the statement ({found}), "
                           f"not even after reordering the operands of commutative and associative operators")
    return out


def _chain(e, op) -> list:
    """The operands of a chain of the binary operator ``op`` (``(a + b) + c``: a, b, c), in order."""
    if isinstance(e, Call) and e.op == op:
        return _chain(e.args[0], op) + _chain(e.args[1], op)
    return [e]


def regroup(e, expr):
    """``e`` with each chain of ``expr``'s operator that holds all of ``expr``'s operands
    regrouped so that ``expr`` occurs in it as written; ``e`` itself when there is none.

    Only for an operator both commutative and associative (``+``, ``*``, ``min``, ...):
    the chain's value is the same (up to floating-point rounding, as for any reassociation).

    >>> from compiler.notation import parse_expr
    >>> print(regroup(parse_expr("b[i] * (c[i] + a[i] + d[i])"), parse_expr("d[i] + c[i]")))
    b[i] * (d[i] + c[i] + a[i])
    >>> print(regroup(parse_expr("c[i] - d[i]"), parse_expr("d[i] - c[i]")))
    c[i] - d[i]
    """
    op = expr.op if isinstance(expr, Call) else None
    if op is None or op.arity != 2 or not (op.commutative and op.associative):
        return e
    want = _chain(expr, op)

    def visit(n):
        if isinstance(n, Reduce):
            return replace(n, body=visit(n.body))
        if not isinstance(n, Call):
            return n
        if n.op == op:
            have = _chain(n, op)
            rest = list(have)
            for w in want:
                if w not in rest:
                    break
                rest.remove(w)
            else:
                out = expr
                for r in rest:
                    out = Call(op, (out, visit(r)))
                return out
            parts = [visit(x) for x in have]
            out = parts[0]
            for x in parts[1:]:
                out = Call(op, (out, x))
            return out if parts != have else n
        args = tuple(visit(a) for a in n.args)
        return replace(n, args=args) if args != n.args else n
    return visit(e)


def _map_rhs(s: Stmt, fn) -> Stmt:
    """``s`` with every assignment's right-hand side mapped by ``fn``."""
    if isinstance(s, Assignment):
        return replace(s, rhs=fn(s.rhs))
    if isinstance(s, Forall):
        return replace(s, body=_map_rhs(s.body, fn))
    if isinstance(s, Where):
        return replace(s, consumer=_map_rhs(s.consumer, fn), producer=_map_rhs(s.producer, fn))
    if isinstance(s, Sequence):
        return replace(s, define=_map_rhs(s.define, fn), mutate=_map_rhs(s.mutate, fn))
    return s


def _one_reduction(moved: dict, r, op, expr, what: str) -> None:
    """Record in ``moved`` that the reduction over ``r`` by ``op`` moves into the producer; where another
    occurrence of ``expr`` is reduced over ``r`` by another operator (``max[i](A[i, j]) + min[i](A[i, j])``),
    :class:`StrategyError`: one workspace holds one of them, not both."""
    if r in moved and moved[r] != op:
        raise StrategyError(f"{what} does not apply: {expr} is reduced over {r} by {moved[r].name} and by "
                            f"{op.name}, which one workspace cannot hold")
    moved[r] = op


def _precompute_in(s, expr, indices, name, fill_of, order_fn, what, taken: set):
    order, body = loop_chain(s)
    if isinstance(body, Where) and body.temp.workspace:   # an earlier precompute: look inside
        for side in ("consumer", "producer"):
            new = _precompute_in(getattr(body, side), expr, indices, name, fill_of, order_fn, what, taken)
            if new is not None:
                return wrap_loops(order, replace(body, **{side: new}))
        return None
    assign = _inline_temps(body, what)
    paths = _occurrences(assign.rhs, expr)
    if not paths:
        return None
    lhs, op, rhs = assign.lhs, assign.op, assign.rhs
    free = set(free_indices(expr))
    for i in indices:
        if i not in free:
            raise StrategyError(f"{what} does not apply: workspace index {i} is not a free index of {expr}")
        if i not in order:
            raise StrategyError(f"{what} does not apply: {i} is not a loop around {lhs} "
                                f"(loops {', '.join(x.name for x in order) or 'none'})")
    ws_access = Access(name, indices)
    top = [i for i in order if i not in lhs.indices]   # reduced by the assignment's operator
    # nested reductions over an index of expr move into the producer
    moved, why = {}, {}
    for path in paths:
        for n, (node, _) in enumerate(path):
            if isinstance(node, Reduce):
                for r in node.indices:
                    if r in free and r not in indices:
                        reason = _why_not_distributive(path[n + 1:], r, node.op, expr)
                        if reason:
                            raise StrategyError(f"{what} does not apply: {reason}")
                        _one_reduction(moved, r, node.op, expr, what)
        for r in top:
            if r in free and r not in indices:
                why.setdefault(r, _why_not_distributive(path, r, op, expr) if op is not None else None)
    consumer_rhs = _without_moved(rhs, expr, ws_access, set(moved))
    consumer_uses = set(lhs.indices) | _uses(consumer_rhs)
    producer_uses = set(indices) | _uses(expr)
    outside, to_consumer, to_producer = _distribute(order, indices, consumer_uses, producer_uses)
    shared = [i for i in outside if i in indices]
    if shared:
        b = outside[-1]
        reason = why.get(b) or f"the consumer and the producer both use {b}"
        raise StrategyError(f"{what} does not apply: the workspace index {shared[0]} would be outside "
                            f"the loop over {b} (loops {', '.join(i.name for i in order)}): {reason}")
    for r in top:
        if r in to_producer and r not in indices:
            if why.get(r):
                raise StrategyError(f"{what} does not apply: {why[r]}")
            _one_reduction(moved, r, op, expr, what)
    ops = set(moved.values())
    value = expr
    if isinstance(expr, Reduce) and not ops and not set(expr.indices) & set(indices) \
            and expr.op.identity is not NOVALUE:
        # the reduction itself runs in the producer's loops, in the order the formats allow:
        # w[i] max= D[i, l] over i and l, rather than a max over l inside a loop over i
        value, ops = expr.body, {expr.op}
        moved = {**moved, **{r: expr.op for r in expr.indices}}
    if len(ops) > 1:
        raise StrategyError(f"{what} does not apply: {expr} is under different reductions "
                            f"({', '.join(sorted(o.name for o in ops))}), which one workspace cannot hold")
    pop = next(iter(ops)) if ops else None
    if pop is not None:
        if pop.identity is NOVALUE:
            raise StrategyError(f"{what} does not apply: {pop.name} has no identity to start the workspace from")
        init = pop.identity
    else:
        init = fill_of(expr) if fill_of is not None else NOVALUE
        if init is NOVALUE:
            raise StrategyError(f"{what} does not apply: the value of {expr} where its operands are fill "
                                f"is not known, so the workspace has no fill to start from")
    cop = op if any(r in top for r in outside + to_consumer) else None
    fresh = FreshNames(taken | {lhs.tensor, name})
    ws = Temporary(name, pop, init, indices)
    nested = [r for r in moved if r not in order]
    ploops = list(to_producer) + nested
    if order_fn is not None and nested:
        ploops = list(order_fn(ploops))
    producer = wrap_loops(ploops, _with_reductions(Assignment(ws_access, pop, value), fresh))
    consumer = wrap_loops(to_consumer, _with_reductions(Assignment(lhs, cop, consumer_rhs), fresh))
    return wrap_loops(outside, Where(consumer, producer, ws))


def _without_moved(e, expr, ws_access, moved: set):
    """``e`` with ``expr`` read from the workspace, and reductions moved into the producer dropped."""
    if e == expr:
        return ws_access
    if isinstance(e, Call):
        return replace(e, args=tuple(_without_moved(a, expr, ws_access, moved) for a in e.args))
    if isinstance(e, Reduce):
        body = _without_moved(e.body, expr, ws_access, moved)
        keep = tuple(r for r in e.indices if r not in moved or r in free_indices(body))
        return replace(e, indices=keep, body=body) if keep else body
    return e


def _with_reductions(a: Assignment, fresh: FreshNames) -> Stmt:
    """``a`` with the reductions left in its right-hand side made ``where`` temporaries again."""
    rhs, wheres = nested_reductions(a.rhs, fresh)
    stmt: Stmt = replace(a, rhs=rhs)
    for temp, producer in wheres:
        stmt = Where(stmt, producer, temp)
    return stmt


def with_workspace_kind(s, name: str, kind: str):
    """``s`` with the workspace ``name`` of its ``where`` made ``kind`` (dense or sparse)."""
    if isinstance(s, Where) and s.temp.name == name:
        s = replace(s, temp=replace(s.temp, kind=kind))
    return map_parts(s, lambda part: with_workspace_kind(part, name, kind))


def workspace_name(s: Stmt, base: str = "w", avoid=frozenset()) -> str:
    """A workspace name not used by any tensor, temporary or index of ``s``, nor in ``avoid``."""
    return FreshNames(names_in(s) | set(avoid))(base)


__all__ = ["precompute", "precompute_expr", "regroup", "with_workspace_kind", "workspace_name"]
