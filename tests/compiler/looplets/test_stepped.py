"""Strided slices of a CSC's rows walked in the stored entries they keep (issue 30, compiler.looplets.stepped):
``A_csc[1:9:2]``, ``A_csc[::-1]``, ``S[k, i] = slice(A[j, i], j -> k, (s, e, r))`` into a dense or CSC
output. Each column's row level was strided by the slice's one-step loop, a seek per output row in every
column; now the loop over k reads ``stride(A, 0, s:e:r)``, whose SparseList rows unfurl to a walk over
their entries on the stride (down the column for r < 0). A level that cannot walk so keeps the one-step
loop. Against numpy, the dense oracle and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.format import Format, csc
from compiler.levels import Dense, Element, SparseBlockList
from compiler.looplets.fibers import TensorInfo, UnfurlContext
from compiler.looplets.looplets import nest_text
from compiler.looplets.stepped import StridedFiber, steps_through
from compiler.imperative.ir import Var

from tests.compiler.looplets.shape_checks import checked_kernel
from tests.compiler.looplets.slice_cases import bounds, matrix, slice_program


def program_text(kernel):
    return str(next(s.after for s in kernel.trace.steps if s.stage == "program"))


@pytest.mark.parametrize("out", ["csc", "dense"])
@pytest.mark.parametrize("key", [np.s_[1:9:2], np.s_[::-1], np.s_[8:1:-3], np.s_[::3], np.s_[-2:-9:-2]])
def test_the_slice_walks_the_entries_it_keeps(key, out):
    a = matrix((10, 4), 0.6, 0.0, seed=1)
    A = ss.Tensor.from_numpy(a, "csc", name="A")
    kernel, _ = checked_kernel(slice_program(10, key), a[key], out, A=A)
    text = program_text(kernel)
    # (no one-step loop: the loop over k reads the strided operand, each column walked in its entries)
    assert "for t" not in text and "stride(A, 0, " in text, text
    if abs(key.step) != 1:   # (the entries off the stride are passed over)
        assert f"% {abs(key.step)} != 0" in kernel.c_source, kernel.c_source
    nests = [a.text for s in kernel.trace.steps if s.stage == "unfurl" for a in s.artifacts]
    assert any(n.startswith("Thunk") and "Stepper" in n for n in nests), nests


@pytest.mark.parametrize("out", [None, "csc", "dense"])
@pytest.mark.parametrize("key", [np.s_[::2], np.s_[1::3], np.s_[::-1], np.s_[::-2], np.s_[3:3:2], np.s_[7:2:2]])
def test_the_array_front_end_walks_a_cscs_strided_rows(key, out):
    a = matrix((11, 5), 0.5, 0.0, seed=2)
    expr = xp.asarray(ss.Tensor.from_numpy(a, "csc"))[key]
    kernel = ss.lower(expr, strategy="looplets", format=out)
    assert not {"retry", "materialize", "convert"} & set(kernel.trace.stages()), kernel.trace
    assert "for t" not in program_text(kernel)
    for got in (kernel(), kernel.interpret()):
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), a[key])


def test_a_level_that_cannot_walk_the_stride_keeps_the_one_step_loop():
    # (a column-major block list: its rows are not walked entry by entry, so each output row is sought)
    fmt = Format(Dense(SparseBlockList(Element(0.0))), mode_order=(1, 0))
    assert not steps_through(fmt.levels[1]) and steps_through(csc().levels[1])
    a = matrix((9, 3), 0.5, 0.0, seed=3)
    A = ss.Tensor.from_numpy(a, fmt, name="A")
    kernel, _ = checked_kernel(slice_program(9, np.s_[1:8:2]), a[1:8:2], "dense", A=A)
    assert "for t = 0:1" in program_text(kernel)


def test_the_stepped_nest_of_a_column():
    A = TensorInfo.from_format("A", csc()).root()
    for step, walk in ((2, "qA += 1"), (-2, "qA -= 1")):
        column = StridedFiber(A, 1, 1 if step > 0 else 8, 9 if step > 0 else -1, step)
        nest = column.unfurl(UnfurlContext(), "read").body(Var("j"))
        assert nest.label() == f"stride(A.lvl1[j], {column.start}:{column.stop}:{step})"
        text = nest_text(nest.unfurl(UnfurlContext(), "read"))
        assert "Stepper" in text and "Spike" in text and "Phase(stop=lastA)" in text, text


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(0, 10), cols=st.integers(0, 4), r=st.sampled_from([2, 3, -1, -2, -3]),
       cut=st.tuples(st.integers(-11, 11) | st.none(), st.integers(-11, 11) | st.none()),
       density=st.sampled_from([0.0, 0.3, 1.0]), fill=st.sampled_from([0.0, 1.0, np.nan]),
       out=st.sampled_from(["csc", "dense"]), seed=st.integers(0, 2 ** 16))
@example(rows=10, cols=4, r=2, cut=(1, 9), density=0.3, fill=np.nan, out="csc", seed=1)      # NaN fill
@example(rows=7, cols=3, r=-1, cut=(None, None), density=1.0, fill=1.0, out="csc", seed=2)   # all stored
@example(rows=9, cols=3, r=-3, cut=(7, 0), density=0.3, fill=0.0, out="dense", seed=3)
@example(rows=0, cols=2, r=3, cut=(None, None), density=0.3, fill=1.0, out="csc", seed=4)    # no rows
@example(rows=5, cols=0, r=2, cut=(1, 4), density=0.3, fill=np.nan, out="csc", seed=5)       # no columns
@example(rows=8, cols=3, r=-2, cut=(-1, 0), density=0.0, fill=1.0, out="dense", seed=6)      # all fill
def test_a_strided_slice_of_a_cscs_rows(rows, cols, r, cut, density, fill, out, seed):
    a = matrix((rows, cols), density, fill, seed)
    key = slice(*cut, r)
    A = ss.Tensor.from_numpy(a, "csc", fill=fill, name="A")
    kernel, _ = checked_kernel(slice_program(rows, key), a[key], out, A=A)
    assert "for t" not in program_text(kernel)
    expr = xp.asarray(A)[key]
    k = ss.lower(expr, strategy="looplets", format=out)
    assert not {"retry", "materialize", "convert"} & set(k.trace.stages()), k.trace
    np.testing.assert_array_equal(k().to_numpy(), a[key])
    np.testing.assert_array_equal(k.interpret().to_numpy(), a[key])


@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan])
@pytest.mark.parametrize("out", ["csc", "dense"])
def test_a_reversed_unit_step_copies_each_column_as_a_block(fill, out):
    # (every entry of the range kept: the walk counts positions down the column, no test per entry, and a column
    # of 8 entries or more is copied as a block, reversed, as scipy copies it; room for all of A's entries reserved
    # up front; a stored 0 of a fill-1 matrix, or a NaN of a NaN-filled one, takes the entry-by-entry loop)
    rng = np.random.default_rng(7)
    a = matrix((30, 4), 0.9, fill, seed=8)
    a[rng.integers(0, 30, 3), rng.integers(0, 4, 3)] = 0.0
    A = ss.Tensor.from_numpy(a, "csc", fill=fill, name="A")
    expr = xp.asarray(A)[::-1]
    k = ss.lower(expr, strategy="looplets", format=out)
    for got in (k(), k.interpret()):
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), a[::-1])
    if out == "csc":
        assert "n_copy" in k.c_source and "step_stop" not in k.c_source and "% 1" not in k.c_source, k.c_source
        (reserve,) = k.trace.find("reserve")
        assert "A1_size == 30 ? (int64)A1_pos[A0_size] : 0" in reserve.after_text, reserve.after_text
    kernel, _ = checked_kernel(slice_program(30, np.s_[::-1]), a[::-1], out, A=A)
    # (a dense output's rows between entries written with the fill: the stepper's steps)
    assert ("step_stop" in kernel.c_source) == (out == "dense"), kernel.c_source


def test_a_kernel_reserving_a_reversal_called_with_more_rows():
    # (the slice keeps every row of a 12-row A: its entries reserved; called with 20 rows it keeps 12 of them, the
    # room asked at the call none, and the output grows as it goes)
    a12, a20 = matrix((12, 3), 0.8, 0.0, seed=9), matrix((20, 3), 0.8, 0.0, seed=10)
    A12, A20 = (ss.Tensor.from_numpy(a, "csc", name="A") for a in (a12, a20))
    k = ss.lower(slice_program(12, np.s_[::-1]), "looplets", A=A12, S=ss.parse_format("csc", ndim=2))
    assert k.trace.find("reserve"), k.trace
    for a, A in ((a12, A12), (a20, A20)):
        got = k(A=A)
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), a[11::-1])


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(0, 5), cols=st.integers(0, 9), r=st.sampled_from([2, 3, -1, -2]),
       cut=st.tuples(st.integers(-10, 10) | st.none(), st.integers(-10, 10) | st.none()),
       density=st.sampled_from([0.0, 0.4, 1.0]), fill=st.sampled_from([0.0, 1.0, np.nan]),
       out=st.sampled_from(["coo", "dense"]), seed=st.integers(0, 2 ** 16))
@example(rows=3, cols=4, r=-2, cut=(None, None), density=0.5, fill=0.0, out="dense", seed=1)   # was an IndexError
@example(rows=4, cols=9, r=3, cut=(1, 8), density=0.4, fill=np.nan, out="coo", seed=2)
@example(rows=0, cols=3, r=2, cut=(None, None), density=0.4, fill=1.0, out="coo", seed=3)      # no rows
@example(rows=3, cols=5, r=-1, cut=(3, 3), density=1.0, fill=0.0, out="dense", seed=4)         # an empty slice
def test_a_strided_slice_of_a_coo_matrix_s_columns_read_as_rows(rows, cols, r, cut, density, fill, out, seed):
    # (a SparseCOO level stores both modes: the level storing the sliced mode is found by storage mode, where
    # the strategy looked for a second level and raised an IndexError; the COO cannot walk the stride)
    a = matrix((rows, cols), density, fill, seed)
    key = slice(*cut, r)
    A = ss.Tensor.from_numpy(a, "coo", fill=fill, name="A")
    start, stop = bounds(cols, r, key.start, key.stop)
    # (into a dense output, whose loops run i outside k, A's storage order; the array's result in the format asked)
    checked_kernel(f"S[k, i] = slice(A[i, j], j -> k, ({start}, {stop}, {r}))", a[:, key].T, "dense", A=A)
    k = ss.lower(xp.asarray(A).T[key], strategy="looplets", format=out)
    for got in (k(), k.interpret()):
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), a[:, key].T)
