"""The exported trace page (explorer.export_html) in headless Chromium, offline: stepping, every
step's drawings fitting and readable, provenance tags, C lines linked with drawing nodes, zoom."""

from __future__ import annotations

import re

import pytest

from browser_colours import stacked_spmv_kernel
from browser_measure import (COLOUR_JS, GLYPH_FIT_JS, REWRITES_JS, assert_rewrites_read, CELLS_JS, EDGE_LABELS_JS, FILL_CONTRAST_JS, LINK_JS, ZOOM_JS,
                             assert_click_keeps_node_and_shows_line, assert_readable, measure)


def test_exported_trace_page_steps_offline(browser, tmp_path, artifacts):
    from explorer import export_html
    from explorer.examples import spmv_trace

    path = tmp_path / "trace.html"
    export_html(spmv_trace(), path)
    page = browser.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    visible = page.locator("section:visible")
    first = visible.first.inner_text()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("(old) => [...document.querySelectorAll('section')]"
                           ".find(s => s.offsetParent !== null).innerText !== old", arg=first)
    assert page.locator("section:visible").first.inner_text() != first
    assert page.locator("svg").count() > 0
    assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests
    # the step of the fiber trees: labels inside their shapes, each tree inside the page
    assert page.locator("section:visible svg g.node").count() > 3
    assert_readable(measure(page.locator("section:visible").first), "the exported page")
    page.close()


# the visible steps of the page: their ids, heights and the top of each below the header
SHOWN_STEPS_JS = r"""
() => [...document.querySelectorAll('section.step')].filter(s => s.offsetParent !== null).map(s => ({
  id: s.id, height: s.getBoundingClientRect().height,
  below: s.getBoundingClientRect().top - document.querySelector('header').getBoundingClientRect().bottom,
  position: document.getElementById('position').textContent}))
"""


def test_a_steps_address_typed_into_the_open_page_shows_that_step(browser, tmp_path, artifacts):
    """``#step-3`` typed or pasted into the address of the page already open shows step 3, its title in
    view below the header, as opening the page at that address does (the page read its address only
    when it loaded, and stayed on its step)."""
    from explorer import export_html
    from explorer.examples import spmv_trace

    path = tmp_path / "trace.html"
    export_html(spmv_trace(), path)
    page = browser.new_page(viewport={"width": 1100, "height": 600})
    page.goto(path.as_uri())
    first = page.evaluate(SHOWN_STEPS_JS)
    for at in (3, 1):
        page.evaluate("k => { location.hash = '#step-' + k; }", at)
        page.wait_for_function("k => document.querySelector('section.step.current').id === 'step-' + k", arg=at,
                               timeout=5000)
        shown = page.evaluate(SHOWN_STEPS_JS)
        assert [s["id"] for s in shown] == [f"step-{at}"] != [s["id"] for s in first], shown
        assert shown[0]["height"] > 100 and 0 <= shown[0]["below"] <= 600 and shown[0]["position"].startswith(
            f"step {at} of "), shown
    page.screenshot(path=str(artifacts / "export-address-step-1.png"))
    page.close()


def test_exported_page_draws_every_step_to_fit(browser, tmp_path, artifacts):
    """Every step of an exported lattice lowering (its iteration graph, a lattice of three
    points, the C): labels inside their shapes, code readable."""
    import compiler as ss
    from explorer import export_html

    trace = ss.lower("y[i] = A[i] * B[i] + C[i]", "lattice", A="sv", B="sv", C="sv").trace
    path = tmp_path / "three.html"
    export_html(trace, path)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(path.as_uri())
    nodes = 0
    for k in range(len(trace.steps)):
        section = page.locator("section:visible").first
        nodes += section.locator("svg g.node").count()
        if section.locator("svg").count():
            page.screenshot(path=str(artifacts / f"export-three-{k}.png"), full_page=True)
        assert_readable(measure(section), f"the exported page, step {k}")
        old = section.inner_text()
        page.keyboard.press("ArrowRight")
        if k + 1 < len(trace.steps):
            page.wait_for_function("(old) => [...document.querySelectorAll('section')]"
                                   ".find(s => s.offsetParent !== null).innerText !== old", arg=old)
    assert nodes >= 5   # the iteration graph's and the lattice's
    page.screenshot(path=str(artifacts / "export.png"), full_page=True)
    page.close()


def test_exported_shape_operator_steps_draw_to_fit(browser, tmp_path, artifacts):
    """The steps of a shape-operator lowering that draw or mark something: the array expression's
    tree, the shapes table with the operators marked, and the sequence layer's derivation trees,
    lattices with edge sequences and CFIR of ``y = [A; B; C] x``: labels inside their shapes, edge
    labels crossed by nothing, code readable. Clicking a sequence lattice's point outlines the C
    lines of its loop, a derivation's box those of its expression node (both linked nothing: no
    tag named them), and a CFIR loop's box those of the loop (no box was linked)."""
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss
    from compiler import array as xp
    from compiler.lattice.seqderive import seq_lower
    from explorer import export_html

    A, B, C = (sp.random(n, 5, density=0.4, format="csr", random_state=k) for k, n in enumerate((6, 4, 3)))
    fused = ss.lower(xp.concat([ss.asarray(A), ss.asarray(B), ss.asarray(C)], axis=0) @ ss.asarray(np.arange(5.0)))
    P = ss.Tensor.from_numpy(np.array([[0, 1.0, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]]), "csr")
    Q = ss.Tensor.from_numpy(np.array([[6.0, 0, 0, 7]]), "coo")
    # (the other lowering's steps first: the fused kernel's C is the page's)
    steps = seq_lower("yv[l] = sum[i](concat((P[j, i], Q[k, i]), (j, k) -> l) * broadcast(l, x[i]))",
                      P=P, Q=Q, x=np.arange(4.0)).trace.steps + list(fused.trace.steps)
    path = tmp_path / "shapes.html"
    export_html(ss.Trace(steps), path)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(path.as_uri())
    nodes = marks = 0
    for k in range(len(steps)):
        section = page.locator("section:visible").first
        nodes += section.locator("svg g.node").count()
        marks += section.locator('[data-tags*="shape:"]').count()   # (after the node's tag where a drawing shows it)
        page.screenshot(path=str(artifacts / f"export-shapes-{k}.png"), full_page=True)
        assert_readable(measure(section), f"the exported shape-operator page, step {k} ({steps[k].stage})")
        # (the derivation of j's three loops drew three "becomes" labels over each other and under the arcs)
        crossed = section.evaluate(EDGE_LABELS_JS)
        assert not crossed, f"step {k} ({steps[k].stage}): edge labels crossed: {crossed}"
        old = section.inner_text()
        page.keyboard.press("ArrowRight")
        if k + 1 < len(steps):
            page.wait_for_function("(old) => [...document.querySelectorAll('section')]"
                                   ".find(s => s.offsetParent !== null).innerText !== old", arg=old)
    assert nodes >= 20 and marks >= 6   # the trees, lattices and CFIR; the operators' marks
    c = [a for s in fused.trace.steps for a in s.artifacts if a.kind == "c"][-1]
    first = len(steps) - len(fused.trace.steps)
    for stage, kind, label in (("lattice", "seq-lattice", "0: (k_A ⊔ l_B) ⊔ m_C"),
                               ("seq-derive", "seq-derivation", "A[k, j]"),
                               ("cfir", "seq-cfir", "while i <- (|k_A| + l_B) ⊔ m_C")):
        # (the box whose first line is the label: a derivation's upper boxes print it inside theirs)
        at = first + fused.trace.stages().index(stage)
        page.locator(f'nav.steps a[href="#step-{at}"]').click()
        section = page.locator(f"section#step-{at}")
        section.wait_for(state="visible")
        node = section.locator(f'.artifact[data-kind="{kind}"] svg g.node[data-tags]').filter(
            has=page.locator("text", has_text=re.compile(f"^{re.escape(label)}$"))).first
        assert node.count(), f"no box {label!r} of the {kind} drawing is linked to the C"
        tag = node.get_attribute("data-tags").split()[0]
        node.scroll_into_view_if_needed()
        node.click()
        # (the C pane scrolled its line under the pointer, whose hover links that line's tag too)
        page.mouse.move(1, 1)
        outlined = section.locator(".c-section span.ln.ss-linked").evaluate_all(
            "ls => ls.map(l => +l.getAttribute('data-line'))")
        assert outlined and outlined == c.data["provenance"][tag], (stage, tag, outlined)
        assert page.evaluate(LINK_JS, [section.element_handle(), tag])["inView"], (stage, tag)
        page.screenshot(path=str(artifacts / f"export-shapes-linked-{kind}.png"), full_page=False)
    # the CFIR's tree, fitted to a narrow page, keeps readable labels (drawn top down, it was
    # shrunk to 40%), and each rule of its rewrites keeps its name on one line (a narrow pane broke
    # union-right-empty at each hyphen); opened at the step's link, the step's title shows below
    # the sticky header (it was under it)
    at = first + fused.trace.stages().index("cfir")
    page.set_viewport_size({"width": 560, "height": 700})
    page.goto(f"{path.as_uri()}#step-{at}")
    page.reload()
    section = page.locator(f"section#step-{at}")
    title, header = (page.locator(sel).first.bounding_box() for sel in (f"section#step-{at} .step-header", "header"))
    assert title["y"] >= header["y"] + header["height"], (title, header)
    tree = section.locator('.artifact[data-kind="seq-cfir"]').first
    assert tree.evaluate(ZOOM_JS)["label"] >= 8, tree.evaluate(ZOOM_JS)
    names = section.locator("table.rewrites td:first-child b").evaluate_all(
        "bs => bs.map(b => [b.textContent, b.getClientRects().length])")
    assert names and all(lines == 1 for name, lines in names if " " not in name), names
    # every cell of them on one line, the table scrolling sideways in the narrow page
    assert_rewrites_read(section.evaluate(REWRITES_JS), "the CFIR step's rewrites, 560 px wide")
    page.screenshot(path=str(artifacts / "export-shapes-cfir-narrow.png"), full_page=False)
    page.close()


