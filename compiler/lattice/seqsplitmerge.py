"""The code of a merged loop over a split of a union (:meth:`compiler.lattice.seqcfir.Compiler.merged_split`): a
reshape of an hstack of three or more parts, whose operands (the parts' row walks) a π0 loop walks by groups and a
π1 loop inside walks within each (a split into more axes: a π0 of that π1 between them), each until all ran out,
not lattices of ``2^n - 1`` points nested.

Each loop is at the least coordinate, in its own terms, of the operands left in the groups of the loops around:
each operand's coordinate through the loop's projections (:func:`~compiler.lattice.seqmerge.chained`:
``π0(π1(k_A × (n_A + 6), 12 @ U), 2)``, its row walk's coordinate less the outer group's start, divided by 2). A
π0 loop sets its group for the loops inside; a π1 loop's case for each part tests its own operand there, and the
fibers below an operand not there are empty. After a π0 loop's body, an operand still in the group (where no merged
loop inside walked them all through it) is stepped past it.
"""

from __future__ import annotations

from ..imperative import ir
from ..imperative.ir import If, Var, not_, or_
from .seqmerge import chained, operand_leaves, union_operands, walks_group
from .seqrewind import save_stmts
from .seqstmts import While, while_tag
from .sequences import Level, Seq


def split_loop(em, w: While, union: Seq) -> list:
    """The code of the merged loop ``w`` over a π0 or π1 of ``union`` (or of π1s of it): at the least coordinate,
    in the loop's own terms, of the operands left (in the groups of the loops around), until none is left;
    ``em``: the :class:`~compiler.lattice.seqemit.SeqEmitter` emitting it."""
    p, x = w.seq, Var(w.index)
    ops = union_operands(union)
    # (each operand's coordinate in this loop's terms, valid where it is in the groups of the loops around)
    at = [chained(p, op) for op in ops]

    def body():
        inner = em.least_of([(em.valid(q), em.eval(q)) for q in at], x, p.size())
        if p.k == 0:
            inner += [ir.Assign(em.group(p), x)] + save_stmts(em, p)
        else:
            # (an operand not at x: the fibers below it are empty)
            em.maybe_absent = {**em.maybe_absent, **{leaf.key: not_(em.equals(q, x))
                                                     for op, q in zip(ops, at) for leaf in operand_leaves(op)}}
        inner += em.body_of(w.index, w.body)
        if p.k == 1:
            return inner + [If(em.equals(q, x), em.next(op, {})) for op, q in zip(ops, at)]
        # (what the loops inside left in the group, if they do not walk it all)
        if walks_group(w.body, ops, p.group_key):
            return inner
        return inner + [ir.While(em.equals(q, x), em.next(op, {})) for op, q in zip(ops, at)]

    loop = [ir.While(or_(*map(em.valid, at)), em.scoped(body))]
    operands = tuple(sorted({em.names[leaf.tensor] for leaf in w.seq.iters() if isinstance(leaf, Level)}))
    return [ir.Tagged(while_tag(w), loop, f"while {w.index} <- {w.seq}", ir.Origin("lattice", w.index, operands))]
