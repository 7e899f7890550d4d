"""A real browser: JupyterLab on localhost, the explorer notebook run in headless Chromium.

Chromium comes from the system's package manager (``./dev test`` installs Debian's
``chromium`` when it may) and Playwright drives it; nothing downloads a browser. The
screenshots are kept as test artifacts in ``$SPARSESCOPE_SCREENSHOTS`` when it is set (CI sets
it), else in the pytest temporary directory (``screenshots*/`` under ``--basetemp``); the path
is printed. Without Chromium the test is skipped, except under
CI, where it must run.

The tests measure what a person would see, in the page's own layout: panes that should show
something are at least 100 px tall (:data:`MEASURE_JS`), every drawing's labels lie inside their
shapes (``getBBox``) and the drawing fits its pane, and code is readable (WCAG contrast >= 4.5
from the computed colours) in the light and the dark theme.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest
from nbformat.sign import NotebookNotary

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

if CHROMIUM is None:
    if os.environ.get("CI"):
        pytest.fail("CI must run the browser test, but no chromium was found", pytrace=False)
    pytest.skip("no chromium: install Debian's chromium package to run the browser test",
                allow_module_level=True)

playwright_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> pathlib.Path:
    """Where the screenshots go: ``$SPARSESCOPE_SCREENSHOTS`` when set (a folder CI can keep;
    each run replaces the files of the same name), else pytest's temporary directory (pytest
    keeps its last three runs)."""
    chosen = os.environ.get("SPARSESCOPE_SCREENSHOTS")
    if chosen:
        path = pathlib.Path(chosen).expanduser().resolve()
        path.mkdir(parents=True, exist_ok=True)
    else:
        path = tmp_path_factory.mktemp("screenshots")
    print(f"\nscreenshots in {path}")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving a scratch copy of the notebooks (the browser may save into it)."""
    root = tmp_path_factory.mktemp("lab")
    for source, target in (("01-explorer.ipynb", "explorer.ipynb"), ("00-tour.ipynb", "tour.ipynb")):
        nb = nbformat.read(ROOT / "notebooks" / source, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, root / target)
    # the tour as it ships (outputs and stored widget state), for opening without running it,
    # trusted as `jupyter trust` does (JupyterLab shows no widget of an untrusted output), with
    # the signatures kept in this scratch directory
    notary = [f"--NotebookNotary.db_file={root / 'nbsignatures.db'}",
              f"--NotebookNotary.secret_file={root / 'notebook_secret'}"]
    tour = nbformat.read(ROOT / "notebooks" / "00-tour.ipynb", as_version=4)
    NotebookNotary(db_file=str(root / "nbsignatures.db"), secret_file=str(root / "notebook_secret")).sign(tour)
    nbformat.write(tour, root / "tour-saved.ipynb")
    nbformat.write(views_notebook(), root / "views.ipynb")
    nbformat.write(views_notebook(PLAYGROUND), root / "playground.ipynb")
    port, token = free_port(), "sparsescope-test"
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}",
           "--LabApp.news_url=", "--ServerApp.disable_check_xsrf=True", *notary]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    # JupyterLab 4 may leave cells that are scrolled out of view unrendered ("windowing");
    # the test reads widgets anywhere in the notebook, so render every cell.
    settings = root / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(root / ".jupyter"), "PYTHONPATH": str(ROOT)}
    log = open(root / "lab.log", "w")
    proc = subprocess.Popen(cmd, cwd=root, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:
                    json.load(r)
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("JupyterLab did not start:\n" + (root / "lab.log").read_text())
                time.sleep(0.5)
        yield url, token, root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


VIEWS = [
    """import numpy as np
from IPython.display import HTML, display

import compiler as ss
from explorer import explore, render_step
from explorer.examples import spmv_example
from widgets import Compare, Explorer""",
    # the centre piece: both strategies side by side
    """Compare.for_program("y[i] = A[i, j] * x[j]", A="csr", x="dense")""",
    # a lattice of three points (A∩B∩C, A∩B, C) in the explorer
    """three = Explorer.for_program("y[i] = A[i] * B[i] + C[i]", "lattice", A="sv", B="sv", C="sv")
three.goto(three.session.stages().index("lattice"))
three""",
    # every drawing of both lowerings, as render_step draws them
    """for strategy in ("lattice", "looplets"):
    session = explore(ss.lower("y[i] = A[i] * B[i] + C[i]", strategy, A="sv", B="sv", C="sv").trace)
    drawn = [session.step(i) for i in range(len(session)) if any(a.dot for a in session.steps[i].artifacts)]
    display(HTML(f"<div class='views-{strategy}'>" + "".join(render_step(v) for v in drawn) + "</div>"))""",
    # a fiber tree wider than any pane (notebook 01 shows one of 2000 rows)
    """ex = spmv_example(n=60, density=0.2, seed=1)
display(HTML("<div class='views-fibers'>" + render_step(explore(ex.trace).step(1)) + "</div>"))""",
]


# the playground, as a person opens it
PLAYGROUND = ["""from widgets import Playground
play = Playground("y[i] = A[i, j] * x[j]", A="csr", x="dense")
play"""]


def views_notebook(cells=VIEWS) -> nbformat.NotebookNode:
    """A notebook of the views the tests measure: Compare, a 3-point lattice, every drawing kind."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    return nb


# JupyterLab restores earlier tabs: only look inside the notebook that is showing
SHOWN = ".jp-NotebookPanel:not(.lm-mod-hidden) .sparsescope-explorer"


def pane_html(page, cls: str) -> str:
    return page.locator(f"{SHOWN} .{cls}").first.inner_html()

# What a person sees, measured in the page. ``root`` is an element (a widget, an output, the page).
# panes: every widget pane (an ipywidgets HTML box) holding code or a drawing, with its height.
# nodes: every Graphviz node whose label's box (getBBox) is not inside its shape's box.
# drawings: every Graphviz drawing drawn out of proportion, shrunk below half its size while not
#   much wider than its pane (a sliver), cut by a box that does not scroll, or with its root (a
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
    const problem = Math.abs(aspect - 1) > 0.03 ? 'out of proportion'
      : scale < 0.45 && r.width < 1.5 * room.width ? 'a sliver: shrunk below half its size'
      : r.width > room.width + 1 && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX) ? 'cut'
      : rr && (rr.left < room.left - 1 || rr.right > room.right + 1) ? 'its root out of view' : '';
    if (problem)
      out.drawings.push({title: (svg.querySelector('title') || {}).textContent, problem, width: Math.round(r.width),
                         height: Math.round(r.height), room: Math.round(room.width),
                         scale: Math.round(scale * 100) / 100, aspect: Math.round(aspect * 100) / 100});
  }
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
  for (const pre of root.querySelectorAll('pre.code, pre.diff')) {
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
    page.wait_for_function(f"document.body.dataset.jpThemeLight === '{light}'", timeout=30_000)
    page.wait_for_timeout(500)  # the theme's stylesheet applies after the attribute changes


def test_explorer_notebook_steps_in_jupyterlab(browser, lab, artifacts):
    url, token, root = lab
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    page.goto(f"{url}/lab/tree/explorer.ipynb?reset&token={token}", timeout=120_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    try:
        # the kernel is connected once the status bar says so; then Run > Run All Cells
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=120_000)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        explorer = page.locator(SHOWN).first
        # attached, not visible: JupyterLab hides cells scrolled out of view
        explorer.wait_for(state="attached", timeout=180_000)
        explorer.scroll_into_view_if_needed()
        explorer.wait_for(state="visible", timeout=30_000)
        # clicks are handled by the kernel: let the remaining cells finish first
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=180_000)
    except Exception:
        page.screenshot(path=str(artifacts / "explorer-failure.png"))
        raise

    header0 = pane_html(page, "ss-header")
    program0, drawing0 = pane_html(page, "ss-program"), pane_html(page, "ss-drawing")
    page.screenshot(path=str(artifacts / "explorer-step-0.png"), full_page=False)

    # step forward until the drawing and the program pane have both changed
    next_button = explorer.locator(".ss-next")
    changed_program = changed_drawing = False
    for _ in range(12):
        next_button.click()
        page.wait_for_function(
            "([sel, old]) => document.querySelector(sel).innerHTML !== old",
            arg=[f"{SHOWN} .ss-header", header0], timeout=30_000)
        header0 = pane_html(page, "ss-header")
        changed_program = changed_program or pane_html(page, "ss-program") != program0
        changed_drawing = changed_drawing or pane_html(page, "ss-drawing") != drawing0
        if changed_program and changed_drawing:
            break
    explorer.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "explorer-stepped.png"), full_page=False)
    assert changed_drawing, "stepping never changed the drawing pane"
    assert changed_program, "stepping never changed the program pane"
    assert "<svg" in pane_html(page, "ss-drawing")
    assert "spmv" in pane_html(page, "ss-c")  # the generated C is shown
    # the whole notebook: its explorer and render_step's fiber trees (one of 2000 rows)
    assert_readable(measure(page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook").first), "notebook 01", panes=4)

    page.close()


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
    lattices with edge sequences and CFIR: labels inside their shapes, code readable."""
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss
    from compiler import array as xp
    from compiler.lattice.seqderive import seq_lower
    from explorer import export_html

    A, B = sp.random(6, 5, density=0.4, format="csr", random_state=0), sp.random(4, 5, density=0.4, format="csr", random_state=1)
    fused = ss.lower(xp.concat([ss.asarray(A), ss.asarray(B)], axis=0) @ ss.asarray(np.arange(5.0)))
    steps = [s for s in fused.trace if s.stage in ("array", "shapes")]
    P = ss.Tensor.from_numpy(np.array([[0, 1.0, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]]), "csr")
    Q = ss.Tensor.from_numpy(np.array([[6.0, 0, 0, 7]]), "coo")
    steps += seq_lower("yv[l] = sum[i](concat((P[j, i], Q[k, i]), (j, k) -> l) * broadcast(l, x[i]))",
                       P=P, Q=Q, x=np.arange(4.0)).trace.steps
    path = tmp_path / "shapes.html"
    export_html(ss.Trace(steps), path)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(path.as_uri())
    nodes = marks = 0
    for k in range(len(steps)):
        section = page.locator("section:visible").first
        nodes += section.locator("svg g.node").count()
        marks += section.locator('[data-tags^="shape:"]').count()
        page.screenshot(path=str(artifacts / f"export-shapes-{k}.png"), full_page=True)
        assert_readable(measure(section), f"the exported shape-operator page, step {k} ({steps[k].stage})")
        old = section.inner_text()
        page.keyboard.press("ArrowRight")
        if k + 1 < len(steps):
            page.wait_for_function("(old) => [...document.querySelectorAll('section')]"
                                   ".find(s => s.offsetParent !== null).innerText !== old", arg=old)
    assert nodes >= 20 and marks >= 6   # the trees, lattices and CFIR; the operators' marks
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


def test_exported_page_links_c_lines_and_drawing_nodes(browser, tmp_path, artifacts):
    """Compiler Explorer's two-way provenance in the exported page: on the step of a lattice of
    three points, clicking a C line strokes the lattice point it came from, and clicking a
    point outlines its C lines and brings the first into view; the tooltips say what a line
    or a point computes, not its tag."""
    import compiler as ss
    from explorer import export_html
    from explorer.linking import LINK_COLOR

    trace = ss.lower("y[i] = A[i] * B[i] + C[i]", "lattice", A="sv", B="sv", C="sv").trace
    path = tmp_path / "linked.html"
    export_html(trace, path)
    page = browser.new_page(viewport={"width": 1100, "height": 600})
    page.goto(f"{path.as_uri()}#step-{trace.stages().index('lattice')}")
    section = page.locator("section:visible").first
    lines = section.locator(".c-section span.ln[data-tags]")
    assert lines.count() > 0, "the lattice step shows no C to link its points with"
    # a C line whose first tag names a point of the drawing
    tags = [t.split()[0] for t in lines.evaluate_all("ls => ls.map(l => l.getAttribute('data-tags'))")]
    k, tag = next((k, t) for k, t in enumerate(tags) if section.locator(f'svg g.node[data-tags~="{t}"]').count())
    line = lines.nth(k)
    assert "lattice:" not in (line.get_attribute("title") or "") and "y[i]" in line.get_attribute("title")
    before = page.evaluate(LINK_JS, [section.element_handle(), tag])
    assert before["stroke"] != LINK_COLOR
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
    start = page.evaluate(LINK_JS, [section.element_handle(), other])
    assert start["line"] and not start["inView"], "the point's C line is in view before the click"
    section.locator("svg g.node[data-tags]").nth(k).click()
    end = page.evaluate(LINK_JS, [section.element_handle(), other])
    assert end["outlined"] and end["inView"] and end["scrollTop"] > start["scrollTop"], (start, end)
    assert (end["stroke"], end["width"]) == (LINK_COLOR, "4")
    page.screenshot(path=str(artifacts / "export-linked-from-node.png"), full_page=False)
    page.close()


# A drawing's size in its pane: the svg's rendered width, its own (Graphviz: pt, 4/3 px), its
# left offset in its box, the box's width and scroll width, and the level the controls show.
ZOOM_JS = r"""
(art) => {
  const s = art.querySelector('.drawing svg'), d = art.querySelector('.drawing');
  const r = s.getBoundingClientRect(), q = d.getBoundingClientRect();
  return {width: r.width, own: parseFloat(s.getAttribute('width')) * 4 / 3, left: r.left - q.left,
          room: d.clientWidth, scroll: d.scrollWidth, level: art.querySelector('.ss-zoom-level').textContent};
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


def test_tour_steps_both_strategies(browser, lab, artifacts):
    """The tour's "done when": step CSR SpMV by both strategies, see lattices, looplet nests,
    the C, and the timing against scipy."""
    url, token, root = lab
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    page.goto(f"{url}/lab/tree/tour.ipynb?reset&token={token}", timeout=120_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    try:
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=120_000)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        explorers = page.locator(SHOWN)
        explorers.nth(1).wait_for(state="attached", timeout=240_000)
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=240_000)
        page.locator("table.timing").first.wait_for(state="attached", timeout=60_000)
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
                                       timeout=15_000)
            except Exception:
                return needle in drawing.inner_html()  # the last step: nothing changes any more
        return False

    lattice, looplets = explorers.nth(0), explorers.nth(1)
    # the side-by-side view: both strategies' C and drawings, each pane showing what it holds
    compare = page.locator(f"{SHOWN_NOTEBOOK} .sparsescope-compare").first
    compare.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "tour-compare.png"), full_page=False)
    assert_readable(measure(compare), "the tour's Compare", panes=4)
    assert_columns_line_up(compare, "the tour's Compare")

    assert step_until(lattice, 'data-kind="lattice"'), "no lattice drawn while stepping the lattice lowering"
    assert "<svg" in lattice.locator(".ss-drawing").first.inner_html()
    assert "lattice_y" in lattice.locator(".ss-c").first.inner_html()
    page.screenshot(path=str(artifacts / "tour-lattice.png"), full_page=False)
    assert_readable(measure(lattice), "the tour's lattice explorer", panes=3)

    # redrawing a step, seen from the browser (a click, the kernel's answer, the new panes)
    header = lattice.locator(".ss-header").first
    times = []
    for _ in range(3):
        old = header.inner_html()
        t0 = time.perf_counter()
        lattice.locator(".ss-prev").first.click()
        page.wait_for_function("([el, old]) => el.innerHTML !== old", arg=[header.element_handle(), old],
                               timeout=15_000)
        times.append(time.perf_counter() - t0)
    print("tour: redrawing a step in the browser took " + ", ".join(f"{t:.3f}" for t in times) + " s")
    assert step_until(looplets, 'data-kind="looplet-nest"'), "no looplet nest drawn while stepping"
    assert step_until(looplets, "Stepper"), "the nest of a CSR row (a Stepper of Spikes) was never drawn"
    assert "y_kernel" in looplets.locator(".ss-c").first.inner_html()
    looplets.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "tour-looplets.png"), full_page=False)
    # at a lower:* step the looplet being lowered and its C are marked together: its C lines
    # carry the focus bar, the pane has scrolled them into view, and the nest's node of the
    # same tag is filled in the focus colour
    from explorer.renderers import FOCUS_COLOR

    assert step_until(looplets, "ss-focus", where=".ss-c"), "no lower:* step marked its C"
    assert "lower:" in looplets.locator(".ss-header").first.inner_text()
    # come to it again with the C pane scrolled to its end: the pane scrolls back to the focus
    header = looplets.locator(".ss-header").first
    for button in (".ss-prev", ".ss-next"):
        old = header.inner_html()
        if button == ".ss-next":
            assert looplets.locator(".ss-c span.ln").first.evaluate(SCROLL_END_JS), "the C pane does not scroll"
        looplets.locator(button).first.click()
        page.wait_for_function("([el, old]) => el.innerHTML !== old", arg=[header.element_handle(), old],
                               timeout=15_000)
    at_focus = [looplets.element_handle(), FOCUS_COLOR]
    page.wait_for_function("arg => { const m = (FOCUS_JS)(arg); return m && m.inView; }"
                           .replace("FOCUS_JS", FOCUS_JS.strip()), arg=at_focus, timeout=10_000)
    focus = page.evaluate(FOCUS_JS, at_focus)
    assert focus["lines"] and focus["filled"], f"the lowered looplet and its C are not marked together: {focus}"
    page.screenshot(path=str(artifacts / "tour-lower-step-focus.png"), full_page=False)

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
    page.wait_for_function("el => el.value !== 'all'", arg=select.element_handle(), timeout=30_000)
    assert select.input_value().split(" (")[0] == tags[0]   # "looplet:Stepper:4 (A on j)"
    page.wait_for_function("([el, old]) => el.innerHTML !== old",
                           arg=[program.element_handle(), program_all], timeout=30_000)
    page.screenshot(path=str(artifacts / "tour-provenance-picked.png"), full_page=False)
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
                           arg=[c_pane.element_handle(), before], timeout=60_000)
    relower = [time.perf_counter() - t0]
    csr_c = c_pane.inner_html()
    assert "A0_pos" not in csr_c and "A1_pos" in csr_c
    t0 = time.perf_counter()
    playground.locator(".ss-level-A-0 select").first.select_option(label="SparseList")  # DCSR
    page.wait_for_function("([el, old]) => el.innerHTML !== old",
                           arg=[c_pane.element_handle(), csr_c], timeout=60_000)
    relower.append(time.perf_counter() - t0)
    print("tour: re-lowering after a format change (dcsr -> csr, csr -> dcsr), in the browser, took "
          + ", ".join(f"{t:.3f}" for t in relower) + " s (the kernels were compiled before, so cached)")
    assert "A0_pos" in c_pane.inner_html()
    assert playground.locator(".ss-preset-A select").first.evaluate(
        "el => el.options[el.selectedIndex].text") == "dcsr"
    page.screenshot(path=str(artifacts / "tour-format-picker.png"), full_page=False)
    page.close()


# At a lower:* step: the C lines with the focus bar (their tags), whether the first is inside
# the C pane's visible part, and the drawing nodes of those tags filled in the focus colour.
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
  const filled = [...root.querySelectorAll('.ss-drawing svg g.node[data-tags]')]
    .filter(g => g.getAttribute('data-tags').split(' ').some(t => tags.has(t)))
    .filter(g => { const s = g.querySelector('polygon, ellipse, path, rect');
                   return s && (s.getAttribute('fill') || '').toLowerCase() === focus.toLowerCase(); })
    .map(g => (g.querySelector('title') || {}).textContent);
  return {lines: lines.length, tags: [...tags], filled, inView: r.top >= view.top - 1 && r.bottom <= view.bottom + 1,
          scrollTop: box ? box.scrollTop : null};
}
"""


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
    assert page.evaluate(LINK_JS, [root, tag])["stroke"] != LINK_COLOR
    lines.nth(k).scroll_into_view_if_needed()
    lines.nth(k).hover()
    linked = page.evaluate(LINK_JS, [root, tag])
    assert linked["stroke"] == LINK_COLOR and linked["outlined"], linked
    assert program.evaluate_all(outlined), "hovering a C line outlined none of the program's parts of its tag"
    page.screenshot(path=str(artifacts / "views-hover-c-line.png"), full_page=False)
    explorer.locator(".ss-header").first.hover()
    assert page.evaluate(LINK_JS, [root, tag])["stroke"] != LINK_COLOR, "the point stayed stroked after the pointer left"
    node = explorer.locator(f'.ss-drawing svg g.node[data-tags~="{tag}"]').first
    node.scroll_into_view_if_needed()
    node.hover()
    assert lines.nth(k).evaluate("l => getComputedStyle(l).outlineStyle") == "solid"
    explorer.locator(".ss-header").first.hover()


# Scroll the box that scrolls a part (its pane) to its end.
SCROLL_END_JS = r"""
(el) => {
  for (let b = el.parentElement; b; b = b.parentElement) {
    const o = getComputedStyle(b).overflowY;
    if ((o === 'auto' || o === 'scroll') && b.scrollHeight > b.clientHeight + 1) { b.scrollTop = b.scrollHeight; return true; }
  }
  return false;
}
"""


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
    page.wait_for_function(stroked, arg=[root, tag, LINK_COLOR], timeout=10_000)
    # the kernel's answer (the tag chosen, the drawing drawn again) keeps the point stroked
    page.wait_for_function("el => el.value !== 'all'", arg=select.element_handle(), timeout=30_000)
    assert select.input_value().split(" (")[0] == tag
    page.wait_for_function("root => !root.querySelector('.ss-drawing svg').ssOld", arg=root, timeout=30_000)
    page.wait_for_function(stroked, arg=[root, tag, LINK_COLOR], timeout=10_000)
    page.screenshot(path=str(artifacts / "views-linked-from-c.png"), full_page=False)

    # the reverse: a point, clicked with the C pane scrolled to its end, outlines its C lines
    # and scrolls the pane to the first (after going back to every tag's colours)
    select.select_option(label="all")
    page.wait_for_function("root => root.querySelectorAll('.ss-drawing svg g.node[data-tags]').length > 1",
                           arg=root, timeout=30_000)
    nodes = explorer.locator(".ss-drawing svg g.node[data-tags]")
    node_firsts = nodes.evaluate_all("gs => gs.map(g => g.getAttribute('data-tags').split(' ')[0])")
    k, other = next((k, t) for k, t in enumerate(node_firsts) if t != tag and t in firsts)
    assert lines.first.evaluate(SCROLL_END_JS), "the C pane does not scroll"
    start = page.evaluate(LINK_JS, [root, other])
    assert start["line"] and not start["inView"], start
    nodes.nth(k).click()
    shown = ("([root, tag]) => { const m = (LINK_JS)([root, tag]); return m.inView && m.outlined; }"
             .replace("LINK_JS", LINK_JS.strip()))
    page.wait_for_function(shown, arg=[root, other], timeout=30_000)
    end = page.evaluate(LINK_JS, [root, other])
    assert end["scrollTop"] < start["scrollTop"], (start, end)
    page.screenshot(path=str(artifacts / "views-linked-from-node.png"), full_page=False)


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
                           arg=[compare.locator(".ss-stage").first.element_handle(), old], timeout=30_000)
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
        page.wait_for_function(stroked, arg=[column, tag, LINK_COLOR], timeout=10_000)
        assert page.evaluate(outside, [notebook, column, tag]) == 0, f"column {k}: {tag} linked outside it"
        chosen.append((column, tag))
        page.screenshot(path=str(artifacts / f"views-compare-linked-{'ab'[k]}.png"), full_page=False)
    column, tag = chosen[0]
    assert page.evaluate(LINK_JS, [column, tag])["stroke"] == LINK_COLOR, \
        "clicking in the second column unlinked the first column's choice"


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
    page.goto(f"{url}/lab/tree/tour-saved.ipynb?reset&token={token}", timeout=120_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    try:
        compare = page.locator(f"{SHOWN_NOTEBOOK} .sparsescope-compare").first
        compare.wait_for(state="attached", timeout=60_000)
        explorer = page.locator(SHOWN).first
        c_pane = explorer.locator(".ss-c").first
        c_pane.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        box = c_pane.bounding_box()
        assert box and box["height"] >= 100, f"the Explorer's C pane drew {box}"
        assert "lattice_y" in c_pane.inner_html() or "y_kernel" in c_pane.inner_html()
        assert compare.locator(".ss-c").count() == 2, "Compare's two C panes"
        # one note per view says it is a saved view, instead of a red icon on each of its widgets
        state = page.evaluate(SAVED_STATE_JS, page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook").first.element_handle())
        assert state["marked"] > 0 and state["views"] >= 5, f"the tour's views are not drawn from saved state: {state}"
        assert state["icons"] == 0, f"ipywidgets' disconnected icons show in the saved views: {state}"
        assert state["notes"] == state["views"], f"each saved view should say once that it is saved: {state}"
        page.screenshot(path=str(artifacts / "tour-saved.png"))
        # every view as saved (two Explorers, Compare, the format pickers' Explorer, the
        # Playground's): each pane >= 100 px, labels inside their shapes, code readable
        notebook = page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook").first
        compare.scroll_into_view_if_needed()
        assert_columns_line_up(compare, "the saved tour's Compare")
        page.screenshot(path=str(artifacts / "tour-saved-compare.png"))
        assert page.locator(SHOWN).count() >= 4, "the saved tour's Explorers"
        assert_readable(measure(notebook), "the saved tour (light)", panes=SAVED_TOUR_PANES)
        # the fiber tree of section 1, as saved, in the dark theme: an inline drawing on the
        # theme's background (a bare SVG output was an image the theme cannot reach, a white box)
        set_theme(page, "JupyterLab Dark")
        tree = page.locator(f"{SHOWN_NOTEBOOK} .jp-Cell").nth(4).locator(".jp-OutputArea-output").first
        tree.scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts / "tour-saved-fiber-tree-dark.png"))
        m = measure(tree)
        assert m["dcount"] == 1 and m["lcount"] >= 5, f"the fiber tree is not an inline drawing: {m}"
        assert_readable(m, "the tour's fiber tree (dark)")
        assert_readable(measure(notebook), "the saved tour (dark)", panes=SAVED_TOUR_PANES)
        compare.scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts / "tour-saved-compare-dark.png"))
    except Exception:
        page.screenshot(path=str(artifacts / "tour-saved-failure.png"))
        raise
    finally:
        set_theme(page, "JupyterLab Light")
        page.close()


