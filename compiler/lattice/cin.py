"""Concrete index notation (CIN): foralls, where, sequence and assignment statements.

Index notation says *what* to compute; concrete index notation also says in which
order the index variables are visited and where intermediate results live
(taco.md §2.2 and §2.5). :func:`concretize` is TACO's ``makeConcreteNotation``:

* a reduction at the top of the right-hand side becomes foralls around a compound
  assignment (``y[i] = sum[j](e)`` becomes ``forall i, j: y[i] += e``);
* a reduction nested inside the right-hand side becomes a ``where`` whose producer
  accumulates into a scalar temporary (``y[i] = sum[j](e) + d[i]`` becomes
  ``forall i: (y[i] = t_j + d[i]) where (forall j: t_j += e)``).

:func:`scalar_promote` later turns ``forall i, j: y[i] += e`` into the ``where``
form when every reduction loop is inside every output loop (taco's scalar
promotion), so a sparse output is written once per coordinate.

>>> from compiler.notation import parse
>>> s = concretize(parse("y[i] = A[i, j] * x[j]"))
>>> print(s)
forall i:
  forall j:
    y[i] += A[i, j] * x[j]
>>> print(scalar_promote(s))
forall i:
  where:
    y[i] = t_j[]
  producer:
    t_j = 0
    forall j:
      t_j[] += A[i, j] * x[j]
>>> print(concretize(parse("y[i] = A[i, j] * x[j] + d[i]")))
forall i:
  where:
    y[i] = t_j[] + d[i]
  producer:
    t_j = 0
    forall j:
      t_j[] += A[i, j] * x[j]
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .. import serialize
from ..algebra import NOVALUE, Operator
from ..names import FreshNames
from ..errors import StrategyError
from ..notation.ast import (Access, Assign, Call, Index, Reduce, assign_spelling, cat_parts,
                              free_indices, parts_record, reduction_name, show_parts, value_text, walk)

INDENT = "  "


class Stmt:
    """Base of CIN statements; ``str`` gives an indented, readable form."""

    def __str__(self) -> str:
        return "\n".join(stmt_lines(self, 0))

    def pretty(self) -> str:
        return str(self)

    def printed_parts(self) -> tuple[str, dict]:
        """The text and where its loop heads, accesses and reductions are printed
        (:func:`~compiler.notation.ast.parts_record`), which a trace step given it records.

        >>> text, parts = Forall(Index("i"), Skip()).printed_parts()
        >>> parts
        {'1': [[0, 8, {'index': 'i'}, 'loop']]}
        """
        return parts_record(_lines(self, 0, True))


@serialize.node
@dataclass(frozen=True)
class Temporary:
    """A temporary of a ``where``: ``name``, the reduction operator and its start value.

    Without ``indices`` it is a scalar; with indices it is a *workspace*: a dense
    array over those indices that the producer scatters into and the consumer
    reads back (taco.md §2.8). The lattice strategy stores a *sparse* workspace as a
    dense accumulator, an occupancy bitmap and a list of the coordinates set, sorted
    when the consumer needs them in order, and resets what was set for every enclosing
    iteration; a *dense* one is the accumulator alone, visited and reset whole.
    """

    name: str
    op: Operator | None
    init: Any
    indices: tuple = ()
    #: ``"dense"``: a plain array; ``"sparse"``: with a bitmap and a coordinate list (over
    #: several indices, of row-major positions); ``"auto"``: sparse over one index, dense over several
    kind: str = "auto"

    def access(self) -> Access:
        return Access(self.name, tuple(self.indices))

    @property
    def workspace(self) -> bool:
        return bool(self.indices)

    @property
    def dense(self) -> bool:
        """Whether the workspace is a plain dense array (no bitmap, no list), reset whole."""
        return self.kind == "dense" or (self.kind == "auto" and len(self.indices) > 1)


@serialize.node
@dataclass(frozen=True)
class Assignment(Stmt):
    """``lhs = rhs`` (``op`` is None) or ``lhs op= rhs``; ``lhs`` is an output or a temporary."""

    lhs: Access
    op: Operator | None
    rhs: Any

    __str__ = Stmt.__str__


@serialize.node
@dataclass(frozen=True)
class Forall(Stmt):
    """``forall index: body``: run ``body`` for every coordinate of ``index``."""

    index: Index
    body: Stmt

    __str__ = Stmt.__str__


@serialize.node
@dataclass(frozen=True)
class Where(Stmt):
    """``consumer where producer``: ``producer`` computes ``temp`` (from ``temp.init``), ``consumer`` reads it.

    The producer runs first; the temporary is recreated for every enclosing iteration.
    """

    consumer: Stmt
    producer: Stmt
    temp: Temporary

    __str__ = Stmt.__str__


@serialize.node
@dataclass(frozen=True)
class Sequence(Stmt):
    """``define; mutate``: two statements run one after the other."""

    define: Stmt
    mutate: Stmt

    __str__ = Stmt.__str__


@serialize.node
@dataclass(frozen=True)
class Skip(Stmt):
    """A statement with nothing left to do (a case whose result is the fill)."""

    __str__ = Stmt.__str__


def stmt_lines(s, depth: int, parts: bool = False) -> list:
    """The printed lines of statement ``s``, indented ``depth`` levels (derived.py prints with them);
    with ``parts``, each line as ``(text, parts)`` (see :meth:`Stmt.printed_parts`)."""
    return _lines(s, depth, True) if parts else [line for line, _ in _lines(s, depth, False)]


def _lines(s, depth: int, spans: bool) -> list[tuple[str, tuple]]:
    """The lines of ``s`` and, with ``spans``, the parts printed in each (see :meth:`Stmt.printed_parts`)."""
    pad = INDENT * depth

    def shown(e, mode="read"):
        return show_parts(e, mode) if spans else (str(e), ())
    if isinstance(s, Assignment):   # (printing without parts is most prints: kept plain)
        return [cat_parts(pad, shown(s.lhs, "update"), f" {assign_spelling(s.op)} ", shown(s.rhs)) if spans
                else (f"{pad}{s.lhs} {assign_spelling(s.op)} {s.rhs}", ())]
    if isinstance(s, Forall):
        head = f"forall {s.index}"
        own = ((len(pad), len(pad) + len(head), {"index": s.index.name}, "loop"),) if spans else ()
        return [(f"{pad}{head}:", own)] + _lines(s.body, depth + 1, spans)
    if isinstance(s, Where):
        decl = (pad + INDENT, f"{s.temp.name} = {(init := value_text(s.temp.init))}")
        if s.temp.workspace:
            over = ', '.join(i.name for i in s.temp.indices)
            decl = (pad + INDENT, shown(s.temp.access(), "update"), f" = {init}  (workspace: "
                    + (f"dense over {over})" if s.temp.dense else
                       f"sparse over {over}: values, a bitmap and a "
                       + ("list of row-major positions)" if len(s.temp.indices) > 1 else "coordinate list)")))
        return ([(f"{pad}where:", ())] + _lines(s.consumer, depth + 1, spans) + [(f"{pad}producer:", ()),
                cat_parts(*decl)] + _lines(s.producer, depth + 1, spans))
    if isinstance(s, Sequence):
        return _lines(s.define, depth, spans) + _lines(s.mutate, depth, spans)
    if isinstance(s, Skip):
        return [(f"{pad}skip", ())]
    raise TypeError(f"not a CIN statement: {s!r}")


# -- queries -----------------------------------------------------------------------------


def foralls(s: Stmt) -> list[Index]:
    """The forall indices of ``s``, outermost first (producers before consumers)."""
    out: list[Index] = []
    if isinstance(s, Forall):
        out.append(s.index)
        out += foralls(s.body)
    elif isinstance(s, Where):
        out += foralls(s.producer) + foralls(s.consumer)
    elif isinstance(s, Sequence):
        out += foralls(s.define) + foralls(s.mutate)
    return out


def assignments(s: Stmt) -> list[Assignment]:
    if isinstance(s, Assignment):
        return [s]
    if isinstance(s, Forall):
        return assignments(s.body)
    if isinstance(s, Where):
        return assignments(s.producer) + assignments(s.consumer)
    if isinstance(s, Sequence):
        return assignments(s.define) + assignments(s.mutate)
    return []


def expr_accesses(e) -> list[Access]:
    """Accesses of an index-notation expression, left to right."""
    if isinstance(e, Access):
        return [e]
    if isinstance(e, Call):
        return [a for x in e.args for a in expr_accesses(x)]
    if isinstance(e, Reduce):
        return expr_accesses(e.body)
    return []


# -- concretization --------------------------------------------------------------------


def _tensor_names(e) -> set[str]:
    return {a.tensor for a in expr_accesses(e)}


def concretize(assign: Assign) -> Stmt:
    """Concrete index notation for an index-notation :class:`~compiler.notation.ast.Assign`.

    Foralls follow the output's indices, then the top-level reduction's indices;
    :func:`reorder_topologically` fixes the order for the formats afterwards.
    """
    if not isinstance(assign, Assign):
        raise TypeError(f"concretize() needs an Assign, not {type(assign).__name__}")
    fresh = FreshNames(_tensor_names(assign.rhs) | {assign.lhs.tensor} | index_names(assign))
    lhs, rhs, op = assign.lhs, assign.rhs, assign.op
    reduced: list[Index] = []
    if isinstance(rhs, Reduce) and (op is None or op == rhs.op):
        # top-level reductions become compound assignments inside foralls
        while isinstance(rhs, Reduce) and (op is None or op == rhs.op):
            op = rhs.op
            reduced += list(rhs.indices)
            rhs = rhs.body
    body, wheres = _nested_reductions(rhs, fresh)
    stmt: Stmt = Assignment(lhs, op, body)
    for temp, producer in wheres:
        stmt = Where(stmt, producer, temp)
    # foralls outermost first: output indices, then the top-level reduction indices
    for index in reversed(list(lhs.indices) + reduced):
        stmt = Forall(index, stmt)
    return stmt


def unshadow(assign: Assign) -> Assign:
    """``assign`` with each reduction over an index already bound around it renamed apart.

    In ``sum[j](max[j](A[i, j]) * B[i, j])`` the inner ``j`` is its own variable: its
    loop would sit inside the loop over the outer ``j``, so it becomes ``j_2``.

    >>> from compiler.notation import parse
    >>> print(unshadow(parse("y[i] = max[j](A[i, j]) * B[i, j]")))
    y[i] = sum[j](max[j_2](A[i, j_2]) * B[i, j])
    """
    return replace(assign, rhs=_unshadow(assign.rhs, set(assign.lhs.indices), FreshNames(index_names(assign))))


def index_names(assign: Assign) -> set[str]:
    """The names of every index ``assign`` uses: its result's, its accesses' and its reductions'."""
    return {i.name for i in assign.lhs.indices} | \
        {i.name for n in walk(assign.rhs) if isinstance(n, (Access, Reduce)) for i in n.indices}


