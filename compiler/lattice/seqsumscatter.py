"""A sum whose loops run around a sparse matrix output's (issue 30): its terms bucketed by row, each row's
then summed in a row workspace and appended in order.

``c[j, m] = sum[i](concat((A[k, j, m], B[l, j, m]), (k, l) -> i))`` (numpy's ``sum(vstack, axis=0)`` of 3-D
parts) reads the parts' level 0 (``k``) before their rows: the only order that walks them as stored is
``k, j, m``, the sum's index outermost, so every term of an entry of ``c`` comes at another ``k``. A dense
workspace of ``c``'s every entry would hold ``rows × columns`` values; a row workspace alone (Gustavson's)
needs the row index outermost. So the terms are bucketed by row first, as a scatter builds a CSR
(:mod:`compiler.lattice.seqscatter`): phase 1 runs the loops counting each row's terms, a prefix sum gives
the rows' starts, phase 2 runs them again storing each term's column and value at its row's next slot.
Then each row's terms are added into a row workspace (a value and a mark per column, a list of the columns
marked), the list is sorted (:func:`~compiler.imperative.sorting.sort_coordinates_ir`: a scan of the marks,
a rank sort, or a merge of its ascending runs, one per ``k``) and the row's entries are appended in column
order where they are not the fill, the workspace put back to 0 at the columns it touched. Memory: the terms
(the parts' entries), the rows' starts and one row; time: two passes over the terms and the sorts of the
rows' columns. Where the loops can run the row index outermost (``j, i, m`` for the sum over a CSF's middle
level), a row's terms come together: no buckets, each term added into the row workspace as it comes, the
row appended at the end of its loop's body. A summand of another fill than 0 counts each column's
terms and folds the fill in for the rest (the hoist's :class:`~compiler.lattice.seqcfir.Fold`): a
column no term reached holds the result's fill, not stored.

>>> from compiler.format import csr
>>> from compiler.names import FreshNames
>>> out = BucketedSums("C", csr(), (2, 3), "float64", FreshNames(), ("j", "m"))
>>> print(out.accumulate(("j", "m"), Var("x"), "")[0])
C_next[j] += 1;
>>> out.phase = "place"; print("\\n".join(str(s) for s in out.accumulate(("j", "m"), Var("x"), "")))
int64 t = C_next[j];
C_terms_idx[t] = m;
C_terms_val[t] = x;
C_next[j] = t + 1;
"""

from __future__ import annotations

import numpy as np

from ..algebra import lookup
from ..imperative.ir import (Allocate, Assign, BinOp, Cast, Comment, CompoundAssign, Const, Declare, For, If, Load, Store,
                             Var)
from ..names import FreshNames
from .exprs import apply_op
from .seqcfir import Block, Fold, Forall
from .seqhoist import AccumulatedOutput
from .seqoutput import SeqOutput, output_kind
from .seqtwophase import MarkedKeys, TwoPhaseScatter, counted, placed, size_of

I64 = "int64"


def _c(n) -> Const:
    return Const(int(n), I64)


def _words(fmt) -> tuple:
    """What the output's fibers and their coordinates are called in comments: a CSC's columns and rows."""
    return ("column", "row") if tuple(fmt.mode_order) == (1, 0) else ("row", "column")


def bucketed(fmt) -> bool:
    """Whether a hoisted sum writes an output of ``fmt`` through row buckets: a sparse matrix the sequence
    emitter appends to (CSR, CSC, COO).

    >>> from compiler.format import csr, coo, csc, dcsr, parse_format
    >>> [bucketed(f) for f in (csr(), csc(), coo(), dcsr(), parse_format("sparse", ndim=1))]
    [True, True, True, False, False]
    """
    return fmt.ndim == 2 and output_kind(fmt) in ("list", "coo")


