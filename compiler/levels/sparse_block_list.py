"""SparseBlockList (variable block length, "VBL"): dense blocks of coordinates per fiber.

Fiber ``p`` owns blocks ``r`` in ``[pos[p], pos[p+1])``; block ``r`` stores the
coordinates ``[idx[r] - n, idx[r])`` with ``n = ofs[r+1] - ofs[r]`` at child
positions ``ofs[r], ..., ofs[r+1] - 1`` (``idx`` is the exclusive end of the block;
the Looplets paper's VBL lookup needs its ``-1`` erratum fixed, which half-open
ends make unnecessary). Blocks are maximal runs of consecutive stored coordinates.

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.levels import Dense, Element
>>> row = np.array([[0, 0, 2.7, 5.0, 0.9, 0, 0, 1.4, 2.3, 0, 0]])
>>> A = Tensor.from_numpy(row, Dense(SparseBlockList(Element(0.0))))
>>> lvl = A.levels[1]
>>> lvl.pos.tolist(), lvl.idx.tolist(), lvl.ofs.tolist()
([0, 2], [5, 9], [0, 3, 5])
>>> (A.to_numpy() == row).all()
np.True_
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import serialize
from ..errors import FormatError
from .level import IndexedLevel, POS, check_pos, group_starts, ranges, register


@serialize.node
@register("SparseVBL", "vbl")
@dataclass(frozen=True, eq=False, repr=False)
class SparseBlockList(IndexedLevel):
    """Blocks per fiber: ``pos`` (blocks of each fiber), ``idx`` (block ends), ``ofs`` (block positions)."""

    child: Any
    size: Any = None
    pos: Any = None
    idx: Any = None
    ofs: Any = None
    index_dtype: Any = None

    name: ClassVar[str] = "SparseBlockList"
    index_arrays: ClassVar[tuple[str, ...]] = ("pos", "idx", "ofs")
    appends_blocks: ClassVar[tuple[str, str]] = ("idx", "ofs")

    def count(self, parent_count):
        return int(self.ofs[int(self.pos[parent_count])])

    def children(self, parents):
        parents = np.asarray(parents, dtype=POS)
        bstart = self.pos[parents].astype(POS)
        bowner, blocks = ranges(bstart, self.pos[parents + 1].astype(POS) - bstart)
        qs = self.ofs[blocks].astype(POS)
        n = self.ofs[blocks + 1].astype(POS) - qs
        owner, child = ranges(qs, n)
        lo = self.idx[blocks].astype(POS) - n
        coords = lo[owner] + (child - qs[owner])
        return bowner[owner], (coords,), child

    def fiber(self, p, limit):
        pix, (coords,), child = self.children(np.array([p]))
        return (coords[:limit],), child[:limit], len(child)

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        i = coords[0]
        new = group_starts([parent_pos, i])  # distinct (parent, coordinate)
        up, ui = parent_pos[new], i[new]
        child_pos_of_unique = np.arange(len(ui), dtype=POS)
        # a block starts where the parent changes or the coordinate jumps
        starts = np.ones(len(ui), dtype=bool)
        if len(ui) > 1:
            starts[1:] = (up[1:] != up[:-1]) | (ui[1:] != ui[:-1] + 1)
        block_of = np.cumsum(starts) - 1
        nblocks = int(starts.sum())
        counts = np.bincount(up[starts], minlength=parent_count)
        pos = np.zeros(parent_count + 1, dtype=self.index_dtype)
        np.cumsum(counts, out=pos[1:])
        ofs = np.zeros(nblocks + 1, dtype=self.index_dtype)
        np.cumsum(np.bincount(block_of, minlength=nblocks), out=ofs[1:])
        ends = np.zeros(nblocks, dtype=POS)
        np.maximum.at(ends, block_of, ui + 1)
        child_pos = (np.cumsum(new, dtype=POS) - 1)
        child_pos = child_pos_of_unique[child_pos]
        child = self.child.from_entries(len(ui), child_pos, coords[1:], vals, sizes[1:])
        return type(self)(child, int(sizes[0]), pos, ends.astype(self.index_dtype), ofs)

    def check(self, parent_count, where):
        if self.size is None or self.size < 0:
            raise FormatError(f"{where}: size must be a non-negative integer, got {self.size}")
        if self.pos is None:
            raise FormatError(f"{where}: pos, idx and ofs are missing")
        check_pos(self.pos, parent_count, len(self.idx), "idx", where)
        if len(self.ofs) != len(self.idx) + 1:
            raise FormatError(f"{where}: ofs has length {len(self.ofs)}, expected {len(self.idx) + 1}")
        n = np.diff(self.ofs.astype(POS))
        if (n <= 0).any() if len(n) else False:
            r = int(np.flatnonzero(n <= 0)[0])
            raise FormatError(f"{where}: block {r} is empty (ofs[{r}] = ofs[{r + 1}])")
        lo = self.idx.astype(POS) - n
        if len(lo) and ((lo < 0) | (self.idx > self.size)).any():
            r = int(np.flatnonzero((lo < 0) | (self.idx > self.size))[0])
            raise FormatError(f"{where}: block {r} [{lo[r]}, {self.idx[r]}) is outside [0, {self.size})")
        # blocks of a fiber must be sorted and disjoint
        if len(lo) > 1:
            fiber_start = np.zeros(len(lo), dtype=bool)
            fiber_start[self.pos[:-1][self.pos[:-1] < len(lo)]] = True
            bad = np.flatnonzero((lo[1:] < self.idx[:-1]) & ~fiber_start[1:])
            if bad.size:
                r = int(bad[0]) + 1
                raise FormatError(f"{where}: block {r} overlaps or precedes block {r - 1}")
        return int(self.ofs[-1])
