"""SparseInterval: at most one run per fiber, ``[left[r], right[r])``, holding one child.

Stored like :class:`~compiler.levels.sparse_run_list.SparseRunList` (``pos``, ``left``,
``right``) with at most one run per fiber: an interval of equal values (e.g. a
contiguous stretch of True in a mask) in a fiber of fill.

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.levels import Dense, Element
>>> M = np.array([[0, 1.0, 1.0, 0], [0, 0, 0, 0], [2.0, 0, 0, 0]])
>>> A = Tensor.from_numpy(M, Dense(SparseInterval(Element(0.0))))
>>> A.levels[1].left.tolist(), A.levels[1].right.tolist(), A.vals.tolist()
([1, 0], [3, 1], [1.0, 2.0])
>>> Tensor.from_numpy(np.array([1.0, 0, 1.0]), SparseInterval(Element(0.0)), name="v")
Traceback (most recent call last):
...
compiler.errors.FormatError: v: SparseInterval stores at most one run of equal values per fiber, but fiber 0 has 2; use SparseRunList
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .. import serialize
from ..errors import FormatError
from .level import POS, register
from .sparse_run_list import SparseRunList


@serialize.node
@register()
@dataclass(frozen=True, eq=False, repr=False)
class SparseInterval(SparseRunList):
    """At most one run per fiber (see the module docstring)."""

    name: ClassVar[str] = "SparseInterval"
    at_most_one: ClassVar[bool] = True

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        out = super().from_entries(parent_count, parent_pos, coords, vals, sizes)
        n = np.diff(out.pos.astype(POS))
        if n.size and n.max() > 1:
            p = int(np.argmax(n > 1))
            raise FormatError(f"SparseInterval stores at most one run of equal values per fiber, but fiber {p} "
                              f"has {int(n[p])}; use SparseRunList")
        return out

    def check(self, parent_count, where):
        count = super().check(parent_count, where)
        self.check_at_most_one(parent_count, where)
        return count

    def check_at_most_one(self, parent_count, where):
        n = np.diff(self.pos[:parent_count + 1].astype(POS))
        bad = np.flatnonzero(n > 1)
        if bad.size:
            raise FormatError(f"{where}: fiber {int(bad[0])} stores {int(n[bad[0]])} runs; a SparseInterval "
                              f"fiber stores at most one; use SparseRunList")
