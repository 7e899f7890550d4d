"""Emission, output assembly of Dense levels under a sparse one: a block of slots per position.

A mixin of :class:`~compiler.lattice.emitter.Emitter`, beside
:class:`~compiler.lattice.emit_output.OutputAssembly`. The Dense levels under the last sparse
level of an output (TACO's ``{sparse, dense}``: they declare ``locates_under_appended``) are
located in a block of ``size`` slots per position of that level; the kernel stores an entry
in its slot of the block and the sparse level keeps the coordinate if a slot got a value other
than the fill (:func:`compiler.lattice.output_build.holds_blocks` says which levels):

- a SparseList appends the coordinate at its next position (the block there);
- a SparseHash does too, keeping the entry's key and its child (its own position);
- a SparseBlockList does too, extending its last block or starting one
  (:mod:`compiler.lattice.emit_ranges`);
- a SparseBand's position is ``begin + (i - lo)`` from its fiber's first coordinate ``lo`` (the
  next one for a fiber's first entry), the blocks of the gap before it holding the fill;
- a SparseByteMap's position is its slot ``parent * size + i``, marked when kept: every slot
  has its block, at the fill from the start;
- a RunList's (outermost: ``RunList(Dense)``) is its next position, or the one after it when a
  gap comes before ``i``: the gap's run of the fill takes that block, at the fill, as ``i`` is
  kept, and the rest of the fiber after the loops another.

That is the storage ``Tensor.from_numpy`` builds: a block not kept holds only the fill (an entry
equal to the fill is not stored), so the next position reuses it.

Dense levels between a level appended as a SparseList (or a hash) and a SparseList below them
(``SparseList(Dense(SparseList))``: :func:`compiler.lattice.output_build.rows_of_fibers`) are a row
of slots per position of the upper level, located as ``parent * size + i`` from its counter; each
slot is a fiber of the SparseList, its length stored in ``pos`` as it ends, every fiber of the row
empty as the position starts (:meth:`BlockAssembly.row_segment`), and the lengths summed after the
loops: the upper level keeps its coordinate if a fiber of its row got entries.

Example (``Dense(SparseBand(Dense(Element(0.0))))``, ``C[i, j, k] = A[i, j, k]``), at ``j``::

    C1_at = pC1_begin + (j - C1_lo); if (pC1 == pC1_begin) C1_at = pC1;
    C2_start = C1_at * C2_size;
    if (C2_filled < C2_start + C2_size) { grow C_val; C_val[C2_filled:C2_start + C2_size] = 0.0; ... }
    C2_kept = false;  ... if (vC != 0.0) { C_val[C2_start + k] = vC; C2_kept = true; } ...
    if (C2_kept) { if (pC1 == pC1_begin) C1_lo = j; pC1 = C1_at + 1; }
"""

from __future__ import annotations

from ..imperative.ir import (Assign, BinOp, Block, Break, Cast, Comment, CompoundAssign, Const, Declare, For, Grow,
                             Growable, If, OutScalar, Store, Tagged, UnOp, Var, While)
from ..imperative.traverse import map_bodies, walk as ir_walk
from .exprs import cast, const_of, not_fill
from .output_level import OutputBlock, OutputLevel


