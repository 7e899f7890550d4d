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


__all__ = ["reshape_groups"]
