"""What a person sees in the browser, measured in the page: the scripts the browser tests run in
Chromium (pane heights, labels inside their shapes, contrast, links between the C and the
drawings, zoom) and the checks over what they return.

>>> assert_readable({"panes": [{"height": 120}], "nodes": [], "drawings": [], "contrast": [], "labels": []}, "a pane")
"""

from __future__ import annotations

import os
import pathlib
import time


def patient(ms: int) -> int:
    """A wait's bound in milliseconds, stretched by how loaded the machine is (at most 8 times): a
    page that renders right but late on a busy machine must not fail; a broken one still fails, later.

    >>> patient(10_000) >= 10_000
    True
    """
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    return int(ms * min(8.0, max(1.0, load)))


# JupyterLab restores earlier tabs: only look inside the notebook that is showing
SHOWN = ".jp-NotebookPanel:not(.lm-mod-hidden) .sparsescope-explorer"


def pane_html(page, cls: str) -> str:
    return page.locator(f"{SHOWN} .{cls}").first.inner_html()


SHOWN_NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"


# colours as the page shows them: a CSS colour as [r, g, b, a], one over another, what lies under an
# element (every translucent background above it composited), and WCAG 2 relative luminance
COLOUR_JS = r"""
  const rgba = c => { const m = c.match(/rgba?\(([^)]*)\)/); if (!m) return [0, 0, 0, 0];
                      const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
                      return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const over = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  const background = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    return layers.reverse().reduce((bg, c) => over(c, bg), [255, 255, 255, 1]);
  };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
                     return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
"""

