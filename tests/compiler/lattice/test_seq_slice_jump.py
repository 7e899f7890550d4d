"""A strided slice of a Dense level (a CSR's or a dense matrix's rows, Fig. 24f) steps its cursor straight to the
next kept coordinate: init places it at the start, next adds the step (issue 30). Before, the lattice's C walked
the rows the slice skips one by one (``while (pA0 < A0_size && pA0 < e && pA0 % r != 0) pA0 += 1;`` after each
kept row), where the looplets' C locates row ``start + step * k``. Each kernel against the dense oracle, the IR
interpreter and the CFIR interpreter (``run_all``); a SparseList level still steps over its stored coordinates
and filters them by the stride."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import evaluate
from compiler.imperative.ir import BinOp, CompoundAssign, Const, While
from compiler.imperative.traverse import walk as ir_walk
from compiler.tensor import Tensor

from test_seqemit import run_all  # noqa: E402


def stride_filters(kernel) -> list:
    """The loops of ``kernel``'s IR that test a coordinate against a stride (``% r``): the skip loops."""
    return [n for n in ir_walk(kernel.function.body) if isinstance(n, While)
            and any(isinstance(e, BinOp) and e.op == "%" for e in ir_walk(n.cond))]


def steps(kernel, r: int) -> list:
    """The cursors the kernel's IR advances by ``r`` at once."""
    return [n.target.name for n in ir_walk(kernel.function.body)
            if isinstance(n, CompoundAssign) and n.op == "+" and n.value == Const(r, "int64")]


@pytest.mark.parametrize("fmt, bounds", [("csr", (0, 21, 2)), ("csr", (3, 17, 3)), ("dense", (1, 20, 4)),
                                         ("csr", (19, 2, -2)), ("coo", (0, 21, 2))])
def test_a_dense_row_level_jumps_to_the_kept_rows(fmt, bounds):
    s, e, r = bounds
    rng = np.random.default_rng(s)
    a = rng.random((21, 5)) * (rng.random((21, 5)) < 0.4)
    A = Tensor.from_numpy(a, fmt)
    program = f"D[k, i] = slice(A[j, i], j -> k, ({s}, {e}, {r}))"
    for out in ("csr", "dense"):
        got = run_all(program, {"A": A}, out=out)
        np.testing.assert_array_equal(got, a[s:e if e >= 0 else None:r])
        np.testing.assert_array_equal(evaluate(program, A=a)[0], got)
    kernel = ss.lower(program, strategy="lattice", A=A, D="csr")
    if fmt == "coo":
        # (a COO's rows are a SparseCOO mode: its segments are stepped over and filtered by the stride)
        assert stride_filters(kernel)
        return
    assert stride_filters(kernel) == [], kernel.c_source
    assert steps(kernel, abs(r)) == ["pA0"], kernel.c_source


def test_a_sparse_level_still_filters_by_the_stride():
    # (a SparseList's cursor is a position among the stored coordinates: no coordinate to add the step to)
    a = np.zeros(12)
    a[[0, 1, 4, 7, 9, 10]] = [1.0, 2, 3, 4, 5, 6]
    x = Tensor.from_numpy(a, "sparse")
    got = run_all("c[k] = slice(x[i], i -> k, (1, 12, 3))", {"x": x}, out="sparse")
    np.testing.assert_array_equal(got, a[1::3])
    assert stride_filters(ss.lower("c[k] = slice(x[i], i -> k, (1, 12, 3))", strategy="lattice", x=x))


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 9), st.integers(0, 9), st.integers(-4, 4).filter(bool), st.sampled_from(["csr", "dense"]),
       st.sampled_from([0.0, 0.3, 1.0]), st.integers(0, 99))
def test_row_slices_by_property(n, start, step, fmt, density, seed):
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((n, 3)) < density, rng.choice([1.0, -2.0, np.inf, np.nan], (n, 3)), 0.0)
    lo, hi, r = slice(min(start, n), None, step).indices(n)
    program = f"D[k, i] = slice(A[j, i], j -> k, ({lo}, {hi}, {r}))"
    got = run_all(program, {"A": Tensor.from_numpy(a, fmt)}, out="csr")
    np.testing.assert_array_equal(got, a[lo:hi if hi >= 0 else None:r])
