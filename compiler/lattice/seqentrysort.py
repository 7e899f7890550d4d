"""A sparse output of three or more modes whose loops run in any order other than its storage order, every
entry sorted before it is appended (issue 30): bucketed by the first stored mode, each bucket sorted by the
others.

``c[l, j, k] = concat((A[m, j, k], B[n, j, k]), (m, n) -> l)`` of row-major parts into a COO or CSF stored
``k, l, j`` (mode order 2, 0, 1; numpy's ``permute_dims(concat([a, b]), (2, 0, 1))``): loops in that order walk
the parts against their storage order, and swapping the two innermost (:mod:`compiler.lattice.seqgroupsort`)
does not give the parts' order ``l, j, k``. So the loops run in the parts' order, and the entries are sorted
as a sum's terms are (:class:`~compiler.lattice.seqsumsort.SortedTerms`, the same code): phase 1 counts each
``k``'s entries, a prefix sum gives the buckets' starts, phase 2 places each entry's other stored coordinates,
linearized into one key ``l · J + j``, and its value at its ``k``'s next slot
(:class:`~compiler.lattice.seqtwophase.TwoPhaseScatter`); then each bucket is sorted by key
(:func:`~compiler.imperative.sorting.merge_sort_pairs_ir`, a natural merge sort: a bucket the loops filled in
key order, as ``l, j`` here, is one run, scanned once) and walked as nested runs of equal coordinates, the
output appending each entry with its own code as from loops in its order (a COO's coordinates; a CSF's ``pos``
and ``crd`` per level: :mod:`compiler.lattice.seqassembly`). An assignment's loops visit each coordinate of
its output once (a concatenation's parts cover disjoint ranges; a split's group straddling them has each half
at other minor coordinates), so no two entries share a key and each run of the last coordinate is one entry:
it is appended as it is, not summed (a sum would turn ``-0.0`` into ``0.0``). Memory: the entries (twice, the
sort's scratch) and the first stored mode's starts; time: two passes of the loops and a sort of each bucket.

The same sort holds a split's groups straddling a concatenation's parts (each part's loop writes its half of
a group) for an output of four or more modes, or one storing the split's major index third, where the group
buffer of :mod:`compiler.lattice.seqstraddlesort` does not reach: the loops run in the output's order, and
the buckets take each half where it comes.

>>> from compiler.format import Format, coo
>>> from compiler.names import FreshNames
>>> from compiler.lattice.seqoutput import SeqOutput
>>> fresh = FreshNames({"l", "j", "k"})
>>> fmt = Format(coo(3).root, (2, 0, 1))
>>> out = SortedEntries(SeqOutput("c", fmt, (4, 5, 3), "float64", fresh), fmt, ("l", "j", "k"), (5, 3, 4),
...                     "float64", fresh)
>>> print(out.store(("l", "j", "k"), Var("x"))[0])
c_next[k] += 1;
>>> out.phase = "place"; print("\\n".join(str(s) for s in out.store(("l", "j", "k"), Var("x"))))
int64 t = c_next[k];
c_terms_key[t] = l * 3 + j;
c_terms_val[t] = x;
c_next[k] = t + 1;
"""

from __future__ import annotations

from dataclasses import replace
from itertools import permutations

from ..errors import StrategyError
from ..imperative.ir import CompoundAssign, Const, Declare, Load, Var
from ..stand_in import format_text
from ..trace import Trace
from .seqderive import seq_lower
from .seqscatter import scatters
from .sequences import SequenceError
from .seqstride import searched
from .seqsumsort import SortedSums, sorts_sums, unsorted

I64 = "int64"
#: at most this many output modes have their every loop order tried (5! orders) for one that walks the inputs as
#: stored; more try the program's own order only
MOST_LOOPS = 5


def sorts_entries(fmt, shape: tuple) -> bool:
    """Whether an output of ``fmt`` (of extents ``shape``, in the program's order) takes its entries in any
    order through :class:`SortedEntries`: a sparse output of three or more modes, appended or assembled by the
    sequence emitter (not scattered: Dense levels over one SparseList take any order themselves), whose modes
    after the first span an int64 key.

    >>> from compiler.format import coo, csf, csr, dense
    >>> [sorts_entries(f, (2, 3, 4)) for f in (coo(3), csf(3), dense(3))], sorts_entries(csr(), (2, 3))
    ([True, True, False], False)
    >>> sorts_entries(coo(3), (2, 2 ** 40, 2 ** 40))
    False
    """
    return sorts_sums(fmt) and not scatters(fmt) and not unsorted("", fmt, shape)


