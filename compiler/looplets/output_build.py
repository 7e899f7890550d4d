"""Which output levels the looplets strategy assembles itself, and the stand-in it builds for the rest.

The looplets write an output level in one of these ways (their update unfurls,
:mod:`compiler.looplets.levels`, and the nested outputs of :mod:`compiler.looplets.assembly`):
a level located by coordinate (Dense) under such levels is a ``Lookup``; any level with an
update unfurl innermost under them (a SparseList, SparsePoint, SparseBlockList or SparseCOO
appends its entries; a SparseBand, RunList, SparseRunList, SparseInterval or SparseHash, over an
Element leaf, its band, runs or keys); a level that marks its slots (SparseByteMap) among such
levels alone, over an Element leaf; under a level appended under any parent (``appends_nested``:
SparseList), more such levels, then either levels keyed by their parent's position
(``inserts_nested``: SparseHash), Dense levels down to an Element leaf (a block of values per
entry), or innermost a level storing only its runs (SparseRunList, SparseInterval), a band (SparseBand)
or blocks (SparseBlockList), over an Element leaf; and under a level keyed so, more levels keyed so. Any other level (a band, run-length or
block level above another, a SparseHash over a Dense or SparseList level, a SparseByteMap with a
sparse level around it) is built as a SparseList holding the same coordinates
(:func:`compiler.stand_in.stand_in`), and the call converts the result to the format asked
(``Tensor.asformat``), as under the lattice strategy; the trace's ``convert`` step says which
level and why.

>>> from compiler.format import parse_format
>>> built, why = building_output(parse_format("SparseBand(Dense(Element(0.0)))"), "C")
>>> print(built)
SparseList(Dense(Element(0.0)))
>>> print(why)   # doctest: +ELLIPSIS
the looplets strategy assembles no level 0 (SparseBand) in C: it places Dense levels by position ..., so it builds that level as a SparseList
>>> building_output(parse_format("dcsr"), "C") is None
True
>>> building_output(parse_format("SparseList(SparseHash(Element(0.0)))"), "C") is None
True
"""

from __future__ import annotations

from ..format import Format
from ..levels import Element
from ..stand_in import building
from .assembly import ends_under_appended
from .levels import UPDATABLE

#: what the looplets strategy assembles itself, for the ``convert`` step's note
HOW = ("it places Dense levels by position under Dense levels, marks a SparseByteMap's slots among Dense levels "
       "alone, appends any level innermost under Dense levels (a SparseBand, RunList, SparseRunList, SparseInterval "
       "or SparseHash over an Element leaf), and under a SparseList appends SparseList levels (DCSR, CSF), then "
       "SparseHash levels keyed by the entry above, Dense levels down to an Element leaf (a block of values "
       "per entry) or an innermost SparseRunList's, SparseInterval's, SparseBand's or SparseBlockList's runs, "
       "band or blocks, and under a SparseHash, SparseHash levels")


def updatable(lvl) -> bool:
    """Whether the looplets have an update unfurl for ``lvl``'s class (or a base of it)."""
    return any(c in UPDATABLE for c in type(lvl).__mro__)


def assembles(levels: tuple, k: int) -> bool:
    """Whether the looplets strategy assembles output level ``k`` of ``levels`` (outermost first,
    the leaf ``levels[-1].child``) itself; see the module's docstring. The levels above ``k`` are
    as :func:`~compiler.stand_in.stand_in` left them; those below, as asked.

    >>> from compiler.levels import Dense, RunList, SparseHash, SparseList
    >>> leaf = Element(0.0)
    >>> rows = (SparseList(Dense(leaf)), Dense(leaf))
    >>> assembles(rows, 0), assembles(rows, 1)
    (True, True)
    >>> assembles((SparseHash(Dense(leaf)), Dense(leaf)), 0), assembles((SparseList(RunList(leaf)), RunList(leaf)), 1)
    (False, False)
    """
    lvl, leaf = levels[k], levels[-1].child
    element = isinstance(leaf, Element)
    top = next((j for j in range(k) if not levels[j].located_by_coordinate), None)
    if top is None:   # (under Dense levels, or outermost)
        if lvl.located_by_coordinate:
            return True
        if lvl.marks_slots:   # (its slots among Dense levels alone, marked as written)
            return element and all(x.located_by_coordinate for x in levels[k + 1:])
        if k == len(levels) - 1:
            keyed = lvl.appends_band is not None or lvl.appends_runs or lvl.keys_in_table is not None
            return updatable(lvl) and (element or not keyed)
        if lvl.inserts_nested:
            return all(x.inserts_nested for x in levels[k + 1:])
        return lvl.appends_nested
    if levels[top].inserts_nested:
        return all(x.inserts_nested for x in levels[top:])
    if levels[top].marks_slots:
        return lvl.located_by_coordinate and element
    if not levels[top].appends_nested:
        return False
    # (under an appended level: more of them, then a block of Dense levels or levels keyed by their parent)
    j = top + 1
    while j < len(levels) and levels[j].appends_nested:
        j += 1
    if k < j:
        return True
    rest = levels[j:]
    return (element and all(x.located_by_coordinate for x in rest)) or all(x.inserts_nested for x in rest) \
        or (k == j and ends_under_appended(levels, k, leaf))


def building_output(fmt: Format, tensor: str):
    """``(built, why)``: the format the looplets kernel builds output ``tensor`` of format ``fmt``
    in, and why, or None when it assembles ``fmt`` itself."""
    return building(fmt, tensor, assembles, "looplets", HOW)


__all__ = ["HOW", "assembles", "building_output", "updatable"]
