"""Exact fill-value algebra past float64's overflow (issue 30): ``+``, ``-`` and ``*`` of finite values may
overflow to ±inf, and then an annihilated product (``0 * (a * b)``) is NaN, not 0. A tensor's facts bound its
values' magnitude (:attr:`compiler.values.Facts.scale`: under 2^64, or any); a product or sum that may pass
2^1024 may be infinite, so both strategies take the exact path there, and keep the sparse path for values under
2^64. Before, ``A * B * 0`` of stored 1e200s gave 0 by both strategies where numpy gives NaN, and the lattice's
check raised "a bug in sparsescope" for fills of 1e200."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, evaluate, recheck, values
from compiler import array as xp

STRATEGIES = ["lattice", "looplets"]
NAN, INF, BIG, HUGE = float("nan"), float("inf"), 1e200, 1.5e308


def matrix(entries, fill=0.0, fmt="csr", shape=(3, 3), name=None):
    """A ``shape`` matrix of ``fmt`` and ``fill`` holding ``entries`` (``{(i, j): value}``)."""
    a = np.full(shape, fill)
    for at, v in entries.items():
        a[at] = v
    return Tensor.from_numpy(a, fmt, fill=fill, name=name)


def right(program, strategy, **tensors):
    """``program`` by ``strategy`` against the dense oracle (numpy's arithmetic); the kernel and its result."""
    with np.errstate(all="ignore"):
        want, _ = evaluate(program, **tensors)
        k = ss.lower(program, strategy=strategy, **tensors)
        got = k(**tensors).to_numpy()
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    np.testing.assert_array_equal(got, want)
    return k, got


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("fill", [0.0, BIG])
def test_a_product_that_overflows_times_zero_is_nan(strategy, fill):
    A = matrix({(0, 0): BIG, (1, 1): 2.0}, fill)
    B = matrix({(0, 0): BIG, (2, 2): 3.0}, fill)
    _, got = right("C[i, j] = A[i, j] * B[i, j] * 0", strategy, A=A, B=B)
    assert np.isnan(got[0, 0]) and np.isnan(got).sum() == (1 if fill == 0 else 7)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_sum_that_overflows_times_an_absent_entry_is_nan(strategy):
    # (a row sum of 1.5e308 + 1.5e308 is inf; z's fill 0 times it is NaN where z stores nothing)
    A = matrix({(0, 0): HUGE, (0, 2): HUGE, (1, 1): 2.0})
    z = Tensor.from_numpy(np.array([0.0, 0.0, 5.0]), "sparse_vector", name="z")
    _, got = right("c[i] = sum[j](A[i, j]) * z[i]", strategy, A=A, z=z)
    assert np.isnan(got[0]) and got[1] == 0.0
    _, got = right("C[i, j] = (A[i, j] + A[i, j]) * 0", strategy, A=A)
    assert np.isnan(got[0, 0]) and np.isnan(got[0, 2]) and got[1, 1] == 0.0


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_float32_product_that_overflows_times_zero_is_nan(strategy):
    # (1e19 is under 2^64, the small values of float64; cubed, it passes float32's largest, about 3.4e38)
    def f32(entries, fmt="csr"):
        t = matrix(entries, fmt=fmt)
        return Tensor.from_numpy(t.to_numpy().astype(np.float32), fmt)

    A = f32({(0, 0): 1e19, (1, 1): 2.0})
    z = Tensor.from_numpy(np.zeros((3, 3), np.float32), "csr")
    k, got = right("C[i, j] = A[i, j] * A[i, j] * A[i, j] * z[i, j]", strategy, A=A, z=z)
    assert got.dtype == np.float32 and np.isnan(got[0, 0]) and np.isnan(got).sum() == 1
    assert k.facts["A"].scale == 64 and k.facts["z"] == values.FINITE32
    # a float32 row sum of 3e38 + 3e38 is inf: z's absent 0 times it is NaN
    B = f32({(0, 0): 3e38, (0, 2): 3e38, (1, 1): 2.0})
    zv = Tensor.from_numpy(np.array([0.0, 0.0, 5.0], np.float32), "sparse_vector")
    _, got = right("c[i] = sum[j](A[i, j]) * z[i]", strategy, A=B, z=zv)
    assert np.isnan(got[0]) and got[1] == 0.0
    # values under 2^8, float32's small ones, keep the sparse path; 300 lowers again, and the cube is finite
    small = f32({(0, 0): 255.0, (1, 1): -2.0})
    k, got = right("C[i, j] = A[i, j] * A[i, j] * A[i, j] * z[i, j]", strategy, A=small, z=z)
    assert not any(r.rule == "exact-path" for s in k.trace.find("value-facts") for r in s.rewrites)
    assert k.facts["A"] == values.FINITE32 and not np.isnan(got).any()
    mid = f32({(0, 0): 300.0})
    np.testing.assert_array_equal(k(A=mid, z=z).to_numpy(), np.zeros((3, 3)))
    assert k.for_values({"A": mid, "z": z}) is not k


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_values_under_2_to_the_64_keep_the_sparse_path(strategy):
    program = "C[i, j] = A[i, j] * B[i, j] * 0"
    small = matrix({(0, 0): 1e19, (1, 1): -2.0})
    big = matrix({(0, 0): 2e19, (1, 1): -2.0})
    k, _ = right(program, strategy, A=small, B=small)
    assert values.of_array(small.to_coords()[1]) is values.FINITE and k.facts["A"] is values.FINITE
    decided = [s.rewrites for s in k.trace.find("value-facts")]
    assert not any(r.rule == "exact-path" for rs in decided for r in rs), decided
    # (2e19 is past 2^64: the kernel for small values would fold the product's 0 * inf; the call lowers again)
    with np.errstate(all="ignore"):
        got = k(A=big, B=matrix({(0, 0): 1e300})).to_numpy()
    assert np.isnan(got[0, 0]) and np.count_nonzero(np.isnan(got)) == 1
    # (2e19 * 2e19 is finite: the product's scale, 2^257, is under float64's; 2e19 * 1e300 may not be)
    both = ss.lower(program, strategy=strategy, A=big, B=big)
    assert both.facts["A"].scale == 128 and not both.facts["A"].small
    assert not any(r.rule == "exact-path" for s in both.trace.find("value-facts") for r in s.rewrites)
    other = ss.lower(program, strategy=strategy, A=big, B=matrix({(0, 0): 1e300}))
    assert other is not k and other is not both
    assert any(r.rule == "exact-path" for s in other.trace.find("value-facts") for r in s.rewrites)


def test_the_c_check_of_a_scipy_matrix_tells_large_values_apart():
    for data, scale in (([1.0, -3e19], 128), ([1.0, 1.8e19], values.SMALL), ([1e300, NAN], values.LIMIT),
                        ([1e100, 2.0], 512)):
        m = sp.csr_matrix((np.array(data), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2))
        t = Tensor.from_scipy(m)
        held = recheck.checker(t)()
        assert held == values.of_array(m.data) and held.scale == scale, (data, held)
        assert recheck.values_facts(m.data.dtype)(__import__("cffi").FFI().from_buffer("double[]", m.data), 2) == held
    f32 = np.array([1.0, 2e19], dtype=np.float32)
    assert values.of_array(f32).scale == 128


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_c_check_finds_each_step_of_each_dtype_as_of_array_does(dtype):
    ffi = __import__("cffi").FFI()
    steps = [8, 16, 32, 64, 128] if dtype == "float32" else [64, 128, 256, 512, 1024]
    # (each step's bound, just under it and at it, beside NaN or an infinity or nothing, in short and long arrays)
    for bound in steps[:-1]:
        for v in (np.nextafter(2.0 ** bound, 0, dtype=dtype), 2.0 ** bound):
            for other in (None, NAN, np.inf, -np.inf):
                for n in (3, 40):
                    data = np.full(n, 1.0, dtype=dtype)
                    data[n // 2] = -v
                    if other is not None:
                        data[0] = other
                    want = values.of_array(data)
                    pointer = ffi.from_buffer("float[]" if dtype == "float32" else "double[]", data)
                    held = recheck.values_facts(data.dtype)(pointer, n)
                    assert held == want, (dtype, v, other, n, held, want)
                    assert held.scale == (bound if v < 2.0 ** bound else steps[steps.index(bound) + 1])
                    if held.finite and held.scale == steps[0]:
                        assert held is values.finite_of(dtype)
    m = sp.csr_matrix(np.array([[0, 300.0], [0, 0]], dtype=dtype))
    assert recheck.checker(Tensor.from_scipy(m))() == values.of_array(m.data)


@pytest.mark.parametrize("strategy", [*STRATEGIES, None])
def test_the_array_front_end_on_scipy_operands(strategy):
    m = sp.random(20, 20, density=0.2, format="csr", random_state=1)
    m.data[::3] = 1e200
    a = m.toarray()
    with np.errstate(all="ignore"):
        want = a * a * 0 + (a @ a) * 0
        e = xp.asarray(m) * xp.asarray(m) * 0 + (xp.asarray(m) @ xp.asarray(m)) * 0
        got = (e.compute(strategy=strategy) if strategy else e.compute()).to_numpy()
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got).any()


def test_a_large_value_written_in_place_into_a_scipy_operand_lowers_again():
    # (the front end shares the matrix's buffers; its C check finds the 1e200 written since the last call)
    m = sp.csr_matrix(np.array([[1.0, 0, 2.0], [0, 3.0, 0]]))
    y = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 0, 5.0]]))

    def computed():
        with np.errstate(all="ignore"):
            return (xp.asarray(m) * xp.asarray(m) * 0 + xp.asarray(y)).compute().to_numpy()

    np.testing.assert_array_equal(computed(), y.toarray())
    m.data[0] = 1e200
    np.testing.assert_array_equal(computed(), [[NAN, 0, 0], [0, 0, 5]])


