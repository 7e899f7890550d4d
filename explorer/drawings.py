"""Graphviz drawings as inline SVG, their nodes in their provenance tags' colours: the node a tag
names (:func:`tag_names`), filled in its colour (:func:`highlight_svg`), the looplet a step lowers
outlined in the focus colour, the whole drawn and themed (:func:`render_dot`).

>>> svg = render_dot('digraph { a [label="Stepper(stop=j + 1)"]; b }', highlight=["Stepper"])
>>> svg.startswith("<svg") and f'stroke="{FOCUS_COLOR}"' in svg
True
"""

from __future__ import annotations

import html as _html
import re
from typing import Any, Callable, Iterable, Mapping, Sequence

from .palette import NodeColors, colors_of
from .provenance import EXPRESSION, TagInfo, describer, looplet_heads
from .render import RenderError, dot_to_svg
from .theme import theme_svg

__all__ = ["FOCUS_COLOR", "highlight_svg", "inline_svg", "render_dot", "tag_names"]

#: The colour of "the current step's part": the outline of the looplet a step lowers, the bar by its C lines.
FOCUS_COLOR = "#ffb74d"

_PROLOG = re.compile(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->", re.S)
_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')


def inline_svg(svg: str) -> str:
    """Graphviz SVG made fit to inline in HTML: no XML prolog, doctype, comments or namespace
    URLs (HTML parsers supply the SVG namespace), so the page references nothing external.

    >>> inline_svg('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><g/></svg>')
    '<svg><g/></svg>'
    """
    return _XMLNS.sub("", _PROLOG.sub("", svg)).strip()


_NODE_GROUP = re.compile(r'(<g id="[^"]*" class="node">\s*<title>(.*?)</title>)(.*?)(</g>)', re.S)
_FIRST_SHAPE = re.compile(r'<(ellipse|polygon|path|rect)([^>]*?)fill="[^"]*"([^>]*)>')
_TEXTS = re.compile(r"<text[^>]*>(.*?)</text>", re.S)
_STROKE = re.compile(r'\sstroke="[^"]*"')


def tag_names(tag: Any, info: TagInfo | None = None) -> list[str]:
    """The node names a provenance tag matches: the tag and its last ``:`` component.

    A looplet tag (its ``info`` says so) names the nodes of looplets its rule lowers
    (``looplet:Run:5``: ``Run`` and ``Fill`` nodes).

    >>> stepper = TagInfo("looplet:Stepper:4", "looplet", "j", ("A",), "Stepper")
    >>> tag_names("lattice:j:p0"), tag_names("p1"), tag_names("looplet:Stepper:4", stepper)
    (['lattice:j:p0', 'p0'], ['p1'], ['looplet:Stepper:4', 'Stepper'])
    """
    tag = str(tag)
    if info is not None and info.kind == EXPRESSION:   # (``expr:n4``: node n4 of the expression tree alone)
        return [tag]
    if info is not None and info.kind == "looplet":
        return list(dict.fromkeys([tag, *looplet_heads(info.style)])) if info.style else [tag]
    last = tag.rsplit(":", 1)[-1].strip()
    return [tag] if not last or last == tag else [tag, last]


def highlight_svg(svg: str, colors: Mapping[str, str],
                  tags: Mapping[str, Iterable[str]] | None = None,
                  describe: Callable[[Sequence[str]], str] | None = None, ordered: bool = False,
                  focus: Iterable[str] = ()) -> str:
    """Fill the nodes of a Graphviz SVG named in ``colors`` (by node id, exact label, or the
    label's head before ``(``, so ``Stepper`` names a node labelled ``Stepper(stop=j + 1)``).
    A node named in ``focus`` (the looplet a step lowers) is outlined in the focus colour, as its
    C lines are barred in it, and keeps its own fill (the focus colour where it has none).

    Names that match no node are ignored. ``tags`` maps names to provenance tags: a filled
    node named there gets ``data-tags="tag1 tag2"`` (the exported page selects by it) and, with
    ``describe(tags)``, that as its tooltip (the ``<title>`` of a group around its shapes).
    A node's tags are sorted, or, when ``ordered``, kept in the order ``tags`` gives them (a
    tree's box: its innermost tag first, the one a click links).

    >>> svg = dot_to_svg('digraph { a [label="point 0"]; b }')
    >>> out = highlight_svg(svg, {"point 0": "#ff0000", "zzz": "#00ff00"})
    >>> out.count('fill="#ff0000"'), "#00ff00" in out
    (1, False)
    >>> svg = dot_to_svg('digraph { n0 [label="Stepper(stop=j + 1)"]; n1 [label="Spike"] }')
    >>> highlight_svg(svg, {"Stepper": "#ff0000"}).count('fill="#ff0000"')
    1
    >>> svg = dot_to_svg('digraph { p0 [label="[A | x]\\nA[i, j] * x[j]"]; p1 [label="[B | ]"] }')
    >>> highlight_svg(svg, {"p0": "#ff0000", "A∩x": "#00ff00"}).count('fill="#')
    1
    >>> svg = dot_to_svg('digraph { n0 [label="Stepper(stop=j + 1)"]; n1 [label="Spike"] }')
    >>> out = highlight_svg(svg, {"Stepper": "#ff0000"}, focus=["Stepper", "Spike"])
    >>> out.count(f'fill="#ff0000" stroke="{FOCUS_COLOR}" stroke-width="5"'), out.count(f'fill="{FOCUS_COLOR}"')
    (1, 1)
    """
    focus = set(focus)
    if not colors and not focus:
        return svg

    def fill(m: re.Match) -> str:
        head, title, body, tail = m.groups()
        names = {_html.unescape(title)}
        names.update(_html.unescape(t).strip() for t in _TEXTS.findall(body))
        # a looplet's label is ``Stepper(stop=..., ...)``: the step ``lower:Stepper`` names it
        # (a lattice point is named by its node id: its artifact records its tags as data)
        names.update(n.split("(", 1)[0].strip() for n in list(names) if "(" in n)
        color = next((colors[n] for n in sorted(names) if n in colors), None)
        focused = bool(names & focus)
        if color is None and not focused:
            return m.group(0)
        # (the lowered looplet in its tag's colour, as its C lines and program part are, outlined as
        # its C lines are barred: filled in the focus colour, it was a third colour for one thing)
        stroke = f'stroke="{FOCUS_COLOR}" stroke-width="5"' if focused else 'stroke-width="2"'
        own = (lambda attrs: _STROKE.sub("", attrs)) if focused else (lambda attrs: attrs)   # (its one stroke)
        body = _FIRST_SHAPE.sub(lambda s: f'<{s.group(1)}{own(s.group(2))}fill="{color or FOCUS_COLOR}" {stroke}'
                                          f'{own(s.group(3))}>', body, count=1)
        found = [t for n in sorted(names) for t in (tags or {}).get(n, ())]
        node_tags = list(dict.fromkeys(found)) if ordered else sorted(set(found))
        extra = f' data-tags="{_html.escape(" ".join(node_tags))}"' if node_tags else ""
        if describe and node_tags:
            # the tooltip is the nearest <title>: an inner group's, so the node keeps its name
            body = f"<g><title>{_html.escape(describe(node_tags), quote=False)}</title>{body}</g>"
        return head.replace('class="node"', f'class="node highlighted"{extra}') + body + tail

    return _NODE_GROUP.sub(fill, svg)


def render_dot(dot: str, highlight: Iterable[str] | Mapping[str, str] | None = None,
               provenance: Mapping[str, Any] | None = None, engine: str = "dot",
               nodes: Mapping[str, Sequence[str]] | None = None) -> str:
    """DOT to inline SVG; ``highlight`` names nodes to outline in the focus colour (or is a
    ``{name: colour}`` map of fills); nodes named by ``provenance`` tags get their palette colour (a
    tag ``lattice:j:p0`` names the node ``lattice:j:p0`` and the node ``p0``, by id or label).

    ``nodes`` (``{node id: tags}``, innermost first, as a program tree records them in its
    artifact's ``data["node_tags"]``) names the nodes of each tag instead: a node gets the
    colour of its first tag the provenance has, and those tags as its ``data-tags``.

    A drawing Graphviz rejects renders as an error box holding the DOT, never raising.

    >>> "<svg" in render_dot("digraph { a -> b }", highlight=["a"])
    True
    >>> svg = render_dot("digraph { n0; n1 }", provenance={"t": [2], "u": [3]}, nodes={"n1": ["v", "u", "t"]})
    >>> svg.count('data-tags="u t"'), svg.count("data-tags=")
    (1, 1)
    """
    named: dict[str, str] = {}   # node name -> the tag it is coloured by
    tags: dict[str, list[str]] = {}
    infos = getattr(provenance, "info", {})
    if nodes is not None:
        for name, node_tags in nodes.items():
            known = [str(t) for t in node_tags if t in (provenance or {})]
            if known:
                named[str(name)] = known[0]
                tags[str(name)] = known
    else:
        for k in provenance or {}:
            for name in tag_names(k, infos.get(k)):
                named.setdefault(name, str(k))
                tags.setdefault(name, []).append(str(k))
    fixed: dict[str, str] = {}
    focus: set[str] = set()
    if isinstance(highlight, Mapping):
        fixed.update({str(k): v for k, v in highlight.items()})
    elif highlight:
        focus.update(str(k) for k in highlight)
    colors = NodeColors(named, colors_of(provenance), fixed)
    try:
        svg = dot_to_svg(dot, engine)
    except RenderError as e:
        return (f'<div class="render-error" style="color:#a00">{_html.escape(str(e))}</div>'
                f"<pre>{_html.escape(dot)}</pre>")
    return inline_svg(theme_svg(highlight_svg(svg, colors, tags, describer(provenance), ordered=nodes is not None,
                                              focus=focus)))
