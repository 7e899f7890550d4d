"""Iteration algebras derived from operator properties and fill values."""

import math

import numpy as np
import pytest

from compiler.algebra import NOVALUE, lookup
from compiler.user_functions import user_function
from compiler.lattice.algebra import (AlgebraError, Complement, Intersect, Region, Union, Universe, de_morgan,
                                      derive, holds, parse_algebra)
from compiler.notation import parse

inf = math.inf


def alg(text, fills, functions=None):
    e = parse(text, functions).rhs
    a, f, rules = derive(e, lambda acc: fills[acc.tensor])
    return str(a), f


def test_mul_is_intersection_add_is_union():
    assert alg("a[i] = b[i] * c[i]", {"b": 0.0, "c": 0.0})[0] == "(b[i] ∩ c[i])"
    assert alg("a[i] = b[i] + c[i]", {"b": 0.0, "c": 0.0})[0] == "(b[i] ∪ c[i])"


def test_annihilator_with_infinite_fills():  # E-P5: max(A, B, C) with fills inf, inf, 0
    a, f = alg("d[i] = max(max(A[i], B[i]), C[i])", {"A": inf, "B": inf, "C": 0.0})
    assert a == "(A[i] ∩ B[i])" or a == "(A[i] ∪ B[i])" or "A[i]" in a
    assert f == inf


def test_identity_all_but_one_sets_the_fill():  # E-P7: max(A, B), A fill -inf, B fill 42
    a, f = alg("c[i] = max(A[i], B[i])", {"A": -inf, "B": 42.0})
    assert a == "(A[i] ∪ B[i])" and f == 42.0


def test_idempotent_same_fill_is_union():  # E-P6
    a, f = alg("c[i] = min(A[i], B[i])", {"A": 7.0, "B": 7.0})
    assert a == "(A[i] ∪ B[i])" and f == 7.0


def test_positional_annihilator():  # E-P8: a / b is not a builtin annihilator; ldexp is, at position 0
    a, f = alg("c[i] = ldexp(a[i], b[i])", {"a": 0.0, "b": np.int64(3)})
    assert a == "a[i]" and f == 0.0


def test_explicit_algebra_checks_fills():  # E-P1 / E-P2
    gcd = user_function("gcd", math.gcd, "return x;", algebra="x | y", commutative=True)
    assert alg("a[i] = gcd(b[i], c[i])", {"b": np.int64(0), "c": np.int64(0)},
               {"gcd": gcd})[0] == "(b[i] ∪ c[i])"
    assert alg("a[i] = gcd(b[i], c[i])", {"b": np.int64(1), "c": np.int64(0)}, {"gcd": gcd})[0] == "U"


def test_nested_explicit_algebra_needs_fill_inference():  # E-P4
    gcd = user_function("gcd", math.gcd, "return x;", algebra="x | y")
    band = lookup("&")
    e = parse("a[i] = gcd(b[i], c[i]) & d[i]", {"gcd": gcd}).rhs
    a, f, _ = derive(e, lambda acc: np.int64(0))
    assert str(a) == "((b[i] ∪ c[i]) ∩ d[i])" and band.annihilator == 0


def test_literal_is_defined_nowhere():
    a, f = alg("c[i] = b[i] + 1", {"b": 0.0})
    assert a == "b[i]" and f == 1.0


def test_unknown_fill_gives_universe():
    a, f = alg("c[i] = sum[j](B[i, j])", {"B": 1.0})
    assert a == "U" and f is NOVALUE


def test_de_morgan_and_holds():
    x = de_morgan(Complement(Union(Region("a"), Intersect(Region("b"), Complement(Region("c"))))))
    assert str(x) == "(¬a ∩ (¬b ∪ c))"
    assert holds(x, set()) and not holds(x, {"a"}) and holds(x, {"b", "c"}) and not holds(x, {"b"})


def test_parse_algebra_errors():
    with pytest.raises(AlgebraError, match="missing"):
        parse_algebra("(x | y", ("x", "y"))
    with pytest.raises(AlgebraError, match="unexpected character"):
        parse_algebra("x + y", ("x", "y"))


def test_derivation_rows_in_the_trace_name_the_algebra_derived():
    """Each derive:* row goes from the sub-expression a rule fired on to the iteration algebra
    it derived for it (the rows had no right-hand side; the explorer drew a bare arrow)."""
    import compiler as ss

    trace = ss.lower("y[i] = max(A[i], B[i]) * C[i] + D[i]", "lattice", A="sv", B="sv", C="sv", D="sv").trace
    rows = {(r.rule, r.before): r.after for s in trace.steps for r in s.rewrites if r.rule.startswith("derive:")}
    assert rows[("derive:idempotent", "max(A[i], B[i])")] == "(A[i] ∪ B[i])"
    assert rows[("derive:annihilator", "max(A[i], B[i]) * C[i]")] == "((A[i] ∪ B[i]) ∩ C[i])"
    assert rows[("derive:identity", "max(A[i], B[i]) * C[i] + D[i]")] == "(((A[i] ∪ B[i]) ∩ C[i]) ∪ D[i])"
    # the last row's algebra is the lattice's
    lattice = next(s for s in trace.steps if s.stage == "lattice").artifact("lattice").text
    assert "algebra (((A[i] ∪ B[i]) ∩ C[i]) ∪ D[i])" in lattice


def test_selection_with_one_fill_is_the_union_of_the_selected():
    # where(c, x, y) is x or y: where both are at one fill so is the result, whatever c holds (c's
    # fill unknown: a coordinate comparison), so only x and y make points
    where = user_function("sel", lambda c, x, y: np.where(c, x, y), "return x ? y : z;", arity=3, selects=(1, 2))
    fills = {"b": np.float64(0.0), "c": np.float64(0.0), "d": np.float64(np.nan)}
    rules = []
    a, f = derive(parse("a[i] = sel(i < 3, b[i], c[i])", {"sel": where}).rhs, lambda acc: fills[acc.tensor], rules)
    assert str(a) == "(b[i] ∪ c[i])" and f == 0.0 and rules[-1] == "selection: sel(i < 3, b[i], c[i])"
    a, f = alg("a[i] = sel(i < 3, b[i], 0.0)", fills, {"sel": where})
    assert a == "b[i]" and f == 0.0
    # (NaN is one fill too; two different fills leave the result's fill to the condition)
    a, f = alg("a[i] = sel(i < 3, d[i], d[i] * 2)", fills, {"sel": where})
    assert a == "d[i]" and np.isnan(f)
    a, f = alg("a[i] = sel(i < 3, b[i], d[i])", fills, {"sel": where})
    assert a == str(Universe()) and f is NOVALUE
