"""Theme-safe colours for code: readable in JupyterLab's light and dark themes and elsewhere.

Pygments' inline colours assume a light page: in JupyterLab's dark theme the program and C
panes kept a light background under the theme's white text (identifiers vanished), and its
greens and greys fall below a contrast of 4.5 on the provenance colours. So code is highlighted
with classes (:func:`highlight_classes`), which :func:`style_tokens` turns into inline styles:

- on the pane's own background, JupyterLab's CSS variables (the page's theme), each with a
  light fallback for pages without them (the exported page, other notebook front ends); only
  variables whose colours keep a contrast of 4.5 against ``--jp-layout-color0`` in both of
  JupyterLab's themes are used (the theme's comment and meta colours are not);
- on a provenance colour (a mid tone, the same in every theme: :mod:`explorer.palette`), black,
  keywords bold and comments italic (no hue of the highlighter keeps a contrast of 4.5 there).

Drawings (:func:`theme_svg`) lose Graphviz's white background and draw their lines, and the
labels that are not on a filled shape, in the theme's text colour; labels on a filled shape (a
provenance colour, a lattice point's blue) stay dark.

>>> style_tokens('<span class="k">int</span> <span class="n">x</span>')
'<span style="color:var(--jp-mirror-editor-keyword-color, #008000);font-weight:bold">int</span> x'
>>> style_tokens('<span class="k">int</span>', on_color=True)
'<span style="color:#000000;font-weight:bold">int</span>'
"""

from __future__ import annotations

import re

from pygments.formatters import HtmlFormatter
from pygments.token import STANDARD_TYPES, Comment, Generic, Keyword, Name, Number, Operator, String

__all__ = ["CODE_BACKGROUND", "CODE_BORDER", "CODE_TEXT", "LINE_NUMBER", "LINE_NUMBER_ON_COLOR",
           "MUTED", "TEXT_ON_COLOR", "highlight_classes", "style_tokens", "styled_classes", "theme_svg",
           "token_css", "token_styles"]

#: A code block's background, text and border (the theme's, light where there is none).
CODE_BACKGROUND = "var(--jp-layout-color0, #ffffff)"
CODE_TEXT = "var(--jp-content-font-color1, #1a1a1a)"
CODE_BORDER = "var(--jp-border-color2, #e3e3e3)"
#: Secondary text (notes beside headers and titles).
MUTED = "var(--jp-content-font-color2, #616161)"
#: Text on a provenance colour (contrast 5.8 or more on each of :data:`explorer.palette.PALETTE`).
TEXT_ON_COLOR = "#000000"
#: Line numbers: a gutter, dimmer than code (not read as code; excluded from the contrast rule).
LINE_NUMBER = "var(--jp-content-font-color3, #8a8a8a)"
LINE_NUMBER_ON_COLOR = "#262626"

# (token type, colour on the theme's background, colour on a provenance colour, extra CSS).
# The most specific type listed wins; types not listed inherit the block's text colour.
_KEYWORD = "var(--jp-mirror-editor-keyword-color, #008000)"
_STRING = "var(--jp-mirror-editor-string-color, #ba2121)"
_PROPERTY = "var(--jp-mirror-editor-property-color, #0055aa)"
_OPERATOR = "var(--jp-mirror-editor-operator-color, #7800c2)"
_NUMBER = "var(--jp-mirror-editor-number-color, #008800)"
_RULES = (
    (Keyword, _KEYWORD, TEXT_ON_COLOR, "font-weight:bold"),
    (Keyword.Type, _KEYWORD, TEXT_ON_COLOR, ""),
    (Name.Builtin, _KEYWORD, TEXT_ON_COLOR, ""),
    (Name.Function, _PROPERTY, TEXT_ON_COLOR, ""),
    (Number, _NUMBER, TEXT_ON_COLOR, ""),
    (String, _STRING, TEXT_ON_COLOR, ""),
    (Comment, CODE_TEXT, TEXT_ON_COLOR, "font-style:italic"),
    (Comment.Preproc, _OPERATOR, TEXT_ON_COLOR, ""),
    (Comment.PreprocFile, _STRING, TEXT_ON_COLOR, ""),
    (Operator.Word, _KEYWORD, TEXT_ON_COLOR, "font-weight:bold"),
    (Generic.Deleted, _STRING, TEXT_ON_COLOR, ""),
    (Generic.Inserted, _KEYWORD, TEXT_ON_COLOR, ""),
    (Generic.Heading, _PROPERTY, TEXT_ON_COLOR, "font-weight:bold"),
    (Generic.Subheading, _OPERATOR, TEXT_ON_COLOR, "font-weight:bold"),
)


def _rule_for(ttype):
    best = None
    for rule in _RULES:
        if ttype in rule[0] and (best is None or len(rule[0]) > len(best[0])):
            best = rule
    return best


def token_styles(on_color: bool = False) -> dict[str, str]:
    """``{Pygments short class: inline CSS}`` for code on the theme's background, or on a
    provenance colour (``on_color``).

    >>> token_styles()["kt"]
    'color:var(--jp-mirror-editor-keyword-color, #008000)'
    >>> "n" in token_styles()   # names take the block's text colour
    False
    """
    out = {}
    for ttype, short in STANDARD_TYPES.items():
        rule = _rule_for(ttype)
        if rule is None or not short:
            continue
        color = rule[2] if on_color else rule[1]
        out[short] = f"color:{color}" + (f";{rule[3]}" if rule[3] else "")
    return out


