"""Arithmetic a student need not read: ``x * 1``, ``x / 1`` and ``x - 0`` are ``x``, ``x % 1`` is ``0``, and
arithmetic of integer constants is its value, folded as the sequence emitter builds its coordinates
(:func:`arith`).

A sequence's coordinate is built from its operators' whatever their extents: a product's ``outer * |inner| +
inner``, a split's ``x / J`` and ``x % J``. With extents of 1 (a column of a matrix read as a vector, a part of
width 1) the lattice's C read ``pA0 * 1 + ((int64_t)A1_idx[pA1] - 1)`` and ``i % 1 * 1 + 1``. Each identity is
exact in C for any operand type (``x * 1`` of a double is ``x``, NaN and -0.0 too; ``%`` takes integers only),
and drops no call that does more than compute (:func:`~.traverse.pure`); ``x + 0`` stays (a double's -0.0 + 0 is
+0.0), as does a division of constants (C truncates). Folded as each operation is built, its operands folded
before it, the kernel is not walked again (a pass over every lattice kernel cost 3% of their lowering).

>>> from compiler.imperative.ir import Var
>>> i = Var("i")
>>> print(arith("+", arith("*", arith("%", i, 1), 1), 1), "/", arith("/", i, 1), "/", arith("*", i, 3))
1 / i / i * 3
"""

from __future__ import annotations

from .ir import BinOp, Const
from .traverse import pure

__all__ = ["arith"]

_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def arith(op: str, a, b):
    """``a op b`` (``+``, ``-``, ``*``, ``/`` or ``%``) as IR, with the identities of the module docstring folded."""
    return _identity(BinOp(op, a, b))


def _int(e, value=None) -> bool:
    """Whether ``e`` is an integer constant (of ``value``)."""
    return isinstance(e, Const) and e.dtype in _INTS and not isinstance(e.value, bool) and \
        (value is None or e.value == value)


def _identity(e: BinOp):
    a, b = e.left, e.right
    if e.op in ("*", "/") and _int(b, 1) or e.op == "-" and _int(b, 0):
        return a
    if e.op == "*" and _int(a, 1):
        return b
    if e.op == "%" and _int(b, 1) and pure(a):
        return Const(0, b.dtype)
    if e.op in ("+", "-", "*") and _int(a) and _int(b) and a.dtype == b.dtype:
        value = a.value + b.value if e.op == "+" else a.value - b.value if e.op == "-" else a.value * b.value
        # (a value C's type cannot hold stays as written: there C's arithmetic would overflow)
        return Const(value, a.dtype) if -2 ** 63 <= value < 2 ** 63 else e
    return e
