"""The views a notebook shows (Compare, a 3-point lattice, every drawing kind, the Playground) in
JupyterLab in headless Chromium: each fits and reads in both themes, links its C lines and its
drawings both ways, zooms, and the Playground re-lowers as a person types."""

from __future__ import annotations

import pathlib
import re
import time

from browser_linked import LINKED_NODES_JS, linked_steps_outline_their_c
from browser_measure import (REWRITES_JS, assert_rewrites_read, CELLS_JS, DRAWING_PANES_JS, FILL_CONTRAST_JS, LINK_JS, PANE_CONTENT_JS, SAVED_STATE_JS,
                             SCROLL_END_JS, SHOWN, SHOWN_NOTEBOOK, ZOOM_JS, assert_click_keeps_node_and_shows_line,
                             assert_columns_line_up, assert_drawing_panes_fit, assert_panes_fit_content,
                             assert_readable, measure, patient, screenshot, set_theme)


def open_and_run(page, url: str, token: str, name: str, artifacts: pathlib.Path) -> None:
    """Open notebook ``name`` in JupyterLab, run all its cells, wait until the kernel is idle."""
    page.goto(f"{url}/lab/tree/{name}?reset&token={token}", timeout=patient(120_000))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=patient(120_000))
    try:
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=patient(120_000))
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        page.locator(f"{SHOWN_NOTEBOOK} .sparsescope-compare").first.wait_for(state="attached", timeout=patient(240_000))
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=patient(240_000))
        page.locator(f"{SHOWN_NOTEBOOK} .views-fibers").first.wait_for(state="attached", timeout=patient(60_000))
    except Exception:
        page.screenshot(path=str(artifacts / f"{name}-failure.png"))
        raise


def test_views_fit_and_read_in_both_themes(browser, lab, artifacts):
    """Compare shows both strategies; every drawing kind keeps its labels inside its shapes and
    fits its pane (a 3-point lattice, a fiber tree wider than the pane); code is readable in the
    light and the dark theme."""
    url, token, root = lab
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    open_and_run(page, url, token, "views.ipynb", artifacts)
    notebook = page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook").first
    compare = page.locator(f"{SHOWN_NOTEBOOK} .sparsescope-compare").first
    three = page.locator(SHOWN).first
    try:
        # live views: no widget is marked disconnected, and no saved-view note shows
        state = page.evaluate(SAVED_STATE_JS, notebook.element_handle())
        assert state["views"] >= 2 and state["marked"] == 0 and state["notes"] == 0, state
        c_opens_at_the_steps_code(page, three, artifacts)
        # the lattice step's rewrites, under its program in the explorer's narrow pane, one line each
        rewrites = three.locator(".ss-program").first
        rewrites.locator("table.rewrites").first.scroll_into_view_if_needed()
        screenshot(page, artifacts / "views-rewrites.png", full_page=False)
        assert_rewrites_read(rewrites.evaluate(REWRITES_JS), "the explorer's rewrites of the lattice step")
        # Compare's one stage slider moves both columns: Home goes to parse on both sides, then
        # the arrow keys on to the lattice of j next to the unfurl of j (each column says its step)
        compare.scroll_into_view_if_needed()
        handle = compare.locator(".ss-stage-slider .noUi-handle").first
        steps = [compare.locator(f".ss-step-{side}").first for side in "ab"]
        handle.focus()
        handle.press("Home")
        page.wait_for_function("els => els.every(e => /step 0 of \\d+: parse/.test(e.innerText))",
                               arg=[e.element_handle() for e in steps], timeout=patient(30_000))
        c_panes_fit_their_program(page, compare, "parse", artifacts)
        for k in range(2):   # (no lattice nor looplet nest yet: the parse step's expression tree)
            tree = compare.locator(".ss-drawing").nth(k)
            m = measure(tree)
            assert "notation-tree" in tree.inner_text() and m["ncount"] >= 6 and not m["nodes"] \
                and not m["drawings"], m
        for _ in range(40):
            if "index j" in compare.locator(".ss-stage").first.inner_text():
                break
            old = compare.locator(".ss-stage").first.inner_html()
            handle.press("ArrowRight")
            page.wait_for_function("([el, old]) => el.innerHTML !== old",
                                   arg=[compare.locator(".ss-stage").first.element_handle(), old], timeout=patient(30_000))
        assert "index j" in compare.locator(".ss-stage").first.inner_text()
        page.wait_for_function("els => /lattice/.test(els[0].innerText) && /unfurl/.test(els[1].innerText)",
                               arg=[e.element_handle() for e in steps], timeout=patient(30_000))
        assert "forall j" in compare.locator(".ss-drawing").nth(0).inner_text()
        c_panes_fit_their_program(page, compare, "index-j", artifacts)
        screenshot(page, artifacts / "views-compare-index-j.png", full_page=False)
        assert_readable(measure(compare), "Compare at the lattice and unfurl of j", panes=4)
        assert_columns_line_up(compare, "Compare at the lattice and unfurl of j")
        # the explorer's diff pane says what it shows: a lattice step's input, not a diff
        assert "input of lattice" in three.locator(".ss-diff-title").first.inner_text()
        # under the lattice, a legend of its notation
        legend = three.locator(".ss-drawing .ss-legend").first.inner_text()
        assert "[iterated | located]" in legend and "∪" in legend
        link_compare_columns_apart(page, compare, artifacts)
        tree_nodes_link_their_c_lines(page, compare, artifacts)
        schedule_buttons_read_in_line(page, compare, artifacts)
        hover_links_in_the_notebook(page, three, artifacts)
        link_both_ways_in_the_notebook(page, three, artifacts)
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            if theme != "JupyterLab Light":
                set_theme(page, theme)
            tag = theme.split()[-1].lower()
            for name, part in (("compare", compare), ("three", three),
                               ("lattice", page.locator(f"{SHOWN_NOTEBOOK} .views-lattice").first),
                               ("looplets", page.locator(f"{SHOWN_NOTEBOOK} .views-looplets").first),
                               ("fibers", page.locator(f"{SHOWN_NOTEBOOK} .views-fibers").first)):
                part.scroll_into_view_if_needed()
                screenshot(page, artifacts / f"views-{name}-{tag}.png", full_page=False)
            # both strategies' C and drawings (4 panes), at least 100 px tall each
            assert_readable(measure(compare), f"Compare ({tag})", panes=4)
            drawing_panes_fit_their_drawings(page, compare, tag, artifacts)
            format_pickers_show_every_dropdown(page, compare, tag, artifacts)
            sequence_texts_marked(page, tag, artifacts)
            linked_steps_outline_their_c(page, root / "views.ipynb", SHOWN_NOTEBOOK, tag, artifacts)
            assert_readable(measure(notebook), f"the views notebook ({tag})")
            tree_box_linked_and_zoomed(page, three, tag, artifacts)
            # the integer facts' table: every cell inside the table, its text readable on the theme
            facts = page.locator(f"{SHOWN_NOTEBOOK} .views-facts table.ss-int-facts").first
            facts.scroll_into_view_if_needed()
            screenshot(page, artifacts / f"views-int-facts-{tag}.png", full_page=False)
            cells = facts.evaluate(CELLS_JS)
            assert len(cells) >= 6 and all(c["height"] >= 10 and c["inside"] for c in cells), cells[:4]
            low = [c for c in cells if c["ratio"] < 4.5]
            assert not low, f"int-facts cells below contrast 4.5 ({tag}): {low[:4]}"
        assert three.locator(".ss-drawing svg g.node").count() >= 3, "the lattice has fewer than 3 points"
        assert page.locator(f"{SHOWN_NOTEBOOK} .views-fibers svg g.node").count() > 20

        # 100%: the wide fiber tree at its own size in a box that scrolls (pan); fit: in its pane
        tree = page.locator(f"{SHOWN_NOTEBOOK} .views-fibers .artifact").first
        tree.scroll_into_view_if_needed()
        svg = tree.locator("svg").first
        fitted, natural = svg.bounding_box()["width"], svg.evaluate("s => s.viewBox.baseVal.width * 4 / 3")
        assert natural > fitted
        tree.locator(".ss-zoom-100").click()
        assert abs(svg.bounding_box()["width"] - natural) < 2
        assert tree.locator(".drawing").evaluate("d => d.scrollWidth > d.clientWidth + 100")
        screenshot(page, artifacts / "views-fibers-actual-size.png", full_page=False)
        tree.locator(".ss-zoom-fit").click()
        m = tree.evaluate(ZOOM_JS)
        assert m["width"] <= m["room"] + 1 and m["scroll"] <= m["room"] + 1, m
        # fitted, a 60 x 60 CSR's tree reads: its labels were 2 px tall when each rank drew 64 nodes
        assert m["label"] >= 6, f"the fitted fiber tree's labels are {m['label']:.1f} px tall"
    finally:
        set_theme(page, "JupyterLab Light")
        page.close()


