"""The shape operators of a statement as the trace records them (compiler.notation.shapedata)."""

from __future__ import annotations

import json

import pytest

from compiler.notation import parse
from compiler.notation.infer import infer_shapes
from compiler.notation.shapedata import shape_artifact, shape_data


def _ops(program, shapes):
    prog = parse(program)
    return shape_data(prog, infer_shapes(prog, shapes))


@pytest.mark.parametrize("program, shapes, kind, marked, rule", [
    ("c[k] = collapse(A[i, j], (i, j) -> k)", {"A": (2, 3)}, "collapse",
     ["collapse", "(i, j) -> k"], "|k| = |i|·|j| = 2·3 = 6"),
    ("c[k] = collapse(A[i, j], (j, i) -> k)", {"A": (2, 3)}, "collapse",
     ["collapse", "(j, i) -> k"], "|k| = |j|·|i| = 3·2 = 6"),
    ("g[i, j] = split(v[k], k -> (i, j:4))", {"v": (12,)}, "split",
     ["split", "k -> (i, j:4)"], "|k| = |i|·|j|: 12 = 3·4"),
    ("s[l, i] = concat((P[j, i], Q[k, i], R[m, i]), (j, k, m) -> l)", {"P": (3, 4), "Q": (1, 4), "R": (2, 4)},
     "concat", ["concat", "(j, k, m) -> l"], "|l| = |j| + |k| + |m| = 3 + 1 + 2 = 6"),
    ("r[k, i] = slice(P[j, i], j -> k, (2, -1, -2))", {"P": (3, 4)}, "slice",
     ["slice", "j -> k, (2, -1, -2)"], "|k| = 2: j from 2 by -2 while short of -1"),
    ("b[l, i] = broadcast(l:5, x[i])", {"x": (4,)}, "broadcast", ["broadcast", "l:5"], "|l| = 5, a new index"),
])
def test_each_operator_is_recorded_with_its_marks_and_premise(program, shapes, kind, marked, rule):
    (op,) = _ops(program, shapes)["operators"]
    assert op["kind"] == kind and op["rule"] == rule
    assert [op["text"][a:b] for a, b in op["marks"]] == marked
    assert op["text"] in program


def test_nested_operators_are_listed_outermost_first_with_what_they_bind():
    data = _ops("y[l] = sum[i](concat((P[j, i], Q[k, i]), (j, k) -> l) * broadcast(l, x[i]))",
                {"P": (3, 4), "Q": (1, 4), "x": (4,)})
    assert [(o["kind"], o["consumes"], o["produces"]) for o in data["operators"]] == [
        ("concat", ["j", "k"], ["l"]), ("broadcast", [], ["l"])]
    assert data["extents"] == {"j": "3", "i": "4", "k": "1", "l": "4"}
    assert data["sources"]["l"] == "concat((P[j, i], Q[k, i]), (j, k) -> l)"
    assert data["constants"] == []


def test_constant_indices_and_symbolic_extents():
    prog = parse("r[j] = P[2, j]")
    data = shape_data(prog, infer_shapes(prog, {"P": (3, 4)}))
    assert data["constants"] == [{"access": "P[2, j]", "modes": [0]}] and data["operators"] == []
    # without shapes (a kernel lowered for formats only) the extents are symbolic
    import compiler as ss
    # (a trace of its own: lower()'s cache may hold this program lowered for a tensor's shape,
    # whose trace has numbers; this test failed after such a lowering in its worker)
    kernel = ss.lower("c[k] = collapse(A[i, j], (i, j) -> k)", strategy="looplets", A="csr", c="sparse_vector",
                      trace=ss.Trace())
    (shapes,) = kernel.trace.find("shapes")
    assert shapes.data["extents"]["k"] == "A.shape[0] * A.shape[1]"
    assert shapes.data["operators"][0]["rule"] == "|k| = |i|·|j| = A.shape[0]·A.shape[1] = A.shape[0] * A.shape[1]"


def test_the_data_is_json_and_its_artifact_text_says_it_all():
    data = _ops("c[k] = collapse(A[i, j], (i, j) -> k) * b[k]", {"A": (2, 3), "b": (6,)})
    assert json.loads(json.dumps(data)) == data
    text = shape_artifact(data).text
    assert "|k| = 6   from b[k] (mode 0)" in text     # (an access gives it before the premise checks it)
    assert "consumes i, j, makes k: |k| = |i|·|j| = 2·3 = 6" in text


def test_without_shape_information_there_is_no_premise():
    (op,) = shape_data(parse("c[k] = collapse(A[i, j], (i, j) -> k)"))["operators"]
    assert op["rule"] == "" and [op["text"][a:b] for a, b in op["marks"]] == ["collapse", "(i, j) -> k"]
