"""Which output levels the lattice strategy assembles itself, and the stand-in it builds for the rest.

The lattice emission assembles an output level in one of two ways (TACO's level functions):
a level with a slot per coordinate under such levels (Dense) is *located*, its position
computed from its parent's; a level registered in :data:`~compiler.lattice.iterators.ASSEMBLED`
that is not full (SparseList, or SparseCOO as the only level) is *appended* in storage order. Any
other level (a run-length, band, block, hash, byte-map, point or interval level, or a Dense
level under a sparse one: TACO's ``{sparse, dense}``) is built as a SparseList holding the
same coordinates (:func:`compiler.stand_in.stand_in`), and the call converts the result to the
format asked (``Tensor.asformat``). The plan records the choice as a ``convert`` step, with
the conversions of :mod:`compiler.lattice.conversions`.

>>> from compiler.format import parse_format
>>> built, why = building_output(parse_format("Dense(SparseHash(Element(0.0)))"), "C")
>>> print(built.shorthand)
csr
>>> print(why)
the lattice strategy assembles no level 1 (SparseHash) in C: it places Dense levels by position under Dense levels only, and appends sorted lists of coordinates (SparseList, or SparseCOO as the only level) in storage order, so it builds that level as a SparseList
>>> building_output(parse_format("dcsr"), "C") is None
True
"""

from __future__ import annotations

from ..format import Format
from ..stand_in import stand_in
from .iterators import ASSEMBLED


def assembles(levels: tuple, k: int) -> bool:
    """Whether the lattice emission assembles output level ``k`` of ``levels`` (outermost first)
    itself: a registered level, full (located) only under full levels; a sparse level that
    appends under any parent (a SparseList's fiber starts where the one before it ended), and
    any other (a SparseCOO's one segment) only as the output's one level."""
    lvl = levels[k]
    if not isinstance(lvl, ASSEMBLED):
        return False
    if lvl.full:
        return all(above.full for above in levels[:k])
    return lvl.appends_nested or len(levels) == 1


def building_output(fmt: Format, tensor: str):
    """``(built, why)``: the format the lattice kernel builds output ``tensor`` of format ``fmt``
    in, and why, or None when it assembles ``fmt`` itself."""
    found = stand_in(fmt, assembles)
    if found is None:
        return None
    built, replaced = found
    levels = " and ".join(replaced)
    one = len(replaced) == 1
    return built, (f"the lattice strategy assembles no {levels} in {tensor}: it places Dense levels by position "
                   f"under Dense levels only, and appends sorted lists of coordinates (SparseList, or SparseCOO "
                   f"as the only level) in storage order, so it builds {'that level' if one else 'those levels'} as "
                   f"{'a SparseList' if one else 'SparseLists'}")


__all__ = ["assembles", "building_output"]
