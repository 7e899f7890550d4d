"""A sum whose loops run around a sparse output of three or more modes, or a DCSR (issue 30): its terms bucketed
by the output's first mode, each bucket sorted by the other coordinates and equal ones summed, then appended level
by level (a DCSR's row kept where its bucket summed to entries other than the fill).

``c[j, m, n] = sum[i](concat((A[k, j, m, n], B[l, j, m, n]), (k, l) -> i))`` (numpy's ``sum(vstack, axis=0)``
of 4-D parts) reads the parts' level 0 (``k``) before the output's modes, so every term of an entry of ``c``
comes at another ``k``. A matrix output buckets its terms by row and sums each row in a row workspace of its
columns (:mod:`compiler.lattice.seqsumscatter`); with three modes that workspace would be a dense ``M × N``
block per row, and buckets by the first two modes a counter per ``(j, m)``. So the terms are bucketed by the
first mode only (phase 1 counts each ``j``'s terms, a prefix sum gives the buckets' starts, phase 2 places each
term's other coordinates, linearized into one key ``m · N + n``, and its value at its ``j``'s next slot:
:class:`~compiler.lattice.seqtwophase.TwoPhaseScatter`). Each bucket is then sorted by key, stably (the terms of
one key keep the loops' order, so they are added in the order the dense reference adds them), the C choosing per
bucket: by counting (:func:`~compiler.imperative.sorting.count_sort_pairs_ir`) where the key's span is at most
:data:`~compiler.imperative.sorting.COUNTED_SPAN` times the bucket's terms (a nearly dense output: no comparisons,
``O(terms + span)``), else by merging its ascending runs (:func:`~compiler.imperative.sorting.merge_sort_pairs_ir`,
``O(terms log runs)``); then walked as nested runs: a run of equal ``m``, within
it runs of equal key, each summed into one entry that the output appends with its own code, as from loops in
its order (a COO's coordinates; a CSF's or DCSR-like output's ``pos`` and ``crd`` per level:
:mod:`compiler.lattice.seqassembly`). A summand of another fill than 0 has its fill folded in for the terms a key
did not get (the run's length is how many it got). Memory: the terms (twice, the sort's scratch), the first
mode's starts and, where the terms are many against the span, a count per key; time: two passes of the sum's
loops and a sort of each bucket.

>>> from compiler.format import coo
>>> from compiler.names import FreshNames
>>> from compiler.lattice.seqoutput import SeqOutput
>>> fresh = FreshNames({"j", "m", "n"})
>>> out = SortedSums(SeqOutput("C", coo(3), (2, 3, 4), "float64", fresh), coo(3), ("j", "m", "n"), (2, 3, 4),
...                  "float64", fresh)
>>> print(out.accumulate(("j", "m", "n"), Var("x"), "")[0])
C_next[j] += 1;
>>> out.phase = "place"; print("\\n".join(str(s) for s in out.accumulate(("j", "m", "n"), Var("x"), "")))
int64 t = C_next[j];
C_terms_key[t] = m * 4 + n;
C_terms_val[t] = x;
C_next[j] = t + 1;
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import NamedTuple

from ..binding import array_name
from ..errors import StrategyError
from ..imperative.ir import (Allocate, Assign, BinOp, Comment, CompoundAssign, Const, Declare, Expr, For, If, Load,
                             Select, Store, Var, While, and_)
from ..imperative.sorting import COUNTED_SPAN, count_sort_pairs_ir, merge_sort_pairs_ir
from ..stand_in import format_text
from .exprs import apply_op
from .seqassembly import sequence_assembled, sequence_output
from .seqcfir import Block, Fold
from .seqoutput import output_kind
from .seqsumscatter import accumulated_output, fold_missed, fold_reduced, row_starts
from .seqtwophase import TwoPhaseScatter, counted, placed, size_of

I64 = "int64"
#: the largest span of a key (the product of the extents of the modes after the first) that an int64 holds
LARGEST_KEY = 2 ** 62


class Pairs(NamedTuple):
    """The two arrays of the terms: each term's key (its coordinates after the first, linearized) and value."""

    key: Var
    val: Var


def _c(n) -> Const:
    return Const(int(n), I64)


def _known(n):
    """An extent as an int where it is known (a sequence kernel's), else the Expr the kernel reads."""
    return n if isinstance(n, Expr) else int(n)


def _times(a, b):
    """``a * b`` of two extents (:func:`_known`), computed here where both are known."""
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    return b if a == 1 else a if b == 1 else BinOp("*", size_of(a), size_of(b))


