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
from ..notation.ast import Access, Assign, Call, Index, Literal, Reduce, assign_spelling

INDENT = "  "


class Stmt:
    """Base of CIN statements; ``str`` gives an indented, readable form."""

    def __str__(self) -> str:
        return "\n".join(_lines(self, 0))

    def pretty(self) -> str:
        return str(self)


@serialize.node
@dataclass(frozen=True)
class Temporary:
    """A temporary of a ``where``: ``name``, the reduction operator and its start value.

    Without ``indices`` it is a scalar; with indices it is a *workspace*: a dense
    array over those indices that the producer scatters into and the consumer
    reads back (taco.md §2.8). The lattice strategy stores a workspace as a dense
    accumulator, an occupancy bitmap and a list of the coordinates set, sorted when
    the consumer needs them in order, and reset for every enclosing iteration.
    """

    name: str
    op: Operator | None
    init: Any
    indices: tuple = ()

    def access(self) -> Access:
        return Access(self.name, tuple(self.indices))

    @property
    def workspace(self) -> bool:
        return bool(self.indices)


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


def _lines(s, depth: int) -> list[str]:
    pad = INDENT * depth
    if isinstance(s, Assignment):
        return [f"{pad}{s.lhs} {assign_spelling(s.op)} {s.rhs}"]
    if isinstance(s, Forall):
        return [f"{pad}forall {s.index}:"] + _lines(s.body, depth + 1)
    if isinstance(s, Where):
        init = _value_text(s.temp.init)
        decl = f"{s.temp.name} = {init}"
        if s.temp.workspace:
            decl = (f"{s.temp.access()} = {init}  (workspace: dense over "
                    f"{', '.join(i.name for i in s.temp.indices)}, with a bitmap and a coordinate list)")
        return ([f"{pad}where:"] + _lines(s.consumer, depth + 1) + [f"{pad}producer:",
                f"{pad}{INDENT}{decl}"] + _lines(s.producer, depth + 1))
    if isinstance(s, Sequence):
        return _lines(s.define, depth) + _lines(s.mutate, depth)
    if isinstance(s, Skip):
        return [f"{pad}skip"]
    raise TypeError(f"not a CIN statement: {s!r}")


def _value_text(v) -> str:
    if v is NOVALUE:
        return "?"
    try:
        return str(Literal(v.item() if hasattr(v, "item") else v))
    except TypeError:
        return repr(v)


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
    fresh = FreshNames(_tensor_names(assign.rhs) | {assign.lhs.tensor})
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


def _loops(s: Stmt) -> tuple[list[Index], Stmt]:
    """The chain of directly nested foralls at the top of ``s`` and what they enclose."""
    order = []
    while isinstance(s, Forall):
        order.append(s.index)
        s = s.body
    return order, s


def _wrap(order, body: Stmt) -> Stmt:
    for index in reversed(order):
        body = Forall(index, body)
    return body


def with_order(s: Stmt, order: list[Index]) -> Stmt:
    """``s`` with its top chain of foralls put in ``order`` (a permutation of them)."""
    current, body = _loops(s)
    if sorted(i.name for i in current) != sorted(i.name for i in order):
        raise ValueError(f"order {[i.name for i in order]} is not a permutation of the loops "
                         f"{[i.name for i in current]}")
    return _wrap(order, body)


def scalar_promote(s: Stmt) -> Stmt:
    """Accumulate an innermost reduction in a scalar temporary (taco's scalar promotion).

    ``forall i, j: y[i] += e`` becomes ``forall i: (y[i] = t_j) where (forall j: t_j += e)``
    when every reduction loop (an index not on the left) is inside every output loop.
    Statements that do not have this shape are returned unchanged.
    """
    order, body = _loops(s)
    if not isinstance(body, Assignment) or body.op is None or not order:
        return s
    out = set(body.lhs.indices)
    k = next((n for n, i in enumerate(order) if i not in out), len(order))
    if k == len(order) or any(i in out for i in order[k:]):
        return s
    if body.op.identity is NOVALUE:
        return s
    fresh = FreshNames(_tensor_names(body.rhs) | {body.lhs.tensor})
    name = fresh("t_" + "".join(i.name for i in order[k:]))
    temp = Temporary(name, body.op, body.op.identity)
    producer = _wrap(order[k:], Assignment(temp.access(), body.op, body.rhs))
    return _wrap(order[:k], Where(Assignment(body.lhs, None, temp.access()), producer, temp))


