"""Fig. 26a fused: ``c[k] = collapse(A[i, j], (i, j) -> k) * b[k]`` under both strategies (issue 30).

The looplets kernel walks A's rows and carries b's cursor across them (:mod:`compiler.looplets.carried`);
each row then seeks b's first entry in the row from that cursor. The seek bisected the rest of b
(``lo = qb + 1, hi = qb_stop``): about 20 cache-missing probes per row on a million-entry b, which
made the fused kernel twice the lattice's time and under 1.2x its unfused pair. It gallops from the
cursor now. Against numpy, the dense oracle and the IR interpreter, with NaN and inf stored (the
exact path; the lattice strategy refuses those, saying why), empty and all-fill operands.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.reference import evaluate

PROGRAM = "c[k] = collapse(A[i, j], (i, j) -> k) * b[k]"


def operands(shape, density_a, density_b, special, seed):
    """A matrix and a vector of its size, each entry stored with the given density (NaN and inf
    among the values drawn where ``special``)."""
    rng = np.random.default_rng(seed)
    values = [1.0, -2.0, 0.5] + ([np.nan, np.inf, -np.inf] if special else [])
    a = np.where(rng.random(shape) < density_a, rng.choice(values, shape), 0.0)
    b = np.where(rng.random(a.size) < density_b, rng.choice(values, a.size), 0.0)
    return a, b


def check(a, b, fmt, strategy):
    """Lower and call the fused kernel on ``a`` (in ``fmt``) and ``b`` (a compressed vector): the
    result against numpy and the oracle (and, for looplets, the IR interpreter). Returns the kernel."""
    A, B = ss.Tensor.from_numpy(a, fmt, name="A"), ss.Tensor.from_numpy(b, "sparse", name="b")
    with np.errstate(invalid="ignore"):
        want = a.ravel() * b
    oracle, fill = evaluate(PROGRAM, A=A, b=B)
    np.testing.assert_array_equal(oracle, want)
    out = ss.parse_format("sparse", ndim=1, fill=fill.item())
    # (the lattice walks the union of the factors that may hold NaN or inf: it refused them once)
    kernel = ss.lower(PROGRAM, strategy, A=A, b=B, c=out)
    got = kernel(A=A, b=B)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    if strategy == "looplets":
        np.testing.assert_array_equal(kernel.interpret(A=A, b=B).to_numpy(), want)
    return kernel


@pytest.mark.parametrize("strategy", ["looplets", "lattice"])
@pytest.mark.parametrize("a, b", [
    # b's entries run on past A's last one in each row: every row seeks over several of them,
    # galloping 1, 2, 4 past its cursor (and past b's end in the last row)
    (np.array([[1.0, 0, 0, 0, 0, 0], [0, 0, 2.0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [3.0, 0, 0, 0, 0, -1.0]]),
     np.tile([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 4)),
    # NaN and inf stored in either operand, facing the other's fill: the product is NaN there
    (np.array([[0, np.nan, 0, 4.0], [2.0, 0, np.inf, 0], [0, 0, 0, 0]]),
     np.array([np.nan, 1.0, 0, np.inf, 2.0, 3.0, 0, 0, 0, 4.0, -1.0, 5.0])),
    (np.zeros((3, 4)), np.arange(12.0)),                  # A all fill
    (np.arange(12.0).reshape(3, 4), np.zeros(12)),        # b all fill
    (np.zeros((0, 5)), np.zeros(0)),                      # empty
])
def test_the_fused_kernel_against_numpy(a, b, strategy):
    check(a, b, "csr", strategy)


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(0, 5), st.integers(1, 7)), density_a=st.sampled_from([0.0, 0.2, 0.6, 1.0]),
       density_b=st.sampled_from([0.0, 0.5, 1.0]), special=st.booleans(), fmt=st.sampled_from(["csr", "coo"]),
       strategy=st.sampled_from(["looplets", "lattice"]), seed=st.integers(0, 2 ** 16))
@example(shape=(6, 7), density_a=0.2, density_b=1.0, special=False, fmt="csr", strategy="looplets", seed=0)
@example(shape=(4, 3), density_a=0.6, density_b=0.5, special=True, fmt="coo", strategy="looplets", seed=1)
@example(shape=(5, 4), density_a=0.0, density_b=1.0, special=False, fmt="csr", strategy="lattice", seed=2)
def test_the_fused_kernel_on_any_operands(shape, density_a, density_b, special, fmt, strategy, seed):
    check(*operands(shape, density_a, density_b, special, seed), fmt, strategy)


def test_each_row_gallops_from_bs_carried_cursor():
    """b's cursor is declared once, before the loop over A's rows; each row's seek gallops from it
    (the galloping helper's call) within b, and nothing bisects the rest of b from the cursor to its end."""
    a, b = operands((6, 7), 0.3, 0.8, False, 3)
    kernel = check(a, b, "csr", "looplets")
    src = kernel.c_source
    before, rows = src.split("for (int64_t i = 0; i < A0_size; i++) {", 1)
    assert "int64_t qb = b0_pos[0];" in before and "int64_t qb_stop = b0_pos[1];" in before
    assert "qb = seek_int64(b0_idx, qb, qb_stop, " in rows, src
    assert "int64_t hi = qb_stop;" not in src and "lower_bound" not in src
    assert any(s.stage == "carry" and "b on j" in s.note for s in kernel.trace.steps)