def _product(extents) -> int | Expr:
    out = 1
    for n in extents:
        out = _times(out, n)
    return out


def sorts_sums(fmt) -> bool:
    """Whether a hoisted sum writes an output of ``fmt`` through buckets sorted by key (:class:`SortedSums`): a
    sparse output of three or more modes the sequence emitter appends to or assembles in one pass, or a matrix of
    two appended lists (a DCSR; a CSR, CSC or COO has its row buckets, :mod:`compiler.lattice.seqsumscatter`).

    >>> from compiler.format import coo, csf, csr, dcsr, dense
    >>> [sorts_sums(f) for f in (coo(3), csf(3), csf(4), csr(), dense(3), dcsr())]
    [True, True, True, False, False, True]
    """
    kind = output_kind(fmt)
    if fmt.ndim == 2:
        # (a matrix of two appended lists, a DCSR, which the row buckets do not append: its rows' runs appended
        # level by level as from a CSF's)
        return kind is None and sequence_assembled(fmt) and all(lvl.appends_coordinates for lvl in fmt.levels)
    return fmt.ndim >= 3 and kind != "dense" and (kind is not None or sequence_assembled(fmt))


def unsorted(out: str, fmt, shape: tuple) -> str:
    """Why a hoisted sum cannot write output ``out`` of ``fmt`` (of extents ``shape``, in the program's order)
    through :class:`SortedSums`: ``""`` where it can.

    >>> from compiler.format import coo
    >>> unsorted("c", coo(3), (2, 3, 4))
    ''
    >>> print(unsorted("c", coo(3), (2, 2 ** 40, 2 ** 40)))
    output c (coo): the sum's loops run around c's, so its terms are sorted by their coordinates after the first as one int64 key, but c's modes after its first span 1208925819614629174706176 coordinates, more than 2**62
    """
    rest = [shape[m] for m in fmt.mode_order[1:]]
    if any(isinstance(n, Expr) for n in rest):
        return ""   # (extents the kernel reads as it runs: it checks their span itself)
    span = math.prod(int(n) for n in rest)
    if span <= LARGEST_KEY:
        return ""
    return (f"output {out} ({format_text(fmt)}): the sum's loops run around {out}'s, so its terms are sorted by their "
            f"coordinates after the first as one int64 key, but {out}'s modes after its first span {span} "
            f"coordinates, more than 2**62")


def extents_declared(tensor: str, shape: tuple) -> list:
    """The extents of a workspace ``tensor`` of ``shape`` declared, as the statement's loops read them.

    >>> print(extents_declared("w", (2, 3))[1])
    int64 w1_size = 3;
    """
    return [Declare(Var(array_name(tensor, m, "size")), I64, _c(n)) for m, n in enumerate(shape)]


