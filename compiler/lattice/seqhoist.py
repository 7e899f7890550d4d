"""A sum whose loops run around the output's (issue 30): the sequence lowering's loops in the
inputs' storage order where the output's order walks one against it.

BURRITO's CIN nests a sum's loops inside the output's (``forall j: t = 0; forall i: t += A(i, j);
y(j) = t``), so the column sums ``y[j] = sum[i](A[i, j])`` of a CSR ``A`` reach its columns before
its rows. Where the output takes its entries at random, the sum's loops may run outside instead,
as TACO does for ``y(j) = A(i, j)`` with ``y`` dense: ``forall i: forall j: y(j) += A(i, j)``. A
dense output is that accumulator itself; a sparse vector's is a dense workspace of its extent,
whose entries other than the fill are appended after the loops (the lattice strategy's dense
workspace, :mod:`compiler.lattice.emit_workspaces`); a sparse matrix's terms are bucketed by row
and each row summed in a row workspace (:mod:`compiler.lattice.seqsumscatter`); those of a sparse
output of 3 or more modes are bucketed by its first mode, each bucket sorted by the other
coordinates (:mod:`compiler.lattice.seqsumsort`). A summand of
another fill than 0 counts the coordinates summed at each output coordinate and folds the fill in
for the rest after the loops
(:class:`~compiler.lattice.seqcfir.Fold` over every coordinate). The driver
(:func:`compiler.lattice.seqlower.reordered`) takes it where no input could be read converted
instead: an input stored in its natural order (a CSR's column sums), a split's minor index.

>>> import numpy as np
>>> from compiler.tensor import Tensor
>>> from compiler.lattice.seqderive import seq_lower
>>> A = Tensor.from_numpy(np.array([[0, 1.0, 0], [2.0, 0, 3.0]]), "csr")
>>> print(seq_lower("y[j] = sum[i](A[i, j])", hoisted=("i", "j"), A=A).cin)
forall i ∈ i_A
  forall j ∈ j_A
    y(j) += A(i_A, j_A)
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import StrategyError
from ..imperative import ir
from ..imperative.ir import BinOp, Cast, Const, Declare, For, Grow, If, Load, Store, Var
from ..imperative.sorting import COUNTED_SPAN
from ..notation.ast import Reduce as SumNode
from . import seqcfir as cin
from .exprs import apply_op, fold_power
from .seqoutput import SeqOutput
from .seqvalues import expr_fill, fill_fold, in_order

#: how a sorted sum's bucket is sorted (compiler.lattice.seqsumsort), as the trace says it
SORTED_BUCKET = f"each bucket counted where its keys' span is at most {COUNTED_SPAN} times its terms, else merged"


def hoistable(program) -> tuple:
    """The indices of the sum ``program`` assigns (its right side a sum: ``sum[i](...)``), which
    may run around the output's loops; ``()`` for any other statement.

    >>> from compiler.notation import parse
    >>> hoistable(parse("y[j] = sum[i](A[i, j])")), hoistable(parse("y[j] = sum[i](A[i, j]) * 2"))
    (('i',), ())
    """
    rhs = program.rhs
    if isinstance(rhs, SumNode) and not rhs.op.is_user and rhs.op.name == "add":
        return tuple(str(i) for i in rhs.indices)
    return ()


def hoistable_into_vector(program, dense_output: bool = False, bucketed_output: bool = False) -> tuple:
    """The indices of ``program``'s max, min, prod, any or all (its right side) where its output is a vector, a
    scalar, (``dense_output``) dense or (``bucketed_output``) a sparse matrix whose terms are bucketed by row
    (:class:`~compiler.lattice.seqsumscatter.BucketedSums`): its loops may run around the output's, each term
    reduced into a dense accumulator (:class:`AccumulatedOutput`) or a row workspace; ``()`` for any other
    statement (a sum: :func:`hoistable`).

    >>> from compiler.notation import parse
    >>> hoistable_into_vector(parse("y[j] = max[i](A[i, j])")), hoistable_into_vector(parse("y[j, k] = max[i](A[i, j, k])"))
    (('i',), ())
    >>> hoistable_into_vector(parse("y[j, k] = max[i](A[i, j, k])"), dense_output=True)
    ('i',)
    """
    rhs = program.rhs
    if isinstance(rhs, SumNode) and not rhs.op.is_user and rhs.op.name in ("max", "min", "mul", "or", "and") and \
            (len(program.lhs.indices) <= 1 or dense_output or bucketed_output):
        return tuple(str(i) for i in rhs.indices)
    return ()


def unhoisted(program) -> str:
    """Why the loops of ``program``'s reduction (its right side) do not run around the output's, as a sum's
    may (:func:`hoistable`) and a max's into a vector (:func:`hoistable_into_vector`): ``""`` where they may or
    there is no reduction.

    >>> from compiler.notation import parse
    >>> print(unhoisted(parse("y[j, m] = max[l](concat((A[i, j, m], B[k, j, m]), (i, k) -> l))")))
    ; the loops of a sum run around the output's, each term accumulated into it (compiler.lattice.seqhoist), but those of max only into a vector, a scalar, a dense output, a CSR, CSC or COO matrix (its terms bucketed by row) or a DCSR or a sparse output of 3 or more modes (its terms sorted by key), not a sparse y of 2 modes of another format
    >>> unhoisted(parse("y[j] = max[i](A[i, j])")), unhoisted(parse("y[j] = sum[i](A[i, j])")), unhoisted(parse("y[j] = A[0, j]"))
    ('', '', '')
    """
    rhs = program.rhs
    if not isinstance(rhs, SumNode) or hoistable(program) or hoistable_into_vector(program):
        return ""
    return (f"; the loops of a sum run around the output's, each term accumulated into it (compiler.lattice.seqhoist), "
            f"but those of {rhs.op.name} only into a vector, a scalar, a dense output, a CSR, CSC or COO matrix "
            f"(its terms bucketed by row) or a DCSR or a sparse output of 3 or more modes (its terms sorted by key), "
            f"not a sparse {program.lhs.tensor} of {len(program.lhs.indices)} modes of another format")


def hoisted_body(builder, program, order: tuple) -> cin.Stmt:
    """The CIN of ``program`` (a sum, :func:`hoistable`) with its loops in ``order`` (index names,
    the sum's among the output's), each coordinate's sum accumulated into the output: ``forall
    i: forall j: y(j) += A(i, j)``. ``builder``: the :class:`~compiler.lattice.seqderive.CinBuilder`."""
    rhs, lhs = program.rhs, program.lhs
    d = builder.d
    pre, v = builder.value(rhs.body)
    out, idxs = lhs.tensor, tuple(str(i) for i in lhs.indices)
    # (a max, min or prod into a vector: each term reduced into it, the fill folded in once where a coordinate's
    # loops skipped any, as into a scalar: compiler.lattice.seqderive.other_reduction)
    op = None if not rhs.op.is_user and rhs.op.name == "add" else rhs.op     # (a sum over no index too)
    # (as into a scalar: an integer product of another fill, 2 or -3, to the power of the coordinates skipped)
    fill = expr_fill(rhs.body, d.fills, d.extents)
    counted, power, folded = fill_fold(op, fill, rhs)
    # (a 0-d output: the sum into a scalar temporary, its loops reordered, then assigned)
    into = out if idxs else "t"
    count = f"n_{into}" if counted else ""
    # (a floating-point product of another fill than 1, or a complex one: every coordinate of every loop, each term
    # multiplied in numpy's order, compiler.lattice.seqvalues.in_order)
    ordered = in_order(op, fill)
    stmts = pre + [cin.Reduce(into, idxs, v, count, op, ordered)]
    body: cin.Stmt = stmts[0] if len(stmts) == 1 else cin.Block(tuple(stmts))
    index = {str(i): i for i in (*lhs.indices, *rhs.indices)}
    for name in reversed(order):
        body = builder.forall(index[name], rhs.body, body, ordered)
    summed = math.prod(d.size(i) for i in rhs.indices)
    fold = [cin.Fold(into, count, summed, folded, idxs, tuple(d.size(i) for i in lhs.indices), op=op,
                     power=power)] if counted else []
    if not idxs:
        start = 0.0 if op is None else op.identity
        return cin.Block((cin.Alloc(into, count, start), body, *fold, cin.Assign(out, (), cin.Temp(into))))
    return cin.Block((body, *fold)) if fold else body


def order_note(out: str, order: tuple, default: tuple, how: str, why: str, what: str = "sum") -> str:
    """What the trace's ``loop-order`` step says of a sum hoisted around the output's loops, added
    ``how``: into a ``dense`` output, a sparse vector's ``workspace``, a sparse matrix's row ``buckets`` (or
    its ``rows`` one at a time, the row index outermost), a sparse output of 3 or more modes' buckets ``sorted`` by
    key, or a ``scalar`` (a 0-d output). ``what``: the reduction (a ``max`` into a vector too).

    >>> print(order_note("y", ("i", "j"), ("j", "i"), "dense", "A[i, j]: ..."))
    the loops in the output's order, the sum's inside (j, i), walk an input against its storage order (A[i, j]: ...); they run i, j instead, the sum accumulated into y at each coordinate (a dense output written at random, as TACO does for y(j) = A(i, j) with y dense)
    """
    into = {"dense": f"into {out} at each coordinate (a dense output written at random, as TACO does for "
                     f"y(j) = A(i, j) with y dense)",
            "workspace": f"into a dense workspace of {out}'s extent, whose entries other than the fill are "
                         f"appended to {out} after the loops (the lattice strategy's dense workspace)",
            "buckets": f"into buckets, one per row of {out}: two passes of the loops count each row's terms and "
                       f"place them, then each row's are added into a row workspace, their columns sorted and "
                       f"appended (compiler.lattice.seqsumscatter; a dense workspace of {out}'s every entry would "
                       f"hold the whole matrix)",
            "sorted": f"into buckets, one per coordinate of {out}'s first mode: two passes of the loops count each "
                      f"bucket's terms and place them with their other coordinates as one key, then each bucket is "
                      f"sorted by key, each run of equal keys summed and appended level by level "
                      f"({SORTED_BUCKET}: compiler.lattice.seqsumsort; a dense workspace of {out}'s every entry "
                      f"would hold the whole tensor)",
            "rows": f"into a workspace of one row of {out} at a time (the row index outermost: each row's terms "
                    f"come together), its columns sorted and its entries appended after the row's loop "
                    f"(Gustavson's row workspace, compiler.lattice.seqsumscatter)",
            "scalar": "into a scalar, as before"}[how]
    return (f"the loops in the output's order, the {what}'s inside ({', '.join(default)}), walk an input against its "
            f"storage order ({why}); they run {', '.join(order)} instead, the {what} accumulated {into}")


class AccumulatedOutput(SeqOutput):
    """The output of a hoisted sum: each coordinate's terms added where they come, into the output
    itself when it is dense (zeroed first where the runtime fills it with another value: ``zero``),
    else into a dense workspace whose entries a loop appends after (a sparse vector)."""

    def __init__(self, name: str, fmt, shape: tuple, dtype: str, fresh=None, zero: bool = False):
        super().__init__(name, fmt, shape, dtype, fresh)
        if self.kind != "dense" and len(self.shape) != 1:
            raise StrategyError(f"output {name}: a sum whose loops run around the output's accumulates into a "
                                f"dense output, or a sparse vector through a workspace, not {fmt}")
        self.zero = zero
        self.size = math.prod(self.shape)
        self.sums = self.val if self.kind == "dense" else self.fresh("w")
        self.counts = ""      # (the per-coordinate count of a summand of another fill than 0)
        #: a max, min or prod reduced into it (None: a sum), and the C of its operator
        self.op, self.helpers = None, None

    def at(self, idxs: tuple):
        at = self.dense_position(tuple(idxs[m] for m in self.fmt.mode_order), len(idxs))
        return Const(0, "int64") if at is None else at

    def start(self, inputs=None, rhs=None) -> list:
        # (a sparse vector holds at most its extent's entries: room for them, a hint)
        if self.kind == "dense":
            return []
        return super().start() + [Grow(x, Const(self.size, "int64"), hint=True) for x in (*self.idx, self.val)]

    def accumulate(self, idxs: tuple, value, count: str) -> list:
        at = self.at(idxs)
        out = [Store(self.sums, at, value, "+")]
        if count:
            self.counts = self.counts or self.fresh(count)
            out.append(Store(self.counts, at, Const(1, "int64"), "+"))
        return out

    def reduce_into(self, idxs: tuple, value, dtype: str, count: str, op, helpers) -> list:
        """``w[at] = op(w[at], value)``: a term of a max, min or prod reduced into the accumulator, which starts at
        the operator's identity (:meth:`around`)."""
        self.op, self.helpers = op, helpers
        at = self.at(idxs)
        out = [Store(self.sums, at, apply_op(op, [Load(self.sums, at), value], [self.dtype, dtype], helpers)[0])]
        if count:
            self.counts = self.counts or self.fresh(count)
            out.append(Store(self.counts, at, Const(1, "int64"), "+"))
        return out

    def identity(self):
        """The start of the accumulator: 0 for a sum, else the operator's identity in the output's dtype."""
        if self.op is None:
            return Const(0, self.dtype)
        return Const(np.asarray(self.op.identity_for(self.dtype)).item(), self.dtype)

    def fold_each(self, s: cin.Fold) -> list:
        """The summand's fill for each coordinate the loops skipped, at every coordinate."""
        self.counts = self.counts or self.fresh(s.count)     # (no loop left to count: all skipped)
        q = Var(self.fresh("q"))
        n = Load(self.counts, q)
        if s.op is not None:    # (a fixed point of the operator: once is as many times; else a product's power)
            self.op = s.op
            helpers = self.helpers if self.helpers is not None else {}
            fill = Const(s.fill, self.dtype)
            if s.power:
                fill = fold_power(fill, BinOp("-", Const(s.extent, "int64"), n), self.dtype, helpers)
            folded = apply_op(s.op, [Load(self.sums, q), fill], [self.dtype, self.dtype], helpers)[0]
            return [For(q, 0, Const(self.size, "int64"),
                        [If(BinOp("<", n, Const(s.extent, "int64")), [Store(self.sums, q, folded)])])]
        missed = BinOp("-", Const(s.extent, "int64"), n)
        missed = missed if self.dtype == "int64" else Cast(self.dtype, missed)
        if s.fill != 1:
            missed = BinOp("*", missed, Const(s.fill, self.dtype))
        return [For(q, 0, Const(self.size, "int64"),
                    [If(BinOp("<", n, Const(s.extent, "int64")), [Store(self.sums, q, missed, "+")])])]

    def around(self, emit) -> list:
        zeroing = Var(self.fresh("q")) if self.zero and self.kind == "dense" else None
        body = emit()
        if self.kind != "dense":
            # (the workspace's entries, in order, appended where they are not the fill)
            q, v = Var(self.fresh("q")), Var(self.fresh("v"))
            body = body + [For(q, 0, Const(self.size, "int64"),
                               [Declare(v, self.dtype, Load(self.sums, q))] + self.store((q.name,), v))]
            body = [ir.Allocate(self.sums, self.dtype, Const(self.size, "int64"), self.identity(), body)]
        if self.counts:
            body = [ir.Allocate(self.counts, "int64", Const(self.size, "int64"), Const(0, "int64"), body)]
        if zeroing is None and self.op is not None and self.kind == "dense":
            zeroing = Var(self.fresh("q"))    # (a max's output starts at -inf, whatever the runtime filled it with)
        if zeroing is not None:
            # (the runtime filled the output with the result's fill: the sums start at 0, another reduction at its identity)
            body = [For(zeroing, 0, Const(self.size, "int64"), [Store(self.val, zeroing, self.identity())])] + body
        return body


def plain_zero(fill) -> bool:
    """Whether ``fill`` is the number 0 (None read as 0; not False).

    >>> plain_zero(None), plain_zero(0.0), plain_zero(False), plain_zero(np.nan)
    (True, True, False, False)
    """
    return fill is None or not isinstance(fill, (bool, np.bool_)) and fill == 0


__all__ = ["SORTED_BUCKET", "AccumulatedOutput", "hoistable", "hoisted_body", "order_note", "plain_zero", "unhoisted", "hoistable_into_vector"]
