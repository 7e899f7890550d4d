"""``pos`` of a split's inner variable (issue 31): ``split(i, i0, i1, b).pos(i1, ip, A)`` runs the
blocks ``i0`` of coordinates and, in each, the positions of A's entries there; against the dense
oracle and the IR interpreter (``check_lowered``), and its refusals."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.errors import StrategyError
from compiler.format import csr, dcsr, sparse_vector
from compiler.lattice import Schedule
from compiler.levels import Element, SparseList
from compiler.testing import check_lowered as check, random_sparse as rand


def blocks(index, factor, tensor, direction="down"):
    return Schedule().split(index, f"{index}0", f"{index}1", factor, direction).pos(f"{index}1", f"{index}p", tensor)


# TACO's tests-scheduling.cpp vector (entries at the even coordinates of 8), its dense B and
# the block size 4 of lowerSparseCopy; re-created with values of our own
A8 = np.where(np.arange(8) % 2 == 0, np.arange(8.0) + 1, 0.0)
B8 = np.arange(8.0) * 0.5 - 1


@pytest.mark.parametrize("prog, out", [("C[i] = A[i]", None), ("C[i] = A[i] * B[i]", None),
                                       ("c = A[i] * B[i]", None), ("C[i] = A[i] * B[i]", sparse_vector())])
def test_taco_vectors_in_blocks_of_four(prog, out):
    A = Tensor.from_numpy(A8, sparse_vector(), name="A")
    tensors = {"A": A, "B": B8} if "B[i]" in prog else {"A": A}
    k = check(prog, blocks("i", 4, "A"), out=out, **tensors)
    src = k.c_source
    assert "int64_t ip_hi = lower_bound_int64(A0_idx, ip_lo, ip_end, i_hi);" in src
    assert "for (int64_t ip = ip_lo; ip < ip_hi; ip++)" in src and "int64_t i = A0_idx[ip];" in src
    assert "i1" not in src.replace("split(i, i0, i1", "").replace("pos(i1", "")   # i1 is never a variable


@pytest.mark.parametrize("fmt, index", [(csr, "j"), (dcsr, "i")])
@pytest.mark.parametrize("direction", ["down", "up"])
@pytest.mark.parametrize("factor", [1, 3, 32])
def test_blocks_of_a_matrix_level(fmt, index, direction, factor):
    # 13 x 11 (no block size divides both), empty rows and columns, NaN and inf among the values
    rng = np.random.default_rng(factor)
    a = rand((13, 11), 0.3, rng, empty=(0, 4, 5, 12))
    a[:, 7] = 0
    a[1, 2], a[3, 9], a[6, 10] = np.nan, np.inf, -np.inf
    A, x = Tensor.from_numpy(a, fmt(), name="A"), rng.random(11)
    k = check("y[i] = A[i, j] * x[j]", blocks(index, factor, "A", direction), A=A, x=x)
    assert f"{index}p_hi = lower_bound_int64(A{0 if index == 'i' else 1}_idx" in k.c_source


def test_fill_nan_into_a_sparse_output():
    v = np.full(11, np.nan)
    v[[1, 3, 6, 9]] = [1.0, np.inf, -2.0, 0.0]
    b = Tensor.from_numpy(v, sparse_vector(fill=np.nan), name="b")
    k = check("a[i] = b[i] * 2", blocks("i", 3, "b"), out=sparse_vector(fill=np.nan), b=b)
    got = k(b=b)
    assert got.levels[0].idx.tolist() == [1, 3, 6, 9] and np.isnan(got.fill)


@pytest.mark.parametrize("n, stored", [(0, []), (9, []), (9, [2, 5])])
def test_empty_all_fill_and_stored_fills(n, stored):
    # no coordinates, no entries, or entries that hold the fill itself (stored zeros)
    x = Tensor(SparseList(Element(0.0, vals=np.zeros(len(stored))), size=n, pos=np.array([0, len(stored)]),
                          idx=np.array(stored, dtype=np.int64)), name="x")
    for prog in ("y[i] = x[i] * c[i]", "s = x[i]"):
        tensors = {"x": x, "c": np.arange(float(n))} if "c[i]" in prog else {"x": x}
        check(prog, blocks("i", 4, "x"), **tensors)


def test_a_hypersparse_loop_visits_the_blocks_of_its_entries_only():
    # 2^40 coordinates in 2^38 blocks of 4, two entries: each empty run of blocks is one jump
    n = 2 ** 40
    x = Tensor(SparseList(Element(0.0, vals=np.array([2.0, 3.0])), size=n, pos=np.array([0, 2]),
                          idx=np.array([5, n - 1])), name="x")
    k = lower("y[i] = x[i] * 2", x=x, y=sparse_vector(), options={"schedule": blocks("i", 4, "x")})
    assert "i0 = x0_idx[ip_lo] / 4 - 1;" in k.c_source
    for run in (k, k.interpret):
        y = run(x=x)
        assert y.levels[0].idx.tolist() == [5, n - 1] and y.vals.tolist() == [4.0, 6.0]


def test_the_positions_of_a_block_split_again_and_the_trace():
    rng = np.random.default_rng(5)
    a = rand(40, 0.4, rng)
    b = Tensor.from_numpy(a, sparse_vector(), name="b")
    s = blocks("i", 8, "b").split("ip", "q0", "q1", 3)
    k = check("y[i] = b[i] * c[i]", s, b=b, c=rng.random(40))
    assert "int64_t q1_stop" in k.c_source
    shown = str([st for st in k.trace.steps if st.stage == "schedule:pos"][0].after)
    assert shown.startswith("forall i0:\n  forall ip:\n") and "pos(i1, ip, b)" in shown


@pytest.mark.parametrize("prog, out", [("y[i] = b[i] * c[i]", None), ("s = b[i] * c[i]", None),
                                       ("y[i] = b[i] * c[i]", sparse_vector())])
@pytest.mark.parametrize("direction", ["down", "up"])
def test_blocks_of_positions_on_threads(prog, out, direction):
    # each block searches both its ends (nothing carried from the block before), so i0 runs on
    # threads; a dense, a scalar and a sparse (two-phase) output; empty blocks at both ends
    rng = np.random.default_rng(3)
    v = rand(41, 0.4, rng)
    v[:6], v[-7:] = 0, 0
    v[[9, 20]] = np.nan, -np.inf
    b = Tensor.from_numpy(v, sparse_vector(), name="b")
    k = check(prog, blocks("i", 4, "b", direction).parallelize("i0"), out=out, b=b, c=rng.random(41))
    src = k.c_source
    assert "#pragma omp parallel for" in src and "int64_t ip_lo = lower_bound_int64(b0_idx, b0_pos[0]" in src
    assert "i0 = b0_idx[ip_lo]" not in src   # no jump over empty blocks: a thread cannot move its loop variable


def test_blocks_of_a_dcsr_row_level_on_threads():
    rng = np.random.default_rng(4)
    a = rand((37, 11), 0.3, rng, empty=(0, 4, 5, 36))
    a[3, 2] = np.inf
    A = Tensor.from_numpy(a, dcsr(), name="A")
    k = check("y[i] = A[i, j] * x[j]", blocks("i", 3, "A").parallelize("i0"), A=A, x=rng.random(11))
    assert "#pragma omp parallel for" in k.c_source


@pytest.mark.parametrize("schedule, message", [
    (blocks("i", 4, "b").parallelize("i1"),
     r"parallelize\(i1\) does not apply: i1 comes from split\(i, i0, i1, 4, down\)"),
    (blocks("i", 4, "b").split("i0", "u", "w", 2),
     r"split\(i0, u, w, 2, down\) does not apply: i0 runs the blocks of split\(i, i0, i1, 4, down\), each over "
     r"pos\(i1, ip, b\).*split the positions ip instead"),
    (Schedule().split("i", "i0", "i1", 4).split("i1", "u", "w", 2).pos("w", "q", "b"),
     r"pos\(w, q, b\) does not apply: w comes from split\(i1, u, w, 2, down\): pos of the block of a split applies "
     r"to a split of a loop over coordinates, and i1 is not one"),
    (blocks("i", 4, "c"), r"c stores i in a Dense level; pos iterates the positions of a SparseList"),
])
def test_what_does_not_apply_says_why(schedule, message):
    with pytest.raises(StrategyError, match=message):
        lower("y[i] = b[i] * c[i]", b=sparse_vector(), c="dense", options={"schedule": schedule})


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 40), st.floats(0.0, 1.0), st.sampled_from([1, 2, 3, 5, 8, 64]), st.sampled_from(["down", "up"]),
       st.booleans(), st.integers(0, 2 ** 16))
@example(n=7, density=1.0, factor=3, direction="up", matrix=False, seed=0)   # the last block is short
def test_property_blocks_of_positions(n, density, factor, direction, matrix, seed):
    rng = np.random.default_rng(seed)
    if matrix:
        a = rand((n % 9, n), density, rng)
        A, x = Tensor.from_numpy(a, dcsr(), name="A"), rng.random(n)
        check("y[i] = A[i, j] * x[j]", blocks("i", factor, "A", direction), A=A, x=x)
    else:
        b = Tensor.from_numpy(rand(n, density, rng), sparse_vector(), name="b")
        check("s = b[i] * c[i]", blocks("i", factor, "b", direction), b=b, c=rng.random(n))
