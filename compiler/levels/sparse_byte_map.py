"""SparseByteMap: a dense table of "is stored" bytes plus the sorted stored coordinates.

Fiber ``p`` has child positions ``p * size + i`` for every ``i`` (as Dense); ``tbl``
(``bool``, one byte per child position) marks the stored ones and ``srt[pos[p]:pos[p+1]]``
lists them in increasing order. Reads walk ``srt`` or locate through ``tbl``;
writes may come in any order (the workspace of Gustavson's SpGEMM).

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.levels import Dense, Element
>>> A = Tensor.from_numpy(np.array([[0, 2.0, 0], [3.0, 0, 4.0]]), Dense(SparseByteMap(Element(0.0))))
>>> b = A.levels[1]
>>> b.pos.tolist(), b.tbl.tolist(), b.srt.tolist(), A.vals.tolist()
([0, 1, 3], [False, True, False, True, False, True], [1, 0, 2], [0.0, 2.0, 0.0, 3.0, 0.0, 4.0])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import serialize
from ..errors import FormatError
from .level import (POS, IndexedLevel, check_pos, check_range, fiber_of, group_starts, not_increasing,
                    ranges, register)


@serialize.node
@register("bytemap")
@dataclass(frozen=True, eq=False, repr=False)
class SparseByteMap(IndexedLevel):
    """``pos`` and ``srt`` (sorted stored coordinates per fiber) and ``tbl`` (one byte per position)."""

    child: Any
    size: Any = None
    pos: Any = None
    tbl: Any = None
    srt: Any = None
    index_dtype: Any = None

    name: ClassVar[str] = "SparseByteMap"
    index_arrays: ClassVar[tuple[str, ...]] = ("pos", "srt")
    coordinate_arrays: ClassVar[tuple[str, ...]] = ("srt",)
    fixed_arrays: ClassVar[dict[str, str]] = {"tbl": "bool"}
    locatable: ClassVar[bool] = True
    compact: ClassVar[bool] = False
    random_write: ClassVar[bool] = True
    slot_per_coordinate: ClassVar[bool] = True
    crd_array: ClassVar[str] = "srt"   # (its stored coordinates, sorted)
    marks_slots: ClassVar[bool] = True
    mark_array: ClassVar[str] = "tbl"

    def count(self, parent_count):
        return parent_count * self.size

    def children(self, parents):
        parents = np.asarray(parents, dtype=POS)
        starts = self.pos[parents].astype(POS)
        pix, q = ranges(starts, self.pos[parents + 1].astype(POS) - starts)
        i = self.srt[q].astype(POS)
        return pix, (i,), parents[pix] * self.size + i

    def fiber(self, p, limit):
        start, stop = int(self.pos[p]), int(self.pos[p + 1])
        i = self.srt[start:min(stop, start + limit)].astype(POS)
        return (i,), p * self.size + i, stop - start

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        n = int(sizes[0])
        i = coords[0]
        new = group_starts([parent_pos, i])
        counts = np.bincount(parent_pos[new], minlength=parent_count)
        pos = np.zeros(parent_count + 1, dtype=self.index_dtype)
        np.cumsum(counts, out=pos[1:])
        tbl = np.zeros(parent_count * n, dtype=np.bool_)
        child_pos = parent_pos.astype(POS) * n + i
        tbl[child_pos] = 1
        child = self.child.from_entries(parent_count * n, child_pos, coords[1:], vals, sizes[1:])
        return type(self)(child, n, pos, tbl, i[new].astype(self.index_dtype))

    def check(self, parent_count, where):
        if self.size is None or self.size < 0:
            raise FormatError(f"{where}: size must be a non-negative integer, got {self.size}")
        if self.pos is None:
            raise FormatError(f"{where}: pos, tbl and srt are missing")
        pos, srt, tbl = self.pos, self.srt, self.tbl
        check_pos(pos, parent_count, len(srt), "srt", where)
        if len(tbl) != parent_count * self.size:
            raise FormatError(f"{where}: tbl has length {len(tbl)}, expected {parent_count * self.size} "
                              f"({parent_count} fibers of size {self.size})")
        check_range(srt, self.size, "srt", where)
        bad = not_increasing(pos, [srt])
        if bad:
            q, dup = bad
            raise FormatError(f"{where}: srt is not strictly increasing in fiber {fiber_of(pos, q)}: "
                              f"srt[{q}]={srt[q]} follows srt[{q - 1}]={srt[q - 1]}"
                              + (" (duplicate coordinate)" if dup else ""))
        marked = np.zeros(len(tbl), dtype=bool)
        owner = np.repeat(np.arange(parent_count, dtype=POS), np.diff(pos.astype(POS)))
        marked[owner * self.size + srt.astype(POS)] = True
        bad = np.flatnonzero(marked != (tbl != 0))
        if bad.size:
            k = int(bad[0])
            raise FormatError(f"{where}: tbl[{k}]={tbl[k]} disagrees with srt: coordinate {k % self.size} of "
                              f"fiber {k // self.size} is {'' if marked[k] else 'not '}listed in srt")
        return parent_count * self.size
