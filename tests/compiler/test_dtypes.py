"""The 8-, 16-, 32- and 64-bit signed and unsigned integers, through both strategies: each kernel
against numpy itself, the dense oracle and the IR interpreter (issue 31 item 2)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.dtypes import VALUE_DTYPES, c_type, is_narrow, result_dtype, value_dtype
from compiler.errors import DTypeError

INTS = ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"]
STRATEGIES = ["lattice", "looplets"]



def lit(v, x):
    """A literal of a program as numpy sees it: beside an unsigned operand a Python int (numpy
    gives it the operand's dtype), else an int64 (literals are int64 beside signed integers)."""
    return v if x.dtype.kind == "u" else np.int64(v)


#: programs over x and z (of one integer dtype) and w (int32), with what numpy computes for them
PROGRAMS = {
    "y[i] = x[i] + 1": lambda x, z, w: x + lit(1, x),
    "y[i] = x[i] * z[i]": lambda x, z, w: x * z,
    "y[i] = x[i] - z[i]": lambda x, z, w: x - z,
    "y[i] = -x[i]": lambda x, z, w: -x,
    "y[i] = x[i] * 3 + z[i]": lambda x, z, w: x * lit(3, x) + z,
    "y[i] = (x[i] + z[i]) > 100": lambda x, z, w: (x + z) > 100,
    "y[i] = x[i] // z[i]": lambda x, z, w: np.floor_divide(x, z),
    "y[i] = x[i] % z[i]": lambda x, z, w: np.remainder(x, z),
    "y[i] = x[i] << 3": lambda x, z, w: x << lit(3, x),
    "y[i] = x[i] >> z[i]": lambda x, z, w: x >> z,
    "y[i] = x[i] << z[i]": lambda x, z, w: x << z,
    "y[i] = x[i] | 1": lambda x, z, w: x | lit(1, x),
    "y[i] = x[i] & z[i]": lambda x, z, w: x & z,
    "y[i] = min(x[i], z[i])": lambda x, z, w: np.minimum(x, z),
    "y[i] = abs(x[i])": lambda x, z, w: np.abs(x),
    "y[i] = x[i] / z[i]": lambda x, z, w: x / z,
    "y[i] = x[i] < w[i]": lambda x, z, w: x < w,
    "y[i] = x[i] + w[i]": lambda x, z, w: x + w,
    "y[i] = pow(x[i], 2)": lambda x, z, w: x ** lit(2, x),
    "s[] += x[i]": lambda x, z, w: np.sum(x),
    "s[] max= x[i]": lambda x, z, w: np.max(x, initial=np.iinfo(x.dtype).min),
}


def numpy_says(program, x, z, w):
    with np.errstate(all="ignore"):
        return np.asarray(PROGRAMS[program](x, z, w))


def check(program, strategy, fmt, x, z, w, fill=0):
    names = {n: v for n, v in dict(x=x, z=z, w=w).items() if n + "[" in program}
    tensors = {n: ss.Tensor.from_numpy(v, fmt, fill=fill if n != "w" else 0) for n, v in names.items()}
    want = numpy_says(program, x, z, w)
    oracle, _ = ss.evaluate(program, **tensors)
    kernel = ss.lower(program, strategy, **tensors)
    got = kernel(**tensors).to_numpy()
    interpreted = kernel.interpret(**tensors).to_numpy()
    if "//" in program or "%" in program:
        want = np.where(z == 0, 0, want)   # numpy gives 0 for an integer division by 0 (and warns)
    if fill == 0 or program.startswith("s[]"):
        np.testing.assert_array_equal(oracle, want)
    assert oracle.dtype == want.dtype, (oracle.dtype, want.dtype)
    np.testing.assert_array_equal(got, oracle)
    np.testing.assert_array_equal(interpreted, oracle)
    assert got.dtype == oracle.dtype


def extremes(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.max, info.min, 7, 0, info.max // 3, 1, info.min + 1], dtype=dtype)
    z = np.array([3, info.max, 0, 5, 2, info.max, 1], dtype=dtype)
    return x, z


W = np.array([-1, 5, -300, 2, 0, 1, 7], dtype=np.int32)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_program_at_the_dtype_extremes_is_numpys(dtype, strategy):
    x, z = extremes(dtype)
    for k, program in enumerate(PROGRAMS):   # (each format half the time: the properties draw both)
        check(program, strategy, ["dense", "sparse"][k % 2], x, z, W)


@st.composite
def cases(draw):
    dtype = draw(st.sampled_from(INTS))
    info = np.iinfo(dtype)
    n = draw(st.integers(0, 6))
    values = st.one_of(st.sampled_from([0, 1, info.max, info.min, info.max // 2 + 1]),
                       st.integers(int(info.min), int(info.max)))
    x = np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=dtype)
    z = np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=dtype)
    w = np.array(draw(st.lists(st.integers(-2 ** 31, 2 ** 31 - 1), min_size=n, max_size=n)), dtype=np.int32)
    fill = draw(st.sampled_from([0, int(info.max)]))
    return dtype, x, z, w, fill


@settings(max_examples=20)
@given(program=st.sampled_from(sorted(PROGRAMS)), strategy=st.sampled_from(STRATEGIES),
       fmt=st.sampled_from(["dense", "sparse"]), case=cases())
# C computed uint8 + uint8 in int, so the looplets' (x + z) > 100 saw 260 where numpy wraps to 4
@example(program="y[i] = (x[i] + z[i]) > 100", strategy="looplets", fmt="dense",
         case=("uint8", np.array([250], np.uint8), np.array([10], np.uint8), np.array([0], np.int32), 0))
# the literal 1 was int64, so a uint64 | 1 was a float64 and did not compile
@example(program="y[i] = x[i] | 1", strategy="lattice", fmt="dense",
         case=("uint64", np.array([2], np.uint64), np.array([2], np.uint64), np.array([0], np.int32), 0))
# a uint64 tensor's fill was the float 0.0: max(s, fill) went through a double
@example(program="s[] max= x[i]", strategy="looplets", fmt="sparse",
         case=("uint64", np.array([2 ** 64 - 1, 0, 5], np.uint64), np.array([0, 0, 0], np.uint64),
               np.array([0, 0, 0], np.int32), 0))
# a folded fill (0 * 3) lost its dtype, so 0 + z became a float64 sum under the lattice strategy
@example(program="y[i] = x[i] * 3 + z[i]", strategy="lattice", fmt="sparse",
         case=("uint64", np.array([0, 5], np.uint64), np.array([2 ** 64 - 1, 0], np.uint64),
               np.array([0, 0], np.int32), 0))
def test_integer_programs_agree_with_numpy_and_the_oracle(program, strategy, fmt, case):
    dtype, x, z, w, fill = case
    check(program, strategy, fmt, x, z, w, fill)


def test_the_new_dtypes_have_c_types_and_numpys_promotion():
    assert {"uint8", "uint16", "uint32", "uint64", "int8", "int16"} <= set(VALUE_DTYPES)
    assert [c_type(d) for d in ("uint8", "uint64", "int8", "int16")] == ["uint8_t", "uint64_t", "int8_t", "int16_t"]
    for a in INTS + ["bool", "float32", "float64"]:
        for b in INTS + ["bool", "float32", "float64"]:
            assert result_dtype(a, b) == np.result_type(a, b)
    assert [is_narrow(d) for d in INTS] == [True, True, False, False, True, True, False, False]
    with pytest.raises(DTypeError, match="dtype float16 is not supported"):
        value_dtype("float16")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_an_unsigned_tensor_keeps_an_integer_fill(strategy):
    x = ss.Tensor.from_numpy(np.array([0, 200, 0], np.uint8), "sparse", fill=0)
    assert isinstance(x.fill, int)
    got = ss.lower("y[i] = x[i] + 100", strategy, x=x)(x=x)
    assert got.dtype == np.uint8 and got.fill == 100   # the fill is x's fill plus 100, in uint8
    np.testing.assert_array_equal(got.to_numpy(), np.array([0, 200, 0], np.uint8) + 100)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_literal_too_big_for_the_unsigned_operand_stays_int64(strategy):
    # numpy refuses uint8 + 300; the literal stays int64 here, and the sum is int64 as numpy's
    # np.uint8 array + np.int64(300) is
    x = np.array([250, 3], np.uint8)
    got = ss.einsum("y[i] = x[i] + 300", strategy, x=x).to_numpy()
    np.testing.assert_array_equal(got, x + np.int64(300))
    assert got.dtype == np.int64
    # a negative one too: uint8 - 1 is uint8 (1 fits), uint8 + -1 is int64
    np.testing.assert_array_equal(ss.einsum("y[i] = x[i] - 1", strategy, x=x).to_numpy(), x - 1)
    np.testing.assert_array_equal(ss.einsum("y[i] = x[i] + -1", strategy, x=x).to_numpy(), x + np.int64(-1))


@pytest.mark.parametrize("program,numpy", [
    ("y[i] = x[i] + 1", lambda x: x + np.int64(1)),
    ("y[i] = x[i] * w[i]", lambda x: x * np.arange(2, dtype=np.float32)),
])
def test_looplets_compute_mixed_operands_in_numpys_dtype(program, numpy):
    # C added an int32 and the literal 1 in 32 bits (INT32_MAX + 1 wrapped to INT32_MIN), where
    # numpy adds an int32 and an int64 in 64; and an int32 times a float32 in float, not double
    x = np.array([2 ** 31 - 1, 16777217], np.int32)
    w = np.arange(2, dtype=np.float32)
    tensors = {"x": x, "w": w} if "w[" in program else {"x": x}
    got = ss.einsum(program, "looplets", **tensors).to_numpy()
    np.testing.assert_array_equal(got, numpy(x))
    assert got.dtype == numpy(x).dtype


@pytest.mark.parametrize("program", ["y[i] = x[i] & u[i]", "y[i] = u[i] ^ x[i]", "y[i] = x[i] << u[i]",
                                     "y[i] = u[i] >> x[i]"])
def test_bitwise_operators_refuse_signed_and_uint64_together(program):
    # numpy promotes int64 with uint64 to float64 and has no bitwise float: under looplets the C
    # compiler rejected `(double)x & (double)u`, and the lattice strategy raised numpy's TypeError
    x, u = np.array([-1, 2], np.int64), np.array([3, 2], np.uint64)
    with pytest.raises(TypeError):
        eval(program.split("= ", 1)[1].replace("[i]", ""))
    for strategy in STRATEGIES:
        with pytest.raises(DTypeError, match="does not accept (int64 and uint64|uint64 and int64) together: "
                                             "no integer type holds both"):
            ss.einsum(program, strategy, x=x, u=u)
    with pytest.raises(DTypeError, match="no integer type holds both"):
        ss.evaluate(program, x=x, u=u)
    # a narrower signed integer than the unsigned one: numpy takes the wider signed type
    got = ss.einsum("y[i] = x[i] & u[i]", "looplets", x=x.astype(np.int32), u=u.astype(np.uint16)).to_numpy()
    np.testing.assert_array_equal(got, x.astype(np.int32) & u.astype(np.uint16))
    assert got.dtype == np.int32


DIVIDED = ["float32", "float64", "int8", "int32", "int64", "uint16", "bool"]


@settings(max_examples=12, deadline=None)
@given(xdt=st.sampled_from(DIVIDED), zdt=st.sampled_from(DIVIDED), strategy=st.sampled_from(STRATEGIES),
       fmt=st.sampled_from(["dense", "sparse"]),
       pairs=st.lists(st.tuples(st.integers(-9, 9), st.integers(-9, 9)), min_size=0, max_size=6))
@example(xdt="float32", zdt="int32", strategy="looplets", fmt="dense", pairs=[(1, 3), (-2, 7), (0, 0), (1, 0)])
@example(xdt="int64", zdt="float32", strategy="looplets", fmt="sparse", pairs=[(1, 3), (0, 7), (5, 0)])
@example(xdt="float32", zdt="bool", strategy="lattice", fmt="dense", pairs=[(3, 1), (-3, 0)])
def test_a_division_is_computed_in_numpys_dtype(xdt, zdt, strategy, fmt, pairs):
    # float32 / int32 is float64 in numpy: looplets divided in C's float (1/3 came out 0.3333333432674408)
    x = np.array([p[0] for p in pairs]).astype(xdt)
    z = np.array([p[1] for p in pairs]).astype(zdt)
    with np.errstate(all="ignore"):
        want = x / z
    tensors = {"x": ss.Tensor.from_numpy(x, fmt), "z": ss.Tensor.from_numpy(z, fmt)}
    kernel = ss.lower("y[i] = x[i] / z[i]", strategy, **tensors)
    for got in (kernel(**tensors).to_numpy(), kernel.interpret(**tensors).to_numpy()):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("program,numpy", [("y[i] = a[i] // b[i]", np.floor_divide), ("y[i] = a[i] % b[i]", np.remainder),
                                           ("y[i] = pow(a[i], b[i])", np.power), ("y[i] = a[i] << b[i]", np.left_shift),
                                           ("y[i] = a[i] >> b[i]", np.right_shift)])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_floored_division_powers_and_shifts_of_bools_are_int8(program, numpy, strategy):
    # (numpy's first integer loop of these ufuncs: they were int64; a Python int beside a bool keeps int64)
    a, b = np.array([True, False, True, False]), np.array([True, True, False, False])
    with np.errstate(divide="ignore"):   # (numpy's 0 for an integer division by 0)
        want = numpy(a, b)
    assert want.dtype == np.int8
    tensors = {"a": ss.Tensor.from_numpy(a, "sparse"), "b": ss.Tensor.from_numpy(b, "dense")}
    kernel = ss.lower(program, strategy, **tensors)
    for got in (kernel(**tensors).to_numpy(), kernel.interpret(**tensors).to_numpy(), ss.evaluate(program, **tensors)[0]):
        assert got.dtype == np.int8
        np.testing.assert_array_equal(got, want)
    got = ss.einsum("y[i] = a[i] // 2", strategy, a=a).to_numpy()
    assert got.dtype == (a // 2).dtype == np.int64


def _with_extremes(dtype, values):
    """``values`` as ``dtype``, its largest value put in first (sums and products past it wrap)."""
    dt = np.dtype(dtype)
    top = np.iinfo(dt).max if dt.kind in "iu" else 1
    return np.concatenate([[top], np.asarray(values)[1:]]).astype(dt)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int32"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_numpys_einsum_call_is_in_numpys_dtype_wrapping_as_numpys(dtype, strategy):
    # (numpy's einsum sums in its operands' dtype, ors bools; the notation's = counted bools in int64
    # (2 where numpy says True) and summed int32 in int64 where numpy's wraps in int32)
    a = np.stack([_with_extremes(dtype, [0, 1, 1, 0]), _with_extremes(dtype, [0, 0, 1, 1])[::-1]])
    x = _with_extremes(dtype, [0, 3, 1, 2])
    filled = ss.Tensor.from_numpy(a, "csr", fill=a.flat[1])
    for subscripts, operands, dense in [("ij,j->i", (a, x), (a, x)), ("ij,j->i", (sp.csr_matrix(a), x), (a, x)),
                                        ("ij->i", (filled,), (a,)), ("ij,ij->", (a, a), (a, a)),
                                        ("ij,j->ij", (a, x), (a, x))]:
        want = np.einsum(subscripts, *dense)
        got = ss.einsum(subscripts, *operands, strategy=strategy).to_numpy()
        assert got.dtype == want.dtype, (subscripts, operands)
        np.testing.assert_array_equal(got, want)


EINSUM_DTYPES = ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "float32", "complex64"]


@settings(max_examples=6, deadline=None)
@given(adt=st.sampled_from(EINSUM_DTYPES), bdt=st.sampled_from(EINSUM_DTYPES), strategy=st.sampled_from(STRATEGIES),
       sparse=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(adt="bool", bdt="bool", strategy="lattice", sparse=True, seed=0)
@example(adt="int8", bdt="uint8", strategy="looplets", sparse=False, seed=1)
# (the looplets took a uint32 value times a complex64 one for a count of copies: the complex64 parts times a float
# uint32, 2^32 - 1 rounded to 2^32, where numpy's product is complex128)
@example(adt="uint32", bdt="complex64", strategy="looplets", sparse=False, seed=0)
def test_numpys_einsum_call_over_dtype_pairs_is_numpys(adt, bdt, strategy, sparse, seed):
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((3, 4)) < 0.5, 0, rng.integers(-3, 100, (3, 4)))
    b = np.where(rng.random((4, 2)) < 0.5, 0, rng.integers(-3, 100, (4, 2)))
    with np.errstate(all="ignore"):
        a, b = _with_extremes(adt, a.ravel()).reshape(3, 4), b.astype(bdt)
        want = np.einsum("ij,jk->ik", a, b)
    got = ss.einsum("ij,jk->ik", sp.csr_matrix(a) if sparse else a, b, strategy=strategy).to_numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("xdt,udt", [("int8", "uint8"), ("int8", "uint32"), ("int8", "uint64"), ("uint32", "uint8"),
                                     ("uint64", "uint32")])
def test_a_fill_beside_an_unsigned_operand_is_not_a_python_int(xdt, udt):
    # (looplets typed x's fill 0 as a Python int beside u, so 0 - 1 wrapped to 255 where numpy's
    # int8 - uint8 is the int16 -1, and uint32 - uint8 the uint32 2^32 - 1)
    x = np.array([127, 0, 3, 0], dtype=xdt)
    u = np.array([1, 1, 255, 0], dtype=udt)
    want = x - u
    tensors = {"x": ss.Tensor.from_numpy(x, "sparse"), "u": ss.Tensor.from_numpy(u, "dense")}
    for strategy in STRATEGIES:
        kernel = ss.lower("y[i] = x[i] - u[i]", strategy, **tensors)
        for got in (kernel(**tensors).to_numpy(), kernel.interpret(**tensors).to_numpy()):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32"])
def test_a_signed_tensors_fill_wraps_in_its_dtype(dtype):
    # (the looplets typed b's fill 2 as an int64 where b is its fill, so a * b summed 89 * 2 = 178 where numpy's
    # int8 product wraps to -78; found by a random run of integer array kernels)
    a = np.array([[89, 7], [7, 45], [63, 7]], dtype=dtype) * (np.iinfo(dtype).max // 127)
    b = np.array([[2, 2], [2, 2], [46, 37]], dtype=dtype)
    tensors = {"a": ss.Tensor.from_numpy(a, "dense"), "b": ss.Tensor.from_numpy(b, "coo", fill=2)}
    with np.errstate(over="ignore"):
        want = np.sum(a * b, axis=0)
    for strategy in STRATEGIES:
        kernel = ss.lower("y[j] += a[i, j] * b[i, j]", strategy, **tensors)
        for got in (kernel(**tensors).to_numpy(), kernel.interpret(**tensors).to_numpy()):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("program,numpy", [("y[i] = x[i] & u[i]", np.bitwise_and), ("y[i] = x[i] ^ u[i]", np.bitwise_xor)])
def test_the_lattices_check_of_a_narrow_unsigned_beside_a_uint64(program, numpy):
    # (the lattice's check widened the uint8 to int64 to see whether a case overflowed, and int64 & uint64
    # is refused: lowering raised a DTypeError for x & u, which numpy computes in uint64)
    x = np.array([255, 0, 3, 0, 7], dtype=np.uint8)
    u = np.array([1, 2 ** 64 - 1, 255, 0, 2 ** 63], dtype=np.uint64)
    want = numpy(x, u)
    tensors = {"x": ss.Tensor.from_numpy(x, "sparse"), "u": ss.Tensor.from_numpy(u, "sparse")}
    kernel = ss.lower(program, "lattice", **tensors)
    for got in (kernel(**tensors).to_numpy(), kernel.interpret(**tensors).to_numpy(), ss.evaluate(program, **tensors)[0]):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
