"""Shape operators in the explorer: their names and bindings marked in index notation, and the
``shapes`` step's table of extents, from the data the compiler recorded (``Step.data`` of the
``shapes`` and ``shape-operators`` steps: :func:`compiler.notation.shapedata.shape_data`).

Each operator's text is found in a program as the compiler printed it; its name and binding
(``concat`` and ``(k, l) -> i``) are marked at the offsets the data gives, with a tag
``shape:<n>:<kind>`` whose tooltip is the premise that gave its result's extent.

>>> data = {"operators": [{"kind": "collapse", "text": "collapse(A[i, j], (i, j) -> k)",
...          "marks": [[0, 8], [18, 29]], "consumes": ["i", "j"], "produces": ["k"],
...          "rule": "|k| = |i|·|j| = 2·3 = 6"}], "constants": []}
>>> [(m.text, m.tags) for m in shape_marks("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]", data)]
[('collapse', ('shape:0:collapse',)), ('(i, j) -> k', ('shape:0:collapse',))]
>>> describe_shapes(data)(["shape:0:collapse"])
'collapse: consumes i, j, makes k; |k| = |i|·|j| = 2·3 = 6'
"""

from __future__ import annotations

import html as _html
from typing import Any, Callable, Iterable, Mapping, Sequence

from .linking import PART_BOX
from .provenance import Mark

__all__ = ["describe_shapes", "shape_data_of", "shape_marks", "shapes_table", "SHAPE_TAG"]

#: the prefix of the tags that mark shape operators (they name no C lines)
SHAPE_TAG = "shape:"


def shape_data_of(steps: Iterable[Any]) -> Mapping | None:
    """The shape data of a trace: the first step's ``data`` that lists ``operators`` (the
    ``shapes`` step's, which also has the extents, comes before looplets' ``shape-operators``)."""
    for s in steps:
        data = getattr(s, "data", None)
        if isinstance(data, Mapping) and isinstance(data.get("operators"), list):
            return data
    return None


def _tag(k: int, op: Mapping) -> str:
    return f"{SHAPE_TAG}{k}:{op.get('kind', '')}"


def shape_marks(text: str, data: Mapping | None) -> list[Mark]:
    """The names and bindings of ``data``'s operators wherever their text occurs in ``text``."""
    if not data or not text:
        return []
    out: list[Mark] = []
    for k, op in enumerate(data.get("operators") or ()):
        whole = str(op.get("text") or "")
        spans = [(int(a), int(b)) for a, b in op.get("marks") or () if 0 <= int(a) < int(b) <= len(whole)]
        if not whole or not spans:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            at = line.find(whole)
            while at >= 0:
                # (and its node's tag: the view colours the name as the drawing colours its box)
                tags = (_tag(k, op), *([str(op["tag"])] if op.get("tag") else []))
                out.extend(Mark(n, at + a, at + b, whole[a:b], tags) for a, b in spans)
                at = line.find(whole, at + len(whole))
    return sorted(out, key=lambda m: (m.line, m.start))


def describe_shapes(data: Mapping | None, fallback: Callable[[Sequence[str]], str] | None = None
                    ) -> Callable[[Sequence[str]], str]:
    """A tooltip function: a shape tag says what its operator consumes and makes, and the premise
    of its extent; other tags go to ``fallback`` (or are shown as they are)."""
    ops = {_tag(k, op): op for k, op in enumerate((data or {}).get("operators") or ())}

    def describe(tags: Sequence[str]) -> str:
        lines, rest = [], []
        for t in tags:
            op = ops.get(t)
            if op is None:
                rest.append(t)
                continue
            what = f"{op.get('kind')}: consumes {', '.join(op.get('consumes') or ())}, makes {', '.join(op.get('produces') or ())}"
            lines.append(what + (f"; {op['rule']}" if op.get("rule") else ""))
        if rest:
            lines.append(fallback(rest) if fallback else ", ".join(rest))
        return "\n".join(lines)

    return describe


_CELL = "padding:2px 8px;text-align:left;vertical-align:top"


def _unbroken_arrows(text: str) -> str:
    """``text`` as HTML whose ``->`` a line never breaks inside.

    >>> _unbroken_arrows("(k, l) -> i")
    "(k, l) <span style='white-space:nowrap'>-&gt;</span> i"
    """
    return "<span style='white-space:nowrap'>-&gt;</span>".join(_html.escape(p) for p in text.split("->"))


def shapes_table(data: Mapping, color: Callable[[str], str]) -> str:
    """The ``shapes`` artifact as HTML: each index's extent and where it came from, then each
    operator (its name and binding coloured as in the program) with the premise of its extent.

    ``color(tag)`` colours an operator's tag (as the program's marks are coloured).

    >>> html = shapes_table({"extents": {"k": "6"}, "sources": {"k": "collapse(A[i, j], (i, j) -> k)"},
    ...                      "operators": [], "constants": []}, lambda tag: "#fff")
    >>> "<td" in html and "|k|" in html
    True
    """
    rows = []
    for i, e in (data.get("extents") or {}).items():
        src = (data.get("sources") or {}).get(i, "")
        # an extent on one line, and a binding's arrow never broken after its "-" (the narrow
        # pane of notebook 10 drew "|k| =" over "20000", and "-" over "> i")
        rows.append(f"<tr><td style='{_CELL};white-space:nowrap'><code>|{_html.escape(i)}| = {_html.escape(str(e))}"
                    f"</code></td><td style='{_CELL}'>from <code>{_unbroken_arrows(src)}</code></td></tr>")
    parts = []
    if rows:
        # (a line height of its own: a widget's pane sets 28 px, and a source wrapped over two
        # lines read as two rows)
        parts.append("<table class='ss-extents' style='border-collapse:collapse;font-size:12px;line-height:1.4'>"
                     f"<tr><th style='{_CELL}'>extent</th><th style='{_CELL}'>given by</th></tr>{''.join(rows)}</table>")
    items = []
    for k, op in enumerate(data.get("operators") or ()):
        tag = _tag(k, op)
        text = str(op.get("text") or "")
        cuts = sorted((int(a), int(b)) for a, b in op.get("marks") or ())
        shown, at = [], 0
        for a, b in cuts:
            shown.append(_html.escape(text[at:a]))
            shown.append(f"<span class='pv' data-tags='{_html.escape(tag)}' style='background:{color(tag)};"
                         f"color:#1a1a1a;border-radius:2px;{PART_BOX}'>{_html.escape(text[a:b])}</span>")
            at = b
        shown.append(_html.escape(text[at:]))
        what = (f"consumes {_html.escape(', '.join(op.get('consumes') or ()))}, makes "
                f"{_html.escape(', '.join(op.get('produces') or ()))}")
        rule = f"<br><code>{_html.escape(op['rule'])}</code>" if op.get("rule") else ""
        items.append(f"<li><code>{''.join(shown)}</code>: {what}{rule}</li>")
    for c in data.get("constants") or ():
        modes = ", ".join(str(m) for m in c.get("modes") or ())
        items.append(f"<li><code>{_html.escape(str(c.get('access')))}</code>: a constant index (mode {modes})</li>")
    if items:
        parts.append(f"<ul class='ss-shape-operators' style='font-size:12px;line-height:1.4;margin:6px 0;padding-left:18px'>"
                     f"{''.join(items)}</ul>")
    return "".join(parts)
