"""A run of NaN is one run in the lattice's RunList and SparseRunList outputs, as in
``Tensor.from_numpy``'s (compiler.lattice.emit_run_output; before, ``==`` merged no NaN run, in the
kernels nor in ``Tensor.from_numpy``). Oracles: compiler.evaluate (the dense reference), numpy, the
storage ``Tensor.from_numpy`` builds."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.format import Format
from compiler.levels import Dense, Element, RunList, SparseRunList
from compiler.testing import assert_canonical

NAN, INF = np.nan, np.inf
V = np.array([NAN, NAN, 1, 1, NAN, NAN, 2, 0, 0, NAN, INF, INF, -INF])


def check(expr, fmt, **tensors):
    got = ss.einsum(expr, strategy="lattice", C=fmt, **tensors)
    assert_canonical(got, ss.evaluate(expr, **{t: v.to_numpy() for t, v in tensors.items()})[0])
    return got


@pytest.mark.parametrize("fill", [0.0, 1.0, NAN])
@pytest.mark.parametrize("level", [RunList, SparseRunList], ids=lambda c: c.__name__)
def test_a_run_of_nan_is_one_run(level, fill):
    M = np.array([V, V[::-1], np.full(len(V), NAN)])
    A = Tensor.from_numpy(M, "dense", fill=fill)
    got = check("C[i, j] = A[i, j]", Format(Dense(level(Element(fill)))), A=A)
    if fill == 0.0 and level is RunList:   # (row 0: [nan nan][1 1][nan nan][2][0 0][nan][inf inf][-inf])
        assert got.levels[1].right.tolist()[:8] == [2, 4, 6, 7, 9, 10, 12, 13]
    # (NaN computed, 0 * inf, then a NaN stored times 1: one run of NaN, or all the fill)
    x = Tensor.from_numpy(np.array([0.0, 0.0, INF, 1.0]), "dense", fill=fill)
    z = Tensor.from_numpy(np.array([INF, INF, 0.0, NAN]), "dense", fill=fill)
    with np.errstate(invalid="ignore"):
        got = check("C[i] = x[i] * z[i]", Format(level(Element(fill))), x=x, z=z)
    assert got.nnz == (0 if level is SparseRunList and fill != fill else 1)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(runs=st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.0, NAN, INF, -INF]), st.integers(1, 3)), max_size=6),
       fill=st.sampled_from([0.0, 1.0, NAN]), level=st.sampled_from([RunList, SparseRunList]),
       src=st.sampled_from(["dense", "sparse"]))
def test_runs_the_lattice_writes_are_the_runs_from_numpy_builds(runs, fill, level, src):
    v = np.array([x for x, n in runs for _ in range(n)], dtype=float)
    check("C[i] = a[i]", Format(level(Element(fill))), a=Tensor.from_numpy(v, src, fill=fill))
