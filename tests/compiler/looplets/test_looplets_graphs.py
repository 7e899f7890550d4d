"""Graph kernels as loop programs: galloping triangle counting, a BFS push step and a
Bellman-Ford relaxation step (min-plus with fill inf), each checked against numpy."""

import re

import numpy as np
import pytest

from compiler import Tensor
from compiler.looplets import compile_program, loop_program


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
    assert re.search(r" = seek_int(32|64)\(A1_idx, ", k.c_source)  # the galloping seek, its helper called
    assert any(s.stage == "lower:Jumper" for s in k.trace.steps)
    walk = compile_program(tri_walk, C="dense", A=A)
    assert not any(s.stage == "lower:Jumper" for s in walk.trace.steps)  # walking follows, never leads


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


# --------------------------------------------------------------------------- BFS pull (Finch Fig 24)

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from scipy.sparse import csr_matrix  # noqa: E402
from scipy.sparse.csgraph import shortest_path  # noqa: E402

from compiler.levels import Dense, Element, Pattern, SparseByteMap, SparseList  # noqa: E402
from compiler.looplets.scalars import ShortCircuitScalar  # noqa: E402


@loop_program
def bfs_pull(P, F, AT, V, p=ShortCircuitScalar(-1)):
    """One pull step: each unvisited k takes the first in-neighbour j in the frontier as its
    parent. 0-based, so "no parent" is -1 (the paper's 1-based code uses 0): p reduces with
    choose(-1), which any j annihilates, so the j loop stops at the first parent found."""
    for k in _:
        if not V[k]:
            p[...] = -1
            for j in _:
                if F[follow(j)] and AT[k, j]:
                    p <<= choose(-1), j
            if p != -1:
                P[k] = p


PARENTS = Dense(Element(-1, dtype="int64"))
FRONTIERS = {"dense": Dense(Element(False)), "list": SparseList(Pattern()),
             "bytemap": SparseByteMap(Element(False))}


def pull_step_reference(Ad, frontier, visited):
    """numpy: the smallest in-neighbour in the frontier of each unvisited vertex, else -1."""
    hits = Ad & frontier[:, None] & ~visited[None, :]  # hits[j, k]: edge j -> k from the frontier
    return np.where(hits.any(axis=0), hits.argmax(axis=0), -1)


def bfs(Ad, source, frontier_format, checked=False):
    """Breadth-first search by pull steps: (parent, level) of every vertex (-1: unreached)."""
    n = len(Ad)
    AT = Tensor.from_numpy(Ad.T.copy(), Dense(SparseList(Pattern())))  # AT[k, :] = in-neighbours of k
    parent, level = np.full(n, -1), np.full(n, -1)
    parent[source], level[source] = source, 0
    frontier = np.zeros(n, bool)
    frontier[source] = True
    visited = frontier.copy()
    kernel = None
    depth = 0
    while frontier.any():
        F = Tensor.from_numpy(frontier, frontier_format)
        V = Tensor.from_numpy(visited, "dense")
        kernel = kernel or compile_program(bfs_pull, P=PARENTS, F=F, AT=AT, V=V, checked=checked)
        P = kernel(F=F, AT=AT, V=V).to_numpy()
        np.testing.assert_array_equal(P, pull_step_reference(Ad, frontier, visited))
        found = P >= 0
        depth += 1
        parent[found], level[found] = P[found], depth
        visited |= found
        frontier = found
    return parent, level


def random_graph(n, density, seed):
    rng = np.random.default_rng(seed)
    Ad = rng.random((n, n)) < density
    np.fill_diagonal(Ad, False)
    return Ad


@settings(max_examples=7, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 24), st.sampled_from([0.0, 0.05, 0.15, 0.4]), st.integers(0, 2**31),
       st.sampled_from(sorted(FRONTIERS)), st.booleans())
def test_bfs_pull_matches_scipy_breadth_first_levels(n, density, seed, frontier, checked):
    Ad = random_graph(n, density, seed)
    source = seed % n
    parent, level = bfs(Ad, source, FRONTIERS[frontier], checked)
    dist = shortest_path(csr_matrix(Ad.astype(float)), unweighted=True, indices=source)
    np.testing.assert_array_equal(level, np.where(np.isinf(dist), -1, dist).astype(int))
    for k in np.flatnonzero(level > 0):  # every parent is an in-neighbour one level up
        assert Ad[parent[k], k] and level[parent[k]] == level[k] - 1


def test_bfs_pull_breaks_at_the_first_parent():
    Ad = random_graph(12, 0.3, 1)
    AT = Tensor.from_numpy(Ad.T.copy(), Dense(SparseList(Pattern())))
    F = Tensor.from_numpy(np.arange(12) % 3 == 0, FRONTIERS["list"])
    V = Tensor.from_numpy(np.arange(12) % 4 == 0, "dense")
    k = compile_program(bfs_pull, P=PARENTS, F=F, AT=AT, V=V)
    src = k.c_source
    # the loop over the stored in-neighbours of k starts with the case split, then reads F by search
    walk = src.split("while (qAT < qAT_stop) {")[1]
    assert walk.lstrip().startswith("if (p_2 != (-1)) {\n") and walk.split("}")[0].strip().endswith("break;")
    assert "F0_idx" in walk  # F[follow(j)] is located, not coiterated: AT leads
    assert k.trace.find("lower:ShortCircuit")
    frontier, visited = np.arange(12) % 3 == 0, np.arange(12) % 4 == 0
    np.testing.assert_array_equal(k(F=F, AT=AT, V=V).to_numpy(), pull_step_reference(Ad, frontier, visited))
