"""The two-phase scatter of the sequence lowering's outputs (issue 30): count, prefix sum, place.

Loops that reach entries out of the order they must be stored in run twice. Phase 1 counts each
key's entries in ``next[key]``; a prefix sum turns the counts into each key's first slot; phase 2
stores each entry at its key's next slot and moves that slot on. The loops reach a key's entries
in their order, so each key's stay in it (a counting sort). :class:`TwoPhaseScatter` holds the
mechanism; what each slot stores, the prefix sum's form, where the slots' room comes from and
what runs after phase 2 are its subclasses' (:class:`~compiler.lattice.seqscatter.ScatteredOutput`
builds a CSC in place, :class:`~compiler.lattice.seqgroupsort.SortedOutput` sorts a split's entries
for a COO, :class:`~compiler.lattice.seqsumscatter.BucketedSums` buckets a sum's terms by row;
:class:`~compiler.lattice.seqgroupsort.GroupSortedOutput` runs the loops twice too, phase 1 counting
each group's entries, the room of its workspace).

:class:`MarkedKeys` is the other piece those outputs share: the keys a workspace meets, marked
and listed as first met, then sorted.

>>> from compiler.imperative.ir import Var
>>> print("\\n".join(str(s) for s in placed("C_next", Var("j"), Var("q"), [Store("C_val", Var("q"), Var("v"))])))
int64 q = C_next[j];
C_val[q] = v;
C_next[j] = q + 1;
"""

from __future__ import annotations

from dataclasses import dataclass

from ..imperative.ir import (Allocate, BinOp, Comment, CompoundAssign, Const, Declare, Expr, For, If, Load, Store,
                             UnOp, Var)
from ..imperative.sorting import bit_sort_words, sort_coordinates_ir

I64 = "int64"


def _c(n) -> Const:
    return Const(int(n), I64)


def size_of(n) -> Expr:
    """A count or extent as an int64 expression: a known one (an int, as a sequence kernel's shapes are) a
    literal, one the kernel reads as it runs (an Expr: an output's extent parameter) as it is.

    >>> print(size_of(3), size_of(Var("c0_size")))
    3 c0_size
    """
    return n if isinstance(n, Expr) else _c(n)


def counted(next_: str, key: Expr) -> list:
    """Phase 1's code for an entry of ``key``: its count in ``next_`` one more.

    >>> print(counted("C_next", Var("j"))[0])
    C_next[j] += 1;
    """
    return [Store(next_, key, _c(1), "+")]


def placed(next_: str, key: Expr, slot: Var, payload: list) -> list:
    """Phase 2's code for an entry of ``key``: ``slot`` (declared here) its key's next slot in ``next_``,
    ``payload`` storing the entry there, and the next slot one further (example: the module's)."""
    return [Declare(slot, I64, Load(next_, key)), *payload, Store(next_, key, BinOp("+", slot, _c(1)))]


def starts_in_place(next_: str, key: Var, start: Var, c: Var, keys=None, listed=None, also=()) -> list:
    """The prefix sum turning each key's count in ``next_`` into its first slot, in place; ``start``
    ends as the total. The keys run ``0 .. keys``, or, with ``listed`` (a list buffer, its length and
    the loop's Var: the keys in order), the listed ones, ``key`` declared from the list; ``also``: statements
    after each key's (its count in ``c``).

    >>> print("\\n".join(str(s) for s in starts_in_place("n", Var("k"), Var("s"), Var("c"), keys=_c(3))))
    int64 s = 0;
    for (int64 k = 0; k < 3; k++) {
        int64 c = n[k];
        n[k] = s;
        s += c;
    }
    """
    step = [Declare(c, I64, Load(next_, key)), Store(next_, key, start), CompoundAssign("+", start, c), *also]
    if listed is None:
        loop = For(key, 0, keys, step)
    else:
        buf, n, t = listed
        loop = For(t, 0, n, [Declare(key, I64, Load(buf, t)), *step])
    return [Declare(start, I64, _c(0)), loop]


