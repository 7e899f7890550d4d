"""Every validation error of user-built levels names the tensor, the level and the position."""

import numpy as np
import pytest

from compiler.errors import DTypeError, FormatError
from compiler.levels import Dense, Element, SparseCOO, SparseList
from compiler.tensor import Tensor


def csr(pos, idx, vals, nrows=3, ncols=5, name="A"):
    return Tensor(Dense(SparseList(Element(0.0, vals), ncols, pos=pos, idx=idx), nrows), name=name)


def test_valid_csr_passes():
    t = csr([0, 2, 2, 3], [0, 4, 1], [1.0, 2.0, 3.0])
    assert t.validate() is t


@pytest.mark.parametrize("pos, idx, vals, message", [
    ([0, 2, 3], [0, 1, 2], [1.0] * 3,
     r"A: level 1 \(SparseList\): pos has length 3, expected 4 \(parent has 3 positions\)"),
    ([1, 2, 2, 3], [0, 1, 2], [1.0] * 3, r"A: level 1 \(SparseList\): pos\[0\] must be 0, got 1"),
    ([0, 3, 2, 3], [0, 1, 2], [1.0] * 3,
     r"A: level 1 \(SparseList\): pos is not non-decreasing: pos\[1\]=3 > pos\[2\]=2"),
    ([0, 2, 2, 7], [0, 1, 2, 3, 4, 0], [1.0] * 6, r"A: level 1 \(SparseList\): pos\[-1\]=7 but idx has length 6"),
    ([0, 2, 2, 3], [0, 9, 2], [1.0] * 3, r"A: level 1 \(SparseList\): idx\[1\]=9 is out of range \[0, 5\)"),
    ([0, 2, 2, 3], [0, -1, 2], [1.0] * 3, r"idx\[1\]=-1 is out of range \[0, 5\)"),
    ([0, 1, 1, 3], [0, 3, 3], [1.0] * 3,
     r"A: level 1 \(SparseList\): idx is not strictly increasing in fiber 2: idx\[2\]=3 follows idx\[1\]=3 "
     r"\(duplicate coordinate\)"),
    ([0, 1, 1, 3], [0, 3, 2], [1.0] * 3,
     r"idx is not strictly increasing in fiber 2: idx\[2\]=2 follows idx\[1\]=3$"),
    ([0, 1, 1, 3], [0, 3, 4], [1.0] * 2, r"A: level 2 \(Element\): vals has length 2, expected 3"),
])
def test_sparse_list_errors(pos, idx, vals, message):
    with pytest.raises(FormatError, match=message):
        csr(pos, idx, vals)


def test_fiber_boundaries_are_not_order_errors():
    # idx may go down between fibers (rows 0 and 2), and empty fibers sit in between
    t = csr([0, 2, 2, 4], [3, 4, 0, 1], [1.0] * 4)
    assert t.to_numpy()[2].tolist() == [1.0, 1.0, 0, 0, 0]


def test_the_name_defaults_to_tensor():
    with pytest.raises(FormatError, match=r"^tensor: level 1"):
        Tensor(Dense(SparseList(Element(0.0, [1.0]), 2, pos=[0, 1], idx=[5]), 1))


def coo(idx, vals, shape=(3, 4), pos=None):
    n = len(idx[0])
    return Tensor(SparseCOO(2, Element(0.0, vals), shape, pos=[0, n] if pos is None else pos, idx=idx), name="C")


@pytest.mark.parametrize("idx, vals, pos, message", [
    (([0, 1], [0, 1, 2]), [1.0] * 2, None, r"C: level 0 \(SparseCOO\): idx1 has length 3, expected 2 \(as idx0\)"),
    (([0, 1], [0, 1]), [1.0] * 2, [0, 3], r"C: level 0 \(SparseCOO\): pos\[-1\]=3 but idx0 has length 2"),
    (([0, 1], [0, 1]), [1.0] * 2, [0, 1, 2], r"pos has length 3, expected 2 \(parent has 1 positions\)"),
    (([0, 3], [0, 1]), [1.0] * 2, None, r"C: level 0 \(SparseCOO\): idx0\[1\]=3 is out of range \[0, 3\)"),
    (([0, 1], [0, 4]), [1.0] * 2, None, r"idx1\[1\]=4 is out of range \[0, 4\)"),
    (([1, 0], [0, 1]), [1.0] * 2, None,
     r"C: level 0 \(SparseCOO\): coordinates are not in lexicographic order in fiber 0: "
     r"\(idx0, idx1\)\[1\]=\(0, 1\) follows \(idx0, idx1\)\[0\]=\(1, 0\)$"),
    (([1, 1], [2, 2]), [1.0] * 2, None,
     r"\(idx0, idx1\)\[1\]=\(1, 2\) follows \(idx0, idx1\)\[0\]=\(1, 2\) \(duplicate coordinate\)"),
    (([1, 1], [2, 3]), [1.0] * 3, None, r"C: level 1 \(Element\): vals has length 3, expected 2"),
])
def test_coo_errors(idx, vals, pos, message):
    with pytest.raises(FormatError, match=message):
        coo(idx, vals, pos=pos)


def test_coo_lexicographic_order_accepts_row_major():
    t = coo(([0, 0, 2], [1, 3, 0]), [1.0, 2.0, 3.0])
    assert t.to_numpy()[0].tolist() == [0, 1.0, 0, 2.0]


def test_dtype_errors():
    with pytest.raises(DTypeError, match="float16 is not supported"):
        Element(0.0, np.ones(2, dtype=np.float16))
    with pytest.raises(DTypeError, match=r"fill value 1j is complex; float64 values are real"):
        Element(1j, np.ones(2))
    with pytest.raises(DTypeError, match="index dtype int16 is not supported"):
        SparseList(Element(0.0), pos=np.array([0, 1], dtype=np.int16), idx=np.array([0], dtype=np.int16))
    with pytest.raises(DTypeError, match="SparseList idx must hold integers, not float64"):
        SparseList(Element(0.0), pos=[0, 1], idx=[0.5])
    with pytest.raises(DTypeError, match="fill value inf cannot be represented in int32"):
        Element(float("inf"), np.ones(2, dtype=np.int32))


def test_structural_errors():
    with pytest.raises(FormatError, match="needs both pos and idx, or neither"):
        SparseList(Element(0.0), pos=[0, 1])
    with pytest.raises(FormatError, match="must be a 1-D array"):
        SparseList(Element(0.0), pos=[[0, 1]], idx=[0])
    with pytest.raises(FormatError, match="expected a level, got int"):
        Tensor(Dense(3))
    with pytest.raises(FormatError, match=r"SparseCOO\(2\) needs 2 idx arrays, got 1"):
        SparseCOO(2, Element(0.0), pos=[0, 1], idx=([0],))


def test_mixed_index_dtypes_are_unified():
    lvl = SparseList(Element(0.0, [1.0]), 3, pos=np.array([0, 1], dtype=np.int32), idx=np.array([2]))
    assert lvl.pos.dtype == lvl.idx.dtype == np.int64 == lvl.index_dtype
