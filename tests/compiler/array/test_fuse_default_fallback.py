"""Given no strategy, an array expression is computed where the lattice refuses every form of its
statement and looplets lower it (issue 30): ``xp.permute_dims(A @ B, (1, 2, 0))`` into CSF (no loop
order visits every tensor in storage order) raised the lattice's StrategyError, as
``strategy='lattice'`` does, although ``strategy='looplets'`` computes it. Given no strategy, lower()
now lowers by looplets any statement the lattice refuses (the kernel's ``strategy`` step quotes the
refusal), so the front end's first form is looplets' kernel, with no ``retry`` step.
``xp.max(xp.min(A, axis=1), axis=0)`` of a Dense(Dense(SparseList)), refused by the lattice too (it
iterated a reduction's index outside the output's, against ``A``'s storage order), is now the
lattice's own kernel: nested workspaces (compiler.lattice.nested_workspaces). Against numpy."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.errors import StrategyError
from compiler.format import Format
from compiler.levels import Dense, Element, SparseBand, SparseBlockList, SparseList

nan, inf = np.nan, np.inf
F3 = {"dds": lambda f: Format(Dense(Dense(SparseList(Element(f))))),
      "dss": lambda f: Format(Dense(SparseList(SparseList(Element(f))))),
      "csf": lambda f: "csf"}
REDUCE = {"min": (xp.min, np.min), "max": (xp.max, np.max), "sum": (xp.sum, np.sum)}


def T(D, fmt, fill=0.0):
    f = F3[fmt](fill)
    return xp.asarray(Tensor.from_numpy(D, f, fill=fill) if isinstance(f, str) else Tensor.from_numpy(D, f))


def retries(kernel):
    return [s.note for s in kernel.trace.find("retry")]


def direct(kernel):
    """Whether the kernel is the lattice's own, lowered as written (no form retried, nothing converted)."""
    stages = kernel.trace.stages()
    return kernel.strategy == "lattice" and not {"retry", "materialize", "convert"} & set(stages)


def test_a_reduction_of_a_reduction_against_the_storage_order():
    """The probe's 'maxmin': fill 1, -inf stored. The lattice computes the min over A's rows for
    each i into a dense workspace over k (nested workspaces), in A's order; it refused before."""
    D = np.ones((3, 2, 4))
    D[0, 1, 0], D[1, 0, 1], D[2, 0, 1], D[2, 1, 2] = 2, -inf, -3, 2
    e = xp.max(xp.min(T(D, "dds", 1.0), axis=1), axis=0)
    np.testing.assert_array_equal(np.asarray(e.compute(strategy="lattice", checked=True)), D.min(1).max(0))
    np.testing.assert_array_equal(np.asarray(e.compute()), D.min(1).max(0))
    kernel = e.lower()
    assert direct(kernel) and retries(kernel) == []
    assert any("nested workspaces" in s.note for s in kernel.trace.find("precompute"))


def test_a_transposed_product_into_csf():
    """The probe's 'permmatmul': ``permute_dims(A @ B, (1, 2, 0))`` written into CSF."""
    A = np.zeros((4, 2, 4))
    A[0, 0, 1], A[2, 0, 0], A[2, 1, 1] = -3, inf, 1
    B = np.zeros((4, 2))
    B[1, 0] = 2.0
    b = xp.asarray(Tensor.from_numpy(B, Format(Dense(SparseBand(Element(0.0))))))
    e = xp.permute_dims(T(A, "dds") @ b, (1, 2, 0))
    with pytest.raises(StrategyError, match="no loop order visits every tensor in storage order"):
        e.compute(strategy="lattice", format="csf")
    got = e.compute(format="csf", checked=True)
    with np.errstate(invalid="ignore"):
        want = np.transpose(A @ B, (1, 2, 0))
    np.testing.assert_array_equal(np.asarray(got), want)
    assert e.lower(format="csf").strategy == "looplets"


def test_what_the_lattice_lowers_is_still_the_lattice_kernel():
    D = np.arange(24.0).reshape(2, 3, 4) % 5
    kernel = xp.sum(T(D, "dds"), axis=2).lower()
    assert kernel.strategy == "lattice" and retries(kernel) == []


@settings(max_examples=6)
@given(fmt=st.sampled_from(sorted(F3)), fill=st.sampled_from([0.0, 1.0, nan]),
       ops=st.tuples(st.sampled_from(sorted(REDUCE)), st.sampled_from(sorted(REDUCE))),
       axes=st.tuples(st.integers(0, 2), st.integers(0, 1)), density=st.sampled_from([0.0, 0.4, 1.0]),
       seed=st.integers(0, 2 ** 16))
@example(fmt="dds", fill=1.0, ops=("min", "max"), axes=(1, 0), density=0.4, seed=0)
@example(fmt="dss", fill=nan, ops=("sum", "min"), axes=(0, 1), density=0.0, seed=1)
def test_reductions_of_reductions_on_any_axes(fmt, fill, ops, axes, density, seed):
    """Two reductions of a 3-D tensor on any axes, NaN and ±inf stored, all fill or dense: given no
    strategy, numpy's result (never a refusal)."""
    rng = np.random.default_rng(seed)
    D = np.where(rng.random((2, 3, 2)) < density, rng.choice([2.0, -1.0, nan, inf, -inf], (2, 3, 2)), fill)
    inner, outer = REDUCE[ops[0]], REDUCE[ops[1]]
    e = outer[0](inner[0](T(D, fmt, fill), axis=axes[0]), axis=axes[1])
    with np.errstate(invalid="ignore"):
        want = outer[1](inner[1](D, axis=axes[0]), axis=axes[1])
    got = np.asarray(e.compute(format="dense"))
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_a_reduction_of_a_product_reduced_against_its_storage_order():
    """A later probe's case: ``max(prod(A @ B, axis=0), axis=0)`` of a dense 3-D A and a
    Dense(SparseBlockList) B (NaN and ±inf stored): the lattice, which refused it, computes the
    product and the sum each into a dense workspace over B's columns, the sum's inside the product's."""
    A = np.array([[[-3.0, 0.0, 0.0], [nan, nan, 1.0]]])
    B = np.array([[-inf, 0.0, 0.0, inf], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, -3.0, -inf]])
    a = xp.asarray(Tensor.from_numpy(A, Format(Dense(Dense(Dense(Element(0.0)))))))
    b = xp.asarray(Tensor.from_numpy(B, Format(Dense(SparseBlockList(Element(0.0))))))
    e = xp.max(xp.prod(a @ b, axis=0), axis=0)
    with np.errstate(invalid="ignore"):
        want = np.max(np.prod(A @ B, axis=0), axis=0)
    np.testing.assert_array_equal(np.asarray(e.compute(strategy="lattice", format="dense", checked=True)), want)
    np.testing.assert_array_equal(np.asarray(e.compute(format="dense", checked=True)), want)
    assert direct(e.lower(format="dense"))
