"""Provenance colours in the browser: the ``[A; B] x`` array view's boxes, program and C in their
tags' colours (distinct, far apart, readable in JupyterLab's light and dark themes and the exported
page), boxes that share a colour named as one thing, and Compare's columns linking a C line to the
program's parts of their own column."""

from __future__ import annotations

import re

import pytest

from browser_colours import exported_step, one_colour_per_tag, stacked_spmv_kernel, themed_page
from browser_measure import COLOUR_JS, screenshot


def test_the_array_view_gives_each_box_a_colour_of_its_own_in_both_themes(browser, tmp_path, artifacts):
    """The array step of ``y = [A; B] x`` (looplets) as the Explorer shows it, on a page in
    JupyterLab's light and then dark theme, and as the exported page shows it: the array
    expression's 7 boxes are filled in 6 colours, one per tag (``x`` and its broadcast became one
    access, ``x[j]``, and share its C lines; hashed into 12 colours, the 6 tags had 4), and every colour a box, a C line or a program part is drawn in stands out from the
    pane under it (contrast >= 3) with its text readable on it (>= 4.5) in both themes (the
    pastels stood 1.2 to 1.5 off the light page)."""
    from browser_measure import TAG_COLOURS_JS, assert_tag_colours_read

    from widgets import Explorer

    kernel = stacked_spmv_kernel()
    e = Explorer(kernel.trace)
    at = e.session.stages().index("array")
    panes = e.render(at)
    body = (f'<div class="ss-pick-root" style="display:flex;gap:8px"><div class="ss-drawing" style="flex:1">'
            f'{panes["artifact"]}</div><div class="ss-c" style="flex:1;max-height:700px;overflow:auto">{panes["c"]}'
            f'</div></div><div class="ss-program">{panes["program"]}</div>')
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    for theme in ("light", "dark"):
        page.set_content(themed_page(theme, body))
        m = page.evaluate(TAG_COLOURS_JS, page.locator("body").element_handle())
        boxes = [n for n in m["nodes"] if n["tag"].startswith("expr:")]
        assert len(boxes) == 7 and one_colour_per_tag(boxes) == 6, (theme, boxes)
        assert len(m["parts"]) > 10, (theme, m["parts"][:3])
        assert_tag_colours_read(m, f"the Explorer's array step ({theme} theme)")
        page.screenshot(path=str(artifacts / f"views-array-colours-{theme}.png"), full_page=True)
    # the exported page's array step: the same boxes, each its own colour, on the light page
    section = exported_step(page, kernel.trace, tmp_path / "array.html", at)
    m = page.evaluate(TAG_COLOURS_JS, section.element_handle())
    boxes = [n for n in m["nodes"] if n["tag"].startswith("expr:")]
    assert len(boxes) == 7 and one_colour_per_tag(boxes) == 6, boxes
    assert_tag_colours_read(m, "the exported page's array step")
    # the legend's buttons show the step's colours
    shown = page.evaluate("""s => { const c = JSON.parse(s.getAttribute('data-colors'));
        return [...document.querySelectorAll('nav.provenance button[data-tag]')].filter(b => c[b.dataset.tag])
          .map(b => [b.dataset.tag, getComputedStyle(b).backgroundColor, c[b.dataset.tag]]); }""",
                          section.element_handle())
    rgb = lambda h: "rgb({}, {}, {})".format(*(int(h[k:k + 2], 16) for k in (1, 3, 5)))
    assert shown and all(bg == rgb(own) for _, bg, own in shown), shown
    page.screenshot(path=str(artifacts / "export-array-colours.png"), full_page=False)
    page.close()


