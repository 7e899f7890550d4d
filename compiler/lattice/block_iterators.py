"""Lattice iterators of the levels that store blocks of contiguous coordinates (SparseBand, SparseBlockList).

A SparseBand fiber stores one block, the coordinates ``[idx[p] - n, idx[p])`` at the
positions ``[ofs[p], ofs[p] + n)`` (``n = ofs[p+1] - ofs[p]``). It walks like a SparseList,
one position range per fiber, but has no array of coordinates: the coordinate at position
``q`` follows from the position and the fiber, ``q + (idx[p] - ofs[p+1])``. So its
:meth:`~BandIterator.coord` takes the fiber's parent, which the emitter passes to every
iterator (the others ignore it). Sorted and unique, it merges and intersects like a SparseList;
a diagonal's coordinate ``i`` is found without a search, at ``i - (idx[p] - ofs[p+1])`` if
that is within the fiber's positions (:meth:`~BandIterator.position_of`).

A SparseBlockList fiber holds the blocks ``[pos[p], pos[p+1])``; block ``r`` stores the
coordinates ``[idx[r] - n, idx[r])`` at the positions ``[ofs[r], ofs[r+1])``. The fiber's
positions are contiguous, ``ofs[pos[p]]`` to ``ofs[pos[p+1]]``, so it walks them as one range
too; its coordinate also needs the block holding the position, ``q + (idx[r] - ofs[r+1])``. The
emitter keeps that block in a variable beside the position (``rA1``, from ``pos[p]``) and moves
it on, ``while (ofs[r + 1] <= q) r++``, before it reads a coordinate
(:meth:`~BlockListIterator.block_sync`); a diagonal's coordinate is found by bisecting the
blocks' ends. Walked backwards (a slice with a negative step), the walk starts at the fiber's last
position in its last block, ``pos[p + 1] - 1``, and moves the block down with the position,
``if (q < ofs[r]) r--`` (:meth:`~BlockListIterator.block_sync_back`).

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

from .. import serialize
from ..imperative.ir import Assign, BinOp, CompoundAssign, Const, Declare, If, Load, Select, While, and_
from ..imperative.search import lower_bound_call, seek_back_call, seek_call
from ..levels import SparseBand, SparseBlockList
from .iterators import ModeIterator, iterated_by, register_iterator


def _next(parent):
    """``parent + 1``, folded when the parent is a constant (the root fiber)."""
    return Const(parent.value + 1, "int64") if isinstance(parent, Const) else BinOp("+", parent, 1)


@serialize.node
@dataclass(frozen=True)
class BandIterator(ModeIterator):
    """A SparseBand level: its fiber's positions hold contiguous coordinates."""

    entered_by_search = False   # (its coordinates follow from the fiber's shift, not a crd array)

    def bounds(self, parent):
        ofs = self.param(self.starts)
        return Load(ofs, parent), Load(ofs, _next(parent))

    def _shift(self, parent):
        """IR of the band's coordinate less its position: its end less its fiber's end."""
        return BinOp("-", Load(self.param(self.band_end), parent), Load(self.param(self.starts), _next(parent)))

    def coord(self, p, parent=None, block=None):
        if parent is None:
            raise AssertionError(f"{self.described}: a band's coordinate needs its fiber")
        return BinOp("+", p, self._shift(parent))

    def position_of(self, i, parent):
        # (the coordinate's inverse: a diagonal's search is one subtraction)
        return BinOp("-", i, self._shift(parent))

    def child(self, p, segend=None, parent=None, block=None):
        return p

    def py_fiber(self, arrays: dict, sizes: dict, parent) -> list:
        ofs, idx = arrays[self.param(self.starts)], arrays[self.param(self.band_end)]
        start, stop = int(ofs[parent]), int(ofs[parent + 1])
        shift = int(idx[parent]) - stop
        return [(q + shift, q) for q in range(start, stop)]


