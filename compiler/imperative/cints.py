"""Where C's integer arithmetic differs from numpy's, and the casts that make it agree.

C computes an 8- or 16-bit integer as ``int`` (``uint8_t`` 250 + 10 is 260, where numpy's
``uint8`` gives 4), and converts a signed operand to unsigned when the other is an unsigned
type at least as wide (``int32_t`` -1 < ``uint32_t`` 1 is false, where numpy compares the
values). Both strategies wrap an operator's narrow result (:func:`wrap`); the looplets
strategy converts its operands with :func:`operands` (the lattice strategy converts every
operand to the result's dtype), so the value is numpy's.

>>> from compiler.imperative.ir import BinOp, Var
>>> print(wrap(BinOp("+", Var("a"), Var("b")), "uint8"))
(uint8)(a + b)
>>> print(*operands([Var("a"), Var("b")], ["int32", "int64"], "int64"))
a b
>>> print(*operands([Var("a"), Const(1, "int64")], ["int32", "int64"], "int64"))
(int64)a 1
"""

from __future__ import annotations

import numpy as np

from ..dtypes import is_narrow, weak_literal_dtype
from ..opimpls import cast_sentinel, float_to_int_bounds
from .ir import BinOp, Call, Cast, Const, Select


def wrap(e, dtype):
    """``e`` (computed by C in ``int`` when ``dtype`` is narrow) cast back to ``dtype``, so it
    wraps around as numpy's value does; ``e`` itself for other dtypes."""
    if not is_narrow(dtype) or isinstance(e, Const):
        return e
    return Cast(np.dtype(dtype).name, e)


def operands(args, dtypes, want) -> list:
    """IR ``args`` of ``dtypes`` as the operands of an operation numpy computes in ``want``.

    Where one operand (not a constant) has dtype ``want``, C's usual conversions give the
    others that type too (or ``int``, for a narrow ``want``, which :func:`wrap` casts back), so
    they stay as they are; otherwise each is cast: C would add an ``int32_t`` and a literal 1 in
    32 bits, where numpy adds an int32 and an int64 in 64. A constant takes ``want``'s dtype.
    """
    w = np.dtype(want)
    anchored = any(np.dtype(d) == w and not isinstance(a, Const) for a, d in zip(args, dtypes))
    out = []
    for a, d in zip(args, dtypes):
        if isinstance(a, Const):
            out.append(Const(a.value, w.name) if w.kind != "b" and np.dtype(d) != w else a)
        elif np.dtype(d) == w or anchored:
            out.append(a)
        else:
            out.append(Cast(w.name, a))
    return out


def constant_shift(name: str, a, b, dtype):
    """``a >> b`` (``name`` ``rshift``) or ``a << b`` (``lshift``) in plain C when ``b`` is a constant
    that C shifts as numpy does (from 0 to the width less one, and for a left shift only of an
    unsigned type of 32 bits or more, which C neither promotes nor lets overflow), else None: the
    strategies then call the ``ss_rshift`` helper, which tests ``b`` on every call.

    >>> from compiler.imperative.ir import Var
    >>> print(constant_shift("rshift", Var("v"), Const(8, "int64"), "int64"))
    v >> 8
    >>> constant_shift("rshift", Var("v"), Const(64, "int64"), "int64") is None
    True
    >>> constant_shift("lshift", Var("v"), Const(3, "int32"), "int32") is None   # (a negative v)
    True
    """
    dt = np.dtype(dtype)
    if not isinstance(b, Const) or dt.kind not in "iu" or not 0 <= int(b.value) < 8 * dt.itemsize:
        return None
    if name == "rshift":
        return wrap(BinOp(">>", a, b), dt)
    if name == "lshift" and dt.kind == "u" and dt.itemsize >= 4:
        return BinOp("<<", a, b)
    return None


