"""Lattice iterators of the levels that store blocks of contiguous coordinates (SparseBand).

A SparseBand fiber stores one block, the coordinates ``[idx[p] - n, idx[p])`` at the
positions ``[ofs[p], ofs[p] + n)`` (``n = ofs[p+1] - ofs[p]``). It walks like a SparseList,
one position range per fiber, but has no array of coordinates: the coordinate at position
``q`` follows from the position and the fiber, ``q + (idx[p] - ofs[p+1])``. So its
:meth:`~BandIterator.coord` takes the fiber's parent, which the emitter passes to every
iterator (the others ignore it). Sorted and unique, it merges and intersects like a SparseList;
a diagonal's coordinate ``i`` is found without a search, at ``i - (idx[p] - ofs[p+1])`` if
that is within the fiber's positions (:meth:`~BandIterator.position_of`).

>>> from compiler.format import Format
>>> from compiler.levels import Dense, Element, SparseBand
>>> from compiler.imperative.ir import Var
>>> from compiler.lattice.iterators import mode_iterators
>>> it = mode_iterators("A", "A", Format(Dense(SparseBand(Element(0.0)))))[1]
>>> [str(e) for e in it.bounds(Var("i"))], str(it.coord(Var("pA1"), Var("i")))
(['A1_ofs[i]', 'A1_ofs[i + 1]'], 'pA1 + (A1_idx[i] - A1_ofs[i + 1])')
"""

from __future__ import annotations

from dataclasses import dataclass

from ..binding import array_name
from ..imperative.ir import BinOp, Const, Load
from ..levels import SparseBand
from .iterators import ModeIterator, register_iterator


def _next(parent):
    """``parent + 1``, folded when the parent is a constant (the root fiber)."""
    return Const(parent.value + 1, "int64") if isinstance(parent, Const) else BinOp("+", parent, 1)


@dataclass(frozen=True)
class BandIterator(ModeIterator):
    """A SparseBand level: its fiber's positions hold contiguous coordinates."""

    def param(self, kind: str) -> str:
        # its fiber starts are ``ofs`` (the level's starts array), which a hash below counts by
        return array_name(self.tensor, self.level, "ofs" if kind == "pos" else kind) if kind != "size" \
            else super().param(kind)

    def bounds(self, parent):
        ofs = self.param("pos")
        return Load(ofs, parent), Load(ofs, _next(parent))

    def coord(self, p, parent=None):
        if parent is None:
            raise AssertionError(f"{self.described}: a band's coordinate needs its fiber")
        return BinOp("+", p, BinOp("-", Load(self.param("idx"), parent), Load(self.param("pos"), _next(parent))))

    def position_of(self, i, parent):
        # (the coordinate's inverse: a diagonal's search is one subtraction)
        return BinOp("-", i, BinOp("-", Load(self.param("idx"), parent), Load(self.param("pos"), _next(parent))))

    def child(self, p, segend=None):
        return p

    def py_fiber(self, arrays: dict, sizes: dict, parent) -> list:
        ofs, idx = arrays[self.param("pos")], arrays[self.param("idx")]
        start, stop = int(ofs[parent]), int(ofs[parent + 1])
        shift = int(idx[parent]) - stop
        return [(q + shift, q) for q in range(start, stop)]


def _band_iterators(name: str, tensor: str, mode: int, k: int, lvl) -> list:
    return [BandIterator(name, tensor, mode, k, 0, lvl.name)]


register_iterator(SparseBand, _band_iterators)

__all__ = ["BandIterator"]
