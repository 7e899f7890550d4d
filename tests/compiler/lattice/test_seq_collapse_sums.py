"""A collapse of a sum under the lattice strategy (issue 30): ``collapse(A + B, (i, j) -> k)`` is
``collapse(A) ∪ collapse(B)``, a union of products ``(i_A × j_A) ∪ (i_B × j_B)``, where Fig. 11's
rules gave ``(i_A ∪ i_B) × (j_A ∪ j_B)``, a union in a product's right operand, which the lattice
refused ('lower it with strategy='looplets''). ``(A + B).ravel()`` is one lattice kernel. Against
numpy, the dense oracle, the IR interpreter and the CFIR interpreter."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler import evaluate
from compiler.errors import StrategyError
from compiler.tensor import Tensor

sys.path.insert(0, str(Path(__file__).parent))
from test_seq_nestings import filled  # noqa: E402
from test_seqemit import run_all  # noqa: E402


def collapse_sum_program(n_terms, product, column_major, times_y):
    """``c[k] = collapse(M0[i, j] + M1[i, j] (+ M2...), (i, j) -> k)``, the first term ``M0 * M1``
    when ``product``, collapsed ``(j, i)`` when ``column_major``, times ``y[k]`` when ``times_y``."""
    names = [f"M{m}" for m in range(n_terms + product)]
    terms = [f"{n}[i, j]" for n in names]
    if product:
        terms[:2] = [f"{terms[0]} * {terms[1]}"]
    order = "(j, i)" if column_major else "(i, j)"
    rhs = f"collapse({' + '.join(terms)}, {order} -> k)"
    return f"c[k] = {rhs}{' * y[k]' if times_y else ''}", names


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(0, 3), st.integers(0, 4)), n_terms=st.integers(2, 3), product=st.booleans(),
       column_major=st.booleans(), times_y=st.booleans(), fmts=st.lists(st.sampled_from(["csr", "coo", "dense",
                                                                                         "dcsr"]), min_size=4, max_size=4),
       out=st.sampled_from([None, "sparse_vector"]), seed=st.integers(0, 2 ** 16))
@example(shape=(3, 4), n_terms=2, product=False, column_major=False, times_y=False, fmts=["csr", "coo", "csr", "csr"],
         out="sparse_vector", seed=0)   # refused before
@example(shape=(2, 3), n_terms=3, product=True, column_major=True, times_y=True, fmts=["dense", "csr", "coo", "csr"],
         out=None, seed=1)
@example(shape=(0, 3), n_terms=2, product=False, column_major=False, times_y=True, fmts=["coo", "dcsr", "csr", "csr"],
         out="sparse_vector", seed=2)
def test_a_collapse_of_a_sum(shape, n_terms, product, column_major, times_y, fmts, out, seed):
    rng = np.random.default_rng(seed)
    program, names = collapse_sum_program(n_terms, product, column_major, times_y)
    # (a column-major collapse walks j outside i: its operands stored columns first, CSC)
    fmts = ["csc"] * len(fmts) if column_major else fmts
    # (stored NaN and ±inf where nothing multiplies: the lattice's intersections skip a factor's 0,
    # so it refuses * over values that may be NaN or inf)
    draw = (lambda s: np.where(rng.random(s) < 0.5, rng.choice([1.0, -2.5, 3.0], s), 0.0)) \
        if product or times_y else (lambda s: filled(rng, s, 0.5, 0.0))
    arrays = {n: draw(shape) for n in names}
    tensors = {n: Tensor.from_numpy(a, f) for (n, a), f in zip(arrays.items(), fmts)}
    order = "F" if column_major else "C"
    vals = [arrays[n] for n in names]
    total = (vals[0] * vals[1] + sum(vals[2:])) if product else sum(vals)
    want = total.ravel(order=order)
    if times_y:
        y = draw(want.shape)
        tensors["y"], want = Tensor.from_numpy(y, "sparse"), want * y
    np.testing.assert_array_equal(evaluate(program, **tensors)[0], want)
    output = None if out is None else ss.parse_format(out, ndim=1)
    np.testing.assert_array_equal(run_all(program, tensors, out=output), want)


def test_the_array_front_end_ravels_a_sum_in_one_lattice_kernel():
    a, b = np.array([[0, 1.0, 0], [2.0, 0, 0]]), np.array([[3.0, 0, 0], [0, 0, 4.0]])
    A, B = xp.asarray(ss.Tensor.from_numpy(a, "csr")), xp.asarray(ss.Tensor.from_numpy(b, "coo"))
    v = np.arange(6.0)
    for expr, want in [((A + B).reshape(-1), (a + b).ravel()), ((A + B).reshape(-1) @ xp.asarray(v), (a + b).ravel() @ v)]:
        kernel = ss.lower(expr, strategy="lattice")
        assert kernel.trace.find("materialize") == [] and "collapse(" in str(kernel.program), kernel.trace
        np.testing.assert_array_equal(kernel().to_numpy(), want)


def test_a_collapse_of_a_sum_with_a_broadcast_side_is_still_refused_naming_looplets():
    # (x[i] does not vary with j: no product of its own, so Fig. 11's union stays in the right operand)
    A = Tensor.from_numpy(np.eye(2, 3), "csr")
    x = Tensor.from_numpy(np.arange(1.0, 3.0), "sparse")
    with pytest.raises(StrategyError, match=r"in the right operand of a product.*strategy='looplets'"):
        ss.lower("c[k] = collapse(A[i, j] + x[i], (i, j) -> k)", strategy="lattice", A=A, x=x)
