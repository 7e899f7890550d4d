"""numpy's math builtins in index notation (issue 31, item 2): ``sin cos tan floor ceil trunc``,
each against numpy by the oracle and by both strategies' kernels, over fills and formats."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, evaluate
from compiler.algebra import lookup
from compiler.values import ANY, FINITE, Facts, of_array, of_call

STRATEGIES = ["lattice", "looplets"]
NAN, INF = float("nan"), float("inf")
UNARY = ["sin", "cos", "tan", "floor", "ceil", "trunc"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_math_runs_numpys_function_with_a_float_result(name):
    op = lookup(name)
    x = np.array([0.0, -0.0, 1.5, -2.5, 1e300, INF, -INF, NAN])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(op(x), getattr(np, name)(x))
    assert op.result_dtype("int32").name == "float64" and op.result_dtype("float32").name == "float32"
    assert op.c_expr(["a"], "float32") == f"{name}f(a)" and op.c_expr(["a"], "int64") == f"{name}(a)"


@pytest.mark.parametrize("name", UNARY)
def test_unary_math_fill_is_the_function_of_the_fill(name):
    # sin(0) = 0 keeps a sparse zero-filled input sparse; cos(0) = 1 gives a 1-filled output
    op = lookup(name)
    for fill in (0.0, 1.0, -2.5, INF):
        with np.errstate(invalid="ignore"):
            want = getattr(np, name)(np.float64(fill))
        np.testing.assert_array_equal(op.fill(fill), want)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("facts", [FINITE, Facts(nan=True), Facts(posinf=True), Facts(neginf=True), ANY])
def test_unary_math_value_facts_cover_what_numpy_gives(name, facts):
    # of_call must be sound: an annihilator is only trusted where the facts say no NaN/inf
    pool = [0.0, -1.0, 2.5, 1e308, -1e308, np.pi / 2]
    pool += [NAN] * facts.nan + [INF] * facts.posinf + [-INF] * facts.neginf
    with np.errstate(invalid="ignore"):
        got = of_array(getattr(np, name)(np.array(pool)))
    assert got <= of_call(lookup(name), [facts])


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_math_kernels_match_numpy(strategy, name):
    vals = np.array([0.0, 1.5, 0.0, -2.5, INF, 0.0, NAN])
    x = Tensor.from_numpy(vals, "sparse_vector", name="x")
    program = f"c[i] = {name}(x[i])"
    out = ss.lower(program, strategy=strategy, x=x)(x=x)
    with np.errstate(invalid="ignore"):
        want = getattr(np, name)(vals)
    np.testing.assert_array_equal(out.to_numpy(), want)
    np.testing.assert_array_equal(evaluate(program, x=x)[0], want)
    if name in ("sin", "tan", "floor", "ceil", "trunc"):   # f(0) == 0: the output stays 0-filled
        assert out.fill == 0


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_unary_math_on_integers_and_float32(strategy):
    a = Tensor.from_numpy(np.array([0, 3, -7, 0], dtype=np.int32), "sparse_vector", name="a")
    b = Tensor.from_numpy(np.array([0.5, -1.25, 0, 2.75], dtype=np.float32), "dense", name="b")
    program = "c[i] = floor(b[i]) + sin(a[i])"
    got = ss.lower(program, strategy=strategy, a=a, b=b)(a=a, b=b).to_numpy()
    want = np.floor(b.to_numpy()) + np.sin(a.to_numpy().astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(evaluate(program, a=a, b=b)[0], want, rtol=1e-6)


VALUES = st.sampled_from([0.0, 1.0, -2.5, 3.7, -0.5, INF, -INF, NAN])
FILLS = st.sampled_from([0.0, 1.0, -2.5, INF, NAN])
FORMATS = st.sampled_from(["dense", "sparse_vector"])
PROGRAMS = [f"c[i] = {f}(x[i])" for f in UNARY] + [
    "c[i] = x[i] * sin(y[i])", "c[i] = floor(x[i]) + ceil(y[i])", "s[] = sum[i](cos(x[i]) * y[i])",
    "c[i] = trunc(x[i] * y[i])", "s[] = max[i](tan(x[i]))"]


@st.composite
def cases(draw):
    n = draw(st.integers(0, 6))
    tensors = {}
    for name in "xy":
        fill = draw(FILLS)
        vals = draw(st.lists(st.one_of(st.just(fill), VALUES), min_size=n, max_size=n))
        tensors[name] = Tensor.from_numpy(np.array(vals, dtype=float), draw(FORMATS), fill=fill, name=name)
    return draw(st.sampled_from(PROGRAMS)), tensors


@pytest.mark.parametrize("strategy", STRATEGIES)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cases())
@example(case=("c[i] = x[i] * sin(y[i])", {
    "x": Tensor.from_numpy(np.array([0.0, 0.0, 2.0]), "sparse_vector", name="x"),
    "y": Tensor.from_numpy(np.array([INF, 0.0, 3.0]), "sparse_vector", name="y")}))
def test_math_kernels_match_the_reference_and_numpy(strategy, case):
    program, tensors = case
    used = {k: v for k, v in tensors.items() if f"{k}[" in program}
    want, _ = evaluate(program, **used)
    for f in UNARY:   # one function: numpy itself
        if program == f"c[i] = {f}(x[i])":
            with np.errstate(invalid="ignore"):
                np.testing.assert_array_equal(want, getattr(np, f)(used["x"].to_numpy()))
    got = ss.lower(program, strategy=strategy, **used)(**used).to_numpy()
    np.testing.assert_array_equal(got, want)