@serialize.node
@dataclass(frozen=True)
class BlockListIterator(ModeIterator):
    """A SparseBlockList level: contiguous positions per fiber, a coordinate per (block, position).

    >>> from compiler.format import Format
    >>> from compiler.levels import Dense, Element
    >>> from compiler.imperative.ir import Var
    >>> from compiler.lattice.iterators import mode_iterators
    >>> it = mode_iterators("A", "A", Format(Dense(SparseBlockList(Element(0.0)))))[1]
    >>> [str(e) for e in it.bounds(Var("i"))], str(it.coord(Var("pA1"), Var("i"), Var("rA1")))
    (['A1_ofs[A1_pos[i]]', 'A1_ofs[A1_pos[i + 1]]'], 'pA1 + (A1_idx[rA1] - A1_ofs[rA1 + 1])')
    >>> [str(s.cond) for s in it.block_sync(Var("pA1"), Var("rA1"))]   # while it has passed block rA1's end
    ['A1_ofs[rA1 + 1] <= pA1']
    """

    entered_by_search = False   # (a position in the middle needs its block found too: not built)

    def _ofs(self, at):
        return Load(self.param(self.block_starts), at)

    def bounds(self, parent):
        pos = self.param(self.starts)
        return self._ofs(Load(pos, parent)), self._ofs(Load(pos, _next(parent)))

    #: a block variable is kept beside the position (block_start, block_sync), moved down too where the
    #: fiber is walked backwards (block_last, block_sync_back)
    keeps_block = walks_back = True

    def block_start(self, parent):
        return Load(self.param(self.starts), parent)

    def block_sync(self, p, block) -> list:
        # blocks are never empty, so a position steps over at most one block's end; while, not if,
        # for a position that jumps (a block of a split loop resumes where the last one stopped)
        return [While(BinOp("<=", self._ofs(BinOp("+", block, 1)), p), [CompoundAssign("+", block, Const(1, "int64"))])]

    def block_last(self, parent):
        return BinOp("-", Load(self.param(self.starts), _next(parent)), 1)

    def block_sync_back(self, p, block, parent) -> list:
        # blocks are never empty and a walk backwards steps down one position: it crosses one block's
        # start at most
        return [If(BinOp("<", p, self._ofs(block)), [CompoundAssign("-", block, Const(1, "int64"))])]

    def coord(self, p, parent=None, block=None):
        if block is None:
            raise AssertionError(f"{self.described}: a block list's coordinate needs its block")
        return BinOp("+", p, BinOp("-", Load(self.param(self.block_ends), block), self._ofs(BinOp("+", block, 1))))

    def stored_count(self, fibers):
        return self._ofs(Load(self.param(self.starts), fibers))

    def _position_in(self, block, i):
        """IR of the position coordinate ``i`` has in ``block`` (if the block holds it): counted back
        from the block's end, ``ofs[r + 1] - (idx[r] - i)``."""
        end = Load(self.param(self.block_ends), block)
        return BinOp("-", self._ofs(BinOp("+", block, 1)), BinOp("-", end, i))

    def seek_stmts(self, p, end, target, parent=None, block=None):
        """Gallop over the blocks' ends from the cursor's block to the first that ends past
        ``target``; the cursor goes to its first position, or to the target's if the block holds it
        (the fiber's end past its last block, whose first position that is).

        >>> from compiler.format import Format
        >>> from compiler.levels import Dense, Element
        >>> from compiler.imperative.ir import Var
        >>> from compiler.lattice.iterators import mode_iterators
        >>> it = mode_iterators("A", "A", Format(Dense(SparseBlockList(Element(0.0)))))[1]
        >>> print(*it.seek_stmts(Var("pA1"), Var("pA1_end"), Var("j"), Var("i"), Var("rA1")), sep=chr(10))
        rA1 = seek(A1_idx, rA1, A1_pos[i + 1], j + 1);
        pA1 = A1_ofs[rA1];
        if (pA1 < pA1_end && pA1 + (A1_idx[rA1] - A1_ofs[rA1 + 1]) < j) {
            pA1 = A1_ofs[rA1 + 1] - (A1_idx[rA1] - j);
        }
        """
        idx, stop = self.param(self.block_ends), Load(self.param(self.starts), _next(parent))
        return [Assign(block, seek_call(idx, block, stop, _next(target))),
                Assign(p, self._ofs(block)),
                If(and_(BinOp("<", p, end), BinOp("<", self.coord(p, parent, block), target)),
                   [Assign(p, self._position_in(block, target))])]

    def seek_back_stmts(self, p, end, target, parent=None, block=None):
        """:meth:`seek_stmts` walking backwards: gallop down over the blocks' ends from the cursor's
        block to the first that ends past ``target``; the cursor goes to the target's position if
        that block holds it, else (the target in the gap before the block) to the last position of
        the block before (``end``, one below the fiber's first position, if none).

        >>> from compiler.imperative.ir import Var
        >>> it = BlockListIterator("A", "A", 1, 1, 0, "SparseBlockList", block_ends="idx", block_starts="ofs")
        >>> print(*it.seek_back_stmts(Var("pA1"), Var("pA1_lo"), Var("j"), Var("i"), Var("rA1")), sep=chr(10))
        rA1 = seek_back(A1_idx, rA1, A1_pos[i] - 1, j) + 1;
        pA1 = A1_ofs[rA1 + 1] - (A1_idx[rA1] - j);
        if (pA1 < A1_ofs[rA1]) {
            pA1 = A1_ofs[rA1] - 1;
            rA1 -= 1;
        }
        """
        first = Load(self.param(self.starts), parent)
        # (the last block ending at or below the target holds none of it: the one after it is the first
        # that may; the cursor's block ends past the target, so the search stays within the fiber)
        past = BinOp("+", seek_back_call(self.param(self.block_ends), block, BinOp("-", first, 1), target), 1)
        return [Assign(block, past), Assign(p, self._position_in(block, target)),
                If(BinOp("<", p, self._ofs(block)), [Assign(p, BinOp("-", self._ofs(block), 1)),
                                                     CompoundAssign("-", block, Const(1, "int64"))])]

    def search_stmts(self, q, parent, i, fresh):
        """Bisect the fiber's blocks for the first that ends past ``i``; ``i`` is stored if that
        block starts at or before it, at ``ofs[r + 1] - (idx[r] - i)``."""
        lo, end, at = fresh("lo"), fresh("end"), fresh("at")
        one = Const(1, "int64")
        pos, idx = self.param(self.starts), self.param(self.block_ends)
        return [Declare(end, "int64", Load(pos, _next(parent))),
                Declare(lo, "int64", lower_bound_call(idx, Load(pos, parent), end, BinOp("+", i, one))),
                Declare(at, "int64", Select(BinOp("<", lo, end), self._position_in(lo, i), Const(-1, "int64"))),
                Declare(q, "int64", Select(and_(BinOp("<", lo, end), BinOp("<=", self._ofs(lo), at)),
                                           at, Const(-1, "int64")))]

    def child(self, p, segend=None, parent=None, block=None):
        return p

    def py_fiber(self, arrays: dict, sizes: dict, parent) -> list:
        pos, idx, ofs = (arrays[self.param(k)] for k in (self.starts, self.block_ends, self.block_starts))
        return [(q + int(idx[r]) - int(ofs[r + 1]), q)
                for r in range(int(pos[parent]), int(pos[parent + 1])) for q in range(int(ofs[r]), int(ofs[r + 1]))]


register_iterator(SparseBand, iterated_by(BandIterator))
register_iterator(SparseBlockList, iterated_by(BlockListIterator))

__all__ = ["BandIterator", "BlockListIterator"]
