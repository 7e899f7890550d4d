"""asarray over every kind of input (no copy), the Array's attributes and conversions (issue 30)."""

from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
import sparse

import compiler as ss
from compiler import array as xp
from compiler import binding
from compiler.array import lazy
from array_cases import check

M = np.array([[0, 2.0, 0], [1.0, 0, 0]])


def test_asarray_shares_the_buffers_of_what_it_wraps():
    a = np.arange(6.0).reshape(2, 3)
    assert np.shares_memory(xp.asarray(a).node.tensor.vals, a)
    m = sp.csr_matrix(M)
    t = xp.asarray(m).node.tensor
    assert np.shares_memory(t.vals, m.data) and np.shares_memory(t.levels[1].idx, m.indices)
    c = sparse.COO.from_numpy(M)
    assert np.shares_memory(xp.asarray(c).node.tensor.vals, c.data)
    tensor = ss.Tensor.from_numpy(M, "csr")
    assert xp.asarray(tensor).node.tensor is tensor
    arr = xp.asarray(tensor)
    assert xp.asarray(arr) is arr


def test_asarray_converts_to_the_format_asked():
    assert xp.asarray(M, format="csr").node.tensor.format.shorthand == "csr"
    assert xp.asarray(sp.csr_array(M), format="csc").node.tensor.format.shorthand == "csc"
    assert xp.asarray(sparse.COO.from_numpy(M), format=ss.csr()).node.tensor.format.shorthand == "csr"
    np.testing.assert_array_equal(xp.asarray(M, format="coo").todense(), M)
    with pytest.raises(ss.UsageError, match="expected a numpy array, a scipy.sparse matrix or array, a pydata"):
        xp.asarray({1: 2})


def test_attributes_and_conversions():
    a = xp.asarray(sp.csr_array(M)) + 1
    assert (a.shape, a.dtype, a.ndim, a.size, len(a), a.fill_value) == ((2, 3), np.dtype("float64"), 2, 6, 2, 1.0)
    assert repr(a) == "Array(shape=(2, 3), dtype=float64, fill_value=1.0)"
    np.testing.assert_array_equal(np.asarray(a), M + 1)
    np.testing.assert_array_equal(a.todense(), M + 1)
    s = xp.asarray(sp.csr_array(M)).to_scipy()
    assert isinstance(s, sp.csr_array)
    np.testing.assert_array_equal(s.toarray(), M)
    assert float(a.sum()) == (M + 1).sum() and bool(a.min() > 0) is True
    assert (xp.asarray(M, format="csr") > 0).dtype == np.dtype(bool)
    with pytest.raises(TypeError, match="only a 0-d array converts to float"):
        float(a)


def test_numpy_on_the_left_defers_to_the_array():
    a = xp.asarray(M, format="csr")
    assert isinstance(M + a, xp.Array) and isinstance(M @ a.T, xp.Array)
    check(M - a, M - M)


def test_a_tensor_computes_through_the_array_language():
    A = ss.Tensor.from_numpy(M, "csr")
    check(xp.asarray(A).T @ np.array([1.0, 2.0]), M.T @ np.array([1.0, 2.0]))
    np.testing.assert_array_equal((A @ np.ones(3)).to_numpy(), M @ np.ones(3))


# -- buffers their owner writes after asarray (issue 30) ------------------------------------------

def _owned(kind):
    m = sp.random(5, 6, density=0.4, format="csr", random_state=3)
    return {"csr": m, "csc": m.tocsc(), "coo": m.tocoo(), "pydata": sparse.GCXS(sparse.COO.from_scipy_sparse(m))}[kind]


WRITES = [(kind, write) for kind in ("csr", "csc", "coo", "pydata") for write in ("index past", "index negative", "pos past")
          if not (kind == "coo" and write == "pos past")]   # (a COO keeps no indptr)


