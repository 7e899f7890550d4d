"""Symbolic integer arithmetic on imperative-IR expressions: extents, min/max, proofs.

Looplet lowering computes loop bounds from strides and phase stops. These helpers
fold what is known at compile time, so that ``min(n, n)`` prints as ``n`` and a
provably empty region emits no code.

>>> from compiler.imperative.ir import Var
>>> n = Var("n")
>>> print(imin(n, n)), print(add(n, 0)), print(imin(3, 5))
n
n
3
(None, None, None)
>>> prove_lt(add(n, -1), n), prove_le(n, add(n, 1)), prove_lt(n, Var("m"))
(True, True, False)
"""

from __future__ import annotations

from ..imperative.ir import BinOp, Const, Select, UnOp, as_expr
from . import bounds


def _c(e):
    return e.value if isinstance(e, Const) and not isinstance(e.value, bool) and isinstance(e.value, int) else None


def _split(e):
    """``e`` as ``(base, constant)`` with ``e == base + constant`` (base None for a constant)."""
    e = as_expr(e)
    if _c(e) is not None:
        return None, _c(e)
    if isinstance(e, BinOp) and e.op in "+-" and _c(e.right) is not None:
        base, k = _split(e.left)
        return base, k + (_c(e.right) if e.op == "+" else -_c(e.right))
    return e, 0


def _join(base, k):
    if base is None:
        return Const(k, "int64")
    if k == 0:
        return base
    return BinOp("+", base, Const(k, "int64")) if k > 0 else BinOp("-", base, Const(-k, "int64"))


def add(a, b):
    """``a + b``, folding constants (``(n + 1) + -1`` is ``n``); ``a + (-b)`` is ``a - b``."""
    a, b = as_expr(a), as_expr(b)
    if isinstance(b, UnOp) and b.op == "-":
        # shifts by -lo meet extents hi - lo: one spelling makes them provably equal
        return sub(a, b.operand)
    if _c(b) is not None:
        base, k = _split(a)
        return _join(base, k + _c(b))
    if _c(a) is not None:
        return add(b, a)
    return BinOp("+", a, b)


def sub(a, b):
    """``a - b``, folding constants and ``x - x``; ``a - (-b)`` is ``a + b``, ``0 - b`` is ``-b``."""
    a, b = as_expr(a), as_expr(b)
    if _c(b) is not None:
        return add(a, -_c(b))
    if isinstance(b, UnOp) and b.op == "-":
        return add(a, b.operand)
    if _c(a) == 0:
        return neg(b)
    (ba, ka), (bb, kb) = _split(a), _split(b)
    if ba == bb:
        return Const(ka - kb, "int64")
    return BinOp("-", a, b)


def neg(a):
    """``-a``; ``-(-x)`` is ``x``."""
    a = as_expr(a)
    if _c(a) is not None:
        return Const(-_c(a), "int64")
    if isinstance(a, UnOp) and a.op == "-":
        return a.operand
    return UnOp("-", a)


def difference(a, b):
    """``a - b`` as an int when it is known at compile time, else None: their sums of terms times constants
    (:func:`linear`) differ by a constant.

    >>> from compiler.imperative.ir import Var
    >>> j, n = Var("j"), Var("n")
    >>> difference(sub(n, BinOp("*", j, Const(3, "int64"))), neg(sub(BinOp("*", j, Const(3, "int64")), add(n, 2))))
    -2
    """
    (ba, ka), (bb, kb) = _split(a), _split(b)
    if ba == bb:
        return ka - kb
    (ta, ka), (tb, kb) = linear(a), linear(b)
    return ka - kb if ta == tb else None


def linear(e) -> tuple[dict, int]:
    """``e`` as a sum of terms times constants plus a constant: ``({term: factor}, constant)``, a term being any
    expression that is no sum, difference, negation or product by a constant.

    >>> from compiler.imperative.ir import Var
    >>> terms, k = linear(sub(Var("n"), BinOp("*", add(Var("j"), 1), Const(3, "int64"))))
    >>> sorted((str(t), f) for t, f in terms.items()), k
    ([('j', -3), ('n', 1)], -3)
    """
    e = as_expr(e)
    if _c(e) is not None:
        return {}, _c(e)
    if isinstance(e, BinOp) and e.op in ("+", "-"):
        (ta, ka), (tb, kb) = linear(e.left), linear(e.right)
        sign = 1 if e.op == "+" else -1
        terms = dict(ta)
        for t, f in tb.items():
            terms[t] = terms.get(t, 0) + sign * f
        return {t: f for t, f in terms.items() if f}, ka + sign * kb
    if isinstance(e, UnOp) and e.op == "-":
        terms, k = linear(e.operand)
        return {t: -f for t, f in terms.items()}, -k
    if isinstance(e, BinOp) and e.op == "*" and (_c(e.left) is not None or _c(e.right) is not None):
        factor, other = (_c(e.right), e.left) if _c(e.right) is not None else (_c(e.left), e.right)
        terms, k = linear(other)
        return {t: f * factor for t, f in terms.items() if f * factor}, k * factor
    return {e: 1}, 0


def prove_lt(a, b) -> bool:
    d = difference(a, b)
    if d is not None:
        return d < 0
    return prove_le(add(a, 1), b)


#: how many rules a proof may chain (each facts' lookup or min/max split is one)
_DEPTH = 6


