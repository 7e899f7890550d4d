"""Conditionals over operands of different fills (issue 30): ``where(c, x, y)``'s iteration algebra is bounded by
its condition where the condition's fill picks one argument, and a case whose condition folds to a literal picks
its argument, so the lattice has no points that compute the fill.

``xp.where(a != b, xp.where(c == d, d, e), 0.0)`` over five sparse vectors (e's fill -inf) had the union of c, d
and e as its algebra, every one of the 31 regions a producer (``where(false, ..., 0.0)`` at the regions without a
or b): 1,495 lines of C, 29 loops; over 1x1x1 tensors of the differential test, 4,051 lines and 12-55 s."""

import re

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.array.build import WHERE
from compiler.lattice.algebra import derive
from compiler.lattice.lattice import identical, simplify_rules
from compiler.notation import parse
from compiler.notation.ast import Literal
from compiler.rewrite import rewrite
from tests.compiler.lattice.test_cfir_nonfinite_products import stored

nan, inf = np.nan, np.inf


def algebra(text, fills):
    a, f, rules = derive(parse(text, {"where": WHERE}).rhs, lambda acc: fills[acc.tensor])
    return str(a), f, rules


def test_a_condition_at_its_fill_picks_the_argument_the_algebra_follows():
    # b != c is False wherever neither is stored, so the result is 0.0 there whatever x holds
    a, f, rules = algebra("a[i] = where(b[i] != c[i], x[i], 0.0)", {"b": 0.0, "c": 0.0, "x": 0.0})
    assert a == "((b[i] ∪ c[i]) ∩ x[i])"
    assert f == 0.0 and rules[-1] == "selection-by-condition: where(b[i] != c[i], x[i], 0.0)"
    # (x of another fill may be picked wherever b or c is stored)
    assert algebra("a[i] = where(b[i] != c[i], x[i], 0.0)", {"b": 0.0, "c": 0.0, "x": 1.0})[0] == "(b[i] ∪ c[i])"
    # d == e is True (0 == 0) where neither is stored: e there, whatever y (fill -inf) holds
    a, f, _ = algebra("a[i] = where(d[i] == e[i], e[i], y[i])", {"d": 0.0, "e": 0.0, "y": -inf})
    assert a == "(e[i] ∪ d[i])" and f == 0.0
    # arguments of different fills: wherever the condition is stored the other one may be picked
    a, f, _ = algebra("a[i] = where(b[i] > 1.0, x[i], y[i])", {"b": 0.0, "x": nan, "y": 0.0})
    assert a == "(y[i] ∪ b[i])" and f == 0.0
    # a NaN condition is true (numpy's where): x's fill
    a, f, _ = algebra("a[i] = where(b[i], x[i], y[i])", {"b": nan, "x": 2.0, "y": 0.0})
    assert a == "(x[i] ∪ b[i])" and f == 2.0


def test_a_condition_of_unknown_fill_keeps_the_union_of_the_selected():
    a, f, rules = algebra("a[i] = where(i < 3, x[i], y[i])", {"x": 0.0, "y": 0.0})
    assert a == "(x[i] ∪ y[i])" and rules[-1] == "selection: where(i < 3, x[i], y[i])"


def simplified(text, dtypes):
    e = parse(text, {"where": WHERE}).rhs
    return rewrite(e, simplify_rules(lambda acc: dtypes[acc.tensor]), [])


def test_a_literal_condition_or_one_literal_in_both_arguments_folds():
    assert str(simplified("a[i] = where(true, 0.0, e[i])", {"e": "float64"})) == "0.0"
    assert str(simplified("a[i] = where(false, 0.0, e[i])", {"e": "float64"})) == "e[i]"
    assert str(simplified("a[i] = where(b[i] != c[i], where(true, 0.0, e[i]), 0.0)",
                          {"b": "float64", "c": "float64", "e": "float64"})) == "0.0"
    # (the picked argument keeps the call's dtype: an int32 argument of a float64 where is not picked)
    assert str(simplified("a[i] = where(true, e[i], 0.0)", {"e": "int32"})).startswith("where(")
    # -0.0 and 0.0 are two values: the condition still picks one
    kept = simplified("a[i] = where(b[i] > 0.0, -0.0, 0.0)", {"b": "float64"})
    assert not isinstance(kept, Literal)
    assert identical(np.float64(nan), np.float64(nan)) and not identical(np.float64(-0.0), np.float64(0.0))


def sparse(values, fill):
    return xp.asarray(ss.Tensor.from_numpy(np.asarray(values, dtype=float), "sparse_vector" if fill == 0.0 else
                                           ss.parse_format("sparse_vector", ndim=1, fill=fill)))


