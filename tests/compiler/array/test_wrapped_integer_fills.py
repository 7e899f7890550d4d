"""Integer fills whose arithmetic overflows their dtype, by both strategies, against numpy: numpy's int32 product of
fills 50000 wraps to -1794967296, and what is computed from it (a maximum, a comparison, a floor division, a sum in
int64) starts from the wrapped value. The looplets folded the fills' arithmetic in Python's unbounded ints: the
maximum with 0 kept 2500000000 and wrote it wrapped (-1794967296 where numpy's is 0), and a comparison with 0 was
true. Their literals now carry the dtype of the fills they were folded from (compiler.looplets.program.Literal), and
the lattice's sequences compute their fills in their tensors' dtypes (compiler.lattice.seqvalues.Fills)."""

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import compiler as ss
from compiler import array as xp

STRATEGIES = ["lattice", "looplets"]


def operands(fill, dtype, seed, fmt="csr", shape=(3, 4)):
    """Two matrices of ``dtype`` and fill ``fill`` (a few entries stored, some of them overflowing too), a third of
    fill 0, and each as a lazy Array."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    arrays = []
    for f in (fill, fill, 0):
        m = np.full(shape, f, dtype=dtype)
        stored = rng.random(shape) < 0.3
        m[stored] = rng.integers(max(info.min, -(2 ** 40)), min(info.max, 2 ** 40), size=int(stored.sum()),
                                 dtype=np.int64, endpoint=True).astype(dtype)
        arrays.append(m)
    return arrays, [xp.asarray(ss.Tensor.from_numpy(m, fmt, fill=m.dtype.type(f))) for m, f in zip(arrays, (fill, fill, 0))]


#: expressions of (a, b, c), each in the array language and in numpy
EXPRESSIONS = {
    "maximum(a * b, c)": lambda m, a, b, c: m.maximum(a * b, c),
    "a * b > 0": lambda m, a, b, c: a * b > 0,
    "(a * b) // 7": lambda m, a, b, c: (a * b) // 7,
    "sum(a * b, axis=1)": lambda m, a, b, c: m.sum(a * b, axis=1),
    "a * b * 3 - c": lambda m, a, b, c: a * b * 3 - c,
    "minimum(a + b, c) < a": lambda m, a, b, c: m.minimum(a + b, c) < a,
    "-a * 2 + c": lambda m, a, b, c: -a * 2 + c,
    "abs(a) - b": lambda m, a, b, c: m.abs(a) - b,
    "prod(a, axis=0)": lambda m, a, b, c: m.prod(a, axis=0),
    "(a << 3) ^ b": lambda m, a, b, c: (a << 3) ^ b,
    "a * b.astype(int8)": lambda m, a, b, c: a * b.astype(np.int8) if m is np else a * m.astype(b, m.int8),
    # (shape operators: the sequences' fill algebra, compiler.lattice.seqvalues)
    "concat([a * b, c]) > 0": lambda m, a, b, c: _concat(m)([a * b, c]) > 0,
    "reshape(a * b, -1)[::-2] // 3": lambda m, a, b, c: m.reshape(a * b, (-1,))[::-2] // 3,
    "sum(concat([a * b, c], axis=1), axis=1)": lambda m, a, b, c: m.sum(_concat(m)([a * b, c], axis=1), axis=1),
    "maximum(a[::-1] * b, c)": lambda m, a, b, c: m.maximum(a[::-1] * b, c),
    "prod(reshape(a, -1)[1:])": lambda m, a, b, c: m.prod(m.reshape(a, (-1,))[1:]),
}


def _concat(m):
    return np.concatenate if m is np else m.concat


def check(name, fill, dtype, seed, strategy, fmt="csr"):
    arrays, lazy = operands(fill, dtype, seed, fmt)
    with np.errstate(all="ignore"):
        want = np.asarray(EXPRESSIONS[name](np, *arrays))
        got = EXPRESSIONS[name](xp, *lazy).compute(strategy=strategy)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.to_numpy(), want)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_an_int32_product_of_fills_wraps_as_numpys(name, strategy):
    check(name, 50000, np.int32, 1, strategy)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(EXPRESSIONS)), st.sampled_from([np.int8, np.int16, np.int32, np.uint8, np.uint32,
                                                               np.int64, np.uint64]),
       st.integers(0, 2 ** 64 - 1), st.integers(0, 2 ** 16), st.sampled_from(STRATEGIES),
       st.sampled_from(["csr", "coo", "dense"]))
@example("a * b > 0", np.int8, 100, 0, "looplets", "csr")          # (100 * 100 is 16 as an int8)
@example("sum(a * b, axis=1)", np.uint32, 2 ** 31 + 5, 2, "looplets", "coo")   # (summed in uint64 after wrapping)
@example("a * b * 3 - c", np.int64, 2 ** 62, 3, "looplets", "csr")   # (wraps in int64 too)
# (fuzz-found: the lattice's sequences multiplied a stored int32 by another's fill in int64, and folded the fills'
# product unwrapped; an int64 sum added an int fill of 0 as 0.0, in double; the looplets' count of a uint64 fill's
# copies was an int64, their product a float64; a uint8 times an int8 fill was a uint8 product)
@example("sum(concat([a * b, c], axis=1), axis=1)", np.int32, 0, 0, "lattice", "csr")
@example("sum(concat([a * b, c], axis=1), axis=1)", np.int64, 1, 0, "lattice", "csr")
@example("sum(a * b, axis=1)", np.uint64, 2, 0, "looplets", "csr")
@example("a * b.astype(int8)", np.uint8, 2, 0, "looplets", "csr")
def test_integer_fills_by_property(name, dtype, raw, seed, strategy, fmt):
    info = np.iinfo(dtype)
    fill = info.min + raw % (int(info.max) - int(info.min) + 1)
    check(name, fill, dtype, seed, strategy, fmt)
