"""Steps shown as a notebook's HTML output, linked (``render_step(..., linked=True)``), clicked in
the browser: the check the views notebook runs in JupyterLab (test_browser_views.py) and the
classic notebook interface (test_browser_notebooks.py), on the cells of conftest.VIEWS that
display ``views-seq`` and ``views-linked``."""

from __future__ import annotations

import pathlib

from browser_measure import FILL_CONTRAST_JS, assert_click_keeps_node_and_shows_line, patient, screenshot

# The linked nodes of the drawings of one kind: each node's first tag and its shape's fill.
# (own: the colour the node's view gave its tag, its step's data-colors)
LINKED_NODES_JS = """([root, kind]) => [...root.querySelectorAll(`.artifact[data-kind="${kind}"] svg g.node[data-tags]`)]
  .map(g => ({tag: g.getAttribute('data-tags').split(' ')[0],
              fill: g.querySelector('polygon, ellipse, path, rect').getAttribute('fill'),
              own: JSON.parse(g.closest('[data-colors]').getAttribute('data-colors'))[g.getAttribute('data-tags').split(' ')[0]]}))"""
# the colour a node's step gave its first tag
OWN_COLOUR_JS = """g => JSON.parse(g.closest('[data-colors]').getAttribute('data-colors'))[g.getAttribute('data-tags').split(' ')[0]]"""


# The C lines outlined in a linked step's C: each line's number, code and outline.
OUTLINED_C_JS = """step => [...step.querySelectorAll('.c-section span.ln')].filter(l => l.classList.contains('ss-linked'))
  .map(l => ({line: +l.getAttribute('data-line'), style: getComputedStyle(l).outlineStyle,
              color: getComputedStyle(l).outlineColor,
              code: [...l.childNodes].filter(n => !(n.classList && n.classList.contains('lno'))).map(n => n.textContent).join('')}))"""


