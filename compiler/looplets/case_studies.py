"""Finch's graph case studies (§7.3, Fig 24) as the paper writes them, with several outputs.

A BFS step writes the next frontier ``_F`` and the parents ``P``; its push variant visits the
out-neighbours of each frontier vertex, its pull variant asks each unvisited vertex for a
frontier in-neighbour and stops at the first (``p`` is a ShortCircuitScalar reducing with
``choose(-1)``, which any vertex annihilates). A Bellman-Ford step relaxes the out-edges of
the vertices that changed in the last round and writes the distances ``D`` and the changed set
``F``. The drivers :func:`bfs` and :func:`bellman_ford` (or :class:`BFS` and :class:`BellmanFord`, which
prepare a graph once for many searches) run them to convergence from Python,
choosing push or pull per round as LAGraph's direction-optimizing BFS does, by the edges of the
frontier against those not yet explored (:class:`compiler.looplets.direction.DirectionRule`).

The paper's code is Julia's, 1-based and column-major; here coordinates are 0-based, so "no
parent" is ``-1`` (Finch's ``0``), and each matrix is stored with its second mode outermost
(:data:`BY_COLUMNS`, a CSC layout), so the loops ``for j, for k`` over ``A[k, j]`` walk column
``j`` as Finch's ``Dense(SparseList(Pattern()))`` does. Graphs are given as scipy.sparse's
csgraph takes them: ``G[u, v]`` is the edge ``u -> v`` (a stored entry of a sparse matrix, a
stored 0 too, a nonzero of a dense one). With a cycle of weight 0, Bellman-Ford's parents may
form a cycle on it (each still attains its vertex's distance).

>>> import numpy as np
>>> G = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0], [1, 0, 0, 0]])
>>> r = bfs(G, 0)
>>> r.parents.tolist(), r.levels.tolist()
([0, 0, 1, -1], [0, 1, 2, -1])
>>> W = np.array([[0, 4.0, 1.0], [0, 0, 0], [0, -2.0, 0]])
>>> bellman_ford(W, 0).distances.tolist()
[0.0, -1.0, 1.0]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import UsageError
from ..format import Format
from ..levels import Dense, Element, Pattern, SparseByteMap, SparseList
from ..reused_outputs import mark_cleared_off_entries, reuse
from ..tensor import Tensor
from .compile import compile_program
from .direction import DirectionRule, more_rounds
from .language import loop_program
from .scalars import ShortCircuitScalar

__all__ = ["bfs_push", "bfs_pull", "bfs_visit", "bfs_push_parents", "bfs_pull_parents", "bellman_ford_step", "bellman_ford_parents", "bfs",
           "bellman_ford", "BFS", "BellmanFord", "BFSResult", "ShortestPaths", "BY_COLUMNS", "FRONTIER",
           "PARENT_FRONTIER"]


@loop_program
def bfs_push(_F, P, F, A, V):
    """Push (Fig 24): each frontier vertex ``j`` offers itself as the parent of its unvisited
    out-neighbours ``k`` (``A[k, j]``: the edge ``j -> k``)."""
    _F[...] = False
    for j in _:
        for k in _:
            if F[j] and A[k, j] and not V[k]:
                _F[k] |= True
                P[k] <<= choose(-1), j


@loop_program
def bfs_pull(_F, P, F, AT, V, p=ShortCircuitScalar(-1)):
    """Pull (Fig 24): each unvisited ``k`` looks for an in-neighbour ``j`` in the frontier
    (``AT[j, k]``: the edge ``j -> k``; ``F`` read at random, ``follow``) and stops at the first.
    The test of ``p`` comes after the ``j`` loop (the paper's indentation puts it inside, which
    its life cycle forbids: ``p`` is written in that loop)."""
    _F[...] = False
    for k in _:
        if not V[k]:
            p[...] = -1
            for j in _:
                if F[follow(j)] and AT[j, k]:
                    p <<= choose(-1), j
            if p != -1:
                _F[k] |= True
                P[k] = p


@loop_program
def bfs_visit(V, L, count, _F, depth):
    """The round's bookkeeping (the benchmark's ``V[k] |= _F[k]; c[] += _F[k]``): the new
    frontier's vertices are visited, at level ``depth``, and counted."""
    for k in _:
        if _F[k]:
            V[k] = True
            L[k] = depth
            count += 1


@loop_program
def bfs_push_parents(_F, F, A, V):
    """:data:`bfs_push` as LAGraph writes its step (``q<!pi> = q any_secondi A``): the next frontier
    ``_F`` holds each new vertex's parent, so the step has one output and the driver scatters the
    parents from the frontier's few entries; ``F`` is the last round's (a vertex in it holds its
    parent, ``>= 0``)."""
    _F[...] = -1
    for j in _:
        for k in _:
            if (F[j] >= 0) and A[k, j] and not V[k]:
                _F[k] <<= choose(-1), j


