"""Lattice iterators of the run-length levels (RunList, SparseRunList): each run a range of coordinates with one child.

A RunList fiber ``p`` is a sequence of runs ``r`` in ``[pos[p], pos[p+1])`` that covers every
coordinate: run ``r`` holds ``[right[r-1], right[r])`` (from 0 for the fiber's first). A
SparseRunList fiber's runs hold ``[left[r], right[r])``, sorted, apart, with the fill between them.

The iterators walk each run's coordinates (coordinate iteration): the loop variable is the
coordinate itself (``pA1``), and the run holding it is kept beside it, as a block list keeps its
block (``rA1``, from ``pos[p]``; :meth:`~RunListIterator.block_sync` moves it on while the
coordinate has passed the run's end). Walked backwards (a slice with a negative step), the walk
starts at the fiber's last coordinate in its last run, ``pos[p + 1] - 1``, and moves the run down
once the coordinate is below its start (:meth:`~RunListIterator.block_sync_back`); a SparseRunList's
then jumps down over the gap to the run's last coordinate. Every coordinate's child is its run, so each reads the
run's one value. Walking coordinates rather than runs keeps the lattice as it is for every other
level: a run merges with any operand coordinate by coordinate, and its cases (present here,
absent there) are the other levels' cases, so the result is right for any operator and fill. A
SparseRunList's walk jumps over the gaps between runs: at a coordinate before its run's start it
moves on to that start, so only stored coordinates are visited.

A diagonal's coordinate ``i`` is found by bisecting the fiber's runs for the first that ends past
``i`` (stored in it for a RunList; for a SparseRunList if the run starts at or before ``i``). A
loop whose body only adds the run's value to a scalar walks the runs themselves instead, adding
each value times its run's length (:mod:`compiler.lattice.emit_runs`).

>>> from compiler.format import Format
>>> from compiler.levels import Dense, Element, RunList, SparseRunList
>>> from compiler.imperative.ir import Var
>>> from compiler.lattice.iterators import mode_iterators
>>> it = mode_iterators("A", "A", Format(Dense(RunList(Element(0.0)))))[1]
>>> [str(e) for e in it.bounds(Var("i"))], str(it.coord(Var("pA1"))), str(it.child(Var("pA1"), block=Var("rA1")))
(['0', 'A1_size'], 'pA1', 'rA1')
>>> [str(s.cond) for s in it.block_sync(Var("pA1"), Var("rA1"))]
['A1_right[rA1] <= pA1']
>>> it = mode_iterators("S", "S", Format(Dense(SparseRunList(Element(0.0)))))[1]
>>> [str(s.cond) for s in it.block_sync(Var("pS1"), Var("rS1"))]   # past the run's end; before its start
['S1_right[rS1] <= pS1', 'pS1 < S1_left[rS1]']
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import serialize
from ..imperative.ir import Assign, BinOp, CompoundAssign, Const, Declare, If, Load, Select, Var, While, and_
from ..imperative.search import lower_bound_call, seek_back_call, seek_call
from ..levels import RunList, SparseRunList
from .iterators import ModeIterator, iterated_by, register_iterator


def _next(parent):
    """``parent + 1``, folded when the parent is a constant (the root fiber)."""
    return Const(parent.value + 1, "int64") if isinstance(parent, Const) else BinOp("+", parent, 1)


@serialize.node
@dataclass(frozen=True)
class RunListIterator(ModeIterator):
    """A RunList level: its runs cover the fiber; walked coordinate by coordinate, the run kept beside."""

    #: the run holding the coordinate is kept beside it (block_start, block_sync), moved down too where the
    #: fiber is walked backwards (block_last, block_sync_back)
    keeps_block = walks_back = True
    #: a loop may walk the runs themselves (run_bounds, run_length; :mod:`.emit_runs`)
    walks_runs = True

    entered_by_search = False   # (a position in the middle needs its run found too: not built)

    def run_bounds(self, parent):
        """IR ``(first, end)`` of the runs of the fiber under ``parent``."""
        return self._runs(parent)[:2]

    def run_length(self, r, first):
        """IR of the number of coordinates of run ``r`` of a fiber whose first run is ``first``."""
        return BinOp("-", Load(self.param(self.run_end), r), self._run_start(r, first))

    def _runs(self, parent):
        """``(first, end, stored)``: the fiber's runs ``[first, end)`` and whether it has any."""
        pos = self.param(self.starts)
        first, end = Load(pos, parent), Load(pos, _next(parent))
        return first, end, BinOp("<", first, end)

    def bounds(self, parent):
        # (the runs cover [0, size); a fiber of an extent 0 has none)
        return Const(0, "int64"), Var(self.param("size"))

    def coord(self, p, parent=None, block=None):
        return p

    def block_start(self, parent):
        return Load(self.param(self.starts), parent)

    def block_sync(self, p, block) -> list:
        # runs are never empty and cover the fiber, so the coordinate is in the run it stops at;
        # while, not if: a coordinate may pass several runs at once (a split loop's next block)
        return [While(BinOp("<=", Load(self.param(self.run_end), block), p),
                      [CompoundAssign("+", block, Const(1, "int64"))])]

    def block_last(self, parent):
        return BinOp("-", self._runs(parent)[1], 1)

    def block_sync_back(self, p, block, parent) -> list:
        # runs are never empty and a walk backwards steps down one coordinate: it crosses one run's start
        # at most (the first run's, 0, never within the fiber)
        first = self._runs(parent)[0]
        return [If(and_(BinOp(">", block, first), BinOp("<", p, Load(self.param(self.run_end), BinOp("-", block, 1)))),
                   [CompoundAssign("-", block, Const(1, "int64"))])]

    def child(self, p, segend=None, parent=None, block=None):
        if block is None:
            raise AssertionError(f"{self.described}: a run's child is its run, which the emitter keeps")
        return block

    def position_of(self, i, parent):
        return i   # (the walk's positions are the coordinates)

    def seek_stmts(self, p, end, target, parent=None, block=None):
        """Gallop over the runs' ends from the cursor's run to the first that ends past ``target``;
        the cursor goes to ``target`` (no further than the fiber's end; a SparseRunList's, in the
        gap before that run, to its start).

        >>> from compiler.format import Format
        >>> from compiler.levels import Dense, Element
        >>> from compiler.lattice.iterators import mode_iterators
        >>> it = mode_iterators("A", "A", Format(Dense(RunList(Element(0.0)))))[1]
        >>> print(*it.seek_stmts(Var("pA1"), Var("pA1_end"), Var("j"), Var("i"), Var("rA1")), sep=chr(10))
        rA1 = seek(A1_right, rA1, A1_pos[i + 1], j + 1);
        pA1 = j;
        if (pA1 > pA1_end) {
            pA1 = pA1_end;
        }
        """
        runs_end = self._runs(parent)[1]
        moved = [Assign(block, seek_call(self.param(self.run_end), block, runs_end, _next(target)))]
        jump = self.enter_run(p, block)
        # (past the fiber's end there is no run to enter)
        return moved + self.seek_position(p, end, target, parent) + ([If(BinOp("<", p, end), jump)] if jump else [])

    def enter_run(self, p, block) -> list:
        """Statements moving ``p`` (in the fiber, before the end of ``block``) into ``block`` where
        it is in the gap before it: none, where the runs cover the fiber."""
        return []

    def seek_back_stmts(self, p, end, target, parent=None, block=None):
        """:meth:`seek_stmts` walking backwards: gallop down over the runs' ends from the cursor's run
        to the first that ends past ``target``; the cursor goes to ``target`` (no lower than the
        fiber's first coordinate; a SparseRunList's, in the gap before that run, to the last
        coordinate of the run before).

        >>> from compiler.format import Format
        >>> from compiler.levels import Dense, Element
        >>> from compiler.lattice.iterators import mode_iterators
        >>> it = mode_iterators("A", "A", Format(Dense(RunList(Element(0.0)))))[1]
        >>> print(*it.seek_back_stmts(Var("pA1"), Var("pA1_lo"), Var("j"), Var("i"), Var("rA1")), sep=chr(10))
        rA1 = seek_back(A1_right, rA1, A1_pos[i] - 1, j) + 1;
        pA1 = j;
        if (pA1 < pA1_lo) {
            pA1 = pA1_lo;
        }
        """
        first = self._runs(parent)[0]
        # (the cursor's run ends past the target: the search stays within the fiber)
        past = BinOp("+", seek_back_call(self.param(self.run_end), block, BinOp("-", first, 1), target), 1)
        jump = self.leave_gap_back(p, block)
        moved = [Assign(block, past)] + self.seek_position(p, end, target, parent, back=True)
        # (below the fiber's first coordinate there is no run to leave)
        return moved + ([If(BinOp(">", p, end), jump)] if jump else [])

    def leave_gap_back(self, p, block) -> list:
        """Statements moving ``p`` (in the fiber, before the end of ``block``), where it is in the gap
        before ``block``, down to the last coordinate of the run before: none, where the runs cover
        the fiber."""
        return []

    def _run_start(self, r, first):
        """IR of the first coordinate of run ``r`` of a fiber whose first run is ``first``."""
        return Select(BinOp("==", r, first), Const(0, "int64"), Load(self.param(self.run_end), BinOp("-", r, 1)))

    def search_stmts(self, q, parent, i, fresh):
        """Bisect the fiber's runs for the first that ends past ``i``: ``i`` is in it when it
        starts at or before ``i`` (always, for a RunList's runs cover the fiber)."""
        lo, end = fresh("lo"), fresh("end")
        right = self.param(self.run_end)
        first, stop, _ = self._runs(parent)
        found = and_(BinOp("<", lo, end), BinOp("<=", self._run_start(lo, first), i))
        return [Declare(end, "int64", stop),
                Declare(lo, "int64", lower_bound_call(right, first, end, BinOp("+", i, Const(1, "int64")))),
                Declare(q, "int64", Select(found, lo, Const(-1, "int64")))]

    def py_runs(self, arrays: dict, parent) -> list:
        """``[(start, stop, run), ...]`` of the fiber under ``parent``."""
        pos, right = arrays[self.param(self.starts)], arrays[self.param(self.run_end)]
        first = int(pos[parent])
        return [(0 if r == first else int(right[r - 1]), int(right[r]), r) for r in range(first, int(pos[parent + 1]))]

    def py_fiber(self, arrays: dict, sizes: dict, parent) -> list:
        return [(c, r) for start, stop, r in self.py_runs(arrays, parent) for c in range(start, stop)]


