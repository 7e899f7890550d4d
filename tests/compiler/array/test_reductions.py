"""sum, prod, min, max, any and all with axis and keepdims against numpy (issue 30)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from array_cases import check, kinds_for, make

RNG = np.random.default_rng(3)
A = RNG.integers(-2, 3, (3, 4)).astype(float)
A[0, 1], A[2, 2] = np.nan, -np.inf
I = RNG.integers(-3, 4, (2, 3, 4)).astype(np.int32)


# (1 is -1 normalized, and (0, 1) is (-1, 0) sorted: the suite's time goes to other cases; a scipy or pydata
# matrix is read as the Tensor it converts to, and reduced along two of the axes)
@pytest.mark.parametrize("kind, axis", [(k, a) for k in ("numpy", "csr", "csc", "coo") for a in (None, 0, -1, (-1, 0))]
                         + [("scipy_coo", None), ("scipy_coo", -1), ("pydata_gcxs", 0), ("pydata_gcxs", (-1, 0))])
def test_reductions_of_a_matrix(kind, axis):
    a = xp.asarray(make(A, kind))
    for name in ("sum", "prod", "min", "max", "any", "all"):
        for keepdims in (False, True):
            with np.errstate(invalid="ignore"):   # (numpy's 0 * -inf)
                want = getattr(np, name)(A, axis=axis, keepdims=keepdims)
            check(getattr(xp, name)(a, axis=axis, keepdims=keepdims), want)


@pytest.mark.parametrize("kind", ["numpy", "coo"])
@pytest.mark.parametrize("axis", [None, 1, (0, 2), -2])
def test_an_int32_or_bool_sum_is_int64_as_numpy_has_it(kind, axis):
    i = xp.asarray(make(I, kind))
    check(i.sum(axis=axis), I.sum(axis=axis))
    check(i.prod(axis=axis, keepdims=True), I.prod(axis=axis, keepdims=True))
    check(i.max(axis=axis), I.max(axis=axis))
    check((i > 0).sum(axis=axis), (I > 0).sum(axis=axis))


def test_sum_over_an_int32_past_its_range_does_not_wrap():
    big = np.full((3,), 2**30, dtype=np.int32)
    check(xp.asarray(big).sum(), big.sum())


def test_reductions_over_empty_axes():
    e = np.zeros((0, 3))
    check(xp.asarray(make(e, "csr")).sum(axis=0), e.sum(axis=0))
    check(xp.asarray(make(e, "csr")).prod(axis=0), e.prod(axis=0))
    with pytest.raises(ss.ShapeError, match=r"max: axis 0 of shape \(0, 3\) is empty, and max has no identity"):
        xp.max(xp.asarray(e), axis=0)


def test_a_bad_axis_is_named():
    a = xp.asarray(A)
    with pytest.raises(ss.ShapeError, match="sum: axis 2 is out of range for an array of 2 dimension"):
        a.sum(axis=2)
    with pytest.raises(ss.ShapeError, match="min: axis 1 is repeated"):
        a.min(axis=(1, -1))


def test_reductions_by_looplets():
    for kind in ("csr", "coo"):
        check(xp.asarray(make(A, kind)).sum(axis=1), A.sum(axis=1), strategy="looplets")
        check(xp.asarray(make(A, kind)).max(), A.max(), strategy="looplets")


@settings(max_examples=15)
@given(st.data())
def test_property_reductions_match_numpy(data):
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(1 if ndim == 3 else 0, 3)) for _ in range(ndim))
    fill = data.draw(st.sampled_from([0.0, 1.0, np.nan, -np.inf]))
    values = st.sampled_from([fill, fill, 2.0, -1.0, np.nan, np.inf])
    a = np.array(data.draw(st.lists(values, min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))),
                 dtype=float).reshape(shape)
    kind = data.draw(st.sampled_from([k for k in kinds_for(ndim) if not k.startswith("scipy")]))
    axes = data.draw(st.lists(st.integers(-ndim, ndim - 1), unique_by=lambda k: k % ndim, max_size=ndim))
    axis = tuple(axes) if len(axes) != 1 else axes[0]
    name = data.draw(st.sampled_from(["sum", "prod", "min", "max"]))
    keepdims = data.draw(st.booleans())
    if name in ("min", "max") and any(a.shape[k] == 0 for k in (axes or range(ndim))):
        return   # (numpy refuses too: tested above)
    with np.errstate(all="ignore"):   # (inf - inf in numpy's sum)
        want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
    check(getattr(xp, name)(xp.asarray(make(a, kind, fill)), axis=axis, keepdims=keepdims), want)


# A reduction over an axis the operand only broadcasts (expand_dims's, broadcast_to's) has no
# tensor indexed by it: its extent comes from the broadcast. Found by a differential probe:
# `sum(expand_dims(a, 2), axis=2)` raised KeyError in every strategy.
@pytest.mark.parametrize("strategy", [None, "lattice", "looplets"])
@pytest.mark.parametrize("kind", ["csr", "csc", "coo"])
@pytest.mark.parametrize("axis,copies", [(0, 1), (2, 1), (1, 3), (2, 3)])
def test_a_reduction_over_a_broadcast_axis(strategy, kind, axis, copies):
    a = xp.asarray(make(A, kind))
    shape = list(A.shape)
    shape.insert(axis, copies)
    for name in ("sum", "prod", "min", "max"):
        e = getattr(xp, name)(xp.broadcast_to(xp.expand_dims(a, axis=axis), tuple(shape)), axis=axis)
        with np.errstate(invalid="ignore"):
            want = getattr(np, name)(np.broadcast_to(np.expand_dims(A, axis), tuple(shape)), axis=axis)
        # (the lattice's sequences reduce a product too: prod[k](broadcast(k:3, A[i, j])), where they refused it)
        check(e, want, strategy=strategy, checked=True)
        check(e[1:3], want[1:3], strategy=strategy)


def test_a_sum_or_product_in_a_given_dtype_casts_first_as_numpy():
    # (prod(int8, dtype=uint8) multiplied in int64 into a uint8 output, which was refused)
    x = np.array([[100, -3, 7], [2, 5, 127]], dtype=np.int8)
    for dt in ("uint8", "int16", "float32", "float64", "uint64", "bool"):
        for f in ("sum", "prod"):
            for axis in (None, 1):
                got = np.asarray(getattr(xp, f)(xp.asarray(x), axis=axis, dtype=dt))
                want = getattr(np, f)(x, axis=axis, dtype=dt)
                assert got.dtype == want.dtype, (f, dt)
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("kind", ["numpy", "csr"])
def test_a_float32_sum_accumulates_in_float64_and_rounds_once(strategy, kind):
    # (a running float32 sum, even in 8 SIMD lanes, lost 2.4% over 2e7 values of 0.1; numpy's pairwise sum is
    # within a few roundings; a float64 sum rounded once is the nearest float32 to the exact sum here)
    y = np.full((8, 250_000), 0.1, dtype=np.float32)
    y[:, ::3] = 0.0
    running = np.cumsum(y[0], dtype=np.float32)[-1]   # (sequential, as a float32 accumulator)
    exact = np.float32(y[0].astype(np.float64).sum())
    assert abs(running - exact) > 1e-4 * exact   # (so the case tells the two apart)
    a = xp.asarray(make(y, kind))
    for got, want in [(xp.sum(a), y.astype(np.float64).sum()), (xp.sum(a, axis=1), y.astype(np.float64).sum(axis=1)),
                      (xp.mean(a), y.astype(np.float64).mean())]:
        got = got.compute(strategy=strategy)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.to_numpy(), np.asarray(want).astype(np.float32))
    k = xp.sum(a).lower(strategy=strategy)
    assert "double" in k.c_source and str(k.program).startswith("out[] = astype(float32)(sum[")
    # (complex64 likewise, in complex128; index notation sums in the dtype it is given)
    z = (y[:2] + 1j * y[:2]).astype(np.complex64)
    got = xp.sum(xp.asarray(make(z, kind))).compute(strategy=strategy)
    assert got.dtype == np.complex64 and got.to_numpy() == np.complex64(z.astype(np.complex128).sum())


def test_float32_value_facts_of_a_long_vector_are_numpys():
    # (found in C, one pass, for 4,096 values or more: numpy's float32 path reads them twice)
    from compiler.values import of_array
    rng = np.random.default_rng(5)
    for scale in (1.0, 200.0, 300.0, 7e4, 1e19, 3e38):
        for odd in ([], [np.nan], [np.inf], [-np.inf, np.nan]):
            with np.errstate(over="ignore"):   # (past float32's largest: infinities, as meant)
                v = (rng.standard_normal(5000) * scale).astype(np.float32)
            v[:len(odd)] = odd
            t = ss.Tensor.from_numpy(v, "dense")
            assert t.value_facts == of_array(v), (scale, odd)
