"""A level format defined here, outside the compiler, written and read by the looplet strategy.

The format registers its unfurl (``compiler.looplets.levels.register_unfurl``) and its output
writer (``compiler.looplets.level_writers.register_output``), and nothing else: the strategy's
central modules (compile, lifecycle_lowering, reserve, reset_outputs) ask the writer and the
level's properties, never its class (issue 29, item 1). The oracle is ``compiler.evaluate``,
with the IR interpreter (``compiler.testing.check_lowered``).
"""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

import compiler as ss
from compiler import Tensor
from compiler.errors import StrategyError
from compiler.format import Format
from compiler.imperative.ir import Buffer, Growable, OutScalar
from compiler.levels import Dense, Element
from compiler.looplets import level_writers
from compiler.looplets import levels as looplet_levels
from compiler.testing import check_lowered
from tests.compiler.levels.starts_crd import StartsCrd


class Sorted(StartsCrd):
    """A sorted list of coordinates per fiber, ``crd[starts[p]:starts[p + 1]]``, each entry its own
    child: a SparseList under other names, its arrays named otherwise, of no built-in class."""

    name: ClassVar[str] = "Sorted"


def unfurl_sorted(f, ctx, mode):
    """Read: a walk over the fiber's coordinates (a Stepper of Spikes, then the fill); update: an
    entry appended per coordinate written, the fiber's end stored in ``starts`` when it ends."""
    from compiler.imperative import ir
    from compiler.imperative.ir import BinOp, CompoundAssign, Const, Declare, If, Load, Select, Var
    from compiler.looplets.fibers import child_fiber, fill_value
    from compiler.looplets.looplets import Fill, Lookup, Phase, Sequence, Spike, Stepper, Thunk
    from compiler.looplets.searching import search_stmts
    info, k = f.tensor, f.level
    starts, crd = info.array(k, "starts"), info.array(k, "crd")
    one = Const(1, "int64")
    if mode == "update":
        nnz = Var(info.array(k, "nnz"))

        def append(i):
            dirty = Var(ctx.fresh("dirty"))
            child = child_fiber(f, nnz, dirty)
            pre = [Declare(dirty, "bool", Const(False, "bool")), ir.Grow(crd, BinOp("+", nnz, one)),
                   *looplet_levels.assemble_stmts(child, ctx)]
            keep = looplet_levels.kept(dirty, child)
            # (under an appended level, an entry kept marks the fiber above it written, as a SparseList's does)
            up = [ir.Assign(f.dirty, Const(True, "bool"))] if f.dirty is not None else []
            return Thunk(tuple(pre), child, (If(keep, [ir.Store(crd, nnz, i), CompoundAssign("+", nnz, one), *up]),),
                         info)
        return Thunk((), Lookup(append, f"i -> append {info.name}.lvl{k + 1}", info),
                     (ir.Store(starts, BinOp("+", f.pos, one), nnz),), info)
    q, q_stop, last, j = (Var(ctx.fresh(n)) for n in ("q", "q_stop", "last", "j"))
    pre = (Declare(q, "int64", Load(starts, f.pos)), Declare(q_stop, "int64", Load(starts, BinOp("+", f.pos, one))),
           Declare(last, "int64", Select(BinOp("<", q, q_stop), BinOp("+", Load(crd, BinOp("-", q_stop, one)), one),
                                         Const(0, "int64"))))
    stepper = Stepper(seek=lambda start: tuple(search_stmts(q, crd, q_stop, start, ctx.fresh)),
                      stop=BinOp("+", j, one), chunk=Spike(Fill(fill_value(info)), child_fiber(f, q)),
                      next=(CompoundAssign("+", q, one),), preamble=(Declare(j, "int64", Load(crd, q)),))
    return Thunk(pre, Sequence((Phase(last, stepper), Phase(None, Fill(fill_value(info))))))


class SortedWriter(level_writers.LevelWriter):
    """Its kernel parameters: the starts (one per parent position, allocated by the runtime), the
    count of entries and the growing coordinates and values; declare and freeze are the defaults
    (the count restarts; the starts are carried past fibers never written)."""

    def params(self, info, k):
        if k != len(info.levels) - 1:
            return None
        idt, nnz = info.levels[k].index_dtype.name, info.array(k, "nnz")
        return (Buffer(info.array(k, "starts"), idt, "inout"), OutScalar(nnz, "int64"),
                Growable(info.array(k, "crd"), idt, nnz), Growable(info.array(None, "vals"), info.dtype, nnz))


@pytest.fixture
def registered():
    """``Sorted`` registered as a user registers a format (its unfurl, updatable, and its writer),
    for this test only."""
    looplet_levels.register_unfurl(Sorted, unfurl_sorted, updatable=True)
    level_writers.register_output(Sorted, SortedWriter())
    yield Sorted
    _forget()


