"""Constant ranges of the integers a kernel computes, to drop a computed coordinate's check where
every value it can take is inside its mode's extent.

A masked histogram's bin ``(img[r, c] * len(bins)) >> 8`` of a uint8 image whose ``bins`` are 16
long (fixed when the kernel is compiled) lies in ``[0, 15]``: the pixel is in ``[0, 255]`` (its
dtype), the product in ``[0, 4080]``, the shift divides by 256. :func:`value_range` works this out
bottom-up over an imperative-IR expression from constants and the ranges the lowering is
:func:`~compiler.looplets.bounds.assuming` (:meth:`~compiler.looplets.bounds.IntFacts.value_range`:
a narrow integer array's entries, an output's fixed extent), by interval arithmetic in Python's
exact integers: a bound past int64 (where C's arithmetic would wrap) gives no range. An operand
it knows nothing of (an int64 load, a runtime scalar, a user function's result) gives no range,
and the coordinate keeps its check.

>>> from compiler.imperative.ir import BinOp, Load, Var
>>> from compiler.looplets.bounds import IntFacts, assuming
>>> facts = IntFacts()
>>> facts.value_range("img_val", 0, 255, "img's uint8 entries")
>>> facts.value_range("bins0_size", 16, 16, "bins' extent, fixed", entries=False)
>>> coord = BinOp(">>", BinOp("*", Load("img_val", Var("p")), Var("bins0_size")), 8)
>>> with assuming(facts):
...     value_range(coord), within(coord, Var("bins0_size"))
((0, 15), True)
>>> with assuming(facts):   # (an int64 scalar: anything)
...     value_range(BinOp(">>", Load("count_val", 0), 8)), within(Load("count_val", 0), Var("bins0_size"))
(None, False)
"""

from __future__ import annotations

from ..imperative.ir import BinOp, Cast, Const, Load, Select, UnOp, Var
from . import bounds

_INT64 = (-2 ** 63, 2 ** 63 - 1)


def _fits(lo: int, hi: int):
    return (lo, hi) if _INT64[0] <= lo and hi <= _INT64[1] else None


def value_range(e) -> tuple[int, int] | None:
    """``(least, greatest)`` of every value integer expression ``e`` can take, or None when unknown."""
    facts = bounds.current()
    if isinstance(e, Const):
        return (e.value, e.value) if isinstance(e.value, int) and not isinstance(e.value, bool) else None
    if isinstance(e, (Var, Load)) and facts is not None:
        known = facts.range_of(e.name if isinstance(e, Var) else e.buffer)
        if known is not None:
            return known
        if isinstance(e, Var) and facts.definition(e) is not None:
            return value_range(facts.definition(e))
        size = value_range(facts.coordinate_size(e)) if facts.coordinate_size(e) is not None else None
        return None if size is None else (0, size[1] - 1)
    if isinstance(e, Cast):
        inner = value_range(e.value)
        # (a float's conversion, or a narrowing one, may not keep the value: unknown)
        return inner if e.dtype in ("int64", "int32", "int16", "int8") and inner is not None \
            and _fits(*inner) == inner and _narrow_fits(e.dtype, inner) else None
    if isinstance(e, UnOp) and e.op == "-":
        inner = value_range(e.operand)
        return None if inner is None else _fits(-inner[1], -inner[0])
    if isinstance(e, Select):
        a, b = value_range(e.then), value_range(e.otherwise)
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    if isinstance(e, BinOp):
        return _binop(e.op, value_range(e.left), value_range(e.right))
    return None


def _narrow_fits(dtype: str, r) -> bool:
    bits = int(dtype[3:])
    return -2 ** (bits - 1) <= r[0] and r[1] < 2 ** (bits - 1)


def _binop(op, a, b):
    if a is None or b is None:
        # (x & m with a constant m >= 0 is in [0, m] whatever x)
        known = a or b
        if op == "&" and known is not None and known[0] == known[1] >= 0:
            return (0, known[0])
        return None
    if op == "+":
        return _fits(a[0] + b[0], a[1] + b[1])
    if op == "-":
        return _fits(a[0] - b[1], a[1] - b[0])
    if op == "*":
        corners = [x * y for x in a for y in b]
        return _fits(min(corners), max(corners))
    if op == ">>" and b[0] == b[1] and 0 <= b[0] < 64:
        # (an arithmetic shift is a floor division by 2 ** k: monotonic)
        return (a[0] >> b[0], a[1] >> b[0])
    if op == "/" and b[0] == b[1] and b[0] > 0 and a[0] >= 0:
        return (a[0] // b[0], a[1] // b[0])
    if op == "%" and b[0] == b[1] and b[0] > 0 and a[0] >= 0:
        return (0, min(a[1], b[0] - 1))
    if op == "&" and (a[0] >= 0 or b[0] >= 0):
        return (0, min(x[1] for x in (a, b) if x[0] >= 0))
    return None


def within(value, extent) -> bool:
    """Whether every value of ``value`` is in ``[0, extent)`` (both ranges known: the greatest
    value below the least extent).

    >>> within(Const(3, "int64"), Const(4, "int64")), within(Const(4, "int64"), Const(4, "int64"))
    (True, False)
    """
    v, n = value_range(value), value_range(extent)
    return v is not None and n is not None and 0 <= v[0] and v[1] < n[0]


def explain(value, extent) -> str:
    """Why :func:`within` holds, as the trace says it: ``(img_val[...] * bins0_size) >> 8 in [0, 15],
    bins0_size >= 16``."""
    v, n = value_range(value), value_range(extent)
    return f"{value} in [{v[0]}, {v[1]}], {extent} >= {n[0]}"


__all__ = ["value_range", "within", "explain"]
