"""A reduction over a stack's new axis is the operator between the stacked operands (issue 30):
``xp.sum(xp.stack([c_csc.reshape(-1), x]), axis=0)`` is ``collapse(A[j, k], (j, k) -> i) + B[i]``, which the
looplets walk as they walk the flatten beside a vector. They refused the statement with the stack (a CSC
flattened row-major is walked minor first, which was not taken under the reduction over the stack's axis) and
the front end computed the ravel and the stack apart. Each against numpy, by both strategies, one kernel with
nothing materialized and no retry (from the trace's steps), on CSC, CSR, COO and dense matrices and sparse
vectors, fills 0, 1, NaN and ±inf with NaN, ±inf and -0.0 stored, empty and all-fill operands, sum, prod,
max, min, any and all, and by a property over shapes, axes and operand counts."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp

from array_cases import operand

nan, inf = np.nan, np.inf



def vector(x, fill):
    """``x`` as a lazy Array of fill ``fill`` (a sparse vector; dense for 0), so the stack's operands share one."""
    return xp.asarray(x) if fill == 0 else xp.asarray(Tensor.from_numpy(x, "sparse_vector", fill=fill))


def one_kernel(expr, want, strategy):
    kernel = expr.lower(strategy=strategy)
    # (the operator between the operands: no concatenation left to loop over)
    assert "concat" not in str(kernel.program), kernel.program
    assert kernel.trace.find("materialize") == [], [s.note for s in kernel.trace.find("materialize")]
    assert kernel.trace.find("retry") == [], [s.note for s in kernel.trace.find("retry")]
    assert kernel.trace.stages().count("compile") == 1
    got = kernel().to_numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    return kernel


OPS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("fill", [0.0, 1.0, nan, -inf])
@pytest.mark.parametrize("op", list(OPS))
def test_the_ravel_of_a_csc_stacked_with_a_vector_and_reduced(op, fill, strategy):
    c, C = operand((4, 6), "csc", 1, fill=fill)
    x = np.random.default_rng(2).choice([fill, 1.5, -1.0, inf], 24)
    with np.errstate(invalid="ignore"):
        want = OPS[op](np.stack([c.reshape(-1), x]), axis=0)
    one_kernel(getattr(xp, op)(xp.stack([C.reshape(-1), vector(x, fill)]), axis=0), want, strategy)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("fmt, fill", [("csr", 0.0), ("coo", nan), ("dense", 0.0), ("csc", inf)])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_matrices_stacked_along_any_axis_and_reduced_over_it(axis, fmt, fill, strategy):
    a, A = operand((3, 4), fmt, 3, fill=0.0 if fmt == "dense" else fill)
    b, B = operand((3, 4), "csr" if fmt != "dense" else "dense", 4, fill=0.0 if fmt == "dense" else fill, odd=())
    for op in ("sum", "max"):
        with np.errstate(invalid="ignore"):
            want = OPS[op](np.stack([a, b, a], axis=axis), axis=axis)
        one_kernel(getattr(xp, op)(xp.stack([A, B, A], axis=axis), axis=axis), want, strategy)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_any_and_all_of_stacked_comparisons(strategy):
    v, V = operand(7, "sparse_vector", 5)
    w, W = operand(7, "sparse_vector", 6, fill=-1.0, odd=())   # (w > 0 of fill False, as v > 0)
    for op in ("any", "all"):
        want = getattr(np, op)(np.stack([v > 0, w > 0]), axis=0)
        one_kernel(getattr(xp, op)(xp.stack([V > 0, W > 0]), axis=0), want, strategy)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("fmt", ["csc", "csr", "coo"])
def test_empty_and_all_fill_operands(fmt, strategy):
    for density, fill in ((0.0, 0.0), (0.0, 1.0), (1.0, 0.0)):
        c, C = operand((3, 5), fmt, 7, fill=fill, density=density, odd=())
        x = np.full(15, fill)
        one_kernel(xp.sum(xp.stack([C.reshape(-1), vector(x, fill)]), axis=0),
                   np.sum(np.stack([c.reshape(-1), x]), axis=0), strategy)


def test_a_sum_that_widens_the_dtype_keeps_the_reduction():
    # (numpy sums int32 in int64: the stack is reduced as before, not added in int32)
    p = np.array([2**30, 2**30, 1], dtype=np.int32)
    P = xp.asarray(p)
    expr = xp.sum(xp.stack([P, P]), axis=0)
    got = expr.compute().to_numpy()
    assert got.dtype == np.int64 and got.tolist() == np.sum(np.stack([p, p]), axis=0).tolist()
    assert "sum[" in str(expr.lower().program)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_operands_of_different_fills_keep_the_reduction_over_the_stack(strategy):
    # (the stack's fill is its first operand's, which 1 + 0 would not be: the reduction stays, and is right)
    c, C = operand((4, 6), "csc", 8, fill=1.0)
    x = np.arange(24.0)
    expr = xp.sum(xp.stack([C.reshape(-1), xp.asarray(x)]), axis=0)
    kernel = expr.lower(strategy=strategy)
    np.testing.assert_array_equal(kernel().to_numpy(), np.sum(np.stack([c.reshape(-1), x]), axis=0))
    if strategy == "lattice":
        assert "concat" in str(kernel.program), kernel.program


@settings(max_examples=5, deadline=None)
@given(st.sampled_from(["sum", "prod", "max", "min"]), st.sampled_from(["csr", "csc", "coo", "dense"]),
       st.sampled_from([0.0, 1.0, nan, inf]), st.integers(1, 5), st.integers(1, 5), st.integers(1, 3),
       st.sampled_from(["lattice", "looplets"]), st.integers(0, 2**16))
@example("sum", "csc", 0.0, 4, 6, 1, "looplets", 0)
@example("max", "csc", nan, 3, 2, 3, "looplets", 1)
def test_stacked_ravels_reduced_by_property(op, fmt, fill, rows, cols, count, strategy, seed):
    mats = [operand((rows, cols), fmt, seed + k, fill=0.0 if fmt == "dense" else fill) for k in range(count)]
    fill = 0.0 if fmt == "dense" else fill
    # (a vector beside one ravel; several ravels alone: the looplets walk two collapses beside a vector in one
    # pair of loops only, as they do for c.reshape(-1) + d.reshape(-1) + x written out)
    x = np.random.default_rng(seed).choice([fill, 2.0, -1.0], rows * cols)
    xs, Xs = ([x], [vector(x, fill)]) if count == 1 else ([], [])
    with np.errstate(invalid="ignore", over="ignore"):
        want = OPS[op](np.stack([m.reshape(-1) for m, _ in mats] + xs), axis=0)
    expr = getattr(xp, op)(xp.stack([M.reshape(-1) for _, M in mats] + Xs), axis=0)
    if strategy == "looplets" and fmt == "csc" and count > 1:
        # (several CSCs flattened row-major, of fill NaN say, are refused by the looplets, which walk one pair of
        # loops for a flattened index and take each tensor's extents at the call, as c.reshape(-1) + d.reshape(-1)
        # written out is: right all the same)
        np.testing.assert_array_equal(expr.lower(strategy=strategy)().to_numpy(), want)
        return
    one_kernel(expr, want, strategy)
