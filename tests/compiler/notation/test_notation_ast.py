"""AST nodes: construction, printing, queries, hashing, JSON, and print -> parse round trips."""

import json
import math

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from compiler import serialize
from compiler.algebra import OPERATORS, choose, lookup
from compiler.user_functions import user_function
from compiler.notation import Access, Assign, Call, Index, Literal, Reduce, accesses, free_indices, parse, walk
from compiler.notation.ast import BINARY_PRECEDENCE

GCD = user_function("gcd", math.gcd, "return 0;", identity=0, commutative=True, associative=True)
F3 = user_function("f3", lambda a, b, c: a, "return x;", arity=3)
FUNCTIONS = {"gcd": GCD, "f3": F3}


def test_construction_normalizes():
    a = Access("A", ["i", Index("j")])
    assert a.indices == (Index("i"), Index("j")) and str(a) == "A[i, j]"
    assert Access("s").indices == () and str(Access("s")) == "s[]"
    r = Reduce(lookup("+"), ["j"], a)
    assert r.indices == (Index("j"),) and str(r) == "sum[j](A[i, j])"
    with pytest.raises(TypeError):
        Call(lookup("+"), (a,))
    with pytest.raises(TypeError):
        Literal("x")


def test_literals():
    import numpy as np
    assert Literal(np.float32(1.5)).value == 1.5 and Literal(np.int64(3)).dtype == np.dtype("int64")
    assert Literal(True).dtype == np.dtype("bool") and Literal(2.0).dtype == np.dtype("float64")
    assert Literal(math.nan) == Literal(float("nan")) and hash(Literal(math.nan)) == hash(Literal(math.nan))
    assert Literal(1) != Literal(True) and Literal(1) != Literal(1.0)
    assert [str(Literal(v)) for v in (True, -math.inf, math.nan, 1e-3, -2)] == ["true", "-inf", "nan", "0.001", "-2"]


def test_printer_precedence():
    add, sub, mul, neg = lookup("+"), lookup("-"), lookup("*"), lookup("neg")
    a, b, c = Access("a", ["i"]), Access("b", ["i"]), Access("c", ["i"])
    assert str(Call(mul, (Call(add, (a, b)), c))) == "(a[i] + b[i]) * c[i]"
    assert str(Call(sub, (a, Call(sub, (b, c))))) == "a[i] - (b[i] - c[i])"
    assert str(Call(neg, (Call(add, (a, b)),))) == "-(a[i] + b[i])"
    assert str(Call(neg, (Literal(3),))) == "-(3)"
    assert str(Call(lookup("<"), (Call(lookup("<"), (a, b)), c))) == "(a[i] < b[i]) < c[i]"
    assert str(Call(choose(0), (a, b))) == "choose(0)(a[i], b[i])"
    assert str(Assign(Access("y", ["i"]), lookup("bitxor"), a)) == "y[i] ^= a[i]"
    assert str(Assign(Access("y", ["i"]), GCD, a)) == "y[i] <<gcd>>= a[i]"
    assert Assign(Access("y", ["i"]), None, a).pretty() == "y[i] = a[i]"


def test_queries():
    a = parse("y[i] = A[i, j] * x[j] + sum[k](B[i, k])")
    assert [str(x) for x in accesses(a)] == ["y[i]", "A[i, j]", "x[j]", "B[i, k]"]
    assert free_indices(a.rhs) == (Index("i"),)
    assert free_indices(a.rhs.args[0].body) == (Index("i"), Index("j"))
    assert sum(isinstance(n, Reduce) for n in walk(a)) == 2
    assert a.reduction_op == lookup("+")


def test_hash_and_json():
    a = parse("y[i] = gcd(A[i, j], 2) + min[k](B[i, k] * -inf) + nan", functions=FUNCTIONS)
    b = parse("y[i] = gcd(A[i, j], 2) + min[k](B[i, k] * -inf) + nan", functions=FUNCTIONS)
    assert a == b and hash(a) == hash(b)
    back = serialize.decode(json.loads(json.dumps(serialize.encode(a))))
    assert back == a and str(back) == str(a)


# -- random ASTs -------------------------------------------------------------------

INDICES = ["i", "j", "k"]
BINARY = [OPERATORS[n] for n in BINARY_PRECEDENCE] + [lookup(n) for n in ("min", "max", "pow", "ldexp",
                                                                        "overwrite")] + [choose(0), GCD]
UNARY = [lookup(n) for n in ("neg", "not", "abs", "sqrt", "exp", "log")]
REDUCERS = [op for op in BINARY if op.reducible]

