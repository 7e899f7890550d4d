"""The suite's own configuration (tests/conftest.py): how many examples a property test draws."""

import types

from hypothesis import example, given, settings, strategies as st
from tests.conftest import DRAWN_AT_LEAST, DRAWN_SHARE, draw_fewer_examples


def counting_test(max_examples: int):
    """A property test drawing up to ``max_examples`` integers, with one pinned case; what it ran, in a list."""
    ran = []

    @settings(max_examples=max_examples, database=None, derandomize=True)
    @given(st.integers(0, 10 ** 9))
    @example(-1)
    def test(x):
        ran.append(x)

    return test, ran


def test_a_property_test_draws_its_share_of_examples_and_runs_its_pinned_case(monkeypatch):
    monkeypatch.delenv("SPARSESCOPE_HYPOTHESIS", raising=False)
    test, ran = counting_test(20)
    # (two items of one parametrized test: scaled once)
    draw_fewer_examples([types.SimpleNamespace(obj=test), types.SimpleNamespace(obj=test)])
    test()
    assert ran[0] == -1 and len(ran) == 1 + round(20 * DRAWN_SHARE), ran
    few, ran_few = counting_test(DRAWN_AT_LEAST)
    draw_fewer_examples([types.SimpleNamespace(obj=few)])
    few()
    assert len(ran_few) == 1 + DRAWN_AT_LEAST


def test_the_explore_profile_draws_every_example(monkeypatch):
    monkeypatch.setenv("SPARSESCOPE_HYPOTHESIS", "explore")
    test, ran = counting_test(20)
    draw_fewer_examples([types.SimpleNamespace(obj=test), types.SimpleNamespace(obj=lambda: None)])
    test()
    assert len(ran) == 21
