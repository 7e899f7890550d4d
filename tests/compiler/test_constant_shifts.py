"""A shift by a constant that C shifts as numpy does is plain C (``v >> 8``, the masked histogram's
bin), in both strategies; any other shift still calls the helper that tests its count
(compiler.imperative.cints.constant_shift). Each kernel against the dense oracle and the IR
interpreter. The uint64 kernel under lattice failed before with numpy's TypeError: the parallel rows'
plan derived a fill from the tensor's Python 0, and 0 >> uint64(5) is a float64 shift."""

import numpy as np
import pytest

import compiler as ss

#: (an int literal beside an unsigned operand takes its dtype, as numpy types a Python int; beside a
#: signed one it is int64, so an int8 shift is an int64 one)
DTYPES = ["int64", "uint64", "uint8", "uint32"]


def values(dtype):
    info = np.iinfo(dtype)
    v = np.array([0, 1, 5, 77, info.max, info.max // 3, info.min, info.min + 9], dtype)
    return v


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_constant_shifts_are_plain_c_and_shift_as_the_oracle(strategy, dtype):
    width = 8 * np.dtype(dtype).itemsize
    x = ss.Tensor.from_numpy(values(dtype), "dense", name="x")
    program = f"y[i] = (x[i] >> 0) ^ (x[i] >> 5) ^ (x[i] >> {width - 1}) ^ (x[i] << 3) ^ (x[i] >> {width})"
    k = ss.lower(program, strategy=strategy, x=x)
    want = ss.evaluate(program, x=x)[0]   # (the dense oracle: a literal is int64, as index notation types it)
    np.testing.assert_array_equal(k(x=x).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(x=x).to_numpy(), want)
    helpers = {name for name, _ in k.lowered.helpers}
    # (a shift by the width: the helper; a left shift of a signed or narrow type: the helper)
    assert f"ss_rshift_{dtype}" in helpers
    assert (f"ss_lshift_{dtype}" in helpers) == (dtype in ("int64", "uint8"))
    for shift in (5, width - 1):
        assert f">> {shift}" in k.c_source, f"x >> {shift} is plain C"
