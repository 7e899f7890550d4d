"""The Array API's dtypes, constants and data type functions (``compiler.array.data_types``) as numpy's,
and the namespace an array names (issue 30, item 1)."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
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


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.bool_])
@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("format", [None, "csr"])
def test_a_0d_product_and_vecdot_are_in_numpys_dtype(dtype, strategy, format):
    # (a 0-d product's sum was written in int64, numpy's tensordot of int32 arrays is int32; vecdot
    # summed as sum does, int64, and counted bools where numpy's vecdot is int32 and ors bools)
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    big = info.max // 2 + 1 if info is not None else 1
    a = np.array([[big, 1, 0], [0, big, 3]]).astype(dtype)
    b = np.array([[1, 2, 0], [3, 1, 1]]).astype(dtype)
    x = xp.asarray(a, format=format) if format else xp.asarray(a)
    y = xp.asarray(b)
    for got, want in [(xp.tensordot(x, y, axes=2), np.tensordot(a, b, axes=2)),
                      (xp.einsum("ij,ij->", x, y), np.einsum("ij,ij->", a, b)),
                      (xp.vecdot(x, y), np.vecdot(a, b)), (xp.vecdot(x, y, axis=0), np.vecdot(a, b, axis=0))]:
        assert got.dtype == want.dtype
        out = np.asarray(got.compute(strategy=strategy))
        assert out.dtype == want.dtype
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_mean_of_integers_sums_them_as_floats(dtype, strategy):
    # (numpy's mean of integers sums float64s; an int64 sum of two values near 2^63 wrapped negative)
    top = np.iinfo(dtype).max
    a = np.array([[top, top - 1, 3], [top, 1, 0]], dtype=dtype)
    x = xp.asarray(a, format="csr")
    for axis in (None, 1):
        got = np.asarray(xp.mean(x, axis=axis).compute(strategy=strategy))
        want = np.mean(a, axis=axis)
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32])
@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("format", [None, "csr"])
def test_sums_through_shape_operators_are_integer_arithmetic(dtype, strategy, format):
    # (the lattice's sequence kernels multiplied each term by the typed 1 of the sum as 1.0: a sum of
    # int64 values went through doubles, exact only to 2^53)
    exact = 2 ** 53 + 1 if np.dtype(dtype).itemsize == 8 else np.iinfo(dtype).max
    a = np.array([[7, exact, 2, 0], [0, 3, exact, 1]], dtype=dtype)
    x = xp.asarray(a, format=format) if format else xp.asarray(a)
    for got, want in [(xp.sum(x[:, 1:], axis=1), np.sum(a[:, 1:], axis=1)),
                      (xp.sum(xp.concat([x, x], axis=1), axis=1), np.sum(np.concatenate([a, a], axis=1), axis=1)),
                      (xp.sum(xp.reshape(x, (-1,))), np.sum(a))]:
        out = np.asarray(got.compute(strategy=strategy))
        assert out.dtype == want.dtype
        np.testing.assert_array_equal(out, want)
        assert "1.0" not in ss.lower(got, strategy=strategy).c_source


PAIRS = ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "float32"]


@settings(max_examples=5, deadline=None)
@given(adt=st.sampled_from(PAIRS), bdt=st.sampled_from(PAIRS), strategy=st.sampled_from(["lattice", "looplets"]),
       sparse=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(adt="int16", bdt="int16", strategy="lattice", sparse=True, seed=3)
@example(adt="int16", bdt="float32", strategy="lattice", sparse=False, seed=484)   # (float32 sums past 2^24)
def test_products_over_dtype_pairs_are_numpys(adt, bdt, strategy, sparse, seed):
    rng = np.random.default_rng(seed)
    with np.errstate(all="ignore"):
        a = np.where(rng.random((2, 3)) < 0.4, 0, rng.integers(-5, 2 ** 15, (2, 3))).astype(adt)
        b = np.where(rng.random((2, 3)) < 0.4, 0, rng.integers(-5, 2 ** 15, (2, 3))).astype(bdt)
    x = xp.asarray(a, format="csr" if sparse else None)
    y = xp.asarray(b)
    for got, want in [(x @ y.T, a @ b.T), (xp.vecdot(x, y), np.vecdot(a, b)), (xp.tensordot(x, y, axes=2), np.tensordot(a, b, axes=2))]:
        assert got.dtype == want.dtype
        out = np.asarray(got.compute(strategy=strategy))
        assert out.dtype == want.dtype
        if want.dtype.kind == "f":
            # (a float32 sum of products past 2^24 rounds at each step: numpy's BLAS may fuse a multiply and an
            # add, or add in another order, a unit in the last place away)
            np.testing.assert_array_max_ulp(out, want, maxulp=2)
        else:
            np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("format", [None, "csr"])
def test_a_wrapped_product_under_an_operator_is_numpys(strategy, format):
    # (the notation's sum of a product of int32 arrays counts in int64: under an operator, or summed
    # again, it went on unwrapped where numpy's int32 matmul had wrapped to -2^31)
    a = np.array([[2 ** 30, 2 ** 30, 0], [1, 0, 2]], np.int32)
    b = np.array([[2, 1], [1, 1], [0, 3]], np.int32)
    x = xp.asarray(a, format=format) if format else xp.asarray(a)
    y = xp.asarray(b)
    for got, want in [((x @ y) > 0, (a @ b) > 0), ((x @ y) // 3, (a @ b) // 3),
                      (xp.sum(x @ y, axis=1), np.sum(a @ b, axis=1)), (xp.vecdot(x, y.T) < 0, np.vecdot(a, b.T) < 0)]:
        out = np.asarray(got.compute(strategy=strategy))
        assert out.dtype == want.dtype == got.dtype
        np.testing.assert_array_equal(out, want)


def test_finfo_gives_python_numbers_and_a_complex_scalar_is_weak():
    # (the Array API's finfo fields are Python floats; numpy's finfo gave float32 scalars for float32)
    for dt in (xp.float32, xp.float64, xp.complex64, xp.complex128):
        info, want = xp.finfo(dt), np.finfo(dt)
        assert type(info.eps) is float and type(info.max) is float and type(info.smallest_normal) is float
        assert (info.bits, info.eps, info.min, info.dtype) == (want.bits, float(want.eps), float(want.min), want.dtype)
    # (1j beside float32 or complex64 is complex64, numpy 2's weak scalar: it was made a complex128 array first)
    for adt in ("float32", "complex64", "float64", "int8", "bool"):
        a = np.array([1, 0], dtype=adt)
        for s in (1j, 2.5, 3, True):
            assert (xp.asarray(a) * s).dtype == (a * s).dtype and (s + xp.asarray(a)).dtype == (s + a).dtype
