"""Emission, output assembly of levels that store ranges of coordinates: bands and blocks.

A mixin of :class:`~compiler.lattice.emitter.Emitter`, beside
:class:`~compiler.lattice.emit_output.OutputAssembly`. The innermost level of a sparse output
that stores one band per fiber (``appends_band``: SparseBand) or blocks of consecutive
coordinates (``appends_blocks``: SparseBlockList) is appended in storage order as a SparseList
is, the values one per stored coordinate:

- a band fills the gap between an entry and the one before it with the fill, so the band runs
  from the fiber's first entry to its last (``ofs`` counted per fiber, ``idx`` its end);
- a block list extends its last block with an entry that follows it, and starts a new block
  (``idx`` its end, ``ofs`` its first value) at a gap (``pos`` counts blocks per fiber).

That is the storage ``Tensor.from_numpy`` builds for the same values: an entry equal to the fill
is not appended, so a band starts and ends at a value other than the fill, and a block holds none.

It also holds what such a level shares with a SparseHash or SparseByteMap appended under a
SparseList or a SparseHash: where its fibers start (``pos``, grown as the parent appends), the
slot ``parent * size + i`` of an entry (the parent's position is its counter while the fiber is
appended), a hash's own key kept as it appends above another level, and a byte map's block of
slots per fiber.

Example: a band row of ``C[i, j] = A[i, j]`` (``Dense(SparseBand(Element(0.0)))``) appends::

    if (vC != 0.0) {
        if (pC1 == pC1_begin) C1_lo = j;                 // the band starts at the row's first entry
        int64_t C1_at = pC1_begin + (j - C1_lo);
        grow C_val to C1_at + 1; for (q = pC1; q < C1_at; q++) C_val[q] = 0.0;   // the gap
        C_val[C1_at] = vC; pC1 = C1_at + 1;
    }

and after the row stores ``C1_ofs[i + 1] = pC1 - pC1_begin`` and, if the row has entries,
``C1_idx[i] = C1_lo + (pC1 - pC1_begin)`` (the band's end, half-open).
"""

from __future__ import annotations

import numpy as np

from .. import binding
from ..errors import StrategyError
from ..imperative.ir import (Assign, BinOp, Buffer, CompoundAssign, Const, Declare, For, Grow, Growable, If,
                             OutScalar, Store, Var)
from .exprs import cast, const_of, not_fill
from .output_level import OutputLevel


