"""Tensors over numpy, scipy.sparse and pydata/sparse arrays (compiler.interop), sharing buffers, and
index notation taking those arrays directly (issue 30)."""

import numpy as np
import pytest
import scipy.sparse as sp
import sparse

import compiler as ss
from compiler import array as xp
from compiler.errors import FormatError
from compiler.interop import to_tensor

M = np.array([[0, 2.0, 0], [1.0, 0, 0], [0, 0, 3.0]])


def test_a_contiguous_numpy_array_is_shared_in_either_order():
    for a in (np.arange(6.0).reshape(2, 3), np.asfortranarray(np.arange(6.0).reshape(2, 3)),
              np.arange(24, dtype=np.int32).reshape(2, 3, 4)):
        t = to_tensor(a, "a")
        assert np.shares_memory(t.vals, a)
        np.testing.assert_array_equal(t.to_numpy(), a)
        assert t.dtype == a.dtype and t.fill == 0


def test_a_strided_view_is_copied_and_still_right():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    np.testing.assert_array_equal(to_tensor(a).to_numpy(), a)


@pytest.mark.parametrize("make, arrays", [
    (sp.csr_matrix, lambda m: (m.data, m.indices, m.indptr)),
    (sp.csr_array, lambda m: (m.data, m.indices, m.indptr)),
    (sp.csc_array, lambda m: (m.data, m.indices, m.indptr)),
    (sp.coo_array, lambda m: (m.data, m.row, m.col)),
    (lambda a: sparse.COO.from_numpy(a), lambda x: (x.data, x.coords[0], x.coords[1])),
    (lambda a: sparse.GCXS.from_numpy(a, compressed_axes=(0,)), lambda x: (x.data, x.indices, x.indptr)),
    (lambda a: sparse.GCXS.from_numpy(a, compressed_axes=(1,)), lambda x: (x.data, x.indices, x.indptr)),
])
def test_a_sparse_array_of_another_library_is_shared(make, arrays):
    m = make(M)
    t = to_tensor(m, "A")
    np.testing.assert_array_equal(t.to_numpy(), M)
    stored = [a for lvl in t.levels for a in lvl.arrays().values()] + [t.vals]
    for theirs in arrays(m):
        assert any(np.shares_memory(theirs, ours) for ours in stored)


def test_pydata_fill_value_becomes_the_tensor_fill():
    a = np.array([[1.0, 5.0], [1.0, 1.0]])
    t = to_tensor(sparse.COO.from_numpy(a, fill_value=1.0))
    assert t.fill == 1.0 and t.nnz == 1
    np.testing.assert_array_equal(t.to_numpy(), a)


def test_einsum_and_lower_take_scipy_and_pydata_arrays():
    # before: "tensor A: expected a Tensor, a numpy array or a format, not csr_matrix"
    x = np.array([1.0, 2.0, 3.0])
    for A in (sp.csr_matrix(M), sp.csc_array(M), sp.coo_matrix(M), sparse.COO.from_numpy(M),
              sparse.GCXS.from_numpy(M)):
        y = ss.einsum("y[i] = A[i, j] * x[j]", A=A, x=sparse.COO.from_numpy(x))
        np.testing.assert_array_equal(y.to_numpy(), M @ x)
        k = ss.lower("y[i] = A[i, j] * x[j]", A=A, x=x)
        np.testing.assert_array_equal(k(A=A, x=x).to_numpy(), M @ x)


def test_tensor_matmul_computes_as_numpy():
    # before: A @ x went into numpy, which does not know a Tensor
    A = ss.Tensor.from_numpy(M, "csr")
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal((A @ x).to_numpy(), M @ x)
    np.testing.assert_array_equal((x @ A).to_numpy(), x @ M)
    np.testing.assert_array_equal((A @ A).to_numpy(), M @ M)
    np.testing.assert_array_equal((A @ sp.csr_array(M)).to_numpy(), M @ M)


def test_an_unknown_object_is_refused_by_name():
    with pytest.raises(ss.UsageError, match="tensor A: expected a Tensor, a numpy array, a scipy.sparse"):
        ss.einsum("y[i] = A[i]", A={1: 2})


