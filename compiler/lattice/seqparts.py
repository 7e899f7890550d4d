"""The parts of a concatenation in the sequence lowering (issue 30): parts of other fills than the
result's, and parts holding a constant or a broadcast.

The result of ``concat((A[k, j], A1[l, j]), (k, l) -> i)`` has its first operand's fill, as
:func:`compiler.reference.evaluate`'s. A part whose fill differs from it is not at the result's fill
where it stores nothing (:func:`other_fills`), so its part walks every coordinate (:func:`with_fill`: a
universe beside its levels, ``l_A1 ∪ U_l``) and writes its fill there: into a dense output (initialized to
the result's fill) over the rest of that part, into a sparse one as explicit entries (as the looplets'
kernels store them).

A universe along another index that one part holds (that fill's, a constant's in ``B[l, j] + 1``, a
broadcast's) is tied to that part (:func:`tie`): the lattice drops it where the loops are at another
part (the rewrite ``universe-of-another-part``, :meth:`~compiler.lattice.sequences.Universe.away`), and
the CFIR takes a concatenation's side by which part's leaves the loops are at (the leaf keys a
:class:`~compiler.lattice.seqcfirvalues.Cat` holds, :func:`part_keys`), not by which reads are live.

>>> from compiler.lattice.sequences import Level
>>> jA, lA1 = Level("A1", 1, "compressed", 4, "j"), Level("A1", 0, "compressed", 2, "l")
>>> print(with_fill(lA1, "l"), with_fill(Level("A1", 0, "dense", 2, "l"), "l"))
l_A1 ∪ U_l l_A1
>>> print(tie(Union(jA, Universe(4, "j")), lA1, [Level("A", 0, "dense", 3, "k"), lA1]))
j_A1 ∪ U_j#l_A1
"""

from __future__ import annotations

from dataclasses import replace

from ..notation.ast import accesses
from ..notation.ast import walk as walk_notation
from ..notation.shape import Collapse, Split
from ..notation.shape import Concat as ConcatOp
from ..values import same_value
from .seqvalues import expr_fill
from .sequences import Concat, Level, Project, Seq, Slice, Union, Universe, rebuild, side_key, walk


def covers(s: Seq) -> bool:
    """Whether ``s`` holds every coordinate of its extent wherever the loops are: a universe (not one
    tied to a part of a concatenation, not there at the other parts), a dense level without a parent
    (one below another is there only under its parent's coordinates), a union with such an operand,
    a concatenation or slice of such sequences.

    >>> u = Universe(3, "i", "l_B", ((frozenset([("B", 0)]), frozenset([("A", 0), ("B", 0)])),))
    >>> covers(Union(Level("a", 0, "compressed", 3), Universe(3))), covers(Union(Level("a", 0, "dense", 3), u))
    (True, True)
    >>> covers(u), covers(Level("A", 1, "dense", 3, "j"))
    (False, False)
    """
    if isinstance(s, Union):
        return covers(s.a) or covers(s.b)
    if isinstance(s, Concat):
        return covers(s.a) and covers(s.b)
    if isinstance(s, Slice):
        return covers(s.a)
    return isinstance(s, Universe) and not s.ties or isinstance(s, Level) and s.dense and not s.mode


def with_fill(s: Seq, index: str) -> Seq:
    """``s``, the sequence of a part along ``index``, walking every coordinate: with ``U_index``
    beside it unless it already holds each one (a part whose fill is not the result's writes it there)."""
    return s if covers(s) else Union(s, Universe(s.size(), index))


def part_keys(s: Seq) -> frozenset:
    """The leaf keys of ``s``, a part's sequence along its concatenated index: where one is live,
    the loops are at that part."""
    return frozenset(side_key(leaf.key) for leaf in s.iters())


def _marks(s: Seq) -> frozenset:
    # (the groups of its π0s too: a loop over a π0 is at that part with no leaf of it live, π0(n_A, 4) ⊔
    # π0(r_B, 4) walking A's groups, where a universe tied to B's part is not)
    return part_keys(s) | {n.group_key for n in walk(s) if isinstance(n, Project) and n.k == 0}


