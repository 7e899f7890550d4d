"""Provenance on the program trees (issue 27): each box of the CFIR and IR drawings carries, as
data beside its DOT (``data["node_tags"]``), the tags of the code it shows, so a C line links the
boxes that made it and a box links its C lines, as the lattice and looplet drawings do.
"""

from __future__ import annotations

import re

import pytest

import compiler as ss
from compiler.imperative import Assign, Block, For, Function, If, Tagged, Var
from compiler.imperative.ir import Declare
from compiler.imperative.ir_dot import ir_tree
from explorer import explore, render_step
from explorer.renderers import drawn_artifacts
from rendered_colors import view_colors

#: SpMV, a CSR + CSR merge (three lattice points), a two-phase SpGEMM, by both strategies
KERNELS = {
    "spmv": ("y[i] = A[i, j] * x[j]", dict(A="csr", x="dense"), {}),
    "merge": ("C[i, j] = A[i, j] + B[i, j]", dict(A="csr", B="csr", C="csr"), {}),
    "two-phase": ("C[i, j] = A[i, k] * B[k, j]", dict(A="csr", B="csr", C="csr"), {"assembly": "two-phase"}),
}
#: the steps whose drawing is a program tree, and the artifact kind drawn
TREES = {"lattice": (("cfir", "cfir"), ("lower", "ir")), "looplets": (("imperative", "ir"),)}


@pytest.fixture(scope="module", params=[(n, s) for n in KERNELS for s in TREES
                                        if not (s == "looplets" and KERNELS[n][2])])
def lowered(request):
    name, strategy = request.param
    expr, formats, options = KERNELS[name]
    return name, strategy, ss.lower(expr, strategy, options=options, **formats)


def _node_tags(html: str) -> dict[str, list[str]]:
    """``{node id: data-tags}`` of the drawn nodes of a step's HTML."""
    return {m.group(2): m.group(1).split() for m in re.finditer(
        r'class="node highlighted" data-tags="([^"]*)">\s*<title>([^<]*)</title>', html)}


def test_every_tagged_c_line_links_a_box_of_each_tree(lowered):
    """Every C line's first tag (the one a hover links) names at least one box of the IR tree
    and, for the lattice strategy's lattice points, of the CFIR tree; each box is drawn with its
    tags (innermost first) and the colour of its first, as its C lines are."""
    name, strategy, k = lowered
    session = explore(k)
    prov = session.provenance()
    assert prov, name
    firsts = {ts[0] for ts in _line_tags(prov).values()}
    stages = k.trace.stages()
    for stage, kind in TREES[strategy]:
        step = k.trace.steps[stages.index(stage)]
        art = next(a for a in step.artifacts if a.kind == kind)
        recorded = art.data["node_tags"]
        html = render_step(session.step(stages.index(stage)), parts=["artifacts"])
        drawn = _node_tags(html)
        assert drawn, (name, stage)
        for node, tags in drawn.items():
            assert tags == [t for t in recorded[node] if t in prov], (name, stage, node)
            group = html[html.index(f"<title>{node}</title>"):]
            assert f'fill="{view_colors(html)[tags[0]]}"' in group.split("</g>")[0], (name, stage, node)
        linked = {t for tags in drawn.values() for t in tags}
        wanted = firsts if kind == "ir" else {t for t in firsts if t.startswith("lattice:")}
        assert wanted <= linked, (name, stage, sorted(wanted - linked))


def _line_tags(prov) -> dict[int, list[str]]:
    """``{C line: its tags}`` in the C pane's precedence (innermost first)."""
    out: dict[int, list[str]] = {}
    for tag, lines in prov.items():
        for n in lines:
            out.setdefault(n, []).append(tag)
    return out


def _boxes(t) -> list[tuple[tuple[str, ...], str]]:
    """(tags, label) of every box of the tree ``t`` but the kernel's, in order."""
    labels = re.findall(r'^  (n\d+) \[label="([^"]*)"', t.source(), re.M)
    return [(tuple(t.node_tags.get(n, ())), label) for n, label in labels[1:]]


