"""Sorting a workspace's coordinate list in IR (compiler.imperative.sorting), run by the interpreter and in C."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from compiler.backend import compile_function
from compiler.imperative import Buffer, Function, Scalar, interpret
from compiler.imperative.ir import Var
from compiler.imperative.sorting import (BIT_SORT_MIN, BIT_SORT_SPAN, MERGE_MAX_RUNS, RANK_SORT_MAX, SCAN_RATIO,
                                         bit_sort_ir, count_sort_pairs_ir, heapsort_ir, merge_runs_ir,
                                         merge_sort_pairs_ir, rank_sort_ir, sort_coordinates_ir)


def write_order(runs):
    """A workspace list: ascending runs (one per row of B) of coordinates not seen before."""
    seen, lst = set(), []
    for run in runs:
        fresh_run = sorted(c for c in run if c not in seen)
        seen.update(fresh_run)
        lst += fresh_run
    return lst


def fresh_names():
    names = iter(range(10_000))
    return lambda base: Var(f"{base}_{next(names)}")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(0, 500), max_size=12, unique=True), max_size=12))
def test_rank_sort_run_merge_and_heapsort(runs):
    lst = write_order(runs)
    a = np.array(lst + [0], dtype=np.int64)
    params = (Buffer("a", "int64", "inout"), Buffer("t", "int64", "inout"), Scalar("n", "int64"))
    sorts = {"rank": lambda: rank_sort_ir("a", "t", Var("n"), fresh_names()),
             "merge": lambda: merge_runs_ir("a", "t", Var("n"), fresh_names()),
             "heap": lambda: heapsort_ir("a", Var("n"), fresh_names())}
    for name, body in sorts.items():
        out = interpret(Function("s", params, body()), a=a.copy(), t=np.zeros(len(a), np.int64), n=len(lst))["a"]
        assert out[:len(lst)].tolist() == sorted(lst), name


SORT = Function("sort_list", (Buffer("a", "int64", "inout"), Buffer("t", "int64", "inout"), Buffer("b", "bool"),
                              Buffer("w", "int64", "inout"), Buffer("s", "int64", "inout"),
                              Scalar("n", "int64"), Scalar("m", "int64")),
                sort_coordinates_ir("a", "t", Var("n"), Var("m"), "b", fresh_names(), "j", "w", "s"))

#: (extent, runs) reaching each method; test_the_cases_cover_each_method checks which
CASES = {
    "rank": (10_000, [[5, 900, 4000]]),
    "bits": (10_000, [list(range(r, 9000, 97)) for r in range(5)]),
    "merge": (300_000, [list(range(r, 9000, 97))[:14] for r in range(5)]),
    "heap": (500_000, [[90_000 - 900 * q] for q in range(100)]),
    "scan": (200, [list(range(0, 200, 3)), list(range(1, 200, 7))]),
    "empty": (50, []),
    "word edges": (8193, [[0, 31, 32, 63, 64, 1023, 1024, 4095, 4096, 8191, 8192] + list(range(100, 8000, 97))]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_method_in_c_and_in_the_interpreter(case):
    extent, runs = CASES[case]
    lst = write_order(runs)
    n = len(lst)
    b = np.zeros(extent, bool)
    b[lst] = True
    a = np.zeros(extent, np.int64)
    a[:n] = lst
    (nw, ns) = ((extent >> 6) + 1, (extent >> 12) + 1)   # bit_sort_words
    for run in (compile_function(SORT), lambda **kw: interpret(SORT, **kw)):
        out = run(a=a.copy(), t=np.zeros(extent, np.int64), b=b, w=np.zeros(nw, np.int64), s=np.zeros(ns, np.int64),
                  n=n, m=extent)
        assert out["a"][:n].tolist() == sorted(lst)
        assert not out["w"].any() and not out["s"].any()   # the bit sort leaves its scratch zero


def runs_of(lst):
    return 1 + sum(x > y for x, y in zip(lst, lst[1:]))


def method(extent, lst):
    n = len(lst)
    if n * SCAN_RATIO >= extent:
        return "scan"
    if n > BIT_SORT_MIN and extent <= n * BIT_SORT_SPAN:
        return "bits"
    if n <= RANK_SORT_MAX:
        return "rank"
    return "merge" if runs_of(lst) <= MERGE_MAX_RUNS else "heap"


def test_the_cases_cover_each_method():
    """The cases above reach each branch, by the thresholds the sort uses."""
    reached = {case: method(extent, write_order(runs)) for case, (extent, runs) in CASES.items()}
    assert {k: v for k, v in reached.items() if k not in ("empty", "word edges")} == \
        {"rank": "rank", "bits": "bits", "merge": "merge", "heap": "heap", "scan": "scan"}
    assert reached["word edges"] == "bits"


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3000), st.lists(st.lists(st.integers(0, 2999), max_size=40, unique=True), max_size=8))
def test_bit_sort_matches_sorted_in_c(extent, runs):
    lst = [c for c in write_order(runs) if c < extent]
    n = len(lst)
    a = np.zeros(max(n, 1), np.int64)
    a[:n] = lst
    fn = Function("bits", (Buffer("a", "int64", "inout"), Buffer("w", "int64", "inout"), Buffer("s", "int64", "inout"),
                           Scalar("n", "int64"), Scalar("m", "int64")),
                  bit_sort_ir("a", Var("n"), Var("m"), "w", "s", fresh_names()))
    out = compile_function(fn)(a=a, w=np.zeros((extent >> 6) + 1, np.int64), s=np.zeros((extent >> 12) + 1, np.int64),
                               n=n, m=extent)
    assert out["a"][:n].tolist() == sorted(lst)


PAIRS = (Buffer("k", "int64", "inout"), Buffer("v", "float64", "inout"), Buffer("tk", "int64", "inout"),
         Buffer("tv", "float64", "inout"), Buffer("c", "int64", "inout"), Scalar("span", "int64"),
         Scalar("lo", "int64"), Scalar("hi", "int64"))
#: a sum's terms sorted by key, stably: by counting (keys in [0, span)) and by merging their ascending runs
PAIR_SORTS = {
    "count": Function("count_pairs", PAIRS, count_sort_pairs_ir("k", "v", "tk", "tv", "c", Var("span"), Var("lo"),
                                                               Var("hi"), fresh_names())),
    "merge": Function("merge_pairs", PAIRS, merge_sort_pairs_ir("k", "v", "tk", "tv", Var("lo"), Var("hi"),
                                                               fresh_names()))}


@pytest.mark.parametrize("how", list(PAIR_SORTS))
@settings(max_examples=15, deadline=None)
@given(st.integers(1, 40), st.lists(st.integers(0, 39), max_size=60), st.integers(0, 3))
def test_pairs_sorted_stably_in_c_and_in_the_interpreter(how, span, keys, lo):
    """Each slice ``[lo, hi)`` sorted by key, the terms of one key in the order they came (their values tell),
    the slice's surroundings untouched, in C and by the interpreter."""
    keys = [x % span for x in keys]
    k = np.array([7] * lo + keys + [5], np.int64)
    v = np.arange(len(k), dtype=np.float64)
    hi = lo + len(keys)
    order = lo + np.argsort(keys, kind="stable")
    for run in (compile_function(PAIR_SORTS[how]), lambda **kw: interpret(PAIR_SORTS[how], **kw)):
        out = run(k=k.copy(), v=v.copy(), tk=np.zeros(len(k), np.int64), tv=np.zeros(len(k)),
                  c=np.zeros(span, np.int64), span=span, lo=lo, hi=hi)
        assert out["k"][lo:hi].tolist() == sorted(keys) and out["v"][lo:hi].tolist() == order.tolist()
        assert out["k"][:lo].tolist() == [7] * lo and out["k"][hi] == 5 and out["v"][hi] == hi
