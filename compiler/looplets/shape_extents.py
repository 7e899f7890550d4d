"""A shape operator's runtime extents (:func:`~compiler.notation.infer.infer_shapes`' entries: an int, a
tensor's mode ``(tensor, mode)``, or ``("+" | "*" | "//", *entries)``) as the looplet strategy reads
them: as C-level IR of the kernel's size parameters (a loop's stop), or as loop-program expressions
(an offset in an index, its sizes resolved by wrapperization).

>>> from compiler.format import parse_format
>>> print(extent_ir(("*", ("A", 0), 3), {"A": parse_format("csc")}))
A1_size * 3
>>> print(extent_expr(("+", ("A", 1), 2)))
size(A, 1) + 2
"""

from __future__ import annotations

from ..algebra import lookup
from ..binding import array_name
from ..errors import StrategyError
from ..imperative.ir import BinOp, Const, Var
from . import extents as X
from .program import Call, Literal, Size

_ADD, _MUL = lookup("+"), lookup("*")


def extent_ir(entry, formats):
    """A runtime extent entry as an IR expression of the kernel's size parameters."""
    if isinstance(entry, int):
        return Const(entry, "int64")
    if isinstance(entry[0], str) and entry[0] not in ("+", "*", "//"):
        t, m = entry
        return Var(array_name(t, formats[t].mode_order.index(m), "size"))
    op, *args = entry
    args = [extent_ir(a, formats) for a in args]
    if op == "+":
        out = args[0]
        for a in args[1:]:
            out = X.add(out, a)
        return out
    return BinOp("*" if op == "*" else "/", args[0], args[1])


def extent_expr(entry):
    """A runtime extent entry as a program expression (sizes resolved by wrapperization)."""
    if isinstance(entry, int):
        return Literal(entry)
    if isinstance(entry[0], str) and entry[0] not in ("+", "*", "//"):
        return Size(None, "int64", entry[0], entry[1])
    op, *args = entry
    if op == "//":
        # (the minor extent in a split's offset, or the major one in a concat's of its parts)
        raise StrategyError("the looplet strategy indexes with sums and products of extents, and a split given one "
                            "extent makes the other a quotient of extents: give both, as in k -> (i:m, j:n)")
    out = extent_expr(args[0])
    for a in args[1:]:
        out = Call(_ADD if op == "+" else _MUL, (out, extent_expr(a)))
    return out


def plus(a, b):
    """The index expression ``a + b``."""
    return Call(_ADD, (a, b))


def times(a, b):
    """The index expression ``a * b``."""
    return Call(_MUL, (a, b))


__all__ = ["extent_expr", "extent_ir", "plus", "times"]
