"""A CSC's rows sliced and summed over its columns into a sparse vector under the looplets strategy:
``xp.sum(A_csc[1:9:2], axis=1)``, ``out[i] = sum[j](slice(A[k, j], k -> i, (1, 9, 2)))``. The columns'
loop must run outside the slice's for each column's row level to be walked, and a sparse vector is
appended in order: refused ("the strided walk of k would be discordant"), the array front end retried
and materialized the slice. Now the sum goes into a dense workspace in the loops that walk each
column's kept entries (:mod:`compiler.looplets.stepped`), copied into the output in order: one kernel.
A CSR's rows (walked in order already) stay one kernel, through the workspace too where the output's
fill is not the sum's identity (a CSR of fill 1: a sparse vector of fill 7 could not start its sums);
summed over the rows, a strided slice of an operand stored rows first goes through the workspace too,
each kept row walked. Against numpy, the dense oracle and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp

from tests.compiler.looplets.shape_checks import checked_kernel
from tests.compiler.looplets.slice_cases import bounds, matrix


def sum_program(n, key):
    """The notation's sum over the columns of an ``n``-row ``A``'s rows sliced by numpy's ``key``."""
    r = key.step or 1
    start, stop = bounds(n, r, key.start, key.stop)
    return f"out[i] = sum[j](slice(A[k, j], k -> i, ({start}, {stop}, {r})))"


@pytest.mark.parametrize("fmt", ["csc", "csr", "coo", "dense"])
@pytest.mark.parametrize("key", [np.s_[1:9:2], np.s_[::-1], np.s_[8:1:-3], np.s_[2:7]])
def test_the_array_front_end_sums_sliced_rows_in_one_kernel(key, fmt):
    a = matrix((10, 5), 0.5, 0.0, seed=11)
    a[a == -np.inf] = np.inf      # (the sums hold inf and NaN, not inf - inf at every step)
    A = xp.asarray(ss.Tensor.from_numpy(a, fmt))
    for axis in (1, 0):
        expr = xp.sum(A[key], axis=axis)
        kernel = ss.lower(expr, strategy="looplets")
        assert not {"retry", "materialize", "convert"} & set(kernel.trace.stages()), kernel.trace
        strided = key.step not in (None, 1)
        # (a sparse vector through a workspace where the sum's loop must run outside the output's: a
        # CSC's columns, or the strided rows of an operand stored rows first)
        assert bool(kernel.trace.find("workspace")) == (fmt == "csc" and axis == 1 or
                                                        strided and fmt in ("csr", "coo") and axis == 0), kernel.trace
        assert not strided or not kernel.trace.find("gather"), kernel.trace
        for got in (kernel(), kernel.interpret()):
            got.validate()
            np.testing.assert_array_equal(got.to_numpy(), a[key].sum(axis=axis))


def test_the_workspace_walks_each_columns_kept_entries():
    a = matrix((10, 4), 0.5, np.nan, seed=12)
    A = ss.Tensor.from_numpy(a, "csc", fill=np.nan, name="A")
    with np.errstate(invalid="ignore"):   # (inf + -inf in a row: NaN, as the kernel sums it)
        want = a[1:9:2].sum(axis=1)
    kernel, got = checked_kernel(sum_program(10, np.s_[1:9:2]), want, "sparse_vector", A=A)
    program = str(next(s.after for s in kernel.trace.steps if s.stage == "program"))
    assert program.splitlines()[1:] == ["for j = 0:A0_size", "  for i = 0:4",
                                        "    w[i] += stride(A, 0, 1:9:2)[i, j]", "for i = 0:4", "  out[i] = w[i]"]
    assert got.format.levels[0].name == "SparseList"


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(0, 10), cols=st.integers(0, 4), r=st.sampled_from([1, 2, 3, -1, -2, -3]),
       cut=st.tuples(st.integers(-11, 11) | st.none(), st.integers(-11, 11) | st.none()),
       density=st.sampled_from([0.0, 0.3, 1.0]), fill=st.sampled_from([0.0, 1.0, np.nan]),
       fmt=st.sampled_from(["csc", "csr", "coo"]), out=st.sampled_from(["sparse_vector", "dense"]),
       seed=st.integers(0, 2 ** 16))
@example(rows=10, cols=4, r=2, cut=(1, 9), density=0.3, fill=0.0, fmt="csc", out="sparse_vector", seed=1)
@example(rows=9, cols=3, r=-3, cut=(7, None), density=1.0, fill=np.nan, fmt="csc", out="sparse_vector", seed=2)
@example(rows=0, cols=3, r=2, cut=(None, None), density=0.3, fill=1.0, fmt="csc", out="sparse_vector", seed=3)
@example(rows=6, cols=0, r=-1, cut=(None, None), density=0.3, fill=1.0, fmt="csc", out="sparse_vector", seed=4)
@example(rows=8, cols=3, r=2, cut=(5, 2), density=0.3, fill=0.0, fmt="csc", out="sparse_vector", seed=5)  # empty
@example(rows=8, cols=3, r=-2, cut=(None, None), density=0.0, fill=1.0, fmt="csc", out="sparse_vector", seed=6)
@example(rows=9, cols=3, r=2, cut=(1, 9), density=0.3, fill=1.0, fmt="csr", out="sparse_vector", seed=7)  # fill 3
def test_a_sum_of_sliced_rows(rows, cols, r, cut, density, fill, fmt, out, seed):
    a = matrix((rows, cols), density, fill, seed)
    key = slice(*cut, r)
    with np.errstate(all="ignore"):
        want = a[key].sum(axis=1)
    A = ss.Tensor.from_numpy(a, fmt, fill=fill, name="A")
    with np.errstate(all="ignore"):
        checked_kernel(sum_program(rows, key), want, out, A=A)
    k = ss.lower(xp.sum(xp.asarray(A)[key], axis=1), strategy="looplets")
    assert not {"retry", "materialize"} & set(k.trace.stages()), k.trace
    np.testing.assert_array_equal(k().to_numpy(), want)
