"""Render trace artifacts without widgets: DOT to SVG, text as is.

>>> svg = dot_to_svg('digraph { a -> b }')
>>> svg.lstrip().startswith('<?xml') and '<svg' in svg
True
"""

from __future__ import annotations

import functools

import graphviz

from .fit import layout_dot
from .graphviz_setup import dot_binary


class RenderError(RuntimeError):
    """Graphviz could not lay out a drawing (the message carries its complaint)."""


@functools.lru_cache(maxsize=256)
def dot_to_svg(dot: str, engine: str = "dot") -> str:
    """Lay out DOT source with Graphviz and return the SVG text (cached by source).

    Every label is laid out in Courier, the font the browser draws it in, so it fits its
    shape (:func:`~explorer.fit.layout_dot`).
    """
    dot_binary()
    try:
        out = graphviz.pipe(engine, "svg", layout_dot(dot).encode("utf-8"), quiet=True)
    except graphviz.CalledProcessError as e:
        message = (e.stderr or b"").decode("utf-8", "replace").strip()
        raise RenderError(f"Graphviz could not draw this graph: {message}") from None
    return out.decode("utf-8")
