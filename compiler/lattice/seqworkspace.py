"""A sum under an operator whose loops run around the output's (issue 30): its terms added into a
workspace first, the operator applied in a second loop over it (TACO's precompute, taco.md §2.8).

``c[j] = sum[i](concat((A[k, j], A1[l, j]), (k, l) -> i)) * 2`` of CSR parts reaches their columns
before their rows in the output's order (the sum's loops inside). Where the sum is the whole right
side, its loops run outside the output's (:mod:`compiler.lattice.seqhoist`); under an operator they
cannot: each coordinate's sum would be doubled once per term. So the sum is computed into a dense
workspace ``w`` over its free indices first, in the inputs' order (``forall i: forall j: w(j) +=
...``: the hoist's producer), and the statement then reads ``w`` as a dense input of that fill
(the sum of nothing, 0 for a summand of fill 0; a summand of another fill counted and folded in at
each coordinate, as the hoist does): ``forall j ∈ j_w: c(j) = w(j_w) * 2``, in the output's order,
appended to any output the sequence lowering writes. Where the workspace holds nothing the
consumer computes the operator of the sum's fill (``sum * 2 + 1`` writes 1 there: the result's
fill, not stored in a sparse output). A workspace over both indices of a sparse matrix output is not dense (it
would hold the matrix's every entry) but kept in sparse rows, a CSR (:mod:`compiler.lattice.seqsumrows`); one
over every index of a sparse output of 3 or more modes is kept as a Dense level over SparseLists, its terms sorted
by key (:mod:`compiler.lattice.seqsumsort`), one over some of them so too where it has 3 or more, in sparse rows
where it has two (``sum(A4, axis=0) + sum(B4, axis=(0, 3))[:, :, None]``: ``w[j, m, n]`` and ``w2[j, m]``).

>>> from compiler.notation import parse
>>> p = parse("c[j] = sum[i](A[i, j]) * 2 + b[j]")
>>> consumer, (w,) = split_sums(p, {p.rhs.args[0].args[0].indices[0]: 3, p.lhs.indices[0]: 4})
>>> print(consumer)
c[j] = w[j] * 2 + b[j]
>>> w.name, w.indices, w.shape
('w', ('j',), (4,))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..binding import array_name
from ..format import Format, csr, dense
from ..levels import Dense, Element, SparseList
from ..imperative import ir
from ..imperative.ir import Const, Declare, Var
from ..notation.ast import Access, Assign, Call, Reduce, accesses, free_indices, walk
from ..notation.shape import ShapeOp
from .seqcfir import Block
from .seqhoist import SORTED_BUCKET, AccumulatedOutput, hoisted_body


@dataclass(frozen=True)
class SumWorkspace:
    """A sum's workspace: ``name[indices]`` (the sum's free indices, in the output's order) of
    ``shape``, holding ``total`` (the sum) at each coordinate; ``fill``: the sum's where its loops
    add nothing (its summand's fill times the coordinates summed); ``rows``: kept in sparse rows, a CSR (both
    indices of a sparse matrix output, in its storage order: :mod:`compiler.lattice.seqsumrows`; two of a sparse
    output of 3 or more modes), or a Dense level over SparseLists (3 or more indices of such an output:
    :mod:`compiler.lattice.seqsumsort`), not dense."""

    name: str
    indices: tuple
    shape: tuple
    total: Reduce
    fill: float = 0.0
    rows: bool = False

    def format(self, dtype="float64"):
        """The format the statement reads it in: Dense levels, or a CSR kept in sparse ``rows``.

        >>> from compiler.notation import parse
        >>> total = parse("c[j, m] = sum[i](A[i, j, m])").rhs
        >>> print(SumWorkspace("w", ("j", "m"), (2, 3), total, rows=True).format())
        Dense(SparseList(Element(0.0)))
        >>> print(SumWorkspace("w", ("j", "m", "n"), (2, 3, 4), total, rows=True).format())
        Dense(SparseList(SparseList(Element(0.0))))
        """
        if not self.rows:
            return dense(len(self.shape), fill=self.fill, dtype=dtype)
        if len(self.shape) == 2:
            return csr(fill=self.fill, dtype=dtype)
        # (3 or more modes: its first dense, the others sparse, compiler.lattice.seqsumsort)
        root = Element(self.fill, dtype=dtype)
        for _ in self.shape[1:]:
            root = SparseList(root)
        return Format(Dense(root))

    def producer(self) -> Assign:
        """``name[indices] = total``: the hoisted sum (:func:`~compiler.lattice.seqhoist.hoisted_body`)."""
        return Assign(Access(self.name, self.indices), None, self.total)


def sums_under_operators(program) -> list:
    """The sums of ``program``'s right side under an operator (not the right side itself), outermost
    ones, or ``[]`` where one is not a plain sum (a user reduction, a sum inside another's summand, a
    sum over every index: nothing to keep in a workspace) or the right side is a sum itself.

    >>> from compiler.notation import parse
    >>> [str(s) for s in sums_under_operators(parse("c[j] = sum[i](A[i, j]) * 2"))]
    ['sum[i](A[i, j])']
    >>> sums_under_operators(parse("c[j] = sum[i](A[i, j])")), sums_under_operators(parse("c[j] = A[0, j] * 2"))
    ([], [])
    """
    rhs = program.rhs
    if isinstance(rhs, Reduce):
        return []
    out = []

    def visit(e):
        if isinstance(e, Reduce):
            out.append(e)
        else:
            for c in e.children():
                visit(c)

    visit(rhs)
    for s in out:
        if s.op.is_user or s.op.name != "add" or not free_indices(s) \
                or any(isinstance(n, Reduce) for n in walk(s.body)):
            return []
    return out


def split_sums(program, extents: dict, fills: dict | None = None, rows: tuple | None = None) -> tuple:
    """``(consumer, workspaces)``: ``program`` with each sum of :func:`sums_under_operators` read from
    a workspace instead (``w``, ``w2``, ..., named apart from its tensors), and those workspaces
    (:class:`SumWorkspace`); ``extents``: each index's, ``fills``: each sum's fill (by sum, default 0);
    ``rows``: the mode order of a sparse output, whose sums over two or more of its indices are kept sparse in
    its storage order (:attr:`SumWorkspace.rows`: ``w[m, j]`` for a CSC's), or None (every one dense)."""
    sums = sums_under_operators(program)
    taken = {a.tensor for a in accesses(program.rhs)} | {program.lhs.tensor}
    order = [str(i) for i in program.lhs.indices]
    table, work = {}, []
    for s in sums:
        name, k = "w", 1
        while name in taken:
            k += 1
            name = f"w{k}"
        taken.add(name)
        # (the output's indices in its order; a sum under a shape operator has its own, `k` of
        # slice(sum[l](A[k, l] * B[l, j]), k -> i): after them, as the sum has them)
        own = [str(i) for i in free_indices(s)]
        idxs = tuple(sorted(own, key=lambda x: order.index(x) if x in order else len(order) + own.index(x)))
        # (a sum over some of the output's indices is kept so too where it has two or more: in the output's
        # storage order, its first one the buckets')
        kept = rows is not None and len(idxs) >= 2 and set(idxs) <= set(order)
        if kept:
            idxs = tuple(x for x in (order[m] for m in rows) if x in idxs)
        by_name = {str(i): i for i in free_indices(s)}
        shape = tuple(int(extents[by_name[i]]) for i in idxs)
        work.append(SumWorkspace(name, idxs, shape, s, (fills or {}).get(s, 0.0), kept))
        table[id(s)] = Access(name, tuple(by_name[i] for i in idxs))
    return replace(program, rhs=_replaced(program.rhs, table)), work


def _replaced(e, table: dict):
    """``e`` with each node whose id ``table`` holds replaced by its entry."""
    if id(e) in table:
        return table[id(e)]
    if isinstance(e, Call):
        return replace(e, args=tuple(_replaced(a, table) for a in e.args))
    if isinstance(e, ShapeOp):
        return e.with_children(tuple(_replaced(c, table) for c in e.children()))
    return e


@dataclass(frozen=True)
class Nest:
    """One loop nest of a workspace's CIN: its ``loops`` (``(index, sequence)``, outer first, each inside the one
    before), their ``derivations`` and the accesses it ``reads``."""

    loops: list
    derivations: list
    reads: tuple


def workspace_body(builder, consumer, work: list, hoisted: tuple, order: tuple) -> tuple:
    """``(CIN, nests)``: each workspace's producer, its loops in ``hoisted``'s order (the indices of
    its sum among them), then ``consumer`` (the statement reading the workspaces), its loops in
    ``order`` (its output's modes). ``builder``: the :class:`~compiler.lattice.seqderive.CinBuilder`,
    whose deriver's loop depths follow each nest."""
    d = builder.d
    parts, nests = [], []

    def nest(build, reads, depth):
        at = (len(builder.loops), len(builder.derivations))
        d.depth = depth
        parts.append(build())
        nests.append(Nest(list(reversed(builder.loops[at[0]:])), list(reversed(builder.derivations[at[1]:])),
                          tuple(reads)))

    for w in work:
        mine = tuple(x for x in dict.fromkeys(hoisted) if x in {*w.indices, *map(str, w.total.indices)})
        nest(lambda w=w, mine=mine: hoisted_body(builder, w.producer(), mine), accesses(w.total),
             {x: k for k, x in enumerate(mine)})
    lhs = consumer.lhs
    nest(lambda: builder.nest(consumer, order), accesses(consumer.rhs),
         {str(lhs.indices[m]): k for k, m in enumerate(order)})
    return Block(tuple(parts)), nests


def workspace_note(out: str, work: list, order: tuple, default: tuple, why: str) -> str:
    """What the trace's ``loop-order`` step says of sums under operators computed into workspaces.

    >>> from compiler.notation import parse
    >>> w = SumWorkspace("w", ("j",), (4,), parse("c[j] = sum[i](A[i, j])").rhs)
    >>> print(workspace_note("c", [w], ("i", "j"), ("j", "i"), "A[i, j]: ..."))
    the loops in the output's order, the sum's inside (j, i), walk an input against its storage order (A[i, j]: ...); the sum under an operator is added into a dense workspace first (sum[i](A[i, j]) into w[j] of 4 entries), its loops running i, j, then a loop over c's coordinates applies the operator around it, reading w (TACO's precompute)
    """
    each = "the sum" if len(work) == 1 else "each sum"
    sums = "; ".join(f"{w.total} into {w.name}[{', '.join(w.indices)}] of {math.prod(w.shape)} entries" for w in work
                     if not w.rows)
    rows = "; ".join(f"{w.total} into {w.name}[{', '.join(w.indices)}], bucketed by {w.indices[0]}, each "
                     f"{w.indices[0]}'s terms then added into a row workspace and its sums kept in order (a "
                     f"sparse matrix, compiler.lattice.seqsumrows)" for w in work if w.rows and len(w.indices) == 2)
    fibers = "; ".join(f"{w.total} into {w.name}[{', '.join(w.indices)}], bucketed by {w.indices[0]}, each "
                       f"{w.indices[0]}'s terms then sorted by ({', '.join(w.indices[1:])}) and each run of equal ones "
                       f"summed ({SORTED_BUCKET}), kept as a Dense level over SparseLists "
                       f"(compiler.lattice.seqsumsort)"
                       for w in work if w.rows and len(w.indices) > 2)
    into = " and ".join(x for x in (sums and f"a dense workspace first ({sums})",
                                    rows and f"sparse rows first ({rows})",
                                    fibers and f"sparse fibers first ({fibers})") if x)
    return (f"the loops in the output's order, the sum's inside ({', '.join(default)}), walk an input against its "
            f"storage order ({why}); {each} under an operator is added into {into}, its "
            f"loops running {', '.join(order)}, then a loop over {out}'s coordinates applies the operator around it, "
            f"reading {', '.join(w.name for w in work)} (TACO's precompute)")


class WorkspaceCode(AccumulatedOutput):
    """The code of a :class:`SumWorkspace`: its terms added where they come (:meth:`accumulate`, the
    fill folded in at each coordinate where the summand's is not 0), its array allocated zeroed around
    the kernel's loops, and its levels' extents declared for the consumer's walk of it (a Dense input)."""

    def __init__(self, work: SumWorkspace, fmt, dtype: str, fresh):
        super().__init__(work.name, fmt, work.shape, dtype, fresh)

    def wrap(self, body: list) -> list:
        """``body`` (the loops) inside the workspace's allocation."""
        sizes = [Declare(Var(array_name(self.tensor, m, "size")), "int64", Const(n, "int64"))
                 for m, n in enumerate(self.shape)]
        if self.counts:
            body = [ir.Allocate(self.counts, "int64", Const(self.size, "int64"), Const(0, "int64"), body)]
        return [ir.Allocate(self.val, self.dtype, Const(self.size, "int64"), Const(0, self.dtype), sizes + body)]


__all__ = ["Nest", "SumWorkspace", "WorkspaceCode", "split_sums", "sums_under_operators", "workspace_body",
           "workspace_note"]
