"""Two-way provenance (issue 27 item 3): tooltips say what a tag stands for, a lower:* step
shows its looplet's C with a focus bar and scrolls to it, a chosen tag stays linked after the
notebook redraws, and the exported page shows the C next to each drawing so they link.
The browser side is tests/widgets/test_browser_*.py."""

from __future__ import annotations

import re

import pytest

import compiler as ss
from explorer import explore
from explorer.export import export_html
from explorer.linking import LINK_COLOR, LINK_TEXT, mark_linked
from explorer.renderers import render_artifact, render_c

widgets = pytest.importorskip("widgets")


@pytest.fixture(scope="module")
def three():
    return explore(ss.lower("y[i] = A[i] * B[i] + C[i]", "lattice", A="sv", B="sv", C="sv").trace)


@pytest.fixture(scope="module")
def spmv_looplets():
    return explore(ss.lower("y[i] = A[i, j] * x[j]", "looplets", A="csr", x="dense").trace)


def titles(html: str) -> list[str]:
    return re.findall(r'title="([^"]*)"', html)


def test_c_tooltips_say_what_a_line_computes_not_its_tag(three):
    prov = three.provenance()
    c = three.last_artifact("c")
    shown = titles(render_c(c.text, prov))
    assert shown and not any("lattice:" in t for t in shown), shown
    assert any("case A0 B0: y[i] = A[i] * B[i]" in t for t in shown)


def test_drawing_nodes_carry_the_points_code_as_tooltip(three):
    prov = three.provenance()
    lattice = next(a for s in three.steps for a in s.artifacts if a.kind == "lattice")
    svg = render_artifact(lattice, None, prov)
    inner = re.findall(r"<g><title>([^<]*)</title>", svg)
    assert len(inner) >= 3 and all("lattice:" not in t for t in inner)
    assert any("y[i] = A[i] * B[i]" in t for t in inner)


def test_a_lower_step_shows_its_looplets_c_with_a_focus_bar_and_scrolls_to_it(spmv_looplets):
    from widgets import Explorer

    e = Explorer(spmv_looplets)
    prov = spmv_looplets.provenance()
    i = next(k for k, s in enumerate(spmv_looplets.steps) if s.stage == "lower:Stepper")
    tag = prov.lowered_at(i)[0]
    assert tag.startswith("looplet:Stepper:")
    e.goto(i)
    focus = [int(n) for n in re.findall(r'class="ln ss-focus" data-line="(\d+)"', e.c_pane.value)]
    assert focus == prov[tag]
    assert f'data-tags~=\\&quot;{tag}\\&quot;' in e.c_pane.value   # the pane scrolls to it
    e.goto(spmv_looplets.stages().index("unfurl"))   # an unfurl lowers nothing
    assert "ss-focus" not in e.c_pane.value and "onerror" not in e.c_pane.value


def test_a_picked_tag_stays_linked_and_scrolls_the_c_unless_picked_in_the_c(three):
    from widgets import Explorer

    e = Explorer(three)
    e.goto(three.stages().index("lattice"))
    tag = next(t for t in three.provenance() if t.endswith(":A∩B"))
    e.pick.value = f"{tag}||1"          # a click in the program or the drawing
    assert e.provenance.value == tag and "onerror" in e.c_pane.value
    assert f"stroke=\"{LINK_COLOR}\" stroke-width=\"4\"" in e.artifact_pane.value
    assert f"outline:2px solid {LINK_COLOR}" in e.c_pane.value
    e.select_tag("")
    e.pick.value = f"{tag}|c|2"         # a click in the C: the C stays where it is
    assert e.provenance.value == tag and "onerror" not in e.c_pane.value


def test_mark_linked_strokes_the_chosen_nodes_only():
    svg = ('<g id="node1" class="node highlighted" data-tags="t u"><title>a</title>'
           '<polygon fill="#fff" stroke-width="2" stroke="black" points="0,0"/></g>'
           '<g id="node2" class="node highlighted" data-tags="v"><title>b</title>'
           '<polygon fill="#fff" stroke="black" points="0,0"/></g>')
    out = mark_linked(svg, "u")
    assert out.count(f'stroke="{LINK_COLOR}"') == 1 and out.index(LINK_COLOR) < out.index("node2")


def test_mark_linked_fills_the_chosen_node_and_whitens_its_labels():
    svg = ('<g id="node1" class="node highlighted" data-tags="t u"><title>a</title>'
           '<polygon fill="#ffe08a" stroke="black" points="0,0"/><text fill="#1a1a1a">a</text></g>'
           '<g id="node2" class="node highlighted" data-tags="v"><title>b</title>'
           '<polygon fill="#ffe08a" stroke="black" points="0,0"/><text>b</text></g>')
    out = mark_linked(svg, "u")
    first, second = out.split('id="node2"')
    assert f'fill="{LINK_COLOR}"' in first and f'<text fill="{LINK_TEXT}">a</text>' in first
    assert LINK_COLOR not in second and LINK_TEXT not in second


def test_the_exported_page_shows_the_c_next_to_each_drawing(three):
    page = export_html(three)
    k = three.stages().index("lattice")
    section = page.split(f'id="step-{k}"')[1].split('<section class="step"')[0]
    assert 'class="pane c-section"' in section and 'data-tags="lattice:i:' in section
    assert "function ssLink" in page
