"""The simplifier's rules, run on the shared rewrite engine."""

import pytest

from compiler.algebra import lookup
from compiler.looplets.program import (MISSING, Access, Assign, Call, Extent, Index, Literal, Loop, Sieve,
                                       TensorRef)
from compiler.looplets.simplify import simplify

add, mul, mn = lookup("+"), lookup("*"), lookup("min")
x = Access(TensorRef("x"), (Index("i"),))
s = Access(TensorRef("s"), (), "update")
c = Access(TensorRef("c"), ())


def rules(term):
    log = []
    out = simplify(term, log)
    return out, [r.rule for r in log]


def test_constant_folding():
    out, log = rules(Call(add, (Literal(2), Call(mul, (Literal(3), Literal(4))))))
    assert out == Literal(14) and log == ["fold", "fold"]


def test_identity_and_annihilator():
    assert rules(Call(add, (x, Literal(0.0))))[0] == x
    assert rules(Call(mul, (Literal(1.0), x)))[0] == x
    assert rules(Call(mul, (x, Literal(0.0))))[0] == Literal(0.0)


def test_sieves():
    assert str(rules(Sieve(Literal(True), Assign(s, add, c)))[0]) == "s[] += c[]"
    out, log = rules(Sieve(Literal(False), Assign(s, add, c)))
    assert str(out) == "pass" and "sieve-false" in log


def test_integrate_run_into_n_times_x():
    out, log = rules(Loop(Index("i"), Extent(2, 10), Assign(s, add, c)))
    assert str(out) == "s[] += 8 * c[]" and "integrate" in log


def test_idempotent_loop_updates_once():
    out, _ = rules(Loop(Index("i"), Extent(0, 5), Assign(s, mn, c)))
    assert str(out) == "s[] <<min>>= c[]"


def test_empty_loop_elimination():
    out, log = rules(Loop(Index("i"), Extent(0, 5), Assign(s, add, Call(mul, (c, Literal(0.0))))))
    assert str(out) == "pass" and log[-1] == "empty-loop"


def test_missing_and_coalesce():
    assert rules(Call(add, (x, Literal(MISSING))))[0] == Literal(MISSING)
    assert rules(Call("coalesce", (Literal(MISSING), c)))[0] == c
    assert str(rules(Assign(s, None, Literal(MISSING)))[0]) == "pass"


def test_loop_of_index_dependent_body_is_kept():
    loop = Loop(Index("i"), Extent(0, 5), Assign(s, add, x))
    assert rules(loop)[0] == loop
