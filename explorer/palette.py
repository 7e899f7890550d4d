"""The provenance tags' colours: a palette readable in both themes, assigned per view.

A tag's colour fills its C lines, its program parts and its drawing nodes, and dark text is
drawn on it. Each colour of :data:`PALETTE` is a mid tone: as a marker it keeps a WCAG contrast
of at least 3 against JupyterLab's light page (white) and its dark one (``#111111``), and the
text on it (:data:`~explorer.theme.TEXT_ON_COLOR`, black) a contrast of at least 4.5. (The
pastels used before read well under dark text but stood out from a white page by 1.2 to 1.5.)

Tags hashed into the palette shared colours within one view (the ``[A; B] x`` array drawing:
7 boxes in 4 colours), so a view assigns them instead (:class:`ViewColors`): in the order it
first asks for them, which the renderers make the drawings' nodes first, then the program's
parts and the C lines. The first ``len(PALETTE)`` tags of a view get distinct colours; a view
with more tags starts the palette again. Where no view assigns colours, :func:`color_for`
hashes the tag (stable across runs and machines).

>>> colors = ViewColors()
>>> colors.color("expr:n1"), colors.color("expr:n2"), colors.color("expr:n1")
('#4e84f1', '#db6512', '#4e84f1')
>>> colors.assigned
{'expr:n1': '#4e84f1', 'expr:n2': '#db6512'}
"""

from __future__ import annotations

import hashlib
import html as _html
import json
from typing import Any, Callable, Mapping

__all__ = ["PALETTE", "NodeColors", "ViewColors", "color_for", "colors_of", "contrast", "view_colors_attr"]

#: Sixteen mid tones of relative luminance 0.24 to 0.25, in an order that keeps neighbours
#: apart in hue (the first tags of a view are the most often shown): contrast 3.5 against white,
#: 5.3 against ``#111111``, 5.9 for black text. No rose near the link colour (``#d81b60``).
PALETTE = ("#4e84f1", "#db6512", "#349c34", "#a86be5", "#1c96a1", "#e75757", "#aa8109", "#cb58d5",
           "#1790cc", "#669525", "#8176f8", "#ab7f53", "#269a73", "#db55ae", "#8c8c19", "#648da2")


def color_for(ident: Any) -> str:
    """A palette colour for ``ident`` where no view assigns one: its hash's (stable across runs
    and machines; distinct tags may share one).

    >>> color_for("p0") == color_for("p0") and color_for("p0") in PALETTE
    True
    """
    digest = hashlib.sha1(str(ident).encode("utf-8")).digest()
    return PALETTE[digest[0] % len(PALETTE)]


class ViewColors:
    """The colours of one view's tags, given in the order they are first asked for."""

    def __init__(self) -> None:
        #: ``{tag: colour}`` in the order assigned
        self.assigned: dict[str, str] = {}
        #: the tags the view's drawings show (:meth:`drawn_so_far`): a C line takes the colour
        #: of its first tag among them, the colour of the node it came from
        self.drawn: frozenset[str] = frozenset()
        self._drawings_done = False

    def drawn_so_far(self) -> None:
        """Record that the tags assigned so far are the drawings' (the renderers draw them first;
        once: the view drawn again keeps its colours).

        >>> colors = ViewColors(); _ = colors.color("box"); colors.drawn_so_far()
        >>> _ = colors.color("line"); colors.drawn_so_far(); sorted(colors.drawn)
        ['box']
        """
        if not self._drawings_done:
            self.drawn, self._drawings_done = frozenset(self.assigned), True

    def color(self, tag: Any) -> str:
        tag = str(tag)
        if tag not in self.assigned:
            self.assigned[tag] = PALETTE[len(self.assigned) % len(PALETTE)]
        return self.assigned[tag]


def colors_of(provenance) -> Callable[[str], str]:
    """The colour of each tag as ``provenance`` draws it: a view's provenance
    (:meth:`~explorer.provenance.Provenance.for_view`) gives its own, a plain ``{tag: lines}``
    the tag's hash's.

    >>> colors_of({"u": [2]})("u") == color_for("u")
    True
    """
    return getattr(provenance, "color", color_for)


def view_colors_attr(provenance) -> str:
    """The ``data-colors`` attribute of a view: ``{tag: colour}`` as JSON, the colours its tags
    were given (the exported page's legend and selection show them; tests read them).

    >>> class View: colors = ViewColors()
    >>> _ = View.colors.color("t"); view_colors_attr(View)
    ' data-colors="{&quot;t&quot;: &quot;#4e84f1&quot;}"'
    """
    colors = getattr(provenance, "colors", None)
    if colors is None or not colors.assigned:
        return ""
    return f' data-colors="{_html.escape(json.dumps(colors.assigned, ensure_ascii=False))}"'


class NodeColors(Mapping):
    """``{node name: colour}`` for a drawing: ``named`` maps a node name to the tag it is drawn
    in, whose colour is asked for only when a drawn node has the name (a view gives colours in
    the order they are asked for: the drawing's nodes in order); ``fixed`` names have their own
    (the step's focus).

    >>> colors = ViewColors()
    >>> nodes = NodeColors({"p0": "t0", "p1": "t1"}, colors.color, {"Stepper": "#ffb74d"})
    >>> "p1" in nodes, nodes["p1"], nodes["Stepper"], colors.assigned
    (True, '#4e84f1', '#ffb74d', {'t1': '#4e84f1'})
    """

    def __init__(self, named: Mapping[str, str], color: Callable[[str], str], fixed: Mapping[str, str]):
        self.named, self.color, self.fixed = named, color, fixed

    def __getitem__(self, name: str) -> str:
        return self.fixed[name] if name in self.fixed else self.color(self.named[name])

    def __contains__(self, name) -> bool:   # (Mapping's would ask for the colour)
        return name in self.fixed or name in self.named

    def __iter__(self):
        return iter({**self.named, **self.fixed})

    def __len__(self) -> int:
        return len({**self.named, **self.fixed})


def contrast(a: str, b: str) -> float:
    """The WCAG 2 contrast ratio of two ``#rrggbb`` colours.

    >>> round(contrast("#ffffff", "#000000"), 1), round(contrast(PALETTE[0], "#ffffff"), 2)
    (21.0, 3.56)
    """
    def luminance(h: str) -> float:
        def channel(v: int) -> float:
            c = v / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
        r, g, b = (int(h[k:k + 2], 16) for k in (1, 3, 5))
        return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