def test_an_array_of_a_dtype_kernels_do_not_take_is_refused_naming_it():
    with pytest.raises(ss.DTypeError, match=r"x of shape \(3,\): dtype float16 is not supported; use one of .*"
                                            r"convert it with .astype"):
        to_tensor(np.arange(3, dtype=np.float16), "x")


def test_a_0d_pydata_array_is_its_fill():
    # on main: "fill value array(3.) must be a number or a bool, not ndarray" (pydata's 0-d fill_value)
    t = to_tensor(sparse.COO.from_numpy(np.array(3.0)), "s")
    assert t.shape == () and t.to_numpy() == 3.0


def test_a_pydata_array_it_cannot_convert_is_refused_naming_it():
    g = sparse.GCXS(sparse.COO.from_numpy(np.arange(24.0).reshape(2, 3, 4)), compressed_axes=[0])
    g.indices[0] = 99   # (written in place: pydata's tocoo raised its ValueError, naming no array)
    with pytest.raises(ss.FormatError, match=r"^G \(GCXS of shape \(2, 3, 4\)\): indices\[0\]=99 is out of range"):
        to_tensor(g, "G")


@pytest.mark.parametrize("axes, shape", [([0], (2, 2)), ([1], (2, 2)), ([0], (2, 2, 2)), ([0, 2], (2, 3, 2))])
@pytest.mark.parametrize("array, at, bad", [("indices", 0, 9), ("indices", -1, -4), ("indptr", 1, 9),
                                            ("indptr", -1, 1), ("indptr", 0, 1), ("indptr", 1, -5)])
def test_a_pydata_gcxs_written_malformed_is_refused_naming_it(axes, shape, array, at, bad):
    """A GCXS array whose indptr or indices were written after pydata built it: a FormatError naming
    the pydata array (main: pydata's ValueError, or, for a 3-D one, pydata's tocoo read rows of other
    entries and the result was wrong with no error)."""
    g = sparse.GCXS(sparse.COO.from_numpy(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)), compressed_axes=axes)
    getattr(g, array)[at] = bad
    with pytest.raises(FormatError, match=rf"^A \(GCXS of shape \({', '.join(map(str, shape))},?\)\): "):
        (xp.asarray(g, name="A") * 2).compute()


@pytest.mark.parametrize("make", [lambda a: sp.csr_matrix(a), lambda a: sp.csc_array(a),
                                  lambda a: sparse.GCXS.from_numpy(a, compressed_axes=[0])])
def test_an_array_taken_again_is_the_same_tensor_its_arrays_checked_again(make):
    # (einsum in a solver's loop: one tensor over the matrix, its format and bound pointers found again; each
    # time its arrays are checked once more, as their owner may have written them in place)
    a = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]])
    m = make(a)
    t = to_tensor(m, "A")
    assert to_tensor(m, "A") is t and to_tensor(m, "B") is not t and to_tensor(make(a), "A") is not t
    x = np.array([1.0, 10.0, 100.0])
    for _ in range(2):
        np.testing.assert_array_equal(ss.einsum("ij,j->i", m, x).to_numpy(), a @ x)
    m.data[0] = np.nan          # (values written in place: the kernel for NaN, not the one that skips 0 * x)
    a = np.asarray(m.todense())
    assert np.isnan(a).any()
    np.testing.assert_array_equal(ss.einsum("ij,j->i", m, x).to_numpy(), a @ x)
    assert to_tensor(m, "A").value_facts.nan
    m.data[0] = 5.0             # (and written over: its facts are what it holds again)
    assert to_tensor(m, "A").value_facts.finite
    np.testing.assert_array_equal(ss.einsum("ij,j->i", m, x).to_numpy(), np.asarray(m.todense()) @ x)
    indices = m.indices
    indices[0] = 7              # (an index written out of range in place: refused, not read past x)
    with pytest.raises(FormatError, match="out of range"):
        ss.einsum("ij,j->i", m, x)
    with pytest.raises(FormatError, match="out of range"):
        xp.asarray(m).compute()