@loop_program
def bfs_pull_parents(_F, F, AT, V, p=ShortCircuitScalar(-1)):
    """:data:`bfs_pull` with the parents in the next frontier, as :data:`bfs_push_parents`."""
    _F[...] = -1
    for k in _:
        if not V[k]:
            p[...] = -1
            for j in _:
                if (F[follow(j)] >= 0) and AT[j, k]:
                    p <<= choose(-1), j
            if p != -1:
                _F[k] = p


@loop_program
def bellman_ford_step(D, F, _D, _F, A):
    """A relaxation round (Fig 24, with the paper's ``F = false`` and ``if !_F[j]`` corrected): the
    out-edges of each vertex ``j`` that changed last round (``A[i, j]``: the edge ``j -> i``, fill
    ``inf``) lower ``D`` (which starts from the last distances) and mark what they improve."""
    F[...] = False
    for j in _:
        if _F[j]:
            for i in _:
                d = _D[j] + A[i, j]
                D[i] <<= min, d
                F[i] |= d < _D[i]


@loop_program
def bellman_ford_parents(P, D, A):
    """The shortest-path tree, once the distances converged (the benchmark's last kernel):
    ``j`` is a parent of ``i`` when an edge ``j -> i`` attains ``i``'s distance."""
    P[...] = -1
    for j in _:
        if D[j] < inf:
            for i in _:
                if D[j] + A[i, j] <= D[i] and A[i, j] < inf:
                    P[i] <<= choose(-1), j


#: a matrix stored column by column, as Julia stores Finch's ``Dense(SparseList(...))``
BY_COLUMNS = (1, 0)
#: a frontier or changed set: a byte map of the vertices in it
FRONTIER = SparseByteMap(Element(False, dtype="bool"))
#: a BFS frontier holding each of its vertices' parent (-1: not in it)
PARENT_FRONTIER = SparseByteMap(Element(-1, dtype="int64"))
_PATTERN = Format(Dense(SparseList(Pattern())), BY_COLUMNS)
_WEIGHTS = Format(Dense(SparseList(Element(np.inf, dtype="float64"))), BY_COLUMNS)
_PARENTS = Dense(Element(-1, dtype="int64"))


class BFSResult(NamedTuple):
    """Each vertex's BFS parent (the source its own, ``-1`` unreached) and level (``-1`` unreached),
    and the direction each round took (``"push"`` or ``"pull"``)."""

    parents: np.ndarray
    levels: np.ndarray
    directions: tuple


class ShortestPaths(NamedTuple):
    """Distances from the source (``inf`` unreached), a shortest-path tree (``-1``: the source and
    the unreached) and the number of relaxation rounds."""

    distances: np.ndarray
    parents: np.ndarray
    rounds: int


def _graph(graph, what: str):
    """``graph`` (csgraph's convention) as a scipy CSR matrix with its stored entries the edges."""
    import scipy.sparse as sp
    m = sp.csr_array(graph) if sp.issparse(graph) else sp.csr_array(np.asarray(graph))
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise UsageError(f"{what}: the graph must be a square matrix (G[u, v] the edge u -> v), not of "
                         f"shape {m.shape}")
    m.sum_duplicates()
    return m


def _pattern(m, name: str) -> Tensor:
    """The stored entries of the CSC matrix ``m`` as a column-major pattern (a stored 0 is an edge,
    as csgraph reads one), its arrays shared through scipy's CSC layout."""
    import scipy.sparse as sp
    ones = sp.csc_array((np.ones(m.nnz, dtype=bool), m.indices, m.indptr), shape=m.shape)
    return Tensor.from_scipy(ones, "csc", fill=False, name=name).asformat(_PATTERN)


def _source(source, n: int, what: str) -> int:
    if isinstance(source, bool) or not isinstance(source, (int, np.integer)) or not 0 <= source < n:
        vertices = f"0 to {n - 1}" if n else "it has none"
        raise UsageError(f"{what}: source {source!r} is not a vertex of the graph ({vertices})")
    return int(source)


def _start(n: int, source: int, value=None, frontier=PARENT_FRONTIER) -> Tensor:
    """The first frontier, ``source`` alone holding ``value`` (by default its own index: it is its
    own parent), as a byte map of format ``frontier`` (:data:`PARENT_FRONTIER` by default) built from
    its one entry (``Tensor.from_numpy`` would scan ``n`` values for it), marked as a kernel's result
    is: the fill off its entries, so a later round may clear it by its entries (:func:`reuse`).

    >>> _start(4, 2).to_numpy().tolist(), _start(3, 1, True, FRONTIER).to_numpy().tolist()
    ([-1, -1, 2, -1], [False, True, False])
    """
    element = frontier.child
    vals = np.full(n, element.fill, dtype=element.dtype)
    vals[source] = source if value is None else value
    tbl = np.zeros(n, bool)
    tbl[source] = True
    pos, srt = np.array([0, 1], dtype=np.int64), np.array([source], dtype=np.int64)
    level = SparseByteMap(Element(element.fill, vals, element.dtype), n, pos, tbl, srt)
    return mark_cleared_off_entries(Tensor(level, shape=(n,), name="F", check=False), pos, tbl, srt, vals)