def accumulated_output(name: str, fmt, shape: tuple, dtype: str, fresh, zero: bool = False, indices: tuple = (),
                       cin=None) -> SeqOutput:
    """The output of a sum whose loops run around the output's: a sparse matrix bucketed by row
    (:class:`BucketedSums`; ``indices``: its index names, ``cin``: the hoisted sum's CIN), any other added
    into where it stands (:class:`~.seqhoist.AccumulatedOutput`)."""
    if bucketed(fmt):
        return BucketedSums(name, fmt, shape, dtype, fresh, indices, cin)
    return AccumulatedOutput(name, fmt, shape, dtype, fresh, zero=zero)



def row_starts(next_: str, starts: str, rows, q: Var, total: Var) -> list:
    """The prefix sum of the rows' counts in ``next_`` into ``starts`` (``rows + 1`` of them, the last the
    ``total``; ``rows`` an int or an Expr: :func:`~.seqtwophase.size_of`), each row's next slot in ``next_`` at its
    start.

    >>> print("\\n".join(str(s) for s in row_starts("n", "st", 2, Var("q"), Var("t"))))
    int64 t = 0;
    for (int64 q = 0; q < 2; q++) {
        st[q] = t;
        t += n[q];
        n[q] = st[q];
    }
    st[2] = t;
    """
    return [Declare(total, I64, _c(0)),
            For(q, 0, size_of(rows), [Store(starts, q, total), CompoundAssign("+", total, Load(next_, q)),
                                      Store(next_, q, Load(starts, q))]),
            Store(starts, size_of(rows), total)]

def fold_missed(fold: Fold, v: Var, count, dtype: str) -> If:
    """The summand's fill (``fold``'s) added into the sum ``v`` once for each term the loops did not reach at
    its coordinate, ``count`` (an Expr) of them reached it.

    >>> print(fold_missed(Fold("C", "n", 3, 2.0, ("j",), (4,)), Var("v"), Var("c"), "float64"))
    if (c < 3) {
        v += (float64)(3 - c) * 2.0;
    }
    """
    missed = BinOp("-", _c(fold.extent), count)
    missed = missed if dtype == I64 else Cast(dtype, missed)
    if fold.fill != 1:
        missed = BinOp("*", missed, Const(fold.fill, dtype))
    return If(BinOp("<", count, _c(fold.extent)), [CompoundAssign("+", v, missed)])


def fold_reduced(fold: Fold, v: Var, count, dtype: str, helpers=None) -> If:
    """The summand's fill (``fold``'s) reduced by ``fold.op`` into ``v`` where the loops skipped any of the
    ``fold.extent`` terms of its coordinate (``count``, an Expr, reached it): once, a fixed point of the operator,
    else a product's fill to the power of the terms skipped.

    >>> print(fold_reduced(Fold("C", "n", 3, 0.0, ("j",), (4,), op=lookup("max")), Var("v"), Var("c"), "int64"))
    if (c < 3) {
        v = v > 0 ? v : 0;
    }
    """
    helpers = helpers if helpers is not None else {}
    fill = Const(fold.fill, dtype)
    if fold.power:
        skipped = Cast(dtype, BinOp("-", _c(fold.extent), count))
        fill = apply_op(lookup("pow"), [fill, skipped], [dtype, dtype], helpers)[0]
    return If(BinOp("<", count, _c(fold.extent)), [Assign(v, apply_op(fold.op, [v, fill], [dtype, dtype], helpers)[0])])