class SortedTerms(TwoPhaseScatter, ABC):
    """The terms of a hoisted sum (its CIN ``cin``) into ``name`` of ``fmt``, at ``indices`` (the program's, of
    extents ``shape``: ints, or Exprs the kernel reads as it runs): the sum's loops emitted twice, ``phase`` ``count`` then ``place``, each term into its first
    mode's bucket with its key; each bucket then sorted and walked as nested runs of equal coordinates
    (:meth:`epilogue`), each run of equal keys summed. A subclass writes the runs (:meth:`level`, :meth:`entry`)."""

    def __init__(self, name: str, fmt, indices: tuple, shape: tuple, dtype: str, fresh, cin=None):
        self.tensor, self.fmt, self.indices, self.dtype, self.fresh = name, fmt, tuple(indices), dtype, fresh
        why = unsorted(name, fmt, shape)
        if why:
            raise StrategyError(why)
        # (in storage order: the first mode buckets, the others make the key, the last the fastest)
        self.row, *rest = (self.indices[m] for m in fmt.mode_order)
        self.rest = tuple(rest)
        self.keys, *extents = (_known(shape[m]) for m in fmt.mode_order)
        self.extents = tuple(extents)
        self.strides = tuple(_product(self.extents[d + 1:]) for d in range(len(self.extents)))
        stmts = cin.stmts if isinstance(cin, Block) else (cin,)
        # (a summand of another fill than 0: the fill folded in for the terms a key did not get)
        self.fold = next((x for x in stmts if isinstance(x, Fold)), None)
        self.next, self.starts = fresh(f"{name}_next"), fresh(f"{name}_starts")
        self.terms = Pairs(fresh(f"{name}_terms_key"), fresh(f"{name}_terms_val"))
        self.scratch_terms = Pairs(fresh(f"{name}_sorted_key"), fresh(f"{name}_sorted_val"))
        self.key_counts, self.span = fresh(f"{name}_key_counts"), _product(self.extents)
        self.phase = "count"
        #: the reduction's operator other than a sum's (max, min, prod, any, all: :meth:`reduce_into`), its helpers
        self.op, self.helpers = None, None

    def reduce_into(self, idxs: tuple, value, dtype: str, count: str, op, helpers) -> list:
        """A term of a max, min, prod, any or all: bucketed and sorted as a sum's, each run of equal keys then
        reduced by ``op`` (:meth:`summed`)."""
        self.op, self.helpers = op, helpers
        return self.accumulate(idxs, value, count)

    def key(self):
        """The term's key: the coordinates after the first, linearized in storage order."""
        out = None
        for x, n in zip(self.rest, self.extents):
            out = Var(x) if out is None else BinOp("+", BinOp("*", out, size_of(n)), Var(x))
        return out

    def accumulate(self, idxs: tuple, value, count: str) -> list:
        if self.phase == "count":
            return counted(self.next, Var(self.row))
        slot = Var(self.fresh("t"))
        return placed(self.next, Var(self.row), slot, [Store(self.terms.key, slot, self.key()),
                                                        Store(self.terms.val, slot, value)])

    def fold_each(self, s) -> list:
        return []       # (folded in as each entry is summed: self.fold)

    def count_note(self) -> str:
        return (f"phase 1, count: each term of the sum counts in its {self.row}'s {self.next}[{self.row}] (the sum's "
                f"loops run outside {self.tensor}'s)")

    def prefix_note(self) -> str:
        return f"the buckets' starts (the counts summed), each {self.row}'s next slot at its start"

    def place_note(self) -> str:
        return (f"phase 2, place: each term's key ({', '.join(self.rest)} linearized) and value at its {self.row}'s "
                f"next slot")

    def prefix_sum(self) -> tuple:
        q, total = Var(self.fresh("q")), Var(self.fresh("n_terms"))
        return row_starts(self.next, self.starts, self.keys, q, total), total

    def room(self, total, body: list) -> list:
        # (a count per key where some bucket may be sorted by counting: COUNTED_SPAN)
        span = size_of(self.span)
        counted = Select(BinOp("<=", span, BinOp("*", _c(COUNTED_SPAN), total)), span, _c(0))
        body = [Allocate(self.key_counts, I64, counted, None, body)]
        for part in (self.scratch_terms, self.terms):
            body = [Allocate(part.key, I64, total, None, [Allocate(part.val, self.dtype, total, None, body)])]
        return body

    def scratch(self, body: list) -> list:
        keys = self.keys + 1 if isinstance(self.keys, int) else BinOp("+", self.keys, _c(1))
        return [Allocate(self.starts, I64, size_of(keys), None, body)]

    def epilogue(self) -> list:
        """Each bucket sorted by key, then walked as runs of equal coordinates, level by level, each run of equal
        keys summed into one entry."""
        r, p, hi = Var(self.row), Var(self.fresh("p")), Var(self.fresh("hi"))
        fresh = lambda base: Var(self.fresh(base))  # noqa: E731
        pairs = (self.terms.key, self.terms.val, self.scratch_terms.key, self.scratch_terms.val)
        span = size_of(self.span)
        counted = BinOp("<=", span, BinOp("*", _c(COUNTED_SPAN), BinOp("-", hi, p)))
        sort = If(counted, [Comment(f"its keys' span ({self.span}) at most {COUNTED_SPAN} times its terms: "
                                    f"counted, each term placed at its key's next slot"),
                            *count_sort_pairs_ir(*pairs, self.key_counts, span, p, hi, fresh)],
                  [Comment("else its ascending runs merged"), *merge_sort_pairs_ir(*pairs, p, hi, fresh)])
        bucket = [Declare(p, I64, Load(self.starts, r)), Declare(hi, I64, Load(self.starts, BinOp("+", r, _c(1)))),
                  sort, *self.runs(0, p, hi, None)]
        return [Comment(self.sorted_note()), For(r, 0, size_of(self.keys), self.level(-1, self.row, bucket))]

    def sorted_note(self) -> str:
        """The comment over the buckets' sorts and walks."""
        return (f"each {self.row}'s terms sorted by key (stably: a key's terms keep their order), each run of equal "
                f"keys {self.reduced()} into an entry of {self.tensor}, in its order")

    def reduced(self) -> str:
        """What a run of equal keys is: ``summed``, or reduced by the reduction's operator (:meth:`reduce_into`)."""
        if self.op is None:
            return "summed"
        return "reduced by " + {"mul": "prod", "or": "any", "and": "all"}.get(self.op.name, self.op.name)

    def runs(self, d: int, p: Var, hi: Var, outer) -> list:
        """The loop over the runs of the bucket's ``d``-th coordinate after the first (from ``p``, before ``hi``),
        inside the run of ``outer`` (``(prefix, stride)``: the key's coordinates up to the one before, or None)."""
        x, n, stride = self.rest[d], self.extents[d], self.strides[d]
        key = Load(self.terms.key, p)
        # (the first coordinate is the key's leading part itself; another is its part's last digit)
        prefix = Var(x) if d == 0 else Var(self.fresh(f"{x}_key"))
        within = BinOp("<", p, hi)
        if outer is not None:
            up, up_stride = outer
            within = and_(within, BinOp("==", BinOp("/", key, size_of(up_stride)), up))
        body = [Declare(prefix, I64, key if stride == 1 else BinOp("/", key, size_of(stride)))]
        if d > 0:
            body.append(Declare(Var(x), I64, BinOp("%", prefix, size_of(n))))
        inner = self.runs(d + 1, p, hi, (prefix, stride)) if d + 1 < len(self.rest) else self.summed(p, hi, prefix)
        return [While(within, body + self.level(d, x, inner))]

    def summed(self, p: Var, hi: Var, key: Var) -> list:
        """The run of terms of ``key`` (from ``p``) added up (or reduced by the operator of :meth:`reduce_into`,
        from the run's first term), the fill folded in for those it lacks, kept."""
        v, term = Var(self.fresh("v")), Load(self.terms.val, p)
        if self.op is None:
            out, into, got0 = [Declare(v, self.dtype, Const(0, self.dtype))], CompoundAssign("+", v, term), 0
        else:
            # (a run has a term at least: the first starts it, no identity needed)
            out = [Declare(v, self.dtype, term), CompoundAssign("+", p, _c(1))]
            into = Assign(v, apply_op(self.op, [v, term], [self.dtype, self.dtype], self.helpers or {})[0])
            got0 = 1
        step = [into, CompoundAssign("+", p, _c(1))]
        if self.fold is not None:
            got = Var(self.fresh("got"))
            out.append(Declare(got, I64, _c(got0)))
            step.append(CompoundAssign("+", got, _c(1)))
        out.append(While(and_(BinOp("<", p, hi), BinOp("==", Load(self.terms.key, p), key)), step))
        if self.fold is not None and self.fold.op is not None:
            out.append(fold_reduced(self.fold, v, got, self.dtype, self.helpers))
        elif self.fold is not None:
            out.append(fold_missed(self.fold, v, got, self.dtype))
        return out + self.entry(v)

    def level(self, d: int, x: str, stmts: list) -> list:
        """``stmts``, the body of the loop over the runs of coordinate ``x`` (the ``d``-th after the first; -1:
        the first, the buckets' loop), with what the subclass writes around it."""
        return stmts

    @abstractmethod
    def entry(self, v: Var) -> list:
        """The code keeping the summed entry ``v`` at the coordinates of the loops around."""


