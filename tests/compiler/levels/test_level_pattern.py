import numpy as np
import pytest

from compiler.errors import FormatError
from compiler.levels import Pattern


def test_pattern_is_an_implicit_true_leaf():
    p = Pattern()
    assert p.fill is False and p.dtype == np.bool_ and p.arrays() == {} and p.is_leaf
    assert p.format_key() == Pattern().format_key() == ("Pattern",)
    assert p.values_at(np.arange(3)).tolist() == [True] * 3
    assert p.from_entries(2, np.array([0, 1]), [], np.array([True, True]), []) is p
    with pytest.raises(FormatError, match="1 of its 2 positions would hold False"):
        p.from_entries(2, np.array([1]), [], np.array([True]), [])
