"""A column-major ravel of a row-major stored matrix, ``a.T.reshape(-1)`` (issue 30): one lattice kernel, with
no ``retry`` or ``materialize`` step (on main both strategies refused the fused statement, and the transpose
and reshape were computed on the stored entries), fused with the operators around it, against numpy, the
dense oracle and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

nan, inf = np.nan, np.inf


def flat(kernel):
    """Whether ``kernel`` undid a column-major collapse (compiler.lattice.seqcolmajor)."""
    return any("flattens column-major" in s.note for s in kernel.trace.find("loop-order"))


@pytest.mark.parametrize("fmt", ["csr", "coo", "dcsr", "dense"])
@pytest.mark.parametrize("out", [None, "dense", "sparse_vector"])
def test_a_transposed_ravel_is_one_lattice_kernel(fmt, out):
    a = operand((4, 3), "dense", 1, odd=(nan, inf, -inf))[0]
    A = xp.asarray(Tensor.from_numpy(a, fmt))
    kernel = one_lattice_kernel(A.T.reshape(-1), a.T.reshape(-1), out)
    assert flat(kernel), kernel.trace.stages()


@pytest.mark.parametrize("case", ["times", "sum", "product", "fill", "vector"])
def test_operators_around_it_fuse_in(case):
    a, A = operand((3, 4), "csr", 2, odd=(inf,))
    b, B = operand((3, 4), "csr", 3, odd=(-inf,))
    if case == "times":
        expr, want = A.T.reshape(-1) * 2.0, a.T.reshape(-1) * 2.0
    elif case == "sum":
        with np.errstate(invalid="ignore"):     # (inf + -inf stored at one place: NaN)
            expr, want = A.T.reshape(-1) + B.T.reshape(-1), (a + b).T.reshape(-1)
    elif case == "product":
        expr, want = A.T.reshape(-1) * B.T.reshape(-1), (a * b).T.reshape(-1)
    elif case == "vector":
        x = np.arange(12.0)
        expr, want = A.T.reshape(-1) + xp.asarray(x), a.T.reshape(-1) + x
    else:
        a, A = operand((3, 4), "csr", 4, fill=nan, odd=(1.0, inf))
        expr, want = A.T.reshape(-1), a.T.reshape(-1)
    for out in (None, "dense"):
        assert flat(one_lattice_kernel(expr, want, out))


def test_given_no_strategy_the_lattice_lowers_it():
    a, A = operand((5, 2), "csr", 5)
    kernel = A.T.reshape(-1).lower()
    assert kernel.strategy == "lattice" and flat(kernel)
    assert kernel.trace.find("retry") == [] and kernel.trace.find("materialize") == []
    np.testing.assert_array_equal(kernel().to_numpy(), a.T.reshape(-1))


def test_looplets_walk_it_row_by_row_into_a_workspace():
    # (they computed it apart, naming the lattice: now each row of A is walked, its entries written out
    # of order into a dense workspace copied into the sparse result)
    a, A = operand((3, 4), "csr", 6)
    kernel = A.T.reshape(-1).lower(strategy="looplets")
    assert not kernel.trace.find("retry") and kernel.trace.find("workspace"), kernel.trace
    np.testing.assert_array_equal(kernel().to_numpy(), a.T.reshape(-1))


@settings(max_examples=5, deadline=None)
@given(st.sampled_from(["csr", "coo", "dcsr", "dense"]), st.sampled_from([0.0, 0.0, 1.0, nan]),
       st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([(1, 3), (3, 1), (2, 4)]),
       st.sampled_from([None, "dense"]), st.booleans(), st.integers(0, 2**16))
@example("coo", nan, 0.5, (2, 4), None, True, 1)
def test_transposed_ravels_by_property(fmt, fill, density, shape, out, two, seed):
    a, A = operand(shape, fmt, seed, density=density, fill=fill, odd=(nan, -inf) if density else ())
    expr, want = A.T.reshape(-1), a.T.reshape(-1)
    if two:
        b, B = operand(shape, "csr", seed + 1, fill=fill)
        expr, want = expr + B.T.reshape(-1), want + b.T.reshape(-1)
    kernel = one_lattice_kernel(expr, want, out)
    if 1 in shape:
        # (an extent-1 axis is read at its one coordinate: no collapse to undo, A[0, i])
        assert "collapse" not in str(kernel.trace.find("shapes")[0].after)
    else:
        assert flat(kernel)


@pytest.mark.parametrize("fmt", ["csr", "coo", "dcsr"])
@pytest.mark.parametrize("shape", [(2, 12), (3, 8), (8, 3)])
def test_a_transposed_reshape_to_several_axes_is_fused_by_the_looplets_and_the_lattice_says_why_not(fmt, shape):
    # (the lattice undoes a column-major collapse only into a vector: split into several axes, it refuses the
    # statement saying so, naming the looplets, which walk it; given no strategy, the looplets' kernel)
    a, A = operand((4, 6), fmt, 7, odd=(nan, inf, -inf))
    want = a.T.reshape(shape)
    lattice = A.T.reshape(shape).lower(strategy="lattice")
    why = lattice.trace.find("retry")[0].data["why"]
    assert "flattens column-major" in why and "only into a vector output" in why and "strategy='looplets'" in why, why
    np.testing.assert_array_equal(lattice().to_numpy(), want)
    for strategy in ("looplets", None):
        kernel = A.T.reshape(shape).lower(strategy=strategy)
        assert kernel.strategy == "looplets"
        assert kernel.trace.find("retry") == [] and kernel.trace.find("materialize") == [], kernel.trace.stages()
        np.testing.assert_array_equal(kernel().to_numpy(), want)
