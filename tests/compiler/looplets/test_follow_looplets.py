"""A SparseList read at a bound coordinate (compiler.looplets.follow_looplets, issue 30): its search's
entry is one case, the stored value where found and the fill where not (a child fiber present where
found), as a SparseCOO's last mode was; the found/absent Switch it lowered nested every other read's
cases in each of its own. ``where(a[1, 2] > b[0, 1], c[2, 0], d[1, 1])`` over four CSFs was 1,868 lines
of C and 256 searches. Checked by numpy, the compiled kernel and the IR interpreter; structure by the
searches and lines of C."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from tests.compiler.looplets.test_located_reads import check, operands, permuted_where

nan = np.nan


def searches(k) -> int:
    """Calls of the binary search (its definition is one more occurrence)."""
    return k.c_source.count("lower_bound_int64(") - 1


def constant_where(ops, where):
    a, b, c, d = ops
    return where(a[1, 2] > b[0, 1], c[2, 0], d[1, 1])


@pytest.mark.parametrize("shape", [(3, 4, 5), (3, 3, 0), (4, 3, 2)])
@pytest.mark.parametrize("density", [0.0, 0.5, 1.0])
def test_constant_reads_of_four_csfs_search_each_level_once(shape, density):
    # (main: 1,868 lines, 256 searches: each read's found and absent cases nested in the others')
    tensors, arrays = operands(shape, ["csf"], seed=1, density=density)
    with np.errstate(invalid="ignore"):
        want = constant_where(arrays, np.where)
    k = check(constant_where([xp.asarray(t) for t in tensors], xp.where), want)
    assert searches(k) == 4 * 3, k.c_source   # (the root's and the two constant modes' and the last's)
    assert len(k.c_source.splitlines()) < 250


@pytest.mark.parametrize("perm", [(1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0)])
@pytest.mark.parametrize("shape", [(3, 2, 4), (1, 1, 1), (0, 2, 3)])
def test_csfs_read_against_their_order_are_one_case_per_read(perm, shape):
    # (main: 796 lines at (1, 2, 0) and (2, 1, 0), 390 at the others; with a dense operand among them
    # the two walks' product of cases stays, merged_walks.MERGE_FROM)
    tensors, arrays = operands(shape, ["csf"], seed=sum(perm) + 1)
    with np.errstate(invalid="ignore"):
        want = permuted_where(arrays, np.where, np.transpose, perm)
    k = check(permuted_where([xp.asarray(t) for t in tensors], xp.where, xp.permute_dims, perm), want)
    assert len(k.c_source.splitlines()) < 300


def test_a_csr_row_at_a_constant_and_a_vector_read_by_a_followed_index():
    # a CSR's row located once, its entries each one case, beside a dense vector (fills NaN and -inf)
    rng = np.random.default_rng(3)
    m = np.where(rng.random((4, 6)) < 0.5, rng.choice([2.0, -0.0, np.nan, -np.inf], (4, 6)), np.nan)
    A = ss.Tensor.from_numpy(m, "csr", fill=np.nan)
    v = ss.Tensor.from_numpy(np.where(rng.random(6) < 0.5, -1.5, -np.inf), "dense", fill=-np.inf)
    with np.errstate(invalid="ignore"):
        want = np.where(m[2] < m[1], v.to_numpy(), m[3])
    a, x = xp.asarray(A), xp.asarray(v)
    k = check(xp.where(a[2] < a[1], x, a[3]), want)
    assert len(k.c_source.splitlines()) < 150   # (main: 184)


@settings(max_examples=20)   # (the suite's time: the default 100 drew 100 kernels of four 3-D tensors)
@given(shape=st.tuples(st.integers(3, 4), st.integers(3, 4), st.integers(1, 3)),
       density=st.sampled_from([0.0, 0.4, 1.0]), seed=st.integers(0, 3),
       formats=st.lists(st.sampled_from(["csf", "dense", "coo"]), min_size=4, max_size=4))
@example(shape=(3, 3, 1), density=1.0, seed=0, formats=["csf"] * 4)
@example(shape=(4, 3, 2), density=0.0, seed=2, formats=["csf", "coo", "csf", "dense"])
def test_constant_reads_match_numpy(shape, density, seed, formats):
    tensors, arrays = operands(shape, formats, seed=seed, density=density)
    with np.errstate(invalid="ignore"):
        want = constant_where(arrays, np.where)
    check(constant_where([xp.asarray(t) for t in tensors], xp.where), want)


@pytest.mark.parametrize("b_fill", [0.0, nan])
def test_a_read_whose_absence_does_nothing_keeps_its_case(b_fill):
    # the inner product adds nothing where B[k, j] is absent (0, A finite): the search's Switch skips that
    # case, where one case (add A * (found ? B : 0)) would multiply and add at every k; with a NaN fill the
    # absent case adds NaN, and is the same value as the found one's
    rng = np.random.default_rng(4)
    a = np.where(rng.random((3, 5)) < 0.5, rng.choice([1.5, -2.0, -0.0], (3, 5)), 0.0)
    b = np.where(rng.random((5, 4)) < 0.5, rng.choice([2.0, -1.0, -0.0, nan], (5, 4)), b_fill)
    A, B = ss.Tensor.from_numpy(a, "csr"), ss.Tensor.from_numpy(b, "csr", fill=b_fill)
    k = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B, C="csr", strategy="looplets")
    with np.errstate(invalid="ignore"):
        want = ss.evaluate("C[i, j] = A[i, k] * B[k, j]", A=A, B=B)[0]
        np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), want)
        np.testing.assert_array_equal(k.interpret(A=A, B=B).to_numpy(), want)
    assert ("? B_val[qB] :" in k.c_source) == (b_fill != 0.0), k.c_source
