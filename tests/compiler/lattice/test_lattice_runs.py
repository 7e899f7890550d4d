"""RunList and SparseRunList as inputs of the lattice strategy (issue 29, item 2).

Their iterators (:mod:`compiler.lattice.run_iterators`) walk each run's coordinates, the run kept
beside the coordinate, and every coordinate's child is its run. Each kernel is checked against the
dense oracle (compiler.evaluate), the IR interpreter and a bounds-checked build: SpMV, an
elementwise sum into CSR, an elementwise product into a dense output and a diagonal, over matrices
whose second level holds runs, and over vectors of runs; fills 0, 1, NaN and inf, values NaN and
±inf among the runs.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.format import Format, csr, dense
from compiler.levels import Dense, Element, RunList, SparseRunList
from compiler.testing import check_lowered, random_sparse

import level_cases
from level_cases import check_walks_back, interpreted_case, level_matrix, matrix_case, vector_case

LEVELS = [RunList, SparseRunList]
FILLS = [0.0, 1.0, float("nan"), float("inf")]

#: the shared programs (level_cases), and two reductions of a matrix of runs
MATRIX = {**level_cases.MATRIX, "y[i] = A[i, j]": None, "s = A[i, j]": None}
VECTOR = level_cases.VECTOR


def runs(shape, rng, fill, values=(1.0, 2.0, float("nan"), float("inf"), -float("inf"))):
    """An array whose rows are runs of 1 to 3 equal values, each the fill (half the time) or one of ``values``."""
    m, n = shape
    a = np.full((m, n), fill)
    for r in range(m):
        c = 0
        while c < n:
            k = int(rng.integers(1, 4))
            if rng.random() < 0.5:
                a[r, c:c + k] = values[int(rng.integers(0, len(values)))]
            c += k
    return a


def run_matrix(a, fill=0.0, level=RunList):
    return level_matrix(a, fill, level)


A4 = np.array([[2.0, 2.0, 2.0, 0.0], [0.0] * 4, [0.0, 3.0, 3.0, 5.0], [1.0, 0.0, 4.0, 4.0]])
B4 = np.array([[1.0, 0.0, 0.0, 4.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [7.0, 0.0, 5.0, 0.0]])


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("prog", MATRIX)
def test_a_run_matrix_against_the_oracle(level, prog):
    """Runs of several coordinates, a row all fill, runs that touch and runs apart."""
    matrix_case(prog, A4, B4, np.arange(1.0, 5.0), 0.0, level, MATRIX)


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("prog", VECTOR)
def test_a_run_vector_against_the_oracle(level, prog):
    vector_case(prog, B4, np.array([0.0, 3.0, 3.0, 0.0]), np.array([1.0, 0.0, 2.0, 2.0]), 0.0, level)


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(0, 5), n=st.integers(0, 7), fill=st.sampled_from(FILLS), prog=st.sampled_from(sorted(MATRIX)),
       seed=st.integers(0, 2 ** 16))
@example(m=3, n=6, fill=float("nan"), prog="C[i, j] = A[i, j] + B[i, j]", seed=1)
@example(m=4, n=4, fill=1.0, prog="y[i] = A[i, i]", seed=0)
@example(m=2, n=5, fill=float("inf"), prog="y[i] = A[i, j] * x[j]", seed=2)
@example(m=2, n=6, fill=1.0, prog="s = A[i, j]", seed=5)
def test_run_matrix_property(level, m, n, fill, prog, seed):
    """Rows of runs of any lengths and values (the fill's, NaN, ±inf), any fill, against the oracle."""
    if "A[i, i]" in prog:
        n = m
    rng = np.random.default_rng(seed)
    matrix_case(prog, runs((m, n), rng, fill), random_sparse((m, n), 0.5, rng, fill=fill),
                random_sparse((n,), 1.0, rng), fill, level, MATRIX)


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 9), fill=st.sampled_from(FILLS), prog=st.sampled_from(sorted(VECTOR)),
       seed=st.integers(0, 2 ** 16))
@example(n=0, fill=0.0, prog="s = v[i] * w[i]", seed=0)
@example(n=7, fill=float("nan"), prog="z[i] = v[i] + w[i]", seed=3)
def test_run_vector_property(level, n, fill, prog, seed):
    rng = np.random.default_rng(seed)
    v = runs((1, n), rng, fill)[0]
    vector_case(prog, random_sparse((3, n), 0.5, rng), v, random_sparse((n,), 0.5, rng, fill=fill), fill, level)