def test_exported_page_selects_a_provenance_tag(browser, tmp_path):
    import compiler as ss
    from explorer import export_html

    t = ss.Trace()
    t.record("lattice", artifacts=[ss.Artifact("lattice", "j", "p0 p1", dot="digraph { p0; p1 }")])
    c = "void k(void) {\n  a();\n  b();\n}"
    t.record("emit-c", after=c, artifacts=[ss.Artifact("c", "k", c, data={"provenance": {
        "lattice:j:p0": [2], "lattice:j:p1": [3]}})])
    path = tmp_path / "tagged.html"
    export_html(t, path)
    page = browser.new_page()
    page.goto(path.as_uri())
    page.locator('nav.provenance button[data-tag="lattice:j:p1"]').click()
    assert page.evaluate("document.documentElement.classList.contains('selecting')")
    selected = page.evaluate("[...document.querySelectorAll('.sel')].map(e => e.tagName + ':' + "
                             "(e.getAttribute('data-line') || e.querySelector('title').textContent))")
    # line 3 is marked three times: in the step's program (the emit-c step's program is the C),
    # in the C artifact and in the C shown next to the lattice; p1 is the drawing node
    assert sorted(selected) == ["SPAN:3", "SPAN:3", "SPAN:3", "g:p1"], selected
    panes = page.evaluate("[...document.querySelectorAll('span.sel')].map(e => e.closest('.pane, .artifact')"
                          ".querySelector('.pane-title, .artifact-title').textContent)")
    assert len(set(panes)) == 3, panes
    page.locator('nav.provenance button[data-tag=""]').click()
    assert page.evaluate("document.querySelectorAll('.sel').length") == 0
    page.close()



@pytest.fixture(scope="module")
def three_points_page(tmp_path_factory):
    """The exported page of a lattice of three points (``y[i] = A[i] * B[i] + C[i]``, sparse
    vectors), lowered once for the tests that open it at its lattice step."""
    import compiler as ss
    from explorer import export_html

    trace = ss.lower("y[i] = A[i] * B[i] + C[i]", "lattice", A="sv", B="sv", C="sv").trace
    path = tmp_path_factory.mktemp("three-points") / "linked.html"
    export_html(trace, path)
    return f"{path.as_uri()}#step-{trace.stages().index('lattice')}"


@pytest.fixture()
def lattice_step(browser, three_points_page):
    """A page at the lattice step of :func:`three_points_page`, and that step's section."""
    page = browser.new_page(viewport={"width": 1100, "height": 600})
    page.goto(three_points_page)
    yield page, page.locator("section:visible").first
    page.close()


def test_exported_page_links_c_lines_and_drawing_nodes(lattice_step, artifacts):
    """Compiler Explorer's two-way provenance in the exported page: on the step of a lattice of
    three points, clicking a C line strokes the lattice point it came from, and clicking a
    point outlines its C lines and scrolls the C pane, not the page, to the first; the tooltips
    say what a line or a point computes, not its tag."""
    from explorer.linking import LINK_COLOR

    page, section = lattice_step
    lines = section.locator(".c-section span.ln[data-tags]")
    assert lines.count() > 0, "the lattice step shows no C to link its points with"
    # a C line whose first tag names a point of the drawing
    tags = [t.split()[0] for t in lines.evaluate_all("ls => ls.map(l => l.getAttribute('data-tags'))")]
    k, tag = next((k, t) for k, t in enumerate(tags) if section.locator(f'svg g.node[data-tags~="{t}"]').count())
    line = lines.nth(k)
    before = page.evaluate(LINK_JS, [section.element_handle(), tag])
    assert before["stroke"] != LINK_COLOR
    # (a line's tooltip is the page's shared table's, set the first time the pointer is over it: explorer.export)
    assert line.get_attribute("title") is None and line.get_attribute("data-tip") is not None
    line.hover()
    assert "lattice:" not in (line.get_attribute("title") or "") and "y[i]" in line.get_attribute("title")
    line.click()
    after = page.evaluate(LINK_JS, [section.element_handle(), tag])
    assert (after["stroke"], after["width"]) == (LINK_COLOR, "4"), (before, after)
    page.screenshot(path=str(artifacts / "export-linked-from-c.png"), full_page=True)

    # the reverse: a point outlines its C lines and scrolls the first into view
    # (a node links the first of its tags)
    firsts = section.locator("svg g.node[data-tags]").evaluate_all(
        "gs => gs.map(g => g.getAttribute('data-tags').split(' ')[0])")
    k, other = next((k, t) for k, t in enumerate(firsts)
                    if t != tag and section.locator(f'.c-section span.ln[data-tags~="{t}"]').count())
    page.evaluate("window.scrollTo(0, 0)")
    # (the C opens at the step's first linked line: scrolled back to its top, as a person may)
    section.locator(".c-section pre").first.evaluate(
        "p => { for (let b = p; b; b = b.parentElement) b.scrollTop = 0; }")
    start = page.evaluate(LINK_JS, [section.element_handle(), other])
    assert start["line"] and not start["inView"], "the point's C line is in view before the click"
    node = section.locator("svg g.node[data-tags]").nth(k)
    node.click()
    end = page.evaluate(LINK_JS, [section.element_handle(), other])
    assert end["outlined"] and end["inView"] and end["scrollTop"] > start["scrollTop"], (start, end)
    # the C pane scrolled, not the page: the clicked node stays in view (the page scrolled it away)
    line = section.locator(f'.c-section span.ln[data-tags~="{other}"]').first
    assert_click_keeps_node_and_shows_line(page, node, line, section.locator(f'.c-section:has(span.ln[data-tags~="{other}"])').first,
                                           "the exported page")
    assert (end["stroke"], end["width"]) == (LINK_COLOR, "4")
    page.screenshot(path=str(artifacts / "export-linked-from-node.png"), full_page=False)


