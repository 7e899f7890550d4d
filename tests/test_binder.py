"""The Binder environment (binder/) installs everything the notebooks need.

mybinder.org builds with repo2docker from the repository root: ``binder/requirements.txt``
is pip-installed there, ``binder/apt.txt`` lists Debian packages. These tests check that the
requirements reach every runtime dependency in pyproject.toml plus the extras the notebooks
need (widgets, JupyterLab), that every module the notebooks import is provided, and that a C
compiler is installed; and one builds the environment as repo2docker does (a fresh virtual
environment, ``pip install -r binder/requirements.txt`` from the root, on runtime.txt's Python)
and, in it, imports every module the notebooks import and executes the tour (the suite runs
every notebook in its own environment). Only mybinder.org's own Docker layer is not exercised: its
base images come from a registry this machine cannot reach.
"""

from __future__ import annotations

import ast
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

ROOT = pathlib.Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
PROJECT = "sparsescope"

#: what the notebooks need beyond the runtime dependencies
NOTEBOOK_EXTRAS = {"ipywidgets", "jupyterlab"}

#: import name -> distribution, where they differ or the module arrives through another package
PROVIDED_BY = {"IPython": "ipywidgets", "ipywidgets": "ipywidgets", "scipy": "scipy", "numpy": "numpy",
               "pygments": "pygments", "graphviz": "graphviz", "cffi": "cffi"}
OWN_PACKAGES = {"compiler", "explorer", "widgets"}


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def dist_name(requirement: str) -> str:
    """``"ipywidgets>=8.0"`` -> ``"ipywidgets"``; ``"sparsescope[widgets]"`` -> ``"sparsescope"``."""
    return re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def extras_of(requirement: str) -> list[str]:
    m = re.search(r"\[([^\]]*)\]", requirement)
    return [e.strip() for e in m.group(1).split(",")] if m else []


def reachable(requirement_lines: list[str], project: dict) -> set[str]:
    """The distributions a requirements file installs, following the project's own extras."""
    deps = project["project"]["dependencies"]
    optional = project["project"].get("optional-dependencies", {})
    found: set[str] = set()
    seen_extras: set[str] = set()

    def add_project(extras):
        found.update(dist_name(d) for d in deps)
        for extra in extras:
            if extra in seen_extras:
                continue
            if extra not in optional:
                raise AssertionError(f"binder asks for extra [{extra}], which pyproject.toml does not define")
            seen_extras.add(extra)
            for d in optional[extra]:
                if dist_name(d) == PROJECT:
                    add_project(extras_of(d))
                else:
                    found.add(dist_name(d))

    for raw in requirement_lines:
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-e"):
            line = line[2:].strip()
        if line.startswith(".") or dist_name(line) == PROJECT:
            add_project(extras_of(line))
        else:
            found.add(dist_name(line))
    return found


def requirement_lines() -> list[str]:
    return (BINDER / "requirements.txt").read_text().splitlines()


def test_binder_files_exist():
    assert (BINDER / "requirements.txt").is_file()
    assert (BINDER / "apt.txt").is_file()


def test_requirements_reach_every_runtime_dependency():
    project = pyproject()
    got = reachable(requirement_lines(), project)
    wanted = {dist_name(d) for d in project["project"]["dependencies"]} | NOTEBOOK_EXTRAS
    missing = sorted(wanted - got)
    assert not missing, f"binder/requirements.txt does not install {missing}"


def test_requirements_install_the_repository_itself():
    lines = [l.split("#", 1)[0].strip() for l in requirement_lines()]
    assert any(l.startswith(("-e .", ".")) for l in lines), \
        "binder/requirements.txt must install the repository (repo2docker runs it from the root)"


def test_the_check_can_fail():
    project = pyproject()
    assert "ipywidgets" not in reachable(["-e ."], project)
    assert "jupyterlab" not in reachable(["-e .[widgets]"], project)
    with pytest.raises(AssertionError, match="does not define"):
        reachable(["-e .[no-such-extra]"], project)


def test_a_c_compiler_is_installed():
    packages = {l.split("#", 1)[0].strip() for l in (BINDER / "apt.txt").read_text().splitlines()}
    assert packages & {"gcc", "clang", "build-essential"}, "binder/apt.txt must install a C compiler"


def notebook_imports() -> set[str]:
    names = set()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.add(node.module.split(".")[0])
    return names


def test_every_notebook_import_is_provided():
    got = reachable(requirement_lines(), pyproject())
    stdlib = set(sys.stdlib_module_names)
    unknown = []
    for name in sorted(notebook_imports()):
        if name in stdlib or name in OWN_PACKAGES:
            continue
        dist = PROVIDED_BY.get(name, name.lower())
        if dist not in got:
            unknown.append(f"{name} (from {dist})")
    assert not unknown, f"notebooks import modules binder does not install: {unknown}"


def test_the_binder_environment_imports_what_the_notebooks_import_and_runs_the_tour(tmp_path):
    runtime = (BINDER / "runtime.txt").read_text().strip()
    version = f"python-{sys.version_info.major}.{sys.version_info.minor}"
    if runtime != version:
        pytest.skip(f"binder/runtime.txt asks for {runtime}; this is {version}")
    env_dir = tmp_path / "binder-env"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    # (--no-compile: byte-compiling JupyterLab's files was a third of the install's CPU, and tests nothing)
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-compile",
                              "-r", "binder/requirements.txt"], cwd=ROOT, capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-2000:]
    # every module any notebook imports, imported in the environment itself (the static check
    # above only reads the requirements); the notebooks' cells run in the suite's own nbval run,
    # so here one notebook stands for them: running all of them again took 2-3 minutes of the suite
    modules = sorted(notebook_imports())
    assert {"compiler", "explorer", "widgets"} <= set(modules)
    imported = subprocess.run([str(python), "-c", "import importlib, sys\n"
                               "for m in sys.argv[1:]: importlib.import_module(m)", *modules],
                              cwd=tmp_path, capture_output=True, text=True)
    assert imported.returncode == 0, f"a notebook's import fails in the binder environment:\n{imported.stderr[-3000:]}"
    # the kernel is the environment's own python: no user-level kernel spec may stand in for it.
    # The tour's kernels go to the suite's cache (conftest.py), where the nbval run of the same
    # notebook finds them: compiled kernels are not part of the environment under test.
    env = dict(os.environ, JUPYTER_DATA_DIR=str(tmp_path / "jupyter-data"), JUPYTER_PATH="")
    env.pop("VIRTUAL_ENV", None)
    tour = ROOT / "notebooks" / "00-tour.ipynb"
    run = subprocess.run([str(python), "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                          "--ExecutePreprocessor.timeout=600", "--output-dir", str(tmp_path / "out"), str(tour)],
                         cwd=ROOT / "notebooks", env=env, capture_output=True, text=True)
    assert run.returncode == 0, f"the tour failed in the binder environment:\n{run.stderr[-3000:]}"
    assert (tmp_path / "out" / tour.name).is_file()
