"""What changed between two lowerings: the C and the lattices or looplet nests, diffed.

The playground (:class:`widgets.playground.Playground`) keeps the lowering before a format,
strategy or expression change and shows :func:`what_changed` between it and the new one. The
texts come from the traces' artifacts (the ``c``, ``lattice`` and ``looplet-nest`` kinds), so
nothing is re-read from a printout. A representation only one lowering has (the lattice
strategy draws lattices, the looplet strategy nests) is shown as it is, named so, not diffed
against another representation.

>>> import compiler
>>> a = compiler.lower("y[i] = A[i, j] * x[j]", "lattice", A="csr", x="dense").trace
>>> b = compiler.lower("y[i] = A[i, j] * x[j]", "lattice", A="dcsr", x="dense").trace
>>> w = what_changed(a, b, "A csr", "A dcsr")
>>> [c.title for c in w.changes]
['C', 'lattice forall i', 'lattice forall j']
>>> "+" in w.changes[0].diff and w.changes[0].comparable
True
"""

from __future__ import annotations

import html as _html
from dataclasses import dataclass
from typing import Any

from .renderers import render_code, render_diff
from .session import Session, explore, unified_diff
from .theme import MUTED

__all__ = ["Change", "WhatChanged", "what_changed"]

#: the artifact kinds compared, in the order shown after the C
STRUCTURE_KINDS = (("lattice", "lattice"), ("looplet-nest", "looplet nest"))


@dataclass(frozen=True)
class Change:
    """One representation before and after. ``comparable``: both lowerings have it, and
    ``diff`` is the unified diff ('' when equal); else one side is '' and nothing is diffed."""

    title: str
    before: str
    after: str
    diff: str
    comparable: bool

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True)
class WhatChanged:
    """The changes from the lowering ``before_label`` names to the one ``after_label`` names."""

    before_label: str
    after_label: str
    changes: tuple[Change, ...]

    def html(self) -> str:
        """The changes as HTML: a diff per representation both have, the text of the others."""
        head = (f'<div style="font:600 13px sans-serif">what changed: {_html.escape(self.before_label)} '
                f'&rarr; {_html.escape(self.after_label)}</div>')
        parts = [head]
        for c in self.changes:
            if c.comparable:
                note = "changed" if c.changed else "unchanged"
                body = render_diff(c.diff)
            else:
                side = self.after_label if c.after else self.before_label
                note = f"only {side} has it"
                body = render_code(c.after or c.before, linenos=False)
            parts.append(f'<div class="ss-change" data-title="{_html.escape(c.title)}" '
                         f'data-changed="{str(c.changed).lower()}" style="margin-top:6px">'
                         f'<b>{_html.escape(c.title)}</b> <span style="color:{MUTED};font-size:12px">'
                         f'({_html.escape(note)})</span>{body}</div>')
        return "".join(parts)


def _session(x: Any) -> Session:
    return x if isinstance(x, Session) else explore(x)


def _c_text(s: Session) -> str:
    art = s.last_artifact("c")
    if art is not None:
        return art.text
    return f"/* no C: {s.error} */" if s.error else ""


def _by_name(s: Session, kind: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for _, a in s.artifacts(kind):
        out[a.name] = a.text   # a later step's artifact of the same name is the one that stands
    return out


def what_changed(before: Any, after: Any, before_label: str = "before",
                 after_label: str = "after", context: int = 3) -> WhatChanged:
    """The C and the lattices / looplet nests of two lowerings (sessions or traces), paired by
    kind and name (``lattice forall j`` with ``lattice forall j``)."""
    a, b = _session(before), _session(after)
    ca, cb = _c_text(a), _c_text(b)
    changes = [Change("C", ca, cb, unified_diff(ca, cb, before_label, after_label, context), True)]
    for kind, title in STRUCTURE_KINDS:
        xa, xb = _by_name(a, kind), _by_name(b, kind)
        if xa and xb:
            for name in [*xa, *(n for n in xb if n not in xa)]:
                ta, tb = xa.get(name, ""), xb.get(name, "")
                changes.append(Change(f"{title} {name}", ta, tb,
                                      unified_diff(ta, tb, before_label, after_label, context), True))
        elif xa or xb:
            joined = "\n\n".join(f"{title} {n}:\n{t}" for n, t in (xa or xb).items())
            changes.append(Change(f"{title}s", joined if xa else "", joined if xb else "", "", False))
    return WhatChanged(before_label, after_label, tuple(changes))
