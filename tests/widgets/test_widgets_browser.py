"""A real browser: JupyterLab on localhost, the explorer notebook run in headless Chromium.

Chromium comes from the system's package manager (``./dev test`` installs Debian's
``chromium`` when it may) and Playwright drives it; nothing downloads a browser. The
screenshots are kept in ``test-artifacts/``. Without Chromium the test is skipped,
except under CI, where it must run.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

if CHROMIUM is None:
    if os.environ.get("CI"):
        pytest.fail("CI must run the browser test, but no chromium was found", pytrace=False)
    pytest.skip("no chromium: install Debian's chromium package to run the browser test",
                allow_module_level=True)

playwright_api = pytest.importorskip("playwright.sync_api")


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
    port, token = free_port(), "sparsescope-test"
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}",
           "--LabApp.news_url=", "--ServerApp.disable_check_xsrf=True"]
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


# JupyterLab restores earlier tabs: only look inside the notebook that is showing
SHOWN = ".jp-NotebookPanel:not(.lm-mod-hidden) .sparsescope-explorer"


def pane_html(page, cls: str) -> str:
    return page.locator(f"{SHOWN} .{cls}").first.inner_html()


def test_explorer_notebook_steps_in_jupyterlab(browser, lab):
    url, token, root = lab
    ARTIFACTS.mkdir(exist_ok=True)
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
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "explorer-failure.png"))
        raise

    header0 = pane_html(page, "ss-header")
    program0, drawing0 = pane_html(page, "ss-program"), pane_html(page, "ss-drawing")
    page.screenshot(path=str(ARTIFACTS / "explorer-step-0.png"), full_page=False)

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
    page.screenshot(path=str(ARTIFACTS / "explorer-stepped.png"), full_page=False)
    assert changed_drawing, "stepping never changed the drawing pane"
    assert changed_program, "stepping never changed the program pane"
    assert "<svg" in pane_html(page, "ss-drawing")
    assert "spmv" in pane_html(page, "ss-c")  # the generated C is shown

    page.close()


def test_exported_trace_page_steps_offline(browser, tmp_path):
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
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "export.png"), full_page=True)
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
    # line 3 is marked twice: in the step's program (the emit-c step's program is the C) and
    # in the C artifact; p1 is the drawing node
    assert sorted(selected) == ["SPAN:3", "SPAN:3", "g:p1"], selected
    panes = page.evaluate("[...document.querySelectorAll('span.sel')].map(e => e.closest('.pane, .artifact')"
                          ".querySelector('.pane-title, .artifact-title').textContent)")
    assert len(set(panes)) == 2, panes
    page.locator('nav.provenance button[data-tag=""]').click()
    assert page.evaluate("document.querySelectorAll('.sel').length") == 0
    page.close()


def test_tour_steps_both_strategies(browser, lab):
    """The tour's "done when": step CSR SpMV by both strategies, see lattices, looplet nests,
    the C, and the timing against scipy."""
    url, token, root = lab
    ARTIFACTS.mkdir(exist_ok=True)
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
        page.screenshot(path=str(ARTIFACTS / "tour-failure.png"))
        raise

    def step_until(explorer, needle: str, limit: int = 40) -> bool:
        explorer.scroll_into_view_if_needed()
        drawing = explorer.locator(".ss-drawing").first
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
    assert step_until(lattice, 'data-kind="lattice"'), "no lattice drawn while stepping the lattice lowering"
    assert "<svg" in lattice.locator(".ss-drawing").first.inner_html()
    assert "lattice_y" in lattice.locator(".ss-c").first.inner_html()
    page.screenshot(path=str(ARTIFACTS / "tour-lattice.png"), full_page=False)
    assert step_until(looplets, 'data-kind="looplet-nest"'), "no looplet nest drawn while stepping"
    assert step_until(looplets, "Stepper"), "the nest of a CSR row (a Stepper of Spikes) was never drawn"
    assert "y_kernel" in looplets.locator(".ss-c").first.inner_html()
    looplets.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "tour-looplets.png"), full_page=False)

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
    page.screenshot(path=str(ARTIFACTS / "tour-provenance-picked.png"), full_page=False)
    timing = page.locator("table.timing").first.inner_html()
    assert "scipy" in timing

    # the playground: choosing another format in a picker re-lowers, and the C pane changes
    playground = explorers.nth(2)
    playground.scroll_into_view_if_needed()
    c_pane = playground.locator(".ss-c").first
    # the notebook itself set the preset to dcsr (a checked cell); go back to csr first
    before = c_pane.inner_html()
    playground.locator(".ss-preset-A select").first.select_option(label="csr")
    page.wait_for_function("([el, old]) => el.innerHTML !== old",
                           arg=[c_pane.element_handle(), before], timeout=60_000)
    csr_c = c_pane.inner_html()
    assert "A0_pos" not in csr_c and "A1_pos" in csr_c
    playground.locator(".ss-level-A-0 select").first.select_option(label="SparseList")  # DCSR
    page.wait_for_function("([el, old]) => el.innerHTML !== old",
                           arg=[c_pane.element_handle(), csr_c], timeout=60_000)
    assert "A0_pos" in c_pane.inner_html()
    assert playground.locator(".ss-preset-A select").first.evaluate(
        "el => el.options[el.selectedIndex].text") == "dcsr"
    page.screenshot(path=str(ARTIFACTS / "tour-format-picker.png"), full_page=False)
    page.close()
