"""The type of a shape-operator statement's result under the lattice strategy (BURRITO's sequence
expressions, compiler.lattice.seqemit) is the statement's, as numpy types it: a sum of int32 values
is int64, a sum of bools int64, an int32 slice times 1.5 float64. The kernel took its inputs' type
where the statement had no operator: ``sum(a[1:])`` of an int32 ``a`` summed in int32, wrapping
past 2^31 - 1, and returned int32. Against numpy, the dense oracle and the looplets strategy."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp

BIG = 2 ** 31 - 1


@settings(max_examples=7, deadline=None)
@given(dtype=st.sampled_from(["int32", "int8", "uint8", "bool", "float32", "int64"]),
       values=st.lists(st.sampled_from([0, 1, 3, -2, 100, BIG]), min_size=6, max_size=6),
       fmt=st.sampled_from(["dense", "csr"]), how=st.sampled_from(["sum", "sum_rows", "scaled"]))
@example(dtype="int32", values=[0, 0, 3, BIG, 5, BIG], fmt="dense", how="sum")        # wrapped past 2^31 - 1
@example(dtype="bool", values=[1, 0, 1, 1, 0, 1], fmt="csr", how="sum_rows")           # was bool
@example(dtype="int32", values=[3, 0, 1, -2, 0, 1], fmt="dense", how="scaled")         # was truncated to int32
def test_a_shape_operator_statements_result_is_numpys_type(dtype, values, fmt, how):
    a = np.array(values).astype(dtype).reshape(3, 2)
    x = xp.asarray(ss.Tensor.from_numpy(a, fmt))
    expr, want = {"sum": (xp.sum(x[1:]), a[1:].sum()),
                  "sum_rows": (xp.sum(xp.reshape(x, (2, 3)), axis=1), a.reshape(2, 3).sum(1)),
                  "scaled": (x[::-1] * 1.5, a[::-1] * 1.5)}[how]
    for strategy in ("lattice", "looplets"):
        got = np.asarray(expr.compute(strategy=strategy))
        assert got.dtype == want.dtype, (strategy, got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)
    if dtype == "bool":   # (the notation's sum of booleans the sequence lowering refuses, naming looplets)
        return
    program = "s[] = sum[k](sum[j](slice(A[i, j], i -> k, (1, 3, 1))))"
    A = ss.Tensor.from_numpy(a, fmt)
    oracle, _ = ss.evaluate(program, A=A)
    got = ss.lower(program, "lattice", A=A)(A=A).to_numpy()
    assert got.dtype == oracle.dtype == a[1:].sum().dtype
    np.testing.assert_array_equal(got, a[1:].sum())


@settings(max_examples=8, deadline=None)
@given(dtype=st.sampled_from(["int32", "int8", "uint8", "int64"]), fmt=st.sampled_from(["dense", "sparse"]),
       program=st.sampled_from(["c[k] = slice(x[i], i -> k, (1, 4, 1)) * 2",
                                "c[k] = slice(x[i], i -> k, (1, 4, 1)) + 2147483647",
                                "c[] = sum[k](slice(x[i], i -> k, (0, 3, 1)) * 3)",
                                "c[] = sum[k](slice(x[i], i -> k, (0, 3, 1)) * slice(x[i], i -> k, (1, 4, 1)))"]))
@example(dtype="int32", fmt="dense", program="c[] = sum[k](slice(x[i], i -> k, (0, 3, 1)) * 3)")
@example(dtype="int8", fmt="sparse", program="c[] = sum[k](slice(x[i], i -> k, (0, 3, 1)) * slice(x[i], i -> k, (1, 4, 1)))")
def test_integer_literals_and_products_are_integer_arithmetic_in_numpys_dtype(dtype, fmt, program):
    # (an int literal was the double 1.0, 2.0, so a sum of int64 went through doubles, exact only to 2^53;
    # as an integer, C computes int32 * 2 in 32 bits where numpy's int64 literal makes it int64, and int8 * int8
    # in int where numpy wraps at 8 bits: each operand is cast to numpy's dtype, a narrow result cast back)
    top = np.iinfo(dtype).max
    v = np.array([top, top // 2 + 1, 0, 7], dtype=dtype)
    x = ss.Tensor.from_numpy(v, fmt)
    want, _ = ss.evaluate(program, x=x)
    kernel = ss.lower(program, "lattice", x=x)
    got = kernel(x=x).to_numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert "1.0" not in kernel.c_source and "2.0" not in kernel.c_source and "3.0" not in kernel.c_source


@settings(max_examples=10, deadline=None)
@given(dtype=st.sampled_from(["float32", "float64", "int32", "uint8", "complex64"]),
       values=st.lists(st.sampled_from([0.0, 1.0, -2.0, 250.0, np.nan, np.inf]), min_size=6, max_size=6),
       fmt=st.sampled_from(["dense", "csr"]),
       how=st.sampled_from(["isnan_max", "sum_positive", "prod_equal", "min_less"]))
@example(dtype="float32", values=[np.nan, 0, 0, 0, 0, 0], fmt="dense", how="isnan_max")   # (max was a bool)
@example(dtype="float32", values=[0, 0, 0, 0, 0, 250], fmt="dense", how="sum_positive")    # (the sum was a bool)
def test_a_reduction_compared_into_a_bool_reduces_in_its_own_dtype(dtype, values, fmt, how):
    # (the sequence lowering's scalar temporaries took the output's dtype: isnan(max(x)), the front end's
    # max(x) != max(x), reduced into two bools, -inf made true, and said False of a NaN maximum)
    a = np.array([v for v in values if np.dtype(dtype).kind in "fc" or np.isfinite(v)] + [0.0] * 6)[:6]
    a = a.astype(dtype).reshape(3, 2)
    x = xp.reshape(xp.asarray(ss.Tensor.from_numpy(a, fmt)), (2, 3))
    r = a.reshape(2, 3)
    if r.dtype.kind == "c" and how in ("isnan_max", "min_less", "sum_positive"):
        return   # (no order of complex values: the Array API's max and < refuse them)
    with np.errstate(all="ignore"):
        expr, want = {"isnan_max": lambda: (xp.isnan(xp.max(x)), np.isnan(r.max())),
                      "sum_positive": lambda: (xp.sum(x, axis=1) > 1, r.sum(1) > 1),
                      "prod_equal": lambda: (xp.prod(x) == xp.prod(x[:, ::-1]), r.prod() == r[:, ::-1].prod()),
                      "min_less": lambda: (xp.min(x, axis=0) < 1, r.min(0) < 1)}[how]()
    for strategy in ("lattice", "looplets"):
        with np.errstate(all="ignore"):
            got = np.asarray(expr.compute(strategy=strategy))
        assert got.dtype == np.bool_, (strategy, got.dtype)
        np.testing.assert_array_equal(got, want, err_msg=strategy)
