"""compiler.values.of_array: the facts of an array's values are exactly which non-finite values it holds, and the
least step of its dtype over their largest finite magnitude; of_call and of_reduce: where ``+ - *`` may overflow
(past float64's largest, or float32's in a kernel computing in float32)."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import values

KINDS = [0.0, -2.5, 255.0, 256.0, -7e4, 5e9, 1e19, 1e30, -2e19, 1e40, 1e80, -1e160, np.nan, np.inf, -np.inf]


def _scale(finite: np.ndarray, dtype: str) -> int:
    """The step of ``dtype`` over the largest finite magnitude, from the dtype's range: five steps, each the
    square of the one before, the last any value of the dtype."""
    small = 8 if dtype == "float32" else 64
    largest = float(np.abs(finite.astype(np.float64)).max()) if finite.size else 0.0
    for k in range(4):
        if largest < 2.0 ** (small * 2 ** k):
            return small * 2 ** k
    return small * 16


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(KINDS), min_size=1, max_size=40), st.sampled_from(["float64", "float32"]),
       st.booleans())
@example([np.inf] * 20 + [np.nan] * 20, "float64", False)   # (NaN beside inf: fmax must skip the NaN)
@example([np.nan] * 30, "float32", True)                    # (all NaN: no infinity)
@example([256.0] * 17, "float32", False)                    # (the dot's path, at float32's first step)
def test_the_facts_are_the_non_finite_values_held(draws, dtype, as_matrix):
    with np.errstate(over="ignore"):   # (1e40 as a float32 is inf)
        arr = np.array(draws, dtype=dtype)
    if as_matrix and len(arr) % 2 == 0:
        arr = arr.reshape(2, -1)
    facts = values.of_array(arr)
    finite = arr[np.isfinite(arr)]
    want = values.Facts(bool(np.isnan(arr).any()), bool(np.isposinf(arr).any()), bool(np.isneginf(arr).any()),
                        scale=_scale(finite, dtype))
    assert facts == want
    if facts.finite and facts.scale == (8 if dtype == "float32" else 64):
        assert facts is values.finite_of(dtype)   # (the shared object a call compares by identity)


def test_a_long_vector_of_distances_holds_inf_only():
    d = np.full(1000, np.inf)
    d[::3] = np.arange(334.0)
    assert str(values.of_array(d)) == "may hold +inf"
    d[7] = -np.inf
    assert str(values.of_array(d)) == "may hold +inf, -inf"


def test_finite_complex_values_do_not_keep_a_function_finite():
    # (sin(1000j) has an infinite imaginary part: the real rule "finite in, finite out" is wrong for it)
    from compiler.algebra import lookup
    z = values.of_array(np.array([1000j, 1 + 1j]))
    assert z.finite and z.complex and values.of_array(np.array([1.0])).complex is False
    for name in ("sin", "cos", "tan", "exp", "sinh", "sqrt", "atan", "expm1", "log1p", "/"):
        args = [z] * lookup(name).arity
        assert values.of_call(lookup(name), args) == values.ANY_COMPLEX, name
    for name in ("+", "-", "*", "neg", "conj", "round"):
        got = values.of_call(lookup(name), [z] * lookup(name).arity)
        assert got.finite and got.complex and got.scale < values.LIMIT, name
    # a part or the magnitude is real, and keeps what the value held
    assert values.of_call(lookup("real"), [z]) == values.FINITE and values.of_call(lookup("abs"), [z]) == values.FINITE
    wild = values.of_array(np.array([complex(np.inf, 0)]))
    assert str(values.of_call(lookup("imag"), [wild])) == "may hold NaN, +inf, -inf"
    assert values.of_call(lookup("astype", "complex128"), [values.FINITE]).complex   # (complex from here on)
    assert values.of_call(lookup("astype", "int32"), [wild]) == values.FINITE
    assert (values.FINITE | z).complex and z <= values.FINITE   # (the check at a call ignores the flag)


def test_a_sum_or_product_that_may_pass_2_to_the_1024_may_be_infinite():
    from compiler.algebra import lookup
    add, mul = lookup("+"), lookup("*")
    big = values.of_array(np.array([1e200]))
    assert big.finite and not big.small and big.scale == values.LIMIT and str(big) == "finite, of magnitude up to 2^1024"
    assert values.of_array(np.array([1e19])) is values.FINITE and values.of_array(np.array([1e30])).scale == 128
    # (small values: a product of 15 stays under 2^1024, the 16th may not)
    f = values.FINITE
    for _ in range(14):
        f = values.of_call(mul, [f, values.FINITE])
    assert f.finite and f.scale == 64 * 15 + 14
    assert values.of_call(mul, [f, values.FINITE]) == values.Facts(False, True, True, scale=values.LIMIT)
    assert values.of_call(add, [big, values.FINITE]) == values.Facts(False, True, True, scale=values.LIMIT)
    assert values.of_call(lookup("min"), [big, values.FINITE]) == big
    assert values.of_call(lookup("sin"), [big]).scale == 2 and values.of_call(lookup("tan"), [big]).scale == 64
    assert values.of_call(lookup("sqrt"), [big]).scale == values.LIMIT // 2 + 1
    assert values.of_call(lookup("astype", "float32"), [big]).posinf      # (1e200 as a float32 is inf)
    # a sum of fewer than 2^64 terms is 64 past them; a product of any count may overflow
    assert values.of_reduce(add, values.FINITE).scale == 128 and values.of_reduce(add, values.FINITE).finite
    assert values.of_reduce(mul, values.FINITE) == values.Facts(False, True, True, scale=values.LIMIT)
    assert values.of_reduce(mul, values.FINITE, np.dtype("int64")) == values.FINITE
    # a kernel built for small values does not serve large ones
    assert values.FINITE <= big and not big <= values.FINITE and (big | values.FINITE) == big


def test_in_a_float32_kernel_a_product_past_2_to_the_128_may_be_infinite():
    from compiler.algebra import lookup
    add, mul = lookup("+"), lookup("*")
    small = values.of_array(np.array([255.0], dtype=np.float32))
    mid = values.of_array(np.array([1e19], dtype=np.float32))
    assert small is values.FINITE32 and mid.scale == 64
    assert values.of_array(np.array([-300.0], dtype=np.float32)).scale == 16
    with values.assuming({}, values.limit_of(["float64", "float32"])):
        assert small.small and not mid.small and not values.FINITE.small
        assert values.of_call(mul, [mid, mid]) == values.Facts(False, True, True, scale=values.LIMIT)
        assert values.of_call(mul, [mid, small]).finite
        # (a product of 14 values under 2^8 stays under 2^128, the 15th may not: float64's of 15 under 2^64)
        f = small
        for _ in range(13):
            f = values.of_call(mul, [f, small])
        assert f.finite and not values.of_call(mul, [f, small]).finite
        # a sum of fewer than 2^64 terms is 64 past them: under 2^128 for terms under 2^64
        big = values.of_array(np.array([1e30], dtype=np.float32))
        assert values.of_reduce(add, mid).finite and not values.of_reduce(add, big).finite
        assert values.small_value(255.0) and not values.small_value(256.0)
    # outside a float32 kernel, float64's overflow: the same product is finite
    assert values.of_call(mul, [mid, mid]).finite and values.small_value(256.0)
    # the result's own dtype, where a caller knows it, bounds it too
    assert not values.of_call(mul, [mid, mid], np.dtype("float32")).finite


def test_one_value_s_scale_is_exact():
    assert values.of_value(3.0).scale == 2 and values.of_value(-1e19).scale == 64
    assert values.of_value(np.float32(300)).scale == 9 and values.of_value(1).scale == 64
    assert values.of_value(1e300 + 1j).complex and values.of_value(1e300 + 1j).scale == 997
    assert values.of_array([3.0, np.nan], exact=True) == values.Facts(nan=True, scale=2)
