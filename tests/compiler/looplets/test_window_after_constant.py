"""A window of a fiber located by a constant index, ``slice(A[2, j], j -> i, (2, 5, 1))`` (numpy's ``a[2, 2:5]``),
by the looplets (issue 30): the constant row is located under the loop over ``i``, so the window is read at a
bound coordinate, through a loop of one coordinate as an offset is. It was refused ("access
offset(window(A.lvl1[2], 2:5), 2)[${i}] is not fully indexed"), and the array front end computed the slice on
the stored entries; a strided slice (``a[2, ::2]``) was taken. Each kernel against numpy and the dense
oracle, on CSR, COO, dense and CSC (a column's window), fills 0, 1, NaN and inf, NaN, ±inf and -0.0 stored."""

import numpy as np
import pytest

from compiler import Tensor, array as xp, lower
from compiler.reference import evaluate

nan, inf = np.nan, np.inf


def matrix(fmt, fill, seed=3, shape=(7, 7)):
    r = np.random.default_rng(seed)
    a = np.where(r.random(shape) < 0.5, r.choice([1.0, -2.0, 3.5], shape), fill)
    a.flat[[9, 15, 16, 17]] = (nan, inf, -inf, -0.0)
    return a, Tensor.from_numpy(a, fmt, fill=fill)


@pytest.mark.parametrize("fmt, fill", [("csr", 0.0), ("csr", nan), ("coo", 1.0), ("dense", 0.0), ("csc", inf)])
@pytest.mark.parametrize("start, stop", [(2, 5), (0, 7), (0, 3), (4, 7), (3, 3)])
def test_a_window_of_a_constant_row_by_the_looplets(fmt, fill, start, stop):
    a, A = matrix(fmt, fill)
    column = fmt == "csc"
    program = f"out[i] = slice(A[{'j, 2' if column else '2, j'}], j -> i, ({start}, {stop}, 1))"
    want = a[start:stop, 2] if column else a[2, start:stop]
    for out in ("dense", None):
        kernel = lower(program, strategy="looplets", A=A, **({"out": out} if out else {}))
        got = kernel(A=A).to_numpy()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(evaluate(program, A=A)[0], want)


@pytest.mark.parametrize("fmt", ["csr", "coo", "dense", "csc"])
def test_the_array_front_end_fuses_it(fmt):
    a, A = matrix(fmt, 0.0)
    expr = (xp.asarray(A)[1:4, 2] if fmt == "csc" else xp.asarray(A)[2, 1:4]) * 2.0
    want = (a[1:4, 2] if fmt == "csc" else a[2, 1:4]) * 2.0
    kernel = expr.lower(strategy="looplets")
    assert kernel.trace.find("retry") == [] and kernel.trace.find("materialize") == [], kernel.trace.stages()
    np.testing.assert_array_equal(kernel().to_numpy(), want)
