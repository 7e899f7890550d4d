"""Emission, a sparse output built by a scatter: its loops run out of its storage order.

A mixin of :class:`~compiler.lattice.emitter.Emitter` (the plan: :mod:`compiler.lattice.scatter_output`).
The loops run twice. Phase 1 counts each fiber's entries in a scratch array of one per fiber; a
prefix sum gives the fibers' starts (``pos``), each fiber's next slot (the scratch array again) and
the output room for every entry counted; phase 2 stores each entry whose value is not the fill at
its fiber's next slot, and the gaps the skipped entries leave close after, as they do on threads.

Example, a CSC ``C[i, j] = A[i, j] * B[i, j]`` of CSR inputs (loops i, j), phase 2's store::

    if (vC != 0.0) { int64_t qC1 = C1_next[j]; C1_idx[qC1] = i; C_val[qC1] = vC; C1_next[j] = qC1 + 1; }
"""

from __future__ import annotations

from ..imperative.ir import Assign, BinOp, Comment, CompoundAssign, Const, Declare, For, Grow, If, Load, Store, Var
from ..stand_in import fiber_word
from .cfir import CForall, cfir_walk
from .emit_two_phase import value_tested_temps
from .exprs import cast, not_fill


class ScatterAssembly:
    """A sparse output scattered fiber by fiber (a mixin of the emitter)."""

    def scatter_phases(self, cfir) -> list:
        """The kernel's body: count, the fibers' starts, scatter, close the gaps."""
        s, yes = self.setup, Const(True, "bool")
        info = self.levels_info[-1]
        out, fibers = s.output.tensor, self.dense_count(info.mode)
        word = self.scatter_fiber_word()
        self.row_ends = self.name(("scatter", "next"), f"{out}{info.k}_next")
        self.allocs.append((self.row_ends, "int64", fibers, Const(0, "int64")))
        self.value_tested = value_tested_temps(cfir)
        self.phase = "assemble"
        first = self.emit(cfir)
        self.phase = "compute"
        second = self.emit(cfir)
        self.phase = None
        q = Var(self.name(("scatter", "q"), word))
        total = cast(Load(info.starts, fibers), info.index_type, "int64")
        # (a list over the scattered level, a DCSC's: its fibers are filled as a Dense level's, listed after)
        listed = self.levels_info[0] if len(self.levels_info) > 1 and self.levels_info[0].counter else None
        loops = ", ".join(i.name for i in self.loop_order_of(cfir))
        start = BinOp("+", cast(Load(info.starts, q), info.index_type, "int64"), Load(self.row_ends, q))
        return [Comment(f"phase 1, count: each entry of {out} counts in its {word}'s {self.row_ends}[{word}] (the "
                        f"loops run {loops}, out of {out}'s storage order)"),
                If(yes, first),
                Comment(f"the {word}s' starts (the counts summed), each {word}'s next slot at its start, and room "
                        f"for every entry counted"),
                *([Grow(info.starts, BinOp("+", fibers, 1))] if listed is not None else []),
                For(q, 0, fibers, [Store(info.starts, BinOp("+", q, 1), cast(start, "int64", info.index_type)),
                                   Store(self.row_ends, q, cast(Load(info.starts, q), info.index_type, "int64"))]),
                *[Grow(name, total) for name in self.appended_arrays()],
                Comment(f"phase 2, scatter: each entry goes to its {word}'s next slot, skipping the fill "
                        f"({s.out_fill_value!r}); the loops reach a {word}'s coordinates in increasing order, so it "
                        f"stays sorted"),
                If(yes, second),
                *self.close_gaps(info, fibers, Var(self.name(("scatter", "kept"), "kept")), word),
                *(self.list_fibers(listed, info, fibers, word) if listed is not None else [])]

    def list_fibers(self, top, info, fibers, word: str) -> list:
        """The outer list's entries (a DCSC's columns): the fibers of ``info``'s level holding
        entries, in order, their ends moved down to follow (none moves up: at most as many are kept
        as were read); then the list's end and the length of the starts below it."""
        f = Var(self.name(("scatter", "listed"), word))
        n, after = Var(top.counter), BinOp("+", f, 1)
        return [Comment(f"the {word}s holding entries are listed ({top.appended[0]}), their ends moved down to follow"),
                Grow(top.appended[0], fibers), Assign(n, Const(0, "int64")),
                For(f, 0, fibers, [If(BinOp(">", Load(info.starts, after), Load(info.starts, n)), [
                    Store(top.appended[0], n, cast(f, "int64", top.index_type)),
                    CompoundAssign("+", n, Const(1, "int64")),
                    Store(info.starts, n, Load(info.starts, after))])]),
                Store(top.starts, Const(1, "int64"), cast(n, "int64", top.index_type)),
                Assign(Var(info.starts_len), BinOp("+", n, Const(1, "int64")))]

    def scatter_entry(self, v, dt: str) -> list:
        """The output's entry ``v`` (of dtype ``dt``) at the coordinates the loops bind: counted in its
        fiber (phase 1), or stored at its fiber's next slot unless it is the fill (phase 2)."""
        s = self.setup
        info, odt = self.levels_info[-1], s.out_dtype
        fiber = self.dense_position(info.mode - 1)
        if self.phase == "assemble":   # (an int64 count: pos takes the sums, checked against its index dtype once)
            return [Store(self.row_ends, fiber, Const(1, "int64"), "+")]
        out, val = self.entry_value(v, dt)
        slot = Var(self.name(("scatter", "slot"), f"q{s.output.tensor}{info.k}"))
        coord = Var(self.out_path[info.mode].name)
        return out + [If(not_fill(val, odt, s.out_fill), [
            Declare(slot, "int64", Load(self.row_ends, fiber)),
            Store(info.appended[0], slot, cast(coord, "int64", info.index_type)),
            Store(self.val, slot, val),
            Store(self.row_ends, fiber, BinOp("+", slot, Const(1, "int64")))])]

    def scatter_fiber_word(self) -> str:
        """What a fiber of the scattered output is called: a CSC's are columns."""
        return fiber_word(self.setup.scattered)

    def loop_order_of(self, cfir) -> list:
        """The indices of the CFIR's loops around the output, outermost first."""
        seen = []
        for n in cfir_walk(cfir):
            if isinstance(n, CForall) and n.index not in seen:
                seen.append(n.index)
        return seen


__all__ = ["ScatterAssembly"]
