"""The output of a column-major flatten (issue 30): written at each entry's flat coordinate
(:class:`ColumnMajorOutput`), or, sparse, sorted by it first (:class:`FlatSortedOutput`), its memory bounded by the
entries, whatever the extents.

``c[m] = collapse(collapse(A[i, j, k], (k, j) -> l), (l, i) -> m)`` of a CSF ``A`` is ``c[k, j, i] = A[i, j, k]``
(:mod:`compiler.lattice.seqcolmajor`), its loops in ``A``'s order, each entry at ``m = (k·|j| + j)·|i| + i``. A
sparse ``c`` appends its entries in ``m``'s order, so they are sorted first: phase 1 counts them, phase 2 puts each
one's ``m`` and value in a workspace of as many, in the loops' order, and the workspace is sorted by ``m``, the
kernel choosing at run time as the sorted sums do per bucket (:mod:`compiler.lattice.seqsumsort`): where the keys,
the flat coordinates of all indices but the last (``(k, j)``: ``|k|·|j|`` of them), are at most
:data:`~compiler.imperative.sorting.COUNTED_SPAN` times the entries, a counting sort by key
(:func:`~compiler.imperative.sorting.count_sort_pairs_ir`: ``O(n + keys)``, no comparison; stable, and the loops
reach the last index in increasing order among one key's entries, so each key's stay in ``m``'s order); else a
natural merge sort by ``m`` (:func:`~compiler.imperative.sorting.merge_sort_pairs_ir`: each fiber the innermost
loop walks is an ascending run, ``O(n log runs)``). One kernel serves a tensor of 2000³ and few entries (4M
counters would be most of its time and memory: merged) and one whose entries fill its keys (counted). The output
appends them from there. Memory: four words per entry, and a counter per key where there are at most
``COUNTED_SPAN`` keys per entry.

>>> from compiler.format import parse_format
>>> from compiler.names import FreshNames
>>> from compiler.imperative.ir import Var
>>> from compiler.lattice.seqassembly import sequence_output
>>> fresh = FreshNames({"i", "j", "k", "m"})
>>> inner = sequence_output("c", parse_format("sparse", ndim=1), ("m",), (8 * 10**9,), "float64", fresh)
>>> out = FlatSortedOutput(inner, (2000, 2000, 2000), "float64", fresh, "m")
>>> print("\\n".join(str(s) for s in out.store(("k", "j", "i"), Var("v"))))
c_n_entries += 1;
>>> out.phase = "place"; print("\\n".join(str(s) for s in out.store(("k", "j", "i"), Var("v"))))
c_sorted_m[c_n_placed] = (k * 2000 + j) * 2000 + i;
c_sorted_val[c_n_placed] = v;
c_n_placed += 1;
>>> print(out.sort()[0].cond)
4000000 <= 8 * c_n_entries
"""

from __future__ import annotations

import math

from ..imperative.ir import (Allocate, BinOp, Comment, CompoundAssign, Const, Declare, For, If, Load, Select, Store,
                             Var)
from ..imperative.sorting import COUNTED_SPAN, count_sort_pairs_ir, merge_sort_pairs_ir
from .seqtwophase import TwoPhaseScatter

I64 = "int64"


def flat_at(idxs: tuple, shape: tuple):
    """The flat coordinate of the indices ``idxs`` (the major first) of extents ``shape``.

    >>> print(flat_at(("k", "j", "i"), (4, 3, 2)))
    (k * 3 + j) * 2 + i
    """
    out = Var(idxs[0])
    for x, n in zip(idxs[1:], shape[1:]):
        out = BinOp("+", BinOp("*", out, Const(int(n), I64)), Var(x))
    return out


class ColumnMajorOutput:
    """The one-mode output ``inner`` (a :class:`~compiler.lattice.seqoutput.SeqOutput` or
    :class:`~compiler.lattice.seqassembly.SeqAssembly`) written by stores at ``(j, i)`` (indices of
    extents ``shape``, the major first): each at ``at = j·|i| + i``, a local of that name. The rest of
    what the emitter or a :class:`~compiler.lattice.seqgroupsort.SortedOutput` asks of an output (its
    name, kind, notes, parameters, first and last statements, the code around the loops) is the one-mode
    output's."""

    def __init__(self, inner, shape: tuple, at: str):
        self.inner, self.shape, self.at = inner, tuple(int(n) for n in shape), at
        self.tensor, self.kind, self.notes = inner.tensor, inner.kind, inner.notes

    def params(self) -> list:
        return self.inner.params()

    def start(self, inputs=None, rhs=None) -> list:
        return self.inner.start(inputs, rhs)

    def around(self, emit) -> list:
        return self.inner.around(emit)

    def end(self) -> list:
        return self.inner.end()

    def case(self, index: str, stmts: list) -> list:
        return stmts        # (the output's one loop is none of the (j, i) loops: see store)

    def store(self, idxs: tuple, value) -> list:
        # (one entry is one iteration of the loop over the output's index: its level's code around it)
        return self.inner.case(self.at, [Declare(Var(self.at), I64, flat_at(idxs, self.shape)),
                                         *self.inner.store((self.at,), value)])


