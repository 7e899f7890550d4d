"""Loop programs writing two entries of one sorted sparse output fiber in one loop iteration.

A sorted level is appended in increasing coordinate order, each coordinate once. ``y[j] = a[j];
y[j + 1] = b[j]`` writes ``j + 1`` twice (this iteration and the next) and was accepted, returning a
fiber with duplicate coordinates; each such pair is now refused at lowering, naming both statements,
the output and the level, unless the order is proven: an interleave, ``y[t + o * 2]`` then
``y[t + 1 + o * 2]`` under a one-step ``t`` (each row's entries in order, inside the row). Oracles:
numpy and the IR interpreter; a dense output (the last write wins) for what a sorted one refuses.
"""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.levels import Dense, Element, SparseBand, SparseBlockList, SparseByteMap, SparseCOO, SparseList, SparseRunList
from compiler.looplets import ProgramError, compile_program, loop_program
from compiler.testing import random_sparse

A_ = np.array([[1.0, 0, 2], [0, 3, 0], [4, 0, 0], [0, 0, 5]])
B_ = np.array([[0.0, 6, 0], [7, 0, 0], [0, 0, 8], [9, 0, 0]])


def matrices():
    return Tensor.from_numpy(A_, "csr", name="A"), Tensor.from_numpy(B_, "csr", name="B")


@loop_program
def shifted(y, a, b):
    for j in _:
        y[j] = a[j]
        y[j + 1] = b[j]


@loop_program
def shifted_back(y, a, b):
    for j in _:
        y[j + 1] = a[j]
        y[j] = b[j]


@loop_program
def two_windows(y, a, b):
    for j in _:
        y[0:4][j] = a[j]
        y[4:8][j] = b[j]


@loop_program
def same_entry(y, a, b):
    for j in _:
        y[j] = a[j]
        y[j] = b[j]


def interleave(gaps, width, steps=1):
    """``y[t + g + o * width] = a[o]`` (the ``k``-th write of each row at gap ``gaps[k]``, reading
    ``a``, ``b``, ``a + b``, ...) in one iteration of ``for o: for t in range(steps)``."""
    reads = ["a[o]", "b[o]", "a[o] + b[o]"]
    body = "".join(f"            y[t{f' + {g}' if g else ''} + o * {width}] = {reads[k]}\n" for k, g in enumerate(gaps))
    return loop_program(source=f"def interleaved(y, a, b):\n    for o in _:\n        for t in range({steps}):\n{body}")


def interleaved(a, b, gaps, width, fill):
    """numpy's ``y`` of :func:`interleave` (one step)."""
    y = np.full(len(a) * width, fill)
    for k, g in enumerate(gaps):
        y[g::width] = [a, b, a + b][k]
    return y


VECTORS = np.array([1.0, 0, 2, 3]), np.array([0.0, 5, 6, 0])
WRONG = [(shifted, 5, "y[j] and y[j + 1]", "j"), (shifted_back, 5, "y[j + 1] and y[j]", "j"),
         (two_windows, 8, "y[j] and y[j + 4]", "j"),
         (interleave((0, 2), 2), 10, "y[t + o * 2] and y[t + 2 + o * 2]", "o, t"),   # (past its row)
         (interleave((1, 0), 2), 8, "y[t + 1 + o * 2] and y[t + o * 2]", "o, t"),
         (interleave((0, 2, 1), 3), 12, "y[t + 2 + o * 3] and y[t + 1 + o * 3]", "o, t"),
         (interleave((0, 2), 4, steps=2), 16, "y[t + o * 4] and y[t + 2 + o * 4]", "o, t")]


@pytest.mark.parametrize("out", ["sparse", "coo", SparseRunList(Element(0.0)), "dense", SparseByteMap(Element(0.0))],
                         ids=["sparse", "coo", "runlist", "dense", "bytemap"])
