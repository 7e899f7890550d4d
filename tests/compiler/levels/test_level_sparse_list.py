import numpy as np
import pytest

from compiler.errors import FormatError
from compiler.levels import Compressed, Element, SparseList, level_class


def test_properties_and_alias():
    s = SparseList(Element(0.0))
    assert (s.name, s.full, s.ordered, s.unique, s.locatable, s.compact) == \
        ("SparseList", False, True, True, False, True)
    assert Compressed is SparseList and level_class("compressed") is SparseList
    assert s.index_dtype == np.int64 and not s.has_data and s.arrays() == {}
    with pytest.raises(FormatError, match="unknown level format 'hashed'"):
        level_class("hashed")


def test_children_of_several_parents():
    s = SparseList(Element(0.0, np.arange(5.0)), 6, pos=[0, 2, 2, 5], idx=[1, 4, 0, 2, 5])
    pix, (i,), child = s.children(np.array([2, 1, 0]))
    assert pix.tolist() == [0, 0, 0, 2, 2]
    assert i.tolist() == [0, 2, 5, 1, 4] and child.tolist() == [2, 3, 4, 0, 1]
    assert s.count(3) == 5
    coords, child, total = s.fiber(2, 2)
    assert coords[0].tolist() == [0, 2] and total == 3


def test_from_entries_groups_by_parent_and_keeps_index_dtype():
    spec = SparseList(Element(0.0), index_dtype="int32")
    lvl = spec.from_entries(3, np.array([0, 0, 2]), [np.array([1, 3, 0])], np.array([1.0, 2.0, 3.0]), [4])
    assert lvl.pos.tolist() == [0, 2, 2, 3] and lvl.idx.tolist() == [1, 3, 0]
    assert lvl.pos.dtype == lvl.idx.dtype == np.int32
    assert lvl.child.vals.tolist() == [1.0, 2.0, 3.0]


def test_zero_copy_construction():
    pos, idx = np.array([0, 1], dtype=np.int32), np.array([2], dtype=np.int32)
    s = SparseList(Element(0.0, [1.0]), 3, pos, idx)
    assert s.pos is pos and s.idx is idx and s.index_dtype == np.int32


def test_format_key_includes_index_dtype():
    a = SparseList(Element(0.0, dtype="float64"))
    b = SparseList(Element(0.0, dtype="float64"), index_dtype="int32")
    assert a.format_key() != b.format_key()
    assert a.spec_str() == "SparseList(Element(0.0))"
    assert b.spec_str() == "SparseList(Element(0.0), index_dtype='int32')"