def _forget():
    looplet_levels.UNFURL.pop(Sorted, None)
    looplet_levels.UPDATABLE.discard(Sorted)
    level_writers.WRITERS.pop(Sorted, None)


M = np.array([[0, 0, 5.0, 0, 0, 7.0, 0], [3.0, 0, 0, 0, 0, 0, 0], [0] * 7, [0, 1.0, 2.0, 0, 0, 0, -1.0]])
SORTED = Format(Dense(Sorted(Element(0.0))))


def test_a_new_format_is_written_and_read(registered):
    A, B = Tensor.from_numpy(M, SORTED), Tensor.from_numpy(-M[:, ::-1].copy(), "csr")
    expr = "C[i, j] = A[i, j] + B[i, j]"
    k = check_lowered(expr, out=SORTED, strategy="looplets", A=A, B=B)
    C = k(A=A, B=B)
    assert type(C.levels[1]) is Sorted and "C1_starts" in k.c_source and "C1_pos" not in k.c_source
    want = ss.evaluate(expr, A=M, B=-M[:, ::-1])[0]
    np.testing.assert_array_equal(C.to_numpy(), want)
    # (stored as from_numpy stores it: no entry of the fill, the rows' starts carried past row 2)
    stored = Tensor.from_numpy(want, SORTED).levels[1]
    assert C.levels[1].starts.tolist() == stored.starts.tolist() and C.levels[1].crd.tolist() == stored.crd.tolist()


def test_a_new_format_is_reduced_over(registered):
    A = Tensor.from_numpy(M, SORTED)
    x = np.arange(7.0)
    k = check_lowered("y[i] = A[i, j] * x[j]", strategy="looplets", A=A, x=x)
    np.testing.assert_array_equal(k(A=A, x=x).to_numpy(), M @ x)


def test_a_format_without_a_writer_is_refused_by_name(registered):
    """Registered updatable with no writer, the output is refused naming it and the registration."""
    level_writers.WRITERS.pop(Sorted)
    A = Tensor.from_numpy(M, "csr")
    with pytest.raises(StrategyError, match=r"output C: level 1 \(Sorted\) has no looplet writer .*register_output"):
        ss.lower("C[i, j] = A[i, j]", strategy="looplets", C=SORTED, A=A)


@dataclass(frozen=True, eq=False, repr=False)
class Chained(Sorted):
    """``Sorted`` saying it is appended under an appended level (DCSR's, CSF's lower levels): its
    starts grow with the parent's entries, so it nests under and over a SparseList."""

    name: ClassVar[str] = "Chained"
    appends_nested: ClassVar[bool] = True


@pytest.fixture
def chained():
    """``Chained`` registered as ``Sorted`` is (its unfurl, updatable, and its writer), for one test."""
    looplet_levels.register_unfurl(Chained, unfurl_sorted, updatable=True)
    level_writers.register_output(Chained, SortedWriter())
    yield Chained
    looplet_levels.UNFURL.pop(Chained, None)
    looplet_levels.UPDATABLE.discard(Chained)
    level_writers.WRITERS.pop(Chained, None)


@pytest.mark.parametrize("nesting", ["under", "over", "both"])
def test_a_new_format_nests_with_a_sparse_list(chained, nesting):
    """Under a SparseList, over one, or under itself, the output's nested assembly asks the level
    for its arrays' names (``C0_starts``, ``C1_crd``: once spelt ``pos`` and ``idx``), and the
    kernel builds what ``from_numpy`` stores: rows with no entry dropped, each fiber's starts."""
    from compiler.levels import SparseList
    root = {"under": SparseList(Chained(Element(0.0))), "over": Chained(SparseList(Element(0.0))),
            "both": Chained(Chained(Element(0.0)))}[nesting]
    out = Format(root)
    A, B = Tensor.from_numpy(M, "csr"), Tensor.from_numpy(-M[:, ::-1].copy(), "dcsr")
    expr = "C[i, j] = A[i, j] + B[i, j]"
    k = check_lowered(expr, out=out, strategy="looplets", A=A, B=B)
    for m, lvl in enumerate(out.levels):   # (each level's arrays under its own names, and no other's)
        assert all(f"C{m}_{a}" in k.c_source for a in lvl.array_dtypes())
        assert type(lvl) is SparseList or f"C{m}_pos" not in k.c_source and f"C{m}_idx" not in k.c_source
    want = ss.evaluate(expr, A=M, B=-M[:, ::-1])[0]
    C = k(A=A, B=B)
    np.testing.assert_array_equal(C.to_numpy(), want)
    stored = Tensor.from_numpy(want, out)
    for got, exp in zip(C.levels, stored.levels):
        assert type(got) is type(exp)
        for name, a in exp.arrays().items():
            assert got.arrays()[name].tolist() == a.tolist(), name
