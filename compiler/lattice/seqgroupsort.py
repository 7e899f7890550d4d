"""A sparse output of the sequence lowering whose two innermost loops run swapped, each group of the
loops around them sorted before it is appended (issue 30): the transpose of a split's groups.

``out[i, j, k] = split(A[l, j], l -> (i:I, k:K))`` of a CSR ``A`` into a COO or CSF stored ``i, j, k``
wants each group ``i``'s K rows, a K×J block, transposed. Looped ``i, j, k``, the loop over ``j`` would
walk the union of the group's K rows' fibers, a merge of K cursors (:func:`~compiler.lattice.seqrewind.check_between`
refuses it). Looped ``i, k, j``, the sequences walk ``A`` as stored, one row of the group after the
other, and a group's entries come in ``k, j`` order. So each group is sorted before the output takes
it: the walk puts each entry in a workspace, counts the entries of each ``j`` and lists the ``j`` s
it meets; the list is sorted (:func:`~compiler.imperative.sorting.sort_coordinates_ir`: a scan of
the marks where the group has many, else a rank, bit or merge sort), a prefix sum over it gives each
``j``'s start, placing every entry at its ``j``'s next slot orders them by ``j`` (the rows come in
increasing ``k``, so each ``j``'s stay in ``k`` order: a counting sort), and the output appends them
from there with its own code, as from loops in its order (a COO, a CSF, any output the sequence
emitter appends). That is O(entries + sort of the group's distinct j) per group, whatever K (a K-way
merge picks each entry among K cursors), and never O(J) per group but where the group has J/16 of
them. The loops run twice: phase 1 counts each group's entries, and the workspace, allocated once,
holds the largest group's (a group's K·J block would be 96 MB at K = 100, J = 20k, and more than memory
where K·J is large and the groups hold few entries); phase 2 sorts and appends each group.

With two modes no loop runs around the two (``C[i, k] = split(a[l], l -> (i, k))``, of a vector, a
collapse or a slice, into a COO or DCSR stored ``k, i``, which the loops in its order would walk by
searching each group for ``k``'s coordinate, or not at all): :class:`SortedOutput` runs the loops
twice, as :mod:`compiler.lattice.seqscatter` does, phase 1 counting each ``k``'s entries and phase 2
placing each at its ``k``'s next slot in a workspace of as many, which the output appends from, ``k``
by ``k``.

>>> from compiler.format import coo
>>> from compiler.names import FreshNames
>>> from compiler.lattice.seqoutput import SeqOutput
>>> fresh = FreshNames({"i", "j", "k"})
>>> out = GroupSortedOutput(SeqOutput("C", coo(3), (2, 4, 3), "float64", fresh), ("i", "j", "k"), ("i", "k", "j"),
...                         (2, 4, 3), "float64", fresh)
>>> print("\\n".join(str(s) for s in out.store(("i", "j", "k"), Var("v"))))
C_group_entries += 1;
>>> out.phase = "place"; print("\\n".join(str(s) for s in out.store(("i", "j", "k"), Var("v"))))
C_group_j[C_group_n] = j;
C_group_k[C_group_n] = k;
C_group_val[C_group_n] = v;
if (!C_j_seen[j]) {
    C_j_seen[j] = true;
    C_j_list[C_js_n] = j;
    C_js_n += 1;
}
C_j_count[j] += 1;
C_group_n += 1;
>>> swapped(("i", "j", "k")), swapped(("i", "j")), swapped(("i",))
(('i', 'k', 'j'), ('j', 'i'), None)
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

from ..imperative.ir import Allocate, Assign, BinOp, Comment, CompoundAssign, Const, Declare, For, If, Load, Store, Var
from ..stand_in import format_text
from .seqcfir import Forall, Stmt
from .seqoutput import output_kind
from .seqscatter import scatters
from .seqtwophase import MarkedKeys, TwoPhaseScatter, counted, placed, starts_in_place

I64 = "int64"


def _c(n) -> Const:
    return Const(int(n), I64)


def swapped(order: tuple):
    """``order`` (an output's loops, outermost first) with its two innermost loops swapped (two loops or
    more); else None."""
    return None if len(order) < 2 else (*order[:-2], order[-1], order[-2])


def sorts_groups(fmt) -> bool:
    """Whether an output of ``fmt`` whose two innermost loops run swapped is written sorted
    (:func:`group_sorted`): two modes or more, sparse, and neither scattered whole (Dense levels over
    one SparseList: :mod:`compiler.lattice.seqscatter`) nor dense (written at random).

    >>> from compiler.format import coo, csr, parse_format
    >>> [sorts_groups(f) for f in (coo(3), parse_format("csf", ndim=3), coo(), csr(), parse_format("dense", ndim=3))]
    [True, True, True, False, False]
    """
    return fmt.ndim >= 2 and output_kind(fmt) != "dense" and not scatters(fmt)


def foralls(stmt) -> list:
    """The foralls of the CIN ``stmt``, outermost first (a block's in order, a reduction's loops too)."""
    out = []

    def visit(s) -> None:
        if isinstance(s, Forall):
            out.append(s)
        for f in fields(s) if is_dataclass(s) else ():
            value = getattr(s, f.name)
            for x in value if isinstance(value, tuple) else (value,):
                if isinstance(x, Stmt):
                    visit(x)

    visit(stmt)
    return out


def loop_order(stmt) -> tuple:
    """The indices of the foralls of the CIN ``stmt``, outermost first (each once).

    >>> from compiler.lattice.sequences import Universe
    >>> from compiler.lattice.seqcfir import Block
    >>> loop_order(Forall("i", Universe(2, "i"), Forall("k", Universe(3, "k"), Block(()))))
    ('i', 'k')
    """
    return tuple(dict.fromkeys(f.index for f in foralls(stmt)))


def group_sort_note(out: str, fmt, order: tuple, why: str) -> str:
    """What the trace's ``loop-order`` step says of an output whose groups (or whole entries) are sorted.

    >>> from compiler.format import coo
    >>> print(group_sort_note("out", coo(3), ("i", "k", "j"), "π1(l_A, 3): ..."))
    out is coo, and loops in its storage order walk an input against its own (π1(l_A, 3): ...): they run i, k, j, the inputs' order, and sort each group of i before out appends it: a first pass counts each group's entries (the workspace holds the largest group's), then the loops put its entries in the workspace, counting each j's, a prefix sum gives each j's start, and each entry placed at its j's next slot orders them by j, then k (the loops reach k in increasing order: a counting sort over the j's the group has, sorted first, where a merge of the group's fibers picks each entry among a cursor per k)
    >>> print(group_sort_note("C", coo(), ("i", "k"), "..."))
    C is coo, and loops in its storage order walk an input against its own (...): they run i, k, the inputs' order, and sort the entries before C appends them: phase 1 counts each k's entries, a prefix sum gives each k's start, phase 2 places each entry at its k's next slot, which orders them by k, then i (the loops reach i in increasing order: a counting sort), and C appends them in that order
    """
    *around, minor, key = order
    head = (f"{out} is {format_text(fmt)}, and loops in its storage order walk an input against its own ({why}): "
            f"they run {', '.join(order)}, the inputs' order, and ")
    if not around:
        return (head + f"sort the entries before {out} appends them: phase 1 counts each {key}'s entries, a prefix "
                f"sum gives each {key}'s start, phase 2 places each entry at its {key}'s next slot, which orders them "
                f"by {key}, then {minor} (the loops reach {minor} in increasing order: a counting sort), and {out} "
                f"appends them in that order")
    return (head + f"sort each group of {', '.join(around)} before "
            f"{out} appends it: a first pass counts each group's entries (the workspace holds the largest group's), "
            f"then the loops put its entries in the workspace, counting each {key}'s, a prefix sum gives "
            f"each {key}'s start, and each entry placed at its {key}'s next slot orders them by {key}, then {minor} "
            f"(the loops reach {minor} in increasing order: a counting sort over the {key}'s the group has, sorted "
            f"first, where a merge of the group's fibers picks each entry among a cursor per {minor})")


class SortedOutput(TwoPhaseScatter):
    """Output ``inner`` (a :class:`~compiler.lattice.seqoutput.SeqOutput` or
    :class:`~compiler.lattice.seqassembly.SeqAssembly`) of two modes at ``indices`` (the program's, of
    extents ``shape``) whose loops run ``order``, the output's mode order swapped: the loops run twice,
    phase 1 counting each key's entries (the outer index of the output's), phase 2 placing each at its
    key's next slot in a workspace of as many; the output appends them from there, key by key."""

    def __init__(self, inner, indices: tuple, order: tuple, shape: tuple, dtype: str, fresh):
        self.inner, self.tensor, self.kind, self.notes = inner, inner.tensor, inner.kind, inner.notes
        self.indices, self.dtype, self.fresh = tuple(indices), dtype, fresh
        self.extent = dict(zip(indices, (int(n) for n in shape)))
        *_, self.minor, self.key = order
        self.keys = self.extent[self.key]
        name = inner.tensor
        self.sorted = {x: fresh(f"{name}_sorted_{x}") for x in (self.minor, "val")}
        self.count = self.next = fresh(f"{name}_{self.key}_count")
        self.phase = "count"

    def params(self) -> list:
        return self.inner.params()

    def start(self, inputs=None, rhs=None) -> list:
        return self.inner.start(inputs, rhs)

    def case(self, index: str, stmts: list) -> list:
        return stmts

    def store(self, idxs: tuple, value) -> list:
        key = Var(self.key)
        if self.phase == "count":
            return counted(self.count, key)
        slot = Var(self.fresh("slot"))
        return placed(self.count, key, slot, [Store(self.sorted[self.minor], slot, Var(self.minor)),
                                              Store(self.sorted["val"], slot, value)])

    def around(self, emit) -> list:
        return self.inner.around(lambda: super(SortedOutput, self).around(emit))

    def count_note(self) -> str:
        return f"phase 1, count: the entries of each {self.key} (the loops run out of {self.tensor}'s storage order)"

    def prefix_note(self) -> str:
        return f"each {self.key}'s start: the counts before it summed"

    def place_note(self) -> str:
        return (f"phase 2, place: each entry at its {self.key}'s next slot, by {self.key}, then {self.minor} (the "
                f"loops reach {self.minor} in increasing order)")

    def room(self, total, body: list) -> list:
        # (one element at least, as malloc asks)
        room = BinOp("+", total, _c(1))
        for x in ("val", self.minor):
            body = [Allocate(self.sorted[x], self.dtype if x == "val" else I64, room, None, body)]
        return body

    def epilogue(self) -> list:
        return self.append()

    def entry(self, q: Var) -> list:
        """The output's code appending the sorted entry at ``q`` (its key the loop's around)."""
        minor, v = Var(self.minor), Var(self.fresh("v"))
        entry = [Declare(minor, I64, Load(self.sorted[self.minor], q)),
                 Declare(v, self.dtype, Load(self.sorted["val"], q))]
        return self.inner.case(self.minor, entry + self.inner.store(self.indices, v))

    def append(self) -> list:
        """The sorted entries appended in the output's order, key by key (a count ends at its key's last slot)."""
        key, q, first = Var(self.key), Var(self.fresh("q")), Var(self.fresh("first"))
        return [Comment(f"the entries appended in {self.tensor}'s order"),
                Declare(first, I64, _c(0)),
                For(key, 0, _c(self.keys), [
                    *self.inner.case(self.key, [For(q, first, Load(self.count, key), self.entry(q))]),
                    Assign(first, Load(self.count, key))])]

    def accumulate(self, idxs: tuple, value, count: str) -> list:
        return self.inner.accumulate(idxs, value, count)

    def fold_each(self, s) -> list:
        return self.inner.fold_each(s)

    def end(self) -> list:
        return self.inner.end()


