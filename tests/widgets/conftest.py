"""The real browser's set-up for the browser tests (test_browser_*.py): headless Chromium, and
JupyterLab (and the classic notebook interface) on localhost serving scratch copies of the notebooks.

Chromium comes from the system's package manager (``./dev test`` installs Debian's
``chromium`` when it may) and Playwright drives it; nothing downloads a browser. The
screenshots are kept as test artifacts in ``$SPARSESCOPE_SCREENSHOTS`` when it is set (CI sets
it), else in the pytest temporary directory (``screenshots*/`` under ``--basetemp``); the path
is printed. Without Chromium the browser tests are skipped, except under CI, where they must run.
Chromium and JupyterLab start at the first test that asks for them and serve every browser test
module (./dev test hands this folder's files to one worker, one after the other: tests/conftest.py);
they stop when the worker's next test is in another folder (:data:`RUNNING`).
"""

from __future__ import annotations

import importlib.util
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
from nbformat.sign import NotebookNotary
from browser_measure import patient

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def chromium() -> str:
    """The system's Chromium; a test that needs it is skipped without it (failed under CI)."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser test, but no chromium was found", pytrace=False)
        pytest.skip("no chromium: install Debian's chromium package to run the browser test")
    return CHROMIUM


@pytest.fixture(scope="session")
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


#: what the browser tests started, ``{name: (value, its generator)}``: Chromium and the Jupyter servers (with
#: their notebooks' kernels), started by the first test that asks and stopped once the worker's next test is
#: not one of this folder's (:func:`pytest_runtest_teardown`), where session fixtures lived on while the worker
#: ran other files, about 1 GB at the end of ``./dev test``, at its memory peak (3,986 MB of the 4 GB)
RUNNING: dict[str, tuple] = {}
HERE = pathlib.Path(__file__).resolve().parent


def running(name: str, start) -> object:
    """What ``start()`` (a generator: it yields the value, then stops it when closed) yields, started once
    while this folder's tests run."""
    if name not in RUNNING:
        made = start()
        RUNNING[name] = (next(made), made)
    return RUNNING[name][0]


def stop_running() -> None:
    """Stop everything :func:`running` started, the last started first."""
    while RUNNING:
        RUNNING.pop(next(reversed(RUNNING)))[1].close()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    # (after the runner's own teardown: the test's pages are closed)
    if nextitem is None or HERE not in nextitem.path.parents:
        stop_running()


def pytest_sessionfinish(session):
    stop_running()


@pytest.fixture()
def browser(chromium):
    playwright_api = pytest.importorskip("playwright.sync_api")

    def start():
        with playwright_api.sync_playwright() as p:
            b = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            try:
                yield PatientBrowser(b)
            finally:
                b.close()
    return running("browser", start)


class PatientBrowser:
    """The browser, whose pages' waits without a bound of their own stretch with the machine's load
    (``browser_measure.patient``), as the tests' explicit bounds do."""

    def __init__(self, browser):
        self.browser = browser

    def new_page(self, **options):
        page = self.browser.new_page(**options)
        page.set_default_timeout(patient(30_000))
        return page


@pytest.fixture()
def lab(chromium, tmp_path_factory):
    """JupyterLab serving a scratch copy of the notebooks (the browser may save into it)."""
    return running("lab", lambda: start_lab(tmp_path_factory))


