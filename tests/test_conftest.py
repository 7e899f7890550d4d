"""The suite's own configuration (tests/conftest.py): how many examples a property test draws, and the order
in which the files are handed to the workers."""

import types

from hypothesis import example, given, settings, strategies as st
from tests.conftest import (BROWSER_FOLDER, DRAWN_AT_LEAST, DRAWN_SHARE, LONGEST_FIRST, ROOT, draw_fewer_examples,
                            pytest_collection_modifyitems)


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


def test_the_browser_folder_goes_first_then_the_longest_files_then_the_notebooks_then_the_rest():
    def item(path):
        return types.SimpleNamespace(path=ROOT / path, obj=None)
    paths = ["tests/compiler/test_algebra.py", "notebooks/01-tour.ipynb", f"tests/compiler/backend/{LONGEST_FIRST[0]}",
             f"{BROWSER_FOLDER}test_browser_views.py", f"{BROWSER_FOLDER}test_compare.py",
             f"tests/compiler/peers/{LONGEST_FIRST[1]}"]
    items = [item(p) for p in paths]
    pytest_collection_modifyitems(items)
    # (the browser folder's files in the collection's order: one unit, tests/conftest.py's scheduler)
    assert [str(i.path.relative_to(ROOT)) for i in items] == [paths[3], paths[4], paths[2], paths[5], paths[1], paths[0]]


def test_the_suite_keeps_freed_frame_chunks_and_hands_them_out_again():
    """Calls recursing up and down across a frame chunk's end reuse the chunk the last return freed, where
    CPython 3.11 mapped and unmapped one each time (tests/frame_chunks.py)."""
    from tests.frame_chunks import blocks_reused, installed, keep_freed_chunks
    assert installed() and keep_freed_chunks()   # (by the conftest, as the process started: once)

    def down(n):
        return 0 if n == 0 else 1 + down(n - 1)
    before = blocks_reused()
    for _ in range(50):
        assert down(600) == 600   # (600 frames of a few words each: past several 16 KiB chunks)
    assert blocks_reused() - before >= 50
