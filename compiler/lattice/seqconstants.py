"""Constant indices in the sequence lowering's accesses (``A[2, j]``, ``out[] = A[0, 0] + b[2]``): a
constant's level is a length-1 slice in a product with the level of the nearest index, so it is located
under its parent before the level inside it is read; an access at constants only is one entry, the
length-1 slices of its levels in a product, iterated by a loop of one coordinate (:func:`point_index`).
"""

from __future__ import annotations

from ..notation.ast import Assign, Index
from ..notation.ast import accesses as accesses_of
from ..notation.ast import walk as walk_notation
from .sequences import Product, Seq
from .sequences import Slice as SeqSlice


def with_constants(levels: list, consts: dict) -> dict:
    """Each index's sequence once the constant indices are in: a constant ``c`` at a level is the
    length-1 slice ``[c:c+1]`` of it, in a product with the level of the nearest index (outside
    it before that index in storage order, inside it after), so the index's coordinates are the
    same and the constant's level is located under its parent before the level inside is read.

    >>> from compiler.lattice.sequences import Level
    >>> A = [Level("A", 0, "dense", 4, "2"), Level("A", 1, "compressed", 5, "j")]
    >>> print(with_constants(A, {0: 2})["j"])
    2_A[2:3] × j_A
    >>> print(with_constants([A[1].__class__("A", 0, "dense", 4, "i"), A[1]], {1: 3})["i"])
    i_A × j_A[3:4]
    """
    out: dict = {}
    pending: list = []      # constant levels before the first index
    last = None
    for lv in levels:
        if lv.mode in consts:
            one = SeqSlice(lv, consts[lv.mode], consts[lv.mode] + 1)
            if last is None:
                pending.append(one)
            else:
                out[last] = Product(out[last], one)
            continue
        s = lv
        for one in reversed(pending):
            s = Product(one, s)
        pending = []
        out[lv.index] = s
        last = lv.index
    return out


def entry_sequence(levels: list, consts: dict) -> Seq:
    """The sequence of one entry (every index a constant): the length-1 slices of its levels in a
    product, outer level first, so it has one coordinate (0) where the entry is stored and none
    where it is not; the levels are located in storage order, each under its parent.

    >>> from compiler.lattice.sequences import Level
    >>> A = [Level("A", 0, "dense", 4, "1"), Level("A", 1, "compressed", 5, "3")]
    >>> print(entry_sequence(A, {0: 1, 1: 3}))
    1_A[1:2] × 3_A[3:4]
    """
    out = None
    for lv in levels:
        one = SeqSlice(lv, consts[lv.mode], consts[lv.mode] + 1)
        out = one if out is None else Product(out, one)
    return out


def point_index(program: Assign) -> Index | None:
    """The index of the one loop a 0-d statement that reads entries at constants only needs (its
    extent 1: the entries' sequences iterate it), named apart from the program's indices; None
    where the statement has output indices or reads no such entry.

    >>> from compiler.notation import parse
    >>> str(point_index(parse("out[] = A[0, 0] + b[2]"))), point_index(parse("y[j] = A[0, j]"))
    ('pt', None)
    """
    if program.lhs.indices or not any(
            a.indices and all(isinstance(i, int) for i in a.indices) for a in accesses_of(program.rhs)):
        return None
    used = {str(i) for n in walk_notation(program.rhs) for i in getattr(n, "indices", ()) if not isinstance(i, int)}
    name, k = "pt", 1
    while name in used:
        name, k = f"pt{k}", k + 1
    return Index(name)


__all__ = ["entry_sequence", "point_index", "with_constants"]