def _unshadow(e, bound: set, fresh: FreshNames):
    if isinstance(e, Reduce):
        body, indices = e.body, []
        for r in e.indices:
            if r in bound:
                new = Index(fresh(r.name))
                body = _rename(body, r, new)
                r = new
            indices.append(r)
        return replace(e, indices=tuple(indices), body=_unshadow(body, bound | set(indices), fresh))
    if isinstance(e, Call):
        return replace(e, args=tuple(_unshadow(a, bound, fresh) for a in e.args))
    return e


def _rename(e, old: Index, new: Index):
    """``e`` with the free occurrences of the index ``old`` renamed to ``new``."""
    if isinstance(e, Access):
        return replace(e, indices=tuple(new if i == old else i for i in e.indices))
    if isinstance(e, Call):
        return replace(e, args=tuple(_rename(a, old, new) for a in e.args))
    if isinstance(e, Reduce) and old not in e.indices:
        return replace(e, body=_rename(e.body, old, new))
    return e


def _nested_reductions(e, fresh: FreshNames):
    """Replace each reduction inside ``e`` by a temporary; return (expr, [(temp, producer)])."""
    wheres: list = []

    def visit(x):
        if isinstance(x, Reduce):
            inner, inner_wheres = _nested_reductions(x.body, fresh)
            name = fresh("t_" + "".join(i.name for i in x.indices))
            init = x.op.identity
            temp = Temporary(name, x.op, init)
            producer: Stmt = Assignment(temp.access(), x.op, inner)
            for t, p in inner_wheres:
                producer = Where(producer, p, t)
            for index in reversed(x.indices):
                producer = Forall(index, producer)
            wheres.append((temp, producer))
            return temp.access()
        if isinstance(x, Call):
            return replace(x, args=tuple(visit(a) for a in x.args))
        return x

    return visit(e), wheres


