"""SparseBand: one dense block of coordinates per fiber (banded and ragged matrices).

Fiber ``p`` stores the coordinates ``[idx[p] - n, idx[p])`` with ``n = ofs[p+1] - ofs[p]``
at child positions ``ofs[p], ..., ofs[p+1] - 1``; ``idx[p]`` is the exclusive end of
the block (Finch stores the inclusive end; we are half-open). Coordinates inside the
block that hold the fill are stored explicitly. An empty fiber has ``n = 0``.

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.levels import Dense, Element
>>> A = Tensor.from_numpy(np.array([[0, 1.0, 0, 2.0], [0, 0, 0, 0], [3.0, 0, 0, 0]]),
...                       Dense(SparseBand(Element(0.0))))
>>> band = A.levels[1]
>>> band.ofs.tolist(), band.idx.tolist(), A.vals.tolist()
([0, 3, 3, 4], [4, 0, 1], [1.0, 0.0, 2.0, 3.0])
>>> (A.to_numpy() == np.array([[0, 1.0, 0, 2.0], [0, 0, 0, 0], [3.0, 0, 0, 0]])).all()
np.True_
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import serialize
from ..errors import FormatError
from .level import IndexedLevel, POS, check_pos, ranges, register


@serialize.node
@register("band")
@dataclass(frozen=True, eq=False, repr=False)
class SparseBand(IndexedLevel):
    """A banded level: ``ofs`` (one more than the parent's positions) and ``idx`` (block ends)."""

    child: Any
    size: Any = None
    ofs: Any = None
    idx: Any = None
    index_dtype: Any = None

    name: ClassVar[str] = "SparseBand"
    index_arrays: ClassVar[tuple[str, ...]] = ("ofs", "idx")
    locatable: ClassVar[bool] = True
    starts_array: ClassVar[str] = "ofs"
    appends_band: ClassVar[str] = "idx"

    def count(self, parent_count):
        return int(self.ofs[parent_count])

    def children(self, parents):
        parents = np.asarray(parents, dtype=POS)
        starts = self.ofs[parents].astype(POS)
        counts = self.ofs[parents + 1].astype(POS) - starts
        pix, child = ranges(starts, counts)
        lo = self.idx[parents].astype(POS) - counts
        coords = lo[pix] + (child - starts[pix])
        return pix, (coords,), child

    def fiber(self, p, limit):
        start, stop = int(self.ofs[p]), int(self.ofs[p + 1])
        child = np.arange(start, min(stop, start + limit), dtype=POS)
        lo = int(self.idx[p]) - (stop - start)
        return (lo + child - start,), child, stop - start

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        i = coords[0]
        lo = np.full(parent_count, np.iinfo(np.int64).max, dtype=POS)
        hi = np.full(parent_count, -1, dtype=POS)
        np.minimum.at(lo, parent_pos, i)
        np.maximum.at(hi, parent_pos, i)
        counts = np.where(hi >= 0, hi - lo + 1, 0)
        ofs = np.zeros(parent_count + 1, dtype=self.index_dtype)
        np.cumsum(counts, out=ofs[1:])
        idx = np.where(hi >= 0, hi + 1, 0).astype(self.index_dtype)
        child_pos = ofs[parent_pos].astype(POS) + (i - lo[parent_pos])
        child = self.child.from_entries(int(ofs[-1]), child_pos, coords[1:], vals, sizes[1:])
        return type(self)(child, int(sizes[0]), ofs, idx)

    def check(self, parent_count, where):
        if self.size is None or self.size < 0:
            raise FormatError(f"{where}: size must be a non-negative integer, got {self.size}")
        if self.ofs is None:
            raise FormatError(f"{where}: ofs and idx are missing")
        if len(self.idx) != parent_count:
            raise FormatError(f"{where}: idx has length {len(self.idx)}, expected {parent_count}")
        check_pos(self.ofs, parent_count, int(self.ofs[-1]) if len(self.ofs) else 0, "ofs", where, name="ofs")
        n = np.diff(self.ofs.astype(POS))
        bad = np.flatnonzero((n > 0) & ((self.idx - n < 0) | (self.idx > self.size)))
        if bad.size:
            p = int(bad[0])
            raise FormatError(f"{where}: the block of fiber {p} ends at {self.idx[p]} with {n[p]} entries, "
                              f"outside [0, {self.size})")
        return int(self.ofs[parent_count])
