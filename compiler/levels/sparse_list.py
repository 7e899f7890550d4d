"""SparseList (TACO's "compressed"): the coordinates of fiber ``p`` are ``idx[pos[p]:pos[p+1]]``.

Coordinates are sorted and unique within each fiber; the child position of the
entry ``idx[q]`` is ``q``. CSR is ``Dense(SparseList(Element(0.0)))``.

>>> from compiler.levels import Element
>>> s = SparseList(Element(0.0, [1.0, 2.0, 3.0]), 5, pos=[0, 2, 2, 3], idx=[1, 4, 0])
>>> s.count(3), s.index_dtype.name, sorted(s.arrays())
(3, 'int64', ['idx', 'pos'])
>>> pix, (i,), child = s.children(np.array([0, 2]))
>>> pix.tolist(), i.tolist(), child.tolist()
([0, 0, 1], [1, 4, 0], [0, 1, 2])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import serialize
from ..errors import FormatError
from .level import (IndexedLevel, POS, check_pos, check_range, fiber_of, group_starts, not_increasing,
                    ranges, register)


@serialize.node
@register("compressed")
@dataclass(frozen=True, eq=False, repr=False)
class SparseList(IndexedLevel):
    """A compressed level: ``pos`` (one more than the parent's positions) and ``idx``.

    ``index_dtype`` is taken from the arrays; for a spec it says which index dtype
    to build (default int64).
    """

    child: Any
    size: Any = None
    pos: Any = None
    idx: Any = None
    index_dtype: Any = None

    name: ClassVar[str] = "SparseList"
    index_arrays: ClassVar[tuple[str, ...]] = ("pos", "idx")
    appends_nested: ClassVar[bool] = True
    appends_coordinates: ClassVar[bool] = True
    scatters: ClassVar[bool] = True
    compressed: ClassVar[bool] = True
    coordinate_arrays: ClassVar[tuple[str, ...]] = ("idx",)

    def count(self, parent_count: int) -> int:
        return int(self.pos[parent_count])

    def children(self, parents):
        parents = np.asarray(parents, dtype=POS)
        starts = self.pos[parents]
        pix, child = ranges(starts, self.pos[parents + 1] - starts)
        return pix, (self.idx[child].astype(POS),), child

    def fiber(self, p: int, limit: int):
        start, stop = int(self.pos[p]), int(self.pos[p + 1])
        child = np.arange(start, min(stop, start + limit), dtype=POS)
        return (self.idx[child].astype(POS),), child, stop - start

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes) -> "SparseList":
        i = coords[0]
        new = group_starts([parent_pos, i])  # one stored coordinate per distinct (parent, i)
        child_pos = np.cumsum(new, dtype=POS) - 1
        counts = np.bincount(parent_pos[new], minlength=parent_count)
        pos = np.zeros(parent_count + 1, dtype=self.index_dtype)
        np.cumsum(counts, out=pos[1:])
        idx = i[new].astype(self.index_dtype)
        child = self.child.from_entries(len(idx), child_pos, coords[1:], vals, sizes[1:])
        return type(self)(child, int(sizes[0]), pos, idx)

    def structure(self) -> tuple:
        return self.pos, (self.idx,), (self.size,)

    def check(self, parent_count: int, where: str) -> int:
        if self.size is None or self.size < 0:
            raise FormatError(f"{where}: size must be a non-negative integer, got {self.size}")
        if self.pos is None:
            raise FormatError(f"{where}: pos and idx are missing")
        pos, idx = self.pos, self.idx
        check_pos(pos, parent_count, len(idx), "idx", where)
        check_range(idx, self.size, "idx", where)
        bad = not_increasing(pos, [idx])
        if bad:
            q, dup = bad
            raise FormatError(
                f"{where}: idx is not strictly increasing in fiber {fiber_of(pos, q)}: "
                f"idx[{q}]={idx[q]} follows idx[{q - 1}]={idx[q - 1]}"
                + (" (duplicate coordinate)" if dup else ""))
        return len(idx)
