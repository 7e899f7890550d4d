"""numpy's math builtins in index notation (issue 31, item 2): ``sin cos tan floor ceil trunc``, the
other functions of <math.h> (``asin ... log10``, ``atan2 hypot copysign nextafter``), each against numpy by the
oracle and by both strategies' kernels, over fills and formats."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, evaluate
from compiler.algebra import lookup
from compiler.opimpls import BINARY_MATH, NUMPY_MATH, UNARY_MATH
from compiler.values import ANY, FINITE, Facts, of_array, of_call

STRATEGIES = ["lattice", "looplets"]
NAN, INF = float("nan"), float("inf")
UNARY = list(UNARY_MATH)
#: values across each function's domain and its edges (asin's [-1, 1], acosh's [1, inf), log1p's -1)
EDGES = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -2.5, 30.0, 1e300, INF, -INF, NAN]


@pytest.mark.parametrize("name", UNARY)
def test_unary_math_runs_numpys_function_with_a_float_result(name):
    op = lookup(name)
    x = np.array(EDGES)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(op(x), NUMPY_MATH[name](x))
    assert op.result_dtype("float32").name == "float32"
    assert op.c_expr(["a"], "float32") == f"{name}f(a)" and op.c_expr(["a"], "float64") == f"{name}(a)"
    if name in ("floor", "ceil", "trunc"):   # an integer is its own floor, in its dtype (numpy 2)
        assert op.result_dtype("int32").name == "int32" and op.result_dtype("bool").name == "bool"
        assert op.c_expr(["a"], "int64") == "a"
    else:
        assert op.result_dtype("int32").name == "float64" and op.c_expr(["a"], "int64") == f"{name}(a)"


@pytest.mark.parametrize("name", UNARY)
def test_unary_math_fill_is_the_function_of_the_fill(name):
    # sin(0) = 0 keeps a sparse zero-filled input sparse; cos(0) = 1 gives a 1-filled output
    op = lookup(name)
    for fill in (0.0, 1.0, -2.5, INF):
        with np.errstate(all="ignore"):
            want = NUMPY_MATH[name](np.float64(fill))
        np.testing.assert_array_equal(op.fill(fill), want)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("facts", [FINITE, Facts(nan=True), Facts(posinf=True), Facts(neginf=True), ANY])
def test_unary_math_value_facts_cover_what_numpy_gives(name, facts):
    # of_call must be sound: an annihilator is only trusted where the facts say no NaN/inf
    pool = [0.0, -1.0, 1.0, 0.5, 2.5, 800.0, -800.0, 1e308, -1e308, np.pi / 2]
    pool += [NAN] * facts.nan + [INF] * facts.posinf + [-INF] * facts.neginf
    with np.errstate(all="ignore"):
        got = of_array(NUMPY_MATH[name](np.array(pool)), exact=True)   # (the magnitude bound too, not its step)
    # (the pool's own facts: 1e308 is past 2^64, of any magnitude)
    assert got <= of_call(lookup(name), [facts | of_array(np.array(pool))])


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_math_kernels_match_numpy(strategy, name):
    vals = np.array([0.0, 1.5, 0.0, -2.5, INF, 0.0, NAN, 0.5, -1.0, 1.0, 30.0])
    x = Tensor.from_numpy(vals, "sparse_vector", name="x")
    program = f"c[i] = {name}(x[i])"
    out = ss.lower(program, strategy=strategy, x=x)(x=x)
    with np.errstate(all="ignore"):
        want = NUMPY_MATH[name](vals)
    assert_libm_close(out.to_numpy(), want)
    np.testing.assert_array_equal(evaluate(program, x=x)[0], want)
    with np.errstate(all="ignore"):
        keeps_zero = NUMPY_MATH[name](0.0) == 0
    if keeps_zero:   # f(0) == 0 (sin, asinh, log1p, ...): the output stays 0-filled
        assert out.fill == 0


@pytest.mark.parametrize("name", BINARY_MATH)
def test_binary_math_runs_numpys_function(name):
    op = lookup(name)
    x, y = np.meshgrid(EDGES, EDGES)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(op(x, y), NUMPY_MATH[name](x, y))
    assert op.result_dtype("float32", "float32").name == "float32" and op.result_dtype("int32", "bool").name == "float64"
    assert op.c_expr(["a", "b"], ["float64", "float64"]) == f"{name}(a, b)"
    assert op.c_expr(["a", "b"], ["float32", "float32"]) == f"{name}f(a, b)"


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", BINARY_MATH)
def test_binary_math_kernels_match_numpy(strategy, name):
    # every pair of edge values, one operand sparse (its fill 0 meets the other's entries)
    x, y = (v.ravel() for v in np.meshgrid(EDGES, EDGES))
    xt = Tensor.from_numpy(x, "sparse_vector", name="x")
    yt = Tensor.from_numpy(y, "dense", name="y")
    program = f"c[i] = {name}(x[i], y[i])"
    with np.errstate(all="ignore"):   # (x's -0.0 is its fill 0.0, unstored, as in scipy.sparse)
        want = NUMPY_MATH[name](xt.to_numpy(), y)
    assert_libm_close(ss.lower(program, strategy=strategy, x=xt, y=yt)(x=xt, y=yt).to_numpy(), want)
    assert_same(evaluate(program, x=xt, y=yt)[0], want)


@pytest.mark.parametrize("name", BINARY_MATH)
@pytest.mark.parametrize("facts", [FINITE, Facts(nan=True), Facts(posinf=True), Facts(neginf=True), ANY])
def test_binary_math_value_facts_cover_what_numpy_gives(name, facts):
    pool = [0.0, -1.0, 2.5, 1e308, -1e308] + [NAN] * facts.nan + [INF] * facts.posinf + [-INF] * facts.neginf
    x, y = np.meshgrid(pool, pool)
    with np.errstate(all="ignore"):
        got = of_array(NUMPY_MATH[name](x, y), exact=True)   # (the magnitude bound too, not its step)
    held = facts | of_array(np.array(pool))   # (1e308 is past 2^64, of any magnitude)
    assert got <= of_call(lookup(name), [held, held])


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round"])
def test_rounding_an_integer_keeps_it_exactly_in_its_dtype(strategy, name):
    # found comparing with numpy 2.4: floor(int64) is int64, and exactly (a double loses 2**53 + 1)
    big = 2 ** 53 + 1
    a = Tensor.from_numpy(np.array([0, big, -big, 0, 7]), "sparse_vector", name="a")
    b = Tensor.from_numpy(np.array([True, False, True]), "dense", name="b")
    for program, t, want in ((f"c[i] = {name}(a[i])", a, a.to_numpy()), (f"c[i] = {name}(b[i])", b, b.to_numpy())):
        got = ss.lower(program, strategy=strategy, **{t.name: t})(**{t.name: t}).to_numpy()
        assert_same(got, want)
        assert_same(evaluate(program, **{t.name: t})[0], want)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_round_goes_to_the_nearest_with_ties_to_even_as_numpy(strategy):
    # C's round() takes ties away from zero (round(2.5) == 3); numpy's, and C's nearbyint, to even
    vals = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.0, 2.4999999, -2.6, 1e300, INF, NAN], dtype=np.float64)
    for dtype in (np.float64, np.float32):
        with np.errstate(over="ignore"):
            x = Tensor.from_numpy(vals.astype(dtype), "sparse_vector", name="x")
        k = ss.lower("c[i] = round(x[i])", strategy=strategy, x=x)
        with np.errstate(over="ignore"):   # (1e300 is inf in float32)
            want = np.round(vals.astype(dtype))
        assert_same(k(x=x).to_numpy(), want)
        assert_same(k.interpret(x=x).to_numpy(), want)
        assert_same(evaluate("c[i] = round(x[i])", x=x)[0], want)
        assert "nearbyint" in k.c_source and "round(" not in k.c_source.replace("nearbyint(", "")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_unary_math_on_integers_and_float32(strategy):
    a = Tensor.from_numpy(np.array([0, 3, -7, 0], dtype=np.int32), "sparse_vector", name="a")
    b = Tensor.from_numpy(np.array([0.5, -1.25, 0, 2.75], dtype=np.float32), "dense", name="b")
    program = "c[i] = floor(b[i]) + sin(a[i])"
    got = ss.lower(program, strategy=strategy, a=a, b=b)(a=a, b=b).to_numpy()
    want = np.floor(b.to_numpy()) + np.sin(a.to_numpy().astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(evaluate(program, a=a, b=b)[0], want, rtol=1e-6)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_nextafter_of_float32_steps_by_a_float32(strategy):
    # (the float after 1.0f is not the double after 1.0 rounded back: C's nextafterf, exactly numpy's)
    a = np.array([0.0, 1.0, -1.0, INF, NAN, -0.0, np.finfo(np.float32).max], np.float32)
    b = np.array([1.0, 0.0, INF, 0.0, 1.0, -1.0, INF], np.float32)
    x, y = Tensor.from_numpy(a, "dense", name="x"), Tensor.from_numpy(b, "dense", name="y")
    program = "c[i] = nextafter(x[i], y[i])"
    with np.errstate(all="ignore"):
        want = np.nextafter(a, b)
    kernel = ss.lower(program, strategy=strategy, x=x, y=y)
    assert "nextafterf(" in kernel.c_source
    np.testing.assert_array_equal(kernel(x=x, y=y).to_numpy(), want)
    np.testing.assert_array_equal(evaluate(program, x=x, y=y)[0], want)


VALUES = st.sampled_from([0.0, 1.0, -2.5, 3.7, -0.5, INF, -INF, NAN])
FILLS = st.sampled_from([0.0, 1.0, -2.5, INF, NAN])
FORMATS = st.sampled_from(["dense", "sparse_vector"])
PROGRAMS = [f"c[i] = {f}(x[i])" for f in UNARY] + [
    "c[i] = x[i] * sin(y[i])", "c[i] = floor(x[i]) + ceil(y[i])", "s[] = sum[i](cos(x[i]) * y[i])",
    "c[i] = trunc(x[i] * y[i])", "s[] = max[i](tan(x[i]))", "c[i] = atan2(x[i], y[i])",
    "c[i] = x[i] * hypot(x[i], y[i])", "c[i] = copysign(x[i], y[i]) + tanh(y[i])", "s[] = sum[i](log1p(x[i]))"]


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
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
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
            with np.errstate(invalid="ignore", divide="ignore"):   # (log(0), arctanh(1): -inf, inf)
                np.testing.assert_array_equal(want, NUMPY_MATH[f](used["x"].to_numpy()))
    got = ss.lower(program, strategy=strategy, **used)(**used).to_numpy()
    assert_libm_close(got, want)


# -- floor division and modulo: numpy's rounding, signs and zero divisors ---------------------

I64_MIN = np.iinfo(np.int64).min
INT_PAIRS = ([7, -7, 7, -7, 0, 5, I64_MIN, I64_MIN, 3, -3, 0],
             [2, 2, -2, -2, 0, 0, -1, 3, -4, 4, -4])
FLOAT_PAIRS = ([7.5, -7.5, 0.0, -0.0, 1.0, INF, -INF, NAN, 1e300, -3.0, 5.0, -5.0, 0.5, -1.0],
               [2.0, 2.0, -3.0, 0.0, INF, 1.0, -INF, 1.0, 1e-300, 0.0, INF, INF, -0.0, 0.1])


def assert_libm_close(got, want):
    """A kernel's answer against numpy's: C's libm and numpy's own loops (tanh, log1p, ...) may differ in the
    last bit, so within 4 ulps; NaN, inf and the dtype exactly."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_max_ulp(np.nan_to_num(got), np.nan_to_num(want), maxulp=4)