def open_and_run(page, url: str, token: str, name: str, artifacts: pathlib.Path) -> None:
    """Open notebook ``name`` in JupyterLab, run all its cells, wait until the kernel is idle."""
    page.goto(f"{url}/lab/tree/{name}?reset&token={token}", timeout=120_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    try:
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=120_000)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        page.locator(f"{SHOWN_NOTEBOOK} .sparsescope-compare").first.wait_for(state="attached", timeout=240_000)
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=240_000)
        page.locator(f"{SHOWN_NOTEBOOK} .views-fibers").first.wait_for(state="attached", timeout=60_000)
    except Exception:
        page.screenshot(path=str(artifacts / f"{name}-failure.png"))
        raise


SHOWN_NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"


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
        # Compare's one stage slider moves both columns: Home goes to parse on both sides, then
        # the arrow keys on to the lattice of j next to the unfurl of j (each column says its step)
        compare.scroll_into_view_if_needed()
        handle = compare.locator(".ss-stage-slider .noUi-handle").first
        steps = [compare.locator(f".ss-step-{side}").first for side in "ab"]
        handle.focus()
        handle.press("Home")
        page.wait_for_function("els => els.every(e => /step 0 of \\d+: parse/.test(e.innerText))",
                               arg=[e.element_handle() for e in steps], timeout=30_000)
        for _ in range(40):
            if "index j" in compare.locator(".ss-stage").first.inner_text():
                break
            old = compare.locator(".ss-stage").first.inner_html()
            handle.press("ArrowRight")
            page.wait_for_function("([el, old]) => el.innerHTML !== old",
                                   arg=[compare.locator(".ss-stage").first.element_handle(), old], timeout=30_000)
        assert "index j" in compare.locator(".ss-stage").first.inner_text()
        page.wait_for_function("els => /lattice/.test(els[0].innerText) && /unfurl/.test(els[1].innerText)",
                               arg=[e.element_handle() for e in steps], timeout=30_000)
        assert "forall j" in compare.locator(".ss-drawing").nth(0).inner_text()
        page.screenshot(path=str(artifacts / "views-compare-index-j.png"), full_page=False)
        assert_readable(measure(compare), "Compare at the lattice and unfurl of j", panes=4)
        assert_columns_line_up(compare, "Compare at the lattice and unfurl of j")
        # the explorer's diff pane says what it shows: a lattice step's input, not a diff
        assert "input of lattice" in three.locator(".ss-diff-title").first.inner_text()
        # under the lattice, a legend of its notation
        legend = three.locator(".ss-drawing .ss-legend").first.inner_text()
        assert "[iterated | located]" in legend and "∪" in legend
        link_compare_columns_apart(page, compare, artifacts)
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
                page.screenshot(path=str(artifacts / f"views-{name}-{tag}.png"), full_page=False)
            # both strategies' C and drawings (4 panes), at least 100 px tall each
            assert_readable(measure(compare), f"Compare ({tag})", panes=4)
            assert_readable(measure(notebook), f"the views notebook ({tag})")
            tree_box_linked_and_zoomed(page, three, tag, artifacts)
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
        page.screenshot(path=str(artifacts / "views-fibers-actual-size.png"), full_page=False)
        tree.locator(".ss-zoom-fit").click()
        m = tree.evaluate(ZOOM_JS)
        assert m["width"] <= m["room"] + 1 and m["scroll"] <= m["room"] + 1, m
    finally:
        set_theme(page, "JupyterLab Light")
        page.close()


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
                               arg=[explorer.locator(".ss-header").first.element_handle(), header], timeout=15_000)
    tree = explorer.locator(cfir).first
    tree.wait_for(state="attached", timeout=30_000)
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
                           timeout=30_000)
    # (the kernel redraws the pane with the tag chosen: measure the box drawn last)
    page.wait_for_timeout(500)
    node = explorer.locator(f'{cfir} svg g.node[data-tags~="{tag}"]').first
    filled = node.evaluate(FILL_CONTRAST_JS)
    assert filled["fill"] == LINK_COLOR and filled["ratio"] >= 3, (theme, filled)
    page.screenshot(path=str(artifacts / f"views-tree-linked-{theme}.png"), full_page=False)
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
                               arg=[explorer.locator(".ss-header").first.element_handle(), header], timeout=15_000)
    page.wait_for_function("a => a.querySelector('.ss-zoom-level').textContent === '110%'",
                           arg=explorer.locator(cfir).first.element_handle(), timeout=15_000)
    m = explorer.locator(cfir).first.evaluate(ZOOM_JS)
    assert abs(m["width"] - 1.1 * m["own"]) < 1, m
    # back to fit for the measures that follow
    explorer.locator(cfir).first.locator(".ss-zoom-fit").click()


