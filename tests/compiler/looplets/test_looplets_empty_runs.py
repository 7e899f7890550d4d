"""A sum over a sparse operand's runs of its fill, where the summand may be infinite though every
tensor is finite (a literal ``inf``, a division): the looplets' ``integrate`` rule adds
``(stop - start) * v`` only where the run is not empty, as ``0 * inf`` is NaN. The gap between
two adjacent entries is such an empty run. Each kernel checked against numpy and the oracle."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss

STRATEGIES = ["lattice", "looplets"]

#: programs over a sparse a[j] and a dense b[i] (finite values), with what numpy computes for them
PROGRAMS = {
    "y[i] = (a[j] + b[i]) * inf": lambda a, b: np.sum((a[None, :] + b[:, None]) * np.inf, axis=1),
    "y[i] = sum[j](1 / (a[j] + b[i]))": lambda a, b: np.sum(1 / (a[None, :] + b[:, None]), axis=1),
}


def check(program, strategy, a, b):
    tensors = {"a": ss.Tensor.from_numpy(a, "sparse"), "b": ss.Tensor.from_numpy(b, "dense")}
    with np.errstate(all="ignore"):
        want = PROGRAMS[program](a, b)
        oracle, _ = ss.evaluate(program, **tensors)
        got = ss.lower(program, strategy, **tensors)(**tensors).to_numpy()
    np.testing.assert_array_equal(oracle, want)   # (NaN equal to NaN)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_adjacent_entries_leave_an_empty_run_that_adds_nothing(strategy):
    # the looplets added 0 * (b[i] * inf) for the empty gap between a's entries at 1 and 2: NaN
    check("y[i] = (a[j] + b[i]) * inf", strategy, np.array([0.0, 1.0, 1.0]), np.array([0.0, 1.0]))


@st.composite
def cases(draw):
    n, m = draw(st.integers(0, 5)), draw(st.integers(1, 3))
    a = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, -1.0, 2.5]), min_size=n, max_size=n)))
    b = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, -2.0]), min_size=m, max_size=m)))
    return a, b


@settings(max_examples=15)
@given(program=st.sampled_from(sorted(PROGRAMS)), strategy=st.sampled_from(STRATEGIES), case=cases())
@example(program="y[i] = sum[j](1 / (a[j] + b[i]))", strategy="looplets",
         case=(np.array([0.0, 1.0, 1.0]), np.array([0.0, 1.0])))
def test_sums_over_fill_runs_agree_with_numpy(program, strategy, case):
    check(program, strategy, *case)
