"""LAGraph's direction-optimizing switch for breadth-first search (Beamer et al.), as
``LAGr_BreadthFirstSearch`` decides it before each round (SuiteSparse:GraphBLAS's variant,
LAGraph's src/algorithm/LG_BreadthFirstSearch_SSGrB.c at commit afeb9dff: its parameters at
lines 159-164, the switch at 185-240, the loop's end at 178 and 265-270; re-created here, checked
line by line).

A search starts pushing (each frontier vertex visits its out-edges). While it pushes and has
never pulled, it counts the out-edges of each frontier (``edges_in_frontier``) and takes them off
the edges not yet explored; it turns to pulling (each unvisited vertex asks its in-neighbours)
when the frontier grows and its edges exceed ``1/alpha`` of the unexplored ones. A pull turns back
to pushing when the frontier shrinks to at most ``n / beta2`` vertices; after a pull, a push turns
to pulling again only when the frontier grows past ``n / beta1`` vertices (the edges are no longer
counted). Once fewer edges than vertices are unexplored, the search pushes to the end. A search ends
when a round finds no new vertex or once every vertex is visited (:func:`more_rounds`: a search
that reaches the whole graph runs no last, empty, round).

>>> rule = DirectionRule(n=1000, edges=8000)
>>> [rule(size, lambda e=e: e) for size, e in [(1, 40), (30, 500), (400, 5000), (300, 0), (1, 0)]]
['push', 'push', 'pull', 'pull', 'push']
"""

from __future__ import annotations

from typing import Callable

__all__ = ["DirectionRule", "more_rounds"]


def more_rounds(frontier: int, visited: int, n: int) -> bool:
    """Whether a search runs another round: its frontier holds a vertex and some of the ``n``
    vertices are not yet ``visited`` (LAGraph's ``for (nvisited = 1, ...; nvisited < n; nvisited
    += nq)``, line 178, and its ``break`` on ``nq == 0``, lines 265-270).

    >>> more_rounds(3, 10, 10), more_rounds(0, 4, 10), more_rounds(3, 4, 10)
    (False, False, True)
    """
    return frontier > 0 and visited < n


class DirectionRule:
    """The direction of each round of one search over a graph of ``n`` vertices and ``edges``
    stored edges; call it once a round, in order, with the frontier's size and a function giving
    its out-edges (asked only on the rounds the rule counts them). LAGraph's defaults:
    ``alpha = 8``, ``beta1 = 8``, ``beta2 = 512``."""

    def __init__(self, n: int, edges: int, alpha: float = 8.0, beta1: float = 8.0, beta2: float = 512.0):
        self.n, self.unexplored, self.alpha = n, edges, alpha
        # (LAGraph's n_over_beta1 and n_over_beta2, truncated as its int64_t casts truncate)
        self.grown_to_pull, self.shrunk_to_push = int(n / beta1), int(n / beta2)
        self.push, self.switching, self.pulled, self.last = True, True, False, 0

    def __call__(self, frontier: int, frontier_edges: Callable[[], int]) -> str:
        """``"push"`` or ``"pull"`` for the round whose frontier holds ``frontier`` vertices."""
        # (LG_BreadthFirstSearch_SSGrB.c lines 185-240; `switching` is its push_pull, which line 195
        # clears for good, `pulled` its any_pull, `last` its last_nq, set at line 265 after each round)
        if self.switching:
            if self.push:
                growing = frontier > self.last
                if self.unexplored < self.n:   # (little of the graph is left: push to the end)
                    self.switching = False
                elif self.pulled:
                    self.push = not (growing and frontier > self.grown_to_pull)
                else:
                    edges = int(frontier_edges())
                    self.unexplored -= edges
                    self.push = not (growing and edges > self.unexplored / self.alpha)
            elif frontier < self.last and frontier <= self.shrunk_to_push:
                self.push = True
            self.pulled = self.pulled or not self.push
        self.last = frontier
        return "push" if self.push else "pull"
