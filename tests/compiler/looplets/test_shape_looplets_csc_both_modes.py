"""A CSC sliced on both modes, and a slice of a CSC's rows inside a reduction, under the looplets strategy
(issue 30): ``A_csc[1:9:2, ::2]``, ``A_csc[::-1, 3:1:-1]``, ``A_csc[2:7, 1:3]``, ``xp.sum(A_csc[1:9:2], axis=1)``,
``xp.sum(A_csc[::-1])``. The loop over the columns' slice (with its one-step loop), or the reduction's loop
over the columns, ran inside the rows' slice's: refused (the rows' walk discordant, or A's row level
never looped over), and the array front end retried, then materialized the slices. Now that loop runs
outside the rows' slice's where the output takes its writes column by column (dense, a scalar, or CSC),
each column's rows windowed or walked in the entries the stride keeps. Against numpy, the dense oracle
and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp

from tests.compiler.looplets.shape_checks import checked_kernel
from tests.compiler.looplets.slice_cases import bounds, matrix

PAIRS = [(np.s_[1:9:2], np.s_[::2]), (np.s_[::-1], np.s_[3:1:-1]), (np.s_[2:7], np.s_[1:3]),
         (np.s_[::2], np.s_[1:3]), (np.s_[2:7], np.s_[::-1]), (np.s_[8:1:-3], np.s_[1:4])]


def sliced(n, key, index, result, operand):
    """The notation's slice of ``operand``'s ``index`` (extent ``n``) for numpy's ``key``."""
    r = key.step or 1
    start, stop = bounds(n, r, key.start, key.stop)
    return f"slice({operand}, {index} -> {result}, ({start}, {stop}, {r}))"


def one_kernel(expr, out, direct=True):
    """The looplets kernel of ``expr`` into ``out``; ``direct``: one statement, nothing retried,
    materialized or converted."""
    kernel = ss.lower(expr, strategy="looplets", format=out)
    assert not direct or not {"retry", "materialize", "convert"} & set(kernel.trace.stages()), kernel.trace
    return kernel


def program_text(kernel):
    return str(next(s.after for s in kernel.trace.steps if s.stage == "program"))


@pytest.mark.parametrize("out", [None, "csc", "dense"])
@pytest.mark.parametrize("rows,cols", PAIRS)
def test_the_array_front_end_slices_both_modes_of_a_csc_in_one_kernel(rows, cols, out):
    a = matrix((10, 5), 0.5, 0.0, seed=1)
    a[1, 1], a[4, 2] = np.nan, np.inf
    expr = xp.asarray(ss.Tensor.from_numpy(a, "csc"))[rows, cols]
    kernel = one_kernel(expr, out)
    for got in (kernel(), kernel.interpret()):
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), a[rows, cols])


@pytest.mark.parametrize("rows,cols", [(np.s_[1:9:2], np.s_[::2]), (np.s_[::-1], np.s_[3:1:-1]),
                                       (np.s_[2:7], np.s_[1:3])])
def test_the_columns_slice_loops_outside_the_rows_slice_into_a_csc(rows, cols):
    a = matrix((10, 4), 0.5, 0.0, seed=2)
    A = ss.Tensor.from_numpy(a, "csc", name="A")
    prog = f"S[k, l] = {sliced(4, cols, 'i', 'l', sliced(10, rows, 'j', 'k', 'A[j, i]'))}"
    kernel, _ = checked_kernel(prog, a[rows, cols], "csc", A=A)
    assert program_text(kernel).startswith("for l = "), program_text(kernel)


@pytest.mark.parametrize("key", [np.s_[1:9:2], np.s_[::-1], np.s_[2:7], np.s_[8:1:-3]])
@pytest.mark.parametrize("axis", [1, None])
def test_a_slice_of_a_cscs_rows_summed_over_its_columns(key, axis):
    a = matrix((10, 4), 0.5, 0.0, seed=3)
    a[a == -np.inf] = 2.0    # (inf + -inf is NaN either way; kept apart so the sums are finite or inf)
    expr = xp.sum(xp.asarray(ss.Tensor.from_numpy(a, "csc"))[key], axis=axis)
    kernel = one_kernel(expr, "dense" if axis is not None else None)
    want = a[key].sum(axis=axis)
    for got in (kernel(), kernel.interpret()):
        np.testing.assert_array_equal(np.asarray(got.to_numpy()), want)


