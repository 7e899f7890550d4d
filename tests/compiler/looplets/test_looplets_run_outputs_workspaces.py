"""Run-length outputs reduced into by a loop whose body also writes a workspace.

``y[i] = max[j](sum[k](A[i, j, k]))`` into a RunList or SparseRunList: the body of the loop over i
sums each ``A[i, j, :]`` into a workspace ``t`` before ``y[i] <<max>>= t``. Such a body counts every
index, so the AcceptRun rule takes each index as a run of length one, re-entering itself over
``[v, v + 1)``; there it refused the body whole again for the same workspace and recursed without
end, reported as "the program nests too deeply for the compiler's recursive passes". So did any
nesting of sum, prod, max and min written with ``=``, the array front end's ``prod(a @ b, axis=(0,
2))`` and ``max(sum(A, axis=3), axis=2)`` (into ``Dense(SparseRunList)`` too), and the default
strategy where the lattice refuses them. A region of one index now takes the body whole
(:meth:`compiler.looplets.looplet_rules.LoopletRules.lower_acceptrun`).
Oracles: numpy, the dense oracle ``compiler.evaluate``, and the storage ``Tensor.from_numpy`` builds.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, Trace
from compiler import array as xp
from compiler.format import Format
from compiler.levels import Dense, Element, RunList, SparseBand, SparseList, SparseRunList
from compiler.looplets import compile_program, loop_program
from compiler.looplets.scalars import Scalar
from compiler.testing import assert_canonical

nan, inf = np.nan, np.inf
#: each reduction's identity, the fill a run-length output starts at
IDENTITY = {"sum": 0.0, "prod": 1.0, "max": -inf, "min": inf}


@loop_program
def max_of_sums(y, A, t=Scalar(0.0)):
    for i in _:
        for j in _:
            t[...] = 0.0
            for k in _:
                t += A[i, j, k]
            y[i] <<= max, t


# rows 0 and 1 have the same maximum (one run of two), row 2 a NaN, row 3 an infinity, row 4 is all fill
A3 = np.array([[[1.0, 2.0], [0.0, 3.0]], [[3.0, 0.0], [1.0, 1.0]], [[nan, 1.0], [2.0, 0.0]],
               [[-inf, 1.0], [inf, 2.0]], [[0.0, 0.0], [0.0, 0.0]], [[-2.0, 0.0], [0.0, -1.0]]])


@pytest.mark.parametrize("out", [SparseRunList, RunList])
@pytest.mark.parametrize("checked", [False, True])
def test_a_workspace_under_a_run_length_output_writes_runs_of_length_one(out, checked):
    A = Tensor.from_numpy(A3, Dense(SparseList(Dense(Element(0.0)))))
    trace = Trace()
    k = compile_program(max_of_sums, y=out(Element(-inf)), A=A, checked=checked, trace=trace)
    assert_canonical(k(A=A), A3.sum(axis=2).max(axis=1))
    notes = [s.note for s in trace.steps if s.stage == "lower:AcceptRun"]
    assert any("runs of length one" in n for n in notes) and any("one run" in n for n in notes), notes


def test_the_probes_product_of_a_matmul():
    """The reproducer: a CSF times a band of fill NaN, multiplied over two axes (the lattice refuses
    it: the reduction is not innermost; the default strategy then takes the looplets')."""
    A = np.array([[[0.5, -3.0], [1.0, 1.0], [nan, -inf], [1.0, 1.0]],
                  [[0.5, 2.0], [-3.0, 2.0], [nan, nan], [-3.0, nan]]])
    B = np.array([[1.0], [1.0]])
    a = xp.asarray(Tensor.from_numpy(A, Dense(SparseList(SparseList(Element(0.0))))))
    b = xp.asarray(Tensor.from_numpy(B, Dense(SparseBand(Element(nan)))))
    e = xp.prod(a @ b, axis=(0, 2))
    for out in (SparseRunList, RunList):
        for strategy in ("looplets", None):
            assert_canonical(e.compute(format=Format(out(Element(1.0))), strategy=strategy),
                             np.prod(A @ B, axis=(0, 2)))


@pytest.mark.parametrize("out", [Dense(SparseRunList(Element(-inf))), Dense(RunList(Element(-inf))),
                                 SparseList(SparseRunList(Element(-inf)))])
def test_two_dimensional_run_length_outputs(out):
    A4 = np.arange(48.0).reshape(2, 3, 4, 2) % 5 - 2
    A4[0, 1, 2, 0], A4[1, 2, 0, 1] = nan, inf
    A4[1, 0] = 0.0   # an all-fill row of the output's last level
    a = xp.asarray(Tensor.from_numpy(A4, Dense(Dense(SparseList(Dense(Element(0.0)))))))
    got = xp.max(xp.sum(a, axis=3), axis=2).compute(format=Format(out), strategy="looplets")
    assert_canonical(got, A4.sum(axis=3).max(axis=2))


@pytest.mark.parametrize("shape", [(0, 2, 2), (3, 0, 2), (3, 2, 0), (1, 1, 1)])
@pytest.mark.parametrize("fill", [0.0, nan])
def test_empty_and_all_fill_inputs(shape, fill):
    prog = "y[i] = max[j](sum[k](A[i, j, k]))"
    a = np.full(shape, fill)
    want, _ = ss.evaluate(prog, A=a)
    for out in (SparseRunList, RunList):
        got = ss.einsum(prog, A=Tensor.from_numpy(a, Dense(SparseList(SparseList(Element(fill))))),
                        y=Format(out(Element(-inf))), strategy="looplets")
        assert_canonical(got, want)


LEVELS = [Dense, SparseList, SparseBand, RunList, SparseRunList]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(list(IDENTITY)), st.sampled_from(list(IDENTITY)), st.sampled_from([0.0, 1.0, nan]),
       st.sampled_from(LEVELS), st.sampled_from(LEVELS), st.sampled_from([RunList, SparseRunList]),
       st.tuples(st.integers(0, 4), st.integers(0, 3), st.integers(0, 3)), st.sampled_from([0.0, 0.5, 1.0]),
       st.integers(0, 2**31 - 1))
def test_nested_reductions_into_run_length_outputs_match_the_dense_oracle(inner, outer, fill, lj, lk, out, shape,
                                                                         density, seed):
    rng = np.random.default_rng(seed)
    stored = rng.choice([1.0, 2.0, -1.0, nan, inf, -inf], shape)
    a = np.where(rng.random(shape) < density, stored, fill)
    prog = f"y[i] = {outer}[j]({inner}[k](A[i, j, k]))"
    want, _ = ss.evaluate(prog, A=a)
    got = ss.einsum(prog, A=Tensor.from_numpy(a, Dense(lj(lk(Element(fill))))),
                    y=Format(out(Element(IDENTITY[outer]))), strategy="looplets")
    assert_canonical(got, want)
