"""The arms of a Switch lowering with the same code, merged into one arm of the first-match chain.

The switches of a stepper's step are each ``(stop == step_stop: the child whole, else: cut)``; the
product of ``n`` of them is a chain of ``2**n`` arms, one per set of the steppers whose child ends at
this step, the larger sets first. The chain fires, for the set ``T`` of the conditions that hold, the
arm of ``T`` itself (an arm of a set not inside ``T`` fails; any other set inside ``T`` comes after
it). So arm ``j`` may join an earlier arm ``m`` with the same code, the condition of ``m`` then
``cond(m) || cond(j)``, unless an arm between them with other code has a set holding ``j``'s (there,
the joined ``m`` would fire instead). A set holding another adds nothing to a disjunction: in
``(a & b & c) | pad``, seven arms writing ``pad`` alone (``pad`` ends and one of ``a``, ``b``, ``c``
does not) become one arm, ``if (pad ends)``. An arm without code is left out unless a later arm with
code would fire for its set without it.

>>> merge_arms([({0, 1}, "x"), ({0}, "y"), ({1}, "x"), (set(), "")])
[[0, 2], [1]]
>>> merge_arms([({0, 1}, "x"), ({0}, ""), ({1}, ""), (set(), "y")])
[[0], [1], [2], [3]]
>>> minimal_sets([{0, 1}, {1}, {2}])
[{1}, {2}]
"""

from __future__ import annotations


def merge_arms(arms: list) -> list:
    """``arms``, ``(set, code)`` in the chain's order (every set of the switches, larger sets first;
    ``code`` comparable, empty for none), as groups of their indices, the chain's new arms: each arm
    with code joins the first earlier arm with the same code it may join (see the module docstring).
    An arm without code stays where it is, when it stops a later one with code."""
    out: list = []   # [indices, sets, code]
    for k, (s, code) in enumerate(arms):
        s = frozenset(s)
        into = None
        if code:
            for n, (_, sets, c) in enumerate(out):
                if c == code and all(c2 == code or not any(t >= s for t in sets2) for _, sets2, c2 in out[n + 1:]):
                    into = n
                    break
        if into is None:
            out.append(([k], [s], code))
        else:
            out[into][0].append(k)
            out[into][1].append(s)
    # an arm without code matters only if, without it, a later arm with code would fire for its set
    return [indices for n, (indices, sets, code) in enumerate(out)
            if code or any(c and any(t <= s for t in sets2 for s in sets) for _, sets2, c in out[n + 1:])]


def minimal_sets(sets) -> list:
    """The sets no other one is inside (a disjunction of conjunctions needs only those), in order."""
    sets = [frozenset(s) for s in sets]
    return [set(s) for n, s in enumerate(sets)
            if not any(t < s or (t == s and m < n) for m, t in enumerate(sets))]


__all__ = ["merge_arms", "minimal_sets"]
