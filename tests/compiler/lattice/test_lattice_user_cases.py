"""Per-case bodies of user functions (the sparse array programming paper's ``x,0 => {...}``):
the lattice strategy emits the cheaper body in the cases where some operands are absent."""

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, Trace, evaluate, parse, serialize
from compiler.algebra import user_function
from compiler.lattice.cfir import Setup, build_cfir, interpret_cfir

GCD_BODY = """x = x < 0 ? -x : x;
y = y < 0 ? -y : y;
while (x != 0) { int64_t t = x; x = y % x; y = t; }
return y;"""

GCD = user_function("gcd", math.gcd, GCD_BODY, algebra="x | y", commutative=True,
                    cases={("x",): "return x < 0 ? -x : x;", "y": "return y < 0 ? -y : y;"})


def ints(rng, shape, density):
    a = rng.integers(-30, 30, size=shape)
    a[rng.random(shape) >= density] = 0
    return a.astype(np.int64)


def test_gcd_emits_each_case_body_where_one_operand_is_absent():
    a = np.array([0, 12, -7, 0, 9, 0], dtype=np.int64)
    b = np.array([0, 18, 0, -5, 6, 0], dtype=np.int64)
    A, B = (Tensor.from_numpy(v, "sparse_vector") for v in (a, b))
    trace = Trace()
    k = ss.lower("c[i] = gcd(a[i], b[i])", functions={"gcd": GCD}, a=A, b=B, trace=trace, checked=True)
    np.testing.assert_array_equal(k(a=A, b=B).to_numpy(), np.gcd(a, b))
    src = k.c_source
    for helper in ("ss_gcd_int64(", "ss_gcd_x_int64(", "ss_gcd_y_int64("):
        assert f"= {helper}" in src, helper  # each is called, not only defined
    assert "static inline int64_t ss_gcd_x_int64(int64_t x) {\n    return x < 0 ? -x : x;\n}" in src
    points = "\n".join(a.text for s in trace.steps if s.stage == "lattice" for a in s.artifacts)
    assert "gcd_x(a[i])" in points and "gcd_y(b[i])" in points


def test_functions_without_a_body_for_a_case_keep_the_general_body():
    only_x = user_function("gcdx", math.gcd, GCD_BODY, algebra="x | y", cases={"x": "return x < 0 ? -x : x;"})
    a = np.array([0, 4, 0, 6], dtype=np.int64)
    b = np.array([3, 0, 0, 9], dtype=np.int64)
    A, B = (Tensor.from_numpy(v, "sparse_vector") for v in (a, b))
    k = ss.lower("c[i] = gcdx(a[i], b[i])", functions={"gcdx": only_x}, a=A, b=B)
    np.testing.assert_array_equal(k(a=A, b=B).to_numpy(), np.gcd(a, b))
    assert "= ss_gcdx_x_int64(" in k.c_source and "ss_gcdx_y" not in k.c_source
    assert "ss_gcdx_int64(0, " in k.c_source  # the y-only case: the general body with the fill


def test_a_ternary_function_with_cases_for_pairs():
    """``x + y + z`` written with cases for every pair (each dropping the absent zero)."""
    add3 = user_function("add3", lambda x, y, z: x + y + z, "return x + y + z;", arity=3, algebra="x | y | z",
                         cases={("x", "y"): "return x + y;", ("x", "z"): "return x + z;",
                                ("y", "z"): "return y + z;", "x": "return x;", "y": "return y;",
                                "z": "return z;"})
    rng = np.random.default_rng(4)
    vs = [rng.integers(1, 9, 15) * (rng.random(15) < 0.5) for _ in range(3)]
    T = {n: Tensor.from_numpy(v.astype(np.int64), "sparse_vector") for n, v in zip("abc", vs)}
    k = ss.lower("d[i] = add3(a[i], b[i], c[i])", functions={"add3": add3}, checked=True, **T)
    np.testing.assert_array_equal(k(**T).to_numpy(), sum(vs))
    for helper in ("ss_add3_x_y_int64(", "ss_add3_y_z_int64(", "ss_add3_z_int64("):
        assert f"= {helper}" in k.c_source, helper


def test_the_cfir_interpreter_runs_the_case_bodies_semantics():
    rng = np.random.default_rng(5)
    A = Tensor.from_numpy(ints(rng, (4, 7), 0.4), "dcsr", name="A")
    B = Tensor.from_numpy(ints(rng, (4, 7), 0.4), "csr", name="B")
    p = parse("C[i, j] = gcd(A[i, j], B[i, j])", {"gcd": GCD})
    setup = Setup.create(p, {"A": A.format, "B": B.format})
    got = interpret_cfir(build_cfir(setup.statement, setup), setup, A=A, B=B)
    np.testing.assert_array_equal(got, np.gcd(A.to_numpy(), B.to_numpy()))


def test_an_operator_with_cases_round_trips_through_json():
    back = serialize.decode(json.loads(json.dumps(serialize.encode(GCD))))
    assert back == GCD and back.cases == GCD.cases
    assert back.specialize((0,), {1: 0}).c_body == "return x < 0 ? -x : x;"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["vector", "matrix"]), st.integers(0, 9), st.sampled_from([0.0, 0.2, 0.6, 1.0]),
       st.sampled_from([0.0, 0.2, 0.6, 1.0]), st.integers(0, 2**31 - 1), st.booleans())
def test_gcd_with_cases_matches_numpy(kind, n, da, db, seed, checked):
    rng = np.random.default_rng(seed)
    if kind == "vector":
        expr, shape, fa, fb = "c[i] = gcd(a[i], b[i])", (n,), "sparse_vector", "dense"
        fa, fb = ("sparse_vector", "sparse_vector") if seed % 2 else ("sparse_vector", "dense")
    else:
        expr, shape = "c[i, j] = gcd(a[i, j], b[i, j])", (n, 3)
        fa, fb = ("csr", "dcsr") if seed % 2 else ("dcsr", "csr")
    a, b = ints(rng, shape, da), ints(rng, shape, db)
    A, B = Tensor.from_numpy(a, fa), Tensor.from_numpy(b, fb)
    k = ss.lower(expr, functions={"gcd": GCD}, a=A, b=B, checked=checked)
    want, _ = evaluate(expr, functions={"gcd": GCD}, a=A, b=B)
    np.testing.assert_array_equal(want, np.gcd(a, b))
    np.testing.assert_array_equal(k(a=A, b=B).to_numpy(), want)


@pytest.mark.parametrize("cases,match", [
    ({"w": "return 0;"}, r"user function g: case 'w' must name some, not all, of the parameters x, y.*w is not a "
                         r"parameter"),
    ({("x", "y"): "return 0;"}, r"case \('x', 'y'\) must name some, not all, of the parameters"),
    ({(): "return 0;"}, r"case \(\) must name some, not all"),
    ({("x", "x"): "return 0;"}, r"each once"),
    ({"x": ""}, r"the body of case 'x' must be C code"),
])
def test_bad_cases_are_refused_naming_the_function_and_case(cases, match):
    with pytest.raises(ValueError, match=match):
        user_function("g", math.gcd, GCD_BODY, cases=cases)
