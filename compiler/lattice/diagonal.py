"""A diagonal's sparse level: found at the loop's coordinate, not iterated.

An access that repeats an index (``A[i, i]``) is read in the one loop over ``i``: its Dense
levels of ``i`` are located at ``i`` (``p * N + i``), and its last level is *found* at ``i`` under
the position above (located, as CSR's row; or iterated, as DCSR's, COO's or a SparseList of dense
rows', then in each case where that row is at ``i``): a Dense level by its slot, a sorted level by
bisection of its fiber (a SparseBand computes the position ``i`` would have and tests it is in the
fiber), a SparseHash by probing its table, a SparseByteMap by its table. The search gives the child
position, or ``-1`` when ``i`` is not stored, where the access reads its fill; the access is
thus read like a dense one (every ``i`` has a value), which the lattice takes it for.

>>> from compiler.format import csr
>>> from compiler.lattice.iterators import mode_iterators
>>> f = Found(mode_iterators("A", "A", csr())[1])
>>> f.label, f.described
('A1', "A's level 1 (SparseList), searched for the diagonal's coordinate")
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import StrategyError
from ..imperative.ir import Assign, BinOp, Const, Declare, If, Load, Select, Var, While, and_
from ..imperative.search import lower_bound_call
from .iterators import ModeIterator


@dataclass(frozen=True)
class Found:
    """The last level of a diagonal's access (``it``), searched for the loop's coordinate."""

    it: ModeIterator

    # the iterator's identity, as the emitter and the interpreter key parents by it
    @property
    def name(self) -> str:
        return self.it.name

    @property
    def tensor(self) -> str:
        return self.it.tensor

    @property
    def mode(self) -> int:
        return self.it.mode

    @property
    def level(self) -> int:
        return self.it.level

    @property
    def label(self) -> str:
        return self.it.label

    @property
    def described(self) -> str:
        return f"{self.it.described}, searched for the diagonal's coordinate"

    def param(self, kind: str) -> str:
        return self.it.param(kind)

    def find_stmts(self, q: Var, parent, i, fresh, cap) -> list:
        """Statements declaring ``q``: the position of coordinate ``i`` in the fiber under ``parent``,
        or -1 if it is not stored. ``cap`` is a SparseHash's capacity (else unused)."""
        it = self.it
        if it.located_by_coordinate:   # a Dense last level (under a sparse one): its slot, always stored
            return [Declare(q, "int64", it.locate(parent, i))]
        if it.locatable:   # its table: the located child, kept where the table says it is stored
            at = fresh("at")
            return it.locate_stmts(at, parent, i, fresh, cap) + \
                [Declare(q, "int64", Select(it.present(at), at, Const(-1, "int64")))]
        searched = it.search_stmts(q, parent, i, fresh)
        if searched is not None:   # the level's own search (a block list's, over its blocks)
            return searched
        first, stop = it.bounds(parent)
        computed = it.position_of(i, parent)
        if computed is not None:   # the position i would have, stored if within the fiber's
            at = fresh("at")
            return [Declare(at, "int64", computed),
                    Declare(q, "int64", Select(and_(BinOp("<=", first, at), BinOp("<", at, stop)),
                                               at, Const(-1, "int64")))]
        # a sorted fiber: bisect for the first position whose coordinate is at least i
        lo, hi, end, mid = fresh("lo"), fresh("hi"), fresh("end"), fresh("mid")
        one = Const(1, "int64")
        hit = Declare(q, "int64", Select(and_(BinOp("<", lo, end), BinOp("==", it.coord(lo, parent), i)),
                                         lo, Const(-1, "int64")))
        probe = it.coord(mid, parent)
        if isinstance(probe, Load) and probe.index == mid:   # its coordinates are an array: the helper bisects it
            return [Declare(end, "int64", stop), Declare(lo, "int64", lower_bound_call(probe.buffer, first, end, i)), hit]
        return [Declare(lo, "int64", first), Declare(end, "int64", stop), Declare(hi, "int64", end),
                While(BinOp("<", lo, hi),
                      [Declare(mid, "int64", BinOp("+", lo, BinOp("/", BinOp("-", hi, lo), Const(2, "int64")))),
                       If(BinOp("<", probe, i), [Assign(lo, BinOp("+", mid, one))], [Assign(hi, mid)])]),
                hit]

    def py_find(self, arrays: dict, sizes: dict, parent, i: int) -> int:
        """The interpreter's search: the child position of ``i`` under ``parent``, or -1."""
        if self.it.located_by_coordinate:
            return parent * sizes[self.it.param("size")] + i
        for c, child in self.it.py_fiber(arrays, sizes, parent):
            if c == i:
                return child
        return -1


def found(it, acc) -> Found:
    """``it``, the sparse last level of the diagonal access ``acc``, as searched for the loop's coordinate;
    a level that cannot be searched for one coordinate (not unique, or a SparseCOO's) is refused.

    >>> from compiler.format import csr
    >>> from compiler.lattice.iterators import mode_iterators
    >>> from compiler.notation import parse
    >>> found(mode_iterators("A", "A", csr())[1], parse("y[i] = A[i, i]").rhs).label
    'A1'
    """
    if not isinstance(it, ModeIterator) or not it.unique:
        raise StrategyError(f"{acc} repeats an index (a diagonal): the lattice strategy searches "
                            f"{it.described} for it, which needs a level of unique coordinates; "
                            f"use strategy='looplets'")
    return Found(it)


__all__ = ["Found", "found"]