class BFS:
    """Breadth-first searches over one graph (csgraph's convention) by Finch's BFS steps: the graph's
    two patterns are built once, and each step's kernel compiled on its first use, so a search
    costs only its rounds (as a benchmark times it).

    >>> import numpy as np
    >>> search = BFS(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]]))
    >>> search(0).levels.tolist(), search(1, direction="pull").levels.tolist()
    ([0, 1, 2], [-1, 0, 1])
    """

    def __init__(self, graph):
        G = _graph(graph, "bfs")
        self.n = G.shape[0]
        # A[k, j] = AT[j, k] = G[j, k]: the same column-major pattern serves both steps
        self.A, self.AT = _pattern(G.T.tocsc(), "A"), _pattern(G.tocsc(), "AT")
        # (what the direction rule counts: the stored edges, and each vertex's out-edges)
        self.edges, self.degree = G.nnz, np.diff(G.indptr)
        self._steps = {}   # (compile_program plans a call afresh: each kernel is compiled once)

    def _kernel(self, key, program, **tensors):
        if key not in self._steps:
            self._steps[key] = compile_program(program, **tensors)
        return self._steps[key]

    def __call__(self, source: int, direction: str = "auto", alpha: float = 8.0, beta1: float = 8.0,
                 beta2: float = 512.0) -> BFSResult:
        """The search from ``source``, run until the frontier is empty or every vertex is reached
        (see :func:`bfs`).

        Each round is one kernel call, :data:`bfs_push_parents` or :data:`bfs_pull_parents` (the
        paper's steps with the parents in the next frontier, as LAGraph's), and numpy's bookkeeping
        of the frontier's entries: they are visited, at the round's level, their parents kept. The
        paper's two-output steps and :data:`bfs_visit` cost three kernel calls' worth of fixed cost
        a round, each copying the parents (an output updated from the given one) and allocating the
        visited set: most of a round on a road network, whose frontiers hold a few vertices. Each
        round writes into the arrays of the frontier before last (``_F=reuse(...)``,
        :mod:`compiler.reused_outputs`), clearing only its entries: a round allocates and clears
        nothing in proportion to the vertices."""
        if direction not in ("push", "pull", "auto"):
            raise UsageError(f"bfs: direction {direction!r}: give 'push', 'pull' or 'auto'")
        n, A, AT = self.n, self.A, self.AT
        s = _source(source, n, "bfs")
        F = _start(n, s)
        first = F.vals
        visited = np.zeros(n, bool)
        visited[s] = True
        # (the kernels read the visited set through this Tensor, which views the array: no copy a round)
        V = Tensor(Dense(Element(False, visited, "bool"), n), shape=(n,), name="V", check=False)
        parents, levels = first.copy(), np.full(n, -1, dtype=np.int64)
        levels[s] = 0
        rule = DirectionRule(n, self.edges, alpha, beta1, beta2) if direction == "auto" else None
        new, frontier, reached, depth, directions = np.array([s]), 1, 1, 0, []
        spare = None   # (the frontier before F: the next round writes into its arrays)
        while more_rounds(frontier, reached, n):   # (LAGraph's end: no round once every vertex is reached)
            if depth == n:   # (each round visits a vertex first seen: a step that does not is a bug)
                raise RuntimeError(f"bfs: the frontier still holds {frontier} vertices after {n} rounds")
            pull = direction == "pull" or (rule is not None and
                                           rule(frontier, lambda: self.degree[new].sum()) == "pull")
            # (the round before last's frontier, read by then, is written over: reuse() clears only its
            # entries, so a round costs its frontier's edges, not a fresh frontier of n vertices)
            out = {} if spare is None else {"_F": reuse(spare)}
            last = F
            if pull:
                F = self._kernel("pull", bfs_pull_parents, _F=PARENT_FRONTIER, F=F, AT=AT, V=V)(F=F, AT=AT, V=V, **out)
            else:
                F = self._kernel("push", bfs_push_parents, _F=PARENT_FRONTIER, F=F, A=A, V=V)(F=F, A=A, V=V, **out)
            spare = last
            directions.append("pull" if pull else "push")
            depth += 1
            level = F.levels[0]
            new = level.srt[int(level.pos[0]):int(level.pos[1])]   # (the frontier's vertices, sorted)
            if len(new) * 8 >= n:
                # (a frontier of many vertices is read whole, sequentially: a scatter to its vertices costs
                # ~5x more a vertex. Off its entries the frontier holds -1, as does a vertex not yet
                # reached in `parents`, so the maximum keeps every other parent and adds the new ones)
                np.logical_or(visited, level.tbl, out=visited)
                np.maximum(parents, F.vals, out=parents)
            else:
                visited[new] = True
                parents[new] = F.vals[new]
            levels[new] = depth
            frontier = len(new)
            reached += frontier
        return BFSResult(parents, levels, tuple(directions))