@pytest.mark.parametrize("prog, n, writes, loops", WRONG, ids=[w[2] for w in WRONG])
def test_two_entries_of_a_sorted_fiber_in_one_iteration_out_of_order_are_refused(prog, n, writes, loops, out):
    # each iteration writes two coordinates the next iteration's would repeat or precede: before, the
    # output was returned with duplicate or unsorted coordinates (y[j], y[j + 1]: [0, 1, 1, 2, 2, ...])
    ta, tb = (Tensor.from_numpy(v, "sparse") for v in VECTORS)
    y = Tensor.from_numpy(np.zeros(n), out)
    if y.format.levels[0].random_write:   # (a dense output or a byte map takes them: the last write wins)
        k = ss.lower(prog, strategy="looplets", y=y, a=ta, b=tb)
        dense = ss.lower(prog, strategy="looplets", y=Tensor.from_numpy(np.zeros(n), "dense"), a=ta, b=tb)
        np.testing.assert_array_equal(k(a=ta, b=tb).to_numpy(), k.interpret(a=ta, b=tb).to_numpy())
        np.testing.assert_array_equal(k(a=ta, b=tb).to_numpy(), dense(a=ta, b=tb).to_numpy())
        return
    with pytest.raises(ProgramError) as e:
        ss.lower(prog, strategy="looplets", y=y, a=ta, b=tb)
    lines = [int(x) for x in re.findall(r"lines (\d+) and (\d+)", str(e.value))[0]]
    assert lines[1] > lines[0] and f"line {lines[1]} of " in str(e.value)
    # (a run-length level refuses the first two statements: it appends one run per iteration)
    why = ("appends runs, from one statement per iteration" if y.format.levels[0].appends_runs else
           "is appended in increasing coordinate order, each coordinate once")
    writes = r"y\[.*\] and y\[.*\]" if y.format.levels[0].appends_runs else re.escape(writes)
    assert re.search(rf"output y is written by two statements \(lines \d+ and \d+\) at {writes} in one iteration "
                     rf"of the loops over {loops}: its Sparse\w+ level \(storage level 0\) {why}.*Write y in one "
                     rf"statement per iteration, or store y in SparseHash or SparseByteMap", str(e.value)), str(e.value)


def test_a_dense_output_written_twice_in_one_iteration_keeps_the_last_write_as_the_interpreter():
    # the neighbours' semantics, which the refusals keep (a sorted output refuses them, never answers
    # otherwise): the last write wins, as the IR interpreter has it
    a, b = VECTORS
    ta, tb = (Tensor.from_numpy(v, "sparse") for v in VECTORS)
    want = np.r_[a, b[-1]]   # (y[j + 1] = b[j], then the next iteration's y[j + 1] = a[j + 1])
    for prog, n, expect in [(shifted, 5, want), (same_entry, 4, b)]:
        for out in ("dense", SparseByteMap(Element(0.0))):
            k = ss.lower(prog, strategy="looplets", y=Tensor.from_numpy(np.zeros(n), out), a=ta, b=tb)
            np.testing.assert_array_equal(k(a=ta, b=tb).to_numpy(), expect)
            np.testing.assert_array_equal(k.interpret(a=ta, b=tb).to_numpy(), expect)
    with pytest.raises(ProgramError, match=r"output y is written by two statements \(lines \d+ and \d+\) at one entry"):
        ss.lower(same_entry, strategy="looplets", y="sparse", a=ta, b=tb)


INTERLEAVES = [((0, 1), 2), ((0, 2), 3), ((0, 1, 2), 3), ((1, 3), 4)]


@settings(max_examples=6, deadline=None)
@given(form=st.sampled_from(INTERLEAVES), n=st.integers(0, 5), density=st.sampled_from([0.0, 0.5, 1.0]),
       fill=st.sampled_from([0.0, 1.0, np.nan]), stored=st.sampled_from([0.0, np.nan, np.inf, -np.inf]),
       fmt=st.sampled_from(["sparse", "coo", "dense"]),
       out=st.sampled_from(["sparse", "coo", "band", "blocks", "bytemap", "dense"]), seed=st.integers(0, 2 ** 16))
