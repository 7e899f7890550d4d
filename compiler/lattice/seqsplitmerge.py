"""The code of a merged loop over a split of a union (:meth:`compiler.lattice.seqcfir.Compiler.merged_split`): a
reshape of an hstack of three or more parts, whose operands (the parts' row walks) a π0 loop walks by groups and a
π1 loop inside walks within each, both until all ran out, not lattices of ``2^n - 1`` points nested.

The π0 loop is at the group of the least coordinate of the operands left: ``least / J``, set as the group the π1
loops inside read. The π1 loop is at the least one's place in that group, ``least - group·J``, while an operand is
in it; each part's case tests its own operand there, and the fibers below an operand not there are empty. After the
π0 loop's body, an operand still in the group (where no merged π1 loop walked them all) is drained.
"""

from __future__ import annotations

from ..imperative import ir
from ..imperative.ir import BinOp, Const, Declare, Var, and_, not_, or_
from .seqmerge import operand_leaves, union_operands, walks_group
from .seqrewind import save_stmts
from .seqstmts import While, while_tag
from .sequences import Level, Project, Seq

I64 = "int64"


def _c(n: int) -> Const:
    return Const(n, I64)


def split_loop(em, w: While, union: Seq) -> list:
    """The code of the merged loop ``w`` over ``π0(union, J)`` (at the group of the least coordinate of the operands
    left, until all ran out) or ``π1(union, J)`` (at the least one's place in the group, while one is in it);
    ``em``: the :class:`~compiler.lattice.seqemit.SeqEmitter` emitting it."""
    p, x = w.seq, Var(w.index)
    ops = union_operands(union)
    group = em.group(p) if p.k == 1 else None

    def left(op):
        # (an operand not run out; in a π1's loop, in the group)
        return em.valid(op) if group is None else and_(em.valid(op), em.in_group(em.eval(op), group, p.J))

    def body():
        at = Var(em.fresh("least"))
        least = em.least(union, at)
        if group is None:
            inner = least + [Declare(x, I64, BinOp("/", at, _c(p.J))), ir.Assign(em.group(p), x)]
            inner += save_stmts(em, p)
        else:
            inner = least + [Declare(x, I64, BinOp("-", at, BinOp("*", group, _c(p.J))))]
            # (an operand not at x: the fibers below it are empty)
            in_group = p.group if p.group is not None else union
            em.maybe_absent = {**em.maybe_absent, **{leaf.key: not_(em.equals(Project(1, op, p.J, in_group), x))
                                                         for op in ops for leaf in operand_leaves(op)}}
        inner += em.body_of(w.index, w.body)
        if group is not None:
            return inner + em.advance(union, BinOp("+", BinOp("*", group, _c(p.J)), x), {})
        # (what the π1 loops inside left in the group, if they do not walk it all)
        return inner + ([] if walks_group(w.body, ops, p.group_key) else
                        em.drain(union, lambda e: em.in_group(e, x, p.J), {}))

    loop = [ir.While(or_(*map(left, ops)), em.scoped(body))]
    operands = tuple(sorted({em.names[leaf.tensor] for leaf in w.seq.iters() if isinstance(leaf, Level)}))
    return [ir.Tagged(while_tag(w), loop, f"while {w.index} <- {w.seq}", ir.Origin("lattice", w.index, operands))]