def test_playground_relowers_on_typing_and_switching_strategy(browser, lab, artifacts):
    """Typing an expression and switching the strategy re-render the C pane with the new kernel
    (its text and its height measured); a typo shows the parser's message; the pickers offer every
    level both strategies take; the schedule box shows only under the lattice strategy."""
    url, token, root = lab
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.goto(f"{url}/lab/tree/playground.ipynb?reset&token={token}", timeout=120_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    play = page.locator(f"{SHOWN_NOTEBOOK} .sparsescope-playground").first
    try:
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=120_000)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        play.wait_for(state="attached", timeout=180_000)
        page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=180_000)
    except Exception:
        page.screenshot(path=str(artifacts / "playground-failure.png"))
        raise
    play.scroll_into_view_if_needed()
    c = play.locator(".ss-c").first
    shown = "el => ({text: el.innerText, height: el.getBoundingClientRect().height})"

    def wait_for_c(word: str) -> dict:
        page.wait_for_function("([el, w]) => el.innerText.includes(w)", arg=[c.element_handle(), word],
                               timeout=60_000)
        return c.evaluate(shown)

    first = c.evaluate(shown)
    assert "lattice_y" in first["text"] and "z_val" not in first["text"] and first["height"] >= 100
    # since issue 29 the lattice strategy builds every output level (some through a SparseList it
    # converts): y's level menu offers SparseBand and marks nothing
    # (ipywidgets draws an option's spaces as no-break spaces)
    options = lambda: [o.replace("\xa0", " ") for o in play.locator(".ss-level-y-0 select option").all_inner_texts()]
    assert "SparseBand" in options() and not [o for o in options() if o.startswith("✗")]
    assert play.locator(".ss-schedule").first.is_visible()

    # a typo: the parser's message and caret under the box, the kernel stays
    box = play.locator(".ss-expression input").first
    box.fill("y[i] = A[i, j] * * x[j]")
    box.press("Enter")
    error = play.locator(".ss-parse-error").first
    error.wait_for(state="visible", timeout=30_000)
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
    page.screenshot(path=str(artifacts / "playground-typed.png"), full_page=False)

    # the strategy toggle: the looplet kernel of the same expression, no schedule box
    t0 = time.perf_counter()
    play.locator(".ss-strategy button", has_text="looplets").first.click()
    switched = wait_for_c("y_kernel")
    took.append(time.perf_counter() - t0)
    print("playground: a new expression, then the looplet strategy, re-lowered and shown in "
          + ", ".join(f"{t:.3f}" for t in took) + " s (compiling the C included unless cached)")
    assert "z_val" in switched["text"] and "lattice_y" not in switched["text"] and switched["height"] >= 100
    assert not play.locator(".ss-schedule").first.is_visible()
    assert "SparseBand" in options() and not any(o.startswith("✗") for o in options())
    changed = play.locator(".ss-what-changed").first.inner_text()
    assert "only looplets" in changed and "looplet nest" in changed
    page.screenshot(path=str(artifacts / "playground-looplets.png"), full_page=False)
    play.locator(".ss-what-changed").first.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "playground-what-changed.png"), full_page=False)
    assert_readable(measure(play), "the playground", panes=2)
    page.close()
