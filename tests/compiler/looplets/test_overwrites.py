"""A write of the fill over a coordinate an earlier write stored (issue 30; compiler.looplets.overwrites).

The ``fill-write`` rule dropped every write of the fill into a sparse output, so a coordinate written
twice kept the first value where the second was the fill: ``y[i] = a[i]; y[i] = b[i]`` into a
SparseHash kept ``a`` where ``b`` is the fill, a SparseList(Dense) row written by two loops kept the
first's entries, ``for i: for j: y[i] = A[i, j]`` kept row ``i``'s last stored value (into SparseList,
COO, runs, bands, blocks; into SparsePoint and SparseInterval a call failed validation), and a scatter
``y[I[k]] = v[k]`` into a SparseHash kept ``v``'s stored value where a later ``k`` wrote the fill. And
two writes of one SparseHash entry in one iteration inserted its key twice: a SparseHash(SparseHash)
output crashed the process. Now a write an earlier one may reach keeps its fill write (the fill
replaces the value, or leaves the entry out), and two writes of one hash entry share its looplets.
Oracles: numpy, the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.format import Format
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseHash,
                             SparseInterval, SparseList, SparsePoint, SparseRunList)
from compiler.looplets import ProgramError, compile_program, loop_program
from compiler.looplets.fibers import TensorInfo
from compiler.looplets.overwrites import mark_overwrites, overwriting
from compiler.testing import assert_canonical, random_sparse

from tests.compiler.looplets.test_looplets_appends import hstack_rows as hstack
from tests.compiler.looplets.test_output_formats import row_twice as rows_twice


@loop_program
def then_fill(y, a):
    for i in _:
        y[i] = a[i]
        y[i] = 0


@loop_program
def then_b(y, a, b):
    for i in _:
        y[i] = a[i]
        y[i] = b[i]


@loop_program
def loops_then_b(y, a, b):
    for i in _:
        y[i] = a[i]
    for i in _:
        y[i] = b[i]


@loop_program
def entries_twice(D, A, B):
    for i in _:
        for j in _:
            D[i, j] = A[i, j]
            D[i, j] = B[i, j]


@loop_program
def last_of_row(y, A):
    for i in _:
        for j in _:
            y[i] = A[i, j]


@loop_program
def last_of_column(y, A):
    for i in _:
        for j in _:
            y[j] = A[i, j]


@loop_program
def scatter(y, I, v):
    for k in _:
        y[I[k]] = v[k]


def vector_format(name, fill):
    levels = {"hash": SparseHash, "bytemap": SparseByteMap, "sparse": SparseList, "runs": RunList,
              "sparse_runs": SparseRunList, "band": SparseBand, "blocks": SparseBlockList, "point": SparsePoint,
              "interval": SparseInterval}
    return Format(levels[name](Element(fill))) if name in levels else ss.parse_format(name, ndim=1, fill=fill)


def matrix_format(name, fill):
    nests = {"dense_hash": (Dense, SparseHash), "hash_hash": (SparseHash, SparseHash), "hash_dense": (SparseHash, Dense),
             "sparse_dense": (SparseList, Dense), "sparse_hash": (SparseList, SparseHash)}
    if name not in nests:
        return ss.parse_format(name, ndim=2, fill=fill)
    outer, inner = nests[name]
    return Format(outer(inner(Element(fill))))


def filled(a, fill):
    return np.where(a == 0, fill, a)


def run_both(k, want, canonical=False, **tensors):
    for got in (k(**tensors), k.interpret(**tensors)):
        if canonical:
            assert_canonical(got, want)
        else:
            np.testing.assert_array_equal(got.to_numpy(), want)


@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan])
@pytest.mark.parametrize("out", ["hash", "bytemap"])
def test_a_fill_written_over_an_entry_of_a_random_write_vector_replaces_it(out, fill):
    a = filled(np.array([1.0, 0, 2, 3, 0, np.inf]), fill)
    b = filled(np.array([0.0, 5, 0, 7, 0, -np.inf]), fill)
    A, B = (Tensor.from_numpy(v, "sparse", fill=fill) for v in (a, b))
    # (the fill-write rule kept a's value where b is the fill; y[i] = 0 kept a where 0 is the fill)
    run_both(compile_program(then_b, y=vector_format(out, fill), a=A, b=B), b, a=A, b=B)
    run_both(compile_program(loops_then_b, y=vector_format(out, fill), a=A, b=B), b, a=A, b=B)
    run_both(compile_program(then_fill, y=vector_format(out, fill), a=A), np.zeros(6), a=A)


@pytest.mark.parametrize("fill", [0.0, np.nan])
@pytest.mark.parametrize("out", ["dense_hash", "hash_hash", "hash_dense", "sparse_dense", "sparse_hash", "dense"])
def test_a_row_written_twice_keeps_the_second_rows_values(out, fill):
    rng = np.random.default_rng(3)
    a = random_sparse((5, 4), 0.5, rng, fill=fill, empty=(1,))
    b = random_sparse((5, 4), 0.5, rng, fill=fill, empty=(3,))
    b[0] = a[0]   # (both store entries at the same coordinates: one hash key inserted by two writes)
    b[2, 0], b[4] = -np.inf, fill
    A, B = Tensor.from_numpy(a, "csr", fill=fill), Tensor.from_numpy(b, "coo", fill=fill)
    for prog in (rows_twice, entries_twice):
        k = compile_program(prog, D=matrix_format(out, fill), A=A, B=B)
        run_both(k, b, canonical=out in ("sparse_dense", "dense"), A=A, B=B)


@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan])
@pytest.mark.parametrize("out", ["sparse", "coo", "runs", "sparse_runs", "band", "blocks", "point", "interval",
                                 "hash", "bytemap"])
def test_an_entry_written_at_each_step_of_an_inner_loop_keeps_the_last(out, fill):
    a = filled(np.array([[1.0, 0, 2, 0], [0, 3, 0, 4], [0, 0, 0, 0], [5, 6, 0, 0], [0, 0, 0, np.nan]]), fill)
    if out in ("point", "interval"):   # (one entry, or one run, at most)
        a[4, 3] = fill
    A = Tensor.from_numpy(a, "csr", fill=fill)
    k = compile_program(last_of_row, y=vector_format(out, fill), A=A)
    run_both(k, a[:, -1], canonical=out not in ("hash", "bytemap"), A=A)
    empty = Tensor.from_numpy(np.full((5, 4), fill), "csr", fill=fill)
    run_both(k, np.full(5, fill), A=empty)
    if out in ("hash", "bytemap"):   # (written at random: the last row's)
        run_both(compile_program(last_of_column, y=vector_format(out, fill), A=A), a[-1], A=A)


@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_a_scatter_with_a_repeated_coordinate_keeps_the_last_write(fill):
    I, v = np.array([2, 2, 0, 3, 3, 1]), np.array([5.0, fill, 1.0, fill, 4.0, np.inf])
    want = np.full(5, fill)
    for i, x in zip(I, v):
        want[i] = x
    V = Tensor.from_numpy(v, "sparse", fill=fill)
    for out in ("hash", "bytemap", "dense"):
        k = compile_program(scatter, y=Tensor.from_numpy(np.full(5, fill), vector_format(out, fill)), I=I, v=V)
        run_both(k, want, I=I, v=V)


def test_the_trace_names_the_writes_that_may_overwrite_and_apart_ones_are_not_marked():
    A = Tensor.from_numpy(np.array([[1.0, 0], [0, 2]]), "csr")
    k = compile_program(rows_twice, D=matrix_format("dense_hash", 0.0), A=A, B=A)
    steps = k.trace.find("overwrites")
    first = rows_twice.first_line
    assert steps and steps[0].note.startswith(f"line {first + 6}: the write of line {first + 4} may reach its "
                                              f"coordinate first (a fill"), steps[0].note
    k = compile_program(last_of_row, y="sparse", A=A)
    assert "its loop over j does not pick its coordinate" in k.trace.find("overwrites")[0].note
    # (an hstack's parts write apart, each coordinate once: their fill writes are dropped, as before)
    k = compile_program(hstack, D=matrix_format("dense_hash", 0.0), A=A, B=A)
    assert not k.trace.find("overwrites")
    np.testing.assert_array_equal(k(A=A, B=A).to_numpy(), np.hstack([A.to_numpy()] * 2))
    infos = {t: TensorInfo(t, matrix_format("dense_hash", 0.0) if t == "D" else A.format,
                           "output" if t == "D" else "input") for t in ("D", "A", "B")}
    # (on the program as written: the second loop's write, which the first's may reach, its loops' extents unknown)
    assert [s.line for s, _ in overwriting(mark_overwrites(rows_twice.body, infos))] == [7]
    assert len(overwriting(mark_overwrites(hstack.body, infos))) == 1


def test_two_writes_of_one_sorted_entry_are_still_refused():
    A = Tensor.from_numpy(np.array([1.0, 0.0]), "sparse")
    with pytest.raises(ProgramError, match="written by two statements"):
        compile_program(then_b, y="sparse", a=A, b=A)


FORMATS = ["csr", "coo", "dense", "sparse_sparse"]


def operand(a, fmt, fill):
    if fmt == "sparse_sparse":
        return Tensor.from_numpy(a, Format(SparseList(SparseList(Element(fill)))))
    return Tensor.from_numpy(a, fmt, fill=fill)


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(0, 4), st.integers(0, 4)),
       density=st.tuples(st.sampled_from([0.0, 0.4, 1.0]), st.sampled_from([0.0, 0.4, 1.0])),
       fmts=st.tuples(st.sampled_from(FORMATS), st.sampled_from(FORMATS)), fill=st.sampled_from([0.0, 1.0, np.nan]),
       out=st.sampled_from(["dense_hash", "hash_hash", "sparse_dense", "sparse_hash", "hash_dense"]),
       prog=st.sampled_from(["rows_twice", "entries_twice", "last_of_row"]), specials=st.booleans(),
       seed=st.integers(0, 2 ** 16))
@example(shape=(3, 3), density=(1.0, 0.4), fmts=("csr", "csr"), fill=0.0, out="hash_hash", prog="entries_twice",
         specials=False, seed=0)   # (crashed: one hash key inserted by both writes)
def test_writes_over_earlier_writes_match_numpy(shape, density, fmts, fill, out, prog, specials, seed):
    rng = np.random.default_rng(seed)
    a, b = (random_sparse(shape, d, rng, fill=fill) for d in density)
    if specials and a.size:
        a.flat[rng.integers(a.size)] = np.nan if fill == fill else np.inf
        b.flat[rng.integers(b.size)] = -np.inf
    A, B = operand(a, fmts[0], fill), operand(b, fmts[1], fill)
    if prog == "last_of_row":
        y = vector_format("hash" if "hash" in out[:4] else "sparse", fill)
        want = a[:, -1] if shape[1] else np.full(shape[0], fill)
        run_both(compile_program(last_of_row, y=y, A=A), want, A=A)
        return
    k = compile_program(rows_twice if prog == "rows_twice" else entries_twice, D=matrix_format(out, fill), A=A, B=B)
    run_both(k, b, canonical=out == "sparse_dense", A=A, B=B)
