"""CFIR: the control-flow IR between lattices and imperative code (shape-operators.md §5, §7).

::

    cfir ::= forall i (while i <- seq with (located = i) switch)*
           | switch i (case seq: cfir)+ | cfir; cfir | a(I) = e | a(I) op= e | alloc t in cfir

A :class:`CForall` holds one :class:`CLoop` per loop of its lattice, run one
after the other with drop-out semantics: a loop runs while every iterator it
iterates has coordinates left (and, with the universe, while ``i`` is in range),
resolves ``i`` as the least coordinate, locates into Dense levels and runs the
first case of its switch whose iterators are all at ``i`` (most specific first).
:func:`build_cfir` builds it from concrete index notation and the lattices;
:func:`interpret_cfir` runs it on tensors (a test oracle for the lowering).

>>> from compiler.notation import parse
>>> from compiler.format import sparse_vector, dense
>>> prog = parse("a[i] = b[i] + c[i]")
>>> setup = Setup.create(prog, {"b": sparse_vector(), "c": sparse_vector(), "a": dense(1)})
>>> print(build_cfir(setup.statement, setup))
forall i:
  while i <- b0 ∩ c0:
    switch i:
      case b0 c0: a[i] = b[i] + c[i]
      case b0: a[i] = b[i]
      case c0: a[i] = c[i]
  while i <- b0:
    a[i] = b[i]
  while i <- c0:
    a[i] = c[i]
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import serialize
from ..algebra import NOVALUE, Operator
from ..dtypes import typed_scalar
from ..errors import StrategyError
from ..notation.ast import Access, Call, Index, Literal, Reduce, assign_spelling, walk
from ..notation.dtypes import expr_dtype, reduce_dtype
from ..rewrite import Rule, rewrite
from ..trace import Rewrite
from .algebra import derive, same_value
from .cin import Assignment, Forall, Sequence, Skip, Where, expr_accesses, foralls
from .iteration_graph import is_all_dense
from .diagonal import Found, found
from .iterators import ModeIterator, WorkspaceIterator, py_arrays
from .lattice import Operand, build_lattice, literal, remove_operands, simplify_rules, typed_fill, verify
from .plan import Setup, init_of, stmt_accesses
from .plan_steps import foldable

INDENT = "  "

serialize.node(ModeIterator)
serialize.node(WorkspaceIterator)
serialize.node(Found)


# -- nodes ----------------------------------------------------------------------------------


class CNode:
    def __str__(self) -> str:
        return "\n".join(_lines(self, 0))

    def pretty(self) -> str:
        return str(self)


def headline(node: CNode) -> str:
    """A CFIR loop's or case's first line (with a case's statement when it fits on one
    line): what the C it produced computes, for the explorer's tooltips, e.g.
    ``while i <- A0 ∩ B0`` or ``case A0 B0: y[i] = A[i] * B[i]``."""
    lines = [x.strip() for x in str(node).splitlines() if x.strip()]
    if not lines:
        return ""
    head = lines[0]
    if head.startswith("switch") and len(lines) > 1:
        head = lines[1]
    return head[:-1] if head.endswith(":") else head


@serialize.node
@dataclass(frozen=True)
class FlatLocator:
    """A tensor whose levels are all Dense, located once all its indices are bound."""

    key: str
    name: str
    tensor: str

    @property
    def label(self) -> str:
        return self.name


@serialize.node
@dataclass(frozen=True)
class CCase(CNode):
    """``case present: body``; ``tests`` are compared with ``i``, ``value_tests`` against their fill."""

    present: tuple[str, ...]       # access keys present in this region
    tests: tuple[ModeIterator, ...]
    value_tests: tuple[str, ...]   # access keys whose value is compared with the fill
    body: Any
    omit: bool = False

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CLoop(CNode):
    """``while index <- iterated [∩ U] with (located = index): switch``."""

    index: Index
    iterated: tuple[ModeIterator, ...]
    located: tuple
    universe: bool
    cases: tuple[CCase, ...]

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CFold(CNode):
    """After a reduction's loops: every coordinate where no case ran holds the fill ``fill``
    of the reduced value; fold them into ``lhs`` at once instead of visiting them.

    An idempotent operator (max, min, or, and) takes the fill once if any coordinate is
    missing; ``+`` takes ``missing * fill`` (sparse-array-programming.md §5.2).
    """

    index: Index
    lhs: Access
    op: Operator
    fill: Any
    dtype: str        # the dtype the reduction accumulates in (a sum of int32 or bool is int64, as in numpy)
    output: bool
    per: Index | None = None   # a dense output's index under the reduction: one count per coordinate

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CForall(CNode):
    """The loops of one forall over ``index`` (extent: the size parameter ``extent``), and
    the fold of the coordinates they skip (a :class:`CFold`, or None)."""

    index: Index
    extent: str
    loops: tuple[CLoop, ...]
    fold: CFold | None = None
    tally: Index | None = None   # counts, per coordinate, the cases that ran for the fold over ``tally``

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CSeq(CNode):
    stmts: tuple

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CAlloc(CNode):
    """``alloc temp = init in body``: a scalar temporary of a ``where``."""

    temp: str
    dtype: str
    init: Any
    body: Any

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CWorkspace(CNode):
    """``alloc workspace[index] = init in body``: a dense workspace of a ``where``.

    ``body`` is the producer then the consumer; ``ordered`` says whether the
    consumer needs the coordinates in order (the list is sorted between them).
    ``once`` says the producer sets each coordinate at most once, in ascending order
    (one forall over ``index`` around one assignment), so its list needs neither the
    bitmap's test for a coordinate already listed nor sorting.
    The workspace is reset after the consumer, for the next enclosing iteration.
    """

    temp: str
    dtype: str
    init: Any
    index: Index
    extent: str
    ordered: bool
    body: Any
    inner: tuple = ()           # further indices, over several (row-major after ``index``)
    inner_extents: tuple = ()
    once: bool = False

    @property
    def indices(self) -> tuple:
        return (self.index, *self.inner)

    @property
    def extents(self) -> tuple:
        return (self.extent, *self.inner_extents)

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CDenseWorkspace(CNode):
    """``alloc workspace[indices] = init in body``: a dense workspace over several indices.

    ``body`` is the producer then the consumer, which locates into it; every entry
    is reset to ``init`` after the consumer, for the next enclosing iteration.
    """

    temp: str
    dtype: str
    init: Any
    indices: tuple
    extents: tuple
    body: Any

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CAssign(CNode):
    """``lhs = rhs`` or ``lhs op= rhs``; ``output`` says whether ``lhs`` is the output tensor."""

    lhs: Access
    op: Operator | None
    rhs: Any
    output: bool

    __str__ = CNode.__str__


@serialize.node
@dataclass(frozen=True)
class CSkip(CNode):
    __str__ = CNode.__str__


def _labels(items) -> str:
    return " ∩ ".join(x.label for x in items)


def _lines(n, depth: int) -> list[str]:
    pad = INDENT * depth
    if isinstance(n, CForall):
        out = [f"{pad}forall {n.index}" + (f" (counting, per {n.index}, the cases that ran for the fold over "
                                            f"{n.tally})" if n.tally is not None else "") + ":"]
        for loop in n.loops:
            out += _lines(loop, depth + 1)
        if n.fold is not None:
            out += _lines(n.fold, depth + 1)
        return out
    if isinstance(n, CFold):
        f, lhs = _value(n.fill), _access(n.lhs)
        if n.per is not None:
            return [f"{pad}fold {lhs} {assign_spelling(n.op)} {f}"
                    + (" once" if n.op.idempotent else " * (the coordinates of " + n.index.name + " that ran no case)")
                    + f", for each {n.per} where a coordinate of {n.index} ran no case (counted per {n.per})"]
        if n.op.idempotent:
            return [f"{pad}fold {lhs} {assign_spelling(n.op)} {f} if a coordinate of {n.index} ran no case"]
        return [f"{pad}fold {lhs} {assign_spelling(n.op)} {f} * (the coordinates of {n.index} that ran no case)"]
    if isinstance(n, CLoop):
        seq = _labels(n.iterated)
        if n.universe:
            seq = f"U ∩ {seq}" if seq else "U"
        head = f"{pad}while {n.index} <- {seq}"
        if n.located:
            head += " with (" + ", ".join(f"{x.label} = {n.index}" for x in n.located) + ")"
        if len(n.cases) == 1 and not n.cases[0].tests and not n.cases[0].value_tests:
            return [head + ":"] + _lines(n.cases[0].body, depth + 1)
        out = [head + ":", f"{pad}{INDENT}switch {n.index}:"]
        for c in n.cases:
            out += _lines(c, depth + 2)
        return out
    if isinstance(n, CCase):
        names = " ".join(t.label for t in n.tests)
        if n.value_tests:
            names += " (values " + ", ".join(n.value_tests) + ")"
        names = names.strip() or "else"
        body = _lines(n.body, depth + 1)
        if n.omit:
            return [f"{pad}case {names}: omit"]
        if len(body) == 1:
            return [f"{pad}case {names}: {body[0].strip()}"]
        return [f"{pad}case {names}:"] + body
    if isinstance(n, CSeq):
        return [line for s in n.stmts for line in _lines(s, depth)]
    if isinstance(n, CAlloc):
        return [f"{pad}alloc {n.temp} = {_value(n.init)}"] + _lines(n.body, depth)
    if isinstance(n, CWorkspace):
        parts = n.body.stmts if isinstance(n.body, CSeq) else (n.body,)
        over = ", ".join(i.name for i in n.indices)
        out = [f"{pad}alloc workspace {n.temp}[{over}] = {_value(n.init)} "
               f"(dense over {over}, bitmap {n.temp}_set, list {n.temp}_list"
               + (" of row-major positions)" if n.inner else ")")]
        out += _lines(parts[0], depth)
        if n.ordered and n.once:
            out.append(f"{pad}({n.temp}_list is in order: the producer sets each coordinate once, ascending)")
        elif n.ordered:
            out.append(f"{pad}sort {n.temp}_list")
        for x in parts[1:]:
            out += _lines(x, depth)
        return out + [f"{pad}reset {n.temp} at {n.temp}_list"]
    if isinstance(n, CDenseWorkspace):
        over = ", ".join(i.name for i in n.indices)
        return ([f"{pad}alloc workspace {n.temp}[{over}] = {_value(n.init)} (dense over {over})"]
                + _lines(n.body, depth) + [f"{pad}reset {n.temp}"])
    if isinstance(n, CAssign):
        return [f"{pad}{_access(n.lhs)} {assign_spelling(n.op)} {n.rhs}"]
    if isinstance(n, CSkip):
        return [f"{pad}skip"]
    raise TypeError(f"not a CFIR node: {n!r}")


def _access(a: Access) -> str:
    return a.tensor if not a.indices else str(a)


def _value(v) -> str:
    return "?" if v is NOVALUE else str(literal(v))


# -- building -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ctx:
    bound: tuple = ()
    tally: Any = None   # (the reduction's index, the fill) when this forall counts for its fold


def value_of(stmt, setup: Setup):
    """``(expr, neutral)``: the value a statement computes per coordinate, temporaries inlined."""
    if isinstance(stmt, Forall):
        return value_of(stmt.body, setup)
    if isinstance(stmt, Where):
        ce, n = value_of(stmt.consumer, setup)
        pe, _ = value_of(stmt.producer, setup)
        if ce is None:
            return None, n
        if stmt.temp.op is None:   # a workspace assigned once per coordinate holds the value itself
            return _subst(ce, stmt.temp.name, pe if pe is not None else literal(_temp_init(stmt.temp, setup))), n
        red = Reduce(stmt.temp.op, tuple(i for i in foralls(stmt.producer) if i not in stmt.temp.indices)
                     or (Index("_"),),
                     pe if pe is not None else literal(_temp_init(stmt.temp, setup)))
        return _subst(ce, stmt.temp.name, red), n
    if isinstance(stmt, Assignment):
        if stmt.op is None and stmt.lhs.tensor in setup.temps:
            return stmt.rhs, setup.fill_of(stmt.lhs)
        if stmt.op is None:
            return stmt.rhs, setup.out_neutral
        d = setup.dtype_of(stmt.lhs) if stmt.lhs.tensor in setup.temps else setup.out_dtype
        ident = stmt.op.identity_for(d)
        return stmt.rhs, ident
    if isinstance(stmt, Skip):
        return None, NOVALUE
    raise StrategyError(f"the lattice strategy cannot lower {type(stmt).__name__} statements")


def _temp_init(temp, setup: Setup):
    return init_of(temp, setup.temps[temp.name][1]) if temp.name in setup.temps else temp.init


def _subst(e, name, value):
    if isinstance(e, Access) and e.tensor == name:
        return value
    if isinstance(e, Call):
        return Call(e.op, tuple(_subst(a, name, value) for a in e.args))
    if isinstance(e, Reduce):
        return Reduce(e.op, e.indices, _subst(e.body, name, value))
    return e


def _stmt_rules(setup: Setup) -> list[Rule]:
    def skip_neutral_update(t):
        if isinstance(t, Assignment) and t.op is not None and isinstance(t.rhs, Literal):
            d = setup.dtype_of(t.lhs) if t.lhs.tensor in setup.temps else setup.out_dtype
            ident = t.op.identity_for(d)
            if ident is not NOVALUE and same_value(typed_scalar(t.rhs.value, d), ident):
                return Skip()
        return None

    def skip_fill_store(t):
        if isinstance(t, Assignment) and t.op is None and t.lhs == setup.output \
                and isinstance(t.rhs, Literal) and setup.out_neutral is not NOVALUE \
                and same_value(typed_scalar(t.rhs.value, setup.out_dtype), setup.out_neutral):
            return Skip()
        return None

    def forall_skip(t):
        return Skip() if isinstance(t, Forall) and isinstance(t.body, Skip) else None

    def where_empty_producer(t):
        if isinstance(t, Where) and isinstance(t.producer, Skip):
            init = literal(init_of(t.temp, setup.temps[t.temp.name][1]))
            return _map_assign(t.consumer, lambda a: replace(a, rhs=_subst(a.rhs, t.temp.name, init)))
        if isinstance(t, Where) and isinstance(t.consumer, Skip):
            return Skip()
        return None

    def where_unread(t):
        # min(t_k, B[i, j]) where B is -inf, min's annihilator, no longer reads t_k: its loops go
        # (they would read a tensor this case does not locate)
        if isinstance(t, Where) and not t.temp.workspace \
                and t.temp.name not in {a.tensor for a in stmt_accesses(t.consumer)}:
            return t.consumer
        return None

    return [Rule("skip-neutral-update", skip_neutral_update), Rule("skip-fill-store", skip_fill_store),
            Rule("forall-skip", forall_skip), Rule("where-empty-producer", where_empty_producer),
            Rule("where-unread", where_unread)]


def _map_assign(s, fn):
    if isinstance(s, Assignment):
        return fn(s)
    if isinstance(s, Forall):
        return Forall(s.index, _map_assign(s.body, fn))
    if isinstance(s, Where):
        return Where(_map_assign(s.consumer, fn), _map_assign(s.producer, fn), s.temp)
    return s


def remove_from_stmt(s, absent: dict):
    return _map_assign(s, lambda a: replace(a, rhs=remove_operands(a.rhs, absent)))


def simplify_stmt(s, setup: Setup, log: list):
    dtype_of = lambda a: setup.dtype_of(a)  # noqa: E731
    return rewrite(s, simplify_rules(dtype_of, setup.fill_of) + _stmt_rules(setup), log)


def build_cfir(stmt, setup: Setup, ctx: _Ctx | None = None, verify_lattices: bool = True):
    """The CFIR of a concrete statement, recording each lattice in ``setup.lattices``."""
    ctx = ctx or _Ctx()
    if isinstance(stmt, Skip):
        return CSkip()
    if isinstance(stmt, Assignment):
        return CAssign(stmt.lhs, stmt.op, stmt.rhs, stmt.lhs == setup.output)
    if isinstance(stmt, Where) and stmt.temp.dense:
        t, dt = setup.temps[stmt.temp.name]
        body = CSeq((build_cfir(stmt.producer, setup, ctx, verify_lattices),
                     build_cfir(stmt.consumer, setup, ctx, verify_lattices)))
        return CDenseWorkspace(t.name, dt, init_of(t, dt), tuple(t.indices),
                               tuple(setup.extents[i] for i in t.indices), body)
    if isinstance(stmt, Where) and stmt.temp.workspace:
        t, dt = setup.temps[stmt.temp.name]
        init = init_of(t, dt)
        index, *inner = t.indices
        body = CSeq((build_cfir(stmt.producer, setup, ctx, verify_lattices),
                     build_cfir(stmt.consumer, setup, ctx, verify_lattices)))
        # over several indices the list is always sorted: equal outer coordinates must be adjacent
        ordered = bool(inner) or _needs_order(body, t.name, setup)
        # lattice loops iterate ordered, unique levels: one forall over the index sets each
        # coordinate once, ascending
        once = (not inner and isinstance(stmt.producer, Forall) and stmt.producer.index == index
                and isinstance(stmt.producer.body, Assignment))
        return CWorkspace(t.name, dt, init, index, setup.extents[index], ordered, body, tuple(inner),
                          tuple(setup.extents[i] for i in inner), once)
    if isinstance(stmt, Where):
        t, dt = setup.temps[stmt.temp.name]
        init = init_of(t, dt)
        return CAlloc(t.name, dt, init, CSeq((build_cfir(stmt.producer, setup, ctx, verify_lattices),
                                             build_cfir(stmt.consumer, setup, ctx, verify_lattices))))
    if isinstance(stmt, Sequence):
        return CSeq((build_cfir(stmt.define, setup, ctx, verify_lattices),
                     build_cfir(stmt.mutate, setup, ctx, verify_lattices)))
    if not isinstance(stmt, Forall):
        raise StrategyError(f"cannot lower {stmt!r}")
    i = stmt.index
    value, neutral = value_of(stmt.body, setup)
    bound = set(ctx.bound)
    inner = bound | {i}
    operands, free, fixed, by_key, also = [], [], [], {}, {}
    seen = set()
    for acc in expr_accesses(value) if value is not None else []:
        key = str(acc)
        if key in seen:
            continue
        if acc.tensor in setup.temps:
            temp = setup.temps[acc.tensor][0]
            if not temp.workspace:   # a scalar computed outside this loop (hoisted): a constant here
                seen.add(key)
                fixed.append(acc)
                continue
            if temp.dense or len(acc.indices) == 1:
                seen.add(key)
                fill, dt = setup.fill_of(acc), setup.dtype_of(acc)
                if i in acc.indices and (not temp.dense or set(acc.indices) <= inner):
                    # one index: iterate the coordinates set; several: locate, as in a dense tensor
                    kind = "dense" if temp.dense else "sparse"
                    operands.append(Operand(acc, kind, True, fill, dt, setup.names[key]))
                    by_key[key] = FlatLocator(key, setup.names[key], acc.tensor) if temp.dense \
                        else setup.iters[key][0]
                elif set(acc.indices) <= bound:
                    fixed.append(acc)
                else:
                    free.append(acc)
                continue
            # sparse over several indices: iterated level by level, like a SparseCOO tensor
        seen.add(key)
        path = setup.paths[key]
        fill, dt = setup.fill_of(acc), setup.dtype_of(acc)
        if key in setup.flexible:
            if i in acc.indices and set(acc.indices) <= inner:
                loc = FlatLocator(key, setup.names[key], acc.tensor)
                operands.append(Operand(acc, "dense", True, fill, dt, setup.names[key]))
                by_key[key] = loc
            elif set(acc.indices) <= bound:
                fixed.append(acc)
            else:
                free.append(acc)
            continue
        cursor = 0
        while cursor < len(path) and path[cursor] in bound:
            cursor += 1
        if any(p in bound for p in path[cursor:]):
            raise StrategyError(f"{acc} is stored in the order {', '.join(p.name for p in path)} but the "
                                f"loops bind {', '.join(x.name for x in ctx.bound)} first")
        if cursor < len(path) and path[cursor] == i:
            it = setup.iters[key][cursor]
            # a repeated index (a diagonal, B[i, i, j]): the (Dense) levels after this one that
            # i indexes too are located at i in the same loop, each under the one before
            last = cursor
            while last + 1 < len(path) and path[last + 1] == i:
                last += 1
            operands.append(Operand(acc, it.kind, last == len(path) - 1, fill, dt, setup.names[key]))
            by_key[key] = it
            if last > cursor:   # (a sparse last level is searched for i: compiler.lattice.diagonal)
                also[key] = tuple(x if x.kind == "dense" else found(x, acc)
                                  for x in setup.iters[key][cursor + 1:last + 1])
        elif i in path:
            raise StrategyError(f"{acc} is stored in the order {', '.join(p.name for p in path)}, so "
                                f"{path[cursor]} must be iterated before {i}")
        elif cursor < len(path):
            free.append(acc)
        else:
            fixed.append(acc)
    # value tests come with omitters (see build_lattice); and with a dense operand read by the
    # loops inside under an explicit algebra: there it is bound, taken as present, so a stored
    # fill (xorf(b[j], M[j, k]) with b[j] = 0) must be told apart here, where b[j] is located
    force = not isinstance(stmt.body, Assignment) and value is not None and \
        any(op.kind == "dense" and op.leaf for op in operands) and \
        any(isinstance(n, Call) and n.op.algebra is not None for n in walk(value))
    if value is None:
        return CSkip()
    tally = None
    if ctx.tally is not None and isinstance(stmt.body, Assignment):
        # the reduction around folds the fill per coordinate of i: visit where the value differs
        tally, neutral = ctx.tally
    L = build_lattice(i, value, operands, neutral=neutral, free=free, fixed=fixed,
                      fill_of=setup.fill_of, dtype_of=setup.dtype_of, force_value_tests=force)
    fold = _fold(stmt, value, neutral, setup) if L.universe and tally is None else None
    per = _fold_per(stmt, value, setup, ctx) if fold is None and tally is None else None
    if fold is not None:
        # the fill is not the reduction's identity, so every coordinate counts: iterate where
        # the value can differ from its fill instead, and fold the fill in for the rest
        folded = build_lattice(i, value, operands, neutral=fold.fill, free=free, fixed=fixed,
                               fill_of=setup.fill_of, dtype_of=setup.dtype_of, force_value_tests=force)
        if folded.universe:
            fold = None
        else:
            how = "once if any is missing" if fold.op.idempotent else "times the missing coordinates"
            folded.rewrites.append(Rewrite("fold-fill", f"U (the fill {_value(fold.fill)} is not the identity of "
                                           f"{fold.op.name})", f"the coordinates where the value is not the fill; "
                                           f"the fill folded in {how}"))
            L = folded
    if verify_lattices:
        verify(L, value, free_dtypes={str(a): setup.dtype_of(a) for a in free + fixed},
               free_fills={str(a): setup.fill_of(a) for a in free + fixed}, trials=6)
    setup.lattices.append(L)
    ops = {op.key: op for op in operands}
    loops = []
    for loop in L.loops:
        iterated = tuple(by_key[k] for k in loop.iterated)
        located = tuple(loc for op in operands
                        for loc in ((by_key[op.key],) if op.kind == "dense" else ()) + also.get(op.key, ()))
        cases = []
        single = len(iterated) == 1 and not L.universe
        for pt in loop.cases:
            tests = () if single else tuple(by_key[k] for k in loop.iterated if k in pt.present)
            vtests = tuple(k for k in ops if k in pt.present and ops[k].leaf) if L.value_tests else ()
            present = tuple(k for k in ops if k in pt.present)
            if not pt.producer:
                cases.append(CCase(present, tests, vtests, CSkip(), True))
                continue
            absent = {ops[k].access: typed_fill(ops[k]) for k in ops if k not in pt.present}
            log: list[Rewrite] = []
            body = simplify_stmt(remove_from_stmt(stmt.body, absent), setup, log)
            L.rewrites.extend(log)
            inner = _Ctx(ctx.bound + (i,), (i, per.fill) if per is not None else None)
            cases.append(CCase(present, tests, vtests, build_cfir(body, setup, inner, verify_lattices)))
        loops.append(CLoop(i, iterated, located, L.universe, tuple(cases)))
    if per is not None:
        L.rewrites.append(Rewrite("fold-fill", f"U at {per.per} (the fill {_value(per.fill)} is not the identity "
                                  f"of {per.op.name})", f"the fill folded in per {per.per}, after the loop over {i}"))
        return CForall(i, setup.extents[i], tuple(loops), per)
    return CForall(i, setup.extents[i], tuple(loops), fold, tally)


def _fold_per(stmt: Forall, value, setup: Setup, ctx: _Ctx) -> CFold | None:
    """The fold of a reduction over ``i`` into a dense output ``y[j]`` (the column max
    ``y[j] = max[i](A[i, j])``): the loop over ``j`` inside counts, per ``j``, the
    coordinates of ``i`` where a case ran; after the loop over ``i`` the fill is folded
    into each ``y[j]`` that missed one. Only for the outermost loop (the counts start at
    zero once) of one directly nested loop, with no schedule relations or threads.
    """
    i, inner = stmt.index, stmt.body
    if ctx.bound or not isinstance(inner, Forall) or not isinstance(inner.body, Assignment):
        return None
    a, j = inner.body, inner.index
    op = a.op
    if op is None or i in a.lhs.indices or a.lhs.indices != (j,) or a.lhs != setup.output \
            or not is_all_dense(setup.output_format):
        return None
    if not foldable(op):
        return None
    if setup.parallel is not None or setup.relations:
        return None
    _, fill = derive(value, setup.fill_of, [])
    ident = op.identity_for(np.dtype(setup.out_dtype))
    if fill is NOVALUE or ident is NOVALUE or same_value(fill, ident):
        return None
    vdt = np.dtype(expr_dtype(value, setup.dtype_of))
    return CFold(i, a.lhs, op, fill, reduce_dtype(op, vdt).name, True, per=j)


def _fold(stmt: Forall, value, identity, setup: Setup) -> CFold | None:
    """The fold of a reduction's fill over the coordinates its loops would skip, or None.

    It applies to a forall whose body reduces into a scalar temporary or a dense output
    not indexed by the forall, by an operator whose repeated fill has a closed form:
    commutative idempotent ones (once) and ``+`` (times the count); and to a plain loop (no
    split, pos or threads: they iterate the coordinates differently), or to the loops of
    fused positions (``fuse`` + ``pos``: their lattices skip the fill, and one fold after
    the flat loop covers every coordinate of both).
    """
    from .derived import Fuse, Pos
    a, i = stmt.body, stmt.index
    flat = next((r for r in setup.relations if isinstance(r, Fuse) and i.name in (r.outer, r.inner)
                 and any(isinstance(p, Pos) and p.index == r.fused for p in setup.relations)), None)
    if flat is not None and i.name == flat.outer and isinstance(a, Forall) and a.index.name == flat.inner:
        a = a.body   # the rows of fused positions: the inner loop's reduction is folded after the flat loop
    if not isinstance(a, Assignment) or a.op is None or i in a.lhs.indices:
        return None
    if flat is not None and any(x.name in (flat.outer, flat.inner) for x in a.lhs.indices):
        flat = None   # a row's reduction (y[i]): one fold after the flat loop cannot tell the rows apart
    op = a.op
    if not foldable(op):
        return None
    if a.lhs.tensor in setup.temps:
        if setup.temps[a.lhs.tensor][0].workspace:
            return None
    elif not (a.lhs == setup.output and is_all_dense(setup.output_format)):
        return None
    if setup.parallel == i or any(i.name in vars(r).values() for r in setup.relations if r is not flat):
        return None
    _, fill = derive(value, setup.fill_of, [])
    if fill is NOVALUE or (identity is not NOVALUE and same_value(fill, identity)):
        return None
    vdt = np.dtype(expr_dtype(value, setup.dtype_of))
    return CFold(i, a.lhs, op, fill, reduce_dtype(op, vdt).name, a.lhs == setup.output)


def _needs_order(body, ws: str, setup: Setup) -> bool:
    """Whether a workspace's coordinates must be sorted: a sparse output or a merge reads them
    (with another operand's coordinates, or with the universe's counter: ``while i <- U ∩ w``)."""
    if not is_all_dense(setup.output_format):
        return True

    def visit(n) -> bool:
        if isinstance(n, CForall):
            for loop in n.loops:
                names = [it.name for it in loop.iterated]
                if ws in names and (len(names) > 1 or loop.universe):
                    return True
                if any(visit(c.body) for c in loop.cases):
                    return True
            return False
        if isinstance(n, CSeq):
            return any(visit(x) for x in n.stmts)
        if isinstance(n, (CAlloc, CWorkspace, CDenseWorkspace)):
            return visit(n.body)
        return False

    return visit(body)


# -- interpreter ----------------------------------------------------------------------------------


class _Machine:
    def __init__(self, setup: Setup, tensors: dict):
        self.setup = setup
        self.arrays, self.sizes = {}, {}
        self.once_log: dict[str, list] = {}   # coordinates a producer claimed to set once sets
        self.tallies: dict = {}   # a reduction's index -> cases run per coordinate of the loop inside
        for name, t in tensors.items():
            a, s = py_arrays(name, t)
            self.arrays.update(a)
            self.sizes.update(s)
        self.tensors = tensors
        shape = []
        for i in setup.output.indices:
            t, m = setup.extent_uses[i][0]
            shape.append(tensors[t].shape[m])
        start = setup.scatter_start()
        fill = setup.out_fill if start is None else start
        self.out = np.full(tuple(shape), fill, dtype=setup.out_dtype)
        self.parent: dict = {}   # (access key, mode) -> parent of that mode
        self.env: dict = {}

    def value(self, acc: Access):
        key = str(acc)
        if acc.tensor in self.setup.temps:
            t, dt = self.setup.temps[acc.tensor]
            if t.workspace:
                return self.arrays[acc.tensor].get(self._at(acc), init_of(t, dt))
            return self.env[acc.tensor]
        t = self.tensors[acc.tensor]
        if key in self.setup.flexible:
            p = 0
            for sm, m in enumerate(t.format.mode_order):
                p = p * t.storage_shape[sm] + self.env[acc.indices[m].name]
        else:
            p = self.parent[(key, len(self.setup.paths[key]))]
            if p == -1:   # a diagonal's entry its last level does not store
                return self.setup.fill_of(acc)
        vals = t.vals
        return np.asarray(vals[p])[()]

    def expr(self, e):
        if isinstance(e, Access):
            return self.value(e)
        if isinstance(e, Literal):
            return typed_scalar(e.value, e.dtype)
        if isinstance(e, Call):
            with np.errstate(all="ignore"):
                return np.asarray(e.op(*[self.expr(a) for a in e.args]))[()]
        raise TypeError(f"cannot evaluate {e!r}")

    def run(self, n):
        if isinstance(n, CSkip):
            return
        if isinstance(n, CSeq):
            for s in n.stmts:
                self.run(s)
        elif isinstance(n, CAlloc):
            old = self.env.get(n.temp)
            self.env[n.temp] = n.init
            self.run(n.body)
            if old is not None:
                self.env[n.temp] = old
        elif isinstance(n, CWorkspace) and n.once:
            old = self.arrays.get(n.temp)
            self.arrays[n.temp] = {}
            producer, *consumer = n.body.stmts
            self.once_log[n.temp] = []
            self.run(producer)
            # the lowering trusts this claim (no bitmap test, no sort): check it
            log = self.once_log.pop(n.temp)
            if any(a >= b for a, b in zip(log, log[1:])):
                raise AssertionError(f"workspace {n.temp}: the producer claims to set each coordinate once, "
                                     f"ascending, but set {log}")
            for x in consumer:
                self.run(x)
            self.arrays[n.temp] = old
        elif isinstance(n, (CWorkspace, CDenseWorkspace)):
            old = self.arrays.get(n.temp)
            self.arrays[n.temp] = {}
            self.run(n.body)
            self.arrays[n.temp] = old
        elif isinstance(n, CAssign):
            v = self.expr(n.rhs)
            if n.lhs.tensor in self.setup.temps and self.setup.temps[n.lhs.tensor][0].workspace:
                ws = self.arrays[n.lhs.tensor]
                at = self._at(n.lhs)
                with np.errstate(all="ignore"):
                    ws[at] = n.op(self.value(n.lhs), v) if n.op is not None else v
                if n.lhs.tensor in self.once_log:
                    self.once_log[n.lhs.tensor].append(at)
                return
            if n.output:
                at = tuple(self.env[i.name] for i in n.lhs.indices)
                if n.op is not None:
                    with np.errstate(all="ignore"):
                        v = n.op(self.out[at], v)
                self.out[at] = v
            else:
                cur = self.env[n.lhs.tensor]
                with np.errstate(all="ignore"):
                    self.env[n.lhs.tensor] = typed_scalar(n.op(cur, v), self.setup.temps[n.lhs.tensor][1]) \
                        if n.op is not None else v
        elif isinstance(n, CForall):
            self.forall(n)
        else:
            raise TypeError(f"cannot run {n!r}")

    def forall(self, n: CForall):
        fibers, cursor = {}, {}
        for loop in n.loops:
            for it in loop.iterated:
                k = (str(it.name), it.mode)
                if k not in fibers:
                    key = self._key(it)
                    fibers[k] = it.py_fiber(self.arrays, self.sizes, self.parent[(key, it.mode)]
                                            if it.mode > 0 else 0)
                    cursor[k] = 0
        N = self.sizes[n.extent]
        u, ran = 0, 0
        saved = dict(self.parent)
        per = n.fold.per if n.fold is not None else None
        if per is not None:
            self.tallies[n.index.name] = {}
        for loop in n.loops:
            its = [(it, (it.name, it.mode)) for it in loop.iterated]
            while all(cursor[k] < len(fibers[k]) for _, k in its) and (not loop.universe or u < N):
                coords = {k: fibers[k][cursor[k]][0] for _, k in its}
                i = u if loop.universe else min(coords.values())
                self.env[n.index.name] = i
                for loc in loop.located:
                    if isinstance(loc, ModeIterator):
                        key = self._key(loc)
                        par = self.parent[(key, loc.mode)] if loc.mode > 0 else 0
                        self.parent[(key, loc.mode + 1)] = par * self.sizes[loc.param("size")] + i
                    elif isinstance(loc, Found):   # searched once the level above is at i (-1: not stored)
                        key = self._key(loc)
                        above = self.setup.iters[key][loc.mode - 1]
                        k = (above.name, above.mode)
                        if above.kind != "sparse":
                            par = self.parent[(key, loc.mode)]
                        elif above in loop.iterated and coords[k] == i:
                            par = fibers[k][cursor[k]][1]
                        else:
                            continue   # the level above is not at i: the access is absent
                        self.parent[(key, loc.mode + 1)] = loc.py_find(self.arrays, self.sizes, par, i)
                for it, k in its:
                    if coords[k] == i:
                        self.parent[(self._key(it), it.mode + 1)] = fibers[k][cursor[k]][1]
                for case in loop.cases:
                    if all(coords[(t.name, t.mode)] == i for t in case.tests) and \
                            all(self._present(key) for key in case.value_tests) and \
                            all(coords[k] == i for it, k in its if self._key(it) in case.present):
                        if not case.omit:
                            self.run(case.body)
                            ran += 1
                            if n.tally is not None:
                                counts = self.tallies[n.tally.name]
                                counts[i] = counts.get(i, 0) + 1
                        break
                for _, k in its:
                    if coords[k] == i:
                        cursor[k] += 1
                if loop.universe:
                    u += 1
        self.parent = saved
        f = n.fold
        if per is not None:
            counts = self.tallies.pop(n.index.name)
            for j in range(self.sizes[self.setup.extents[per]]):
                if N > counts.get(j, 0):
                    self.env[per.name] = j
                    self.run(CAssign(f.lhs, f.op, literal(f.op.reduce_fill(f.fill, N - counts.get(j, 0))), f.output))
        elif f is not None and N > ran:
            self.run(CAssign(f.lhs, f.op, literal(f.op.reduce_fill(f.fill, N - ran)), f.output))

    def _at(self, acc: Access):
        """A workspace's key for ``acc``: its coordinate, or the tuple of them over several indices."""
        at = tuple(self.env[i.name] for i in acc.indices)
        return at[0] if len(at) == 1 else at

    def _key(self, it) -> str:
        for key, name in self.setup.names.items():
            if name == it.name:
                return key
        raise KeyError(it.name)

    def _present(self, key) -> bool:
        acc = self.setup.access(key)
        v = self.value(acc)
        return not same_value(v, self.setup.fill_of(acc))


def interpret_cfir(cfir, setup: Setup, **tensors) -> np.ndarray:
    """Run the CFIR on tensors (by name); return the dense output as a numpy array."""
    m = _Machine(setup, tensors)
    m.run(cfir)
    return m.out


__all__ = ["CForall", "CFold", "CLoop", "CCase", "CSeq", "CAlloc", "CWorkspace", "CDenseWorkspace", "CAssign",
           "CSkip", "FlatLocator", "build_cfir", "headline", "interpret_cfir", "value_of"]
