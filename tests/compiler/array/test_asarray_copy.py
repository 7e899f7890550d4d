"""``asarray``'s ``copy`` (the Array API's): None shares the buffers where it can (a scipy or pydata
array's index arrays are checked again at each call), True makes the Array's own sealed copy
(read with no check per call, unaffected by the owner's later writes), False never copies and
says why it would have to (compiler/array/lazy.py)."""

import numpy as np
import pytest
import scipy.sparse as sp

import compiler as ss
from compiler import array as xp
from compiler.errors import FormatError, UsageError
from compiler.sealing import index_writers, sealed

M = np.array([[0, 2.0, 0, 1.0], [3.0, 0, 0, 0], [0, 0, 0, 0], [0, 4.0, 5.0, 0]])
X = np.array([1.0, 10.0, 100.0, 1000.0])


@pytest.mark.parametrize("kind", ["csr", "csc", "coo"])
def test_a_copy_is_sealed_and_keeps_its_values_when_the_owner_writes_its_arrays(kind):
    m = sp.coo_matrix(M).asformat(kind)
    m.sum_duplicates()
    shared, own = xp.asarray(m), xp.asarray(m, copy=True)
    assert not sealed(index_writers(shared.node.tensor))
    assert sealed(index_writers(own.node.tensor))
    assert not np.shares_memory(own.node.tensor.vals, m.data)
    ys = (own @ X).compute().to_numpy(), (shared @ X).compute().to_numpy()
    assert np.array_equal(ys[0], M @ X) and np.array_equal(ys[1], M @ X)
    # the owner writes a coordinate out of range in place: the shared Array refuses, the copy computes
    (m.col if kind == "coo" else m.indices)[0] = 10**6
    m.data[:] = -1.0
    assert np.array_equal((own @ X).compute().to_numpy(), M @ X)
    with pytest.raises(FormatError, match="out of range"):
        (shared @ X).compute()


def test_a_copy_of_an_array_expression_or_tensor_is_its_own():
    t = ss.Tensor.from_numpy(M, "csr")
    c = xp.asarray(t, copy=True).node.tensor
    assert c is not t and not np.shares_memory(c.vals, t.vals) and np.array_equal(c.to_numpy(), M)
    e = xp.asarray(xp.asarray(M) * 2, copy=True)
    assert np.array_equal(np.asarray(e), M * 2)
    d = np.array(M)
    a = xp.asarray(d, copy=True)
    d[0, 0] = 7.0
    assert np.array_equal(np.asarray(a), M)


def test_a_conversion_or_a_kernel_is_the_copy_itself(monkeypatch):
    # copy=True over a conversion or an expression keeps the arrays those made (sealed), where it
    # copied them a second time; over what shares the caller's buffers it still copies
    copies = []
    real = ss.Tensor.copy
    monkeypatch.setattr(ss.Tensor, "copy", lambda self: copies.append(self) or real(self))
    d = np.array(M)
    converted = xp.asarray(d, format="csr", copy=True).node.tensor
    computed = xp.asarray(xp.asarray(sp.csr_matrix(M)) * 2, copy=True).node.tensor
    assert copies == []
    for t, want in ((converted, M), (computed, M * 2)):
        assert sealed(index_writers(t)) and np.array_equal(t.to_numpy(), want)
        assert not np.shares_memory(t.vals, d)
    d[0, 1] = 7.0
    assert np.array_equal(converted.to_numpy(), M)
    shared = ss.Tensor.from_numpy(M, "csr")
    own = xp.asarray(xp.asarray(shared), copy=True).node.tensor
    assert len(copies) == 1 and not np.shares_memory(own.vals, shared.vals)
    dense = xp.asarray(d, copy=True).node.tensor
    assert len(copies) == 2 and not np.shares_memory(dense.vals, d)


def test_copy_false_shares_or_says_why_it_cannot():
    d = np.array(M)
    assert np.shares_memory(xp.asarray(d, copy=False).node.tensor.vals, d)
    m = sp.csr_matrix(M)
    assert np.shares_memory(xp.asarray(m, copy=False).node.tensor.vals, m.data)
    t = ss.Tensor.from_numpy(M, "csr")
    assert xp.asarray(t, copy=False).node.tensor is t
    with pytest.raises(ValueError, match=r"copy=False, but format='csr' converts it"):
        xp.asarray(d, format="csr", copy=False)
    with pytest.raises(ValueError, match=r"copy=False, but a lil_matrix of this layout is copied"):
        xp.asarray(sp.lil_matrix(M), copy=False)
    unsorted = sp.csr_matrix((np.array([1.0, 2.0]), np.array([3, 1]), np.array([0, 2, 2, 2, 2])), shape=(4, 4))
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(unsorted, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray([[1.0, 2.0]], copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(d[:, ::2], copy=False)
    with pytest.raises(UsageError, match="copy is True, False or None"):
        xp.asarray(d, copy="yes")


def test_from_scipy_copy_makes_the_tensors_own_sealed_arrays():
    m = sp.csr_array(M)
    t = ss.Tensor.from_scipy(m, copy=True, name="A")
    assert sealed(index_writers(t)) and not np.shares_memory(t.levels[1].idx, m.indices)
    k = ss.lower("y[i] = A[i, j] * x[j]", A=t, x=X, y="dense")
    m.indices[0] = 10**6
    assert np.array_equal(k(A=t, x=X).to_numpy(), M @ X)
