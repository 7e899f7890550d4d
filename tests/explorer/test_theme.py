"""Code stays readable in JupyterLab's light and dark themes and on the provenance colours.

Each colour the renderers put on code is resolved as each theme resolves it (JupyterLab's own
theme stylesheets, read from the installed package; the fallback where there is no theme) and
checked for a WCAG contrast of at least 4.5 against the background it is drawn on. The browser
test measures the same in Chromium from computed styles.
"""

from __future__ import annotations

import html as _html
import json
import pathlib
import re

import numpy as np
import pytest

import compiler as ss
from explorer import explore
from explorer.renderers import PALETTE, render_artifact, render_c, render_diff, render_dot, render_program
from explorer.theme import token_styles

jupyterlab = pytest.importorskip("jupyterlab")
THEMES = pathlib.Path(jupyterlab.__file__).parent / "themes" / "@jupyterlab"
NAMES = {"white": "#ffffff", "black": "#000000", "green": "#008000", "blue": "#0000ff", "red": "#ff0000"}


def theme_variables(name: str) -> dict[str, str]:
    css = (THEMES / f"theme-{name}-extension" / "index.css").read_text()
    return dict(re.findall(r"(--jp-[\w-]+):([^;}]+)", css))


def resolve(value: str, variables: dict[str, str] | None) -> str:
    """A CSS colour with ``var(--x, fallback)`` resolved in a theme (``None``: no theme)."""
    value = value.strip()
    m = re.fullmatch(r"var\((--[\w-]+)\s*(?:,\s*(.*))?\)", value)
    if m is None:
        return value
    name, fallback = m.groups()
    if variables is not None and name in variables:
        return resolve(variables[name], variables)
    if fallback is None:
        raise AssertionError(f"{name} is not defined and has no fallback")
    return resolve(fallback, variables)


def rgba(color: str) -> tuple[float, float, float, float]:
    color = NAMES.get(color.strip(), color.strip())
    if color.startswith("#"):
        h = color[1:]
        if len(h) == 3:
            h = "".join(c * 2 for c in h)
        return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16), 1.0)
    m = re.fullmatch(r"rgba?\(([^)]*)\)", color)
    assert m, f"not a colour: {color!r}"
    parts = [float(p) for p in re.split(r"[\s,/]+", m.group(1).strip()) if p]
    return (parts[0], parts[1], parts[2], parts[3] if len(parts) > 3 else 1.0)


