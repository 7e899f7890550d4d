"""The gaps of a walk over stored positions, folded in once by a count: ``y[i] max= A[i, j]``.

A lone stepper that walks stored positions (the lowerer's ``lower_positions``) skips the gaps between
its entries when the body does nothing at a gap. A row maximum over a matrix stored around 0 does
something there, ``y[i] max= 0``, and Finch.jl's looplets then walk every gap: each entry's
coordinate read to learn whether a gap precedes it (a Spike's body over ``[j, jA)``, the
loop-invariant rule applying the update once where that range is not empty).

When every update of the gap is the same at every gap coordinate and its operator is idempotent,
commutative and associative (``min``, ``max``, ``or``, ``and``, ``&``, ``|``), the gaps together
make that update once where there is any gap, in any order among the entries' updates of the same
operator. A stepper with positions stores one distinct coordinate per position, so the extent
``[start, stop)`` holds a gap exactly where it has more coordinates than the walk has positions:
``(stop - start) - (q_end - q) > 0``. The walk then reads no coordinate per entry, as TACO's
lattice folds a reduction's fill in by a count.

:func:`gap_once` decides; ``lower_positions`` counts and emits.

>>> from compiler.algebra import lookup
>>> from compiler.looplets.program import Access, Assign, Literal, TensorRef, Index
>>> y = Access(TensorRef("y"), (Index("i"),), "update")
>>> gap = Assign(y, lookup("max"), Literal(0.0))
>>> body = Assign(y, lookup("max"), Access(TensorRef("A"), (Index("i"), Index("j"))))
>>> gap_once(gap, gap, body, Index("j")) is not None
True
>>> gap_once(Assign(y, lookup("+"), Literal(1.0)), Assign(y, lookup("+"), Literal(1.0)), body, Index("j"))

A sum's gaps add their fill once times their count, ``y[i] += 3.0 * n`` where ``n`` is the row's coordinates
less its entries, as :func:`compiler.looplets.simplify.integrate` folds a loop-invariant sum:

>>> plus = Assign(y, lookup("+"), Access(TensorRef("A"), (Index("i"), Index("j"))))
>>> gap_once(Assign(y, lookup("+"), Literal(3.0)), Assign(y, lookup("+"), Literal(3.0)), plus, Index("j")) is not None
True
"""

from __future__ import annotations

from .looplets import Looplet
from .program import Access, Assign, Block, Extent, Literal, Loop, uses, walk


def updates_of(stmt) -> tuple:
    """The statements of ``stmt`` (a block's, or itself)."""
    return stmt.stmts if isinstance(stmt, Block) else (stmt,)


def folds_once(a) -> bool:
    """Whether ``a`` is ``target <<op>>= literal`` by an idempotent, commutative, associative operator: made
    once, it is made as often as asked, in any order among the same operator's updates."""
    op = getattr(a, "op", None)
    return (isinstance(a, Assign) and op is not None and op.idempotent and op.commutative and op.associative
            and isinstance(a.rhs, Literal))


def adds_by_count(a) -> bool:
    """Whether ``a`` is ``target += literal`` (the built-in sum): made n times, it adds n times the literal
    (:func:`compiler.looplets.simplify.integrate`), in any order among the other additions.

    >>> from compiler.algebra import lookup
    >>> from compiler.looplets.program import Access, Assign, Literal, TensorRef
    >>> adds_by_count(Assign(Access(TensorRef("s"), (), "update"), lookup("+"), Literal(5.0)))
    True
    """
    op = getattr(a, "op", None)
    return isinstance(a, Assign) and op is not None and not op.is_user and op.name == "add" and \
        isinstance(a.rhs, Literal)


def added_per_gap(update, index, start, stop):
    """The sums of ``update`` (each :func:`adds_by_count`), each made once per coordinate of ``[start, stop)``
    (IR): a loop over them on ``index``, which :func:`compiler.looplets.simplify.integrate` multiplies out,
    guarding a fill that may not be finite.

    >>> from compiler.algebra import lookup
    >>> from compiler.imperative.ir import Var
    >>> from compiler.looplets.program import Access, Assign, Index, Literal, TensorRef
    >>> s = Access(TensorRef("s"), (), "update")
    >>> print(added_per_gap(Assign(s, lookup("+"), Literal(5.0)), Index("g"), 0, Var("missing")))
    for g = 0:missing
      s[] += 5.0
    """
    return Block(tuple(Loop(index, Extent(start, stop), a) for a in updates_of(update)))


def gap_once(gap, gap_again, body, index):
    """The update ``body`` makes at every gap of the walk, to be made once where there is a gap (or, for
    a sum, once times the number of gaps), or None.

    ``gap`` and ``gap_again`` are ``body`` simplified at a gap, its other looplets read at two
    different coordinates: equal where nothing of it depends on which gap. It folds once when each of
    its updates is ``target <<op>>= literal`` by an idempotent, commutative, associative operator (or
    each is ``target += literal``: :func:`adds_by_count`), its target not on the walk's ``index`` nor
    a looplet's, and ``body`` updates that target by the same operator only and never reads it (the
    gap's update may then come after the entries')."""
    if gap != gap_again:
        return None
    updates = updates_of(gap)
    if not updates or not (all(folds_once(a) for a in updates) or all(adds_by_count(a) for a in updates)) \
            or any(uses(a, index) for a in updates):
        return None
    if any(isinstance(n, Access) and isinstance(n.tns, Looplet) for a in updates for n in walk(a)):
        return None
    tensors = [a.lhs.tns for a in updates]
    for n in walk(body):
        if isinstance(n, Assign) and any(n.lhs.tns == t for t in tensors):
            if not any(n.lhs == a.lhs and n.op == a.op for a in updates):
                return None
        elif isinstance(n, Access) and n.mode == "read" and any(n.tns == t for t in tensors):
            return None
    return gap


__all__ = ["added_per_gap", "adds_by_count", "folds_once", "gap_once", "updates_of"]