class BucketedSums(TwoPhaseScatter, SeqOutput):
    """A sparse matrix output of a hoisted sum (of a format :func:`bucketed` takes), ``indices`` its index
    names. Where the sum's loops (its ``cin``) run the row index outermost, each row's terms come together:
    they are added into the row workspace as they come, and the row is appended at the end of its loop's
    body (:meth:`case`). Else the loops are emitted twice (:meth:`around`), ``phase`` ``count`` then
    ``place``, each term into its row's bucket, then each row summed and appended."""

    def __init__(self, name: str, fmt, shape: tuple, dtype: str, fresh: FreshNames, indices: tuple, cin=None):
        super().__init__(name, fmt, shape, dtype, fresh)
        self.rows, self.cols = self.shape       # (in storage order: a CSC's columns are its rows here)
        self.keys = self.rows
        self.names = fresh
        self.indices = tuple(indices)
        self.row, self.col = (self.indices[m] for m in fmt.mode_order)
        stmts = cin.stmts if isinstance(cin, Block) else (cin,)
        # (a summand of another fill than 0: its terms counted per column, the fill folded in for the rest)
        self.fold = next((x for x in stmts if isinstance(x, Fold)), None)
        self.phase = "direct" if isinstance(stmts[0], Forall) and stmts[0].index == self.row else "count"
        self.next = fresh(f"{name}_next")
        self.terms_idx, self.terms_val = fresh(f"{name}_terms_idx"), fresh(f"{name}_terms_val")
        self.w, self.mark, self.list = (fresh(f"{name}_row{x}") for x in ("", "_set", "_list"))
        self.counts = fresh(f"{name}_row_count") if self.fold is not None else None
        self.n = Var(fresh("n_row"))
        self.met = MarkedKeys(self.mark, self.list, self.list + "_tmp", self.n, self.cols)
        #: a max, min, prod, any or all reduced into the rows (None: a sum), and the emitter's C helpers
        self.op, self.helpers = None, None

    def add(self, col, value, dtype: str | None = None) -> list:
        """Add ``value`` (of ``dtype``, the output's if None) into the row workspace at column ``col`` (a Var), or
        reduce it in by the operator of :meth:`reduce_into`, listing the column the first time."""
        if self.op is None:
            into = Store(self.w, col, value, "+")
        else:
            into = Store(self.w, col, apply_op(self.op, [Load(self.w, col), value], [self.dtype, dtype or self.dtype],
                                               self.helpers)[0])
        out = [*self.met.meet(col), into]
        return out + ([Store(self.counts, col, _c(1), "+")] if self.counts else [])

    def reduce_into(self, idxs: tuple, value, dtype: str, count: str, op, helpers) -> list:
        """A term of a max, min, prod, any or all: reduced into its row's workspace, which starts at the operator's
        identity, as it comes or once its row's terms are bucketed (as a sum's terms are added).

        >>> from compiler.format import csr
        >>> out = BucketedSums("C", csr(), (2, 3), "float64", FreshNames(), ("j", "m"))
        >>> out.phase = "direct"; print(out.reduce_into(("j", "m"), Var("x"), "float64", "", lookup("mul"), {})[-1])
        C_row[m] = C_row[m] * x;
        """
        self.op, self.helpers = op, helpers
        if self.phase == "direct":
            return self.add(Var(self.col), value, dtype)
        return self.accumulate(idxs, value, count)

    def identity(self) -> Const:
        """What the row workspace starts at: 0 for a sum, else the operator's identity in the output's dtype."""
        return Const(0 if self.op is None else np.asarray(self.op.identity_for(self.dtype)).item(), self.dtype)

    def accumulate(self, idxs: tuple, value, count: str) -> list:
        if self.phase == "direct":
            return self.add(Var(self.col), value)
        if self.phase == "count":
            return counted(self.next, Var(self.row))
        slot = Var(self.names("t"))
        return placed(self.next, Var(self.row), slot, [Store(self.terms_idx, slot, Var(self.col)),
                                                        Store(self.terms_val, slot, value)])

    def fold_each(self, s) -> list:
        return []       # (folded in as each row is appended: self.fold)

    def case(self, index: str, stmts: list) -> list:
        if self.phase != "direct" or index != self.row:
            return stmts
        # (the row's terms, added up in the loop's body, then its entries appended in order)
        return [Declare(self.n, I64, _c(0)), *stmts, *self.append_row()]

    def around(self, emit) -> list:
        if self.phase == "direct":
            word = _words(self.fmt)[0]
            return self.row_workspace([Comment(f"the sum's loops run {word} by {word}: each {word}'s terms added "
                                               f"into a {word} workspace, then its entries appended in order"),
                                       *emit()])
        return super().around(emit)

    def count_note(self) -> str:
        word = _words(self.fmt)[0]
        return (f"phase 1, count: each term of the sum counts in its {word}'s {self.next}[{word}] (the sum's loops "
                f"run outside {self.tensor}'s)")

    def prefix_note(self) -> str:
        word = _words(self.fmt)[0]
        return f"the {word}s' starts (the counts summed), each {word}'s next slot at its start"

    def place_note(self) -> str:
        return f"phase 2, place: each term's coordinate and value at its {_words(self.fmt)[0]}'s next slot"

    def prefix_sum(self) -> tuple:
        """The rows' starts (in ``starts``, kept for the rows' sums), each row's next slot at its start."""
        q, total = Var(self.names("q")), Var(self.names("n_terms"))
        self.starts = self.names(f"{self.tensor}_starts")
        return row_starts(self.next, self.starts, self.rows, q, total), total

    def room(self, total, body: list) -> list:
        return [Allocate(self.terms_idx, I64, total, None, [Allocate(self.terms_val, self.dtype, total, None, body)])]

    def epilogue(self) -> list:
        """Each row's terms added into the row workspace, then its entries appended in order."""
        word, r, p = _words(self.fmt)[0], Var(self.row), Var(self.names("p"))
        rows = For(r, 0, _c(self.rows), [
            Declare(self.n, I64, _c(0)),
            For(p, Load(self.starts, r), Load(self.starts, BinOp("+", r, _c(1))),
                [Declare(Var(self.col), I64, Load(self.terms_idx, p)),
                 *self.add(Var(self.col), Load(self.terms_val, p))]),
            *self.append_row()])
        return [Comment(f"each {word}'s terms added into a {word} workspace, then its entries appended in order"),
                *self.row_workspace([rows])]

    def scratch(self, body: list) -> list:
        return [Allocate(self.starts, I64, _c(self.rows + 1), None, body)]

    def append_row(self) -> list:
        """The row workspace's columns sorted, its entries appended in order where they are not the fill, and
        it put back at each to its start (0, or the operator's identity: :meth:`identity`)."""
        x, t, v = Var(self.col), Var(self.names("q")), Var(self.names("v"))
        value = [Declare(v, self.dtype, Load(self.w, x))]
        if self.fold is not None and self.fold.op is not None:
            value.append(self.fold_reduced(v, Load(self.counts, x)))
        elif self.fold is not None:
            value.append(fold_missed(self.fold, v, Load(self.counts, x), self.dtype))
        reset = [Store(self.w, x, self.identity()), self.met.unmark(x)]
        reset += [Store(self.counts, x, _c(0))] if self.counts else []
        fresh = lambda base: Var(self.names(base))  # noqa: E731
        return [*self.met.sort(fresh, self.col),
                For(t, 0, self.n, [Declare(x, I64, Load(self.list, t)), *value, *self.store(self.indices, v), *reset])]

    def fold_reduced(self, v: Var, count) -> If:
        """The summand's fill reduced into ``v`` where the loops skipped any of its terms (:func:`fold_reduced`)."""
        return fold_reduced(self.fold, v, count, self.dtype, self.helpers)

    def row_workspace(self, body: list) -> list:
        """``body`` inside the row workspace's arrays: a value, a mark and a list entry per column."""
        cols = _c(self.cols)
        for name, dtype, length, init in ((self.w, self.dtype, cols, self.identity()), *self.met.arrays(),
                                          *([(self.counts, I64, cols, _c(0))] if self.counts else [])):
            body = [Allocate(name, dtype, length, init, body)]
        return body


__all__ = ["row_starts", "BucketedSums", "accumulated_output", "bucketed", "fold_missed", "fold_reduced"]
