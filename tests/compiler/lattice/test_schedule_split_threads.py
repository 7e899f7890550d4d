"""Parallel blocks of a split sparse loop (issue 31): ``split(i, i0, i1, f).parallelize(i0)`` over a
DCSR matrix, alone and merged with a sparse vector, runs each block on a thread, which finds its
first positions by a binary search of its first coordinate (the ``lower_bound`` helper), as TACO's
parallel split does; a serial split keeps carrying the positions from block to block. And the
blocks of fused positions on threads find their first row with the same helper."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.backend import build
from compiler.format import csr, dcsr, dense, sparse_vector
from compiler.lattice import Schedule
from compiler.testing import check_lowered as check, random_sparse as rand
from hypersparse_cases import hypersparse_pair


def openmp():
    return build.openmp_support() is None


def blocks(factor, direction="down", races="none"):
    return Schedule().split("i", "i0", "i1", factor, direction).parallelize("i0", races=races)


def inputs(rng, n, m, density, empty=(2, 9)):
    """A DCSR ``A`` (rows ``empty`` left empty), a dense ``x`` and a sparse ``b``."""
    a = rand((n, m), density, rng)
    a[empty[0]:empty[1]] = 0
    A = Tensor.from_numpy(a, dcsr(), name="A")
    b = Tensor.from_numpy(rand((n,), density, rng), sparse_vector(), name="b")
    return A, rng.random(m), b


@pytest.mark.parametrize("prog, b_format", [
    ("y[i] = A[i, j] * x[j]", None),
    ("y[i] = A[i, j] * x[j] + b[i]", sparse_vector()),   # a merge: each block searches both fibers
    ("y[i] = A[i, j] * x[j] + b[i]", dense(1)),          # a union with the dense range: i starts at the block
])
def test_each_parallel_block_of_a_sparse_loop_searches_its_first_positions(prog, b_format):
    A, x, b = inputs(np.random.default_rng(31), 37, 11, 0.3)
    tensors = dict(A=A, x=x) if b_format is None else dict(A=A, x=x, b=Tensor.from_numpy(b.to_numpy(), b_format))
    k = check(prog, blocks(8), checked=True, **tensors)
    src = k.c_source
    # A alone: its blocks are found from its entries, each starting at one (no search); merged with a
    # sparse b: A's and b's starts searched in each block, and a block of b probes A (it runs if A has
    # no entry there); with a dense b every block runs (the dense range), A's start searched
    searched = {None: 0, sparse_vector(): 3, dense(1): 1}[b_format]
    assert src.count("= lower_bound_int64(") == searched, src
    assert "i0 = i_next" not in src   # (no block jumps to the next entry: that carries over)
    loop = {None: "for (int64_t qA0 = A0_pos[0]; qA0 < pA0_end; qA0++)",
            sparse_vector(): "for (int64_t q = 0; q < pA0_end - A0_pos[0] + (pb0_end - b0_pos[0]); q++)",
            dense(1): "for (int64_t i0 = 0; "}[b_format]
    if openmp():
        assert src.index("#pragma omp parallel for") < src.index(loop)
    assert "each finds its first positions by binary search" in k.trace.find("lower")[0].note


def test_a_serial_split_of_a_sparse_loop_still_carries_its_positions():
    A, x, b = inputs(np.random.default_rng(5), 20, 6, 0.3)
    k = check("y[i] = A[i, j] * x[j] + b[i]", Schedule().split("i", "i0", "i1", 4), A=A, x=x, b=b)
    assert "lower_bound" not in k.c_source and "i0 = i_next / 4 - 1;" in k.c_source


def test_parallel_blocks_of_a_sparse_loop_fill_a_sparse_output_in_two_phases():
    A, x, b = inputs(np.random.default_rng(6), 29, 7, 0.3)
    k = check("y[i] = A[i, j] * x[j] + b[i]", blocks(4, "up"), out=sparse_vector(), checked=True, A=A, x=x, b=b)
    assert k.c_source.count("= lower_bound_int64(b0_idx") == 2   # the count's and the fill's loops


def test_parallel_blocks_reduce_into_a_scalar_with_a_reduction_clause():
    # TACO's parallelizeTemporaryReduction (C = A[i] * B[i], A sparse): before, refused as sequential
    rng = np.random.default_rng(7)
    A = Tensor.from_numpy(rand((23,), 0.4, rng), sparse_vector(), name="A")
    k = check("C = A[i] * B[i]", blocks(3), A=A, B=rng.random(23))
    if openmp():
        assert "reduction(+:t_i)" in k.c_source


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.tuples(st.integers(0, 30), st.integers(1, 6)), density=st.sampled_from([0.0, 0.1, 0.5, 1.0]),
       factor=st.integers(1, 9), direction=st.sampled_from(["down", "up"]), seed=st.integers(0, 2 ** 16))
@example(shape=(17, 3), density=0.1, factor=4, direction="down", seed=0)
def test_property_parallel_blocks_of_a_merge(shape, density, factor, direction, seed):
    rng = np.random.default_rng(seed)
    n, m = shape
    A, x, b = inputs(rng, n, m, density, empty=(n // 3, n // 2))
    check("y[i] = A[i, j] * x[j] + b[i]", blocks(factor, direction), A=A, x=x, b=b)


@pytest.mark.parametrize("prog, want", [("C = x[i] * 2", 10.0), ("C = x[i] + y[i]", 7.0), ("C = x[i] * y[i]", 2.0)])
def test_parallel_blocks_of_a_hypersparse_loop_visit_only_the_blocks_with_entries(prog, want):
    # 2^38 blocks of 4, 2 or 3 of them with an entry: each block searched its first positions, so
    # every empty block was visited; now the blocks are found from the entries
    x, y = hypersparse_pair()
    tensors = {"x": x, "y": y} if "y[i]" in prog else {"x": x}
    k = lower(prog, options={"schedule": blocks(4)}, **tensors)
    assert "for (int64_t i0 = 0" not in k.c_source
    for run in (k, k.interpret):
        assert float(run(**tensors).to_numpy()) == want


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 40), factor=st.integers(1, 6), seed=st.integers(0, 2 ** 16),
       stored=st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6)))
@example(n=13, factor=3, seed=0, stored=(2, 0, 4))
def test_property_parallel_blocks_of_a_merge_of_three(n, factor, seed, stored):
    # three leaders: a block of c's runs if neither a nor b has an entry there (two probes)
    rng = np.random.default_rng(seed)
    vecs = {}
    for name, count in zip("abc", stored):
        v = np.zeros(n)
        v[rng.choice(n, min(count, n), replace=False)] = rng.integers(1, 9, min(count, n))
        vecs[name] = Tensor.from_numpy(v, sparse_vector(), name=name)
    k = check("z[i] = a[i] + b[i] + c[i]", blocks(factor), out=dense(1), **vecs)
    assert k.c_source.count("lower_bound_int64(a0_idx") == 3   # the block's start, and b's and c's probes


@pytest.mark.parametrize("fmt", [csr(), dcsr()], ids=["csr", "dcsr"])
def test_parallel_blocks_of_fused_positions_find_their_row_with_the_search_helper(fmt):
    # each block of A's positions starts at the row holding its first position: one lower_bound call
    # over the row pointers, no inline bisection (empty rows around the blocks' starts)
    rng = np.random.default_rng(8)
    a = rand((30, 9), 0.2, rng)
    a[4:13] = 0
    s = Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "c", "c1", 3).parallelize("c", races="atomics")
    k = check("y[i] = A[i, j] * x[j]", s, checked=True, A=Tensor.from_numpy(a, fmt, name="A"), x=rng.random(9))
    src = k.c_source
    assert src.count("lower_bound_int64(A1_pos, ") == 1 and "_mid" not in src, src
    rows = "i" if fmt == csr() else "pA0"
    assert f"int64_t {rows} = lower_bound_int64(A1_pos, " in src
