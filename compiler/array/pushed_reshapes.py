"""A reshape of an elementwise operator moved onto the operator's operands (issue 30).

A row-major reshape moves every entry to a new coordinate and leaves its value as it is, so it commutes with an
elementwise operator whose operands all have the operator's shape (or are 0-d): ``(a3 + 1).reshape(4, 6)`` is
``a3.reshape(4, 6) + 1``. The lattice strategy refuses the first form: the scalar's universe joins ``a3``'s
coordinates under the reshape's collapse, a split of a product over a union, whose groups a loop would leave half
drained (:func:`compiler.lattice.seqlattice.unsupported`), so ``a3 + 1`` was computed by a kernel of its own and
its entries reshaped apart. In the second form the union is around the split, which the lattice walks in one
kernel, reading ``a3`` as stored. :func:`compiler.array.fuse.lower_node` tries it where the statement is refused.

>>> import numpy as np
>>> from compiler.interop import to_tensor
>>> from compiler.array import build
>>> from compiler.array.nodes import Leaf
>>> a = Leaf(to_tensor(np.ones((2, 3, 4)), "A"))
>>> moved = reshapes_pushed(build.reshape(build.elementwise("add", a, 1.0), (4, 6)))
>>> type(moved).__name__, moved.shape, [type(x).__name__ for x in moved.args]
('Map', (4, 6), ['ShapeOp', 'Scalar'])
>>> reshapes_pushed(build.reshape(a, (4, 6))) is None
True
"""

from __future__ import annotations

from .nodes import Map, Node, ShapeOp, rewritten


def pushable(node: Node) -> bool:
    """Whether ``node`` is a reshape of an elementwise operator whose operands all have its shape or none.

    >>> import numpy as np
    >>> from compiler.interop import to_tensor
    >>> from compiler.array import build
    >>> from compiler.array.nodes import Leaf
    >>> a, v = Leaf(to_tensor(np.ones((2, 3)), "A")), Leaf(to_tensor(np.ones(3), "v"))
    >>> pushable(build.reshape(build.elementwise("mul", a, 2.0), (6,)))
    True
    >>> pushable(build.reshape(build.elementwise("mul", a, v), (6,)))   # (v broadcast: no reshape of its own)
    False
    >>> pushable(build.reshape(build.elementwise("mul", build.getitem(a, (0, 1)), 2.0), (1, 1)))   # (0-d)
    False
    """
    if not (isinstance(node, ShapeOp) and node.kind == "reshape" and isinstance(node.args[0], Map)):
        return False
    inner = node.args[0]
    # (a 0-d operator's operands are all 0-d: none would take the reshape, and the result would lose its axes)
    return inner.ndim > 0 and all(x.shape == inner.shape or x.ndim == 0 for x in inner.args)


def reshaped(x: Node, shape: tuple) -> Node:
    """``x`` reshaped to ``shape`` as :func:`compiler.array.build.reshape` makes it, a reshape of a reshape one
    reshape of its operand (the same entries at the same row-major positions), of the operand's shape none.

    >>> import numpy as np
    >>> from compiler.interop import to_tensor
    >>> from compiler.array.nodes import Leaf
    >>> a = Leaf(to_tensor(np.ones((2, 6)), "A"))
    >>> reshaped(reshaped(a, (3, 4)), (2, 6)) is a, reshaped(reshaped(a, (3, 4)), (12,)).args[0] is a
    (True, True)
    """
    if isinstance(x, ShapeOp) and x.kind == "reshape":
        x = x.args[0]
    return x if x.shape == shape else ShapeOp("reshape", (x,), (shape,), shape)


def reshapes_pushed(node: Node) -> Node | None:
    """``node`` with each reshape that is :func:`pushable` moved onto its operator's operands (and on, while the
    operands are such operators too), a node shared in ``node`` shared in the result; None where no reshape is."""
    def rule(n: Node, visit) -> Node | None:
        if not pushable(n):
            return None
        inner, shape = n.args[0], n.shape
        # (the reshape of each operand of the operator's shape: a ShapeOp as build.reshape makes it)
        return Map(inner.op, tuple(x if x.ndim == 0 else visit(reshaped(x, shape)) for x in inner.args))

    return rewritten(node, rule)


__all__ = ["pushable", "reshaped", "reshapes_pushed"]
