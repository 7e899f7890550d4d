"""The simple format a strategy builds an output in when it cannot assemble the format asked.

A strategy assembles some output levels itself (the lattice strategy places Dense levels by
position and appends SparseList and SparseCOO levels in storage order). Any other level of an
output is built as its *stand-in*, a SparseList holding the same coordinates (sorted and
unique, so every strategy appends it and every level converts from it), and the call converts
the result to the format asked (``Tensor.asformat``), as it converts an output built in
another mode order. Strategy-neutral: each strategy says which levels it assembles where
(``assembles``); the levels above and below a stand-in are kept.

>>> from compiler.format import parse_format
>>> fmt = parse_format("Dense(RunList(Element(0.0)))")
>>> appends = lambda levels, k: levels[k].slot_per_coordinate or levels[k].appends_nested   # (a toy strategy)
>>> built, replaced = stand_in(fmt, appends)
>>> print(built); print(replaced)
Dense(SparseList(Element(0.0)))
['level 1 (RunList)']
>>> stand_in(parse_format("dense", ndim=2), appends) is None
True
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from .format import Format
from .levels import Element, SparseList


def stand_in(fmt: Format, assembles: Callable) -> tuple[Format, list[str]] | None:
    """``(built, replaced)``: ``fmt`` with each level the strategy cannot assemble replaced by
    SparseList levels (one per mode it stores), and those levels in a user's terms (``level 1
    (RunList)``); None when the strategy assembles every level as it is. Levels are judged
    outermost first, each under the stand-ins above it; ``assembles(levels, k)`` says whether
    the strategy assembles level ``k`` of the (partly replaced) ``levels``."""
    levels, origin, replaced = list(fmt.levels), list(range(len(fmt.levels))), []
    k = 0
    while k < len(levels):
        if not assembles(tuple(levels), k):
            lvl = levels[k]
            if origin[k] is None:
                raise AssertionError(f"{fmt}: the strategy assembles no SparseList at level {k}")
            simple = SparseList(fmt.leaf, index_dtype=getattr(lvl, "index_dtype", None))
            replaced.append(f"level {origin[k]} ({lvl.name})")
            levels[k:k + 1] = [simple] * lvl.nmodes
            origin[k:k + 1] = [None] * lvl.nmodes
            continue   # (judge the stand-in where it stands)
        k += 1
    if not replaced:
        return None
    root = fmt.leaf
    for lvl in reversed(levels):
        root = dataclasses.replace(lvl, child=root)
    return Format(root, fmt.mode_order), replaced


def scatters(fmt: Format, pattern: bool = False) -> bool:
    """Whether ``fmt`` can be built by a two-phase scatter from loops in any order: levels located
    by coordinate over one innermost level that says it scatters (:attr:`~compiler.levels.level.Level.scatters`),
    each of one mode, at least two modes, over an Element leaf (or a pattern, with ``pattern``: the
    lattice's scatter takes one); or two such levels (a DCSC): the outer one's fibers are filled as a
    Dense level's, then those holding entries are listed (:func:`compiler.looplets.scatter.lower_scattered`).
    The strategies so build a CSC output of row-order loops in its own order, where they would build
    it as CSR and convert it.

    >>> from compiler.format import csc, csf, parse_format
    >>> scatters(csc()), scatters(csf(3)), scatters(parse_format("Dense(Dense(SparseList(Element(0.0))))"))
    (True, False, True)
    >>> scatters(parse_format("dcsr")), scatters(parse_format("Dense(SparseList(Pattern()))"), pattern=True)
    (True, True)
    """
    levels = fmt.levels
    if len(levels) < 2 or any(lvl.nmodes != 1 for lvl in levels) or not (pattern or isinstance(fmt.leaf, Element)):
        return False
    if len(levels) == 2 and levels[0].scatters:
        return levels[1].scatters
    return all(lvl.located_by_coordinate for lvl in levels[:-1]) and levels[-1].scatters


def fiber_word(fmt: Format) -> str:
    """What a fiber of a scattered output's innermost level is called in comments and notes: a
    matrix stored column-major (CSC, DCSC) has columns.

    >>> from compiler.format import csc, csr
    >>> fiber_word(csc()), fiber_word(csr())
    ('column', 'fiber')
    """
    return "column" if fmt.ndim == 2 and tuple(fmt.mode_order) == (1, 0) else "fiber"


def building(fmt: Format, tensor: str, assembles: Callable, strategy: str, how: str):
    """``(built, why)``: the format ``strategy`` builds output ``tensor`` of format ``fmt`` in
    (:func:`stand_in` with its ``assembles``) and why, in a user's terms (``how``: what the
    strategy assembles itself), or None when it assembles ``fmt`` as it is.

    >>> from compiler.format import parse_format
    >>> appends = lambda levels, k: levels[k].slot_per_coordinate or levels[k].appends_nested   # (a toy strategy)
    >>> built, why = building(parse_format("Dense(RunList(Element(0.0)))"), "C", appends, "toy", "it appends lists")
    >>> print(why)
    the toy strategy assembles no level 1 (RunList) in C: it appends lists, so it builds that level as a SparseList
    """
    found = stand_in(fmt, assembles)
    if found is None:
        return None
    built, replaced = found
    one = len(replaced) == 1
    return built, (f"the {strategy} strategy assembles no {' and '.join(replaced)} in {tensor}: {how}, so it builds "
                   f"{'that level' if one else 'those levels'} as {'a SparseList' if one else 'SparseLists'}")


def conversion_cost(given: Format, fmt: Format) -> str:
    """How ``Tensor.asformat`` converts between two formats, for the ``convert`` note.

    >>> from compiler.format import parse_format
    >>> conversion_cost(parse_format("csr", ndim=2), parse_format("csc", ndim=2))
    'a counting sort, O(nnz + extent)'
    """
    if {given.shorthand, fmt.shorthand} == {"csr", "csc"}:
        return "a counting sort, O(nnz + extent)"
    return "a sort of its entries, O(nnz log nnz)"


def output_conversion_note(tensor: str, given: Format, built: Format, why: str) -> str:
    """The note of the trace's ``convert`` step for an output ``tensor`` of format ``given`` the
    kernel builds as ``built`` (``why``: :func:`building`'s reason), converted after each call.

    >>> from compiler.format import parse_format
    >>> print(output_conversion_note("C", parse_format("csc", ndim=2), parse_format("csr", ndim=2), "why"))
    C is csc: why; the kernel builds C as csr, converted to csc after each call (C.asformat, a counting sort, O(nnz + extent))
    """
    return (f"{tensor} is {format_text(given)}: {why}; the kernel builds {tensor} as {format_text(built)}, "
            f"converted to {format_text(given)} after each call ({tensor}.asformat, {conversion_cost(given, built)})")


def format_text(fmt: Format) -> str:
    """``csr``; a format with no short name in another mode order: ``dcsr in mode order 1, 0``.

    >>> from compiler.format import csc, csf
    >>> format_text(csc()), format_text(Format(csf(3).root, (2, 1, 0)))
    ('csc', 'csf in mode order 2, 1, 0')
    """
    if fmt.shorthand:
        return fmt.shorthand
    natural = Format(fmt.root, tuple(range(fmt.ndim)))
    if natural.shorthand:
        return f"{natural.shorthand} in mode order {', '.join(str(m) for m in fmt.mode_order)}"
    return str(fmt)


__all__ = ["building", "conversion_cost", "fiber_word", "format_text", "output_conversion_note", "scatters", "stand_in"]
