"""Steppers coiterated: each step ends at the smallest current child's end, and only the steppers
whose child ended there move to their next child.

A run-length level's child (fill up to the run's start, then the run) reads the same whether the
step ends at the run's end or before it, so the step's body is lowered once, followed by one
conditional ``next`` per stepper; it was lowered once per combination of ended and cut steppers
(8 copies for three run-length operands, 2928 lines of C for the run-length erosion, 1270 now).
A SparseList's child is a Spike, whose tail a cut drops: it keeps a case per outcome.

Into a run-length output, the phases of a step where an operand is its fill (0) do nothing: the
position passes them all at once, to ``min(max(left_a, left_b, left_c), step_stop)``, instead of
one test and assignment per phase (seven, a chain of dependent maxima: the erosion's C took a
quarter less time without it).
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.levels import Dense, Element, SparseList, SparseRunList
from compiler.looplets import compile_program, loop_program

RUNS = SparseRunList(Element(0.0))
OUT = Dense(Element(0.0))


@loop_program
def product3(y, a, b, c):
    for i in _:
        y[i] = a[i] * b[i] * c[i]


def kernel(fmt_c=RUNS, out=OUT):
    z = Tensor.from_numpy(np.zeros(4), RUNS)
    return compile_program(product3, y=out, a=z, b=z,
                           c=Tensor.from_numpy(np.zeros(4), fmt_c))


KERNELS = {}


def cached(fmt_c=RUNS, out=OUT):
    key = str(fmt_c), str(out)
    if key not in KERNELS:
        KERNELS[key] = kernel(fmt_c, out)
    return KERNELS[key]


def test_three_run_length_steppers_lower_the_step_body_once():
    src = cached().c_source
    assert src.count("a_val[ra] * b_val[rb] * c_val[rc]") == 1
    # each stepper moves on alone, when its run ended at this step (by the test's 0 or 1: no branch)
    for t in "abc":
        assert f"r{t} += (int64_t)(right{t} == step_stop);" in src


def test_into_runs_a_step_passes_the_phases_that_do_nothing_at_once():
    src = cached(out=RUNS).c_source
    step = src[src.index("while (i_2 < phase_stop) {"):src.index("i_2 = step_stop;")]
    assert step.count("phase_stop_") == 3   # one declared, tested and assigned
    assert "(lefta > leftb ? lefta : leftb) > leftc" in step


runs = st.lists(st.tuples(st.integers(1, 4), st.sampled_from([0.0, 0.0, 1.0, 2.5])), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None)
@given(runs, runs, runs)
@example([(3, 1.0)], [(3, 1.0)], [(3, 1.0)])                         # the runs end together
@example([(1, 0.0), (2, 2.5)], [(2, 1.0), (1, 0.0)], [(1, 2.5), (2, 1.0)])
def test_run_length_products_match_numpy_and_the_interpreter(ra, rb, rc):
    vs = [np.repeat([v for _, v in r], [n for n, _ in r]) for r in (ra, rb, rc)]
    n = min(len(v) for v in vs)
    vs = [v[:n] for v in vs]
    a, b, c = (Tensor.from_numpy(v, RUNS) for v in vs)
    for out in (OUT, RUNS):
        k = cached(out=out)
        np.testing.assert_array_equal(k(a=a, b=b, c=c).to_numpy(), vs[0] * vs[1] * vs[2])
        np.testing.assert_array_equal(k.interpret(a=a, b=b, c=c).to_numpy(), vs[0] * vs[1] * vs[2])


def test_a_sparse_list_beside_runs_keeps_its_entries_at_the_step_ends():
    # c's entries (Spikes) fall at a run's last index, inside it and past it
    va = np.array([2.0, 2, 2, 0, 3, 3, 3, 3, 0, 1])
    vb = np.array([1.0, 1, 5, 5, 5, 0, 4, 4, 4, 4])
    vc = np.array([0.0, 0, 7, 0, 2, 0, 0, 6, 0, 9])
    k = cached(SparseList(Element(0.0)))
    a, b = Tensor.from_numpy(va, RUNS), Tensor.from_numpy(vb, RUNS)
    c = Tensor.from_numpy(vc, SparseList(Element(0.0)))
    np.testing.assert_array_equal(k(a=a, b=b, c=c).to_numpy(), va * vb * vc)
