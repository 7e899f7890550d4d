"""The explorer on shape operators: every step kind the array language, shape inference, looplets'
shape-operator lowering and the sequence derivation record renders from the data it carries."""

from __future__ import annotations

import html as _html
import re

import numpy as np
import pytest
import scipy.sparse as sp

import compiler as ss
from compiler import Trace
from compiler import array as xp
from compiler.lattice.seqderive import seq_lower
from explorer import explore, export_html, render_artifact, render_step
from explorer.renderers import render_program
from rendered_colors import view_colors
from explorer.provenance import program_marks
from explorer.shapeviews import shape_data_of, shape_marks
from explorer.stepdiff import diff_view

A = sp.random(6, 5, density=0.4, format="csr", random_state=0)
B = sp.random(4, 5, density=0.4, format="csr", random_state=1)
C = sp.random(3, 5, density=0.4, format="coo", random_state=2)
X = np.arange(5.0)


def text(html: str) -> str:
    return _html.unescape(re.sub(r"<[^>]+>", "", html))


@pytest.fixture(scope="module")
def stacked():
    """y = [A; B; C] x, one fused kernel (looplets)."""
    expr = xp.concat([ss.asarray(A), ss.asarray(B), ss.asarray(C)], axis=0) @ ss.asarray(X)
    kernel = ss.lower(expr, strategy="looplets")
    assert np.allclose(expr.compute().to_numpy(), np.vstack([A.toarray(), B.toarray(), C.toarray()]) @ X)
    return explore(kernel)


def _index(session, stage):
    return next(i for i, s in enumerate(session.steps) if s.stage == stage)


def test_the_array_step_draws_the_expression_and_shows_it_as_its_input(stacked):
    i = _index(stacked, "array")
    art = stacked.steps[i].artifact("array-expression")
    labels = [n["label"] for n in art.data["nodes"]]
    assert labels[:3] == ["add over axes (1,)", "mul", "concat axis 0"]
    concat = next(n for n in art.data["nodes"] if n["label"] == "concat axis 0")
    assert concat["shape"] == [13, 5] and concat["notation"].startswith("concat((A[")
    html = render_step(stacked.step(i))
    assert "<svg" in html and "concat axis 0" in text(html)
    view = diff_view(stacked, i)
    assert view.kind == "input" and "index notation" in view.title
    assert view.text.startswith("add-reduce(mul(concat((A, B, C), axis=0)")


def test_a_materialized_node_is_drawn_dashed_and_says_why():
    X2 = sp.random(4, 6, density=0.3, format="csr", random_state=3)
    # an integer index of an expression over a shape operator: no shape operator of the notation says it
    # (a reshape of any rank is fused now, collapses and splits, and an integer index of operators over
    # tensors, (X2 * 2.0)[1], is their tensors' constant index)
    expr = (xp.concat([ss.asarray(X2)] * 2) * 2.0)[1] + 1
    kernel = ss.lower(expr)
    assert np.allclose(expr.compute().to_numpy(), X2.toarray()[1] * 2.0 + 1)
    step = kernel.trace.find("array")[0]
    art = step.artifact("array-expression")
    index = next(n for n in art.data["nodes"] if n["label"].startswith("index"))
    assert index["fate"].startswith("materialized: no shape operator")
    assert "[materialized:" in art.text and 'style="dashed,filled"' in art.dot
    session = explore(kernel)
    m = _index(session, "materialize")
    assert diff_view(session, m).kind == "input"     # not a diff against the statement
    assert "materialized" in text(render_step(session.step(m)))


def test_a_refused_statement_is_a_retry_step_showing_it_not_a_materialization():
    # the CSC result a CSC operand's order asks for is refused by both strategies (a row sum under an
    # operator: the lattice would read A both ways); the CSR result is one kernel; the trace had a
    # materialize step for such a retry although nothing was materialized (the example was a split of
    # a CSC's ravel, which the lattice now scatters into CSC: compiler.lattice.seqscatter)
    a = np.arange(24.0).reshape(6, 4) * (np.arange(24).reshape(6, 4) % 3 != 0)
    c = xp.asarray(ss.Tensor.from_numpy(a, "csc"))
    kernel = (c[::2] - xp.sum(c[::2], axis=1, keepdims=True)).lower()
    np.testing.assert_array_equal(kernel().to_numpy(), a[::2] - a[::2].sum(axis=1, keepdims=True))
    session = explore(kernel)
    assert [s.stage for s in session.steps][:2] == ["retry", "array"]
    assert not any(s.stage == "materialize" for s in session.steps)
    view = diff_view(session, 0)       # (the refused statement, not a diff of nothing)
    assert view.kind == "input" and view.title == "input of retry, which made a refusal"
    assert view.text == "out[i, j] = slice(A[k, j], k -> i, (0, 6, 2)) - sum[l](slice(A[m, l], m -> i, (0, 6, 2)))"
    shown = text(render_step(session.step(0)))
    assert "into CSC (its operands' order): refused by both strategies" in shown
    assert "tried instead: the statement with its shape operators, into the default CSR" in shown


