"""The output of a column-major flatten (issue 30): written at each entry's flat coordinate
(:class:`ColumnMajorOutput`), or, sparse, sorted by it first (:class:`FlatSortedOutput`), its memory bounded by the
entries, whatever the extents.

``c[m] = collapse(collapse(A[i, j, k], (k, j) -> l), (l, i) -> m)`` of a CSF ``A`` is ``c[k, j, i] = A[i, j, k]``
(:mod:`compiler.lattice.seqcolmajor`), its loops in ``A``'s order, each entry at ``m = (k·|j| + j)·|i| + i``. A
sparse ``c`` appends its entries in ``m``'s order, so they are sorted first, into a workspace of as many: phase 1
counts them, and the kernel chooses at run time, as the sorted sums do per bucket (:mod:`compiler.lattice.seqsumsort`):

- where the keys, the flat coordinates of all indices but the last (``(k, j)``: ``|k|·|j|`` of them), are at most
  :data:`~compiler.imperative.sorting.COUNTED_SPAN` times the entries, a counting sort: phase 2 counts each key's
  entries, a prefix sum gives each key's first slot, phase 3 places each entry at its key's next slot
  (``O(n + keys)``, no comparison; the loops reach the last index in increasing order among one key's entries, so
  each key's come in ``m``'s order);
- else phase 2 puts the entries in the loops' order, and a natural merge sort orders them by ``m``
  (:func:`~compiler.imperative.sorting.merge_sort_pairs_ir`: each fiber the innermost loop walks is an ascending
  run, ``O(n log runs)``).

One kernel serves a tensor of 2000³ and few entries (4M counters would be most of its time and memory: merged) and
one whose entries fill its keys (counted). The output appends them from there. Memory: the workspace, two words per
entry (the flat coordinate in int32 where the flat extent fits), and a counter per key where there are at most
``COUNTED_SPAN`` keys per entry, or the merge's scratch, two more words per entry, where there are more. A counting
sort that placed the entries in the loops' order first took a scratch copy of them too: twice the memory, fresh
pages each call (glibc returns them to the system), whose page faults cost more than the sort (100³ at 5%).

>>> from compiler.format import parse_format
>>> from compiler.names import FreshNames
>>> from compiler.imperative.ir import Var
>>> from compiler.lattice.seqassembly import sequence_output
>>> fresh = FreshNames({"i", "j", "k", "m"})
>>> inner = sequence_output("c", parse_format("sparse", ndim=1), ("m",), (8 * 10**9,), "float64", fresh)
>>> out = FlatSortedOutput(inner, (2000, 2000, 2000), "float64", fresh, "m")
>>> print("\\n".join(str(s) for s in out.store(("k", "j", "i"), Var("v"))))
c_n_entries += 1;
>>> out.phase = "count keys"; print("\\n".join(str(s) for s in out.store(("k", "j", "i"), Var("v"))))
c_key_counts[k * 2000 + j] += 1;
>>> out.phase = "place by key"; print("\\n".join(str(s) for s in out.store(("k", "j", "i"), Var("v"))))
int64 key = k * 2000 + j;
int64 slot = c_key_counts[key];
c_sorted_m[slot] = key * 2000 + i;
c_sorted_val[slot] = v;
c_key_counts[key] = slot + 1;
>>> out.phase = "place"; print("\\n".join(str(s) for s in out.store(("k", "j", "i"), Var("v"))))
c_sorted_m[c_n_placed] = (k * 2000 + j) * 2000 + i;
c_sorted_val[c_n_placed] = v;
c_n_placed += 1;
>>> print(out.sort(lambda: [])[0].cond)
4000000 <= 8 * c_n_entries
"""

from __future__ import annotations

import math

from ..imperative.ir import Allocate, BinOp, Cast, Comment, CompoundAssign, Const, Declare, For, If, Load, Store, Var
from ..imperative.sorting import COUNTED_SPAN, merge_sort_pairs_ir
from .seqtwophase import counted, placed, starts_in_place

I64 = "int64"
INT32_MAX = 2**31 - 1


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