def test_the_colours_a_view_shows_are_one_per_thing_and_far_apart(browser, artifacts):
    """Every colour the array step of ``y = [A; B] x`` (looplets) shows, in its boxes, its program
    and its C, as measured on the page in JupyterLab's light theme: one colour per thing the view
    shows (its 6 boxes' tags and the program's part no box draws, ``out[i]``: 7 colours; the
    concat's name and binding in its box's colour, where they had the shape operator's own), each C line in the colour of a box or a program part (on main the C was painted in
    all 16 palette colours, wrapping the palette: 19 tags for 6 boxes, most of them looplets the
    step draws nowhere, and a line of the second ``Stepper`` in the sum box's orange), each
    program part in its box's colour (``A[k, j]`` was in a looplet's), any two colours at least
    13.7 apart by CIEDE2000 (main once showed ``#349c34`` and ``#669525``, two greens 7.8 apart),
    and the boxes' colours, the first given out, at least 21 apart."""
    from browser_measure import TAG_COLOURS_JS

    from explorer.palette import PALETTE, delta_e
    from widgets import Explorer

    e = Explorer(stacked_spmv_kernel().trace)
    panes = e.render(e.session.stages().index("array"))
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    page.set_content(themed_page("light", f'<div class="ss-drawing">{panes["artifact"]}</div>'
                                          f'<div class="ss-c">{panes["c"]}</div><div class="ss-program">{panes["program"]}</div>'))
    nodes = page.evaluate(TAG_COLOURS_JS, page.locator(".ss-drawing").element_handle())["nodes"]
    c_lines = page.evaluate(TAG_COLOURS_JS, page.locator(".ss-c").element_handle())["parts"]
    program = page.evaluate(TAG_COLOURS_JS, page.locator(".ss-program").element_handle())["parts"]
    boxes = sorted({n["fill"] for n in nodes})
    named = {n["fill"] for n in nodes} | {p["bg"] for p in program}
    shown = sorted(named | {p["bg"] for p in c_lines})
    things = {n["tag"] for n in nodes} | {p["tag"] for p in program}   # (a part's colouring tag is its first)
    assert c_lines and {p["bg"] for p in c_lines} <= named, \
        ("C lines in colours no box or program part has", sorted({p["bg"] for p in c_lines} - named))
    box_of = {n["tag"]: n["fill"] for n in nodes}
    assert all(p["bg"] == box_of[p["tag"]] for p in program if p["tag"] in box_of), (program, box_of)
    assert len(shown) == len(things) == 7 and set(shown) <= set(PALETTE), (shown, sorted(things))
    # (the concat's name and binding in its box's colour: they showed the shape operator's own, an eighth)
    concat = [p for p in program if p["code"] in ("concat", "(k, l) -> i")]
    assert len(concat) == 2 and all(p["tag"] in box_of for p in concat), (concat, box_of)

    def closest(colors):
        return min(((round(delta_e(a, b), 1), a, b) for k, a in enumerate(colors) for b in colors[k + 1:]))

    assert closest(shown)[0] >= 13.7, (closest(shown), len(shown))
    assert len(boxes) == 6 and closest(boxes)[0] >= 21, (closest(boxes), boxes)
    page.screenshot(path=str(artifacts / "views-array-colours-apart.png"), full_page=True)
    page.close()


# Each legend entry under a drawing for boxes that share a colour (explorer.sharedcolours): its
# tag, its swatch's colour and its text's contrast against what lies under it.
SHARED_JS = r"""
(root) => {""" + COLOUR_JS + r"""  const hex = c => '#' + c.slice(0, 3).map(v => Math.round(v).toString(16).padStart(2, '0')).join('');
  return [...root.querySelectorAll('.ss-shared-colour')].map(e => {
    const sw = e.querySelector('.ss-swatch'), bg = background(e), ink = over(rgba(getComputedStyle(e).color), bg);
    const [a, b] = [lum(ink), lum(bg)].sort((x, y) => y - x);
    const artifact = e.parentElement.previousElementSibling;   // (the drawing the entry is under)
    return {tag: e.dataset.tag, text: e.textContent, swatch: hex(over(rgba(getComputedStyle(sw).backgroundColor), bg)),
            contrast: (a + 0.05) / (b + 0.05), visible: sw.getBoundingClientRect().width > 8,
            under: artifact && artifact.matches('.artifact') ? artifact.getAttribute('data-kind') : null};
  });
}
"""


