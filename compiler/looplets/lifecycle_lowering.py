"""Lowering of a loop program's life-cycle statements (declare, freeze) to the imperative IR:
how each output level starts (its values at the fill, its tables empty) and how it is finished
(positions accumulated, hash and byte-map keys sorted, run lists closed), asked of the level's
capabilities, never of its name. :class:`LifecycleLowering` is the part of
:class:`~compiler.looplets.lowerers.Lowerer` that does it.

>>> value_text(np.float64(0.5)), value_text(3)
('0.5', '3')
"""

from __future__ import annotations

import numpy as np   # (for the doctests)

from ..imperative import ir
from ..imperative.ir import (Assign as IAssign, BinOp, CompoundAssign, Const, Declare, If, Load, Store, Var,
                             While)
from ..imperative.sorting import bit_sort_words, sort_coordinates_ir
from ..levels import Element, RunList, SparseBlockList, SparseHash
from . import extents as X
from .assembly import (Nested, declare_stmts as nested_declare, empty_table_stmts, freeze_stmts as nested_freeze,
                       nested_levels)
from .errors import ProgramError
from .levels import dense_block, not_fill
from .program import Declare as PDeclare, Freeze
from .simplify import same_value


def value_text(v) -> str:
    """A fill or value as a message shows it (a numpy scalar as its Python value)."""
    return str(v.item() if hasattr(v, "item") else v)


def product(terms):
    """The IR product of ``terms`` (1 for none)."""
    out = terms[0] if terms else Const(1, "int64")
    for t in terms[1:]:
        out = BinOp("*", out, t)
    return out


def _refuse_other_start(info, s, init) -> None:
    """Refuse declaring a sparse output (``s``) to ``init`` other than its fill, naming the line."""
    if isinstance(init, Const) and not (same_value(init.value, info.fill) or init.value == info.fill):
        raise ProgramError(f"{info.name} is {info.format.shorthand or info.format} with fill "
                           f"{value_text(info.fill)}: it starts at its fill, not at {value_text(init.value)}; "
                           f"give {info.name} the fill {value_text(init.value)} or a dense format", s.line)



