"""The course notebooks in JupyterLab in headless Chromium: notebook 01's explorer stepped, the
tour run through by both strategies, and the tour as saved, drawn before any cell runs; and the
linked steps the notebooks show, clicked in the classic notebook interface."""

from __future__ import annotations

import re
import time

from browser_linked import OUTLINED_C_JS, linked_steps_outline_their_c
from browser_measure import (MISSING_GLYPHS_JS, SAVED_STATE_JS, SCROLL_END_JS, SHOWN, SHOWN_NOTEBOOK, TIMING_JS,
                             assert_columns_line_up, assert_readable, assert_timings_read, measure, pane_html,
                             patient, screenshot, set_theme)


# the views JupyterLab draws from a notebook's stored widget state
SAVED_VIEWS = f"{SHOWN_NOTEBOOK} .sparsescope-explorer, {SHOWN_NOTEBOOK} .sparsescope-compare"


def open_saved(page, url: str, token: str, name: str, views: int, attempts: int = 3):
    """Open notebook ``name`` as saved and wait until ``views`` of its views (Explorers and
    Compares) are drawn from its stored widget state, or one cannot be; its notebook element.

    JupyterLab's widget manager (jupyterlab_widgets 3) draws no stored view before the notebook's
    kernel has started and answered which widgets it holds: the views wait on the kernel. On a
    loaded machine that restore can fail while the kernel starts (ipywidgets' race): every view
    stays "Loading widget..." (the tour's Compare was waited on for 480 s in 3 of 5 runs at load
    13, the kernel idle) or one reads "model not found" although the notebook stores it. So this
    waits for the kernel first, then for the views, and opens the notebook again when they were
    not all drawn (at most ``attempts`` times); what the caller checks is unchanged."""
    for attempt in range(attempts):
        page.goto(f"{url}/lab/tree/{name}?reset&token={token}", timeout=patient(120_000))
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=patient(120_000))
        notebook = page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook").first
        # (what the views wait on: the kernel JupyterLab starts for the notebook)
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=patient(120_000))
        try:
            page.wait_for_function("([sel, nb, n]) => document.querySelectorAll(sel).length >= n"
                                   " || nb.innerText.includes('Error displaying widget')",
                                   arg=[SAVED_VIEWS, notebook.element_handle(), views], timeout=patient(60_000))
        except Exception:
            if attempt + 1 == attempts:
                raise
            continue
        if "Error displaying widget" not in notebook.inner_text():
            break
    return notebook


