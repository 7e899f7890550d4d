"""A row-major reshape as groups of axes: which operand axes become which result axes.

numpy reshapes in C order: an entry's coordinates are linearized in the old shape and split in the
new one. Where a run of old axes and a run of new axes hold the same number of entries, the
linearization of the run stays inside it, so each group is reshaped on its own: one old axis to one
new axis of the same extent is that axis (no operator), several to one a collapse, one to several a
split, several to several a split of a collapse. Each group keeps its reshape as small as index
notation says it, and an axis outside every non-trivial group stays a loop of its own.

>>> reshape_groups((6, 4), (2, 3, 4))
(((0,), (0, 1)), ((1,), (2,)))
>>> reshape_groups((2, 3, 4), (4, 6))
(((0, 1, 2), (0, 1)),)
>>> reshape_groups((1, 6), (6,)), reshape_groups((6,), (6, 1))
((((0, 1), (0,)),), (((0,), (0, 1)),))
"""

from __future__ import annotations

import math
from collections import Counter


def reshape_groups(old: tuple, new: tuple) -> tuple:
    """The groups ``(old axes, new axes)`` of a reshape from ``old`` to ``new`` (as many entries,
    neither empty): each the shortest runs from where the last ended whose extents multiply to one
    number. An extent-1 axis joins the group it borders (a trailing one the last group). An empty
    shape on either side (a 0-d array) or an array of no entries has no groups: ``()``.

    >>> reshape_groups((4, 6), (2, 3, 4))
    (((0, 1), (0, 1, 2)),)
    >>> reshape_groups((2, 1, 3), (2, 3))
    (((0,), (0,)), ((1, 2), (1,)))
    >>> reshape_groups((0, 3), (3, 0)), reshape_groups((), (1, 1))
    ((), ())
    """
    if not old or not new or math.prod(old) == 0:
        return ()
    if math.prod(old) != math.prod(new):
        raise ValueError(f"shapes {old} and {new} hold different numbers of entries")
    groups, a, b = [], 0, 0
    while a < len(old) and b < len(new):
        ga, gb, pa, pb = [a], [b], old[a], new[b]
        a, b = a + 1, b + 1
        while pa != pb:
            # (the entries are equal in number, so the smaller side has an axis left to take)
            if pa < pb:
                ga.append(a)
                pa *= old[a]
                a += 1
            else:
                gb.append(b)
                pb *= new[b]
                b += 1
        groups.append([ga, gb])
    # (the axes left over on one side are extent 1: the last group takes them)
    groups[-1][0].extend(range(a, len(old)))
    groups[-1][1].extend(range(b, len(new)))
    return tuple((tuple(ga), tuple(gb)) for ga, gb in groups)


def groups_apart_from_ones(old: tuple, new: tuple, keep_operand_ones: bool = False, result_axes=None) -> tuple:
    """``(operand axes, result axes, groups)``: :func:`reshape_groups` of the axes whose extent is not 1
    (where the reshape holds more than one entry), each group's axes numbered by their places in the two
    tuples of axes. A result's extent-1 axis is a broadcast and an operand's read at its one coordinate,
    so ``(6,) -> (1, 6, 1)`` is no split in three. ``keep_operand_ones``: the operand's stay, each in the
    group it borders, or, where a result's extent-1 axis has as many entries before it, that axis (its own
    group: ``(2, 1, 2, 3) -> (2, 1, 6)`` collapses the last two axes, not the last three); ``result_axes``:
    the result axes to group (default all).

    >>> groups_apart_from_ones((2, 1, 12), (6, 1, 4))     # (2, 12) -> (6, 4), one group
    ((0, 2), (0, 2), (((0, 1), (0, 1)),))
    >>> groups_apart_from_ones((2, 1, 3), (2, 3), keep_operand_ones=True)
    ((0, 1, 2), (0, 1), (((0,), (0,)), ((1, 2), (1,))))
    >>> groups_apart_from_ones((2, 1, 2, 3), (2, 1, 6), keep_operand_ones=True)
    ((0, 1, 2, 3), (0, 1, 2), (((0,), (0,)), ((1,), (1,)), ((2, 3), (2,))))
    """
    olds = tuple(range(len(old)))
    news = tuple(range(len(new))) if result_axes is None else tuple(result_axes)
    if math.prod(old) > 1:
        # (an operand's extent-1 axes kept: each result one with as many entries before it pairs with one of them)
        spare = Counter(math.prod(old[:a]) for a in olds if old[a] == 1) if keep_operand_ones else Counter()
        paired = set()
        for b in news:
            if new[b] == 1 and spare[math.prod(new[:b])] > 0:
                spare[math.prod(new[:b])] -= 1
                paired.add(b)
        news = tuple(b for b in news if new[b] != 1 or b in paired)
        if not keep_operand_ones:
            olds = tuple(a for a in olds if old[a] != 1)
    return olds, news, reshape_groups(tuple(old[a] for a in olds), tuple(new[b] for b in news))


def refined_group(old: tuple, new: tuple) -> tuple | None:
    """The common refinement of one group of a reshape (``old`` and ``new``: its axes' extents, as many entries):
    ``(pieces, olds, news)``, the extents of the pieces, major first, and the pieces each old and each new axis
    holds (ranges), where every boundary of one side's axes is a boundary of pieces the other's divide; then the
    reshape is a split of each old axis into its pieces and a collapse of each new axis's pieces, no index
    split after a collapse. None where there is no such refinement, or an axis of extent 1.

    >>> refined_group((2, 12), (6, 4))     # (2, 12) -> (2, 3, 4) -> (6, 4)
    ((2, 3, 4), (range(0, 1), range(1, 3)), (range(0, 2), range(2, 3)))
    >>> refined_group((2, 3, 4), (4, 6)) is None    # (6 is no multiple of 4, nor 4 of 6)
    True
    """
    if 1 in old or 1 in new:
        return None
    # (each side's boundaries as the entries from an axis on, counted from the last axis)
    from_old = [math.prod(old[a:]) for a in range(len(old) + 1)]
    from_new = [math.prod(new[b:]) for b in range(len(new) + 1)]
    bounds = sorted(set(from_old) | set(from_new), reverse=True)
    if any(big % small for big, small in zip(bounds, bounds[1:])):
        return None
    pieces = tuple(big // small for big, small in zip(bounds, bounds[1:]))
    spans = lambda side: tuple(range(bounds.index(side[a]), bounds.index(side[a + 1]))  # noqa: E731
                               for a in range(len(side) - 1))
    return pieces, spans(from_old), spans(from_new)


__all__ = ["groups_apart_from_ones", "refined_group", "reshape_groups"]
