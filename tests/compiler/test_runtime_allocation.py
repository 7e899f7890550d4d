"""The runtime allocates an output's arrays by its level's own rule (issue 29, item 2).

A kernel writing an output under levels located by coordinate takes some of the output's arrays
as buffers the call allocates (a list's fiber starts, a band's ends, a byte map's marks). The
level says which and how long each is (``Level.allocated_arrays``); the runtime, its fast call and
the reused outputs ask it, never an array's name. The formats here are defined in the test, with
their own array names, on the ``Sorted`` format of ``test_looplets_level_writers`` (its unfurl and
writer registered for the looplets strategy; the lattice strategy appends a level that says it
``appends_coordinates``). Oracles: ``compiler.evaluate`` and the IR interpreter.
"""

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import pytest

import compiler as ss
from compiler import Tensor
from compiler.format import Format
from compiler.imperative.ir import BinOp, Buffer, Declare, Store, Var
from compiler.levels import Dense, Element
from compiler.levels.level import ArrayLength, POS, check_pos, group_starts
from compiler.looplets import level_writers
from compiler.looplets import levels as looplet_levels
from compiler.testing import check_lowered
from tests.compiler.looplets.test_looplets_level_writers import Sorted, SortedWriter, unfurl_sorted


@dataclass(frozen=True, eq=False, repr=False)
class Appended(Sorted):
    """``Sorted`` (its fibers' starts in ``starts``, coordinates in ``crd``) saying it is appended in
    storage order as a sorted list, so the lattice strategy builds it too."""

    name: ClassVar[str] = "Appended"
    appends_coordinates: ClassVar[bool] = True


@dataclass(frozen=True, eq=False, repr=False)
class Counted(Sorted):
    """``Sorted`` keeping each fiber's count of entries in ``cnt`` too, one per parent position,
    written in place: an array no built-in level has, allocated by the rule the level gives."""

    cnt: Any = None

    name: ClassVar[str] = "Counted"
    index_arrays: ClassVar[tuple[str, ...]] = ("starts", "crd", "cnt")

    def allocated_arrays(self):
        return {**super().allocated_arrays(), "cnt": ArrayLength()}

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        new = group_starts([parent_pos, coords[0]])
        cnt = np.bincount(parent_pos[new], minlength=parent_count).astype(self.index_dtype)
        starts = np.zeros(parent_count + 1, dtype=self.index_dtype)
        np.cumsum(cnt, out=starts[1:])
        crd = coords[0][new].astype(self.index_dtype)
        child = self.child.from_entries(len(crd), np.cumsum(new, dtype=POS) - 1, coords[1:], vals, sizes[1:])
        return type(self)(child, int(sizes[0]), starts, crd, cnt=cnt)

    def check(self, parent_count, where):
        check_pos(self.starts, parent_count, len(self.crd), "crd", where, "starts")
        if not np.array_equal(self.cnt, np.diff(self.starts)):
            raise ss.errors.FormatError(f"{where}: cnt is not each fiber's count of entries")
        return len(self.crd)


def unfurl_counted(f, ctx, mode):
    """Sorted's unfurl; updated, a fiber also stores its count of entries in ``cnt`` as it ends."""
    looplet = unfurl_sorted(f, ctx, mode)
    if mode != "update":
        return looplet
    info, k = f.tensor, f.level
    nnz, first = Var(info.array(k, "nnz")), Var(ctx.fresh("first"))
    return replace(looplet, preamble=(*looplet.preamble, Declare(first, "int64", nnz)),
                   epilogue=(*looplet.epilogue, Store(info.array(k, "cnt"), f.pos, BinOp("-", nnz, first))))


class CountedWriter(SortedWriter):
    """Sorted's parameters and the counts, one per parent position, allocated by the call."""

    def params(self, info, k):
        params = super().params(info, k)
        return params and (*params, Buffer(info.array(k, "cnt"), info.levels[k].index_dtype.name, "inout"))


@pytest.fixture
def registered():
    """The formats registered as a user registers them (an unfurl, updatable, and a writer), for one test."""
    looplet_levels.register_unfurl(Sorted, unfurl_sorted, updatable=True)
    level_writers.register_output(Sorted, SortedWriter())
    looplet_levels.register_unfurl(Counted, unfurl_counted, updatable=True)
    level_writers.register_output(Counted, CountedWriter())
    yield
    for cls in (Sorted, Counted):
        looplet_levels.UNFURL.pop(cls, None)
        looplet_levels.UPDATABLE.discard(cls)
        level_writers.WRITERS.pop(cls, None)


