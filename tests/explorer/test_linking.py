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
from explorer.linking import LINK_COLOR, LINK_OUTLINE, LINK_TEXT, mark_linked
from explorer.renderers import render_artifact, render_c
from explorer.sharedc import painted_lines
from explorer.stepdiff import c_opening_line

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
    u = spmv_looplets.stages().index("unfurl")
    e.goto(u)   # an unfurl lowers nothing: no focus, and its C opens at its first linked line
    assert "ss-focus" not in e.c_pane.value and "span.ln[data-tags~=" not in e.c_pane.value
    assert f'data-line=\\&quot;{c_opening_line(spmv_looplets, u)}\\&quot;' in e.c_pane.value


def test_a_picked_tag_stays_linked_and_scrolls_the_c_unless_picked_in_the_c(three):
    from widgets import Explorer

    e = Explorer(three)
    e.goto(three.stages().index("lattice"))
    tag = next(t for t in three.provenance() if t.endswith(":A∩B"))
    e.pick.value = f"{tag}||1"          # a click in the program or the drawing
    assert e.provenance.value == tag and "onerror" in e.c_pane.value
    assert f"stroke=\"{LINK_COLOR}\" stroke-width=\"4\"" in e.artifact_pane.value
    assert f"outline:2px solid {LINK_OUTLINE}" in e.c_pane.value
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


@pytest.fixture(scope="module")
def concat_looplets():
    """``y = [A; B] x`` as one array expression lowered by looplets: its ``shape-operators`` step
    shows the loop program its wrappers made, coloured by the C's tags."""
    import numpy as np
    import scipy.sparse as sp
    from compiler import array as xp

    A, B = (sp.random(n, 5, density=0.4, format="csr", random_state=k) for k, n in enumerate((6, 4)))
    expr = xp.concat([ss.asarray(A, name="A"), ss.asarray(B, name="B")], axis=0) @ ss.asarray(np.arange(5.0), name="x")
    kernel = ss.lower(expr, strategy="looplets")
    assert np.allclose(kernel().to_numpy(), np.vstack([A.toarray(), B.toarray()]) @ np.arange(5.0))
    return explore(kernel.trace)


def test_a_step_whose_program_the_c_colours_shows_the_c_opened_at_its_first_linked_line(concat_looplets):
    """The looplets' shape-operators step colours its loops by the C's tags: the exported page
    shows the C beside it (it showed none), opened at the first C line of a tag its program
    shows (it opened at the #includes); the C pane of a step that draws opens so too."""
    s, prov = concat_looplets, concat_looplets.provenance()
    page = export_html(s)
    for stage in ("shape-operators", "array"):
        k = s.stages().index(stage)
        section = page.split(f'id="step-{k}"')[1].split('<section class="step"')[0]
        assert 'class="pane c-section"' in section, stage
        program = section.split('class="pane c-section"')[0]
        tags = {t for ts in re.findall(r'data-tags="([^"]*)"', program) for t in ts.split()}
        opens = int(re.search(r'c-section" data-ss-open="(\d+)"', section).group(1))
        assert opens == c_opening_line(s, k) == min(n for t in tags for n in prov.get(t, ())), stage
        # (below every #include: in the kernel's function, where the C's tags are)
        includes = [n for n, line in enumerate(s.last_artifact("c").text.splitlines(), 1) if line.startswith("#")]
        assert opens > max(includes) and opens in painted_lines(section.split("c-section")[1])
    # the array expression's drawing: its boxes linked to the C of the statement's nodes they became
    k = s.stages().index("array")
    section = page.split(f'id="step-{k}"')[1].split('<section class="step"')[0]
    linked = re.findall(r'class="node highlighted" data-tags="(expr:n\d+)"', section)
    assert len(linked) == 7 and all(prov[t] for t in linked), linked


def sequence_lines(program):
    """The kernel of ``program`` by the looplets, its explored trace, and the C lines the Explorer focuses at the
    step lowering its Sequence (each of the Sequence's tag: the focus is its code)."""
    from widgets import Explorer

    k = ss.lower(program, "looplets", A="csr")
    t = explore(k.trace)
    prov = t.provenance()
    i = next(n for n, s in enumerate(t.steps) if s.stage == "lower:Sequence")
    tag = prov.lowered_at(i)[0]
    assert tag.startswith("looplet:Sequence:")
    e = Explorer(t)
    e.goto(i)
    focus = [int(n) for n in re.findall(r'class="ln ss-focus" data-line="(\d+)"', e.c_pane.value)]
    assert focus == prov[tag]
    return k, t, [k.c_source.splitlines()[n - 1].strip() for n in focus]


def test_a_row_max_whose_gaps_fold_once_links_its_sequence_to_the_walk_and_the_fold():
    # (compiler.looplets.idempotent_gaps: the SparseList's Sequence is lowered as one walk and one update after it)
    k, t, shown = sequence_lines("y[i] = max[j](A[i, j])")
    assert "as one walk" in next(s for s in t.steps if s.stage == "lower:Sequence").note
    # the Sequence's lines: the count of the row's gaps, the walk over its values and the one update after it
    assert any(line.startswith("int64_t j_missing = ") for line in shown), shown
    assert any(line.startswith("for (int64_t pA = qA;") for line in shown), shown
    assert "if (j_missing > 0) {" in shown, shown


def test_a_column_max_whose_gaps_are_counted_links_its_sequence_to_the_count_the_walk_and_the_fold():
    # (compiler.looplets.counted_gaps: each row's walk counts its columns, one loop after the rows makes the fill's
    # update where a row had a gap; that loop is the Sequence's code too, though it runs after the rows')
    k, t, shown = sequence_lines("y[j] = max[i](A[i, j])")
    assert "j_walks += 1;" in shown and "j_entries[j_2] += 1;" in shown, shown
    assert "if (j_entries[j] < j_walks) {" in shown, shown
    counted = [s for s in t.steps if s.stage == "lower:Spike" and "the gaps' update counted" in s.note]
    assert len(counted) == 1 and "j_entries[j] < j_walks" in counted[0].note
