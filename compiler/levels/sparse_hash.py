"""SparseHash: a hash table of stored coordinates, written in any order, sorted at freeze.

Finch's non-sequentially constructed sparse level. Child positions are given out in
insertion order; the arrays are

* ``key[q]``: ``p * size + i`` for child position ``q`` (fiber ``p``, coordinate ``i``);
* ``tbl``: an open-addressing table (linear probing, capacity a power of two, at most
  half full) whose slot holds ``q + 1`` (``0``: empty); a key hashes to
  :func:`hash_slot`;
* ``pos``, ``idx``, ``ptr``: the sorted view built at freeze: fiber ``p``'s entries
  are ``pos[p]:pos[p+1]``, in increasing coordinate ``idx``, with child position ``ptr``.

Reads walk the sorted view (as a SparseList, through ``ptr``) or locate through the
table; writes locate and insert (the outer-product SpGEMM's output).

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.levels import Dense, Element
>>> A = Tensor.from_numpy(np.array([[0, 2.0, 0], [3.0, 0, 4.0]]), Dense(SparseHash(Element(0.0))))
>>> h = A.levels[1]
>>> h.pos.tolist(), h.idx.tolist(), h.ptr.tolist(), h.key.tolist(), len(h.tbl)
([0, 1, 3], [1, 0, 2], [0, 1, 2], [1, 3, 5], 8)
>>> [h.locate(p, i) for p, i in [(0, 1), (1, 2), (1, 1)]]
[0, 2, -1]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import serialize
from ..errors import FormatError
from .level import (POS, IndexedLevel, check_pos, check_range, fiber_of, group_starts, not_increasing,
                    ranges, register)

#: the smallest table a kernel allocates
MIN_CAPACITY = 8


def hash_slot(key, cap):
    """The home slot of ``key`` in a table of ``cap`` (a power of two) slots; numpy or int."""
    return (key ^ (key >> 13) ^ (key >> 29)) & (cap - 1)


def table_capacity(n: int) -> int:
    """The capacity that keeps ``n`` keys at most half full."""
    cap = MIN_CAPACITY
    while cap < 2 * n:
        cap *= 2
    return cap


def build_table(key: np.ndarray, cap: int | None = None) -> np.ndarray:
    """The open-addressing table of ``key`` (child position ``q`` stored as ``q + 1``), as
    inserting the keys one after another in order builds it (a kernel's table is the same).

    The slots that end up taken do not depend on the order of insertion (linear probing), so
    they are found at once by inserting in the order of the home slots, each key at its home or
    just after the key before (a running maximum). A key's probes stay in its run of taken
    slots (its cluster), so only the keys of one cluster wait for each other: round ``r``
    inserts the ``r``-th key of every cluster at once.

    >>> build_table(np.array([8, 16, 1]), 8).tolist()   # 8 and 16 share home 0: 1 goes on to 2
    [1, 2, 3, 0, 0, 0, 0, 0]
    """
    key = np.asarray(key, dtype=np.int64)
    cap = table_capacity(len(key)) if cap is None else cap
    n, mask = len(key), cap - 1
    homes = hash_slot(key, cap)
    tbl = np.zeros(cap, dtype=np.int64)
    if n == 0:
        return tbl
    by_home = np.argsort(homes, kind="stable")
    j = np.arange(n)
    slot = j + np.maximum.accumulate(homes[by_home] - j)
    if slot[-1] >= cap or (slot[0] == 0 and slot[-1] == mask):
        # a cluster wraps past the last slot: one after another
        table = tbl.tolist()
        for q, h in enumerate(homes.tolist(), 1):
            while table[h]:
                h = (h + 1) & mask
            table[h] = q
        return np.array(table, dtype=np.int64)
    cluster = np.empty(n, dtype=np.int64)
    cluster[by_home] = np.cumsum(np.r_[True, np.diff(slot) > 1]) - 1
    order = np.lexsort((j, cluster))                      # each cluster's keys, in insertion order
    first = np.r_[True, cluster[order][1:] != cluster[order][:-1]]
    rank = np.empty(n, dtype=np.int64)
    rank[order] = j - np.maximum.accumulate(np.where(first, j, 0))
    by_rank = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[by_rank], np.arange(int(rank.max()) + 2))
    for r in range(len(bounds) - 1):
        q = by_rank[bounds[r]:bounds[r + 1]]
        h = homes[q]
        busy = np.flatnonzero(tbl[h])
        while len(busy):
            h[busy] = (h[busy] + 1) & mask
            busy = busy[tbl[h[busy]] != 0]
        tbl[h] = q + 1
    return tbl


@serialize.node
@register("hash", "sparsedict")
@dataclass(frozen=True, eq=False, repr=False)
class SparseHash(IndexedLevel):
    """``key``, ``tbl`` (the hash table) and the sorted view ``pos``, ``idx``, ``ptr``."""

    child: Any
    size: Any = None
    pos: Any = None
    idx: Any = None
    ptr: Any = None
    key: Any = None
    tbl: Any = None
    index_dtype: Any = None

    name: ClassVar[str] = "SparseHash"
    index_arrays: ClassVar[tuple[str, ...]] = ("pos", "idx", "ptr")
    coordinate_arrays: ClassVar[tuple[str, ...]] = ("idx",)
    fixed_arrays: ClassVar[dict[str, str]] = {"key": "int64", "tbl": "int64"}
    locatable: ClassVar[bool] = True
    random_write: ClassVar[bool] = True
    inserts_nested: ClassVar[bool] = True
    hashed: ClassVar[bool] = True
    child_array: ClassVar[str] = "ptr"   # (the sorted view points at each key's child)
    keys_in_table: ClassVar[tuple[str, str]] = ("key", "tbl")

    def count(self, parent_count):
        return len(self.key)

    def children(self, parents):
        parents = np.asarray(parents, dtype=POS)
        starts = self.pos[parents].astype(POS)
        pix, q = ranges(starts, self.pos[parents + 1].astype(POS) - starts)
        return pix, (self.idx[q].astype(POS),), self.ptr[q].astype(POS)

    def fiber(self, p, limit):
        start, stop = int(self.pos[p]), int(self.pos[p + 1])
        q = np.arange(start, min(stop, start + limit), dtype=POS)
        return (self.idx[q].astype(POS),), self.ptr[q].astype(POS), stop - start

    def locate(self, p: int, i: int) -> int:
        """The child position of coordinate ``i`` of fiber ``p``, or -1 (a probe of ``tbl``)."""
        cap = len(self.tbl)
        k = p * self.size + i
        h = int(hash_slot(k, cap))
        while self.tbl[h]:
            q = int(self.tbl[h]) - 1
            if self.key[q] == k:
                return q
            h = (h + 1) & (cap - 1)
        return -1

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        n = int(sizes[0])
        i = coords[0]
        new = group_starts([parent_pos, i])
        child_pos = np.cumsum(new, dtype=POS) - 1
        counts = np.bincount(parent_pos[new], minlength=parent_count)
        pos = np.zeros(parent_count + 1, dtype=self.index_dtype)
        np.cumsum(counts, out=pos[1:])
        idx = i[new].astype(self.index_dtype)
        key = parent_pos[new].astype(np.int64) * n + idx.astype(np.int64)
        ptr = np.arange(len(idx), dtype=self.index_dtype)
        child = self.child.from_entries(len(idx), child_pos, coords[1:], vals, sizes[1:])
        return type(self)(child, n, pos, idx, ptr, key, build_table(key))

    def check(self, parent_count, where):
        if self.size is None or self.size < 0:
            raise FormatError(f"{where}: size must be a non-negative integer, got {self.size}")
        if self.pos is None:
            raise FormatError(f"{where}: pos, idx, ptr, key and tbl are missing")
        pos, idx, ptr, key, tbl = self.pos, self.idx, self.ptr, self.key, self.tbl
        nnz = len(key)
        check_pos(pos, parent_count, len(idx), "idx", where)
        if len(idx) != nnz or len(ptr) != nnz:
            raise FormatError(f"{where}: idx, ptr and key must have one entry per stored coordinate "
                              f"(got {len(idx)}, {len(ptr)}, {nnz})")
        check_range(idx, self.size, "idx", where)
        bad = not_increasing(pos, [idx])
        if bad:
            q, dup = bad
            raise FormatError(f"{where}: idx is not strictly increasing in fiber {fiber_of(pos, q)}: "
                              f"idx[{q}]={idx[q]} follows idx[{q - 1}]={idx[q - 1]}"
                              + (" (duplicate coordinate)" if dup else ""))
        if nnz and (ptr.min() < 0 or ptr.max() >= nnz or len(np.unique(ptr)) != nnz):
            raise FormatError(f"{where}: ptr must be a permutation of the child positions 0..{nnz - 1}")
        owner = np.repeat(np.arange(parent_count, dtype=np.int64), np.diff(pos.astype(np.int64)))
        want = owner * self.size + idx.astype(np.int64)
        if nnz and not np.array_equal(key[ptr.astype(np.int64)], want):
            s = int(np.flatnonzero(key[ptr.astype(np.int64)] != want)[0])
            raise FormatError(f"{where}: key[{int(ptr[s])}]={key[int(ptr[s])]} disagrees with the sorted view "
                              f"(fiber {owner[s]}, coordinate {idx[s]}: expected {want[s]})")
        cap = len(tbl)
        if cap != table_capacity(nnz):
            raise FormatError(f"{where}: tbl has {cap} slots for {nnz} keys; expected {table_capacity(nnz)}, the "
                              f"smallest power of two >= max({MIN_CAPACITY}, 2 * keys)")
        if cap and tbl.min() < 0:   # (a negative slot is neither empty nor a child: probing runs past the keys)
            s = int(np.flatnonzero(tbl < 0)[0])
            raise FormatError(f"{where}: tbl[{s}]={tbl[s]} is negative; a slot holds 0 (empty) or a child "
                              f"position plus one")
        if sorted(int(x) - 1 for x in tbl[tbl > 0]) != list(range(nnz)):
            raise FormatError(f"{where}: tbl must hold each child position exactly once (as q + 1)")
        for q, k in enumerate(key.tolist()):
            if self.locate(int(k) // self.size if self.size else 0, int(k) % self.size if self.size else 0) != q:
                raise FormatError(f"{where}: key {k} (child {q}) is not found by probing tbl from its home slot")
        return nnz
