"""Element: the leaf level holding one value per position of its parent, and a fill value.

>>> e = Element(0.0, [1.0, 2.0])
>>> e.dtype.name, e.count(2), e.arrays()["vals"].tolist()
('float64', 2, [1.0, 2.0])
>>> Element(0, dtype="int32").spec_str()
"Element(0, dtype='int32')"
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from .. import serialize
from ..dtypes import cast_values, value_dtype
from ..errors import FormatError
from .level import Level, arr_repr, fill_key, normalize_fill, register, resolve_value_dtype


@serialize.node
@register()
@dataclass(frozen=True, eq=False, repr=False)
class Element(Level):
    """Leaf: ``vals[p]`` is the value at position ``p``; positions not stored hold ``fill``.

    ``dtype`` defaults to the dtype of ``vals``; a spec without ``dtype`` takes the
    dtype of whatever data it is filled with.
    """

    fill: Any = 0.0
    vals: Any = None
    dtype: Any = None

    name: ClassVar[str] = "Element"
    is_leaf: ClassVar[bool] = True
    child: ClassVar[None] = None

    def __post_init__(self):
        dt = resolve_value_dtype(self.dtype)
        vals = self.vals
        if vals is not None:
            vals = np.asarray(vals)
            if dt is None:
                dt = value_dtype(vals.dtype)
            elif vals.dtype != dt:
                vals = cast_values(vals, dt, "Element vals")
            if vals.ndim != 1:
                raise FormatError(f"Element vals must be a 1-D array, got shape {vals.shape}")
            vals = np.ascontiguousarray(vals)   # (a strided view is copied: kernels read arrays as C arrays)
        object.__setattr__(self, "dtype", dt)
        object.__setattr__(self, "vals", vals)
        object.__setattr__(self, "fill", normalize_fill(self.fill, dt))

    @property
    def has_data(self) -> bool:
        return self.vals is not None

    def arrays(self):
        return {} if self.vals is None else {"vals": self.vals}

    def array_dtypes(self):
        return {"vals": self.dtype}

    def with_arrays(self, arrays):
        return replace(self, vals=arrays["vals"])

    def assembled(self, arrays, child):
        vals = arrays["vals"]
        if self.dtype is None:
            # (a format given without a dtype takes its kernel's values', as a spec filled with data does)
            return self._copy_with({"vals": vals, "dtype": value_dtype(vals.dtype)})
        return self._copy_with({"vals": vals})

    def spec(self) -> "Element":
        return Element(self.fill, dtype=self.dtype)

    def format_key(self) -> tuple:
        return ("Element", None if self.dtype is None else self.dtype.name, fill_key(self.fill))

    def spec_str(self) -> str:
        if self.dtype is None or self.dtype == np.float64:
            return f"Element({self.fill!r})"
        return f"Element({self.fill!r}, dtype={self.dtype.name!r})"

    def _data_repr(self) -> str:
        inner = self.spec_str()[:-1]
        return f"{inner}, vals={arr_repr(self.vals)})"

    def count(self, parent_count: int) -> int:
        return parent_count

    def with_sizes(self, sizes) -> "Element":
        return self

    def values_at(self, positions: np.ndarray) -> np.ndarray:
        """The stored values at ``positions``."""
        return self.vals[positions]

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes) -> "Element":
        dt = self.dtype if self.dtype is not None else value_dtype(vals.dtype)
        vals = cast_values(np.asarray(vals), dt, "Element vals")
        if len(parent_pos) == parent_count:
            # every position holds an entry (a dense tensor): the values are already in order
            out = np.array(vals, dtype=dt, copy=True)
        else:
            out = np.full(parent_count, normalize_fill(self.fill, dt), dtype=dt)
            out[parent_pos] = vals
        return Element(self.fill, out, dt)

    def structure(self) -> tuple:
        return ()   # (no array a call rechecks: its values are any values)

    def check(self, parent_count: int, where: str) -> int:
        if self.vals is None:
            raise FormatError(f"{where}: vals is missing")
        if len(self.vals) != parent_count:
            raise FormatError(f"{where}: vals has length {len(self.vals)}, expected {parent_count}")
        return parent_count