def assert_same(got, want):
    """Equal values, NaNs at the same places, zeros of the same sign, the same dtype."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", ["int64", "int32", "float64", "float32"])
@pytest.mark.parametrize("sym, ufunc", [("//", np.floor_divide), ("%", np.remainder)])
def test_floordiv_and_mod_match_numpy(strategy, dtype, sym, ufunc):
    # C's / and % truncate and trap on x / 0 and INT_MIN / -1; numpy floors, gives 0 for an
    # integer zero divisor and wraps INT_MIN // -1
    pairs = INT_PAIRS if dtype.startswith("int") else FLOAT_PAIRS
    with np.errstate(all="ignore"):
        a, b = (np.array(v).astype(dtype) for v in pairs)
        want = ufunc(a, b)
    x, y = Tensor.from_numpy(a, "dense", name="x"), Tensor.from_numpy(b, "dense", name="y")
    program = f"c[i] = x[i] {sym} y[i]"
    assert_same(evaluate(program, x=x, y=y)[0], want)
    assert_same(ss.lower(program, strategy=strategy, x=x, y=y)(x=x, y=y).to_numpy(), want)


def test_floordiv_and_mod_spellings_and_precedence():
    assert lookup("//") is lookup("floordiv") is lookup("floor_divide")
    assert lookup("%") is lookup("mod") is lookup("remainder")
    assert lookup("//").c_expr(["a", "b"], ["int32", "int64"]) == "ss_floordiv_int64(a, b)"
    assert "ss_mod_float32" in lookup("%").c_helper("float32")
    assert lookup("//").result_dtype("bool", "bool").name == "int8"   # (numpy's first integer loop of floor_divide)
    # // and % bind like * and /, from the left: (a - (b // 2) % 3)
    assert str(ss.parse("c[i] = a[i] - b[i] // 2 % 3")) == str(ss.parse("c[i] = a[i] - ((b[i] // 2) % 3)"))
    # an integer zero divisor gives numpy's 0, also as a fill: 7 // 0 fills 0
    assert lookup("//").fill(7, 0) == 0 and lookup("%").fill(7, 0) == 0


@pytest.mark.parametrize("strategy", STRATEGIES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_floordiv_and_mod_kernels_match_numpy_over_fills_and_formats(strategy, data):
    is_int = data.draw(st.booleans())
    n = data.draw(st.integers(0, 6))
    values = st.integers(-9, 9) if is_int else st.sampled_from([0.0, -0.0, 1.5, -2.5, 3.0, INF, -INF, NAN])
    tensors = {}
    for name in "xy":
        fill = data.draw(values)
        vals = data.draw(st.lists(st.one_of(st.just(fill), values), min_size=n, max_size=n))
        arr = np.array(vals, dtype=np.int64 if is_int else np.float64)
        tensors[name] = Tensor.from_numpy(arr, data.draw(FORMATS), fill=fill, name=name)
    sym, ufunc = data.draw(st.sampled_from([("//", np.floor_divide), ("%", np.remainder)]))
    program = f"c[i] = x[i] {sym} y[i]"
    with np.errstate(all="ignore"):
        want = ufunc(tensors["x"].to_numpy(), tensors["y"].to_numpy())
    np.testing.assert_array_equal(evaluate(program, **tensors)[0], want)
    np.testing.assert_array_equal(ss.lower(program, strategy=strategy, **tensors)(**tensors).to_numpy(), want)


def _floor_mod(y, x, z):
    for i in _:   # noqa: F821  (the loop language's "over the whole extent")
        y[i] = x[i] // z[i] + x[i] % z[i] + floor(sin(x[i])) + (x[i] << 2 >> z[i])   # noqa: F821


def test_loop_programs_and_the_interpreters_run_floordiv_mod_shifts_and_math():
    from compiler.looplets.language import loop_program
    prog = loop_program(_floor_mod)
    xv, zv = np.array([7, -7, 0, 5, 3], dtype=np.int64), np.array([2, 2, 0, -3, 0], dtype=np.int64)
    x, z = Tensor.from_numpy(xv, "sparse_vector", name="x"), Tensor.from_numpy(zv, "dense", name="z")
    with np.errstate(all="ignore"):
        want = np.floor_divide(xv, zv) + np.remainder(xv, zv) + np.floor(np.sin(xv)) + (xv << 2 >> zv)
    k = ss.lower(prog, strategy="looplets", y="dense", x=x, z=z)
    np.testing.assert_array_equal(k(x=x, z=z).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(x=x, z=z).to_numpy(), want)
    program = "y[i] = x[i] // z[i] + x[i] % z[i] + floor(sin(x[i])) + (x[i] << 2 >> z[i])"
    lat = ss.lower(program, strategy="lattice", x=x, z=z)
    np.testing.assert_array_equal(lat(x=x, z=z).to_numpy(), want)
    np.testing.assert_array_equal(lat.interpret(x=x, z=z).to_numpy(), want)


# -- shifts: numpy's counts past the width and negative values --------------------------------

SHIFT_PAIRS = ([1, -1, 5, -8, 7, 3, -3, 0, 9, 1, -5, 6], [0, 1, 2, 1, -1, 63, 64, 5, 31, 32, 70, -40])


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("sym, ufunc", [("<<", np.left_shift), (">>", np.right_shift)])
def test_shifts_match_numpy(strategy, dtype, sym, ufunc):
    # C leaves shifting by a negative count, by the width or more, and 1 << into the sign undefined
    a, b = (np.array(v, dtype=dtype) for v in SHIFT_PAIRS)
    want = ufunc(a, b)
    x, y = Tensor.from_numpy(a, "sparse_vector", name="x"), Tensor.from_numpy(b, "dense", name="y")
    program = f"c[i] = x[i] {sym} y[i]"
    assert_same(evaluate(program, x=x, y=y)[0], want)
    out = ss.lower(program, strategy=strategy, x=x, y=y)(x=x, y=y)
    assert_same(out.to_numpy(), want)
    assert out.fill == 0   # 0 shifted stays 0: x's fill is the output's


def test_shift_spellings_precedence_and_refusal():
    assert lookup("<<") is lookup("lshift") is lookup("left_shift")
    assert lookup(">>") is lookup("rshift") is lookup("right_shift")
    # as in Python: + binds tighter than <<, which binds tighter than &
    assert str(ss.parse("c[i] = a[i] & b[i] << 1 + 2")) == str(ss.parse("c[i] = a[i] & (b[i] << (1 + 2))"))
    # printed infix, with only the parentheses needed, and read back the same
    for text in ("c[i] = a[i] // (2 % b[i]) - 1 & 3 << 1 + 1", "c[i] = a[i] << (2 >> b[i])", "c[i] = -a[i] % 3"):
        assert str(ss.parse(text)) == text and ss.parse(str(ss.parse(text))) == ss.parse(text)
    # the update syntax <<op>>= still parses next to shifts
    assert "max" in str(ss.parse("c[i] <<max>>= a[i, j] >> 1"))
    x = Tensor.from_numpy(np.array([1.5, 2.0]), "dense", name="x")
    with pytest.raises(ss.SparsescopeError, match="float64"):
        ss.lower("c[i] = x[i] << 1", strategy="lattice", x=x)
    with pytest.raises(ss.SparsescopeError, match="float64"):
        evaluate("c[i] = x[i] >> 1", x=x)


@pytest.mark.parametrize("strategy", STRATEGIES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_shift_kernels_match_numpy_over_fills_and_formats(strategy, data):
    n = data.draw(st.integers(0, 6))
    dtype = data.draw(st.sampled_from([np.int64, np.int32]))
    tensors = {}
    for name, values in (("x", st.integers(-50, 50)), ("y", st.integers(-3, 70))):
        fill = data.draw(values)
        vals = data.draw(st.lists(st.one_of(st.just(fill), values), min_size=n, max_size=n))
        tensors[name] = Tensor.from_numpy(np.array(vals, dtype=dtype), data.draw(FORMATS), fill=fill, name=name)
    sym, ufunc = data.draw(st.sampled_from([("<<", np.left_shift), (">>", np.right_shift)]))
    program = f"c[i] = x[i] {sym} y[i]"
    want = ufunc(tensors["x"].to_numpy(), tensors["y"].to_numpy())
    np.testing.assert_array_equal(evaluate(program, **tensors)[0], want)
    np.testing.assert_array_equal(ss.lower(program, strategy=strategy, **tensors)(**tensors).to_numpy(), want)
