"""Levels as looplets: ``unfurl`` for each level format, in read and update mode.

A :class:`SubFiber` names fiber ``pos`` of storage level ``level`` of a tensor
(``level == len(levels)`` is the leaf). ``unfurl(fiber, ctx, mode)`` returns the
looplet nest of the fiber's outermost mode; its leaves are sub-fibers of the next
level, fill values, or (at the leaf) values.

Dispatch is on the level class (:data:`UNFURL`), so new formats register here
without touching the level modules.

>>> from compiler.format import csr
>>> from compiler.looplets.looplets import nest_text
>>> from compiler.looplets.fibers import TensorInfo, UnfurlContext
>>> info = TensorInfo.from_format("A", csr())
>>> ctx = UnfurlContext()
>>> print(nest_text(unfurl(info.root(), ctx, "read")))
Lookup(i -> A.lvl1[i])
>>> print(nest_text(unfurl(SubFiber(info, 1, Var("i")), ctx, "read")))
Thunk(preamble: int64 qA = A1_pos[i]; int64 qA_stop = A1_pos[i + 1]; int64 lastA = qA < qA_stop ? A1_idx[qA_stop - 1] + 1 : 0;)
  Sequence
    Phase(stop=lastA)
      Stepper(stop=jA + 1, preamble: int64 jA = A1_idx[qA];, next: qA += 1;)
        chunk:
          Spike
            body: Fill(0.0)
            tail: A.lvl2[qA]
    Phase(stop=_)
      Fill(0.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import StrategyError
from ..imperative import cints, ir
from ..imperative.ir import (Assign, BinOp, CompoundAssign, Const, Declare, If, Load, Select,
                             UnOp, Var, While)
from ..levels import (Dense, Element, Pattern, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseCOO,
                      SparseHash, SparseInterval, SparseList, SparsePoint, SparseRunList)
from . import extents as X
from .looplets import (AcceptRun, Case, Descent, Entries, Fill, Lookup, Switch, Phase, Positions, Run, Sequence, Spike,
                       Stepper, Thunk)
from .absent_fibers import ABSENT_OK, can_be_absent
from .fibers import SubFiber, TensorInfo, child_fiber, fiber_tag, fill_value, when_present
from .follow_looplets import unfurl_sparse_coo_follow, unfurl_sparse_list_follow, unfurl_sparse_list_locate
from .gallop_looplets import (unfurl_sparse_block_list_gallop, unfurl_sparse_byte_map_gallop,
                              unfurl_sparse_hash_gallop, unfurl_sparse_list_gallop, unfurl_sparse_run_list_gallop)
from .searching import descent_over_ends, gallop_from, search_down_stmts, search_stmts
from .hash_tables import hash_names, probe_stmts, rehash_stmts


def declare_last(ctx, f: SubFiber, last, q, q_stop, crd_b, mode: int = 0):
    """``int64 last = q < q_stop ? crd[q_stop - 1] + 1 : 0``: one past the fiber's last stored
    coordinate of the level's mode ``mode`` (0 when it is empty), so at most that mode's size,
    a fact the lowering may use (an extent cut at ``min(last, size)`` is cut at ``last``)."""
    info, k = f.tensor, f.level
    size = info.size(info.storage_mode(k) + mode)
    if info.role == "input":   # (an input's coordinates are validated when it is built)
        ctx.facts.bound(last, Const(0, "int64"), size,
                        f"one past the last coordinate of a fiber of {info.name}.lvl{k}, or 0: its "
                        f"coordinates are below {size}")
        # (q and q_stop are declared with it; a walk moves q only inside the phase up to last)
        ctx.facts.positive_when(last, BinOp("<", q, q_stop),
                                f"one past the last coordinate of a fiber of {info.name}.lvl{k}, or 0 when it "
                                f"stores none: its coordinates are at least 0")
    return Declare(last, "int64", Select(BinOp("<", q, q_stop), X.add(Load(crd_b, X.sub(q_stop, 1)), 1),
                                         Const(0, "int64")))


# --------------------------------------------------------------------------- Dense


def unfurl_dense(f: SubFiber, ctx, mode):
    """Dense: random access, ``Lookup(i -> child at pos * size + i)``."""
    n = f.tensor.size(f.tensor.storage_mode(f.level))
    base = f.pos

    def body(i):
        if isinstance(base, Const) and base.value == 0:
            return child_fiber(f, i)
        return child_fiber(f, X.add(BinOp("*", base, n), i))
    return Lookup(body, f"i -> {child_fiber(f, Var('i')).label()}" if isinstance(base, Const) and base.value == 0
                  else f"i -> {f.tensor.name}.lvl{f.level + 1}[{base} * {n} + i]",
                  f.tensor if mode == "update" else None)


# --------------------------------------------------------------------------- SparseList


def unfurl_sparse_list(f: SubFiber, ctx, mode, child_of=None):
    """SparseList read (walk): a Stepper of Spikes up to the last stored index, then fill.

    Empty fibers get an empty first phase (``last = 0``), so ``idx`` is never read
    outside the fiber (notes: pitfalls 5, 6, 7). ``child_of(q)`` maps a stored entry
    to its child position (SparseHash reads through ``ptr``; default ``q``).
    """
    if mode != "read":
        return unfurl_sparse_list_update(f, ctx)
    child_of = child_of or (lambda q: q)
    info, k = f.tensor, f.level
    pos_b, idx_b = info.array(k, f.lvl.starts_array), info.array(k, f.lvl.crd_array)
    t = fiber_tag(info)
    q, q_stop, last, j = (Var(ctx.fresh(n)) for n in (f"q{t}", f"q{t}_stop", f"last{t}", f"j{t}"))
    none = Const(0, "int64")   # (an absent fiber's positions: none, read nowhere)
    pre = (Declare(q, "int64", when_present(f, Load(pos_b, f.pos), none)),
           Declare(q_stop, "int64", when_present(f, Load(pos_b, X.add(f.pos, 1)), none)),
           declare_last(ctx, f, last, q, q_stop, idx_b))
    stepper = Stepper(
        seek=lambda start: tuple(search_stmts(q, idx_b, q_stop, start, ctx.fresh)),
        stop=X.add(j, 1),
        chunk=Spike(Fill(fill_value(info)), child_fiber(f, child_of(q))),
        next=(CompoundAssign("+", q, Const(1, "int64")),),
        preamble=(Declare(j, "int64", Load(idx_b, q)),),
        positions=Positions(q, q_stop, last, lambda p: Load(idx_b, p),
                            lambda v, t: gallop_from(v, q, idx_b, q_stop, t, ctx.fresh)),
        descent=Descent(q, q_stop, lambda lo, t: search_down_stmts(q, idx_b, lo, t)))
    return Thunk(pre, Sequence((Phase(last, stepper), Phase(None, Fill(fill_value(info))))))


@dataclass(frozen=True, eq=False)
class SparseListUpdate:
    """Bookkeeping of an appended SparseList output fiber (the write protocol)."""

    qos: Any


def unfurl_sparse_list_update(f: SubFiber, ctx, mode="update"):
    """SparseList update (append in index order): each written index appends an entry.

    ``Lookup(i -> Thunk(dirty = false; make room, child at qos, if dirty: idx[qos] = i; qos++))``;
    the fiber's ``pos`` entry is set when the fiber ends. The parents must be Dense.
    """
    info, k = f.tensor, f.level
    if any(not lvl.located_by_coordinate for lvl in info.levels[:k]) and not f.lvl.appends_nested:
        raise StrategyError(f"output {info.name}: a {f.lvl.name} output level needs Dense levels above it")
    pos_b, idx_b = info.array(k, f.lvl.starts_array), info.array(k, f.lvl.crd_array)
    nnz = Var(info.array(k, "nnz"))
    t = fiber_tag(info)

    def body(i):
        dirty = Var(ctx.fresh(f"dirty{t}"))
        child = child_fiber(f, nnz, dirty)
        pre = [Declare(dirty, "bool", Const(False, "bool")),
               ir.Grow(idx_b, X.add(nnz, 1))]
        pre += assemble_stmts(child, ctx)
        test, keep = keep_test(dirty, child, ctx)
        epi = test + [If(keep, [ir.Store(idx_b, nnz, i), CompoundAssign("+", nnz, Const(1, "int64"))]
                         + ([Assign(f.dirty, Const(True, "bool"))] if f.dirty is not None else []))]
        return Thunk(tuple(pre), child, tuple(epi), info)
    # the fiber's end: pos[p + 1] = nnz (the positions before are filled as fibers end)
    return Thunk((), Lookup(body, f"i -> append {info.name}.lvl{k + 1}", info),
                 (ir.Store(pos_b, X.add(f.pos, 1), nnz),), info)


def not_fill(info: TensorInfo, value):
    """C test that an output's ``value`` is not its fill (NaN-aware; -0.0 is 0.0, as ``!=`` and the
    lattice strategy and ``Tensor.from_numpy`` say).

    >>> from compiler.format import parse_format
    >>> print(not_fill(TensorInfo("y", parse_format("sparse", fill=float("nan")), "output"), Var("v")))
    !isnan(v)
    """
    fill = info.fill
    if isinstance(fill, (float, complex, np.inexact)) and fill != fill:
        return UnOp("!", cints.isnan_of(value, info.dtype))
    return BinOp("!=", value, Const(fill, info.dtype))


def is_fill(info: TensorInfo, value):
    """C test that an output's ``value`` is its fill (NaN-aware, as :func:`not_fill`).

    >>> from compiler.format import parse_format
    >>> print(is_fill(TensorInfo("y", parse_format("sparse", fill=float("nan")), "output"), Var("v")))
    isnan(v)
    """
    fill = info.fill
    if isinstance(fill, (float, complex, np.inexact)) and fill != fill:
        return cints.isnan_of(value, info.dtype)
    return BinOp("==", value, Const(fill, info.dtype))


def kept(dirty, child: SubFiber):
    """When an appended entry is kept: it was written, and (an Element's) to other than the fill.

    A sparse output stores no entry equal to its fill (TACO's SparsifyTest: ``a[i] = b[i]`` of a
    dense ``b = [3, 0, 4, 0, 2]`` stores 3 entries), as under the lattice strategy.
    """
    if not (child.is_leaf and isinstance(child.lvl, Element)):
        return dirty
    return ir.and_(dirty, not_fill(child.tensor, Load(child.tensor.array(None, "vals"), child.pos)))


def dense_block(info: TensorInfo, k: int):
    """The number of leaf slots below one position of level ``k - 1`` when levels ``k`` on are
    Dense down to an Element leaf (an IR expression), else None: a stored row of a
    SparseList(Dense) output is that block of values, assembled at once."""
    if k >= len(info.levels) or not isinstance(info.leaf, Element) or \
            not all(lvl.slot_per_coordinate and not lvl.array_dtypes() for lvl in info.levels[k:]):
        return None
    n = info.size(info.storage_mode(k))
    for m in range(info.storage_mode(k) + 1, info.ndim):
        n = BinOp("*", n, info.size(m))
    return n


def assemble_stmts(f: SubFiber, ctx) -> list:
    """Allocate position ``f.pos`` of level ``f.level`` and fill it (Element: grow and store fill;
    a level appended under an appended parent: room for its fiber's end; Dense levels down to
    the leaf: their block of values, all fill)."""
    lvl = f.lvl
    if isinstance(lvl, Element):
        vals = f.tensor.array(None, "vals")
        return [ir.Grow(vals, X.add(f.pos, 1)),
                ir.Store(vals, f.pos, Const(f.tensor.fill, f.tensor.dtype))]
    if isinstance(lvl, Pattern):
        return []
    info, k = f.tensor, f.level
    if k > 0 and (info.levels[k - 1].inserts_nested or info.levels[k - 1].appends_nested) and lvl.inserts_nested:
        return []   # (a hash under a hash or a SparseList: its table is keyed by the parent's position)
    nested = k > 0 and info.levels[k - 1].appends_nested   # (under an appended level: DCSR's, CSF's)
    if nested and lvl.appends_band is not None and k == len(info.levels) - 1:
        # (an empty band ending at 0, starting where the one before it ended; its writes move both)
        ofs, end = info.array(k, lvl.starts_array), info.array(k, lvl.appends_band)
        return [ir.Grow(ofs, X.add(f.pos, 2)), ir.Store(ofs, X.add(f.pos, 1), Var(info.array(k, "nnz"))),
                ir.Grow(end, X.add(f.pos, 1)), ir.Store(end, f.pos, Const(0, "int64"))]
    if nested and (lvl.appends_nested or (lvl.appends_runs and not lvl.full) or lvl.appends_blocks is not None):
        # (the fiber starts where the one before it ended: starts[pos] is set, starts[pos + 1] is set at its end)
        return [ir.Grow(info.array(k, lvl.starts_array), X.add(f.pos, 2))]
    n = dense_block(info, k) if nested else None
    if n is not None:
        vals, p = info.array(None, "vals"), Var(ctx.fresh("p"))
        lo = BinOp("*", f.pos, n)
        return [ir.Grow(vals, X.add(lo, n)),
                ir.For(p, lo, X.add(lo, n), [ir.Store(vals, p, Const(info.fill, info.dtype))])]
    # (named as the lattice strategy names levels: by number and name, the parent the one appended)
    parent = f"level {k - 1} ({info.levels[k - 1].name})" if k > 0 else "its root"
    raise StrategyError(f"output {info.name} ({info.format}): the looplet strategy cannot assemble level {k} "
                        f"({lvl.name}) under {parent}: it appends entries to a sparse level over the leaf, over "
                        f"Dense levels down to the leaf under a SparseList, or to SparseList levels under SparseList "
                        f"levels (DCSR, CSF)")


def keep_test(dirty, child: SubFiber, ctx) -> tuple:
    """``(stmts, cond)``: when an appended entry is kept (:func:`kept`); a block of Dense values
    is kept when one of its values is not the fill, as the entries of a SparseList are."""
    n = dense_block(child.tensor, child.level) if not child.is_leaf else None
    if n is None:
        return [], kept(dirty, child)
    info = child.tensor
    keep, p = Var(ctx.fresh("keep")), Var(ctx.fresh("p"))
    lo = BinOp("*", child.pos, n)
    scan = ir.For(p, lo, X.add(lo, n), [If(not_fill(info, Load(info.array(None, "vals"), p)),
                                            [Assign(keep, Const(True, "bool"))])])
    return [Declare(keep, "bool", Const(False, "bool")), If(dirty, [scan])], keep


def _under_dense(f: SubFiber, element_leaf: bool = False, under_appended: bool = False):
    info, k = f.tensor, f.level
    lvl = info.levels[k]
    # (``under_appended``: the level may also be appended under a SparseList, a fiber per entry above)
    nested = under_appended and all(l.located_by_coordinate or l.appends_nested for l in info.levels[:k])
    if (any(not l.located_by_coordinate for l in info.levels[:k]) and not nested) or \
            (element_leaf and (k != len(info.levels) - 1 or not isinstance(info.leaf, Element))):
        below = " and an Element leaf below it" if element_leaf else ""
        raise StrategyError(f"output {info.name}: a {lvl.name} output level needs Dense levels above it{below}, "
                            f"not {info.format}")
    return info, k


def unfurl_sparse_block_list_update(f: SubFiber, ctx, mode="update"):
    """SparseBlockList update (append in index order): an index written right after the last
    block's end extends that block; any other index starts a new block.

    ``nblk`` counts the blocks (``idx[b]`` is block ``b``'s end, ``ofs[b]`` its first
    value) and ``nnz`` the values; ``ofs[nblk]`` is kept at ``nnz``; the fiber's
    ``pos`` entry is set when it ends."""
    info, k = _under_dense(f, under_appended=True)
    ends, starts = f.lvl.appends_blocks
    pos_b, idx_b, ofs_b = info.array(k, f.lvl.starts_array), info.array(k, ends), info.array(k, starts)
    nnz, nblk = Var(info.array(k, "nnz")), Var(info.array(k, "nblk"))
    t = fiber_tag(info)
    b0 = Var(ctx.fresh(f"b{t}_start"))
    one = Const(1, "int64")

    def body(i):
        dirty = Var(ctx.fresh(f"dirty{t}"))
        child = child_fiber(f, nnz, dirty)
        pre = [Declare(dirty, "bool", Const(False, "bool"))] + assemble_stmts(child, ctx)
        extends = ir.and_(BinOp(">", nblk, b0), BinOp("==", Load(idx_b, X.sub(nblk, 1)), i))
        new_block = [ir.Grow(idx_b, X.add(nblk, 1)), ir.Grow(ofs_b, X.add(nblk, 2)),
                     ir.Store(idx_b, nblk, X.add(i, 1)), CompoundAssign("+", nblk, one)]
        epi = [If(kept(dirty, child), [If(extends, [ir.Store(idx_b, X.sub(nblk, 1), X.add(i, 1))], new_block),
                          CompoundAssign("+", nnz, one), ir.Store(ofs_b, nblk, nnz)]
                  + ([Assign(f.dirty, Const(True, "bool"))] if f.dirty is not None else []))]
        return Thunk(tuple(pre), child, tuple(epi), info)
    return Thunk((Declare(b0, "int64", nblk),), Lookup(body, f"i -> append {info.name}.lvl{k + 1}", info),
                 (ir.Store(pos_b, X.add(f.pos, 1), nblk),), info)


def unfurl_sparse_band_update(f: SubFiber, ctx, mode="update"):
    """SparseBand update (append in index order): the band runs from the first index written
    to the last; the indices between that were not written are stored as the fill.

    A written value lands in the next slot; when the index leaves a gap after the band's
    end (``idx`` of the fiber; 0 while the band is empty, as a band never ends at 0), the
    value moves up past the gap and the gap's slots get the fill. The band's end and
    ``ofs`` are kept in memory, so a second loop over the fiber goes on where the first
    stopped (concatenation)."""
    info, k = _under_dense(f, element_leaf=True, under_appended=True)
    ofs_b, idx_b, vals = info.array(k, f.lvl.starts_array), info.array(k, f.lvl.appends_band), info.array(None, "vals")
    nnz = Var(info.array(k, "nnz"))
    t = fiber_tag(info)
    one, zero, fill = Const(1, "int64"), Const(0, "int64"), Const(info.fill, info.dtype)

    def body(i):
        dirty, hi, gap, v, g = (Var(ctx.fresh(n)) for n in (f"dirty{t}", f"hi{t}", f"gap{t}", f"v{t}", f"g{t}"))
        child = child_fiber(f, nnz, dirty)
        pre = [Declare(dirty, "bool", Const(False, "bool"))] + assemble_stmts(child, ctx)
        move = [Declare(v, info.dtype, Load(vals, nnz)), ir.Grow(vals, X.add(X.add(nnz, gap), 1)),
                ir.For(g, 0, gap, [ir.Store(vals, X.add(nnz, g), fill)]),
                ir.Store(vals, X.add(nnz, gap), v), CompoundAssign("+", nnz, gap)]
        # (a write of the fill neither starts nor extends the band: the fills between written
        # values are stored as the band's, as Tensor.from_numpy stores them)
        epi = [If(kept(dirty, child), [Declare(hi, "int64", Load(idx_b, f.pos)),
                          Declare(gap, "int64", Select(BinOp(">", hi, zero), X.sub(i, hi), zero)),
                          If(BinOp(">", gap, zero), move),
                          CompoundAssign("+", nnz, one),
                          ir.Store(idx_b, f.pos, X.add(i, 1)), ir.Store(ofs_b, X.add(f.pos, 1), nnz)]
                  + ([Assign(f.dirty, Const(True, "bool"))] if f.dirty is not None else []))]
        return Thunk(tuple(pre), child, tuple(epi), info)
    return Lookup(body, f"i -> extend the band of {info.name}.lvl{k + 1}", info)


# --------------------------------------------------------------------------- SparseBand


def unfurl_sparse_band(f: SubFiber, ctx, mode):
    """SparseBand: fill, then the block by random access, then fill (the band is located)."""
    if mode != "read":
        return unfurl_sparse_band_update(f, ctx)
    info, k = f.tensor, f.level
    ofs_b, idx_b = info.array(k, f.lvl.starts_array), info.array(k, f.lvl.appends_band)
    t = fiber_tag(info)
    q0, hi, lo = (Var(ctx.fresh(n)) for n in (f"q{t}", f"hi{t}", f"lo{t}"))
    pre = (Declare(q0, "int64", Load(ofs_b, f.pos)),
           Declare(hi, "int64", Load(idx_b, f.pos)),
           Declare(lo, "int64", X.sub(hi, X.sub(Load(ofs_b, X.add(f.pos, 1)), q0))))
    fill = Fill(fill_value(info))
    look = Lookup(lambda i: child_fiber(f, X.add(X.sub(q0, lo), i)), f"i -> {info.name}.lvl{k + 1}[{q0} - {lo} + i]")
    return Thunk(pre, Sequence((Phase(lo, fill), Phase(hi, look), Phase(None, fill))))


# --------------------------------------------------------------------------- SparseBlockList


def unfurl_sparse_block_list(f: SubFiber, ctx, mode):
    """SparseBlockList: a Stepper over blocks, each fill then a located block, then fill."""
    if mode != "read":
        return unfurl_sparse_block_list_update(f, ctx)
    info, k = f.tensor, f.level
    ends, starts = f.lvl.appends_blocks
    pos_b, idx_b, ofs_b = info.array(k, f.lvl.starts_array), info.array(k, ends), info.array(k, starts)
    t = fiber_tag(info)
    r, r_stop, last, e, lo, q0 = (Var(ctx.fresh(n)) for n in
                                  (f"r{t}", f"r{t}_stop", f"last{t}", f"end{t}", f"lo{t}", f"q{t}"))
    pre = (Declare(r, "int64", Load(pos_b, f.pos)),
           Declare(r_stop, "int64", Load(pos_b, X.add(f.pos, 1))),
           Declare(last, "int64", Select(BinOp("<", r, r_stop), Load(idx_b, X.sub(r_stop, 1)), Const(0, "int64"))))
    fill = Fill(fill_value(info))
    look = Lookup(lambda i: child_fiber(f, X.add(X.sub(q0, lo), i)), f"i -> {info.name}.lvl{k + 1}[{q0} - {lo} + i]")
    stepper = Stepper(
        seek=lambda start: tuple(search_stmts(r, idx_b, r_stop, X.add(start, 1), ctx.fresh)),
        stop=e,
        chunk=Sequence((Phase(lo, fill), Phase(None, look))),
        next=(CompoundAssign("+", r, Const(1, "int64")),),
        preamble=(Declare(e, "int64", Load(idx_b, r)),
                  Declare(q0, "int64", Load(ofs_b, r)),
                  Declare(lo, "int64", X.sub(e, X.sub(Load(ofs_b, X.add(r, 1)), q0)))),
        descent=descent_over_ends(r, r_stop, idx_b))
    return Thunk(pre, Sequence((Phase(last, stepper), Phase(None, fill))))


# --------------------------------------------------------------------------- RunList


def unfurl_run_list(f: SubFiber, ctx, mode):
    """RunList: a Stepper over runs, each a Run of its child (the runs cover the fiber; a fiber
    of size 0 has none, so the seek looks at ``right`` only when there is a run)."""
    info, k = f.tensor, f.level
    pos_b, right_b = info.array(k, f.lvl.starts_array), info.array(k, f.lvl.run_end_array)
    t = fiber_tag(info)
    r, r_stop, e = (Var(ctx.fresh(n)) for n in (f"r{t}", f"r{t}_stop", f"right{t}"))
    if mode != "read":
        return unfurl_run_list_update(f, ctx)
    pre = (Declare(r, "int64", Load(pos_b, f.pos)), Declare(r_stop, "int64", Load(pos_b, X.add(f.pos, 1))))
    stepper = Stepper(
        seek=lambda start: (If(BinOp("<", r, r_stop), search_stmts(r, right_b, r_stop, X.add(start, 1), ctx.fresh)),),
        stop=e, chunk=Run(child_fiber(f, r)),
        next=(CompoundAssign("+", r, Const(1, "int64")),),
        preamble=(Declare(e, "int64", Load(right_b, r)),),
        descent=descent_over_ends(r, r_stop, right_b))
    return Thunk(pre, stepper)


def _run_output(f: SubFiber):
    """Check a run-length output level (Dense parents, an Element leaf below it)."""
    info, k = f.tensor, f.level
    lvl = info.levels[k]
    # (under Dense levels; one that stores only its runs also under appended levels, DCSR's rows)
    nested = not lvl.full and all(l.located_by_coordinate or l.appends_nested for l in info.levels[:k])
    if (any(not l.located_by_coordinate for l in info.levels[:k]) and not nested) or k != len(info.levels) - 1 \
            or not isinstance(info.leaf, Element):
        raise StrategyError(f"output {info.name}: a {lvl.name} output level needs Dense levels above it and an "
                            f"Element leaf below it, not {info.format}")
    return info, k, Var(info.array(k, "nnz")), info.array(None, "vals")


def _open_run(f: SubFiber, ctx, nnz, grow: str):
    """A fresh slot at ``nnz`` holding the fill, and the dirty flag its writes set."""
    dirty = Var(ctx.fresh(f"dirty{fiber_tag(f.tensor)}"))
    child = child_fiber(f, nnz, dirty)
    return [Declare(dirty, "bool", Const(False, "bool")), ir.Grow(grow, X.add(nnz, 1))] + assemble_stmts(child, ctx), \
        dirty, child


def unfurl_run_list_update(f: SubFiber, ctx, mode="update"):
    """RunList update: each region the loop lowers as a whole is one run (AcceptRun).

    ``cov`` is how far the fiber is covered; a region starting past it first gets a fill
    run, a run equal to the one before it extends it, and the fiber ends with a fill run
    up to its size. Fibers never entered get their one fill run when the tensor freezes.
    """
    info, k, nnz, vals = _run_output(f)
    pos_b, right_b = info.array(k, f.lvl.starts_array), info.array(k, f.lvl.run_end_array)
    t = fiber_tag(info)
    q0, cov = Var(ctx.fresh(f"q{t}_start")), Var(ctx.fresh(f"cov{t}"))
    fill = Const(info.fill, info.dtype)

    def close(end, same):
        """The run in the slot at ``nnz`` ends at ``end``: extend the previous one if ``same``."""
        extend = ir.and_(BinOp(">", nnz, q0), same)
        return [If(extend, [ir.Store(right_b, X.sub(nnz, 1), end)],
                   [ir.Store(right_b, nnz, end), CompoundAssign("+", nnz, Const(1, "int64"))]),
                Assign(cov, end)]

    def fill_up_to(end):
        return [ir.Grow(right_b, X.add(nnz, 1)), ir.Grow(vals, X.add(nnz, 1)), ir.Store(vals, nnz, fill)] + \
            close(end, is_fill(info, Load(vals, X.sub(nnz, 1))))

    def accept(start, stop):
        pre, dirty, child = _open_run(f, ctx, nnz, right_b)
        gap = [If(BinOp("<", cov, start), fill_up_to(start))]
        epi = [If(dirty, close(stop, cints.same_value_of(Load(vals, X.sub(nnz, 1)), Load(vals, nnz), info.dtype)))]
        return gap + pre, child, epi
    size = info.size(info.storage_mode(k))
    end = [If(BinOp("<", cov, size), fill_up_to(size)), ir.Store(pos_b, X.add(f.pos, 1), nnz)]
    return Thunk((Declare(q0, "int64", nnz), Declare(cov, "int64", Const(0, "int64"))),
                 AcceptRun(accept, f"append runs to {info.name}.lvl{k + 1}", info), tuple(end), info)


def run_arrays(f: SubFiber) -> tuple:
    """The kernel names of a run level's starts, runs' first coordinates and runs' ends, by the
    names the level gives them (a SparseRunList's ``pos``, ``left``, ``right``)."""
    lvl = f.lvl
    return tuple(f.tensor.array(f.level, n) for n in (lvl.starts_array, lvl.run_start_array, lvl.run_end_array))


def unfurl_sparse_run_list_update(f: SubFiber, ctx, mode="update"):
    """SparseRunList update: each region the loop lowers as a whole is one run (AcceptRun);
    a run of the fill is not stored, and a run that continues an equal one extends it."""
    info, k, nnz, vals = _run_output(f)
    pos_b, left_b, right_b = run_arrays(f)
    q0 = Var(ctx.fresh(f"q{fiber_tag(info)}_start"))

    def accept(start, stop):
        pre, dirty, child = _open_run(f, ctx, nnz, right_b)
        last = X.sub(nnz, 1)
        extend = ir.and_(ir.and_(BinOp(">", nnz, q0), BinOp("==", Load(right_b, last), start)),
                         cints.same_value_of(Load(vals, last), Load(vals, nnz), info.dtype))
        append = [ir.Grow(left_b, X.add(nnz, 1)), ir.Store(left_b, nnz, start), ir.Store(right_b, nnz, stop),
                  CompoundAssign("+", nnz, Const(1, "int64"))]
        keep = ir.and_(dirty, not_fill(info, Load(vals, nnz)))
        # (a run kept keeps the entry above, an appended level's)
        mark = [Assign(f.dirty, Const(True, "bool"))] if f.dirty is not None else []
        return pre, child, [If(keep, [If(extend, [ir.Store(right_b, last, stop)], append)] + mark)]
    return Thunk((Declare(q0, "int64", nnz),),
                 AcceptRun(accept, f"append runs to {info.name}.lvl{k + 1}", info),
                 (ir.Store(pos_b, X.add(f.pos, 1), nnz),), info)


# --------------------------------------------------------------------------- SparseRunList / SparseInterval


def unfurl_sparse_run_list(f: SubFiber, ctx, mode):
    """SparseRunList: a Stepper over runs, each fill then a Run of its child, then fill."""
    if mode != "read":
        return unfurl_sparse_run_list_update(f, ctx)
    info = f.tensor
    pos_b, left_b, right_b = run_arrays(f)
    t = fiber_tag(info)
    r, r_stop, last, lo, e = (Var(ctx.fresh(n)) for n in (f"r{t}", f"r{t}_stop", f"last{t}", f"left{t}", f"right{t}"))
    pre = (Declare(r, "int64", Load(pos_b, f.pos)), Declare(r_stop, "int64", Load(pos_b, X.add(f.pos, 1))),
           Declare(last, "int64", Select(BinOp("<", r, r_stop), Load(right_b, X.sub(r_stop, 1)), Const(0, "int64"))))
    fill = Fill(fill_value(info))
    stepper = Stepper(
        seek=lambda start: tuple(search_stmts(r, right_b, r_stop, X.add(start, 1), ctx.fresh)),
        stop=e, chunk=Sequence((Phase(lo, fill), Phase(None, Run(child_fiber(f, r))))),
        next=(CompoundAssign("+", r, Const(1, "int64")),),
        preamble=(Declare(lo, "int64", Load(left_b, r)), Declare(e, "int64", Load(right_b, r))),
        descent=descent_over_ends(r, r_stop, right_b))
    return Thunk(pre, Sequence((Phase(last, stepper), Phase(None, fill))))


def unfurl_sparse_interval(f: SubFiber, ctx, mode):
    """SparseInterval: fill, the interval as one Run of its child, fill (no stepping).

    Written like a SparseRunList (same arrays); a fiber given two runs fails the
    output's validation, which the runtime runs for this level."""
    if mode != "read":
        return unfurl_sparse_run_list_update(f, ctx)
    info = f.tensor
    pos_b, left_b, right_b = run_arrays(f)
    t = fiber_tag(info)
    r, lo, hi = (Var(ctx.fresh(n)) for n in (f"r{t}", f"left{t}", f"right{t}"))
    has = BinOp("<", r, Load(pos_b, X.add(f.pos, 1)))
    pre = (Declare(r, "int64", Load(pos_b, f.pos)),
           Declare(lo, "int64", Select(has, Load(left_b, r), Const(0, "int64"))),
           Declare(hi, "int64", Select(has, Load(right_b, r), Const(0, "int64"))))
    fill = Fill(fill_value(info))
    return Thunk(pre, Sequence((Phase(lo, fill), Phase(hi, Run(child_fiber(f, r))), Phase(None, fill))))


# --------------------------------------------------------------------------- SparsePoint


def unfurl_sparse_point(f: SubFiber, ctx, mode):
    """SparsePoint: fill, the one stored coordinate (a phase of length one), fill.

    Written like a SparseList (same arrays); a fiber written twice fails the output's
    validation, which the runtime runs for this level."""
    if mode != "read":
        return unfurl_sparse_list_update(f, ctx)
    info, k = f.tensor, f.level
    pos_b, idx_b = info.array(k, f.lvl.starts_array), info.array(k, f.lvl.crd_array)
    t = fiber_tag(info)
    q, lo, hi = (Var(ctx.fresh(n)) for n in (f"q{t}", f"j{t}", f"j{t}_stop"))
    has = BinOp("<", q, Load(pos_b, X.add(f.pos, 1)))
    pre = (Declare(q, "int64", Load(pos_b, f.pos)),
           Declare(lo, "int64", Select(has, Load(idx_b, q), Const(0, "int64"))),
           Declare(hi, "int64", Select(has, X.add(lo, 1), Const(0, "int64"))))
    fill = Fill(fill_value(info))
    return Thunk(pre, Sequence((Phase(lo, fill), Phase(hi, Run(child_fiber(f, q))), Phase(None, fill))))


# --------------------------------------------------------------------------- SparseByteMap


def unfurl_sparse_byte_map(f: SubFiber, ctx, mode):
    """SparseByteMap read: walk ``srt`` like a SparseList (children at ``p * size + i``);
    update: random access, a written coordinate marks ``tbl`` (the freeze lists them)."""
    info, k = f.tensor, f.level
    pos_b, srt_b, tbl_b = (info.array(k, n) for n in (f.lvl.starts_array, f.lvl.crd_array, f.lvl.mark_array))
    n = info.size(info.storage_mode(k))
    t = fiber_tag(info)
    base = Const(0, "int64") if isinstance(f.pos, Const) and f.pos.value == 0 else BinOp("*", f.pos, n)
    if mode == "update":
        if not all(lvl.slot_per_coordinate for lvl in info.levels):
            raise StrategyError(f"output {info.name}: a SparseByteMap output needs Dense or SparseByteMap "
                                f"levels around it, not {info.format}")

        temp = info.role == "temporary"
        nnz = Var(info.array(k, "nnz"))

        def body(i):
            dirty = Var(ctx.fresh(f"dirty{t}"))
            slot = X.add(base, i)
            mark = [ir.Store(tbl_b, slot, Const(True, "bool"))]
            if temp:  # a workspace lists the coordinates it marks (its declare resets only those)
                mark = [If(UnOp("!", Load(tbl_b, slot)),
                           mark + [ir.Store(srt_b, nnz, i), CompoundAssign("+", nnz, Const(1, "int64"))])]
            elif info.name in ctx.listed:   # (so its freeze sorts the slots written, not scans them all)
                mark = [If(UnOp("!", Load(tbl_b, slot)),
                           mark + [ir.Grow(srt_b, X.add(nnz, 1)), ir.Store(srt_b, nnz, slot),
                                   CompoundAssign("+", nnz, Const(1, "int64"))])]
            epi = [If(dirty, mark + ([Assign(f.dirty, Const(True, "bool"))] if f.dirty is not None else []))]
            return Thunk((Declare(dirty, "bool", Const(False, "bool")),), child_fiber(f, slot, dirty), tuple(epi))
        return Lookup(body, f"i -> mark {info.name}.lvl{k + 1}[{base} + i]", info)
    q, q_stop, last, j = (Var(ctx.fresh(n_)) for n_ in (f"q{t}", f"q{t}_stop", f"last{t}", f"j{t}"))
    pre = (Declare(q, "int64", Load(pos_b, f.pos)),
           Declare(q_stop, "int64", Load(pos_b, X.add(f.pos, 1))),
           declare_last(ctx, f, last, q, q_stop, srt_b))
    stepper = Stepper(
        seek=lambda start: tuple(search_stmts(q, srt_b, q_stop, start, ctx.fresh)),
        stop=X.add(j, 1),
        # the tail reads the coordinate from srt, not j: the single-stepper fast path skips preambles
        chunk=Spike(Fill(fill_value(info)), child_fiber(f, X.add(base, Load(srt_b, q)))),
        next=(CompoundAssign("+", q, Const(1, "int64")),),
        preamble=(Declare(j, "int64", Load(srt_b, q)),),
        positions=Positions(q, q_stop, last, lambda p: Load(srt_b, p),
                            lambda v, tgt: gallop_from(v, q, srt_b, q_stop, tgt, ctx.fresh)))
    return Thunk(pre, Sequence((Phase(last, stepper), Phase(None, Fill(fill_value(info))))))


# --------------------------------------------------------------------------- SparseCOO


def unfurl_sparse_coo(f: SubFiber, ctx, mode):
    """SparseCOO, one mode at a time: a Stepper over the distinct coordinates of this mode
    among the tuples ``[lo, hi)`` that share the modes before it (sorted lexicographically),
    each a Spike whose tail is the next mode's segment (or the child, after the last mode)."""
    if mode != "read":
        return unfurl_sparse_coo_update(f, ctx)
    info, k = f.tensor, f.level
    lvl = f.lvl
    m = 0 if f.seg is None else f.seg[0]
    pos_b, idx_b = info.array(k, f.lvl.starts_array), info.array(k, f.lvl.crd_of(m))
    t = fiber_tag(info)
    q, q_stop, last, j, nxt = (Var(ctx.fresh(n)) for n in (f"q{t}{m}", f"q{t}{m}_stop", f"last{t}{m}",
                                                              f"i{t}{m}", f"q{t}{m}_next"))
    lo, hi = (Load(pos_b, f.pos), Load(pos_b, X.add(f.pos, 1))) if f.seg is None else f.seg[1:]
    none = Const(0, "int64")   # (an absent fiber's tuples: none, read nowhere)
    pre = (Declare(q, "int64", when_present(f, lo, none)), Declare(q_stop, "int64", when_present(f, hi, none)),
           declare_last(ctx, f, last, q, q_stop, idx_b, m))
    if m + 1 < lvl.ndim:
        step_pre = (Declare(j, "int64", Load(idx_b, q)), Declare(nxt, "int64", X.add(q, 1)),
                    While(ir.and_(BinOp("<", nxt, q_stop), BinOp("==", Load(idx_b, nxt), j)),
                          [CompoundAssign("+", nxt, Const(1, "int64"))]))
        tail = SubFiber(info, k, f.pos, f.mode, f.dirty, (m + 1, q, nxt), f.present)
        advance = (Assign(q, nxt),)
        positions = None
        entries = Entries(q, q_stop, last)
    else:
        step_pre = (Declare(j, "int64", Load(idx_b, q)),)
        tail = child_fiber(f, q)
        advance = (CompoundAssign("+", q, Const(1, "int64")),)
        # the last mode's coordinates are distinct within the segment: one entry per position,
        # walked as a SparseList's (so a run of them may be copied as a block)
        positions = Positions(q, q_stop, last, lambda p: Load(idx_b, p),
                              lambda v, tgt: gallop_from(v, q, idx_b, q_stop, tgt, ctx.fresh))
        entries = None
    stepper = Stepper(
        seek=lambda start: tuple(search_stmts(q, idx_b, q_stop, start, ctx.fresh)),
        stop=X.add(j, 1), chunk=Spike(Fill(fill_value(info)), tail), next=advance, preamble=step_pre,
        positions=positions, state=q, entries=entries)
    return Thunk(pre, Sequence((Phase(last, stepper), Phase(None, Fill(fill_value(info))))))


def unfurl_sparse_coo_update(f: SubFiber, ctx, mode="update"):
    """SparseCOO update (append tuples in lexicographic order), one mode at a time: each mode
    but the last is random access that remembers its coordinate (in ``seg``); the last
    appends the tuple like a SparseList appends an index. The fiber's ``pos`` entry is set
    when the outermost mode's loop ends."""
    info, k = _under_dense(f)
    lvl = f.lvl
    m, coords = (0, ()) if f.seg is None else f.seg
    pos_b, nnz = info.array(k, lvl.starts_array), Var(info.array(k, "nnz"))
    t = fiber_tag(info)
    if m + 1 < lvl.ndim:
        look = Lookup(lambda i: SubFiber(info, k, f.pos, f.mode, f.dirty, (m + 1, coords + (i,))),
                      f"i -> {info.name}.lvl{k + 1} mode {m + 1}", info)
        if m > 0:
            return look
        return Thunk((), look, (ir.Store(pos_b, X.add(f.pos, 1), nnz),), info)

    def body(i):
        dirty = Var(ctx.fresh(f"dirty{t}"))
        child = child_fiber(f, nnz, dirty)
        pre = [Declare(dirty, "bool", Const(False, "bool"))]
        pre += [ir.Grow(info.array(k, lvl.crd_of(d)), X.add(nnz, 1)) for d in range(lvl.ndim)]
        pre += assemble_stmts(child, ctx)
        epi = [If(kept(dirty, child), [ir.Store(info.array(k, lvl.crd_of(d)), nnz, c)
                                        for d, c in enumerate((*coords, i))]
                  + [CompoundAssign("+", nnz, Const(1, "int64"))]
                  + ([Assign(f.dirty, Const(True, "bool"))] if f.dirty is not None else []))]
        return Thunk(tuple(pre), child, tuple(epi), info)
    look = Lookup(body, f"i -> append {info.name}.lvl{k + 1} tuples", info)
    if m > 0:
        return look
    return Thunk((), look, (ir.Store(pos_b, X.add(f.pos, 1), nnz),), info)


# --------------------------------------------------------------------------- SparseHash


def unfurl_sparse_hash(f: SubFiber, ctx, mode):
    """SparseHash read: walk the sorted view (a SparseList through ``ptr``); update:
    ``Lookup(i -> locate or insert (p * size + i), child at its position)``."""
    info, k = f.tensor, f.level
    if mode == "read":
        return unfurl_sparse_list(f, ctx, mode, lambda q: Load(info.array(k, f.lvl.child_array), q))
    lvl, leaf = info.levels[k], k == len(info.levels) - 1
    under_hash = k > 0 and (info.levels[k - 1].inserts_nested or info.levels[k - 1].appends_nested) \
        and lvl.inserts_nested
    if not (under_hash or all(p.located_by_coordinate for p in info.levels[:k])) or \
            not (leaf or (lvl.inserts_nested and info.levels[k + 1].inserts_nested)):
        raise StrategyError(f"output {info.name}: a {lvl.name} output level needs Dense levels, a SparseHash or a "
                            f"SparseList above it and a leaf or a SparseHash below it, not {info.format}")
    a = hash_names(info, k)
    nnz, cap = Var(a["nnz"]), Var(a["cap"])
    n = info.size(info.storage_mode(k))
    base = Const(0, "int64") if isinstance(f.pos, Const) and f.pos.value == 0 else BinOp("*", f.pos, n)
    t = fiber_tag(info)

    def body(i):
        key, slot, q, new = (Var(ctx.fresh(x)) for x in (f"key{t}", f"slot{t}", f"q{t}", f"new{t}"))
        pre = [Declare(key, "int64", X.add(base, i))]
        probe = probe_stmts(slot, a["keys"], a["table"], cap, key, ctx.fresh)
        pre += probe
        # a new key's value is written in the next slot, and the key is inserted after the write
        # only if the value is not the fill (a sparse output stores no fill, as Tensor.from_numpy)
        pre += [Declare(q, "int64", X.sub(Load(a["table"], slot), 1)),
                Declare(new, "bool", BinOp("<", q, Const(0, "int64"))),
                If(new, [Assign(q, nnz), *assemble_stmts(child_fiber(f, q), ctx)])]
        # a new key under a leaf is kept when its value is not the fill; over a hash, when the
        # hash below kept a key (the flag it sets), so no fiber is empty
        dirty = None if leaf else Var(ctx.fresh(f"dirty{t}"))
        keep = not_fill(info, Load(info.array(None, "vals"), q)) if leaf else dirty
        if dirty is not None:
            pre.append(Declare(dirty, "bool", Const(False, "bool")))
        # grow the table first if it would be more than half full (then probe again), so the
        # capacity is always table_capacity(nnz), which readers recompute
        epi = [If(ir.and_(new, keep), [
                   If(BinOp(">", BinOp("*", X.add(nnz, 1), Const(2, "int64")), cap),
                      rehash_stmts(info, k, ctx.fresh) + [Assign(slot, probe[0].init), probe[1]]),
                   ir.Store(a["table"], slot, X.add(q, 1)),
                   ir.Grow(a["keys"], X.add(q, 1)), ir.Store(a["keys"], q, key),
                   CompoundAssign("+", nnz, Const(1, "int64"))]
                  + ([Assign(f.dirty, Const(True, "bool"))] if f.dirty is not None and under_hash else []))]
        # (a leaf's writes mark no flag: its key is kept by its value)
        child = child_fiber(f, q, dirty) if dirty is not None else SubFiber(info, k + 1, q, f.mode)
        return Thunk(tuple(pre), child, tuple(epi))
    return Lookup(body, f"i -> locate or insert {info.name}.lvl{k + 1}[hash({base} + i)]", info)


def unfurl_sparse_hash_follow(f: SubFiber, ctx, mode):
    """SparseHash read, ``follow`` protocol (locate): each coordinate probes the table,
    ``Lookup(i -> Thunk(probe, Switch(found: child, else: fill)))`` (Figure 6c's shape)."""
    info, k = f.tensor, f.level
    a = hash_names(info, k)
    n = info.size(info.storage_mode(k))
    cap = Var(ctx.fresh(f"cap{fiber_tag(info)}"))
    base = Const(0, "int64") if isinstance(f.pos, Const) and f.pos.value == 0 else BinOp("*", f.pos, n)
    t = fiber_tag(info)

    def body(i):
        slot, q = Var(ctx.fresh(f"slot{t}")), Var(ctx.fresh(f"q{t}"))
        pre = probe_stmts(slot, a["keys"], a["table"], cap, X.add(base, i), ctx.fresh)
        pre.append(Declare(q, "int64", X.sub(Load(a["table"], slot), 1)))
        return Thunk(tuple(pre), Switch((Case(BinOp(">=", q, Const(0, "int64")), Run(child_fiber(f, q))),
                                         Case(Const(True, "bool"), Fill(fill_value(info))))))
    parents = Const(1, "int64")
    for m in range(info.storage_mode(k)):
        parents = X.mul(parents, info.size(m)) if hasattr(X, "mul") else BinOp("*", parents, info.size(m))
    # the capacity is table_capacity(nnz): the smallest power of two >= max(8, 2 nnz)
    pre = (Declare(cap, "int64", Const(8, "int64")),
           While(BinOp("<", cap, BinOp("*", Load(a["starts"], parents), Const(2, "int64"))),
                 [Assign(cap, BinOp("*", cap, Const(2, "int64")))]))
    return Thunk(pre, Lookup(body, f"i -> probe {info.name}.lvl{k} for {base} + i"))


def unfurl_sparse_byte_map_follow(f: SubFiber, ctx, mode):
    """SparseByteMap read, ``follow`` protocol: the byte table locates each coordinate,
    ``Lookup(i -> Switch(tbl[p * size + i]: child, else: fill))``."""
    info, k = f.tensor, f.level
    tbl_b = info.array(k, f.lvl.mark_array)
    n = info.size(info.storage_mode(k))
    base = Const(0, "int64") if isinstance(f.pos, Const) and f.pos.value == 0 else BinOp("*", f.pos, n)

    def body(i):
        slot = X.add(base, i)
        return Switch((Case(Load(tbl_b, slot), Run(child_fiber(f, slot))), Case(Const(True, "bool"), Fill(fill_value(info)))))
    return Lookup(body, f"i -> {info.name}.lvl{k + 1}[{base} + i] if marked")


#: level class -> unfurl(fiber, ctx, mode)
UNFURL: dict[type, Callable] = {
    Dense: unfurl_dense,
    SparseList: unfurl_sparse_list,
    SparseBand: unfurl_sparse_band,
    SparseBlockList: unfurl_sparse_block_list,
    RunList: unfurl_run_list,
    SparseRunList: unfurl_sparse_run_list,
    SparseInterval: unfurl_sparse_interval,
    SparsePoint: unfurl_sparse_point,
    SparseByteMap: unfurl_sparse_byte_map,
    SparseCOO: unfurl_sparse_coo,
    SparseHash: unfurl_sparse_hash,
}


#: level class -> unfurl for the ``gallop`` protocol (``A[i, gallop(j)]``)
GALLOP: dict[type, Callable] = {
    SparseList: unfurl_sparse_list_gallop,
    SparseHash: unfurl_sparse_hash_gallop,
    SparseByteMap: unfurl_sparse_byte_map_gallop,
    SparseRunList: unfurl_sparse_run_list_gallop,
    SparseBlockList: unfurl_sparse_block_list_gallop,
}
#: level class -> unfurl for the ``follow`` protocol (random access, ``A[i, follow(j)]``)
FOLLOW: dict[type, Callable] = {SparseHash: unfurl_sparse_hash_follow, Dense: unfurl_dense,
                                SparseList: unfurl_sparse_list_follow, SparseByteMap: unfurl_sparse_byte_map_follow,
                                SparseCOO: unfurl_sparse_coo_follow}
#: level class -> unfurl for the ``locate`` protocol: ``follow`` whose located entry is one case, its
#: value or the fill (a level without one follows); the lowering's own, for reads at bound coordinates
LOCATE: dict[type, Callable] = {SparseList: unfurl_sparse_list_locate}
#: level classes whose ``follow`` unfurl takes a fiber that may be absent (:attr:`SubFiber.present`: it
#: locates nothing there)
FOLLOW_ABSENT_OK = {SparseList, SparseCOO}


def locates(f: SubFiber) -> bool:
    """Whether fiber ``f``'s level locates one coordinate by a ``follow`` protocol of its own (a search,
    a probe), so a read at a bound coordinate is one lookup, not a walk over a window of length one
    (a level whose walk already locates, Dense, keeps it).

    >>> from compiler.format import csr, parse_format
    >>> from compiler.looplets.fibers import TensorInfo
    >>> A = TensorInfo.from_format("A", csr()).root()
    >>> locates(A), locates(child_fiber(A, Var("i")))
    (False, True)
    >>> locates(TensorInfo.from_format("R", parse_format("RunList(Element(0.0))")).root())
    False
    """
    if f.mode != "read" or f.is_leaf or f.present is not None and not (type(f.lvl) in FOLLOW_ABSENT_OK
                                                                       and can_be_absent(f)):
        return False
    follow = for_class(FOLLOW, type(f.lvl))
    return follow is not None and follow is not for_class(UNFURL, type(f.lvl))


def for_class(table: dict, cls: type):
    """The entry of ``table`` for level class ``cls`` or its nearest registered base (None if none):
    a subclass of a level inherits its parent's looplets until it registers its own.

    >>> class MyBand(SparseBand):
    ...     name = "MyBand"
    >>> for_class(UNFURL, MyBand) is UNFURL[SparseBand]
    True
    """
    return next((table[c] for c in cls.__mro__ if c in table), None)


def unfurl(f: SubFiber, ctx, mode: str | None = None, protocol: str | None = None):
    """The looplet nest of the outermost mode of sub-fiber ``f`` (``mode``: read or update;
    ``protocol``: None or ``walk`` for the level's default, ``gallop`` for a leading Jumper)."""
    mode = mode or f.mode
    lvl = f.lvl
    if f.present is not None and not (protocol in ("follow", "locate") and mode == "read"
                                      and type(lvl) in FOLLOW_ABSENT_OK):
        # (a fiber that may be absent is walked: its walk reads nothing then)
        if not can_be_absent(f):
            raise StrategyError(f"tensor {f.tensor.name}: level {f.level} ({lvl.name}) cannot be read where its "
                                f"fiber may be absent (a merged walk's child)")
        return for_class(UNFURL, type(lvl))(f, ctx, mode)
    if protocol in ("gallop", "follow", "locate") and mode == "read":
        table = GALLOP if protocol == "gallop" else FOLLOW
        fn = protocol == "locate" and for_class(LOCATE, type(lvl)) or for_class(table, type(lvl))
        if fn is None:
            raise StrategyError(f"tensor {f.tensor.name}: level {f.level} ({lvl.name}) has no {protocol} protocol; "
                                f"{protocol} works on {', '.join(c.__name__ for c in table)}")
        return fn(f, ctx, mode)
    fn = for_class(UNFURL, type(lvl))
    if fn is None:
        # a user's level class may share a built-in one's name (notebook 08 writes its own
        # SparsePoint): say which class is meant, or the list below seems to contradict the error
        twin = next((c for c in UNFURL if c.__name__ == type(lvl).__name__), None)
        which = (f"{lvl.name}, the class from {type(lvl).__module__}, not {twin.__module__}.{twin.__qualname__}"
                 if twin is not None else lvl.name)
        raise StrategyError(f"tensor {f.tensor.name}: level {f.level} ({which}) has no looplet unfurl "
                            f"in the looplet strategy (register one with compiler.looplets.levels."
                            f"register_unfurl); the strategy unfurls {', '.join(c.__name__ for c in UNFURL)}")
    if mode == "update":
        # (written by the nearest class whose unfurl writes: a subclass that registered a read-only
        # unfurl of its own, notebook 08's SparsePoint, is written as its parent stores it)
        owner = next((c for c in type(lvl).__mro__ if c in UPDATABLE and c in UNFURL), None)
        if owner is None:
            raise StrategyError(f"output {f.tensor.name}: level {f.level} ({lvl.name}) cannot be written by the "
                                f"looplet strategy; use one of {', '.join(c.__name__ for c in UPDATABLE)}")
        fn = UNFURL[owner]
    return fn(f, ctx, mode)


#: level classes that support update mode
UPDATABLE = {Dense, SparseList, SparseByteMap, SparseHash, RunList, SparseRunList, SparsePoint, SparseInterval,
             SparseBlockList, SparseBand, SparseCOO}


def register_unfurl(cls, fn, updatable=False, absent_ok=False):
    """Register the unfurl of a new level class (``updatable``: ``fn`` also writes it; an output of
    it then needs a writer too, :func:`compiler.looplets.level_writers.register_output`;
    ``absent_ok``: its read takes a fiber that may be absent, :attr:`SubFiber.present`)."""
    UNFURL[cls] = fn
    if updatable:
        UPDATABLE.add(cls)
    if absent_ok:
        ABSENT_OK.add(cls)
