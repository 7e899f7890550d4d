"""Point the ``graphviz`` package at a working ``dot``.

A system Graphviz is used when one is installed. Otherwise we fall back to the
``graphviz-pure`` wheel (a self-contained ``dot`` from PyPI), so the explorer
draws graphs on a machine with no system packages.

>>> dot_binary().exists()
True
"""

from __future__ import annotations

import functools
import os
import pathlib
import shutil
import sys


@functools.lru_cache(maxsize=None)
def dot_binary() -> pathlib.Path:
    """The ``dot`` executable in use, configuring the ``graphviz`` package on first call."""
    from graphviz.backend import dot_command

    found = shutil.which("dot")
    if found is None:
        # The console script of graphviz-pure sits beside this interpreter in a venv.
        beside = pathlib.Path(sys.executable).parent / "graphviz-pure"
        found = str(beside) if beside.exists() else shutil.which("graphviz-pure")
    if found is None:
        raise RuntimeError("no Graphviz renderer found: install the 'graphviz-pure' wheel "
                           "(pip install graphviz-pure) or a system Graphviz ('dot')")
    path = pathlib.Path(found)
    dot_command.DOT_BINARY = path
    os.environ.setdefault("SPARSESCOPE_DOT", str(path))
    return path
