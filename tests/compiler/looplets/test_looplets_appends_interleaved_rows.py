"""Rows of a sorted sparse output interleaved by two or more loops (issue 30; compiler.looplets.appends).

``D[t + o * 2, j] = A[o, j]`` then ``D[t + 1 + o * 2, k] = B[o, k]`` under a one-step ``t``, each
row by its own loop (numpy's ``stack([A, B], axis=1).reshape(2 * n, m)``), appends row ``2 o`` whole,
then row ``2 o + 1``, then the next iteration's: in order. Into a DCSR it was refused as two
statements appending one entry of its row level; into CSR and COO as two loops over ``j`` starting
at 0 in one fiber. Now the rows are proven in order (each one past the earlier's within its block of
rows, before the earlier's of the next iteration), and what is not stays refused: both rows in one
loop (it would go back and forth), a row before the earlier's, a row past the block. Oracles: numpy
and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.format import Format
from compiler.levels import Dense, Element, SparseList
from compiler.looplets import ProgramError, compile_program, loop_program
from compiler.testing import assert_canonical, random_sparse


def rows_by_loops(first, second, width=2):
    """``D[t + first + o * width, j] = A[o, j]`` over ``j``, then ``B``'s row at ``second`` over ``k``."""
    at = lambda c: "t" if c == 0 else f"t + {c}"  # noqa: E731
    return loop_program(source=f"def rows(D, A, B):\n    for o in _:\n        for t in range(1):\n"
                               f"            for j in _:\n                D[{at(first)} + o * {width}, j] = A[o, j]\n"
                               f"            for k in _:\n                D[{at(second)} + o * {width}, k] = B[o, k]\n")


two_rows = rows_by_loops(0, 1)


@loop_program
def three_rows(D, A, B, C):
    for o in _:
        for t in range(1):
            for j in _:
                D[t + o * 3, j] = A[o, j]
            for j in _:
                D[t + 1 + o * 3, j] = B[o, j]
            for j in _:
                D[t + 2 + o * 3, j] = C[o, j]


@loop_program
def rows_in_one_loop(D, A, B):
    for o in _:
        for t in range(1):
            for j in _:
                D[t + o * 2, j] = A[o, j]
                D[t + 1 + o * 2, j] = B[o, j]


rows_backwards, rows_past_the_block = rows_by_loops(1, 0), rows_by_loops(0, 2)


OUTPUTS = ["dcsr", "csr", "coo", "sparse_dense"]


def output(name, fill, shape):
    fmt = Format(SparseList(Dense(Element(fill)))) if name == "sparse_dense" else ss.parse_format(name, fill=fill)
    return Tensor.from_numpy(np.full(shape, fill), fmt)


def check(k, want, **tensors):
    got = k(**tensors)
    got.validate()
    assert_canonical(got, want)
    assert_canonical(k.interpret(**tensors), want)


@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan])
@pytest.mark.parametrize("out", OUTPUTS)
def test_rows_interleaved_by_their_own_loops_are_appended_in_order(out, fill):
    rng = np.random.default_rng(4)
    a, b, c = (random_sparse((3, 4), 0.5, rng, fill=fill, empty=(e,)) for e in (1, 2, 0))
    a[0, 0], b[2, 3] = (np.inf, -np.inf) if fill == fill else (np.nan, np.inf)
    if fill == fill:
        c[1, 1] = np.nan
    A, B, C = Tensor.from_numpy(a, "csr", fill=fill), Tensor.from_numpy(b, "coo", fill=fill), \
        Tensor.from_numpy(c, "dcsr", fill=fill)
    k = compile_program(two_rows, D=output(out, fill, (6, 4)), A=A, B=B)
    check(k, np.stack([a, b], axis=1).reshape(6, 4), A=A, B=B)
    empty = Tensor.from_numpy(np.full((3, 4), fill), "csr", fill=fill)
    check(k, np.stack([np.full((3, 4), fill), b], axis=1).reshape(6, 4), A=empty, B=B)
    k = compile_program(three_rows, D=output(out, fill, (9, 4)), A=A, B=B, C=C)
    check(k, np.stack([a, b, c], axis=1).reshape(9, 4), A=A, B=B, C=C)


@pytest.mark.parametrize("out", ["dcsr", "csr", "coo"])
@pytest.mark.parametrize("prog, why", [
    (rows_in_one_loop, r"written by two statements \(lines \d+ and \d+\)"),
    (rows_backwards, r"written by two (statements|loops over \w) \(lines \d+ and \d+\)"),
    (rows_past_the_block, r"written by two (statements|loops over \w) \(lines \d+ and \d+\)")])
def test_rows_not_provably_in_order_are_still_refused(prog, why, out):
    A = Tensor.from_numpy(np.array([[1.0, 0], [0, 2]]), "csr")
    with pytest.raises(ProgramError, match=why):
        compile_program(prog, D=out, A=A, B=A)


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(0, 4), cols=st.integers(0, 4), density=st.sampled_from([0.0, 0.4, 1.0]),
       fmts=st.tuples(st.sampled_from(["csr", "coo", "dcsr", "dense"]), st.sampled_from(["csr", "coo", "dense"])),
       fill=st.sampled_from([0.0, 1.0, np.nan]), out=st.sampled_from(OUTPUTS), seed=st.integers(0, 2 ** 16))
def test_interleaved_rows_match_numpy(rows, cols, density, fmts, fill, out, seed):
    rng = np.random.default_rng(seed)
    a, b = (random_sparse((rows, cols), density, rng, fill=fill) for _ in range(2))
    A, B = (Tensor.from_numpy(x, f, fill=fill) for x, f in zip((a, b), fmts))
    k = compile_program(two_rows, D=output(out, fill, (2 * rows, cols)), A=A, B=B)
    check(k, np.stack([a, b], axis=1).reshape(2 * rows, cols), A=A, B=B)
