"""Write the course notebooks from the cell lists in ``notebooks/src/`` (the .ipynb files are generated).

Each module ``notebooks/src/nbNN_*.py`` defines ``NAME`` (the notebook's file name) and ``CELLS``,
a list of ``("md" | "code", source)``. One command regenerates and executes every notebook::

    .venv/bin/python notebooks/make_notebooks.py            # write the .ipynb files
    .venv/bin/python notebooks/make_notebooks.py --execute  # ... and run them to store outputs
    .venv/bin/python notebooks/make_notebooks.py --execute 03 05   # only some of them

Keeping the source here makes review and diffs readable; the test suite runs the .ipynb files
with nbval (cells marked ``# NBVAL_CHECK_OUTPUT`` must reproduce their stored output).

A module that sets ``WIDGET_STATE = True`` (the tour) is executed with its widgets' state stored
in the notebook's metadata, so JupyterLab draws its widgets as they were before any cell runs;
the others leave it out, which keeps them small. The stored state is trimmed
(:func:`trim_widget_state`) to the widgets the outputs show, without attributes at their default.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys

import nbformat

HERE = pathlib.Path(__file__).parent
SRC = HERE / "src"


def modules() -> list:
    """Every module in ``notebooks/src``, in file order."""
    out = []
    for path in sorted(SRC.glob("nb*.py")):
        spec = importlib.util.spec_from_file_location(f"_notebook_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out.append(module)
    return out


def sources() -> dict:
    """``{notebook name: cells}`` from every module in ``notebooks/src``, in file order."""
    return {module.NAME: module.CELLS for module in modules()}


def build(cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src)
                for kind, src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def execute(path: pathlib.Path, widget_state: bool = False) -> None:
    """Run a notebook in place; with ``widget_state``, store its widgets' state in its metadata
    (``widgets/application/vnd.jupyter.widget-state+json``, which JupyterLab renders from)."""
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                    "--inplace", f"--ExecutePreprocessor.store_widget_state={bool(widget_state)}",
                    "--ExecutePreprocessor.timeout=600", str(path)], check=True)


WIDGET_STATE_KEY = "application/vnd.jupyter.widget-state+json"
VIEW_KEY = "application/vnd.jupyter.widget-view+json"


def _widget_defaults() -> dict:
    """``{(model module, model name): {attribute: default, as JSON}}`` for ipywidgets' models."""
    import ipywidgets

    out, stack = {}, [ipywidgets.Widget]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        traits = cls.class_traits(sync=True)
        if "_model_name" not in traits:
            continue
        defaults = {}
        for name, trait in traits.items():
            try:  # a widget-valued default (a layout, a style) is made per instance: keep it
                defaults[name] = json.loads(json.dumps(trait.default_value))
            except (TypeError, ValueError):
                pass
        out[(traits["_model_module"].default_value, traits["_model_name"].default_value)] = defaults
    return out


def trim_widget_state(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Keep in ``nb``'s stored widget state only the models its outputs show (and the models
    those refer to), each without the attributes at their default, as ipywidgets' own embedding
    does (``drop_defaults``): the front end fills them in from the model's defaults.

    >>> nb = nbformat.v4.new_notebook()
    >>> nb.metadata["widgets"] = {WIDGET_STATE_KEY: {"version_major": 2, "version_minor": 0, "state": {
    ...     "a": {"model_module": "@jupyter-widgets/controls", "model_name": "HTMLModel",
    ...           "state": {"value": "<b>hi</b>", "placeholder": "\u200b", "layout": "IPY_MODEL_b"}},
    ...     "b": {"model_module": "@jupyter-widgets/base", "model_name": "LayoutModel", "state": {"width": None}},
    ...     "c": {"model_module": "@jupyter-widgets/base", "model_name": "LayoutModel", "state": {}}}}}
    >>> cell = nbformat.v4.new_code_cell("w")
    >>> cell.outputs = [nbformat.v4.new_output("display_data", {VIEW_KEY: {"model_id": "a"}})]
    >>> nb.cells = [cell]
    >>> state = trim_widget_state(nb).metadata["widgets"][WIDGET_STATE_KEY]["state"]
    >>> sorted(state), state["a"]["state"], state["b"]["state"]
    (['a', 'b'], {'value': '<b>hi</b>', 'layout': 'IPY_MODEL_b'}, {})
    """
    saved = nb.metadata.get("widgets", {}).get(WIDGET_STATE_KEY)
    if not saved:
        return nb
    models, defaults = saved["state"], _widget_defaults()

    def refs(value):
        if isinstance(value, str) and value.startswith("IPY_MODEL_"):
            yield value[len("IPY_MODEL_"):]
        elif isinstance(value, (list, tuple)):
            for v in value:
                yield from refs(v)
        elif isinstance(value, dict):
            for v in value.values():
                yield from refs(v)

    todo = [out["data"][VIEW_KEY]["model_id"] for cell in nb.cells for out in cell.get("outputs", [])
            if VIEW_KEY in out.get("data", {})]
    kept = {}
    while todo:
        ident = todo.pop()
        if ident in kept or ident not in models:
            continue
        model = kept[ident] = dict(models[ident])
        todo.extend(refs(model["state"]))
        default = defaults.get((model.get("model_module"), model.get("model_name")), {})
        model["state"] = {k: v for k, v in model["state"].items() if k not in default or default[k] != v}
    saved["state"] = kept
    return nb


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    run = "--execute" in argv
    only = [a for a in argv if not a.startswith("--")]
    for module in modules():
        name = module.NAME
        if only and not any(name.startswith(o) for o in only):
            continue
        path = HERE / name
        nbformat.write(build(module.CELLS), path)
        if run:
            widget_state = getattr(module, "WIDGET_STATE", False)
            execute(path, widget_state=widget_state)
            if widget_state:
                nbformat.write(trim_widget_state(nbformat.read(path, as_version=4)), path)
        print("wrote" + (" and ran" if run else ""), path.name)


if __name__ == "__main__":
    main()
