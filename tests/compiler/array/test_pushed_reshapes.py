"""A reshape of an elementwise operator lowered by the lattice as one kernel reading every input as stored (issue
30, compiler.array.pushed_reshapes): ``(a3 + 1).reshape(4, 6)`` and ``(a3 + b3).reshape(4, 6)`` of sparse 3-D
tensors of fill 0 were refused (the scalar's universe, or ``b3``, joins ``a3``'s coordinates under the collapse: a
split of a product over a union), so the sum was computed by its own kernel and reshaped on its stored entries
(two ``materialize`` steps). They are lowered as ``a3.reshape(4, 6) + 1`` and ``a3.reshape(4, 6) +
b3.reshape(4, 6)``, one kernel. Each against numpy, the dense oracle of the statement (compiler.evaluate) and the
IR interpreter, the output validated; NaN and ±inf stored, CSF and COO operands, empty and all-fill inputs (a
fill the sum leaves, NaN's, was taken as written before: so it stays)"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp

from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

nan, inf = np.nan, np.inf
#: values stored first in the operands of fill 0
ODD = [(nan, inf), (-inf, nan), (inf,), ()]
#: (name, the operator of the lattice's union under the collapse): each on the lazy arrays and on numpy's
OPS = [("a + 1", lambda a, b: a + 1.0), ("1 + a", lambda a, b: 1.0 + a), ("a + b", lambda a, b: a + b),
       ("a + b + 1", lambda a, b: a + b + 1.0)]


def one_kernel(expr, want, out):
    """``expr`` lowered by the lattice as one kernel right against numpy (one_lattice_kernel: nothing
    materialized; the refusal of the reshape of the operator a ``retry`` step), nothing converted, the reshape
    moved onto the operator's operands (the ``array`` step says so); the kernel."""
    with np.errstate(invalid="ignore", over="ignore"):
        k = one_lattice_kernel(expr, want, out, retried=True)
    assert k.trace.find("convert") == [], [s.note for s in k.trace.find("convert")]
    assert k.lowered.conversions == ()
    (step,) = k.trace.find("array")
    assert "compiler.array.pushed_reshapes" in step.note, step.note
    (retry,) = k.trace.find("retry")
    assert "a split of a product over a union" in retry.note, retry.note
    return k


def case(op, new, odd=(nan, inf), fmts=("csf", "coo"), density=0.4, seed=0, shape=(2, 3, 4)):
    """``op`` of two operands of ``shape`` and fill 0 (``a`` with ``odd`` stored first, ``b`` with -inf), reshaped
    to ``new``: the lazy array and numpy's."""
    a, A = operand(shape, fmts[0], seed, density=density, odd=odd)
    b, B = operand(shape, fmts[1], seed + 1, density=density, odd=(-inf,))
    with np.errstate(invalid="ignore"):
        return op(A, B).reshape(new), op(a, b).reshape(new)


@pytest.mark.parametrize("name, op", OPS)
@pytest.mark.parametrize("new, out", [((4, 6), None), ((3, 8), "csr"), ((8, 3), "coo"), ((4, 3, 2), "dense")])
def test_a_reshape_of_a_sum_of_3d_tensors(name, op, new, out):
    k = one_kernel(*case(op, new), out)
    # (the operator outermost, over its operands each reshaped)
    assert k.program.rhs.op.name == "add" and "split(collapse(" in str(k.program.rhs), k.program


@pytest.mark.parametrize("odd", ODD)
@pytest.mark.parametrize("fmts", [("coo", "csf"), ("csf", "csf")])
def test_stored_non_finite_values_and_formats(odd, fmts):
    one_kernel(*case(OPS[2][1], (4, 6), odd, fmts), "csr")


@pytest.mark.parametrize("density", [0.0, 1.0])
def test_empty_and_all_fill_inputs(density):
    one_kernel(*case(OPS[3][1], (3, 8), density=density), "coo")
    # (no entries at all: no group of axes to reshape, lowered as it was)
    expr, want = case(OPS[0][1], (4, 0), shape=(0, 3, 4))
    np.testing.assert_array_equal(expr.compute().to_numpy(), want)


def test_a_reshape_the_lattice_takes_as_it_is_is_not_moved():
    # (the lattice walks a reshape of a 2-D CSR plus 1, and of a 3-D tensor of fill NaN plus 1: lowered as before)
    a, A = operand((2, 12), "csr", 3)
    c, C = operand((2, 3, 4), "csf", 4, fill=nan)
    for expr, want in (((A + 1.0).reshape(3, 8), (a + 1.0).reshape(3, 8)),
                       ((C + 1.0).reshape(4, 6), (c + 1.0).reshape(4, 6))):
        with np.errstate(invalid="ignore"):
            k = one_lattice_kernel(expr, want, "csr")
        assert "pushed_reshapes" not in k.trace.find("array")[0].note


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(OPS), st.sampled_from([(4, 6), (3, 8), (8, 3)]), st.sampled_from(ODD),
       st.sampled_from([("coo", "csf"), ("csf", "coo"), ("csf", "csf")]), st.sampled_from([None, "csr", "coo"]),
       st.sampled_from([0.0, 0.3, 1.0]), st.integers(0, 99))
def test_reshapes_of_sums_by_property(op, new, odd, fmts, out, density, seed):
    one_kernel(*case(op[1], new, odd, fmts, density, seed), out)


@pytest.mark.parametrize("fmt", [None, "dense"])
def test_a_0d_operator_reshaped_keeps_its_axes(fmt):
    # (x[0, 0, 1] * 2).reshape(1, 1): the lattice refuses the constant index beside the reshape's loops, and the
    # reshape was pushed onto the operator's operands, all 0-d, so none took it: the result was 0-d (shape ()),
    # and into a dense format the lattice failed with an IndexError (found by a differential probe against numpy)
    X = np.arange(20, dtype=np.int32).reshape(5, 1, 4)
    x = xp.asarray(ss.Tensor.from_numpy(X, "dense"))
    for expr, want in [((x[0, 0, 1] * 2).reshape(1, 1), (X[0, 0, 1] * 2).reshape(1, 1)),
                       ((x[0, 0, -4] != True).reshape(-1), (X[0, 0, -4] != True).reshape(-1))]:   # noqa: E712
        got = expr.compute(strategy="lattice", format=fmt)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got.to_numpy(), want)