def test_the_shapes_step_tabulates_extents_and_marks_each_operator(stacked):
    i = _index(stacked, "shapes")
    step = stacked.steps[i]
    op = step.data["operators"][0]
    assert op["kind"] == "concat" and op["rule"] == "|i| = |k| + |l| + |m| = 6 + 4 + 3 = 13"
    assert step.data["extents"]["i"] == "13"
    html = render_step(stacked.step(i))
    tag = "shape:0:concat"
    # the operator's name and its binding, in the program pane and the table, in one colour; in the
    # program they carry the concat's node's tag too (coloured as its box where a drawing shows it)
    program = step.after_text
    node = op["tag"]
    assert node == "expr:n4"   # (out[i], =, the sum, the product, the concat)
    assert [(m.text, m.tags) for m in shape_marks(program, step.data)] == [("concat", (tag, node)),
                                                                           ("(k, l, m) -> i", (tag, node))]
    assert html.count(f'<span class="pv" data-tags="{tag} {node}"') == 2      # the program's two marks
    assert html.count(f"<span class='pv' data-tags='{tag}'") == 2      # and the table's
    assert f"background:{view_colors(html)[tag]}" in html
    assert "|i| = |k| + |l| + |m| = 6 + 4 + 3 = 13" in text(html)   # the tooltip and the table
    assert "|m| = 3" in text(html) and "from C[m, j] (mode 0)" in text(html)


def test_shape_marks_survive_a_saved_trace(stacked):
    again = explore(Trace.from_json(stacked.trace.to_json()))
    data = shape_data_of(again.steps)
    program = again.program_text(_index(again, "shapes"))
    assert [m.text for m in shape_marks(program, data)] == ["concat", "(k, l, m) -> i"]


def test_the_shape_operators_step_shows_the_notation_it_turned_into_loops(stacked):
    i = _index(stacked, "shape-operators")
    view = diff_view(stacked, i)
    assert view.kind == "input" and "loop program" in view.title
    html = render_step(stacked.step(i))
    # the input notation has its operator marked; the program is the loops, one per operand
    assert re.search(r'data-tags="[^"]*\bshape:0:concat\b', html)
    assert "for l = 0:B0_size" in text(html) and "out[l + size(A, 0)]" in text(html)


def test_the_reserve_step_renders_its_hint():
    expr = xp.concat([ss.asarray(A), ss.asarray(B)], axis=0)
    kernel = ss.lower(expr, strategy="looplets")
    assert np.allclose(expr.compute().to_numpy(), np.vstack([A.toarray(), B.toarray()]))
    session = explore(kernel)
    i = _index(session, "reserve")
    assert "reserve" in text(render_step(session.step(i)))


@pytest.fixture(scope="module")
def seq():
    P = ss.Tensor.from_numpy(np.array([[0, 1.0, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]]), "csr")
    Q = ss.Tensor.from_numpy(np.array([[6.0, 0, 0, 7]]), "coo")
    return explore(seq_lower("yv[l] = sum[i](concat((P[j, i], Q[k, i]), (j, k) -> l) * broadcast(l, x[i]))",
                             P=P, Q=Q, x=np.arange(4.0)).trace)


def test_the_sequence_derivation_renders_its_trees_rules_and_marked_input(seq):
    assert seq.stage_names() == ["seq-derive", "lattice", "cfir"]
    view = diff_view(seq, 0)
    assert view.kind == "input" and "CIN with sequences" in view.title
    assert view.text.startswith("yv[l] = sum[i](concat(")
    html = render_step(seq.step(0))
    assert html.count("<svg") == 2                        # one tree per loop index (l, i)
    assert "line 11: concat into l is ⊔" in text(html)    # the Fig. 11 rule, in the tree and the table
    assert all(re.search(rf'data-tags="[^"]*\b{t}\b', html) for t in ("shape:0:concat", "shape:1:broadcast"))
    # the CIN's keywords are highlighted
    assert re.search(r'<span style="[^"]*">alloc</span>', html) and re.search(r'<span style="[^"]*">forall</span>', html)