def precompute(s: Stmt, indices, name: str, expr=None) -> Stmt:
    """Compute the right-hand side into a workspace over ``indices`` (taco's ``precompute``).

    ``s`` is a chain of foralls around one assignment ``lhs op= e``; ``expr``, if
    given, must be ``e`` (a sub-expression would need the reduction split, which
    is not supported). The result is ``consumer where producer`` with
    ``consumer: lhs = ws[indices]`` and ``producer: ws[indices] op= e``; walking
    the loops from the innermost out, an index of ``indices`` goes to both sides,
    one used by one side only goes to that side, and the first index used by both
    (with every loop outside it) stays around the ``where`` (taco.md §2.8).

    >>> from compiler.notation import parse
    >>> from compiler.notation.ast import Index
    >>> s = with_order(concretize(parse("C[i, j] = A[i, k] * B[k, j]")), [Index("i"), Index("k"), Index("j")])
    >>> print(precompute(s, [Index("j")], "w"))
    forall i:
      where:
        forall j:
          C[i, j] = w[j]
      producer:
        w[j] = 0  (workspace: dense over j, with a bitmap and a coordinate list)
        forall k:
          forall j:
            w[j] += A[i, k] * B[k, j]
    """
    from ..errors import StrategyError
    order, body = _loops(s)
    if not isinstance(body, Assignment):
        raise StrategyError("precompute applies to loops that directly enclose one assignment; "
                            f"this statement has a {type(body).__name__} inside its loops")
    if expr is not None and expr != body.rhs:
        raise StrategyError(f"precompute({expr}): only the whole right-hand side {body.rhs} can be "
                            f"precomputed into a workspace")
    indices = tuple(Index(i) if isinstance(i, str) else i for i in indices)
    if len(indices) != 1:
        raise StrategyError(f"precompute: a workspace has exactly one index, not "
                            f"{', '.join(i.name for i in indices) or 'none'}")
    for i in indices:
        if i not in order:
            raise StrategyError(f"precompute: {i} is not a loop of the statement "
                                f"(loops {', '.join(x.name for x in order)})")
        if i not in body.lhs.indices:
            raise StrategyError(f"precompute: workspace index {i} is not an index of the result "
                                f"{body.lhs}; a workspace holds part of the result")
    op = body.op
    reduced = [i for i in order if i not in body.lhs.indices]
    if op is not None and op.identity is NOVALUE:
        raise StrategyError(f"precompute: {op.name} has no identity to start the workspace from")
    ws = Temporary(name, op, op.identity if op is not None else NOVALUE, indices)
    consumer_uses = set(body.lhs.indices) | set(indices)
    producer_uses = set(indices) | {i for a in expr_accesses(body.rhs) for i in a.indices}
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
    outside = order[:k]
    if any(i in reduced for i in outside) or op is None:
        raise StrategyError(f"precompute({', '.join(i.name for i in indices)}): the reduction over "
                            f"{', '.join(i.name for i in reduced) or 'nothing'} must be inside the workspace's "
                            f"loops, which it is not in the order {', '.join(i.name for i in order)}")
    if to_producer and to_producer[-1] not in indices:
        raise StrategyError(f"precompute({', '.join(i.name for i in indices)}): the workspace index must be "
                            f"the innermost loop of the producer (loops {', '.join(i.name for i in to_producer)})")
    consumer = _wrap(to_consumer, Assignment(body.lhs, None, ws.access()))
    producer = _wrap(to_producer, Assignment(ws.access(), op, body.rhs))
    return _wrap(outside, Where(consumer, producer, ws))


def workspace_name(s: Stmt, base: str = "w") -> str:
    """A workspace name not used by any tensor of ``s``."""
    names = {a.lhs.tensor for a in assignments(s)} | {x.tensor for a in assignments(s) for x in expr_accesses(a.rhs)}
    return FreshNames(names)(base)


__all__ = ["precompute", "workspace_name", "Stmt", "Temporary", "Assignment", "Forall", "Where", "Sequence", "Skip", "concretize",
           "scalar_promote", "with_order", "foralls", "assignments", "expr_accesses"]