def test_a_run_list_row_reads_its_runs_value_at_each_coordinate():
    """The loop walks every coordinate of the row with the run holding it kept beside it (moved on
    at each run's end), and reads that run's value."""
    k = check_lowered("y[i] = A[i, j] * x[j]", checked=True, A=run_matrix(A4), x=np.arange(1.0, 5.0))
    src = k.c_source
    assert "for (int64_t pA1 = 0; pA1 < A1_size; pA1++)" in src
    assert "int64_t rA1 = A1_pos[i];" in src and "while (A1_right[rA1] <= pA1)" in src
    assert "A_val[rA1]" in src
    np.testing.assert_array_equal(k(A=run_matrix(A4), x=np.arange(1.0, 5.0)).to_numpy(), A4 @ np.arange(1.0, 5.0))


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
def test_runs_are_walked_backwards_through_the_iterator(level):
    """From each row's last coordinate in its last run, the run moved down as the coordinate crosses a
    run's start (a SparseRunList's jumping the gap down to the run before), and a seek down to the last
    coordinate at or below a target (``seek_back_stmts``): runs touching both ends, one-coordinate runs, a
    row all fill, a run of NaN; a vector; an extent 0."""
    check_walks_back(run_matrix(A4, level=level))
    check_walks_back(level_cases.level_vector(np.array([1.0, 0, 2.0, 2.0, 0, 0, np.nan, np.nan, 3.0]), 0.0, level))
    check_walks_back(run_matrix(np.zeros((2, 0)), level=level))


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
@settings(max_examples=7, deadline=None)
@given(m=st.integers(1, 3), n=st.integers(0, 9), fill=st.sampled_from(FILLS), seed=st.integers(0, 2 ** 16))
def test_runs_walked_backwards_by_property(level, m, n, fill, seed):
    check_walks_back(run_matrix(runs((m, n), np.random.default_rng(seed), fill), fill, level))


def test_a_sparse_run_list_row_jumps_the_gaps_between_runs():
    """Only the runs' coordinates are visited: at a coordinate before its run's start the walk jumps
    to that start. A row of runs apart (1..2 and 5..6) meets a dense vector only there."""
    a = np.array([[0.0, 2.0, 2.0, 0.0, 0.0, 3.0, 3.0, 0.0]])
    x = np.arange(1.0, 9.0)
    k = check_lowered("y[i] = A[i, j] * x[j]", checked=True, A=run_matrix(a, level=SparseRunList), x=x)
    assert "if (pA1 < A1_left[rA1])" in k.c_source
    np.testing.assert_array_equal(k(A=run_matrix(a, level=SparseRunList), x=x).to_numpy(), [2 * 2 + 2 * 3 + 3 * 6 + 3 * 7])


@pytest.mark.parametrize("prog", ["s = A[i, j]", "y[i] = A[i, j]"])
def test_the_fill_between_sparse_runs_is_folded_in(prog):
    """A sum over a SparseRunList of fill 1 adds the fill once for every coordinate no run holds:
    the walk jumps the gaps, so the coordinates it visits are counted, not the span of its bounds
    (which counted the gap 3..4 as visited: 15 for 17)."""
    a = np.array([[1.0, 3.0, 3.0, 1.0, 1.0, 2.0], [1.0] * 6])
    k = check_lowered(prog, checked=True, A=run_matrix(a, 1.0, SparseRunList))
    assert "j_ran" in k.c_source


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
def test_a_run_diagonal_bisects_the_runs(level):
    a = np.array([[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 7.0], [4.0, 4.0, 4.0, 4.0]])
    k = check_lowered("y[i] = A[i, i]", checked=True, A=run_matrix(a, level=level))
    assert "int64_t loA1 = lower_bound_int64(A1_right, A1_pos[i], endA1, i + 1);" in k.c_source   # (the first run ending past i)
    np.testing.assert_array_equal(k(A=run_matrix(a, level=level)).to_numpy(), np.diag(a))


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
def test_runs_under_runs(level):
    """A run level under a run level: the lower level's fibers are the upper one's runs."""
    a = np.zeros((2, 3, 4))
    a[0, :2, 1:3] = 5.0
    a[1, 2, :] = 2.0
    A = Tensor.from_numpy(a, Format(level(level(level(Element(0.0))))))
    k = check_lowered("y[i] = A[i, j, k]", checked=True, A=A)
    np.testing.assert_array_equal(k(A=A).to_numpy(), a.sum(axis=(1, 2)))


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
def test_a_split_of_a_merged_run_loop(level):
    """A coordinate split of a loop merging the runs with CSR: each block resumes at the positions
    the last one stopped at, its run moved on (while, not if, past several runs)."""
    from compiler.lattice.schedule import Schedule
    a = runs((3, 11), np.random.default_rng(4), 0.0, values=(1.0, 2.0))
    b = random_sparse((3, 11), 0.4, np.random.default_rng(5))
    check_lowered("C[i, j] = A[i, j] + B[i, j]", Schedule().split("j", "j0", "j1", 3), out=dense(2), checked=True,
                  A=run_matrix(a, level=level), B=Tensor.from_numpy(b, csr()))


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("prog", ["y[i] = A[i, j] * x[j]", "C[i, j] = A[i, j] + B[i, j]", "y[i] = A[i, i]"])
def test_the_cfir_interpreter_reads_each_run_level(level, prog):
    interpreted_case(prog, {"A": run_matrix(A4, level=level), "B": Tensor.from_numpy(B4, csr()),
                            "x": Tensor.from_numpy(np.arange(1.0, 5.0), dense(1))})


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
def test_a_run_kernels_trace_round_trips(level):
    """The trace holds the run iterators (in the CFIR); it is saved and read back."""
    from compiler.trace import Trace
    k = lower("y[i] = A[i, j] * x[j]", "lattice", A=run_matrix(A4, level=level), x=np.ones(4))
    back = Trace.from_json(k.trace.to_json())
    assert [s.stage for s in back.steps] == k.trace.stages()