class SortedSums(SortedTerms):
    """Output ``inner`` (a :class:`~compiler.lattice.seqoutput.SeqOutput` or
    :class:`~compiler.lattice.seqassembly.SeqAssembly`) of ``fmt``, at ``indices`` (the program's, of extents
    ``shape``), written by a hoisted sum (its CIN ``cin``): its terms sorted (:class:`SortedTerms`), each entry
    appended by the output's own code, its levels' segments around the runs' loops as around loops in its
    order."""

    def __init__(self, inner, fmt, indices: tuple, shape: tuple, dtype: str, fresh, cin=None):
        super().__init__(inner.tensor, fmt, indices, shape, dtype, fresh, cin)
        self.inner, self.kind, self.notes = inner, inner.kind, inner.notes

    def params(self) -> list:
        return self.inner.params()

    def start(self, inputs=None, rhs=None) -> list:
        return self.inner.start(inputs, rhs)

    def end(self) -> list:
        return self.inner.end()

    def case(self, index: str, stmts: list) -> list:
        return stmts        # (the sum's loops are not the output's: its levels are appended after them)

    def around(self, emit) -> list:
        return self.inner.around(lambda: TwoPhaseScatter.around(self, emit))

    def level(self, d: int, x: str, stmts: list) -> list:
        return self.inner.case(x, stmts)

    def entry(self, v: Var) -> list:
        return self.inner.store(self.indices, v)


