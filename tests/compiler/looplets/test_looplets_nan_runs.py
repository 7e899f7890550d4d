"""A run of NaN is one run in a RunList or SparseRunList output (compiler.imperative.cints.same_value_of).

Before, the looplets' RunList writer compared a run with the one before it by ``==`` (and a gap's
fill run with the fill likewise), so an output of fill NaN started a new run for every NaN written,
storing up to one run per coordinate where ``Tensor.from_numpy`` stores one; and runs of a stored
NaN were never merged by any kernel (nor by ``Tensor.from_numpy``). Now NaN equals NaN wherever
runs are compared: the looplets' RunList and SparseRunList writers, the lattice's run outputs
(tests/compiler/lattice/test_lattice_nan_runs.py) and ``Tensor.from_numpy``. Oracles: numpy, the
storage ``Tensor.from_numpy`` builds, the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.format import Format
from compiler.levels import Dense, Element, RunList, SparseRunList
from compiler.looplets import compile_program, loop_program
from compiler.testing import assert_canonical

NAN, INF = np.nan, np.inf
V = np.array([NAN, NAN, 1, 1, NAN, NAN, 2, 0, 0, NAN, INF, INF, -INF])


@loop_program
def copy(y, a):
    for i in _:
        y[i] = a[i]


@loop_program
def copy_rows(C, A):
    for i in _:
        for j in _:
            C[i, j] = A[i, j]


def run_both(k, want, **tensors):
    for got in (k(**tensors), k.interpret(**tensors)):
        assert_canonical(got, want)


@pytest.mark.parametrize("fill", [0.0, 1.0, NAN])
@pytest.mark.parametrize("level", [RunList, SparseRunList], ids=lambda c: c.__name__)
@pytest.mark.parametrize("src", ["dense", "sparse"])
def test_a_run_of_nan_written_is_one_run(src, level, fill):
    A = Tensor.from_numpy(V, src, fill=fill)
    run_both(compile_program(copy, y=Format(level(Element(fill))), a=A), V, a=A)
    M = np.array([V, V[::-1], np.full(len(V), NAN), np.full(len(V), fill)])
    B = Tensor.from_numpy(M, "dense" if src == "dense" else "csr", fill=fill)
    run_both(compile_program(copy_rows, C=Format(Dense(level(Element(fill)))), A=B), M, A=B)


def test_the_runs_of_nan_stored():
    # (fill NaN, from a dense vector: one run per NaN written before; [nan nan][1 1][nan nan][2][0 0]...)
    A = Tensor.from_numpy(V, "dense", fill=NAN)
    y = compile_program(copy, y=Format(RunList(Element(NAN))), a=A)(a=A)
    assert y.levels[0].right.tolist() == [2, 4, 6, 7, 9, 10, 12, 13]
    # (fill 0: the NaN stored are runs too, each one)
    A = Tensor.from_numpy(V, "dense")
    y = compile_program(copy, y=Format(SparseRunList(Element(0.0))), a=A)(a=A)
    assert y.levels[0].left.tolist() == [0, 2, 4, 6, 9, 10, 12] and y.levels[0].right.tolist() == [2, 4, 6, 7, 10, 12, 13]


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(runs=st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.0, NAN, INF, -INF]), st.integers(1, 3)), max_size=6),
       fill=st.sampled_from([0.0, 1.0, NAN]), level=st.sampled_from([RunList, SparseRunList]),
       src=st.sampled_from(["dense", "sparse"]))
@example(runs=[(NAN, 3), (1.0, 1)], fill=NAN, level=RunList, src="dense")   # (was 3 runs of NaN, the fill)
@example(runs=[(NAN, 2), (INF, 2)], fill=0.0, level=SparseRunList, src="sparse")   # (was 2 runs of NaN stored)
def test_runs_written_are_the_runs_from_numpy_builds(runs, fill, level, src):
    v = np.array([x for x, n in runs for _ in range(n)], dtype=float)
    A = Tensor.from_numpy(v, src, fill=fill)
    run_both(compile_program(copy, y=Format(level(Element(fill))), a=A), v, a=A)