def test_boxes_that_share_a_colour_are_named_as_one_thing(browser, tmp_path, artifacts):
    """The array step of ``y = [A; B] x`` (looplets): ``x`` and its broadcast are one access
    (``x[j]``), one tag, the same C lines, so they keep one colour (a colour of its own for the
    broadcast would be one that no C line or program part has); the drawing says so: under it, one
    legend entry for that tag, its swatch in the boxes' colour, naming both boxes and ``x[j]``, its
    text readable (>= 4.5), and none for a box whose colour is its own (main: no entry; the two
    boxes read as a palette that ran out). Measured in JupyterLab's light and dark themes and in
    the exported page, where a click on the broadcast's box outlines both boxes."""
    from browser_measure import TAG_COLOURS_JS

    from explorer.linking import LINK_COLOR
    from widgets import Explorer

    kernel = stacked_spmv_kernel()
    e = Explorer(kernel.trace)
    at = e.session.stages().index("array")
    panes = e.render(at)
    page = browser.new_page(viewport={"width": 1300, "height": 1000})

    def check(root, where):
        boxes = [n for n in page.evaluate(TAG_COLOURS_JS, root)["nodes"] if n["tag"].startswith("expr:")]
        labels = dict(page.evaluate("""r => [...r.querySelectorAll('.artifact[data-kind="array-expression"] svg g.node')]
            .map(g => [g.querySelector('title').textContent, g.querySelector('text').textContent])""", root))
        by_tag = {}
        for n in boxes:
            by_tag.setdefault(n["tag"], []).append(n)
        shared = {t: ns for t, ns in by_tag.items() if len(ns) > 1}
        assert len(boxes) == 7 and len(by_tag) == 6 and len(shared) == 1, (where, boxes)
        entries = page.evaluate(SHARED_JS, root)
        assert [x["tag"] for x in entries] == list(shared), (where, entries, shared)
        (ns,), (entry,) = shared.values(), entries
        names = sorted(labels[n["title"]] for n in ns)
        assert names == ["broadcast to (1, 5)", "x (dense)"], names
        assert entry["under"] == "array-expression" and entry["visible"], (where, entry)
        assert {n["fill"] for n in ns} == {entry["swatch"]}, (where, entry, ns)
        assert all(name in entry["text"] for name in names) and "x[j]" in entry["text"], (where, entry["text"])
        assert entry["contrast"] >= 4.5, (where, entry)
        return names

    for theme in ("light", "dark"):
        page.set_content(themed_page(theme, f'<div class="ss-drawing">{panes["artifact"]}</div>'))
        check(page.locator("body").element_handle(), theme)
        page.screenshot(path=str(artifacts / f"views-array-shared-colour-{theme}.png"), full_page=False)
    section = exported_step(page, kernel.trace, tmp_path / "shared.html", at)
    check(section.element_handle(), "the exported page")
    tree = section.locator('.artifact[data-kind="array-expression"]').first
    tree.locator("svg g.node", has=page.locator("text", has_text="broadcast to (1, 5)")).first.click()
    linked = tree.locator("svg g.node.ss-linked").evaluate_all(
        "gs => gs.map(g => [g.querySelector('text').textContent, g.querySelector('polygon').getAttribute('stroke')])")
    assert sorted(linked) == [["broadcast to (1, 5)", LINK_COLOR], ["x (dense)", LINK_COLOR]], linked
    page.screenshot(path=str(artifacts / "export-array-shared-colour.png"), full_page=False)
    # a click on nothing unpins; one on the legend's line outlines both boxes and their C lines, as a box's
    # does (main: the line carried no tag, and the click outlined nothing)
    section.click(position={"x": 2, "y": 2})
    assert tree.locator("svg g.node.ss-linked").count() == 0
    section.locator(".ss-shared-colour").first.click()
    linked = tree.locator("svg g.node.ss-linked").evaluate_all("gs => gs.map(g => g.querySelector('text').textContent)")
    lines = section.locator(f'span.ln.ss-linked[data-tags~="{entries_tag(page, section)}"]').count()
    assert sorted(linked) == ["broadcast to (1, 5)", "x (dense)"] and lines > 0, (linked, lines)
    page.screenshot(path=str(artifacts / "export-array-shared-colour-legend-click.png"), full_page=False)
    page.close()


def entries_tag(page, root) -> str:
    """The tag of the first legend entry for boxes that share a colour under ``root``."""
    return page.evaluate("r => r.querySelector('.ss-shared-colour').dataset.tag", root.element_handle())


# A Compare column's program parts: each part's text, its tags and whether it is outlined.
PARTS_JS = """col => [...col.querySelectorAll('.ss-c span.pv[data-tags]')].map(p => ({
  text: p.textContent, tags: p.getAttribute('data-tags').split(' '), linked: p.classList.contains('ss-linked'),
  outline: getComputedStyle(p).outlineStyle}))"""