def test_exported_page_zooms_its_drawings_and_links_the_trees(browser, tmp_path, artifacts):
    """The zoom controls (issue 27): 100% shows a drawing at its own size, each + grows it by the
    ratio of the next level up to 400% and its pane scrolls, fit fits it in its pane, a drawing
    smaller than its pane is centred, labels stay inside their shapes at every level, and the
    level chosen for a lattice is the other lattice step's. On the CFIR tree, clicking a C line
    fills the box that made it in the link colour (contrast >= 3 against the page) and clicking
    a box outlines its C lines."""
    import compiler as ss
    from explorer import export_html
    from explorer.linking import LINK_COLOR
    from explorer.zoom import ZOOM_LEVELS

    trace = ss.lower("C[i, j] = A[i, j] + B[i, j]", "lattice", A="csr", B="csr", C="csr").trace
    path = tmp_path / "zoom.html"
    export_html(trace, path)
    stages = trace.stages()
    first = stages.index("lattice")
    assert stages[first + 1] == "lattice"   # the lattices of i and of j, one step each
    # (narrow: the lattice of j, 235 px wide, is wider than its pane at 400%)
    page = browser.new_page(viewport={"width": 800, "height": 800})
    page.goto(f"{path.as_uri()}#step-{first + 1}")   # the lattice of j: three points
    art = page.locator('section:visible .artifact[data-kind="lattice"]').first
    art.locator(".ss-zoom-100").click()
    m = art.evaluate(ZOOM_JS)
    assert abs(m["width"] - m["own"]) < 1 and m["level"] == "100%", m
    up = ZOOM_LEVELS[ZOOM_LEVELS.index(100):]
    for previous, level in zip(up, up[1:]):
        before = m
        art.locator(".ss-zoom-in").click()
        m = art.evaluate(ZOOM_JS)
        # grown by the step's ratio (110% / 100%, 125% / 110%, ...)
        assert m["level"] == f"{level}%" and abs(m["width"] / before["width"] - level / previous) < 0.005, (before, m)
        found = measure(art)
        assert found["ncount"] >= 3 and not found["nodes"], f"labels outside their shapes at {level}%: {found['nodes']}"
    assert m["width"] > m["room"] and m["scroll"] >= m["width"] - 1, f"the pane does not scroll at 400%: {m}"
    page.screenshot(path=str(artifacts / "export-zoom-400.png"), full_page=False)
    art.locator(".ss-zoom-fit").click()
    m = art.evaluate(ZOOM_JS)
    assert m["width"] <= m["room"] + 1 and m["scroll"] <= m["room"] + 1, f"fit: {m}"
    for _ in ZOOM_LEVELS:
        art.locator(".ss-zoom-out").click()
    m = art.evaluate(ZOOM_JS)
    assert m["level"] == "25%" and abs(m["left"] - (m["room"] - m["width"]) / 2) <= 1, f"not centred: {m}"
    assert not measure(art)["nodes"]
    # 150%, then another step: the lattice of i at 150% too
    art.locator(".ss-zoom-100").click()
    for _ in range(3):
        art.locator(".ss-zoom-in").click()
    assert art.evaluate(ZOOM_JS)["level"] == "150%"
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("k => location.hash === '#step-' + k", arg=first)
    nxt = page.locator('section:visible .artifact[data-kind="lattice"]').first
    m = nxt.evaluate(ZOOM_JS)
    assert m["level"] == "150%" and abs(m["width"] - 1.5 * m["own"]) < 1, m

    # the CFIR tree and the C, linked both ways
    page.goto(f"{path.as_uri()}#step-{stages.index('cfir')}")
    page.reload()
    section = page.locator("section:visible").first
    tree = section.locator('.artifact[data-kind="cfir"]').first
    # the tree's labels inside their boxes at fit, 100%, and the ends, 25% and 400%
    # (the buttons clicked in the page: a locator's click waits for the page to settle, 0.3 s each)
    box = tree.element_handle()
    click_level = "([a, cls]) => { a.querySelector('.ss-zoom-' + cls).click(); return a.querySelector('.ss-zoom-level').textContent; }"
    for action in ["fit", "100"] + ["out"] * 6 + ["100"] + ["in"] * 8:
        level = page.evaluate(click_level, [box, action])
        if action in ("in", "out") and level not in ("25%", "400%"):
            continue
        found = measure(tree)
        assert found["ncount"] > 10 and not found["nodes"], \
            f"tree labels outside their boxes at {tree.evaluate(ZOOM_JS)['level']}: {found['nodes']}"
    assert tree.evaluate(ZOOM_JS)["level"] == "400%"
    tree.locator(".ss-zoom-fit").click()
    lines = section.locator(".c-section span.ln[data-tags]")
    firsts = [t.split()[0] for t in lines.evaluate_all("ls => ls.map(l => l.getAttribute('data-tags'))")]
    k, tag = next((k, t) for k, t in enumerate(firsts) if tree.locator(f'svg g.node[data-tags~="{t}"]').count())
    node = tree.locator(f'svg g.node[data-tags~="{tag}"]').first
    assert node.evaluate(FILL_CONTRAST_JS)["fill"] != LINK_COLOR
    lines.nth(k).click()
    filled = node.evaluate(FILL_CONTRAST_JS)
    assert filled["fill"] == LINK_COLOR and filled["ratio"] >= 3, filled
    page.screenshot(path=str(artifacts / "export-tree-linked-from-c.png"), full_page=False)
    boxes = tree.locator("svg g.node[data-tags]")
    node_firsts = boxes.evaluate_all("gs => gs.map(g => g.getAttribute('data-tags').split(' ')[0])")
    j, other = next((j, t) for j, t in enumerate(node_firsts) if t != tag and t in firsts)
    boxes.nth(j).click()
    end = page.evaluate(LINK_JS, [section.element_handle(), other])
    assert end["outlined"] and end["inView"], end
    page.close()


