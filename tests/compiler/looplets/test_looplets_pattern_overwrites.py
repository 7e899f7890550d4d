"""A false written into a Pattern output over an earlier true of the same entry drops it
(compiler.looplets.lowerers, ``_write_pattern``).

A Pattern leaf stores no values: a write of true sets the flag its level's append tests, and a
write of false did nothing, so writes that repeat an entry (``for i: for j: y[i] = A[i, j]``, each
``j`` writing ``y[i]``) kept it where any of them was true, not where the last was. Now a write
that may overwrite an earlier one (``Assign.overwrites``) sets the flag to its value. Two
statements writing one entry of such a level are refused, as before. Oracles: numpy, the storage
``Tensor.from_numpy`` builds, the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.format import Format
from compiler.levels import Dense, Pattern, SparseBlockList, SparseHash, SparseList, SparseRunList
from compiler.looplets import ProgramError, compile_program, loop_program

from tests.compiler.looplets.test_overwrites import last_of_row, run_both, then_b

LEVELS = {"list": SparseList, "runs": SparseRunList, "blocks": SparseBlockList, "hash": SparseHash}
M = np.array([[True, False, True, False], [True, True, False, True], [False, False, False, False],
              [False, False, False, True], [True, True, True, True]])


@loop_program
def last_of_depth(C, T):
    for i in _:
        for j in _:
            for k in _:
                C[i, j] = T[i, j, k]


@pytest.mark.parametrize("src", ["csr", "dense", "coo"])
@pytest.mark.parametrize("out", list(LEVELS))
def test_the_last_write_of_an_entry_decides_it(out, src):
    A = Tensor.from_numpy(M, src)
    # (row 0: true, false, true, false: the last is false; it was kept, as any true written)
    run_both(compile_program(last_of_row, y=Format(LEVELS[out](Pattern())), A=A), M[:, -1], out != "hash", A=A)
    empty = Tensor.from_numpy(np.zeros((3, 2), dtype=bool), src)
    run_both(compile_program(last_of_row, y=Format(LEVELS[out](Pattern())), A=empty), np.zeros(3, dtype=bool),
             out != "hash", A=empty)


@pytest.mark.parametrize("out", ["list", "runs", "blocks"])
def test_a_matrix_entry_written_at_each_step_of_an_inner_loop(out):
    t = np.zeros((3, 4, 2), dtype=bool)
    t[0, :, 0] = True          # (true then false: dropped)
    t[1, 1:3, 1] = True        # (false then true: kept)
    t[2] = True
    T = Tensor.from_numpy(t, "dense")
    k = compile_program(last_of_depth, C=Format(Dense(LEVELS[out](Pattern()))), T=T)
    run_both(k, t[:, :, -1], True, T=T)


def test_two_statements_writing_one_pattern_entry_are_refused():
    a = Tensor.from_numpy(np.array([True, False]), "sparse")
    with pytest.raises(ProgramError, match="written by two statements"):
        compile_program(then_b, y=Format(SparseList(Pattern())), a=a, b=a)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(0, 4), st.integers(0, 4)), density=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       src=st.sampled_from(["csr", "dense", "coo"]), out=st.sampled_from(["list", "runs", "blocks"]),
       seed=st.integers(0, 2 ** 16))
def test_the_last_write_decides_by_property(shape, density, src, out, seed):
    a = np.random.default_rng(seed).random(shape) < density
    A = Tensor.from_numpy(a, src)
    want = a[:, -1] if shape[1] else np.zeros(shape[0], dtype=bool)
    run_both(compile_program(last_of_row, y=Format(LEVELS[out](Pattern())), A=A), want, True, A=A)
