"""Generalized iteration lattices: the notes' acceptance lattices and brute-force checks."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.user_functions import user_function
from compiler.lattice.cin import expr_accesses
from compiler.lattice.lattice import Operand, build_lattice, check_lattice, verify
from compiler.notation import parse
from compiler.notation.ast import Index


def ops_of(rhs, kinds=None, fills=None, dtypes=None):
    out, seen = [], set()
    for a in expr_accesses(rhs):
        if str(a) in seen:
            continue
        seen.add(str(a))
        out.append(Operand(a, (kinds or {}).get(a.tensor, "sparse"), True, (fills or {}).get(a.tensor, 0.0),
                           (dtypes or {}).get(a.tensor, "float64")))
    return out


def lattice(text, functions=None, neutral=0.0, **kw):
    p = parse(text, functions)
    L = build_lattice(Index("i"), p.rhs, ops_of(p.rhs, **kw), neutral=np.float64(neutral))
    return L, p.rhs


def points(L):
    return {("".join(sorted(L.operand(k).label for k in pt.present)), "P" if pt.producer else "O")
            for pt in L.points}


def f(name, alg, py):
    return user_function(name, py, "return x;", algebra=alg, dtype="float64")


XOR = f("xorf", "(x | y) & !(x & y)", lambda a, b: a + b if (a == 0) != (b == 0) else 0.0)
ANDNOT = f("andnot", "x & !y", lambda a, b: 0.0 if b else a)
ORNOT = f("ornot", "x | !y", lambda a, b: a + 1.0 if not b else a)
GAP = f("gap", "(x & y) | !y", lambda a, b: a + 1.0 if not b else a * b)
NEITHER = f("neither", "!x & !y", lambda a, b: 1.0 if not a and not b else 0.0)
TWO = user_function("two", lambda b, c, d: b * c + d if ((b != 0) + (c != 0) + (d != 0)) == 2 else 0.0,
                    "return x * y + z;", arity=3, algebra="((x & y) | (x & z) | (y & z)) & !(x & y & z)",
                    dtype="float64")
FUNCS = {"xorf": XOR, "andnot": ANDNOT, "ornot": ORNOT, "gap": GAP, "neither": NEITHER, "two": TWO}


def test_b_times_c_plus_d_has_exactly_three_points():
    L, e = lattice("a[i] = b[i] * (c[i] + d[i])")
    assert points(L) == {("bcd", "P"), ("bc", "P"), ("bd", "P")}
    assert [len(lp.iterated) for lp in L.loops] == [3, 2, 2] and not L.universe
    assert check_lattice(L, e).exact


def test_union_and_intersection():
    L, e = lattice("a[i] = b[i] + c[i]")
    assert points(L) == {("bc", "P"), ("b", "P"), ("c", "P")}
    assert check_lattice(L, e).exact
    L, e = lattice("a[i] = b[i] * c[i]")
    assert points(L) == {("bc", "P")} and len(L.loops) == 1


def test_xor_has_an_omitter():
    L, e = lattice("a[i] = xorf(b[i], c[i])", FUNCS)
    assert points(L) == {("bc", "O"), ("b", "P"), ("c", "P")}
    assert L.value_tests and check_lattice(L, e).exact


def test_complement_intersection_has_no_universe():  # a ∩ ¬b (Fig. 16)
    L, e = lattice("a[i] = andnot(b[i], c[i])", FUNCS)
    assert points(L) == {("bc", "O"), ("b", "P")} and not L.universe
    assert check_lattice(L, e).exact


def test_complement_union_sweeps_the_universe():  # a ∪ ¬b (Fig. 17)
    L, e = lattice("a[i] = ornot(b[i], c[i])", FUNCS, neutral=0.0)
    assert L.universe
    assert ("c", "O") in points(L) and ("", "P") in points(L)
    assert check_lattice(L, e).sound


def test_the_algorithm_2_gap_is_covered():  # (a ∩ b) ∪ ¬b, sparse-array-programming §4.6
    L, e = lattice("a[i] = gap(b[i], c[i])", FUNCS)
    pts = points(L)
    assert ("b", "P") in pts and ("bc", "P") in pts and ("c", "O") in pts
    assert check_lattice(L, e).sound


def test_neither_is_a_dense_sweep_of_omitters():
    L, e = lattice("a[i] = neither(b[i], c[i])", FUNCS)
    assert points(L) == {("bc", "O"), ("b", "O"), ("c", "O"), ("", "P")} and L.universe
    assert check_lattice(L, e).exact


def test_exactly_two_of_three():
    L, e = lattice("a[i] = two(b[i], c[i], d[i])", FUNCS)
    assert points(L) == {("bcd", "O"), ("bc", "P"), ("bd", "P"), ("cd", "P")}
    assert check_lattice(L, e).exact


def test_repeated_operand():  # (a ∪ b) ∩ b
    L, e = lattice("a[i] = (b[i] + c[i]) * c[i]")
    assert points(L) == {("bc", "P"), ("c", "P")}
    assert check_lattice(L, e).exact


def test_dense_operand_is_located_and_keeps_the_loop_alive():  # E9
    L, e = lattice("a[i] = b[i] + c[i]", kinds={"b": "dense"})
    assert L.universe and [lp.iterated for lp in L.loops] == [("c[i]",), ()]
    L, e = lattice("a[i] = b[i] * c[i]", kinds={"b": "dense"})
    assert not L.universe and [lp.iterated for lp in L.loops] == [("c[i]",)]


def test_non_zero_fills():
    # pow(b, c) with fills 0: union, fill 1; a dense sweep is not needed
    L, e = lattice("a[i] = pow(b[i], c[i])", neutral=1.0)
    assert not L.universe and check_lattice(L, e).sound
    # into a fill-0 output the fill differs: the universe
    L, e = lattice("a[i] = pow(b[i], c[i])", neutral=0.0)
    assert L.universe and check_lattice(L, e).sound


def test_min_plus_with_infinite_fill():
    inf = float("inf")
    p = parse("a[i] = b[i] + c[i]")
    L = build_lattice(Index("i"), p.rhs, ops_of(p.rhs, fills={"b": inf, "c": inf}), neutral=np.float64(inf))
    assert ("bc", "P") in points(L) and check_lattice(L, p.rhs).sound  # + does not declare inf
    plus = user_function("plus", np.add, "return x + y;", annihilator=inf, identity=0.0, commutative=True)
    p = parse("a[i] = plus(b[i], c[i])", {"plus": plus})
    L = build_lattice(Index("i"), p.rhs, ops_of(p.rhs, fills={"b": inf, "c": inf}), neutral=np.float64(inf))
    assert points(L) == {("bc", "P")}
    assert check_lattice(L, p.rhs).exact


def test_text_and_dot():
    L, e = lattice("a[i] = xorf(b[i], c[i])", FUNCS)
    assert "[b c | ] O  omit" in L.text()
    dot = L.dot()
    assert dot.startswith("digraph lattice") and "->" in dot and "#dc2626" in dot


# -- random algebras and expressions --------------------------------------------------------

_BINARY = ["+", "*", "-", "min", "max"]


@st.composite
def expressions(draw, depth=3):
    names = ["b", "c", "d"]
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.integers(0, 5)) == 0:
            return str(draw(st.sampled_from([0.0, 1.0, 2.0])))
        return f"{draw(st.sampled_from(names))}[i]"
    op = draw(st.sampled_from(_BINARY))
    a, b = draw(expressions(depth=depth - 1)), draw(expressions(depth=depth - 1))
    return f"({a} {op} {b})" if op in "+*-" else f"{op}({a}, {b})"


@settings(max_examples=75, deadline=None)
@given(expressions(), st.fixed_dictionaries({t: st.sampled_from([0.0, 1.0, float("inf"), -1.0])
                                             for t in "bcd"}),
       st.fixed_dictionaries({t: st.sampled_from(["sparse", "sparse", "dense"]) for t in "bcd"}))
def test_random_lattices_are_sound(expr, fills, kinds):
    p = parse(f"a[i] = {expr}")
    if not expr_accesses(p.rhs):
        return
    from compiler.lattice.algebra import derive
    _, fill, _ = derive(p.rhs, lambda a: fills[a.tensor])
    L = build_lattice(Index("i"), p.rhs, ops_of(p.rhs, kinds=kinds, fills=fills), neutral=fill)
    verify(L, p.rhs)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["x & !y", "x | !y", "(x & y) | !y", "!x & !y", "(x | y) & !(x & y)",
                        "!(x & y)", "x & y", "x | y", "!x | y", "(!x & y) | !y"]))
def test_random_explicit_algebras_are_exact(text):
    from compiler.lattice.algebra import holds, parse_algebra
    alg = parse_algebra(text, ("x", "y"))

    def py(a, b):
        present = {n for n, v in (("x", a), ("y", b)) if v != 0}
        return (a + 2 * b + 1.0) if holds(alg, present) else 0.0
    fn = user_function("alg_fn", py, "return x;", algebra=text, dtype="float64")
    L, e = lattice("a[i] = alg_fn(b[i], c[i])", {"alg_fn": fn})
    assert check_lattice(L, e).exact, L.text()
