"""The simplifier's rules, run on the shared rewrite engine."""


from compiler.algebra import lookup
from compiler.looplets.program import (MISSING, Access, Assign, Block, Call, Extent, Index, Literal, Loop, Sieve,
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


def test_comparisons_with_an_infinity_that_are_never_true():
    # (found in Bellman-Ford's step: over the weights' fill region `F[i] |= inf < D[i]` updated every vertex)
    inf = float("inf")
    for op, args in (("<", (Literal(inf), x)), ("<", (x, Literal(-inf))), (">", (Literal(-inf), x)),
                     (">", (x, Literal(inf)))):
        out, log = rules(Call(lookup(op), args))
        assert out == Literal(False) and log == ["never"]
    for op, args in (("<", (x, Literal(inf))), ("<=", (Literal(inf), x)), (">", (Literal(inf), x))):
        assert isinstance(rules(Call(lookup(op), args))[0], Call)   # (true or false depending on x)


def test_a_literal_let_is_substituted_and_updates_by_the_identity_vanish():
    from compiler.looplets.program import Define, Variable
    d = Variable("d")
    upd = Access(TensorRef("D"), (Index("i"),), "update")
    flag = Access(TensorRef("F"), (Index("i"),), "update")
    body = Loop(Index("i"), Extent(0, 8), Define(d, Call(add, (c, Literal(float("inf")))), Block((
        Assign(upd, mn, d), Assign(flag, lookup("|"), Call(lookup("<"), (d, x)))))))
    out, log = rules(body)
    assert str(out) == "pass" and {"define-literal", "never", "noop-update"} <= set(log)
    # a bool literal updates by |'s identity 0, not by &'s -1
    assert str(rules(Assign(flag, lookup("|"), Literal(False)))[0]) == "pass"
    assert str(rules(Assign(flag, lookup("&"), Literal(True)))[0]) != "pass"


def test_a_selection_of_one_literal_is_that_literal():
    import numpy as np
    from compiler.user_functions import user_function
    where = user_function("sel", lambda c, x, y: np.where(c, x, y), "return x ? y : z;", arity=3, selects=(1, 2))
    out, log = rules(Call(where, (x, Literal(0.0), Literal(0.0))))
    assert out == Literal(0.0) and log == ["select"]
    assert rules(Call(where, (x, Literal(0.0), Literal(1.0))))[0] == Call(where, (x, Literal(0.0), Literal(1.0)))
    assert rules(Call(where, (x, c, Literal(0.0))))[1] == []
