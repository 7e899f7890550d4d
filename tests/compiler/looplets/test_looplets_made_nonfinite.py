"""A product with a sparse operand's fill 0 beside an operand an operator may make NaN or infinite
from finite tensors (``exp(b)`` overflows, ``c / b`` is NaN for ``0 / 0``): the looplets'
``annihilator`` rule keeps ``0 * x`` exact there, as numpy computes it and the lattice does.
Each kernel checked against numpy and the oracle."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss

STRATEGIES = ["lattice", "looplets"]

#: programs over a sparse a and dense b, c (finite values), with what numpy computes for them
PROGRAMS = {
    "y[i] = a[i] * exp(b[i])": lambda a, b, c: a * np.exp(b),
    "s[] = a[i] * (c[i] / b[i])": lambda a, b, c: np.sum(a * (c / b)),
}


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
def test_an_overflowing_exp_beside_an_absent_entry_is_nan(strategy):
    # the looplets dropped 0 * exp(1000.0) as 0: exp of a finite value was taken to be finite
    a, b = np.array([0.0, 1.0, 0.0]), np.array([1000.0, 1.0, 2.0])
    check("y[i] = a[i] * exp(b[i])", strategy, a, b, b)


@st.composite
def cases(draw):
    n = draw(st.integers(0, 5))
    vector = lambda pool: np.array(draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)))
    return vector([0.0, 1.0, -2.0]), vector([0.0, 1.0, -1.0, 1000.0]), vector([0.0, 2.0])


@settings(max_examples=15)
@given(program=st.sampled_from(sorted(PROGRAMS)), strategy=st.sampled_from(STRATEGIES), case=cases())
# the looplets summed a's run of fill 0 as 0 * (c / b) folded to 0, where 0 / 0 is NaN
@example(program="s[] = a[i] * (c[i] / b[i])", strategy="looplets",
         case=(np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([0.0, 2.0])))
def test_products_with_operands_made_non_finite_agree_with_numpy(program, strategy, case):
    check(program, strategy, *case)