def test_exported_page_shows_the_integer_facts_as_a_readable_table(browser, tmp_path, artifacts):
    """The looplet lowering's int-facts step: a table of each fact and why it holds, every cell shown
    (not collapsed, not cut at the page's edge) and its text readable (contrast >= 4.5)."""
    import numpy as np

    import compiler as ss
    from explorer import export_html

    A = ss.Tensor.from_numpy(np.array([[0, 1.0, 0, 2.0], [3.0, 0, 0, 0], [0, 0, 4.0, 5.0]]), "csr")
    trace = ss.lower("C[i, j] = A[i, j] + B[i, j]", strategy="looplets", A=A, B=A, C="csr").trace
    step = next(k for k, s in enumerate(trace.steps) if s.stage == "int-facts")
    facts = [f["fact"] for f in trace.steps[step].data["facts"]]
    path = tmp_path / "facts.html"
    export_html(trace, path)
    page = browser.new_page(viewport={"width": 900, "height": 800})
    page.goto(path.as_uri())
    page.locator(f'nav.steps a[href="#step-{step}"]').click()
    table = page.locator("section:visible table.ss-int-facts").first
    table.wait_for(state="visible")
    page.screenshot(path=str(artifacts / "export-int-facts.png"), full_page=True)
    cells = table.evaluate(CELLS_JS)
    assert len(cells) == 3 * (len(facts) + 1), cells   # a header row, then fact, kind and why of each fact
    assert all(c["height"] >= 10 and c["inside"] for c in cells), [c for c in cells if not c["inside"]][:4]
    low = [c for c in cells if c["ratio"] < 4.5]
    assert not low, f"int-facts cells below contrast 4.5: {low[:4]}"
    shown = table.inner_text()
    assert facts and all(f in shown for f in facts), (facts, shown)
    page.close()


# (the text of line ``l`` with its underscores as spaces)
_NO_UNDERSCORES_JS = ("l => { const w = document.createTreeWalker(l, NodeFilter.SHOW_TEXT); let n; "
                      "while ((n = w.nextNode())) n.nodeValue = n.nodeValue.replaceAll('_', ' '); }")


def test_a_linked_c_lines_outline_covers_no_underscore(lattice_step, artifacts):
    """A linked C line is outlined: the outline must cover no glyph of that line (``A1_pos`` read
    ``A1 pos`` under an outline drawn 1 px inside each line's box) nor of the lines just above and
    below it (an outline drawn outside the box took their bottom or top row: ``t_j += ...`` read
    ``t j``). Measured: each such line's pixels change when its underscores become spaces. Then a
    linked part of a line, on the same page (see :func:`parts_outline_inside_their_lines`)."""
    page, section = lattice_step
    lines = section.locator(".c-section span.ln[data-tags]")
    texts = lines.evaluate_all("ls => ls.map(l => l.textContent)")
    k = next(k for k, t in enumerate(texts) if "_" in t.strip())
    lines.nth(k).click()               # (pinned: it and its tag's other lines are outlined)
    shown = section.locator(".c-section span.ln")
    # every outlined line and its neighbours in the same pane, the neighbours outlined or not
    near = shown.evaluate_all("""ls => { const out = new Set();
        ls.forEach((l, n) => { if (!l.classList.contains('ss-linked')) return;
          for (const m of [n - 1, n, n + 1]) if (ls[m] && ls[m].parentElement === l.parentElement) out.add(m); });
        return [...out].sort((a, b) => a - b).map(n => [n, ls[n].textContent, ls[n].classList.contains('ss-linked')]); }""")
    outlined = [n for n, _, linked in near if linked]
    assert outlined and all(shown.nth(n).evaluate("l => getComputedStyle(l).outlineStyle") == "solid" for n in outlined)
    # whatever the font's glyph boxes: each outline lies inside its line's box, which overlaps no
    # other line's (an outline outside a line's glyph box reached within 1.4 px of the next line's
    # underscores in Chromium's DejaVu Sans Mono, and over them with taller glyph boxes)
    boxes = shown.evaluate_all("""ls => ls.map(l => { const r = l.getBoundingClientRect(), s = getComputedStyle(l);
        return [r.top, r.bottom, s.outlineStyle === 'solid' ? parseFloat(s.outlineOffset) + parseFloat(s.outlineWidth) : null,
                l.parentElement]; })""")
    for n in outlined:
        top, bottom, reach, pane = boxes[n]
        assert reach is not None and reach <= 0, f"line {n + 1}'s outline reaches {reach} px outside its box"
        for m in (n - 1, n + 1):
            if 0 <= m < len(boxes) and boxes[m][3] == pane:
                assert boxes[m][1] <= top + 0.01 or boxes[m][0] >= bottom - 0.01, \
                    f"the boxes of lines {n + 1} and {m + 1} overlap: {boxes[n][:2]} {boxes[m][:2]}"
    checked = [(n, text, linked) for n, text, linked in near if "_" in text]
    assert any(not linked for _, _, linked in checked), f"no neighbour of an outlined line has an underscore: {near}"
    page.screenshot(path=str(artifacts / "export-linked-underscores.png"), full_page=True)
    hidden = []
    for n, text, linked in checked:
        line = shown.nth(n)
        line.scroll_into_view_if_needed()
        before = line.screenshot()
        line.evaluate(_NO_UNDERSCORES_JS)
        assert "_" not in line.text_content()
        # (identical pixels: the underscores were not seen)
        if line.screenshot() == before:
            hidden.append(("outlined: " if linked else "next to an outlined line: ") + text.strip())
    assert not hidden, f"lines showing no underscore: {hidden}"
    parts_outline_inside_their_lines(section)
    page.screenshot(path=str(artifacts / "export-linked-part.png"), full_page=True)


def parts_outline_inside_their_lines(section) -> None:
    """A linked part of a line (``span.pv``: an access the program pane marks) is outlined inside
    its own box, which lies inside its line's box, so the outline covers no glyph of the lines
    above and below whatever the font's glyph boxes (drawn 2 px outside an inline part's box, its
    glyphs' box, it reached past the line's box with taller glyph boxes); and the line keeps its
    height (the text does not move)."""
    parts = section.locator("span.pv[data-tags]")
    assert parts.count() >= 4   # (y[i], A[i], B[i], C[i] of the program)
    parts.first.click()
    linked = section.locator("span.pv.ss-linked")
    assert linked.count() >= 1
    boxes = linked.evaluate_all("""ps => ps.map(p => { const r = p.getBoundingClientRect(), s = getComputedStyle(p),
        l = p.closest('span.ln').getBoundingClientRect();
        return [p.textContent, s.outlineStyle, parseFloat(s.outlineOffset) + parseFloat(s.outlineWidth),
                [r.top, r.bottom], [l.top, l.bottom]]; })""")
    for text, style, reach, (top, bottom), (line_top, line_bottom) in boxes:
        assert style == "solid", text
        assert reach <= 0, f"{text}'s outline reaches {reach} px outside its box"
        assert line_top - 0.01 <= top and bottom <= line_bottom + 0.01, (text, (top, bottom), (line_top, line_bottom))
    heights = section.locator("pre span.ln").evaluate_all("ls => ls.map(l => l.getBoundingClientRect().height)")
    assert max(heights) - min(heights) < 0.02, heights