def test_a_box_shows_only_code_of_its_innermost_tag():
    """A run of statements is cut where its tags change: each box's lines are of one tag, and
    a box outside every tag has none (before, the loop's body was one box of five lines)."""
    x, y, i = Var("x"), Var("y"), Var("i")
    body = [Assign(x, 0.0),
            Tagged("outer", [Assign(x, 1.0), Tagged("inner", [Assign(y, 2.0), Assign(x, 3.0)]), Assign(y, 4.0)]),
            Assign(y, 5.0)]
    fn = Function("k", (), Block((Declare(x, "float64", 0.0), Declare(y, "float64", 0.0), For(i, 0, 4, body))))
    assert _boxes(ir_tree(fn))[1:] == [
        ((), "for (int64 i = 0; i < 4; i++)"), ((), "x = 0.0;"), (("outer",), "x = 1.0;"),
        (("inner", "outer"), "y = 2.0;\\lx = 3.0;\\l"), (("outer",), "y = 4.0;"), ((), "y = 5.0;")]


def test_an_if_inside_a_tag_carries_it_to_its_branches():
    x, i = Var("x"), Var("i")
    fn = Function("k", (), Block((Declare(x, "float64", 0.0), For(i, 0, 4, [
        Tagged("case", [If(i < 2, [Assign(x, 1.0)], [If(i < 3, [Assign(x, 2.0)], [Assign(x, 3.0)])])])]))))
    t = ir_tree(fn)
    labels = dict(re.findall(r'^  (n\d+) \[label="([^"]*)"', t.source(), re.M))
    tagged = sorted(labels[n] for n, ts in t.node_tags.items() if ts == ["case"])
    assert tagged == sorted(["if (i < 2)", "else if (i < 3)", "x = 1.0;", "x = 2.0;", "x = 3.0;"])


def test_the_cfir_cases_carry_the_emitters_tags():
    """The merge's CFIR boxes of the j loop carry the tags the emitter gives its code: the case
    of A and B ``lattice:j:A∩B``, of A alone ``lattice:j:A``, of B alone ``lattice:j:B``."""
    k = ss.lower("C[i, j] = A[i, j] + B[i, j]", "lattice", A="csr", B="csr", C="csr")
    art = k.trace.find("cfir")[0].artifact("cfir")
    labels = dict(re.findall(r'^  (n\d+) \[label="([^"]*)"', art.dot, re.M))
    cases = {labels[n]: tags[0] for n, tags in art.data["node_tags"].items() if labels[n].startswith("case ")}
    assert cases == {"case A1 B1": "lattice:j:A∩B", "case A1": "lattice:j:A", "case B1": "lattice:j:B"}
    c_tags = set(k.trace.find("emit-c")[0].artifact("c").data["provenance"])
    assert set(cases.values()) <= c_tags


def test_the_tags_survive_a_saved_trace():
    k = ss.lower("y[i] = A[i, j] * x[j]", "lattice", A="csr", x="dense")
    again = ss.Trace.from_json(k.trace.to_json())
    for stage, kind in TREES["lattice"]:
        assert (again.find(stage)[0].artifact(kind).data["node_tags"]
                == k.trace.find(stage)[0].artifact(kind).data["node_tags"] != {})


def test_the_ir_trees_are_drawn_when_shown_not_while_lowering(monkeypatch):
    # every step's kernel tree (lower, cleanup, prefetch, vectorize, ...) is drawn when first read:
    # drawing a large kernel cost more than lowering it (before: the lower step drew at once, and the
    # later passes recorded text only, drawn by the explorer)
    from compiler.imperative import ir_dot
    drawn = []
    monkeypatch.setattr(ir_dot, "ir_tree", lambda fn, real=ir_dot.ir_tree: drawn.append(fn) or real(fn))
    k = ss.lower("y[i] = A[i, j] * x[j]", strategy="lattice", trace=ss.Trace(), A="csr", x="dense")
    assert drawn == []
    later = [s for s in k.trace.steps if s.stage in ("lower", "cleanup", "prefetch", "vectorize", "reuse-locals")]
    assert [s.stage for s in later][0] == "lower" and len(later) >= 2
    for step in later:
        html = render_step(step)
        assert "<svg" in html and 'data-kind="ir"' in html, step.stage
    assert len(drawn) == len(later)
    art = drawn_artifacts(later[-1])[0]
    assert art.data["node_tags"] and art.text == str(later[-1].after) and art.dot.startswith("digraph")
    assert len(drawn) == len(later)   # drawn once
