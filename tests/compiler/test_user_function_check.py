"""A user function's C body checked against its Python oracle (compiler.user_function_check): the
first lowering that uses it, under either strategy, refuses a C body or a case body that disagrees."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, evaluate
from compiler.errors import UserCodeError
from compiler.user_functions import user_function

STRATEGIES = ["lattice", "looplets"]


def vectors(x, y, fmt="sparse_vector", fill=0.0):
    return {n: Tensor.from_numpy(np.asarray(v), fmt, fill=fill) for n, v in (("a", x), ("b", y))}


def lower(name, fn, strategy, tensors, program="c[i] = {f}(a[i], b[i])"):
    program = program.format(f=name)
    return program, ss.lower(program, strategy=strategy, functions={name: fn}, **tensors)


# (the C body wrong at x == 2 alone, which the data never hold: the kernel would still be wrong there;
# the case body for y absent as 0 giving x, not 2x)
REFUSED = {
    "clip": (lambda x, y: min(x, y), "return x == 2.0 ? 7.0 : (x < y ? x : y);", None,
             r"its C body gives 7.0 at \(x=2.0, y=0.0\) \(float64, float64\), its py gives 0.0"),
    "scaled": (lambda x, y: 2 * x + y, "return 2 * x + y;", {"x,0": "return x;"},
               r"its body for case 'x,0' gives 1.0 at \(x=1.0\) \(float64\), its general body gives 2.0 at "
               r"\(x=1.0, y=0.0\)"),
}


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("what", REFUSED)
def test_a_c_body_or_case_body_that_disagrees_at_one_probe_is_refused(what, strategy):
    py, body, cases, message = REFUSED[what]
    name = f"{what}_{strategy}"
    fn = user_function(name, py, body, cases=cases)
    with pytest.raises(UserCodeError, match=rf"user function {name}: {message}"):
        lower(name, fn, strategy, vectors([0.0, 1.0, 0.0], [3.0, 0.0, 0.0]))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_an_integer_function_is_checked_exactly(strategy):
    # C's / truncates, Python's // floors: they differ at -1 // 2
    name = f"half_{strategy}"
    wrong = user_function(name, lambda x, y: x // 2 + y, "return x / 2 + y;")
    ints = vectors(np.array([0, 4, 0], np.int64), np.array([1, 0, 0], np.int64))
    with pytest.raises(UserCodeError, match=rf"{name}: its C body gives 0 at \(x=-1, y=0\) \(int64, int64\), "
                                            r"its py gives -1"):
        lower(name, wrong, strategy, ints)
    name = f"gcd_{strategy}"
    right = user_function(name, math.gcd, "x = x < 0 ? -x : x; y = y < 0 ? -y : y; "
                                          "while (y) { int64_t t = x % y; x = y; y = t; } return x;")
    program, k = lower(name, right, strategy, ints)
    assert f"{name}: its C body agrees with py at 36 probes (int64, int64)" in \
        " ".join(s.note for s in k.trace.find("user-functions"))
    np.testing.assert_array_equal(k(**ints).to_numpy(), evaluate(program, functions={name: right}, **ints)[0])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_c_body_that_traps_is_refused_not_a_crash(strategy):
    name = f"quot_{strategy}"
    fn = user_function(name, lambda x, y: x // y if y else 0, "return x / y;")
    with pytest.raises(UserCodeError, match=rf"{name}: its C body traps \(SIGFPE.*at \(x=0, y=0\).*its py gives 0"):
        lower(name, fn, strategy, vectors(np.array([0, 4], np.int64), np.array([2, 0], np.int64)))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_nan_producing_function_that_agrees_is_accepted_on_nan_and_inf_values(strategy):
    name = f"root_{strategy}"
    fn = user_function(name, lambda x, y: math.sqrt(x) + y if x >= 0 else math.nan,
                       "return x >= 0 ? sqrt(x) + y : NAN;")
    tensors = vectors([0.0, 4.0, -1.0, math.nan, math.inf, 0.0], [1.0, 0.0, 2.0, 0.0, -math.inf, math.nan])
    program, k = lower(name, fn, strategy, tensors)
    note = " ".join(s.note for s in k.trace.find("user-functions"))
    assert f"{name}: its C body agrees with py at" in note and "(float64, float64)" in note
    np.testing.assert_array_equal(k(**tensors).to_numpy(), evaluate(program, functions={name: fn}, **tensors)[0])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_nan_and_inf_are_probed_where_the_values_may_hold_them(strategy):
    # C's x > y ? x : y drops a NaN y, Python's max(x, y) drops a NaN x: they differ only on NaN
    name = f"mx_{strategy}"
    fn = user_function(name, max, "return x > y ? x : y;")
    finite = vectors([0.0, 4.0, 0.0], [1.0, 0.0, 2.0])
    program, k = lower(name, fn, strategy, finite)
    np.testing.assert_array_equal(k(**finite).to_numpy(), evaluate(program, functions={name: fn}, **finite)[0])
    with pytest.raises(UserCodeError, match=rf"{name}: its C body gives NaN at \(x=0.0, y=NaN\)"):
        lower(name, fn, strategy, vectors([0.0, 4.0, 0.0], [1.0, math.nan, 2.0]))
    with pytest.raises(UserCodeError, match=rf"{name}: its C body gives NaN at \(x=0.0, y=NaN\)"):
        lower(name, fn, strategy, vectors([0.0, 4.0], [1.0, 2.0], fill=math.nan))


def test_a_float32_transcendental_agrees_within_the_last_places():
    name = "expf_sum"
    fn = user_function(name, lambda x, y: np.exp(x) + y, "return expf(x) + y;")
    tensors = vectors(np.array([0.0, 0.5, -1.0], np.float32), np.array([1.0, 0.0, 2.0], np.float32))
    for strategy in STRATEGIES:
        program, k = lower(name, fn, strategy, tensors)
        np.testing.assert_allclose(k(**tensors).to_numpy(), evaluate(program, functions={name: fn}, **tensors)[0],
                                   rtol=1e-6)


# (the probes of a float argument, finite ones; a body wrong at one of them is refused whichever it is)
@settings(max_examples=8, deadline=None)
@given(st.sampled_from([0.0, 1.0, -1.0, 2.0, 0.5, -0.5]), st.sampled_from([0, 1]), st.sampled_from(STRATEGIES))
def test_a_body_wrong_at_any_probe_is_refused_by_property(at, arg, strategy):
    param = "xy"[arg]
    name = f"wrong{arg}_{str(at).replace('.', '_').replace('-', 'm')}_{strategy}"
    fn = user_function(name, lambda x, y: x * y - x, f"return {param} == {at!r} ? 99.0 : x * y - x;")
    with pytest.raises(UserCodeError, match=rf"{name}: its C body gives 99.0 at .*{param}={at}"):
        lower(name, fn, strategy, vectors([0.0, 3.0, 0.0], [3.0, 0.0, 0.0]))


# (C and py agreeing on every value, NaN and ±inf too: a NaN argument gives the other, as fmax does)
NANMAX = user_function("nanmax", lambda x, y: y if x != x else x if y != y else max(x, y),
                       "return isnan(x) ? y : isnan(y) ? x : (x > y ? x : y);", commutative=True)
AFFINE = user_function("affine", lambda x, y: 2.0 * x - y + 1.0, "return 2.0 * x - y + 1.0;")


@settings(max_examples=5, deadline=None)
@given(st.sampled_from([NANMAX, AFFINE]), st.sampled_from(STRATEGIES),
       st.tuples(st.sampled_from(["sparse_vector", "dense"]), st.sampled_from(["sparse_vector", "dense"])),
       st.tuples(st.sampled_from([0.0, 1.0, math.nan, -math.inf]), st.sampled_from([0.0, math.inf])),
       st.integers(0, 5), st.floats(0.0, 1.0), st.integers(0, 2 ** 16))
def test_an_agreeing_function_is_accepted_and_matches_the_oracle_by_property(fn, strategy, fmts, fills, n, density,
                                                                            seed):
    rng = np.random.default_rng(seed)
    a, b = (np.where(rng.random(n) < density, rng.choice([1.5, -2.0, math.nan, math.inf, -math.inf], n), f)
            for f in fills)
    tensors = {name: Tensor.from_numpy(v, fmt, fill=f) for name, v, fmt, f in zip("ab", (a, b), fmts, fills)}
    program, k = lower(fn.name, fn, strategy, tensors)
    assert any(fn.name in s.note for s in k.trace.find("user-functions"))
    np.testing.assert_array_equal(k(**tensors).to_numpy(), evaluate(program, functions={fn.name: fn}, **tensors)[0])