def test_explorer_notebook_steps_in_jupyterlab(browser, lab, artifacts):
    url, token, root = lab
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    page.goto(f"{url}/lab/tree/explorer.ipynb?reset&token={token}", timeout=patient(120_000))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=patient(120_000))
    try:
        # the kernel is connected once the status bar says so; then Run > Run All Cells
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=patient(120_000))
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        explorer = page.locator(SHOWN).first
        # attached, not visible: JupyterLab hides cells scrolled out of view
        explorer.wait_for(state="attached", timeout=patient(180_000))
        explorer.scroll_into_view_if_needed()
        explorer.wait_for(state="visible", timeout=patient(30_000))
        # clicks are handled by the kernel: let the remaining cells finish first
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=patient(180_000))
    except Exception:
        page.screenshot(path=str(artifacts / "explorer-failure.png"))
        raise

    header0 = pane_html(page, "ss-header")
    program0, drawing0 = pane_html(page, "ss-program"), pane_html(page, "ss-drawing")
    screenshot(page, artifacts / "explorer-step-0.png", full_page=False)

    # step forward until the drawing and the program pane have both changed
    next_button = explorer.locator(".ss-next")
    changed_program = changed_drawing = False
    for _ in range(12):
        next_button.click()
        page.wait_for_function(
            "([sel, old]) => document.querySelector(sel).innerHTML !== old",
            arg=[f"{SHOWN} .ss-header", header0], timeout=patient(30_000))
        header0 = pane_html(page, "ss-header")
        changed_program = changed_program or pane_html(page, "ss-program") != program0
        changed_drawing = changed_drawing or pane_html(page, "ss-drawing") != drawing0
        if changed_program and changed_drawing:
            break
    explorer.scroll_into_view_if_needed()
    screenshot(page, artifacts / "explorer-stepped.png", full_page=False)
    assert changed_drawing, "stepping never changed the drawing pane"
    assert changed_program, "stepping never changed the program pane"
    assert "<svg" in pane_html(page, "ss-drawing")
    assert "spmv" in pane_html(page, "ss-c")  # the generated C is shown
    # the whole notebook: its explorer and render_step's fiber trees (one of 2000 rows)
    assert_readable(measure(page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook").first), "notebook 01", panes=4)

    page.close()


def test_tour_steps_both_strategies(browser, lab, artifacts):
    """The tour's "done when": step CSR SpMV by both strategies, see lattices, looplet nests,
    the C, and the timing against scipy."""
    url, token, root = lab
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    page.goto(f"{url}/lab/tree/tour.ipynb?reset&token={token}", timeout=patient(120_000))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=patient(120_000))
    try:
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=patient(120_000))
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        explorers = page.locator(SHOWN)
        explorers.nth(1).wait_for(state="attached", timeout=patient(240_000))
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=patient(240_000))
        page.locator("table.timing").first.wait_for(state="attached", timeout=patient(60_000))
    except Exception:
        page.screenshot(path=str(artifacts / "tour-failure.png"))
        raise

    def step_until(explorer, needle: str, limit: int = 40, where: str = ".ss-drawing") -> bool:
        explorer.scroll_into_view_if_needed()
        drawing = explorer.locator(where).first
        for _ in range(limit):
            if needle in drawing.inner_html():
                return True
            header = explorer.locator(".ss-header").first.inner_html()
            explorer.locator(".ss-next").first.click()
            try:
                page.wait_for_function("([el, old]) => el.innerHTML !== old",
                                       arg=[explorer.locator(".ss-header").first.element_handle(), header],
                                       timeout=patient(15_000))
            except Exception:
                return needle in drawing.inner_html()  # the last step: nothing changes any more
        return False

    lattice, looplets = explorers.nth(0), explorers.nth(1)
    # the side-by-side view: both strategies' C and drawings, each pane showing what it holds
    compare = page.locator(f"{SHOWN_NOTEBOOK} .sparsescope-compare").first
    compare.scroll_into_view_if_needed()
    screenshot(page, artifacts / "tour-compare.png", full_page=False)
    assert_readable(measure(compare), "the tour's Compare", panes=4)
    assert_columns_line_up(compare, "the tour's Compare")

    assert step_until(lattice, 'data-kind="lattice"'), "no lattice drawn while stepping the lattice lowering"
    assert "<svg" in lattice.locator(".ss-drawing").first.inner_html()
    assert "lattice_y" in lattice.locator(".ss-c").first.inner_html()
    screenshot(page, artifacts / "tour-lattice.png", full_page=False)
    assert_readable(measure(lattice), "the tour's lattice explorer", panes=3)

    # redrawing a step, seen from the browser (a click, the kernel's answer, the new panes)
    header = lattice.locator(".ss-header").first
    times = []
    for _ in range(3):
        old = header.inner_html()
        t0 = time.perf_counter()
        lattice.locator(".ss-prev").first.click()
        page.wait_for_function("([el, old]) => el.innerHTML !== old", arg=[header.element_handle(), old],
                               timeout=patient(15_000))
        times.append(time.perf_counter() - t0)
    print("tour: redrawing a step in the browser took " + ", ".join(f"{t:.3f}" for t in times) + " s")
    assert step_until(looplets, 'data-kind="looplet-nest"'), "no looplet nest drawn while stepping"
    assert step_until(looplets, "Stepper"), "the nest of a CSR row (a Stepper of Spikes) was never drawn"
    assert "y_kernel" in looplets.locator(".ss-c").first.inner_html()
    looplets.scroll_into_view_if_needed()
    screenshot(page, artifacts / "tour-looplets.png", full_page=False)
    # at a lower:* step the looplet being lowered and its C are marked together: its C lines
    # carry the focus bar, the pane has scrolled them into view, and the nest's node of the
    # same tag is outlined in the focus colour, filled in its lines' colour
    from explorer.renderers import FOCUS_COLOR

    assert step_until(looplets, "ss-focus", where=".ss-c"), "no lower:* step marked its C"
    assert "lower:" in looplets.locator(".ss-header").first.inner_text()
    # come to it again with the C pane scrolled to its end: the pane scrolls back to the focus
    header = looplets.locator(".ss-header").first
    for button in (".ss-prev", ".ss-next"):
        old = header.inner_html()
        if button == ".ss-next":
            # the header is redrawn before the C pane (one widget message each): scroll the pane
            # itself, which stays, once the previous step's C has filled it, not a line that the
            # C's redraw may just have replaced (that read as "does not scroll" under CI)
            try:
                page.wait_for_function(SCROLL_END_JS, arg=looplets.locator(".ss-c").first.element_handle(),
                                       timeout=patient(15_000))
            except Exception:
                raise AssertionError("the C pane does not scroll") from None
        looplets.locator(button).first.click()
        page.wait_for_function("([el, old]) => el.innerHTML !== old", arg=[header.element_handle(), old],
                               timeout=patient(15_000))
    at_focus = [looplets.element_handle(), FOCUS_COLOR]
    page.wait_for_function("arg => { const m = (FOCUS_JS)(arg); return m && m.inView; }"
                           .replace("FOCUS_JS", FOCUS_JS.strip()), arg=at_focus, timeout=patient(10_000))
    focus = page.evaluate(FOCUS_JS, at_focus)
    assert focus["lines"] and focus["filled"], f"the lowered looplet and its C are not marked together: {focus}"
    screenshot(page, artifacts / "tour-lower-step-focus.png", full_page=False)

    # provenance: clicking a coloured C line (its inline handler writes the hidden pick box, the
    # kernel answers) selects that line's tag in the menu and recolours the program pane
    select = looplets.locator(".ss-provenance select").first
    assert select.input_value() == "all"   # the menu's entries are labels
    program = looplets.locator(".ss-program").first
    program_all = program.inner_html()
    part = looplets.locator(".ss-c [data-tags]").first
    tags = part.get_attribute("data-tags").split()
    part.scroll_into_view_if_needed()
    part.click()
    page.wait_for_function("el => el.value !== 'all'", arg=select.element_handle(), timeout=patient(30_000))
    # (a C line selects the first of its tags the drawing names, else its first)
    drawn = next((t for t in tags if looplets.locator(f'.ss-drawing svg g.node[data-tags~="{t}"]').count()), tags[0])
    assert select.input_value().split(" (")[0] == drawn   # "looplet:Stepper:4 (A on j)"
    page.wait_for_function("([el, old]) => el.innerHTML !== old",
                           arg=[program.element_handle(), program_all], timeout=patient(30_000))
    screenshot(page, artifacts / "tour-provenance-picked.png", full_page=False)
    timing = page.locator("table.timing").first.inner_html()
    assert "scipy" in timing

    # the playground: choosing another format in a picker re-lowers, and the C pane changes
    playground = explorers.nth(2)
    playground.scroll_into_view_if_needed()
    c_pane = playground.locator(".ss-c").first
    # the notebook itself set the preset to dcsr (a checked cell); go back to csr first
    before = c_pane.inner_html()
    t0 = time.perf_counter()
    playground.locator(".ss-preset-A select").first.select_option(label="csr")
    page.wait_for_function("([el, old]) => el.innerHTML !== old",
                           arg=[c_pane.element_handle(), before], timeout=patient(60_000))
    relower = [time.perf_counter() - t0]
    csr_c = c_pane.inner_html()
    assert "A0_pos" not in csr_c and "A1_pos" in csr_c
    t0 = time.perf_counter()
    playground.locator(".ss-level-A-0 select").first.select_option(label="SparseList")  # DCSR
    page.wait_for_function("([el, old]) => el.innerHTML !== old",
                           arg=[c_pane.element_handle(), csr_c], timeout=patient(60_000))
    relower.append(time.perf_counter() - t0)
    print("tour: re-lowering after a format change (dcsr -> csr, csr -> dcsr), in the browser, took "
          + ", ".join(f"{t:.3f}" for t in relower) + " s (the kernels were compiled before, so cached)")
    assert "A0_pos" in c_pane.inner_html()
    assert playground.locator(".ss-preset-A select").first.evaluate(
        "el => el.options[el.selectedIndex].text") == "dcsr"
    screenshot(page, artifacts / "tour-format-picker.png", full_page=False)
    page.close()


