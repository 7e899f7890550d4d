"""Array expressions whose output's loop order walks an operand against its storage order, fused by the
lattice strategy (issue 30): the column sums of CSR parts stacked (or of a split sparse vector), the sum's
loops around the output's; a vstack of CSR parts into CSC, scattered. On main each was a 'retry' step and a
'materialize' step (the stack computed on its stored entries first). Each against numpy, the statement's
dense oracle and the IR interpreter (tests/compiler/lattice/split_kernels.py); the CFIR interpreter's side is
tests/compiler/lattice/test_seq_loop_order.py."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import array as xp
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

nan, inf = np.nan, np.inf


def loop_order_note(kernel) -> str:
    (step,) = kernel.trace.find("loop-order")
    return step.note


def test_the_issue_examples_are_one_kernel():
    A = sp.random(6, 8, 0.3, format="csr", random_state=1)
    B = sp.random(4, 8, 0.3, format="csr", random_state=2)
    a, b = xp.asarray(A), xp.asarray(B)
    k = one_lattice_kernel(xp.sum(xp.concat([a, b]), axis=0), np.asarray(sp.vstack([A, B]).sum(axis=0)).ravel())
    assert "the sum accumulated into a dense workspace" in loop_order_note(k)
    k = one_lattice_kernel(xp.concat([a, b]), sp.vstack([A, B]).toarray(), "csc")
    assert k().format.shorthand == "csc" and "by a scatter" in loop_order_note(k)


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("fill, odd", [(0.0, (nan, inf)), (1.0, (-inf,)), (nan, (inf,))])
@pytest.mark.parametrize("fmts", [("csr", "csr"), ("coo", "csr"), ("csc", "csc"), ("dense", "coo")])
def test_sums_of_a_vstack(fmts, fill, odd, axis):
    a, A = operand((3, 5), fmts[0], 1, fill=fill, odd=odd)
    b, B = operand((2, 5), fmts[1], 2, fill=fill)
    with np.errstate(invalid="ignore"):
        want = np.concatenate([a, b]).sum(axis=axis)
    one_lattice_kernel(xp.sum(xp.concat([A, B]), axis=axis), want)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("fmts", [("csr", "csr"), ("csc", "csc")])
def test_sums_of_an_hstack(fmts, axis):
    a, A = operand((3, 4), fmts[0], 3, odd=(inf,))
    b, B = operand((3, 2), fmts[1], 4, fill=0.0, odd=(nan,))
    one_lattice_kernel(xp.sum(xp.concat([A, B], axis=1), axis=axis), np.concatenate([a, b], 1).sum(axis=axis))


@pytest.mark.parametrize("fill, odd", [(0.0, ()), (1.0, (nan,)), (nan, (inf, -inf))])
@pytest.mark.parametrize("axis", [0, 1])
def test_sums_of_a_split_sparse_vector(axis, fill, odd):
    v, V = operand((12,), "sparse_vector", 5, fill=fill, odd=odd)
    with np.errstate(invalid="ignore"):
        want = v.reshape(3, 4).sum(axis=axis)
    k = one_lattice_kernel(xp.sum(V.reshape(3, 4), axis=axis), want)
    # (the column sums ran the split's minor index outside its major one: now the sum's loop runs outside)
    assert bool(k.trace.find("loop-order")) == (axis == 0)


@pytest.mark.parametrize("shapes", [((0, 5), (2, 5)), ((3, 5), (0, 5)), ((0, 5), (0, 5))])
def test_empty_parts(shapes):
    a, A = operand(shapes[0], "csr", 6)
    b, B = operand(shapes[1], "csr", 7, density=0.0)
    one_lattice_kernel(xp.sum(xp.concat([A, B]), axis=0), np.concatenate([a, b]).sum(axis=0))
    one_lattice_kernel(xp.concat([A, B]), np.concatenate([a, b]), "csc")


@pytest.mark.parametrize("fill", [0.0, nan])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("fmts", [("csr", "csr"), ("coo", "dense"), ("csr", "coo")])
def test_stacks_into_csc(fmts, axis, fill):
    a, A = operand((3, 4), fmts[0], 8, fill=fill, odd=(inf,))
    b, B = operand((3, 4), fmts[1], 9, fill=fill, odd=(-inf, nan))
    k = one_lattice_kernel(xp.concat([A, B], axis=axis), np.concatenate([a, b], axis), "csc")
    assert "by a scatter" in loop_order_note(k) and not k.trace.find("convert")


@st.composite
def expressions(draw):
    """``(numpy result, Array)``: a sum along a drawn axis, or a stack into CSC, of two parts of drawn formats,
    rows, fill, density and odd values."""
    fill = draw(st.sampled_from([0.0, 1.0, nan]))
    parts = [operand((draw(st.integers(0, 3)), 4), draw(st.sampled_from(["csr", "csc", "coo", "dense"])),
                     draw(st.integers(0, 99)), draw(st.sampled_from([0.0, 0.4, 1.0])), fill,
                     draw(st.sampled_from([(), (nan,), (inf, -inf)]))) for _ in range(2)]
    (a, A), (b, B) = parts
    axis = draw(st.sampled_from([0, 1, None, "csc"]))
    if axis == "csc":
        return np.concatenate([a, b]), xp.concat([A, B]), "csc"
    with np.errstate(invalid="ignore"):
        return np.concatenate([a, b]).sum(axis=axis), xp.sum(xp.concat([A, B]), axis=axis), None


@settings(max_examples=7, deadline=None)
@given(expressions())
def test_any_stack_summed_or_scattered_is_one_kernel(case):
    want, expr, out = case
    with np.errstate(invalid="ignore"):
        one_lattice_kernel(expr, want, out)