def contrast(fg: str, bg: str) -> float:
    b = rgba(bg)
    f = rgba(fg)
    f = tuple(f[i] * f[3] + b[i] * (1 - f[3]) for i in range(3))

    def lum(c):
        def ch(v):
            v /= 255
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
        return 0.2126 * ch(c[0]) + 0.7152 * ch(c[1]) + 0.0722 * ch(c[2])

    hi, lo = sorted((lum(f), lum(b[:3])), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# (theme name, its variables): JupyterLab's two themes, and a page with none
THEME_CASES = [("light", theme_variables("light")), ("dark", theme_variables("dark")), ("no theme", None)]
PAGE_TEXT, PAGE_BACKGROUND = "var(--jp-content-font-color1, #000000)", "var(--jp-layout-color0, #ffffff)"
STYLE_COLOR = re.compile(r"(?<![-\w])(background|color):\s*((?:var\([^;\"]*\))|[^;\"]+)")


def colour_pairs(html: str):
    """``(text, colour, background)`` for every piece of code text in rendered HTML: the
    innermost ``color`` and ``background`` declared around it (the <pre> gives the defaults)."""
    stack: list[dict[str, str]] = []
    out = []
    for token in re.finditer(r"<(/?)(\w+)([^>]*)>|([^<]+)", html):
        close, tag, attrs, text = token.groups()
        if text is not None:
            if text.strip() and stack and not any(s.get("lno") for s in stack):
                # what nothing declares comes from the page: the theme's text on its background
                color = next((s["color"] for s in reversed(stack) if "color" in s), PAGE_TEXT)
                background = next((s["background"] for s in reversed(stack) if "background" in s), PAGE_BACKGROUND)
                out.append((_html.unescape(text.strip()), color, background))
        elif close:
            stack.pop()
        else:
            style = re.search(r'style="([^"]*)"', attrs)
            decl = dict((k, v.strip()) for k, v in STYLE_COLOR.findall(style.group(1))) if style else {}
            if 'class="lno"' in attrs:
                decl["lno"] = "1"
            stack.append(decl)
    return out


def rendered_code() -> dict[str, str]:
    """The program, C and diff panes of a real lowering, with every provenance tag coloured."""
    A = ss.Tensor.from_numpy(np.array([[0, 1.0, 0], [2.0, 0, 3.0]]), "csr")
    s = explore(ss.lower("y[i] = A[i, j] * x[j]", "lattice", A=A, x=np.arange(3.0)).trace)
    prov = s.provenance()
    lattice = s.stages().index("lattice") + 1
    return {"C": render_c(s.last_artifact("c").text, prov),
            "program": render_program(s.program_text(lattice), prov, lattice),
            "diff": render_diff(s.step(lattice).diff())}


@pytest.mark.parametrize("theme,variables", THEME_CASES, ids=[t for t, _ in THEME_CASES])
def test_code_text_reaches_contrast_4_5(theme, variables):
    for pane, html in rendered_code().items():
        pairs = colour_pairs(html)
        assert len(pairs) > 5 and (pane == "diff" or any(bg in PALETTE for _, _, bg in pairs)), pane
        low = [(text, fg, bg, round(contrast(resolve(fg, variables), resolve(bg, variables)), 2))
               for text, fg, bg in pairs]
        low = [x for x in low if x[3] < 4.5]
        assert not low, f"{pane} in {theme}: {low[:8]}"


@pytest.mark.parametrize("on_color", [False, True])
def test_every_token_colour_reaches_contrast_4_5(on_color):
    backgrounds = PALETTE if on_color else ["var(--jp-layout-color0, #ffffff)"]
    for short, style in token_styles(on_color).items():
        fg = re.search(r"color:(var\([^)]*\)|#\w+)", style).group(1)
        for theme, variables in THEME_CASES:
            for bg in backgrounds:
                ratio = contrast(resolve(fg, variables), resolve(bg, variables))
                assert ratio >= 4.5, (short, fg, bg, theme, ratio)


# a Graphviz SVG's groups: one per node, edge or cluster after the graph's background
SVG_GROUP = re.compile(r'(?=<g id="[^"]*" class="(?:node|edge|cluster)\b)')
SHAPE_FILL = re.compile(r'<(?:ellipse|polygon|path|rect)\b[^>]*?\sfill="([^"]*)"')
TEXT = re.compile(r"<text\b([^>]*)>(.*?)</text>", re.S)
UNFILLED = ("none", "transparent", "black", "currentColor")


def drawing_label_pairs(svg: str):
    """``(label, colour, background)`` for every label of a drawing: ``currentColor`` is the
    colour the graph's group sets, a label without a fill is black (SVG's default), and its
    background is its node's filled shape or else the drawing's (transparent: the page's)."""
    head, *groups = SVG_GROUP.split(svg)
    ink = re.search(r'class="graph"[^>]*style="color:([^"]*)"', head)
    ground = re.search(r'class="graph".*?<polygon[^>]*?\sfill="([^"]*)"', head, re.S)
    sheet = PAGE_BACKGROUND if ground is None or ground.group(1) in ("none", "transparent") else ground.group(1)
    out = []
    for group in groups:
        fills = [] if 'class="edge' in group.split(">", 1)[0] else [
            f for f in SHAPE_FILL.findall(group) if f not in UNFILLED]
        for attrs, text in TEXT.findall(group):
            fill = re.search(r'\sfill="([^"]*)"', attrs)
            color = fill.group(1) if fill else "black"
            if color == "currentColor":
                assert ink, "a label in currentColor, but the drawing sets no colour"
                color = ink.group(1)
            out.append((_html.unescape(text), color, fills[0] if fills else sheet))
    return out


def rendered_drawings() -> list[str]:
    """The SVG of every drawing both strategies' lowerings show (iteration graph, lattices of
    three points with omitted ones, CFIR, looplet nests, fiber trees), every tag coloured."""
    svgs = []
    for program, strategy, formats in (("y[i] = A[i] * B[i] + C[i]", "lattice", dict(A="sv", B="sv", C="sv")),
                                       ("y[i] = A[i] * B[i] + C[i]", "looplets", dict(A="sv", B="sv", C="sv")),
                                       ("y[i] = A[i, j] * x[j]", "lattice", dict(A="csr", x="dense"))):
        s = explore(ss.lower(program, strategy, **formats).trace)
        prov = s.provenance()
        for _, art in s.artifacts():
            if art.dot:
                svgs += re.findall(r"<svg\b.*?</svg>", render_artifact(art, provenance=prov or None), re.S)
    return svgs


@pytest.mark.parametrize("theme,variables", THEME_CASES, ids=[t for t, _ in THEME_CASES])
def test_drawing_labels_reach_contrast_4_5(theme, variables):
    """Drawings follow the theme: no white background of their own, labels readable on the
    theme's background or on their node's fill (Graphviz's white background under black ink
    was a white box in the dark theme; grey roles and coloured edge labels fell below 4.5)."""
    svgs = rendered_drawings()
    kinds = " ".join(svgs)
    assert len(svgs) > 5 and "lattice" in kinds and "Lookup" in kinds, "fewer drawings than expected"
    for svg in svgs:
        pairs = drawing_label_pairs(svg)
        low = [(text, fg, bg, round(contrast(resolve(fg, variables), resolve(bg, variables)), 2))
               for text, fg, bg in pairs]
        low = [x for x in low if x[3] < 4.5]
        assert not low, f"a drawing in {theme}: {low[:8]}"
        head = svg.split('<g id="node', 1)[0]
        assert not re.search(r'class="graph".*?<polygon fill="white"', head, re.S), "Graphviz's white background"


@pytest.mark.parametrize("theme,variables", THEME_CASES, ids=[t for t, _ in THEME_CASES])
def test_fiber_tree_as_the_notebooks_draw_it_follows_the_theme(theme, variables):
    """``render_dot``, which the notebooks call for a tensor's fiber tree, gives an inline SVG
    with no background of its own and labels readable in each theme."""
    A = ss.Tensor.from_numpy(np.array([[0, 1.5, 0], [2, 0, 3]]), ss.csr(), name="A")
    html = render_dot(A.fiber_tree_dot())
    assert html.startswith("<svg") and "<?xml" not in html
    assert not re.search(r'class="graph".*?<polygon fill="white"', html.split('<g id="node', 1)[0], re.S)
    pairs = drawing_label_pairs(html)
    assert pairs, "no labels found in the fiber tree"
    low = [(t, fg, bg) for t, fg, bg in pairs if contrast(resolve(fg, variables), resolve(bg, variables)) < 4.5]
    assert not low, f"fiber tree labels in {theme}: {low[:8]}"


NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_store_no_bare_svg(path):
    """A notebook's drawings are inline HTML in the page's theme, never a bare SVG output:
    JupyterLab shows ``image/svg+xml`` as an image, which the theme's colours cannot reach, so
    the tour's and notebook 02's fiber trees (``display(SVG(dot_to_svg(...)))``) stayed white
    boxes in the dark theme."""
    nb = json.loads(path.read_text())
    bare = [i for i, cell in enumerate(nb["cells"]) for out in cell.get("outputs", [])
            if "image/svg+xml" in out.get("data", {})]
    assert not bare, f"{path.name}: cells {bare} display a bare SVG (use explorer.render_dot)"
