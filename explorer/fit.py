"""Drawings that fit: labels laid out in the font the browser draws, SVGs scaled to their pane.

Graphviz sizes each node from its label's width in the node's font. The bundled ``dot``
(graphviz-pure) knows the metrics of a few fonts; any other name, ``monospace`` included, is
measured as Times, far narrower than the monospace font a browser then draws, so lattice and
iteration-graph labels spilled out of their boxes and, with three points, over each other. So
every drawing is laid out in Courier (:func:`layout_dot`): its glyphs are 0.6 em wide, as are
those of every monospace font a browser substitutes for it (Liberation Mono, DejaVu Sans Mono,
Menlo), and Graphviz names the SVG's font ``Courier,monospace``.

A drawing wider than its pane is scaled down to the pane (:func:`fit_svg`), so the root of a
wide fiber tree stays in view, but not below half its size (three quarters for a program's tree
laid out left to right), where its box scrolls instead; one narrower than its pane is centred in it. The zoom controls (:mod:`explorer.zoom`) show it at
other sizes, in its box that scrolls (pan).

>>> layout_dot('digraph { node [fontname="monospace"]; a }')
'digraph { graph [fontname="Courier"]; node [fontname="Courier"]; edge [fontname="Courier"]; node [fontname="Courier"]; a }'
"""

from __future__ import annotations

import html
import re

__all__ = ["LAYOUT_FONT", "MAX_OVERFLOW", "MIN_SCALE", "MIN_SCALE_ROOTED_LEFT", "fit_svg", "layout_dot", "root_in_view",
           "rooted_left"]

#: The font every drawing is laid out in (see the module docstring).
LAYOUT_FONT = "Courier"

_HEAD = re.compile(r'^\s*(?:strict\s+)?(?:di)?graph\s*(?:"(?:[^"\\]|\\.)*"|[^\s{"]+)?\s*\{', re.I)
_FONTNAME = re.compile(r'\bfontname\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^\s,;\]]+)')


def layout_dot(dot: str) -> str:
    """``dot`` with every font Courier: the defaults of graph, node and edge labels (before
    anything else in the graph, so the graph's own defaults still apply after them) and every
    ``fontname`` the source names. Text that is not a DOT graph is returned unchanged.

    >>> layout_dot('digraph g { a [label="x", fontname=Helvetica] }').count('fontname="Courier"')
    4
    >>> layout_dot("not a graph")
    'not a graph'
    """
    head = _HEAD.match(dot)
    if head is None:
        return dot
    defaults = "".join(f' {what} [fontname="{LAYOUT_FONT}"];' for what in ("graph", "node", "edge"))
    body = _FONTNAME.sub(f'fontname="{LAYOUT_FONT}"', dot[head.end():])
    return dot[:head.end()] + defaults + body


_LEFT_TO_RIGHT = re.compile(r'\brankdir\s*=\s*"?LR\b')


def rooted_left(dot: str) -> bool:
    """Whether the DOT graph ``dot`` is laid out left to right (its root at the left edge).

    >>> rooted_left('digraph t { rankdir=LR; a -> b }'), rooted_left('digraph t { a -> b }')
    (True, False)
    """
    return _LEFT_TO_RIGHT.search(dot) is not None


_SVG_TAG = re.compile(r"<svg\b([^>]*)>")
_STYLE = re.compile(r'\sstyle="([^"]*)"')
_WIDTH = re.compile(r'\swidth="([\d.]+)(pt|px)?"')

#: A drawing is never shown below this fraction of its own size (its labels stay readable) ...
MIN_SCALE = 0.5
#: ... unless that would make it wider than this share of its pane: a tree's root, drawn at its
#: centre, stays in view when the pane opens scrolled to the left.
MAX_OVERFLOW = "160%"
#: A drawing laid out left to right (a program's tree: its root at the left edge, its width the
#: nest's depth) is never shown below this fraction: its labels stay 12 px tall (16 px at 100%).
MIN_SCALE_ROOTED_LEFT = 0.75


