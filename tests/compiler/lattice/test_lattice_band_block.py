"""SparseBand and SparseBlockList as inputs of the lattice strategy (issue 29, item 2).

A band's fiber stores the contiguous coordinates ``lo..hi`` (the fill too, where it falls inside),
so its iterator walks positions as a SparseList's does and computes each coordinate from its
position, ``p + (idx[parent] - ofs[parent + 1])`` (:mod:`compiler.lattice.block_iterators`); a
block list's fiber is contiguous positions too, its coordinate ``p + (idx[r] - ofs[r + 1])`` for
the block ``r`` the kernel keeps beside the position. Each
kernel is checked against the dense oracle (compiler.evaluate), the IR interpreter and a
bounds-checked build: SpMV, an elementwise sum into CSR, an elementwise product into a dense
output and a diagonal, over matrices whose second level is the band or block list, and over vectors of them.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.errors import StrategyError
from compiler.format import Format, csr, dense, sparse_vector
from compiler.levels import Dense, Element, RunList, SparseBand, SparseBlockList, SparseInterval, SparseList, SparsePoint
from compiler.testing import check_lowered, random_sparse
from compiler.trace import Trace

from level_cases import (MATRIX, VECTOR, check_walks_back, interpreted_case, level_matrix, level_vector, matrix_case,
                         vector_case)


def band_matrix(a, fill=0.0, level=SparseBand):
    return level_matrix(a, fill, level)


def band_vector(v, fill=0.0, level=SparseBand):
    return level_vector(v, fill, level)


LEVELS = [SparseBand, SparseBlockList]


A4 = np.array([[0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, 5.0, 6.0]])
B4 = np.array([[1.0, 0.0, 0.0, 4.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [7.0, 0.0, 5.0, 0.0]])


@pytest.mark.parametrize("prog", MATRIX)
def test_a_band_matrix_against_the_oracle(prog):
    """Row 0 stores a fill inside its band (A[0, 2]), row 1 nothing, the diagonal is partly stored."""
    k = matrix_case(prog, A4, B4, np.arange(1.0, 5.0), 0.0, SparseBand)
    assert "A1_ofs" in k.c_source and "A1_idx[i] - A1_ofs[i + 1]" in k.c_source


@pytest.mark.parametrize("prog", VECTOR)
def test_a_band_vector_against_the_oracle(prog):
    v = np.array([0.0, 0.0, 1.0, 0.0, 2.0, 0.0])
    w = np.array([3.0, 0.0, 4.0, 0.0, 0.0, 5.0])
    k = vector_case(prog, np.arange(24.0).reshape(4, 6) % 3, v, w, 0.0, SparseBand)
    assert "v0_idx[0] - v0_ofs[1]" in k.c_source


def test_the_band_walks_positions_and_computes_its_coordinates():
    """SpMV over a band row: one counted loop over the row's positions, the column computed from
    the position (no idx array per entry), the value read at the position."""
    A = band_matrix(A4)
    k = lower("y[i] = A[i, j] * x[j]", "lattice", A=A, x=np.ones(4))
    src = k.c_source
    assert "for (int64_t pA1 = A1_ofs[i]; pA1 < A1_ofs[i + 1]; pA1++)" in src
    assert "int64_t j = pA1 + (A1_idx[i] - A1_ofs[i + 1]);" in src and "A_val[pA1]" in src


def test_a_band_diagonal_is_located_not_searched():
    """``A[i, i]`` of a band: the position i would have is computed and tested against the row's
    positions, no bisection."""
    k = matrix_case("y[i] = A[i, i]", A4, B4, None, 0.0, SparseBand)
    src = k.c_source
    assert "atA1 = i - (A1_idx[i] - A1_ofs[i + 1])" in src and "A1_ofs[i] <= atA1 && atA1 < A1_ofs[i + 1]" in src
    assert "while" not in src
    np.testing.assert_array_equal(k(A=band_matrix(A4)).to_numpy(), np.diagonal(A4))


def test_a_band_above_a_dense_level():
    """``SparseBand(Dense)``: the Dense level's fibers sit at the band's positions."""
    a = A4.T.copy()
    A = Tensor.from_numpy(a, Format(SparseBand(Dense(Element(0.0)))))
    check_lowered("y[i] = A[i, j] * x[j]", checked=True, A=A, x=np.arange(1.0, 5.0))
    check_lowered("C[i, j] = A[i, j] * B[i, j]", out=dense(2), checked=True, A=A, B=Tensor.from_numpy(B4, csr()))


def test_a_hash_under_a_band_counts_the_bands_positions():
    """A SparseHash's capacity counts the keys under every fiber: under a band, the fibers are the
    band's positions, ``ofs`` at the number of rows."""
    from compiler.levels import SparseHash
    h = np.zeros((3, 4, 5))
    h[0, 1, 2], h[0, 2, 0], h[2, 0, 4] = 1.0, 2.0, 3.0
    H = Tensor.from_numpy(h, Format(Dense(SparseBand(SparseHash(Element(0.0))))))
    b = random_sparse((3, 4, 5), 0.5, np.random.default_rng(4))
    k = check_lowered("C[i, j, k] = H[i, j, k] * B[i, j, k]", out=dense(3), checked=True, H=H,
                      B=Tensor.from_numpy(b, Format(Dense(Dense(SparseList(Element(0.0)))))))
    assert "H1_ofs[H0_size]" in k.c_source


