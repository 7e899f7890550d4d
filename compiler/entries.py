"""Entries given as coordinate lists, made into a format's levels: sorted into storage order (one
argsort of a linear index where it fits), duplicates summed (an integer sum out of its dtype's
range refused), and the room a format needs checked before it is allocated (a sparse level's
positions under Dense levels; coordinates an int32 index cannot hold). :class:`~compiler.tensor.Tensor`'s
constructors from numpy, coordinates and scipy build on them.

>>> c, v = sum_duplicates([np.array([1, 1]), np.array([2, 2])], np.array([1.0, 2.0]), (2, 3))
>>> [x.tolist() for x in c], v.tolist()
([[1], [2]], [3.0])
"""

from __future__ import annotations

import numpy as np

from . import memory
from .errors import DTypeError, FormatError
from .format import Format, narrow_index_levels
from .levels import Level
from .levels.level import POS, group_starts, not_increasing

def sum_duplicates(coords: list, vals: np.ndarray, shape, label: str = "tensor",
                    modes: tuple | None = None) -> tuple[list, np.ndarray]:
    """Entries sorted by ``coords`` (outermost first) with duplicates summed (or-ed for bool values);
    an integer sum out of the dtype's range is a DTypeError naming ``label`` and the entry's
    coordinates (logical ones, when ``modes`` gives each row's mode).

    >>> c, v = sum_duplicates([np.array([1, 0, 1]), np.array([0, 2, 0])], np.array([1.0, 2.0, 3.0]), (2, 3))
    >>> [x.tolist() for x in c], v.tolist()
    ([[0, 1], [2, 0]], [2.0, 4.0])
    """
    if len(vals) < 2:
        return coords, vals
    order = storage_sort(coords, list(shape), stable=True)   # (duplicates are summed in the given order)
    if order is not None:
        coords, vals = [c[order] for c in coords], vals[order]
    new = np.ones(len(vals), dtype=bool)
    new[1:] = np.any([c[1:] != c[:-1] for c in coords], axis=0)
    if new.all():
        return coords, vals
    starts = np.flatnonzero(new)
    if vals.dtype.kind == "b":
        return [c[starts] for c in coords], np.logical_or.reduceat(vals, starts)
    with np.errstate(invalid="ignore", over="ignore"):   # (inf + -inf is NaN, as in scipy)
        sums = np.add.reduceat(vals, starts)
    if vals.dtype.kind in "iu":
        # scipy and numpy wrap a sum past the integer range; a tensor's entry is refused instead.
        # The float sums are within 2^53-ish of the true ones, a wrapped sum is 2^64 away.
        approx = np.add.reduceat(vals.astype(np.float64), starts)
        top, slack = np.iinfo(vals.dtype), 2.0 ** 40 if vals.dtype.itemsize == 8 else 0.0
        bad = np.flatnonzero((approx < float(top.min) - slack) | (approx > float(top.max) + slack) |
                             (np.abs(approx - sums.astype(np.float64)) > 2.0 ** 62))
        if len(bad):
            stored = [int(c[starts[bad[0]]]) for c in coords]
            where = tuple(stored[modes.index(m)] for m in range(len(stored))) if modes else tuple(stored)
            raise DTypeError(f"{label}: the duplicates at {where} sum to about "
                             f"{approx[bad[0]]:.6g}, which {vals.dtype.name} cannot hold")
    return [c[starts] for c in coords], sums


def from_entries(fmt: Format, coords: list, vals: np.ndarray, sizes: list, label: str) -> Level:
    """``fmt``'s levels holding sorted entries; a level that cannot hold them (a SparsePoint
    given two coordinates in a fiber) is named with the tensor."""
    require_dense_prefix(fmt, sizes, label)
    try:
        return fmt.root.from_entries(1, np.zeros(len(vals), dtype=POS), coords, vals, sizes)
    except FormatError as e:
        raise FormatError(f"{label}: {e}") from None


