"""Which output levels the lattice strategy assembles itself, and the stand-in it builds for the rest.

The lattice emission assembles an output level in one of two ways (TACO's level functions):
a level with a slot per coordinate under such levels (Dense) is *located*, its position
computed from its parent's; so is one under an appended level when it declares it
(``locates_under_appended``: TACO's ``{sparse, dense}``, a SparseList of Dense rows), each
appended position getting a block of slots; a level that marks its slots (SparseByteMap,
innermost, under Dense levels) is appended in order, its entries stored and marked in their
slots, and so is one that keeps its keys in a table (SparseHash), the table built at the end;
an innermost level that stores a band or blocks per fiber (SparseBand, SparseBlockList) is
appended in order under those or a SparseList, a band's gaps filled, a block list's starting
blocks (:func:`appends_range`);
a level registered in :data:`~compiler.lattice.iterators.ASSEMBLED`
that is not full (SparseList, or SparseCOO as the only level) is *appended* in storage order. Any
other level (a run-length, point or interval level, a band or block level above others, a Dense
level under a sparse one in a two-phase or scheduled kernel) is built as a SparseList holding the
same coordinates (:func:`compiler.stand_in.stand_in`), and the call converts the result to the
format asked (``Tensor.asformat``). The plan records the choice as a ``convert`` step, with
the conversions of :mod:`compiler.lattice.conversions`.

>>> from compiler.format import parse_format
>>> built, why = building_output(parse_format("Dense(RunList(Element(0.0)))"), "C")
>>> print(built.shorthand)
csr
>>> print(why)
the lattice strategy assembles no level 1 (RunList) in C: it places Dense levels by position under Dense levels (and under a SparseList level when only Dense levels follow), and appends sorted lists of coordinates (SparseList, a SparseByteMap or SparseHash innermost under Dense levels, a SparseBand or SparseBlockList innermost under those or a SparseList, or SparseCOO as the only level) in storage order, so it builds that level as a SparseList
>>> building_output(parse_format("dcsr"), "C") is None
True
>>> building_output(parse_format("SparseList(Dense(Element(0.0)))"), "C") is None
True
>>> building_output(parse_format("Dense(SparseByteMap(Element(0.0)))"), "C") is None
True
>>> building_output(parse_format("Dense(SparseHash(Element(0.0)))"), "C") is None
True
>>> building_output(parse_format("Dense(SparseBand(Element(0.0)))"), "C") is None
True
"""

from __future__ import annotations

from ..format import Format
from ..stand_in import stand_in
from .iterators import ASSEMBLED


def assembles(levels: tuple, k: int, one_pass: bool = True) -> bool:
    """Whether the lattice emission assembles output level ``k`` of ``levels`` (outermost first)
    itself: a registered level, full (located) under full levels; a full level that declares it
    is located under an appended parent (``locates_under_appended``: Dense, TACO's ``{sparse,
    dense}``) under a level that appends, with only such levels below it, in a one-pass kernel
    (``one_pass``; two-phase and threaded assembly append no blocks); a sparse level that appends
    under any parent (a SparseList's fiber starts where the one before it ended), and any other
    (a SparseCOO's one segment) only as the output's one level; a level that marks its slots
    (``marks_slots``: SparseByteMap) or keeps its keys in a table (``keys_in_table``: SparseHash)
    as the innermost level under Dense ones, in a one-pass kernel.

    >>> from compiler.levels import Dense, Element, SparseList
    >>> rows = (SparseList(Element(0.0)), Dense(Element(0.0)))
    >>> assembles(rows, 1), assembles(rows, 1, one_pass=False)
    (True, False)
    """
    lvl = levels[k]
    if lvl.appends_band is not None or lvl.appends_blocks is not None:
        return one_pass and appends_range(levels, k)
    if not isinstance(lvl, ASSEMBLED):
        # (appended, marked and stored in its slot: the innermost level, under located ones)
        return (one_pass and (lvl.marks_slots or lvl.keys_in_table is not None) and k == len(levels) - 1
                and all(above.located_by_coordinate for above in levels[:k]))
    if lvl.full:
        if all(above.full for above in levels[:k]):
            return True
        parent = next(above for above in reversed(levels[:k]) if not above.full)
        return (one_pass and all(x.full and x.locates_under_appended for x in levels[k:])
                and isinstance(parent, ASSEMBLED) and parent.appends_nested)
    return lvl.appends_nested or len(levels) == 1


def appends_range(levels: tuple, k: int) -> bool:
    """Whether level ``k`` of ``levels``, one that stores a band or blocks per fiber
    (``appends_band``, ``appends_blocks``), is appended by the lattice emission
    (:mod:`compiler.lattice.emit_ranges`): as the innermost level, under levels located by
    coordinate or under a level that appends under any parent (a SparseList).

    >>> from compiler.levels import Dense, Element, SparseBand, SparseHash, SparseList
    >>> band = SparseBand(Element(0.0))
    >>> appends_range((Dense(band), band), 1), appends_range((SparseList(band), band), 1)
    (True, True)
    >>> appends_range((SparseHash(band), band), 1), appends_range((band, Dense(Element(0.0))), 0)
    (False, False)
    """
    if k != len(levels) - 1:
        return False
    if all(above.located_by_coordinate for above in levels[:k]):
        return True
    return isinstance(levels[k - 1], ASSEMBLED) and levels[k - 1].appends_nested


def building_output(fmt: Format, tensor: str, one_pass: bool = True):
    """``(built, why)``: the format the lattice kernel builds output ``tensor`` of format ``fmt``
    in, and why, or None when it assembles ``fmt`` itself (``one_pass``: as :func:`assembles`)."""
    found = stand_in(fmt, lambda levels, k: assembles(levels, k, one_pass))
    if found is None:
        return None
    built, replaced = found
    levels = " and ".join(replaced)
    one = len(replaced) == 1
    blocks = "and under a SparseList level when only Dense levels follow" if one_pass else \
        "and, in a one-pass kernel, under a SparseList level when only Dense levels follow"
    return built, (f"the lattice strategy assembles no {levels} in {tensor}: it places Dense levels by position "
                   f"under Dense levels ({blocks}), and appends sorted lists of coordinates (SparseList, a "
                   f"SparseByteMap or SparseHash innermost under Dense levels, a SparseBand or SparseBlockList innermost "
                   f"under those or a SparseList, or SparseCOO as the only level) in storage order, so it builds "
                   f"{'that level' if one else 'those levels'} as {'a SparseList' if one else 'SparseLists'}")


__all__ = ["appends_range", "assembles", "building_output"]
