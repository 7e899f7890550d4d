"""RunList: a fiber is a sequence of runs that covers every coordinate (run-length encoding).

Fiber ``p`` owns runs ``r`` in ``[pos[p], pos[p+1])``; run ``r`` covers the coordinates
``[right[r-1], right[r])`` (``[0, right[r])`` for the fiber's first run), and every
coordinate of it has child position ``r``. The last run of a fiber ends at ``size``.
Runs of the fill are stored like any other run. Finch's RunList; the Looplets paper's
RepeatRLE (``"RepeatRLE"`` and ``"rle"`` are accepted as aliases).

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.levels import Dense, Element
>>> img = np.array([[1.0, 1.0, 1.0, 0, 0, 2.0], [0, 0, 0, 0, 0, 0]])
>>> A = Tensor.from_numpy(img, Dense(RunList(Element(0.0))))
>>> lvl = A.levels[1]
>>> lvl.pos.tolist(), lvl.right.tolist(), A.vals.tolist()
([0, 3, 4], [3, 5, 6, 6], [1.0, 0.0, 2.0, 0.0])
>>> (A.to_numpy() == img).all()
np.True_
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import serialize
from ..errors import FormatError
from .level import IndexedLevel, POS, check_pos, fiber_of, group_starts, ranges, register


def same_values(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise whether ``a`` and ``b`` hold one run's value: ``==`` (a -0.0 is 0.0), and NaN is
    NaN, so a run of NaN is one run.

    >>> same_values(np.array([np.nan, 1.0, -0.0]), np.array([np.nan, np.nan, 0.0])).tolist()
    [True, False, True]
    """
    eq = a == b
    if a.dtype.kind in "fc":
        eq |= np.isnan(a) & np.isnan(b)
    return eq


def run_units(parent_count, parent_pos, coords, vals, child):
    """Group sorted entries into runs of consecutive coordinates of one parent.

    Returns ``(unit_parent, unit_start, unit_stop, entry_unit)``: a unit is one
    coordinate (one distinct ``(parent, i)``) or, when ``child`` is a leaf, a maximal
    stretch of consecutive coordinates holding equal values. ``entry_unit[e]`` is the
    unit of entry ``e``.
    """
    i = coords[0]
    new = group_starts([parent_pos, i])  # first entry of each distinct (parent, i)
    if child.is_leaf and len(i):
        v = np.asarray(vals)
        same = np.zeros(len(i), dtype=bool)
        same[1:] = (parent_pos[1:] == parent_pos[:-1]) & (i[1:] == i[:-1] + 1) & same_values(v[1:], v[:-1])
        new = new & ~same
    unit_of = np.cumsum(new, dtype=POS) - 1
    starts = np.flatnonzero(new)
    unit_parent = parent_pos[starts].astype(POS)
    unit_start = i[starts].astype(POS)
    stops = np.zeros(len(starts), dtype=POS)
    if len(starts):
        last = np.r_[starts[1:], len(i)] - 1
        stops = i[last].astype(POS) + 1
    return unit_parent, unit_start, stops, unit_of


