"""Kernels that read a scipy matrix in place check each coordinate as they read it, where their work does not
depend on the order of a row's coordinates, and a call checks the matrix's positions alone
(compiler/owned_inputs.py, compiler/imperative/owned_coordinates.py). Each result against scipy's on the same
matrix, as its owner left it; each coordinate written out of range a FormatError naming the level and entry."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings, strategies as st

import compiler as ss
from compiler import array as xp
from compiler.errors import FormatError

STRATEGIES = ["lattice", "looplets"]

#: order-free kernels over A (m x n) with their operands and scipy's answer
ORDER_FREE = {
    "spmv": ("y[i] = A[i, j] * x[j]", lambda m, r: {"x": r.random(m.shape[1])}, lambda m, a: m @ a["x"]),
    "transposed": ("z[j] += A[i, j] * y[i]", lambda m, r: {"y": r.random(m.shape[0])}, lambda m, a: m.T @ a["y"]),
    "spmm": ("Y[i, k] += A[i, j] * X[j, k]", lambda m, r: {"X": r.random((m.shape[1], 3))}, lambda m, a: m @ a["X"]),
    "row sums": ("s[i] = A[i, j]", lambda m, r: {}, lambda m, a: np.asarray(m.sum(axis=1)).ravel()),
}


def _matrix(rows=40, cols=30, density=0.2, fmt="csr", seed=0):
    return sp.random(rows, cols, density=density, format=fmt, random_state=seed)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", sorted(ORDER_FREE))
def test_an_order_free_kernel_over_a_scipy_matrix_checks_its_coordinates_itself(strategy, kind):
    program, operands, want = ORDER_FREE[kind]
    rng = np.random.default_rng(1)
    m = _matrix()
    A, args = ss.Tensor.from_scipy(m, name="A"), operands(m, rng)
    k = ss.lower(program, strategy, A=A, **args)
    assert k.coordinates_checked == {"A"} and "owned-coordinates" in k.trace.stages()
    reads = "A1_idx[" in k.c_source
    assert ("A1_size" in k.c_source and "(uint64_t)" in k.c_source) == reads
    for a in (A, m):
        np.testing.assert_allclose(k(A=a, **args).to_numpy(), want(m, args))
    # (a row's coordinates reversed in place: the same sum, as scipy's of its matrix as it is now)
    for r in range(m.shape[0]):
        m.indices[m.indptr[r]:m.indptr[r + 1]] = m.indices[m.indptr[r]:m.indptr[r + 1]][::-1].copy()
    np.testing.assert_allclose(k(A=A, **args).to_numpy(), want(m, args))
    if reads:
        saved, m.indices[7] = m.indices[7], m.shape[1]
        with pytest.raises(FormatError, match=r"^A: level 1 \(SparseList\): idx\[7\]=30 is out of range \[0, 30\)"):
            k(A=A, **args)
        m.indices[7] = -3
        # (given the matrix itself, the error names its array as scipy does)
        with pytest.raises(FormatError, match=r"^A \(csr_matrix of shape \(40, 30\)\): indices\[7\]=-3 is out of range"):
            k(A=m, **args)
        m.indices[7] = saved
    m.indptr[3], saved = m.indptr[5], m.indptr[3]   # (positions: still checked at each call)
    with pytest.raises(FormatError, match="pos"):
        k(A=A, **args)
    m.indptr[3] = saved
    np.testing.assert_allclose(k(A=A, **args).to_numpy(), want(m, args))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_kernels_that_depend_on_the_order_or_on_distinct_coordinates_keep_the_whole_check(strategy):
    m = _matrix()
    A = ss.Tensor.from_scipy(m, name="A")
    D = np.arange(float(m.shape[0] * m.shape[1])).reshape(m.shape)
    kernels = [ss.lower("C[i, j] = A[i, j] * D[i, j]", strategy, A=A, D=D),   # (overwritten at each coordinate)
               ss.lower("B[i, j] = A[i, j] * 2", strategy, A=A),               # (a sparse output: in their order)
               ss.lower("M[i] = max[j](A[i, j])", "lattice", A=A)]             # (counts a row's entries)
    for k in kernels:
        assert not k.coordinates_checked and "owned-coordinates" not in k.trace.stages()
    r = next(r for r in range(m.shape[0]) if m.indptr[r + 1] - m.indptr[r] > 1)
    m.indices[m.indptr[r]], m.indices[m.indptr[r] + 1] = m.indices[m.indptr[r] + 1], m.indices[m.indptr[r]]
    for k, args in zip(kernels, ({"D": D}, {}, {})):
        with pytest.raises(FormatError, match="not strictly increasing"):
            k(A=A, **args)


def test_a_kernel_lowered_for_formats_or_for_its_own_copy_has_no_checks():
    m = _matrix()
    for k in (ss.lower("y[i] = A[i, j] * x[j]", "lattice", A="csr", x="dense"),
              ss.lower("y[i] = A[i, j] * x[j]", "lattice", A=ss.Tensor.from_scipy(m, copy=True), x=np.ones(30)),
              ss.lower("y[i] = A[i, j] * x[j]", "lattice", checked=True, A=ss.Tensor.from_scipy(m), x=np.ones(30))):
        assert not k.coordinates_checked and "stored coordinate" not in k.c_source.lower()
    # (called with the matrix in place all the same: checked whole at each call)
    k = ss.lower("y[i] = A[i, j] * x[j]", "lattice", A="csr", x="dense")
    m.indices[2] = 99
    with pytest.raises(FormatError, match=r"\[2\]=99 is out of range"):
        k(A=m, x=np.ones(30))


def test_einsum_and_the_array_front_end_check_positions_alone_and_coordinates_in_the_kernel():
    m = _matrix(seed=3)
    x = np.random.default_rng(2).random(30)
    for _ in range(2):   # (the second front-end call takes the kernel it lowered: positions alone checked first)
        np.testing.assert_allclose(ss.einsum("ij,j->i", m, x).to_numpy(), m @ x)
        np.testing.assert_allclose((xp.asarray(m) @ xp.asarray(x)).compute().to_numpy(), m @ x)
    m.indices[4] = 30
    with pytest.raises(FormatError, match=r"^T1 \(csr_matrix of shape \(40, 30\)\): indices\[4\]=30 is out of range"):
        ss.einsum("ij,j->i", m, x)
    with pytest.raises(FormatError, match=r"\(csr_matrix of shape \(40, 30\)\): indices\[4\]=30 is out of range"):
        (xp.asarray(m) @ xp.asarray(x)).compute()
    m.indices[4] = 0
    m.indices[5] = 0   # (a repeat, in range: added twice, as scipy's product adds it)
    np.testing.assert_allclose(ss.einsum("ij,j->i", m, x).to_numpy(), m @ x)
    np.testing.assert_allclose((xp.asarray(m) @ xp.asarray(x)).compute().to_numpy(), m @ x)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(0, 6), cols=st.integers(1, 6), density=st.sampled_from([0.0, 0.3, 1.0]),
       fmt=st.sampled_from(["csr", "csc"]), strategy=st.sampled_from(STRATEGIES), kind=st.sampled_from(sorted(ORDER_FREE)),
       odd=st.sampled_from([None, np.nan, np.inf, -np.inf]), write=st.sampled_from(["none", "shuffle", "repeat", "out"]),
       seed=st.integers(0, 2**16))
@example(rows=3, cols=2, density=1.0, fmt="csc", strategy="looplets", kind="transposed", odd=np.nan, write="out", seed=0)
@example(rows=1, cols=1, density=1.0, fmt="csr", strategy="lattice", kind="row sums", odd=None, write="out", seed=0)
@example(rows=1, cols=3, density=1.0, fmt="csr", strategy="lattice", kind="row sums", odd=None, write="shuffle", seed=0)
def test_any_write_of_an_owner_computes_as_scipy_or_is_refused(rows, cols, density, fmt, strategy, kind, odd, write, seed):
    program, operands, want = ORDER_FREE[kind]
    rng = np.random.default_rng(seed)
    m = _matrix(rows, cols, density, fmt, seed)
    if odd is not None and m.nnz:
        m.data[rng.integers(m.nnz)] = odd
    args = operands(m, rng)
    A = ss.Tensor.from_scipy(m, name="A")
    k = ss.lower(program, strategy, A=A, **args)
    if m.nnz and write == "shuffle":
        rng.shuffle(m.indices)
    elif m.nnz and write == "repeat":
        m.indices[:] = m.indices[0]
    elif m.nnz and write == "out":
        m.indices[rng.integers(m.nnz)] = rng.choice([-1, m.shape[1 if fmt == "csr" else 0], 2**31 - 1])
    bad = (m.indices < 0).any() or (m.indices >= m.shape[1 if fmt == "csr" else 0]).any()
    ordered = all(np.all(np.diff(m.indices[m.indptr[r]:m.indptr[r + 1]]) > 0) for r in range(len(m.indptr) - 1))
    reads = "A1_idx[" in k.c_source
    for a in (A, m):   # (the tensor the kernel was lowered for, then the matrix given anew: validated whole, once)
        try:
            with np.errstate(all="ignore"):
                got = k(A=a, **args).to_numpy()
        except FormatError:
            assert bad or not ordered
            assert a is m or not k.coordinates_checked or (bad and reads)
            continue
        assert not (bad and reads) and (ordered or k.coordinates_checked)
        if bad:   # (a CSR's row sums read no coordinate: none is read out of range, and the sums are the values')
            assert kind == "row sums" and fmt == "csr"
            want_now = [m.data[m.indptr[r]:m.indptr[r + 1]].sum() for r in range(m.shape[0])]
        else:
            with np.errstate(all="ignore"):
                want_now = want(m, args)
        np.testing.assert_allclose(got, want_now, equal_nan=True)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_matrix_written_out_of_range_is_named_as_scipy_names_it_however_the_kernel_checks(strategy):
    # the kernel that checks each coordinate itself, the one lowered for formats, a first call and a later one
    m, x = _matrix(), np.ones(30)
    own = ss.lower("y[i] = A[i, j] * x[j]", strategy, A=m, x=x)
    by_format = ss.lower("y[i] = A[i, j] * x[j]", strategy, A="csr", x="dense")
    assert own.coordinates_checked == {"A"} and not by_format.coordinates_checked
    for k in (own, by_format):
        k(A=m, x=x)
    t = ss.Tensor.from_scipy(m, name="A")   # (a Tensor the user holds over the same arrays)
    m.indices[7] = 30
    for k in (own, by_format, own):
        with pytest.raises(FormatError, match=r"^A \(csr_matrix of shape \(40, 30\)\): indices\[7\]=30 is out of range"):
            k(A=m, x=x)
    fresh = m.copy()   # (a matrix never seen: converted anew, checked by scipy's names too)
    with pytest.raises(FormatError, match=r"^A \(csr_matrix of shape \(40, 30\)\): indices\[7\]=30"):
        own(A=fresh, x=x)
    # the Tensor the user holds keeps the tensor's terms: its level and array
    with pytest.raises(FormatError, match=r"^A: level 1 \(SparseList\): idx\[7\]=30 is out of range"):
        own(A=t, x=x)
    # a matrix whose indices were replaced (not written in place) is converted anew, its own fault named
    m.indices = m.indices.copy()
    m.indices[7], m.indices[9] = 3, -1
    with pytest.raises(FormatError, match=r"indices\[9\]=-1 is out of range"):
        own(A=m, x=x)
