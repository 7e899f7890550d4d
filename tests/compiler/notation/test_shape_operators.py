"""Shape operators in index notation: the nodes, their text (printed as parsed), free indices,
the parser's errors, and shape inference (BURRITO's Fig. 9)."""

import re

import pytest
from hypothesis import given, strategies as st

from compiler import serialize
from compiler.errors import ParseError
from compiler.notation import (Access, Broadcast, Collapse, Concat, Index, Slice, Split, free_indices,
                               has_shape_operators, parse, walk)

I, J, K, L = (Index(n) for n in "ijkl")

PAPER = [  # (text, the node it must hold)
    ("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]", Collapse(Access("A", "ij"), ("i", "j"), "k")),
    ("c[k] = collapse(A[i, j], (j, i) -> k)", Collapse(Access("A", "ij"), ("j", "i"), "k")),
    ("C[i, j] = split(b[k], k -> (i, j:4)) * B[i, j]", Split(Access("b", "k"), "k", ("i", "j"), (None, 4))),
    ("C[i, j] = split(b[k], k -> (i:2, j:3))", Split(Access("b", "k"), "k", ("i", "j"), (2, 3))),
    ("D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l)",
     Concat((Access("B", "ij"), Access("C", "ik")), ("j", "k"), "l")),
    ("D[l, i] = concat((A[j, i], B[k, i], C[m, i]), (j, k, m) -> l)",
     Concat((Access("A", "ji"), Access("B", "ki"), Access("C", "mi")), ("j", "k", "m"), "l")),
    ("B[k, i] = slice(A[j, i], j -> k, (1, 9, 2))", Slice(Access("A", "ji"), "j", "k", 1, 9, 2)),
    ("y[k] = slice(x[j], j -> k, (8, -1, -3))", Slice(Access("x", "j"), "j", "k", 8, -1, -3)),
    ("D[l] = sum[i](concat((A[j, i], B[k, i]), (j, k) -> l) * broadcast(l, x[i]))",
     Broadcast("l", Access("x", "i"))),
    ("Y[l, i] = broadcast(l:5, x[i])", Broadcast("l", Access("x", "i"), 5)),
    ("y[j] = A[2, j]", Access("A", (2, "j"))),
]


@pytest.mark.parametrize("text,node", PAPER)
def test_prints_as_written_reads_back_and_serializes(text, node):
    prog = parse(text)
    assert str(prog) == text
    assert parse(str(prog)) == prog
    assert node in list(walk(prog))
    assert serialize.decode(serialize.encode(prog)) == prog
    assert has_shape_operators(prog)


def test_consumed_indices_are_bound_inside_the_operator():
    assert free_indices(parse("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]").rhs) == (K,)
    assert free_indices(parse("C[i, j] = split(b[k], k -> (i, j:4)) * B[i, j]").rhs) == (I, J)
    assert free_indices(parse("D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l)").rhs) == (I, L)
    assert free_indices(parse("B[k, i] = slice(A[j, i], j -> k, (1, 9, 2))").rhs) == (K, I)
    assert free_indices(parse("Y[l, i] = broadcast(l:5, x[i])").rhs) == (L, I)
    assert free_indices(parse("y[j] = A[2, j]").rhs) == (J,)
    # no index is left over to reduce: the consumed ones are not free on the right
    assert str(parse("c[k] = collapse(A[i, j], (i, j) -> k)")) == "c[k] = collapse(A[i, j], (i, j) -> k)"


def test_an_implicit_reduction_inside_an_operator_leaves_its_consumed_indices():
    # (before: sum(...) reduced i and j too, which collapse consumes)
    assert str(parse("c[k] = collapse(sum(A[i, j, m]), (i, j) -> k)")) == \
        "c[k] = collapse(sum[m](A[i, j, m]), (i, j) -> k)"


def test_other_programs_have_no_shape_operators():
    assert not has_shape_operators(parse("y[i] = A[i, j] * x[j]"))


@pytest.mark.parametrize("text,message", [
    ("c[k] = collapse(A[i, j], (i j) -> k)", "expected ',' in collapse(...), written as collapse(A[i, j]"),
    ("y[k] = slice(x[j], j -> k, (1, 2, 0))", "a slice step cannot be 0"),
    ("y[2] = x[i]", "a constant index (2) is read on the right side only"),
    ("y[i] = concat((x[j]), (j) -> i)", "concat takes two or more operands and one index of each"),
    ("y[k] = split(x[k], k -> (i, j:a))", "expected the extent of j after ':'"),
    ("y[k] = slice(x[j], j -> k, (1, 2)", "'(' at column 12 is not closed"),
    ("y[j] = sum[2](A[2, j])", "a constant index (2) is read on the right side only"),
])
def test_parse_errors_point_at_the_fault(text, message):
    with pytest.raises(ParseError, match=re.escape(message)):
        parse(text)


names = st.sampled_from(["A", "B", "x"])
idx = st.sampled_from(["i", "j", "k", "l", "m"])


@st.composite
def shape_exprs(draw, depth=2):
    """Random nested shape operators (not necessarily well-shaped: printing needs no shapes)."""
    if depth == 0 or draw(st.booleans()):
        return Access(draw(names), tuple(draw(st.lists(st.one_of(idx, st.integers(0, 9)), min_size=1,
                                                       max_size=3))))
    kind = draw(st.sampled_from(["collapse", "split", "concat", "slice", "broadcast"]))
    sub = lambda: draw(shape_exprs(depth - 1))
    if kind == "collapse":
        return Collapse(sub(), (draw(idx), draw(idx)), draw(idx))
    if kind == "split":
        return Split(sub(), draw(idx), (draw(idx), draw(idx)),
                     (draw(st.none() | st.integers(0, 9)), draw(st.none() | st.integers(0, 9))))
    if kind == "concat":
        n = draw(st.integers(2, 3))
        return Concat(tuple(sub() for _ in range(n)), tuple(draw(idx) for _ in range(n)), draw(idx))
    if kind == "slice":
        return Slice(sub(), draw(idx), draw(idx), draw(st.integers(-1, 9)), draw(st.integers(-1, 9)),
                     draw(st.integers(-3, 3).filter(bool)))
    return Broadcast(draw(idx), sub(), draw(st.none() | st.integers(0, 9)))


@given(shape_exprs())
def test_any_shape_expression_reads_back_as_printed(e):
    from compiler.notation.parser import parse_expr
    assert parse_expr(str(e)) == e
