"""A split's groups straddling a concatenation's parts, held across the parts before the output appends
them (issue 30): a COO, CSF or DCSR of ``split(concat((A[m, j], B[n, j]), (m, n) -> l), l -> (i:3, k:2))``.

The loops over a concatenation run once per part (:mod:`compiler.lattice.seqstraddle`), so a group
straddling the parts (group ``i = 1``: A's row 2 at ``k = 0``, B's row 0 at ``k = 1``) is visited twice,
A's loop writing its half, B's loop the rest. An output appended in its storage order cannot take the
halves one after the other: stored ``i, j, k``, A's half brings ``(1, j, 0)`` for every ``j`` before B's
``(1, 0, 1)``; a DCSR or CSF would append the coordinate ``i = 1`` once per part. So the group buffer
spans the parts: the loops run twice, phase 1 counting each group's entries (a group: a coordinate of the
output's outermost index, the split's major one), a prefix sum giving each group's first slot in one
workspace, phase 2 placing each entry at its group's next slot. A group's entries stay in the order the
loops reach them, A's half before B's. Then each group in turn is sorted by its second stored index (the
group sort of :mod:`compiler.lattice.seqgroupsort`: the keys it has, listed and sorted, a counting sort
over them, stable, so each key's entries stay in the order of the third) and appended with the output's
own code. With two modes each group's entries need no sort: the output appends them group by group
(:class:`~compiler.lattice.seqgroupsort.SortedOutput`, whose key is the group).

Only the straddling groups need the buffer; every group goes through it, so one copy of the sort code
serves every part, and a group the second part's loop never reaches (a sparse part skipping its rows)
is appended all the same (holding only the straddling group, a group the second part skips would need
the sort's code again to append the held half). The cost is a workspace of all the entries, where the
group sort of one part holds the largest group's, in cache: on 2000-column CSR parts of 2001 and 1999
rows, 1% (``benchmarks/bench_straddle.py``), 2.7 ms into a COO where parts of 2000 rows each, sorted a
group at a time, take 1.7 ms; scipy's vstack and lexsort 9.8 ms, the looplets' kernel 43 ms.

An output of four modes or more, or one storing the split's major index third, would need the group sorted
by more than one index: its every entry is sorted instead (:mod:`compiler.lattice.seqentrysort`: bucketed by
the first stored index, each bucket sorted by the others as one key), the loops in its order, each part's
half of a group placed in its bucket where the part's loop reaches it.

>>> from compiler.format import coo
>>> from compiler.names import FreshNames
>>> from compiler.lattice.seqoutput import SeqOutput
>>> fresh = FreshNames({"i", "j", "k"})
>>> out = SpanningGroupSortedOutput(SeqOutput("C", coo(3), (2, 4, 3), "float64", fresh), ("i", "j", "k"),
...                                 ("i", "k", "j"), (2, 4, 3), "float64", fresh)
>>> print("\\n".join(str(s) for s in out.store(("i", "j", "k"), Var("v"))))
C_i_next[i] += 1;
>>> out.phase = "place"; print("\\n".join(str(s) for s in out.store(("i", "j", "k"), Var("v"))))
int64 slot = C_i_next[i];
C_group_j[slot] = j;
C_group_k[slot] = k;
C_group_val[slot] = v;
C_i_next[i] = slot + 1;
"""

from __future__ import annotations

from dataclasses import replace

from ..imperative.ir import Allocate, Assign, BinOp, Comment, Declare, For, If, Load, Store, Var, const
from ..stand_in import format_text
from .seqentrysort import sorts_entries
from .seqgroupsort import GroupSortedOutput, SortedOutput, loop_order, swapped
from .seqoutput import output_kind
from .seqscatter import scatters
from .seqstraddle import straddled_groups
from .seqtwophase import counted, placed, starts_in_place

I64 = "int64"