def loop_chain(s: Stmt) -> tuple[list[Index], Stmt]:
    """The chain of directly nested foralls at the top of ``s`` and what they enclose."""
    order = []
    while isinstance(s, Forall):
        order.append(s.index)
        s = s.body
    return order, s


def wrap_loops(order, body: Stmt) -> Stmt:
    for index in reversed(order):
        body = Forall(index, body)
    return body


def with_order(s: Stmt, order: list[Index]) -> Stmt:
    """``s`` with its top chain of foralls put in ``order`` (a permutation of them)."""
    current, body = loop_chain(s)
    if sorted(i.name for i in current) != sorted(i.name for i in order):
        raise ValueError(f"order {[i.name for i in order]} is not a permutation of the loops "
                         f"{[i.name for i in current]}")
    return wrap_loops(order, body)


def scalar_promote(s: Stmt, taken: set | None = None, outer=()) -> Stmt:
    """Accumulate an innermost reduction in a scalar temporary (taco's scalar promotion).

    ``forall i, j: y[i] += e`` becomes ``forall i: (y[i] = t_j) where (forall j: t_j += e)``
    when every reduction loop (an index not on the left) is inside every output loop.
    Statements that do not have this shape are returned unchanged. ``outer`` are the loops
    around ``s``: when one of them also reduces into the result, the temporary is added to
    it (``y[i] += t_j``), not assigned.
    """
    taken = names_in(s) if taken is None else taken
    order, body = loop_chain(s)
    if isinstance(body, Where) and body.temp.workspace:
        # the consumer of a workspace holds the assignment to the result: promote in there
        consumer = scalar_promote(body.consumer, taken, tuple(outer) + tuple(order))
        return s if consumer is body.consumer else wrap_loops(order, replace(body, consumer=consumer))
    # the assignment may read nested reductions' temporaries: it is the innermost consumer
    assign = body
    while isinstance(assign, Where) and not assign.temp.workspace:
        assign = assign.consumer
    if not isinstance(assign, Assignment) or assign.op is None or not order:
        return s
    out = set(assign.lhs.indices)
    k = next((n for n, i in enumerate(order) if i not in out), len(order))
    if k == len(order) or any(i in out for i in order[k:]):
        return s
    if assign.op.identity is NOVALUE:
        return s
    name = FreshNames(taken)("t_" + "".join(i.name for i in order[k:]))
    temp = Temporary(name, assign.op, assign.op.identity)
    inner = _with_consumer(body, Assignment(temp.access(), assign.op, assign.rhs))
    # (a loop around s that reduces into the result runs this once per iteration: add to it)
    op = assign.op if any(i not in out for i in outer) else None
    return wrap_loops(order[:k], Where(Assignment(assign.lhs, op, temp.access()), wrap_loops(order[k:], inner), temp))


