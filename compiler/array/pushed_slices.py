"""A slice of a concatenation or a stack along its axis, moved onto the parts it takes (issue 30).

Slicing a concatenation picks, in each part, the coordinates of the slice that fall in it, so it is the
concatenation of those parts' slices: ``concat([p, q])[1:]`` is ``concat([p[1:], q])``, ``concat([p, q])[::-1]``
is ``concat([q[::-1], p[::-1]])``, and an integer ``concat([p, q])[4]`` (``p`` of 3 rows) is ``q[1]``. The looplets
read a concatenation at a loop's index as one phase a part, and at an index another operator computes (the
slice's ``i + 1``) by taking the first part whose accesses are not missing there, which a part holding a sum
(``A @ v``, computed into a temporary that holds the sum's identity where its rows are missing) never is: they
refuse it. With the slice on the parts, the concatenation is read at the loop's index again, one phase a part.
:func:`compiler.array.fuse.lower_node` tries it where the statement is refused.

>>> import numpy as np
>>> from compiler.interop import to_tensor
>>> from compiler.array import build
>>> from compiler.array.nodes import Leaf
>>> p, q = Leaf(to_tensor(np.ones((3, 2)), "P")), Leaf(to_tensor(np.zeros((2, 2)), "Q"))
>>> moved = slices_pushed(build.getitem(build.concat([p, q]), (slice(1, None), 0)))
>>> moved.kind, [(x.kind, x.params) for x in moved.args]
('concat', [('index', (((1, 3, 1), 0),)), ('index', (((0, 2, 1), 0),))])
>>> slices_pushed(build.getitem(build.concat([p, q]), 4)).params, slices_pushed(build.concat([p, q])) is None
(((1, (0, 2, 1)),), True)
"""

from __future__ import annotations

from . import build
from .nodes import Node, ShapeOp, rewritten


def within(r: range, lo: int, hi: int) -> range:
    """The coordinates of ``r`` (either step) in ``[lo, hi)``, in ``r``'s order.

    >>> within(range(1, 9, 3), 3, 9), within(range(8, -1, -3), 0, 6), within(range(2, 0, -1), 5, 7)
    (range(4, 10, 3), range(5, -1, -3), range(2, 2, -1))
    """
    if r.step > 0:
        first, last = -(-(lo - r.start) // r.step), -(-(hi - r.start) // r.step)
    else:
        first, last = -(-(r.start - (hi - 1)) // -r.step), (r.start - lo) // -r.step + 1
    return r[max(0, first):max(0, last)]


def _key(items: tuple, axis: int, at) -> tuple:
    """The getitem key of ``items`` (a ShapeOp index's: ints and normalized ``(start, stop, step)``) with the
    item at ``axis`` ``at`` (a range, or an int; None: none there, the axis a stack's)."""
    out = []
    for a, it in enumerate(items):
        it = at if a == axis else it
        if a == axis and it is None:
            continue
        if isinstance(it, range):
            it = (it.start, it.start + (len(it) - 1) * it.step + (1 if it.step > 0 else -1), it.step)
        # (a stop of -1 after a negative step is "past 0", which a Python slice spells None)
        out.append(it if not isinstance(it, tuple) else slice(it[0], None if it[1] < 0 else it[1], it[2]))
    return tuple(out)


def parts_taken(node: Node) -> Node | None:
    """``node``, an index of a concatenation or a stack that slices or picks along its axis, as the parts it
    takes, each indexed as ``node`` indexes it; None where ``node`` is none such, or takes no coordinate."""
    if not (isinstance(node, ShapeOp) and node.kind == "index" and isinstance(node.args[0], ShapeOp)
            and node.args[0].kind in ("concat", "stack")):
        return None
    joined = node.args[0]
    (items,), (axis,) = node.params, joined.params
    it = items[axis]
    want = range(*it) if isinstance(it, tuple) else range(it, it + 1)
    if want == range(joined.shape[axis]) or not len(want):
        return None
    # (the result's axis the parts are joined along: the sliced axes before it)
    at = sum(isinstance(x, tuple) for x in items[:axis])
    if joined.kind == "stack":
        parts = [build.getitem(joined.args[c], _key(items, axis, None)) for c in want]
        return parts[0] if not isinstance(it, tuple) else build.stack(parts, at)
    parts, offset = [], 0
    for part in joined.args:
        mine = within(want, offset, offset + part.shape[axis])
        if len(mine):
            local = range(mine.start - offset, mine.stop - offset, mine.step)
            parts.append(build.getitem(part, _key(items, axis, local if isinstance(it, tuple) else local[0])))
        offset += part.shape[axis]
    # (a negative step takes the last part's coordinates first)
    parts = parts[::-1] if want.step < 0 else parts
    return parts[0] if len(parts) == 1 else build.concat(parts, at)


def slices_pushed(node: Node) -> Node | None:
    """``node`` with each index of a concatenation or a stack along its axis as the parts it takes
    (:func:`parts_taken`, and on, while a part is such an index too), a node shared in ``node`` shared in the
    result; None where no index is such."""
    def rule(n: Node, visit) -> Node | None:
        taken = parts_taken(n)
        return None if taken is None else visit(taken)

    return rewritten(node, rule)


__all__ = ["parts_taken", "slices_pushed", "within"]