def hover_links_in_the_notebook(page, explorer, artifacts: pathlib.Path) -> None:
    """Hovering a C line strokes the lattice point it came from and outlines the program's
    parts of its tag (the index expression it came from); the pointer leaving undoes it; and
    hovering a point outlines its C lines."""
    from explorer.linking import LINK_COLOR

    explorer.scroll_into_view_if_needed()
    root = explorer.element_handle()
    lines = explorer.locator(".ss-c span.ln[data-tags]")
    firsts = lines.evaluate_all("ls => ls.map(l => l.getAttribute('data-tags').split(' ')[0])")
    k, tag = next((k, t) for k, t in enumerate(firsts)
                  if explorer.locator(f'.ss-drawing svg g.node[data-tags~="{t}"]').count())
    program = explorer.locator(f'.ss-program [data-tags~="{tag}"]')
    assert program.count(), f"the program pane shows no part of {tag}"
    outlined = "els => els.every(e => getComputedStyle(e).outlineStyle === 'solid')"
    page.mouse.move(0, 0)   # (the pointer off the view: a C line under it links its point)
    assert page.evaluate(LINK_JS, [root, tag])["stroke"] != LINK_COLOR
    lines.nth(k).scroll_into_view_if_needed()
    lines.nth(k).hover()
    linked = page.evaluate(LINK_JS, [root, tag])
    assert linked["stroke"] == LINK_COLOR and linked["outlined"], linked
    assert program.evaluate_all(outlined), "hovering a C line outlined none of the program's parts of its tag"
    screenshot(page, artifacts / "views-hover-c-line.png", full_page=False)
    explorer.locator(".ss-header").first.hover()
    assert page.evaluate(LINK_JS, [root, tag])["stroke"] != LINK_COLOR, "the point stayed stroked after the pointer left"
    node = explorer.locator(f'.ss-drawing svg g.node[data-tags~="{tag}"]').first
    node.scroll_into_view_if_needed()
    node.hover()
    assert lines.nth(k).evaluate("l => getComputedStyle(l).outlineStyle") == "solid"
    explorer.locator(".ss-header").first.hover()


