"""A CSC's column window, its columns into a row-major output, and a CSC's row-major flatten under the
looplets strategy: ``A_csc[:, 1:9]``, ``A_csc[:, ::2]`` into CSR, ``A_csc[1:9:2, ::-2]``,
``A_csc[::-1]`` into CSR, ``x + c_csc.reshape(4)``. On main the window's loop ran inside the rows'
(each entry gathered, a CSC output built as CSR and converted), a CSR output of kept columns gathered
each column's rows for every row, a strided slice of both modes into a dense output gathered,
``A_csc[::-1]`` into CSR and ``x + c_csc.reshape(4)`` were refused, retried and materialized. Now the
columns' loop runs outside the rows' (each kept column's rows walked, a run copied as a block), an
output stored rows first is built by a scatter, and the flatten walks ``c`` column by column, writing
and reading ``x`` at ``t + (k + j * |k|)`` (through a dense workspace into a sparse vector). Against
numpy, the dense oracle and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp

from tests.compiler.looplets.shape_checks import checked_kernel
from tests.compiler.looplets.slice_cases import STORED, bounds, matrix

#: what a kernel in one pass over its operands does not record
INDIRECT = {"retry", "materialize", "convert", "gather"}


def sliced(n, key, index, result, operand):
    """The notation's slice of ``operand``'s ``index`` (extent ``n``) for numpy's ``key``."""
    r = key.step or 1
    start, stop = bounds(n, r, key.start, key.stop)
    return f"slice({operand}, {index} -> {result}, ({start}, {stop}, {r}))"


def direct(expr, out):
    """The looplets kernel of ``expr`` into ``out``, checked to be one pass: nothing retried,
    materialized, converted or gathered; a row-major sparse output scattered."""
    kernel = ss.lower(expr, strategy="looplets", format=out)
    stages = set(kernel.trace.stages())
    assert not INDIRECT & stages, kernel.trace
    orders = [s.note for s in kernel.trace.find("output-order")]
    assert all("by a scatter" in n for n in orders), orders
    return kernel


def check(kernel, want):
    for got in (kernel(), kernel.interpret()):
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)


@pytest.mark.parametrize("out", ["csc", "dense", "csr"])
@pytest.mark.parametrize("key", [np.s_[:, 1:9], np.s_[:, ::2], np.s_[1:9:2, ::-2], np.s_[::-1], np.s_[2:5, 7:2:-1]])
def test_the_array_front_end_slices_a_cscs_columns_in_one_pass(key, out):
    a = matrix((6, 10), 0.5, 0.0, seed=11)
    kernel = direct(xp.asarray(ss.Tensor.from_numpy(a, "csc"))[key], out)
    # (a CSC or dense output takes the columns' writes in order; a CSR's by a scatter, both passes
    # walking each column)
    assert bool(kernel.trace.find("output-order")) == (out == "csr"), kernel.trace
    check(kernel, a[key])


def test_a_column_window_walks_each_column_copying_its_runs():
    a = matrix((6, 10), 0.5, 1.0, seed=12)
    A = ss.Tensor.from_numpy(a, "csc", fill=1.0, name="A")
    kernel, _ = checked_kernel(f"S[i, k] = {sliced(10, np.s_[1:9], 'j', 'k', 'A[i, j]')}", a[:, 1:9], "csc", A=A)
    body = kernel.c_source.split("int S_kernel", 1)[1]
    assert "copied as a block" in body and "seek" not in body and "lower_bound" not in body, body


@pytest.mark.parametrize("rows,cols", [(np.s_[:], np.s_[1:9]), (np.s_[:], np.s_[::-2]), (np.s_[::-1], np.s_[:]),
                                       (np.s_[5:0:-2], np.s_[2::3])])
def test_a_row_major_output_is_scattered_from_the_columns_loops(rows, cols):
    a = matrix((6, 10), 0.6, np.nan, seed=13)
    A = ss.Tensor.from_numpy(a, "csc", fill=np.nan, name="A")
    key = (rows, cols)
    prog = sliced(10, cols, "j", "l", "A[i, j]") if cols != slice(None) else "A[i, j]"
    prog = sliced(6, rows, "i", "k", prog) if rows != slice(None) else prog
    lhs = f"S[{'k' if rows != slice(None) else 'i'}, {'l' if cols != slice(None) else 'j'}]"
    kernel, _ = checked_kernel(f"{lhs} = {prog}", a[key], "csr", A=A)
    transposed = kernel.trace.find("transpose")
    assert transposed and all("built by a scatter" in t.note for t in transposed), kernel.trace
    assert "S1_next" in kernel.c_source and not kernel.trace.find("gather"), kernel.c_source


@pytest.mark.parametrize("out", [None, "dense", "sparse_vector"])
def test_a_cscs_row_major_flatten_beside_a_vector_walks_its_columns(out):
    c = np.array([[1.0, 0.0, -np.inf], [np.nan, 2.0, 0.0]])
    x = np.array([0.0, 1.0, np.inf, -2.0, 0.0, 3.0])
    X = ss.Tensor.from_numpy(x, "dense")
    C = ss.Tensor.from_numpy(c, "csc")
    with np.errstate(all="ignore"):
        for expr, want in ((xp.asarray(X) + xp.asarray(C).reshape(6), x + c.reshape(6)),
                           (xp.asarray(C).reshape(6) * xp.asarray(X), c.reshape(6) * x)):
            kernel = direct(expr, out)
            (walk,) = kernel.trace.find("walk-reshape")
            assert "written and read out of order" in walk.note, walk.note
            check(kernel, want)