def test_the_sequence_lattice_and_cfir_render_their_drawings(seq):
    # the lattice is the step's program, its input the forall it was built for
    assert seq.program_text(1).startswith("lattice of j_P ⊔ k_Q\np0 j_P ⊔ k_Q")
    assert seq.steps[1].note == "forall l: 2 point(s)" and diff_view(seq, 1).text == "forall l ∈ j_P ⊔ k_Q"
    lattice = render_step(seq.step(1))
    assert "<svg" in lattice and "0: j_P ⊔ k_Q" in text(lattice) and "|j_P| + k_Q" in text(lattice)
    assert "concat-left-done" in text(lattice)            # the Fig. 27 rewrite that made the point
    cfir = render_step(seq.step(len(seq) - 1))
    assert "<svg" in cfir and "while l <- |j_P| + k_Q" in text(cfir)
    assert re.search(r'<span style="[^"]*">while</span>', cfir)


def test_every_shape_step_exports_to_one_page(stacked, seq):
    for session in (stacked, seq):
        page = export_html(session.trace)
        assert page.count('<section class="step"') == len(session)
        assert "http://" not in page and "https://" not in page


def test_render_program_without_shape_data_is_unchanged():
    program = "c[k] = collapse(A[i, j], (i, j) -> k)"
    assert render_program(program) == render_program(program, shapes=None)
    assert 'class="pv"' not in render_program(program)
    # the shape operator's name is a builtin: highlighted even without data
    assert re.search(r'<span style="[^"]*">collapse</span>', render_program(program))


def test_artifacts_render_by_kind():
    data = {"extents": {"k": "6"}, "sources": {"k": "collapse(A[i, j], (i, j) -> k)"},
            "operators": [{"kind": "collapse", "text": "collapse(A[i, j], (i, j) -> k)", "marks": [[0, 8], [18, 29]],
                           "consumes": ["i", "j"], "produces": ["k"], "rule": "|k| = |i|·|j| = 2·3 = 6"}],
            "constants": [{"access": "A[2, j]", "modes": [0]}]}
    html = render_artifact(ss.Artifact("shapes", "extents", "k: 6", data=data))
    assert 'data-kind="shapes"' in html and "|k| = 6" in text(html) and "a constant index (mode 0)" in text(html)
    bare = render_artifact(ss.Artifact("shapes", "extents", "k: 6"))   # no data: its text
    assert "k: 6" in text(bare)


@pytest.fixture(scope="module")
def fused_lattice():
    """y = [A; B] x by the lattice strategy: sequence expressions, lattices and CFIR, with C."""
    expr = xp.concat([ss.asarray(A), ss.asarray(B)], axis=0) @ ss.asarray(X)
    kernel = ss.lower(expr, strategy="lattice")
    assert np.allclose(expr.compute(strategy="lattice").to_numpy(), np.vstack([A.toarray(), B.toarray()]) @ X)
    return explore(kernel)


def test_the_sequence_texts_mark_their_reads_and_points_where_the_printer_put_them(fused_lattice):
    """The sequence CIN, its lattices and its CFIR record where their foralls, reads, written
    output and lattice points are printed (as the other lattice texts do): each read ``A(k_A, j_A)``
    is marked with the tags of the loops around it that iterate its tensor, each lattice point with
    the tag of the loop that iterates it (its C lines); none is found in the text by pattern."""
    s = fused_lattice
    prov = s.provenance()
    seen = set()
    for k, step in enumerate(s.steps):
        if step.stage not in ("seq-derive", "lattice", "cfir"):
            continue
        for side in ("before", "after"):
            text = getattr(step, side + "_text")
            recorded = step.data.get(side + "_spans")
            assert recorded, (step.stage, side)
            lines = text.splitlines()
            for n, parts in recorded.items():
                for a, b, about, role in parts:
                    shown = lines[int(n) - 1][a:b]
                    if role == "access":
                        assert shown[:len(about["tensor"]) + 1] in (about["tensor"] + "(", about["tensor"] + "["), \
                            (shown, about)   # (A(k_A, j_A) in sequence CIN, A[k, j] in index notation)
                    elif role == "loop":
                        assert shown == f"forall {about['index']}", shown
            for m in program_marks(text, prov, k):
                tensor = re.match(r"(\w+)\(", m.text)
                if tensor and tensor.group(1) in "AB" and ", " in m.text:   # a read, A(k_A, j_A)
                    # (the loops' tags, then the expression tree's node of its tensor, which the tree reads once)
                    infos = [prov.info[t] for t in m.tags]
                    kinds = [i.kind for i in infos]
                    assert kinds[0] == "lattice" and kinds in (["lattice"] * len(kinds), kinds[:-1] + ["expression"]) \
                        and all(tensor.group(1) in i.operands for i in infos), m
                    seen.add(("read", tensor.group(1)))
                elif step.stage == "lattice" and side == "after" and m.line > 1:   # a point
                    assert m.tags == (f"lattice:{s.steps[k].data['index']}:{m.text.replace(' ', '')}",) \
                        and prov[m.tags[0]], m
                    seen.add(("point", m.text))
    assert {("read", "A"), ("read", "B"), ("point", "k_A ⊔ l_B")} <= seen, seen
