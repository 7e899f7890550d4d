"""A level of no built-in class that stores what a SparseList stores under other array names,
``crd[starts[p]:starts[p + 1]]``: the tests of levels that name their arrays themselves build on it
(tests/compiler/levels/test_level_array_names.py reads one, tests/compiler/looplets/
test_looplets_level_writers.py writes one).
"""

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from compiler.levels.level import IndexedLevel, POS, check_pos, group_starts, ranges


@dataclass(frozen=True, eq=False, repr=False)
class StartsCrd(IndexedLevel):
    """A sorted list of coordinates per fiber, ``crd[starts[p]:starts[p + 1]]``, each entry its own child."""

    child: Any
    size: Any = None
    starts: Any = None
    crd: Any = None
    index_dtype: Any = None

    name: ClassVar[str] = "StartsCrd"
    index_arrays: ClassVar[tuple[str, ...]] = ("starts", "crd")
    starts_array: ClassVar[str] = "starts"
    crd_array: ClassVar[str] = "crd"
    coordinate_arrays: ClassVar[tuple[str, ...]] = ("crd",)

    def count(self, parent_count):
        return int(self.starts[parent_count])

    def children(self, parents):
        parents = np.asarray(parents, dtype=POS)
        first = self.starts[parents]
        pix, child = ranges(first, self.starts[parents + 1] - first)
        return pix, (self.crd[child].astype(POS),), child

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        new = group_starts([parent_pos, coords[0]])
        starts = np.zeros(parent_count + 1, dtype=self.index_dtype)
        np.cumsum(np.bincount(parent_pos[new], minlength=parent_count), out=starts[1:])
        crd = coords[0][new].astype(self.index_dtype)
        child = self.child.from_entries(len(crd), np.cumsum(new, dtype=POS) - 1, coords[1:], vals, sizes[1:])
        return type(self)(child, int(sizes[0]), starts, crd)

    def check(self, parent_count, where):
        check_pos(self.starts, parent_count, len(self.crd), "crd", where, "starts")
        return len(self.crd)
