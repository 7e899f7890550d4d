"""Finch's graph case studies as the paper writes them (compiler.looplets.case_studies): BFS push
and pull steps writing the next frontier and the parents, Bellman-Ford writing the distances and
the changed set, run to convergence and checked against scipy.sparse.csgraph, by example (a
road-like grid, a scale-free graph) and by hypothesis (directed and undirected, disconnected,
self loops, negative weights without negative cycles, graphs without edges); each kernel is
also checked against the IR interpreter."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import NegativeCycleError, bellman_ford as scipy_bellman_ford
from scipy.sparse.csgraph import breadth_first_order, shortest_path

from compiler import Tensor
from compiler.errors import UsageError
from compiler.looplets import compile_program
from compiler.looplets.case_studies import (BFS, BY_COLUMNS, FRONTIER, PARENT_FRONTIER, BellmanFord,
                                            bellman_ford, bellman_ford_parents, bellman_ford_step, bfs, bfs_pull,
                                            bfs_pull_parents, bfs_push, bfs_push_parents, bfs_visit)
from compiler.looplets.direction import DirectionRule
from compiler.looplets.scalars import Scalar
from compiler.format import Format
from compiler.levels import Dense, Element, Pattern, SparseList


def grid_graph(rows, cols, holes=()):
    """A road-like graph: a grid whose streets go both ways, some crossings closed (bounded
    degree, large diameter, as the paper's road networks)."""
    n = rows * cols
    G = sp.lil_array((n, n))
    for r in range(rows):
        for c in range(cols):
            u = r * cols + c
            for v in ((u + 1) if c + 1 < cols else None, (u + cols) if r + 1 < rows else None):
                if v is not None and u not in holes and v not in holes:
                    G[u, v] = G[v, u] = 1 + (u * 7 + v) % 5
    return G.tocsr()


def scale_free_graph(n, m, seed):
    """A directed preferential-attachment graph (heavy-tailed degrees, as the paper's social graphs),
    weights 1 to 9; a fixed seed, so the same graph each run."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n + 1) ** 0.9
    p /= p.sum()
    u, v = rng.choice(n, m, p=p), rng.choice(n, m)
    keep = u != v
    G = sp.csr_array((rng.integers(1, 10, m)[keep].astype(float), (u[keep], v[keep])), shape=(n, n))
    G.sum_duplicates()
    return G


def structure(G):
    """Where ``G`` stores an entry (a stored 0 is an edge for csgraph)."""
    C = sp.coo_array(G)
    out = np.zeros(G.shape, bool)
    out[C.row, C.col] = True
    return out


def check_bfs(G, source, direction):
    got = bfs(G, source, direction)
    hops = shortest_path(G, unweighted=True, indices=source)
    want = np.where(np.isinf(hops), -1, hops).astype(int)
    np.testing.assert_array_equal(got.levels, want)
    order, _ = breadth_first_order(G, source)
    np.testing.assert_array_equal(np.flatnonzero(got.parents >= 0), np.sort(order))
    dense = structure(G)
    assert got.parents[source] == source
    for k in np.flatnonzero(got.levels > 0):   # a parent is an in-neighbour one level up
        j = got.parents[k]
        assert dense[j, k] and got.levels[j] == got.levels[k] - 1
    return got


def check_shortest_paths(G, source):
    got = bellman_ford(G, source)
    want = scipy_bellman_ford(G, indices=source)
    np.testing.assert_array_equal(got.distances, want)
    dense, edges = G.toarray(), structure(G)
    assert got.parents[source] == -1
    for i in np.flatnonzero(np.isfinite(got.distances)):
        if i == source:
            continue
        j = got.parents[i]   # the tree's edge attains i's distance
        assert j >= 0 and edges[j, i] and got.distances[j] + dense[j, i] == got.distances[i]
    assert np.all(got.parents[np.isinf(got.distances)] == -1)
    return got


ROAD = grid_graph(12, 15, holes={20, 21, 22, 50, 87, 120, 121})
SCALE_FREE = scale_free_graph(300, 1500, seed=7)


@pytest.mark.parametrize("direction", ["push", "pull", "auto"])
@pytest.mark.parametrize("graph", ["road", "scale_free"])
def test_bfs_to_convergence_matches_scipy(graph, direction):
    G = ROAD if graph == "road" else SCALE_FREE
    got = check_bfs(G, 0, direction)
    # (the last round finds no vertex; none runs once every vertex is reached, as LAGraph's loop ends)
    assert len(got.directions) == got.levels.max() + bool((got.levels < 0).any())
    if direction != "auto":
        assert set(got.directions) == {direction}


def replayed_directions(G, got, **params):
    """The directions LAGraph's rule gives for the frontiers scipy's hops make (level ``r``'s vertices
    before round ``r + 1``), counting their out-edges from ``G``: what ``bfs`` should have chosen."""
    hops = got.levels
    out_degree = np.diff(sp.csr_array(G).indptr)
    rule = DirectionRule(G.shape[0], sp.csr_array(G).nnz, **params)
    return tuple(rule(int((hops == r).sum()), lambda r=r: out_degree[hops == r].sum())
                 for r in range(len(got.directions)))


@pytest.mark.parametrize("graph", ["road", "scale_free"])
def test_auto_direction_is_lagraphs_rule_on_the_searchs_frontiers(graph):
    G = ROAD if graph == "road" else SCALE_FREE
    got = check_bfs(G, 0, "auto")
    assert got.directions == replayed_directions(G, got)
    assert got.directions[0] == "push" and "pull" in got.directions
    pushing = bfs(G, 0, "auto", alpha=1e-9)   # (the frontier's edges never outweigh the rest)
    pulling = bfs(G, 0, "auto", alpha=1e9, beta2=1e9)   # (they always do; a pull never turns back)
    assert set(pushing.directions) == {"push"} and set(pulling.directions) == {"pull"}
    np.testing.assert_array_equal(pushing.levels, got.levels)
    np.testing.assert_array_equal(pulling.levels, got.levels)


def test_the_direction_rule_turns_as_lagraph_turns():
    def never():
        raise AssertionError("the rule counts no edges after a pull")
    n, edges = 1000, 8000   # (n / beta1 = 125, n / beta2 = 1)
    rule = DirectionRule(n, edges)
    # unexplored 7960: 40 edges are few; 7460: 500 are few; 2460: 5000 are many, the frontier growing
    assert [rule(1, lambda: 40), rule(30, lambda: 500), rule(400, lambda: 5000)] == ["push", "push", "pull"]
    assert rule(300, never) == "pull", "shrinking, but to more than n / beta2 vertices"
    assert rule(1, never) == "push", "shrunk to n / beta2"
    assert rule(100, never) == "push", "growing, but to no more than n / beta1 vertices"
    assert rule(200, never) == "pull", "growing past n / beta1 after a pull"
    still = DirectionRule(n, edges)
    assert [still(5, lambda: 100), still(5, lambda: 7000)] == ["push", "push"], "a frontier that does not grow"
    sparse = DirectionRule(100, 50)   # (fewer edges than vertices: push to the end)
    assert {sparse(k, never) for k in (1, 60, 90, 2)} == {"push"}


def undirected(n, edges):
    G = sp.lil_array((n, n))
    for u, v in edges:
        G[u, v] = G[v, u] = 1
    return G.tocsr()


#: 0 - 1 - {2, 3, 4} - {5, ..., 10} (each of 2, 3, 4 joined to each of 5..10): 44 stored edges, n = 11
BROOM = undirected(11, [(0, 1), (1, 2), (1, 3), (1, 4)] + [(u, v) for u in (2, 3, 4) for v in range(5, 11)])
#: 0 - {1, ..., 6} - 7 - 8 - 9 (a fan, then a tail) and vertex 10 alone: 28 stored edges, n = 11
FAN = undirected(11, [(0, v) for v in range(1, 7)] + [(v, 7) for v in range(1, 7)] + [(7, 8), (8, 9)])


@pytest.mark.parametrize("G, params, want", [
    # LAGraph's rule by hand (LG_BreadthFirstSearch_SSGrB.c): round 1, frontier {0}, growing (1 > 0):
    # its 1 edge against 43 unexplored / 8, push; round 2, {1}, not growing, push; round 3,
    # {2, 3, 4} growing, 21 edges > (39 - 21) / 8: pull, which finds 5..10: every vertex is reached,
    # so no fourth round
    (BROOM, {}, ("push", "push", "pull")),
    # n / beta2 = 5: round 1, {0}: 6 edges > 22 / 8, pull; round 2, {1..6}: pull (not shrinking);
    # round 3, {7}: shrunk to 1 <= 5, push; round 4, {8}: after a pull, not growing, push; round 5,
    # {9}: push, finding nothing (vertex 10 is never reached)
    (FAN, dict(beta2=2.0), ("pull", "pull", "push", "push", "push")),
    # with alpha = 1: round 1's 6 edges are not more than 22 / 1, push; round 2, {1..6}: 12 edges >
    # 10 / 1, pull; round 3, {7}: push; round 4, {8}: 10 edges unexplored < 11 vertices, push to the end
    (FAN, dict(alpha=1.0, beta2=2.0, beta1=11.0), ("push", "pull", "push", "push", "push")),
    # a path 0 -> 1 -> 2 -> 3: fewer edges (3) than vertices, push to the end; 3 rounds reach all
    (sp.csr_array((np.ones(3), ([0, 1, 2], [1, 2, 3])), shape=(4, 4)), {}, ("push",) * 3),
    (sp.csr_array(np.zeros((1, 1))), {}, ()),   # one vertex: reached before any round
])
def test_a_search_turns_and_ends_as_lagraphs_on_crafted_graphs(G, params, want):
    got = bfs(G, 0, "auto", **params)
    assert got.directions == want
    assert got.directions == replayed_directions(G, got, **params)
    np.testing.assert_array_equal(got.levels, check_bfs(G, 0, "auto").levels)


#: BROOM with self loops at 1 and 7, and 11 -> 0 (an in-edge of the source) from a vertex no search reaches
LOOPED = sp.csr_array(sp.vstack([sp.hstack([BROOM + sp.csr_array(([1.0, 1.0], ([1, 7], [1, 7])), shape=(11, 11)),
                                            sp.csr_array((11, 1))]),
                                 sp.csr_array(([1.0], ([0], [0])), shape=(1, 12))]))


@pytest.mark.parametrize("direction", ["push", "pull", "auto"])
@pytest.mark.parametrize("G, source", [(BROOM, 0), (BROOM, 7), (FAN, 0), (FAN, 10), (LOOPED, 0), (LOOPED, 11)])
def test_bfs_on_crafted_graphs_in_each_direction(G, source, direction):
    got = check_bfs(G, source, direction)
    if direction != "auto":
        assert set(got.directions) <= {direction}


@pytest.mark.parametrize("graph", ["road", "scale_free"])
def test_bellman_ford_to_convergence_matches_scipy(graph):
    G = ROAD if graph == "road" else SCALE_FREE
    got = check_shortest_paths(G, 3)
    assert got.rounds >= 2


@st.composite
def graphs(draw, negative=False):
    """A graph of 1 to 24 vertices, directed or not, maybe disconnected, with self loops; with
    ``negative``, directed weights ``c + p[u] - p[v]`` (positive ``c``): any cycle weighs its
    ``c``s, so there is no negative cycle, though single edges are negative."""
    n = draw(st.integers(1, 24))
    density = draw(st.sampled_from([0.0, 0.04, 0.12, 0.3]))
    seed = draw(st.integers(0, 2**32 - 1))
    directed = draw(st.booleans()) or negative
    loops = draw(st.booleans())
    rng = np.random.default_rng(seed)
    edges = rng.random((n, n)) < density
    if not loops:
        np.fill_diagonal(edges, False)
    weight = rng.integers(1, 9, (n, n)).astype(float)
    if negative:
        p = rng.integers(-6, 7, n).astype(float)
        weight = weight + p[:, None] - p[None, :]
        np.fill_diagonal(weight, rng.integers(1, 9, n))   # (a self loop is a cycle: positive)
        edges &= weight != 0   # (csgraph reads a stored 0 as no edge: leave those out)
    if not directed:
        edges |= edges.T
        weight = np.minimum(weight, weight.T)
    W = np.where(edges, weight, 0.0)
    return sp.csr_array(W), int(rng.integers(0, n))


#: the edges 0 -> 1 (weight 0, stored) and 1 -> 2; bfs failed on it ("a Pattern leaf stores True at
#: every position, but 1 of the values are False")
STORED_ZERO = sp.csr_array((np.array([0.0, 1.0]), (np.array([0, 1]), np.array([1, 2]))), shape=(3, 3))
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(graphs(), st.sampled_from(["push", "pull", "auto"]))
@example((sp.csr_array(np.zeros((1, 1))), 0), "push")                     # one vertex, no edge
@example((sp.csr_array(np.array([[1.0, 0], [0, 0]])), 1), "pull")          # a self loop, unreachable
@example((STORED_ZERO, 0), "push")                                             # a stored 0 is an edge
def test_bfs_matches_scipy_on_random_graphs(case, direction):
    G, source = case
    got = check_bfs(G, source, direction)
    if direction == "auto":   # (and with thresholds that make a small graph's search turn)
        assert got.directions == replayed_directions(G, got)
        params = dict(alpha=0.5, beta1=4.0, beta2=4.0)
        turning = bfs(G, source, "auto", **params)
        np.testing.assert_array_equal(turning.levels, got.levels)
        np.testing.assert_array_equal(turning.parents >= 0, got.parents >= 0)
        assert turning.directions == replayed_directions(G, turning, **params)


# (15 examples, not 25: each graph's size lowers the step again; reused rounds against fresh ones and scipy
# are tests/compiler/test_reuse_plans.py's property, on one kernel)
@settings(max_examples=7, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(graphs(), graphs(negative=True)))
@example((sp.csr_array(np.zeros((3, 3))), 2))                              # no edge
@example((sp.csr_array(np.array([[0, 5.0, 1.0], [0, 0, 0], [0, -3.0, 0]])), 0))   # negative edge
@example((STORED_ZERO, 0))
def test_bellman_ford_matches_scipy_on_random_graphs(case):
    G, source = case
    check_shortest_paths(G, source)


def test_the_bellman_ford_step_visits_only_the_stored_edges_of_the_changed_vertices():
    # (before the simplifier's never/define-literal rules, the fill region of each changed column
    # relaxed every vertex, `D[i] = min(D[i], INFINITY)`, and marked it in the changed set)
    A = Tensor.from_numpy(np.where(np.eye(5, k=1) > 0, 2.0, np.inf).T.copy(), WEIGHTS, fill=np.inf)
    D = Tensor.from_numpy(np.array([0.0, np.inf, np.inf, np.inf, np.inf]), Dense(Element(np.inf)))
    F = Tensor.from_numpy(np.array([True, False, False, False, False]), FRONTIER)
    k = compile_program(bellman_ford_step, D=D, F=FRONTIER, _D=D, _F=F, A=A)
    body = k.c_source[k.c_source.index("int bellman_ford_step("):]
    assert "INFINITY" not in body and "| false" not in body
    got = k(D=D, _D=D, _F=F, A=A)
    np.testing.assert_array_equal(got.D.to_numpy(), [0.0, 2.0, np.inf, np.inf, np.inf])
    np.testing.assert_array_equal(got.F.to_numpy(), [False, True, False, False, False])


def test_a_prepared_graph_searches_from_every_source_as_the_one_shot_drivers_do():
    G = scale_free_graph(60, 240, 4)
    search, paths = BFS(G), BellmanFord(G)
    dist = shortest_path(G, method="BF", directed=True)
    hops = shortest_path(G, method="D", directed=True, unweighted=True)
    for s in range(0, 60, 7):
        for direction in ("push", "pull", "auto"):
            r = search(s, direction)
            np.testing.assert_array_equal(r.levels, np.where(np.isinf(hops[s]), -1, hops[s]).astype(int))
            np.testing.assert_array_equal(r.parents, bfs(G, s, direction).parents)
        np.testing.assert_array_equal(paths(s).distances, dist[s])


def test_a_negative_cycle_is_refused_as_scipy_refuses_it():
    G = sp.csr_array(np.array([[0, 1.0, 0], [0, 0, -2.0], [0, 1.0, 0]]))
    with pytest.raises(NegativeCycleError):
        scipy_bellman_ford(G, indices=0)
    with pytest.raises(ValueError, match="negative cycle is reachable from vertex 0"):
        bellman_ford(G, 0)


def test_bad_graphs_and_sources_are_refused_in_the_users_terms():
    with pytest.raises(UsageError, match="square matrix"):
        bfs(np.ones((2, 3)), 0)
    with pytest.raises(UsageError, match="source 5 is not a vertex of the graph .0 to 2."):
        bellman_ford(np.ones((3, 3)), 5)
    with pytest.raises(UsageError, match=r"source 0 is not a vertex of the graph \(it has none\)"):
        bfs(np.zeros((0, 0)), 0)
    with pytest.raises(UsageError, match="direction 'sideways'"):
        bfs(np.ones((2, 2)), 0, "sideways")


# --------------------------------------------------------------------------- each kernel vs the interpreter

PATTERN = Format(Dense(SparseList(Pattern())), BY_COLUMNS)
WEIGHTS = Format(Dense(SparseList(Element(np.inf))), BY_COLUMNS)
PARENTS = Dense(Element(-1, dtype="int64"))


def _agree(kernel, **tensors):
    compiled, interpreted = kernel(**tensors), kernel.interpret(**tensors)
    if isinstance(compiled, Tensor):   # (one output)
        assert compiled.format == interpreted.format
        np.testing.assert_array_equal(compiled.to_numpy(), interpreted.to_numpy())
        return compiled
    for name, a, b in zip(compiled._fields, compiled, interpreted):
        if isinstance(a, Tensor):
            assert a.format == b.format
            a, b = a.to_numpy(), b.to_numpy()
        np.testing.assert_array_equal(a, b, err_msg=name)   # (a 0-d output comes back as its value)
    return compiled


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_kernel_agrees_with_the_interpreter(seed):
    rng = np.random.default_rng(seed)
    n = 17
    edges = rng.random((n, n)) < 0.2
    frontier = rng.random(n) < 0.3
    visited = frontier | (rng.random(n) < 0.3)
    parents = np.where(visited, rng.integers(0, n, n), -1)
    A = Tensor.from_numpy(edges.T.copy(), PATTERN)   # A[k, j]: the edge j -> k
    AT = Tensor.from_numpy(edges, PATTERN)           # AT[j, k]: the edge j -> k
    F = Tensor.from_numpy(frontier, FRONTIER)
    V = Tensor.from_numpy(visited, "dense")
    P = Tensor.from_numpy(parents, PARENTS)
    # both steps find the unvisited vertices with an in-neighbour in the frontier
    found = (edges & frontier[:, None]).any(axis=0) & ~visited
    for prog, graph in ((bfs_push, {"A": A}), (bfs_pull, {"AT": AT})):
        k = compile_program(prog, _F=FRONTIER, P=P, F=F, V=V, **graph)
        got = _agree(k, F=F, V=V, P=P, **graph)
        np.testing.assert_array_equal(got._F.to_numpy(), found)
        new = got.P.to_numpy()
        np.testing.assert_array_equal(new[~found], parents[~found])
        assert all(edges[new[v], v] and frontier[new[v]] for v in np.flatnonzero(found))
    assert "break;" in compile_program(bfs_pull, _F=FRONTIER, P=P, F=F, V=V, AT=AT).c_source   # (the early exit)
    # the driver's steps: the next frontier holds each found vertex's parent, a frontier in-neighbour
    Fp = Tensor.from_numpy(np.where(frontier, parents, -1), PARENT_FRONTIER)
    for prog, graph in ((bfs_push_parents, {"A": A}), (bfs_pull_parents, {"AT": AT})):
        k = compile_program(prog, _F=PARENT_FRONTIER, F=Fp, V=V, **graph)
        got = _agree(k, F=Fp, V=V, **graph).to_numpy()
        np.testing.assert_array_equal(got >= 0, found)
        assert all(edges[got[v], v] and frontier[got[v]] for v in np.flatnonzero(found))
    assert "break;" in compile_program(bfs_pull_parents, _F=PARENT_FRONTIER, F=Fp, V=V, AT=AT).c_source

    L = Tensor.from_numpy(np.where(visited, 0, -1), PARENTS)
    visit = compile_program(bfs_visit, V=V, L=L, count=Scalar(0), _F=F, depth=np.int64(4))
    got = _agree(visit, V=V, L=L, _F=F, depth=np.int64(4))
    np.testing.assert_array_equal(got.V.to_numpy(), visited | frontier)
    np.testing.assert_array_equal(got.L.to_numpy(), np.where(frontier, 4, np.where(visited, 0, -1)))
    assert got.count == frontier.sum()

    W = np.where(edges, rng.integers(-3, 9, (n, n)).astype(float), np.inf)
    A = Tensor.from_numpy(W.T.copy(), WEIGHTS, fill=np.inf)   # A[i, j]: the edge j -> i
    d = np.where(rng.random(n) < 0.5, rng.integers(0, 20, n).astype(float), np.inf)
    D = Tensor.from_numpy(d, Dense(Element(np.inf)))
    step = compile_program(bellman_ford_step, D=D, F=FRONTIER, _D=D, _F=F, A=A)
    got = _agree(step, D=D, _D=D, _F=F, A=A)
    relaxed = np.where(frontier[:, None], d[:, None] + W, np.inf).min(axis=0)
    np.testing.assert_array_equal(got.D.to_numpy(), np.minimum(d, relaxed))
    np.testing.assert_array_equal(got.F.to_numpy(), relaxed < d)
    tree = compile_program(bellman_ford_parents, P=PARENTS, D=D, A=A)
    np.testing.assert_array_equal(tree(D=D, A=A).to_numpy(), tree.interpret(D=D, A=A).to_numpy())
