"""The looplet lowering's integer facts in the explorer: the ``int-facts`` step's table of each
fact and why it holds, from the data the compiler recorded (``data["facts"]`` of the step and
its artifact: :meth:`compiler.looplets.bounds.IntFacts.records`), never from its text.

A reader of the C wonders why a row's walk has no search for coordinate 0, or why an extent is
cut at ``lastA`` and not at ``min(lastA, A1_size)``: the table answers with the fact the
lowering used (``0 <= A1_idx[_] < A1_size``) and where it comes from (the level validates its
coordinates when the tensor is built).

>>> html = facts_table({"facts": [{"kind": "coordinates", "subject": "A1_idx", "fact": "0 <= A1_idx[_] < A1_size",
...                                "reason": "A.lvl1 stores coordinates of its mode 1"}]})
>>> "<td" in html and "A1_idx[_]" in html and "stored coordinates" in html
True
"""

from __future__ import annotations

import html as _html
from typing import Any, Mapping

__all__ = ["fact_records", "facts_table", "KIND_TITLES"]

#: how the table names each kind of fact
KIND_TITLES = {"coordinates": "stored coordinates", "bound": "bound of a local", "definition": "definition"}

_CELL = "padding:2px 8px;text-align:left;vertical-align:top"


def fact_records(data: Any) -> list[Mapping]:
    """The facts of an ``int-facts`` step's or artifact's ``data`` (those with a ``fact`` text;
    ``[]`` for data that holds none, as a hand-edited saved trace may)."""
    facts = data.get("facts") if isinstance(data, Mapping) else None
    return [f for f in facts if isinstance(f, Mapping) and isinstance(f.get("fact"), str)] \
        if isinstance(facts, list) else []


def facts_table(data: Any) -> str:
    """The facts as an HTML table: the fact, its kind and why it holds ('' when there are none)."""
    rows = [f"<tr><td style='{_CELL}'><code>{_html.escape(f['fact'])}</code></td>"
            f"<td style='{_CELL}'>{_html.escape(KIND_TITLES.get(str(f.get('kind')), str(f.get('kind', ''))))}</td>"
            f"<td style='{_CELL}'>{_html.escape(str(f.get('reason') or ''))}</td></tr>"
            for f in fact_records(data)]
    if not rows:
        return ""
    # (a line height of its own: a widget's pane sets 28 px, and a fact wrapped over two lines
    # read as two rows)
    return ("<table class='ss-int-facts' style='border-collapse:collapse;font-size:12px;line-height:1.4'>"
            f"<tr><th style='{_CELL}'>fact</th><th style='{_CELL}'>kind</th><th style='{_CELL}'>why it holds</th></tr>"
            f"{''.join(rows)}</table>")
