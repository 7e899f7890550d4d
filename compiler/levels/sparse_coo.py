"""SparseCOO: ``ndim`` modes stored as coordinate tuples, struct-of-arrays.

The tuples of fiber ``p`` are ``(idx[0][q], ..., idx[ndim-1][q])`` for ``q`` in
``[pos[p], pos[p+1])``, in lexicographic order without duplicates; the child
position of tuple ``q`` is ``q``. A coordinate iterator (the lattice strategy)
walks it as TACO does: a non-unique compressed level over singletons
(``mode_unique`` gives the per-mode uniqueness).

>>> from compiler.levels import Element
>>> c = SparseCOO(2, Element(0.0, [1.0, 2.0]), (3, 4), pos=[0, 2], idx=([0, 2], [3, 1]))
>>> c.nmodes, c.count(1), sorted(c.arrays()), c.mode_unique
(2, 2, ['idx0', 'idx1', 'pos'], (False, True))
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from .. import serialize
from ..dtypes import is_integer
from ..errors import FormatError
from .level import (POS, Level, arr_repr, check_pos, check_range, checked_size, fiber_of, group_starts,
                    index_array, not_increasing, ranges, register, unify_index_dtype)


@serialize.node
@register("coo")
@dataclass(frozen=True, eq=False, repr=False)
class SparseCOO(Level):
    """A coordinate-list level over ``ndim`` modes with extents ``shape``."""

    ndim: int
    child: Any
    shape: Any = None
    pos: Any = None
    idx: Any = None
    index_dtype: Any = None

    name: ClassVar[str] = "SparseCOO"
    coordinate_list: ClassVar[bool] = True

    def crd_of(self, mode: int) -> str:
        return f"idx{mode}"

    def stored_coordinates(self) -> dict[str, int]:
        return {self.crd_of(m): m for m in range(self.ndim)}

    def __post_init__(self):
        if not is_integer(self.ndim) or self.ndim < 1:
            raise FormatError(f"SparseCOO's first argument is the number of modes it stores, an integer >= 1; "
                              f"got {self.ndim!r}")
        ndim = int(self.ndim)
        object.__setattr__(self, "ndim", ndim)
        if self.shape is not None:
            if isinstance(self.shape, str) or not np.iterable(self.shape):
                raise FormatError(f"SparseCOO({ndim})'s shape is a tuple of {ndim} extents; got {self.shape!r}")
            shape = tuple(None if s is None else checked_size(s, "SparseCOO") for s in self.shape)
            if len(shape) != ndim:
                raise FormatError(f"SparseCOO({ndim}) needs {ndim} extents, got shape {shape}")
            object.__setattr__(self, "shape", shape)
        if (self.pos is None) != (self.idx is None):
            raise FormatError("SparseCOO needs both pos and idx, or neither (a format spec)")
        arrays = []
        if self.pos is not None:
            idx = tuple(self.idx)
            if len(idx) != ndim:
                raise FormatError(f"SparseCOO({ndim}) needs {ndim} idx arrays, got {len(idx)}")
            arrays = [index_array(self.pos, "SparseCOO pos")]
            arrays += [index_array(a, f"SparseCOO idx{k}") for k, a in enumerate(idx)]
        arrays, dt = unify_index_dtype(arrays, self.index_dtype,
                                       ["SparseCOO pos"] + [f"SparseCOO idx{k}" for k in range(len(arrays) - 1)])
        if arrays:
            object.__setattr__(self, "pos", arrays[0])
            object.__setattr__(self, "idx", tuple(arrays[1:]))
        object.__setattr__(self, "index_dtype", dt)

    @property
    def nmodes(self) -> int:
        return self.ndim

    @property
    def mode_unique(self) -> tuple[bool, ...]:
        """Uniqueness of each mode seen as TACO levels (compressed-non-unique, singletons)."""
        return (False,) * (self.ndim - 1) + (True,)

    @property
    def sizes(self) -> tuple:
        return self.shape if self.shape is not None else (None,) * self.ndim

    @property
    def has_data(self) -> bool:
        return self.pos is not None

    def arrays(self):
        if self.pos is None:
            return {}
        return {"pos": self.pos, **{f"idx{k}": a for k, a in enumerate(self.idx)}}

    def array_dtypes(self):
        return {"pos": self.index_dtype, **{f"idx{k}": self.index_dtype for k in range(self.ndim)}}

    def with_arrays(self, arrays):
        return replace(self, pos=arrays["pos"], idx=tuple(arrays[f"idx{k}"] for k in range(self.ndim)))

    def spec(self) -> "SparseCOO":
        return type(self)(self.ndim, self.child.spec(), index_dtype=self.index_dtype)

    def format_key(self) -> tuple:
        return ("SparseCOO", self.ndim, self.index_dtype.name, self.child.format_key())

    def spec_str(self) -> str:
        extra = "" if self.index_dtype == np.int64 else f", index_dtype={self.index_dtype.name!r}"
        return f"SparseCOO({self.ndim}, {self.child.spec_str()}{extra})"

    def _data_repr(self) -> str:
        idx = ", ".join(arr_repr(a) for a in self.idx)
        return f"SparseCOO({self.ndim}, {self.child!r}, {self.shape}, pos={arr_repr(self.pos)}, idx=({idx}))"

    def count(self, parent_count: int) -> int:
        return int(self.pos[parent_count])

    def with_sizes(self, sizes) -> "SparseCOO":
        n = self.ndim
        return replace(self, child=self.child.with_sizes(sizes[n:]), shape=tuple(sizes[:n]))

    def children(self, parents):
        parents = np.asarray(parents, dtype=POS)
        starts = self.pos[parents]
        pix, child = ranges(starts, self.pos[parents + 1] - starts)
        return pix, tuple(a[child].astype(POS) for a in self.idx), child

    def fiber(self, p: int, limit: int):
        start, stop = int(self.pos[p]), int(self.pos[p + 1])
        child = np.arange(start, min(stop, start + limit), dtype=POS)
        return tuple(a[child].astype(POS) for a in self.idx), child, stop - start

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes) -> "SparseCOO":
        n = self.ndim
        new = group_starts([parent_pos, *coords[:n]])
        child_pos = np.cumsum(new, dtype=POS) - 1
        counts = np.bincount(parent_pos[new], minlength=parent_count)
        pos = np.zeros(parent_count + 1, dtype=self.index_dtype)
        np.cumsum(counts, out=pos[1:])
        idx = tuple(c[new].astype(self.index_dtype) for c in coords[:n])
        child = self.child.from_entries(len(idx[0]) if n else 0, child_pos, coords[n:], vals, sizes[n:])
        return type(self)(n, child, tuple(int(s) for s in sizes[:n]), pos, idx)

    def structure(self) -> tuple:
        return self.pos, tuple(self.idx), tuple(self.shape)

    def check(self, parent_count: int, where: str) -> int:
        if self.shape is None or any(s is None or s < 0 for s in self.shape):
            raise FormatError(f"{where}: shape must be {self.ndim} non-negative integers, got {self.shape}")
        if self.pos is None:
            raise FormatError(f"{where}: pos and idx are missing")
        pos, idx = self.pos, self.idx
        for k in range(1, self.ndim):
            if len(idx[k]) != len(idx[0]):
                raise FormatError(f"{where}: idx{k} has length {len(idx[k])}, expected {len(idx[0])} (as idx0)")
        check_pos(pos, parent_count, len(idx[0]), "idx0", where)
        for k in range(self.ndim):
            check_range(idx[k], self.shape[k], f"idx{k}", where)
        bad = not_increasing(pos, list(idx))
        if bad:
            q, dup = bad
            names = "(" + ", ".join(f"idx{k}" for k in range(self.ndim)) + ")"
            at = lambda r: "(" + ", ".join(str(a[r]) for a in idx) + ")"  # noqa: E731
            raise FormatError(
                f"{where}: coordinates are not in lexicographic order in fiber {fiber_of(pos, q)}: "
                f"{names}[{q}]={at(q)} follows {names}[{q - 1}]={at(q - 1)}"
                + (" (duplicate coordinate)" if dup else ""))
        return len(idx[0])