def label(s: Seq) -> str:
    """How a universe tied to the part of sequence ``s`` is told apart in print: its first level, or else
    the part's index (``U_i#k`` reads "every i, in the part along k"; its key's text was ``U_i#U_k``).

    >>> label(Union(Level("A", 0, "compressed", 3, "k"), Universe(3, "k"))), label(Universe(1, "k"))
    ('k_A', 'k')
    """
    leaves = [x for x in walk(s) if isinstance(x, Level)] or [x for x in walk(s) if isinstance(x, Universe)]
    if leaves and isinstance(leaves[0], Universe):
        return leaves[0].index
    return str(leaves[0] if leaves else s).replace(" ", "")


def tie(s: Seq, part: Seq, parts: list) -> Seq:
    """``s`` (a part's sequence along another index than the concatenated one) with each universe
    tied to that part: ``part`` is its sequence along the concatenated index, ``parts`` all parts'."""
    if isinstance(s, Universe):
        mark = (_marks(part), frozenset().union(*map(_marks, parts)))
        name = label(part)
        return replace(s, owner=f"{s.owner}.{name}" if s.owner else name, ties=s.ties + (mark,))
    kids = s.children()
    return rebuild(s, tuple(tie(c, part, parts) for c in kids)) if kids else s


def other_fills(e: ConcatOp, fills: dict, extents: dict | None = None) -> list:
    """``(operand, fill, result's fill)`` of each part of the concatenation ``e`` whose value where it stores
    nothing is not the result's, its first non-empty operand's (``fills``: each tensor's): the fill the loops skip, which
    a sum around folds in (:func:`~compiler.lattice.seqvalues.expr_fill`), or else the value itself, which the
    output holds (``exact``). ``A[j] + 0.5`` of an ``A`` of fill 0 skips nothing (its ``U_j``), fill 0, yet is
    0.5 where ``A`` stores nothing: a part ``B[j]`` of fill 0 after it would leave the output's 0.5 where it skips.

    >>> from compiler.notation import parse_expr
    >>> e = parse_expr("concat((broadcast(k:1, A[j] + 0.5), broadcast(l:1, B[j])), (k, l) -> i)")
    >>> [(str(x), g, f) for x, g, f in other_fills(e, {"A": 0.0, "B": 0.0})]
    [('broadcast(l:1, B[j])', 0.0, 0.5)]
    >>> [(g, f) for _, g, f in other_fills(e, {"A": 0.0, "B": 0.5})], other_fills(e, {"A": 0.5, "B": 1.0})
    ([(0.5, 0.0)], [])
    """
    out = []
    first = e.fill_operand(extents)
    for x in e.operands:
        if x is first:
            continue
        for exact in (False, True):
            f, g = expr_fill(first, fills, extents, exact), expr_fill(x, fills, extents, exact)
            if not same_value(g, f):
                out.append((x, g, f))
                break
    return out


def walked_whole(program, fills: dict, extents: dict | None = None) -> list:
    """The tensors read by a part of a concatenation whose fill is not the result's under a collapse or a
    split (``fills``: each tensor's). Such a part walks every coordinate of its own (:func:`with_fill`),
    and under a collapse its other indices' ``j_A1 ∪ U_j`` lands in a product's right operand. Where that
    product is the loop's (a vstack's ravel), alone or merged with another operand (``* x[m]``), the loops
    nest and walk the part as stored (:func:`~compiler.lattice.seqproductnest.over_parts`); under a split of
    it (a reshape), the lattice does not take it: read densely, the part's levels hold every coordinate with
    no union, for the same walk (the loops visit each coordinate of that part anyway).

    >>> from compiler.notation import parse
    >>> p = parse("c[m] = collapse(concat((A[k, j], A1[l, j]), (k, l) -> i), (i, j) -> m)")
    >>> walked_whole(p, {"A": 0.0, "A1": 1.0}), walked_whole(p, {"A": 0.0, "A1": 0.0})
    (['A1'], [])
    """
    out: list = []
    for n in walk_notation(program.rhs):
        if not isinstance(n, (Collapse, Split)):
            continue
        for c in walk_notation(n.operand):
            if isinstance(c, ConcatOp):
                out += [a.tensor for x, *_ in other_fills(c, fills, extents) for a in accesses(x)]
    return list(dict.fromkeys(out))


__all__ = ["covers", "with_fill", "other_fills", "part_keys", "label", "tie", "walked_whole"]
