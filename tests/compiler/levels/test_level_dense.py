import numpy as np

from compiler.levels import Dense, Element, level_class


def test_properties_and_mapping():
    d = Dense(Element(0.0), 4)
    assert (d.name, d.nmodes, d.full, d.locatable, d.ordered, d.unique, d.branchless, d.compact) == \
        ("Dense", 1, True, True, True, True, False, True)
    assert d.count(3) == 12 and d.arrays() == {} and d.sizes == (4,)
    pix, (i,), child = d.children(np.array([0, 2]))
    assert pix.tolist() == [0] * 4 + [1] * 4
    assert i.tolist() == [0, 1, 2, 3] * 2 and child.tolist() == [0, 1, 2, 3, 8, 9, 10, 11]
    coords, child, total = d.fiber(1, 2)
    assert coords[0].tolist() == [0, 1] and child.tolist() == [4, 5] and total == 4


def test_from_entries_fills_unstored_positions():
    spec = Dense(Element(-1.0))
    lvl = spec.from_entries(2, np.array([0, 1]), [np.array([1, 0])], np.array([5.0, 6.0]), [3])
    assert lvl.size == 3 and lvl.child.vals.tolist() == [-1, 5, -1, 6, -1, -1]


def test_spec_and_key():
    d = Dense(Element(0.0, [1.0, 2.0]), 2)
    assert d.spec().size is None and d.spec().child.vals is None
    assert d.format_key() == Dense(Element(0.0, dtype="float64")).format_key()
    assert d.format_key() != Dense(Element(1.0, dtype="float64")).format_key()
    assert level_class("dense") is Dense
    assert repr(d) == "Dense(Element(0.0, vals=<2 x float64>), 2)"


def test_a_level_format_is_named_by_a_string():
    import pytest

    from compiler.errors import FormatError
    with pytest.raises(FormatError, match="a level format is named by a string such as 'SparseList', got 5"):
        level_class(5)
    with pytest.raises(FormatError, match="unknown level format 'ell'; known: .*SparseList"):
        level_class("ell")
