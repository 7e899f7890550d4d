"""Pattern: the leaf level of Boolean tensors whose stored values are all ``True``.

It owns no arrays: every position of its parent is ``True`` and the fill is ``False``
(unweighted graphs, masks).

>>> p = Pattern()
>>> p.fill, p.dtype.name, p.values_at(np.arange(2)).tolist()
(False, 'bool', [True, True])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .. import serialize
from ..errors import FormatError
from .level import Level, register


@serialize.node
@register()
@dataclass(frozen=True, eq=False, repr=False)
class Pattern(Level):
    """Leaf with implicit values: stored positions are ``True``, the fill is ``False``."""

    name: ClassVar[str] = "Pattern"
    is_leaf: ClassVar[bool] = True
    child: ClassVar[None] = None
    fill: ClassVar[bool] = False
    dtype: ClassVar[np.dtype] = np.dtype(bool)
    vals: ClassVar[None] = None

    def spec(self) -> "Pattern":
        return Pattern()

    def format_key(self) -> tuple:
        return ("Pattern",)

    def spec_str(self) -> str:
        return "Pattern()"

    def count(self, parent_count: int) -> int:
        return parent_count

    def with_sizes(self, sizes) -> "Pattern":
        return self

    def values_at(self, positions: np.ndarray) -> np.ndarray:
        return np.ones(len(positions), dtype=bool)

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes) -> "Pattern":
        if len(parent_pos) != parent_count:
            # a dense level above would make its unstored positions True
            raise FormatError(
                f"a Pattern leaf stores True at every position, but {parent_count - len(parent_pos)} "
                f"of its {parent_count} positions would hold False; use Element(False) instead")
        false = len(vals) - int(np.count_nonzero(vals))
        if false:
            raise FormatError(f"a Pattern leaf stores True at every position, but {false} of the values "
                              f"are False; use Element(False) instead")
        return self

    def structure(self) -> tuple:
        return ()   # (no array a call rechecks: it stores no values)

    def check(self, parent_count: int, where: str) -> int:
        return parent_count