class FlatSortedOutput(ColumnMajorOutput, TwoPhaseScatter):
    """A :class:`ColumnMajorOutput` (``inner``, of a flatten of extents ``shape``, its index ``at``) written by
    loops in any order: the loops run twice (phase 1 counts the entries, phase 2 puts each one's flat coordinate
    and value in a workspace of as many), the workspace is sorted by the flat coordinate (counted by key, all
    indices but the last, where the keys are at most ``COUNTED_SPAN`` times the entries, else merged: chosen at
    run time), and ``inner`` appends the entries from there."""

    def __init__(self, inner, shape: tuple, dtype: str, fresh, at: str):
        super().__init__(inner, shape, at)
        self.dtype, self.fresh = dtype, fresh
        name = inner.tensor
        self.entries, self.filled = Var(fresh(f"{name}_n_entries")), Var(fresh(f"{name}_n_placed"))
        self.sorted = {x: fresh(f"{name}_sorted_{x}") for x in (at, "val")}
        self.scratch_of = {x: fresh(f"{name}_scratch_{x}") for x in (at, "val")}
        self.key_counts = fresh(f"{name}_key_counts")
        # (the keys: the flat coordinates of all indices but the last, the flat one's quotients by the last's extent)
        self.keys, self.minor = math.prod(self.shape[:-1]), self.shape[-1]

    def store(self, idxs: tuple, value) -> list:
        if self.phase == "count":
            return [CompoundAssign("+", self.entries, Const(1, I64))]
        return [Store(self.sorted[self.at], self.filled, flat_at(idxs, self.shape)),
                Store(self.sorted["val"], self.filled, value), CompoundAssign("+", self.filled, Const(1, I64))]

    def counted(self):
        """Whether the entries are sorted by counting their keys (at run time: their number against the keys')."""
        return BinOp("<=", Const(self.keys, I64), BinOp("*", Const(COUNTED_SPAN, I64), self.entries))

    def around(self, emit) -> list:
        def phases():
            first, second = self.twice(emit)
            # (one element at least, as malloc asks)
            room = BinOp("+", self.entries, Const(1, I64))
            body = [Comment(f"phase 2, place: each entry's {self.at} and value at the next slot, in the loops' order"),
                    Declare(self.filled, I64, Const(0, I64)), *second, *self.sort(), *self.append()]
            # (a counter per key where the entries are counted)
            body = [Allocate(self.key_counts, I64, Select(self.counted(), Const(self.keys, I64), Const(0, I64)),
                             None, body)]
            for buf in (self.sorted, self.scratch_of):
                for x in (self.at, "val"):
                    body = [Allocate(buf[x], self.dtype if x == "val" else I64, room, None, body)]
            return [Declare(self.entries, I64, Const(0, I64)),
                    Comment("phase 1, count: the entries (the workspace holds them alone, not a slot per "
                            "coordinate)"),
                    *first, *body]
        return self.inner.around(phases)

    def sort(self) -> list:
        """The workspace's entries sorted by the flat coordinate: counted by key, or merged."""
        pairs = (self.sorted[self.at], self.sorted["val"], self.scratch_of[self.at], self.scratch_of["val"])
        fresh = lambda base: Var(self.fresh(base))  # noqa: E731
        zero, per = Const(0, I64), None if self.minor == 1 else Const(self.minor, I64)
        key = self.at if per is None else f"{self.at} / {self.minor}"
        return [If(self.counted(), [
            Comment(f"the keys ({key}: all indices but the last, {self.keys} of them) at most {COUNTED_SPAN} times "
                    f"the entries: counted, each entry at its key's next slot (stable, and the loops reach the last "
                    f"index in increasing order among one key's entries: {self.at}'s order)"),
            *count_sort_pairs_ir(*pairs, self.key_counts, Const(self.keys, I64), zero, self.entries, fresh, per)], [
            Comment(f"else merged by {self.at} (a natural merge sort: each fiber the loops walked is an ascending "
                    f"run)"),
            *merge_sort_pairs_ir(*pairs, zero, self.entries, fresh)])]

    def append(self) -> list:
        """The sorted entries appended in ``m``'s order by the output's own code."""
        q, at, v = Var(self.fresh("q")), Var(self.at), Var(self.fresh("v"))
        return [Comment(f"the entries appended in {self.tensor}'s order"),
                For(q, 0, self.entries, self.inner.case(self.at, [
                    Declare(at, I64, Load(self.sorted[self.at], q)),
                    Declare(v, self.dtype, Load(self.sorted["val"], q)),
                    *self.inner.store((self.at,), v)]))]


__all__ = ["ColumnMajorOutput", "FlatSortedOutput", "flat_at"]
