"""``min`` and ``max`` of an integer or bool operand beside a float one, in both strategies: numpy's
NaN propagation guards only a float first operand (C's ``isnan`` takes no integer, and an
operand of another dtype is left uncast beside a float64 one). Each kernel is checked against
numpy and the dense oracle, and built by GCC, which rejected the C (TCC, the suite's quick
compiler, took it)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss

STRATEGIES = ["lattice", "looplets"]


@pytest.fixture(autouse=True, scope="module")
def built_by_gcc():
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("SPARSESCOPE_QUICK_CC", raising=False)
        yield

#: programs over n (int64) and x (float64), with what numpy computes for them
PROGRAMS = {
    "y[i] = max(n[i], x[i])": lambda n, x: np.maximum(n, x),
    "y[i] = min(n[i], x[i])": lambda n, x: np.minimum(n, x),
    "y[i] = max(n[i] > 0, x[i])": lambda n, x: np.maximum(n > 0, x),
    "y[i] = min(x[i] >= n[i], x[i])": lambda n, x: np.minimum(x >= n, x),
}


def check(program, strategy, fmt, n, x, fill):
    tensors = {"n": ss.Tensor.from_numpy(n, fmt), "x": ss.Tensor.from_numpy(x, fmt, fill=fill)}
    with np.errstate(invalid="ignore"):
        want = np.asarray(PROGRAMS[program](n, x))
    oracle, _ = ss.evaluate(program, **tensors)
    got = ss.lower(program, strategy, **tensors)(**tensors).to_numpy()
    np.testing.assert_array_equal(oracle, want)
    np.testing.assert_array_equal(got, want)   # (NaN equal to NaN)
    assert got.dtype == want.dtype


def test_an_integer_first_operand_beside_a_float_compiles_and_propagates_nan():
    # the looplets' C called isnan on the int64 operand (uncast beside the float64): cc rejected it
    n = np.array([-3, 0, 2, 5])
    x = np.array([np.nan, 1.0, -np.inf, np.inf])
    for strategy in STRATEGIES:
        got = ss.einsum("y[i] = max(n[i], x[i])", strategy, n=n, x=x).to_numpy()
        np.testing.assert_array_equal(got, [np.nan, 1.0, 2.0, np.inf])


@st.composite
def cases(draw):
    size = draw(st.integers(0, 5))
    n = np.array(draw(st.lists(st.integers(-3, 3), min_size=size, max_size=size)), dtype=np.int64)
    floats = st.sampled_from([0.0, 1.0, -2.5, 3.0, np.nan, np.inf, -np.inf])
    x = np.array(draw(st.lists(floats, min_size=size, max_size=size)), dtype=np.float64)
    return n, x, draw(st.sampled_from([0.0, np.nan]))


@settings(max_examples=6)
@given(program=st.sampled_from(sorted(PROGRAMS)), strategy=st.sampled_from(STRATEGIES),
       fmt=st.sampled_from(["dense", "sparse"]), case=cases())
@example(program="y[i] = max(n[i] > 0, x[i])", strategy="looplets", fmt="sparse",
         case=(np.array([1, 0, -2]), np.array([np.nan, 1.0, -3.0]), 0.0))
def test_mixed_min_max_agree_with_numpy_and_the_oracle(program, strategy, fmt, case):
    n, x, fill = case
    check(program, strategy, fmt, n, x, fill)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_reduction_of_mixed_max_at_the_extremes(strategy):
    n = np.array([np.iinfo(np.int64).max, -1, 0, 4])
    x = np.array([-np.inf, np.nan, -0.0, 4.0])
    got = ss.einsum("s[] += max(n[i], x[i])", strategy, n=n, x=x).to_numpy()
    np.testing.assert_array_equal(got, np.sum(np.maximum(n, x)))
