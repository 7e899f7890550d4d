"""A split's major index walked inside the loop over its minor one (issue 30), in C: the
:class:`~compiler.lattice.sequences.Stride` ``l_a[k::J]``.

``C[i, k] = split(a[l], l -> (i, k))`` into a CSC output loops ``k`` outside ``i``. π1 walks the group
its π0 opened, sharing its cursor, so it cannot run first; instead the loop over ``k`` walks every
coordinate (``U_k``) and the one over ``i`` inside it walks the coordinates of ``a`` in the residue
class of ``k`` modulo ``J``, ``x // J`` of each: each group searched for ``k``'s coordinate. A
Dense level (or a universe) is a counter that starts at ``k`` and steps by ``J``; a sparse level
restarts at its fiber's start for each ``k`` and gallops from an entry in the wrong class to the
first coordinate of the right one at or after it, ``x + (k - x % J) % J`` (its own group's, or the
next group's): ``O(min(nnz, |i|) log nnz)`` per ``k``. A split collapsed minor index first
(``collapse(split(a[l], l -> (i, k)), (k, i) -> m)``) is the product ``U_k × l_a[k::J]``, whose
right operand reads the residue off the universe on its left.

>>> from compiler.format import parse_format
>>> from compiler.lattice.seqderive import ShapedFormat, seq_lower
>>> from compiler.lattice.seqfunction import emit_function
>>> from compiler.imperative import pretty
>>> v, csc = parse_format("sparse", ndim=1), parse_format("csc", ndim=2)
>>> low = seq_lower("C[i, k] = split(a[l], l -> (i:2, k:3))", loop_order=(1, 0), a=ShapedFormat(v, (6,)))
>>> print(low.cfir.text())
while k <- U_k
  while i <- l_a[k::3]
    C(i, k) = a(l_a)
>>> body = pretty(emit_function(low, {"a": v}, "csc_split", csc).body)
>>> start = body.index("while (pa0 < pa0_end && a0_idx")
>>> print(*(line.strip() for line in body[start:].splitlines()[:4]), sep=chr(10))
while (pa0 < pa0_end && a0_idx[pa0] % 3 != k) {
int64 target = a0_idx[pa0] + (k - a0_idx[pa0] % 3 + 3) % 3;
pa0 = seek(a0_idx, pa0, pa0_end, target);
}
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

from ..imperative import ir
from ..imperative.identities import arith
from ..imperative.ir import Const, Declare, Var, and_
from .seqcfir import Forall, Stmt
from .sequences import Level, Seq, Stride, Union, Universe, walk


def _c(n: int) -> Const:
    return Const(int(n), "int64")


def residue(em, s: Stride) -> ir.Expr:
    """The coordinate ``s``'s residue is: the loop's around (its index), or its universe's (``em``:
    a :class:`~compiler.lattice.seqemit.SeqEmitter`)."""
    return Var(s.index) if s.over is None else em.coord(s.over)


def unstride(em, s: Stride, x) -> ir.Expr:
    """The coordinate of ``s``'s operand at ``s``'s coordinate ``x``: ``x * J + k``."""
    return arith("+", arith("*", x, _c(s.J)), residue(em, s))


def seek(em, a: Seq, s: Stride, absent: dict) -> list:
    """Move ``a`` (``s``'s operand, or an operand of a union in it) to a coordinate in the residue
    class of ``s``, or past its end: a sparse level seeks ``x + (k - x % J) % J`` as its iterator can (a list
    gallops, a band goes straight there), the others step."""
    if isinstance(a, Union):
        return seek(em, a.a, s, absent) + seek(em, a.b, s, absent)
    x, k, J = em.eval(a), residue(em, s), _c(s.J)
    # (where the product's left operand ran out there is no residue to seek)
    off = and_(*([] if s.over is None else [em.valid(s.over)]), arith("%", x, J).ne(k))
    if not (isinstance(a, Level) and em.code(a).kind != "dense" and not em.code(a).reverse
            and em.leaf_seek(a, x) is not None):
        return [ir.While(and_(em.valid(a), off), em.next(a, absent))]
    target = Var(em.fresh("target"))
    # (the loop's condition holds the cursor in its fiber, before the target: the seek needs no guard
    # of its own)
    return [ir.While(and_(em.valid(a), off), [
        Declare(target, "int64", arith("+", x, arith("%", arith("+", arith("-", k, arith("%", x, J)), J), J)))]
        + em.leaf_seek(a, target) + em.segment(em.code(a)))]


def stride_start(em, s: Stride, absent: dict) -> list:
    """After ``s``'s operand is (re)initialized: to its first coordinate in the residue class (a
    counter straight there)."""
    if em.jumps(s):
        return [ir.Assign(em.code(s.a).p, residue(em, s))]
    return seek(em, s.a, s, absent)


def stride_next(em, s: Stride, absent: dict) -> list:
    """Step ``s``: a counter by ``J``, else its operand on to the next coordinate of the class."""
    if em.jumps(s):
        return [ir.CompoundAssign("+", em.code(s.a).p, _c(s.J))]
    return em.next(s.a, absent) + seek(em, s.a, s, absent)


def jumps(s) -> bool:
    """Whether the :class:`~compiler.lattice.sequences.Stride` ``s`` steps a counter straight to each
    coordinate of its class (a Dense level or a universe), searching nothing: a sorted output's two
    passes would not beat it.

    >>> dense, listed = Level("a", 0, "dense", 6, "l"), Level("a", 0, "compressed", 6, "l")
    >>> jumps(Stride(dense, 3, "k")), jumps(Stride(listed, 3, "k"))
    (True, False)
    """
    return isinstance(s.a, Universe) or isinstance(s.a, Level) and s.a.dense


def searched(stmt) -> list:
    """The :class:`~compiler.lattice.sequences.Stride` s the foralls of the CIN ``stmt`` walk: where
    lower() choosing the strategy asks the looplets first (the search is per minor coordinate).

    >>> from compiler.lattice.sequences import Level
    >>> from compiler.lattice.seqcfir import Block
    >>> s = Stride(Level("a", 0, "compressed", 6, "l"), 3, "k")
    >>> [str(x) for x in searched(Forall("i", s, Block(())))]
    ['l_a[k::3]']
    """
    if isinstance(stmt, Forall):
        return [n for n in walk(stmt.seq) if isinstance(n, Stride)] + searched(stmt.body)
    # (any statement holding others: a block, a reduction's loops around the output's)
    inner = [x for f in fields(stmt) for x in (lambda v: v if isinstance(v, tuple) else (v,))(getattr(stmt, f.name))
             if isinstance(x, Stmt)] if is_dataclass(stmt) else []
    return [x for s in inner for x in searched(s)]


__all__ = ["searched", "residue", "unstride", "seek", "stride_start", "stride_next"]