def as_update(s: Stmt, tensor: str, op) -> Stmt:
    """``s`` with each plain assignment to ``tensor`` made an update by ``op``.

    A reduction into the output starts from the identity, so once it runs into a
    temporary (scalar promotion, a precompute) the output is assigned the temporary
    (``y[i] = t_j``). An update (``y[i] += A[i, j]``) starts from the output's own values:
    the temporary is added to them. Each such assignment writes its element once (no
    loop around it reduces), so ``y[i] += t_j`` adds the whole reduction once.

    >>> from compiler.notation import parse
    >>> p = parse("y[i] += A[i, j]")
    >>> print(as_update(scalar_promote(concretize(p)), "y", p.op))
    forall i:
      where:
        y[i] += t_j[]
      producer:
        t_j = 0
        forall j:
          t_j[] += A[i, j]
    """
    if isinstance(s, Assignment):
        return replace(s, op=op) if s.lhs.tensor == tensor and s.op is None else s
    return map_parts(s, lambda part: as_update(part, tensor, op))


def map_parts(s, fn):
    """``s`` with ``fn`` applied to each statement directly inside it (a loop's body, a where's
    consumer and producer, a sequence's parts); ``s`` itself when nothing changes."""
    from dataclasses import fields
    if not hasattr(s, "__dataclass_fields__"):
        return s
    changes = {f.name: fn(getattr(s, f.name)) for f in fields(s)
               if f.name in ("body", "consumer", "producer", "define", "mutate")}
    return replace(s, **changes) if any(changes[k] is not getattr(s, k) for k in changes) else s


