"""The level iterator protocol of the lattice strategy, dispatching on the level class.

Each storage mode of an access gets a :class:`ModeIterator`: how to bound,
iterate, read coordinates from, locate into, and descend from one fiber of that
level, both as imperative IR (for the C kernels) and in Python (for the CFIR
interpreter). A *parent* is a position (an int or IR expression), or for the
inner modes of a SparseCOO level a segment ``(lo, hi)`` of positions.

=============  ==========  ==================================================
level          kind        protocol
=============  ==========  ==================================================
Dense          dense       locate: ``parent * size + i``
SparseList     sparse      positions ``[pos[parent], pos[parent+1])``, ``idx[p]``
SparseCOO j    sparse      positions of the parent segment, ``idx{j}[p]``;
                           every mode but the last is non-unique: equal
                           coordinates form a segment that the next mode walks
SparseByteMap  sparse,     iterated: ``srt[pos[parent]:pos[parent+1]]``, child
               locatable   ``parent * size + i``; located (in an intersection):
                           child ``parent * size + i``, present if ``tbl[child]``
SparseHash     sparse,     iterated: its sorted view, positions
               locatable   ``[pos[parent], pos[parent+1])``, ``idx[p]``, child
                           ``ptr[p]`` (ordered, so it merges like a SparseList);
                           located (in an intersection): probe the hash table
                           for ``parent * size + i``, child ``tbl[slot] - 1``,
                           present if ``>= 0``
SparseBand     sparse      positions ``[ofs[parent], ofs[parent+1])``, coordinate
                           ``p + (idx[parent] - ofs[parent+1])`` (its block's
                           coordinates are contiguous; :mod:`.block_iterators`)
SparseBlock-   sparse      positions ``[ofs[pos[parent]], ofs[pos[parent+1]])``,
List                       coordinate ``p + (idx[r] - ofs[r+1])`` for the block
                           ``r`` kept beside ``p`` (:meth:`ModeIterator.block_start`)
SparsePoint    sparse      a SparseList's (:mod:`.point_iterators`)
SparseInterval sparse      the run's coordinates ``[left[r], right[r])`` walked
                           themselves, ``r = pos[parent]``, child ``r``
RunList,       sparse      each run's coordinates walked, the run ``r`` kept
SparseRunList              beside them and the child of each (:mod:`.run_iterators`)
=============  ==========  ==================================================

Dense, SparseList, SparseCOO, SparseByteMap, SparseHash and SparsePoint are read by one iterator
class built from what each level declares (:meth:`ModeIterator.of`); any other level is refused with :class:`StrategyError`, unless a
factory for its class (or a base class) was added with :func:`register_iterator`.

>>> from compiler.format import coo
>>> its = mode_iterators("A", "A", coo())
>>> [(it.kind, it.unique, it.param(it.crd)) for it in its]
[('sparse', False, 'A0_idx0'), ('sparse', True, 'A0_idx1')]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..binding import array_name
from ..errors import StrategyError
from ..format import Format
from ..imperative.ir import Assign, BinOp, Const, Declare, If, Load, Var, While, and_
from ..imperative.search import gallop_back_stmts, gallop_stmts, lower_bound_call
from ..levels import Dense, SparseByteMap, SparseCOO, SparseHash, SparseList, SparsePoint
from ..levels.level import Level


@dataclass(frozen=True)
class ModeIterator:
    """The iterator of storage mode ``mode`` of one access (``name``) of ``tensor``.

    Built by :meth:`of` from what the level declares (:class:`compiler.levels.Level`: ``full``,
    ``slot_per_coordinate``, ``compressed``, ``crd_array``, ``hashed``, ``child_array``) and the names
    it gives its arrays (``starts_array``, ``run_end_array``, ...), so it never asks the level's name
    (kept for messages and drawings only), a subclass of a level reads as its base does, and a format
    naming its arrays otherwise reads as the level whose iterator it registers.

    >>> from compiler.levels import Element, SparseHash
    >>> it = ModeIterator.of("A", "A", 0, 0, SparseHash(Element(0.0)))
    >>> it.kind, it.locatable, it.probed, str(it.child(Var("pA0")))
    ('sparse', True, True, 'A0_ptr[pA0]')
    """

    name: str         # the access's name in generated code ("A", "A_2")
    tensor: str       # the tensor (parameter prefix)
    mode: int         # storage mode
    level: int        # storage level number
    sub: int          # mode within a level of several modes (a SparseCOO's; 0 otherwise)
    level_name: str   # (for messages and drawings: no decision reads it)
    nsub: int = 1
    # what the level declares (see :meth:`of`)
    full: bool = False
    slots: bool = False          # a slot per coordinate: children at parent * size + i
    compressed: bool = False     # TACO's compressed: one sorted list per fiber, each position its child
    crd: str = Level.crd_array   # the array of coordinates position iteration reads
    hashed: bool = False         # located by probing a hash table
    child_array: str | None = None   # the child of each position of a sorted view, if not the position
    # the names of the level's arrays, asked of it so a format naming them otherwise reads the same
    starts: str = Level.starts_array        # the fibers' starts (one more than the parent's positions)
    run_start: str | None = None            # a run's first coordinate (a SparseRunList's)
    run_end: str = Level.run_end_array      # a run's exclusive end
    band_end: str | None = None             # a band's end (a SparseBand's)
    block_ends: str | None = None           # a block's end (a SparseBlockList's)
    block_starts: str | None = None         # a block's first position
    marks: str | None = None                # a byte map's mark per slot
    keys: str | None = None                 # a hash's keys
    table: str | None = None                # a hash's table of key positions

    @classmethod
    def of(cls, name: str, tensor: str, mode: int, k: int, lvl, sub: int = 0):
        """The iterator of mode ``sub`` of level ``k`` (``lvl``), from what the level declares."""
        blocks, keyed = lvl.appends_blocks or (None, None), lvl.keys_in_table or (None, None)
        return cls(name, tensor, mode, k, sub, lvl.name, lvl.nmodes, full=lvl.full, slots=lvl.slot_per_coordinate,
                   compressed=lvl.compressed, crd=lvl.crd_of(sub), hashed=lvl.hashed, child_array=lvl.child_array,
                   starts=lvl.starts_array, run_start=lvl.run_start_array, run_end=lvl.run_end_array,
                   band_end=lvl.appends_band, block_ends=blocks[0], block_starts=blocks[1], marks=lvl.mark_array,
                   keys=keyed[0], table=keyed[1])

    @property
    def located_by_coordinate(self) -> bool:
        """A slot for every coordinate (a Dense level's): located, never iterated by position."""
        return self.full and self.slots

    @property
    def kind(self) -> str:
        return "dense" if self.located_by_coordinate else "sparse"

    @property
    def unique(self) -> bool:
        # (every mode of a level of several modes but its last walks segments of equal coordinates)
        return self.sub == self.nsub - 1

    @property
    def label(self) -> str:
        return f"{self.name}{self.level}" + (f".{self.sub}" if self.nsub > 1 else "")

    @property
    def described(self) -> str:
        """The level in a user's terms, for messages: ``A's level 0 (SparseCOO, its mode 0)``."""
        within = f", its mode {self.sub}" if self.nsub > 1 else ""
        return f"{self.tensor}'s level {self.level} ({self.level_name}{within})"

    @property
    def locatable(self) -> bool:
        """Whether the lowering may locate into this sparse level instead of iterating it: a
        table of a slot per coordinate (a byte map's) or a hash table to probe."""
        return not self.full and (self.slots or self.hashed)

    @property
    def presence_array(self) -> str | None:
        """The array a locate reads to learn whether a coordinate is stored: a hash's table of key
        positions, a byte map's marks (None for a level that is not :attr:`locatable`)."""
        return self.table if self.hashed else self.marks

    @property
    def probed(self) -> bool:
        """Whether a locate probes a hash table (the kernel computes the table's capacity first)."""
        return self.hashed

    @property
    def children_by_coordinate(self) -> bool:
        """Whether the level's children sit at ``parent * size + i``, as a Dense level's do, though
        it is iterated through its list (SparseByteMap)."""
        return self.slots and not self.full

    @property
    def fibers_by_size(self) -> bool:
        """Whether the level holds ``size`` positions per fiber (its children are counted by its
        size, not by a stored count)."""
        return self.slots

    def param(self, kind: str) -> str:
        """The kernel parameter of this level's array ``kind`` (a name the level gave, as
        :attr:`starts` or :attr:`crd`) or, for ``"size"``, its mode's size."""
        if kind == "size":
            return array_name(self.tensor, self.mode, "size")
        return array_name(self.tensor, self.level, kind)

    # -- imperative IR -----------------------------------------------------------------

    def bounds(self, parent):
        """IR ``(lo, hi)`` of the positions of the fiber under ``parent``."""
        if self.located_by_coordinate:
            raise AssertionError("a Dense level has no position bounds; locate into it")
        if self.sub > 0:
            return parent   # the segment of equal coordinates of the mode above
        pos = self.param(self.starts)
        after = Const(parent.value + 1, "int64") if isinstance(parent, Const) else BinOp("+", parent, 1)
        return Load(pos, parent), Load(pos, after)

    def coord(self, p, parent=None, block=None):
        """IR of the coordinate at position ``p`` of the fiber under ``parent`` (``idx[p]`` here;
        a level whose coordinates follow from its positions needs the fiber, a SparseBand's, or
        the block holding ``p``, a SparseBlockList's: see :meth:`block_start`)."""
        return Load(self.param(self.crd), p)

    #: whether the emitter keeps a block variable beside the position (see :meth:`block_start`)
    keeps_block = False
    #: whether a loop over the fiber visits every position of its bounds (so their difference
    #: counts the coordinates it visits); a SparseRunList's walk jumps the gaps between its runs
    visits_every_position = True

    def block_start(self, parent):
        """IR of the first block of the fiber under ``parent``, for a level whose coordinates
        follow from a position *and* the block holding it (a SparseBlockList's): the emitter
        keeps a block variable beside the position and brings it up to the position
        (:meth:`block_sync`) before it reads a coordinate. None: the level keeps no block."""
        return None

    def block_sync(self, p, block) -> list:
        """Statements moving ``block`` to the block holding position ``p`` (``p`` within the fiber)."""
        return []

    @property
    def walks_back(self) -> bool:
        """Whether a walk may go down the fiber from its last position (a slice with a negative step):
        any level that keeps no block beside its position; one that keeps a block, where it moves the
        block down too (:meth:`block_last`, :meth:`block_sync_back`, :meth:`seek_back_stmts`)."""
        return not self.keeps_block

    def block_last(self, parent):
        """IR of the last block of the fiber under ``parent``, where a walk backwards starts (at the
        fiber's last position): :meth:`block_start` from the other end. None: the level keeps no block."""
        return None

    def block_sync_back(self, p, block, parent) -> list:
        """Statements moving ``block`` down to the block holding position ``p``, one below the last
        position a walk backwards over the fiber under ``parent`` visited (``p`` within the fiber)."""
        return []

    def stored_count(self, fibers):
        """IR of the positions this level holds under its first ``fibers`` fibers (a hash below
        it counts its keys by it)."""
        return Load(self.param(self.starts), fibers)

    #: whether a parallel block of a split loop may enter the fiber in the middle, at the position
    #: :meth:`first_at_least` finds: false where the coordinates are not the ``crd`` array (a
    #: band's, a run list's), so a position in the middle needs more than a search
    entered_by_search = True

    def first_at_least(self, lo, hi, target):
        """IR of the first position in ``[lo, hi)`` whose coordinate is at least ``target`` (``hi``
        if none): a binary search of the fiber's sorted coordinates, where a parallel block of a
        split loop starts (only where :attr:`entered_by_search`).

        >>> it = ModeIterator("A", "A", 0, 0, 0, "SparseList", compressed=True)
        >>> print(it.first_at_least(Var("lo"), Var("hi"), Var("i_lo")))
        lower_bound(A0_idx, lo, hi, i_lo)
        """
        return lower_bound_call(self.param(self.crd), lo, hi, target)

    def seek_stmts(self, p, end, target, parent=None, block=None):
        """Statements moving the cursor ``p`` of a walk over the fiber under ``parent`` (its
        positions below ``end``), in the fiber at a coordinate below ``target``, to the first
        position whose coordinate is at least ``target`` (``end`` if none), and the ``block`` kept
        beside it to the block holding it; None where the level can only be stepped there (TACO's
        locate capability, asked of the level: the sequence emitter's locate and a slice's stride,
        :mod:`compiler.lattice.seqwalk`). A sorted list gallops over its coordinates (O(log
        distance), the cursor in its fiber is all it needs); a level that computes a coordinate's
        position (:meth:`position_of`) goes straight there (O(1)).

        >>> it = ModeIterator("A", "A", 0, 0, 0, "SparseList", compressed=True)
        >>> print(*it.seek_stmts(Var("pA0"), Var("pA0_end"), Var("i")))
        pA0 = seek(A0_idx, pA0, pA0_end, i);
        """
        if self.entered_by_search:
            return gallop_stmts(p, self.param(self.crd), end, target)
        # (a block kept beside the position moves with it: the level says how, overriding this)
        return None if self.keeps_block else self.seek_position(p, end, target, parent)

    def seek_back_stmts(self, p, end, target, parent=None, block=None):
        """:meth:`seek_stmts` walking the fiber backwards (``end`` one below its first position, the
        cursor at a coordinate above ``target``): the last position whose coordinate is at most
        ``target`` (``end`` if none), and ``block`` down to the block holding it; None where the
        level can only be stepped there (a level keeping a block beside the position says how it
        moves it, overriding this).

        >>> it = ModeIterator("A", "A", 0, 0, 0, "SparseList", compressed=True)
        >>> print(*it.seek_back_stmts(Var("pA0"), Var("pA0_lo"), Var("i")))
        pA0 = seek_back(A0_idx, pA0, pA0_lo, i);
        """
        if self.keeps_block:
            return None
        if self.entered_by_search:
            return gallop_back_stmts(p, self.param(self.crd), end, target)
        return self.seek_position(p, end, target, parent, back=True)

    def seek_position(self, p, end, target, parent=None, back=False):
        """Statements putting the cursor ``p`` at the position ``target`` would have
        (:meth:`position_of`), no further than ``end`` (walked backwards, ``back``: no lower); None
        where the level does not compute positions.

        >>> from compiler.format import Format
        >>> from compiler.levels import Element, SparseBand
        >>> it = mode_iterators("A", "A", Format(SparseBand(Element(0.0))))[0]
        >>> print(*it.seek_position(Var("pA0"), Var("pA0_end"), Const(5, "int64"), Const(0, "int64")), sep=chr(10))
        pA0 = 5 - (A0_idx[0] - A0_ofs[1]);
        if (pA0 > pA0_end) {
            pA0 = pA0_end;
        }
        """
        at = self.position_of(target, parent)
        if at is None:
            return None
        return [Assign(p, at), If(BinOp("<" if back else ">", p, end), [Assign(p, end)])]

    def search_stmts(self, q, parent, i, fresh):
        """Statements declaring ``q``, the position of coordinate ``i`` under ``parent`` or -1, for a
        level with a search of its own; None: a diagonal bisects the fiber by :meth:`coord`."""
        return None

    def position_of(self, i, parent):
        """IR of the position coordinate ``i`` would have in the fiber under ``parent``, when the
        level computes it (a SparseBand's; a SparseInterval's and a run list's, whose positions are
        their coordinates), else None (it is searched for)."""
        return None

    def child(self, p, segend=None, parent=None, block=None):
        """The parent of the next mode after visiting position ``p`` (segment end ``segend``) of the
        fiber under ``parent``, in ``block`` (see :meth:`block_start`): a SparseInterval's one run
        holds the child of all its coordinates, a RunList's run the child of its own."""
        if not self.unique:
            return (p, segend)
        if self.child_array is not None:   # (a hash's sorted view points at the child)
            return Load(self.param(self.child_array), p)
        return p

    def locate(self, parent, i):
        """IR of the child position of coordinate ``i`` (SparseHash: the key it is stored under)."""
        if isinstance(parent, Const) and parent.value == 0:
            return i
        return BinOp("+", BinOp("*", parent, Var(self.param("size"))), i)

    def locate_stmts(self, q: Var, parent, i, fresh, cap: Var) -> list:
        """Statements declaring ``q``, the child position of coordinate ``i`` under ``parent``.

        A SparseHash probes its table (linear probing from :func:`hash_ir`'s slot until
        the key or an empty slot; ``q = -1`` when absent); ``cap`` holds the table's
        capacity (:func:`hash_capacity_stmts`). Other levels compute it (:meth:`locate`).
        """
        if not self.hashed:
            return [Declare(q, "int64", self.locate(parent, i))]
        key, slot = fresh("key"), fresh("slot")
        tbl, keys = self.param(self.table), self.param(self.keys)
        one = Const(1, "int64")
        return [Declare(key, "int64", self.locate(parent, i)),
                Declare(slot, "int64", hash_ir(key, cap)),
                While(and_(BinOp("!=", Load(tbl, slot), Const(0, "int64")),
                           BinOp("!=", Load(keys, BinOp("-", Load(tbl, slot), one)), key)),
                      [Assign(slot, BinOp("&", BinOp("+", slot, one), BinOp("-", cap, one)))]),
                Declare(q, "int64", BinOp("-", Load(tbl, slot), one))]

    def present(self, q):
        """IR: is the located child position ``q`` stored (a SparseByteMap's table, a SparseHash's probe)?"""
        if self.hashed:
            return BinOp(">=", q, Const(0, "int64"))
        return Load(self.param(self.marks), q)

    # -- Python (the CFIR interpreter) --------------------------------------------------

    def py_fiber(self, arrays: dict, sizes: dict, parent) -> list:
        """``[(coord, child parent), ...]`` of the fiber under ``parent``, deduplicated."""
        if self.located_by_coordinate:
            n = sizes[self.param("size")]
            return [(i, parent * n + i) for i in range(n)]
        lo, hi = (int(arrays[self.param(self.starts)][parent]), int(arrays[self.param(self.starts)][parent + 1])) \
            if self.sub == 0 else parent
        idx = arrays[self.param(self.crd)]
        if self.slots:   # a byte map's sorted list: each child at its coordinate's slot
            n = sizes[self.param("size")]
            return [(int(idx[p]), parent * n + int(idx[p])) for p in range(lo, hi)]
        if self.child_array is not None:
            child = arrays[self.param(self.child_array)]
            return [(int(idx[p]), int(child[p])) for p in range(lo, hi)]
        out, p = [], lo
        while p < hi:
            s = p + 1
            if not self.unique:
                while s < hi and idx[s] == idx[p]:
                    s += 1
            out.append((int(idx[p]), (p, s) if not self.unique else p))
            p = s
        return out


@dataclass(frozen=True)
class WorkspaceIterator:
    """Iterates the coordinates set in a workspace ``w`` (its coordinate list).

    The workspace is three scratch arrays: ``w`` (values, dense over the index),
    ``w_set`` (occupancy bitmap) and ``w_list`` (the coordinates set, ``w_n`` of
    them). Its positions are ``[0, w_n)``, the coordinate at ``p`` is ``w_list[p]``
    and the value at coordinate ``j`` is ``w[j]`` (located by coordinate, not by
    position). The list is sorted before a consumer that needs order reads it.

    >>> it = WorkspaceIterator("w")
    >>> it.label, it.param(it.crd), str(it.coord(Var("p")))
    ('w', 'w_list', 'w_list[p]')

    Over several indices (``nsub`` of them, of sizes ``extents``) the arrays are over
    their row-major product and the list holds row-major positions, sorted, so it
    reads like a SparseCOO level: mode ``sub`` takes its digit of the position, and
    every mode but the last is non-unique (equal digits form the segment the next
    mode walks).

    >>> j = WorkspaceIterator("w", nsub=2, extents=("J", "K"))
    >>> k = WorkspaceIterator("w", mode=1, sub=1, nsub=2, extents=("J", "K"))
    >>> j.label, j.unique, str(j.coord(Var("p"))), k.label, k.unique, str(k.coord(Var("p")))
    ('w.0', False, 'w_list[p] / K', 'w.1', True, 'w_list[p] % K')
    """

    name: str
    tensor: str = ""
    mode: int = 0
    level: int = 0
    sub: int = 0
    level_name: str = "Workspace"
    nsub: int = 1
    extents: tuple = ()   # the size parameters of the indices, over several

    kind = "sparse"
    crd = "list"   # (its coordinates are its list, as a level's are its crd array)
    visits_every_position = True
    # (what a level iterator can do that a coordinate list cannot: see ModeIterator)
    locatable = probed = children_by_coordinate = fibers_by_size = compressed = False

    entered_by_search = False   # (a parallel block does not enter a workspace's list in the middle)

    @property
    def unique(self) -> bool:
        return self.sub == self.nsub - 1

    @property
    def label(self) -> str:
        return self.name + (f".{self.sub}" if self.nsub > 1 else "")

    @property
    def described(self) -> str:
        """The workspace in a user's terms, for messages."""
        return f"the workspace {self.name}" + (f" (its index {self.sub})" if self.nsub > 1 else "")

    def param(self, kind: str) -> str:
        return {"list": f"{self.name}_list", "set": f"{self.name}_set", "count": f"{self.name}_n",
                "val": self.name}[kind]

    def bounds(self, parent):
        if self.sub > 0:
            return parent   # the segment of equal outer digits
        return Const(0, "int64"), Var(self.param("count"))

    def coord(self, p, parent=None, block=None):
        q = Load(self.param(self.crd), p)
        if self.nsub == 1:
            return q
        for size in self.extents[self.sub + 1:]:
            q = BinOp("/", q, Var(size))
        return q if self.sub == 0 else BinOp("%", q, Var(self.extents[self.sub]))

    def child(self, p, segend=None, parent=None, block=None):
        return p if self.unique else (p, segend)

    def py_fiber(self, arrays: dict, sizes: dict, parent) -> list:
        """``[(coord, child parent), ...]``: the interpreter keeps a workspace as a dict in
        ``arrays`` (over several indices, keyed by coordinate tuples; a parent is a prefix)."""
        if self.nsub == 1:
            return [(j, j) for j in sorted(arrays[self.name])]
        prefix = () if self.sub == 0 else parent
        digits = sorted({key[self.sub] for key in arrays[self.name] if key[:self.sub] == prefix})
        return [(d, prefix + (d,)) for d in digits]


def level_iterators(name: str, tensor: str, mode: int, k: int, lvl) -> list:
    """The iterators of a level read through what it declares (:meth:`ModeIterator.of`): a Dense
    level, a compressed list, a list of several modes (COO), a byte map, a hash. Position
    iteration merges, so it needs the level ordered and unique."""
    if not lvl.ordered or not lvl.unique:
        raise StrategyError(f"level {k} ({lvl.name}) of tensor {tensor} is not ordered and unique")
    return [ModeIterator.of(name, tensor, mode + j, k, lvl, j) for j in range(lvl.nmodes)]


def iterated_by(iterator_class) -> Callable:
    """The factory :func:`register_iterator` takes for a level of one mode that ``iterator_class``
    iterates, made from what the level declares (its :meth:`ModeIterator.of`).

    >>> from compiler.levels import Element, SparseList
    >>> [it.kind for it in iterated_by(ModeIterator)("A", "A", 0, 0, SparseList(Element(0.0)))]
    ['sparse']
    """
    def factory(name: str, tensor: str, mode: int, k: int, lvl) -> list:
        return [iterator_class.of(name, tensor, mode, k, lvl)]
    factory.__qualname__ = f"iterated_by({iterator_class.__name__})"
    return factory


# The hashing of compiler.levels.sparse_hash (hash_slot, table_capacity) as IR. The looplet
# strategy has the same IR (compiler.looplets.hash_tables.hash_expr); it is repeated here so the
# lattice strategy does not depend on the looplet one. A test checks both against hash_slot.

def hash_ir(key, cap):
    """IR of :func:`compiler.levels.sparse_hash.hash_slot`: ``(key ^ key >> 13 ^ key >> 29) & (cap - 1)``."""
    return BinOp("&", BinOp("^", BinOp("^", key, BinOp(">>", key, Const(13, "int64"))),
                            BinOp(">>", key, Const(29, "int64"))), BinOp("-", cap, Const(1, "int64")))


def hash_capacity_stmts(cap: Var, nnz) -> list:
    """Declare ``cap`` as :func:`compiler.levels.sparse_hash.table_capacity` of ``nnz`` stored keys:
    the smallest power of two at least ``max(MIN_CAPACITY, 2 nnz)`` (the table is at most half full)."""
    from ..levels.sparse_hash import MIN_CAPACITY
    two = Const(2, "int64")
    return [Declare(cap, "int64", Const(MIN_CAPACITY, "int64")),
            While(BinOp("<", cap, BinOp("*", nnz, two)), [Assign(cap, BinOp("*", cap, two))])]


#: level class -> factory ``(name, tensor, mode, level number, level) -> [iterator per mode]``;
#: dispatch walks the level's class MRO, so a subclass inherits its base's iterators unless
#: it registers its own (see :func:`register_iterator`).
ITERATORS: dict[type, Callable] = {cls: level_iterators for cls in (Dense, SparseList, SparseCOO, SparseByteMap,
                                                                    SparseHash, SparsePoint)}


def register_iterator(level_class: type, factory: Callable) -> None:
    """Let levels of ``level_class`` (and its subclasses) join the lattice strategy.

    ``factory(name, tensor, mode, level, lvl)`` returns one iterator per mode the
    level stores (``lvl.nmodes`` of them; :class:`ModeIterator` or an object with its
    protocol), for the access ``name`` of ``tensor`` whose first mode there is storage
    mode ``mode`` and whose level number is ``level``; it raises StrategyError to
    refuse a level it cannot iterate. Registering again replaces the factory.
    This mirrors :func:`compiler.looplets.levels.register_unfurl`.

    >>> from compiler.levels import SparseList
    >>> class Sorted(SparseList):
    ...     name = "Sorted"
    >>> iterator_factory(Sorted) is ITERATORS[SparseList]   # inherited through the MRO
    True
    >>> register_iterator(Sorted, lambda name, tensor, mode, k, lvl: [ModeIterator.of(name, tensor, mode, k, lvl)])
    >>> iterator_factory(Sorted) is ITERATORS[SparseList]
    False
    >>> del ITERATORS[Sorted]
    """
    if not isinstance(level_class, type):
        raise TypeError(f"register_iterator needs a level class, not {level_class!r}")
    if not callable(factory):
        raise TypeError(f"register_iterator: the factory for {level_class.__name__} is not callable")
    ITERATORS[level_class] = factory


def iterator_factory(level_class: type):
    """The factory registered for ``level_class`` or its nearest base class (MRO), or None."""
    for cls in level_class.__mro__:
        if cls in ITERATORS:
            return ITERATORS[cls]
    return None


def mode_iterators(name: str, tensor: str, fmt: Format) -> list[ModeIterator]:
    """One iterator per storage mode of an access ``name`` to ``tensor`` of ``fmt``.

    Each level's iterators come from the factory registered for its class (MRO dispatch).
    """
    out = []
    mode = 0
    for k, lvl in enumerate(fmt.levels):
        factory = iterator_factory(type(lvl))
        if factory is None:
            known = ", ".join(c.__name__ for c in ITERATORS)
            raise StrategyError(
                f"level {k} ({lvl.name}) of tensor {tensor} cannot be iterated coordinate by coordinate, "
                f"which the lattice strategy needs (it iterates {known}; register_iterator adds a level "
                f"class); convert {tensor} with .asformat('csr'/'coo'/...) or use strategy='looplets'")
        if lvl.coordinate_list and lvl is not fmt.levels[-1]:
            raise StrategyError(f"tensor {tensor}: the lattice strategy supports {lvl.name} only as the "
                                f"innermost level")
        its = list(factory(name, tensor, mode, k, lvl))
        if len(its) != lvl.nmodes:
            raise StrategyError(f"the lattice iterators registered for {type(lvl).__name__} gave {len(its)} "
                                f"iterators for a level of {lvl.nmodes} modes (tensor {tensor}, level {k})")
        out += its
        mode += lvl.nmodes
    return out


def py_arrays(tensor_name: str, t) -> tuple[dict, dict]:
    """The arrays and sizes of a Tensor keyed by kernel parameter names (for the interpreter)."""
    from ..binding import input_args
    args = input_args(tensor_name, t)
    arrays = {k: v for k, v in args.items() if isinstance(v, np.ndarray)}
    sizes = {k: v for k, v in args.items() if not isinstance(v, np.ndarray)}
    return arrays, sizes


__all__ = ["ITERATORS", "ModeIterator", "WorkspaceIterator", "hash_capacity_stmts", "hash_ir", "iterated_by",
           "iterator_factory", "level_iterators", "mode_iterators", "py_arrays", "register_iterator"]