def test_a_level_the_lattice_cannot_iterate_is_still_named(monkeypatch):
    from compiler.lattice.iterators import ITERATORS
    monkeypatch.delitem(ITERATORS, RunList)   # (a level no iterator is registered for)
    A = Tensor.from_numpy(A4, Format(Dense(RunList(Element(0.0)))))
    with pytest.raises(StrategyError, match=r"level 1 \(RunList\) of tensor A cannot be iterated coordinate by "
                                            r"coordinate.*strategy='looplets'"):
        # (with a trace of its own: lower()'s cache holds the kernel test_lattice_runs lowered)
        lower("y[i] = A[i, j] * x[j]", "lattice", A=A, x=np.ones(4), trace=Trace())


FILLS = [0.0, 1.0, float("nan"), float("inf")]


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(0, 5), n=st.integers(0, 6), density=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       fill=st.sampled_from(FILLS), prog=st.sampled_from(sorted(MATRIX)), seed=st.integers(0, 2 ** 16))
@example(m=3, n=3, density=0.3, fill=float("nan"), prog="C[i, j] = A[i, j] + B[i, j]", seed=1)
@example(m=4, n=4, density=0.0, fill=1.0, prog="y[i] = A[i, i]", seed=0)
@example(m=2, n=5, density=1.0, fill=float("inf"), prog="y[i] = A[i, j] * x[j]", seed=2)
def test_band_and_block_matrix_property(level, m, n, density, fill, prog, seed):
    """Band and block-list rows of every shape (empty rows, all-fill, full, several blocks), any
    fill, against the oracle."""
    if "A[i, i]" in prog:
        n = m
    rng = np.random.default_rng(seed)
    a = random_sparse((m, n), density, rng, fill=fill)
    b = random_sparse((m, n), density, rng, fill=fill)
    matrix_case(prog, a, b, random_sparse((n,), 1.0, rng), fill, level)


@pytest.mark.parametrize("level", LEVELS, ids=lambda c: c.__name__)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 9), density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), fill=st.sampled_from(FILLS),
       prog=st.sampled_from(sorted(VECTOR)), seed=st.integers(0, 2 ** 16))
@example(n=6, density=0.3, fill=float("nan"), prog="z[i] = v[i] + w[i]", seed=3)
@example(n=0, density=1.0, fill=0.0, prog="s = v[i] * w[i]", seed=0)
def test_band_and_block_vector_property(level, n, density, fill, prog, seed):
    rng = np.random.default_rng(seed)
    v = random_sparse((n,), density, rng, fill=fill)
    w = random_sparse((n,), density, rng, fill=fill)
    vector_case(prog, random_sparse((3, n), 0.5, rng), v, w, fill, level)



def test_a_split_of_a_merged_band_loop():
    """A coordinate split of a loop merging a band with a sparse vector: the blocks skip ahead to
    the next coordinate either stores, the band's computed from its position."""
    from compiler.lattice import Schedule
    rng = np.random.default_rng(5)
    v, w = random_sparse((23,), 0.3, rng), random_sparse((23,), 0.3, rng)
    k = check_lowered("z[i] = v[i] + w[i]", Schedule().split("i", "i0", "i1", 4), out=dense(1), checked=True,
                      v=band_vector(v), w=Tensor.from_numpy(w, sparse_vector()))
    assert "v0_idx[0] - v0_ofs[1]" in k.c_source and "i_next" in k.c_source