_STYLES = {False: token_styles(False), True: token_styles(True)}
# a token's span holds escaped text only (Pygments closes every span at the end of a line)
_CLASS_SPAN = re.compile(r'<span class="([\w-]+)">([^<]*)</span>')


def style_tokens(html: str, on_color: bool = False) -> str:
    """Pygments class-based HTML with each token's ``<span class="...">`` given its inline
    style; a token with no colour of its own is left as bare text (the block's colour)."""
    styles = _STYLES[bool(on_color)]

    def sub(m: re.Match) -> str:
        style = styles.get(m.group(1))
        return f'<span style="{style}">{m.group(2)}</span>' if style else m.group(2)

    return _CLASS_SPAN.sub(sub, html)


def styled_classes(html: str) -> str:
    """Pygments class-based HTML with only the spans of tokens that have a colour of their own (on the theme's
    background or on a provenance colour: :func:`token_css` styles them); the others bare text.

    >>> styled_classes('<span class="k">int</span><span class="w"> </span><span class="n">x</span>')
    '<span class="k">int</span> x'
    """
    styles = _STYLES[False]

    def sub(m: re.Match) -> str:
        return m.group(0) if m.group(1) in styles else m.group(2)

    return _CLASS_SPAN.sub(sub, html)


def token_css(scope: str, on: str) -> str:
    """CSS rules giving the tokens of :func:`styled_classes` under ``scope`` (a selector) their colours: on the
    theme's background, and on a provenance colour under the class ``on`` (what :func:`style_tokens` inlines).

    >>> print(token_css("pre", "on").splitlines()[0])
    pre .k { color:var(--jp-mirror-editor-keyword-color, #008000);font-weight:bold }
    """
    return "\n".join(f"{scope} {'.' + on + ' ' if on_color else ''}.{cls} {{ {style} }}"
                     for on_color in (False, True) for cls, style in _STYLES[on_color].items())


def highlight_classes() -> HtmlFormatter:
    """The formatter whose output :func:`style_tokens` styles (classes, no wrapper)."""
    return HtmlFormatter(nowrap=True, classprefix="")


# Graphviz's SVG: one group per node, edge or cluster after the graph's background polygon
_GROUP = re.compile(r'(?=<g id="[^"]*" class="(?:node|edge|cluster)\b)')
_GRAPH = re.compile(r'(<g id="[^"]*" class="graph"[^>]*)>(\s*(?:<title>.*?</title>\s*)?<polygon) fill="white"', re.S)
_SHAPE = re.compile(r'<(?:ellipse|polygon|polyline|path|rect)\b[^>]*>')
_SHAPE_FILL = re.compile(r'\sfill="([^"]*)"')
_TEXT = re.compile(r'<text\b([^>]*?)(/?)>')
_UNFILLED = ("none", "transparent", "black", "currentColor")


def theme_svg(svg: str) -> str:
    """A Graphviz SVG in the page's theme: no background of its own (the pane's shows), lines,
    arrowheads and the labels off a filled shape in ``currentColor``, which the graph's group
    sets to the theme's text colour (:data:`CODE_TEXT`); labels on a filled shape keep their
    dark colour. Attributes, not styles, so linking can still restroke a node.

    >>> svg = ('<g id="graph0" class="graph"><polygon fill="white" stroke="none"/>'
    ...        '<g id="node1" class="node"><ellipse fill="none" stroke="black"/><text fill="red">b</text></g>'
    ...        '<g id="node2" class="node"><ellipse fill="#dbeafe" stroke="black"/><text>a</text></g></g>')
    >>> print(theme_svg(svg).replace("><", ">\\n<"))
    <g id="graph0" class="graph" style="color:var(--jp-content-font-color1, #1a1a1a)">
    <polygon fill="transparent" stroke="none"/>
    <g id="node1" class="node">
    <ellipse fill="none" stroke="currentColor"/>
    <text fill="currentColor">b</text>
    </g>
    <g id="node2" class="node">
    <ellipse fill="#dbeafe" stroke="currentColor"/>
    <text>a</text>
    </g>
    </g>
    """
    head, *groups = _GROUP.split(svg)
    out = [_GRAPH.sub(lambda m: f'{m.group(1)} style="color:{CODE_TEXT}">{m.group(2)} fill="transparent"',
                      head, count=1)]
    for group in groups:
        shapes = _SHAPE.findall(group)
        # an edge's label is off its arrowhead; a node's or cluster's is on its filled shape
        filled = 'class="edge' not in group.split(">", 1)[0] and any(
            f not in _UNFILLED for shape in shapes for f in _SHAPE_FILL.findall(shape))
        group = _SHAPE.sub(lambda m: m.group(0).replace('stroke="black"', 'stroke="currentColor"')
                           .replace('fill="black"', 'fill="currentColor"'), group)
        if not filled:
            group = _TEXT.sub(lambda m: "<text" + re.sub(r'\sfill="[^"]*"', "", m.group(1))
                              + f' fill="currentColor"{m.group(2)}>', group)
        out.append(group)
    return "".join(out)
