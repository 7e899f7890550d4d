"""Looplet nests drawn narrow enough for a notebook pane (about 900 pixels).

The compiler draws a nest one node per looplet with its whole description on one line
(``Thunk(preamble: int64 qA = A1_pos[i]; ...)``) and the role of each child on its edge
(``Phase(stop=lastA)``), so a few siblings side by side make a drawing over a thousand pixels
wide. :func:`compact_nest_dot` redraws the same nest top to bottom with compact labels: the
looplet's kind in bold on the first line, its arguments and statements one per line and
wrapped, and the role a child plays in its parent as the child's first (grey) line instead of
an edge label. Graphviz scales the result down only if it is still wider than ``max_width``.

>>> dot = 'digraph "A" {\\n  n0 [label="Stepper(stop=jA + 1, next: qA += 1;)"];\\n  n1 [label="Spike"];\\n  n0 -> n1 [label="chunk"];\\n}'
>>> out = compact_nest_dot(dot)
>>> "<b>Stepper</b>" in out and "chunk" in out and "n0 -> n1" in out
True
"""

from __future__ import annotations

import html as _html
import math
import re
import textwrap

__all__ = ["compact_nest_dot", "nest_label_lines", "svg_width_px"]

_NODE = re.compile(r'^\s*(n\d+)\s*\[label="((?:[^"\\]|\\.)*)"\s*\];?\s*$')
_EDGE = re.compile(r'^\s*(n\d+)\s*->\s*(n\d+)\s*(?:\[label="((?:[^"\\]|\\.)*)"\s*\])?;?\s*$')
_NAME = re.compile(r'^\s*digraph\s+("(?:[^"\\]|\\.)*"|\w+)')

#: Pixels per point in Graphviz SVG (72 points and 96 CSS pixels to the inch).
PX_PER_PT = 96 / 72


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets and parentheses."""
    out, depth, cur = [], 0, ""
    k = 0
    while k < len(text):
        ch = text[k]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if depth == 0 and text.startswith(sep, k):
            out.append(cur)
            cur = ""
            k += len(sep)
            continue
        cur += ch
        k += 1
    out.append(cur)
    return [p.strip() for p in out if p.strip()]


def nest_label_lines(label: str, width: int = 34) -> list[str]:
    """One looplet's label as short lines: its kind, then each argument (statements of a
    preamble one per line), each wrapped at ``width`` characters.

    >>> nest_label_lines("Thunk(preamble: int64 qA = A1_pos[i]; int64 qA_stop = A1_pos[i + 1];)")
    ['Thunk', 'preamble:', '  int64 qA = A1_pos[i];', '  int64 qA_stop = A1_pos[i + 1];']
    >>> nest_label_lines("Lookup(i -> A.lvl1[i])"), nest_label_lines("A.lvl2[qA]")
    (['Lookup(i -> A.lvl1[i])'], ['A.lvl2[qA]'])
    """
    m = re.match(r"^([A-Z]\w*)\((.*)\)$", label.strip(), re.S)
    if not m:
        return _wrap(label.strip(), width)
    if len(label.strip()) <= width and ": " not in m.group(2):
        return [label.strip()]  # short enough: one line, as the compiler wrote it
    lines = [m.group(1)]
    for arg in _split_top(m.group(2), ", "):
        key, colon, rest = arg.partition(": ")
        if colon and re.fullmatch(r"\w+", key):
            statements = _split_top(rest, "; ")
            if len(statements) > 1 or len(arg) > width:
                lines.append(key + ":")
                for st in statements:
                    st = st if st.endswith(";") or not rest.rstrip().endswith(";") else st + ";"
                    lines += _wrap(st, width - 2, indent="  ")
                continue
        lines += _wrap(arg.replace("=", " = ", 1) if re.match(r"^\w+=", arg) else arg, width)
    return lines


def _wrap(text: str, width: int, indent: str = "") -> list[str]:
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "    ",
                         break_long_words=False, break_on_hyphens=False) or [indent + text]


def _esc(text: str) -> str:
    """``text`` for an HTML-like label: entities for ``<>&"'``, and backslashes doubled
    (Graphviz reads ``\\\\`` as one backslash in HTML-like labels too)."""
    return _html.escape(text).replace("\\", "\\\\")


def _html_label(lines: list[str], role: str) -> str:
    """An HTML-like Graphviz label: the role small and in italics (not grey: it must read on a
    provenance colour), the looplet's kind in bold, then its details, all left-aligned."""
    br = '<br align="left"/>'
    parts = []
    if role:
        parts.append(f'<font point-size="9"><i>{_esc(role)}</i></font>{br}')
    head, *rest = lines
    kind = re.match(r"^[A-Z]\w*(?=\(|$)", head)
    if kind:
        parts.append(f"<b>{_esc(kind.group(0))}</b>{_esc(head[kind.end():])}{br}")
    else:
        parts.append(_esc(head) + br)
    for line in rest:
        parts.append(_esc(line).replace("  ", "&#160;&#160;") + br)
    return "<" + "".join(parts) + ">"


def compact_nest_dot(dot: str, max_width: int = 880, width: int = 34) -> str:
    """The nest drawing ``dot`` (as the compiler writes it) redrawn compact and top to bottom
    (see the module docstring); DOT it does not recognize comes back unchanged.

    ``max_width`` (pixels) is the widest the laid-out drawing may be before Graphviz scales it;
    ``width`` the characters per label line.
    """
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str]] = []
    name = None
    for line in dot.splitlines():
        if name is None:
            m = _NAME.match(line)
            if m:
                name = m.group(1)
                continue
        m = _NODE.match(line)
        if m:
            nodes[m.group(1)] = _unescape(m.group(2))
            continue
        m = _EDGE.match(line)
        if m:
            edges.append((m.group(1), m.group(2), _unescape(m.group(3) or "")))
            continue
        if line.strip() and not line.strip().startswith(("node ", "edge ", "graph ", "}", "{")):
            return dot  # something this drawing does not know: leave it as it is
    if name is None or not nodes:
        return dot
    role = {child: label for _, child, label in edges}
    # Graphviz writes the SVG width in whole points: a size rounded up (9.18 for 881 px) can
    # come out wider than max_width, so round down to whole points, then to 1/10000 inch
    inches = math.floor(math.floor(max_width / PX_PER_PT) / 72 * 10000) / 10000
    out = [f"digraph {name} {{",
           f'  graph [rankdir=TB, nodesep=0.12, ranksep=0.22, size="{inches:.4f},1000"];',
           '  node [shape=box, style="rounded", fontname=Courier, fontsize=10, margin="0.08,0.04"];',
           '  edge [arrowsize=0.6, color="#888888"];']
    for node, label in nodes.items():
        out.append(f"  {node} [label={_html_label(nest_label_lines(label, width), role.get(node, ''))}];")
    for parent, child, _ in edges:
        out.append(f"  {parent} -> {child};")
    out.append("}")
    return "\n".join(out)


def svg_width_px(svg: str) -> float:
    """The width of a Graphviz SVG drawing in CSS pixels (its ``width`` is in points).

    >>> svg_width_px('<svg width="72pt" height="10pt">')
    96.0
    """
    m = re.search(r'<svg[^>]*\swidth="([\d.]+)(pt|px)?"', svg)
    if not m:
        raise ValueError("not a Graphviz SVG: no width on its <svg> element")
    return float(m.group(1)) * (PX_PER_PT if (m.group(2) or "pt") == "pt" else 1.0)
