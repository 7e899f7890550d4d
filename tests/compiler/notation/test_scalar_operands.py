"""0-d tensors on the right side, ``s[]`` (TACO's ``beta()``): parsed, shape-checked, computed by
the oracle and by both strategies (the lattice's reads it once, before its loops), against numpy and the
IR interpreter, over formats, fills and values (NaN, inf) and dtypes (issue 31 item 2)."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss

STRATEGIES = ["lattice", "looplets"]
A = np.array([[0, 2.0, 0], [1.0, 0, 3.0]])
X = np.array([1.0, 0, 2.0])

#: programs reading s[] with what numpy computes for them
PROGRAMS = {
    "y[i] = A[i, j] * x[j] * s[]": lambda a, x, s: (a * x * s).sum(axis=1),
    "y[i] = s[] * x[i]": lambda a, x, s: s * x,
    "y[i] = x[i] + s[]": lambda a, x, s: x + s,
    "y[i] = min(x[i], s[])": lambda a, x, s: np.minimum(x, s),
    "C[i, j] = A[i, j] * s[]": lambda a, x, s: a * s,
    "C[i, j] = A[i, j] + s[]": lambda a, x, s: a + s,
    "t[] = s[] * 2": lambda a, x, s: np.asarray(s * 2),
    "t[] = sum[i](x[i] * s[])": lambda a, x, s: np.asarray((x * s).sum()),
}


def run(program, strategy, a, x, s, fmt="dense", fill=0.0):
    tensors = {"A": ss.Tensor.from_numpy(a, "csr" if fmt == "sparse" else "dense", fill=fill),
               "x": ss.Tensor.from_numpy(x, fmt, fill=fill), "s": s}
    tensors = {n: t for n, t in tensors.items() if re.search(rf"\b{n}\[", program.split("=", 1)[1])}
    with np.errstate(all="ignore"):
        want = PROGRAMS[program](a, x, np.asarray(s)[()])
    oracle, _ = ss.evaluate(program, **tensors)
    np.testing.assert_allclose(oracle, want, rtol=1e-12)
    kernel = ss.lower(program, strategy, **tensors)
    np.testing.assert_allclose(kernel(**tensors).to_numpy(), oracle, rtol=1e-12)
    np.testing.assert_allclose(kernel.interpret(**tensors).to_numpy(), oracle, rtol=1e-12)
    return kernel


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_a_0d_tensor_is_read_on_the_right_side(strategy, program):
    for s in [np.array(2.0), 0.0, np.float64(np.nan), -np.inf]:
        run(program, strategy, A, X, s, fmt="sparse")


@settings(max_examples=15)
@given(program=st.sampled_from(sorted(PROGRAMS)), strategy=st.sampled_from(STRATEGIES),
       fmt=st.sampled_from(["dense", "sparse"]), fill=st.sampled_from([0.0, 1.0, np.nan, np.inf]),
       s=st.sampled_from([2.5, 0.0, -1.0, np.nan, np.inf, -np.inf]),
       a=st.lists(st.sampled_from([0.0, 1.0, 2.5, np.nan, np.inf]), min_size=6, max_size=6),
       x=st.lists(st.sampled_from([0.0, 1.0, -3.0, np.nan, np.inf]), min_size=3, max_size=3))
def test_scalar_operands_agree_with_numpy_over_fills_and_values(program, strategy, fmt, fill, s, a, x):
    run(program, strategy, np.array(a).reshape(2, 3), np.array(x), np.array(s), fmt, fill)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("s", [np.uint8(200), np.int32(-7), True, 3])
def test_integer_and_bool_scalars(strategy, s):
    x = np.array([100, 0, 7], np.uint8)
    got = ss.einsum("y[i] = x[i] + s[]", strategy, x=x, s=s).to_numpy()
    want, _ = ss.evaluate("y[i] = x[i] + s[]", x=x, s=s)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, x + np.asarray(s))   # numpy's dtype: uint8 + uint8 wraps


def test_the_lattice_reads_the_scalar_once_before_its_loops():
    k = ss.lower("y[i] = A[i, j] * x[j] * s[]", "lattice", A=ss.Tensor.from_numpy(A, "csr"), x=X, s=2.0)
    c = k.c_source
    assert "double s_value = s_val[0];" in c
    assert c.index("s_value = s_val[0]") < c.index("for (")
    assert c.count("s_val[") == 1


def test_one_kernel_serves_every_value_of_the_scalar():
    k = ss.lower("y[i] = x[i] * s[]", "lattice", x=X, s=2.0)
    assert ss.lower("y[i] = x[i] * s[]", "lattice", x=X, s=5.0) is k
    np.testing.assert_array_equal(k(x=X, s=5.0).to_numpy(), X * 5.0)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_0d_array_operand_of_an_array_expression_is_a_0d_tensor(strategy):
    a = ss.asarray(A)
    e = a * ss.asarray(np.array(3.0))
    k = ss.lower(e, strategy=strategy)
    assert str(k.program).endswith("[]"), k.program   # read as B[], not compiled in as a literal 3.0
    np.testing.assert_array_equal(np.asarray(e), A * 3.0)
