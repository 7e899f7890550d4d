"""A small legend under a lattice or looplet-nest drawing: what its notation means.

Only the terms a drawing uses are listed, so the legend stays a line or two.

>>> from compiler.trace import Artifact
>>> art = Artifact("lattice", "forall i", "lattice at i: algebra (A[i] ∩ x[i])\\n[A | x] P  A[i] * x[i]",
...                dot='digraph { p0 [label="[A | x]\\\\nA[i] * x[i]"] }')
>>> [term for term, _ in legend_terms(art)]
['[iterated | located]', '∩']
"""

from __future__ import annotations

import html as _html
import re

from compiler.trace import Artifact

from .theme import MUTED

__all__ = ["legend_html", "legend_terms"]

#: (term shown, pattern found in the drawing's labels or text, meaning), per drawing kind
_LATTICE = [
    ("[iterated | located]", r"\[[^\]\n]*\|[^\]\n]*\]",
     "a lattice point: the operands it iterates over (left of |) and those it looks up by "
     "coordinate (right)"),
    ("U", r"(?<![\w.])U(?![\w\[])", "the universe: every coordinate of the loop's extent (a dense loop)"),
    ("∩", "∩", "intersection: coordinates stored in all the operands (a product, or another operator "
               "that annihilates)"),
    ("∪", "∪", "union: coordinates stored in any operand (a sum)"),
    ("edge X", r"->\s*\w+\s*\[label=\"\w", "going down an edge labelled X: operand X has run out"),
]
_NEST = [
    ("Lookup", r"\bLookup\b", "random access: the value at each coordinate i is looked up"),
    ("Run", r"\bRun\b", "one value over the whole extent"),
    ("Fill", r"\bFill\b", "the fill value: no stored entries in this region"),
    ("Spike", r"\bSpike\b", "the fill (body) up to the last coordinate, a stored value (tail) at it"),
    ("Sequence / Phase", r"\b(Sequence|Phase)\b", "the extent split into phases run one after another, "
                                                   "each ending before its stop"),
    ("Stepper", r"\bStepper\b", "a run of children (chunk), one per stored coordinate, each ending "
                                "before its stop; next moves to the following one"),
    ("Jumper", r"\bJumper\b", "a Stepper that may skip several children at once when it leads"),
    ("Switch", r"\bSwitch\b", "the first case whose condition holds at run time"),
    ("Shift", r"\bShift\b", "the body's coordinates shifted by a delta"),
    ("Thunk", r"\bThunk\b", "host code (preamble) run before its looplet"),
    ("AcceptRun", r"\bAcceptRun\b", "an output that stores a region as one run"),
]
_KINDS = {"lattice": _LATTICE, "looplet-nest": _NEST}


def legend_terms(artifact: Artifact) -> list[tuple[str, str]]:
    """``(term, meaning)`` for each notation ``artifact``'s drawing or text uses."""
    terms = _KINDS.get(artifact.kind, [])
    seen = f"{artifact.dot or ''}\n{artifact.text or ''}"
    return [(term, meaning) for term, pattern, meaning in terms if re.search(pattern, seen)]


def legend_html(artifact: Artifact) -> str:
    """The legend as HTML ('' for a drawing kind without one, or no notation to explain)."""
    terms = legend_terms(artifact)
    if not terms:
        return ""
    items = "; ".join(f"<code>{_html.escape(t)}</code> {_html.escape(m)}" for t, m in terms)
    return (f'<div class="ss-legend" style="color:{MUTED};font:11px sans-serif;margin:2px 0 6px">'
            f"{items}</div>")
