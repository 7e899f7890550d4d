"""``astype(dtype)``: numpy's conversion in index notation, both strategies, the interpreter and the array
language, with a defined answer where C's cast of a float is undefined (NaN, infinities, out of range)."""

import json
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp, evaluate, serialize
from compiler.algebra import astype, lookup
from compiler.errors import DTypeError
from compiler.opimpls import cast_sentinel, float_to_int_bounds

STRATEGIES = ["lattice", "looplets"]
NAN, INF = float("nan"), float("inf")
EDGES = np.array([0.0, 2.9, -2.9, 127.5, 128.0, -128.9, -129.0, 255.9, 2.0 ** 31, -2.0 ** 31 - 0.5, 2.0 ** 63,
                  -2.0 ** 63, 2.0 ** 64, 1e300, INF, -INF, NAN])
TARGETS = ["int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "bool", "float32"]


def numpy_where_defined(values, dtype):
    """numpy's cast where it is defined; ours elsewhere is the sentinel."""
    dt = np.dtype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = values.astype(dt)
    if dt.kind in "iu" and values.dtype.kind == "f":
        lo, hi = float_to_int_bounds(dt)
        want = np.where((values > lo) & (values < hi), want, cast_sentinel(dt))
    return want


def test_astype_parses_prints_and_round_trips():
    a = ss.parse("c[i] = astype(int32)(x[i]) + 1")
    assert str(a) == "c[i] = astype(int32)(x[i]) + 1"
    assert str(ss.parse(str(a))) == str(a)
    op = lookup("astype", "uint8")
    assert op == astype(np.uint8) and op.result_dtype("float64").name == "uint8"
    assert serialize.decode(json.loads(json.dumps(serialize.encode(op)))) == op
    with pytest.raises(ss.algebra.UnknownOperatorError, match="float16 is no value dtype"):
        astype("float16")
    with pytest.raises(ss.errors.ParseError, match=r"(?s)astype\(float16\): float16 is no value dtype.*\^"):
        ss.parse("c[i] = astype(float16)(x[i])")
    with pytest.raises(ss.errors.ParseError, match=r"expected '\)' after the parameter of astype \(found '\['\)"):
        ss.parse("c[i] = astype(x[i])")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", TARGETS)
def test_astype_of_floats_matches_numpy_where_defined_and_the_sentinel_elsewhere(strategy, dtype):
    x = Tensor.from_numpy(EDGES, "sparse_vector", name="x")
    program = f"c[i] = astype({dtype})(x[i])"
    k = ss.lower(program, strategy=strategy, x=x)
    want = numpy_where_defined(EDGES, dtype)
    for got in (k(x=x).to_numpy(), k.interpret(x=x).to_numpy(), evaluate(program, x=x)[0]):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, want)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        inside = (EDGES > -2.0 ** 31) & (EDGES < 2.0 ** 31) if dtype != "float32" else np.isfinite(EDGES)
        if np.dtype(dtype).kind in "iu":
            lo, hi = float_to_int_bounds(dtype)
            inside = (EDGES > lo) & (EDGES < hi)
        np.testing.assert_array_equal(k(x=x).to_numpy()[inside], EDGES[inside].astype(dtype))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_astype_between_integers_wraps_as_numpy_and_bool_is_nonzero(strategy):
    v = np.array([0, 300, -129, 2 ** 40 + 5, -1, 127], dtype=np.int64)
    x = Tensor.from_numpy(v, "sparse_vector", name="x")
    for dtype in ("int8", "uint16", "int32", "bool", "float32", "uint64"):
        program = f"c[i] = astype({dtype})(x[i])"
        got = ss.lower(program, strategy=strategy, x=x)(x=x).to_numpy()
        want = evaluate(program, x=x)[0]
        assert got.dtype == want.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(want, v.astype(dtype))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_cast_fill_is_the_cast_of_the_fill(strategy):
    # a NaN-filled vector cast to int32: its fill becomes int32's minimum, its entries truncate
    x = Tensor.from_numpy(np.array([NAN, 2.5, NAN, -7.9]), "sparse_vector", fill=NAN, name="x")
    out = ss.lower("c[i] = astype(int32)(x[i])", strategy=strategy, x=x)(x=x)
    assert out.fill == np.iinfo(np.int32).min
    np.testing.assert_array_equal(out.to_numpy(), [np.iinfo(np.int32).min, 2, np.iinfo(np.int32).min, -7])


@pytest.mark.parametrize("kind", ["numpy", "csr"])
def test_the_array_languages_astype(kind):
    a = np.array([[0.0, 2.7, NAN], [-1.2, 0.0, 300.0]])
    A = xp.asarray(a if kind == "numpy" else Tensor.from_numpy(a, "csr"))
    mask = (A > 1).astype(np.float64)
    np.testing.assert_array_equal(mask.todense(), (a > 1).astype(np.float64))
    got = xp.sum(A.astype(np.int16), axis=1).compute()
    np.testing.assert_array_equal(got.to_numpy(), numpy_where_defined(a, "int16").sum(axis=1))
    assert got.dtype == np.int64   # (numpy's sum of int16 is int64)
    assert A.astype(np.float64) .node is A.node   # (already float64: no operator)
    with pytest.raises(DTypeError, match="astype: astype\\(float16\\)"):
        A.astype(np.float16)


@pytest.mark.parametrize("strategy", STRATEGIES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_property_astype_kernels_agree_with_the_oracle(strategy, data):
    n = data.draw(st.integers(0, 6))
    pool = st.sampled_from([0.0, 1.5, -2.5, 200.0, -200.0, 4e9, 1e20, INF, -INF, NAN])
    fill = data.draw(pool)
    vals = np.array(data.draw(st.lists(st.one_of(st.just(fill), pool), min_size=n, max_size=n)), dtype=float)
    x = Tensor.from_numpy(vals, data.draw(st.sampled_from(["dense", "sparse_vector"])), fill=fill, name="x")
    dtype = data.draw(st.sampled_from(TARGETS))
    program = f"c[i] = astype({dtype})(x[i])"
    want = evaluate(program, x=x)[0]
    np.testing.assert_array_equal(want, numpy_where_defined(x.to_numpy(), dtype))
    np.testing.assert_array_equal(ss.lower(program, strategy=strategy, x=x)(x=x).to_numpy(), want)
