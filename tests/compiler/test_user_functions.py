"""A user function's declared annihilator (compiler.user_functions): checked against its ``py`` when it is
made, its non-finite exceptions kept as its conditions, so a kernel skips work by it only where that is
exact. ``mulu = x * y`` declared to annihilate at 0 gave 0 where ``0 * inf`` is NaN, in both strategies."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, evaluate
from compiler.user_functions import user_function

nan, inf = np.nan, np.inf
STRATEGIES = ["lattice", "looplets"]
MUL = user_function("mulu", np.multiply, "return x * y;", annihilator=0.0, commutative=True, associative=True,
                    identity=1.0)
PROGRAMS = ["y[i] = sum[j](mulu(A[i, j], x[j]))", "C[i, j] = mulu(A[i, j], x[j])"]


def test_the_annihilators_exceptions_are_what_py_says():
    assert MUL.annihilator_unless == ("nan", "+inf", "-inf")   # (as the builtin *)
    plus = user_function("plusu", np.add, "return x + y;", annihilator=inf, identity=0.0, commutative=True)
    assert plus.annihilator_unless == ("nan", "-inf")          # (inf + -inf is NaN)
    # (py takes no float: the integer probes it takes are checked, the others skipped)
    gcd = user_function("gcdu", math.gcd, "while (y) { int64_t t = x % y; x = y; y = t; } return x < 0 ? -x : x;",
                        identity=0, commutative=True, annihilator=1)
    assert gcd.annihilator_unless == ()


def test_a_false_annihilator_is_refused_naming_the_counterexample():
    with pytest.raises(ValueError, match=r"user function maxu: annihilator 1\.0 does not annihilate: "
                                         r"maxu\(1\.0, 2\.0\) is 2\.0, not 1\.0"):
        user_function("maxu", np.maximum, "return x > y ? x : y;", annihilator=1.0, commutative=True)


def check(prog, A, fill_a, x, fill_x, fmt):
    TA = Tensor.from_numpy(A, fmt, fill=fill_a)
    Tx = Tensor.from_numpy(x, "sparse", fill=fill_x)
    with np.errstate(all="ignore"):
        want = evaluate(prog, functions={"mulu": MUL}, A=TA, x=Tx)[0]
        numpy = (A * x).sum(axis=1) if prog.startswith("y") else A * x
        np.testing.assert_array_equal(want, numpy)
        for strategy in STRATEGIES:
            k = ss.lower(prog, strategy, functions={"mulu": MUL}, A=TA, x=Tx)
            got = k(A=TA, x=Tx)
            got.validate()
            np.testing.assert_array_equal(got.to_numpy(), want, err_msg=f"{prog} by {strategy}")


@pytest.mark.parametrize("prog", PROGRAMS)
def test_zero_times_a_stored_inf_is_nan(prog):
    check(prog, np.array([[0.0, 2.0], [inf, 0.0]]), 0.0, np.array([0.0, 1.0]), 0.0, "csr")


VALUES = [0.0, 1.0, -2.0, inf, -inf, nan]


@st.composite
def operands(draw):
    n, m = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    fill_a, fill_x = draw(st.sampled_from([0.0, 1.0, nan, inf])), draw(st.sampled_from([0.0, 1.0, nan]))
    A = np.array(draw(st.lists(st.sampled_from(VALUES + [fill_a] * 3), min_size=n * m, max_size=n * m)),
                 dtype=float).reshape(n, m)
    x = np.array(draw(st.lists(st.sampled_from(VALUES + [fill_x] * 3), min_size=m, max_size=m)), dtype=float)
    return A, fill_a, x, fill_x, draw(st.sampled_from(["csr", "csc", "dense"]))


@settings(max_examples=6, deadline=None)
@given(operands(), st.sampled_from(PROGRAMS))
@example((np.array([[0.0, 2.0], [inf, 0.0]]), 0.0, np.array([0.0, 1.0]), 0.0, "csc"), PROGRAMS[0])
@example((np.array([[nan, 0.0]]), 0.0, np.array([0.0, 0.0]), 0.0, "dense"), PROGRAMS[1])
def test_products_by_a_user_annihilator_are_numpys(drawn, prog):
    check(prog, *drawn)