@serialize.node
@register("RepeatRLE", "rle")
@dataclass(frozen=True, eq=False, repr=False)
class RunList(IndexedLevel):
    """Run-length level: ``pos`` (runs of each fiber) and ``right`` (exclusive run ends)."""

    child: Any
    size: Any = None
    pos: Any = None
    right: Any = None
    index_dtype: Any = None

    name: ClassVar[str] = "RunList"
    index_arrays: ClassVar[tuple[str, ...]] = ("pos", "right")
    full: ClassVar[bool] = True
    appends_runs: ClassVar[bool] = True   # (full: the gaps between a kernel's entries are runs of the fill)

    def count(self, parent_count):
        return int(self.pos[parent_count])

    def _lefts(self) -> np.ndarray:
        """The first coordinate of every run."""
        right = self.right.astype(POS)
        left = np.zeros(len(right), dtype=POS)
        left[1:] = right[:-1]
        left[self.pos[:-1][self.pos[:-1] < len(right)].astype(POS)] = 0
        return left

    def children(self, parents):
        parents = np.asarray(parents, dtype=POS)
        starts = self.pos[parents].astype(POS)
        pix, run = ranges(starts, self.pos[parents + 1].astype(POS) - starts)
        left = self._lefts()[run]
        owner, coord = ranges(left, self.right[run].astype(POS) - left)
        return pix[owner], (coord,), run[owner]

    def fiber(self, p, limit):
        _, (coord,), child = self.children(np.array([p]))
        return (coord[:limit],), child[:limit], len(coord)

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        size = int(sizes[0])
        up, us, ue, unit_of = run_units(parent_count, parent_pos, coords, vals, self.child)
        # fill runs: before each unit (when it does not start where the previous one ended),
        # and after the last unit of each fiber; a fiber without units is one fill run
        prev_end = np.zeros(len(up), dtype=POS)
        if len(up):
            same = np.r_[False, up[1:] == up[:-1]]
            prev_end[1:] = np.where(same[1:], ue[:-1], 0)
        gap_before = us > prev_end
        last_end = np.zeros(parent_count, dtype=POS)
        last_end[up] = ue  # sorted: the last unit of each fiber wins
        tail = (last_end < size) if size > 0 else np.zeros(parent_count, dtype=bool)
        # runs in order, placed without sorting: each unit's fill run (if any) then its run, and
        # after a fiber's units its tail; the units are sorted by fiber, so a unit's first run
        # follows the runs of the units before it and the tails of the fibers before its own
        slots = gap_before.astype(POS) + 1
        tails_before = np.zeros(parent_count + 1, dtype=POS)
        np.cumsum(tail, out=tails_before[1:])
        first = np.cumsum(slots) - slots + tails_before[up]
        counts = np.bincount(up, weights=slots, minlength=parent_count).astype(POS) + tail
        pos = np.zeros(parent_count + 1, dtype=self.index_dtype)
        np.cumsum(counts, out=pos[1:])
        nruns = int(pos[parent_count])
        re = np.empty(nruns, dtype=POS)
        re[first[gap_before]] = us[gap_before]
        run_of_unit = first + gap_before
        re[run_of_unit] = ue
        re[pos[1:][tail].astype(POS) - 1] = size
        child_pos = run_of_unit[unit_of] if len(unit_of) else np.zeros(0, dtype=POS)
        if self.child.is_leaf and len(child_pos):
            keep = group_starts([child_pos])  # merged runs hold one value
            child = self.child.from_entries(nruns, child_pos[keep], [], np.asarray(vals)[keep], [])
        else:
            child = self.child.from_entries(nruns, child_pos, coords[1:], vals, sizes[1:])
        return type(self)(child, size, pos, re.astype(self.index_dtype))

    def check(self, parent_count, where):
        if self.size is None or self.size < 0:
            raise FormatError(f"{where}: size must be a non-negative integer, got {self.size}")
        if self.pos is None:
            raise FormatError(f"{where}: pos and right are missing")
        pos, right = self.pos, self.right
        check_pos(pos, parent_count, len(right), "right", where)
        n = np.diff(pos.astype(POS))
        empty = np.flatnonzero(n == 0) if self.size > 0 else np.zeros(0, dtype=POS)
        if empty.size:
            raise FormatError(f"{where}: fiber {int(empty[0])} has no runs; a RunList fiber covers "
                              f"[0, {self.size}) with at least one run")
        left = self._lefts()
        bad = np.flatnonzero(right <= left)
        if bad.size:
            q = int(bad[0])
            raise FormatError(f"{where}: run {q} of fiber {fiber_of(pos, q)} is empty or out of order: "
                              f"right[{q}]={right[q]} does not exceed the run's start {left[q]}")
        ends = pos[1:][n > 0].astype(POS) - 1
        bad = np.flatnonzero(right[ends] != self.size)
        if bad.size:
            q = int(ends[bad[0]])
            raise FormatError(f"{where}: the last run of fiber {fiber_of(pos, q)} ends at right[{q}]={right[q]}, "
                              f"not at the size {self.size}")
        return int(pos[parent_count])