def link_both_ways_in_the_notebook(page, explorer, artifacts: pathlib.Path) -> None:
    """In an Explorer at a lattice step: clicking a C line strokes the lattice point it came from
    (at once, and still after the kernel's redraw), and clicking a point outlines its C lines
    and scrolls the C pane to the first."""
    from explorer.linking import LINK_COLOR

    explorer.scroll_into_view_if_needed()
    root = explorer.element_handle()
    lines = explorer.locator(".ss-c span.ln[data-tags]")
    firsts = lines.evaluate_all("ls => ls.map(l => l.getAttribute('data-tags').split(' ')[0])")
    k, tag = next((k, t) for k, t in enumerate(firsts)
                  if explorer.locator(f'.ss-drawing svg g.node[data-tags~="{t}"]').count())
    assert page.evaluate(LINK_JS, [root, tag])["stroke"] != LINK_COLOR
    select = explorer.locator(".ss-provenance select").first
    lines.nth(k).scroll_into_view_if_needed()
    explorer.locator(".ss-drawing svg").first.evaluate("svg => { svg.ssOld = true; }")
    lines.nth(k).click()
    stroked = "([root, tag, color]) => (LINK_JS)([root, tag]).stroke === color".replace("LINK_JS", LINK_JS.strip())
    page.wait_for_function(stroked, arg=[root, tag, LINK_COLOR], timeout=patient(10_000))
    # the kernel's answer (the tag chosen, the drawing drawn again) keeps the point stroked
    page.wait_for_function("el => el.value !== 'all'", arg=select.element_handle(), timeout=patient(30_000))
    assert select.input_value().split(" (")[0] == tag
    page.wait_for_function("root => !root.querySelector('.ss-drawing svg').ssOld", arg=root, timeout=patient(30_000))
    page.wait_for_function(stroked, arg=[root, tag, LINK_COLOR], timeout=patient(10_000))
    screenshot(page, artifacts / "views-linked-from-c.png", full_page=False)

    # the reverse: a point, clicked with the C pane scrolled to its end, outlines its C lines
    # and scrolls the pane to the first (after going back to every tag's colours)
    select.select_option(label="all")
    page.wait_for_function("root => root.querySelectorAll('.ss-drawing svg g.node[data-tags]').length > 1",
                           arg=root, timeout=patient(30_000))
    nodes = explorer.locator(".ss-drawing svg g.node[data-tags]")
    node_firsts = nodes.evaluate_all("gs => gs.map(g => g.getAttribute('data-tags').split(' ')[0])")
    k, other = next((k, t) for k, t in enumerate(node_firsts) if t != tag and t in firsts)
    # the C pane is redrawn after the drawing (its own widget message): poll the pane, which stays
    try:
        page.wait_for_function(SCROLL_END_JS, arg=explorer.locator(".ss-c").first.element_handle(), timeout=patient(15_000))
    except Exception:
        raise AssertionError("the C pane does not scroll") from None
    start = page.evaluate(LINK_JS, [root, other])
    assert start["line"] and not start["inView"], start
    nodes.nth(k).evaluate("g => g.scrollIntoView({block: 'center'})")
    nodes.nth(k).click()
    shown = ("([root, tag]) => { const m = (LINK_JS)([root, tag]); return m.inView && m.outlined; }"
             .replace("LINK_JS", LINK_JS.strip()))
    page.wait_for_function(shown, arg=[root, other], timeout=patient(30_000))
    end = page.evaluate(LINK_JS, [root, other])
    assert end["scrollTop"] < start["scrollTop"], (start, end)
    # once the kernel has answered (the tag chosen, the panes drawn again), the clicked node is
    # still in view and the C pane still shows its first line
    page.wait_for_function("([el, tag]) => el.value.split(' (')[0] === tag", arg=[select.element_handle(), other],
                           timeout=patient(30_000))
    page.wait_for_function(shown, arg=[root, other], timeout=patient(30_000))
    # (the drawing and the C pane are drawn again too, each its own widget message: measure the
    # node and the line once both are laid out, not the ones they replaced; under load the C pane's
    # message came after the wait on the node, and the line measured had no box)
    page.wait_for_function("""([root, tag]) => [`.ss-drawing svg g.node[data-tags~="${tag}"]`,
                                                `.ss-c span.ln[data-tags~="${tag}"]`].every(sel => {
        const e = root.querySelector(sel), r = e && e.getBoundingClientRect();
        return r && r.width > 0 && r.height > 0; })""", arg=[root, other], timeout=patient(30_000))
    node = explorer.locator(f'.ss-drawing svg g.node[data-tags~="{other}"]').first
    line = explorer.locator(f'.ss-c span.ln[data-tags~="{other}"]').first
    assert_click_keeps_node_and_shows_line(page, node, line, explorer.locator(".ss-c").first, "the Explorer")
    screenshot(page, artifacts / "views-linked-from-node.png", full_page=False)


# Each schedule button of a Compare: its text, and whether it is cut (ellipsized, hidden, or
# past its column's edge). (A button as wide as its text is fractional px wide: its clientWidth
# rounds down and its scrollWidth up.)
BUTTONS_JS = """c => [...c.querySelectorAll('.ss-schedule-command')].map(b => {
  const r = b.getBoundingClientRect(), col = b.closest('.ss-column').getBoundingClientRect();
  return {text: b.textContent, cut: b.scrollWidth > b.clientWidth + 1 || r.width < 1 || r.right > col.right + 1};
})"""


# Each column's "step N of M: stage note" line: its text's box (a range over its contents) against
# its column's and against every box between that clips (overflow not visible).
STEP_LINES_JS = """c => [...c.querySelectorAll('.ss-step-a, .ss-step-b')].map(w => {
  const range = document.createRange(); range.selectNodeContents(w);
  const r = range.getBoundingClientRect(), col = w.closest('.ss-column').getBoundingClientRect();
  let cut = r.width < 1 || r.left < col.left - 1 || r.right > col.right + 1;
  for (let a = w; a && a !== c; a = a.parentElement) {
    if (getComputedStyle(a).overflowX === 'visible') continue;
    const b = a.getBoundingClientRect();
    cut = cut || r.left < b.left - 1 || r.right > b.right + 1;
  }
  return {text: w.innerText, cut, right: Math.round(r.right), column: Math.round(col.right)};
})"""


def c_panes_fit_their_program(page, compare, where: str, artifacts: pathlib.Path) -> None:
    """At a step of neither column's C (the parse, the lattice and unfurl of j) each C pane shows
    the program as it stands, a few lines, and is as tall as they are: it was 420 px, most of it
    empty. The columns still line up. (At the parse step, each drawing pane shows the expression
    tree, where it showed an empty box for want of a lattice or a looplet nest.)"""
    screenshot(page, artifacts / f"views-compare-no-c-{where}.png", full_page=False)
    panes = compare.evaluate(PANE_CONTENT_JS)
    assert len(panes) == 2 and all("no C yet" in p["text"] and p["content"] > 20 for p in panes), panes
    assert_panes_fit_content(panes, f"Compare's C panes at {where}")
    assert_columns_line_up(compare, f"Compare at {where}")


def drawing_panes_fit_their_drawings(page, compare, theme: str, artifacts: pathlib.Path) -> None:
    """Compare's drawing panes are as tall as their drawings: at the parse step (the expression
    tree, a few nodes) no taller than the taller tree and its note, where they were fixed at 420
    px, most of it empty; at the last step (up to six drawings each) up to their cap, scrolling
    beyond. Both panes start at one height and are as tall as each other. Measured where the
    slider is (the last step or the parse), then at the other end."""
    handle = compare.locator(".ss-stage-slider .noUi-handle").first
    steps = [compare.locator(f".ss-step-{side}").first for side in "ab"]
    at_parse = "els => els.every(e => /step 0 of \\d+: parse/.test(e.innerText))"
    first = "Home" if page.evaluate(at_parse, [e.element_handle() for e in steps]) else "End"
    for key in (first, "End" if first == "Home" else "Home"):
        if key != first:
            old = compare.locator(".ss-stage").first.inner_html()
            compare.scroll_into_view_if_needed()
            handle.focus()
            handle.press(key)
            page.wait_for_function("([el, old]) => el.innerHTML !== old",
                                   arg=[compare.locator(".ss-stage").first.element_handle(), old], timeout=patient(30_000))
        where = "parse" if key == "Home" else "the last step"
        if key == "Home":
            page.wait_for_function(at_parse, arg=[e.element_handle() for e in steps], timeout=patient(30_000))
            compare.locator(".ss-drawing").first.scroll_into_view_if_needed()
            screenshot(page, artifacts / f"views-compare-drawings-parse-{theme}.png", full_page=False)
        panes = compare.evaluate(DRAWING_PANES_JS)
        assert_drawing_panes_fit(panes, f"Compare's drawing panes at {where} ({theme})")
        assert_columns_line_up(compare, f"Compare at {where} ({theme})")
        if key == "Home":
            assert not any(p["scrolls"] for p in panes), panes   # (a tree of six nodes fits)


