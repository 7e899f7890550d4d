"""SparsePoint: at most one stored coordinate per fiber (diagonal-like and permutation matrices).

Fiber ``p`` stores ``idx[pos[p]]`` when ``pos[p+1] - pos[p] == 1`` and nothing when
it is 0; the child position is ``pos[p]``.

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.levels import Dense, Element
>>> P = Tensor.from_numpy(np.array([[0, 3.0, 0], [0, 0, 0], [1.0, 0, 0]]), Dense(SparsePoint(Element(0.0))))
>>> P.levels[1].pos.tolist(), P.levels[1].idx.tolist(), P.vals.tolist()
([0, 1, 1, 2], [1, 0], [3.0, 1.0])
>>> Tensor.from_numpy(np.array([[1.0, 2.0]]), Dense(SparsePoint(Element(0.0))), name="P")
Traceback (most recent call last):
...
compiler.errors.FormatError: P: SparsePoint stores at most one coordinate per fiber, but fiber 0 has 2; use SparseList
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import serialize
from ..errors import FormatError
from .level import IndexedLevel, POS, check_pos, check_range, group_starts, ranges, register


@serialize.node
@register()
@dataclass(frozen=True, eq=False, repr=False)
class SparsePoint(IndexedLevel):
    """At most one coordinate per fiber: ``pos`` (0 or 1 entries per fiber) and ``idx``."""

    child: Any
    size: Any = None
    pos: Any = None
    idx: Any = None
    index_dtype: Any = None

    name: ClassVar[str] = "SparsePoint"
    at_most_one: ClassVar[bool] = True
    compressed: ClassVar[bool] = True   # (stored as a SparseList is: pos and idx)
    appends_coordinates: ClassVar[bool] = True   # (as a SparseList is; an output is checked after the call)
    index_arrays: ClassVar[tuple[str, ...]] = ("pos", "idx")
    coordinate_arrays: ClassVar[tuple[str, ...]] = ("idx",)

    def count(self, parent_count):
        return int(self.pos[parent_count])

    def children(self, parents):
        parents = np.asarray(parents, dtype=POS)
        starts = self.pos[parents].astype(POS)
        pix, child = ranges(starts, self.pos[parents + 1].astype(POS) - starts)
        return pix, (self.idx[child].astype(POS),), child

    def fiber(self, p, limit):
        start, stop = int(self.pos[p]), int(self.pos[p + 1])
        child = np.arange(start, min(stop, start + limit), dtype=POS)
        return (self.idx[child].astype(POS),), child, stop - start

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        i = coords[0]
        new = group_starts([parent_pos, i])
        counts = np.bincount(parent_pos[new], minlength=parent_count)
        if counts.size and counts.max() > 1:
            p = int(np.argmax(counts > 1))
            raise FormatError(f"SparsePoint stores at most one coordinate per fiber, but fiber {p} has "
                              f"{int(counts[p])}; use SparseList")
        child_pos = np.cumsum(new, dtype=POS) - 1
        pos = np.zeros(parent_count + 1, dtype=self.index_dtype)
        np.cumsum(counts, out=pos[1:])
        child = self.child.from_entries(int(new.sum()), child_pos, coords[1:], vals, sizes[1:])
        return type(self)(child, int(sizes[0]), pos, i[new].astype(self.index_dtype))

    def check(self, parent_count, where):
        if self.size is None or self.size < 0:
            raise FormatError(f"{where}: size must be a non-negative integer, got {self.size}")
        if self.pos is None:
            raise FormatError(f"{where}: pos and idx are missing")
        check_pos(self.pos, parent_count, len(self.idx), "idx", where)
        self.check_at_most_one(parent_count, where)
        check_range(self.idx, self.size, "idx", where)
        return int(self.pos[parent_count])

    def check_at_most_one(self, parent_count, where):
        n = np.diff(self.pos[:parent_count + 1].astype(POS))
        bad = np.flatnonzero(n > 1)
        if bad.size:
            raise FormatError(f"{where}: fiber {int(bad[0])} stores {int(n[bad[0]])} coordinates; a SparsePoint "
                              f"fiber stores at most one; use SparseList")