def test_an_interleave_in_one_iteration_appends_a_sorted_fiber_in_order(form, n, density, fill, stored, fmt, out,
                                                                          seed):
    # y[t + g + o * M] for increasing gaps g in [0, M) under a one-step t: each iteration's entries lie
    # after the previous one's and in its row (before: accepted unproven, as were the ones refused above)
    gaps, width = form
    rng = np.random.default_rng(seed)
    a, b = (random_sparse((n,), density, rng, fill=fill) for _ in range(2))
    a[:1] = stored if n and a[0] != fill else a[:1]   # (NaN and infinities among stored values)
    ta, tb = (Tensor.from_numpy(v, fmt, fill=fill) for v in (a, b))
    level = {"sparse": SparseList, "coo": lambda e: SparseCOO(1, e), "band": SparseBand, "blocks": SparseBlockList,
             "bytemap": SparseByteMap, "dense": Dense}[out]
    prog = interleave(gaps, width)
    k = compile_program(prog, y=Tensor.from_numpy(np.full(n * width, fill), level(Element(fill))), a=ta, b=tb)
    assert not k.lowered.validate_output   # (proven in order at lowering, not checked at each call)
    got = k(a=ta, b=tb)
    got.validate()
    want = interleaved(a, b, gaps, width, fill)
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(a=ta, b=tb).to_numpy(), want)


@pytest.mark.parametrize("out", ["csr", "coo", "dense"])
def test_an_interleave_of_columns_appends_each_row_in_order(out):
    # D[i, t + o * 2], D[i, t + 1 + o * 2]: each row's fiber interleaves A's and B's (a DCSR's row is
    # appended once by both statements together, its fiber written by each in turn)
    A, B = matrices()
    k = compile_program(interleave_columns, D=Tensor.from_numpy(np.zeros((4, 6)), out), A=A, B=B)
    want = np.stack([A_, B_], axis=2).reshape(4, 6)
    got = k(A=A, B=B)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(A=A, B=B).to_numpy(), want)
    dcsr = compile_program(interleave_columns, D=Tensor.from_numpy(np.zeros((4, 6)), "dcsr"), A=A, B=B)
    got = dcsr(A=A, B=B)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(dcsr.interpret(A=A, B=B).to_numpy(), want)


@loop_program
def interleave_columns(D, A, B):
    for i in _:
        for o in _:
            for t in range(1):
                D[i, t + o * 2] = A[i, o]
                D[i, t + 1 + o * 2] = B[i, o]


@loop_program
def next_column(D, A, B):
    for i in _:
        for j in _:
            D[i, j] = A[i, j]
            D[i, j + 1] = B[i, j]


@loop_program
def next_row(D, A, B):
    for i in _:
        for j in _:
            D[i, j] = A[i, j]
            D[i + 1, j] = B[i, j]


@pytest.mark.parametrize("out", ["csr", "coo"])
@pytest.mark.parametrize("prog, writes", [(next_column, "D[i, j] and D[i, j + 1]"), (next_row, "D[i, j] and D[i + 1, j]")])
def test_two_entries_of_a_matrix_in_one_iteration_out_of_order_are_refused(prog, writes, out):
    # (before: CSR's and COO's next column, and COO's next row, were returned with duplicate or unsorted
    # coordinates; CSR's next row was refused as "one entry")
    A, B = matrices()
    with pytest.raises(ProgramError, match=rf"output D is written by two statements \(lines \d+ and \d+\) at "
                                           rf"{re.escape(writes)} in one iteration of the loops over i, j"):
        compile_program(prog, D=Tensor.from_numpy(np.zeros((5, 4)), out), A=A, B=B)