def step_lines_fit(compare, where: str) -> None:
    """Each column's step line ("step 22 of 22: compile" and its note) is whole inside its column
    (at 900 px the compile step's note ran past the column, cut at its edge)."""
    lines = compare.evaluate(STEP_LINES_JS)
    assert len(lines) == 2 and all(x["text"].startswith("step ") for x in lines), lines
    cut = [x for x in lines if x["cut"]]
    assert not cut, f"step lines cut in {where}: {cut}"


def schedule_buttons_read_in_line(page, compare, artifacts: pathlib.Path) -> None:
    """Every schedule button of Compare's columns shows its whole label (the lattice column's six
    were squeezed into one row to "reo…", "preco…", "s…"), at the notebook's width and a narrow
    one, where they wrap; and the columns' C and drawing panes still start at one height."""
    width = page.viewport_size["width"]
    try:
        for shown in (width, 900):
            page.set_viewport_size({"width": shown, "height": page.viewport_size["height"]})
            page.wait_for_function("c => c.getBoundingClientRect().width < %d" % shown, arg=compare.element_handle())
            compare.scroll_into_view_if_needed()
            buttons = compare.evaluate(BUTTONS_JS)
            assert len(buttons) >= 7, f"Compare offers {len(buttons)} schedule buttons: {buttons}"
            cut = [b["text"] for b in buttons if b["cut"]]
            assert not cut, f"schedule buttons cut at {shown} px: {cut}"
            screenshot(page, artifacts / f"views-compare-schedule-{shown}.png", full_page=False)
            assert_columns_line_up(compare, f"Compare at {shown} px")
            step_lines_fit(compare, f"Compare at {shown} px")
    finally:
        page.set_viewport_size({"width": width, "height": page.viewport_size["height"]})


# Each dropdown of Compare's format pickers: which it is, and whether it is cut (past its column's
# edge, or clipped by a box between, whose overflow is not visible).
DROPDOWNS_JS = """c => [...c.querySelectorAll('.ss-format-picker select')].map(s => {
  const r = s.getBoundingClientRect();
  let cut = r.width < 1 || r.height < 1;
  for (let a = s.parentElement; a && a !== c; a = a.parentElement) {
    if (!a.classList.contains('ss-column') && getComputedStyle(a).overflowX === 'visible') continue;
    const b = a.getBoundingClientRect();
    cut = cut || r.left < b.left - 1 || r.right > b.right + 1;
  }
  const cls = [...s.parentElement.classList].find(k => k.startsWith('ss-') && k !== 'ss-level') || '?';
  return {which: cls + ' in ' + [...s.closest('.ss-column').classList].find(k => /ss-column-/.test(k)), cut,
          left: Math.round(r.left), right: Math.round(r.right)};
})"""


def format_pickers_show_every_dropdown(page, compare, tag: str, artifacts: pathlib.Path) -> None:
    """Every dropdown of Compare's format pickers (a tensor's preset, its levels, its mode order)
    is whole inside its column, at the notebook's width and a narrow one (at 900 px a matrix's row
    of four ran past its column, its second level's dropdown cut)."""
    width = page.viewport_size["width"]
    try:
        for shown in (width, 900):
            page.set_viewport_size({"width": shown, "height": page.viewport_size["height"]})
            page.wait_for_function("c => c.getBoundingClientRect().width < %d" % shown, arg=compare.element_handle())
            compare.locator(".ss-format-picker").first.scroll_into_view_if_needed()
            screenshot(page, artifacts / f"views-compare-formats-{shown}-{tag}.png", full_page=False)
            step_lines_fit(compare, f"Compare at {shown} px ({tag})")
            dropdowns = compare.evaluate(DROPDOWNS_JS)
            assert len(dropdowns) >= 12, dropdowns   # (A: preset, 2 levels, order; x and y: preset, level)
            cut = [d for d in dropdowns if d["cut"]]
            assert not cut, f"format dropdowns cut at {shown} px ({tag}): {cut}"
    finally:
        page.set_viewport_size({"width": width, "height": page.viewport_size["height"]})


# Which tags a part links, where they are: the column (an element) holding a Compare pane.
COLUMN_JS = "el => { let r = el; while (r && !r.querySelector('.ss-drawing')) r = r.parentElement; return r; }"


def link_compare_columns_apart(page, compare, artifacts: pathlib.Path) -> None:
    """Compare links each column on its own: clicking a C line of one column strokes that
    column's drawing node and links no part outside the column; each column keeps its own
    choice, so clicking in the other column leaves the first one's node stroked (one view over
    both columns would unlink it)."""
    from explorer.linking import LINK_COLOR

    handle = compare.locator(".ss-stage-slider .noUi-handle").first
    old = compare.locator(".ss-stage").first.inner_html()
    handle.focus()
    handle.press("End")   # the last station: C in both columns
    page.wait_for_function("([el, old]) => el.innerHTML !== old",
                           arg=[compare.locator(".ss-stage").first.element_handle(), old], timeout=patient(30_000))
    notebook = page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook").first.element_handle()
    stroked = "([root, tag, color]) => (LINK_JS)([root, tag]).stroke === color".replace("LINK_JS", LINK_JS.strip())
    outside = ("([nb, col, tag]) => [...nb.querySelectorAll('.ss-linked')]"
               ".filter(e => !col.contains(e) && (e.getAttribute('data-tags') || '').split(' ').includes(tag)).length")
    chosen = []
    for k in range(2):
        column = compare.locator(".ss-c").nth(k).evaluate_handle(COLUMN_JS)
        lines = compare.locator(".ss-c").nth(k).locator("span.ln[data-tags]")
        firsts = lines.evaluate_all("ls => ls.map(l => l.getAttribute('data-tags').split(' ')[0])")
        n, tag = next(((n, t) for n, t in enumerate(firsts)
                       if compare.locator(".ss-drawing").nth(k).locator(f'svg g.node[data-tags~="{t}"]').count()),
                      (None, None))
        assert tag is not None, f"column {k}: no C line names a node of its drawing"
        assert page.evaluate(LINK_JS, [column, tag])["stroke"] != LINK_COLOR
        lines.nth(n).scroll_into_view_if_needed()
        lines.nth(n).click()
        page.wait_for_function(stroked, arg=[column, tag, LINK_COLOR], timeout=patient(10_000))
        assert page.evaluate(outside, [notebook, column, tag]) == 0, f"column {k}: {tag} linked outside it"
        chosen.append((column, tag))
        screenshot(page, artifacts / f"views-compare-linked-{'ab'[k]}.png", full_page=False)
    column, tag = chosen[0]
    assert page.evaluate(LINK_JS, [column, tag])["stroke"] == LINK_COLOR, \
        "clicking in the second column unlinked the first column's choice"