class BlockAssembly:
    """Blocks of Dense slots under an output's last sparse level (a mixin of the emitter)."""

    def block_names(self, k: int, mode: int) -> OutputBlock:
        """The names a block of Dense slots under the sparse level ``k - 1`` uses: its first
        level ``k`` and storage mode ``mode``, the values' length, how far they hold the fill
        (``prepared``), the block's start and whether a slot got a value other than the fill."""
        out = self.setup.output.tensor
        return OutputBlock(k, mode, length=self.name(("block", "length"), f"{self.val}_len"),
                           prepared=self.name(("block", "prepared"), f"{out}{k}_filled"),
                           start=self.name(("block", "base"), f"{out}{k}_start"),
                           kept=self.name(("block", "kept"), f"{out}{k}_kept"))

    def block_params(self, last: OutputLevel):
        """The values, a block per position of the sparse level ``last`` (a level that marks its
        slots: per slot, prepared with its marks; :meth:`~compiler.lattice.emit_output.OutputAssembly.marked_level`)."""
        b, s, out = self.block, self.setup, self.setup.output.tensor
        self.out_params += [OutScalar(b.length, "int64", 0), Growable(self.val, s.out_dtype, b.length)]
        if last.slots is None:
            self.init.append(Declare(Var(b.prepared), "int64", Const(0, "int64")))
        b.final = Assign(Var(b.length), BinOp("*", Var(last.slots or last.counter), self.block_size()))
        self.final.append(b.final)
        how = "each slot" if last.slots is not None else "each position it keeps"
        self.notes.append(f"{out}'s Dense level {b.k} under its sparse level {b.k - 1} "
                          f"({last.level.name}; TACO's {{sparse, dense}}): {how} gets a block of slots, located by "
                          f"coordinate, holding the fill until stored into; the coordinate is kept if a slot "
                          f"gets another value")

    def block_size(self):
        """Slots in one block: the product of the sizes of the Dense levels' modes."""
        size = None
        for m in range(self.block.mode, len(self.out_sizes)):
            v = Var(self.out_sizes[m].name)
            size = v if size is None else BinOp("*", size, v)
        return size

    def block_position(self, last: OutputLevel, index) -> tuple[list, object]:
        """``(stmts, at)``: the position of the sparse level ``last`` whose block the coordinate
        ``index`` gets (see the module docstring)."""
        counter = Var(last.counter)
        if last.slots is not None:
            slot = Var(self.name(("slot",), f"{self.setup.output.tensor}_slot"))
            return [Declare(slot, "int64", self.entry_slot(last))], slot
        if last.covers is not None:   # (a gap before ``index``: its run of the fill, and its block, come first)
            at = Var(self.name(("covers", "at"), f"{self.setup.output.tensor}{last.k}_at"))
            gap = Cast("int64", BinOp("<", Var(last.covers), Var(index.name)))
            return [Declare(at, "int64", BinOp("+", counter, gap))], at
        if last.ranged != "band":
            return [], counter
        begin = self.band_begin(last)
        at = Var(self.name(("band", "at"), f"{self.setup.output.tensor}{last.k}_at"))
        return [Declare(at, "int64", BinOp("+", begin, BinOp("-", Var(index.name), Var(last.band_lo)))),
                If(BinOp("==", counter, begin), [Assign(at, counter)])], at

    def band_begin(self, info: OutputLevel):
        """Where the current fiber of a band level ``info`` starts (its values' position)."""
        if not info.k:
            return Const(0, "int64")
        return Var(self.name(("begin", info.k), f"{info.counter}_begin"))

    def block_kept(self, last: OutputLevel, index, at) -> list:
        """Keep the coordinate ``index`` at position ``at`` of the sparse level ``last``."""
        counter, i = Var(last.counter), Var(index.name)
        one = Const(1, "int64")
        if last.slots is not None:   # (its values are in the slot's block: the coordinate listed, the slot marked)
            return [Grow(last.appended[0], BinOp("+", counter, one)),
                    Store(last.appended[0], counter, cast(i, "int64", last.index_type)),
                    Store(last.marks, at, Const(True, "bool")), CompoundAssign("+", counter, one)]
        if last.ranged == "band":
            return [If(BinOp("==", counter, self.band_begin(last)), [Assign(Var(last.band_lo), i)]),
                    Assign(counter, BinOp("+", at, one))]
        if last.ranged == "blocks":
            return self.block_list_keep(last, i) + [CompoundAssign("+", counter, one)]
        if last.covers is not None:   # (a run of the fill over the gap before i, its block at the fill: :meth:`block_gap`)
            return (self.gap_run(last, None, None, i) + self.keep_coordinate(last, i)
                    + [CompoundAssign("+", counter, one), Assign(Var(last.covers), BinOp("+", i, one))])
        keyed = self.keep_key(last) if last.keyed is not None else []   # (a hash's child and key beside its coordinate)
        return keyed + self.keep_coordinate(last, i) + [CompoundAssign("+", counter, one)]

    def block_fiber(self, index, stmts: list) -> list:
        """Wrap the case body at the sparse level's coordinate ``index`` with the assembly of
        the block of Dense slots under it (TACO's insert into a full level under an appended one):
        the block at the level's position for ``index`` holds the fill (filled once, with any gap
        before it: a block not kept held only the fill), the body stores into it, and the
        coordinate is kept if a slot got another value.

        Example (``SparseList(Dense(Element(0.0)))``, ``C[i, j] = A[i, j] + B[i, j]``)::

            C1_start = pC0 * C1_size;
            if (C1_filled < C1_start + C1_size) { grow C_val; C_val[C1_filled:C1_start + C1_size] = 0.0; ... }
            C1_kept = false;  ... if (vC != 0.0) { C_val[C1_start + j] = vC; C1_kept = true; } ...
            if (C1_kept) { grow C0_idx; C0_idx[pC0] = i; pC0 += 1; }
        """
        b, last = self.block, self.levels_info[-1]
        base, kept = Var(b.start), Var(b.kept)
        pre, at = self.block_position(last, index)
        if self.phase == "assemble":   # (two-phase: the coordinate kept if its block gets any entry)
            if self.par_rows:   # (on threads, the row counts its blocks: whether it gets one is all it needs)
                stmts = stop_at_first(stmts, kept)
                keep = [CompoundAssign("+", Var(last.counter), Const(1, "int64"))]
            else:
                keep = self.block_kept(last, index, at)
            return pre + [Declare(kept, "bool", Const(False, "bool"))] + stmts + [If(kept, keep)]
        pre.append(Declare(base, "int64", BinOp("*", at, self.block_size())))
        if last.slots is None and self.phase is None:   # (a level that marks its slots has every slot's block prepared)
            pre.append(self.prepare_blocks(BinOp("+", base, self.block_size())))
        pre.append(Declare(kept, "bool", Const(False, "bool")))
        if self.phase == "compute" and not self.par_rows:   # (phase 2 moves to the next block where phase 1 kept one)
            return pre + stmts + [If(kept, [CompoundAssign("+", Var(last.counter), Const(1, "int64"))])]
        if self.par_rows:   # (a row's room was made after phase 1: its block kept if a slot is not the fill)
            counter, i = Var(last.counter), Var(index.name)
            keyed = []
            if last.keyed is not None:   # (a hash's entry its own child, its key its row: the row's own)
                (ptr, pdt), (key, _) = last.keyed
                keyed = [Store(ptr, counter, cast(counter, "int64", pdt)), Store(key, counter, self.entry_slot(last))]
            return pre + stmts + [If(kept, [Store(last.appended[0], counter, cast(i, "int64", last.index_type)),
                                            *keyed, CompoundAssign("+", counter, Const(1, "int64"))])]
        return pre + stmts + [If(kept, self.block_kept(last, index, at))]

    def row_fibers(self, info: OutputLevel):
        """The SparseList ``info`` under Dense levels under an appended level: each entry that level
        appends gets a row of the Dense levels' slots, a fiber of ``info`` per slot, its lengths
        zeroed as the entry starts (:meth:`row_segment`) and summed after the loops (:meth:`rows_final`)."""
        anchor = next(x for x in reversed(self.levels_info) if not x.level.located_by_coordinate)
        info.row_parent = anchor
        self.levels_info[anchor.k + 1].rows = info
        out = self.setup.output.tensor
        self.notes.append(f"{out}'s Dense level {anchor.k + 1} under its sparse level {anchor.k} "
                          f"({anchor.level.name}): each position it appends gets a row of slots, located by "
                          f"coordinate, each slot a fiber of level {info.k} ({info.level.name}), empty until "
                          f"appended into; the coordinate is kept if a fiber of its row got entries")

    def row_size(self, info: OutputLevel):
        """Slots in one row above the SparseList ``info``: the product of the Dense levels' sizes."""
        anchor, size = info.row_parent, None
        for m in range(anchor.mode + anchor.level.nmodes, info.mode):
            v = Var(self.out_sizes[m].name)
            size = v if size is None else BinOp("*", size, v)
        return size

    def row_position(self, info: OutputLevel):
        """The slot of the row the current fiber of the SparseList ``info`` is in: the appended
        level's position (its counter, while its entry is appended), then ``pos * size + i`` down the
        Dense levels."""
        anchor = info.row_parent
        pos = Var(anchor.counter)
        for m in range(anchor.mode + anchor.level.nmodes, info.mode):
            pos = BinOp("+", BinOp("*", pos, Var(self.out_sizes[m].name)), Var(self.out_path[m].name))
        return pos

    def row_segment(self, dense: OutputLevel, index, stmts: list) -> list:
        """Wrap the case body at the appended level's coordinate ``index`` with its row of Dense
        slots (``dense`` the first Dense level, its ``rows`` the SparseList below): the row's fibers
        start empty, the body appends into them, and the coordinate is kept if they got entries (a
        row not kept got none, so the next entry reuses it as it is).

        Example (``SparseList(Dense(SparseList(Element(0.0))))``), at ``i``::

            int64 pC2_row = pC2;
            grow C2_pos to pC0 * C1_size + 1 + C1_size;
            for (q = pC0 * C1_size + 1; q < pC0 * C1_size + 1 + C1_size; q++) C2_pos[q] = 0;
            ...   (C2_pos[pC0 * C1_size + j + 1] = pC2 - pC2_begin at each j)
            if (pC2 > pC2_row) { grow C0_idx; C0_idx[pC0] = i; pC0 += 1; }
        """
        rows = dense.rows
        anchor, child, size = rows.row_parent, Var(rows.counter), self.row_size(rows)
        begin = Var(self.name(("row", dense.k), f"{child.name}_row"))
        q = Var(self.name(("row", "q"), "q"))
        first = BinOp("+", BinOp("*", Var(anchor.counter), size), Const(1, "int64"))
        end = BinOp("+", first, size)
        pre = [Declare(begin, "int64", child), Grow(rows.starts, end),
               For(q, first, end, [Store(rows.starts, q, Const(0, rows.index_type))])]
        keyed = self.keep_key(anchor) if anchor.keyed is not None else []   # (a hash's child and key beside its coordinate)
        kept = keyed + self.keep_coordinate(anchor, Var(index.name)) + [
            CompoundAssign("+", Var(anchor.counter), Const(1, "int64"))]
        return pre + stmts + [If(BinOp(">", child, begin), kept)]

    def row_fiber_count(self, info: OutputLevel):
        """The fibers of the SparseList ``info`` under rows of Dense slots: a row of them per entry its
        upper level kept."""
        return BinOp("*", Var(info.row_parent.counter), self.row_size(info))

    def rows_final(self, info: OutputLevel) -> list:
        """After the loops, the SparseList ``info`` under rows of Dense slots: its fibers' lengths,
        one per slot of the rows kept, summed into their ends."""
        count = self.row_fiber_count(info)
        return [Assign(Var(info.starts_len), BinOp("+", count, Const(1, "int64"))), self.prefix_sum(info, count)]

    def blocks_on_rows(self, count) -> list:
        """After phase 1 of a two-phase kernel on threads counted ``count`` blocks in all, room for
        them, each slot at the fill (phase 2 stores only other values)."""
        s, q = self.setup, Var(self.name(("block", "q"), "q"))
        end = BinOp("*", count, self.block_size())
        return [Grow(self.val, end), For(q, 0, end, [Store(self.val, q, const_of(s.out_fill_value, s.out_dtype))])]

    def blocks_between_phases(self) -> list:
        """Between the phases of a two-phase kernel, a block of slots at the fill for each position
        phase 1 appended (it counted a block as one entry; phase 2 fills it); nothing without blocks."""
        if self.block is None:
            return []
        s, q = self.setup, Var(self.name(("block", "q"), "q"))
        end = BinOp("*", Var(self.levels_info[-1].counter), self.block_size())
        return [Comment(f"a block of {self.block_size_text()} slots at the fill per position phase 1 appended"),
                Grow(self.val, end), For(q, 0, end, [Store(self.val, q, const_of(s.out_fill_value, s.out_dtype))])]

    def block_size_text(self) -> str:
        """The block's size in C terms (``C1_size``, ``C1_size * C2_size``)."""
        return " * ".join(self.out_sizes[m].name for m in range(self.block.mode, len(self.out_sizes)))

    def prepare_blocks(self, end) -> If:
        """The values up to ``end`` hold the fill: the blocks after those prepared so far (a block
        before them not kept held only the fill, so it is reused as it is)."""
        s, prepared = self.setup, Var(self.block.prepared)
        q = Var(self.name(("block", "q"), "q"))
        fill = const_of(s.out_fill_value, s.out_dtype)
        return If(BinOp("<", prepared, end), [Grow(self.val, end), For(q, prepared, end, [Store(self.val, q, fill)]),
                                              Assign(prepared, end)])

    def block_tail(self, last: OutputLevel) -> list:
        """After the loops, a level that covers its fibers above blocks of Dense slots (``RunList(Dense)``)
        ends its fiber with a run of the fill over the rest, its block at the fill."""
        counter, size = Var(last.counter), Var(self.out_sizes[last.mode].name)
        return [If(BinOp("<", Var(last.covers), size),
                   [self.prepare_blocks(BinOp("*", BinOp("+", counter, Const(1, "int64")), self.block_size())),
                    *self.fill_run(last, size)])]

    def block_store(self, v, dt: str) -> list:
        """Store the entry ``v`` in its slot of the current block; a value other than the fill
        keeps the block."""
        s, b = self.setup, self.block
        odt = s.out_dtype
        found = Assign(Var(b.kept), Const(True, "bool"))
        if self.phase == "assemble":   # (two-phase: the structure only, a block per coordinate with entries)
            return [found]
        out, val = [], cast(v, dt, odt)
        if not isinstance(v, Var):
            vname = Var(self.name(("value",), f"v{s.output.tensor}"))
            out.append(Declare(vname, odt, val))
            val = vname
        at = Var(b.start)
        inner = None
        for m in range(b.mode, len(self.out_path)):
            i = Var(self.out_path[m].name)
            inner = i if inner is None else BinOp("+", BinOp("*", inner, Var(self.out_sizes[m].name)), i)
        # a value equal to the fill is not stored, as a SparseList drops it: a -0.0 beside a fill
        # of 0.0 left in a block that is then not kept showed through in the next coordinate's
        if self.phase == "compute" and not self.par_rows:   # (kept where phase 1 kept it, whatever the values)
            return out + [If(not_fill(val, odt, s.out_fill), [Store(self.val, BinOp("+", at, inner), val)]), found]
        return out + [If(not_fill(val, odt, s.out_fill), [Store(self.val, BinOp("+", at, inner), val), found])]


