import re

import pytest

import compiler as ss
from explorer import explore
from explorer.examples import build_broken, spmv_trace
from explorer.renderers import (PALETTE, Diff, collect_provenance, color_for, diff_steps, highlight_svg,
                                register_renderer, render_artifact, render_c, render_code, render_dot,
                                render_step, step_focus, RENDERERS)


@pytest.fixture(scope="module")
def session():
    return explore(spmv_trace())


def test_c_html_has_highlighted_spans(session):
    c = session.last_artifact("c").text
    html = render_c(c)
    assert html.startswith("<pre")
    assert re.search(r'<span style="color: #[0-9A-Fa-f]+[^"]*">for</span>', html)  # keyword coloured
    assert html.count('class="ln"') == len(c.splitlines())
    assert "A_pos" in html


def test_ir_and_index_notation_text_are_highlighted(session):
    ir = render_code(session.program_text(2))   # the imperative IR (C-like)
    assert '<span style="color' in ir and "kernel" in ir
    notation = render_code(session.program_text(0), language="ir")
    assert re.search(r'<span style="[^"]*">sum</span>', notation)


def test_fiber_tree_svg_contains_node_labels(session):
    art = session.steps[1].artifact("fiber-tree")
    html = render_artifact(art)
    assert "<svg" in html and "<?xml" not in html and "xmlns=" not in html
    assert ">A<" in html and ">i: Dense<" in html and ">j: SparseList<" in html


def test_highlight_named_nodes():
    dot = 'digraph { p0 [label="i: A ∩ x"]; p1 [label="i: A"]; p0 -> p1 }'
    plain = render_dot(dot)
    lit = render_dot(dot, highlight=["p1"])
    assert "highlighted" not in plain and lit.count('class="node highlighted"') == 1
    by_label = render_dot(dot, highlight={"i: A ∩ x": "#123456"})
    assert 'fill="#123456"' in by_label
    assert render_dot(dot, highlight=["nope"]) == plain  # unknown names change nothing


def test_provenance_colours_c_lines_and_nodes():
    c = "void k(void) {\n  int a = 0;\n  int b = 1;\n}"
    art = ss.Artifact("lattice", "L", "p0\np1", dot='digraph { p0; p1; p0 -> p1 }',
                      data={"provenance": {"p0": [2], "p1": [3]}})
    prov = collect_provenance([art])
    assert prov == {"p0": [2], "p1": [3]}
    html = render_c(c, prov)
    assert f'data-line="2" style="background:{color_for("p0")}"' in html
    assert f'data-line="3" style="background:{color_for("p1")}"' in html
    only = render_c(c, prov, only=["p1"])
    assert color_for("p0") not in only or color_for("p0") == color_for("p1")
    svg = render_artifact(art)
    assert f'fill="{color_for("p0")}"' in svg
    assert color_for("p0") in PALETTE and color_for("p0") == color_for("p0")
    # absent or malformed provenance degrades to no colour
    assert collect_provenance([ss.Artifact("c", "k", c, data={"provenance": "junk"})]) == {}
    assert "style=\"background" not in render_c(c)


def test_diff_steps_has_plus_minus_lines(session):
    d = diff_steps(session, 0, 2)
    assert isinstance(d, Diff) and d
    lines = d.text.splitlines()
    assert any(ln.startswith("-y[i]") for ln in lines)
    assert any(ln.startswith("+kernel spmv") for ln in lines)
    assert d.added > 5 and d.removed == 1
    html = d.html()
    assert "<pre" in html and "kernel spmv" in html
    assert not diff_steps(session, 0, 1)  # the inputs step does not change the program
    assert "no change" in diff_steps(session, 0, 1).html()


def test_render_step_composes_everything(session):
    html = render_step(session.step(1))
    assert "inputs" in html and "<svg" in html and "program" in html
    c_step = render_step(session.step(3))
    assert "C: spmv" in c_step and "diff from the previous step" in c_step


def test_render_step_shows_the_failure():
    s = explore(build_broken)
    html = render_step(s.step())
    assert "error-banner" in html and "SparseBand" in html and "traceback" in html


def test_unknown_kind_and_broken_dot_fall_back():
    html = render_artifact(ss.Artifact("looplet-nest-v9", "n", "Stepper(...)", dot="digraph { a -> }"))
    assert "Graphviz could not draw" in html and "digraph" in html
    text_only = render_artifact(ss.Artifact("mystery", "m", "just text"))
    assert "just text" in text_only and "<svg" not in text_only


def test_register_renderer_and_focus():
    @register_renderer("test-kind")
    def _r(artifact, highlight=None, provenance=None):
        return f"<b>{artifact.name}:{','.join(highlight or [])}</b>"

    try:
        assert render_artifact(ss.Artifact("test-kind", "z", ""), highlight=["q"]) == "<b>z:q</b>"
    finally:
        RENDERERS.pop("test-kind")
    step = ss.Step("lower:Stepper", artifacts=[ss.Artifact("looplet-nest", "n", "", data={"focus": ["s1"]})])
    assert step_focus(step) == ["s1", "Stepper"]


def test_highlight_svg_without_colors_is_identity():
    assert highlight_svg("<svg/>", {}) == "<svg/>"