class GroupSortedOutput(SortedOutput):
    """Output ``inner`` (a :class:`~compiler.lattice.seqoutput.SeqOutput` or
    :class:`~compiler.lattice.seqassembly.SeqAssembly`) at ``indices`` (the program's, of extents
    ``shape``) whose loops run ``order``: the output's mode order with its two innermost loops
    swapped. The loops run twice (:meth:`around`): ``phase`` ``count`` finds the largest group's
    entries (a group: a coordinate of the loops around the two), the workspace's room; ``place`` puts
    each entry in the workspace, each group then sorted by the outer one of the two and appended."""

    def __init__(self, inner, indices: tuple, order: tuple, shape: tuple, dtype: str, fresh):
        super().__init__(inner, indices, order, shape, dtype, fresh)
        self.group = order[-3]
        name = inner.tensor
        # (phase 1: each group's entries counted, the workspace sized by the largest group, not its K·J block)
        self.entries, self.largest = Var(fresh(f"{name}_group_entries")), Var(fresh(f"{name}_largest_group"))
        self.n, self.listed = Var(fresh(f"{name}_group_n")), Var(fresh(f"{name}_{self.key}s_n"))
        self.work = {x: fresh(f"{name}_group_{x}") for x in (self.key, self.minor, "val")}
        # (the keys the group has, listed as first met, and the sort's scratch: compiler.imperative.sorting)
        self.seen, self.list, self.tmp, self.words, self.summary = (
            fresh(f"{name}_{self.key}_{x}") for x in ("seen", "list", "tmp", "bits", "sum"))
        self.met = MarkedKeys(self.seen, self.list, self.tmp, self.listed, self.keys, self.words, self.summary)

    def around(self, emit) -> list:
        def phases():
            first, second = self.twice(emit)
            body = [Comment(f"phase 2, place: each group's entries in the workspace, then sorted by {self.key} and "
                            f"appended"), *second]
            # (the counts and marks start at 0, and are 0 again after each group)
            arrays = [(self.count, I64, _c(self.keys), _c(0)), *self.met.arrays()] + [
                (b, self.dtype if x == "val" else I64, self.largest, None)
                for part in (self.sorted, self.work) for x, b in part.items()]
            for buf, dt, length, init in arrays:
                body = [Allocate(buf, dt, length, init, body)]
            # (one entry at least, as malloc asks)
            return [Declare(self.largest, I64, _c(1)),
                    Comment(f"phase 1, count: each group's entries, the workspace's room the largest group's (the "
                            f"loops run out of {self.tensor}'s storage order)"),
                    *first, *body]
        return self.inner.around(phases)

    def case(self, index: str, stmts: list) -> list:
        """``stmts``, the body of a loop over ``index``: a group's, its entries then sorted and appended."""
        if index in (self.key, self.minor):
            return stmts
        if self.phase == "count":
            if index != self.group:
                return stmts
            return [Declare(self.entries, I64, _c(0)), *stmts,
                    If(BinOp(">", self.entries, self.largest), [Assign(self.largest, self.entries)])]
        if index != self.group:
            return self.inner.case(index, stmts)
        return self.inner.case(index, [Declare(self.n, I64, _c(0)), Declare(self.listed, I64, _c(0)), *stmts,
                                       *self.sort(), *self.append()])

    def store(self, idxs: tuple, value) -> list:
        if self.phase == "count":
            return [CompoundAssign("+", self.entries, _c(1))]
        n, key = self.n, Var(self.key)
        return [Store(self.work[self.key], n, key), Store(self.work[self.minor], n, Var(self.minor)),
                Store(self.work["val"], n, value), *self.met.meet(key), *counted(self.count, key),
                CompoundAssign("+", n, _c(1))]

    def sort(self, first=0) -> list:
        """The group's entries, in the workspace in loop order (from ``first``), placed by their key (a
        counting sort over the keys the group has, sorted first)."""
        key, q, t = Var(self.key), Var(self.fresh("q")), Var(self.fresh("t"))
        start, c, slot, at = (Var(self.fresh(x)) for x in ("start", "c", "slot", "at"))
        return [
            Comment(f"the {self.key}s the group has, in order"),
            *self.met.sort(lambda base: Var(self.fresh(base)), self.key),
            Comment(f"each {self.key}'s start in the group: the counts before it summed"),
            *starts_in_place(self.count, key, start, c, listed=(self.list, self.listed, t)),
            Comment(f"each entry at its {self.key}'s next slot: by {self.key}, then {self.minor} (the loops "
                    f"reached {self.minor} in increasing order)"),
            For(q, first, self.n, [
                Declare(at, I64, Load(self.work[self.key], q)),
                *placed(self.count, at, slot, [Store(self.sorted[self.minor], slot, Load(self.work[self.minor], q)),
                                               Store(self.sorted["val"], slot, Load(self.work["val"], q))])])]

    def append(self) -> list:
        """The sorted group appended in the output's order, loops over its two indices as its code
        takes them; each count and mark back to 0 for the next group (a count ends at its key's last slot)."""
        key, q, t, first = Var(self.key), Var(self.fresh("q")), Var(self.fresh("t")), Var(self.fresh("first"))
        return [Comment(f"the group appended in {self.tensor}'s order; each count and mark back to 0"),
                Declare(first, I64, _c(0)),
                For(t, 0, self.listed, [
                    Declare(key, I64, Load(self.list, t)),
                    *self.inner.case(self.key, [For(q, first, Load(self.count, key), self.entry(q))]),
                    Assign(first, Load(self.count, key)),
                    Store(self.count, key, _c(0)), self.met.unmark(key)])]


