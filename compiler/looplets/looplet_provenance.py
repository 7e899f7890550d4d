"""What the looplet lowering records about itself: the text of a trace step, the tooltip and
origin of each looplet lowering's tagged code (the explorer maps C lines back to them), and the
limit on how many looplet lowerings one program may take.

>>> print(step_text(["a = 1", "b = 2"]))
a = 1
b = 2
"""

from __future__ import annotations

from ..imperative.ir import Origin
from .looplet_access import style_of
from .looplets import Looplet, unshift
from .program import Access, walk


#: how many looplet lowerings one program may take (each ~0.1 to 0.2 KB of C: the limit stops at a
#: few MB, which GCC takes minutes over, instead of running on)
MAX_LOOPLETS = 20_000


def too_many_looplets(limit: int, i) -> str:
    """Why a program was stopped at ``limit`` looplet lowerings, the last of them over ``i``.

    >>> from compiler.looplets.program import Index
    >>> print(too_many_looplets(100, Index("j")))  # doctest: +NORMALIZE_WHITESPACE
    the looplets strategy stopped after 100 looplet lowerings (the last over j): each loop lowers
    every case of its sparse operands' regions (present here, absent there) separately, and the
    cases multiply with each operand a loop coiterates. Lower index notation with
    strategy='lattice' (its lattices merge them), compute the expression in steps, or give
    options={'max_looplets': N} for more
    """
    return (f"the looplets strategy stopped after {limit} looplet lowerings (the last over {i.name}): each loop "
            f"lowers every case of its sparse operands' regions (present here, absent there) separately, and the "
            f"cases multiply with each operand a loop coiterates. Lower index notation with strategy='lattice' "
            f"(its lattices merge them), compute the expression in steps, or give options={{'max_looplets': N}} "
            f"for more")


def step_text(x):
    """A trace step's text of a program node or a list of statements (None stays None)."""
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return "\n".join(str(s) for s in x)
    return str(x)


def looplet_what(style: str, i, body) -> str:
    """What a looplet lowering's code stands for, in the user's terms (the explorer's tooltip):
    the rule, the index, each looplet with the tensor it reads and the statement they are in,
    e.g. ``Stepper on j: Stepper of A, Lookup of x in y.lvl1[i][] += Stepper[j] * ...``."""
    parts = []
    for n in walk(body):
        if isinstance(n, Access) and n.idxs and n.idxs[0] == i and isinstance(n.tns, Looplet):
            head = type(unshift(n.tns)).__name__
            parts.append(f"{head} of {n.source}" if n.source else head)
    text = " ".join(step_text(body).split())
    text = text if len(text) <= 100 else text[:99] + "…"
    return f"{style} on {i.name}: {', '.join(dict.fromkeys(parts))} in {text}"


def looplet_origin(style: str, i, body):
    """The :class:`~compiler.imperative.ir.Origin` of a looplet lowering: its style, its index
    and the tensors whose looplet on ``i`` that rule lowers (``Stepper`` of ``A``, not ``x``'s
    ``Lookup``)."""
    operands = [n.source for n in walk(body)
                if isinstance(n, Access) and n.idxs and n.idxs[0] == i and isinstance(n.tns, Looplet)
                and n.source and style_of(n.tns) == style]
    return Origin("looplet", i.name, tuple(dict.fromkeys(operands)), style)
