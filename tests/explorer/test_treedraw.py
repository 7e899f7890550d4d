"""The lattice strategy's CFIR and the imperative IR drawn as trees (issue 27 item 2): every
label inside its shape, long straight-line code collapsed with nothing lost (each box's
tooltip holds its lines), a legend, and the explorer's step view showing the drawing at the
``cfir`` step and at the IR step.
"""

from __future__ import annotations

import html as _html
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import compiler as ss
from compiler.imperative.ir_dot import ir_dot
from compiler.imperative.ir import Assign, Block, Declare, For, Function, If, OutScalar, Var
from compiler.treedot import MAX_CHARS, RUN_SHOWN
from explorer import dot_to_svg, explore, render_step
from explorer.legend import legend_terms

sys.path.insert(0, str(Path(__file__).parent))
from test_fit import SVG, shape_width, too_narrow  # noqa: E402  (the label-fit measure)

#: SpMV, a CSR + CSR merge (three lattice points: A∩B, A, B) and a two-phase sparse output
KERNELS = {
    "spmv": ("y[i] = A[i, j] * x[j]", dict(A="csr", x="dense"), {}),
    "merge": ("C[i, j] = A[i, j] + B[i, j]", dict(A="csr", B="csr", C="csr"), {}),
    "two-phase": ("C[i, j] = A[i, k] * B[k, j]", dict(A="csr", B="csr", C="csr"), {"assembly": "two-phase"}),
}


@pytest.fixture(scope="module", params=list(KERNELS))
def kernel(request):
    expr, formats, options = KERNELS[request.param]
    return request.param, ss.lower(expr, "lattice", options=options, **formats)


def _drawings(k):
    cfir = k.trace.find("cfir")[0].artifact("cfir")
    ir = k.trace.find("lower")[0].artifact("ir")
    return cfir, ir


def _tooltips(svg: str) -> list[str]:
    """Every line of every node's tooltip."""
    lines = []
    for a in ET.fromstring(svg).iter(f"{SVG}a"):
        lines += a.get("{http://www.w3.org/1999/xlink}title", "").split("\n")
    return lines


def test_the_cfir_and_the_ir_are_drawn_with_every_label_inside_its_shape(kernel):
    name, k = kernel
    for art in _drawings(k):
        assert art.dot, f"{name}: no drawing of the {art.kind}"
        svg = dot_to_svg(art.dot)
        nodes = [g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("class") == "node"]
        assert nodes and all(shape_width(g) for g in nodes)   # every node measured
        assert not too_narrow(svg), (name, art.kind)
        labels = [_html.unescape("".join(t.itertext())) for t in ET.fromstring(svg).iter(f"{SVG}text")]
        assert max(len(x) for x in labels) <= MAX_CHARS + 24   # (a count line: "… 4 more (6 statements)")


def test_the_cfir_drawing_is_its_tree_and_loses_no_line(kernel):
    name, k = kernel
    cfir, _ = _drawings(k)
    svg = dot_to_svg(cfir.dot)
    texts = [_html.unescape("".join(t.itertext())) for t in ET.fromstring(svg).iter(f"{SVG}text")]
    # one rounded box per loop of the text, one per case of a switch
    loops = [x.strip().rstrip(":") for x in cfir.text.splitlines() if x.strip().startswith("while ")]
    assert [x for x in texts if x.startswith("while ")] == loops
    if name == "merge":
        assert [x for x in texts if x.startswith("case ")] == ["case A1 B1", "case A1", "case B1"]
    tips = set(_tooltips(svg))
    for line in cfir.text.splitlines():
        line = line.strip().rstrip(":")
        if line.startswith("switch "):
            continue   # drawn as the loop's cases
        if line.startswith("case ") and ": " in line:
            head, stmt = line.split(": ", 1)
            assert head in tips and stmt in tips, line
        else:
            assert line in tips, line


def test_the_ir_drawing_loses_no_line(kernel):
    name, k = kernel
    _, ir = _drawings(k)
    tips = set(_tooltips(dot_to_svg(ir.dot)))
    for line in ir.text.splitlines():
        line = line.strip()
        if line in ("}", "} else {", "{") or line.startswith("helper "):
            continue
        line = line[:-1].rstrip() if line.endswith("{") else line
        line = line[len("} "):] if line.startswith("} else if") else line   # (a box beside the first branch)
        assert line in tips, (name, line)