# The C pane of a step's section: how far its scrolling box is scrolled, and whether the line it
# opens at (its data-ss-open) lies inside the box's visible part.
C_OPENED_JS = r"""
(section) => {
  const pane = section.querySelector('.c-section[data-ss-open]');
  if (!pane) return null;
  const line = pane.querySelector(`span.ln[data-line="${pane.getAttribute('data-ss-open')}"]`);
  let box = null;
  for (let b = line && line.parentElement; b && b !== pane.parentElement; b = b.parentElement) {
    const o = getComputedStyle(b).overflowY;
    if ((o === 'auto' || o === 'scroll') && b.scrollHeight > b.clientHeight + 1) { box = b; break; }
  }
  const r = line && line.getBoundingClientRect(), v = box && box.getBoundingClientRect();
  return {opens: +pane.getAttribute('data-ss-open'), scrolls: !!box, scrollTop: box ? box.scrollTop : 0,
          inView: !!(r && v && r.top >= v.top - 1 && r.bottom <= v.bottom + 1)};
}
"""


def test_exported_array_and_shape_operator_steps_link_their_c(browser, tmp_path, artifacts):
    """The looplets' lowering of ``y = [A; B] x`` as an array expression: its shape-operators step
    (its loops coloured by the C's tags) shows the C beside it (it showed none), and so does the
    array step; each C pane opens at the step's first linked line, not at the ``#include``s; a loop
    of the program outlines its C lines and scrolls the C to them, and a C line its loop; clicking
    an array-expression box outlines the C lines of the notation it became, and a C line strokes
    its box (they were not linked)."""
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss
    from compiler import array as xp
    from explorer import export_html
    from explorer.linking import LINK_COLOR

    A, B = (sp.random(n, 5, density=0.4, format="csr", random_state=k) for k, n in enumerate((6, 4)))
    expr = xp.concat([ss.asarray(A, name="A"), ss.asarray(B, name="B")], axis=0) @ ss.asarray(np.arange(5.0), name="x")
    kernel = ss.lower(expr, strategy="looplets")
    assert np.allclose(kernel().to_numpy(), np.vstack([A.toarray(), B.toarray()]) @ np.arange(5.0))
    c = kernel.trace.find("emit-c")[0].artifact("c")
    lines = c.data["provenance"]
    path = tmp_path / "array-looplets.html"
    export_html(kernel.trace, path)
    stages = kernel.trace.stages()
    page = browser.new_page(viewport={"width": 1100, "height": 900})

    # the shape-operators step: the C beside its loops, opened at them
    at = stages.index("shape-operators")
    page.goto(f"{path.as_uri()}#step-{at}")
    section = page.locator(f"section#step-{at}")
    section.wait_for(state="visible")
    opened = section.evaluate(C_OPENED_JS)
    assert opened and opened["scrolls"] and opened["scrollTop"] > 0 and opened["inView"], opened
    includes = [n for n, line in enumerate(c.text.splitlines(), 1) if line.startswith("#include")]
    assert opened["opens"] > max(includes), opened
    page.screenshot(path=str(artifacts / "export-shape-operators-c.png"), full_page=False)
    assert_readable(measure(section), "the looplets' shape-operators step")
    program = section.locator(".pane", has=page.locator(".pane-title", has_text=re.compile("^program$"))).first
    loops = program.locator("span.pv[data-tags]")
    tags = [t.split()[0] for t in loops.evaluate_all("ps => ps.map(p => p.getAttribute('data-tags'))")]
    # a loop whose C lies below what the pane shows: the click scrolls the C to it
    k = max(range(len(tags)), key=lambda k: lines.get(tags[k], [0])[0])
    loops.nth(k).click()
    end = page.evaluate(LINK_JS, [section.element_handle(), tags[k]])
    assert end["outlined"] and end["inView"] and end["scrollTop"] > opened["scrollTop"], (tags[k], end)
    outlined = section.locator(".c-section span.ln.ss-linked").evaluate_all(
        "ls => ls.map(l => +l.getAttribute('data-line'))")
    assert outlined == lines[tags[k]], (tags[k], outlined)
    # the reverse: a C line outlines the program's parts of its tag
    page.mouse.click(1, 1)   # (unpinned)
    line = section.locator(f'.c-section span.ln[data-tags~="{tags[0]}"]').first
    first = line.get_attribute("data-tags").split()[0]
    line.click()
    marked = program.locator("span.pv.ss-linked").evaluate_all("ps => ps.map(p => p.getAttribute('data-tags'))")
    assert marked and all(first in m.split() for m in marked), (first, marked)
    page.screenshot(path=str(artifacts / "export-shape-operators-linked.png"), full_page=False)

    # the array step: its boxes and the C, linked both ways
    at = stages.index("array")
    page.goto(f"{path.as_uri()}#step-{at}")
    page.reload()
    section = page.locator(f"section#step-{at}")
    section.wait_for(state="visible")
    opened = section.evaluate(C_OPENED_JS)
    assert opened and opened["inView"] and opened["opens"] > max(includes), opened
    # the expression as text, its concatenation's axis said (it read 'concat(A, B)'), whole in its pane
    shown = kernel.trace.find("array")[0].before_text
    assert shown.startswith("add-reduce(mul(concat((A, B), axis=0), broadcast(x, (1, 5)))"), shown
    given = section.locator(".pane", has=page.locator(".pane-title", has_text=re.compile("^input of array"))).first
    box = given.locator("pre").evaluate("p => ({text: p.innerText, scroll: p.scrollWidth, client: p.clientWidth})")
    assert shown in box["text"] and box["scroll"] <= box["client"], box
    tree = section.locator('.artifact[data-kind="array-expression"]').first
    boxes = tree.locator("svg g.node[data-tags]")
    assert boxes.count() == 7, boxes.count()
    node = tree.locator("svg g.node", has=page.locator("text", has_text=re.compile("^concat axis 0$"))).first
    tag = node.get_attribute("data-tags").split()[0]
    assert tag.startswith("expr:") and lines[tag]
    node.click()
    page.mouse.move(1, 1)
    outlined = section.locator(".c-section span.ln.ss-linked").evaluate_all(
        "ls => ls.map(l => +l.getAttribute('data-line'))")
    assert outlined == lines[tag], (tag, outlined)
    assert page.evaluate(LINK_JS, [section.element_handle(), tag])["inView"]
    page.screenshot(path=str(artifacts / "export-array-linked-from-node.png"), full_page=False)
    # a C line of B's loop alone (not A's): its first tags are looplets', then B's and concat's nodes
    page.mouse.click(1, 1)
    page.locator('nav.provenance button[data-tag=""]').click()   # (every tag's colour again)
    b_node = tree.locator("svg g.node", has=page.locator("text", has_text=re.compile(r"^B \(csr\)$"))).first
    b_tag = b_node.get_attribute("data-tags").split()[0]
    only_b = next(n for n in lines[b_tag] if n not in lines[tags[0]])
    c_line = section.locator(f'.c-section span.ln[data-line="{only_b}"]')
    assert not c_line.get_attribute("data-tags").startswith("expr:")
    c_line.scroll_into_view_if_needed()
    c_line.click()
    stroked = page.evaluate(LINK_JS, [section.element_handle(), c_line.get_attribute("data-tags").split()[0]])
    linked = tree.locator("svg g.node.ss-linked").evaluate_all("gs => gs.map(g => g.querySelector('title').textContent)")
    assert linked, "a C line of B's loop links no box of the array expression"
    # every box the line came from is outlined, B's and the concat's, not the first alone (main: B's)
    line_tags = set(c_line.get_attribute("data-tags").split())
    drawn = tree.locator("svg g.node[data-tags]").evaluate_all(
        "gs => gs.map(g => [g.querySelector('title').textContent, g.getAttribute('data-tags')])")
    want = sorted(title for title, ts in drawn if line_tags & set(ts.split()))
    assert len(want) >= 2 and sorted(linked) == want, (want, linked)
    # and selected together (the others fade), as the widget's kernel selects them: it selected
    # the first (B's box), and the concat's faded though outlined
    selected = tree.locator("svg g.node.sel").evaluate_all("gs => gs.map(g => g.querySelector('title').textContent)")
    assert sorted(selected) == want, (want, selected)
    assert tree.locator("svg g.node.ss-linked polygon").first.get_attribute("stroke") == LINK_COLOR, stroked
    filled = tree.locator("svg g.node.ss-linked").first.evaluate(FILL_CONTRAST_JS)
    assert filled["fill"] == LINK_COLOR and filled["ratio"] >= 3, filled
    page.screenshot(path=str(artifacts / "export-array-linked-from-c.png"), full_page=False)
    page.close()