class SortedEntries(SortedSums):
    """Output ``inner`` (a :class:`~compiler.lattice.seqoutput.SeqOutput` or
    :class:`~compiler.lattice.seqassembly.SeqAssembly`) of ``fmt``, at ``indices`` (the program's, of extents
    ``shape``), whose loops run in another order than its storage order: each entry into its first stored
    mode's bucket with the others as its key (:class:`~compiler.lattice.seqsumsort.SortedTerms`), each bucket
    then sorted and appended, one entry per key."""

    def store(self, idxs: tuple, value) -> list:
        return self.accumulate(idxs, value, "")

    def summed(self, p: Var, hi: Var, key: Var) -> list:
        """The entry of ``key`` (at ``p``, its key's only one) kept as it is."""
        v = Var(self.fresh("v"))
        return [Declare(v, self.dtype, Load(self.terms.val, p)), CompoundAssign("+", p, Const(1, I64)),
                *self.entry(v)]

    def count_note(self) -> str:
        return (f"phase 1, count: each entry counts in its {self.row}'s {self.next}[{self.row}] (the loops run out "
                f"of {self.tensor}'s storage order)")

    def place_note(self) -> str:
        return (f"phase 2, place: each entry's key ({', '.join(self.rest)} linearized) and value at its {self.row}'s "
                f"next slot")

    def sorted_note(self) -> str:
        return (f"each {self.row}'s entries sorted by key (one per key: the loops visit each coordinate once), "
                f"then appended to {self.tensor} in its order")


def entry_sort_note(out: str, fmt, stored: tuple, order: tuple, why: str) -> str:
    """What the trace says of output ``out`` of ``fmt``, its indices ``stored`` in storage order, whose loops
    run ``order`` (``why``: why not in its own), every entry sorted before it is appended.

    >>> from compiler.format import Format, coo
    >>> print(entry_sort_note("c", Format(coo(3).root, (2, 0, 1)), ("k", "l", "j"), ("l", "j", "k"), "A[m, j, k]: ..."))
    c is coo in mode order 2, 0, 1, and loops in its storage order do not walk the inputs as stored (A[m, j, k]: ...): they run l, j, k, the inputs' order, and sort every entry before c appends it: phase 1 counts each k's entries, a prefix sum gives each k's start, phase 2 places each entry at its k's next slot with l, j as one key, then each k's entries are sorted by key (a natural merge sort: a bucket the loops filled in key order is scanned once) and appended level by level; memory: the entries twice and k's starts
    """
    first, *rest = stored
    return (f"{out} is {format_text(fmt)}, and loops in its storage order do not walk the inputs as stored ({why}): "
            f"they run {', '.join(order)}, the inputs' order, and sort every entry before {out} appends it: phase 1 "
            f"counts each {first}'s entries, a prefix sum gives each {first}'s start, phase 2 places each entry at "
            f"its {first}'s next slot with {', '.join(rest)} as one key, then each {first}'s entries are sorted by key "
            f"(a natural merge sort: a bucket the loops filled in key order is scanned once) and appended level by "
            f"level; memory: the entries twice and {first}'s starts")


def entry_sorting(program, inputs: dict, out_format, fill, shape: tuple, why: str):
    """``(lowering, note, data)``: ``program`` lowered with its loops in an order that walks every input (of
    ``inputs``, name -> :class:`~compiler.lattice.seqderive.ShapedFormat`) as stored, its output of ``out_format``
    (of extents ``shape``) taking every entry sorted (``assembly`` ``sort``: :class:`SortedEntries`), where the
    loops in its own order walk an input against its storage order (``why``); the program's own order is tried
    first, then the others. None where the output cannot be sorted so (:func:`sorts_entries`) or no order walks
    every input as stored.

    >>> import numpy as np, compiler as ss
    >>> from compiler.format import Format
    >>> from compiler.lattice.seqderive import ShapedFormat
    >>> prog = ss.parse("c[l, j, k] = concat((A[m, j, k], B[n, j, k]), (m, n) -> l)")
    >>> A = ShapedFormat(ss.parse_format("csf", ndim=3), (2, 3, 4))
    >>> fmt = Format(ss.parse_format("coo", ndim=3).root, (2, 0, 1))
    >>> low, note, data = entry_sorting(prog, {"A": A, "B": A}, fmt, 0.0, (4, 3, 4), "...")
    >>> low.assembly, data
    ('sort', {'order': [0, 1, 2]})
    """
    if out_format is None or not sorts_entries(out_format, shape):
        return None
    names = tuple(str(i) for i in program.lhs.indices)
    stored = tuple(names[m] for m in out_format.mode_order)
    orders = [names] + ([o for o in permutations(names) if o != names] if len(names) <= MOST_LOOPS else [])
    for order in orders:
        if order == stored:
            continue    # (the output's own order: the one refused)
        try:
            low = seq_lower(program, trace=Trace(), loop_order=tuple(names.index(i) for i in order),
                            result_fill=fill, **inputs)
        except (StrategyError, SequenceError):
            continue
        if searched(low.cin):
            continue    # (another order is tried to walk, not to search each group of a split)
        note = entry_sort_note(program.lhs.tensor, out_format, stored, order, why)
        return replace(low, assembly="sort"), note, {"order": [names.index(i) for i in order]}
    return None


__all__ = ["MOST_LOOPS", "SortedEntries", "entry_sort_note", "entry_sorting", "sorts_entries"]
