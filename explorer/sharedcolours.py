"""Boxes of one drawing that share a colour because they are one thing: a line under the drawing
naming them.

A program tree's boxes take the colour of their tag, the code they became, so a box, its program
parts and its C lines read as one colour. Two boxes may become the very same code: in the array
expression ``concat([A, B]) @ x`` the operand ``x`` and its broadcast are one access, ``x[j]``,
with one tag and the same C lines. They keep that one colour (another colour for the broadcast
would be one no C line has), and the legend says that the two boxes are one thing, in their
colour, naming each and what it became, so a student does not take two boxes of one colour for a
palette that ran out. The line carries the tag (``data-tags``), so a click on it outlines the
boxes and the C lines, as a click on either box does (:mod:`explorer.linking`).

>>> from compiler.trace import Artifact
>>> art = Artifact("array-expression", "e", "", dot='digraph { n0 [label="mul"]; n1 [label="x (dense)"]; '
...                'n2 [label="broadcast to (1, 5)"]; n0 -> n2 -> n1 }',
...                data={"node_tags": {"n0": ["expr:n1"], "n1": ["expr:n4"], "n2": ["expr:n4"]},
...                      "nodes": [{"id": "n1", "notation": "x[j]"}, {"id": "n2", "notation": "x[j]"}]})
>>> groups = shared_colour_groups(art, {"expr:n1": [3], "expr:n4": [5]})
>>> groups
[('expr:n4', ['broadcast to (1, 5)', 'x (dense)'], 'x[j]')]
>>> "one colour" in shared_colours_html(art, {"expr:n1": [3], "expr:n4": [5]})
True
"""

from __future__ import annotations

import html as _html
import re
from typing import Any, Mapping

from compiler.trace import Artifact

from .palette import colors_of
from .render import RenderError, dot_to_svg
from .theme import MUTED

__all__ = ["shared_colour_groups", "shared_colours_html"]

# a node's group in Graphviz's SVG: its name (the <title>) and its label's lines (the <text>s)
_NODE = re.compile(r'<g id="[^"]*" class="node">\s*<title>(.*?)</title>(.*?)</g>', re.S)
_TEXT = re.compile(r"<text[^>]*>(.*?)</text>", re.S)


def shared_colour_groups(artifact: Artifact, provenance: Mapping[str, Any] | None) -> list[tuple[str, list[str], str]]:
    """``(tag, labels, notation)`` for each tag that colours two or more boxes of ``artifact``'s
    drawing (a box takes the colour of the first of its tags ``provenance`` knows, as
    :func:`~explorer.renderers.render_dot` draws it): the first line of each box's label, as drawn,
    and what the boxes became where the artifact records it (``data["nodes"]``' ``notation``,
    the same for all of them), else ``""``."""
    data = artifact.data if isinstance(artifact.data, Mapping) else {}
    nodes = data.get("node_tags")
    if not artifact.dot or not provenance or not isinstance(nodes, Mapping):
        return []
    by_tag: dict[str, list[str]] = {}
    for name, tags in nodes.items():
        known = [str(t) for t in tags or () if t in provenance]
        if known:
            by_tag.setdefault(known[0], []).append(str(name))
    shared = {tag: names for tag, names in by_tag.items() if len(names) > 1}
    if not shared:
        return []
    try:
        svg = dot_to_svg(artifact.dot)
    except RenderError:
        return []
    labels = {}
    for title, body in _NODE.findall(svg):
        texts = [_html.unescape(t).strip() for t in _TEXT.findall(body)]
        labels[_html.unescape(title)] = next((t for t in texts if t), _html.unescape(title))
    notations = {str(n.get("id")): n.get("notation") for n in data.get("nodes") or () if isinstance(n, Mapping)}
    out = []
    for tag, names in shared.items():
        became = {notations.get(n) for n in names}
        notation = str(became.pop()) if len(became) == 1 and None not in became else ""
        out.append((tag, sorted(labels.get(n, n) for n in names), notation))
    return out


def shared_colours_html(artifact: Artifact, provenance: Mapping[str, Any] | None) -> str:
    """The legend line under a drawing for its boxes that share a colour (``""`` where none do):
    per tag, a swatch in its colour and the boxes it colours, named."""
    groups = shared_colour_groups(artifact, provenance)
    if not groups:
        return ""
    color = colors_of(provenance)
    items = []
    for tag, labels, notation in groups:
        names = " and ".join(f"<code>{_html.escape(label)}</code>" for label in labels)
        became = f"<code>{_html.escape(notation)}</code>" if notation else "the same code"
        both, either = ("both", "either") if len(labels) == 2 else (f"all {len(labels)}", "any")
        items.append(
            f'<div class="ss-shared-colour" data-tag="{_html.escape(tag)}" data-tags="{_html.escape(tag)}" '
            f'data-boxes="{len(labels)}">'
            f'<span class="ss-swatch" style="display:inline-block;width:1.6em;height:.9em;vertical-align:-.1em;'
            f'margin-right:4px;border:1px solid currentColor;background:{color(tag)}"></span>'
            f"{names}: one colour, one thing: {both} became {became}, so they share their C lines "
            f"(a click on {either}, or on this line, outlines {both})</div>")
    return (f'<div class="ss-shared-colours" style="color:{MUTED};font:11px sans-serif;margin:2px 0 6px">'
            + "".join(items) + "</div>")