def test_math_glyphs_draw_in_their_texts_font(browser, tmp_path, artifacts):
    """Every non-ASCII character of the code and drawing labels of a shape-operator lowering
    (∪ ∩ ⊔ ∅ ∈ π ·, and full, where a dense operand ran out: ``y = [A; D] x``, ``D`` dense) keeps the
    monospace grid of its text and its letters' height: full was the paper's 𝓕, which only a math
    font has, drawn 1.7 cells wide and taller than its line."""
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss
    from compiler import array as xp
    from explorer import export_html

    A = sp.random(4, 5, density=0.4, format="csr", random_state=0)
    D = np.arange(15.0).reshape(3, 5)
    expr = xp.concat([ss.asarray(A, name="A"), ss.asarray(D, name="D")], axis=0) @ ss.asarray(np.arange(5.0), name="x")
    kernel = ss.lower(expr, strategy="lattice")
    assert np.allclose(kernel().to_numpy(), np.vstack([A.toarray(), D]) @ np.arange(5.0))
    full = [i for i, s in enumerate(kernel.trace.steps) if any("no loop" in (a.dot or "") for a in s.artifacts)]
    assert full, "no lattice of the lowering has a full (dense, run out) edge"
    path = tmp_path / "glyphs.html"
    export_html(kernel.trace, path)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{path.as_uri()}#step-{full[0]}")
    section = page.locator(f"section#step-{full[0]}")
    section.locator('.artifact[data-kind="seq-lattice"]').first.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "export-full-glyph.png"), full_page=False)
    page.evaluate("document.documentElement.classList.remove('js')")   # (every step shown)
    found = page.evaluate(GLYPH_FIT_JS, page.locator("main").element_handle())
    assert not found["off"], f"glyphs drawn off their text's monospace grid: {found['off']}"
    assert set("∪⊔∅∈") <= set(found["chars"]) and "Ƒ" in found["chars"], found["chars"]
    page.close()


# The page's own parts (its header, step links, legend, step titles): each text's contrast
# against what lies under it, and the page's background.
PAGE_TEXTS_JS = r"""
(root) => {""" + COLOUR_JS + r"""  const out = {background: background(document.body), low: [], texts: 0};
  for (const el of root.querySelectorAll('header *, nav.steps a, nav.provenance > *, .step-header, .pane-title, .artifact-title')) {
    if (!el.getClientRects().length || ![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    out.texts++;
    const bg = background(el), fg = over(rgba(getComputedStyle(el).color), bg);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x), ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 4.5) out.low.push({text: el.textContent.trim().slice(0, 30), ratio: Math.round(ratio * 100) / 100});
  }
  return out;
}
"""


def test_exported_page_follows_a_dark_preference(browser, three_points_page, artifacts):
    """The exported page under a dark preference (the system's, ``prefers-color-scheme``) is dark
    as JupyterLab's dark theme is (it stayed white): code and drawing labels readable (>= 4.5),
    each provenance colour standing out from the dark page (>= 3) with its text readable, and the
    page's own header, step links, legend and titles readable (>= 4.5), in the light and the dark
    preference alike."""
    from browser_measure import TAG_COLOURS_JS, assert_tag_colours_read

    for scheme in ("light", "dark"):
        page = browser.new_page(viewport={"width": 1100, "height": 800}, color_scheme=scheme)
        page.goto(three_points_page)
        section = page.locator("section:visible").first
        own = page.evaluate(PAGE_TEXTS_JS, page.locator("body").element_handle())
        luminance = sum(w * c for w, c in zip((0.2126, 0.7152, 0.0722), own["background"][:3])) / 255
        assert (luminance < 0.1) == (scheme == "dark"), (scheme, own["background"])
        assert own["texts"] > 10 and not own["low"], (scheme, own)
        assert_readable(measure(section), f"the exported lattice step ({scheme})")
        m = page.evaluate(TAG_COLOURS_JS, section.element_handle())
        assert len(m["nodes"]) >= 3 and len(m["parts"]) > 5, m
        assert_tag_colours_read(m, f"the exported lattice step ({scheme})")
        # a clicked C line's tag: its lines and parts outlined in a colour that stands out from
        # their own (>= 3; the link colour stood 1.4 off every provenance colour)
        line = section.locator(".c-section span.ln[data-tags]").nth(5)
        line.scroll_into_view_if_needed()
        line.click()
        outlines = section.evaluate(OUTLINE_CONTRAST_JS)
        assert len(outlines) >= 2 and min(r for _, r in outlines) >= 3, (scheme, outlines[:6])
        page.screenshot(path=str(artifacts / f"export-scheme-{scheme}.png"), full_page=True)
        page.close()


# Each linked (outlined) code line or part under ``root``: its text and its outline's contrast
# against its own background (composited over what lies under it).
OUTLINE_CONTRAST_JS = r"""
(root) => {""" + COLOUR_JS + r"""  return [...root.querySelectorAll('span.ln.ss-linked, span.pv.ss-linked')].map(p => {
    const bg = background(p), ink = over(rgba(getComputedStyle(p).outlineColor), bg);
    const [a, b] = [lum(ink), lum(bg)].sort((x, y) => y - x);
    return [p.textContent.slice(0, 30), Math.round((a + 0.05) / (b + 0.05) * 100) / 100];
  });
}
"""