# What a person sees, measured in the page. ``root`` is an element (a widget, an output, the page).
# panes: every widget pane (an ipywidgets HTML box) holding code or a drawing, with its height.
# nodes: every Graphviz node whose label's box (getBBox) is not inside its shape's box.
# drawings: every Graphviz drawing drawn out of proportion, shrunk below half its size while not
#   much wider than its pane (a sliver; unless a zoom level was chosen, the zoom's "fit" making the
#   whole drawing fit its pane), cut by a box that does not scroll, or with its root (a
#   fiber tree's, else its first node) out of the visible part of its box.
# contrast: code text (not line numbers) whose colour has contrast < 4.5 against its background,
#   composited through every translucent background above it (WCAG 2 relative luminance).
MEASURE_JS = r"""
(root) => {
  const out = {panes: [], nodes: [], ncount: 0, drawings: [], dcount: 0, contrast: [], tcount: 0,
               labels: [], lcount: 0};
  for (const el of root.querySelectorAll('.widget-html')) {
    if (!el.querySelector('pre.code, pre.diff, svg')) continue;
    const r = el.getBoundingClientRect();
    out.panes.push({cls: el.className.split(' ').filter(c => c.startsWith('ss-')).join(' '),
                    height: Math.round(r.height), text: el.innerText.slice(0, 60)});
  }
  for (const g of root.querySelectorAll('svg g.node')) {
    // (a node with a tooltip holds its shapes and labels in a group of its own, or in a link:
    // Graphviz's tooltip, as the CFIR and IR trees have; a node holds no other node)
    const parts = [...g.querySelectorAll('*')];
    const shape = parts.find(c => ['ellipse', 'polygon', 'path', 'rect'].includes(c.tagName)
                                  && c.getAttribute('stroke') !== 'transparent');
    const texts = parts.filter(c => c.tagName === 'text' && c.textContent.trim());
    if (!shape || !texts.length) continue;
    out.ncount++;
    const s = shape.getBBox();
    for (const t of texts) {
      const b = t.getBBox();
      if (b.x < s.x - 0.5 || b.y < s.y - 0.5 || b.x + b.width > s.x + s.width + 0.5
          || b.y + b.height > s.y + s.height + 0.5)
        out.nodes.push({label: t.textContent, text: [b.x, b.y, b.width, b.height].map(Math.round),
                        shape: [s.x, s.y, s.width, s.height].map(Math.round)});
    }
  }
  for (const svg of root.querySelectorAll('svg')) {
    if (!svg.querySelector('g.graph')) continue;
    const r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
    if (!r.width) continue;  // not shown (another step of an exported page)
    out.dcount++;
    let box = svg.parentElement;
    while (box && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
    const room = box ? box.getBoundingClientRect() : {left: -Infinity, right: Infinity, width: Infinity};
    const aspect = vb && vb.width ? (r.width / r.height) / (vb.width / vb.height) : 1;
    const scale = vb && vb.width ? r.width / (vb.width * 4 / 3) : 1;   // Graphviz: pt in the viewBox
    const rootNode = [...svg.querySelectorAll('g.node')].find(g => (g.querySelector('title') || {}).textContent === 'root')
                     || svg.querySelector('g.node');
    const rr = rootNode ? rootNode.getBoundingClientRect() : null;
    // (a zoom level the person chose, "fit" to the pane included, is theirs: ssZoom sets min-width 0)
    const chosen = ['0', '0px'].includes(svg.style.minWidth);
    const problem = Math.abs(aspect - 1) > 0.03 ? 'out of proportion'
      : scale < 0.45 && r.width < 1.5 * room.width && !chosen ? 'a sliver: shrunk below half its size'
      : r.width > room.width + 1 && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX) ? 'cut'
      : rr && (rr.left < room.left - 1 || rr.right > room.right + 1) ? 'its root out of view' : '';
    if (problem)
      out.drawings.push({title: (svg.querySelector('title') || {}).textContent, problem, width: Math.round(r.width),
                         height: Math.round(r.height), room: Math.round(room.width),
                         scale: Math.round(scale * 100) / 100, aspect: Math.round(aspect * 100) / 100});
  }
""" + COLOUR_JS + r"""  for (const pre of root.querySelectorAll('pre.code, pre.diff')) {
    const walk = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const el = n.parentElement;
      if (!n.textContent.trim() || getComputedStyle(el).userSelect === 'none') continue;  // line numbers
      out.tcount++;
      const bg = background(el), fg = over(rgba(getComputedStyle(el).color), bg);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (b + 0.05);
      if (ratio < 4.5 && out.contrast.length < 20)
        out.contrast.push({text: n.textContent.trim().slice(0, 30), ratio: Math.round(ratio * 100) / 100,
                           color: getComputedStyle(el).color, background: 'rgb(' + bg.slice(0, 3).map(Math.round) + ')'});
    }
  }
  // drawing labels: the text's fill against what lies under it, the top filled shape of its
  // node under the label's centre (a point's fill, a table cell's) else the drawing's background
  for (const svg of root.querySelectorAll('svg')) {
    const graph = svg.querySelector('g.graph');
    if (!graph || !svg.getBoundingClientRect().width) continue;
    const page = background(svg.parentElement);
    const ground = graph.querySelector(':scope > polygon');
    const sheet = ground ? over(rgba(getComputedStyle(ground).fill), page) : page;
    // the drawing's own background is the theme's (Graphviz's is white, a glare in the dark)
    if (lum(sheet) - lum(page) > 0.2 && out.drawings.length < 20)
      out.drawings.push({title: (svg.querySelector('title') || {}).textContent, problem: 'background not the theme\'s',
                         background: 'rgb(' + sheet.slice(0, 3).map(Math.round) + ')',
                         page: 'rgb(' + page.slice(0, 3).map(Math.round) + ')'});
    for (const t of graph.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      out.lcount++;
      const b = t.getBBox(), cx = b.x + b.width / 2, cy = b.y + b.height / 2;
      const group = t.closest('g.node, g.edge, g.cluster');
      let bg = sheet;
      for (const s of group ? group.querySelectorAll('ellipse, polygon, path, rect') : []) {
        const f = rgba(getComputedStyle(s).fill), sb = s.getBBox();
        if (f[3] > 0 && cx >= sb.x && cx <= sb.x + sb.width && cy >= sb.y && cy <= sb.y + sb.height)
          bg = over(f, sheet);
      }
      const fg = over(rgba(getComputedStyle(t).fill), bg);
      const [a, c] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (c + 0.05);
      if (ratio < 4.5 && out.labels.length < 20)
        out.labels.push({text: t.textContent.trim().slice(0, 30), ratio: Math.round(ratio * 100) / 100,
                         fill: getComputedStyle(t).fill, background: 'rgb(' + bg.slice(0, 3).map(Math.round) + ')'});
    }
  }
  return out;
}
"""


# Each edge label of the drawings under ``root`` that another edge's line runs through, or another
# edge label overlaps (in the drawing's own coordinates; each other edge sampled at 61 points).
EDGE_LABELS_JS = r"""
(root) => {
  const out = [];
  const inside = (p, b) => p.x > b.x + 1 && p.x < b.x + b.width - 1 && p.y > b.y + 1 && p.y < b.y + b.height - 1;
  const meet = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  for (const svg of root.querySelectorAll('svg')) {
    if (!svg.getBoundingClientRect().width) continue;   // (not shown: another step of a page)
    const edges = [...svg.querySelectorAll('g.edge')];
    const labels = edges.flatMap(g => [...g.querySelectorAll('text')].filter(t => t.textContent.trim())
                                                                        .map(t => [g, t, t.getBBox()]));
    for (const [g, t, b] of labels) {
      const through = edges.filter(e => e !== g && [...e.querySelectorAll('path')].some(path => {
        const n = path.getTotalLength();
        return [...Array(61).keys()].some(k => inside(path.getPointAtLength(n * k / 60), b));
      }));
      const over = labels.filter(([, u, c]) => u !== t && meet(b, c)).map(([, u]) => u.textContent);
      if (through.length || over.length)
        out.push({label: t.textContent, edges: through.length, labels: over,
                  drawing: (svg.querySelector('title') || {}).textContent});
    }
  }
  return out;
}
"""