def test_a_converted_array_is_not_kept_and_a_kept_one_dies_with_its_array():
    import weakref
    # (a COO with repeated entries is summed into a copy: a write to the matrix would not reach a kept copy)
    m = sp.coo_matrix((np.array([1.0, 2.0]), (np.array([0, 0]), np.array([1, 1]))), shape=(2, 2))
    assert to_tensor(m, "A") is not to_tensor(m, "A")
    m.data[0] = 5.0
    np.testing.assert_array_equal(ss.einsum("ij,j->i", m, np.ones(2)).to_numpy(), [7.0, 0.0])
    # (the tensor over a matrix's own arrays goes when the matrix does: as its last reference goes, no collection
    # of a test worker's whole heap needed)
    m = sp.csr_matrix(np.eye(3))
    kept = weakref.ref(to_tensor(m, "A"))
    assert kept() is to_tensor(m, "A")
    del m
    assert kept() is None
    # (an attribute replaced, a resize: a new tensor over what it holds now)
    m = sp.csr_matrix(np.eye(3))
    t = to_tensor(m, "A")
    m.indices = m.indices.copy()
    assert to_tensor(m, "A") is not t
    t = to_tensor(m, "A")
    m.resize((3, 4))
    assert to_tensor(m, "A") is not t and to_tensor(m, "A").shape == (3, 4)


def test_einsum_reads_a_scipy_matrix_s_arrays_once_per_call():
    # (its arrays are checked as the tensor over them is taken again; the kernel's call does not read them again)
    import compiler.recheck as recheck
    m = sp.csr_matrix(np.array([[0.0, 2.0], [3.0, 0.0]]))
    ss.einsum("ij,j->i", m, np.ones(2))
    t = to_tensor(m, "T1")     # (numpy's subscripts name their operands T1, T2, ...)
    assert to_tensor(m, "T1") is t
    runs, check = [], recheck.kept_checker(t)

    def counted():
        runs.append(1)
        return check()
    counted.ops = check.ops
    t.__dict__["_checker"] = counted
    # (the kernel's fast path, were it to check the arrays again, runs a check that fails, and the call goes the
    # general way, which checks them a second time: counted)
    broken = sp.csr_matrix(np.eye(2))
    broken_check = recheck.checker(to_tensor(broken, "X"))
    broken.indices[0] = 9
    plan, pointers, count, chain, _ = t._fast_pointers
    t._fast_pointers = (plan, pointers, count, chain, broken_check.ops)
    for n in range(1, 4):
        np.testing.assert_array_equal(ss.einsum("ij,j->i", m, np.ones(2)).to_numpy(), [2.0, 3.0])
        assert len(runs) == n, runs


def test_functions_of_tensors_take_arrays_of_the_array_language():
    # (compiler.einsum(..., A, B) of two xp arrays said "expected a Tensor, ... not Array")
    m = sp.random(6, 5, density=0.5, format="csr", random_state=1)
    n = sp.random(5, 4, density=0.5, format="coo", random_state=2)
    a, b = xp.asarray(m), xp.asarray(n)
    want = m.toarray() @ n.toarray()
    np.testing.assert_allclose(ss.einsum("ij,jk->ik", a, b).to_numpy(), want)
    # (an operand's own tensor, over the scipy matrix's arrays: no copy)
    assert to_tensor(a) is to_tensor(a) and np.shares_memory(to_tensor(a).vals, m.data)
    # (an expression is computed first, numpy's subscripts and index notation alike)
    np.testing.assert_allclose(ss.einsum("ij,jk->ik", a * 2, b).to_numpy(), 2 * want)
    np.testing.assert_allclose(ss.einsum("y[i] = A[i, j] * x[j]", A=a - 1, x=np.arange(5.0)).to_numpy(),
                               (m.toarray() - 1) @ np.arange(5.0))
    kernel = ss.lower("y[i] = A[i, j] * x[j]", A=a, x=np.ones(5))
    np.testing.assert_allclose(kernel(A=a, x=np.ones(5)).to_numpy(), m.toarray().sum(axis=1))
    with pytest.raises(ss.ShapeError, match="index j has extent 5 in T1"):
        ss.einsum("ij,jk->ik", a, a)