def hoist_invariants(s: Stmt) -> Stmt:
    """``s`` with each nested reduction computed outside the loops it does not use.

    ``forall j: (t_j += t_k * B[i, j]) where (forall k: t_k += A[i, k])`` recomputes
    ``t_k``, the sum of row ``i`` of ``A``, for every ``j``; the ``where`` moves out of
    the loop over ``j``, so the row is summed once (loop-invariant code motion).

    >>> from compiler.notation import parse
    >>> s = scalar_promote(concretize(parse("y[i] = sum[j](sum[k](A[i, k]) * B[i, j])")))
    >>> print(hoist_invariants(s))
    forall i:
      where:
        y[i] = t_j[]
      producer:
        t_j = 0
        where:
          forall j:
            t_j[] += t_k[] * B[i, j]
        producer:
          t_k = 0
          forall k:
            t_k[] += A[i, k]
    """
    if isinstance(s, Forall):
        body = hoist_invariants(s.body)
        if isinstance(body, Where) and not body.temp.workspace and s.index not in _free_in(body.producer):
            return Where(hoist_invariants(Forall(s.index, body.consumer)), body.producer, body.temp)
        return s if body is s.body else Forall(s.index, body)
    if isinstance(s, Where):
        consumer, producer = hoist_invariants(s.consumer), hoist_invariants(s.producer)
        return s if (consumer, producer) == (s.consumer, s.producer) else replace(s, consumer=consumer,
                                                                                   producer=producer)
    return s


def _free_in(s: Stmt) -> set:
    """The indices ``s`` reads that its own loops do not bind."""
    bound = set(foralls(s))
    return {i for a in assignments(s) for x in [a.lhs, *expr_accesses(a.rhs)] for i in x.indices} - bound


def _with_consumer(s: Stmt, new: Stmt) -> Stmt:
    """``s`` with its innermost consumer (through ``where``) replaced by ``new``."""
    if isinstance(s, Where):
        return replace(s, consumer=_with_consumer(s.consumer, new))
    return new


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
                        moved[r] = node.op
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
            moved[r] = op
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
    rhs, wheres = _nested_reductions(a.rhs, fresh)
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


def names_in(s: Stmt) -> set[str]:
    """Every tensor, temporary and index name in ``s``: a generated name must avoid them all
    (a workspace named like an index would read ``w[w]``)."""
    out = {i.name for i in foralls(s)}
    for a in assignments(s):
        for n in [a.lhs, *walk(a.rhs)]:
            if isinstance(n, Access):
                out.add(n.tensor)
            if isinstance(n, (Access, Reduce)):
                out |= {i.name for i in n.indices}
    return out


__all__ = ["map_parts", "stmt_lines", "unshadow", "index_names", "with_workspace_kind", "hoist_invariants", "names_in", "precompute", "precompute_expr", "workspace_name", "Stmt", "Temporary", "Assignment", "Forall", "Where", "Sequence", "Skip", "concretize",
           "scalar_promote", "with_order", "foralls", "assignments", "expr_accesses"]