# A Compare column before any C: where its kernel's C box is scrolled, whether the line ``n`` lies
# in its visible part, and whether the program's line lies in the C pane's.
KERNEL_C_OPENED_JS = r"""
(col, n) => {
  const inside = (r, b) => r.top >= b.top - 1 && r.bottom <= b.bottom + 1;
  const pane = col.querySelector('.ss-c'), kernel = col.querySelector('.ss-kernel-c');
  let box = null;
  for (let b = kernel.querySelector(`span.ln[data-line="${n}"]`).parentElement; b && b !== kernel; b = b.parentElement) {
    const o = getComputedStyle(b).overflowY;
    if ((o === 'auto' || o === 'scroll') && b.scrollHeight > b.clientHeight + 1) { box = b; break; }
  }
  const line = kernel.querySelector(`span.ln[data-line="${n}"]`).getBoundingClientRect();
  const program = pane.querySelector('span.ln').getBoundingClientRect();
  return {scrollTop: box ? box.scrollTop : 0, lineInView: !!box && inside(line, box.getBoundingClientRect()),
          programInView: inside(program, pane.getBoundingClientRect())};
}
"""


def test_compare_links_a_c_line_to_the_program_parts_of_its_column(browser, artifacts):
    """Compare of ``y = [A; B] x`` (lattice | looplets) at the array step, where neither column has
    C yet: each column shows the program as it stands, its parts tagged as the single view tags
    them (with the shape operators' tags, and the tags of the expression tree's nodes each access
    and reduction is), and below it the kernel's C (it showed the program alone, with no tree
    tags: a C line outlined no part), opened at the step's first linked line. Clicking the C line of ``x[j]``'s node, then of ``A[k, j]``'s,
    in each column outlines that program part in that column and no part of the other column."""
    import compiler as ss
    from compiler import array as xp
    import numpy as np
    import scipy.sparse as sp
    from explorer.stepdiff import c_opening_line
    from widgets import Compare, Explorer

    A, B = (sp.random(n, 5, density=0.4, format="csr", random_state=k) for k, n in enumerate((6, 4)))
    expr = xp.concat([ss.asarray(A, name="A"), ss.asarray(B, name="B")], axis=0) @ ss.asarray(np.arange(5.0), name="x")
    kernels = [ss.lower(expr, strategy=s) for s in ("lattice", "looplets")]
    compare = Compare(kernels[0].trace, kernels[1].trace, labels=("lattice", "looplets"))
    compare.stage_slider.value = 0
    assert [compare.sessions[k].steps[compare.step_of(k)].stage for k in range(2)] == ["array", "array"]
    columns = "".join(f'<div class="ss-column ss-column-{"ab"[k]}" style="flex:1;min-width:0">'
                      f'<div class="ss-c" style="max-height:420px;overflow:auto">{c}</div>'
                      f'<div class="ss-drawing">{d}</div></div>' for k, (c, d) in enumerate(map(compare.render, range(2))))
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_content(themed_page("light", f'<div style="display:flex;gap:8px">{columns}</div>'))
    for k in range(2):
        column = page.locator(f".ss-column-{'ab'[k]}")
        other = page.locator(f".ss-column-{'ab'[1 - k]}")
        parts = column.evaluate(PARTS_JS)
        # the program's parts carry the single view's tags
        single = Explorer(kernels[k].trace).render(0)["program"]
        page_single = browser.new_page()
        page_single.set_content(f'<div class="ss-c">{single}</div>')
        want = page_single.locator("body").evaluate(PARTS_JS)
        page_single.close()
        assert [(p["text"], p["tags"]) for p in parts] == [(p["text"], p["tags"]) for p in want], (k, parts, want)
        texts = [p["text"] for p in parts]
        assert {"A[k, j]", "B[l, j]", "x[j]", "concat", "(k, l) -> i"} <= set(texts), texts
        assert column.locator(".ss-c span.ln[data-tags]").count() > 20, "no C below the program"
        # the kernel's C opens at the step's first linked line (not at the #includes), in a box of
        # its own below the program, which stays in view at the top of the pane
        opened = column.evaluate(KERNEL_C_OPENED_JS, c_opening_line(compare.sessions[k], 0))
        assert opened["scrollTop"] > 0 and opened["lineInView"] and opened["programInView"], (k, opened)
        for name in ("x[j]", "A[k, j]"):
            part = next(p for p in parts if p["text"] == name)
            node = next(t for t in part["tags"] if t.startswith("expr:"))
            line = column.locator(f'.ss-c span.ln[data-tags~="{node}"]').first
            line.scroll_into_view_if_needed()
            line.click()
            shown = column.evaluate(PARTS_JS)
            linked = [p for p in shown if p["text"] == name]
            assert linked and all(p["linked"] and p["outline"] == "solid" for p in linked), (k, name, linked)
            picked = set(line.get_attribute("data-tags").split())
            assert all(set(p["tags"]) & picked for p in shown if p["linked"]), (k, name, shown)
            assert other.locator(".ss-linked").count() == 0, (k, name, "linked in the other column")
            screenshot(page, artifacts / f"views-compare-program-linked-{'ab'[k]}-{name[0]}.png", full_page=False)
            note = column.locator(".ss-c .ss-linkable > div", has_text=re.compile(r"^\(no C yet")).first
            note.scroll_into_view_if_needed()
            note.click()   # (a click on nothing tagged lets go)
            assert column.locator(".ss-linked").count() == 0, (k, name, "still linked")
    page.close()