# cells: each cell of a table, its text's contrast against what lies under it and whether it lies
# inside the section that shows it (not cut at the page's right edge)
CELLS_JS = r"""
(table) => {""" + COLOUR_JS + r"""  const room = table.closest('section, .step').getBoundingClientRect();   // (a page's, a notebook's)
  return [...table.querySelectorAll('td, th')].map(td => {
    const el = td.querySelector('code') || td, bg = background(el);
    const [a, b] = [lum(over(rgba(getComputedStyle(el).color), bg)), lum(bg)].sort((x, y) => y - x);
    const r = td.getBoundingClientRect();
    return {text: td.innerText.slice(0, 40), ratio: (a + 0.05) / (b + 0.05), height: r.height,
            inside: r.left >= room.left - 1 && r.right <= room.right + 1};
  });
}
"""


# Each rewrite table shown under ``root``: its cells whose text takes more than one line (a rule's
# name broken at its hyphens, an expression at its spaces), its width, the width of the box that
# clips it, and whether all of it can be reached (it fits, or that box scrolls sideways to it).
REWRITES_JS = r"""
(root) => [...root.querySelectorAll('table.rewrites')].filter(t => t.getBoundingClientRect().width).map(t => {
  let box = t.parentElement;
  while (box && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
  const lines = el => { const r = document.createRange(); r.selectNodeContents(el);
                        return new Set([...r.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top))).size; };
  const cells = [...t.querySelectorAll('td')].filter(td => td.textContent.trim());
  const r = t.getBoundingClientRect(), b = box.getBoundingClientRect(), o = getComputedStyle(box).overflowX;
  // (where the rules' column ends: the before-and-after column's first cell, from the box's left edge)
  const second = t.querySelector('tr td:nth-child(2)');
  return {cells: cells.length, wrapped: cells.filter(td => lines(td) > 1).map(td => td.textContent.slice(0, 40)),
          table: Math.round(r.width), box: Math.round(b.width), overflow: o,
          rules: second ? Math.round(second.getBoundingClientRect().left - b.left) : 0,
          reachable: r.width <= b.width + 1 || (['auto', 'scroll'].includes(o) && box.scrollWidth >= r.width - 1)};
})
"""


# Each node of the drawing of ``kind`` in the section: its text lines, and whether its shape's box
# holds each of them (in the drawing's coordinates).
NODE_LINES_JS = r"""
([root, kind]) => [...root.querySelectorAll(`.artifact[data-kind="${kind}"] svg g.node`)].map(g => {
  const shape = [...g.querySelectorAll('polygon, path, ellipse, rect')].find(s => s.getAttribute('stroke') !== 'transparent');
  const s = shape.getBBox(), texts = [...g.querySelectorAll('text')].filter(t => t.textContent.trim());
  const link = g.querySelector('a');
  return {lines: texts.map(t => t.textContent.trim()),
          tip: link ? (link.getAttribute('xlink:title') || link.getAttribute('title')) : null,
          inside: texts.every(t => { const b = t.getBBox();
            return b.x >= s.x - 0.5 && b.y >= s.y - 0.5 && b.x + b.width <= s.x + s.width + 0.5
                   && b.y + b.height <= s.y + s.height + 0.5; })};
})
"""


def assert_rewrites_read(tables: list[dict], where: str) -> None:
    """:data:`REWRITES_JS`'s measure: at least one table, each cell on one line, every table
    reachable in its box.

    >>> assert_rewrites_read([{"cells": 4, "wrapped": [], "reachable": True}], "a pane")
    """
    assert tables and all(t["cells"] for t in tables), f"{where}: no rewrite table shown: {tables}"
    wrapped = [c for t in tables for c in t["wrapped"]]
    assert not wrapped, f"{where}: rewrite cells over several lines: {wrapped[:6]} ({tables[0]['table']} px wide " \
                        f"in {tables[0]['box']} px)"
    assert all(t["reachable"] for t in tables), f"{where}: a rewrite table cut and not scrolling: {tables}"