class SortedWorkspace(SortedTerms):
    """The code of a :class:`~compiler.lattice.seqworkspace.SumWorkspace` of three or more modes kept sparse
    (of :func:`~compiler.lattice.seqworkspace.SumWorkspace.format`: a Dense level over SparseLists), which the
    statement's loops read after: its terms sorted (:class:`SortedTerms`), each run of a coordinate one entry of
    its level (``w1_idx``, ..., the fiber below ending at ``w2_pos``, ...), each sum stored (every key a term
    reached, as the CFIR's interpreter keeps it). ``producer``: the CIN of the sum's loops."""

    def __init__(self, work, fmt, dtype: str, fresh, producer=None):
        super().__init__(work.name, fmt, work.indices, work.shape, dtype, fresh, producer)
        self.shape = tuple(work.shape)
        self.depth = len(self.shape) - 1
        # (the workspace's own arrays, named by its levels; a counter per level below the first)
        levels = [fmt.levels[k] for k in range(1, self.depth + 1)]
        self.pos = [array_name(self.tensor, k, lvl.starts_array) for k, lvl in enumerate(levels, 1)]
        self.idx = [array_name(self.tensor, k, lvl.crd_of(0)) for k, lvl in enumerate(levels, 1)]
        self.val = array_name(self.tensor, None, "val")
        self.at = [Var(fresh(f"p{self.tensor}{k}")) for k in range(1, self.depth + 1)]
        self.rest_code = lambda: []     # (the statement's loops: given by around)

    def wrap(self, body: list) -> list:
        """``body`` (the kernel's loops) after the workspace's extents (its arrays are allocated where the sum's
        loops run: :meth:`around`)."""
        return extents_declared(self.tensor, self.shape) + body

    def around(self, emit, rest=lambda: []) -> list:
        """The sum's loops (``emit()``) twice, then each bucket sorted and its sums kept in the workspace's levels;
        ``rest()``: the code after them (the statement's loops) while the workspace lives."""
        self.rest_code = rest
        return TwoPhaseScatter.around(self, emit)

    def room(self, total, body: list) -> list:
        # (each level below the first holds at most the terms, its fibers' ends one more)
        arrays = [(self.pos[0], I64, _c(self.keys + 1))]
        for k in range(self.depth):
            arrays += [(self.idx[k], I64, total)] + ([(self.pos[k + 1], I64, BinOp("+", total, _c(1)))]
                                                    if k + 1 < self.depth else [])
        arrays.append((self.val, self.dtype, total))
        for name, dtype, length in reversed(arrays):
            body = [Allocate(name, dtype, length, None, body)]
        return super().room(total, body)

    def epilogue(self) -> list:
        first = [Store(self.pos[k], _c(0), _c(0)) for k in range(self.depth)]
        counters = [Declare(x, I64, _c(0)) for x in self.at]
        return [*counters, *first, *super().epilogue(), *self.rest_code()]

    def level(self, d: int, x: str, stmts: list) -> list:
        if d == self.depth - 1:
            return stmts        # (the last level's entries are kept with their sums: self.entry)
        below = self.at[d + 1]
        # (the fiber below the run ends where its entries do)
        closed = [Store(self.pos[d + 1], BinOp("+", self.at[d], _c(1)) if d >= 0 else BinOp("+", Var(x), _c(1)),
                        below)]
        if d < 0:
            return stmts + closed
        return [Store(self.idx[d], self.at[d], Var(x)), *stmts, *closed, CompoundAssign("+", self.at[d], _c(1))]

    def entry(self, v: Var) -> list:
        last = self.at[-1]
        return [Store(self.idx[-1], last, Var(self.rest[-1])), Store(self.val, last, v),
                CompoundAssign("+", last, _c(1))]


def summed_output(name: str, fmt, indices: tuple, shape: tuple, dtype: str, fresh, zero: bool = False, cin=None):
    """The output of a sum whose loops run around the output's: a sparse output of three or more modes through
    buckets sorted by key (:class:`SortedSums`), any other as :func:`~.seqsumscatter.accumulated_output` writes
    it (``zero``: a dense output the runtime fills with another value than 0)."""
    if sorts_sums(fmt):
        inner = sequence_output(name, fmt, indices, shape, dtype, fresh)
        return SortedSums(inner, fmt, indices, shape, dtype, fresh, cin)
    return accumulated_output(name, fmt, shape, dtype, fresh, zero=zero, indices=indices, cin=cin)


__all__ = ["LARGEST_KEY", "SortedSums", "extents_declared", "SortedTerms", "SortedWorkspace", "sorts_sums", "summed_output", "unsorted"]