def bfs(graph, source: int, direction: str = "auto", alpha: float = 8.0, beta1: float = 8.0,
        beta2: float = 512.0) -> BFSResult:
    """Breadth-first search from ``source`` by Finch's BFS steps, run until the frontier is empty.

    ``direction`` is ``"push"``, ``"pull"`` or ``"auto"``: LAGraph's direction optimization, with
    its ``alpha``, ``beta1`` and ``beta2`` (:class:`compiler.looplets.direction.DirectionRule`:
    pull while the frontier's out-edges are many against the edges not yet explored, push again
    once the frontier shrinks to few vertices). Each round is one call of a
    step kernel (:data:`bfs_push_parents` or :data:`bfs_pull_parents`: the next frontier, holding
    its vertices' parents).
    To search one graph many times, build a :class:`BFS` once.
    """
    if direction not in ("push", "pull", "auto"):
        raise UsageError(f"bfs: direction {direction!r}: give 'push', 'pull' or 'auto'")
    return BFS(graph)(source, direction, alpha, beta1, beta2)


class BellmanFord:
    """Single-source shortest paths over one weighted graph by Finch's Bellman-Ford (see
    :func:`bellman_ford`): the weights are stored once and the kernels compiled on the first call.

    >>> import numpy as np
    >>> paths = BellmanFord(np.array([[0, 4.0, 1.0], [0, 0, 0], [0, -2.0, 0]]))
    >>> paths(0).distances.tolist(), paths(2).distances.tolist()
    ([0.0, -1.0, 1.0], [inf, -2.0, 0.0])
    """

    def __init__(self, graph):
        G = _graph(graph, "bellman_ford")
        self.n = G.shape[0]
        self.A = Tensor.from_scipy(G.T.tocsc().astype(np.float64), _WEIGHTS, fill=np.inf, name="A")
        self._step = self._tree = None

    def __call__(self, source: int) -> ShortestPaths:
        n, A = self.n, self.A
        s = _source(source, n, "bellman_ford")
        dist = np.full(n, np.inf)
        dist[s] = 0.0
        # (both built from their arrays, as a kernel's results are: from_numpy would scan n values for
        # the entries of each, a few rounds' worth of a search's fixed cost)
        D = Tensor(Dense(Element(np.inf, dist, "float64"), n), shape=(n,), name="D", check=False)
        F = _start(n, s, True, FRONTIER)
        if self._step is None:
            self._step = compile_program(bellman_ford_step, D=D, F=FRONTIER, _D=D, _F=F, A=A)
            self._tree = compile_program(bellman_ford_parents, P=_PARENTS, D=D, A=A)
        rounds, changed = 0, np.array([s])
        spare = None   # (the distances and changed set before D and F: the next round writes into their arrays)
        while len(changed):
            if rounds == n:
                raise ValueError(f"bellman_ford: a negative cycle is reachable from vertex {s} (distances still "
                                 f"change after {n} rounds)")
            out = {}
            if spare is not None:
                # the distances two rounds old differ from D's only where the last round lowered them, at
                # F's entries: copied in, they are D's, and the step lowers them in place (reuse()), as
                # Finch's benchmark carries its two buffers over; the changed set is cleared by its entries
                old_D, old_F = spare
                old_D.vals[changed] = D.vals[changed]
                out = {"D": reuse(old_D), "F": reuse(old_F)}
            spare = (D, F)
            D, F = self._step(_D=D, _F=F, A=A, **out) if out else self._step(D=D, _D=D, _F=F, A=A)
            rounds += 1
            level = F.levels[0]
            entries = level.srt[int(level.pos[0]):int(level.pos[1])]   # (the vertices it marked, sorted)
            changed = entries[F.vals[entries]]
        return ShortestPaths(D.to_numpy(), self._tree(D=D, A=A).to_numpy(), rounds)


def bellman_ford(graph, source: int) -> ShortestPaths:
    """Single-source shortest paths by Finch's Bellman-Ford: rounds of :data:`bellman_ford_step`
    (two outputs, the distances and the changed set) until nothing changes, then the tree by
    :data:`bellman_ford_parents`. Weights may be negative; a negative cycle reachable from the
    source is refused (a change in round ``n``). To search one graph from many sources, build a
    :class:`BellmanFord` once."""
    return BellmanFord(graph)(source)