# The C lines that read every operand of ``A * B + D`` and the boxes of the array step's drawing, in
# the colours the page shows them.
OPERANDS_READ_JS = r"""(section) => {
  const lines = [...section.querySelectorAll('span.ln')].filter(l => ['A_val', 'B_val', 'D_val']
    .every(a => l.textContent.includes(a + '['))).map(l => [l.dataset.line, getComputedStyle(l).backgroundColor]);
  const boxes = Object.fromEntries([...section.querySelectorAll('svg g.node')].map(g => {
    const shape = g.querySelector('polygon, ellipse, path');
    return [g.querySelector('text').textContent.trim().split(' ')[0], shape && getComputedStyle(shape).fill];
  }));
  return {lines, boxes};
}"""


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_c_line_computing_the_whole_expression_takes_its_root_operators_colour(browser, tmp_path, artifacts,
                                                                                   strategy):
    """The array step of ``A * B + D`` (CSR, CSR, dense): the C line reading all three operands
    computes the ``add``, and is drawn in the ``add`` box's colour, where it took ``B``'s (an operand
    whose tag names the fewest lines, as a lattice case's point names fewer than its loop: every
    node below ``add`` names that line too; the audit's item)."""
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss

    A, B = (sp.random(6, 5, density=0.4, format="csr", random_state=k) for k in (1, 2))
    expr = ss.asarray(A, name="A") * ss.asarray(B, name="B") + ss.asarray(np.ones((6, 5)), name="D")
    kernel = ss.lower(expr, strategy=strategy)
    assert np.allclose(kernel().to_numpy(), A.toarray() * B.toarray() + 1)
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    section = exported_step(page, kernel.trace, tmp_path / "add.html", kernel.trace.stages().index("array"))
    seen = page.evaluate(OPERANDS_READ_JS, section.element_handle())
    screenshot(page, artifacts / f"export-array-root-colour-{strategy}.png", full_page=True)
    boxes = seen["boxes"]
    assert {"add", "mul", "A", "B", "D"} <= set(boxes) and len({boxes[b] for b in ("add", "mul", "A", "B")}) == 4, boxes
    rgb = "rgb({}, {}, {})".format(*(int(boxes["add"][k:k + 2], 16) for k in (1, 3, 5))) \
        if boxes["add"].startswith("#") else boxes["add"]
    assert seen["lines"] and all(bg == rgb for _, bg in seen["lines"]), (seen["lines"], boxes)
    page.close()