def views_kernels(notebook: pathlib.Path) -> dict:
    """The kernels of a views notebook's linked steps, made here by the notebook's own cells."""
    import nbformat

    cells = [c.source for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"]
    ns: dict = {}
    exec(cells[0], ns)
    ns["display"] = lambda *_: None
    for cell in cells:
        if "views-seq" in cell or "views-linked" in cell:
            exec(cell, ns)
    return ns


def linked_steps_outline_their_c(page, notebook: pathlib.Path, scope: str, theme: str,
                                 artifacts: pathlib.Path) -> None:
    """Steps shown as a notebook's HTML output (``render_step(..., linked=True)``: no script runs,
    the handlers are inline) link on click as the exported page does: clicking a node fills it in
    the link colour (contrast >= 3 on the theme's pane) and outlines exactly the C lines the
    compiler tagged with it, in the step's own C (before, a notebook's step had no handler and no
    C), scrolling the C pane, not the notebook, to the first (the notebook scrolled the clicked node
    out of view). Measured on four nodes: a derivation's loop (the lattice's loops over ``k_A ⊔ l_B``:
    ``while`` loops), the ``*`` of a union whose B has fill 2 (its lines include the one computing
    A where B is absent, with B's fill), the ``+`` of the second of two statements written on
    one line (its lines write ``z``, not ``y``), and the ``*`` of ``A[i] * 2 + 1`` by the looplets
    (its lines include those writing ``1.0``, folded from A's fill: they carried the root's tag
    only). ``notebook``: the views notebook the page shows; ``scope``: the CSS selector of the
    notebook on the page."""
    from explorer.linking import LINK_COLOR

    ns = views_kernels(notebook)
    seq_c, filled_c, shared_c, folded_c = (next(a for s in ns[n].steps for a in s.artifacts if a.kind == "c")
                                           for n in ("seq", "filled", "shared", "folded"))
    second = list(ns["one_line"].statement_trees().values())[1]
    plus = f"expr:{second[2].ident}"
    assert second[2].label == "+"
    linked = page.locator(f"{scope} .views-linked").first
    seq = page.locator(f"{scope} .views-seq").first
    parse_steps = linked.locator('.ss-linked-step[data-stage="parse"]')
    cases = (
        ("derivation-loop", seq.locator('.ss-linked-step[data-stage="seq-derive"]').first,
         'svg g.node[data-tags^="lattice:i:"]', seq_c),
        ("fill-operand", parse_steps.nth(0), 'svg g.node[data-tags~="expr:n2"]', filled_c),
        ("one-line", linked.locator('.ss-linked-step[data-stage="program"]').first,
         f'svg g.node[data-tags~="{plus}"]', shared_c),
        ("fill-constant", parse_steps.nth(1), 'svg g.node[data-tags~="expr:n3"]', folded_c),
    )
    for name, step, selector, c in cases:
        node = step.locator(selector).first
        node.scroll_into_view_if_needed()
        page.mouse.move(0, 0)   # (the pointer left over a part after scrolling links it: hovering)
        tag = node.get_attribute("data-tags").split()[0]
        shape_fill = "g => g.querySelector('polygon, ellipse, path, rect').getAttribute('fill')"
        own = node.evaluate(OWN_COLOUR_JS)
        assert node.evaluate(shape_fill) == own, (name, theme)
        assert not step.evaluate(OUTLINED_C_JS), (name, "outlined before any click")
        node.click()
        page.wait_for_function("s => s.querySelector('.c-section span.ln.ss-linked')", arg=step.element_handle(),
                               timeout=patient(10_000))
        outlined = step.evaluate(OUTLINED_C_JS)
        expected = c.data["provenance"][tag]
        assert [x["line"] for x in outlined] == expected, (name, theme, tag, outlined[:3], expected)
        assert [x["code"] for x in outlined] == [c.text.splitlines()[k - 1] for k in expected], name
        assert all(x["style"] == "solid" for x in outlined), (name, outlined[:2])
        filled = node.evaluate(FILL_CONTRAST_JS)
        assert filled["fill"] == LINK_COLOR and filled["ratio"] >= 3, (name, theme, filled)
        # the node stays in view (the notebook scrolled it away, to the line), the C pane shows the line
        first = step.locator(".c-section span.ln.ss-linked").first
        assert_click_keeps_node_and_shows_line(page, node, first, step.locator(".c-section:has(span.ln.ss-linked)").first,
                                               f"{name} ({theme})")
        code = [x["code"] for x in outlined]
        if name == "derivation-loop":
            assert code[0].lstrip().startswith("while (") and tag == "lattice:i:k_A⊔l_B", (tag, code[:2])
        elif name == "fill-operand":   # (B absent: A's entry times B's fill, 2)
            assert any("A_val[" in x and "B_val[" not in x for x in code), code
        elif name == "one-line":
            assert all("y_val[" not in x for x in code) and any("z_val[" in x for x in code), code
        else:   # (A absent: its fill 0 times 2 plus 1, folded; and A's entries times 2 plus 1)
            assert any(x.rstrip().endswith("= 1.0;") for x in code) and any("A_val[" in x for x in code), code
        screenshot(page, artifacts / f"views-linked-{name}-{theme}.png", full_page=False)
        # a click on nothing tagged lets go
        step.locator(".step-header").first.click()
        page.wait_for_function("s => !s.querySelector('.c-section span.ln.ss-linked')", arg=step.element_handle(),
                               timeout=patient(10_000))
        assert node.evaluate(shape_fill) == own, (name, theme, "not restored")
    # the two statements of one line are drawn, each node in its tag's colour
    nodes = page.evaluate(LINKED_NODES_JS, [linked.element_handle(), "notation-tree"])
    trees = [f"expr:{n.ident}" for nodes_ in ns["one_line"].statement_trees().values() for n in nodes_]
    ours = [n for n in nodes if n["tag"].startswith("expr:l")]
    assert sorted(n["tag"] for n in ours) == sorted(trees) and all(n["fill"] == n["own"] for n in ours), ours
