"""A small legend under a lattice, looplet-nest, sequence-layer, CFIR or IR drawing: what its notation means.

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
#: the sequence layer's notation (BURRITO's sequence expressions, lattices and CFIR)
_SEQ = [
    ("Seq(·, i)", r"Seq\(", "the coordinates a loop over i visits for that expression"),
    ("line N", r"line \d+:", "the rule of the paper's Fig. 11 that derived it"),
    ("j_A", r"\b[a-z]\w*_[A-Za-z]\w*\b", "the coordinates of index j that tensor A stores (its level's)"),
    ("U_i", r"\bU_\w+", "the universe: every coordinate of i (a broadcast, or a dense loop)"),
    ("U_i#k", r"\bU_\w+#", "a universe with a cursor of its own: there only where the loops are at a concat's part "
                         "(the part along k, or holding level k_A), or of one term of a collapsed sum (#1, #2)"),
    ("∩", "∩", "intersection: coordinates in both (a product)"),
    ("∪", "∪", "union: coordinates in either (a sum)"),
    ("⊔", "⊔", "disjoint union (a concat): the left operand's coordinates, then the right's after them"),
    ("×", "×", "product (a collapse): each pair (a, b) is the coordinate a·|b| + b"),
    ("π0, π1", "π[01]", "projections (a split): the major (k // n) and minor (k % n) coordinate of each k"),
    ("[s:e:r]", r"\[-?\d+:-?\d+:-?\d+\]", "a slice: coordinates s, s + r, ... short of e, renumbered 0, 1, ..."),
    ("|a| + X", r"\|\w+\| \+", "X offset by the extent of a (a concat's right operand, once the left ran out)"),
    ("Ƒ", "Ƒ", "full: an operand that ran out but was dense, so every coordinate is still present"),
    ("∅", "∅", "empty: no coordinate left"),
    ("edge X / rule", r'\[label="[^"]*\\n[a-z]+(-[a-z0-9π]+)+', "operand X ran out; the rules of the paper's Fig. 27 "
                                                            "that simplified what was left, in order"),
    ("no loop", r"no loop", "what simplified to ∅ (or Ƒ) is no lattice point: no loop runs it"),
    ("dotted edge", r"style=dotted", "to a point that is no sub-point (a concat's next operand): a loop of its own, "
                                     "no case in this one"),
    ("while i <- S", r"while \w+ <-", "a loop over the coordinates of the sequence S, one per lattice point"),
    ("with x = y", r"with \w+ = ", "x is located at y's coordinate instead of iterated"),
    ("until all ran out", r"until all ran out", "a merged union: one loop at the least coordinate of the operands "
                                                "left, until every one ran out, each part of its body reading its own "
                                                "operand, or each read tested where it is (not a lattice point per set "
                                                "of operands present); over a split's π0, at the group of that "
                                                "coordinate"),
]
#: the tree drawings of programs (compiler.treedot): the lattice strategy's CFIR, the imperative IR
_TREE = [
    ("rounded box", r"style=rounded", "control: a loop, a branch, a case or an allocation; below it, what it runs "
                                      "(left to right, in order)"),
    ("square box", r"\[label=\"(?![^\"]*\", style=rounded)", "straight-line statements, run one after another"),
    ("… N more", r"… \d+ more \(", "a long run of statements, or of arrays allocated one inside the other, "
                                   "shown by its first lines: its tooltip lists them all"),
    ("…", r"[^ ]…\\l|[^ ]…\"", "a line cut short: its tooltip has it whole"),
]
_CFIR = [
    ("forall i", r"forall \w+", "the loops over one index, one after the other (drop-out: each runs while "
                                 "the operands it iterates have coordinates left)"),
    ("while i <- A0 ∩ B0", r"while \w+ <-", "a loop over the coordinates its iterated levels share (a lattice point)"),
    ("U", r"<- U\b|U ∩", "the universe: every coordinate of the loop's extent (a dense loop)"),
    ("∩", "∩", "intersection: coordinates stored in all the levels iterated"),
    ("with (B0 = i)", r"with \(", "levels located at the loop's coordinate instead of iterated"),
    ("case A0 B0", r"case [^:\n\"]", "runs where the levels named are at the coordinate (most specific case first)"),
    ("produce / consume", r"label=\"produce", "a workspace's producer fills it, its consumer reads it"),
] + _TREE
_IR = [
    ("then / else", r"label=\"then", "the branches of an if"),
    ("{ … }", r"\{ … \}", "a block of its own: a scope for the names it declares"),
] + _TREE
_KINDS = {"lattice": _LATTICE, "looplet-nest": _NEST, "seq-lattice": _SEQ, "seq-derivation": _SEQ,
          "seq-cfir": _SEQ, "cfir": _CFIR, "ir": _IR}


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
