"""compact_nest_dot on the looplet nests of real lowerings: valid DOT, narrow, lossless, escaped."""

import html
import re

import numpy as np
import pytest
import scipy.sparse as sp

import compiler as ss
from explorer.nests import compact_nest_dot, nest_label_lines, svg_width_px
from explorer.render import dot_to_svg
from explorer.renderers import render_artifact

_NODE = re.compile(r'^\s*(n\d+)\s*\[label=', re.M)
_EDGE = re.compile(r"^\s*(n\d+)\s*->\s*(n\d+)", re.M)


def _nests(program, **tensors):
    kernel = ss.lower(program, strategy="looplets", **tensors)
    return [a for s in kernel.trace.steps for a in s.artifacts if a.kind == "looplet-nest"]


@pytest.fixture(scope="module")
def nests():
    S = sp.random(6, 5, density=0.4, format="csr", random_state=0)
    A = ss.Tensor.from_scipy(S, name="A")
    a = ss.Tensor.from_numpy(np.array([0, 1.0, 0, 2, 0, 0, 3]), "sparse_vector")
    b = ss.Tensor.from_numpy(np.array([1, 0.0, 0, 2, 0, 4, 0]), "sparse_vector")
    out = _nests("y[i] = A[i, j] * x[j]", A=A, x=np.arange(5.0))
    out += _nests("z[i] = a[i] + b[i]", a=a, b=b)
    assert len(out) >= 6 and all(n.dot for n in out)
    return out


def _svg_nodes_edges(svg):
    titles = [html.unescape(t) for t in re.findall(r'class="(node|edge)">\s*<title>(.*?)</title>', svg)
              for t in [t[1]]]
    kinds = re.findall(r'class="(node|edge)">\s*<title>', svg)
    nodes = {t for k, t in zip(kinds, titles) if k == "node"}
    edges = {tuple(t.split("->")) for k, t in zip(kinds, titles) if k == "edge"}
    return nodes, edges


def _texts(svg):
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, re.S)]


def test_real_nests_are_redrawn_as_valid_dot(nests):
    for nest in nests:
        compact = compact_nest_dot(nest.dot)
        assert compact != nest.dot, nest.name  # every real nest is recognized and redrawn
        assert compact.startswith("digraph ") and compact.rstrip().endswith("}")
        svg = dot_to_svg(compact)  # Graphviz accepts it (RenderError otherwise)
        assert "<svg" in svg


def test_every_node_and_edge_survives(nests):
    for nest in nests:
        nodes = set(_NODE.findall(nest.dot))
        edges = set(_EDGE.findall(nest.dot))
        compact = compact_nest_dot(nest.dot)
        assert set(_NODE.findall(compact)) == nodes
        assert set(_EDGE.findall(compact)) == edges
        svg_nodes, svg_edges = _svg_nodes_edges(dot_to_svg(compact))
        assert svg_nodes == nodes and svg_edges == edges, nest.name


def test_labels_and_roles_keep_their_text(nests):
    """Every looplet's kind and every child's role (the old edge label) is still drawn."""
    wide = next(n for n in nests if n.name == "A.lvl1[i][j]")
    texts = " ".join(_texts(dot_to_svg(compact_nest_dot(wide.dot))))
    for word in ("Thunk", "Sequence", "Stepper", "Spike", "Fill", "A.lvl2[qA]",
                 "Phase(stop=lastA)", "chunk", "body", "tail", "qA_stop = A1_pos[i + 1];"):
        assert word in texts, word
    assert re.search(r"<b>Stepper</b>", compact_nest_dot(wide.dot))


def test_rendered_width_within_the_promised_bound(nests):
    widths = {}
    for nest in nests:
        original = svg_width_px(dot_to_svg(nest.dot))
        compact = svg_width_px(dot_to_svg(compact_nest_dot(nest.dot)))
        assert compact <= 880, (nest.name, compact)
        widths[nest.name] = (original, compact)
    # the nests with a Thunk and a Stepper were over 900 px wide as the compiler draws them
    wide = [name for name, (o, c) in widths.items() if o > 900]
    assert wide and all(widths[name][1] < widths[name][0] for name in wide)


