"""Fibers that may be absent: the child of a merged walk's step where that walk's child does not end at
the step (:mod:`.merged_walks`) reads as an empty fiber, all its fill (:attr:`.fibers.SubFiber.present`).
Levels say whether their read unfurl takes such a fiber (:data:`ABSENT_OK`,
:func:`~.levels.register_unfurl`'s ``absent_ok``).
"""

from __future__ import annotations

from ..levels import Dense, Element, Pattern, SparseCOO, SparseList
from .fibers import SubFiber


#: level classes whose read unfurl takes a fiber that may be absent (:attr:`SubFiber.present`): an
#: absent one is empty, all fill (a list's or COO's positions none, a dense level's children absent)
ABSENT_OK = {Dense, SparseList, SparseCOO}


def can_be_absent(f: SubFiber) -> bool:
    """Whether fiber ``f`` and every level below it read as empty where the fiber is absent, so a
    merged walk's step may read it as one case (:mod:`.merged_walks`): levels of
    :data:`ABSENT_OK` (their own class, not a subclass, whose unfurl may differ), a leaf of values.

    >>> from compiler.format import csr, parse_format
    >>> from compiler.looplets.fibers import TensorInfo
    >>> can_be_absent(TensorInfo.from_format("A", csr()).root())
    True
    >>> can_be_absent(TensorInfo.from_format("B", parse_format("Dense(SparseHash(Element(0.0)))")).root())
    False
    """
    if f.mode != "read":
        return False
    levels = f.tensor.levels[f.level:]
    return all(type(lvl) in ABSENT_OK for lvl in levels) and isinstance(f.tensor.leaf, (Element, Pattern))
