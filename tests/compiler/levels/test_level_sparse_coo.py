import re

import numpy as np
import pytest

from compiler.levels import Element, SparseCOO


def test_properties():
    c = SparseCOO(3, Element(0.0))
    assert c.nmodes == 3 and c.mode_unique == (False, False, True) and c.ordered and not c.full
    assert c.sizes == (None, None, None) and c.spec_str() == "SparseCOO(3, Element(0.0))"


def test_children_and_from_entries_under_a_parent():
    spec = SparseCOO(2, Element(0.0))
    coords = [np.array([0, 1, 1, 0]), np.array([2, 0, 1, 1])]
    parent = np.array([0, 0, 0, 1])
    lvl = spec.from_entries(2, parent, coords, np.array([1.0, 2.0, 3.0, 4.0]), [2, 3])
    assert lvl.pos.tolist() == [0, 3, 4] and lvl.shape == (2, 3)
    assert [a.tolist() for a in lvl.idx] == [[0, 1, 1, 0], [2, 0, 1, 1]]
    pix, (i, j), child = lvl.children(np.array([1]))
    assert pix.tolist() == [0] and (i.tolist(), j.tolist(), child.tolist()) == ([0], [1], [3])
    assert sorted(lvl.arrays()) == ["idx0", "idx1", "pos"]
    assert lvl.count(2) == 4


@pytest.mark.parametrize("ndim", [2.5, 0, -1, True, "2"])
def test_the_number_of_modes_must_be_a_positive_integer(ndim):
    from compiler.errors import FormatError
    with pytest.raises(FormatError, match=f"SparseCOO's first argument is the number of modes it stores, an integer "
                                          f">= 1; got {re.escape(repr(ndim))}"):
        SparseCOO(ndim, Element(0.0))
