"""Write the course notebooks from the cell lists in ``notebooks/src/`` (the .ipynb files are generated).

Each module ``notebooks/src/nbNN_*.py`` defines ``NAME`` (the notebook's file name) and ``CELLS``,
a list of ``("md" | "code", source)``. One command regenerates and executes every notebook::

    .venv/bin/python notebooks/make_notebooks.py            # write the .ipynb files
    .venv/bin/python notebooks/make_notebooks.py --execute  # ... and run them to store outputs
    .venv/bin/python notebooks/make_notebooks.py --execute 03 05   # only some of them

Keeping the source here makes review and diffs readable; the test suite runs the .ipynb files
with nbval (cells marked ``# NBVAL_CHECK_OUTPUT`` must reproduce their stored output).
"""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import nbformat

HERE = pathlib.Path(__file__).parent
SRC = HERE / "src"


def sources() -> dict:
    """``{notebook name: cells}`` from every module in ``notebooks/src``, in file order."""
    out = {}
    for path in sorted(SRC.glob("nb*.py")):
        spec = importlib.util.spec_from_file_location(f"_notebook_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out[module.NAME] = module.CELLS
    return out


def build(cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src)
                for kind, src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def execute(path: pathlib.Path) -> None:
    """Run a notebook in place (widget state is not stored, which keeps the files small)."""
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                    "--inplace", "--ExecutePreprocessor.store_widget_state=False",
                    "--ExecutePreprocessor.timeout=600", str(path)], check=True)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    run = "--execute" in argv
    only = [a for a in argv if not a.startswith("--")]
    for name, cells in sources().items():
        if only and not any(name.startswith(o) for o in only):
            continue
        path = HERE / name
        nbformat.write(build(cells), path)
        if run:
            execute(path)
        print("wrote" + (" and ran" if run else ""), path.name)


if __name__ == "__main__":
    main()
