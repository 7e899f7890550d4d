"""2-D convolution with offsets and coalesce padding, and symmetric SpMV from a stored
upper triangle, against numpy."""

import numpy as np
import pytest

from compiler import Tensor
from compiler.levels import Dense, Element, SparseList
from compiler.looplets import compile_program, loop_program


def sparse(shape, density, seed=0):
    rng = np.random.default_rng(seed)
    return np.where(rng.random(shape) < density, rng.random(shape) + 0.5, 0.0)


@loop_program
def conv2d(B, A, F):
    for i in _:
        for j in _:
            for di in _:
                for dj in _:
                    B[i, j] += coalesce(A[~(i + di - 1), ~(j + dj - 1)], 0.0) * F[di, dj]


def conv2d_ref(a, f):
    m, n = a.shape
    pad = np.zeros((m + 2, n + 2))
    pad[1:-1, 1:-1] = a
    return np.array([[np.sum(pad[i:i + 3, j:j + 3] * f) for j in range(n)] for i in range(m)])


@pytest.mark.parametrize("shape,density,fmt", [((1, 1), 1.0, "csr"), ((6, 9), 0.3, "csr"),
                                               ((12, 10), 0.05, "csr"), ((7, 7), 0.5, "dense"),
                                               ((8, 5), 0.2, "dcsr")])
def test_conv2d_with_offsets_and_padding(shape, density, fmt):
    a = sparse(shape, density, 1)
    f = np.array([[0.5, 1.0, -1.0], [2.0, -3.0, 0.25], [1.0, 0.0, 4.0]])
    A = Tensor.from_numpy(a, fmt)
    F = Tensor.from_numpy(f, "dense")
    B = Tensor.from_numpy(np.zeros(shape), "dense")
    k = compile_program(conv2d, B=B, A=A, F=F)
    np.testing.assert_allclose(k(A=A, F=F).to_numpy(), conv2d_ref(a, f))


@loop_program
def symv(y, A, x):
    for i in _:
        for j in _:
            if i <= j:
                y[i] += A[i, j] * x[j]
            if i < j:
                y[j] += A[i, j] * x[i]


@pytest.mark.parametrize("n,density,fmt", [(1, 1.0, "csr"), (8, 0.4, "csr"), (30, 0.1, "csr"),
                                           (12, 0.3, Dense(SparseList(Element(0.0))))])
def test_symmetric_spmv_from_a_stored_upper_triangle(n, density, fmt):
    s = sparse((n, n), density, 2)
    S = np.triu(s) + np.triu(s, 1).T  # the symmetric matrix; only its upper triangle is stored
    U = Tensor.from_numpy(np.triu(S), fmt)
    xd = np.arange(n, dtype=float) + 1.0
    x = Tensor.from_numpy(xd, "dense")
    k = compile_program(symv, y="dense", A=U, x=x)
    np.testing.assert_allclose(k(A=U, x=x).to_numpy(), S @ xd)
    # the masks read only the upper triangle: a lower triangle in storage is ignored
    F = Tensor.from_numpy(np.triu(S) + 100.0 * np.tril(s, -1), fmt)
    np.testing.assert_allclose(k(A=F, x=x).to_numpy(), S @ xd)