VALUES = {"a": [0.0, 1.0, 2.0, 0.0, 3.0, 0.0], "b": [0.0, 1.0, 0.0, 5.0, 0.0, 0.0],
          "c": [1.0, 0.0, 2.0, 0.0, 4.0, 0.0], "d": [0.0, 0.0, 2.0, 5.0, 0.0, 7.0],
          "e": [-inf, 3.0, -inf, 6.0, 1.0, 2.0]}


def test_the_differential_tests_conditional_has_only_points_its_condition_allows():
    a, b, c, d = (sparse(VALUES[n], 0.0) for n in "abcd")
    e = sparse(VALUES["e"], -inf)
    expr = xp.where(xp.astype(a != b, xp.float64) != 0.0, xp.where(c == d, d, e), 0.0)
    A, B, C, D, E = (np.array(VALUES[n]) for n in "abcde")
    np.testing.assert_array_equal(np.asarray(expr.compute(strategy="lattice")),
                                  np.where(A != B, np.where(C == D, D, E), 0.0))
    k = ss.lower(expr, strategy="lattice")
    text = k.trace.find("lattice")[0].artifact("lattice").text
    points, loops = text.split("loops:")
    # a producer needs a or b (the condition) and c or d (the inner where's), e free: 3 * 3 * 2 points of the
    # 2^5 - 1 = 31 regions of five sparse operands, each a producer before (in 29 loops); their 18 loops are
    # merged into one (test_lattice_merged_loops.py)
    producers = [set(m.group(1).split()) for m in re.finditer(r"^\[([^|]*)\| *\] P ", points, re.M)]
    assert producers and all(p & {"A", "B"} and p & {"C", "D"} for p in producers), producers
    assert len(producers) <= 18 and len(loops.strip().splitlines()) == 1
    assert k.c_source.count("while (") == 1 + 1    # (and the one in the C's buffer growth)


#: stored values: signed zeros, NaN and infinities among them, and each fill below (an explicit fill)
STORED = [1.0, -2.0, 0.0, -0.0, nan, inf, -inf]


@st.composite
def conditionals(draw):
    """Four or five sparse vectors of distinct fills and a nested where over them, as numpy computes it."""
    n = draw(st.integers(1, 5))
    count = draw(st.integers(4, 5))
    fills = draw(st.lists(st.sampled_from([0.0, 1.0, -inf, inf, nan]), min_size=count, max_size=count))
    ops = []
    for fill in fills:
        values = np.array(draw(st.lists(st.sampled_from(STORED + [fill]), min_size=n, max_size=n)))
        mask = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
        fmt = draw(st.sampled_from(["sparse_vector", "coo", "dense"]))
        ops.append((stored(values, mask, fmt, fill), np.where(mask, values, fill)))
    shape = draw(st.sampled_from(["ne-eq", "gt-lt", "outer-literal"]))
    lit = draw(st.sampled_from([0.0, -0.0, 1.0, nan]))
    return shape, lit, ops


def build(shape, lit, arrays, where, ne, eq, gt, lt):
    a, b, c, d, *rest = arrays
    e = rest[0] if rest else d
    if shape == "ne-eq":
        return where(ne(a, b), where(eq(c, d), d, e), lit)
    if shape == "gt-lt":
        return where(gt(a, lit), where(lt(b, c), c, e), d)
    return where(eq(a, b), lit, where(ne(c, e), e, d))


@settings(max_examples=5, deadline=None)
@given(conditionals())
@example(("ne-eq", 0.0, [(stored(np.array(v), np.array([True] * 3), "sparse_vector", f), np.array(v))
                          for v, f in [([0.0, 1.0, nan], 0.0), ([0.0, 0.0, nan], 0.0), ([-0.0, 2.0, 1.0], 1.0),
                                       ([inf, 2.0, -inf], -inf), ([nan, -inf, 0.0], nan)]]))
def test_nested_conditionals_over_distinct_fills_agree_with_numpy(drawn):
    shape, lit, ops = drawn
    tensors = [xp.asarray(t) for t, _ in ops]
    want = build(shape, lit, [dense for _, dense in ops], np.where, np.not_equal, np.equal, np.greater, np.less)
    got = build(shape, lit, tensors, xp.where, xp.not_equal, xp.equal, xp.greater, xp.less)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(np.asarray(got.compute(strategy="lattice")), want)
        np.testing.assert_array_equal(np.asarray(got.compute()), want)


@pytest.mark.parametrize("strategy", ["lattice", None])
def test_all_fill_and_empty_operands(strategy):
    a, b, c, d = (sparse([0.0] * 4, 0.0) for _ in range(4))
    e = sparse([-inf] * 4, -inf)
    expr = xp.where(a != b, xp.where(c == d, d, e), 0.0)
    np.testing.assert_array_equal(np.asarray(expr.compute(strategy=strategy)), np.zeros(4))