@pytest.mark.parametrize("max_width", [300, 349, 447, 517, 881, 905])
def test_width_bound_holds_for_any_max_width(nests, max_width):
    """Graphviz writes whole points: the bound holds for widths that are no whole number of
    points or hundredths of an inch, and the drawing is scaled to it when wider."""
    wide = next(n for n in nests if n.name == "A.lvl1[i][j]")
    siblings = [f'  n{k} [label="Stepper(stop=jA + {k}, preamble: int64 jA = A1_idx[qA];, next: qA += 1;)"];\n'
                f'  n1 -> n{k} [label="Phase(stop=last{k})"];' for k in range(7, 15)]
    dot = wide.dot.rstrip().rstrip("}") + "\n".join(siblings) + "\n}"
    assert svg_width_px(dot_to_svg(dot)) > 2 * max_width
    width = svg_width_px(dot_to_svg(compact_nest_dot(dot, max_width=max_width)))
    assert max_width - 4 <= width <= max_width


def test_labels_are_escaped():
    label = r'Thunk(preamble: int64 q = a < b && c > d ? \"x\" : 0; double w = p & 2;)'
    dot = ('digraph "A<&>" {\n  node [shape=box, fontname=monospace];\n'
           f'  n0 [label="{label}"];\n  n1 [label="Case(i < \\"k\\" & j > 0)"];\n'
           '  n0 -> n1 [label="Case(a<b & \\"c\\")"];\n}')
    compact = compact_nest_dot(dot)
    assert compact != dot
    # no raw < > & " inside an HTML-like label's text
    body = compact.split("n0 [label=<", 1)[1]
    assert "&lt;" in body and "&gt;" in body and "&amp;&amp;" in body and "&quot;x&quot;" in body
    texts = " ".join(_texts(dot_to_svg(compact)))
    assert 'a < b && c > d ? "x"' in texts
    assert "double w = p & 2;" in texts
    assert 'Case(a<b & "c")' in texts  # the role (edge label), unescaped from DOT, escaped again
    kinds = _texts(dot_to_svg(compact))
    assert "Case" in kinds and '(i < "k" & j > 0)' in kinds  # the kind in bold, then its arguments


def test_backslashes_survive():
    dot = 'digraph "n" {\n  n0 [label="Lookup(i -> s[\\"a\\\\\\\\b\\"])"];\n}'
    texts = _texts(dot_to_svg(compact_nest_dot(dot)))
    assert any('s["a\\\\b"]' in t for t in texts), texts


def test_unknown_dot_comes_back_unchanged():
    odd = 'digraph { a -> b [color=red]; }'
    assert compact_nest_dot(odd) == odd
    assert compact_nest_dot("digraph x {\n}") == "digraph x {\n}"  # no nodes


def test_label_lines():
    lines = nest_label_lines("Stepper(stop=jA + 1, preamble: int64 jA = A1_idx[qA];, next: qA += 1;)")
    assert lines[0] == "Stepper" and "stop = jA + 1" in lines
    assert "preamble: int64 jA = A1_idx[qA];" in lines  # one short statement: one line
    thunk = nest_label_lines("Thunk(preamble: int64 qA = A1_pos[i]; int64 qA_stop = A1_pos[i + 1]; "
                             "int64 lastA = qA < qA_stop ? A1_idx[qA_stop - 1] + 1 : 0;)")
    assert thunk[:4] == ["Thunk", "preamble:", "  int64 qA = A1_pos[i];", "  int64 qA_stop = A1_pos[i + 1];"]
    assert all(len(line) <= 34 for line in lines + thunk)
    assert nest_label_lines("Spike") == ["Spike"]


def test_svg_width_px():
    assert svg_width_px('<svg width="660pt" height="1pt">') == 880
    assert svg_width_px('<svg height="3" width="120px">') == 120
    with pytest.raises(ValueError):
        svg_width_px("<div>")


def test_nest_renderer_uses_the_compact_drawing(nests):
    wide = next(n for n in nests if n.name == "A.lvl1[i][j]")
    out = render_artifact(wide)
    assert "<svg" in out and "max-width:100%" in out
    assert svg_width_px(out) <= 880
    assert "Phase(stop=lastA)" in html.unescape(out)