def test_a_long_straight_line_run_is_one_box_with_a_count():
    x = Var("x")
    body = [Declare(x, "float64", 0.0)] + [Assign(x, x + k) for k in range(9)]
    i = Var("i")
    fn = Function("run", (OutScalar("s", "float64", 0.0),), Block((For(i, 0, 4, body),)))
    svg = dot_to_svg(ir_dot(fn))
    texts = [_html.unescape("".join(t.itertext())) for t in ET.fromstring(svg).iter(f"{SVG}text")]
    assert f"… {10 - (RUN_SHOWN - 1)} more (10 statements)" in texts
    assert sum(1 for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("class") == "node") == 3
    assert {f"x = x + {k};" for k in range(1, 9)} <= set(_tooltips(svg))   # the tooltip lists every one
    assert not too_narrow(svg)


def test_a_line_too_long_is_cut_and_whole_in_its_tooltip():
    x = Var("a_rather_long_accumulator_name_for_this_test")
    fn = Function("cut", (), Block((Declare(x, "float64", 0.0), Assign(x, x + x + x))))
    svg = dot_to_svg(ir_dot(fn))
    texts = [_html.unescape("".join(t.itertext())) for t in ET.fromstring(svg).iter(f"{SVG}text")]
    assert any(t.endswith("…") and len(t) == MAX_CHARS for t in texts)
    assert f"{x.name} = {x.name} + {x.name} + {x.name};" in _tooltips(svg)


def test_the_legend_explains_the_tree_notation(kernel):
    name, k = kernel
    cfir, ir = _drawings(k)
    cfir_terms = [t for t, _ in legend_terms(cfir)]
    assert {"forall i", "while i <- A0 ∩ B0", "rounded box", "square box"} <= set(cfir_terms)
    if name == "merge":
        assert "case A0 B0" in cfir_terms and "∩" in cfir_terms
    if name == "two-phase":
        assert "produce / consume" in cfir_terms
        assert {"then / else", "… N more"} <= {t for t, _ in legend_terms(ir)}


def test_the_step_view_draws_the_cfir_and_the_ir(kernel):
    name, k = kernel
    session = explore(k)
    stages = [s.stage for s in k.trace.steps]
    for stage, kind in (("cfir", "cfir"), ("lower", "ir")):
        html = render_step(session.step(stages.index(stage)))
        part = html[html.index(f'data-kind="{kind}"'):]
        assert re.search(r'<div class="drawing"[^>]*><svg style="max-width:100%', part), (name, stage)
        assert 'class="ss-zoom"' in part and 'class="ss-legend"' in part
        assert "xlink:title=" in part   # each box's tooltip


def test_the_drawings_survive_a_saved_trace():
    k = ss.lower(*KERNELS["merge"][:1], "lattice", **KERNELS["merge"][1])
    again = ss.Trace.from_json(k.trace.to_json())
    assert again.find("cfir")[0].artifact("cfir").dot == k.trace.find("cfir")[0].artifact("cfir").dot
    assert again.find("lower")[0].artifact("ir").dot.startswith("digraph ir {")


def test_an_else_if_chain_stays_two_boxes_deep():
    # each else-if was drawn inside the one before: the looplets' three-way merge was 6452 px wide
    # and the browser test found the drawing's root out of view
    x, i = Var("x"), Var("i")
    chain = If(Var("i") < 1, [Assign(x, 1.0)],
               [If(Var("i") < 2, [Assign(x, 2.0)], [If(Var("i") < 3, [Assign(x, 3.0)], [Assign(x, 4.0)])])])
    fn = Function("chain", (), Block((Declare(x, "float64", 0.0), For(i, 0, 4, [chain]))))
    dot = ir_dot(fn)
    ids = dict(re.findall(r'^  (n\d+) \[label="([^"]*)"', dot, re.M))
    edges = re.findall(r"(n\d+) -> (n\d+)", dot)
    first = next(n for n, label in ids.items() if label == "if (i < 1)")
    assert sorted(ids[b] for a, b in edges if a == first) == [
        "else if (i < 2)", "else if (i < 3)", "x = 1.0;", "x = 4.0;"]
    assert "rankdir=LR" in dot   # siblings stack down: a long block stays narrow