class SpanningGroupSortedOutput(GroupSortedOutput):
    """Output ``inner`` of three modes at ``indices`` (the program's, of extents ``shape``), its groups
    (coordinates of ``order[0]``, its outermost stored index) held across a concatenation's parts:
    ``order`` is its storage order with the two innermost swapped, as a
    :class:`~compiler.lattice.seqgroupsort.GroupSortedOutput`'s loops run. The loops run twice
    (:meth:`around`), phase 1 counting each group's entries, phase 2 placing each at its group's next
    slot of one workspace; then each group is sorted by ``order[2]`` and appended."""

    def __init__(self, inner, indices: tuple, order: tuple, shape: tuple, dtype: str, fresh):
        super().__init__(inner, indices, order, shape, dtype, fresh)
        self.groups = self.extent[self.group]
        self.group_next = fresh(f"{inner.tensor}_{self.group}_next")

    def around(self, emit) -> list:
        first, second = self.twice(emit)
        start, c = Var(self.fresh("start")), Var(self.fresh("c"))
        # (the sorted group's room: the largest group's entries)
        largest = [If(BinOp(">", c, self.largest), [Assign(self.largest, c)])]
        prefix = starts_in_place(self.group_next, Var(self.group), start, c, keys=const(self.groups), also=largest)
        body = [Comment(f"phase 2, place: each entry at its {self.group}'s next slot, the first part's half of a "
                        f"straddling group before the second's"), *second, *self.each_group()]
        arrays = [(self.count, I64, const(self.keys), const(0)), *self.met.arrays()] + [
            (self.sorted[x], self.dtype if x == "val" else I64, self.largest, None) for x in self.sorted] + [
            (self.work[x], self.dtype if x == "val" else I64, start, None) for x in self.work]
        for buf, dt, length, init in arrays:
            body = [Allocate(buf, dt, length, init, body)]
        # (one entry at least, as malloc asks)
        return self.inner.around(lambda: [Allocate(self.group_next, I64, const(self.groups), const(0), [
            Declare(self.largest, I64, const(1)),
            Comment(f"phase 1, count: each {self.group}'s entries (a group of {self.group}'s split may straddle the "
                    f"concatenation's parts, each part's loop reaching its half)"),
            *first,
            Comment(f"each {self.group}'s first slot: the counts before it summed; the largest count, the sorted "
                    f"group's room"),
            *prefix, *body])])

    def case(self, index: str, stmts: list) -> list:
        return stmts    # (the groups are sorted and appended after the loops: each_group)

    def store(self, idxs: tuple, value) -> list:
        group = Var(self.group)
        if self.phase == "count":
            return counted(self.group_next, group)
        slot = Var(self.fresh("slot"))
        return placed(self.group_next, group, slot, [Store(self.work[x], slot, v) for x, v in (
            (self.key, Var(self.key)), (self.minor, Var(self.minor)), ("val", value))])

    def each_group(self) -> list:
        """Each group's entries (from ``first`` to its next slot, which phase 2 left at its end) sorted by
        the key and appended, group by group, in the output's order."""
        key, q, first = Var(self.key), Var(self.fresh("q")), Var(self.fresh("first"))
        group = Var(self.group)
        listed = [Declare(self.n, I64, Load(self.group_next, group)), Declare(self.listed, I64, const(0)),
                  For(q, first, self.n, [Declare(key, I64, Load(self.work[self.key], q)), *self.met.meet(key),
                                         *counted(self.count, key)])]
        return [Comment(f"each {self.group}'s entries sorted by {self.key} and appended in {self.tensor}'s order"),
                Declare(first, I64, const(0)),
                For(group, 0, const(self.groups), [
                    *self.inner.case(self.group, [*listed, *self.sort(first), *self.append()]),
                    Assign(first, Load(self.group_next, group))])]


def straddle_sorted(inner, indices: tuple, fmt, low, dtype: str, fresh):
    """The output ``inner`` (of ``fmt``, at ``indices``) of the lowering ``low`` whose groups of ``major`` (a
    split's major index, stored first or second) straddle a concatenation's parts, held across them:
    stored first, :class:`SpanningGroupSortedOutput`, or, of two modes, a
    :class:`~compiler.lattice.seqgroupsort.SortedOutput` keyed by ``major``; stored second, a
    :class:`~compiler.lattice.seqgroupsort.GroupSortedOutput` whose groups, of the index stored first, run
    around both parts' loops, each sorted by ``major``."""
    order = swapped(tuple(indices[m] for m in fmt.mode_order))
    major = held_major(low, order)
    kind = SortedOutput if len(order) == 2 else SpanningGroupSortedOutput if order[0] == major else \
        GroupSortedOutput
    return kind(inner, indices, order, low.shape, dtype, fresh)