@pytest.mark.parametrize("kind, write", WRITES)
def test_an_index_written_out_of_range_after_asarray_is_refused_when_computed(kind, write):
    # on main the kernel read past the arrays (indptr: a crash; indices: another row's x)
    m = _owned(kind)
    a = xp.asarray(m, name="A")
    e = a @ xp.asarray(np.ones(6))
    if write == "pos past":
        m.indptr[1] = 10**6
    else:
        index = m.row if kind == "coo" else m.indices
        index[0] = 10**6 if write == "index past" else -5
    # (a scipy matrix read in place names its own arrays, as scipy does; one converted, or pydata's, the level)
    said = (rf"^A \({kind}_matrix of shape \(5, 6\)\): (indices|indptr)" if kind in ("csr", "csc")
            else r"^A: level \d \(\w+\): ")
    with pytest.raises(ss.FormatError, match=said):
        e.compute()
    with pytest.raises(ss.FormatError, match=said):
        a.compute()


def test_values_written_after_a_compute_are_taken_again():
    # a kernel lowered for finite values skips A * 0's product; an inf written since is NaN (as numpy's)
    m = sp.csr_matrix(np.array([[0, 2.0], [3.0, 0]]))
    e = xp.asarray(m) * xp.asarray(np.zeros(2))
    np.testing.assert_array_equal(e.todense(), np.zeros((2, 2)))
    m.data[0] = np.inf
    with np.errstate(invalid="ignore"):
        want = m.toarray() * np.zeros(2)
    np.testing.assert_array_equal(e.todense(), want)


# expressions over a matrix its owner writes NaN and infinities into between two compute() calls: a
# product with a dense vector's C is the same whatever the matrix's values hold, as a sum's with a sparse
# matrix; an elementwise product's with a sparse matrix is not (A * 0 skipped for finite A, NaN for A = inf)
_WRITTEN_CASES = {
    "matmul dense": lambda a, b, x: a @ x,
    "times sparse": lambda a, b, x: a * b,
    "plus sparse": lambda a, b, x: a + b,
}


@pytest.mark.parametrize("shared", ["scipy", "Tensor"])
@pytest.mark.parametrize("case", list(_WRITTEN_CASES))
def test_a_large_matrix_values_are_looked_at_by_compute_only_where_its_kernel_depends_on_them(shared, case):
    """compute() over a matrix of VALUES_ASKED_FROM stored values or more (every matrix here: it is patched
    to 0) checks the matrix's index arrays alone before lowering, and looks at its values only where the
    kernel's C depends on them, lowering again for what they hold now; the results are numpy's throughout."""
    m = sp.random(6, 5, density=0.5, format="csr", random_state=4)
    bm = sp.random(6, 5, density=0.5, format="csr", random_state=5)
    x = np.arange(1.0, 6.0)
    form = _WRITTEN_CASES[case]
    looked, check_again = [], ss.recheck.check_again

    def spied(tensor, name=None, facts=True, coordinates=True):
        looked.append(facts)
        return check_again(tensor, name, facts, coordinates)
    with mock.patch.object(binding, "VALUES_ASKED_FROM", 0), mock.patch.object(lazy, "check_again", spied), \
            mock.patch.object(ss.recheck, "check_again", spied):
        a = xp.asarray(m if shared == "scipy" else ss.Tensor.from_scipy(m))
        e = form(a, xp.asarray(bm), xp.asarray(x))

        def expect():
            with np.errstate(invalid="ignore"):
                want = form(m.toarray(), bm.toarray(), x)
            for _ in range(2):   # (the second with the choice kept: compiler.array.attempts)
                np.testing.assert_array_equal(e.todense(), want)
        expect()
        stored = m.data[[0, 3]].copy()
        m.data[[0, 3]] = [np.nan, -np.inf]   # (in place, as the matrix's owner may)
        expect()
        m.data[[0, 3]] = stored
        expect()
        m.indices[1] = 10 ** 6
        # (the matrix given, its array named as scipy names it; a Tensor over it, the tensor's level)
        said = r"\(csr_matrix of shape \(6, 5\)\): indices\[1\]=" if shared == "scipy" else \
            r"level 1 \(SparseList\): idx\[1\]="
        with pytest.raises(ss.FormatError, match=said):
            e.compute()
    assert False in looked and (True in looked) is (case == "times sparse")