@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan])
def test_the_reductions_loop_over_the_columns_runs_outside(fill):
    a = matrix((9, 4), 0.5, fill, seed=4)
    A = ss.Tensor.from_numpy(a, "csc", fill=fill, name="A")
    rows = sliced(9, np.s_[7::-2], "j", "k", "A[j, i]")
    kernel, _ = checked_kernel(f"y[k] = sum[i]({rows})", a[7::-2].sum(axis=1), "dense", A=A)
    assert program_text(kernel).splitlines()[1:3] == ["for i = 0:A0_size", "  for k = 0:4"], program_text(kernel)
    checked_kernel(f"s[] = sum[k, i]({rows})", np.asarray(a[7::-2].sum()), "dense", A=A)


def test_a_sparse_vector_of_row_sums_goes_through_a_workspace():
    # (its entries were appended under the loop over k, A's columns looped inside it: refused; now the
    # sums go into a dense workspace under the columns' loop, copied into y in order)
    a = matrix((6, 3), 0.5, 0.0, seed=5)
    A = ss.Tensor.from_numpy(a, "csc", name="A")
    kernel, _ = checked_kernel(f"y[k] = sum[i]({sliced(6, np.s_[1:5:2], 'j', 'k', 'A[j, i]')})",
                               a[1:5:2].sum(axis=1), "sparse_vector", A=A)
    assert kernel.trace.find("workspace"), kernel.trace


def test_only_the_columns_of_a_csc_strided_into_a_csc():
    # (out[i, j] = slice(A[i, k], k -> j, ...) looped the rows outside the columns, which a CSC output
    # cannot take, and the array front end materialized the slice; now the kept columns' loop runs outside)
    a = matrix((5, 4), 0.5, 0.0, seed=6)
    kernel = one_kernel(xp.asarray(ss.Tensor.from_numpy(a, "csc"))[:, ::2], "csc")
    assert not kernel.trace.find("gather"), kernel.trace
    np.testing.assert_array_equal(kernel().to_numpy(), a[:, ::2])


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(0, 9), cols=st.integers(0, 5), r=st.sampled_from([1, 2, -1, -3]),
       c=st.sampled_from([1, 2, -1, -2]),
       cut=st.tuples(st.integers(-10, 10) | st.none(), st.integers(-10, 10) | st.none()),
       density=st.sampled_from([0.0, 0.5, 1.0]), fill=st.sampled_from([0.0, 1.0, np.nan]),
       out=st.sampled_from(["csc", "dense", "sum"]), seed=st.integers(0, 2 ** 16))
@example(rows=10, cols=4, r=2, c=2, cut=(1, 9), density=0.5, fill=0.0, out="csc", seed=0)       # refused before
@example(rows=10, cols=4, r=-1, c=-1, cut=(None, None), density=0.5, fill=np.nan, out="csc", seed=1)
@example(rows=7, cols=3, r=1, c=1, cut=(2, 6), density=1.0, fill=1.0, out="dense", seed=2)      # all stored
@example(rows=8, cols=3, r=-3, c=2, cut=(-1, 0), density=0.0, fill=1.0, out="sum", seed=3)      # all fill
@example(rows=0, cols=2, r=2, c=1, cut=(None, None), density=0.5, fill=0.0, out="sum", seed=4)  # no rows
@example(rows=5, cols=0, r=1, c=-2, cut=(1, 4), density=0.5, fill=np.nan, out="csc", seed=5)    # no columns
def test_a_csc_sliced_on_both_modes_or_summed(rows, cols, r, c, cut, density, fill, out, seed):
    a = matrix((rows, cols), density, fill, seed)
    a[a == -np.inf] = 2.0 if out == "sum" else -np.inf
    A = ss.Tensor.from_numpy(a, "csc", fill=fill, name="A")
    key = slice(*cut, r)
    rows_sliced = sliced(rows, key, "j", "k", "A[j, i]")
    if out == "sum":
        checked_kernel(f"y[k] = sum[i]({rows_sliced})", a[key].sum(axis=1), "dense", A=A)
        kernel, want = one_kernel(xp.sum(xp.asarray(A)[key], axis=1), "dense"), a[key].sum(axis=1)
    else:
        both = (key, slice(None, None, c))
        checked_kernel(f"S[k, l] = {sliced(cols, both[1], 'i', 'l', rows_sliced)}", a[both], out, A=A)
        # (all the rows kept: the array front end slices the columns alone, which a CSC output still
        # takes through a retry; see test_only_the_columns_of_a_csc_strided_into_a_csc)
        kept_all = key.indices(rows) == (0, rows, 1)
        kernel, want = one_kernel(xp.asarray(A)[both], out, direct=not kept_all or out == "dense"), a[both]
    np.testing.assert_array_equal(kernel().to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)
