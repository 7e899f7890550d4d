"""How the sequence emitter (:mod:`compiler.lattice.seqemit`) walks a tensor's levels: through the
level iterator protocol of the lattice strategy (:class:`~compiler.lattice.iterators.ModeIterator`,
registered per level class with :func:`~compiler.lattice.iterators.register_iterator`), never by a
level's name or the names of its arrays.

Each leaf of a sequence (a tensor's storage mode) gets one cursor, a :class:`LeafCode`, whose kind
follows from what the level's iterator says it is (:func:`walk_kind`):

* ``dense``: located by coordinate (``it.located_by_coordinate``): the cursor is the coordinate;
* ``list``: one sorted array of coordinates per fiber (``it.entered_by_search``: a position in the
  middle is found by a search of ``crd``), so a locate gallops over it; SparseList, SparsePoint, a
  byte map's sorted list and a hash's sorted view (their children at ``parent * size + i`` or in
  the view's child array, as the iterator says);
* ``coo``: such a list over several modes (every mode but the last walks segments of equal
  coordinates);
* ``walk``: any other level (SparseBand, SparseBlockList, RunList, SparseRunList, SparseInterval,
  a user's): its fiber bounds, the coordinate of a position (given the fiber and the block or run
  the iterator keeps beside it, brought up to the position after every move), its child, and a
  locate to the first coordinate at or past the target as the iterator finds it
  (:meth:`~compiler.lattice.iterators.ModeIterator.seek_stmts`: a band's position computed, a
  gallop over a block list's or run list's ends, an interval's coordinate), or stepped to where
  the iterator cannot say.

Walked backwards (a slice with a negative step), a sparse cursor starts at its fiber's last position
and steps down to one below its first; the block or run a walked level keeps beside it starts at the
fiber's last and is brought down with it (``block_last``, ``block_sync_back``), and a locate gallops
down over the blocks' or runs' ends (``seek_back_stmts``): a block list, a run list.

A level the walk cannot take (walked backwards while it keeps a block beside its position, whose
iterator moves the block only forward, ``walks_back``; or a level class no iterator is registered for) raises
:class:`UnwalkableLevel`, which :func:`compiler.lattice.seqlower.lower_shape_lattice` answers by
converting that level to a SparseList before each call (a ``convert`` step).

>>> from compiler.format import Format
>>> from compiler.levels import Dense, Element, SparseBand, SparseList
>>> from compiler.lattice.iterators import mode_iterators
>>> [walk_kind(it) for it in mode_iterators("A", "A", Format(Dense(SparseBand(Element(0.0)))))]
['dense', 'walk']
>>> [walk_kind(it) for it in mode_iterators("A", "A", Format(Dense(SparseList(Element(0.0)))))]
['dense', 'list']
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..binding import array_name
from ..errors import StrategyError
from ..format import Format
from ..imperative import ir
from ..imperative.identities import arith
from ..imperative.ir import BinOp, Cast, Const, If, Load, Var, and_, not_
from ..imperative.search import gallop_back_stmts
from ..levels import SparseList
from .iterators import iterator_factory, mode_iterators, py_arrays

I64 = "int64"


def _c(n: int) -> Const:
    return Const(int(n), I64)


def _less_one(e) -> ir.Expr:
    """``e - 1``, folded where ``e`` is a constant (a run list's fiber starts at coordinate 0)."""
    return _c(e.value - 1) if isinstance(e, Const) else arith("-", e, _c(1))


class UnwalkableLevel(StrategyError):
    """Level ``level`` of tensor ``tensor`` is one the sequence emitter cannot walk as it is asked
    to (``why``); :func:`walkable_format` gives the format it is read in instead."""

    def __init__(self, tensor: str, level: int, why: str):
        super().__init__(f"tensor {tensor}: {why}")
        self.tensor, self.level, self.why = tensor, level, why


def walkable_format(fmt: Format, level: int) -> Format:
    """``fmt`` with its level ``level`` stored as a SparseList (the same child, index dtype and mode
    order): what a tensor whose level the sequence emitter cannot walk is converted to.

    >>> from compiler.levels import Dense, Element, SparseBlockList
    >>> print(walkable_format(Format(Dense(SparseBlockList(Element(0.0)))), 1))
    Dense(SparseList(Element(0.0)))
    """
    levels = list(fmt.levels)
    node = fmt.leaf
    for k in range(len(levels) - 1, -1, -1):
        lvl = levels[k]
        if k == level:
            idt = getattr(lvl, "index_dtype", None)
            node = SparseList(node, **({"index_dtype": idt} if idt is not None else {}))
        else:
            node = dataclasses.replace(lvl, child=node)
    return Format(node, fmt.mode_order)


def walk_kind(it) -> str:
    """How the sequence emitter walks the level of iterator ``it`` (see the module's docstring)."""
    if it.located_by_coordinate:
        return "dense"
    if not it.entered_by_search:
        return "walk"
    return "coo" if it.nsub > 1 else "list"


def storage_iterators(tensor: str, fmt: Format) -> list:
    """The iterator of each storage mode of ``tensor`` (of ``fmt``), or :class:`UnwalkableLevel`
    for a level class no iterator is registered for."""
    for k, lvl in enumerate(fmt.levels):
        if iterator_factory(type(lvl)) is None:
            raise UnwalkableLevel(tensor, k, f"level {k} ({lvl.name}) has no lattice iterator (register_iterator "
                                             f"adds one)")
    return mode_iterators(tensor, tensor, fmt)


def stored_entries(name: str, t) -> dict:
    """``{storage coordinates: value}`` of the Tensor ``t``, its fibers read through its levels'
    iterators (:meth:`~compiler.lattice.iterators.ModeIterator.py_fiber`): what the sequence
    interpreter and the lattice check run over. A level whose iterator walks every coordinate (a
    RunList's runs of the fill) gives them all.

    >>> from compiler import Tensor
    >>> from compiler.levels import Dense, Element, SparseBand
    >>> t = Tensor.from_numpy(np.array([[0, 1.0, 2.0], [0, 0, 3.0]]), Format(Dense(SparseBand(Element(0.0)))))
    >>> stored_entries("A", t)
    {(0, 1): 1.0, (0, 2): 2.0, (1, 2): 3.0}
    """
    arrays, sizes = py_arrays(name, t)
    its = mode_iterators(name, name, t.format)
    vals = arrays.get(array_name(name, None, "val"))
    out = {}
    # (a complex tensor's entries stay complex; any other's are read as floats)
    number = complex if vals is not None and np.iscomplexobj(vals) else float

    def visit(m: int, parent, prefix: tuple):
        if m == len(its):
            out[prefix] = 1.0 if vals is None else number(vals[parent])   # (a pattern's entries are true)
            return
        for c, child in its[m].py_fiber(arrays, sizes, parent):
            visit(m + 1, child, prefix + (c,))

    if its:
        visit(0, 0, ())
    elif vals is not None:
        out[()] = number(vals[0])
    return out


@dataclass(frozen=True)
class LeafCode:
    """How one leaf's cursor is stored: ``kind`` is ``dense``, ``list``, ``coo``, ``walk`` (see
    :func:`walk_kind`) or ``universe``; ``p`` its position (a dense level's and a universe's
    coordinate; a run level's coordinate), ``end`` its fiber's end, ``seg`` a non-last COO mode's
    segment end; ``idx`` the coordinate array of a ``list``/``coo`` leaf; ``size`` its extent;
    ``sub``/``nsub`` a COO mode's place in its level; ``it`` the level's iterator, ``block`` the
    block (or run) it keeps beside the position, ``up`` the position of the parent its fiber hangs
    under (for a coordinate or child that needs it)."""

    kind: str
    p: Var
    end: object
    seg: Var | None = None
    idx: str = ""
    size: object = None
    sub: int = 0
    nsub: int = 1
    idx_dtype: str = I64
    reverse: bool = False
    it: object = None
    block: Var | None = None
    up: Var | None = None


class LeafWalks:
    """The leaf cursors of :class:`~compiler.lattice.seqemit.SeqEmitter`: their layout, start,
    validity, step, locate, coordinate and child position, each asked of the level's iterator."""

    def iterators(self, real: str) -> list:
        its = self.its.get(real)
        if its is None:
            its = self.its[real] = storage_iterators(real, self.formats[real])
        return its

    def layout(self, leaf) -> LeafCode:
        real = self.names[leaf.tensor]
        s = leaf.mode
        it = self.iterators(real)[s]
        kind = walk_kind(it)
        base = "p" + real + str(s) + ("" if leaf.tensor == real else "r" * leaf.tensor.count("'"))
        p = Var(self.fresh(base))
        size = Var(array_name(real, s, "size"))
        rev = leaf.reverse
        if kind == "dense":
            end = size if s == 0 else Var(self.fresh(p.name + "_end"))
            return LeafCode("dense", p, end, size=size, reverse=rev, it=it)
        if kind == "walk" and rev and not it.walks_back:
            raise UnwalkableLevel(real, it.level, f"its level {it.level} ({it.level_name}) is walked backwards (a "
                                                  f"slice with a negative step), and its iterator moves the block "
                                                  f"it keeps beside a position forward only")
        # (walked backwards, a fiber's cursor moves down to ``end``, one below its first position)
        end = Var(self.fresh(p.name + ("_lo" if rev else "_end")))
        up = Var(self.fresh(p.name + "_up")) if kind == "walk" or it.children_by_coordinate else None
        if kind == "walk":
            block = Var(self.fresh("r" + p.name[1:])) if it.keeps_block else None
            return LeafCode("walk", p, end, size=size, reverse=rev, it=it, block=block, up=up)
        lvl = self.formats[real].levels[it.level]
        idx_dtype = np.dtype(lvl.array_dtypes()[it.crd]).name
        seg = Var(self.fresh(p.name + "_seg")) if it.sub < it.nsub - 1 else None
        return LeafCode(kind, p, end, seg, idx=it.param(it.crd), size=size, sub=it.sub, nsub=it.nsub,
                        idx_dtype=idx_dtype, reverse=rev, it=it, up=up)

    def code(self, leaf) -> LeafCode:
        try:
            return self.leaves[leaf.key]
        except KeyError:
            raise StrategyError(f"{leaf} is read outside the loops that initialize it") from None

    def coord(self, leaf) -> ir.Expr:
        c = self.code(leaf)
        if c.kind in ("dense", "universe"):
            return c.p
        return self.target(c, self.stored(c))

    def stored(self, c: LeafCode) -> ir.Expr:
        """The stored coordinate at a sparse cursor (its iterator's, given the fiber and block)."""
        x = c.it.coord(c.p, c.up, c.block)
        return x if c.idx_dtype == I64 else Cast(I64, x)

    def position(self, tensor: str, mode: int) -> ir.Expr:
        """The position of ``tensor``'s storage mode ``mode`` (its value's, for the last): the child
        of its cursor's position, as its iterator gives it."""
        if mode < 0:
            return _c(0)
        c = self.leaves.get((tensor, mode))
        if c is None:
            raise StrategyError(f"level {mode} of {tensor} is read outside a loop over it")
        if c.kind == "dense":
            parent = self.position(tensor, mode - 1)
            # (a reversed dense level counts its coordinates up from its last one)
            p = arith("-", arith("-", c.size, _c(1)), c.p) if c.reverse else c.p
            return p if parent == _c(0) else arith("+", arith("*", parent, c.size), p)
        if c.kind == "coo":
            return c.p
        if c.it.children_by_coordinate:   # (a byte map's children sit at their coordinates' slots)
            return c.it.locate(c.up, self.stored(c))
        return c.it.child(c.p, None, c.up, c.block)

    def start(self, leaf, absent: dict) -> list:
        """(Re)initialize ``leaf``'s cursor under its parent's current position (``Cursors.start``):
        an empty fiber where an ancestor has run out or is not at the enclosing coordinate."""
        c = self.code(leaf)
        if c.kind == "universe":
            return [ir.Assign(c.p, _c(0))]
        present = []
        for m in range(leaf.mode):
            key = (leaf.tensor, m)
            if key not in self.leaves:
                raise StrategyError(f"{leaf}: its parent level {m} is not iterated around it")
            if key in absent:
                present.append(not_(absent[key]))
            # (not tested twice: a merged loop's operand at its coordinate is valid there)
            if key not in self.known and not (key in absent and self.leaf_valid(key) in _conjuncts(present[-1])):
                present.append(self.leaf_valid(key))
        if c.kind == "dense":
            fill = [ir.Assign(c.p, _c(0))]
            if c.end is not c.size:
                # (an empty range under a parent not there)
                fill.append(ir.Assign(c.end, ir.Select(and_(*present), c.size, _c(0)) if present else c.size))
            return fill
        opening = []
        if c.kind == "coo" and c.sub > 0:
            # (a parent's segment is [p, seg) whichever way it is walked)
            parent = self.leaves[(leaf.tensor, leaf.mode - 1)]
            lo, hi = parent.p, parent.seg
        else:
            P = self.position(leaf.tensor, leaf.mode - 1)
            if c.up is not None:
                # (the fiber's parent kept: its coordinates or children are read from it)
                opening.append(ir.Assign(c.up, P))
                P = c.up
            lo, hi = c.it.bounds(P)
            if c.block is not None:
                # (walked backwards, from the fiber's last position: in its last block)
                opening.append(ir.Assign(c.block, c.it.block_last(P) if c.reverse else c.it.block_start(P)))
        if not c.reverse:
            fill = opening + [ir.Assign(c.p, lo), ir.Assign(c.end, hi)] + self.segment(c) + self.sync(c)
        elif c.seg is not None:
            fill = opening + [ir.Assign(c.seg, hi), ir.Assign(c.end, lo)] + self.segment_back(c)
        else:
            fill = opening + [ir.Assign(c.p, _less_one(hi)), ir.Assign(c.end, _less_one(lo))]
        empty = [ir.Assign(c.p, _c(0)), ir.Assign(c.end, _c(0))] + ([ir.Assign(c.seg, _c(0))] if c.seg else [])
        return fill if not present else [If(and_(*present), fill, empty)]

    def sync(self, c: LeafCode) -> list:
        """Bring the block (or run) a walked level keeps beside its position up to it, where the
        position is in its fiber (a SparseRunList's walk jumps a gap between runs here)."""
        if c.block is None:
            return []
        return [If(BinOp("<", c.p, c.end), c.it.block_sync(c.p, c.block))]

    def sync_back(self, c: LeafCode) -> list:
        """:meth:`sync` walking backwards: the block down to the position just stepped down to."""
        if c.block is None:
            return []
        return [If(BinOp(">", c.p, c.end), c.it.block_sync_back(c.p, c.block, c.up))]

    def segment(self, c: LeafCode) -> list:
        """A non-last COO mode's segment: the entries from ``p`` with its coordinate."""
        if c.seg is None:
            return []
        at = Load(c.idx, c.p)
        return [ir.Assign(c.seg, c.p),
                ir.While(and_(BinOp("<", c.seg, c.end), Load(c.idx, c.seg).eq(at)),
                         [ir.CompoundAssign("+", c.seg, _c(1))])]

    def segment_back(self, c: LeafCode) -> list:
        """A non-last COO mode walked backwards: the segment ``[p, seg)`` of the entries before
        ``seg`` with the coordinate of the one just before it (none once ``seg`` is at ``end``)."""
        last = Load(c.idx, arith("-", c.seg, _c(1)))
        before = arith("-", c.p, _c(1))
        return [If(BinOp(">", c.seg, c.end), [
            ir.Assign(c.p, arith("-", c.seg, _c(1))),
            ir.While(and_(BinOp(">", c.p, c.end), Load(c.idx, before).eq(last)), [ir.CompoundAssign("-", c.p, _c(1))]),
        ])]

    def leaf_valid(self, key) -> ir.Expr:
        c = self.leaves[key]
        if c.reverse and c.kind != "dense":
            return BinOp(">", c.seg if c.seg is not None else c.p, c.end)
        return BinOp("<", c.p, c.end)

    def leaf_next(self, leaf) -> list:
        c = self.code(leaf)
        if c.reverse and c.kind != "dense":
            if c.seg is not None:
                return [ir.Assign(c.seg, c.p)] + self.segment_back(c)
            return [ir.CompoundAssign("-", c.p, _c(1))] + self.sync_back(c)
        if c.seg is not None:
            return [ir.Assign(c.p, c.seg)] + self.segment(c)
        return [ir.CompoundAssign("+", c.p, _c(1))] + self.sync(c)

    def leaf_locate(self, leaf, x) -> list:
        c = self.code(leaf)
        if c.kind in ("dense", "universe"):
            return [ir.Assign(c.p, x)]
        t = self.target(c, x)
        if c.reverse and c.seg is not None:
            # a COO mode's segment: gallop down over the entries below it to the last at or below
            # the target (its segment then ends after it), as a SparseList's cursor does
            below = arith("-", c.end, _c(1))
            return [If(and_(self.leaf_valid(leaf.key), BinOp(">", self.stored(c), t)), [
                ir.CompoundAssign("-", c.p, _c(1)),
                If(BinOp(">", c.p, below), gallop_back_stmts(c.p, c.idx, below, t, self.fresh)),
                ir.Assign(c.seg, arith("+", c.p, _c(1))),
            ] + self.segment_back(c))]
        seek = self.leaf_seek(leaf, x)
        if c.kind == "walk":
            # (the first coordinate at or past the target, the last at or below it walked backwards,
            # as the level's iterator finds it; stepped to, where it cannot)
            ahead = and_(self.leaf_valid(leaf.key), BinOp(">", self.stored(c), t) if c.reverse
                         else BinOp("<", self.stored(c), t))
            return [If(ahead, seek)] if seek is not None else [ir.While(ahead, self.leaf_next(leaf))]
        # a sorted list from the cursor on (down, walked backwards)
        return [If(self.leaf_valid(leaf.key), seek)] + ([] if c.reverse else self.segment(c))

    def leaf_seek(self, leaf, x):
        """Statements moving ``leaf``'s sparse cursor, in its fiber at a sequence coordinate below
        ``x``, to the first entry at or past ``x``, as its level's iterator finds it
        (:meth:`~compiler.lattice.iterators.ModeIterator.seek_stmts`: a list's gallop, a band's
        position, a run list's gallop over its runs); None where the level can only be stepped
        there. (A COO mode's segment is the caller's to find after it.)"""
        c = self.code(leaf)
        if c.reverse:
            return c.it.seek_back_stmts(c.p, c.end, self.target(c, x), c.up, c.block)
        return c.it.seek_stmts(c.p, c.end, x, c.up, c.block)

    @staticmethod
    def target(c: LeafCode, x) -> ir.Expr:
        """The stored coordinate the sequence coordinate ``x`` reads, and the other way round (walked
        backwards, counted down from the last: its own inverse)."""
        return arith("-", arith("-", c.size, _c(1)), x) if c.reverse else x


def _conjuncts(e) -> list:
    """The terms of the conjunction ``e`` (``[e]`` if it is none)."""
    if isinstance(e, BinOp) and e.op == "&&":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


__all__ = ["LeafCode", "LeafWalks", "UnwalkableLevel", "stored_entries", "storage_iterators", "walk_kind",
           "walkable_format"]