class LifecycleLowering:
    """Declare and freeze statements of a loop program, for :class:`~compiler.looplets.lowerers.Lowerer`
    (which holds the tensors' infos, ``fresh`` and the trace this uses)."""

    def lower_declare(self, s: PDeclare) -> list:
        out = self._lower_declare(s)
        reset = s.tns.name in self.ctx.was_reset and not out[1:]
        self.record("lower:Declare", s, out, note=f"declare {s.tns.name}" + (
            " (its table clear and values at the fill: the runtime's, fresh or an earlier result's "
            "entries cleared; compiler.reused_outputs)" if reset else ""))
        return out

    def lower_freeze(self, s: Freeze) -> list:
        out = self._lower_freeze(s)
        self.record("lower:Freeze", s, out, note=f"freeze {s.tns.name}" + ("" if out else " (a no-op)"))
        return out

    def _lower_declare(self, s: PDeclare) -> list:
        info = self.tensors[s.tns.name]
        init, _ = self.expr(self.simplify(s.init), s.line)
        if not info.levels:
            return self.scalars.declare(info, s, init)
        from ..levels import Dense, SparseByteMap
        if info.role == "temporary" and isinstance(info.levels[0], SparseByteMap):
            return self._declare_workspace(info, s, init)
        if all(isinstance(l, (Dense, SparseByteMap)) for l in info.levels) and \
                any(isinstance(l, SparseByteMap) for l in info.levels):
            if s.implicit:
                return []  # the runtime pre-fills the values and clears the byte tables
            # (its freeze keeps only the slots written: the others read as the fill, not as init)
            _refuse_other_start(info, s, init)
            k = next(k for k, l in enumerate(info.levels) if isinstance(l, SparseByteMap))
            first, self.ctx.reset = info.name in self.ctx.reset, self.ctx.reset - {info.name}
            if first and isinstance(init, Const):
                # (the runtime starts it clear, as an output not declared: a fresh table, or an earlier
                # result's given back, whose entries alone it clears; compiler.reused_outputs; a later
                # declaration, in a loop, is the kernel's. The byte map is the last level, under Dense
                # ones or alone: compiler.looplets.reset_outputs)
                self.ctx.was_reset.add(info.name)
                self.ctx.listed.add(info.name)
                return [IAssign(Var(info.array(k, "nnz")), Const(0, "int64"))]
            n = product([info.size(m) for m in range(info.ndim)])
            p = Var(self.fresh("p"))
            out = [ir.For(p, 0, n, [Store(info.array(None, "vals"), p, init)])]
            nt = product([info.size(m) for m in range(info.storage_mode(k) + 1)])
            p2 = Var(self.fresh("p"))
            out += [ir.For(p2, 0, nt, [Store(info.array(k, "tbl"), p2, Const(False, "bool"))])]
            if k == len(info.levels) - 1 and isinstance(info.leaf, Element):
                # (its table is clear: the writes list the slots they mark, from none)
                self.ctx.listed.add(info.name)
                out.append(IAssign(Var(info.array(k, "nnz")), Const(0, "int64")))
            return out
        if all(isinstance(l, Dense) for l in info.levels):
            if s.implicit:
                return []  # the runtime pre-fills a dense output
            n = product([info.size(m) for m in range(info.ndim)])
            p = Var(self.fresh("p"))
            return [ir.For(p, 0, n, [Store(info.array(None, "vals"), p, init)])]
        # sparse output: counts restart; pos entries are written as fibers end
        if not s.implicit:
            # (an entry a sparse output appends starts at its fill, as in Finch: there is no other start)
            _refuse_other_start(info, s, init)
        k = next(k for k, l in enumerate(info.levels) if not isinstance(l, Dense))
        nested = nested_levels(info)
        below = nested_declare(info, nested, self.fresh) if nested else []
        if isinstance(info.levels[k], SparseHash):  # an empty table of the smallest capacity (each hash's)
            return empty_table_stmts(info, k, self.fresh) + below
        nnz = Var(info.array(k, "nnz"))
        if isinstance(info.levels[k], SparseBlockList):   # no blocks yet; ofs[0] = 0 starts the first
            ofs = info.array(k, "ofs")
            return [IAssign(nnz, Const(0, "int64")), IAssign(Var(info.array(k, "nblk")), Const(0, "int64")),
                    ir.Grow(ofs, Const(1, "int64")), Store(ofs, Const(0, "int64"), Const(0, "int64"))]
        return [IAssign(nnz, Const(0, "int64"))] + below

    def _lower_freeze(self, s: Freeze) -> list:
        info = self.tensors[s.tns.name]
        if not info.levels:
            return self.scalars.freeze(info)
        from ..levels import Dense, SparseByteMap
        k = next((k for k, l in enumerate(info.levels) if not isinstance(l, Dense)), None)
        if k is None:
            return []
        if isinstance(info.levels[k], SparseByteMap):
            if info.role == "temporary":
                return self._freeze_workspace(info)
            if info.name in self.ctx.listed:
                self.ctx.listed.discard(info.name)
                return self._freeze_listed_byte_map(info, k)
            return self._freeze_byte_map(info, k)
        nested = nested_levels(info) or Nested(k, (), None)
        hashes = []
        for kk in nested.hashed:
            # (a hash under a hash or a SparseList: one fiber per entry above, its sorted view's pos growing)
            fibers = Var(info.array(kk - 1, "nnz"))
            hashes += [ir.Grow(info.array(kk, "pos"), X.add(fibers, 1)), *self._freeze_hash(info, kk, fibers),
                       IAssign(Var(info.array(kk, "npos")), X.add(fibers, 1))]
        if isinstance(info.levels[k], SparseHash):
            return self._freeze_hash(info, k) + hashes
        # fibers never visited kept pos 0: carry the running count forward (a SparseBand's
        # running count is its ofs; an unvisited fiber keeps band end 0, an empty band)
        n = product([info.size(m) for m in range(info.storage_mode(k))])
        p = Var(self.fresh("p"))
        pos = info.array(k, info.levels[k].starts_array)
        carry = [ir.For(p, 0, n, [If(BinOp("<", Load(pos, X.add(p, 1)), Load(pos, p)),
                                     [Store(pos, X.add(p, 1), Load(pos, p))])])]
        if isinstance(info.levels[k], RunList):
            return carry + self._freeze_run_list(info, k, n)
        if isinstance(info.levels[k], SparseBlockList):   # ofs holds one more entry than there are blocks
            return carry + [IAssign(Var(info.array(k, "nofs")), X.add(Var(info.array(k, "nblk")), 1))]
        return carry + nested_freeze(info, nested) + hashes

    def _freeze_run_list(self, info, k, n) -> list:
        """A RunList fiber covers its whole extent: each fiber never written (a row a sieve
        skipped) gets one fill run, moving the runs after it up, from the last fiber down."""
        size = info.size(info.storage_mode(k))
        nnz = Var(info.array(k, "nnz"))
        pos, right, vals = info.array(k, "pos"), info.array(k, "right"), info.array(None, "vals")
        extra, w, p, lo, hi, q = (Var(self.fresh(x)) for x in ("extra", "w", "p", "lo", "hi", "q"))
        one, zero = Const(1, "int64"), Const(0, "int64")
        empty = lambda at: BinOp("==", Load(pos, X.add(at, 1)), Load(pos, at))  # noqa: E731
        move = [Declare(hi, "int64", Load(pos, X.add(p, 1))), Declare(lo, "int64", Load(pos, p)),
                Store(pos, X.add(p, 1), w),
                If(BinOp("==", hi, lo),
                   [CompoundAssign("-", w, one), Store(right, w, size),
                    Store(vals, w, Const(info.fill, info.dtype))],
                   [Declare(q, "int64", hi),
                    While(BinOp(">", q, lo), [CompoundAssign("-", q, one), CompoundAssign("-", w, one),
                                              Store(right, w, Load(right, q)), Store(vals, w, Load(vals, q))])])]
        insert = [ir.Grow(right, X.add(nnz, extra)), ir.Grow(vals, X.add(nnz, extra)),
                  Declare(w, "int64", X.add(nnz, extra)), Declare(p, "int64", n),
                  While(BinOp(">", p, zero), [CompoundAssign("-", p, one)] + move),
                  CompoundAssign("+", nnz, extra)]
        return [If(BinOp(">", size, zero), [
            Declare(extra, "int64", zero),
            ir.For(p, 0, n, [If(empty(p), [CompoundAssign("+", extra, one)])]),
            If(BinOp(">", extra, zero), insert)])]

    def _declare_workspace(self, info, s, init) -> list:
        """A SparseByteMap workspace re-assembles only its dirty locations (Finch §3.3.2)."""
        from .program import Literal as PLiteral
        if not (isinstance(s.init, PLiteral) and same_value(s.init.value, info.fill)):
            raise ProgramError(f"temporary {info.name} is a SparseByteMap workspace: declare it with its fill "
                               f"value ({info.fill}), e.g. {info.name}[...] = {info.fill}", s.line)
        nnz = Var(info.array(0, "nnz"))
        t = Var(self.fresh("t"))
        srt, tbl, vals = info.array(0, "srt"), info.array(0, "tbl"), info.array(None, "vals")
        return [ir.For(t, 0, nnz, [Store(tbl, Load(srt, t), Const(False, "bool")),
                                   Store(vals, Load(srt, t), init)]),
                IAssign(nnz, Const(0, "int64"))]

    def _freeze_workspace(self, info) -> list:
        """Sort the workspace's written coordinates (as the lattice strategy's workspaces do:
        :func:`~compiler.imperative.sorting.sort_coordinates_ir`), then set ``pos``."""
        nnz, n = Var(info.array(0, "nnz")), info.size(0)
        srt, tbl, pos, tmp, bits, summary = (info.array(0, x) for x in ("srt", "tbl", "pos", "tmp", "bits", "sum"))
        fresh = lambda base: Var(self.fresh(base))  # noqa: E731
        return sort_coordinates_ir(srt, tmp, nnz, n, tbl, fresh, "j", bits, summary) + [
            Store(pos, Const(0, "int64"), Const(0, "int64")), Store(pos, Const(1, "int64"), nnz)]

    def _freeze_hash(self, info, k, fibers=None) -> list:
        """Sort the inserted keys into ``pos``/``idx``/``ptr`` in linear time: a counting sort
        by coordinate, then a stable one by fiber (LSD radix sort over (fiber, coordinate));
        ``fibers``: how many (the parent's positions; by default the Dense levels' above)."""
        n = fibers if fibers is not None else product([info.size(m) for m in range(info.storage_mode(k))])
        size = info.size(info.storage_mode(k))
        nnz = Var(info.array(k, "nnz"))
        key, pos, idx, ptr = (info.array(k, x) for x in ("key", "pos", "idx", "ptr"))
        cnt, order, cur = (self.fresh(x) for x in ("cnt", "order", "cur"))
        q, r, c, p, t, acc, e = (Var(self.fresh(x)) for x in ("q", "r", "c", "p", "t", "acc", "e"))
        one = Const(1, "int64")
        coord = lambda kk: BinOp("%", kk, size)  # noqa: E731
        fiber = lambda kk: BinOp("/", kk, size)  # noqa: E731
        by_coord = [
            ir.For(q, 0, nnz, [Store(cnt, X.add(coord(Load(key, q)), 1), one, "+")]),
            ir.For(c, 0, size, [Store(cnt, X.add(c, 1), Load(cnt, c), "+")]),
            ir.For(q, 0, nnz, [Declare(e, "int64", coord(Load(key, q))),
                               Store(order, Load(cnt, e), q), Store(cnt, e, one, "+")]),
        ]
        by_fiber = [
            ir.For(p, 0, X.add(n, 1), [Store(pos, p, Const(0, "int64"))]),  # counts start at zero
            ir.For(q, 0, nnz, [Store(pos, X.add(fiber(Load(key, q)), 1), one, "+")]),
            ir.For(p, 0, n, [Store(pos, X.add(p, 1), Load(pos, p), "+"), Store(cur, p, Load(pos, p))]),
            ir.Grow(idx, nnz), ir.Grow(ptr, nnz),
            ir.For(r, 0, nnz, [Declare(t, "int64", Load(order, r)),
                               Declare(acc, "int64", Load(cur, fiber(Load(key, t)))),
                               Store(idx, acc, coord(Load(key, t))), Store(ptr, acc, t),
                               Store(cur, fiber(Load(key, t)), one, "+")]),
        ]
        return [ir.Allocate(cnt, "int64", X.add(size, 1), Const(0, "int64"), [
            ir.Allocate(order, "int64", nnz, None, by_coord + [
                ir.Allocate(cur, "int64", n, None, by_fiber)])])]

    def _freeze_listed_byte_map(self, info, k) -> list:
        """Sort the slots a declared byte map (its last level) listed as it marked them, keep those not
        written the fill, and give each fiber its coordinates and ``pos``: the cost of its entries,
        not of its slots (a BFS frontier of a few vertices among many), as Finch's freeze sorts its
        ``srt``. The sort (:func:`~compiler.imperative.sorting.sort_coordinates_ir`) scans the table
        instead when the slots listed are many."""
        fibers = product([info.size(m) for m in range(info.storage_mode(k))])
        size = info.size(info.storage_mode(k))
        one_fiber = isinstance(fibers, Const) and fibers.value == 1
        slots = size if one_fiber else BinOp("*", fibers, size)
        nnz = Var(info.array(k, "nnz"))
        tbl, srt, pos = (info.array(k, x) for x in ("tbl", "srt", "pos"))
        vals = info.array(None, "vals")
        tmp, words, summary = self.fresh("tmp"), self.fresh("words"), self.fresh("summary")
        fresh = lambda base: Var(self.fresh(base))  # noqa: E731
        nwords, nsummary = bit_sort_words(slots)
        one, zero = Const(1, "int64"), Const(0, "int64")
        sort = [ir.Allocate(words, "int64", nwords, zero, [
            ir.Allocate(summary, "int64", nsummary, zero, [
                ir.Allocate(tmp, "int64", X.add(nnz, 1), None,
                            sort_coordinates_ir(srt, tmp, nnz, slots, tbl, fresh, "j", words, summary))])])]
        # (a slot written its fill is no entry, as a SparseList output keeps none: unmarked)
        t, w, s = Var(self.fresh("t")), Var(self.fresh("kept")), Var(self.fresh("slot"))
        keep = [Declare(w, "int64", zero),
                ir.For(t, 0, nnz, [Declare(s, "int64", Load(srt, t)),
                                   If(not_fill(info, Load(vals, s)), [Store(srt, w, s), CompoundAssign("+", w, one)],
                                      [Store(tbl, s, Const(False, "bool"))])]),
                IAssign(nnz, w)]
        if one_fiber:   # its slots are its coordinates
            return [ir.Grow(srt, X.add(nnz, 1))] + sort + keep + [Store(pos, one, nnz)]
        # the slots of fiber f are f * size + i: pos[f] is where its first is, srt keeps the i
        p, f = Var(self.fresh("p")), Var(self.fresh("f"))
        split = [Declare(p, "int64", zero),
                 ir.For(t, 0, nnz, [Declare(s, "int64", Load(srt, t)), Declare(f, "int64", BinOp("/", s, size)),
                                    While(BinOp("<", p, f), [Store(pos, X.add(p, 1), t), CompoundAssign("+", p, one)]),
                                    Store(srt, t, BinOp("-", s, BinOp("*", f, size)))]),
                 While(BinOp("<", p, fibers), [Store(pos, X.add(p, 1), nnz), CompoundAssign("+", p, one)])]
        return [ir.Grow(srt, X.add(nnz, 1))] + sort + keep + split

    def _freeze_byte_map(self, info, k) -> list:
        """List the marked coordinates of each fiber in ``srt``, in order, and set ``pos``."""
        n = product([info.size(m) for m in range(info.storage_mode(k))])
        size = info.size(info.storage_mode(k))
        nnz = Var(info.array(k, "nnz"))
        tbl, srt, pos = (info.array(k, x) for x in ("tbl", "srt", "pos"))
        p, j = Var(self.fresh("p")), Var(self.fresh("j"))
        slot = X.add(BinOp("*", p, size), j)
        listed = [ir.Grow(srt, X.add(nnz, 1)), Store(srt, nnz, j), CompoundAssign("+", nnz, Const(1, "int64"))]
        block = dense_block(info, k + 1)
        if k == len(info.levels) - 1 and isinstance(info.leaf, Element):
            # a slot written its fill is no entry (as a SparseList output keeps none): unmarked
            listed = [If(not_fill(info, Load(info.array(None, "vals"), slot)), listed,
                         [Store(tbl, slot, Const(False, "bool"))])]
        elif block is not None:   # (likewise a slot whose block of Dense values is all the fill)
            keep, r = Var(self.fresh("keep")), Var(self.fresh("r"))
            lo = BinOp("*", slot, block)
            listed = [Declare(keep, "bool", Const(False, "bool")),
                      ir.For(r, lo, X.add(lo, block), [If(not_fill(info, Load(info.array(None, "vals"), r)),
                                                          [IAssign(keep, Const(True, "bool"))])]),
                      If(keep, listed, [Store(tbl, slot, Const(False, "bool"))])]
        return [IAssign(nnz, Const(0, "int64")),
                ir.For(p, 0, n, [
                    ir.For(j, 0, size, [If(Load(tbl, slot), listed)]),
                    Store(pos, X.add(p, 1), nnz)])]

