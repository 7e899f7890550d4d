"""The CFIR builder: concrete index notation and its plan to CFIR (:mod:`compiler.lattice.cfir`).

:func:`build_cfir` walks the planned statement; at each forall it collects the operands the
loop iterates or locates, builds the forall's lattice (:func:`~compiler.lattice.lattice.build_lattice`,
checked by enumeration), and makes one :class:`~compiler.lattice.cfir.CLoop` per lattice loop
with one :class:`~compiler.lattice.cfir.CCase` per point, each case's body the statement
simplified for the operands absent there. A loop the lattice merged from many runs one case, the
statement as written (at an outer level, the nest below built once: an operand not at the
coordinate is empty below it). A reduction whose fill is not its operator's identity
gets a :class:`~compiler.lattice.cfir.CFold` instead of visiting every coordinate.

>>> from compiler.notation import parse
>>> from compiler.format import dense, sparse_vector
>>> from compiler.lattice.plan import Setup
>>> setup = Setup.create(parse("s[] = x[i] * y[i]"), {"x": sparse_vector(), "y": sparse_vector()})
>>> print(build_cfir(setup.statement, setup))
alloc t_i = 0.0
forall i:
  while i <- x0 ∩ y0:
    switch i:
      case x0 y0: t_i += x[i] * y[i]
s = t_i[]
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..algebra import NOVALUE
from ..dtypes import typed_scalar
from ..errors import StrategyError
from ..notation.ast import Access, Call, Index, Literal, Reduce, walk
from ..notation.dtypes import expr_dtype, reduce_dtype
from ..rewrite import Rule, rewrite
from ..trace import Rewrite
from ..values import same_value
from .algebra import derive
from .cfir import (CAlloc, CAssign, CCase, CDenseWorkspace, CFold, CForall, CLoop, CSeq, CSkip, CWorkspace, FlatLocator,
                   value_text)
from .cin import Assignment, Forall, Sequence, Skip, Where, expr_accesses, foralls
from .diagonal import found
from .iteration_graph import is_all_dense
from .lattice import MERGE_ABOVE, Operand, build_lattice, literal, remove_operands, simplify_rules, typed_fill, verify
from .plan import Setup, init_of, stmt_accesses
from .plan_steps import foldable


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
        # (the value an update may skip: none of a complex product, Operator.neutral_for)
        return stmt.rhs, stmt.op.neutral_for(d)
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
            ident = t.op.neutral_for(d)
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

    return [Rule("skip-neutral-update", skip_neutral_update, (Assignment,)),
            Rule("skip-fill-store", skip_fill_store, (Assignment,)), Rule("forall-skip", forall_skip, (Forall,)),
            Rule("where-empty-producer", where_empty_producer, (Where,)), Rule("where-unread", where_unread, (Where,))]


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
            if last > cursor:   # (a last level under a sparse one is found at i: compiler.lattice.diagonal)
                also[key] = tuple(x if x.kind == "dense" and it.kind == "dense" else found(x, acc)
                                  for x in setup.iters[key][cursor + 1:last + 1])
        elif i in path:
            raise StrategyError(f"{acc} is stored in the order {', '.join(p.name for p in path)}, so "
                                f"{path[cursor]} must be iterated before {i}; store {acc.tensor} in the loops' order, "
                                f"or lower it with strategy='looplets', which reads it in its own")
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
    merge = MERGE_ABOVE if _mergeable(operands, by_key, also, setup) else None
    L = build_lattice(i, value, operands, neutral=neutral, free=free, fixed=fixed,
                      fill_of=setup.fill_of, dtype_of=setup.dtype_of, force_value_tests=force, merge_above=merge)
    fold = _fold(stmt, value, neutral, setup) if L.universe and tally is None else None
    per = _fold_per(stmt, value, setup, ctx) if fold is None and tally is None else None
    if fold is not None:
        # the fill is not the reduction's identity, so every coordinate counts: iterate where
        # the value can differ from its fill instead, and fold the fill in for the rest
        folded = build_lattice(i, value, operands, neutral=fold.fill, free=free, fixed=fixed,
                               fill_of=setup.fill_of, dtype_of=setup.dtype_of, force_value_tests=force,
                               merge_above=merge)
        if folded.universe:
            fold = None
        else:
            how = "once if any is missing" if fold.op.idempotent else "times the missing coordinates"
            folded.rewrites.append(Rewrite("fold-fill", f"U (the fill {value_text(fold.fill)} is not the identity of "
                                           f"{fold.op.name})", f"the coordinates where the value is not the fill; "
                                           f"the fill folded in {how}"))
            L = folded
    ops = {op.key: op for op in operands}
    # a merged loop's one case computes the statement as written: its points' expressions are not used
    one = [loop.any_of and isinstance(stmt.body, Assignment) and all(ops[k].leaf for k in loop.iterated)
           or (loop.any_of and not isinstance(stmt.body, Assignment) and fold is None and per is None
               and ctx.tally is None and not L.value_tests and _empty_below(loop, ops, by_key, setup))
           for loop in L.loops]
    if verify_lattices:
        verify(L, value, free_dtypes={str(a): setup.dtype_of(a) for a in free + fixed},
               free_fills={str(a): setup.fill_of(a) for a in free + fixed}, trials=6, as_written=bool(one) and all(one))
    setup.lattices.append(L)
    loops = []
    for loop, one_case in zip(L.loops, one):
        iterated = tuple(by_key[k] for k in loop.iterated)
        located = tuple(loc for op in operands
                        for loc in ((by_key[op.key],) if op.kind == "dense" else ()) + also.get(op.key, ()))
        cases = []
        single = len(iterated) == 1 and not L.universe
        if one_case:
            below = None if isinstance(stmt.body, Assignment) else _Ctx(ctx.bound + (i,))
            cases.append(_one_case(stmt.body, loop, ops, setup, L.rewrites, below))
        for pt in loop.cases if not cases else ():
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
        any_of = tuple(tuple(by_key[k] for k in part) for part in loop.any_of)
        loops.append(CLoop(i, iterated, located, L.universe, tuple(cases), any_of))
    if per is not None:
        L.rewrites.append(Rewrite("fold-fill", f"U at {per.per} (the fill {value_text(per.fill)} is not the identity "
                                  f"of {per.op.name})", f"the fill folded in per {per.per}, after the loop over {i}"))
        return CForall(i, setup.extents[i], tuple(loops), per)
    return CForall(i, setup.extents[i], tuple(loops), fold, tally)


def _one_case(body, loop, ops: dict, setup: Setup, log: list, inner: _Ctx | None = None) -> CCase:
    """The one case of a merged loop (:func:`~.lattice.merge_loops`): each iterated access reads its
    fill where its iterator is not at ``i``, so the statement as written computes every region's value.
    The loop visits the same coordinates with one case as with one per region (``where(a != b,
    where(c == d, d, e), where(f > g, g, h))`` over seven sparse operands had up to 128 cases, 7 lines
    of C each); a region's case saved a few operations at a coordinate, not a visit. A sparse output
    keeps the entries that are not its fill, as with the regions' cases; the case runs where one of the
    merged loops would have run a case.

    At an outer level (``inner``, the context of the loops below) the body is the nest below, built
    once for every operand: one whose iterator is not at ``i`` has an empty fiber below it, absent at
    every coordinate there, as the regions' cases had it absent by construction. Over 1x1x1 tensors
    of four formats and fills a nested ``where`` had a nest of cases per region at each level (r7:
    19,890 lines of C at N=1).
    """
    absent = {ops[k].access: typed_fill(ops[k]) for k in ops
              if ops[k].kind == "sparse" and k not in loop.iterated}
    rewrites: list[Rewrite] = []
    stmt = simplify_stmt(remove_from_stmt(body, absent), setup, rewrites)
    log.extend(rewrites)
    how = "read as their fill" if inner is None else "empty below"
    log.append(Rewrite("one-case", f"{len(loop.cases)} cases of the merged loop",
                       "one case: " + ", ".join(ops[k].label for k in loop.iterated) + f" {how} "
                       "where not at the coordinate"))
    present = tuple(k for k in ops if ops[k].access not in absent)
    return CCase(present, (), (), build_cfir(stmt, setup, inner), fill_absent=tuple(loop.iterated))


def _empty_below(loop, ops: dict, by_key: dict, setup: Setup) -> bool:
    """Whether a merged loop's iterated operands can each be empty below where not at the coordinate:
    none is read at this level (a leaf), and every level below is iterated, so an empty fiber under
    it leaves it absent (a Dense level below would be located, at a position of no entry)."""
    for k in loop.iterated:
        if ops[k].leaf:
            return False
        levels = setup.iters[k]
        mode = levels.index(by_key[k])
        if any(x.kind != "sparse" for x in levels[mode + 1:]):
            return False
    return True


def _mergeable(operands, by_key: dict, also: dict, setup: Setup) -> bool:
    """Whether the lattice's loops at this forall may be merged into one (:func:`~.lattice.merge_loops`):
    its sparse operands are levels read by position alone (no block kept beside the position, not located
    by a table; a level of repeated coordinates, COO's, and a workspace's sorted list are), none a diagonal,
    and no schedule splits, fuses or runs a loop on threads (their blocks walk the lattice's loops as TACO
    emits them)."""
    if setup.parallel is not None or setup.relations or also:
        return False
    for op in operands:
        if op.kind != "sparse":
            continue
        it = by_key[op.key]
        if getattr(it, "keeps_block", False) or getattr(it, "locatable", False):
            return False
    return True


def _fold_per(stmt: Forall, value, setup: Setup, ctx: _Ctx) -> CFold | None:
    """The fold of a reduction over ``i`` into a dense output ``y[j]`` (the column max
    ``y[j] = max[i](A[i, j])``): the loop over ``j`` inside counts, per ``j``, the
    coordinates of ``i`` where a case ran; after the loop over ``i`` the fill is folded
    into each ``y[j]`` that missed one. For one directly nested loop, with no schedule
    relations or threads; inside other loops, whose indices the output may name too (a 3-D
    tensor's ``y[k, j] = max[i](A[k, i, j])``), each count starts at zero again after the fold.
    """
    i, inner = stmt.index, stmt.body
    if not isinstance(inner, Forall) or not isinstance(inner.body, Assignment):
        return None
    a, j = inner.body, inner.index
    op = a.op
    if op is None or i in a.lhs.indices or j not in a.lhs.indices or not set(a.lhs.indices) <= {j, *ctx.bound} \
            or a.lhs != setup.output or not is_all_dense(setup.output_format):
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
    return CFold(i, a.lhs, op, fill, reduce_dtype(op, vdt).name, True, per=j, again=bool(ctx.bound))


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


__all__ = ["build_cfir", "remove_from_stmt", "simplify_stmt", "value_of"]
