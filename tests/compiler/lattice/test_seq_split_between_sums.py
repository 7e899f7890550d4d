"""A sum's loop between a split's major and minor index (issue 30): ``out[i] = sum[j, k](split(A[j, l], l ->
(i, k)))`` of a CSC A (stored l, j) is ``xp.sum(A.reshape(J, I, K), axis=(0, 2))``. The sum's loops ran j, k
inside i, so j walked level 1 of A below the split level between π0 and π1: its fiber was the group's first
row's only, and the lattice found the whole point the fill and wrote nothing (zeros on main, in the default
strategy too). The check of the loops between a split's indices skipped a sum's loops; it now checks every chain
of nested loops, so this order is refused and the loops run i, k, j (A's order). Against numpy and the CFIR
interpreter, fills 0/1/NaN/-inf, NaN/±inf stored, empty and all-fill."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.format import csc, csr

sys.path.insert(0, str(Path(__file__).parent))
from test_seqemit import run_all  # noqa: E402

nan, inf = np.nan, np.inf
REDUCE = {"sum": (xp.sum, np.sum), "max": (xp.max, np.max), "prod": (xp.prod, np.prod), "min": (xp.min, np.min)}


def reduced(D, fmt, fill, op, shape, axes):
    a = xp.asarray(Tensor.from_numpy(D, {"csc": csc, "csr": csr}[fmt](fill=fill)))
    with np.errstate(invalid="ignore", over="ignore"):
        return REDUCE[op][0](a.reshape(shape), axis=axes), REDUCE[op][1](D.reshape(shape), axis=axes)


@pytest.mark.parametrize("strategy", [None, "lattice"])
@pytest.mark.parametrize("fill", [0.0, 1.0])
def test_the_probes_case(strategy, fill):
    D = np.full((2, 6), fill)
    D[0, 2], D[1, 3] = 5.0, 1.0
    e, want = reduced(D, "csc", fill, "sum", (2, 3, 2), (0, 2))
    np.testing.assert_array_equal(np.asarray(e.compute(format="dense", strategy=strategy, checked=True)), want)


def test_the_loops_run_in_the_csc_order():
    D = np.zeros((2, 6))
    D[0, 2], D[1, 3] = 5.0, 1.0
    e, _ = reduced(D, "csc", 0.0, "sum", (2, 3, 2), (0, 2))
    k = e.lower(format="dense", strategy="lattice")
    derived = k.trace.find("seq-derive")[-1].after_text
    assert [line.split()[1] for line in derived.splitlines() if line.lstrip().startswith("forall")] == ["i", "k", "j"]
    assert not k.trace.find("retry") and not k.trace.find("materialize")


def test_the_index_notation_against_the_cfir_interpreter():
    D = np.zeros((2, 6))
    D[0, 2], D[1, 3], D[1, 0] = 5.0, nan, -inf
    program = "out[i] = sum[j, k](split(A[j, l], l -> (i:3, k:2)))"
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(run_all(program, {"A": Tensor.from_numpy(D, "csc")}),
                                      D.reshape(2, 3, 2).sum((0, 2)))


@settings(max_examples=7, deadline=None)
@given(fmt=st.sampled_from(["csc", "csr"]), fill=st.sampled_from([0.0, 1.0, nan, -inf]),
       op=st.sampled_from(sorted(REDUCE)), dims=st.sampled_from([(2, 3, 2), (1, 4, 3), (3, 1, 2), (2, 2, 1)]),
       axes=st.sampled_from([(0, 2), (0, 1), (1, 2)]), density=st.sampled_from([0.0, 0.4, 1.0]),
       seed=st.integers(0, 2 ** 16))
@example(fmt="csc", fill=-inf, op="sum", dims=(2, 3, 2), axes=(0, 2), density=0.4, seed=0)
@example(fmt="csc", fill=0.0, op="sum", dims=(2, 3, 2), axes=(0, 2), density=1.0, seed=1)
def test_reductions_of_a_split_matrix(fmt, fill, op, dims, axes, density, seed):
    """Any two axes of a reshaped CSC or CSR reduced, NaN and ±inf stored, empty and all-fill: numpy's result."""
    rng = np.random.default_rng(seed)
    J, rest = dims[0], dims[1] * dims[2]
    D = np.where(rng.random((J, rest)) < density, rng.choice([2.0, -1.0, 0.5, nan, inf, -inf], (J, rest)), fill)
    e, want = reduced(D, fmt, fill, op, dims, axes)
    with np.errstate(invalid="ignore", over="ignore"):
        got = np.asarray(e.compute(format="dense", checked=True))
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
