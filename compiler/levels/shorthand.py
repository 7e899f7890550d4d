"""The shorthand ("csr", "coo", ...) a tree of levels spells, kept with the levels: it names
the built-in classes exactly, so a subclass (a format of its own, with its own name) has none.

>>> from compiler.levels import Dense, Element, SparseList
>>> shorthand((Dense(None), SparseList(None)), (1, 0)), shorthand((Dense(None),) * 3, (0, 1, 2))
('csc', 'dense')
"""

from __future__ import annotations

from .dense import Dense
from .sparse_coo import SparseCOO
from .sparse_list import SparseList


def shorthand(levels: tuple, mode_order: tuple) -> str | None:
    """The shorthand of ``levels`` (outermost first) storing their modes in ``mode_order``, or None."""
    kinds = tuple(type(lvl) for lvl in levels)
    identity = tuple(mode_order) == tuple(range(len(mode_order)))
    if all(k is Dense for k in kinds) and identity:
        return "dense"
    if kinds == (Dense, SparseList):
        return {(0, 1): "csr", (1, 0): "csc"}[tuple(mode_order)]
    if kinds == (SparseCOO,) and identity:
        return "coo"
    if kinds == (SparseList,):
        return "sparse_vector"
    if kinds == (SparseList, SparseList) and identity:
        return "dcsr"
    if len(kinds) >= 3 and all(k is SparseList for k in kinds) and identity:
        return "csf"
    return None