def fit_svg(svg: str, rooted_left: bool = False) -> str:
    """The SVG scaled down to its container's width when wider, keeping its proportions
    (``max-width:100%; height:auto``; its ``viewBox`` gives the aspect ratio), but not below
    :data:`MIN_SCALE` of its own size, nor, for a drawing whose root is at its top centre, wider
    than :data:`MAX_OVERFLOW` of the container for that: a fiber tree of 64 leaves was a sliver
    with unreadable labels. A drawing laid out left to right (``rooted_left``: an IR's, a CFIR's or
    a derivation's tree, its root at the left edge, in view as the box opens) keeps
    :data:`MIN_SCALE_ROOTED_LEFT` of its size however wide: capped at 160% of a pane, those opened
    at 38-61% with labels 4-6 px tall. It is a
    block with auto margins: centred when narrower than its box, from the box's left edge when
    wider (so all of it scrolls into view).

    >>> fit_svg('<svg width="900pt" height="90pt" viewBox="0 0 900 90"><g/></svg>')
    '<svg style="max-width:100%;height:auto;min-width:min(600px,160%);display:block;margin:0 auto" width="900pt" height="90pt" viewBox="0 0 900 90"><g/></svg>'
    >>> fit_svg('<svg width="900pt" height="90pt"><g/></svg>', rooted_left=True)[:69]
    '<svg style="max-width:100%;height:auto;min-width:900px;display:block;'
    """
    def add(m: re.Match) -> str:
        attrs = m.group(1)
        fit = "max-width:100%;height:auto"
        width = _WIDTH.search(attrs)
        if width is not None:
            px = float(width.group(1)) * (4 / 3 if width.group(2) in (None, "pt") else 1)
            if rooted_left:
                fit += f";min-width:{px * MIN_SCALE_ROOTED_LEFT:.0f}px"
            else:
                fit += f";min-width:min({px * MIN_SCALE:.0f}px,{MAX_OVERFLOW})"
        fit += ";display:block;margin:0 auto"
        style = _STYLE.search(attrs)
        if style is not None:
            rest = style.group(1).rstrip(";")
            attrs = attrs[:style.start()] + attrs[style.end():]
            fit += ";" + rest
        return f'<svg style="{fit}"{attrs}>'

    return _SVG_TAG.sub(add, svg, count=1)


# Graphviz centres a left-to-right tree's root on its children: a tall program tree (a kernel's IR, 6,000 px)
# opened in its view's pane on its first children, its root half way down. Once shown, the pane scrolls to
# the root (the drawing's first node), only where it opened at its top with the root out of view (a pane
# the person scrolled is left alone), and only a pane of the view (never the page or the notebook).
_ROOT_IN_VIEW_JS = (
    "var d=this.previousElementSibling;this.remove();setTimeout(function(){"
    "var n=d&&d.querySelector('svg g.node'),top=d&&d.closest('.ss-pick-root');if(!n||!top)return;var b=d;"
    "for(;b&&b!==top;b=b.parentElement){var o=getComputedStyle(b).overflowY;"
    "if((o==='auto'||o==='scroll')&&b.scrollHeight>b.clientHeight+1)break;}"
    "if(!b||b===top||b.scrollTop>0)return;var r=n.getBoundingClientRect(),q=b.getBoundingClientRect();"
    "if(r.top>=q.top&&r.bottom<=q.bottom)return;b.scrollTop+=r.top-q.top-(q.height-r.height)/2;},0);")


def root_in_view() -> str:
    """HTML to put right after a left-to-right drawing's box: once a view's pane shows it, the pane scrolls
    to the tree's root where the tree opened with its root out of view (an image that fails to load runs
    its ``onerror``: a widget runs no script).

    >>> "g.node" in root_in_view() and root_in_view().startswith("<img")
    True
    """
    return f'<img alt="" src="data:," style="display:none" onerror="{html.escape(_ROOT_IN_VIEW_JS)}">'