# -- any formats, fills and values near overflow ---------------------------------------------------------

VALUES = {"float64": [0.0, 1.0, -2.5, 1e19, BIG, -BIG, HUGE, -HUGE, INF, NAN],
          "float32": [0.0, 1.0, -2.5, 255.0, -300.0, 1e19, 1e30, -1e30, 3e38, INF, NAN]}
FILLS = {"float64": [0.0, 1.0, BIG, -HUGE, NAN], "float32": [0.0, 1.0, 1e19, -3e38, NAN]}
#: values whose sums overflow in some orders only (float32's 1e30 * 1e19 is 1e49 past its 3.4e38)
ORDERED = {HUGE, -HUGE, 1e30, -1e30, 3e38}
ELEMENTWISE = ["c[i] = x[i] * y[i] * 0", "c[i] = (x[i] + y[i]) * z[i]", "c[i] = x[i] * y[i] * z[i]",
               "c[i] = (x[i] - y[i]) * 0 + z[i]", "c[i] = max(x[i] * y[i], z[i]) * 0",
               "c[i] = x[i] * y[i] * y[i] * z[i]"]
#: sums times 0: 0 or NaN whatever order the kernel sums in (its SIMD lanes are not numpy's order), as no stored
#: 1.5e308 cancels against another to decide whether a sum overflows
SUMS = ["s[] = sum[i](x[i] * y[i]) * 0", "s[] = sum[i](x[i]) * 0 * sum[i](z[i])"]


