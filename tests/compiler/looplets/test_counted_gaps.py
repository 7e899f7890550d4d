"""compiler.looplets.counted_gaps: the walks of a loop whose gaps each make an idempotent update at their own
coordinate (a column's max over a CSR matrix stored around 0, ``y[j] max= 0`` at each gap) count each
coordinate's entries, and one loop after them makes the update where some walk did not store the coordinate:
no walk visits a gap. Each kernel against the dense reference evaluator and the lattice strategy's, by example
and by hypothesis over formats, shapes, densities and fill values, NaN and ±inf among the stored values too."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings

import compiler as ss
from compiler import array as xp
from compiler.imperative.ir import For, While
from compiler.imperative.traverse import walk

from tests.compiler.looplets.gap_cases import reductions

INF, NAN = float("inf"), float("nan")


def check(program, fill, M, fmt="csr", **others):
    A = ss.Tensor.from_numpy(M, fmt, fill=fill, name="A")
    want, _ = ss.evaluate(program, A=A, **others)
    k = ss.lower(program, strategy="looplets", A=A, **others)
    got = k(A=A, **others).to_numpy()
    np.testing.assert_array_equal(np.asarray(got, float), np.asarray(want, float), err_msg=f"{program} fill {fill}")
    lattice = ss.lower(program, strategy="lattice", A=A, **others)(A=A, **others).to_numpy()
    np.testing.assert_array_equal(np.asarray(got, float), np.asarray(lattice, float))
    return k


def loops(k) -> int:
    return sum(isinstance(n, (For, While)) for n in walk(k.lowered.function.body))


def test_a_columns_max_counts_each_columns_entries_and_visits_no_gap():
    M = np.array([[0.0, 3.0, 0.0, -1.0], [-2.0, -5.0, -1.0, -7.0], [0.0, 0.0, 0.0, 0.0], [-4.0, 0.0, -2.0, 0.0]])
    k = check("y[j] = max[i](A[i, j])", 0.0, M)
    c = k.c_source
    # the walk over a row's entries alone, each counted; after the rows, the fill where a row had a gap
    assert "j_walks += 1;" in c and "j_entries[j_2] += 1;" in c, c
    assert "if (j_entries[j] < j_walks) {" in c, c
    # no loop over a gap, nor over the fill past a row's last entry: the initialization, the rows, their
    # entries, the fold
    assert loops(k) == 4 and "lastA" not in c and "step_stop" not in c, c
    steps = [s.note for s in k.trace.steps if s.stage == "lower:Spike"]
    assert any("the gaps' update counted" in n and "j_entries[j] < j_walks" in n for n in steps), steps


@pytest.mark.parametrize("program", ["y[j] = max[i](A[i, j])", "y[j] = min[i](A[i, j])"])
@pytest.mark.parametrize("fill", [0.0, 5.0, -INF, INF, NAN])
@pytest.mark.parametrize("fmt", ["csr", "dcsr", "coo"])
def test_columns_with_and_without_gaps_and_special_values(program, fill, fmt):
    M = np.array([[fill, 3.0, fill, -1.0, fill], [-2.0, NAN, -1.0, INF, fill], [fill] * 5, [-INF, 2.0, 4.0, 1.0, fill],
                  [fill, fill, fill, 9.0, fill], [7.0, 2.0, fill, fill, fill]])
    k = check(program, fill, M, fmt)
    if fill not in (-INF, INF) and fmt != "coo":   # (a fill that is the operator's identity has no gap to make)
        assert "j_entries" in k.c_source or "max" not in program and fill == INF, k.c_source


def test_no_rows_all_fill_rows_and_full_columns():
    for M in (np.zeros((0, 3)), np.zeros((3, 4)), np.array([[1.0, -2.0], [3.0, -4.0]]), np.array([[0.0, -2.0]])):
        check("y[j] = max[i](A[i, j])", 0.0, M)
        check("y[j] = min[i](A[i, j])", 0.0, M)


def test_a_columns_max_and_min_through_the_arrays():
    M = np.array([[0.0, 3.0, 0.0], [0.0, -0.5, 0.0], [2.0, 0.0, -1.0]])
    a = xp.asarray(ss.Tensor.from_numpy(M, "csr"))
    for e, want in ((xp.max(a, axis=0), M.max(axis=0)), (xp.min(a, axis=0), M.min(axis=0))):
        k = e.lower("dense", strategy="looplets")   # (into a sparse vector the gaps write no entry)
        np.testing.assert_array_equal(k().to_numpy(), want)
        assert "_entries" in k.c_source, k.c_source


@pytest.mark.parametrize("fill", [0.0, 3.0, NAN, INF])
@pytest.mark.parametrize("fmt", ["csr", "dcsr", "coo"])
def test_a_columns_any_or_all_walks_the_rows_once_not_a_search_per_column(fill, fmt):
    M = np.array([[fill, 3.0, fill, -1.0], [-2.0, NAN, fill, INF], [fill] * 4, [5.0, 0.0, fill, 1.0]])
    for program in ("y[j] = any[i](A[i, j] > 2)", "y[j] = all[i](A[i, j] > 2)"):
        k = check(program, fill, M, fmt)
        c = k.c_source
        # the loops in the matrix's order, each entry updating its column at random: no search of a row for
        # each column (a short-circuiting loop over the rows inside the columns' did one)
        assert "lower_bound" not in c and "break;" not in c, c
        assert not any(s.stage == "hoist-reductions" for s in k.trace.steps), [s.stage for s in k.trace.steps]
        if fmt == "csr" and "all" in program and fill == 0.0:   # (false at each gap: folded in by a count)
            assert "j_entries" in c, c
    # a CSC stores the columns first: the loop over the rows inside a column walks it and stops early
    k = check("y[j] = any[i](A[i, j] > 2)", fill, M, "csc")
    assert "break;" in k.c_source and "lower_bound" not in k.c_source, k.c_source


@pytest.mark.parametrize("fill", [1.0, -INF, NAN])
@pytest.mark.parametrize("fmt", ["csr", "dcsr", "coo"])
def test_a_columns_sum_adds_the_fill_once_per_row_that_did_not_store_it(fill, fmt):
    M = np.array([[fill, 3.0, fill, -1.0], [-2.0, NAN, fill, INF], [fill] * 4, [5.0, 0.0, fill, 1.0]])
    for program in ("y[j] = A[i, j]", "y[j] = sum[i](A[i, j] * 2 + 1)"):
        k = check(program, fill, M, fmt)
        if fmt == "csr":   # (no loop over a gap: each column's fill times the rows that did not store it)
            assert "j_walks - j_entries[j]" in k.c_source and "step_stop" not in k.c_source, k.c_source


def test_an_integer_columns_sum_counts_its_gaps():
    M = np.array([[7, 1, 7], [7, 7, 7], [2, 3, 7]], dtype=np.int64)
    A = ss.Tensor.from_numpy(M, "csr", fill=7, name="A")
    k = ss.lower("y[j] = A[i, j]", strategy="looplets", A=A)
    got = k(A=A).to_numpy()
    assert got.dtype == np.int64 and np.array_equal(got, M.sum(axis=0)) and "j_entries" in k.c_source, k.c_source


@pytest.mark.parametrize("program", ["y[k, j] = max[i](A[k, i, j])", "y[k, j] = A[k, i, j]",
                                     "y[k, j] = all[i](A[k, i, j] > 2)"])
@pytest.mark.parametrize("fill", [0.0, 2.0, NAN, -INF])
@pytest.mark.parametrize("fmt", ["Dense(Dense(SparseList(Element({f}))))", "Dense(SparseList(SparseList(Element({f}))))"])
@pytest.mark.parametrize("shape", [(2, 3, 4), (0, 2, 3), (3, 0, 2), (2, 2, 0)])
def test_a_partial_reduction_of_a_3d_tensor_counts_the_walks_of_each_outer_slice(program, fill, fmt, shape):
    rng = np.random.default_rng(len(program) + shape[0])
    T = np.where(rng.random(shape) < 0.5, rng.choice([1.0, 3.0, -2.0, NAN, INF], size=shape), fill)
    A = ss.Tensor.from_numpy(T, fmt.format(f=fill), fill=fill, name="A")
    want, _ = ss.evaluate(program, A=A)
    k = ss.lower(program, strategy="looplets", A=A)
    np.testing.assert_array_equal(np.asarray(k(A=A).to_numpy(), float), np.asarray(want, float))
    lattice = ss.lower(program, strategy="lattice", A=A)(A=A).to_numpy()
    np.testing.assert_array_equal(np.asarray(k(A=A).to_numpy(), float), np.asarray(lattice, float))
    c = k.c_source
    gaps = fill != 0.0 if program == "y[k, j] = A[k, i, j]" else fill not in (-INF,) or "all" in program
    if gaps and "Dense(Dense" in fmt:
        # the count of each k's walks, kept inside the loop over k, the fold after its rows, which starts each
        # count at zero again; the count's array allocated once, before the loop over k
        body = c[c.index("for (int64_t k = 0;"):]
        assert "j_entries = alloc_array" in c[:c.index("for (int64_t k = 0;")], c
        assert body.index("j_walks = 0") < body.index("for (int64_t i = 0;") < body.index("j_entries[j] = 0;"), c
        assert "step_stop" not in c, c
    if gaps and "Dense(Dense" in fmt:   # (the lattice's fold too: its count per j, zero again after each fold)
        lat = ss.lower(program, strategy="lattice", A=A)
        assert "j_ran[j] = 0;" in lat.c_source and "from zero again" in lat.trace.find("cfir")[0].after_text, \
            lat.c_source


def test_a_columns_product_still_stops_at_a_zero():
    # (its gaps multiply each column by the fill, not an update folded in by a count: a column stops at its first 0)
    M = np.array([[0.0, 3.0, 0.0], [2.0, 0.5, 0.0]])
    k = check("y[j] = prod[i](A[i, j])", 0.0, M)
    assert "break;" in k.c_source, k.c_source


def test_where_the_update_differs_or_the_walk_is_cut_the_gaps_are_walked_as_before():
    M = np.array([[1.0, 0.0, -2.0], [0.0, 0.0, -3.0]])
    x = np.array([5.0, -1.0, 2.0])
    # the gap's update reads x at the gap: not a literal
    assert "_entries" not in check("y[j] = max[i](A[i, j] + x[j])", 0.0, M, x=x).c_source
    # (a sum's gaps are counted too: test_a_columns_sum_adds_the_fill_once_per_row_that_did_not_store_it)
    # a window of the columns: the walk's extent is not the whole output
    A = ss.Tensor.from_numpy(M, "csr", name="A")
    k = ss.lower("y[k] = max[i](slice(A[i, j], j -> k, (1, 3, 1)))", strategy="looplets", A=A)
    np.testing.assert_array_equal(k(A=A).to_numpy(), M[:, 1:3].max(axis=0))


CASES = reductions(["y[j] = max[i](A[i, j])", "y[j] = min[i](A[i, j])",
                           "y[j] = max[i](A[i, j]) + min[i](A[i, j])", "y[j] = any[i](A[i, j] > 2)",
                           "y[j] = all[i](A[i, j] > 2)", "y[j] = A[i, j]"],
                   ["csr", "dcsr", "coo", "csc"])


@settings(max_examples=40, deadline=None)
@given(CASES)
@example(("y[j] = max[i](A[i, j])", 0.0, np.array([[NAN, 0.0, 1.5], [0.0, -2.0, 0.0]]), "csr"))
# (the lattice's precompute took the max and the min of A[i, j] into one workspace, the min's: y = w + w)
@example(("y[j] = max[i](A[i, j]) + min[i](A[i, j])", 0.0, np.zeros((0, 1)), "csr"))
def test_column_reductions_over_gaps_agree_with_the_reference(case):
    program, fill, M, fmt = case
    check(program, fill, M, fmt)
