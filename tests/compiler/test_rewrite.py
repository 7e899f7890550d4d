from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.rewrite import Rule, RewriteLimitError, map_children, rewrite, rule


@dataclass(frozen=True)
class Num:
    v: int

    def __str__(self):
        return str(self.v)


@dataclass(frozen=True)
class Var:
    name: str

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Op:
    op: str
    args: tuple

    def __str__(self):
        return "(" + f" {self.op} ".join(map(str, self.args)) + ")"


@rule("mul-by-zero")
def mul_zero(t):
    if isinstance(t, Op) and t.op == "*" and Num(0) in t.args:
        return Num(0)


@rule("add-zero")
def add_zero(t):
    if isinstance(t, Op) and t.op == "+" and Num(0) in t.args:
        rest = tuple(a for a in t.args if a != Num(0))
        return rest[0] if len(rest) == 1 else Op("+", rest) if rest else Num(0)


@rule("fold")
def fold(t):
    if isinstance(t, Op) and all(isinstance(a, Num) for a in t.args):
        out = 0 if t.op == "+" else 1
        for a in t.args:
            out = out + a.v if t.op == "+" else out * a.v
        return Num(out)


RULES = [mul_zero, add_zero, fold]


def evaluate(t, env):
    if isinstance(t, Num):
        return t.v
    if isinstance(t, Var):
        return env[t.name]
    vals = [evaluate(a, env) for a in t.args]
    out = 0 if t.op == "+" else 1
    for v in vals:
        out = out + v if t.op == "+" else out * v
    return out


terms = st.recursive(
    st.one_of(st.integers(-3, 3).map(Num), st.sampled_from("xy").map(Var)),
    lambda inner: st.builds(Op, st.sampled_from("+*"), st.lists(inner, min_size=2, max_size=3).map(tuple)),
    max_leaves=10,
)


@settings(max_examples=75)
@given(terms, st.integers(-5, 5), st.integers(-5, 5))
def test_rewriting_preserves_meaning_and_log_chains(t, x, y):
    log = []
    out = rewrite(t, RULES, log)
    assert evaluate(out, {"x": x, "y": y}) == evaluate(t, {"x": x, "y": y})
    # no rule applies to the result any more
    assert rewrite(out, RULES) == out
    # rules that say which terms they match rewrite alike (and log alike)
    typed_log = []
    assert rewrite(t, [Rule(r.name, r.fn, (Op,)) for r in RULES], typed_log) == out
    assert typed_log == log


def test_log_records_rule_before_after():
    log = []
    out = rewrite(Op("+", (Op("*", (Var("x"), Num(0))), Var("y"))), RULES, log)
    assert out == Var("y")
    assert [(r.rule, r.before, r.after) for r in log] == [
        ("mul-by-zero", "(x * 0)", "0"),
        ("add-zero", "(0 + y)", "y"),
    ]


def test_map_children_shares_unchanged_trees():
    t = Op("+", (Var("x"), Num(1)))
    assert map_children(t, lambda c: c) is t


def test_non_terminating_rules_are_reported():
    flip = Rule("flip", lambda t: Op("+", t.args[::-1]) if isinstance(t, Op) else None)
    with pytest.raises(RewriteLimitError, match="did not terminate; last rule 'flip'"):
        rewrite(Op("+", (Var("x"), Var("y"))), [flip], max_steps=50)


def test_a_rule_is_tried_on_its_types_alone():
    seen = []

    def only_ops(t):
        seen.append(type(t).__name__)
        return fold.fn(t)
    out = rewrite(Op("+", (Op("*", (Num(2), Num(3))), Var("x"))), [Rule("fold", only_ops, (Op,))])
    assert out == Op("+", (Num(6), Var("x")))
    assert set(seen) == {"Op"}


def test_a_subtree_at_its_fixpoint_is_not_rewritten_again():
    """``0 + s`` -> ``s``: the engine looks at the replacement's children again, but ``s`` was
    rewritten to its fixpoint already, so no rule is tried on its leaves a second time."""
    tried = []

    def spy(t):
        tried.append(t)
        return None
    s = Op("*", (Var("x"), Var("y")))
    rewrite(Op("+", (Num(0), s)), [add_zero, Rule("spy", spy)])
    assert tried.count(Var("x")) == 1 and tried.count(Var("y")) == 1


def test_terms_fixed_in_one_call_are_not_rewritten_in_the_next():
    """A caller keeping ``fixed`` across calls (a lowering simplifying one body after another)
    has the subtrees it simplified before left alone; the result is the same."""
    tried = []

    def spy(t):
        tried.append(t)
        return None
    rules = [add_zero, Rule("spy", spy)]
    s = Op("*", (Var("x"), Var("y")))
    fixed = {}
    assert rewrite(s, rules, fixed=fixed) is s
    tried.clear()
    assert rewrite(Op("+", (Num(0), s)), rules, fixed=fixed) is s
    assert Var("x") not in tried and s not in tried