def stop_at_first(stmts: list, kept: Var) -> list:
    """``stmts`` (a block's loops in phase 1 of a two-phase kernel, which only set ``kept`` where a
    slot would get an entry) leaving their loops at the first ``kept = true``: each loop that sets it
    breaks there (what follows in its body is left out), a loop around one breaks after it if it was
    set, and a loop at the top after one that may set it runs only if it was not (the tails of a
    merge). Unchanged where the loops store anything (a workspace's marks are reset as its list is
    read: a row stopped early would leave them to the next).

    >>> from compiler.imperative import pretty
    >>> kept = Var("kept")
    >>> loops = [While(Var("more"), [Assign(kept, Const(True, "bool")), Assign(Var("p"), Const(1, "int64"))]),
    ...          While(Var("tail"), [Assign(kept, Const(True, "bool"))])]
    >>> print(pretty(Block(tuple(stop_at_first(loops, kept)))))
    while (more) {
        kept = true;
        break;
    }
    if (!kept) {
        while (tail) {
            kept = true;
            break;
        }
    }
    """
    found = Assign(kept, Const(True, "bool"))
    if any(isinstance(n, (Store, Grow)) for n in ir_walk(tuple(stmts))):
        return stmts

    def sets(st) -> bool:
        return any(n == found for n in ir_walk(st))

    def has_loop(st) -> bool:
        return any(isinstance(n, (For, While)) and sets(n) for n in ir_walk(st))

    def leaves(st) -> bool:   # (the statement always breaks: what follows it in its block is never run)
        return isinstance(st, Break) or (isinstance(st, (Block, Tagged)) and bool(st.body.body if isinstance(
            st, Tagged) else st.body) and leaves((st.body.body if isinstance(st, Tagged) else st.body)[-1]))

    def visit(body, in_loop: bool) -> list:
        out, seen = [], False
        for st in body:
            if st == found:
                out += [st, Break()] if in_loop else [st]
                seen = True
            elif not sets(st):
                out.append(st)
            else:
                new = map_bodies(st, lambda b: visit(b, in_loop or isinstance(st, (For, While))))
                if in_loop and has_loop(st):
                    out += [new, If(kept, [Break()])]
                elif not in_loop and seen and has_loop(st):
                    out.append(If(UnOp("!", kept), [new]))
                else:
                    out.append(new)
                seen = True
            if in_loop and out and leaves(out[-1]):
                break
        return out

    return visit(stmts, False)


__all__ = ["BlockAssembly", "stop_at_first"]