# -- SparseBlockList ---------------------------------------------------------------------------

#: rows of several blocks, an empty row, a block at each end, a diagonal partly stored
A6 = np.array([[0, 1.0, 2.0, 0, 3.0, 0], [0.0] * 6, [3.0, 0, 0, 0, 0, 4.0], [0, 0, 5.0, 6.0, 0, 7.0],
               [1.0, 1.0, 0, 0, 8.0, 9.0], [0, 2.0, 0, 2.0, 0, 2.0]])


@pytest.mark.parametrize("prog", MATRIX)
def test_a_block_list_matrix_against_the_oracle(prog):
    k = matrix_case(prog, A6, A6[::-1].copy(), np.arange(1.0, 7.0), 0.0, SparseBlockList)
    assert "A1_ofs" in k.c_source


@pytest.mark.parametrize("prog", VECTOR)
def test_a_block_list_vector_against_the_oracle(prog):
    v = np.array([0.0, 1.0, 1.0, 0.0, 2.0, 0.0, 3.0, 3.0, 3.0])
    w = np.array([3.0, 0.0, 4.0, 0.0, 0.0, 5.0, 0.0, 1.0, 0.0])
    vector_case(prog, np.arange(27.0).reshape(3, 9) % 4, v, w, 0.0, SparseBlockList)


def test_a_block_list_walks_positions_with_its_block_beside_them():
    """One range of positions per row; the block variable starts at the row's first block and moves
    on as the position crosses a block's end (while, not if: a split loop's block resumes anywhere)."""
    A = band_matrix(A6, level=SparseBlockList)
    src = lower("y[i] = A[i, j] * x[j]", "lattice", A=A, x=np.ones(6)).c_source
    assert "int64_t rA1 = A1_pos[i];" in src
    assert "for (int64_t pA1 = A1_ofs[A1_pos[i]]; pA1 < A1_ofs[A1_pos[i + 1]]; pA1++)" in src
    assert "while (A1_ofs[rA1 + 1] <= pA1)" in src and "int64_t j = pA1 + (A1_idx[rA1] - A1_ofs[rA1 + 1]);" in src


def test_a_block_list_diagonal_bisects_the_blocks():
    """``A[i, i]``: the first block ending past i, i stored if the block starts at or before it."""
    k = matrix_case("y[i] = A[i, i]", A6, None, None, 0.0, SparseBlockList)
    # (the binary search's helper: the first block whose end, past its last coordinate, is past i)
    assert "int64_t loA1 = lower_bound_int64(A1_idx, A1_pos[i], endA1, i + 1);" in k.c_source
    np.testing.assert_array_equal(k(A=band_matrix(A6, level=SparseBlockList)).to_numpy(), np.diagonal(A6))


def test_a_split_of_a_merged_block_list_loop():
    """A coordinate split of a merged loop: each block's loop resumes where the last stopped, so
    the block variable catches up before the next coordinate is read."""
    from compiler.lattice import Schedule
    rng = np.random.default_rng(6)
    v, w = random_sparse((31,), 0.5, rng), random_sparse((31,), 0.2, rng)
    k = check_lowered("z[i] = v[i] + w[i]", Schedule().split("i", "i0", "i1", 3), out=dense(1), checked=True,
                      v=band_vector(v, level=SparseBlockList), w=Tensor.from_numpy(w, sparse_vector()))
    assert "i_next" in k.c_source and k.c_source.count("while (v0_ofs[rv0 + 1] <= pv0)") >= 2


def test_a_block_list_is_walked_backwards_through_its_iterator():
    """From each row's last position, its block moved down as the position crosses a block's start
    (``block_last``, ``block_sync_back``), and a seek down to the last coordinate at or below a target
    (``seek_back_stmts``: the target's position in its block, else the last of the block before): rows of
    several blocks, an empty row, a block at each end, one-element blocks; a vector; an extent 0."""
    check_walks_back(band_matrix(A6, level=SparseBlockList))
    check_walks_back(band_vector(np.array([1.0, 0, 2.0, 0, 3.0, 3.0, 0, 4.0]), level=SparseBlockList))
    check_walks_back(band_matrix(np.zeros((2, 0)), level=SparseBlockList))