def exported_steps(browser, path, steps, what: str, shots):
    """Each step of the exported page ``path`` in the light, then the dark colour scheme: for each ``(at, kind)`` of
    ``steps``, opened by its link, screenshot to ``shots`` (a function of kind and scheme to a path), its text and
    drawings readable and each drawing node's label inside its box; yields ``(kind, section, nodes, where)``, the
    nodes as :data:`NODE_LINES_JS` measures them and ``where`` naming ``what``'s step."""
    for scheme in ("light", "dark"):
        page = browser.new_page(viewport={"width": 1100, "height": 800}, color_scheme=scheme)
        page.goto(pathlib.Path(path).as_uri())
        for at, kind in steps:
            page.locator(f'nav.steps a[href="#step-{at}"]').click()
            section = page.locator(f"section#step-{at}")
            section.wait_for(state="visible")
            where = f"{what}'s {kind} step ({scheme})"
            page.screenshot(path=str(shots(kind, scheme)), full_page=True)
            assert_readable(measure(section), where)
            nodes = page.evaluate(NODE_LINES_JS, [section.element_handle(), kind])
            assert nodes and all(n["inside"] for n in nodes), (where, nodes)
            yield kind, section, nodes, where
        page.close()


def measure(locator) -> dict:
    """:data:`MEASURE_JS` on the element ``locator`` finds."""
    return locator.evaluate(MEASURE_JS)


def assert_readable(m: dict, where: str, panes: int = 0, contrast: bool = True) -> None:
    """Every code or drawing pane >= 100 px tall (and at least ``panes`` of them), every label
    inside its shape, every drawing inside its pane and on the theme's background, and (with
    ``contrast``) code and drawing labels readable."""
    short = [p for p in m["panes"] if p["height"] < 100]
    assert len(m["panes"]) >= panes and not short, f"{where}: panes under 100 px: {short} of {m['panes']}"
    assert not m["nodes"], f"{where}: labels outside their shapes ({m['ncount']} nodes): {m['nodes'][:6]}"
    assert not m["drawings"], f"{where}: drawings cut, distorted or off the theme's background: {m['drawings']}"
    if contrast:
        assert not m["contrast"], f"{where}: code below contrast 4.5 ({m['tcount']} texts): {m['contrast']}"
        assert not m["labels"], f"{where}: drawing labels below contrast 4.5 ({m['lcount']} labels): {m['labels']}"


# Each of Compare's C panes: its height, and the height of what it shows (the pane's HTML, from the
# top of its first child to the bottom of its last), rounded to the pixel.
PANE_CONTENT_JS = r"""
(root) => [...root.querySelectorAll('.widget-html.ss-c')].map(el => {
  const inner = el.querySelector('.widget-html-content') || el;
  const kids = [...inner.children].map(k => k.getBoundingClientRect());
  const content = kids.length ? Math.max(...kids.map(r => r.bottom)) - Math.min(...kids.map(r => r.top)) : 0;
  return {height: Math.round(el.getBoundingClientRect().height), content: Math.round(content),
          text: el.innerText.slice(0, 60)};
})
"""


def assert_panes_fit_content(panes: list[dict], where: str, slack: int = 24) -> None:
    """The panes of one row (Compare's columns share their rows, so the two are as tall as each
    other) are no taller than the most either shows (with padding and border, ``slack`` px) or than
    the 100 px a pane keeps at least: a pane showing a few lines is not a tall empty box.

    >>> assert_panes_fit_content([{"height": 110, "content": 40, "text": "x"}, {"height": 110, "content": 90}], "a row")
    """
    most = max(100, max(p["content"] for p in panes) + slack)
    tall = [p for p in panes if p["height"] > most]
    assert panes and not tall, f"{where}: panes taller than what they show ({most} px at most): {tall}"


# Compare's drawing panes: each pane's height, the height of what it holds (its drawings' boxes,
# their titles and notes: the children of its content box) and of its drawings alone (each svg's
# rendered box), and whether it scrolls.
DRAWING_PANES_JS = r"""
(root) => [...root.querySelectorAll('.widget-html.ss-drawing')].map(el => {
  const inner = el.querySelector('.widget-html-content') || el;
  const span = rs => rs.length ? Math.max(...rs.map(r => r.bottom)) - Math.min(...rs.map(r => r.top)) : 0;
  const svgs = [...el.querySelectorAll('svg')].map(s => s.getBoundingClientRect());
  return {height: Math.round(el.getBoundingClientRect().height), cap: parseFloat(getComputedStyle(el).maxHeight),
          content: Math.round(inner.scrollHeight), drawing: Math.round(span(svgs)), svgs: svgs.length,
          scrolls: el.scrollHeight > el.clientHeight + 1, text: el.innerText.slice(0, 40)};
})
"""