# A column's C lines: each line's number, its code (without its number) and whether it is linked.
C_LINES_JS = """col => [...col.querySelectorAll('.ss-c span.ln')].map(l => ({
  line: +l.getAttribute('data-line'), linked: l.classList.contains('ss-linked'),
  code: [...l.childNodes].filter(n => !(n.classList && n.classList.contains('lno'))).map(n => n.textContent).join('')}))"""


def tree_nodes_link_their_c_lines(page, compare, artifacts: pathlib.Path) -> None:
    """Compare at its last step, drawing the parse step's expression tree in both columns:
    clicking a node of the tree (``*``, then ``A[i, j]``) outlines the C lines the compiler
    tagged with that node (the provenance of the same lowering, made here), and only those: each
    reads the node's operands (``A_val``, ``x_val``), in the lattice column and the looplets'."""
    import compiler as ss

    kind = compare.locator(".widget-dropdown").filter(has=page.locator("label", has_text=re.compile("^drawing$"))) \
        .locator("select").first
    before = kind.input_value()
    kind.select_option("notation-tree")
    page.wait_for_function("c => [...c.querySelectorAll('.ss-drawing')].every(d => "
                           "d.querySelector('.artifact[data-kind=\"notation-tree\"] svg g.node[data-tags]'))",
                           arg=compare.element_handle(), timeout=patient(30_000))
    for k, strategy in enumerate(("lattice", "looplets")):
        kernel = ss.lower("y[i] = A[i, j] * x[j]", strategy, A="csr", x="dense")
        c = [a for s in kernel.trace.steps for a in s.artifacts if a.kind == "c"][-1]
        column = compare.locator(".ss-c").nth(k).evaluate_handle(COLUMN_JS)
        shown = page.evaluate(C_LINES_JS, column)
        assert [x["code"] for x in shown] == c.text.splitlines(), f"{strategy}: the column shows other C"
        for label, operands in (("*", ("A_val", "x_val")), ("A[i, j]", ("A_val",))):
            node = compare.locator(".ss-drawing").nth(k).locator("svg g.node[data-tags]").filter(
                has=page.locator("text", has_text=re.compile(f"^{re.escape(label)}$")))
            assert node.count() == 1, f"{strategy}: {node.count()} nodes {label} link C lines"
            tag = node.get_attribute("data-tags").split()[0]
            node.scroll_into_view_if_needed()
            node.click()
            page.wait_for_function("col => col.querySelector('.ss-c span.ln.ss-linked')", arg=column, timeout=patient(10_000))
            linked = [x for x in page.evaluate(C_LINES_JS, column) if x["linked"]]
            expected = c.data["provenance"].get(tag, [])
            assert expected and [x["line"] for x in linked] == expected, (strategy, label, tag, linked, expected)
            assert all(op in x["code"] for x in linked for op in operands), (strategy, label, linked)
            screenshot(page, artifacts / f"views-compare-tree-linked-{strategy}-{tag.split(':')[-1]}.png",
                       full_page=False)
    kind.select_option(before)
    page.wait_for_function("c => !c.querySelector('.ss-drawing .artifact[data-kind=\"notation-tree\"]')",
                           arg=compare.element_handle(), timeout=patient(30_000))


# The line ``n`` of a view's C pane: where it is in the box of the pane that scrolls, and how far
# that box is scrolled.
C_LINE_SEEN_JS = r"""
([root, n]) => {
  const line = root.querySelector(`.ss-c span.ln[data-line="${n}"]`);
  let box = null;
  for (let b = line && line.parentElement; b; b = b.parentElement) {
    const o = getComputedStyle(b).overflowY;
    if ((o === 'auto' || o === 'scroll') && b.scrollHeight > b.clientHeight + 1) { box = b; break; }
  }
  const r = line && line.getBoundingClientRect(), v = box && box.getBoundingClientRect();
  return {line: !!line, scrolls: !!box, scrollTop: box ? box.scrollTop : 0,
          inView: !!(r && v && r.top >= v.top - 1 && r.bottom <= v.bottom + 1)};
}
"""


def c_opens_at_the_steps_code(page, explorer, artifacts: pathlib.Path) -> None:
    """The Explorer at its lattice step shows the C scrolled to the first line of the lattice's
    points (:func:`explorer.stepdiff.c_opening_line`), in the kernel's function: it opened at the
    ``#include``s, far above the loops."""
    import compiler as ss
    from explorer import explore
    from explorer.stepdiff import c_opening_line

    s = explore(ss.lower("y[i] = A[i] * B[i] + C[i]", "lattice", A="sv", B="sv", C="sv").trace)
    at = c_opening_line(s, s.stages().index("lattice"))
    includes = [n for n, line in enumerate(s.last_artifact("c").text.splitlines(), 1) if line.startswith("#include")]
    assert at > max(includes), at
    explorer.scroll_into_view_if_needed()
    page.wait_for_function(f"([root, n]) => ({C_LINE_SEEN_JS})([root, n]).inView",
                           arg=[explorer.element_handle(), at], timeout=patient(30_000))
    seen = page.evaluate(C_LINE_SEEN_JS, [explorer.element_handle(), at])
    assert seen["scrolls"] and seen["scrollTop"] > 0, seen
    screenshot(page, artifacts / "views-c-opened.png", full_page=False)


# Every marked part of a view: its text, its tags, its background as shown and its width.
MARKED_JS = """root => [...root.querySelectorAll('.pv[data-tags]')].map(e => ({
  text: e.textContent, tags: e.getAttribute('data-tags').split(' '), bg: getComputedStyle(e).backgroundColor,
  width: e.getBoundingClientRect().width, derivation: !!e.closest('.artifact[data-kind="seq-derivation"]'),
  own: JSON.parse(e.closest('[data-colors]').getAttribute('data-colors'))[e.getAttribute('data-tags').split(' ')[0]]}))"""


