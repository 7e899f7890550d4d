"""Dense: every coordinate of the mode is stored; position ``p * size + i`` holds coordinate ``i``.

It owns no arrays, only its size.

>>> from compiler.levels import Element
>>> d = Dense(Element(0.0), 3)
>>> d.count(2), d.full, d.locatable, d.spec_str()
(6, True, True, 'Dense(Element(0.0))')
>>> pix, (i,), child = d.children(np.array([1]))
>>> pix.tolist(), i.tolist(), child.tolist()
([0, 0, 0], [0, 1, 2], [3, 4, 5])
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from .. import serialize
from ..errors import FormatError
from .level import POS, Level, checked_size, register


@serialize.node
@register()
@dataclass(frozen=True, eq=False, repr=False)
class Dense(Level):
    """A dense level of ``size`` coordinates per fiber over ``child``."""

    child: Any
    size: Any = None

    name: ClassVar[str] = "Dense"
    full: ClassVar[bool] = True
    locatable: ClassVar[bool] = True
    random_write: ClassVar[bool] = True
    slot_per_coordinate: ClassVar[bool] = True
    locates_under_appended: ClassVar[bool] = True

    def __post_init__(self):
        if self.size is not None:
            object.__setattr__(self, "size", checked_size(self.size, "Dense"))

    @property
    def sizes(self) -> tuple:
        return (self.size,)

    @property
    def has_data(self) -> bool:
        return True  # Dense owns no arrays: only its descendants decide

    def spec(self) -> "Dense":
        return type(self)(self.child.spec())

    def format_key(self) -> tuple:
        return ("Dense", self.child.format_key())

    def spec_str(self) -> str:
        return f"Dense({self.child.spec_str()})"

    def _data_repr(self) -> str:
        return f"Dense({self.child!r}, {self.size})"

    def count(self, parent_count: int) -> int:
        return parent_count * self.size

    def with_sizes(self, sizes) -> "Dense":
        return replace(self, child=self.child.with_sizes(sizes[1:]), size=sizes[0])

    def allocated_arrays(self) -> dict:
        return {}   # (no array: a position is computed from the parent's)

    def position_arrays(self) -> tuple:
        return ()

    def assembled(self, arrays, child):
        return self._copy_with({"child": child})

    def children(self, parents):
        n = self.size
        parents = np.asarray(parents, dtype=POS)
        pix = np.repeat(np.arange(len(parents), dtype=POS), n)
        i = np.tile(np.arange(n, dtype=POS), len(parents))
        return pix, (i,), parents[pix] * n + i

    def fiber(self, p: int, limit: int):
        k = min(limit, self.size)
        i = np.arange(k, dtype=POS)
        return (i,), p * self.size + i, self.size

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes) -> "Dense":
        n = int(sizes[0])
        child_pos = parent_pos * n + coords[0]
        child = self.child.from_entries(parent_count * n, child_pos, coords[1:], vals, sizes[1:])
        return type(self)(child, n)

    def structure(self) -> tuple:
        return ()   # (no array a call rechecks: its size is the tensor's shape)

    def check(self, parent_count: int, where: str) -> int:
        if self.size is None or self.size < 0:
            raise FormatError(f"{where}: size must be a non-negative integer, got {self.size}")
        return parent_count * self.size