def assert_drawing_panes_fit(panes: list[dict], where: str, slack: int = 16) -> None:
    """Compare's two drawing panes (one row of its grid: as tall as each other) are as tall as the
    taller one's drawings and notes (its padding and border within ``slack`` px), up to their cap,
    beyond which that pane scrolls; a pane no taller than its content shows all of it.

    >>> assert_drawing_panes_fit([{"height": 310, "cap": 560, "content": 300, "drawing": 250, "svgs": 1,
    ...                            "scrolls": False}] * 2, "a row")
    """
    assert len(panes) == 2 and all(p["svgs"] and p["drawing"] > 20 for p in panes), f"{where}: {panes}"
    want = min(max(p["content"] for p in panes), min(p["cap"] for p in panes))
    for p in panes:
        assert want <= p["height"] <= want + slack, \
            f"{where}: a drawing pane {p['height']} px tall for {want} px of drawings (cap {p['cap']}): {panes}"
        assert p["scrolls"] == (p["content"] > p["height"]), f"{where}: a drawing pane cut or scrolling: {panes}"
        assert p["scrolls"] or p["height"] >= p["drawing"], f"{where}: a drawing taller than its pane: {panes}"


# Compare's columns line up: each column's C pane, and its drawing pane, as tall as the other's
# and starting at the same height on the page (rounded to the pixel).
LINE_UP_JS = r"""
(root) => ['ss-c', 'ss-drawing'].map(cls => [...root.querySelectorAll('.widget-html.' + cls)].map(el => {
  const r = el.getBoundingClientRect();
  return {cls, top: Math.round(r.top), height: Math.round(r.height)};
}))
"""


def assert_columns_line_up(compare, where: str) -> None:
    """Compare's two C panes are as tall as each other and side by side, and so are its two
    drawing panes (the issue: "drawing and C at equal heights in each column")."""
    for boxes in compare.evaluate(LINE_UP_JS):
        assert len(boxes) == 2, f"{where}: not two columns: {boxes}"
        a, b = boxes
        assert a["height"] >= 100 and abs(a["height"] - b["height"]) <= 1 and abs(a["top"] - b["top"]) <= 1, \
            f"{where}: the columns' {a['cls']} panes do not line up: {boxes}"


