"""Which levels the lattice strategy's shape-operator kernels walk and write
(:mod:`compiler.lattice.seqemit`, :mod:`compiler.lattice.seqoutput`), asked of a level's
properties and arrays, never its name.
"""

from __future__ import annotations


def leaf_kind(level) -> str | None:
    """How the sequence emitter walks ``level`` (asked of its properties and arrays), or None.

    >>> from compiler.levels import Dense, SparseCOO, SparseList
    >>> leaf_kind(Dense(None)), leaf_kind(SparseList(None)), leaf_kind(SparseCOO(1, None))
    ('dense', 'list', 'list')
    """
    arrays = set(level.array_dtypes())
    if level.full and level.locatable and not arrays and level.nmodes == 1:
        return "dense"
    if not (level.ordered and level.unique) or level.full:
        return None
    # (fiber starts and the coordinates, one array per mode, by the names the level gives them: a
    # one-mode SparseCOO, a COO vector, is walked as a SparseList)
    if level.nmodes == 1 and arrays == {level.starts_array, level.crd_of(0)}:
        return "list"
    if level.nmodes > 1 and arrays == {level.starts_array} | {level.crd_of(k) for k in range(level.nmodes)}:
        return "coo"
    return None


__all__ = ["leaf_kind"]
