"""compiler.looplets.idempotent_gaps: a walk over stored positions whose gaps all make one idempotent update
(a row's max over a matrix stored around 0) makes it once, where the row has more coordinates than entries,
and reads no coordinate per entry; each kernel against the dense reference evaluator, by example and by
hypothesis over formats, shapes, densities and fill values, NaN and ±inf among the stored values too."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings

import compiler as ss
from compiler.imperative.ir import Load
from compiler.imperative.traverse import walk

from tests.compiler.looplets.gap_cases import reductions

INF, NAN = float("inf"), float("nan")


def check(program, fill, M, fmt="csr"):
    A = ss.Tensor.from_numpy(M, fmt, fill=fill, name="A")
    want, _ = ss.evaluate(program, A=A)
    k = ss.lower(program, strategy="looplets", A=A)
    got = k(A=A).to_numpy()
    np.testing.assert_array_equal(np.asarray(got, float), np.asarray(want, float), err_msg=f"{program} fill {fill}")
    return k


def test_a_rows_max_over_a_fill_zero_matrix_reads_no_coordinate_per_entry():
    M = np.array([[0.0, 3.0, 0.0, -1.0], [-2.0, -5.0, -1.0, -7.0], [0.0, 0.0, 0.0, 0.0], [4.0, 0.0, 0.0, 0.0]])
    k = check("y[i] = max[j](A[i, j])", 0.0, M)
    # no coordinate read at all: not per entry, nor the row's last one (the fill past it is one more gap)
    assert not any(isinstance(n, Load) and n.buffer == "A1_idx" for n in walk(k.lowered.function.body)), k.c_source
    assert any("the gaps' update once" in s.note for s in k.trace.steps)
    # the update once: the row's gap count, then one max with the fill
    assert "j_missing = A1_size - (qA_stop - qA);" in k.c_source and "if (j_missing > 0)" in k.c_source, k.c_source
    # its loop over the row's values runs in SIMD lanes, a NaN kept by a flag (counted_loops, vectorize)
    assert "reduction(max:" in k.c_source, k.c_source


@pytest.mark.parametrize("program", ["y[i] = max[j](A[i, j])", "y[i] = min[j](A[i, j])", "y[] = max[i, j](A[i, j])",
                                     "y[i] = max[j](A[i, j]) + min[j](A[i, j])"])
@pytest.mark.parametrize("fill", [0.0, 5.0, -INF, INF, NAN])
def test_rows_with_and_without_gaps_and_special_values(program, fill):
    M = np.array([[fill, 3.0, fill, -1.0], [-2.0, NAN, -1.0, INF], [fill] * 4, [-INF, 2.0, 4.0, 1.0],
                  [fill, fill, fill, 9.0], [7.0, fill, fill, fill]])
    check(program, fill, M)


def test_a_window_of_a_row_counts_its_own_coordinates():
    # a slice of the columns: the walk seeks the window's start and searches its end, and counts the window's gaps
    M = np.array([[0.0, -3.0, 0.0, -1.0, 0.0, -2.0], [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0], [0.0] * 6])
    A = ss.Tensor.from_numpy(M, "csr", name="A")
    for lo, hi in ((1, 4), (0, 2), (3, 6), (1, 2)):
        program = f"y[i] = max[k](slice(A[i, j], j -> k, ({lo}, {hi}, 1)))"
        want = M[:, lo:hi].max(axis=1)
        got = ss.lower(program, strategy="looplets", A=A)(A=A).to_numpy()
        np.testing.assert_array_equal(got, want, err_msg=program)


def test_an_update_that_varies_with_the_gap_keeps_walking_the_gaps_and_a_sum_counts_them():
    M = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    # + is not idempotent: a fill-1 row sum adds the fill once per gap, times the row's gap count
    k = check("y[i] = A[i, j]", 1.0, np.where(M == 0, 1.0, M))
    assert "] += j_missing;" in k.c_source and "A1_idx[" not in k.c_source, k.c_source
    # the column max updates y[j], a different target at each gap: no fold once in a walk (the walks' gaps are
    # counted per column instead: test_counted_gaps)
    k = check("y[j] = max[i](A[i, j])", 0.0, M)
    assert "_missing" not in k.c_source and "j_entries" in k.c_source
    # a dense operand beside the walk: the gap's update reads it at the gap's coordinate
    x = np.array([5.0, -1.0, 2.0])
    A = ss.Tensor.from_numpy(M, "csr", name="A")
    program = "y[i] = max[j](A[i, j] + x[j])"
    want, _ = ss.evaluate(program, A=A, x=x)
    k = ss.lower(program, strategy="looplets", A=A, x=x)
    np.testing.assert_array_equal(k(A=A, x=x).to_numpy(), want)
    assert "_missing" not in k.c_source


@pytest.mark.parametrize("program", ["y[i] = A[i, j]", "y[] = A[i, j]", "y[i] = sum[j](A[i, j] * 2 + 1)"])
@pytest.mark.parametrize("fill", [0.0, 5.0, -INF, INF, NAN])
@pytest.mark.parametrize("fmt", ["csr", "coo"])
def test_a_sums_gaps_add_the_fill_times_their_count(program, fill, fmt):
    M = np.array([[fill, 3.0, fill, -1.0], [-2.0, NAN, -1.0, INF], [fill] * 4, [-INF, 2.0, 4.0, 1.0],
                  [fill, fill, fill, 9.0], [7.0, fill, fill, fill]])
    k = check(program, fill, M, fmt)
    fold = "* 2 + 1" in program or fill != 0.0
    # no loop over a gap: the walk's entries, then the fill (or 1 + 2 * fill) added once times the gaps' count
    assert ("_missing" in k.c_source) == fold, k.c_source
    # (a COO's rows are steps over its row coordinates, the rows without an entry among them)
    assert "step_stop" not in k.c_source or fmt == "coo" and "y[i]" in program, k.c_source
    if fold and fill == fill and abs(fill) != INF:   # (a finite fill is added unguarded: n * 5 is 0 for no gap)
        assert "if (0 < " not in k.c_source, k.c_source


def test_an_integer_sums_gaps_count_in_64_bits():
    M = np.array([[7, 1, 7, 7], [7, 7, 7, 7], [2, 3, 4, 5]], dtype=np.int32)
    A = ss.Tensor.from_numpy(M, "csr", fill=7, name="A")
    for program, want in (("y[i] = A[i, j]", M.sum(axis=1)), ("y[] = A[i, j]", M.sum())):
        k = ss.lower(program, strategy="looplets", A=A)
        got = k(A=A).to_numpy()
        assert got.dtype == np.int64 and np.array_equal(got, want), (got, k.c_source)
        assert "_missing" in k.c_source, k.c_source


def test_a_sparse_vectors_max_and_an_empty_one():
    for v in ([0.0, 0.0, -3.0, 0.0], [0.0] * 5, [-1.0, -2.0], []):
        a = ss.Tensor.from_numpy(np.array(v), "sparse", name="a")
        want, _ = ss.evaluate("y[] = max[i](a[i])", a=a)
        got = ss.lower("y[] = max[i](a[i])", strategy="looplets", a=a)(a=a).to_numpy()
        np.testing.assert_array_equal(got, want)


CASES = reductions(["y[i] = max[j](A[i, j])", "y[i] = min[j](A[i, j])", "y[] = min[i, j](A[i, j])",
                           "y[j] = max[i](A[i, j])", "y[i] = A[i, j]", "y[] = A[i, j]"],
                   ["csr", "csc", "dcsr", "coo"])


@settings(max_examples=60, deadline=None)
@given(CASES)
@example(("y[i] = max[j](A[i, j])", 0.0, np.array([[NAN, 0.0, 1.5]]), "csr"))
def test_reductions_over_gaps_agree_with_the_reference(case):
    program, fill, M, fmt = case
    check(program, fill, M, fmt)
