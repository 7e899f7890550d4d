"""The Array API's dtypes, constants and data type functions (``compiler.array.data_types``) as numpy's,
and the namespace an array names (issue 30, item 1)."""

import math

import numpy as np
import pytest

from compiler import array as xp


def test_the_dtypes_compare_equal_to_arrays_dtypes_and_cast_with_astype():
    # (in every dtype's range: a cast out of range is C's undefined case, given a defined value; see astype)
    x = xp.asarray(np.array([1.5, 2.0]))
    assert x.dtype == xp.float64 and x.dtype != xp.float32
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32"):
        dt = getattr(xp, name)
        got = xp.astype(x, dt)
        assert got.dtype == dt
        np.testing.assert_array_equal(got.todense(), np.array([1.5, 2.0]).astype(dt))
    assert xp.complex64 == np.complex64 and xp.complex128 == np.complex128 and not hasattr(xp, "float16")


def test_constants():
    assert (xp.e, xp.pi, xp.inf) == (math.e, math.pi, math.inf) and math.isnan(xp.nan)
    x = xp.asarray(np.arange(3.0))
    assert x[:, xp.newaxis].shape == (3, 1)


def test_data_type_functions_follow_numpy():
    x = xp.asarray(np.array([1, 2], dtype=np.int16))
    assert xp.result_type(x, xp.float32) == np.result_type(np.int16, np.float32)
    assert xp.result_type(x, 1) == np.int16 and xp.result_type(xp.uint8, xp.int8) == np.int16
    assert xp.can_cast(x, xp.int32) and not xp.can_cast(xp.float64, xp.int64)
    assert xp.isdtype(xp.uint8, "unsigned integer") and not xp.isdtype(xp.float32, "integral")
    assert xp.isdtype(xp.float32, ("integral", "real floating"))
    assert xp.finfo(xp.float32).eps == np.finfo(np.float32).eps and xp.iinfo(x).min == -32768


def test_the_namespace_and_its_inspection():
    x = xp.asarray(np.ones(2))
    assert x.__array_namespace__() is xp and x.device == "cpu" and x.to_device("cpu") is x
    with pytest.raises(ValueError, match="2023.12"):
        x.__array_namespace__(api_version="2021.12")
    with pytest.raises(ValueError, match="the only device is 'cpu'"):
        x.to_device("cuda")
    info = xp.__array_namespace_info__()
    assert info.devices() == ["cpu"] and info.default_dtypes()["real floating"] == np.float64
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"} and len(info.dtypes()) == 13
    assert info.default_dtypes()["complex floating"] == np.complex128
    assert xp.__array_api_version__ == "2023.12"


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.bool_, np.float32])
@pytest.mark.parametrize("strategy", [None, "looplets"])
def test_products_of_dense_arrays_are_in_numpys_dtype_wrapping_as_numpys(dtype, strategy):
    # (numpy's matmul, einsum and tensordot of int32 arrays are int32, their sums wrapping in 32 bits;
    # the statement's sum counts in int64, so the result was int64 where the array said int32)
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    big = info.max // 2 + 1 if info is not None else 1
    a = np.array([[big, 1, 3], [2, big, 0]]).astype(dtype)
    b = np.array([[1, 2], [big, 1], [1, 0]]).astype(dtype)
    x, y = xp.asarray(a), xp.asarray(b)
    for got, want in [(x @ y, a @ b), (xp.einsum("ij,jk->ik", x, y), np.einsum("ij,jk->ik", a, b)),
                      (xp.einsum("ij->i", x), np.einsum("ij->i", a)),
                      (xp.tensordot(x, y, axes=1), np.tensordot(a, b, axes=1))]:
        assert got.dtype == want.dtype
        out = got.compute(strategy=strategy)
        assert out.dtype == want.dtype, (got, strategy)
        np.testing.assert_array_equal(np.asarray(out), want)
    assert xp.sum(x, axis=1).compute(strategy=strategy).dtype == np.sum(a, axis=1).dtype   # (sum promotes)
