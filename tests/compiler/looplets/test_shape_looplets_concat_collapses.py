"""A collapse of a concatenation under the looplets strategy (issue 30 item 4): the collapse's
two loops, the concatenated one split into one loop per part, write ``i + (p + |j|)·|i|`` (a
vstack's ravel) or ``(k + |j|) + i·|l|`` (an hstack's); it was refused ('here l is computed by
another shape operator'). An hstack's ravel is appended into a sparse vector in order, each part's
coordinates in ``[0, |l|)`` of row ``i`` after the part before it (the append-order check proves
``|j| <= |j| + |k|``, sizes being non-negative); it was refused ('written out of order'). Against
numpy, the oracle and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.reference import evaluate

FILLS = (0.0, 1.0, np.nan, np.inf, -np.inf)
VSTACK = "y[k] = collapse(concat((A[j, i], B[p, i]), (j, p) -> l), (l, i) -> k)"
HSTACK = "y[m] = collapse(concat((A[i, j], B[i, k]), (j, k) -> l), (i, l) -> m)"


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.tuples(st.integers(0, 3), st.integers(0, 3)), cols=st.integers(0, 3), vertical=st.booleans(),
       fmts=st.tuples(st.sampled_from(["csr", "coo", "dense"]), st.sampled_from(["csr", "coo", "dense"])),
       fill=st.sampled_from(FILLS), out=st.sampled_from(["dense", "sparse_vector"]), seed=st.integers(0, 2 ** 16))
@example(rows=(3, 2), cols=4, vertical=True, fmts=("csr", "csr"), fill=0.0, out="dense", seed=0)   # refused before
@example(rows=(3, 3), cols=2, vertical=False, fmts=("coo", "dense"), fill=np.nan, out="dense", seed=1)
@example(rows=(0, 2), cols=3, vertical=True, fmts=("dense", "coo"), fill=-np.inf, out="dense", seed=2)
@example(rows=(2, 3), cols=3, vertical=False, fmts=("csr", "coo"), fill=0.0, out="sparse_vector", seed=3)  # refused
@example(rows=(0, 2), cols=3, vertical=False, fmts=("dense", "csr"), fill=np.inf, out="sparse_vector", seed=4)
def test_a_collapse_of_a_concatenation_into_a_vector(rows, cols, vertical, fmts, fill, out, seed):
    rng = np.random.default_rng(seed)
    shapes = [(n, cols) for n in rows] if vertical else [(cols, n) for n in rows]
    a, b = (np.where(rng.random(s) < 0.5, rng.choice([1.0, -2.0, np.nan, np.inf], s), fill) for s in shapes)
    A, B = (ss.Tensor.from_numpy(x, f, fill=fill) for x, f in zip((a, b), fmts))
    prog = VSTACK if vertical else HSTACK
    want = (np.vstack if vertical else np.hstack)([a, b]).ravel()
    oracle, oracle_fill = evaluate(prog, A=A, B=B)
    np.testing.assert_array_equal(oracle, want)
    kernel = ss.lower(prog, "looplets", A=A, B=B, y=ss.parse_format(out, ndim=1, fill=oracle_fill.item()))
    got = kernel(A=A, B=B)
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(A=A, B=B).to_numpy(), want)
    if out != "dense":
        check_appended_in_order(kernel, got)


def check_appended_in_order(kernel, got):
    """The sparse vector's coordinates increase, proven in order when lowered (an hstack's parts in
    each row, a vstack's rows after the part's before), so no call validates the output."""
    coords, _ = got.to_coords()
    assert np.all(np.diff(coords[0]) > 0)
    assert not kernel.lowered.validate_output, kernel.lowered.validate_output


@pytest.mark.parametrize("fmts", [("csr", "csr"), ("coo", "dense")])
def test_a_vstacks_ravel_is_appended_into_a_sparse_vector_in_order(fmts):
    rng = np.random.default_rng(4)
    a, b = np.where(rng.random((3, 4)) < 0.5, 1.0, 0), np.where(rng.random((2, 4)) < 0.5, 2.0, 0)
    A, B = (ss.Tensor.from_numpy(x, f) for x, f in zip((a, b), fmts))
    kernel = ss.lower(VSTACK, "looplets", A=A, B=B, y="sparse_vector")
    got = kernel(A=A, B=B)
    np.testing.assert_array_equal(got.to_numpy(), np.vstack([a, b]).ravel())
    check_appended_in_order(kernel, got)


@pytest.mark.parametrize("fmt", ["csr", "coo"])
def test_an_hstacks_ravel_with_strided_parts_is_appended_into_a_sparse_vector_in_order(fmt):
    """np.hstack([a, c[:, ::-2], b, c[:, ::2]]).ravel(): a strided part's write ``t + (q + |j|) + i·|l|``
    walks i, q, then its one-step loop t; three parts after the first, each proven after the ones
    before (it was refused: 'written out of order'); the array front end's one kernel."""
    rng = np.random.default_rng(5)
    a, b, c = (np.where(rng.random(s) < 0.5, rng.choice([1.0, -2.0, np.nan], s), 0) for s in [(3, 4), (3, 2), (3, 5)])
    A, B, C = (xp.asarray(ss.Tensor.from_numpy(x, f)) for x, f in zip((a, b, c), (fmt, "coo", "dense")))
    expr = xp.concat([A, C[:, ::-2], B, C[:, ::2]], axis=1).reshape(-1)
    kernel = ss.lower(expr, strategy="looplets")
    assert kernel.trace.find("materialize") == [], kernel.trace
    got = kernel()
    want = np.hstack([a, c[:, ::-2], b, c[:, ::2]]).ravel()
    np.testing.assert_array_equal(got.to_numpy(), want)
    assert got.format.levels[0].name == "SparseList"
    check_appended_in_order(kernel, got)