def test_the_concretize_steps_statement_shows_its_parts_not_one_lattice_points_colour(browser, tmp_path, artifacts):
    """The concretize step of ``A * B + D`` (lattice; no drawing): the statement under its two
    foralls, ``out[i, j] = A[i, j] * B[i, j] + D[i, j]``, computed at four lattice points of ``j``,
    shows each access in a colour of its own (its node of the expression tree, as the array step
    drew it), none the loops', and the C lines writing it in the colour of ``out[i, j]``; every
    access and those lines were in the colour of the point ``A∩B∩D``, the first that computes the
    statement, as though it ran there alone (the audit's item)."""
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss

    A, B = (sp.random(6, 5, density=0.4, format="csr", random_state=k) for k in (1, 2))
    expr = ss.asarray(A, name="A") * ss.asarray(B, name="B") + ss.asarray(np.ones((6, 5)), name="D")
    kernel = ss.lower(expr, strategy="lattice")
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    section = exported_step(page, kernel.trace, tmp_path / "concretize.html",
                            kernel.trace.stages().index("concretize"))
    parts = section.locator(".program span.pv, span.pv").evaluate_all(
        "ps => ps.map(p => [p.textContent, getComputedStyle(p).backgroundColor, p.dataset.tags])")
    screenshot(page, artifacts / "export-concretize-colours.png", full_page=True)
    colour = {text: bg for text, bg, _ in parts}
    accesses = ["out[i, j]", "A[i, j]", "B[i, j]", "D[i, j]"]
    assert set(accesses) <= set(colour) and {"forall i", "forall j"} <= set(colour), parts
    assert len({colour[a] for a in accesses + ["forall i", "forall j"]}) == 6, parts
    assert all(next(t for x, _, t in parts if x == a).startswith("expr:") for a in accesses), parts
    # the C lines of the statement in its written access's colour (they were in the loop's, or the point's)
    seen = page.evaluate(OPERANDS_READ_JS, section.element_handle())
    assert seen["lines"] and all(bg == colour["out[i, j]"] for _, bg in seen["lines"]), (seen["lines"], colour)
    page.close()


# At a lower:* step: the drawing's nodes outlined in the focus colour (their fill), the input program's
# parts naming the lowered looplet (their background) and the C lines with the focus bar (theirs).
LOWERED_JS = r"""([root, focus, style]) => {
  const nodes = [...root.querySelectorAll('.ss-drawing svg g.node')].map(g => g.querySelector('polygon, ellipse, path'))
    .filter(s => s && (s.getAttribute('stroke') || '').toLowerCase() === focus.toLowerCase())
    .map(s => getComputedStyle(s).fill);
  const parts = [...root.querySelectorAll('.ss-input span.pv')].filter(p => p.textContent.startsWith(style + '['))
    .map(p => getComputedStyle(p).backgroundColor);
  const first = root.querySelector('.ss-c span.ln.ss-focus');
  return {nodes, parts, line: first && getComputedStyle(first).backgroundColor};
}"""


def test_the_lowered_looplet_is_one_colour_in_the_nest_the_program_and_the_c(browser, artifacts):
    """The step lowering ``A``'s Stepper of ``A * B + D`` (looplets) in the Explorer: the nest draws
    that looplet in the colour its part of the input program and its first C line have, outlined
    in the focus colour (its C lines carry the focus bar); it was filled in the focus colour, the
    program showed it in its palette colour and its C lines took the Sequence's (the audit's item:
    three colours for one thing)."""
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss
    from explorer.renderers import FOCUS_COLOR
    from widgets import Explorer

    A, B = (sp.random(6, 5, density=0.4, format="csr", random_state=k) for k in (1, 2))
    expr = ss.asarray(A, name="A") * ss.asarray(B, name="B") + ss.asarray(np.ones((6, 5)), name="D")
    kernel = ss.lower(expr, strategy="looplets")
    e = Explorer(kernel.trace)
    at = e.session.stages().index("lower:Stepper")
    panes = e.render(at)
    body = (f'<div class="ss-pick-root"><div class="ss-input">{panes["diff"]}</div><div class="ss-drawing">'
            f'{panes["artifact"]}</div><div class="ss-c" style="max-height:500px;overflow:auto">{panes["c"]}</div></div>')
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    for theme in ("light", "dark"):
        page.set_content(themed_page(theme, body))
        seen = page.evaluate(LOWERED_JS, [page.locator(".ss-pick-root").element_handle(), FOCUS_COLOR, "Stepper"])
        screenshot(page, artifacts / f"explorer-lowered-looplet-colour-{theme}.png", full_page=True)
        assert seen["nodes"] and seen["parts"] and seen["line"], (theme, seen)
        assert set(seen["nodes"]) == set(seen["parts"]) == {seen["line"]}, (theme, seen)
    page.close()
