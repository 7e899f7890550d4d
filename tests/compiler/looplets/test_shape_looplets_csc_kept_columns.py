"""Strided slices of a CSC's columns under the looplets strategy: ``A_csc[:, ::2]``, ``A_csc[:, 7::-3]``,
``S[i, k] = slice(A[i, j], j -> k, (s, e, r))`` of a CSC ``A``. The output's loops ran i (A's rows)
outside k, so each column's row level was searched for every row (gathered), and a CSC output could not
take its writes: the array front end retried into CSR. Now the loop over k (with its one-step loop)
runs outside the rows' where the output takes its writes so (CSC, dense): each kept column is read at
``s + r * k`` in A's Dense column level and its row level walked. Against numpy, the dense oracle and
the IR interpreter; ``A_csr[::2]`` into CSR, the analogue, stays one kernel."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.format import Format
from compiler.levels import Element, SparseList

from tests.compiler.looplets.shape_checks import checked_kernel
from tests.compiler.looplets.slice_cases import bounds, matrix

KEYS = [np.s_[::2], np.s_[7::-3], np.s_[::-1], np.s_[1:9:2], np.s_[-2:-9:-2], np.s_[3:3:2], np.s_[7:2:2]]


def column_program(n, key):
    """The notation's column slice of an ``n``-column ``A`` for numpy's ``key``."""
    start, stop = bounds(n, key.step, key.start, key.stop)
    return f"S[i, k] = slice(A[i, j], j -> k, ({start}, {stop}, {key.step}))"


def program_text(kernel):
    return str(next(s.after for s in kernel.trace.steps if s.stage == "program"))


@pytest.mark.parametrize("out", [None, "csc", "dense"])
@pytest.mark.parametrize("key", KEYS)
def test_the_array_front_end_slices_a_cscs_columns_in_one_kernel(key, out):
    a = matrix((6, 10), 0.5, 0.0, seed=7)
    expr = xp.asarray(ss.Tensor.from_numpy(a, "csc"))[:, key]
    kernel = ss.lower(expr, strategy="looplets", format=out)
    assert not {"retry", "materialize", "convert"} & set(kernel.trace.stages()), kernel.trace
    if a[:, key].size:     # (an empty slice is the front end's window of nothing, not a strided one)
        assert not {"gather", "output-order"} & set(kernel.trace.stages()), kernel.trace
    for got in (kernel(), kernel.interpret()):
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), a[:, key])


@pytest.mark.parametrize("key", [np.s_[::2], np.s_[::-3], np.s_[8:1:-2]])
def test_a_csrs_strided_rows_stay_one_kernel(key):
    a = matrix((10, 5), 0.5, np.nan, seed=8)
    expr = xp.asarray(ss.Tensor.from_numpy(a, "csr", fill=np.nan))[key]
    kernel = ss.lower(expr, strategy="looplets", format="csr")
    assert not {"retry", "materialize", "convert", "gather", "output-order"} & set(kernel.trace.stages())
    np.testing.assert_array_equal(kernel().to_numpy(), a[key])


def test_the_kept_columns_loop_outside_the_rows():
    a = matrix((6, 10), 0.5, 0.0, seed=9)
    A = ss.Tensor.from_numpy(a, "csc", name="A")
    kernel, _ = checked_kernel(column_program(10, np.s_[7::-3]), a[:, 7::-3], "csc", A=A)
    loops = [line.split("=")[0].split()[1] for line in program_text(kernel).splitlines()
             if line.strip().startswith("for")]
    assert loops == ["k", "t", "i"], program_text(kernel)
    # (each kept column opened at 7 - 3k: its row level walked from its start, no search)
    assert "seek" not in kernel.c_source.split("int S_kernel", 1)[1], kernel.c_source


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(0, 6), cols=st.integers(0, 10), r=st.sampled_from([2, 3, -1, -2, -3]),
       cut=st.tuples(st.integers(-11, 11) | st.none(), st.integers(-11, 11) | st.none()),
       density=st.sampled_from([0.0, 0.3, 1.0]), fill=st.sampled_from([0.0, 1.0, np.nan]),
       fmt=st.sampled_from(["csc", "dcsc"]), out=st.sampled_from(["csc", "dense"]), seed=st.integers(0, 2 ** 16))
@example(rows=5, cols=10, r=2, cut=(None, None), density=0.3, fill=np.nan, fmt="csc", out="csc", seed=1)
@example(rows=4, cols=9, r=-3, cut=(7, None), density=1.0, fill=1.0, fmt="csc", out="csc", seed=2)
@example(rows=0, cols=4, r=2, cut=(None, None), density=0.3, fill=0.0, fmt="csc", out="csc", seed=3)   # no rows
@example(rows=3, cols=0, r=-2, cut=(None, None), density=0.3, fill=1.0, fmt="csc", out="dense", seed=4)
@example(rows=4, cols=8, r=-1, cut=(-1, 0), density=0.0, fill=1.0, fmt="dcsc", out="csc", seed=5)     # all fill
def test_a_strided_slice_of_a_cscs_columns(rows, cols, r, cut, density, fill, fmt, out, seed):
    a = matrix((rows, cols), density, fill, seed)
    key = slice(*cut, r)
    if fmt == "dcsc":     # (its column level sparse too: a kept column holding no entry is passed over)
        fmt = Format(SparseList(SparseList(Element(fill))), mode_order=(1, 0))
    A = ss.Tensor.from_numpy(a, fmt, fill=fill, name="A")
    checked_kernel(column_program(cols, key), a[:, key], out, A=A)
    k = ss.lower(xp.asarray(A)[:, key], strategy="looplets", format=out)
    assert not {"retry", "materialize", "convert"} & set(k.trace.stages()), k.trace
    np.testing.assert_array_equal(k().to_numpy(), a[:, key])
