"""Drawings that fit: every label laid out as wide as a browser draws it, every SVG scaled to its pane.

The browser test measures the same thing in Chromium (getBBox); here the SVG Graphviz wrote is
checked against the width any monospace font takes: 0.6 em per character.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import compiler as ss
from explorer import dot_to_svg, render_artifact
from explorer.fit import fit_svg, layout_dot

SVG = "{http://www.w3.org/2000/svg}"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# a monospace glyph's advance (Courier, Liberation Mono, DejaVu Sans Mono: 0.600-0.602 em)
EM_PER_CHAR = 0.6


def shape_width(g) -> float | None:
    # a node with a tooltip has its shapes inside <g><a xlink:title=...>: look below it too
    for child in g.iter():
        tag = child.tag.replace(SVG, "")
        if tag == "ellipse":
            return 2 * float(child.get("rx"))
        if tag in ("polygon", "path") and child.get("stroke") != "transparent":
            coords = NUMBER.findall(child.get("points") or child.get("d") or "")
            xs = [float(x) for x in coords[0::2]]
            return max(xs) - min(xs) if xs else None
    return None


def too_narrow(svg: str) -> list[tuple[str, float, float]]:
    """``(label, its width in a monospace font, its shape's width)`` for every node label
    wider than its shape."""
    out = []
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if g.get("class") != "node":
            continue
        width = shape_width(g)
        if width is None:
            continue
        for t in g.iter(f"{SVG}text"):
            text = "".join(t.itertext())
            need = EM_PER_CHAR * float(t.get("font-size", "14")) * len(text)
            if need > width + 0.5:
                out.append((text, round(need, 1), round(width, 1)))
    return out


def drawings():
    """Every drawing kind the compiler makes, from real lowerings: the iteration graph, a
    lattice of three points, the looplet nests, fiber trees (one wider than any pane)."""
    out = []
    for strategy in ("lattice", "looplets"):
        trace = ss.lower("y[i] = A[i] * B[i] + C[i]", strategy, A="sv", B="sv", C="sv").trace
        out += [a for s in trace.steps for a in s.artifacts if a.dot]
    A = ss.Tensor.from_numpy(np.arange(1.0, 41.0).reshape(4, 10), "csr")
    out.append(ss.fiber_tree_artifact(A))
    return out + shape_drawings()


def shape_drawings():
    """The shape operators' drawings: array expressions (fused, and with a node materialized),
    and the sequence layer's derivation trees, lattices with edge sequences, and CFIR."""
    from compiler import array as xp
    from compiler.lattice.seqderive import seq_lower

    M = ss.Tensor.from_numpy(np.arange(12.0).reshape(3, 4) % 3, "csr")
    N = ss.Tensor.from_numpy(np.arange(8.0).reshape(2, 4) % 2, "coo")
    v, w = np.arange(4.0), np.arange(12.0)
    out = []
    for expr in (xp.concat([ss.asarray(M), ss.asarray(N)], axis=0) @ ss.asarray(v),
                 ss.asarray(np.ones((2, 12))) @ xp.reshape(ss.asarray(M), (12,)),
                 xp.reshape(ss.asarray(M), (4, 3)) + 1):
        out += ss.lower(expr).trace.find("array")[0].artifacts
    for program, tensors in (
            ("y[l] = sum[i](concat((M[j, i], N[k, i]), (j, k) -> l) * broadcast(l, v[i]))", dict(M=M, N=N, v=v)),
            ("c[k] = collapse(M[i, j], (i, j) -> k) * w[k]", dict(M=M, w=w)),
            ("g[i, j] = split(w[k], k -> (i, j:4)) + M[i, j]", dict(M=M, w=w)),
            ("r[k, i] = slice(M[j, i], j -> k, (0, 3, 2))", dict(M=M))):
        out += [a for s in seq_lower(program, **tensors).trace for a in s.artifacts if a.dot]
    return out


@pytest.mark.parametrize("artifact", drawings(), ids=lambda a: f"{a.kind}:{a.name}")
def test_every_label_fits_its_shape(artifact):
    assert not too_narrow(dot_to_svg(artifact.dot)), artifact.dot


def test_a_lattice_of_three_points_keeps_its_labels_apart():
    # "[A B C | ]" over "A[i] * B[i] + C[i]": laid out as Times, it was 40% narrower than drawn
    lattice = next(a for a in drawings() if a.kind == "lattice")
    assert lattice.dot.count("label=") >= 3
    assert "fontname" in lattice.dot and "Courier" not in lattice.dot   # the compiler's own choice
    svg = dot_to_svg(lattice.dot)
    assert 'font-family="Courier,monospace"' in svg and not too_narrow(svg)


def test_layout_dot_overrides_every_font_and_keeps_the_graph():
    dot = 'digraph "a {b}" {\n  node [fontname="monospace"];\n  x [label="A[i]", fontname=Helvetica];\n}'
    out = layout_dot(dot)
    assert re.findall(r'fontname="?(\w+)', out) == ["Courier"] * 5
    assert out.startswith('digraph "a {b}" { graph [fontname="Courier"];') and 'label="A[i]"' in out


def test_drawings_scale_to_their_pane_and_offer_their_own_size():
    html = render_artifact(ss.fiber_tree_artifact(ss.Tensor.from_numpy(np.eye(12), "csr")))
    svg_tag = re.search(r"<svg[^>]*>", html).group(0)
    assert "max-width:100%;height:auto;min-width:min(" in svg_tag
    assert 'class="ss-zoom"' in html and 'class="drawing"' in html


def test_fit_svg_keeps_a_style_of_its_own():
    out = fit_svg('<svg width="30px" style="color:red" viewBox="0 0 30 10"></svg>')
    assert out == ('<svg style="max-width:100%;height:auto;min-width:min(15px,160%);display:block;margin:0 auto;color:red" '
                   'width="30px" viewBox="0 0 30 10"></svg>')
