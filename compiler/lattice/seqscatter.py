"""A sparse output of the sequence lowering whose loops run out of its storage order, built by a
two-phase scatter (issue 30): a vstack of CSR matrices into a CSC.

The loops run in the output's mode order where they can (its entries then come in its storage
order and are appended). A CSC ``out[k, j] = concat((A[i, j], B[l, j]), (i, l) -> k)`` of CSR ``A``
and ``B`` cannot: columns first, the loops reach ``A``'s columns before its rows. They run in the
inputs' order instead (``k, j``) and the output is assembled as scipy's ``tocsc`` does, fused with
the stack: phase 1 runs the loops counting each column's entries, a prefix sum gives the columns'
starts, phase 2 runs them again storing each entry at its column's next slot. The loops visit
each coordinate in increasing order, so a column's rows come in increasing order and it stays
sorted. An entry whose value is the fill is skipped in phase 2; the gaps it leaves close after.
The same holds for any output of Dense levels over one SparseList (the lattice strategy's
:mod:`compiler.lattice.scatter_output`, whose note this one follows).

Reading the inputs converted to the output's order instead (each a counting sort, then the
stack appended in order) costs two conversions and the stack; the scatter is one pass over the
entries to count and one to place them (``benchmarks/bench_shape_order.py`` times both).

>>> from compiler.format import csc
>>> out = ScatteredOutput("C", csc(), (2, 3), "float64", FreshNames())
>>> out.phase = "count"; print(out.store(("i", "j"), Var("v"))[0])
C1_next[j] += 1;
>>> out.phase = "place"; print("\\n".join(str(s) for s in out.store(("i", "j"), Var("v"))))
if (v != 0.0) {
    int64 qC1 = C1_next[j];
    C1_idx[qC1] = i;
    C_val[qC1] = v;
    C1_next[j] = qC1 + 1;
}
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import StrategyError
from ..imperative.ir import (Assign, BinOp, Cast, Comment, CompoundAssign, Const, Declare, For, Grow, If, Load, Store,
                             Var)
from ..names import FreshNames
from ..stand_in import fiber_word, format_text
from .exprs import not_fill
from .seqoutput import SeqOutput, output_kind
from .seqtwophase import TwoPhaseScatter, counted, placed

I64 = "int64"


def _c(n) -> Const:
    return Const(int(n), I64)


def scatters(fmt) -> bool:
    """Whether the sequence emitter builds an output of ``fmt`` by a scatter: Dense levels over one
    SparseList, two modes or more (a CSC, a CSR written from loops in another order).

    >>> from compiler.format import csc, csr, coo, parse_format
    >>> [scatters(f) for f in (csc(), csr(), coo(), parse_format("sparse", ndim=1))]
    [True, True, False, False]
    """
    return fmt.ndim >= 2 and output_kind(fmt) == "list"


def scatter_note(out: str, fmt, loops: tuple, why: str) -> str:
    """What the trace's ``loop-order`` step says of an output built by a scatter.

    >>> from compiler.format import csc
    >>> print(scatter_note("out", csc(), ("k", "j"), "A[k, j]: ..."))
    out is csc, and loops in its storage order walk an input against its own (A[k, j]: ...): they run k, j, the inputs' order, and build out by a scatter: phase 1 counts each column's entries, a prefix sum gives the columns' starts, phase 2 stores each entry at its column's next slot (the loops reach a column's coordinates in increasing order, so it stays sorted), skipping the fill, and the gaps it leaves close after (scipy's tocsc, fused with the computation): two passes over the entries, where reading the inputs converted to the output's order takes a counting sort of each before the loops run
    """
    word = fiber_word(fmt)
    return (f"{out} is {format_text(fmt)}, and loops in its storage order walk an input against its own ({why}): "
            f"they run {', '.join(loops)}, the inputs' order, and build {out} by a scatter: phase 1 counts each "
            f"{word}'s entries, a prefix sum gives the {word}s' starts, phase 2 stores each entry at its {word}'s "
            f"next slot (the loops reach a {word}'s coordinates in increasing order, so it stays sorted), skipping "
            f"the fill, and the gaps it leaves close after (scipy's tocsc, fused with the computation): two passes "
            f"over the entries, where reading the inputs converted to the output's order takes a counting sort of "
            f"each before the loops run")


class ScatteredOutput(TwoPhaseScatter, SeqOutput):
    """An output of Dense levels over one SparseList written by loops out of its storage order: the
    loops emitted twice (:meth:`around`), ``phase`` ``count`` then ``place``, each entry counted then
    placed in its fiber's ``next`` slot of the output's own arrays."""

    def __init__(self, name: str, fmt, shape: tuple, dtype: str, fresh: FreshNames):
        super().__init__(name, fmt, shape, dtype, fresh)
        if not scatters(fmt):
            raise StrategyError(f"output {name}: the sequence emitter scatters into Dense levels over one "
                                f"SparseList (a CSC), not {fmt}")
        self.names = fresh
        self.fibers = self.keys = math.prod(self.shape[:-1])
        self.next = fresh(f"{self.pos.rsplit('_', 1)[0]}_next")
        self.phase = "count"

    def start(self, inputs=None, rhs=None) -> list:
        return []      # (the room is the count's: grown once between the phases)

    def store(self, idxs: tuple, value) -> list:
        idxs = tuple(idxs[m] for m in self.fmt.mode_order)
        fiber = self.dense_position(idxs, len(idxs) - 1)
        if self.phase == "count":
            return counted(self.next, fiber)
        slot = Var(self.names(f"q{self.pos.rsplit('_', 1)[0]}"))
        return [If(not_fill(value, np.dtype(self.dtype), self.fmt.fill), placed(self.next, fiber, slot, [
            Store(self.idx[0], slot, self.narrow(Var(idxs[-1]))), Store(self.val, slot, value)]))]

    def count_note(self) -> str:
        word = fiber_word(self.fmt)
        return (f"phase 1, count: each entry of {self.tensor} counts in its {word}'s {self.next}[{word}] (the "
                f"loops run out of {self.tensor}'s storage order)")

    def prefix_note(self) -> str:
        word = fiber_word(self.fmt)
        return (f"the {word}s' starts (the counts summed), each {word}'s next slot at its start, and room for every "
                f"entry counted")

    def place_note(self) -> str:
        word = fiber_word(self.fmt)
        return (f"phase 2, place: each entry at its {word}'s next slot, skipping the fill; the loops reach a "
                f"{word}'s coordinates in increasing order, so it stays sorted")

    def prefix_sum(self) -> tuple:
        """The fibers' starts written in the output's positions, each fiber's next slot at its start."""
        q = Var(self.names("q"))
        start = Load(self.pos, q)
        return [For(q, 0, _c(self.fibers), [
            Store(self.pos, BinOp("+", q, _c(1)), self.narrow(BinOp("+", start, Load(self.next, q)))),
            Store(self.next, q, start)])], Load(self.pos, _c(self.fibers))

    def room(self, total, body: list) -> list:
        return [*[Grow(x, total) for x in (*self.idx, self.val)], *body]

    def epilogue(self) -> list:
        return self.close_gaps(fiber_word(self.fmt))

    def close_gaps(self, word: str) -> list:
        """Each fiber's entries (up to its next slot) moved down to follow the previous one's, where
        phase 2 skipped a fill; nothing moves before the first gap."""
        r, q, kept, start, stop = (Var(self.names(x)) for x in ("r", "q", "kept", "start", "stop"))
        after = BinOp("+", r, _c(1))
        wide = (lambda x: x) if self.idt == I64 else (lambda x: Cast(I64, x))
        return [Comment(f"each {word}'s entries end at its next slot: they move down to follow the previous "
                        f"{word}'s (nothing moves before the first gap)"),
                Declare(kept, I64, _c(0)), Declare(start, I64, _c(0)),
                For(r, 0, _c(self.fibers), [
                    Declare(stop, I64, wide(Load(self.pos, after))),
                    If(BinOp("==", kept, start), [Assign(kept, Load(self.next, r))],
                       [For(q, start, Load(self.next, r), [Store(self.idx[0], kept, Load(self.idx[0], q)),
                                                           Store(self.val, kept, Load(self.val, q)),
                                                           CompoundAssign("+", kept, _c(1))])]),
                    Assign(start, stop),
                    Store(self.pos, after, self.narrow(kept))]),
                Assign(Var(self.counter), kept)]

    def end(self) -> list:
        return []


__all__ = ["ScatteredOutput", "scatter_note", "scatters"]