def require_dense_prefix(fmt: Format, sizes, label: str) -> None:
    """Refuse, before allocating it, the position array a sparse level under Dense levels needs
    (one entry per position of the Dense levels, all written): a CSR matrix of 3e9 rows."""
    count = 1
    for k, lvl in enumerate(fmt.levels):
        if not lvl.located_by_coordinate:
            memory.require((count + 1) * 8, f"{label}: level {k} ({lvl.name}) of {fmt.shorthand or fmt.root.spec_str()} "
                           f"with {count} positions above it", "a format with no Dense level above a sparse one "
                           "(dcsr or coo for a matrix) stores only the fibers that have entries")
            return
        count *= int(sizes[sum(x.nmodes for x in fmt.levels[:k])])


def check_index_room(fmt: Format, coords: list, count: int, label: str) -> None:
    """Refuse entries a level's index dtype cannot hold: an int32 level cast 2^31 to -2^31 (and
    a kernel then indexed with it). ``coords`` are in storage order, one array per mode.

    >>> from compiler.format import parse_format
    >>> check_index_room(parse_format("csr", index_dtype="int32"), [np.array([0]), np.array([2 ** 31])], 1, "A")
    Traceback (most recent call last):
    ...
    compiler.errors.FormatError: A: level 1 (SparseList) would store coordinate 2147483648 of mode 1, more than its index_dtype int32 holds (at most 2147483647); use index_dtype='int64'
    """
    for n, lvl, modes, idt in narrow_index_levels(fmt):
        top = np.iinfo(idt).max
        for s in modes:
            if s < len(coords) and len(coords[s]) and int(coords[s].max()) > top:
                raise FormatError(f"{label}: level {n} ({lvl.name}) would store coordinate {int(coords[s].max())} "
                                  f"of mode {fmt.mode_order[s]}, more than its index_dtype {idt.name} "
                                  f"holds (at most {top}); use index_dtype='int64'")
        if count > top:
            raise FormatError(f"{label}: level {n} ({lvl.name}) would count {count} entries, more than its "
                              f"index_dtype {idt.name} holds (at most {top}); use index_dtype='int64'")


def storage_sort(coords: list, sizes: list, stable: bool = False) -> "np.ndarray | None":
    """The permutation that sorts entries by their coordinates (``coords``, one array per mode,
    outermost first), or None when they are sorted already (CSR read as DCSR or COO). Equal
    entries keep their order when ``stable``.

    One argsort of the row-major linear index, when it fits in int64: 5x faster than lexsort
    on a million entries; lexsort otherwise.

    >>> storage_sort([np.array([1, 0, 1]), np.array([0, 2, 1])], [2, 3])
    array([1, 0, 2])
    >>> storage_sort([np.array([0, 1]), np.array([5, 0])], [2, 6]) is None
    True
    """
    if not coords or len(coords[0]) < 2:
        return None
    room = 1
    for s in sizes:
        room *= max(int(s), 1)
    if room > np.iinfo(np.int64).max:
        return np.lexsort(coords[::-1])
    key = coords[0].astype(np.int64, copy=True)
    for c, s in zip(coords[1:], sizes[1:]):
        key *= int(s)
        key += c
    if bool(np.all(key[1:] >= key[:-1])):
        return None
    return np.argsort(key, kind="stable" if stable else None)


def canonical_coo(c) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row, col and data of a scipy COO matrix, row-major sorted without duplicates.

    Returns scipy's own arrays when they already are (no copy); otherwise sorts and
    sums duplicates on copies.
    """
    row, col, data = c.row, c.col, c.data
    if row.dtype != col.dtype:
        row, col = row.astype(np.int64), col.astype(np.int64)
    if not_increasing(np.array([0, len(data)]), [row, col]) is None:
        return row, col, data
    order = np.lexsort((col, row))
    row, col, data = row[order], col[order], data[order]
    new = group_starts([row, col])
    starts = np.flatnonzero(new)
    if len(starts) < len(data):
        data = np.add.reduceat(data, starts) if data.dtype.kind != "b" else np.logical_or.reduceat(data, starts)
        row, col = row[new], col[new]
    return row, col, data


__all__ = ["canonical_coo", "check_index_room", "from_entries", "require_dense_prefix", "storage_sort", "sum_duplicates"]
