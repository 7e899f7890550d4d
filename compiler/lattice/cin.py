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
from ..notation.ast import (Access, Assign, Call, Index, Reduce, assign_spelling, cat_parts,
                              parts_record, show_parts, value_text, walk)

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
    body, wheres = nested_reductions(rhs, fresh)
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


def nested_reductions(e, fresh: FreshNames):
    """Replace each reduction inside ``e`` by a temporary; return (expr, [(temp, producer)]).

    >>> from compiler.notation import parse
    >>> e, wheres = nested_reductions(parse("y[i] = sum[j](A[i, j]) + d[i]").rhs, FreshNames())
    >>> print(e, [w[0].name for w in wheres])
    t_j[] + d[i] ['t_j']
    """
    wheres: list = []

    def visit(x):
        if isinstance(x, Reduce):
            inner, inner_wheres = nested_reductions(x.body, fresh)
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


__all__ = ["map_parts", "stmt_lines", "unshadow", "index_names", "hoist_invariants", "names_in", "nested_reductions",
           "Stmt", "Temporary", "Assignment", "Forall", "Where", "Sequence", "Skip", "concretize",
           "scalar_promote", "with_order", "foralls", "assignments", "expr_accesses"]