@serialize.node
@dataclass(frozen=True)
class SparseRunListIterator(RunListIterator):
    """A SparseRunList level: sorted runs apart, walked over their coordinates only."""

    #: the walk jumps the gaps between runs: the bounds' difference is no count of what it visits
    visits_every_position = False

    def bounds(self, parent):
        # from the first run's start to the last one's end (read only where the fiber has runs:
        # an empty last fiber's pos is past the arrays' end)
        first, end, stored = self._runs(parent)
        zero = Const(0, "int64")
        return (Select(stored, Load(self.param(self.run_start), first), zero),
                Select(stored, Load(self.param(self.run_end), BinOp("-", end, 1)), zero))

    def block_sync(self, p, block) -> list:
        # a coordinate in the gap before a run jumps to its start (within the bounds, a run
        # ending past the coordinate exists)
        return super().block_sync(p, block) + self.enter_run(p, block)

    def enter_run(self, p, block) -> list:
        left = Load(self.param(self.run_start), block)
        return [If(BinOp("<", p, left), [Assign(p, left)])]

    def block_sync_back(self, p, block, parent) -> list:
        # (below its run's start a coordinate is in the gap after the run before: within the fiber, there
        # is one)
        return self.leave_gap_back(p, block)

    def leave_gap_back(self, p, block) -> list:
        return [If(BinOp("<", p, Load(self.param(self.run_start), block)),
                   [CompoundAssign("-", block, Const(1, "int64")),
                    Assign(p, BinOp("-", Load(self.param(self.run_end), block), 1))])]

    def _run_start(self, r, first):
        return Load(self.param(self.run_start), r)

    def py_runs(self, arrays: dict, parent) -> list:
        pos, left, right = (arrays[self.param(k)] for k in (self.starts, self.run_start, self.run_end))
        return [(int(left[r]), int(right[r]), r) for r in range(int(pos[parent]), int(pos[parent + 1]))]


register_iterator(RunList, iterated_by(RunListIterator))
register_iterator(SparseRunList, iterated_by(SparseRunListIterator))

__all__ = ["RunListIterator", "SparseRunListIterator"]
