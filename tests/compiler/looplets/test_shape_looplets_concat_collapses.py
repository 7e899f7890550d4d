"""A collapse of a concatenation under the looplets strategy (issue 30 item 4): the collapse's
two loops, the concatenated one split into one loop per part, write ``i + (p + |j|)·|i|`` (a
vstack's ravel) or ``(k + |j|) + i·|l|`` (an hstack's); it was refused ('here l is computed by
another shape operator'). Against numpy, the oracle and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.reference import evaluate

FILLS = (0.0, 1.0, np.nan, np.inf, -np.inf)
VSTACK = "y[k] = collapse(concat((A[j, i], B[p, i]), (j, p) -> l), (l, i) -> k)"
HSTACK = "y[m] = collapse(concat((A[i, j], B[i, k]), (j, k) -> l), (i, l) -> m)"


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.tuples(st.integers(0, 3), st.integers(0, 3)), cols=st.integers(0, 3), vertical=st.booleans(),
       fmts=st.tuples(st.sampled_from(["csr", "coo", "dense"]), st.sampled_from(["csr", "coo", "dense"])),
       fill=st.sampled_from(FILLS), seed=st.integers(0, 2 ** 16))
@example(rows=(3, 2), cols=4, vertical=True, fmts=("csr", "csr"), fill=0.0, seed=0)     # refused before
@example(rows=(3, 3), cols=2, vertical=False, fmts=("coo", "dense"), fill=np.nan, seed=1)
@example(rows=(0, 2), cols=3, vertical=True, fmts=("dense", "coo"), fill=-np.inf, seed=2)
def test_a_collapse_of_a_concatenation_into_a_dense_vector(rows, cols, vertical, fmts, fill, seed):
    rng = np.random.default_rng(seed)
    shapes = [(n, cols) for n in rows] if vertical else [(cols, n) for n in rows]
    a, b = (np.where(rng.random(s) < 0.5, rng.choice([1.0, -2.0, np.nan, np.inf], s), fill) for s in shapes)
    A, B = (ss.Tensor.from_numpy(x, f, fill=fill) for x, f in zip((a, b), fmts))
    prog = VSTACK if vertical else HSTACK
    want = (np.vstack if vertical else np.hstack)([a, b]).ravel()
    oracle, oracle_fill = evaluate(prog, A=A, B=B)
    np.testing.assert_array_equal(oracle, want)
    kernel = ss.lower(prog, "looplets", A=A, B=B, y=ss.parse_format("dense", ndim=1, fill=oracle_fill.item()))
    np.testing.assert_array_equal(kernel(A=A, B=B).to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(A=A, B=B).to_numpy(), want)


@pytest.mark.parametrize("fmts", [("csr", "csr"), ("coo", "dense")])
def test_a_vstacks_ravel_is_appended_into_a_sparse_vector_in_order(fmts):
    rng = np.random.default_rng(4)
    a, b = np.where(rng.random((3, 4)) < 0.5, 1.0, 0), np.where(rng.random((2, 4)) < 0.5, 2.0, 0)
    A, B = (ss.Tensor.from_numpy(x, f) for x, f in zip((a, b), fmts))
    kernel = ss.lower(VSTACK, "looplets", A=A, B=B, y="sparse_vector")
    got = kernel(A=A, B=B)
    np.testing.assert_array_equal(got.to_numpy(), np.vstack([a, b]).ravel())
    coords, _ = got.to_coords()
    assert np.all(np.diff(coords[0]) > 0)
