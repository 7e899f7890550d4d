"""Repeated reads of one access in a shape-operator statement, each through its own iterators.

The sequence lowering keys an access's levels by the access: ``a[i] + a[i] * b[i]`` under a
concatenation read ``a`` twice through one cursor, and the intersection ``i_a ∩ i_b`` moved that
cursor to b's next coordinate past entries the union's ``i_a`` had still to visit (the kernel
lost them). A read after the first is a :class:`RepeatedRead`, which the lowering walks under a
primed name (``a'``) with cursors of its own, as it reads two slices of one tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import serialize
from ..notation.ast import Access, Call, Reduce
from ..notation.shape import ShapeOp


@serialize.node
@dataclass(frozen=True)
class RepeatedRead(Access):
    """The ``copy``-th read (from 1) of an access read before in the statement: printed as the access,
    unequal to it.

    >>> a = Access("a", ("i",))
    >>> str(RepeatedRead("a", ("i",), 1)), RepeatedRead("a", ("i",), 1) == a
    ('a[i]', False)
    """

    copy: int = 1


def separate_reads(e):
    """``e`` with each access read again after its first read (in pre-order) a :class:`RepeatedRead`.

    >>> from compiler.notation import parse
    >>> e = separate_reads(parse("y[l] = concat((a[i] + a[i] * b[i], c[j]), (i, j) -> l)").rhs)
    >>> [type(n).__name__ for n in e.operands[0].args]
    ['Access', 'Call']
    >>> type(e.operands[0].args[1].args[0]).__name__
    'RepeatedRead'
    """
    seen: dict = {}

    def visit(x):
        if isinstance(x, Access):
            k = seen.get(x, 0)
            seen[x] = k + 1
            return x if k == 0 else RepeatedRead(x.tensor, x.indices, k)
        if isinstance(x, Call):
            return replace(x, args=tuple(visit(a) for a in x.args))
        if isinstance(x, Reduce):
            return replace(x, body=visit(x.body))
        if isinstance(x, ShapeOp):
            return x.with_children([visit(c) for c in x.children()])
        return x

    return visit(e)


__all__ = ["RepeatedRead", "separate_reads"]