# The tag legend's box, the header's, and each code line or drawing node of the step shown that
# lies in the viewport and meets the legend's box (what the legend would cover), with the element
# at the legend's centre (the legend itself when nothing lies over it).
LEGEND_JS = r"""
() => {
  const box = r => ({top: r.top, bottom: r.bottom, left: r.left, right: r.right});
  const nav = document.querySelector('nav.provenance'), head = document.querySelector('header');
  const legend = box(nav.getBoundingClientRect()), vw = innerWidth, vh = innerHeight;
  const meets = (r, s) => r.left < s.right && s.left < r.right && r.top < s.bottom && s.top < r.bottom;
  const inView = r => r.bottom > 0 && r.top < vh && r.right > 0 && r.left < vw && r.width > 0;
  const step = document.querySelector('section.step.current');
  const parts = [...step.querySelectorAll('span.ln, svg g.node')].map(e => [e, e.getBoundingClientRect()])
    .filter(([, r]) => inView(r));
  const hit = document.elementFromPoint((legend.left + legend.right) / 2, (legend.top + legend.bottom) / 2);
  const all = step.querySelectorAll('span.ln, svg g.node').length;
  return {legend, header: box(head.getBoundingClientRect()), viewport: [vw, vh], scrollY, shown: parts.length, all,
          covered: parts.filter(([, r]) => meets(r, legend)).map(([e]) => e.textContent.trim().slice(0, 30)),
          onTop: !!(hit && hit.closest('nav.provenance')), buttons: nav.querySelectorAll('button').length};
}
"""


# scrolls the page so that the current step's first code line or drawing node sits just below the header
FIRST_PART_UNDER_HEADER_JS = r"""
() => {
  const first = document.querySelector('section.step.current').querySelector('span.ln, svg g.node');
  window.scrollBy(0, first.getBoundingClientRect().top - document.querySelector('header').getBoundingClientRect().bottom);
}
"""


def test_exported_pages_tag_legend_stays_in_view_beside_the_code(browser, tmp_path, artifacts):
    """The exported page's tag legend (its provenance buttons) stays in the viewport when the page
    scrolls (it sat above the steps and left the view: at the bottom of the ``[A; B] x`` array
    step's page it was 1,000 px and more above the window), below the sticky header, with nothing
    over it, and covers no code line or drawing node of the step: measured at the top of the page,
    with the step's first code line or node just below the header (beside as many of them as the
    window holds, whatever the C's length: at the top, a dense output's shorter C left 3 lines in a
    short window), and scrolled to the bottom, in a wide window and in a short one."""
    from explorer import export_html

    kernel = stacked_spmv_kernel()   # (a dense output: its C is shorter than a sparse vector's)
    path = tmp_path / "legend.html"
    export_html(kernel.trace, path)
    for stage in ("array", "emit-c"):
        at = kernel.trace.stages().index(stage)
        for width, height in ((1100, 600), (1300, 420)):
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(f"{path.as_uri()}#step-{at}")
            page.locator(f"section#step-{at}").wait_for(state="visible")
            for where in ("top", "parts", "bottom"):
                if where == "parts":   # (the step's first code line or node just below the header)
                    page.evaluate(FIRST_PART_UNDER_HEADER_JS)
                else:
                    page.evaluate("y => window.scrollTo(0, y)", 0 if where == "top" else 10 ** 6)
                m = page.evaluate(LEGEND_JS)
                what = (stage, width, height, where)
                if where == "bottom":   # (the page scrolls: the step is taller than the window)
                    assert m["scrollY"] > height, (what, m["scrollY"])
                legend, head = m["legend"], m["header"]
                assert m["buttons"] >= 5 and m["onTop"], (what, m)
                assert head["bottom"] - 1 <= legend["top"] and legend["bottom"] <= height + 1, (what, legend, head)
                assert 0 <= legend["left"] and legend["right"] <= width, (what, legend)
                assert not m["covered"], (what, m["covered"][:5])
                if where == "parts":   # (beside the legend: as many of the step's parts as the window holds)
                    assert m["all"] > 5 and m["shown"] > 5, (what, m["shown"], m["all"])
                if (width, height) == (1100, 600):
                    page.screenshot(path=str(artifacts / f"export-legend-{stage}-{where}.png"),
                                    full_page=False)
            page.close()


# each drawing of a program's tree (laid out left to right) on the page: its scale (shown width over
# its own) and its labels' height in pixels
PROGRAM_TREES_JS = r"""
() => [...document.querySelectorAll('section')].filter(s => s.offsetParent !== null)
  .flatMap(s => [...s.querySelectorAll('.artifact[data-kind="cfir"] .drawing > svg, '
                                       + '.artifact[data-kind="ir"] .drawing > svg')])
  .map(svg => {
    const own = parseFloat(svg.getAttribute('width')) * 4 / 3;   // (Graphviz gives points)
    const label = svg.querySelector('g.node text');
    return {kind: svg.closest('.artifact').dataset.kind, scale: svg.getBoundingClientRect().width / own,
            label: label ? label.getBoundingClientRect().height : 0};
  })
"""


def test_a_programs_tree_opens_large_enough_to_read(browser, tmp_path, artifacts):
    """The CFIR and the imperative IR of a 3-D CSF product, drawn left to right with their root at the
    left edge, open at three quarters of their size or more in a narrow page, labels >= 11 px tall,
    the box scrolling; capped at 160% of the pane as a top-down tree is, they opened at 38-61%, labels
    4-6 px tall (the audit of notebooks 03 and 10)."""
    import compiler as ss
    from explorer import export_html

    trace = ss.lower("C[i, j, k] = A[i, j, k] * B[i, j, k] + D[i, j, k]", "lattice", A="csf", B="csf", D="csf",
                     C="csf").trace
    path = tmp_path / "trees.html"
    export_html(trace, path)
    page = browser.new_page(viewport={"width": 900, "height": 900})
    page.goto(path.as_uri())
    seen, shot = [], set()
    for k in range(len(trace.steps)):
        trees = page.evaluate(PROGRAM_TREES_JS)
        # (a screenshot of the first tree of each kind, and of each too small: 19 of them were half the test's time)
        kinds = {t["kind"] for t in trees if t["kind"] not in shot or t["scale"] < 0.74 or t["label"] < 11}
        if kinds:
            # (the tree's root: at the drawing's left edge, half way down)
            page.locator("section:visible .drawing g.node").first.scroll_into_view_if_needed()
            page.screenshot(path=str(artifacts / f"export-program-tree-{k}.png"))
            shot |= kinds
        seen += trees
        old = page.locator("section:visible").first.inner_text()
        page.keyboard.press("ArrowRight")
        if k + 1 < len(trace.steps):
            page.wait_for_function("(old) => [...document.querySelectorAll('section')]"
                                   ".find(s => s.offsetParent !== null).innerText !== old", arg=old)
    page.close()
    assert {t["kind"] for t in seen} == {"cfir", "ir"}, seen
    small = [t for t in seen if t["scale"] < 0.74 or t["label"] < 11]
    assert not small, f"program trees opened too small to read: {small}"


# The tree's root (its first node) against the visible part of the pane that scrolls it.
ROOT_SEEN_JS = r"""(pane) => {
  const n = pane.querySelector('svg g.node'), r = n.getBoundingClientRect(), q = pane.getBoundingClientRect();
  return {root: [r.top, r.bottom].map(Math.round), pane: [q.top, q.bottom].map(Math.round), scrollTop: pane.scrollTop,
          tall: pane.scrollHeight > pane.clientHeight + 1, inside: r.top >= q.top - 1 && r.bottom <= q.bottom + 1};
}"""


