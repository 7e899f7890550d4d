"""Two traces of one kernel, aligned by stage family, for a side-by-side stage slider.

The lattice and looplet strategies take different paths to the same places: both parse, both
turn the expression into a program over loops (``concretize`` / ``program``), both work out
what to do per index (the lattice of ``j`` / the unfurl of ``j``), both end in a whole IR
(``lower`` / ``imperative``), C and a compile. :func:`stage_key` names those places;
:func:`align` pairs the steps of two sessions at them (in order, as a longest common
subsequence) and lists every step of both as a :class:`Station`: between two paired places one
side moves on while the other stays at its last step.

>>> from compiler import Trace
>>> from explorer.session import explore
>>> a, b = Trace(), Trace()
>>> for stage in ("parse", "concretize", "cfir", "emit-c"):
...     _ = a.record(stage)
>>> for stage in ("parse", "program", "wrapperize", "emit-c"):
...     _ = b.record(stage)
>>> [(s.a, s.b, s.key) for s in align(explore(a), explore(b))]
[(0, 0, 'parse'), (1, 1, 'program'), (2, 1, None), (2, 2, None), (3, 3, 'emit-c')]
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from compiler.trace import Step

__all__ = ["Station", "align", "stage_key"]

#: Stages that reach the same place under either strategy.
#: (The looplet strategy's ``int-facts``, what its lowering knew of the integers it computed, has no
#: lattice counterpart: a strategy's own stage, shown while the other side stays at its last step.)
_SAME = {"index-dtype": "index-dtype", "parse": "parse", "concretize": "program", "program": "program",
         "lower": "whole IR", "imperative": "whole IR", "value-facts": "value-facts",
         "user-functions": "user-functions", "emit-c": "emit-c", "compile": "compile"}


def stage_key(step: Step) -> str | None:
    """Where ``step`` is, in terms both strategies share (``None``: a strategy's own stage).

    A lattice step and an unfurl step are keyed by the index they work on, which both record
    in their ``data`` (``{"index": "j"}``): both are ``"index j"``.

    >>> stage_key(Step("unfurl", data={"index": "j"})), stage_key(Step("lower")), stage_key(Step("cfir"))
    ('index j', 'whole IR', None)
    """
    if step.stage in ("lattice", "unfurl"):
        data = step.data if isinstance(step.data, dict) else {}
        return f"index {data['index']}" if data.get("index") else None
    return _SAME.get(step.stage)


@dataclass(frozen=True)
class Station:
    """One position of the shared slider: the step shown in each column, and the place both
    reached there (``key``; ``None`` where only one side moved)."""

    a: int
    b: int
    key: str | None


def align(sa, sb) -> list[Station]:
    """Every step of sessions ``sa`` and ``sb`` as stations, paired where they share a place."""
    ka = [(i, stage_key(s)) for i, s in enumerate(sa.steps)]
    kb = [(i, stage_key(s)) for i, s in enumerate(sb.steps)]
    keyed_a = [(i, k) for i, k in ka if k]
    keyed_b = [(i, k) for i, k in kb if k]
    matcher = difflib.SequenceMatcher(None, [k for _, k in keyed_a], [k for _, k in keyed_b],
                                      autojunk=False)
    pairs = [(keyed_a[m.a + n][0], keyed_b[m.b + n][0], keyed_a[m.a + n][1])
             for m in matcher.get_matching_blocks() for n in range(m.size)]
    out: list[Station] = []
    ia = ib = 0        # the next step of each side to show
    at_a = at_b = 0    # the step each side shows now
    for pa, pb, key in [*pairs, (len(sa.steps), len(sb.steps), None)]:
        while ia < pa:
            at_a = ia
            out.append(Station(at_a, at_b, None))
            ia += 1
        while ib < pb:
            at_b = ib
            out.append(Station(at_a, at_b, None))
            ib += 1
        if pa < len(sa.steps) and pb < len(sb.steps):
            at_a, at_b = pa, pb
            out.append(Station(pa, pb, key))
            ia, ib = pa + 1, pb + 1
    return out