def sequence_texts_marked(page, theme: str, artifacts: pathlib.Path) -> None:
    """The shape operators' lattices and CFIR (the lattice strategy's ``y = [A; B] x``) show their
    reads (``A(k_A, j_A)``) and lattice points coloured by the loops that iterate them, from the
    parts their printers recorded (none was marked: the patterns looked for ``A[...]``). The
    sequence lattices' points are drawn in the colours of their loops' C (all were one blue), the
    derivations' boxes and the expressions of their texts in the colours of the C their expression
    nodes compute, as a loop program's statement trees are (none was linked): the notebook's
    readability check that follows measures their labels and texts in the theme."""
    view = page.locator(f"{SHOWN_NOTEBOOK} .views-seq").first
    # (the pointer off the views: a C line under it links the point its code came from)
    page.mouse.move(0, 0)
    view.scroll_into_view_if_needed()
    # (the derivations' texts, under their drawings, open: their marks are measured)
    view.evaluate("v => v.querySelectorAll('.artifact[data-kind=\"seq-derivation\"] details')"
                  ".forEach(d => d.open = true)")
    screenshot(page, artifacts / f"views-seq-marked-{theme}.png", full_page=False)
    marked = [m for m in view.evaluate(MARKED_JS) if m["width"] > 0]
    reads = [m for m in marked if re.fullmatch(r"[A-Z]\(\w+, \w+\)", m["text"])]
    points = [m for m in marked if "⊔" in m["text"] and not m["text"].startswith(("lattice", "while", "forall"))]
    assert {m["text"][0] for m in reads} >= {"A", "B"} and points, marked[:8]

    def rgb(hex_colour: str) -> str:
        return "rgb({}, {}, {})".format(*(int(hex_colour[k:k + 2], 16) for k in (1, 3, 5)))
    for m in reads + points:
        assert m["width"] > 10 and m["tags"][0].startswith("lattice:") and m["bg"] == rgb(m["own"]), m
    # the derivations' expressions (6 steps of i's, 5 of j's), each as its expression node's C
    # (the program's accesses carry their tree nodes' tags too: ``C[j]``, which no loop tags, is
    # marked by its node's alone)
    expressions = [m for m in marked if m["tags"][0].startswith("expr:") and m["derivation"]]
    assert len(expressions) == 11 and all(m["width"] > 10 and m["bg"] == rgb(m["own"])
                                          for m in expressions), expressions
    loop = page.locator(f"{SHOWN_NOTEBOOK} .views-loop").first
    # (the derivations' boxes: 11 steps, the 3 loops they become, i's one and j's one per part, and i's 2
    # points, each the colour of its own loop in the C)
    for root, kind, count, prefix in ((view, "seq-lattice", 4, "lattice:"),
                                      (view, "seq-derivation", 16, ("expr:", "lattice:")),
                                      (loop, "notation-tree", 12, "expr:l")):
        nodes = page.evaluate(LINKED_NODES_JS, [root.element_handle(), kind])
        assert len(nodes) == count and all(n["tag"].startswith(prefix) and n["fill"] == n["own"]
                                           for n in nodes), (kind, theme, nodes)
    loop.scroll_into_view_if_needed()
    screenshot(page, artifacts / f"views-loop-program-{theme}.png", full_page=False)


def tree_box_linked_and_zoomed(page, explorer, theme: str, artifacts: pathlib.Path) -> None:
    """The Explorer at its CFIR step (stepped there once): clicking a C line fills the tree's box
    that made it in the link colour, with contrast >= 3 against the pane in the theme; a zoom
    level given to the tree is its level again after stepping away and back (the pane is drawn
    anew each time)."""
    from explorer.linking import LINK_COLOR

    explorer.scroll_into_view_if_needed()
    cfir = '.ss-drawing .artifact[data-kind="cfir"]'
    for _ in range(3):
        # (the header changes first: the drawing pane follows in a message of its own)
        header = explorer.locator(".ss-header").first.inner_html()
        if re.search(r"\bcfir\b", explorer.locator(".ss-header").first.inner_text()):
            break
        explorer.locator(".ss-next").first.click()
        page.wait_for_function("([el, old]) => el.innerHTML !== old",
                               arg=[explorer.locator(".ss-header").first.element_handle(), header], timeout=patient(15_000))
    tree = explorer.locator(cfir).first
    tree.wait_for(state="attached", timeout=patient(30_000))
    lines = explorer.locator(".ss-c span.ln[data-tags]")
    firsts = lines.evaluate_all("ls => ls.map(l => l.getAttribute('data-tags').split(' ')[0])")
    k, tag = next(((k, t) for k, t in enumerate(firsts) if tree.locator(f'svg g.node[data-tags~="{t}"]').count()),
                  (None, None))
    assert tag is not None, f"no C line ({len(firsts)} tagged) links a box of the CFIR tree ({theme})"
    lines.nth(k).scroll_into_view_if_needed()
    lines.nth(k).click()
    fill = ("([root, sel, color]) => { const g = root.querySelector(sel); "
            "return !!g && g.querySelector('polygon, ellipse, path, rect').getAttribute('fill') === color; }")
    page.wait_for_function(fill, arg=[explorer.element_handle(), f'{cfir} svg g.node[data-tags~="{tag}"]', LINK_COLOR],
                           timeout=patient(30_000))
    # (the kernel redraws the pane with the tag chosen: measure the box drawn last)
    page.wait_for_timeout(500)
    node = explorer.locator(f'{cfir} svg g.node[data-tags~="{tag}"]').first
    filled = node.evaluate(FILL_CONTRAST_JS)
    assert filled["fill"] == LINK_COLOR and filled["ratio"] >= 3, (theme, filled)
    screenshot(page, artifacts / f"views-tree-linked-{theme}.png", full_page=False)
    if theme != "light":
        return
    tree = explorer.locator(cfir).first
    tree.locator(".ss-zoom-100").click()
    tree.locator(".ss-zoom-in").click()
    assert tree.evaluate(ZOOM_JS)["level"] == "110%"
    for button in (".ss-next", ".ss-prev"):
        header = explorer.locator(".ss-header").first.inner_html()
        explorer.locator(button).first.click()
        page.wait_for_function("([el, old]) => el.innerHTML !== old",
                               arg=[explorer.locator(".ss-header").first.element_handle(), header], timeout=patient(15_000))
    page.wait_for_function("a => a.querySelector('.ss-zoom-level').textContent === '110%'",
                           arg=explorer.locator(cfir).first.element_handle(), timeout=patient(15_000))
    m = explorer.locator(cfir).first.evaluate(ZOOM_JS)
    assert abs(m["width"] - 1.1 * m["own"]) < 1, m
    # back to fit for the measures that follow
    explorer.locator(cfir).first.locator(".ss-zoom-fit").click()