def test_a_tall_program_tree_opens_with_its_root_in_view(browser, artifacts):
    """The imperative IR of a 3-D CSF product, drawn left to right (some 6,000 px tall), in the Explorer's
    drawing pane (460 px at most): Graphviz centres the root on its children, so the pane opened on the
    first children and the root was 3,000 px down (the audit of notebook 10); it now opens with the root in
    view. A pane the person scrolled is left where it is."""
    import compiler as ss
    from browser_colours import themed_page
    from widgets import Explorer

    trace = ss.lower("C[i, j, k] = A[i, j, k] * B[i, j, k] + D[i, j, k]", "lattice", A="csf", B="csf", D="csf",
                     C="csf").trace
    e = Explorer(trace)
    i = e.session.stages().index("cleanup")
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    body = ('<div class="ss-pick-root"><div class="ss-drawing" style="max-height:460px;overflow:auto;border:1px solid">'
            f'{e.render(i)["artifact"]}</div></div>')
    page.set_content(themed_page("light", body))
    pane = page.locator(".ss-drawing").first.element_handle()
    try:   # (the pane scrolls once the drawing is shown: a moment after)
        page.wait_for_function(f"(p) => ({ROOT_SEEN_JS})(p).inside", arg=pane, timeout=5_000)
    except Exception:
        pass   # (measured below, where it fails saying where the root is)
    seen = page.evaluate(ROOT_SEEN_JS, pane)
    page.screenshot(path=str(artifacts / "explorer-ir-tree-root.png"))
    assert seen["tall"] and seen["scrollTop"] > 0 and seen["inside"], seen
    # drawn again (the next step) with the pane scrolled elsewhere by the person: it stays there
    page.evaluate("(p) => { p.scrollTop = 40; }", pane)
    page.evaluate("([p, html]) => { p.innerHTML = html; }", [pane, e.render(i + 1)["artifact"]])
    page.wait_for_timeout(300)
    assert page.evaluate("(p) => p.scrollTop", pane) == 40
    page.close()


#: each C line of a step's code pane: its text, tags, background and box, and its pane's sides
_C_LINES_JS = """section => [...section.querySelectorAll('.c-section span.ln')].map(e => {
    const r = e.getBoundingClientRect(), pane = e.closest('pre, .pane, .artifact').getBoundingClientRect();
    return {text: e.textContent, tags: e.getAttribute('data-tags'), background: getComputedStyle(e).backgroundColor,
            left: r.left, right: r.right, width: r.width, height: r.height, paneLeft: pane.left, paneRight: pane.right};
})"""


def c_lines(page, section) -> list[dict]:
    """The C lines of ``section`` (a step of an exported page) as the browser lays them out."""
    return page.evaluate(_C_LINES_JS, section.element_handle())


def assert_drawn_in_pane(line: dict) -> None:
    """A C line of :func:`c_lines` has a box, and the box lies inside its code pane."""
    assert line["width"] > 0 and line["height"] > 0, line
    assert line["paneLeft"] - 1 <= line["left"] and line["right"] <= line["paneRight"] + 1, line


def test_a_kernels_own_coordinate_check_reads_in_its_loops_colour(browser, tmp_path, artifacts):
    """A SpMV lowered for a matrix read in place from scipy checks each column index it reads
    (compiler/owned_inputs.py): the exported C shows the check's lines inside the code pane, readable, in the
    colour of the loop whose read they check (the same tags as ``int64_t j = A1_idx[pA1];``), in the light and
    the dark preference."""
    import numpy as np
    import scipy.sparse as sp
    import compiler as ss
    from explorer import export_html

    S = sp.random(40, 30, density=0.2, format="csr", random_state=1)
    k = ss.lower("y[i] = A[i, j] * x[j]", "lattice", A=ss.Tensor.from_scipy(S, name="A"), x=np.ones(30))
    assert k.coordinates_checked == {"A"}
    path = tmp_path / "owned.html"
    export_html(k.trace, path)
    for scheme in ("light", "dark"):
        page = browser.new_page(viewport={"width": 1300, "height": 900}, color_scheme=scheme)
        page.goto(f"{path.as_uri()}#step-{k.trace.stages().index('emit-c')}")
        section = page.locator("section.step.current")
        lines = c_lines(page, section)
        read = next(ln for ln in lines if "= A1_idx[" in ln["text"])
        check = next(ln for ln in lines if "(uint64_t)j >= (uint64_t)A1_size" in ln["text"])
        leave = next(ln for ln in lines if "return coordinate_error(" in ln["text"])
        for ln in (check, leave):
            assert_drawn_in_pane(ln)
            assert ln["tags"] == read["tags"] and ln["background"] == read["background"], (scheme, ln, read)
        assert read["tags"] and read["background"] not in ("rgba(0, 0, 0, 0)", "transparent"), read
        assert_readable(measure(section), f"the exported C with its own coordinate check ({scheme})")
        page.screenshot(path=str(artifacts / f"owned_coordinates_{scheme}.png"))
        page.close()


#: a reduction by the looplets whose gaps fold: its program, and a piece of each of the lines that count the gaps,
#: walk the entries and make the gaps' update (all the Sequence's code)
GAP_FOLDS = {"row_max_gaps_once": ("y[i] = max[j](A[i, j])", ("int64_t j_missing = ", "for (int64_t pA = qA;",
                                                              "if (j_missing > 0)")),
             "column_max_gaps_counted": ("y[j] = max[i](A[i, j])", ("j_entries[j_2] += 1;", "while (qA < qA_stop)",
                                                                   "if (j_entries[j] < j_walks)"))}


@pytest.mark.parametrize("case", sorted(GAP_FOLDS))
def test_a_max_shows_its_walk_and_its_update_for_the_gaps_in_one_colour(browser, tmp_path, artifacts, case):
    """A row's max by the looplets over a CSR stored around 0 walks the row's values and makes the gaps' update
    once after the walk (compiler/looplets/idempotent_gaps.py); a column's max counts each column's entries as the
    rows are walked and makes the update after the rows where a row did not store the column
    (compiler/looplets/counted_gaps.py). The exported C at the step that lowers the row's Sequence shows the
    count, the walk and the update inside the code pane, readable, all three in the Sequence's colour, in the
    light and the dark preference."""
    import compiler as ss
    from explorer import export_html

    program, pieces = GAP_FOLDS[case]
    k = ss.lower(program, "looplets", A="csr")
    path = tmp_path / f"{case}.html"
    export_html(k.trace, path)
    step = next(n for n, s in enumerate(k.trace.steps) if s.stage == "lower:Sequence")
    for scheme in ("light", "dark"):
        page = browser.new_page(viewport={"width": 1300, "height": 900}, color_scheme=scheme)
        page.goto(f"{path.as_uri()}#step-{k.trace.stages().index('emit-c')}")
        section = page.locator("section.step.current")
        lines = c_lines(page, section)
        count, walk, fold = (next(ln for ln in lines if piece in ln["text"]) for piece in pieces)
        for ln in (count, walk, fold):
            assert_drawn_in_pane(ln)
            assert ln["tags"] and ln["background"] not in ("rgba(0, 0, 0, 0)", "transparent"), ln
        sequence = k.trace.steps[step].data["tag"]
        assert all(sequence in ln["tags"].split() for ln in (count, walk, fold)), (sequence, count, walk, fold)
        assert count["background"] == fold["background"], (scheme, count, fold)
        assert_readable(measure(section), f"the exported C of {program} by the looplets ({scheme})")
        page.screenshot(path=str(artifacts / f"{case}_{scheme}.png"))
        page.close()