# At a lower:* step: the C lines with the focus bar (their tags), whether the first is inside
# the C pane's visible part, and the drawing nodes of those tags outlined in the focus colour and
# filled in the colour of those lines (one colour for one thing, as the program's part is).
FOCUS_JS = r"""
([root, focus]) => {
  const lines = [...root.querySelectorAll('.ss-c span.ln.ss-focus')];
  if (!lines.length) return null;
  const tags = new Set(lines.flatMap(l => (l.getAttribute('data-tags') || '').split(' ').filter(Boolean)));
  let box = null;
  for (let b = lines[0].parentElement; b; b = b.parentElement) {
    const o = getComputedStyle(b).overflowY;
    if ((o === 'auto' || o === 'scroll') && b.scrollHeight > b.clientHeight + 1) { box = b; break; }
  }
  const view = box ? box.getBoundingClientRect() : {top: 0, bottom: innerHeight};
  const r = lines[0].getBoundingClientRect();
  const backgrounds = new Set(lines.map(l => getComputedStyle(l).backgroundColor));
  const filled = [...root.querySelectorAll('.ss-drawing svg g.node[data-tags]')]
    .filter(g => g.getAttribute('data-tags').split(' ').some(t => tags.has(t)))
    .filter(g => { const s = g.querySelector('polygon, ellipse, path, rect');
                   return s && (s.getAttribute('stroke') || '').toLowerCase() === focus.toLowerCase()
                     && backgrounds.has(getComputedStyle(s).fill); })
    .map(g => (g.querySelector('title') || {}).textContent);
  return {lines: lines.length, tags: [...tags], filled, inView: r.top >= view.top - 1 && r.bottom <= view.bottom + 1,
          scrollTop: box ? box.scrollTop : null};
}
"""