class FlatSortedOutput(ColumnMajorOutput):
    """A :class:`ColumnMajorOutput` (``inner``, of a flatten of extents ``shape``, its index ``at``) written by
    loops in any order: phase 1 counts the entries, then the entries go to a workspace of as many in ``at``'s
    order, and ``inner`` appends them from there. Where the keys (the flat coordinates of all indices but the
    last) are at most ``COUNTED_SPAN`` times the entries, the loops count each key's entries and place each entry
    at its key's next slot (a counting sort, the loops run twice more); else they put the entries in the loops'
    order and those are merge-sorted by ``at``: chosen at run time."""

    def __init__(self, inner, shape: tuple, dtype: str, fresh, at: str):
        super().__init__(inner, shape, at)
        self.dtype, self.fresh = dtype, fresh
        name = inner.tensor
        self.entries, self.filled = Var(fresh(f"{name}_n_entries")), Var(fresh(f"{name}_n_placed"))
        self.sorted = {x: fresh(f"{name}_sorted_{x}") for x in (at, "val")}
        self.scratch_of = {x: fresh(f"{name}_merge_{x}") for x in (at, "val")}
        self.key_counts = fresh(f"{name}_key_counts")
        # (the keys: the flat coordinates of all indices but the last)
        self.keys = math.prod(self.shape[:-1])
        # (the flat coordinates, and the counts, at most the entries (one per flat coordinate), in int32 where the
        # flat extent fits: half the fresh pages a call touches, each a page fault where glibc returned it)
        self.idt = "int32" if math.prod(self.shape) <= INT32_MAX else I64
        #: what the loops' stores do: ``count`` the entries, ``count keys``, ``place by key`` (at the key's next
        #: slot), ``place`` (at the next slot, in the loops' order)
        self.phase = "count"

    def store(self, idxs: tuple, value) -> list:
        if self.phase == "count":
            return [CompoundAssign("+", self.entries, Const(1, I64))]
        key = flat_at(idxs[:-1], self.shape[:-1])
        if self.phase == "count keys":
            return counted(self.key_counts, key)
        if self.phase == "place by key":
            at, slot = Var(self.fresh("key")), Var(self.fresh("slot"))
            flat = flat_at((at.name, idxs[-1]), (self.keys, self.shape[-1]))
            return [Declare(at, I64, key), *placed(self.key_counts, at, slot, self.entry(slot, flat, value))]
        return [*self.entry(self.filled, flat_at(idxs, self.shape), value),
                CompoundAssign("+", self.filled, Const(1, I64))]

    def entry(self, slot, flat, value) -> list:
        """The workspace's entry at ``slot``: the flat coordinate ``flat`` and ``value``."""
        return [Store(self.sorted[self.at], slot, flat if self.idt == I64 else Cast(self.idt, flat)),
                Store(self.sorted["val"], slot, value)]

    def counted(self):
        """Whether the entries are sorted by counting their keys (at run time: their number against the keys')."""
        return BinOp("<=", Const(self.keys, I64), BinOp("*", Const(COUNTED_SPAN, I64), self.entries))

    def room(self):
        """The length of the workspace's arrays: the entries, one at least, as malloc asks."""
        return BinOp("+", self.entries, Const(1, I64))

    def walk(self, phase: str, emit) -> list:
        """The loops (``emit()``'s code) with their stores in ``phase``."""
        self.phase = phase
        return emit()

    def around(self, emit) -> list:
        def phases():
            # (the loops run again with the cursors phase 1 declared: each series of loops starts them anew)
            first = self.walk("count", emit)
            body = [*self.sort(emit), *self.append()]
            for x in ("val", self.at):
                body = [Allocate(self.sorted[x], self.dtype if x == "val" else self.idt, self.room(), None, body)]
            return [Declare(self.entries, I64, Const(0, I64)),
                    Comment("phase 1, count: the entries (the workspace holds them alone, not a slot per "
                            "coordinate)"),
                    *first, *body]
        return self.inner.around(phases)

    def sort(self, emit) -> list:
        """The entries put in the workspace in the flat coordinate's order: each at its key's next slot, or in the
        loops' order, then merged (the loops' code ``emit()``)."""
        key, start, c = (Var(self.fresh(x)) for x in ("key", "start", "c"))
        counted_ = [
            Comment("phase 2, count: each key's entries"),
            *self.walk("count keys", emit),
            Comment("each key's first slot: the counts before it summed"),
            *starts_in_place(self.key_counts, key, start, c, keys=Const(self.keys, I64)),
            Comment(f"phase 3, place: each entry at its key's next slot, by key, then the last index (the loops "
                    f"reach it in increasing order among one key's entries: {self.at}'s order)"),
            *self.walk("place by key", emit)]
        scratch = [Comment(f"merged by {self.at} (a natural merge sort: each fiber the loops walked is an ascending "
                           f"run)"),
                   *merge_sort_pairs_ir(self.sorted[self.at], self.sorted["val"], self.scratch_of[self.at],
                                        self.scratch_of["val"], Const(0, I64), self.entries,
                                        lambda base: Var(self.fresh(base)))]
        for x in ("val", self.at):
            scratch = [Allocate(self.scratch_of[x], self.dtype if x == "val" else self.idt, self.room(), None,
                                scratch)]
        merged = [Comment(f"else phase 2, place: each entry's {self.at} and value at the next slot, in the loops' "
                          f"order"),
                  Declare(self.filled, I64, Const(0, I64)), *self.walk("place", emit), *scratch]
        return [If(self.counted(), [
            Comment(f"the keys (all indices but the last: {self.keys} of them) at most {COUNTED_SPAN} times the "
                    f"entries: counted, each entry placed at its key's next slot"),
            Allocate(self.key_counts, self.idt, Const(self.keys, I64), Const(0, self.idt), counted_)], merged)]

    def append(self) -> list:
        """The sorted entries appended in ``m``'s order by the output's own code."""
        q, at, v = Var(self.fresh("q")), Var(self.at), Var(self.fresh("v"))
        return [Comment(f"the entries appended in {self.tensor}'s order"),
                For(q, 0, self.entries, self.inner.case(self.at, [
                    Declare(at, I64, Load(self.sorted[self.at], q)),
                    Declare(v, self.dtype, Load(self.sorted["val"], q)),
                    *self.inner.store((self.at,), v)]))]


__all__ = ["ColumnMajorOutput", "FlatSortedOutput", "flat_at"]
