"""Subclasses of the built-in band, block and run levels that store the same arrays under names of
their own: the built-in read paths and writers of both strategies serve them only if they ask the
level for its arrays' names (``starts_array``, ``appends_band``, ``appends_blocks``,
``run_start_array``, ``run_end_array``) instead of spelling ``ofs``, ``idx``, ``pos``, ``left`` or
``right`` (issue 29). tests/compiler/levels/test_level_renamed_arrays.py lowers kernels over them.

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.levels import Dense, Element
>>> A = Tensor.from_numpy(np.array([[0, 1.0, 1.0, 0]]), Dense(SparseRuns(Element(0.0))))
>>> lvl = A.levels[1]
>>> lvl.fibers.tolist(), lvl.first.tolist(), lvl.stop.tolist(), lvl.pos is None
([0, 1], [1], [3], True)
"""

from dataclasses import dataclass
from typing import Any, ClassVar

from compiler.levels import RunList, SparseBand, SparseBlockList, SparseRunList


class Renamed:
    """What a renamed level shares: its parent's storage methods, run on the parent holding its arrays.

    ``renames`` maps each of the parent's array names to this level's; the parent's own fields of
    those names stay ``None`` (a spec's), so nothing can read them unnoticed.
    """

    renames: ClassVar[dict[str, str]] = {}

    @classmethod
    def parent_format(cls) -> type:
        return next(c for c in cls.__mro__[1:] if c is not Renamed and "renames" not in vars(c)
                    and hasattr(c, "index_arrays"))

    def as_parent(self):
        arrays = {old: getattr(self, new) for old, new in self.renames.items()}
        return self.parent_format()(self.child, self.size, index_dtype=self.index_dtype, **arrays)

    def count(self, parent_count):
        return self.as_parent().count(parent_count)

    def children(self, parents):
        return self.as_parent().children(parents)

    def fiber(self, p, limit):
        return self.as_parent().fiber(p, limit)

    def check(self, parent_count, where):
        return self.as_parent().check(parent_count, where)

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        spec = self.parent_format()(self.child, index_dtype=self.index_dtype)
        built = spec.from_entries(parent_count, parent_pos, coords, vals, sizes)
        arrays = {new: getattr(built, old) for old, new in self.renames.items()}
        return type(self)(built.child, built.size, index_dtype=built.index_dtype, **arrays)


@dataclass(frozen=True, eq=False, repr=False)
class Banded(Renamed, SparseBand):
    """A SparseBand whose fibers start at ``starts[p]`` and whose bands end at ``ends[p]``."""

    starts: Any = None
    ends: Any = None

    name: ClassVar[str] = "Banded"
    renames: ClassVar[dict[str, str]] = {"ofs": "starts", "idx": "ends"}
    index_arrays: ClassVar[tuple[str, ...]] = ("starts", "ends")
    starts_array: ClassVar[str] = "starts"
    appends_band: ClassVar[str] = "ends"


@dataclass(frozen=True, eq=False, repr=False)
class Blocked(Renamed, SparseBlockList):
    """A SparseBlockList: fiber ``p``'s blocks are ``blocks[p]`` to ``blocks[p + 1]``, block ``r``
    ends at ``block_end[r]`` and its entries start at ``block_at[r]``."""

    blocks: Any = None
    block_end: Any = None
    block_at: Any = None

    name: ClassVar[str] = "Blocked"
    renames: ClassVar[dict[str, str]] = {"pos": "blocks", "idx": "block_end", "ofs": "block_at"}
    index_arrays: ClassVar[tuple[str, ...]] = ("blocks", "block_end", "block_at")
    starts_array: ClassVar[str] = "blocks"
    appends_blocks: ClassVar[tuple[str, str]] = ("block_end", "block_at")


@dataclass(frozen=True, eq=False, repr=False)
class Runs(Renamed, RunList):
    """A RunList: fiber ``p``'s runs are ``fibers[p]`` to ``fibers[p + 1]``, run ``r`` ends at ``stop[r]``."""

    fibers: Any = None
    stop: Any = None

    name: ClassVar[str] = "Runs"
    renames: ClassVar[dict[str, str]] = {"pos": "fibers", "right": "stop"}
    index_arrays: ClassVar[tuple[str, ...]] = ("fibers", "stop")
    starts_array: ClassVar[str] = "fibers"
    run_end_array: ClassVar[str] = "stop"


@dataclass(frozen=True, eq=False, repr=False)
class SparseRuns(Renamed, SparseRunList):
    """A SparseRunList: fiber ``p``'s runs are ``fibers[p]`` to ``fibers[p + 1]``, run ``r`` covers
    ``[first[r], stop[r])``."""

    fibers: Any = None
    first: Any = None
    stop: Any = None

    name: ClassVar[str] = "SparseRuns"
    renames: ClassVar[dict[str, str]] = {"pos": "fibers", "left": "first", "right": "stop"}
    index_arrays: ClassVar[tuple[str, ...]] = ("fibers", "first", "stop")
    coordinate_arrays: ClassVar[tuple[str, ...]] = ("first",)
    starts_array: ClassVar[str] = "fibers"
    run_start_array: ClassVar[str] = "first"
    run_end_array: ClassVar[str] = "stop"