def test_playground_relowers_on_typing_and_switching_strategy(browser, lab, artifacts):
    """Typing an expression and switching the strategy re-render the C pane with the new kernel
    (its text and its height measured); a typo shows the parser's message; the pickers offer every
    level both strategies take; the schedule box offers each strategy's own commands (the lattice's
    TACO commands; the looplets' privatize, for loop programs only: disabled here), measured as rendered."""
    url, token, root = lab
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.goto(f"{url}/lab/tree/playground.ipynb?reset&token={token}", timeout=patient(120_000))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=patient(120_000))
    play = page.locator(f"{SHOWN_NOTEBOOK} .sparsescope-playground").first
    try:
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=patient(120_000))
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        play.wait_for(state="attached", timeout=patient(180_000))
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=patient(180_000))
    except Exception:
        page.screenshot(path=str(artifacts / "playground-failure.png"))
        raise
    play.scroll_into_view_if_needed()
    c = play.locator(".ss-c").first
    shown = "el => ({text: el.innerText, height: el.getBoundingClientRect().height})"

    def wait_for_c(word: str) -> dict:
        page.wait_for_function("([el, w]) => el.innerText.includes(w)", arg=[c.element_handle(), word],
                               timeout=patient(60_000))
        return c.evaluate(shown)

    first = c.evaluate(shown)
    assert "lattice_y" in first["text"] and "z_val" not in first["text"] and first["height"] >= 100
    # the explorer opens at the parse step, which draws the expression tree (it drew nothing): each
    # node's label inside its shape, the drawing inside its pane
    assert "step 0 of" in play.locator(".ss-header").first.inner_text()
    drawing = play.locator(".ss-drawing").first
    screenshot(page, artifacts / "playground-parse.png", full_page=False)
    tree = measure(drawing)
    assert tree["ncount"] >= 6 and not tree["nodes"] and not tree["drawings"], tree
    assert "A[i, j]" in drawing.inner_text() and "sum[j]" in drawing.inner_text()
    # since issue 29 the lattice strategy builds every output level (some through a SparseList it
    # converts): y's level menu offers SparseBand and marks nothing
    # (ipywidgets draws an option's spaces as no-break spaces)
    options = lambda: [o.replace("\xa0", " ") for o in play.locator(".ss-level-y-0 select option").all_inner_texts()]
    assert "SparseBand" in options() and not [o for o in options() if o.startswith("✗")]
    assert play.locator(".ss-schedule").first.is_visible()
    offered = lambda: play.locator(".ss-schedule-commands button").all_inner_texts()  # noqa: E731
    assert offered() == ["reorder", "precompute", "parallelize", "split", "fuse", "pos"]

    # a typo: the parser's message and caret under the box, the kernel stays
    box = play.locator(".ss-expression input").first
    box.fill("y[i] = A[i, j] * * x[j]")
    box.press("Enter")
    error = play.locator(".ss-parse-error").first
    error.wait_for(state="visible", timeout=patient(30_000))
    assert "unexpected '*'" in error.inner_text() and "^" in error.inner_text()
    assert "Traceback" not in error.inner_text() and c.evaluate(shown)["text"] == first["text"]

    # a new expression: the C pane shows its kernel
    box.fill("y[i] = A[i, j] * x[j] * z[j]")   # an expression both strategies lower
    t0 = time.perf_counter()
    box.press("Enter")
    typed = wait_for_c("z_val")
    took = [time.perf_counter() - t0]
    assert "lattice_y" in typed["text"] and typed["height"] >= 100
    assert not error.is_visible()
    screenshot(page, artifacts / "playground-typed.png", full_page=False)

    # the strategy toggle: the looplet kernel of the same expression, and the looplets' schedule box
    t0 = time.perf_counter()
    play.locator(".ss-strategy button", has_text="looplets").first.click()
    switched = wait_for_c("y_kernel")
    took.append(time.perf_counter() - t0)
    print("playground: a new expression, then the looplet strategy, re-lowered and shown in "
          + ", ".join(f"{t:.3f}" for t in took) + " s (compiling the C included unless cached)")
    assert "z_val" in switched["text"] and "lattice_y" not in switched["text"] and switched["height"] >= 100
    editor = play.locator(".ss-schedule textarea").first
    box_shown = editor.evaluate("el => { const r = el.getBoundingClientRect(); return {width: r.width, "
                                "height: r.height, value: el.value, placeholder: el.placeholder}; }")
    assert box_shown["width"] >= 200 and box_shown["height"] >= 40 and box_shown["value"] == "", box_shown
    # (privatize applies to loop programs only: index notation's box is disabled and says so, its
    # button shown disabled, so the row keeps its height)
    assert box_shown["placeholder"] == "no command of the looplets strategy's schedule applies to index notation"
    assert editor.is_disabled() and offered() == ["privatize"]
    first_button = play.locator(".ss-schedule-commands button").first
    button = first_button.bounding_box()
    assert button["width"] > 20 and button["height"] > 10 and first_button.is_disabled(), button
    help_text = play.locator(".ss-schedule-help").first.inner_text()
    assert help_text == ("the looplets strategy's schedule takes no command for index notation; "
                         "privatize(tensor, copies=4, workspace=True) applies to loop programs only")
    assert "SparseBand" in options() and not any(o.startswith("✗") for o in options())
    changed = play.locator(".ss-what-changed").first.inner_text()
    assert "only looplets" in changed and "looplet nest" in changed
    screenshot(page, artifacts / "playground-looplets.png", full_page=False)
    play.locator(".ss-what-changed").first.scroll_into_view_if_needed()
    screenshot(page, artifacts / "playground-what-changed.png", full_page=False)
    assert_readable(measure(play), "the playground", panes=2)
    page.close()


