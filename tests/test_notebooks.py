"""The course notebooks as they ship (notebooks/*.ipynb, made by notebooks/make_notebooks.py)."""

from __future__ import annotations

import json
import pathlib

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
VIEW = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_widget_a_notebook_shows_is_stored(path):
    """Each widget output has its model in the notebook's stored widget state, so JupyterLab draws
    it when the notebook is opened, before any cell runs: notebooks 03-08 stored none, and each of
    their Explorers and Compares read "Error displaying widget: model not found"."""
    nb = json.loads(path.read_text())
    shown = [out["data"][VIEW]["model_id"] for cell in nb["cells"] for out in cell.get("outputs", [])
             if VIEW in out.get("data", {})]
    stored = nb["metadata"].get("widgets", {}).get(STATE, {}).get("state", {})
    missing = [m for m in shown if m not in stored]
    assert not missing, f"{path.name}: {len(missing)} of its {len(shown)} widgets have no stored state"
