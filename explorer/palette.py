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
with more tags starts the palette again. A view colours only what it shows: once its drawings
and program are drawn (:meth:`ViewColors.shown_so_far`), a C line none of whose tags they show
is left plain (the ``[A; B] x`` array step painted its C in 16 colours, wrapping the palette,
for 6 boxes and 8 program parts). Where no view assigns colours, :func:`color_for` hashes the
tag (stable across runs and machines).

>>> colors = ViewColors()
>>> colors.color("expr:n1"), colors.color("expr:n2"), colors.color("expr:n1")
('#e16306', '#009f00', '#e16306')
>>> colors.assigned
{'expr:n1': '#e16306', 'expr:n2': '#009f00'}
"""

from __future__ import annotations

import hashlib
import html as _html
import json
import math
from typing import Any, Callable, Mapping, Sequence

__all__ = ["PALETTE", "NodeColors", "ViewColors", "color_for", "colors_of", "contrast", "delta_e", "lab",
           "view_colors_attr"]

#: Sixteen mid tones of relative luminance 0.245 to 0.25 (contrast 3.5 against white, 5.3 against
#: ``#111111``, 5.9 for black text), each of CIE chroma 30 or more (a colour, not a grey) and
#: 15 or more (CIEDE2000, :func:`delta_e`) from the link colour (``#d81b60``). Chosen and ordered
#: farthest first among all such sRGB colours (in steps of 3 of 255): each next colour is the one
#: farthest from those before it, so the first colours of a view, the most often shown, are the
#: most apart: any two of the first 4 differ by 42 or more, of the first 6 by 26, of the first 8
#: by 21, of all 16 by 13.7 (the palette before: 20, 19, 8.2 and 7.8, with two greens 7.8 apart
#: and a violet and a purple 8.2 apart; 10 or more reads as another colour at a glance).
PALETTE = ("#e16306", "#009f00", "#0087ff", "#ff0fab", "#2d9696", "#9f8700", "#937eb7", "#bd7575",
           "#c64eff", "#ff3c39", "#7b905a", "#039c6f", "#a88157", "#0093bd", "#7b78fc", "#ba729c")


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
        #: the tags the view's drawings and program show (:meth:`shown_so_far`; ``None`` until
        #: then): a C line none of whose tags they show is not coloured
        self.shown: frozenset[str] | None = None

    def drawn_so_far(self) -> None:
        """Record that the tags assigned so far are the drawings' (the renderers draw them first;
        once: the view drawn again keeps its colours).

        >>> colors = ViewColors(); _ = colors.color("box"); colors.drawn_so_far()
        >>> _ = colors.color("line"); colors.drawn_so_far(); sorted(colors.drawn)
        ['box']
        """
        if not self._drawings_done:
            self.drawn, self._drawings_done = frozenset(self.assigned), True

    def shown_so_far(self) -> None:
        """Record that the tags assigned so far are all the view shows besides its C (its
        drawings and program are drawn before the C; once, as :meth:`drawn_so_far`).

        >>> colors = ViewColors(); _ = colors.color("box"); colors.shown_so_far()
        >>> _ = colors.color("line"); colors.shown_so_far(); sorted(colors.shown)
        ['box']
        """
        if self.shown is None:
            self.shown = frozenset(self.assigned)

    def drawn_tag(self, tags: Sequence[str], rank: Callable[[str], Any]) -> str | None:
        """Of a part's ``tags``, the innermost (the least ``rank``: a lattice case's point before its
        loop, :meth:`~explorer.provenance.Provenance.rank`) that the view's drawings show, the node
        the part came from; ``None`` when they show none.

        >>> colors = ViewColors(); _ = colors.color("loop"), colors.color("case"); colors.drawn_so_far()
        >>> colors.drawn_tag(["other", "loop", "case"], {"loop": 9, "case": 2, "other": 1}.get)
        'case'
        """
        on = [t for t in tags if t in self.drawn]
        return min(on, key=rank) if on else None

    def line_tag(self, tags: Sequence[str], rank: Callable[[str], Any], chosen: bool = False,
                 shown_rank: Callable[[str], Any] | None = None) -> str | None:
        """The tag a C line with ``tags`` is coloured by: the innermost the drawings show
        (:meth:`drawn_tag`), else the first the program shows (the least ``shown_rank``, where
        given: :meth:`~explorer.provenance.Provenance.statement_first`), else none, the line is left
        plain: its colour would name nothing else in the view. Before the view recorded what it
        shows, when it showed no tag at all, or for ``chosen`` tags (a selection), the first.

        >>> colors = ViewColors(); _ = colors.color("box"); colors.drawn_so_far(); colors.shown_so_far()
        >>> colors.line_tag(["looplet", "box"], len), colors.line_tag(["looplet"], len), colors.line_tag(["looplet"], len, True)
        ('box', None, 'looplet')
        """
        drawn = self.drawn_tag(tags, rank)
        if drawn is not None:
            return drawn
        if chosen or not self.shown:
            return tags[0] if tags else None
        shown = [t for t in tags if t in self.shown]
        if not shown:
            return None
        return min(shown, key=shown_rank) if shown_rank is not None else shown[0]

    def reserve(self, tag: Any) -> None:
        """Give ``tag`` its colour now, though nothing is painted in it yet (a C line left plain):
        when the page selects that tag later, its lines take the colour the view gave it here,
        the same on every redraw.

        >>> colors = ViewColors(); colors.reserve("plain"); colors.color("box") != colors.color("plain")
        True
        """
        self.color(tag)

    def color(self, tag: Any) -> str:
        """``tag``'s colour: the palette's next where the view has not given it one yet."""
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
    ' data-colors="{&quot;t&quot;: &quot;#e16306&quot;}"'
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
    (True, '#e16306', '#ffb74d', {'t1': '#e16306'})
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
    (21.0, 3.51)
    """
    def luminance(h: str) -> float:
        def channel(v: int) -> float:
            c = v / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
        r, g, b = (int(h[k:k + 2], 16) for k in (1, 3, 5))
        return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def lab(color: str) -> tuple[float, float, float]:
    """The CIE L*a*b* coordinates (D65) of an ``#rrggbb`` colour.

    >>> [round(v, 1) + 0 for v in lab("#ffffff")], [round(v, 1) for v in lab("#ff0000")]
    ([100.0, 0.0, 0.0], [53.2, 80.1, 67.2])
    """
    def linear(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(int(color[k:k + 2], 16)) for k in (1, 3, 5))
    xyz = ((0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047,
           0.2126729 * r + 0.7151522 * g + 0.0721750 * b,
           (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883)
    fx, fy, fz = (t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29 for t in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e(a: str | tuple, b: str | tuple) -> float:
    """How different two colours look: their CIEDE2000 colour difference (``#rrggbb`` colours
    or L*a*b* triples; about 1 is the least a person notices side by side, 10 or more reads as
    another colour at a glance). Unlike a hue angle it weighs lightness and chroma too, and unlike
    the plain L*a*b* distance it does not overstate differences among blues and saturated colours.

    >>> round(delta_e((50, 2.6772, -79.7751), (50, 0, -82.7485)), 4)   # (Sharma et al.'s test data)
    2.0425
    >>> round(delta_e((50, 2.5, 0), (73, 25, -18)), 4), round(delta_e(PALETTE[0], PALETTE[0]), 4)
    (27.1492, 0.0)
    """
    (l1, a1, b1), (l2, a2, b2) = (lab(c) if isinstance(c, str) else c for c in (a, b))
    mean_c = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(mean_c ** 7 / (mean_c ** 7 + 25 ** 7)))
    a1, a2 = a1 * (1 + g), a2 * (1 + g)
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1, h2 = (math.degrees(math.atan2(y, x)) % 360 for x, y in ((a1, b1), (a2, b2)))
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    big_dh = 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    mean_l, mean_c = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        mean_h = h1 + h2
    elif abs(h1 - h2) > 180:
        mean_h = (h1 + h2 + (360 if h1 + h2 < 360 else -360)) / 2
    else:
        mean_h = (h1 + h2) / 2
    t = (1 - 0.17 * math.cos(math.radians(mean_h - 30)) + 0.24 * math.cos(math.radians(2 * mean_h))
         + 0.32 * math.cos(math.radians(3 * mean_h + 6)) - 0.20 * math.cos(math.radians(4 * mean_h - 63)))
    s_l = 1 + 0.015 * (mean_l - 50) ** 2 / math.sqrt(20 + (mean_l - 50) ** 2)
    s_c, s_h = 1 + 0.045 * mean_c, 1 + 0.015 * mean_c * t
    r_t = (-2 * math.sqrt(mean_c ** 7 / (mean_c ** 7 + 25 ** 7))
           * math.sin(math.radians(60 * math.exp(-((mean_h - 275) / 25) ** 2))))
    dl, dc, dh_ = (l2 - l1) / s_l, (c2 - c1) / s_c, big_dh / s_h
    return math.sqrt(dl ** 2 + dc ** 2 + dh_ ** 2 + r_t * dc * dh_)
