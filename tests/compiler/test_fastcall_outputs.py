"""The fast call path against the general one for each output format (issue 31, item 4): the
result of a planned call (``compiler.fastcall``) is the general path's (``Kernel._run``), array
for array, and the dense oracle's; its arrays outlive the kernel and the inputs."""

import gc

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings, strategies as st

import compiler as ss
from compiler.errors import StrategyError
from compiler.fastcall import fast_call
from compiler.levels import RunList, SparseByteMap, SparseHash, SparseRunList

FILLS = [0.0, 1.0, np.nan, np.inf, -np.inf]


def _matrix(m, n, density, seed, fill):
    a = sp.random(m, n, density=density, format="csr", random_state=seed).toarray()
    a[a == 0] = fill
    return a


def _output_formats(fill):
    return {"csr": "csr", "csc": "csc", "coo": "coo", "dcsr": "dcsr", "dense": "dense",
            "byte map": ss.Format(ss.Dense(SparseByteMap(ss.Element(fill)))),
            "hash": ss.Format(ss.Dense(SparseHash(ss.Element(fill)))),
            "run list": ss.Format(ss.Dense(RunList(ss.Element(fill)))),
            "sparse run list": ss.Format(ss.Dense(SparseRunList(ss.Element(fill))))}


def _same_storage(a: ss.Tensor, b: ss.Tensor):
    assert a.format == b.format and a.shape == b.shape
    for da, db in zip(a.level_arrays(), b.level_arrays()):
        assert da.keys() == db.keys()
        for kind in da:
            np.testing.assert_array_equal(da[kind], db[kind], err_msg=kind)


def _check(k, tensors, expected):
    fast = fast_call(k)
    if k.lowered.conversions:   # (built in another order and converted: the general path's every call)
        assert fast is None
        np.testing.assert_array_equal(k(**tensors).to_numpy(), expected)
        return
    assert fast is not None, "the kernel has a fast path"
    k(**tensors)   # (binds the tensors: the next call is the planned one)
    out = fast(tensors)
    assert out is not None, "the call takes the fast path"
    general = k._run(k.compiled, tensors)
    _same_storage(out, general)
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-13)   # (a product's sums in another order)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 5), st.integers(0, 5), st.sampled_from(sorted(_output_formats(0.0))),
       st.sampled_from(FILLS), st.sampled_from(["lattice", "looplets"]), st.integers(0, 3),
       st.sampled_from([0.0, 0.4, 1.0]))
@example(0, 3, "coo", np.nan, "lattice", 0, 0.4)
@example(4, 4, "byte map", -np.inf, "looplets", 1, 1.0)
@example(3, 2, "csr", 1.0, "lattice", 2, 0.0)   # (every result entry at the fill)
@example(3, 4, "run list", np.nan, "looplets", 0, 0.4)
@example(2, 5, "sparse run list", np.inf, "lattice", 3, 1.0)
def test_each_output_format_through_the_fast_path_is_the_general_paths(m, n, out, fill, strategy, seed, density):
    """``C = A + B`` (``A``'s fill ``fill``, ``B``'s 0) into each output format (CSR, CSC, COO, DCSR,
    dense, byte map, hash, run lists), by both strategies, on
    shapes with an extent 0 and results all at the fill: the fast path's arrays are the general
    path's, its values the oracle's."""
    a, b = _matrix(m, n, density, seed, fill), _matrix(m, n, 0.3, seed + 5, 0.0)
    A = ss.Tensor.from_numpy(a, ss.parse_format("csr", ndim=2, fill=fill), name="A")
    B = ss.Tensor.from_numpy(b, "csr", name="B")
    try:
        k = ss.lower("C[i, j] = A[i, j] + B[i, j]", strategy=strategy, A=A, B=B, C=_output_formats(fill)[out])
    except StrategyError:
        return   # (an output format this strategy does not assemble: refused, saying why)
    _check(k, {"A": A, "B": B}, ss.evaluate("C[i, j] = A[i, j] + B[i, j]", A=A, B=B)[0])


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("m, k_, n", [(5, 5, 5), (0, 3, 2), (3, 0, 4), (4, 3, 0)])
def test_spgemm_takes_the_fast_path(strategy, m, k_, n):
    """Gustavson's SpGEMM, whose column index the general path may renumber (a hypersparse
    operand's huge extent), takes the fast path at ordinary extents (it had none: every call took
    the general path, 45 of its 85 us on 5x5)."""
    a, b = _matrix(m, k_, 0.4, 1, 0.0), _matrix(k_, n, 0.4, 2, 0.0)
    A, B = ss.Tensor.from_numpy(a, "csr", name="A"), ss.Tensor.from_numpy(b, "csr", name="B")
    try:
        k = ss.lower("C[i, j] = A[i, k] * B[k, j]", strategy=strategy, A=A, B=B, C="csr")
    except StrategyError:
        pytest.skip(f"the {strategy} strategy lowers no SpGEMM into CSR")
    _check(k, {"A": A, "B": B}, a @ b)


def test_a_huge_compressible_extent_still_takes_the_general_path():
    """A hypersparse SpGEMM (2^40 columns) is renumbered by the general path; the fast path hands it over."""
    cols = 1 << 40
    A = ss.Tensor.from_scipy(sp.csr_matrix(np.array([[1.0, 2.0]])), "csr", name="A")
    B = ss.Tensor.from_scipy(sp.csr_matrix(([3.0, 4.0], ([0, 1], [5, cols - 1])), shape=(2, cols)), "csr",
                             name="B")
    k = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B, C="csr")
    fast = fast_call(k)
    assert fast is None or fast({"A": A, "B": B}) is None
    C = k(A=A, B=B)
    assert C.shape == (1, cols) and C.levels[1].idx.tolist() == [5, cols - 1] and C.vals.tolist() == [3.0, 8.0]


@pytest.mark.parametrize("out", ["csr", "coo", "byte map"])
def test_returned_arrays_outlive_the_kernel_and_inputs(out):
    """A result's arrays (the kernel's own memory, freed through its library when collected) stay
    valid once the kernel, its inputs and every other reference are gone."""
    a, b = _matrix(6, 5, 0.5, 3, 0.0), _matrix(6, 5, 0.5, 4, 0.0)
    A, B = ss.Tensor.from_numpy(a, "csr", name="A"), ss.Tensor.from_numpy(b, "csr", name="B")
    k = ss.lower("C[i, j] = A[i, j] + B[i, j]", strategy="looplets", A=A, B=B, C=_output_formats(0.0)[out])
    k(A=A, B=B)
    results = [k(A=A, B=B) for _ in range(3)]   # (fast path calls)
    del k, A, B
    gc.collect()
    junk = [np.full(64, 7.0) for _ in range(1000)]   # (memory freed too early would be reused here)
    for C in results:
        np.testing.assert_array_equal(C.to_numpy(), a + b)
    del junk
