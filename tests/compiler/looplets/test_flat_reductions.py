"""compiler.looplets.flat_reductions: a reduction of every entry of a matrix whose levels ravel (CSR, CSC,
a dense matrix, COO) is one walk over its stored entries, not a walk per row, and a max folds its gaps and
NaN once, as the lattice's fuse(i, j) pos does. Each kernel against the dense reference evaluator and the
lattice strategy's, by example and by hypothesis over formats, shapes, densities and fill values, NaN and
±inf among the stored values too."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings

import compiler as ss
from compiler import array as xp
from compiler.imperative.ir import For, While
from compiler.imperative.traverse import walk
from compiler.looplets import loop_program

from tests.compiler.looplets.gap_cases import reductions

INF, NAN = float("inf"), float("nan")
PROGRAMS = ["s[] = A[i, j]", "s[] = max[i, j](A[i, j])", "s[] = min[i, j](A[i, j])",
            "s[] = sum[i, j](A[i, j] * 2 + 1)", "s[] = prod[i, j](A[i, j])"]
RAVELLED = ["csr", "csc", "coo", "dense", "dcsr"]


def check(program, fill, M, fmt="csr", **others):
    A = ss.Tensor.from_numpy(M, fmt, fill=fill, name="A")
    want, _ = ss.evaluate(program, A=A, **others)
    k = ss.lower(program, strategy="looplets", A=A, **others)
    got = k(A=A, **others).to_numpy()
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float), rtol=1e-12, equal_nan=True,
                               err_msg=f"{program} fill {fill} {fmt}")
    lattice = ss.lower(program, strategy="lattice", A=A, **others)(A=A, **others).to_numpy()
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(lattice, float), rtol=1e-12, equal_nan=True)
    return k


def loops(k) -> int:
    return sum(isinstance(n, (For, While)) for n in walk(k.lowered.function.body))


def ravelled(k) -> bool:
    return any(s.stage == "ravel" for s in k.trace.steps)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr"])
@pytest.mark.parametrize("program", ["s[] = A[i, j]", "s[] = max[i, j](A[i, j])"])
def test_a_sum_or_a_max_of_every_entry_is_one_walk_over_the_stored_entries(program, fmt):
    M = np.array([[0.0, 3.0, 0.0, -1.0], [-2.0, NAN, -1.0, -7.0], [0.0, 0.0, 0.0, 0.0], [-4.0, 0.0, INF, 0.0]])
    k = check(program, 0.0, M, fmt)
    c = k.c_source
    # one loop, over all of A's positions: no loop over the rows, nor a row's NaN and gaps folded per row
    assert ravelled(k) and loops(k) == 1, c
    # (from the first row's entries to the last's: a DCSR's stored rows, a COO's one list of tuples)
    bounds = {"coo": ("A0_pos[0]", "A0_pos[1]"), "dcsr": ("A1_pos[rA_start]", "A1_pos[rA_stop]")}
    assert all(b in c for b in bounds.get(fmt, ("A1_pos[0]", "A1_pos[A0_size]"))), c
    # (nor the last entry's coordinate to stop at, the row of a CSR's a search: nothing is left to do past it)
    assert "lower_bound" not in c and "lastA" not in c, c
    k_ = "j_i" if fmt == "csc" else "i_j"   # (the loops in storage order: a CSC's columns first)
    if "max" in program:
        assert f"{k_}_missing = A0_size * A1_size - (qA_stop - qA);" in c and c.count("isnan(") == 1, c
    step = next(s for s in k.trace.steps if s.stage == "ravel")
    assert f"ravel(A)[{k_}]" in step.after and f"for {k_} = 0:A0_size * A1_size" in step.after, step.after


@pytest.mark.parametrize("fmt", ["csr", "coo"])
def test_a_sum_of_a_matrix_stored_around_five_adds_five_once_per_coordinate_not_stored(fmt):
    M = np.array([[5.0, 3.0, 5.0, -1.0], [5.0] * 4, [-4.0, 5.0, 2.0, 5.0]])
    k = check("s[] = A[i, j]", 5.0, M, fmt)
    assert ravelled(k) and loops(k) == 1 and "s_2 += (double)i_j_missing * 5.0;" in k.c_source, k.c_source


@pytest.mark.parametrize("fmt", ["csr", "coo"])
@pytest.mark.parametrize("program", ["s[] = A[i, j] * A[i, j]", "s[] = max[i, j](A[i, j] * A[i, j] - A[i, j])"])
def test_a_matrix_read_more_than_once_is_walked_once(program, fmt):
    # (the sum of squares, a Frobenius norm's: each read of A the same walk, not a merge of one walk per read)
    M = np.array([[0.0, 3.0, 0.0, -1.0], [-2.0, NAN, 0.0, 4.0], [0.0] * 4])
    k = check(program, 0.0, M, fmt)
    assert ravelled(k) and loops(k) == 1 and "A_val[pA] * A_val[pA]" in k.c_source, k.c_source
    a = xp.asarray(ss.Tensor.from_numpy(np.nan_to_num(M), fmt))
    assert ravelled(ss.lower(xp.sum(a * a), strategy="looplets"))


def test_an_any_of_every_entry_walks_them_all_and_stops_at_the_first_true():
    M = np.array([[0.0, 3.0, 0.0], [-2.0, 0.0, 5.0]])
    k = check("s[] = any[i, j](A[i, j] > 2)", 0.0, M)
    c = k.c_source
    assert ravelled(k) and loops(k) == 1 and "break;" in c and "lower_bound" not in c, c


def test_a_dense_matrix_is_summed_as_one_vector():
    M = np.arange(12.0).reshape(3, 4)
    k = check("s[] = A[i, j]", 0.0, M, "dense")
    assert loops(k) == 1 and "A_val[i_j]" in k.c_source, k.c_source


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("fill", [0.0, 5.0, -INF, INF, NAN])
@pytest.mark.parametrize("fmt", RAVELLED)
def test_every_format_and_fill_with_special_values_stored(program, fill, fmt):
    M = np.array([[fill, 3.0, fill, -1.0, fill], [-2.0, NAN, -1.0, INF, fill], [fill] * 5, [-INF, 2.0, 4.0, 1.0, fill]])
    k = check(program, fill, M, fmt)
    if fmt in ("csr", "coo", "dense", "dcsr"):
        assert ravelled(k), k.trace.steps


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("shape", [(0, 3), (4, 0), (0, 0), (1, 1)])
@pytest.mark.parametrize("fmt", RAVELLED)
def test_empty_and_one_entry_matrices(program, shape, fmt):
    check(program, 0.0, np.full(shape, 2.0), fmt)
    check(program, 3.0, np.full(shape, 3.0), fmt)   # (all fill: nothing stored)


@pytest.mark.parametrize("program", [
    "y[i] = A[i, j]",                    # a row's sum: the output is on i
    "s[] = A[i, j] * x[j]",              # j read elsewhere
])
def test_a_reduction_that_reads_an_index_elsewhere_keeps_its_loops(program):
    M = np.array([[0.0, 3.0, 0.0], [-2.0, 0.0, 5.0]])
    others = {"x": ss.Tensor.from_numpy(np.array([1.0, 2.0, 3.0]), "dense", name="x")} if "x[" in program else {}
    k = check(program, 0.0, M, **others)
    assert not ravelled(k) and loops(k) >= 2, k.c_source


def test_a_loop_program_over_a_window_of_the_rows_keeps_its_loops():
    @loop_program
    def some_rows(s, A):
        for i in range(1, 3):
            for j in _:
                s += A[i, j]
    M = np.array([[1.0, 0.0], [2.0, 3.0], [0.0, 4.0], [5.0, 0.0]])
    A = ss.Tensor.from_numpy(M, "csr", name="A")
    k = ss.lower(some_rows, strategy="looplets", s="dense", A=A)
    assert not ravelled(k)
    assert k(A=A).to_numpy() == 9.0


def test_the_array_front_ends_sum_and_max_walk_once():
    M = np.array([[0.0, 3.0, 0.0], [-2.0, 0.0, 5.0], [0.0, 0.0, -1.0]])
    a = xp.asarray(ss.Tensor.from_numpy(M, "csr"))
    for f, want in ((xp.sum, M.sum()), (xp.max, M.max()), (xp.min, M.min())):
        expr = f(a)
        assert expr.compute(strategy="looplets").to_numpy() == want
        k = ss.lower(expr, strategy="looplets")
        assert ravelled(k) and loops(k) == 1, k.c_source


@settings(max_examples=40, deadline=None)
@given(reductions(PROGRAMS, RAVELLED))
def test_reductions_of_every_entry_by_property(case):
    program, fill, M, fmt = case
    check(program, fill, M, fmt)


M = np.array([[0.0, 3.0, 0.0, 1.0], [0.0] * 4, [2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 5.0, 6.0]])
CSR = sp.csr_matrix(M)
#: the levels' arrays of M stored as CSR, and as DCSR with its empty row 1 stored too (an empty fiber between two)
LEVELS = {"csr": {"A1_pos": CSR.indptr, "A1_idx": CSR.indices},
          "dcsr": {"A0_pos": np.array([0, 4]), "A0_idx": np.array([0, 1, 2, 3]), "A1_pos": CSR.indptr,
                   "A1_idx": CSR.indices}}


@pytest.mark.parametrize("fmt", ["csr", "dcsr"])
def test_a_flat_walks_positions_give_each_entrys_raveled_coordinate_and_search_for_one(fmt):
    # (the walks this module makes read neither: a coordinate and a search are asked for only where a walk stops
    # inside the extent; run here through the IR interpreter against the matrix's own raveled coordinates)
    from compiler.format import parse_format
    from compiler.imperative.interpreter import interpret
    from compiler.imperative.ir import Block, Buffer, Const, Declare, Function, Scalar, Store, Var
    from compiler.looplets.fibers import TensorInfo, UnfurlContext
    from compiler.looplets.raveled import RaveledFiber
    at = [r * 4 + c for r in range(4) for c in CSR.indices[CSR.indptr[r]:CSR.indptr[r + 1]]]
    info = TensorInfo.from_format("A", parse_format(fmt), "input")
    nest = RaveledFiber(info.root(), flat=True).unfurl(UnfurlContext(), "read")
    P = nest.body.phases[0].body.positions
    assert P.walks_whole
    targets = list(range(17))
    stmts = list(nest.preamble)
    for p in range(len(at)):
        stmts.append(Store("coords", Const(p, "int64"), P.coord(Const(p, "int64"))))
    for t in targets:
        var = Var(f"found_{t}")
        stmts += [Declare(var, "int64", P.q), *P.search(var, Const(t, "int64")), Store("found", Const(t, "int64"), var)]
    arrays = {k: np.asarray(v, np.int64) for k, v in LEVELS[fmt].items()}
    fn = Function("probe", (Scalar("A0_size", "int64"), Scalar("A1_size", "int64"),
                            *(Buffer(k, "int64") for k in arrays), Buffer("coords", "int64", "inout"),
                            Buffer("found", "int64", "inout")), Block(tuple(stmts)))
    coords, found = np.zeros(len(at), np.int64), np.zeros(len(targets), np.int64)
    interpret(fn, A0_size=4, A1_size=4, coords=coords, found=found, **arrays)
    assert coords.tolist() == at
    # the first position whose raveled coordinate is at or past the target (the end past the last entry)
    assert found.tolist() == [next((p for p, c in enumerate(at) if c >= t), len(at)) for t in targets]
