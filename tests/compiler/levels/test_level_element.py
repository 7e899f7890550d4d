import math
import re

import numpy as np
import pytest

from compiler.errors import DTypeError
from compiler.levels import Element


@pytest.mark.parametrize("dtype, fill, expected", [
    ("float64", 0, 0.0), ("float32", 1.5, 1.5), ("int32", 3.0, 3), ("bool", 1, True),
    ("float64", -math.inf, -math.inf)])
def test_fill_is_normalized_to_the_dtype(dtype, fill, expected):
    e = Element(fill, dtype=dtype)
    assert e.fill == expected and type(e.fill) is type(expected) and e.dtype == np.dtype(dtype)


@pytest.mark.parametrize("dtype, fill", [("int64", math.nan), ("bool", 2), ("int32", 2**40)])
def test_unrepresentable_fills(dtype, fill):
    with pytest.raises(DTypeError, match="cannot be represented"):
        Element(fill, dtype=dtype)


def test_nan_fill_keys_compare_equal():
    assert Element(math.nan, dtype="float64").format_key() == Element(float("nan"), dtype="float64").format_key()
    assert hash(Element(math.nan, dtype="float64").format_key()) == hash(Element(math.nan, dtype="float64").format_key())


def test_vals_dtype_and_cast():
    e = Element(0, np.array([1, 2], dtype=np.int32))
    assert e.dtype == np.int32 and e.arrays()["vals"].dtype == np.int32
    f = Element(0, [1, 2], dtype="float32")
    assert f.vals.dtype == np.float32 and f.count(2) == 2


def test_from_entries():
    out = Element(9.0).from_entries(4, np.array([1, 3]), [], np.array([1.0, 2.0]), [])
    assert out.vals.tolist() == [9.0, 1.0, 9.0, 2.0]


@pytest.mark.parametrize("fill", [None, "0", [1]])
def test_a_fill_that_is_no_number_is_refused(fill):
    with pytest.raises(DTypeError, match=f"fill value {re.escape(repr(fill))} must be a number or a bool, not "
                                         f"{type(fill).__name__}"):
        Element(fill, [1.0, 2.0])
