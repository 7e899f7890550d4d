"""A split of a collapse under the looplets strategy (issue 30 item 4): ``A.reshape(P, K)`` of an
``I x J`` matrix is ``split(collapse(A[i, j], (i, j) -> k), k -> (p, q:K))``. Where the reshape is
concordant (the operand stored row-major, an output that takes writes at any coordinate), the
output's loops become the collapse's and walk the operand in storage order, ``p`` and ``q`` the
quotient and remainder of ``j + i·J`` by ``K`` (the trace's ``walk-reshape`` step); elsewhere the
operand is read at ``(q + p·K) // J, (q + p·K) % J``, each entry located (``gather``). It was
refused ('the collapsed index k ... is computed by another shape operator'), and the array front end
materialized the reshape. Against numpy, the dense oracle, the IR interpreter and the lattice
strategy, through index notation and the array front end."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.errors import StrategyError
from compiler.reference import evaluate

FILLS = (0.0, np.nan, np.inf)


def stages(kernel):
    return {s.stage for s in kernel.trace.steps}


def searches(kernel) -> bool:
    """Whether the kernel's C searches a sparse level (a located read's binary search, a helper's call)."""
    return re.search(r" = lower_bound_int(32|64)\(", kernel.c_source) is not None


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(0, 4), st.integers(0, 4)), K=st.sampled_from([1, 2, 3]),
       density=st.sampled_from([0.0, 0.5, 1.0]), column_major=st.booleans(),
       fmt=st.sampled_from(["dense", "csr", "coo", "csc"]), fill=st.sampled_from(FILLS),
       out=st.sampled_from(["dense", "csr", "coo"]), seed=st.integers(0, 2 ** 16))
@example(shape=(6, 4), K=3, density=0.5, column_major=False, fmt="csr", fill=0.0, out="dense", seed=0)  # refused before
@example(shape=(3, 4), K=2, density=0.5, column_major=False, fmt="coo", fill=np.nan, out="csr", seed=1)
@example(shape=(2, 3), K=3, density=1.0, column_major=True, fmt="csc", fill=np.inf, out="dense", seed=2)
@example(shape=(0, 3), K=2, density=0.5, column_major=False, fmt="csr", fill=0.0, out="coo", seed=3)    # empty
@example(shape=(4, 3), K=1, density=0.0, column_major=False, fmt="dense", fill=np.nan, out="dense", seed=4)  # all fill
def test_a_split_of_a_collapse(shape, K, density, column_major, fmt, fill, out, seed):
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(shape) < density, rng.choice([1.0, -2.0, np.nan, np.inf], shape), fill)
    n = x.size
    if n % K:
        K = 1
    order = "(j, i)" if column_major else "(i, j)"
    prog = f"C[p, q] = split(collapse(A[i, j], {order} -> k), k -> (p, q:{K}))"
    A = ss.Tensor.from_numpy(x, fmt, fill=fill)
    want = x.ravel(order="F" if column_major else "C").reshape(n // K, K)
    oracle, oracle_fill = evaluate(prog, A=A)
    np.testing.assert_array_equal(oracle, want)
    C = ss.parse_format(out, ndim=2, fill=oracle_fill.item())
    kernel = ss.lower(prog, "looplets", A=A, C=C)
    got = kernel(A=A)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(A=A).to_numpy(), want)
    # walked where the operand stores the collapse's major index first and the output is dense; into a
    # sparse output, a row-major CSR, COO or dense matrix read raveled (its entries walked in storage order)
    concordant = (fmt == "csc") == column_major and out == "dense"
    raveled = not concordant and not column_major and fmt != "csc"
    assert ("walk-reshape" in stages(kernel)) == concordant and ("walk-ravel" in stages(kernel)) == raveled
    assert ("gather" in stages(kernel)) == (not concordant and not raveled)
    if concordant:
        assert not searches(kernel)
    if column_major and fmt != "csc":   # (the lattice walks the collapse's loops in storage order only)
        with pytest.raises(StrategyError, match="strategy='looplets'"):
            ss.lower(prog, "lattice", A=A, C=C)
    elif fmt == "csc" and not column_major:   # (... reading a CSC collapsed row-major as a CSR, converted)
        k = ss.lower(prog, "lattice", A=A, C=C)
        assert k.trace.find("convert"), k.trace
        np.testing.assert_array_equal(k(A=A).to_numpy(), want)
    else:
        np.testing.assert_array_equal(ss.lower(prog, "lattice", A=A, C=C)(A=A).to_numpy(), want)