literals = st.one_of(
    st.booleans(), st.integers(-2**63, 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
).map(Literal)
access = st.builds(lambda t, idx: Access(t, idx), st.sampled_from(["A", "B", "x"]),
                   st.lists(st.sampled_from(INDICES), min_size=1, max_size=3))


def extend(children):
    return st.one_of(
        st.builds(lambda op, a, b: Call(op, (a, b)), st.sampled_from(BINARY), children, children),
        st.builds(lambda op, a: Call(op, (a,)), st.sampled_from(UNARY), children),
        st.builds(lambda a, b, c: Call(F3, (a, b, c)), children, children, children),
        st.builds(lambda op, idx, body: _reduce(op, idx, body), st.sampled_from(REDUCERS),
                  st.lists(st.sampled_from(INDICES), min_size=1, max_size=2, unique=True), children),
    )


def _reduce(op, idx, body):
    free = free_indices(body)
    idx = [Index(i) for i in idx if Index(i) in free]
    return Reduce(op, idx, body) if idx else body


expressions = st.recursive(st.one_of(literals, access), extend, max_leaves=12)


def _reduced_indices(e):
    return {i for n in walk(e) if isinstance(n, Reduce) for i in n.indices}


@settings(max_examples=150, deadline=None)
@given(rhs=expressions, op=st.sampled_from([None, lookup("+"), lookup("min"), lookup("bitor"), GCD, choose(1)]))
def test_print_parse_round_trip(rhs, op):
    out = free_indices(rhs)
    # an index both reduced somewhere and free elsewhere would become an output index,
    # which the parser (rightly) refuses to reduce
    assume(not (set(out) & _reduced_indices(rhs)))
    a = Assign(Access("y", out), op, rhs)
    text = str(a)
    assert parse(text, functions=FUNCTIONS) == a, text
    assert serialize.decode(json.loads(json.dumps(serialize.encode(a)))) == a


# -- where the printer puts each part ------------------------------------------------


def _parts_of(node):
    """The accesses and reductions of ``node`` in the order they are printed (as walk gives them)."""
    return [n for n in walk(node) if isinstance(n, (Access, Reduce))]


@settings(max_examples=50, deadline=None)
@given(rhs=expressions, op=st.sampled_from([None, lookup("+"), GCD]))
@example(rhs=Call(lookup("*"), (Access("where", ["i"]), Access("end", ["i"]))), op=None)  # keywords to patterns
@example(rhs=Reduce(lookup("+"), ["j"], Access("Run", ["i", "j"])), op=None)   # a looplet's name to patterns
def test_printed_parts_are_what_the_printer_printed_for_each_node(rhs, op):
    """Each part a step records (``show_parts``: issue 29 §5) spans exactly the text the printer
    printed for its node: an access's own text (the left side written, the others read), a
    reduction's head; in print order, one per access and reduction, nothing else."""
    from compiler.notation.ast import access_about, reduction_name, show_parts
    a = Assign(Access("y", free_indices(rhs)), op, rhs)
    text, parts = show_parts(a)
    assert text == str(a)
    nodes = _parts_of(a)
    assert len(parts) == len(nodes) and [p[0] for p in parts] == sorted(p[0] for p in parts)
    for k, ((start, end, about, role), node) in enumerate(zip(parts, nodes)):
        if isinstance(node, Access):
            assert role == "access" and text[start:end] == str(node), (text, text[start:end], node)
            assert about == access_about(node, "update" if k == 0 else "read")
        else:
            head = f"{reduction_name(node.op)}[{', '.join(i.name for i in node.indices)}]"
            assert role == "reduce" and text[start:end] == head and text[end] == "(", (text, text[start:end])
            assert about == {"indices": [i.name for i in node.indices]}
    # a step given the node records them as data, made when read
    from compiler import Trace
    step = Trace().record("parse", after=a)
    assert step.after_text == text and step.data["after_spans"] == {"1": [list(p) for p in parts]}


def test_printed_parts_inside_shape_operators():
    """A shape operator prints its operands itself: their parts land where their texts did (one
    text twice: each at its own place)."""
    from compiler.notation.ast import show_parts
    from compiler.notation.shape import Concat
    e = Concat((Access("A", ["j"]), Access("A", ["j"])), (Index("j"), Index("j")), Index("l"))
    text, parts = show_parts(Call(lookup("+"), (e, Access("x", ["l"]))))
    assert [(a, text[a:b]) for a, b, _, _ in parts] == [(8, "A[j]"), (14, "A[j]"), (36, "x[l]")], text


def test_a_printed_node_stays_equal_to_an_unprinted_one():
    """A node keeps its text once printed (the lowerings print the same accesses again and again):
    it stays equal to, hashes and serializes as one never printed, and prints its parts alike."""
    text = "y[i] = gcd(A[i, j], 2) + min[k](B[i, k] * -inf) + nan"
    a, b = parse(text, functions=FUNCTIONS), parse(text, functions=FUNCTIONS)
    first = str(a)
    assert str(a) == first and str(a.rhs) == first[len("y[i] = "):] and "sum[j](gcd(A[i, j], 2))" in first
    assert a == b and hash(a) == hash(b) and serialize.encode(a) == serialize.encode(b)
    assert a.rhs.printed_parts() == b.rhs.printed_parts() and str(b) == first
    assert str(Access("A", ("i", "k"))) == "A[i, k]" and str(Access("A", ("i", "j"))) == "A[i, j]"