# the saved tour's panes that hold code or a drawing: the lattice Explorer at the lattice of j
# (program, diff, drawing, C), the other Explorers at step 0, which has drawn nothing yet
# (program, diff, C: the looplets', the format pickers', the Playground's), Compare's two C and
# two drawings, and the Playground's "what changed"
SAVED_TOUR_PANES = 18


def test_tour_shows_its_widgets_before_any_cell_runs(browser, lab, artifacts):
    """Opened and not run, the tour draws its Explorer and Compare from the widget state stored
    in the notebook: the C pane is at least 100 px tall (before, without the stored state, each
    widget output was only the text "Loading widget..." until the cells ran)."""
    url, token, root = lab
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    try:
        # (the views are drawn one by one: a loaded machine had drawn 3 of 5 when they were counted)
        open_saved(page, url, token, "tour-saved.ipynb", views=5)
        compare = page.locator(f"{SHOWN_NOTEBOOK} .sparsescope-compare").first
        explorer = page.locator(SHOWN).first
        c_pane = explorer.locator(".ss-c").first
        c_pane.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        box = c_pane.bounding_box()
        assert box and box["height"] >= 100, f"the Explorer's C pane drew {box}"
        assert "lattice_y" in c_pane.inner_html() or "y_kernel" in c_pane.inner_html()
        assert compare.locator(".ss-c").count() == 2, "Compare's two C panes"
        # one note per view says it is a saved view, instead of a red icon on each of its widgets
        assert "Error displaying widget" not in page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook").first.inner_text()
        state = page.evaluate(SAVED_STATE_JS, page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook").first.element_handle())
        assert state["marked"] > 0 and state["views"] >= 5, f"the tour's views are not drawn from saved state: {state}"
        assert state["icons"] == 0, f"ipywidgets' disconnected icons show in the saved views: {state}"
        assert state["notes"] == state["views"], f"each saved view should say once that it is saved: {state}"
        screenshot(page, artifacts / "tour-saved.png")
        # every view as saved (two Explorers, Compare, the format pickers' Explorer, the
        # Playground's): each pane >= 100 px, labels inside their shapes, code readable
        notebook = page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook").first
        compare.scroll_into_view_if_needed()
        assert_columns_line_up(compare, "the saved tour's Compare")
        screenshot(page, artifacts / "tour-saved-compare.png")
        assert page.locator(SHOWN).count() >= 4, "the saved tour's Explorers"
        assert_readable(measure(notebook), "the saved tour (light)", panes=SAVED_TOUR_PANES)
        # the fiber tree of section 1, as saved, in the dark theme: an inline drawing on the
        # theme's background (a bare SVG output was an image the theme cannot reach, a white box)
        set_theme(page, "JupyterLab Dark")
        tree = page.locator(f"{SHOWN_NOTEBOOK} .jp-Cell").nth(4).locator(".jp-OutputArea-output").first
        tree.scroll_into_view_if_needed()
        screenshot(page, artifacts / "tour-saved-fiber-tree-dark.png")
        m = measure(tree)
        assert m["dcount"] == 1 and m["lcount"] >= 5, f"the fiber tree is not an inline drawing: {m}"
        assert_readable(m, "the tour's fiber tree (dark)")
        assert_readable(measure(notebook), "the saved tour (dark)", panes=SAVED_TOUR_PANES)
        compare.scroll_into_view_if_needed()
        screenshot(page, artifacts / "tour-saved-compare-dark.png")
        # notebooks 01 and 10 as saved, on the same page, each opened once and read in both themes (from
        # the dark the tour left); then the course notebooks, in the theme their stale timings could not be read in
        themes = ("dark", "light")
        saved_notebook_reads(page, url, token, "explorer-saved.ipynb", themes, artifacts, timings=1)
        saved_notebook_reads(page, url, token, "shapes-saved.ipynb", themes[::-1], artifacts, timings=2)
        for name, views, plots in SAVED_COURSE:
            saved_course_notebook_reads(page, url, token, name, views, plots, artifacts)
    except Exception:
        page.screenshot(path=str(artifacts / "tour-saved-failure.png"))
        raise
    finally:
        set_theme(page, "JupyterLab Light")
        page.close()


# notebooks 07 and 09 as they ship (conftest's lab serves them as NN-saved.ipynb): each one's views
# (Explorers and Compares) and timing plots. (03-08 stored no widget state either: their other
# views are the same Explorer, and tests/test_notebooks.py checks every notebook stores its widgets.)
SAVED_COURSE = (("07-saved.ipynb", 4, 5), ("09-saved.ipynb", 0, 7))


def saved_course_notebook_reads(page, url: str, token: str, name: str, views: int, plots: int, artifacts) -> None:
    """Course notebook ``name`` as saved, opened before any cell runs, in the dark theme: its
    ``views`` widgets are drawn from their stored state (07 stored none: each read "Error
    displaying widget: model not found"), no character is drawn as a box, every pane and drawing
    reads (:func:`assert_readable`), and its ``plots`` timings read (07's and 09's were stale
    outputs: row names cut at the plot's left edge, the checks' green of contrast 3.7; 09's seven
    decades drew "10 ms" into "100 ms")."""
    notebook = open_saved(page, url, token, name, views)
    page.wait_for_function("([nb, n]) => nb.querySelectorAll('.ss-saved-note').length >= n",
                           arg=[notebook.element_handle(), views], timeout=patient(60_000))
    assert "Error displaying widget" not in notebook.inner_text(), f"{name}: a widget is not drawn"
    state = page.evaluate(SAVED_STATE_JS, notebook.element_handle())
    assert state["views"] == views and state["notes"] == views and state["icons"] == 0, (name, state)
    assert not page.evaluate(MISSING_GLYPHS_JS, notebook.element_handle()), f"{name}: characters drawn as boxes"
    if views:
        page.locator(f"{SHOWN_NOTEBOOK} .ss-saved-note").last.scroll_into_view_if_needed()
        screenshot(page, artifacts / f"saved-{name[:2]}-view-dark.png")
    if plots:
        notebook.locator("table.timing").first.scroll_into_view_if_needed()
        screenshot(page, artifacts / f"saved-{name[:2]}-timing-dark.png")
    assert_timings_read(page.evaluate(TIMING_JS, notebook.element_handle()), f"{name} (dark)", plots=plots)
    assert_readable(measure(notebook), f"{name} as saved (dark)", panes=2 * views)   # (program, C or drawing)


def saved_notebook_reads(page, url: str, token: str, name: str, themes: tuple, artifacts, timings: int) -> None:
    """Notebook ``name`` as saved (01 or 10), opened before any cell runs (in ``themes[0]``, the page's theme), then
    read in each of ``themes``: its two Explorers are drawn from their stored state (each said "Error displaying
    widget: model not found": the notebooks stored none), each linked step shows a drawing and the C its parts
    link to (01's showed a hand-recorded trace's step with no C, 10's a materialize step with neither: step 0
    of a trace whose first step changed), clicking 01's ``*`` outlines its C lines, 10's lattice
    strategy's Explorer opens at its CFIR with each loop's box linked to the C beside it, and, in each theme, the
    timings read: no character drawn as a box, no row name cut at the plot's left edge (10's "unfused (stack, then SpMV)"
    read "ed (stack, then SpMV)"), every text of contrast >= 4.5 (the checks' green was 3.7 on the
    dark theme). (Opened once: each opening reloads JupyterLab and starts a kernel, about 8 CPU s of the suite's.)"""
    notebook = open_saved(page, url, token, name, views=2)
    page.locator(f"{SHOWN_NOTEBOOK} .ss-saved-note").nth(1).wait_for(state="attached", timeout=patient(60_000))
    assert "Error displaying widget" not in notebook.inner_text(), f"{name}: a widget is not drawn"
    state = page.evaluate(SAVED_STATE_JS, notebook.element_handle())
    assert state["views"] == 2 and state["notes"] == 2 and state["icons"] == 0, (name, state)
    # (each note began with a box: no font here has U+24D8, "ⓘ")
    assert not page.evaluate(MISSING_GLYPHS_JS, notebook.element_handle()), f"{name}: characters drawn as boxes"
    steps = notebook.locator(".ss-linked-step")
    assert steps.count() == 1, name
    step = steps.first
    assert step.locator(".artifact svg g.node").count() >= 3, f"{name}: the linked step draws nothing"
    assert step.locator(".c-section span.ln[data-tags]").count() >= 3, f"{name}: the linked step has no linked C"
    if name.startswith("explorer"):   # (the parse of SpMV: its *, computed by the line adding into the sum)
        step.scroll_into_view_if_needed()
        star = step.locator('svg g.node[data-tags]', has_text="*").first
        star.scroll_into_view_if_needed()
        page.mouse.move(0, 0)
        star.click()
        page.wait_for_function("s => s.querySelector('.c-section span.ln.ss-linked')", arg=step.element_handle(),
                               timeout=patient(10_000))
        outlined = step.evaluate(OUTLINED_C_JS)
        assert outlined and all("A_val[" in x["code"] for x in outlined), (name, outlined)
        step.locator(".step-header").first.click()
    lattice = page.locator(SHOWN).nth(1)
    if name.startswith("shapes"):
        # the lattice strategy's Explorer opens at its CFIR, each loop's box linked with the C beside
        # it (it showed a trace of the sequence stages alone: no C, nothing linked)
        assert re.search(r"\bcfir\b", lattice.locator(".ss-header").first.inner_text()), name
        boxes = lattice.locator('.ss-drawing .artifact[data-kind="seq-cfir"] svg g.node[data-tags]')
        firsts = set(boxes.evaluate_all("gs => gs.map(g => g.getAttribute('data-tags').split(' ')[0])"))
        lines = lattice.locator(".ss-c span.ln[data-tags]").evaluate_all(
            "ls => ls.flatMap(l => l.getAttribute('data-tags').split(' '))")
        assert len(firsts) >= 3 and firsts <= set(lines), (name, firsts, sorted(set(lines)))
    for k, theme in enumerate(themes):
        if k:
            set_theme(page, f"JupyterLab {theme.title()}")
        step.scroll_into_view_if_needed()
        screenshot(page, artifacts / f"saved-{name[:-6]}-linked-{theme}.png")
        if name.startswith("shapes"):
            saved_array_step_colours_name_its_boxes(page, name, theme)
            lattice.scroll_into_view_if_needed()
            screenshot(page, artifacts / f"saved-{name[:-6]}-lattice-cfir-{theme}.png")
        for t in range(timings):
            table = notebook.locator("table.timing").nth(t)
            table.scroll_into_view_if_needed()
            screenshot(page, artifacts / f"saved-{name[:-6]}-timing-{t}-{theme}.png")
        assert_timings_read(page.evaluate(TIMING_JS, notebook.element_handle()), f"{name} ({theme})", plots=timings)
        assert_readable(measure(notebook), f"{name} as saved ({theme})", panes=6)


# Each tagged part under ``root`` (drawing nodes, program parts, C lines) that is coloured: all its
# tags and its colour (a node's fill, a part's background) as #rrggbb.
TAGGED_COLOURS_JS = r"""
(root) => {
  const hex = c => { const m = c.match(/\d+(\.\d+)?/g) || [];
                     return '#' + m.slice(0, 3).map(v => Math.round(+v).toString(16).padStart(2, '0')).join(''); };
  return [...root.querySelectorAll('g.node[data-tags], span.pv[data-tags], span.ln[data-tags]')].map(el => {
    const shape = el.matches('g') ? el.querySelector('polygon, ellipse, path, rect') : null;
    const colour = shape ? getComputedStyle(shape).fill : getComputedStyle(el).backgroundColor;
    return {tags: el.getAttribute('data-tags').split(' '), colour: /rgba\(.*, 0\)$/.test(colour) ? null : hex(colour),
            text: el.textContent.slice(0, 30)};
  }).filter(p => p.colour);
}
"""


def saved_array_step_colours_name_its_boxes(page, name: str, theme: str) -> None:
    """Notebook 10's looplets Explorer as saved, at its ``array`` step (``y = [A; B; C] x``):
    each program part a box draws is in that box's colour, and each C line in the colour of a box
    or a program part (the program's ``A[k, j]``, ``B[l, j]`` and ``C[m, j]`` were in looplets'
    colours that no box had, and the C in 13 colours, 5 of them naming nothing shown)."""
    view = page.locator(SHOWN).first
    assert re.search(r"\barray\b", view.locator(".ss-header").first.inner_text()), name
    drawing, program, c = (page.evaluate(TAGGED_COLOURS_JS, view.locator(f".ss-{pane}").first.element_handle())
                           for pane in ("drawing", "program", "c"))
    box_of = {t: n["colour"] for n in drawing for t in n["tags"]}
    assert len(box_of) >= 6 and len(program) >= 6, (name, theme, box_of, program)
    wrong = [(p["text"], p["colour"], [box_of[t] for t in p["tags"] if t in box_of]) for p in program
             if any(t in box_of for t in p["tags"]) and p["colour"] not in {box_of[t] for t in p["tags"] if t in box_of}]
    assert not wrong, f"{name} ({theme}): program parts not in their boxes' colours: {wrong}"
    named = set(box_of.values()) | {p["colour"] for p in program}
    stray = sorted({p["colour"] for p in c} - named)
    assert c and not stray, f"{name} ({theme}): C lines in colours nothing else shows: {stray}"


def test_linked_steps_outline_their_c_in_the_classic_notebook(browser, classic, artifacts):
    """Notebooks 01 and 10 show steps linked (``render_step(..., linked=True)``); in the classic
    notebook interface (nbclassic) too, run there, clicking a node outlines exactly its C lines
    and fills it in the link colour, as in JupyterLab (test_browser_views.py): the same four nodes
    of the views notebook's linked steps."""
    url, token, root = classic
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{url}/notebooks/linked.ipynb?token={token}", timeout=patient(120_000))
    try:
        page.locator("#kernel_indicator_icon.kernel_idle_icon").wait_for(state="attached", timeout=patient(120_000))
        page.locator("#celllink").click()   # Cell > Run All
        page.locator("#run_all_cells a").click()
        page.locator("#notebook .views-linked").first.wait_for(state="attached", timeout=patient(240_000))
        page.locator("#kernel_indicator_icon.kernel_idle_icon").wait_for(state="attached", timeout=patient(240_000))
        page.locator("#notebook .views-seq").first.wait_for(state="attached", timeout=patient(30_000))
    except Exception:
        page.screenshot(path=str(artifacts / "classic-failure.png"))
        raise
    try:
        linked_steps_outline_their_c(page, root / "linked.ipynb", "#notebook", "classic", artifacts)
    finally:
        page.close()
