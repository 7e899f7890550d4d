"""The order of a Sequence lowering's phase combinations, neighbours with the same body run as one
region (compiler/looplets/phase_order.py; issue 31, the sparse-words erosion's C).

In ``y[i] = (a[i] & b[i] & c[i]) | d[i]`` over SparseList vectors every combination of phases where
one of ``a``, ``b``, ``c`` has ended and ``d`` has not is ``d`` alone: seven regions that were seven
walks of ``d`` (678 lines of C, 22 while loops) are one walk (381 lines, 4 while loops); in the step
over all four, the seven arms of the steppers' switches that write ``d`` alone are one arm (238 lines).
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Format, Tensor
from compiler.levels import Element, SparseList
from compiler.looplets import compile_program, loop_program
from compiler.looplets.phase_order import covered, merge_order

WORDS = Format(SparseList(Element(0, dtype="uint64")))


@loop_program
def or_of_and(y, a, b, c, d):
    for i in _:
        y[i] = (a[i] & b[i] & c[i]) | d[i]


def test_a_combination_after_an_empty_one_waits_for_those_before_it():
    # (two parts' windows, a's then b's, of stack([A, B]).reshape(5, 8): both in (1, 1) and b before a after
    # (2, 0) are provably empty; (2, 1), b's window, still comes after (1, 0), a's. Taken as done from the start,
    # the empty ones let (2, 1) join (0, 1), of the same body, ahead of a's window, whose entries were lost)
    keys = [(a, b) for a in range(3) for b in range(3)]
    empty = [(1, 1), (2, 0)]
    kept = [k for k in keys if k not in empty]
    groups = merge_order(kept, lambda k: "b" if k[1] == 1 else None, skipped=empty)
    order = [k for g in groups for k in g]
    assert sorted(order) == kept and order.index((1, 0)) < order.index((2, 1))
    assert all(len(g) == 1 for g in groups), groups
    # every kept key after every kept key it covers, through the empty ones too
    def before(k):
        out = set()
        for c in covered(k):
            out |= {c} | before(c)
        return out
    assert all(order.index(c) < order.index(k) for k in kept for c in before(k) if c in kept)


def test_merge_order_is_topological_and_groups_neighbours_alike():
    keys = [(a, b, c) for a in range(2) for b in range(3) for c in range(2)]
    body = {k: ("x" if k[2] == 0 and k != (0, 0, 0) else None) for k in keys}
    groups = merge_order(keys, body.get)
    order = [k for g in groups for k in g]
    assert sorted(order) == keys
    # each key after every key it covers
    assert all(order.index(c) < order.index(k) for k in keys for c in covered(k))
    # the keys alike are one group; a body None is never merged
    alike = [g for g in groups if len(g) > 1]
    assert alike == [[k for k in order if body[k] == "x"]]
    assert groups[0] == [(0, 0, 0)] and groups[-1] == [(1, 2, 1)]


def test_merge_order_keeps_lexicographic_order_without_neighbours_alike():
    keys = [(a, b) for a in range(3) for b in range(2)]
    assert merge_order(keys, lambda k: None) == [[k] for k in keys]
    # a skipped key (provably empty) counts as done: what it covers is ready
    assert merge_order([(0, 0), (1, 1)], lambda k: None, skipped={(0, 1), (1, 0)}) == [[(0, 0)], [(1, 1)]]


_KERNEL = {}


def _kernel():
    if not _KERNEL:
        _KERNEL["k"] = compile_program(or_of_and, y=WORDS, a=WORDS, b=WORDS, c=WORDS, d=WORDS)
    return _KERNEL["k"]


def test_regions_with_the_same_body_are_lowered_once():
    k = _kernel()
    merged = [s.note for s in k.trace.steps if s.stage == "lower:Sequence" and "one region" in s.note]
    assert len(merged) == 1 and merged[0].startswith("7 neighbouring phase combinations"), merged
    # one loop over the four (the intersection) and its seek, one over a, b, c ending after d, one over
    # d alone: on main, d alone was walked by seven loops (22 while loops in all)
    assert k.c_source.count("while (") == 4


def test_the_steps_arms_with_the_same_code_are_one():
    # the step over all four: 16 arms, of which 7 write d alone, joined (switch_arms); the empty arms
    # left out: all four end, a, b, c end, d ends (on main: 15 arms, 20 else-ifs in the C, 678 lines)
    k = _kernel()
    joined = [s.note for s in k.trace.steps if s.stage == "lower:Switch" and "joined" in s.note]
    assert joined[0].startswith("16 arms, 3 once"), joined
    assert k.c_source.count("else if") == 2
    assert k.c_source.count("\n") < 300




@settings(max_examples=10, deadline=None)
@given(st.integers(0, 9), st.data())
@example(5, None)
def test_or_of_and_agrees_with_numpy(n, data):
    if data is None:   # (d ends before a, b and c; c is empty)
        vs = {"a": [1, 3, 0, 7, 7], "b": [1, 1, 1, 1, 1], "c": [0] * 5, "d": [2, 0, 0, 0, 0]}
    else:
        vs = {t: data.draw(st.lists(st.sampled_from([0, 1, 2 ** 63, 2 ** 64 - 1, 0x00FF00FF00FF00FF]),
                                    min_size=n, max_size=n), label=t) for t in "abcd"}
    arrays = {t: np.array(v, dtype=np.uint64) for t, v in vs.items()}
    tensors = {t: Tensor.from_numpy(v, WORDS) for t, v in arrays.items()}
    got = _kernel()(**tensors)
    want = (arrays["a"] & arrays["b"] & arrays["c"]) | arrays["d"]
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(_kernel().interpret(**tensors).to_numpy(), want)
