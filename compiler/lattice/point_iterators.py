"""Lattice iterators of the levels that store at most one entry or run per fiber (SparsePoint, SparseInterval).

A SparsePoint level is stored as a SparseList is, ``pos`` and ``idx``, with at most one
coordinate per fiber: ``idx[pos[p]]`` when ``pos[p+1] - pos[p] == 1``. It declares itself
compressed, so its iterator is a SparseList's (:func:`~compiler.lattice.iterators.level_iterators`:
sorted, unique, it merges, gallops and is bisected for a diagonal as one), and only says its own
name in messages and the trace.

>>> from compiler.format import Format
>>> from compiler.levels import Dense, Element, SparsePoint
>>> from compiler.imperative.ir import Var
>>> from compiler.lattice.iterators import mode_iterators
>>> it = mode_iterators("P", "P", Format(Dense(SparsePoint(Element(0.0)))))[1]
>>> [str(e) for e in it.bounds(Var("i"))], str(it.coord(Var("pP1"))), it.compressed, it.described
(['P1_pos[i]', 'P1_pos[i + 1]'], 'P1_idx[pP1]', True, "P's level 1 (SparsePoint)")

A SparseInterval fiber holds at most one run, ``r = pos[p]`` when ``pos[p+1] > pos[p]``: the
coordinates ``[left[r], right[r])``, all with the child ``r``. Its iterator walks the run's
coordinates themselves (the variable ``pA1`` is the coordinate; bounds ``left[r]`` and
``right[r]``, or an empty range), and its child is the run, whichever coordinate it is at; a
diagonal's coordinate is stored if it lies in the run.

>>> from compiler.levels import SparseInterval
>>> it = mode_iterators("M", "M", Format(Dense(SparseInterval(Element(0.0)))))[1]
>>> [str(e) for e in it.bounds(Var("i"))]
['M1_pos[i] < M1_pos[i + 1] ? M1_left[M1_pos[i]] : 0', 'M1_pos[i] < M1_pos[i + 1] ? M1_right[M1_pos[i]] : 0']
>>> str(it.coord(Var("pM1"), Var("i"))), str(it.child(Var("pM1"), None, Var("i")))
('pM1', 'M1_pos[i]')
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import serialize
from ..imperative.ir import BinOp, Const, Declare, Load, Select, and_
from ..levels import SparseInterval
from .iterators import ModeIterator, iterated_by, register_iterator


def _next(parent):
    return Const(parent.value + 1, "int64") if isinstance(parent, Const) else BinOp("+", parent, 1)


@serialize.node
@dataclass(frozen=True)
class IntervalIterator(ModeIterator):
    """A SparseInterval level: at most one run per fiber, walked coordinate by coordinate."""

    entered_by_search = False   # (the run's coordinates are its positions: not built)

    def _run(self, parent):
        """``(r, stored)``: the fiber's run position and whether it has one."""
        pos = self.param(self.starts)
        return Load(pos, parent), BinOp("<", Load(pos, parent), Load(pos, _next(parent)))

    def bounds(self, parent):
        # (the run is read only where it exists: an empty last fiber's pos is past left's end)
        r, stored = self._run(parent)
        zero = Const(0, "int64")
        return (Select(stored, Load(self.param(self.run_start), r), zero),
                Select(stored, Load(self.param(self.run_end), r), zero))

    def coord(self, p, parent=None, block=None):
        return p

    def child(self, p, segend=None, parent=None, block=None):
        return self._run(parent)[0]

    def position_of(self, i, parent):
        return i   # (the walk's positions are the run's coordinates: a locate goes straight there)

    def search_stmts(self, q, parent, i, fresh):
        r, stored = self._run(parent)
        left, right = Load(self.param(self.run_start), r), Load(self.param(self.run_end), r)
        inside = and_(BinOp("<=", left, i), BinOp("<", i, right))
        minus = Const(-1, "int64")
        return [Declare(q, "int64", Select(stored, Select(inside, r, minus), minus))]

    def py_fiber(self, arrays: dict, sizes: dict, parent) -> list:
        pos, left, right = (arrays[self.param(k)] for k in (self.starts, self.run_start, self.run_end))
        r = int(pos[parent])
        return [(c, r) for c in range(int(left[r]), int(right[r]))] if int(pos[parent + 1]) > r else []


register_iterator(SparseInterval, iterated_by(IntervalIterator))

__all__ = ["IntervalIterator"]
