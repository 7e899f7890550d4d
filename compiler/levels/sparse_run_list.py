"""SparseRunList: runs of equal children with fill between them.

Fiber ``p`` owns runs ``r`` in ``[pos[p], pos[p+1])``; run ``r`` covers coordinates
``[left[r], right[r])`` (half-open; Finch stores inclusive ends), all with child
position ``r``. Runs are sorted and do not overlap; coordinates outside every run
hold the fill.

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.levels import Dense, Element
>>> A = Tensor.from_numpy(np.array([0, 2.0, 2.0, 0, 0, 5.0]), SparseRunList(Element(0.0)))
>>> A.levels[0].left.tolist(), A.levels[0].right.tolist(), A.vals.tolist()
([1, 5], [3, 6], [2.0, 5.0])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import serialize
from ..errors import FormatError
from .level import (IndexedLevel, POS, check_pos, check_range, fiber_of, group_starts, ranges,
                    register)
from .run_list import run_units


@serialize.node
@register("SparseRLE")
@dataclass(frozen=True, eq=False, repr=False)
class SparseRunList(IndexedLevel):
    """Sparse runs: ``pos`` (runs of each fiber), ``left`` and ``right`` (half-open run bounds)."""

    child: Any
    size: Any = None
    pos: Any = None
    left: Any = None
    right: Any = None
    index_dtype: Any = None

    name: ClassVar[str] = "SparseRunList"
    index_arrays: ClassVar[tuple[str, ...]] = ("pos", "left", "right")
    coordinate_arrays: ClassVar[tuple[str, ...]] = ("left",)
    appends_runs: ClassVar[bool] = True
    run_start_array: ClassVar[str] = "left"

    def count(self, parent_count):
        return int(self.pos[parent_count])

    def children(self, parents):
        parents = np.asarray(parents, dtype=POS)
        starts = self.pos[parents].astype(POS)
        pix, run = ranges(starts, self.pos[parents + 1].astype(POS) - starts)
        left = self.left[run].astype(POS)
        owner, coord = ranges(left, self.right[run].astype(POS) - left)
        return pix[owner], (coord,), run[owner]

    def fiber(self, p, limit):
        _, (coord,), child = self.children(np.array([p]))
        return (coord[:limit],), child[:limit], len(coord)

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        up, us, ue, unit_of = run_units(parent_count, parent_pos, coords, vals, self.child)
        counts = np.bincount(up, minlength=parent_count)
        pos = np.zeros(parent_count + 1, dtype=self.index_dtype)
        np.cumsum(counts, out=pos[1:])
        if self.child.is_leaf and len(unit_of):
            keep = group_starts([unit_of])
            child = self.child.from_entries(len(up), unit_of[keep], [], np.asarray(vals)[keep], [])
        else:
            child = self.child.from_entries(len(up), unit_of, coords[1:], vals, sizes[1:])
        return type(self)(child, int(sizes[0]), pos, us.astype(self.index_dtype), ue.astype(self.index_dtype))

    def check(self, parent_count, where):
        if self.size is None or self.size < 0:
            raise FormatError(f"{where}: size must be a non-negative integer, got {self.size}")
        if self.pos is None:
            raise FormatError(f"{where}: pos, left and right are missing")
        pos, left, right = self.pos, self.left, self.right
        if len(left) != len(right):
            raise FormatError(f"{where}: left has length {len(left)} but right has {len(right)}")
        check_pos(pos, parent_count, len(left), "left", where)
        check_range(left, self.size, "left", where)
        bad = np.flatnonzero((right <= left) | (right > self.size))
        if bad.size:
            q = int(bad[0])
            raise FormatError(f"{where}: run {q} is [{left[q]}, {right[q]}), which is empty or outside "
                              f"[0, {self.size}]")
        first = np.zeros(len(left), dtype=bool)
        first[pos[:-1][pos[:-1] < len(left)].astype(POS)] = True
        bad = np.flatnonzero(~first[1:] & (left[1:] < right[:-1]))
        if bad.size:
            q = int(bad[0]) + 1
            raise FormatError(f"{where}: runs overlap or are out of order in fiber {fiber_of(pos, q)}: "
                              f"run {q} starts at left[{q}]={left[q]} before run {q - 1} ends at "
                              f"right[{q - 1}]={right[q - 1]}")
        return int(pos[parent_count])