def unsorted(program, out_format) -> str:
    """Why no sparse output of ``out_format`` written by ``program``'s loops takes the loops in another order
    than its mode order (the inputs' order, which its own walks an input against): ``""`` where it is dense,
    scattered (:mod:`compiler.lattice.seqscatter`) or in its natural mode order.

    >>> from compiler.format import Format, coo
    >>> from compiler.notation import parse
    >>> print(unsorted(parse("c[l, j, k] = A[l, j, k]"), Format(coo(3).root, (2, 0, 1))))
     (c is coo in mode order 2, 0, 1: its loops run k, l, j; a sort of c's entries swaps its two innermost loops, or, of 2 modes, sorts them all, or, of 3 or more, sorts every entry by k, then l, j as one int64 key, where those span at most 2**62 coordinates (compiler.lattice.seqentrysort), and no loop order it takes walks every input as stored: scattered, Dense levels over one SparseList take any order)
    """
    if out_format is None or output_kind(out_format) == "dense" or scatters(out_format) or \
            tuple(out_format.mode_order) == tuple(range(out_format.ndim)):
        return ""
    out = program.lhs.tensor
    names = [str(i) for i in program.lhs.indices]
    mine = [names[m] for m in out_format.mode_order]
    return (f" ({out} is {format_text(out_format)}: its loops run {', '.join(mine)}; a sort of {out}'s entries swaps "
            f"its two innermost loops, or, of 2 modes, sorts them all, or, of 3 or more, sorts every entry by "
            f"{mine[0]}, then {', '.join(mine[1:])} as one int64 key, where those span at most 2**62 coordinates "
            f"(compiler.lattice.seqentrysort), and no loop order it takes walks every input as stored: scattered, "
            f"Dense levels over one SparseList take any order)")


def group_sorted(inner, indices: tuple, low, dtype: str, fresh) -> SortedOutput:
    """The output ``inner`` for the lowering ``low`` (a :class:`~compiler.lattice.seqderive.SeqLowering`
    whose output loops run swapped innermost): its groups sorted (:class:`GroupSortedOutput`), or, with
    no loop around the two, its entries (:class:`SortedOutput`)."""
    order = tuple(i for i in loop_order(low.cin) if i in indices)
    kind = GroupSortedOutput if len(order) > 2 else SortedOutput
    return kind(inner, indices, order, low.shape, dtype, fresh)


__all__ = ["GroupSortedOutput", "SortedOutput", "foralls", "group_sort_note", "group_sorted", "loop_order", "sorts_groups",
           "swapped", "unsorted"]