def weak_constants(parts, owners=()) -> list:
    """``(IR, dtype)`` operands with each int64 constant beside an unsigned operand in that
    operand's dtype, where it fits: a literal written in a program or an unsigned tensor's
    fill, typed as numpy types a Python int (:func:`compiler.dtypes.weak_literal_dtype`).
    ``owners`` gives, by position, the dtype of the tensor a constant is the fill of (or None):
    a signed tensor's fill keeps int64, an unsigned one's is at least its tensor's dtype (a uint32's
    fill 0 beside a uint8 is no uint8: 0 - 1 would wrap at 256).

    >>> [d for _, d in weak_constants([(Const(1, "int64"), "int64"), (Const(2, "uint64"), "uint64")])]
    ['uint64', 'uint64']
    """
    dts = [np.dtype(d) for _, d in parts]
    if not any(d.kind == "u" for d in dts):
        return parts
    out = []
    owners = list(owners) + [None] * (len(parts) - len(owners))
    for (x, d), dt, own in zip(parts, dts, owners):
        own = None if own is None else np.dtype(own)
        weak = isinstance(x, Const) and dt == np.dtype("int64") and (own is None or own.kind == "u")
        w = weak_literal_dtype(x.value, dts + ([own] if own is not None else [])) if weak else None
        out.append((Const(x.value, w.name), w.name) if w is not None else (x, d))
    return out


def isnan_of(e, dtype):
    """Whether the value ``e`` of ``dtype`` is NaN: ``isnan(e)``, or for a complex value (where C's isnan
    takes no complex) ``e != e``, true where either part is NaN, as numpy's isnan of a complex; for an
    integer or a bool, which is never NaN, ``false``.

    >>> from compiler.imperative.ir import Var
    >>> print(isnan_of(Var("v"), "float64")), print(isnan_of(Var("v"), "complex128")), print(isnan_of(Var("v"), "int8"))
    isnan(v)
    v != v
    false
    (None, None, None)
    """
    kind = np.dtype(dtype).kind
    return BinOp("!=", e, e) if kind == "c" else Call("isnan", (e,)) if kind == "f" else Const(False, "bool")


def same_value_of(a, b, dtype):
    """Whether the values ``a`` and ``b`` of ``dtype`` are one run's: ``a == b`` (a -0.0 is 0.0), and
    for a float or complex dtype also where both are NaN, so a run of NaN is one run, as
    :meth:`Tensor.from_numpy <compiler.tensor.Tensor.from_numpy>` builds it.

    >>> from compiler.imperative.ir import Var
    >>> print(same_value_of(Var("a"), Var("b"), "float64")), print(same_value_of(Var("a"), Var("b"), "int32"))
    a == b || (isnan(a) && isnan(b))
    a == b
    (None, None)
    """
    eq = BinOp("==", a, b)
    if np.dtype(dtype).kind not in "fc":
        return eq
    return BinOp("||", eq, BinOp("&&", isnan_of(a, dtype), isnan_of(b, dtype)))


__all__ = ["wrap", "operands", "weak_constants", "constant_shift", "isnan_of", "same_value_of"]


def converted(e, have, want):
    """``e`` of dtype ``have`` as ``want``, as :func:`compiler.algebra.astype` does: C's cast, but a float
    is tested first where C's conversion to an integer is undefined (NaN, too large), which gives
    :func:`~compiler.opimpls.cast_sentinel` instead.

    >>> from compiler.imperative.ir import Var
    >>> print(converted(Var("x"), "float64", "int8"))
    x > (-129.0) && x < 128.0 ? (int8)x : 0
    >>> print(converted(Var("x"), "int64", "float32"))
    (float32)x
    """
    have, want = np.dtype(have), np.dtype(want)
    if have == want:
        return e
    if have.kind != "f" or want.kind not in "iu":
        return Cast(want.name, e)
    lo, hi = float_to_int_bounds(want)
    inside = BinOp("&&", BinOp(">", e, Const(lo, "float64")), BinOp("<", e, Const(hi, "float64")))
    return Select(inside, Cast(want.name, e), Const(cast_sentinel(want).item(), want.name))