def straddle_sorting(program, low, fmt, why: str):
    """``(lowering, note)``: ``low`` (of ``program``, refused ``why`` by
    :func:`~compiler.lattice.seqstraddle.straddle_refusal`) writing its output of ``fmt`` through a group
    buffer spanning the concatenation's parts (``straddle-sort``), where it can: a sparse output of two or
    three modes, appended (not scattered), the straddled groups' index stored first (or second of three: the
    loop over the first runs around both parts' loops); else, of four modes or more or the index stored third,
    its every entry sorted (``sort``: :mod:`compiler.lattice.seqentrysort`), where its modes after the first
    span an int64 key. Else None.

    >>> import numpy as np, compiler as ss
    >>> A = ss.Tensor.from_numpy(np.arange(1.0, 7.0).reshape(3, 2), "csr")
    >>> prog = "out[i, j, k] = split(concat((A[m, j], B[n, j]), (m, n) -> l), l -> (i:3, k:2))"
    >>> k = ss.lower(prog, strategy="lattice", A=A, B=A, out=ss.parse_format("csf", ndim=3))
    >>> k.trace.find("straddle")[0].note.split("; ")[-1][:59]
    'out, csf, holds each group of i across the parts: phase 1 c'
    >>> k(A=A, B=A).to_numpy()[1].tolist()      # (A's row 2 at k = 0, B's row 0 at k = 1)
    [[5.0, 1.0], [6.0, 2.0]]
    """
    if fmt is None or low.assembly not in ("", "group-sort"):
        return None
    stored = tuple(str(program.lhs.indices[m]) for m in fmt.mode_order)
    major = held_major(low, stored)
    if len(stored) in (2, 3) and output_kind(fmt) != "dense" and not scatters(fmt) and major is not None and \
            stored.index(major) <= len(stored) - 2:
        return replace(low, assembly="straddle-sort"), straddle_sorting_note(program.lhs.tensor, fmt, stored, major,
                                                                             why)
    if sorts_entries(fmt, low.shape):
        # (four modes or more, or the major index stored third: every entry sorted, the halves met in their buckets)
        order = tuple(i for i in loop_order(low.cin) if i in stored)
        return replace(low, assembly="sort"), straddle_entry_note(program.lhs.tensor, fmt, stored, order, why)
    return None


def straddle_entry_note(out: str, fmt, stored: tuple, order: tuple, why: str) -> str:
    """What the trace's ``straddle`` step says of output ``out`` of ``fmt``, stored ``stored``, its loops running
    ``order``, whose every entry is sorted (:mod:`compiler.lattice.seqentrysort`) to take the halves of the groups
    straddling a concatenation's parts (``why``: the refusal it answers).

    >>> from compiler.format import coo
    >>> print(straddle_entry_note("out", coo(4), ("i", "j", "k", "x"), ("i", "j", "k", "x"), "(why)"))
    (why); out, coo, sorts every entry instead, its loops running i, j, k, x: phase 1 counts each i's entries, a prefix sum gives each i's start, phase 2 places each entry at its i's next slot with j, k, x as one key (each part's half of a straddling group where its loop reaches it), then each i's entries are sorted by key and appended level by level
    """
    first, *rest = stored
    return (f"{why}; {out}, {format_text(fmt)}, sorts every entry instead, its loops running {', '.join(order)}: "
            f"phase 1 counts each {first}'s entries, a prefix sum gives each {first}'s start, phase 2 places each "
            f"entry at its {first}'s next slot with {', '.join(rest)} as one key (each part's half of a straddling "
            f"group where its loop reaches it), then each {first}'s entries are sorted by key and appended level by "
            f"level")


def held_major(low, stored):
    """The major index of the splits in the lowering ``low`` whose groups straddle a concatenation's parts,
    where the output stores both the major and the minor index (``stored``, its indices); None where there are
    none, or several."""
    majors = {major for major, minor, *_ in straddled_groups(low.cin) if major in stored and minor in stored}
    return next(iter(majors)) if len(majors) == 1 else None


def straddle_sorting_note(out: str, fmt, stored: tuple, major: str, why: str) -> str:
    """What the trace's ``straddle`` step says of output ``out`` of ``fmt``, stored ``stored``, whose groups
    of ``major`` are held across a concatenation's parts (``why``: the refusal it answers).

    >>> from compiler.format import csf
    >>> print(straddle_sorting_note("out", csf(), ("j", "i", "k"), "i", "(why)"))
    (why); out, csf, sorts each group of j, whose loop runs around both parts' loops, by i, then k, before out appends it (a first pass counts each group's entries, the workspace's room)
    >>> print(straddle_sorting_note("out", csf(), ("i", "j", "k"), "i", "(why)"))
    (why); out, csf, holds each group of i across the parts: phase 1 counts each i's entries, a prefix sum gives each i's first slot in one workspace, phase 2 places each entry at its i's next slot (the first part's half of a straddling group before the second's), then each group is sorted by j, then k, and appended
    """
    group, *rest = stored
    if group != major:
        return (f"{why}; {out}, {format_text(fmt)}, sorts each group of {group}, whose loop runs around both parts' "
                f"loops, by {major}, then {rest[1]}, before {out} appends it (a first pass counts each group's "
                f"entries, the workspace's room)")
    then = f"each group is sorted by {rest[0]}, then {rest[1]}, and appended" if len(rest) == 2 else \
        f"{out} appends each group's entries, in order of {rest[0]}"
    return (f"{why}; {out}, {format_text(fmt)}, holds each group of {group} across the parts: phase 1 counts each "
            f"{group}'s entries, a prefix sum gives each {group}'s first slot in one workspace, phase 2 places each "
            f"entry at its {group}'s next slot (the first part's half of a straddling group before the second's), "
            f"then {then}")


__all__ = ["SpanningGroupSortedOutput", "held_major", "straddle_entry_note", "straddle_sorted", "straddle_sorting",
           "straddle_sorting_note"]
