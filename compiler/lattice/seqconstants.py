"""Constant indices in the sequence lowering's accesses (``A[2, j]``): a constant's level is a length-1 slice in
a product with the level of the nearest index, so it is located under its parent before the level inside it is
read. (An access at constants only, one entry, is located before the loops: :mod:`compiler.lattice.seqlocated`.)
"""

from __future__ import annotations

from .sequences import Product
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


__all__ = ["with_constants"]
