"""The value language of the sequence lowering beyond ``+`` and ``*`` of fill-0 operands: any
elementwise operator of the notation (``x - y``, ``where(c, x, y)``, ``sin(x)``, ``x > y``) and
operands of any one fill per tensor (NaN too).

A sequence walks the coordinates where an operand is stored; elsewhere the operand reads its
fill. So an operator's result can differ from its own fill (the operator of the fills) only where
an operand is stored: its sequence is the union of its operands' (a literal is its own fill
everywhere and adds none), and each sub-point of the lattice computes the operator with the
absent operands' fills in their place (:func:`compiler.lattice.seqcfir.specialize_value`): ``x - y``
where only ``y`` is stored is ``fill_x - y``; a sub-point whose value folds to the result's fill
writes nothing (``x + y`` of NaN fills where only ``x`` is stored), and a lattice point whose every case
writes nothing has no loop (:func:`~compiler.lattice.seqlattice.drop_fill_points`: ``x - y`` of a NaN-filled
``x`` does not walk ``y``'s entries after ``x``'s last). ``+`` and ``*`` of operands of
fill 0 keep the paper's rules (``∪`` and ``∩``, :class:`~compiler.lattice.seqderive.Deriver`).

>>> from compiler.notation import parse_expr
>>> float(expr_fill(parse_expr("x[i] - y[i]"), {"x": 1.0, "y": 0.0}))
1.0
>>> fills_zero(parse_expr("x[i] * y[i]"), {"x": 0.0, "y": float("nan")})
False
"""

from __future__ import annotations

import numpy as np

from ..errors import StrategyError
from ..notation.ast import Access, Call, Literal, Reduce, walk
from ..notation.shape import Concat
from .sequences import Intersect, Union, Universe


def _same(a, b) -> bool:
    return a == b or (a != a and b != b)     # (NaN fills are one fill)


def expr_fill(e, fills: dict):
    """The fill of the notation expression ``e`` (with shape operators), ``fills``: each tensor's
    (None is 0). A shape operator keeps its operand's fill, a concatenation its first operand's,
    an operator computes its operands' (:meth:`~compiler.algebra.Operator.fill`); a sum is 0 where
    its summand's fill is 0 (an absent term adds nothing), else refused, saying why."""
    if isinstance(e, Access):
        f = fills.get(e.tensor)
        return 0.0 if f is None else f
    if isinstance(e, Literal):
        return e.value
    if isinstance(e, Call):
        if call_kind(e, fills) in ("sum", "product"):
            return 0.0     # (a literal added is there at every coordinate: the loops write it)
        return np.asarray(e.op.fill(*(expr_fill(a, fills) for a in e.args))).item()
    if isinstance(e, Reduce):
        f = expr_fill(e.body, fills)
        if not _same(f, 0) or isinstance(f, bool):
            raise StrategyError(f"{e}: its summand has fill {f}, and the sequence lowering sums the entries its "
                                f"loops walk, so it sums summands of fill 0 only")
        return 0.0
    # (a concatenation's is its first operand's, as evaluate's: a part of another fill writes it,
    # compiler.lattice.seqparts; each operand's is computed, a sum in one checked)
    out = [expr_fill(c, fills) for c in e.children()]
    return out[0]


def fills_zero(e, fills: dict) -> bool:
    """Whether every operand of the call ``e`` but a literal has fill 0: then ``+`` is ``∪`` and
    ``*`` is ``∩`` (the paper's rules, a literal there at every coordinate). Not where an operand
    concatenates a part of a fill that is not finite: walked, it is no 0 for ``∩`` to skip (``inf * 0``)."""
    return all(isinstance(a, Literal) or _zero(expr_fill(a, fills)) and _finite_parts(a, fills) for a in e.args)


def _finite_parts(e, fills: dict) -> bool:
    return all(np.isfinite(expr_fill(x, fills)) for n in walk(e) if isinstance(n, Concat) for x in n.operands)


def _zero(f) -> bool:
    return not isinstance(f, bool) and f == 0


def call_kind(e, fills: dict) -> str:
    """How the call ``e`` iterates: ``sum`` (``+`` of fill-0 operands: ``∪``), ``product`` (``*``:
    ``∩``), ``intersection`` (an IEEE operator of NaN-fill operands: NaN wherever one is absent) or
    ``union`` (any other: where an operand may differ from its fill)."""
    if not e.op.is_user and e.op.name in ("add", "mul") and fills_zero(e, fills):
        return "sum" if e.op.name == "add" else "product"
    if e.op.name in NAN_PROPAGATING and not e.op.is_user and all(
            isinstance(a, Literal) or _nan(expr_fill(a, fills)) for a in e.args):
        return "intersection"
    return "union"


def _nan(f) -> bool:
    return isinstance(f, (float, np.floating)) and f != f


def call_sequence(e, seqs: list, size: int, index: str, intersect: bool = False):
    """The sequence of the elementwise call ``e`` along ``index`` (``size`` coordinates), its
    arguments' sequences ``seqs`` (None: not varying with it): where any argument that is not a
    literal may differ from its fill, the union of theirs (one not varying with ``index`` is there
    at every coordinate of it); None where no argument varies with it. A sequence two arguments
    share is walked once (one cursor per level). ``intersect``: where every argument but a literal
    is stored (their intersection; one not varying with ``index`` constrains nothing).

    >>> from compiler.notation import parse_expr
    >>> from compiler.lattice.sequences import Level
    >>> x, y = Level("x", 0, "compressed", 4, "i"), Level("y", 0, "compressed", 4, "i")
    >>> print(call_sequence(parse_expr("x[i] - y[i]"), [x, y], 4, "i"))
    i_x ∪ i_y
    >>> print(call_sequence(parse_expr("x[i] - sin(x[i])"), [x, x], 4, "i"), call_sequence(parse_expr("x[i] - 1"), [x, None], 4, "i"))
    i_x i_x
    """
    if all(s is None for s in seqs):
        return None
    parts: list = []
    for a, s in zip(e.args, seqs):
        if intersect and s is None:
            continue
        s = Universe(size, index) if s is None else s
        if not isinstance(a, Literal) and s not in parts:
            parts.append(s)
    if not parts:
        return None
    out = parts[0]
    for s in parts[1:]:
        out = (Intersect if intersect else Union)(out, s)
    return out


def union_terms(e, fills: dict) -> list:
    """The operands of the union calls nested in ``e`` (a literal, its fill everywhere, aside):
    ``[A, B, C]`` for ``(A - B) - sin(C)``; ``[e]`` for any other node. A
    collapse of ``e`` is the union of their collapses (a union in a product's right operand is
    not a sequence the lattice takes)."""
    if not isinstance(e, Call) or call_kind(e, fills) != "union":
        return [e]
    return [t for a in e.args if not isinstance(a, Literal) for t in union_terms(a, fills)]


#: the operators whose result is NaN whenever an argument is (IEEE arithmetic)
NAN_PROPAGATING = frozenset({"add", "sub", "mul", "div"})

__all__ = ["expr_fill", "fills_zero", "call_kind", "call_sequence", "union_terms", "NAN_PROPAGATING"]