@settings(max_examples=15, deadline=None)
@given(m=st.integers(1, 3), n=st.integers(0, 9), density=st.sampled_from([0.3, 0.7, 1.0]), seed=st.integers(0, 2 ** 16))
def test_a_block_list_walked_backwards_by_property(m, n, density, seed):
    check_walks_back(band_matrix(random_sparse((m, n), density, np.random.default_rng(seed)), level=SparseBlockList))


def test_a_hash_under_a_block_list_counts_its_positions():
    from compiler.levels import SparseHash
    h = np.zeros((3, 5, 4))
    h[0, 1, 2], h[0, 2, 0], h[0, 4, 1], h[2, 0, 3] = 1.0, 2.0, 3.0, 4.0
    H = Tensor.from_numpy(h, Format(Dense(SparseBlockList(SparseHash(Element(0.0))))))
    b = random_sparse((3, 5, 4), 0.5, np.random.default_rng(4))
    k = check_lowered("C[i, j, k] = H[i, j, k] * B[i, j, k]", out=dense(3), checked=True, H=H,
                      B=Tensor.from_numpy(b, Format(Dense(Dense(SparseList(Element(0.0)))))))
    assert "H1_ofs[H1_pos[H0_size]]" in k.c_source


# -- SparsePoint ---------------------------------------------------------------------------------

def at_most_one_per_row(a, rng, fill):
    """The matrix ``a`` with every row but one stored entry (or none) set to the fill, as a SparsePoint stores."""
    a = np.array(a, dtype=float, copy=True)
    for r in range(a.shape[0]):
        keep = rng.integers(-1, a.shape[1]) if a.shape[1] else -1
        a[r, np.arange(a.shape[1]) != keep] = fill
    return a


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(0, 5), n=st.integers(0, 6), fill=st.sampled_from(FILLS), prog=st.sampled_from(sorted(MATRIX)),
       seed=st.integers(0, 2 ** 16))
@example(m=4, n=4, fill=0.0, prog="y[i] = A[i, i]", seed=3)
@example(m=3, n=5, fill=float("nan"), prog="C[i, j] = A[i, j] + B[i, j]", seed=1)
def test_point_matrix_property(m, n, fill, prog, seed):
    """SparsePoint rows (one entry or none) merged, intersected and searched as a SparseList's."""
    if "A[i, i]" in prog:
        n = m
    rng = np.random.default_rng(seed)
    a = at_most_one_per_row(random_sparse((m, n), 1.0, rng, fill=fill), rng, fill)
    b = random_sparse((m, n), 0.5, rng, fill=fill)
    matrix_case(prog, a, b, random_sparse((n,), 1.0, rng), fill, SparsePoint)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 7), fill=st.sampled_from(FILLS), prog=st.sampled_from(sorted(VECTOR)),
       seed=st.integers(0, 2 ** 16))
def test_point_vector_property(n, fill, prog, seed):
    rng = np.random.default_rng(seed)
    v = at_most_one_per_row(random_sparse((1, n), 1.0, rng, fill=fill), rng, fill)[0]
    w = random_sparse((n,), 0.5, rng, fill=fill)
    vector_case(prog, random_sparse((3, n), 0.5, rng), v, w, fill, SparsePoint)


def test_a_point_level_is_named_as_itself():
    """The iterator is a SparseList's, but messages and the iteration graph name the SparsePoint."""
    P = band_matrix(np.eye(3), level=SparsePoint)
    k = lower("y[i] = A[i, j] * x[j]", "lattice", A=P, x=np.ones(3))
    graph = next(s for s in k.trace.steps if s.stage == "iteration-graph")
    assert "j (SparsePoint" in graph.artifacts[0].text
    np.testing.assert_array_equal(k(A=P, x=np.arange(3.0)).to_numpy(), np.arange(3.0))


# -- SparseInterval ------------------------------------------------------------------------------