@st.composite
def cases(draw):
    program = draw(st.sampled_from(ELEMENTWISE + SUMS))
    dtype = draw(st.sampled_from(["float64", "float32"]))
    pool = st.sampled_from([v for v in VALUES[dtype] if program in ELEMENTWISE or v not in ORDERED])
    n = draw(st.integers(0, 6))
    tensors = {}
    for name in "xyz":
        fill = draw(st.sampled_from([f for f in FILLS[dtype] if program in ELEMENTWISE or f not in ORDERED]))
        vals = draw(st.lists(st.one_of(st.just(fill), pool), min_size=n, max_size=n))
        fmt = draw(st.sampled_from(["dense", "sparse_vector"]))
        tensors[name] = Tensor.from_numpy(np.array(vals, dtype=dtype), fmt, fill=fill, name=name)
    return program, tensors


@pytest.mark.parametrize("strategy", STRATEGIES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cases())
@example(case=("c[i] = x[i] * y[i] * 0", {
    "x": Tensor.from_numpy(np.array([BIG, 0.0, 0.0]), "sparse_vector", name="x"),
    "y": Tensor.from_numpy(np.array([BIG, 0.0, 1.0]), "sparse_vector", name="y"),
    "z": Tensor.from_numpy(np.zeros(3), "dense", name="z")}))
@example(case=("c[i] = x[i] * y[i] * y[i] * z[i]", {   # (float32: 1e19 cubed is inf, and inf * z's absent 0 is NaN)
    "x": Tensor.from_numpy(np.array([1e19, 0.0], dtype=np.float32), "sparse_vector", name="x"),
    "y": Tensor.from_numpy(np.array([1e19, 1.0], dtype=np.float32), "sparse_vector", name="y"),
    "z": Tensor.from_numpy(np.array([0.0, 2.0], dtype=np.float32), "sparse_vector", name="z")}))
def test_kernels_match_the_reference_near_overflow(strategy, case):
    program, tensors = case
    right(program, strategy, **{k: v for k, v in tensors.items() if f"{k}[" in program})
