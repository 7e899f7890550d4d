"""Lattice iterators of the levels that store at most one entry per fiber (SparsePoint).

A SparsePoint level is stored as a SparseList is, ``pos`` and ``idx``, with at most one
coordinate per fiber: ``idx[pos[p]]`` when ``pos[p+1] - pos[p] == 1``. So its iterator is a
SparseList's (sorted, unique, compressed: it merges, gallops and is bisected for a diagonal as
one), and only says its own name in messages and the trace.

>>> from compiler.format import Format
>>> from compiler.levels import Dense, Element, SparsePoint
>>> from compiler.imperative.ir import Var
>>> from compiler.lattice.iterators import mode_iterators
>>> it = mode_iterators("P", "P", Format(Dense(SparsePoint(Element(0.0)))))[1]
>>> [str(e) for e in it.bounds(Var("i"))], str(it.coord(Var("pP1"))), it.compressed, it.described
(['P1_pos[i]', 'P1_pos[i + 1]'], 'P1_idx[pP1]', True, "P's level 1 (SparsePoint)")
"""

from __future__ import annotations

from dataclasses import dataclass

from ..imperative.ir import BinOp, Const, Load
from ..levels import SparsePoint
from .iterators import ModeIterator, register_iterator


@dataclass(frozen=True)
class PointIterator(ModeIterator):
    """A SparsePoint level: a SparseList of at most one coordinate per fiber."""

    @property
    def compressed(self) -> bool:
        return True

    def bounds(self, parent):
        pos = self.param("pos")
        after = Const(parent.value + 1, "int64") if isinstance(parent, Const) else BinOp("+", parent, 1)
        return Load(pos, parent), Load(pos, after)

    def py_fiber(self, arrays: dict, sizes: dict, parent) -> list:
        pos, idx = arrays[self.param("pos")], arrays[self.param("idx")]
        return [(int(idx[p]), p) for p in range(int(pos[parent]), int(pos[parent + 1]))]


def _point_iterators(name: str, tensor: str, mode: int, k: int, lvl) -> list:
    return [PointIterator(name, tensor, mode, k, 0, lvl.name)]


register_iterator(SparsePoint, _point_iterators)

__all__ = ["PointIterator"]
