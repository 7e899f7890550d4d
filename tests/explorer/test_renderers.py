import re

import pytest

import compiler as ss
from explorer import explore
from explorer.examples import build_broken, spmv_trace
from explorer.renderers import (PALETTE, Diff, collect_provenance, color_for, diff_steps, highlight_svg,
                                register_renderer, render_artifact, render_c, render_code, render_dot,
                                render_rewrites, render_step, step_focus, RENDERERS)


@pytest.fixture(scope="module")
def session():
    return explore(spmv_trace())


def test_c_html_has_highlighted_spans(session):
    c = session.last_artifact("c").text
    html = render_c(c)
    assert html.startswith("<pre")
    # keywords in the theme's keyword colour (light where there is no theme)
    assert re.search(r'<span style="color:var\(--jp-mirror-editor-keyword-color, #[0-9a-f]+\)[^"]*">for</span>', html)
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
    assert f'data-line="2" style="background:{color_for("p0")};' in html
    assert f'data-line="3" style="background:{color_for("p1")};' in html
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
    assert "C: spmv" in c_step and "input of emit-c, which made C" in c_step
    assert "diff: what parse changed" in render_step(session.step(0))


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


# --- provenance in the program pane (real lowerings) -----------------------------------------

import html as _html_mod

import numpy as np
import scipy.sparse as _sp

from explorer.nests import svg_width_px
from explorer.provenance import program_marks
from explorer.renderers import render_program

_LINENO = re.compile(r'<span class="lno"[^>]*>\s*\d+ </span>')


def _visible(pre_html: str) -> str:
    """The code text of a rendered <pre> (line numbers and tags dropped, entities decoded)."""
    return _html_mod.unescape(re.sub(r"<[^>]+>", "", _LINENO.sub("", pre_html)))


def _step_of(session, stage):
    return next(k for k, st in enumerate(session.steps) if st.stage == stage)


@pytest.fixture(scope="module")
def real_sessions():
    S = _sp.random(6, 5, density=0.4, format="csr", random_state=0)
    A = ss.Tensor.from_scipy(S, name="A")
    a = ss.Tensor.from_numpy(np.array([0, 1.0, 0, 2, 0, 0, 3]), "sparse_vector")
    b = ss.Tensor.from_numpy(np.array([1, 0.0, 0, 2, 0, 4, 0]), "sparse_vector")
    out = {}
    for strategy in ("lattice", "looplets"):
        out[strategy, "spmv"] = explore(ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy, A=A,
                                                 x=np.arange(5.0)).trace)
        out[strategy, "add"] = explore(ss.lower("z[i] = a[i] + b[i]", strategy=strategy, a=a, b=b).trace)
    return out


def test_program_pane_keeps_the_text_and_colours_the_marks(real_sessions):
    for (strategy, which), s in real_sessions.items():
        prov = s.provenance()
        assert prov
        marked_steps = 0
        for i in range(len(s)):
            text = s.program_text(i)
            html = render_program(text, prov, i)
            # the marks change colours, never the text
            assert _visible(html) == text.rstrip("\n"), (strategy, which, i)
            marks = [m for m in program_marks(text, prov, i) if m.start is not None]
            spans = re.findall(r'<span class="pv" data-tags="([^"]*)"', html)
            assert len(spans) >= len(marks) > 0 or not marks
            assert [_html_mod.unescape(t) for t in spans[:len(marks)]] == [" ".join(m.tags) for m in marks]
            marked_steps += bool(spans)
        assert marked_steps >= 3, (strategy, which)


def test_program_mark_spans_hold_their_text_in_their_first_tags_colour(real_sessions):
    s = real_sessions["lattice", "spmv"]
    i = _step_of(s, "concretize")
    text = s.program_text(i)
    html = render_program(text, s.provenance(), i)
    marks = [m for m in program_marks(text, s.provenance(), i) if m.start is not None]
    pieces = re.split(r'(<span class="pv" [^>]*>)', html)
    found = []
    for opener, rest in zip(pieces[1::2], pieces[2::2]):
        # the span's content runs to its matching </span>
        depth, k = 1, 0
        for tok in re.finditer(r"<span\b|</span>", rest):
            depth += 1 if tok.group(0) == "<span" else -1
            if depth == 0:
                k = tok.start()
                break
        tags = _html_mod.unescape(re.search(r'data-tags="([^"]*)"', opener).group(1)).split()
        color = re.search(r"background:(#[0-9a-f]+)", opener).group(1)
        found.append((_visible(rest[:k]), tags[0], color))
    assert [(m.text, m.tags[0]) for m in marks] == [(t, tag) for t, tag, _ in found]
    assert all(color == color_for(tag) for _, tag, color in found)
    assert ("A[i, j]", "lattice:j:A∩x") in [(t, tag) for t, tag, _ in found]