def set_theme(page, name: str) -> None:
    """Settings > Theme > ``name`` (e.g. "JupyterLab Dark"), then wait until the page shows it."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Theme").first.hover()
    page.locator(".lm-Menu-itemLabel", has_text=name).first.click()
    light = "true" if "Light" in name else "false"
    page.wait_for_function(f"document.body.dataset.jpThemeLight === '{light}'", timeout=patient(30_000))
    page.wait_for_timeout(500)  # the theme's stylesheet applies after the attribute changes


# The shape's stroke of the drawing node the first tag of a part names, and that tag's C lines:
# where they are in their scrolling box (the pane in a notebook, else the page), for linking.
LINK_JS = r"""
([root, tag]) => {
  const sel = `[data-tags~="${tag}"]`;
  const node = root.querySelector('svg g.node' + sel);
  const shape = node && node.querySelector('polygon, ellipse, path, rect');
  let box = null;
  const line = [...root.querySelectorAll('.ss-c span.ln' + sel + ', .c-section span.ln' + sel)][0];
  for (let b = line && line.parentElement; b; b = b.parentElement) {
    const o = getComputedStyle(b).overflowY;
    if ((o === 'auto' || o === 'scroll') && b.scrollHeight > b.clientHeight + 1) { box = b; break; }
  }
  const view = box ? box.getBoundingClientRect() : {top: 0, bottom: innerHeight};
  const r = line ? line.getBoundingClientRect() : null;
  return {stroke: shape && shape.getAttribute('stroke'), width: shape && shape.getAttribute('stroke-width'),
          line: !!line, outlined: !!line && getComputedStyle(line).outlineStyle === 'solid',
          inView: !!r && r.top >= view.top - 1 && r.bottom <= view.bottom + 1,
          scrollTop: box ? box.scrollTop : scrollY};
}
"""


# A drawing's size in its pane: the svg's rendered width, its own (Graphviz: pt, 4/3 px), its
# left offset in its box, the box's width and scroll width, and the level the controls show.
ZOOM_JS = r"""
(art) => {
  const s = art.querySelector('.drawing svg'), d = art.querySelector('.drawing');
  const r = s.getBoundingClientRect(), q = d.getBoundingClientRect();
  return {width: r.width, own: parseFloat(s.getAttribute('width')) * 4 / 3, left: r.left - q.left,
          room: d.clientWidth, scroll: d.scrollWidth, level: art.querySelector('.ss-zoom-level').textContent,
          // the smallest label as drawn (its box's height in px): a drawing fitted so small
          // that its labels are specks shows nothing a person can read
          label: Math.min(...[...s.querySelectorAll('g.node text')].map(t => t.getBoundingClientRect().height))};
}
"""


# The fill of a drawing node's shape and its WCAG contrast against what lies under the drawing
# (the pane's background, composited up the page as MEASURE_JS does).
FILL_CONTRAST_JS = r"""
(g) => {
  const rgba = c => { const m = c.match(/rgba?\(([^)]*)\)/); if (!m) return [0, 0, 0, 0];
                      const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
                      return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const over = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  const layers = [];
  for (let e = g.closest('svg').parentElement; e; e = e.parentElement) {
    const c = rgba(getComputedStyle(e).backgroundColor);
    if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
  }
  const bg = layers.reverse().reduce((b, c) => over(c, b), [255, 255, 255, 1]);
  const shape = g.querySelector('polygon, ellipse, path, rect');
  const fg = over(rgba(getComputedStyle(shape).fill), bg);
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
                     return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return {fill: shape.getAttribute('fill'), ratio: (a + 0.05) / (b + 0.05),
          background: 'rgb(' + bg.slice(0, 3).map(Math.round) + ')'};
}
"""


# Scroll the box that scrolls an element (the element itself or the pane it is in) to its end.
SCROLL_END_JS = r"""
(el) => {
  for (let b = el; b; b = b.parentElement) {
    const o = getComputedStyle(b).overflowY;
    if ((o === 'auto' || o === 'scroll') && b.scrollHeight > b.clientHeight + 1) { b.scrollTop = b.scrollHeight; return true; }
  }
  return false;
}
"""


# ipywidgets marks each widget drawn without its kernel and puts a red broken-link icon before it;
# inside sparsescope's views: how many are marked, how many still show the icon, and how many
# saved-view notes are drawn (widgets/saved.py)
SAVED_STATE_JS = """(root) => {
  const views = '.sparsescope-explorer, .sparsescope-compare, .sparsescope-playground';
  const marked = [...root.querySelectorAll('.jupyter-widgets-disconnected')].filter(e => e.closest(views));
  const icons = marked.filter(e => {
    const b = getComputedStyle(e, '::before');
    return b.display !== 'none' && b.content !== 'none' && b.content !== 'normal';
  });
  const notes = [...root.querySelectorAll('.ss-saved-note')].filter(e => {
    const r = e.getBoundingClientRect();
    return r.height > 0 && getComputedStyle(e).display !== 'none';
  });
  return {marked: marked.length, icons: icons.length, notes: notes.length,
          views: root.querySelectorAll('.sparsescope-explorer, .sparsescope-compare').length};
}"""


# The timings a notebook shows (explorer.timing's table, checks and plot) under ``root``: each
# plot's texts that reach past its drawing's edges (a row name cut on the left), its decade tick labels
# that reach into the next ("10 ms100 ms"), and every text
# (table cells, the checks, the plot's) with contrast < 4.5 against what lies under it.
TIMING_JS = r"""
(root) => {""" + COLOUR_JS + r"""  const out = {plots: 0, texts: 0, cut: [], low: [], overlap: []};
  for (const table of root.querySelectorAll('table.timing')) {
    const parts = [...table.querySelectorAll('td, th')];
    for (let e = table.nextElementSibling; e && e.tagName === 'DIV'; e = e.nextElementSibling) parts.push(e);
    const svg = table.parentElement.querySelector('svg.timing-plot');
    if (svg) {
      out.plots++;
      const vb = svg.viewBox.baseVal;
      for (const t of svg.querySelectorAll('text')) {
        const b = t.getBBox();
        if (b.x < -0.5 || b.x + b.width > vb.width + 0.5) out.cut.push({text: t.textContent, x: Math.round(b.x),
                                                                        right: Math.round(b.x + b.width), width: vb.width});
        parts.push(t);
      }
      const ticks = [...svg.querySelectorAll('text.tick')].map(t => [t.getBBox(), t.textContent]);
      for (let k = 1; k < ticks.length; k++)
        if (ticks[k - 1][0].x + ticks[k - 1][0].width > ticks[k][0].x)
          out.overlap.push(ticks[k - 1][1] + ' | ' + ticks[k][1]);
    }
    for (const el of parts) {
      if (!el.textContent.trim()) continue;
      out.texts++;
      const bg = background(el.closest('svg') ? el.closest('svg').parentElement : el);
      const color = el.tagName === 'text' ? getComputedStyle(el).fill : getComputedStyle(el).color;
      const [a, b] = [lum(over(rgba(color), bg)), lum(bg)].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (b + 0.05);
      if (ratio < 4.5) out.low.push({text: el.textContent.trim().slice(0, 40), ratio: Math.round(ratio * 100) / 100, color});
    }
  }
  return out;
}
"""


def assert_timings_read(m: dict, where: str, plots: int = 1) -> None:
    """:data:`TIMING_JS`'s measure: at least ``plots`` plots, no text cut at a plot's edges, no tick
    label into the next, every text readable (contrast >= 4.5)."""
    assert m["plots"] >= plots, f"{where}: {m['plots']} timing plots"
    assert not m["cut"], f"{where}: timing plot texts cut at its edges: {m['cut']}"
    assert not m["overlap"], f"{where}: timing plot tick labels drawn into each other: {m['overlap']}"
    assert not m["low"], f"{where}: timing texts below contrast 4.5 ({m['texts']} texts): {m['low'][:6]}"


# Characters of the texts under ``root`` that the page draws with no glyph (a box: no font on the
# machine has them, as U+24D8 ⓘ on a Debian system): each non-ASCII character, drawn on a canvas
# in the font of the first element that shows it, against a private-use character (never a glyph).
MISSING_GLYPHS_JS = r"""
(root) => {
  const fonts = new Map(), walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode())
    for (const ch of n.textContent) if (ch.codePointAt(0) > 127 && !/\s/.test(ch) && !fonts.has(ch))
      fonts.set(ch, getComputedStyle(n.parentElement).font);
  const pixels = (ch, font) => {
    const c = document.createElement('canvas'); c.width = 40; c.height = 40;
    const g = c.getContext('2d'); g.font = font.replace(/\d+(\.\d+)?px/, '24px'); g.fillText(ch, 4, 30);
    return g.getImageData(0, 0, 40, 40).data.join(',');
  };
  return [...fonts].filter(([ch, font]) => pixels(ch, font) === pixels('\uE000', font)).map(([ch]) => ch);
}
"""


# Each non-ASCII character that a monospace text under ``root`` shows (code, drawing labels) and
# that its font draws out of its grid: measured on a canvas in the element's font at 24 px, its
# advance is not the font's cell (an "M"'s) or its ink reaches above or below that of "Ág|" (a
# glyph no font of the stack has is drawn from another font: the paper's 𝓕 from a math font, 1.7
# cells wide and taller than its line's letters).
GLYPH_FIT_JS = r"""
(root) => {
  const seen = new Map(), walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!el || !el.getClientRects().length) continue;   // (not shown: another step of a page)
    const s = getComputedStyle(el);
    if (!/mono|courier/i.test(s.fontFamily)) continue;
    for (const ch of n.textContent)
      if (ch.codePointAt(0) > 127 && !/\s/.test(ch)) seen.set(ch + '|' + s.fontFamily, [ch, s.fontFamily, s.fontWeight, s.fontStyle]);
  }
  const c = document.createElement('canvas').getContext('2d'), off = [];
  for (const [ch, family, weight, style] of seen.values()) {
    c.font = `${style} ${weight} 24px ${family}`;
    const cell = c.measureText('M').width, m = c.measureText(ch), ref = c.measureText('Ág|');
    if (Math.abs(m.width - cell) > 0.5 || m.actualBoundingBoxAscent > ref.actualBoundingBoxAscent + 1
        || m.actualBoundingBoxDescent > ref.actualBoundingBoxDescent + 1)
      off.push({ch, family, width: Math.round(m.width * 10) / 10, cell: Math.round(cell * 10) / 10,
                up: Math.round(m.actualBoundingBoxAscent), down: Math.round(m.actualBoundingBoxDescent),
                lineUp: Math.round(ref.actualBoundingBoxAscent), lineDown: Math.round(ref.actualBoundingBoxDescent)});
  }
  return {chars: [...new Set([...seen.values()].map(v => v[0]))].join(''), off};
}
"""


# Whether an element's box lies inside what its panes let a person see: the window, cut by every
# box around it that clips (overflow not visible), up to ``pane`` when given (then the window is
# not counted: "inside its pane's visible part", wherever the page is scrolled).
VISIBLE_JS = r"""
([el, pane]) => {
  const r = el.getBoundingClientRect();
  let v = pane ? {top: -Infinity, left: -Infinity, bottom: Infinity, right: Infinity}
               : {top: 0, left: 0, bottom: innerHeight, right: innerWidth};
  const clips = [];
  for (let b = el.parentElement; b && b !== document.body; b = b.parentElement) {   // (the window is the page's)
    const s = getComputedStyle(b);
    // (an inline box clips nothing, whatever its overflow says)
    if ((s.overflowX !== 'visible' || s.overflowY !== 'visible') && !['inline', 'contents'].includes(s.display)) {
      const q = b.getBoundingClientRect();
      clips.push(b.tagName.toLowerCase() + '.' + [...b.classList].slice(0, 2).join('.') + ' ' + [q.top, q.bottom].map(Math.round));
      v = {top: Math.max(v.top, q.top), left: Math.max(v.left, q.left),
           bottom: Math.min(v.bottom, q.bottom), right: Math.min(v.right, q.right)};
    }
    if (b === pane) break;
  }
  return {box: [r.left, r.top, r.right, r.bottom].map(Math.round), seen: [v.left, v.top, v.right, v.bottom].map(Math.round),
          clips,
          inside: r.width > 0 && r.top >= v.top - 1 && r.bottom <= v.bottom + 1 && r.left >= v.left - 1
                  && r.right <= v.right + 1};
}
"""


def assert_click_keeps_node_and_shows_line(page, node, line, pane, where: str) -> None:
    """After a click on drawing node ``node`` that scrolled C pane ``pane`` to ``line``, its first
    linked line (each a Playwright locator): the node is still inside the visible part of its pane
    and of the window (the page, the notebook and the drawing did not scroll it away), and the line
    inside the visible part of its C pane.

    Measured on the page as it settles: a widget's panes are drawn again by messages of their own
    after a click, and a node or line measured just as it was replaced had no box (0x0, detached);
    so each is looked up afresh and measured until it is inside or ``patient(10 s)`` has passed,
    and the last measurement is what fails."""
    def settled(what, within):
        deadline = time.monotonic() + patient(10_000) / 1000
        while True:
            seen = page.evaluate(VISIBLE_JS, [what.element_handle(), within.element_handle() if within else None])
            if seen["inside"] or time.monotonic() > deadline:
                return seen
            page.wait_for_timeout(200)

    seen = settled(node, None)
    assert seen["inside"], f"{where}: the clicked node left the view: {seen}"
    shown = settled(line, pane)
    assert shown["inside"], f"{where}: the C pane was not scrolled to the node's first line: {shown}"


# What pops up over the page: JupyterLab's notification toasts (the "would you like to get notified
# about official Jupyter news?" question) and dialogs, the classic notebook's modal dialogs.
POPUPS_JS = """() => [...document.querySelectorAll('.Toastify__toast, .jp-Dialog, .modal.in, .modal.show')]
  .filter(e => e.getBoundingClientRect().height > 0).map(e => e.innerText.trim().slice(0, 80))"""


def screenshot(page, path, **options) -> None:
    """``page``'s screenshot to ``path``, once nothing pops up over it (a toast or a dialog the
    harness would keep in every picture: the browser tests' JupyterLab asks none of its questions)."""
    popups = page.evaluate(POPUPS_JS)
    assert not popups, f"pop-ups over the page in {pathlib.Path(path).name}: {popups}"
    page.screenshot(path=str(path), **options)


