"""The array step's drawing of the array expression (compiler.array.exprtree)."""

from __future__ import annotations

import json

import numpy as np
import scipy.sparse as sp

import compiler as ss
from compiler import array as xp

S = sp.random(4, 6, density=0.4, format="csr", random_state=0)
D = np.arange(24.0).reshape(4, 6)


def _tree(expr):
    step = ss.lower(expr).trace.find("array")[0]
    return step, step.artifact("array-expression")


def test_every_node_kind_has_a_label_shape_and_what_it_became():
    a, d = ss.asarray(S, name="A"), ss.asarray(D, name="Dm")
    expr = xp.sum(xp.stack([a, d], axis=0)[:, 1:3, ::2] * 2.0, axis=2, keepdims=True)
    step, art = _tree(expr)
    labels = [n["label"] for n in art.data["nodes"]]
    assert labels == ["add over axes (2,) (keepdims)", "mul", "index [:, 1:3, 0:6:2]", "stack axis 0",
                      "A (csr)", "Dm (dense)", "2.0"]
    assert art.data["nodes"][3]["shape"] == [2, 4, 6] and art.data["nodes"][0]["dtype"] == "float64"
    assert np.allclose(expr.compute().to_numpy(), np.stack([S.toarray(), D])[:, 1:3, ::2].sum(axis=2, keepdims=True) * 2.0)
    # every node is said by the statement (none materialized), each as a part of it
    assert all(n["fate"] == "" and n["notation"] for n in art.data["nodes"])
    assert art.data["nodes"][2]["notation"].startswith("slice(slice(concat((broadcast(")
    assert art.data["nodes"][2]["notation"] in str(step.after.rhs)


def test_transposes_broadcasts_and_a_shared_node():
    a = ss.asarray(S, name="A")
    t = a.T
    expr = t * t + xp.broadcast_to(ss.asarray(np.arange(4.0), name="vec"), (6, 4))
    _, art = _tree(expr)
    labels = [n["label"] for n in art.data["nodes"]]
    assert labels == ["add", "mul", "permute_dims (1, 0)", "A (csr)", "broadcast to (6, 4)", "vec (dense)"]
    mul = art.data["nodes"][1]
    assert mul["children"] == ["n2", "n2"]                    # the transpose, drawn once
    assert "(shared, as above)" in art.text
    assert art.dot.count("n1 -> n2;") == 2


def test_a_materialized_node_says_why_and_what_replaced_it():
    # (an integer index of an expression over a shape operator: no shape operator says it; a reshape of any
    # rank is fused, and so is an integer index of operators over tensors, (A * 3.0)[1])
    expr = (xp.concat([ss.asarray(S, name="A")] * 2) * 3.0)[1] * 2.0
    _, art = _tree(expr)
    node = next(n for n in art.data["nodes"] if n["label"].startswith("index [1"))
    assert node["fate"].startswith("materialized: no shape operator of index notation says it")
    assert node["notation"] is not None and node["notation"].endswith("[i]")
    assert "materialized" in art.dot and 'style="dashed,filled"' in art.dot
    assert np.allclose(expr.compute().to_numpy(), S.toarray()[1] * 3.0 * 2.0)


def test_the_drawing_survives_a_saved_trace():
    kernel = ss.lower(xp.concat([ss.asarray(S, name="A"), ss.asarray(S, name="B")], axis=1))
    again = ss.Trace.from_json(kernel.trace.to_json())
    art = again.find("array")[0].artifact("array-expression")
    assert art.data == json.loads(json.dumps(art.data)) and art.data["nodes"][0]["label"] == "concat axis 1"
    assert again.find("array")[0].before_text == "concat((A, B), axis=1)"


def test_each_node_names_the_statement_tree_nodes_it_became_and_their_c_lines():
    """``data["node_tags"]``: a node's tags are those of the statement's tree nodes holding what it
    became (found by identity, never by reading printed text), and the kernel's C has lines for
    them under both strategies, so the explorer links a node and its C."""
    from compiler.notation.drawing import tree_nodes

    a, b = ss.asarray(S, name="A"), ss.asarray(S[:3], name="B")
    expr = xp.concat([a, b], axis=0) @ ss.asarray(np.arange(6.0), name="x")
    for strategy in ("lattice", "looplets"):
        kernel = ss.lower(expr, strategy=strategy)
        step = kernel.trace.find("array")[0]
        art = step.artifact("array-expression")
        tree = {f"expr:{n.ident}": n.label for n in tree_nodes(step.after)}
        labels = {n["id"]: n["label"] for n in art.data["nodes"]}
        said = {labels[k]: [tree[t] for t in tags] for k, tags in art.data["node_tags"].items()}
        assert said == {"add over axes (1,)": ["sum[j]"], "mul": ["*"], "concat axis 0": ["concat((·, ·), (k, l) -> i)"],
                        "A (csr)": ["A[k, j]"], "B (csr)": ["B[l, j]"], "broadcast to (1, 6)": ["x[j]"],
                        "x (dense)": ["x[j]"]}, (strategy, said)
        c = kernel.trace.find("emit-c")[0].artifact("c")
        lines = c.data["provenance"]
        assert all(lines.get(t) for tags in art.data["node_tags"].values() for t in tags), (strategy, lines)
        assert np.allclose(kernel().to_numpy(), np.vstack([S.toarray(), S[:3].toarray()]) @ np.arange(6.0))
        assert json.loads(json.dumps(art.data))["node_tags"] == art.data["node_tags"]   # (as the trace saves it)


def test_a_materialized_node_names_no_code_of_the_statement():
    expr = (xp.concat([ss.asarray(S, name="A")] * 2) * 3.0)[1] * 2.0
    _, art = _tree(expr)
    index = next(n["id"] for n in art.data["nodes"] if n["label"].startswith("index [1"))
    inner = [n["id"] for n in art.data["nodes"] if n["label"] in ("A (csr)", "3.0")]
    assert inner and not any(k in art.data["node_tags"] for k in inner)
    assert art.data["node_tags"][index]      # (the temporary it became is read by the statement)


def test_the_array_step_says_each_shape_operators_parameters():
    """The array step's text names a slice's items, a reshape's shape and a concatenation's axis, as the
    drawing does (it said ``concat(index(A), index(A))``)."""
    a = ss.asarray(S, name="A")
    cases = [(xp.concat([a[1:3, 2:], a[::-2, 1:5]], axis=0), "concat((A[1:3, 2:6], A[3::-2, 1:5]), axis=0)"),
             (xp.reshape(a, (-1,)) * 2.0, "mul(reshape(A, (24,)), 2.0)"),
             (xp.stack([a[0], a[2]], axis=1), "stack((A[0, :], A[2, :]), axis=1)")]
    for expr, text in cases:
        assert ss.lower(expr).trace.find("array")[0].before_text == text
