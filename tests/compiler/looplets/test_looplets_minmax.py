"""The min/max folding of compiler.looplets.extents: dominated and absorbed terms dropped
(``max(min(a, b), a)`` is ``a``), a term common to every min of a max factored out
(``max(min(a, s), min(b, s))`` is ``min(max(a, b), s)``), checked by evaluating the folded
expression against Python's min and max on every assignment drawn."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.imperative.ir import BinOp, Const, Select, Var
from compiler.looplets import extents as X

NAMES = "abcs"


def value(e, env):
    """An integer IR expression (variables, constants, +, -, selects on < and >) evaluated."""
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Select):
        return value(e.then if value(e.cond, env) else e.otherwise, env)
    if isinstance(e, BinOp):
        a, b = value(e.left, env), value(e.right, env)
        return {"+": a + b, "-": a - b, "<": a < b, ">": a > b}[e.op]
    raise TypeError(e)


@st.composite
def terms(draw, depth=3):
    """``(expression, python function of the environment)``: nested mins and maxes of the
    variables, offsets of them and constants."""
    if depth == 0 or draw(st.booleans()):
        kind = draw(st.sampled_from(["var", "offset", "const"]))
        if kind == "const":
            k = draw(st.integers(-3, 3))
            return Const(k, "int64"), lambda env: k
        n = draw(st.sampled_from(NAMES))
        d = draw(st.integers(-1, 1)) if kind == "offset" else 0
        return X.add(Var(n), d), lambda env: env[n] + d
    kind = draw(st.sampled_from(["min", "max"]))
    parts = draw(st.lists(terms(depth - 1), min_size=1, max_size=4))
    fold, py = (X.imin, min) if kind == "min" else (X.imax, max)
    return fold(*[e for e, _ in parts]), lambda env: py(f(env) for _, f in parts)


@settings(max_examples=150, deadline=None)
@given(terms(), st.lists(st.fixed_dictionaries({n: st.integers(-4, 4) for n in NAMES}), min_size=1, max_size=6))
def test_folded_min_max_equals_its_terms(term, envs):
    e, f = term
    for env in envs:
        assert value(e, env) == f(env)


def test_a_phase_chains_stops_fold_to_one_term():
    a, b, c, s = (Var(n) for n in "abcs")
    stops = [X.imin(a, b, c, s), X.imin(a, b, s), X.imin(a, c, s), X.imin(a, s), X.imin(b, c, s),
             X.imin(b, s), X.imin(c, s)]
    assert X.imax(*stops) == X.imin(X.imax(a, b, c), s)
    assert X.imax(X.imin(a, s), a) == a
    assert X.imin(X.imax(a, b), c, a) == X.imin(c, a)
