"""Graph kernels as loop programs: galloping triangle counting, a BFS push step and a
Bellman-Ford relaxation step (min-plus with fill inf), each checked against numpy."""

import numpy as np
import pytest

from compiler import Tensor
from compiler.looplets import ProgramError, compile_program, loop_program


@loop_program
def tri_gallop(C, A):
    for i in _:
        for j in _:
            for k in _:
                C += A[i, j] * A[j, gallop(k)] * A[i, gallop(k)]


@loop_program
def tri_walk(C, A):
    for i in _:
        for j in _:
            for k in _:
                C += A[i, j] * A[j, k] * A[i, k]


def power_law_graph(n, m, seed=0):
    """Lower triangle of a symmetric preferential-attachment-like graph (heavy-tailed degrees)."""
    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, n + 1) ** 0.8
    p = w / w.sum()
    a, b = rng.choice(n, m, p=p), rng.choice(n, m, p=p)
    M = np.zeros((n, n))
    M[a, b] = 1.0
    M = np.maximum(M, M.T)
    np.fill_diagonal(M, 0)
    return np.tril(M, -1)


@pytest.mark.parametrize("n,m,seed", [(1, 0, 0), (5, 0, 1), (40, 200, 2), (120, 900, 3)])
def test_triangle_counting_gallop_matches_numpy(n, m, seed):
    L = power_law_graph(n, m, seed)
    A = Tensor.from_numpy(L, "csr")
    ref = np.einsum("ij,jk,ik->", L, L, L)
    for prog in (tri_walk, tri_gallop):
        assert compile_program(prog, C="dense", A=A)(A=A) == ref


def test_gallop_is_a_jumper_with_exponential_search():
    A = Tensor.from_numpy(power_law_graph(20, 60), "csr")
    k = compile_program(tri_gallop, C="dense", A=A)
    assert "step = step * 2" in k.c_source  # the galloping seek
    assert any(s.stage == "lower:Jumper" for s in k.trace.steps)
    walk = compile_program(tri_walk, C="dense", A=A)
    assert "step = step * 2" not in walk.c_source


def test_gallop_on_a_level_without_the_protocol_is_a_clear_error():
    @loop_program
    def s(C, x):
        for i in _:
            C += x[gallop(i)]
    x = Tensor.from_numpy(np.ones(4), "dense")
    with pytest.raises(Exception, match="no gallop protocol"):
        compile_program(s, C="dense", x=x)


@loop_program
def bfs_push(N, F, A, V):
    for i in _:
        for j in _:
            N[j] <<= max, F[i] * A[i, j] * (1.0 - V[j])


def test_bfs_push_step():
    rng = np.random.default_rng(4)
    n = 30
    Ad = (rng.random((n, n)) < 0.1).astype(float)
    visited = (rng.random(n) < 0.3).astype(float)
    frontier = np.where((rng.random(n) < 0.2) & (visited == 0), 1.0, 0.0)
    A = Tensor.from_numpy(Ad, "csr")
    F = Tensor.from_numpy(frontier, "sparse")
    V = Tensor.from_numpy(visited, "dense")
    k = compile_program(bfs_push, N="dense", F=F, A=A, V=V)
    got = k(F=F, A=A, V=V).to_numpy()
    ref = ((frontier @ Ad > 0) & (visited == 0)).astype(float)
    np.testing.assert_array_equal(got, ref)


@loop_program
def bellman_ford(D, d, W):
    D[...] = inf
    for j in _:
        D[j] <<= min, d[j]
    for i in _:
        for j in _:
            D[j] <<= min, d[i] + W[i, j]


def test_bellman_ford_relaxation_min_plus_with_fill_inf():
    rng = np.random.default_rng(5)
    n = 25
    Wd = np.where(rng.random((n, n)) < 0.15, rng.integers(1, 9, (n, n)).astype(float), np.inf)
    d = np.full(n, np.inf)
    d[0] = 0.0
    d[rng.integers(0, n, 3)] = rng.random(3) * 5
    W = Tensor.from_numpy(Wd, "csr", fill=np.inf)
    dt = Tensor.from_numpy(d, "dense")
    k = compile_program(bellman_ford, D="dense", d=dt, W=W)
    for _ in range(3):  # a few rounds: each is one relaxation
        got = k(d=dt, W=W).to_numpy()
        ref = np.minimum(d, (d[:, None] + Wd).min(axis=0))
        np.testing.assert_array_equal(got, ref)
        d = ref
        dt = Tensor.from_numpy(d, "dense")
    # the fill region of W (inf) relaxes nothing: only stored edges are visited
    assert "W1_idx" in k.c_source
