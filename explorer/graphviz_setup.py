"""Point the ``graphviz`` package at a working ``dot``.

The ``graphviz-pure`` wheel (a self-contained ``dot`` from PyPI, a dependency) is used when
installed; a system Graphviz only without it. The wheel's ``dot`` sizes a Courier label with
Courier's own metrics, 0.6 em a glyph, as the browser draws it (:mod:`explorer.fit`); a
system Graphviz measures through fontconfig's substitute and made a 123-character looplet label
2 pt wider than its box (Liberation Mono, Graphviz 2.43). It is also the faster of the two.

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

    # The console script of graphviz-pure sits beside this interpreter in a venv.
    beside = pathlib.Path(sys.executable).parent / "graphviz-pure"
    found = str(beside) if beside.exists() else shutil.which("graphviz-pure") or shutil.which("dot")
    if found is None:
        raise RuntimeError("no Graphviz renderer found: install the 'graphviz-pure' wheel "
                           "(pip install graphviz-pure) or a system Graphviz ('dot')")
    path = pathlib.Path(found)
    dot_command.DOT_BINARY = path
    os.environ.setdefault("SPARSESCOPE_DOT", str(path))
    return path
