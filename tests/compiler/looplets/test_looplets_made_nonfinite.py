"""A sparse operand's fill 0 beside a value an operator may make NaN or infinite though every tensor
is finite (a literal ``inf``, ``exp(b)`` overflowing, ``1 / b``, ``0 / 0``), in both strategies:

* the looplets' ``integrate`` rule adds a run's ``(stop - start) * v`` only where the run is not
  empty (the gap between two adjacent entries is an empty run, and ``0 * inf`` is NaN);
* their ``annihilator`` rule keeps ``0 * x`` exact there, as numpy computes it and the lattice does.

Each kernel checked against numpy and the dense oracle."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss

STRATEGIES = ["lattice", "looplets"]

#: programs over a sparse a and dense b, c (finite values), with what numpy computes for them
SUMS = {   # (a[j] beside b[i]: the sum over j integrates a's runs of its fill)
    "y[i] = (a[j] + b[i]) * inf": lambda a, b, c: np.sum((a[None, :] + b[:, None]) * np.inf, axis=1),
    "y[i] = sum[j](1 / (a[j] + b[i]))": lambda a, b, c: np.sum(1 / (a[None, :] + b[:, None]), axis=1),
}
PRODUCTS = {   # (a, b and c of one length)
    "y[i] = a[i] * exp(b[i])": lambda a, b, c: a * np.exp(b),
    "s[] = a[i] * (c[i] / b[i])": lambda a, b, c: np.sum(a * (c / b)),
}
PROGRAMS = {**SUMS, **PRODUCTS}


def check(program, strategy, a, b, c):
    tensors = {"a": ss.Tensor.from_numpy(a, "sparse"), "b": ss.Tensor.from_numpy(b, "dense"),
               "c": ss.Tensor.from_numpy(c, "dense")}
    tensors = {n: t for n, t in tensors.items() if n + "[" in program}
    with np.errstate(all="ignore"):
        want = PROGRAMS[program](a, b, c)
        oracle, _ = ss.evaluate(program, **tensors)
        got = ss.lower(program, strategy, **tensors)(**tensors).to_numpy()
    np.testing.assert_array_equal(oracle, want)   # (NaN equal to NaN)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_adjacent_entries_leave_an_empty_run_that_adds_nothing(strategy):
    # the looplets added 0 * (b[i] * inf) for the empty gap between a's entries at 1 and 2: NaN
    b = np.array([0.0, 1.0])
    check("y[i] = (a[j] + b[i]) * inf", strategy, np.array([0.0, 1.0, 1.0]), b, b)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_an_overflowing_exp_beside_an_absent_entry_is_nan(strategy):
    # the looplets dropped 0 * exp(1000.0) as 0: exp of a finite value was taken to be finite
    a, b = np.array([0.0, 1.0, 0.0]), np.array([1000.0, 1.0, 2.0])
    check("y[i] = a[i] * exp(b[i])", strategy, a, b, b)


@st.composite
def cases(draw):
    program = draw(st.sampled_from(sorted(PROGRAMS)))
    n = draw(st.integers(0, 5))
    m = draw(st.integers(1, 3)) if program in SUMS else n
    vector = lambda pool, k: np.array(draw(st.lists(st.sampled_from(pool), min_size=k, max_size=k)))
    return program, vector([0.0, 1.0, -2.0, 2.5], n), vector([0.0, 1.0, -1.0, 1000.0], m), vector([0.0, 2.0], m)


@settings(max_examples=20)
@given(strategy=st.sampled_from(STRATEGIES), case=cases())
@example(strategy="looplets", case=("y[i] = sum[j](1 / (a[j] + b[i]))", np.array([0.0, 1.0, 1.0]),
                                    np.array([0.0, 1.0]), np.array([0.0, 0.0])))
# the looplets summed a's run of fill 0 as 0 * (c / b) folded to 0, where 0 / 0 is NaN
@example(strategy="looplets", case=("s[] = a[i] * (c[i] / b[i])", np.array([0.0, 1.0]),
                                    np.array([0.0, 1.0]), np.array([0.0, 2.0])))
def test_fills_beside_values_made_non_finite_agree_with_numpy(strategy, case):
    program, a, b, c = case
    check(program, strategy, a, b, c)