def test_the_flatten_is_one_loop_per_column_and_a_sparse_vector_goes_through_a_workspace():
    # (a product: c's fill 0 is no identity of *, so x is read beside c, not copied first)
    c, x = np.array([[0.0, 2.0], [3.0, 0.0]]), np.arange(4.0)
    C, X = ss.Tensor.from_numpy(c, "csc", name="c"), ss.Tensor.from_numpy(x, "dense", name="x")
    prog = "y[i] = x[i] * collapse(c[j, k], (j, k) -> i)"
    kernel, _ = checked_kernel(prog, x * c.reshape(4), "dense", c=C, x=X)
    loops = [line.split("=")[0].split()[1] for line in str(kernel.trace.find("program")[0].after).splitlines()
             if line.strip().startswith("for")]
    assert loops == ["k", "j", "t"], loops
    kernel, _ = checked_kernel(prog, x * c.reshape(4), "sparse_vector", c=C, x=X)
    assert kernel.trace.find("workspace"), kernel.trace


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(0, 6), cols=st.integers(0, 9), r=st.sampled_from([1, 1, 2, -1, -3]),
       c=st.sampled_from([None, 1, 2, -1, -2]),
       cut=st.tuples(st.integers(-10, 10) | st.none(), st.integers(-10, 10) | st.none()),
       density=st.sampled_from([0.0, 0.4, 1.0]), fill=st.sampled_from([0.0, 1.0, np.nan]),
       out=st.sampled_from(["csc", "dense", "csr"]), seed=st.integers(0, 2 ** 16))
@example(rows=5, cols=10, r=1, c=None, cut=(1, 9), density=0.4, fill=0.0, out="csc", seed=1)        # the window
@example(rows=5, cols=10, r=2, c=None, cut=(None, None), density=0.4, fill=np.nan, out="csr", seed=2)
@example(rows=9, cols=6, r=-2, c=2, cut=(1, 9), density=1.0, fill=1.0, out="dense", seed=3)       # all stored
@example(rows=4, cols=7, r=-1, c=-1, cut=(None, None), density=0.0, fill=1.0, out="csr", seed=4)   # all fill
@example(rows=0, cols=4, r=1, c=None, cut=(1, 3), density=0.4, fill=0.0, out="csr", seed=5)        # no rows
@example(rows=3, cols=0, r=-3, c=None, cut=(None, None), density=0.4, fill=0.0, out="csc", seed=6)  # no columns
def test_a_cscs_columns_sliced_into_any_order(rows, cols, r, c, cut, density, fill, out, seed):
    a = matrix((rows, cols), density, fill, seed)
    A = ss.Tensor.from_numpy(a, "csc", fill=fill, name="A")
    key = (slice(None), slice(*cut, r)) if c is None else (slice(None, None, c), slice(*cut, r))
    prog = sliced(cols, key[1], "j", "l", "A[i, j]")
    prog = f"S[i, l] = {prog}" if c is None else f"S[k, l] = {sliced(rows, key[0], 'i', 'k', prog)}"
    checked_kernel(prog, a[key], out, A=A)
    kernel = ss.lower(xp.asarray(A)[key], strategy="looplets", format=out)
    if a[key].size:   # (an empty slice is the front end's window of nothing)
        assert not INDIRECT & set(kernel.trace.stages()), kernel.trace
    np.testing.assert_array_equal(kernel().to_numpy(), a[key])


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(m=st.integers(0, 4), n=st.integers(0, 4), density=st.sampled_from([0.0, 0.5, 1.0]),
       fill=st.sampled_from([0.0, 1.0, np.nan]), op=st.sampled_from(["+", "*"]),
       out=st.sampled_from(["dense", "sparse_vector"]), seed=st.integers(0, 2 ** 16))
@example(m=2, n=3, density=0.5, fill=np.nan, op="+", out="sparse_vector", seed=1)
@example(m=3, n=2, density=1.0, fill=0.0, op="*", out="dense", seed=2)                     # all stored
@example(m=2, n=2, density=0.0, fill=1.0, op="+", out="sparse_vector", seed=3)             # all fill
def test_a_cscs_flatten_beside_a_dense_vector(m, n, density, fill, op, out, seed):
    c = matrix((m, n), density, fill, seed)
    x = np.random.default_rng(seed).choice(STORED + [0.0], m * n)
    C = ss.Tensor.from_numpy(c, "csc", fill=fill, name="c")
    X = ss.Tensor.from_numpy(x, "dense", name="x")
    with np.errstate(all="ignore"):
        want = x + c.reshape(-1) if op == "+" else x * c.reshape(-1)
    checked_kernel(f"y[i] = x[i] {op} collapse(c[j, k], (j, k) -> i)", want, out, c=C, x=X)
