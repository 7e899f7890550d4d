"""Repeated reads of one access in a shape-operator statement, each through its own iterators.

The sequence lowering keys an access's levels by the access: ``a[i] + a[i] * b[i]`` under a
concatenation read ``a`` twice through one cursor, and the intersection ``i_a ∩ i_b`` moved that
cursor to b's next coordinate past entries the union's ``i_a`` had still to visit (the kernel
lost them). A read after the first is a :class:`RepeatedRead`, which the lowering walks under a
primed name (``a'``) with cursors of its own, as it reads two slices of one tensor; only where an
intersection could move the cursor apart from the access's other reads (:func:`separate_reads`), so a row
read several times at a constant coordinate is walked once.
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


def separate_reads(e, intersects=lambda call: True, located=frozenset()):
    """``e`` with each access read again after its first read (in pre-order) a :class:`RepeatedRead`,
    where some read of it is an operand (at any depth) of a call that ``intersects`` says walks an
    intersection (a product), unless each such call holds only reads of it and constants, or every read
    of it, all under the same shape operators: its one cursor is then moved by no other access's
    coordinate apart from its other reads (``a[i] + a[i] * b[i]``: the intersection would move it past
    entries the union's ``a[i]`` still has to visit). Reads under unions only share their cursors
    (``x - y - y``, whose union flattens to one walk of each operand, stays one). A row read at a
    constant coordinate, ``(sign(a) * a + a)[2]``, is one walk of the row, where each read's own cursor
    multiplied the cases (3,201 lines of C for a CSR of fill NaN; 152 now). An access at constant coordinates
    alone (``b[2]``, found before the loops) moves no cursor: it is never separated, nor does a product with it
    separate another's reads. Reads under different shape operators share a cursor where none of those binds
    an index of the access (``linalg.cross(A, b)`` read each column of A in two parts of a stack, and walked six
    copies of A's rows, a lattice of 63 points and 47,345 lines of C; three, 7 points and 2,095 now). Nor is a
    read of a tensor of ``located``, a column located in its row at each coordinate (compiler.lattice.seqlocated),
    which has no cursor.

    >>> from compiler.notation import parse
    >>> e = separate_reads(parse("y[l] = concat((a[i] + a[i] * b[i], c[j]), (i, j) -> l)").rhs,
    ...                    lambda call: call.op.name == "mul")
    >>> [type(n).__name__ for n in e.operands[0].args]
    ['Access', 'Call']
    >>> type(e.operands[0].args[1].args[0]).__name__
    'RepeatedRead'
    >>> e = parse("y[i] = slice(a[j] - b[j] - b[j], j -> i, (0, 4, 1))").rhs
    >>> separate_reads(e, lambda call: False) is e
    True
    >>> e = parse("y[j] = A[2, j] * A[2, j] + A[2, j] + b[j]").rhs
    >>> separate_reads(e, lambda call: call.op.name == "mul") is e
    True

    A product with an access at constants (found before the loops) moves no cursor, and reads under different
    shape operators share theirs where none binds an index of the access (the cross product's columns):

    >>> cross = "out[i, j] = concat((broadcast(k:1, A[i, 1] * {}), broadcast(l:1, A[i, 1] * b[0])), (k, l) -> j)"
    >>> e = parse(cross.format("b[2]")).rhs
    >>> separate_reads(e, lambda call: call.op.name == "mul") is e
    True
    >>> type(separate_reads(parse(cross.format("c[i]")).rhs, lambda call: True).operands[1].operand.args[0]).__name__
    'RepeatedRead'
    """
    reads: dict = {}      # (each access: the shape operators around each of its reads, with what each binds)
    under: list = []      # (per intersecting call, the reads below it, each with its shape operators)

    def survey(x, around: tuple, calls: tuple):
        if isinstance(x, Access):
            reads.setdefault(x, []).append(around)
            for c in calls:
                under[c].append((x, around))
        elif isinstance(x, Call):
            if intersects(x):
                under.append([])
                calls = calls + (len(under) - 1,)
            for a in x.args:
                survey(a, around, calls)
        elif isinstance(x, Reduce):
            survey(x.body, around, calls)
        elif isinstance(x, ShapeOp):
            for k, c in enumerate(x.children()):
                survey(c, around + ((id(x), k, frozenset(x.consumed(k))),), calls)

    def binds(x) -> set:
        """The indices the shape operators around the reads of ``x`` bind."""
        return {i for around in reads[x] for _, _, consumed in around for i in consumed}

    survey(e, (), ())
    crossed = {x for keys in under for x, _ in keys}
    # (the one cursor of reads under one set of shape operators is moved by no other access's coordinate;
    # nor of reads under different ones, none binding an index of the access: the cross product's
    # A[i, 1] in two parts of a stack, each part's cursor of row i found at its column 1)
    def walks(y) -> bool:
        return bool(y.loop_indices) and y.tensor not in located

    alone = {x for x in crossed if not walks(x) or (
             (len(set(reads[x])) == 1 or not set(x.loop_indices) & binds(x)) and
             all(all(y == x or not walks(y) for y, _ in keys) or sum(y == x for y, _ in keys) == len(reads[x])
                 for keys in under if any(y == x for y, _ in keys)))}
    separate = {x for x in crossed - alone if len(reads[x]) > 1}
    seen: dict = {}

    def renamed(x):
        if x not in separate:
            return x
        k = seen.get(x, 0)
        seen[x] = k + 1
        return x if k == 0 else RepeatedRead(x.tensor, x.indices, k)

    return map_accesses(e, renamed) if separate else e


def map_accesses(e, f, shape_op=None):
    """``e`` with each tensor access ``x`` replaced by ``f(x)``, left to right, through operator calls,
    reductions and shape operators (each replaced by ``shape_op(x)`` instead where that is not None).

    >>> from compiler.notation import parse
    >>> e = parse("y[i] = a[i] + sum[j](b[i, j])").rhs
    >>> str(map_accesses(e, lambda x: Access("t", x.indices) if x.tensor == "b" else x))
    'a[i] + sum[j](t[i, j])'
    """
    def visit(x):
        if isinstance(x, Access):
            return f(x)
        if isinstance(x, Call):
            return replace(x, args=tuple(visit(a) for a in x.args))
        if isinstance(x, Reduce):
            return replace(x, body=visit(x.body))
        if isinstance(x, ShapeOp):
            new = None if shape_op is None else shape_op(x)
            return new if new is not None else x.with_children([visit(c) for c in x.children()])
        return x

    return visit(e)


__all__ = ["RepeatedRead", "map_accesses", "separate_reads"]