def test_a_c_line_picks_the_array_node_it_computes(browser, artifacts):
    """The Explorer's panes at the array step of ``y = [A; B] x`` (looplets), on a page of their own
    with the widget's hidden pick box: clicking a C line writes first the tag of the box of the
    array expression it computes, which the kernel side selects (Explorer.pick_tags); the line's
    first tag is a looplet's, which the drawing names nowhere (the C linked no box). The kernel
    side selects every box the line came from (``B``'s and the concat's), and its redraw outlines
    them all (it selected one tag: one box outlined)."""
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss
    from compiler import array as xp
    from widgets import Explorer

    A, B = (sp.random(n, 5, density=0.4, format="csr", random_state=k) for k, n in enumerate((6, 4)))
    expr = xp.concat([ss.asarray(A, name="A"), ss.asarray(B, name="B")], axis=0) @ ss.asarray(np.arange(5.0), name="x")
    kernel = ss.lower(expr, strategy="looplets")
    e = Explorer(kernel.trace)
    at = e.session.stages().index("array")
    panes = e.render(at)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.set_content(f'<div class="ss-pick-root"><div class="ss-pick"><input></div>'
                     f'<div class="ss-drawing">{panes["artifact"]}</div>'
                     f'<div class="ss-c" style="max-height:400px;overflow:auto">{panes["c"]}</div></div>')
    drawn = {t for ts in page.locator(".ss-drawing svg g.node[data-tags]").evaluate_all(
        "gs => gs.map(g => g.getAttribute('data-tags'))") for t in ts.split()}
    assert drawn and all(t.startswith("expr:") for t in drawn), drawn
    lines = page.locator(".ss-c span.ln[data-tags]")
    every = [t.split() for t in lines.evaluate_all("ls => ls.map(l => l.getAttribute('data-tags'))")]
    k = next(k for k, tags in enumerate(every) if tags[0] not in drawn and set(tags) & drawn)
    line, tags = lines.nth(k), every[k]
    number = line.get_attribute("data-line")
    line.scroll_into_view_if_needed()
    line.click()
    value = page.locator(".ss-pick input").input_value()
    picked = value.split("|")[0].split()
    assert picked[0] == next(t for t in tags if t in drawn) and sorted(picked) == sorted(tags), (tags, picked)
    e.pick.value = value
    assert e.provenance.value == picked[0]
    page.screenshot(path=str(artifacts / "views-array-c-picked.png"), full_page=True)
    # the kernel's answer: every box the line came from selected and outlined, as the exported
    # page outlines them (the widget selected the first, and its redraw outlined B's box alone)
    from_line = [t for t in tags if t in drawn]
    shown = page.evaluate("""() => [...document.querySelectorAll('.ss-drawing svg g.node[data-tags]')]
        .map(g => [g.querySelector('title').textContent, g.getAttribute('data-tags').split(' ')])""")
    want = sorted(title for title, ts in shown if set(ts) & set(from_line))
    boxes = answered_boxes(page, e.render(at))
    outlined = sorted(title for title, _, linked in boxes if linked)
    assert len(want) >= 2 and outlined == want, (want, outlined)
    assert e.selected_tags == tuple(from_line), (from_line, e.selected_tags)
    assert from_line[0] in e.provenance_legend.value and all(t in e.provenance_legend.value for t in from_line)
    page.screenshot(path=str(artifacts / "views-array-c-picked-answered.png"), full_page=True)
    # clicking the line again goes on to the first of its tags alone; the redrawn line shows that
    # tag alone, so a third click goes back to every tag (as a part with one tag does)
    seen = []
    for _ in range(2):
        line = page.locator(f'.ss-c span.ln[data-line="{number}"]')
        line.scroll_into_view_if_needed()
        line.click()
        e.pick.value = page.locator(".ss-pick input").input_value()
        seen.append(e.selected_tags)
        boxes = answered_boxes(page, e.render(at))
        outlined = sorted(title for title, _, linked in boxes if linked)
        assert outlined == sorted(title for title, ts, _ in boxes if set(ts) & set(e.selected_tags)), (seen, outlined)
    assert seen == [(from_line[0],), ()], seen
    shapes_table_reads_in_the_drawing_pane(page, artifacts)
    page.close()


# Each cell of the shapes tables under ``root``: its text, how many lines it takes, and each
# ``->`` of it broken across two lines (its "-" ending one line, its ">" starting the next).
EXTENTS_JS = r"""
(root) => [...root.querySelectorAll('table.ss-extents td')].map(td => {
  const tops = r => new Set([...r.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top))).size;
  const whole = document.createRange(); whole.selectNodeContents(td);
  const broken = [], walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode())
    for (let k = n.textContent.indexOf('->'); k >= 0; k = n.textContent.indexOf('->', k + 2)) {
      const r = document.createRange(); r.setStart(n, k); r.setEnd(n, k + 2);
      if (tops(r) > 1) broken.push(n.textContent.slice(Math.max(0, k - 10), k + 4));
    }
  const style = getComputedStyle(td);
  return {text: td.textContent, lines: tops(whole), broken, extent: !td.previousElementSibling,
          leading: parseFloat(style.lineHeight) / parseFloat(style.fontSize)};
})
"""


def shapes_table_reads_in_the_drawing_pane(page, artifacts) -> None:
    """The ``shapes`` step's table of extents of notebook 10's ``y = [A; B; C] x`` (20000, 10000
    and 5000 rows; empty here) in a drawing pane 480 px wide, in the 28 px line height ipywidgets
    sets: each extent on one line, no ``->`` of a binding broken after its "-", and the lines of
    a wrapped cell as close as text's (in a window 1500 px wide the notebook drew "|k| ="
    over "20000", "|i| =" over "35000", and "(k, l, m) -" over "> i": its 518 px pane, in
    JupyterLab's code font, is narrower than the table, as 480 px is in this page's fonts; and the
    source's two halves stood 28 px apart, as two rows)."""
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss
    from compiler import array as xp
    from widgets import Explorer

    stacked = [ss.asarray(sp.csr_matrix((n, 20000)), name=name) for n, name in ((20000, "A"), (10000, "B"), (5000, "C"))]
    e = Explorer(ss.lower(xp.concat(stacked, axis=0) @ ss.asarray(np.zeros(20000), name="x"), strategy="looplets").trace)
    at = e.session.stages().index("shapes")
    # (in the line height ipywidgets gives a widget's HTML, 28 px)
    page.set_content(f'<div class="ss-drawing widget-html-content" style="width:480px;font:13px sans-serif;line-height:28px">'
                     f'{e.render(at)["artifact"]}</div>')
    cells = page.evaluate(EXTENTS_JS, page.locator(".ss-drawing").element_handle())
    page.screenshot(path=str(artifacts / "views-shapes-table-narrow.png"), full_page=True)
    assert len(cells) >= 8 and any("->" in c["text"] for c in cells), cells
    assert all(c["lines"] == 1 for c in cells if c["extent"]), [c for c in cells if c["extent"] and c["lines"] > 1]
    assert not [b for c in cells for b in c["broken"]], [c for c in cells if c["broken"]]
    # a cell wrapped over lines reads as one: its lines as close as text's (the pane's 28 px
    # set 12 px text 2.3 lines apart, and a source's two halves read as two rows)
    assert all(c["leading"] <= 1.5 for c in cells), sorted({round(c["leading"], 2) for c in cells})


def answered_boxes(page, panes: dict) -> list[tuple[str, list[str], bool]]:
    """The Explorer's panes (``Explorer.render``) shown on ``page`` as the kernel's answer: each
    array-expression box's title, tags and whether it is outlined in the link colour."""
    from explorer.linking import LINK_COLOR

    page.set_content(f'<div class="ss-pick-root"><div class="ss-pick"><input></div>'
                     f'<div class="ss-drawing">{panes["artifact"]}</div>'
                     f'<div class="ss-c" style="max-height:400px;overflow:auto">{panes["c"]}</div></div>')
    return [(title, tags.split(), stroke == LINK_COLOR) for title, tags, stroke in page.evaluate(
        """() => [...document.querySelectorAll('.ss-drawing svg g.node')].map(g => [g.querySelector('title').textContent,
             g.getAttribute('data-tags') || '', g.querySelector('polygon, ellipse, path, rect').getAttribute('stroke')])""")]
