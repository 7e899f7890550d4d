"""Arms of a steppers' switch with the same code joined in the first-match chain
(compiler/looplets/switch_arms.py; issue 31, the sparse-words erosion's C).

The chain of ``n`` switches ``(condition, else)`` has an arm per set of conditions, larger sets
first; the joined chain must fire, for every set of conditions that hold, the code the full chain
fires (checked exhaustively for every way of giving the arms code, for small ``n``)."""

from __future__ import annotations

import itertools

from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler.looplets.switch_arms import merge_arms, minimal_sets


def chain_of(n):
    """The arms of ``n`` switches in the lowering's order: the product, each switch's condition first."""
    return [frozenset(k for k, c in enumerate(combo) if c == 0) for combo in itertools.product((0, 1), repeat=n)]


def fires(chain, state):
    """The code the first-match ``chain`` (``(sets, code)``: a disjunction of conjunctions) runs."""
    for sets, code in chain:
        if any(s <= state for s in sets):
            return code
    return ""


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.sampled_from(["", "x", "y"]),
                                                                           min_size=2 ** n, max_size=2 ** n))))
@example((3, ["x", "y", "x", "", "x", "", "x", ""]))     # (a & b) | pad: pad's arms joined over others
@example((2, ["x", "", "", "x"]))                        # an arm without code between two alike stays
def test_the_joined_chain_fires_what_the_full_chain_fires(case):
    n, codes = case
    sets = chain_of(n)
    full = [([s], c) for s, c in zip(sets, codes)]
    joined = [([sets[k] for k in group], codes[group[0]]) for group in merge_arms(list(zip(sets, codes)))]
    assert all(len({codes[k] for k in group}) == 1 for group in merge_arms(list(zip(sets, codes))))
    for state in sets:
        assert fires(joined, state) == fires(full, state), (state, joined)
    # and the joined chain's conditions, reduced to their minimal sets, fire the same
    reduced = [(minimal_sets(s), c) for s, c in joined]
    for state in sets:
        assert fires([([frozenset(m) for m in s], c) for s, c in reduced], state) == fires(full, state)


def test_seven_arms_writing_pad_alone_are_one():
    # the switches of a, b, c and pad in (a & b & c) | pad: the arm of each set with pad and not all
    # of a, b, c writes pad alone
    sets = chain_of(4)
    code = {s: ("all" if len(s) == 4 else "abc" if s == {0, 1, 2} else "pad" if 3 in s else "") for s in sets}
    groups = merge_arms([(s, code[s]) for s in sets])
    assert [code[sets[g[0]]] for g in groups] == ["all", "abc", "pad"]
    assert minimal_sets([sets[k] for k in groups[2]]) == [{3}]
