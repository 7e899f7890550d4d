"""The order in which a Sequence lowering runs the combinations of its sequences' phases, and which
neighbouring combinations it runs as one region.

The combinations form a grid: one covers another when it is one phase further in one sequence
(the Looplets paper's graph of combinations). Any order listing each combination after those it
covers (a topological order) runs the regions left to right, each from the running position to its
stop; Finch.jl and the lexicographic order are such orders. Among the combinations ready next, we
take one whose body (its phases picked, its runs substituted, simplified) is the body of the one
taken just before: the two regions are then next to each other with the same body, one region,
lowered once. In an intersection ``(a & b & c) | pad`` every combination where one of ``a``, ``b``,
``c`` has ended and ``pad`` has not is ``pad`` alone: seven regions become one.

>>> merge_order([(0, 0), (0, 1), (1, 0), (1, 1)], lambda k: "x" if k[1] == 0 else None)
[[(0, 0), (1, 0)], [(0, 1)], [(1, 1)]]
"""

from __future__ import annotations


def covered(key: tuple) -> list:
    """The combinations ``key`` covers: one phase back in one sequence.

    >>> covered((1, 0, 2))
    [(0, 0, 2), (1, 0, 1)]
    """
    return [key[:n] + (k - 1,) + key[n + 1:] for n, k in enumerate(key) if k > 0]


def merge_order(keys: list, body_of, skipped=()) -> list:
    """``keys`` (combinations, in lexicographic order) in a topological order, as groups of
    neighbours with the same body: each group a list of keys, run as one region.

    ``body_of(key)`` is the key's body, compared with ``==``, or None for one never merged;
    ``skipped`` are combinations that run nowhere (provably empty), done as soon as those they cover
    are: a region runs from where the last one stopped, so a combination after an empty one still
    waits for the combinations before that one. With no two neighbours alike, the order is ``keys``'
    own (the lexicographically least ready key first).

    >>> # (two windows one after the other: a's, then b's; both in, (1, 1), and b before a after, (2, 0),
    >>> # are empty; (2, 1), b's window, still runs after (1, 0), a's, though its body is (0, 1)'s)
    >>> keys = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 1), (2, 2)]
    >>> merge_order(keys, lambda k: "b" if k[1] == 1 else None, skipped=[(1, 1), (2, 0)])
    [[(0, 0)], [(0, 1)], [(0, 2)], [(1, 0)], [(1, 2)], [(2, 1)], [(2, 2)]]
    """
    done: set = set()
    empty = list(skipped)
    left = list(keys)
    groups: list = []
    while left:
        while any(all(c in done for c in covered(k)) for k in empty):
            k = next(k for k in empty if all(c in done for c in covered(k)))
            done.add(k)
            empty.remove(k)
        ready = [k for k in left if all(c in done for c in covered(k))]
        take = None
        if groups:
            last = body_of(groups[-1][-1])
            if last is not None:
                take = next((k for k in ready if body_of(k) == last), None)
        if take is None:
            take = ready[0]
            groups.append([take])
        else:
            groups[-1].append(take)
        done.add(take)
        left.remove(take)
    return groups


__all__ = ["covered", "merge_order"]