M = np.array([[0, 0, 5.0, 0, 0, 7.0, 0], [3.0, 0, 0, 0, 0, 0, 0], [0] * 7, [0, 1.0, 2.0, 0, 0, 0, -1.0]])
EXPR = "C[i, j] = A[i, j] + B[i, j]"


def test_an_array_rule_is_the_levels():
    """Each built-in level names the arrays a call allocates for it; a subclass inherits them."""
    from compiler.levels import SparseBand, SparseByteMap, SparseList
    assert Dense(Element(0.0)).allocated_arrays() == {}
    assert SparseList(Element(0.0)).allocated_arrays() == {"pos": ArrayLength(extra=1)}
    assert SparseBand(Element(0.0)).allocated_arrays() == {"ofs": ArrayLength(extra=1), "idx": ArrayLength()}
    assert SparseByteMap(Element(0.0)).allocated_arrays() == {
        "pos": ArrayLength(extra=1), "tbl": ArrayLength(per_coordinate=True, kept=True)}
    assert Appended(Element(0.0)).allocated_arrays() == {"starts": ArrayLength(extra=1)}
    assert ArrayLength(per_coordinate=True, extra=2).length(parents=3, size=4) == 14


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_format_of_its_own_names_is_allocated_by_both_strategies(registered, strategy):
    """Its starts array, ``C1_starts``, is a buffer of one more than the rows that the call allocates
    (a kernel parameter the lattice strategy once named ``C1_pos``, whatever the level's names)."""
    out = Format(Dense(Appended(Element(0.0))))
    A, B = Tensor.from_numpy(M, "csr"), Tensor.from_numpy(-M[:, ::-1].copy(), "csr")
    k = check_lowered(EXPR, out=out, strategy=strategy, A=A, B=B)
    assert "C1_starts" in k.c_source and "C1_pos" not in k.c_source
    want = ss.evaluate(EXPR, A=M, B=-M[:, ::-1])[0]
    stored = Tensor.from_numpy(want, out).levels[1]
    for a in (A, M):   # (a tensor in the kernel's format takes the fast path; a numpy array, the general one)
        C = k(A=a, B=B)
        assert type(C.levels[1]) is Appended
        np.testing.assert_array_equal(C.to_numpy(), want)
        assert C.levels[1].starts.tolist() == stored.starts.tolist() and len(C.levels[1].starts) == len(M) + 1


def test_an_array_of_a_rule_no_built_in_level_has_is_allocated(registered):
    """``cnt``, one per row, written in place: sized by the level's rule (the runtime once refused
    it as an inout buffer it could not allocate), on the general and the fast path."""
    out = Format(Dense(Counted(Element(0.0))))
    A, B = Tensor.from_numpy(M, "csr"), Tensor.from_numpy(-M[:, ::-1].copy(), "csr")
    k = check_lowered(EXPR, out=out, strategy="looplets", A=A, B=B)
    assert "C1_cnt" in k.c_source
    want = ss.evaluate(EXPR, A=M, B=-M[:, ::-1])[0]
    for a in (A, M):   # (the fast path, then the general one)
        C = k(A=a, B=B)
        np.testing.assert_array_equal(C.to_numpy(), want)
        assert C.levels[1].cnt.tolist() == np.count_nonzero(want, axis=1).tolist()
        Tensor(C.root, shape=C.shape, check=True)   # (each level's own check: cnt the fibers' counts)


def test_the_rule_is_asked_once_per_kernel(registered, monkeypatch):
    """A call reads each allocated array's rule from the kernel's call plan: the level is asked when
    the plan is made, not on every call (a microsecond a buffer), on the general path (what a call
    the fast path declines takes) and the fast one, and the lengths stay the level's."""
    out = Format(Dense(Appended(Element(0.0))))
    A, B = Tensor.from_numpy(M, "csr"), Tensor.from_numpy(-M[:, ::-1].copy(), "csr")
    k = ss.lower(EXPR, strategy="lattice", A=A, B=B, C=out)
    want = ss.evaluate(EXPR, A=M, B=-M[:, ::-1])[0]
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), want)   # (the first call plans both paths)
    asked = []
    rule = Appended.allocated_arrays
    monkeypatch.setattr(Appended, "allocated_arrays", lambda self: asked.append(self) or rule(self))
    for C in (type(k)._run(k, k.compiled, {"A": A, "B": B}), k(A=A, B=B)):
        np.testing.assert_array_equal(C.to_numpy(), want)
        assert len(C.levels[1].starts) == len(M) + 1
    assert asked == []
