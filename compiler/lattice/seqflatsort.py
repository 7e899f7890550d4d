"""The output of a column-major flatten (issue 30): written at each entry's flat coordinate
(:class:`ColumnMajorOutput`), or, sparse, sorted by it first (:class:`FlatSortedOutput`), its memory bounded by the
entries, whatever the extents.

``c[m] = collapse(collapse(A[i, j, k], (k, j) -> l), (l, i) -> m)`` of a CSF ``A`` is ``c[k, j, i] = A[i, j, k]``
(:mod:`compiler.lattice.seqcolmajor`), its loops in ``A``'s order, each entry at ``m = (k·|j| + j)·|i| + i``. A
sparse ``c`` appends its entries in ``m``'s order, so they are sorted first. A counting sort keyed by ``(k, j)``
(:class:`~compiler.lattice.seqcolmajor.FlatKeyedOutput`) keeps a counter per key, ``|k|·|j|`` of them: 4M for a
tensor of 2000³ however few its entries, more than memory for larger extents. Past :data:`COUNTED_KEYS` keys the
entries are sorted instead (:class:`FlatSortedOutput`): phase 1 counts them, phase 2 puts each one's ``m`` and
value in a workspace of as many, in the loops' order, and a natural merge sort orders them by ``m``
(:func:`~compiler.imperative.sorting.merge_sort_pairs_ir`: each fiber the innermost loop walks is an ascending
run, ``O(n log runs)``); the output appends them from there. Memory: four words per entry.

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
"""

from __future__ import annotations

import math

from ..imperative.ir import Allocate, BinOp, Comment, CompoundAssign, Const, Declare, For, Load, Store, Var
from ..imperative.sorting import merge_sort_pairs_ir
from .seqtwophase import TwoPhaseScatter

I64 = "int64"

#: the most keys a counting sort of a flatten's entries counts (512 KB of counters); past it they are merge-sorted
COUNTED_KEYS = 1 << 16


def counts_keys(shape: tuple) -> bool:
    """Whether a flatten of extents ``shape`` (the major first) into a sparse output counts its entries per key
    (all its indices but the last), or, its keys too many, merge-sorts them by the flat coordinate.

    >>> counts_keys((4, 3, 2)), counts_keys((2000, 2000, 2000)), counts_keys((10**7, 10**7, 3))
    (True, False, False)
    """
    return math.prod(int(n) for n in shape[:-1]) <= COUNTED_KEYS


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
    loops in any order: the loops run twice (phase 1 counts the entries, phase 2 puts each
    one's flat coordinate and value in a workspace of as many), the workspace is merge-sorted by the flat
    coordinate, and ``inner`` appends the entries from there."""

    def __init__(self, inner, shape: tuple, dtype: str, fresh, at: str):
        super().__init__(inner, shape, at)
        self.dtype, self.fresh = dtype, fresh
        name = inner.tensor
        self.entries, self.filled = Var(fresh(f"{name}_n_entries")), Var(fresh(f"{name}_n_placed"))
        self.sorted = {x: fresh(f"{name}_sorted_{x}") for x in (at, "val")}
        self.scratch_of = {x: fresh(f"{name}_merge_{x}") for x in (at, "val")}

    def store(self, idxs: tuple, value) -> list:
        if self.phase == "count":
            return [CompoundAssign("+", self.entries, Const(1, I64))]
        return [Store(self.sorted[self.at], self.filled, flat_at(idxs, self.shape)),
                Store(self.sorted["val"], self.filled, value), CompoundAssign("+", self.filled, Const(1, I64))]

    def around(self, emit) -> list:
        def phases():
            first, second = self.twice(emit)
            # (one element at least, as malloc asks)
            room = BinOp("+", self.entries, Const(1, I64))
            body = [Comment(f"phase 2, place: each entry's {self.at} and value at the next slot, in the loops' order"),
                    Declare(self.filled, I64, Const(0, I64)), *second,
                    Comment(f"the entries sorted by {self.at} (a natural merge sort: each fiber the loops walked is "
                            f"an ascending run)"),
                    *merge_sort_pairs_ir(self.sorted[self.at], self.sorted["val"], self.scratch_of[self.at],
                                         self.scratch_of["val"], Const(0, I64), self.entries,
                                         lambda base: Var(self.fresh(base))),
                    *self.append()]
            for buf in (self.sorted, self.scratch_of):
                for x in (self.at, "val"):
                    body = [Allocate(buf[x], self.dtype if x == "val" else I64, room, None, body)]
            return [Declare(self.entries, I64, Const(0, I64)),
                    Comment(f"phase 1, count: the entries (not each key's: {math.prod(self.shape[:-1])} keys, of all "
                            f"indices but the last, too many counters; the workspace holds the entries alone)"),
                    *first, *body]
        return self.inner.around(phases)

    def append(self) -> list:
        """The sorted entries appended in ``m``'s order by the output's own code."""
        q, at, v = Var(self.fresh("q")), Var(self.at), Var(self.fresh("v"))
        return [Comment(f"the entries appended in {self.tensor}'s order"),
                For(q, 0, self.entries, self.inner.case(self.at, [
                    Declare(at, I64, Load(self.sorted[self.at], q)),
                    Declare(v, self.dtype, Load(self.sorted["val"], q)),
                    *self.inner.store((self.at,), v)]))]


__all__ = ["COUNTED_KEYS", "ColumnMajorOutput", "FlatSortedOutput", "counts_keys", "flat_at"]