def test_render_step_program_section_has_provenance_marks(real_sessions):
    for strategy in ("lattice", "looplets"):
        s = real_sessions[strategy, "spmv"]
        i = _step_of(s, "parse")
        html = render_step(s.step(i), i)
        program = html.split("diff: what parse changed")[0]
        tags = {t for group in re.findall(r'class="pv" data-tags="([^"]*)"', program)
                for t in _html_mod.unescape(group).split()}
        assert tags and tags <= set(s.provenance()), strategy
        # the C step's program is the C itself: its tagged lines carry data-tags
        c_i = _step_of(s, "emit-c")
        c_html = render_step(s.step(c_i), c_i, parts=["program"])
        lines = {int(n) for n in re.findall(r'data-line="(\d+)"[^>]*data-tags=', c_html)}
        assert lines == {n for ns in s.provenance().values() for n in ns}


def test_looplet_nest_drawings_are_narrow_and_coloured(real_sessions):
    s = real_sessions["looplets", "spmv"]
    prov = s.provenance()
    nest = next(a for _, a in s.artifacts("looplet-nest") if a.name == "A.lvl1[i][j]")
    html = render_artifact(nest, provenance=prov)
    assert svg_width_px(html) <= 880
    # the Thunk, Sequence and Stepper lowered on j for A are coloured with their tags
    tagged = re.findall(r'class="node highlighted" data-tags="([^"]*)"', html)
    styles = {t.split(":")[1] for group in tagged for t in _html_mod.unescape(group).split()}
    assert {"Thunk", "Sequence", "Stepper"} <= styles
    assert "Lookup" not in styles  # the Lookup tag is of index i: not this nest's


def test_rewrites_fold_repeats_and_never_end_in_a_bare_arrow():
    # a lattice of three points re-derives "0.0 + C[i] -> C[i]" once per point; its derive:* rows
    # record no right-hand side (they were drawn as "rule  expression  →")
    trace = ss.lower("y[i] = A[i] * B[i] + C[i]", "lattice", A="sv", B="sv", C="sv").trace
    step = next(s for s in trace.steps if s.stage == "lattice" and s.rewrites)
    distinct = {(r.rule, r.before, r.after) for r in step.rewrites}
    assert len(distinct) < len(step.rewrites)
    html = render_rewrites(step)
    rows = re.findall(r"<tr>(.*?)</tr>", html)
    assert len(rows) == len(distinct)
    for row in rows:
        assert "<code></code>" not in row, row   # an arrow to nothing
    counts = [int(n) for n in re.findall(r"×(\d+)", html)]
    assert sum(counts) + (len(rows) - len(counts)) == len(step.rewrites)
    assert "rewrites (%d, %d distinct)" % (len(step.rewrites), len(distinct)) in render_step(step)


def test_lattice_points_are_linked_by_the_tags_the_lowering_recorded():
    """A lattice's drawing links each point to the code it made through the tags its artifact
    records (``data["node_tags"]``), not by reading ``[A | B]`` back from its labels (issue 29,
    item 5): every point of a union has its case's tag, and the C provenance has each of them."""
    from explorer.provenance import trace_provenance
    trace = ss.lower("C[i, j] = A[i, j] + B[i, j]", "lattice", A="csr", B="csr", C="csr").trace
    art = next(a for s in trace.steps if s.stage == "lattice" for a in s.artifacts if a.name == "forall j")
    assert art.data["node_tags"] == {"p0": ["lattice:j:A∩B"], "p1": ["lattice:j:A"], "p2": ["lattice:j:B"]}
    prov = trace_provenance(trace)
    assert all(prov[t] for tags in art.data["node_tags"].values() for t in tags)
    svg = render_artifact(art, provenance=prov)
    for node, tags in art.data["node_tags"].items():
        group = re.search(rf'<g id="node\d+" class="node highlighted" data-tags="([^"]*)"[^>]*>\s*<title>{node}</title>',
                          svg)
        assert group and group.group(1).split() == tags, node


def test_a_c_line_takes_the_colour_of_the_innermost_node_drawn_beside_it():
    """On the lattice step of ``y[i] = A[i] * B[i] + C[i]``, each case's C line is in the colour
    of its lattice point (``[A B | ]``'s line computing ``A * B`` in that point's colour), not in
    the loop's: a line takes the colour of the drawn tag of it covering the fewest lines (every
    line of the loop was in the loop's colour, its tag coming first)."""
    import re

    import compiler as ss
    from explorer import explore, render_step
    from rendered_colors import view_colors

    session = explore(ss.lower("y[i] = A[i] * B[i] + C[i]", "lattice", A="sv", B="sv", C="sv").trace)
    prov = session.provenance()
    html = render_step(session.step(session.stages().index("lattice")), linked=True)
    colors = view_colors(html)
    drawn = set(re.findall(r'class="node highlighted" data-tags="([^" ]*)', html))
    assert len(drawn) >= 4, drawn
    lines = re.findall(r'<span class="ln" data-line="(\d+)" style="background:([^;]*);[^"]*"[^>]*data-tags="([^"]*)"',
                       html.split('class="pane c-section"', 1)[1])
    assert lines
    for n, background, tags in lines:
        shown = [t for t in tags.split() if t in drawn]
        want = min(shown, key=lambda t: len(prov[t])) if shown else tags.split()[0]
        assert background == colors[want], (n, tags, background)
    points = {background for _, background, tags in lines if "lattice:i:A∩B " in tags + " "}
    assert len({background for _, background, _ in lines}) >= 4 and colors["lattice:i:A∩B"] in points