@pytest.mark.parametrize("program, want", [
    # (a 3-D reshape keeping the last axis: the walk's loops keep l inside)
    ("C[p, q, l] = split(collapse(Y[i, j, l], (i, j) -> k), k -> (p, q:2))", lambda y: y.reshape(3, 2, 4)),
    # (a collapse of a collapse: the outer one's loops split again, or gathered at its quotient)
    ("C[p, q] = split(collapse(collapse(Y[i, j, l], (i, j) -> m), (m, l) -> k), k -> (p, q:6))",
     lambda y: y.reshape(4, 6)),
])
@pytest.mark.parametrize("out", ["dense", "coo"])
def test_three_dimensional_reshapes(program, want, out):
    y = np.where(np.arange(24).reshape(2, 3, 4) % 3 == 0, 0.0, np.arange(24.0).reshape(2, 3, 4))
    Y = ss.Tensor.from_numpy(y, "csf")
    C = ss.parse_format(out, ndim=want(y).ndim)
    kernel = ss.lower(program, "looplets", Y=Y, C=C)
    np.testing.assert_array_equal(kernel(Y=Y).to_numpy(), want(y))
    np.testing.assert_array_equal(evaluate(program, Y=Y)[0], want(y))
    np.testing.assert_array_equal(kernel.interpret(Y=Y).to_numpy(), want(y))
    assert ("walk-reshape" if out == "dense" else "gather") in stages(kernel), kernel.trace
    np.testing.assert_array_equal(ss.lower(program, "lattice", Y=Y, C=C)(Y=Y).to_numpy(), want(y))


@pytest.mark.parametrize("fmt, out, stage", [("csr", "dense", "walk-reshape"), ("csr", None, "walk-ravel"),
                                             ("coo", None, "walk-ravel"), ("csc", "dense", "gather")])
def test_the_array_front_end_reshapes_a_matrix_in_one_looplets_kernel(fmt, out, stage):
    x = np.where(np.arange(24).reshape(6, 4) % 3 == 0, 0, np.arange(24.0).reshape(6, 4))
    X = xp.asarray(ss.Tensor.from_numpy(x, fmt))
    kernel = X.reshape(8, 3).lower(out, strategy="looplets")
    assert kernel.trace.find("materialize") == [] and "split(collapse(" in str(kernel.program), kernel.trace
    assert stage in stages(kernel)
    np.testing.assert_array_equal(kernel().to_numpy(), x.reshape(8, 3))


@pytest.mark.parametrize("fmt, key, stage", [("csr", np.s_[::-2, 1:], "walk-ravel"),
                                             ("coo", np.s_[1:7:3, ::-1], "gather")])
def test_a_strided_slice_of_a_reshaped_matrix_is_one_looplets_kernel(fmt, key, stage):
    """The slices read the split at offsets of their loops, the collapse gathered at that index
    (negative steps too), or, where each row's columns are a window of the ravel (a step over rows
    only) of a CSR, each row's window walked raveled; the lattice strategy computes the same,
    materializing the reshape."""
    x = np.where(np.arange(24).reshape(6, 4) % 3 == 0, 0, np.arange(24.0).reshape(6, 4))
    expr = xp.asarray(ss.Tensor.from_numpy(x, fmt)).reshape(8, 3)[key]
    kernel = expr.lower(strategy="looplets")
    assert kernel.trace.find("materialize") == [] and stage in stages(kernel), kernel.trace
    np.testing.assert_array_equal(kernel().to_numpy(), x.reshape(8, 3)[key])
    np.testing.assert_array_equal(expr.compute(strategy="lattice").to_numpy(), x.reshape(8, 3)[key])


@pytest.mark.parametrize("out", ["dense", "csr"])
def test_a_kernel_called_with_other_shapes_checks_the_split_at_each_call(out):
    # the looplets kernel is not specialized to the shapes it was lowered for: each call checks
    # that the collapsed extent is a multiple of the split's, before any entry is read or written
    from compiler.errors import ShapeError
    program = "C[p, q] = split(collapse(A[i, j], (i, j) -> k), k -> (p, q:3))"
    A = ss.Tensor.from_numpy(np.arange(24.0).reshape(6, 4), "csr", name="A")
    kernel = ss.lower(program, "looplets", A=A, C=out)
    for shape in [(6, 5), (3, 4), (0, 4)]:
        B = ss.Tensor.from_numpy(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape), "csr", name="A")
        np.testing.assert_array_equal(kernel(A=B).to_numpy(), B.to_numpy().reshape(-1, 3))
    B = ss.Tensor.from_numpy(np.ones((5, 4)), "csr", name="A")
    with pytest.raises(ShapeError, match=r"\|k\| = 20 is not a multiple of \|q\| = 3"):
        kernel(A=B)