def test_a_run_matrix_is_named_in_the_iteration_graph():
    k = lower("y[i] = A[i, j] * x[j]", "lattice", A=run_matrix(A4, level=SparseRunList), x=np.ones(4))
    graph = next(s for s in k.trace.steps if s.stage == "iteration-graph")
    assert "j (SparseRunList" in graph.artifacts[0].text


# -- a sum over runs adds each run's value times its length ----------------------------------------

@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("prog", ["s = A[i, j]", "y[i] = A[i, j]"])
def test_a_sum_over_runs_adds_each_runs_value_times_its_length(level, prog):
    """The loop over j runs over the runs, not their coordinates, and the trace says why."""
    a = np.array([[2.0, 2.0, 2.0, 0.0, 5.0, 5.0], [0.0] * 6, [1.5] * 6])
    k = check_lowered(prog, checked=True, A=run_matrix(a, level=level))
    assert "for (int64_t rA1 = A1_pos[i]; rA1 < A1_pos[i + 1]; rA1++)" in k.c_source
    assert "pA1" not in k.c_source
    assert any("times the run's length" in (st.note or "") for st in k.trace.steps)


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
def test_integer_runs_sum_exactly(level):
    a = np.array([[3, 3, 3, 3, 0, 7], [0, 0, 0, 0, 0, 0], [2 ** 40, 2 ** 40, 1, 1, 1, 0]], dtype=np.int64)
    A = Tensor.from_numpy(a, Format(Dense(level(Element(0)))))
    k = check_lowered("y[i] = A[i, j]", A=A)
    assert "A1_pos[i + 1]; rA1++" in k.c_source
    np.testing.assert_array_equal(k(A=A).to_numpy(), a.sum(axis=1))


@pytest.mark.parametrize("prog", ["y[i] = A[i, j] * x[j]", "y[i] = max[j](A[i, j] + x[j])"])
def test_a_body_that_reads_the_coordinate_walks_the_coordinates(prog):
    """SpMV's A[i, j] * x[j] changes within a run: each coordinate is visited (no run shortcut)."""
    k = check_lowered(prog, A=run_matrix(A4), x=np.arange(1.0, 5.0))
    assert "rA1 < A1_pos[i + 1]; rA1++" not in k.c_source and "while (A1_right[rA1] <= " in k.c_source


def test_a_sum_that_counts_its_coordinates_walks_them():
    """Over a SparseRunList of fill 1 the loop counts the coordinates it visits, to fold the fill in
    for the others: it walks them (a run's count would be its length; not done)."""
    a = np.array([[1.0, 3.0, 3.0, 1.0, 1.0, 2.0]])
    k = check_lowered("y[i] = A[i, j]", A=run_matrix(a, 1.0, SparseRunList))
    assert "j_ran" in k.c_source and "pA1" in k.c_source