def one_run_per_row(m, n, rng, fill):
    """An m x n matrix whose rows each hold one run of one value (or nothing), the rest the fill."""
    a = np.full((m, n), fill)
    for r in range(m):
        lo, hi = sorted(rng.integers(0, n + 1, size=2)) if n else (0, 0)
        a[r, lo:hi] = rng.integers(1, 6)
    return a


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(0, 5), n=st.integers(0, 6), fill=st.sampled_from(FILLS), prog=st.sampled_from(sorted(MATRIX)),
       seed=st.integers(0, 2 ** 16))
@example(m=4, n=4, fill=0.0, prog="y[i] = A[i, i]", seed=3)
@example(m=3, n=5, fill=float("nan"), prog="C[i, j] = A[i, j] + B[i, j]", seed=1)
def test_interval_matrix_property(m, n, fill, prog, seed):
    """SparseInterval rows (one run or none) walked coordinate by coordinate, each reading the run's value."""
    if "A[i, i]" in prog:
        n = m
    rng = np.random.default_rng(seed)
    matrix_case(prog, one_run_per_row(m, n, rng, fill), random_sparse((m, n), 0.5, rng, fill=fill),
                 random_sparse((n,), 1.0, rng), fill, SparseInterval)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 7), fill=st.sampled_from(FILLS), prog=st.sampled_from(sorted(VECTOR)),
       seed=st.integers(0, 2 ** 16))
def test_interval_vector_property(n, fill, prog, seed):
    rng = np.random.default_rng(seed)
    v = one_run_per_row(1, n, rng, fill)[0]
    vector_case(prog, random_sparse((3, n), 0.5, rng), v, random_sparse((n,), 0.5, rng, fill=fill), fill,
                 SparseInterval)


def test_an_interval_row_reads_its_runs_value_at_each_coordinate():
    """The loop walks the run's coordinates; every one reads the run's one value (child pos[i]),
    and a row without a run reads nothing (its bounds are an empty range, left not read)."""
    a = np.array([[0.0, 2.0, 2.0, 2.0], [0.0] * 4, [5.0, 0.0, 0.0, 0.0]])
    k = check_lowered("y[i] = A[i, j] * x[j]", checked=True, A=band_matrix(a, level=SparseInterval),
                      x=np.arange(1.0, 5.0))
    assert "A1_pos[i] < A1_pos[i + 1] ? A1_left[A1_pos[i]] : 0" in k.c_source and "A_val[A1_pos[i]]" in k.c_source
    np.testing.assert_array_equal(k(A=band_matrix(a, level=SparseInterval), x=np.arange(1.0, 5.0)).to_numpy(),
                                  [18.0, 0.0, 5.0])


# -- the CFIR interpreter walks each level's fibers (py_fiber) -------------------------------------

@pytest.mark.parametrize("level", [SparseBand, SparseBlockList, SparsePoint, SparseInterval], ids=lambda c: c.__name__)
@pytest.mark.parametrize("prog", ["y[i] = A[i, j] * x[j]", "C[i, j] = A[i, j] + B[i, j]", "y[i] = A[i, i]"])
def test_the_cfir_interpreter_reads_each_level(level, prog):
    a = {SparsePoint: np.array([[0, 2.0, 0, 0], [0.0] * 4, [0, 0, 0, 3.0], [1.0, 0, 0, 0]]),
         SparseInterval: np.array([[0, 2.0, 2.0, 0], [0.0] * 4, [0, 0, 3.0, 3.0], [1.0, 0, 0, 0]])}.get(level, A4)
    interpreted_case(prog, {"A": band_matrix(a, level=level), "B": Tensor.from_numpy(B4, csr()),
                            "x": Tensor.from_numpy(np.arange(1.0, 5.0), dense(1))})


@pytest.mark.parametrize("level", [SparseBand, SparseBlockList, SparsePoint, SparseInterval], ids=lambda c: c.__name__)
def test_the_trace_of_each_levels_kernel_round_trips(level):
    """The CFIR in the trace holds each level's iterator; the trace is saved as JSON and read back
    (a band's, block list's or interval's iterator was unknown to the reader before)."""
    from compiler.trace import Trace
    a = np.array([[0, 2.0, 0, 0], [0.0] * 4, [0, 0, 0, 3.0], [1.0, 0, 0, 0]])
    k = lower("y[i] = A[i, j] * x[j]", "lattice", A=band_matrix(a, level=level), x=np.ones(4))
    back = Trace.from_json(k.trace.to_json())
    assert [s.stage for s in back.steps] == k.trace.stages()