class TwoPhaseScatter:
    """The loops emitted twice (:meth:`around`): ``phase`` ``count`` then ``place``, each entry
    counted in ``next[key]`` (``self.next``, ``self.keys`` of them) then stored at its key's next
    slot. A subclass gives the words of the comments (:meth:`count_note`, :meth:`prefix_note`,
    :meth:`place_note`), the prefix sum (:meth:`prefix_sum`), the room of the slots (:meth:`room`),
    what runs after phase 2 (:meth:`epilogue`) and scratch around it all (:meth:`scratch`)."""

    phase = "count"

    def twice(self, emit) -> tuple:
        """The loops (``emit()``'s code) for phase 1, then for phase 2."""
        self.phase = "count"
        first = emit()
        # (phase 2 runs the loops again with the cursors phase 1 declared: each series of loops starts them anew)
        self.phase = "place"
        return first, emit()

    def around(self, emit) -> list:
        first, second = self.twice(emit)
        prefix, total = self.prefix_sum()
        body = [Comment(self.count_note()), *first, Comment(self.prefix_note()), *prefix,
                *self.room(total, [Comment(self.place_note()), *second, *self.epilogue()])]
        return [Allocate(self.next, I64, size_of(self.keys), _c(0), self.scratch(body))]

    def prefix_sum(self) -> tuple:
        """The statements turning each key's count into its first slot, and the total count (an Expr)."""
        start, c = Var(self.fresh("start")), Var(self.fresh("c"))
        return starts_in_place(self.next, Var(self.key), start, c, keys=size_of(self.keys)), start

    def room(self, total, body: list) -> list:
        """``body`` (phase 2 and the epilogue) with room for ``total`` entries."""
        return body

    def epilogue(self) -> list:
        """What runs after phase 2."""
        return []

    def scratch(self, body: list) -> list:
        """``body`` (the phases) inside any scratch arrays they need besides ``next``."""
        return body


@dataclass(frozen=True)
class MarkedKeys:
    """The keys a workspace over ``[0, extent)`` meets: ``mark[key]`` set and the key appended to
    ``list`` (``n`` of them) the first time, the list then sorted (``tmp`` its scratch, ``words`` and
    ``summary`` the bit sort's, or None: :func:`~compiler.imperative.sorting.sort_coordinates_ir`).

    >>> keys = MarkedKeys("seen", "keys", "keys_tmp", Var("n"), 8)
    >>> print(keys.meet(Var("j"))[0])
    if (!seen[j]) {
        seen[j] = true;
        keys[n] = j;
        n += 1;
    }
    """

    mark: str
    list: str
    tmp: str
    n: Var
    extent: int
    words: str | None = None
    summary: str | None = None

    def meet(self, key: Var) -> list:
        """``key`` marked and listed, unless it was."""
        return [If(UnOp("!", Load(self.mark, key)), [Store(self.mark, key, Const(True, "bool")),
                                                     Store(self.list, self.n, key),
                                                     CompoundAssign("+", self.n, _c(1))])]

    def sort(self, fresh, index: str) -> list:
        """The list sorted (``fresh(base)`` a fresh Var, ``index`` the scan's loop name)."""
        return sort_coordinates_ir(self.list, self.tmp, self.n, _c(self.extent), self.mark, fresh, index,
                                   self.words, self.summary)

    def unmark(self, key: Var) -> Store:
        """``key``'s mark cleared, for the next time the workspace fills."""
        return Store(self.mark, key, Const(False, "bool"))

    def arrays(self) -> list:
        """The arrays (buffer, dtype, length, init) of the marks, the list and the sort's scratch (the
        bit sort's words start at 0, and are 0 again after each sort)."""
        out = [(self.mark, "bool", _c(self.extent), Const(False, "bool")), (self.list, I64, _c(self.extent), None),
               (self.tmp, I64, _c(self.extent), None)]
        if self.words is not None:
            words, summary = bit_sort_words(_c(self.extent))
            out += [(self.words, I64, words, _c(0)), (self.summary, I64, summary, _c(0))]
        return out


__all__ = ["MarkedKeys", "TwoPhaseScatter", "counted", "placed", "size_of", "starts_in_place"]
