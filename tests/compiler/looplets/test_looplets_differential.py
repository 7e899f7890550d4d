"""Random differential tests: looplet kernels against numpy over formats, shapes, densities, runs."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseCOO,
                             SparseList, SparsePoint, SparseRunList)
from compiler.looplets import compile_program, loop_program

LEVELS = [Dense, SparseList, SparseBand, SparseBlockList, RunList, SparseRunList, SparseByteMap]


@st.composite
def matrices(draw, max_dim=7):
    m = draw(st.integers(0, max_dim))
    n = draw(st.integers(1, max_dim))
    density = draw(st.sampled_from([0.0, 0.2, 0.5, 1.0]))
    runs = draw(st.booleans())
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    M = np.round(rng.random((m, n)) * 4, 1) * (rng.random((m, n)) < density)
    if runs:  # long runs of repeated values
        M = np.repeat(M[:, : max(1, n // 3)], 3, axis=1)[:, :n]
        if M.shape[1] < n:
            M = np.pad(M, ((0, 0), (0, n - M.shape[1])))
    return M


@loop_program
def spmv(y, A, x):
    for i in _:
        for j in _:
            y[i] += A[i, j] * x[j]


@loop_program
def total(s, A):
    for i in _:
        for j in _:
            s += A[i, j]


@loop_program
def ewise(C, A, B):
    for i in _:
        for j in _:
            C[i, j] = A[i, j] * B[i, j] + A[i, j]


SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(matrices(), st.sampled_from(LEVELS))
def test_spmv(M, level):
    A = Tensor.from_numpy(M, Dense(level(Element(0.0))))
    x = Tensor.from_numpy(np.arange(M.shape[1], dtype=float) + 1, "dense")
    k = compile_program(spmv, y="dense", A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), M @ x.to_numpy())


@SETTINGS
@given(matrices(), st.sampled_from(LEVELS))
def test_sum(M, level):
    A = Tensor.from_numpy(M, Dense(level(Element(0.0))))
    k = compile_program(total, s=Element(0.0), A=A)
    assert k(A=A) == pytest.approx(M.sum())


#: every output format the looplet strategy writes a matrix into (values compared; SparsePoint and
#: SparseInterval hold at most one entry or run per row, see test_looplets_structured_outputs)
OUTPUTS = ["dense", "csr", Dense(SparseBlockList(Element(0.0))), Dense(SparseBand(Element(0.0))),
           SparseCOO(2, Element(0.0)), Dense(SparseRunList(Element(0.0))), Dense(RunList(Element(0.0)))]


@SETTINGS
@given(matrices(), st.sampled_from(LEVELS), st.sampled_from(LEVELS), st.sampled_from(OUTPUTS))
def test_elementwise(M, la, lb, out):
    A = Tensor.from_numpy(M, Dense(la(Element(0.0))))
    B = Tensor.from_numpy(M[::-1].copy(), Dense(lb(Element(0.0))))
    k = compile_program(ewise, C=out, A=A, B=B)
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), M * M[::-1] + M)


def _fmt(level):
    """A 2-D format: ``level`` under Dense, or COO for SparseCOO."""
    return SparseCOO(2, Element(0.0)) if level is SparseCOO else Dense(level(Element(0.0)))


@SETTINGS
@given(matrices(), st.sampled_from(LEVELS + [SparseCOO]), st.sampled_from(LEVELS + [SparseCOO]))
def test_spmv_and_sum_all_read_formats(M, la, lb):
    A = Tensor.from_numpy(M, _fmt(la))
    x = Tensor.from_numpy(np.arange(M.shape[1], dtype=float) + 1, "dense")
    k = compile_program(spmv, y="dense", A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), M @ x.to_numpy())
    B = Tensor.from_numpy(M[::-1].copy(), _fmt(lb))
    k = compile_program(ewise, C="dense", A=A, B=B)
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), M * M[::-1] + M)


@SETTINGS
@given(matrices())
def test_sparse_point_spmv(M):
    # keep the first nonzero of each row
    P = np.zeros_like(M)
    for r in range(M.shape[0]):
        nz = np.flatnonzero(M[r])
        if nz.size:
            P[r, nz[-1]] = M[r, nz[-1]]
    A = Tensor.from_numpy(P, Dense(SparsePoint(Element(0.0))))
    x = Tensor.from_numpy(np.arange(M.shape[1], dtype=float) + 1, "dense")
    k = compile_program(spmv, y="dense", A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), P @ x.to_numpy())