# The provenance colours a view shows under ``root``: each tagged drawing node's fill (as the
# browser computes it) with its contrast against what lies under the drawing and its labels'
# contrast on it; each tagged C line's or program part's background with its contrast against the
# pane under it and its text's on it (WCAG 2: a marker needs 3, text 4.5).
TAG_COLOURS_JS = r"""
(root) => {""" + COLOUR_JS + r"""  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const hex = c => '#' + c.slice(0, 3).map(v => Math.round(v).toString(16).padStart(2, '0')).join('');
  const nodes = [], parts = [];
  for (const g of root.querySelectorAll('svg g.node[data-tags]')) {
    const shape = g.querySelector('polygon, ellipse, path, rect');
    const under = background(g.closest('svg').parentElement);
    const fill = over(rgba(getComputedStyle(shape).fill), under);
    const labels = [...g.querySelectorAll('text')].filter(t => t.textContent.trim())
      .map(t => ratio(over(rgba(getComputedStyle(t).fill), fill), fill));
    nodes.push({title: (g.querySelector('title') || {}).textContent, tag: g.getAttribute('data-tags').split(' ')[0],
                fill: hex(fill), marker: ratio(fill, under), text: labels.length ? Math.min(...labels) : null});
  }
  for (const p of root.querySelectorAll('span.ln[data-tags], span.pv[data-tags]')) {
    const own = rgba(getComputedStyle(p).backgroundColor);
    if (!own[3]) continue;
    const under = background(p.parentElement), bg = over(own, under);
    const ink = over(rgba(getComputedStyle(p).color), bg);
    parts.push({tag: p.getAttribute('data-tags').split(' ')[0], bg: hex(bg), marker: ratio(bg, under),
                text: ratio(ink, bg), code: p.textContent.slice(0, 30)});
  }
  return {nodes, parts};
}
"""


def assert_tag_colours_read(m: dict, where: str) -> None:
    """Every provenance colour in ``m`` (:data:`TAG_COLOURS_JS`) stands out from what lies under
    it (contrast >= 3) and keeps the text on it readable (>= 4.5)."""
    low = [n for n in m["nodes"] if n["marker"] < 3 or (n["text"] is not None and n["text"] < 4.5)]
    assert not low, f"{where}: drawing nodes whose colour is below contrast 3 or whose labels are below 4.5: {low[:4]}"
    low = [p for p in m["parts"] if p["marker"] < 3 or p["text"] < 4.5]
    assert not low, f"{where}: code parts whose colour is below contrast 3 or whose text is below 4.5: {low[:4]}"