def prove_le(a, b, depth: int = _DEPTH) -> bool:
    """Whether ``a <= b`` always holds: a constant difference, or the rules of the min and max (a
    minimum is at most any of its terms, a maximum at least any; ``a <= min(x, y)`` needs both), or
    the facts the lowering is :func:`~compiler.looplets.bounds.assuming` (a stored coordinate is in
    ``[0, size)``, a local in its bounds or equal to its definition).

    >>> from compiler.imperative.ir import Var
    >>> a, b, c = Var("a"), Var("b"), Var("c")
    >>> prove_le(imin(a, b), a), prove_le(imin(a, b), b), prove_le(a, imax(a, b)), prove_le(imin(a, b), c)
    (True, True, True, False)
    >>> prove_le(a, imin(a, b)), prove_le(imin(a, b), add(imin(a, c), 1))
    (False, False)
    """
    d = difference(a, b)
    if d is not None:
        return d <= 0
    return depth > 0 and _prove_le(as_expr(a), as_expr(b), depth - 1)


def _prove_le(a, b, depth) -> bool:
    # (the exact splits first: a <= min(X) iff a <= each; max(X) <= b iff each <= b)
    for kind, side in (("min", b), ("max", a)):
        terms = _flat(side, kind)
        if len(terms) > 1:
            return all(prove_le(t, b, depth) if side is a else prove_le(a, t, depth) for t in terms)
    terms = _flat(a, "min")
    if len(terms) > 1 and any(prove_le(t, b, depth) for t in terms):
        return True
    terms = _flat(b, "max")
    if len(terms) > 1 and any(prove_le(a, t, depth) for t in terms):
        return True
    facts = bounds.current()
    if facts is None:
        return False
    if _signs_le(a, b, facts):
        return True
    (ba, ka), (bb, kb) = _split(a), _split(b)
    # a stored coordinate is below its size, at least 0; a local is within its bounds, or is its definition
    for known in (facts.definition(ba), facts.high(ba)):
        if known is not None and prove_le(add(known, ka), b, depth):
            return True
    size = facts.coordinate_size(ba)
    if size is not None and prove_le(add(size, ka - 1), b, depth):
        return True
    for known in (facts.definition(bb), facts.low(bb)):
        if known is not None and prove_le(a, add(known, kb), depth):
            return True
    return facts.coordinate_size(bb) is not None and prove_le(a, Const(kb, "int64"), depth)


def _signs_le(a, b, facts) -> bool:
    """Whether ``a - b``, a sum of terms times constants, is at most 0 term by term: a constant at most 0 and
    each term's factor of the sign opposite to the term's, known at least 0 (a local bounded below by 0, a
    stored coordinate). A concatenation's part ``p + 1`` starts at most where part ``p`` does:
    ``s - 3·j <= (s + |A|) - 3·j`` for ``|A| >= 0``."""
    (ta, ka), (tb, kb) = linear(a), linear(b)
    terms = dict(ta)
    for t, f in tb.items():
        terms[t] = terms.get(t, 0) - f
    if ka - kb > 0:
        return False

    def at_least_zero(t) -> bool:
        low = facts.low(t)
        return _c(low) is not None and _c(low) >= 0 or facts.coordinate_size(t) is not None
    return all(f <= 0 and at_least_zero(t) for t, f in terms.items() if f)


def prove_eq(a, b) -> bool:
    return difference(a, b) == 0


def _flat(e, kind):
    """The terms of a min (``a < b ? a : b``) or max (``a > b ? a : b``) built by :func:`imin`."""
    cmp = "<" if kind == "min" else ">"
    if (isinstance(e, Select) and isinstance(e.cond, BinOp) and e.cond.op == cmp
            and e.cond.left == e.then and e.cond.right == e.otherwise):
        return _flat(e.then, kind) + [e.otherwise]
    return [e]


def _within(a: list, b: list) -> bool:
    """Every term of ``a`` is in ``b``."""
    return all(any(x == y for y in b) for x in a)


def _minmax(kind, args):
    dual = "max" if kind == "min" else "min"
    terms = []
    for a in args:
        for t in _flat(as_expr(a), kind):
            # drop terms another term provably dominates, or absorbs: in a max, min(a, b) <= a
            inner = _flat(t, dual)
            if any((prove_le(u, t) if kind == "min" else prove_le(t, u)) or _within(_flat(u, dual), inner)
                   for u in terms):
                continue
            terms = [u for u in terms if not ((prove_le(t, u) if kind == "min" else prove_le(u, t))
                                              or _within(inner, _flat(u, dual)))]
            terms.append(t)
    parts = [_flat(t, dual) for t in terms]
    common = [x for x in parts[0] if all(any(x == y for y in p) for p in parts[1:])]
    if len(terms) > 1 and common:
        # max(min(a, s), min(b, s)) is min(max(a, b), s): a phase's stops, each cut at the step's
        rests = [[x for x in p if not any(x == y for y in common)] for p in parts]
        if all(rests):
            inner = _minmax(kind, [_minmax(dual, r) for r in rests])
            return _minmax(dual, [inner, *common])
    out = terms[0]
    for t in terms[1:]:
        out = Select(BinOp("<" if kind == "min" else ">", out, t), out, t)
    return out


def min_terms(e) -> list:
    """The terms of a minimum :func:`imin` built (``[e]`` for any other expression).

    >>> from compiler.imperative.ir import Var
    >>> [str(t) for t in min_terms(imin(Var("a"), Var("b")))]
    ['a', 'b']
    """
    return _flat(as_expr(e), "min")


def imin(*args):
    """The minimum of integer expressions (``a < b ? a : b``), dropping dominated terms."""
    return _minmax("min", args)


def imax(*args):
    """The maximum of integer expressions, dropping dominated terms."""
    return _minmax("max", args)


