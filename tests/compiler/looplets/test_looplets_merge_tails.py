"""What a merge leaves of a fiber is walked from where the merge left it: in ``A + B`` of CSR, A's
entries past B's last are walked with no search first, since the merge's step loop stops each
fiber at its first entry past the merge's stop (the running position there); of COO, A's rows past
B's last likewise (a COO mode's stepper moves over segments, not positions). A search is still
emitted where the walk does not start there (a window's start; a phase no loop walked)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import re

import compiler as ss
from compiler.imperative.ir import SEARCH_FUNCTIONS, Call
from compiler.imperative.traverse import walk
from compiler.reference import evaluate


def searches(kernel) -> list:
    """The searches of the kernel's final IR: the calls of the search helpers (``seek(A1_idx, q, stop,
    j)``: :mod:`compiler.imperative.search`) into a coordinate array."""
    fn = kernel.trace.find("imperative")[0].after
    return [n for n in walk(fn.body) if isinstance(n, Call) and n.function in SEARCH_FUNCTIONS
            and re.search(r"_idx\d*$", n.args[0].buffer)]


PROGRAMS = ["C[i, j] = A[i, j] + B[i, j]", "C[i, j] = max(A[i, j], B[i, j])", "C[i, j] = A[i, j] * B[i, j]"]


@pytest.mark.parametrize("program", PROGRAMS)
def test_csr_merges_walk_their_tails_without_a_search(program):
    A = ss.Tensor.from_scipy(sp.random(6, 9, density=0.4, format="csr", random_state=1), "csr")
    B = ss.Tensor.from_scipy(sp.random(6, 9, density=0.4, format="csr", random_state=2), "csr")
    k = ss.lower(program, strategy="looplets", A=A, B=B, C="csr")
    assert searches(k) == [], k.c_source
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), evaluate(program, A=A, B=B)[0])


@pytest.mark.parametrize("out", ["coo", "dense"])
def test_coo_merges_walk_their_tails_without_a_search(out):
    # (before, each tail searched A0_idx0 for its first row at or past the merge's stop)
    A, B = (ss.Tensor.from_numpy(sp.random(6, 9, density=0.4, random_state=r).toarray(), "coo") for r in (1, 2))
    program = "C[i, j] = A[i, j] + B[i, j]"
    k = coo_kernel(program, out)
    assert searches(k) == [], k.c_source
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), evaluate(program, A=A, B=B)[0])


def test_two_sparse_vectors_sum_without_a_search():
    x = ss.Tensor.from_numpy(np.array([0, 1.0, 0, 2, 0, 0, 3]), "sparse")
    y = ss.Tensor.from_numpy(np.array([4.0, 0, 0, 5, 0, 0, 0]), "sparse")
    k = ss.lower("z[i] = x[i] + y[i]", strategy="looplets", x=x, y=y, z="sparse")
    assert searches(k) == []
    np.testing.assert_array_equal(k(x=x, y=y).to_numpy(), [4.0, 1, 0, 7, 0, 0, 3])


def rows(draw, n, m):
    """A CSR matrix of n rows and m columns whose rows end anywhere (empty, one entry, full)."""
    dense = np.zeros((n, m))
    for r in range(n):
        cols = draw(st.lists(st.integers(0, m - 1), max_size=m, unique=True))
        dense[r, cols] = draw(st.lists(st.sampled_from([1.0, -2.0, 3.5]), min_size=len(cols), max_size=len(cols)))
    return dense


@st.composite
def operands(draw):
    n, m = draw(st.integers(1, 4)), draw(st.integers(1, 7))
    return rows(draw, n, m), rows(draw, n, m)


_KERNELS = {}


def kernel(program):
    if program not in _KERNELS:
        _KERNELS[program] = ss.lower(program, strategy="looplets", A="csr", B="csr", C="csr")
    return _KERNELS[program]


def coo_kernel(program, out):
    if (program, out) not in _KERNELS:
        _KERNELS[program, out] = ss.lower(program, strategy="looplets", A="coo", B="coo", C=out)
    return _KERNELS[program, out]


# (rows where one operand ends before the other starts, and a row empty in one of them)
@example((np.array([[1.0, 2.0, 0, 0, 0], [0, 0, 0, 0, 0]]), np.array([[0, 0, 0, 3.0, 4.0], [5.0, 0, 0, 0, 6.0]])))
@example((np.array([[0, 0, 0, 3.0, 4.0]]), np.array([[1.0, 2.0, 0, 0, 0]])))
@settings(max_examples=30, deadline=None)
@given(operands())
def test_merges_with_their_tails_agree_with_the_oracle(ab):
    a, b = ab
    A, B = ss.Tensor.from_numpy(a, "csr"), ss.Tensor.from_numpy(b, "csr")
    for program in PROGRAMS:
        np.testing.assert_array_equal(kernel(program)(A=A, B=B).to_numpy(), evaluate(program, A=a, B=b)[0])
    # COO operands: rows (segments) of either ending anywhere, or missing
    A, B = ss.Tensor.from_numpy(a, "coo"), ss.Tensor.from_numpy(b, "coo")
    for program, out in ((PROGRAMS[0], "coo"), (PROGRAMS[0], "dense"), (PROGRAMS[1], "coo")):
        np.testing.assert_array_equal(coo_kernel(program, out)(A=A, B=B).to_numpy(), evaluate(program, A=a, B=b)[0])


def test_a_walk_from_a_windows_start_still_searches():
    from compiler.looplets import compile_program, loop_program
    read = loop_program(source="def r(y, A):\n    for i in range(3):\n        y[i] = A[window(i, 3, 6)]\n")
    A = ss.Tensor.from_numpy(np.array([1.0, 0, 2, 0, 3, 0, 4, 5]), "sparse")
    k = compile_program(read, y="dense", A=A)
    assert searches(k), k.c_source
    np.testing.assert_array_equal(k(A=A).to_numpy(), [0, 3, 0])
