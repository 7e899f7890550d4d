"""An integer index over a slice, a broadcast or another integer index is a constant read of the tensor
under them (issue 30): the front end composes the index maps (a slice's start and step with the integer,
an integer into the next free axis; a broadcast axis indexed by an integer is read at its one coordinate),
so ``a[1:5:2][1]`` is ``out[j] = A[3, j]``, one kernel with nothing materialized, by both strategies. Before,
the inner index was computed by its own kernel and the outer one on its stored entries. Each against numpy
on CSR, CSC, COO and dense matrices, a sparse vector and a COO 3-tensor, fills 0, 1, NaN and ±inf with NaN,
±inf and -0.0 stored, empty and all-fill operands, and by a property over shapes, starts, stops and steps
(negative ones too)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import array as xp

from array_cases import operand

nan, inf = np.nan, np.inf



def one_kernel(expr, want, strategy):
    """``expr`` lowered by ``strategy`` as one kernel with no ``materialize`` or ``retry`` step (from the
    trace's steps), right against numpy; the kernel."""
    kernel = expr.lower(strategy=strategy)
    assert kernel.trace.find("materialize") == [], [s.note for s in kernel.trace.find("materialize")]
    assert kernel.trace.find("retry") == [], [s.note for s in kernel.trace.find("retry")]
    assert kernel.trace.stages().count("compile") == 1
    got = kernel().to_numpy()
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    # (-0.0 where numpy has it: a dense result keeps it; NaN's sign is numpy's accident)
    if kernel().format.is_dense:
        zero = np.asarray(want == 0)
        np.testing.assert_array_equal(np.signbit(got)[zero], np.signbit(want)[zero])
    return kernel


# (name, the expression of a (5, 6) matrix, the same in numpy, the constant access it becomes)
MATRIX = [
    ("a[1:5:2][1]", lambda a: a[1:5:2][1], "A[3, "),
    ("a[::-1][0]", lambda a: a[::-1][0], "A[4, "),
    ("a[4:0:-2][1, 2:5]", lambda a: a[4:0:-2][1, 2:5], "A[2, "),
    ("a[:, ::-2][3]", lambda a: a[:, ::-2][3], "A[3, "),
    ("a[2][3]", lambda a: a[2][3], "A[2, 3]"),
    ("a[1:][:, 2]", lambda a: a[1:][:, 2], ", 2]"),
    ("a[1:4][1][::2]", lambda a: a[1:4][1][::2], "A[2, "),
    ("(a[1:4] * 2)[1]", lambda a: (a[1:4] * 2.0)[1], "A[2, "),
    ("sum(a[::2], 1)[1]", lambda a: (a[::2]).sum(axis=1)[1] if isinstance(a, np.ndarray)
     else xp.sum(a[::2], axis=1)[1], "A[2, "),
    ("broadcast_to(a[1:2], (4, 6))[2]", lambda a: (np.broadcast_to if isinstance(a, np.ndarray)
                                                   else xp.broadcast_to)(a[1:2], (4, 6))[2], "A[1, "),

]


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("fmt, fill", [("csr", 0.0), ("csc", nan), ("coo", 1.0), ("dense", 0.0), ("csr", -inf)])
@pytest.mark.parametrize("name, build, access", MATRIX, ids=[c[0] for c in MATRIX])
def test_an_integer_index_over_an_index_or_a_broadcast_is_a_constant_read(name, build, access, fmt, fill, strategy):
    a, A = operand((5, 6), fmt, 7, fill=0.0 if fmt == "dense" else fill)
    kernel = one_kernel(build(A), build(a), strategy)
    assert access in str(kernel.program), kernel.program


def test_a_broadcast_of_an_extent_one_row_indexed_reads_its_one_coordinate():
    # (the (1, 6) operand's axis was left out of the access, a squeeze of the tensor materialized)
    a, A = operand((1, 6), "csr", 3)
    for strategy in ("lattice", "looplets"):
        kernel = one_kernel(xp.broadcast_to(A, (4, 6))[2] * 2.0, np.broadcast_to(a, (4, 6))[2] * 2.0, strategy)
        assert "A[0, " in str(kernel.program), kernel.program


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("fill", [0.0, inf, nan])
def test_a_sparse_vector_sliced_then_indexed(fill, strategy):
    v, V = operand((9,), "sparse_vector", 4, fill=fill)
    for expr, want in ((V[7:1:-3][1], v[7:1:-3][1]), (V[2:][3:][1], v[2:][3:][1]),
                       (xp.broadcast_to(V[::2], (3, 5))[1][4], np.broadcast_to(v[::2], (3, 5))[1][4])):
        kernel = one_kernel(expr, want, strategy)
        assert "A[4]" in str(kernel.program) or "A[8]" in str(kernel.program) or "A[6]" in str(kernel.program)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("fmt, fill", [("coo", 0.0), ("coo", nan), ("dense", 0.0)])
def test_nested_integer_indexes_of_a_3_tensor(fmt, fill, strategy):
    t, T = operand((3, 4, 5), fmt, 5, fill=fill)
    one_kernel(T[1][:, 2], t[1][:, 2], strategy)
    kernel = one_kernel(T[1:3][1][::-1, 0], t[1:3][1][::-1, 0], strategy)
    assert "A[2, " in str(kernel.program) and ", 0]" in str(kernel.program), kernel.program


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_empty_and_all_fill_operands(fmt, strategy):
    for density, fill in ((0.0, 0.0), (0.0, 1.0), (1.0, 0.0)):
        a, A = operand((4, 6), fmt, 2, fill=fill, density=density, odd=())
        one_kernel(A[::-2][1], a[::-2][1], strategy)
        one_kernel(A[1:3][0][4:0:-1], a[1:3][0][4:0:-1], strategy)


def _slices(draw, n):
    start, stop = draw(st.integers(-n - 1, n)), draw(st.integers(-n - 1, n))
    return slice(start, stop, draw(st.sampled_from([1, 2, 3, -1, -2, -3])))


@st.composite
def indexed(draw):
    """A matrix shape, a slice of its rows (negative steps too) with an integer into it and a slice of the
    columns, or the same over the columns."""
    shape = (draw(st.integers(1, 6)), draw(st.integers(1, 6)))
    axis = draw(st.integers(0, 1))
    inner = _slices(draw, shape[axis])
    kept = len(range(*inner.indices(shape[axis])))
    if kept == 0:
        inner = slice(None, None, -1)
        kept = shape[axis]
    k = draw(st.integers(-kept, kept - 1))
    other = _slices(draw, shape[1 - axis])
    return shape, axis, inner, k, other


@settings(max_examples=6, deadline=None)
@given(indexed(), st.sampled_from(["csr", "csc", "coo", "dense"]), st.sampled_from([0.0, 1.0, nan, inf]),
       st.sampled_from(["lattice", "looplets"]), st.integers(0, 2**16))
@example(((5, 6), 0, slice(1, 5, 2), 1, slice(None)), "csr", 0.0, "lattice", 0)
@example(((4, 3), 1, slice(None, None, -2), -1, slice(3, 0, -1)), "coo", nan, "looplets", 1)
def test_composed_indexes_by_property(case, fmt, fill, strategy, seed):
    shape, axis, inner, k, other = case
    a, A = operand(shape, fmt, seed, fill=0.0 if fmt == "dense" else fill)
    if axis == 0:
        one_kernel(A[inner][k][other], a[inner][k][other], strategy)
    else:
        one_kernel(A[:, inner][:, k][other], a[:, inner][:, k][other], strategy)