class RangeAssembly:
    """The parameters, appends and fiber ends of band and block output levels (a mixin of the emitter)."""

    def ranged_level(self, info: OutputLevel, lvl, above: bool = False):
        """The parameters of an innermost band or block level ``info`` of the output:
        its entries counted by ``counter`` (the values' length), its fibers' ``starts`` (a
        buffer under levels located by coordinate, else grown as its parent appends); ``above`` a
        level appended as a SparseList, ``counter`` counts that level's fibers, one per position
        (:meth:`range_keep_fiber`)."""
        k, out = info.k, self.setup.output.tensor
        idt = np.dtype(lvl.index_dtype).name
        info.index_type, info.ranged = idt, "band" if lvl.appends_band is not None else "blocks"
        info.appended = []   # (no array grows by one index per entry: room is made as it is appended)
        info.counter = self.name(("count", k), f"p{out}{k}")
        self.out_params.append(OutScalar(info.counter, "int64", 0))
        self.fiber_starts(info, binding.array_name(out, k, lvl.starts_array))
        if info.ranged == "band":
            info.ends = binding.array_name(out, k, lvl.appends_band)
            info.band_lo = self.name(("band", k), f"{out}{k}_lo")
            if info.starts_buffer:
                self.out_params.append(Buffer(info.ends, idt, "inout"))
            elif info.slotted is not None:   # (one band end per slot of the parent, 0 where its fiber is empty)
                q = Var(self.name(("slotted", "ends", k), "q"))
                self.out_params.append(Growable(info.ends, idt, info.slotted))
                self.init += [Grow(info.ends, Var(info.slotted)),
                              For(q, 0, Var(info.slotted), [Store(info.ends, q, Const(0, idt))])]
            else:   # (one band end per entry of the parent, appended as it is)
                parent = self.name(("count", k - 1), f"p{out}{k - 1}")
                self.out_params.append(Growable(info.ends, idt, parent))
            self.notes.append(f"{out}'s level {k} ({lvl.name}) is appended in storage order, the coordinates between "
                              f"a fiber's entries holding the fill, so its band runs from the fiber's first entry to "
                              f"its last" if not above else
                              f"{out}'s level {k} ({lvl.name}) is appended in storage order, a fiber of level {k + 1} "
                              f"at each position, the coordinates between kept ones holding empty fibers, so its "
                              f"band runs from the first coordinate whose fiber got entries to the last")
        else:
            ends, starts = lvl.appends_blocks
            info.ends, info.block_starts = binding.array_name(out, k, ends), binding.array_name(out, k, starts)
            info.blocks = self.name(("blocks", k), f"{out}{k}_blocks")
            info.next_block = self.name(("next", k), f"{out}{k}_next")
            info.block_starts_len = self.name(("startslen", k), f"{info.block_starts}_len")
            self.out_params += [OutScalar(info.blocks, "int64", 0), Growable(info.ends, idt, info.blocks),
                                OutScalar(info.block_starts_len, "int64", 0),
                                Growable(info.block_starts, idt, info.block_starts_len)]
            self.notes.append(f"{out}'s level {k} ({lvl.name}) is appended in storage order, an entry after the "
                              f"last one's coordinate extending its block and a gap starting a new block" if not above
                              else f"{out}'s level {k} ({lvl.name}) is appended in storage order, a fiber of level "
                              f"{k + 1} at each position, a coordinate whose fiber got entries after the last kept "
                              f"one extending its block and a gap starting a new block")
        if k == 0:   # (the output's one fiber: no loop around opens it)
            self.init += self.fiber_start(info)

    def fiber_starts(self, info: OutputLevel, name: str):
        """The array ``name`` of where each fiber of the innermost output level ``info`` starts
        (``starts``): a buffer the call allocates under levels located by coordinate (counts, summed
        after the loops), else grown as the parent appends (each end stored as the parent keeps
        an entry)."""
        k, idt = info.k, info.index_type
        info.starts = name
        info.starts_buffer = all(above.located_by_coordinate for above in self.out_levels[:k])
        parent = self.levels_info[-1] if k else None
        if parent is not None and parent.slots is not None:
            # (under a level that marks its slots, counted up front: a fiber per slot, its length
            # stored as the fiber ends and summed after the loops)
            slots = Var(parent.slots)
            q = Var(self.name(("slotted", k), "q"))
            info.slotted, info.starts_len = parent.slots, self.name(("poslen", k), f"{name}_len")
            self.out_params += [OutScalar(info.starts_len, "int64", 1), Growable(name, idt, info.starts_len)]
            self.init += [Assign(Var(info.starts_len), BinOp("+", slots, Const(1, "int64"))),
                          Grow(name, Var(info.starts_len)),
                          For(q, 0, Var(info.starts_len), [Store(name, q, Const(0, idt))])]
        elif info.starts_buffer:
            self.out_params.append(Buffer(name, idt, "inout"))
        else:
            info.starts_len = self.name(("poslen", k), f"{name}_len")
            self.out_params += [OutScalar(info.starts_len, "int64", 1), Growable(name, idt, info.starts_len)]
            self.init += [Grow(name, Const(1, "int64")), Store(name, 0, Const(0, idt))]

    def entry_slot(self, info: OutputLevel):
        """The slot ``parent * size + i`` of the entry being appended at the innermost output level
        ``info``: its parent's position is located from Dense levels, or is the position the
        appended parent gets if it keeps its entry (its counter)."""
        if info.starts_buffer or info.slotted is not None or self.setup.parallel is not None:
            # (a fiber per slot, or on threads every row an entry of the outermost level until the
            # compaction: the parent's position is located)
            return self.dense_position(info.mode)
        parent = self.row_position(info) if info.row_parent is not None else \
            Var(next(x for x in self.levels_info if x.k == info.k - 1).counter)   # (a row of Dense slots above: its slot)
        size = Var(self.out_sizes[info.mode].name)
        return BinOp("+", BinOp("*", parent, size), Var(self.out_path[info.mode].name))

    def keep_key(self, info: OutputLevel) -> list:
        """A level that keeps its keys (SparseHash) keeps the entry it appends at its counter above
        a fiber that got entries: its own child (``ptr``) and its key ``parent * size + i``."""
        counter = Var(info.counter)
        (ptr, pdt), (key, _) = info.keyed
        grow = [Grow(name, BinOp("+", counter, Const(1, "int64"))) for name in (ptr, key)]
        return grow + [Store(ptr, counter, cast(counter, "int64", pdt)), Store(key, counter, self.entry_slot(info))]

    def slot_blocks(self, info: OutputLevel):
        """A level that marks its slots (SparseByteMap) under an appended level: its slots grow a
        block of ``size`` at a time, one per fiber (:meth:`fiber_start`), and number ``size`` per
        entry its parent keeps."""
        out, k = self.setup.output.tensor, info.k
        info.prepared = self.name(("slots", "prepared", k), f"{out}{k}_filled")
        self.init.append(Declare(Var(info.prepared), "int64", Const(0, "int64")))
        if info.row_parent is not None:   # (a fiber per slot of the rows above: the slots of every fiber, after)
            slots = BinOp("*", self.row_fiber_count(info), Var(self.out_sizes[info.mode].name))
            self.final += [Assign(Var(info.slots), slots), self.prepare_slots(info, Var(info.slots))]
        else:
            parent = Var(next(x for x in self.levels_info if x.k == k - 1).counter)
            self.final.append(Assign(Var(info.slots), BinOp("*", parent, Var(self.out_sizes[info.mode].name))))
        self.notes.append(f"{out}'s level {k} ({info.level.name}) gets a block of slots per fiber of its appended "
                          f"parent, unmarked and at the fill, as the fiber starts")

    def fiber_start(self, info: OutputLevel) -> list:
        """Where a fiber of the innermost output level starts: a band's first coordinate (set by its
        first entry), the coordinate that would extend a block list's last block (none yet), or the
        block of slots of a level that marks them under an appended level, at the parent's next
        position, unmarked and at the fill (prepared once: a fiber not kept marked none)."""
        if info.ranged == "band":
            return [Declare(Var(info.band_lo), "int64", Const(0, "int64"))]
        if info.ranged == "blocks":
            return [Declare(Var(info.next_block), "int64", Const(-1, "int64"))]
        if info.runs is not None:   # (runs under an appended level: the fiber has no run yet)
            return [Assign(Var(info.runs.end), Const(0, "int64"))]
        if info.prepared is None:
            return []
        if info.row_parent is not None:   # (a fiber in a row of Dense slots: those before it may be unvisited)
            base = BinOp("*", self.row_position(info), Var(self.out_sizes[info.mode].name))
            return [self.prepare_slots(info, BinOp("+", base, Var(self.out_sizes[info.mode].name)))]
        s = self.setup
        parent = Var(next(x for x in self.levels_info if x.k == info.k - 1).counter)
        base = BinOp("*", parent, Var(self.out_sizes[info.mode].name))
        end = BinOp("+", base, Var(self.out_sizes[info.mode].name))
        prepared, q = Var(info.prepared), Var(self.name(("slots", "q"), "q"))
        fill = const_of(s.out_fill_value, s.out_dtype)
        if self.block is None:
            return [If(BinOp("==", prepared, base), [
                Grow(info.marks, end), Grow(self.val, end),
                For(q, base, end, [Store(info.marks, q, Const(False, "bool")), Store(self.val, q, fill)]),
                Assign(prepared, end)])]
        # (each slot a block of the Dense slots below it: :mod:`.emit_blocks`)
        size = self.block_size()
        return [If(BinOp("==", prepared, base), [
            Grow(info.marks, end), Grow(self.val, BinOp("*", end, size)),
            For(q, base, end, [Store(info.marks, q, Const(False, "bool"))]),
            For(q, BinOp("*", base, size), BinOp("*", end, size), [Store(self.val, q, fill)]),
            Assign(prepared, end)])]

    def prepare_slots(self, info: OutputLevel, end) -> If:
        """The slots of the level that marks them ``info`` up to ``end``, unmarked and at the fill, past
        those prepared so far (a slot before them not marked is at the fill already)."""
        prepared, q = Var(info.prepared), Var(self.name(("slots", "q"), "q"))
        fill = const_of(self.setup.out_fill_value, self.setup.out_dtype)
        return If(BinOp("<", prepared, end), [
            Grow(info.marks, end), Grow(self.val, end),
            For(q, prepared, end, [Store(info.marks, q, Const(False, "bool")), Store(self.val, q, fill)]),
            Assign(prepared, end)])

    def range_counted(self, info: OutputLevel) -> str:
        """What a fiber's start in ``starts`` counts: values (a band's) or blocks."""
        return info.counter if info.ranged == "band" else info.blocks

    def range_fiber_end(self, info: OutputLevel, begin, at) -> list:
        """After a fiber that got entries (its values from ``begin``), at parent position ``at``:
        a band's end (its first coordinate plus its length)."""
        if info.ranged != "band":
            return []
        n = BinOp("-", Var(info.counter), begin)
        end = cast(BinOp("+", Var(info.band_lo), n), "int64", info.index_type)
        grow = [] if info.starts_buffer or info.slotted is not None else [Grow(info.ends, BinOp("+", at, Const(1, "int64")))]
        return grow + [Store(info.ends, at, end)]

    def range_final(self, info: OutputLevel) -> list:
        """After the loops: the output's one fiber ends (a vector), and a block list's starts
        get the end of its last block."""
        out = []
        if info.k == 0:
            counter = Var(info.counter)
            out.append(Store(info.starts, 1, cast(Var(self.range_counted(info)), "int64", info.index_type)))
            if info.ranged == "band":
                out.append(If(BinOp(">", counter, Const(0, "int64")),
                              self.range_fiber_end(info, Const(0, "int64"), Const(0, "int64"))))
        if info.ranged == "blocks":
            blocks, length = Var(info.blocks), Var(info.block_starts_len)
            out += [Assign(length, BinOp("+", blocks, Const(1, "int64"))), Grow(info.block_starts, length),
                    Store(info.block_starts, blocks, cast(Var(info.counter), "int64", info.index_type))]
        return out

    def range_append(self, info: OutputLevel, val, coord) -> list:
        """Append the value ``val`` (a variable of the output's dtype) at coordinate ``coord`` of a
        band or block level, unless it is the fill."""
        s = self.setup
        if self.phase is not None or self.par_rows:
            raise StrategyError(f"output {s.output.tensor}: a {info.level.name} level is assembled in one pass")
        odt = s.out_dtype
        counter, i = Var(info.counter), Var(coord.name)
        one = Const(1, "int64")
        if info.ranged == "band":
            begin = Var(self.name(("begin", info.k), f"{info.counter}_begin")) if info.k else Const(0, "int64")
            lo, at = Var(info.band_lo), Var(self.name(("band", "at"), f"{s.output.tensor}{info.k}_at"))
            q = Var(self.name(("band", "q"), "q"))
            fill = const_of(s.out_fill_value, odt)
            body = [If(BinOp("==", counter, begin), [Assign(lo, i)]),
                    Declare(at, "int64", BinOp("+", begin, BinOp("-", i, lo))),
                    Grow(self.val, BinOp("+", at, one)),
                    For(q, counter, at, [Store(self.val, q, fill)]),   # (the gap, inside the band)
                    Store(self.val, at, val), Assign(counter, BinOp("+", at, one))]
        else:
            body = self.block_list_keep(info, i) + [Grow(self.val, BinOp("+", counter, one)),
                                                    Store(self.val, counter, val), CompoundAssign("+", counter, one)]
        return [If(not_fill(val, odt, s.out_fill), body)]

    def range_keep_fiber(self, info: OutputLevel, below: OutputLevel, begin, index) -> list:
        """A band or block level ``info`` above a level appended as a SparseList (``below``, its
        fiber started at ``begin``) keeps the coordinate ``index`` whose fiber below got entries: a
        band at its position ``begin + (i - lo)`` from its fiber's first kept coordinate ``lo``,
        the positions of the gap before it empty fibers; a block list at its next position,
        extending its last block or starting one. That position's fiber ends where ``below``'s
        counter is.

        Example (``SparseBand(SparseList(Element(0.0)))``), after row ``i`` if it got entries::

            if (pC0 == 0) C0_lo = i;
            int64_t C0_at = i - C0_lo;
            grow C1_pos to C0_at + 2;
            for (q = pC0; q < C0_at; q++) C1_pos[q + 1] = pC1_begin;   // the gap's rows: empty fibers
            pC0 = C0_at + 1; C1_pos[pC0] = pC1; C1_pos_len = pC0 + 1;
        """
        counter, i, pos, idt = Var(info.counter), Var(index.name), below.starts, below.index_type
        one = Const(1, "int64")
        if info.ranged == "band":
            start, lo = self.band_begin(info), Var(info.band_lo)
            at = Var(self.name(("band", "at"), f"{self.setup.output.tensor}{info.k}_at"))
            q = Var(self.name(("band", "q"), "q"))
            offset = BinOp("-", i, lo)
            keep = [If(BinOp("==", counter, start), [Assign(lo, i)]),
                    Declare(at, "int64", offset if isinstance(start, Const) else BinOp("+", start, offset)),
                    Grow(pos, BinOp("+", at, Const(2, "int64"))),
                    For(q, counter, at, [Store(pos, BinOp("+", q, one), cast(begin, "int64", idt))]),
                    Assign(counter, BinOp("+", at, one))]
        else:
            keep = self.block_list_keep(info, i) + [CompoundAssign("+", counter, one),
                                                    Grow(pos, BinOp("+", counter, one))]
        return keep + [Store(pos, counter, cast(Var(below.counter), "int64", idt)),
                       Assign(Var(below.starts_len), BinOp("+", counter, one))]

    def block_list_keep(self, info: OutputLevel, i) -> list:
        """A block list level keeps coordinate ``i`` at its next position: it extends the last
        block when ``i`` follows it, else starts a block there."""
        blocks, nxt, counter = Var(info.blocks), Var(info.next_block), Var(info.counter)
        one = Const(1, "int64")
        return [If(BinOp("!=", i, nxt), [Grow(info.ends, BinOp("+", blocks, one)),
                                          Grow(info.block_starts, BinOp("+", blocks, one)),
                                          Store(info.block_starts, blocks, cast(counter, "int64", info.index_type)),
                                          CompoundAssign("+", blocks, one)]),
                Assign(nxt, BinOp("+", i, one)),
                Store(info.ends, BinOp("-", blocks, one), cast(nxt, "int64", info.index_type))]


__all__ = ["RangeAssembly"]