def start_lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    for source, target in (("01-explorer.ipynb", "explorer.ipynb"), ("00-tour.ipynb", "tour.ipynb")):
        nb = nbformat.read(ROOT / "notebooks" / source, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, root / target)
    # the tour and notebooks 01, 07, 09 and 10 as they ship (outputs and stored widget state), for opening
    # without running them, trusted as `jupyter trust` does (JupyterLab shows no widget of an
    # untrusted output), with the signatures kept in this scratch directory
    notary = [f"--NotebookNotary.db_file={root / 'nbsignatures.db'}",
              f"--NotebookNotary.secret_file={root / 'notebook_secret'}"]
    signer = NotebookNotary(db_file=str(root / "nbsignatures.db"), secret_file=str(root / "notebook_secret"))
    course = [(path.name, f"{path.name[:2]}-saved.ipynb") for path in sorted((ROOT / "notebooks").glob("0[79]-*.ipynb"))]
    for source, target in (("00-tour.ipynb", "tour-saved.ipynb"), ("01-explorer.ipynb", "explorer-saved.ipynb"),
                           ("10-shape-operators.ipynb", "shapes-saved.ipynb"), *course):
        saved = nbformat.read(ROOT / "notebooks" / source, as_version=4)
        signer.sign(saved)
        nbformat.write(saved, root / target)
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
    settings = root / ".jupyter" / "lab" / "user-settings" / "@jupyterlab"
    (settings / "notebook-extension").mkdir(parents=True)
    (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    # no toast asking whether to fetch Jupyter's news, nor one saying a newer JupyterLab is out:
    # they would sit in every screenshot (the settings of this scratch config dir, not the user's)
    (settings / "apputils-extension").mkdir()
    (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    yield from serve(cmd, root, port, token, "JupyterLab")


def serve(cmd: list[str], root: pathlib.Path, port: int, token: str, what: str):
    """Run the Jupyter server ``cmd`` (``what``, for the error) in ``root`` until the generator is closed;
    yields ``(url, token, root)`` once it answers."""
    path = os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(root / ".jupyter"), "PYTHONPATH": path}
    log = open(root / "server.log", "w")
    proc = subprocess.Popen(cmd, cwd=root, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + patient(120_000) / 1000
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:
                    json.load(r)
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"{what} did not start:\n" + (root / "server.log").read_text())
                time.sleep(0.5)
        yield url, token, root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture()
def classic(chromium, tmp_path_factory):
    """The classic notebook interface (nbclassic, the test extra installs it) serving a notebook of
    the views' linked steps; skipped, saying so, where nbclassic is not installed (failed under CI)."""
    if importlib.util.find_spec("nbclassic") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the classic notebook's test, but nbclassic is not installed", pytrace=False)
        pytest.skip("nbclassic is not installed (pip install -e '.[test]' installs it): "
                    "the classic notebook interface is not tested")
    return running("classic", lambda: start_classic(tmp_path_factory))


def start_classic(tmp_path_factory):
    root = tmp_path_factory.mktemp("classic")
    nbformat.write(views_notebook([c for c in VIEWS if "views-seq" in c or "views-linked" in c or c is VIEWS[0]]),
                   root / "linked.ipynb")
    port, token = free_port(), "sparsescope-test"
    cmd = [sys.executable, "-m", "nbclassic", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--ServerApp.disable_check_xsrf=True"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    yield from serve(cmd, root, port, token, "The classic notebook")


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
    # the looplets' integer facts, a table drawn from the step's data
    """facts = explore(ss.lower("y[i] = A[i, j] * x[j]", "looplets", A="csr", x="dense").trace)
display(HTML("<div class='views-facts'>" + render_step(facts.step(next(i for i, s in enumerate(facts.steps) if s.stage == "int-facts"))) + "</div>"))""",
    # shape operators by the lattice strategy: the derivations, lattices and CFIR of y = [A; B] x
    """import scipy.sparse as sp
from compiler import array as xp
P, Q = (sp.random(n, 5, density=0.4, format="csr", random_state=n) for n in (6, 4))
seq = explore(ss.lower(xp.concat([ss.asarray(P), ss.asarray(Q)], axis=0) @ ss.asarray(np.arange(5.0)), strategy="lattice").trace)
display(HTML("<div class='views-seq'>" + "".join(render_step(seq.step(i), linked=True) for i, s in enumerate(seq.steps) if s.stage in ("seq-derive", "lattice", "cfir")) + "</div>"))""",
    # steps as a notebook shows them, linked (clicking a node outlines its C lines): a union whose
    # operand B has fill 2 (its line where B is absent computes A * 2), two statements on one line,
    # and by the looplets a constant folded from A's fill (A * 2 + 1 is 1.0 where A is absent)
    """from compiler.looplets.language import loop_program
fill_A = ss.Tensor.from_numpy(np.array([1.5, 0.0, 0.0, 3.0]), "sv")
fill_B = ss.Tensor.from_numpy(np.array([2.0, 5.0, 2.0, -1.0]), ss.parse_format("sparse", fill=2.0))
filled = explore(ss.lower("y[i] = A[i] * B[i]", "lattice", y="dense", A=fill_A, B=fill_B).trace)
one_line = loop_program(source="def one_line(y, z, a, b):\\n    for i in _:\\n        y[i] = a[i] * 2.0; z[i] += a[i] + b[i]\\n")
shared = explore(ss.lower(one_line, "looplets", y="dense", z="dense", a=fill_A, b=fill_B).trace)
folded = explore(ss.lower("y[i] = A[i] * 2 + 1", "looplets", y="dense", A=fill_A).trace)
display(HTML("<div class='views-linked'>" + render_step(filled.step(0), linked=True)
             + render_step(shared.step(shared.stages().index("program")), linked=True)
             + render_step(folded.step(0), linked=True) + "</div>"))""",
    # a loop program's statements drawn as trees, each node in the colour of the C it computes
    """from compiler.looplets.gallery import spmv_then_axpy
loops = explore(ss.lower(spmv_then_axpy, "looplets", y="dense", z="dense", A="csr", x="dense", b="sv").trace)
display(HTML("<div class='views-loop'>" + render_step(loops.step(loops.stages().index("program")), parts=["artifacts"]) + "</div>"))""",
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
