"""Index-notation expressions to imperative-IR expressions, operator by operator.

:func:`to_ir` maps each :class:`~compiler.algebra.Operator` to IR nodes with the
same semantics as its numpy implementation (min/max propagate NaN, integer
``pow`` and user functions become helpers). Operands are converted to the
operator's result dtype where numpy's promotion and C's would differ.

>>> from compiler.notation import parse
>>> from compiler.imperative.ir import Var
>>> e = parse("a[i] = min(b[i], c[i]) + 1").rhs
>>> ir, dt, helpers = to_ir(e, lambda acc: (Var(acc.tensor), "float64"))
>>> print(ir)
(isnan(b) || b < c ? b : c) + 1.0
>>> dt
'float64'
"""

from __future__ import annotations

import math

import numpy as np

from .. import user_function_check
from ..algebra import Operator, helper_impl, lookup
from ..dtypes import typed_scalar, value_dtype
from ..errors import DTypeError
from ..imperative.ir import BinOp, BufferArg, Call, Cast, Const, Grow, Load, Prefetch, Select, Store, UnOp, Var
from ..imperative.cints import constant_shift, converted, isnan_of, wrap
from ..imperative.traverse import walk as ir_walk
from ..notation.ast import Access, Call as NCall, IndexValue, Literal, Reduce
from ..opimpls import BINARY_MATH, COMPLEX_HELPED, ROUNDING, UNARY_MATH, c_math_name, complex_helped


def const_of(value, dtype) -> Const:
    """An IR constant of ``value`` in ``dtype`` (infinities and NaN allowed for floats)."""
    dt = np.dtype(dtype)
    v = typed_scalar(value, dt).item()
    return Const(v, dt.name)


def cast(e, have, want):
    """``e`` converted from dtype ``have`` to ``want`` (constants are converted in place)."""
    if np.dtype(have) == np.dtype(want):
        return e
    if isinstance(e, Const):
        return const_of(e.value, want)
    return Cast(np.dtype(want).name, e)


def not_fill(e, dtype, fill):
    """C test that the value ``e`` (of ``dtype``) differs from ``fill`` (NaN-aware)."""
    if isinstance(fill, (float, complex, np.inexact)) and fill != fill:
        return UnOp("!", isnan_of(e, dtype))
    return BinOp("!=", e, const_of(fill, dtype))


def is_fill(e, dtype, fill):
    if isinstance(fill, (float, complex, np.inexact)) and fill != fill:
        return isnan_of(e, dtype)
    return BinOp("==", e, const_of(fill, dtype))


_INFIX = {"add": "+", "sub": "-", "mul": "*", "bitand": "&", "bitor": "|", "bitxor": "^",
          "and": "&&", "or": "||", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_COMPARE = {"lt", "le", "gt", "ge", "eq", "ne"}


def _bound(name: str, dtype: np.dtype):
    """The value ``min`` (``max``) of a bool or an integer ``dtype`` cannot go past, which it
    returns whatever the other operand; None for floats (a NaN operand wins over it)."""
    if dtype.kind == "b":
        return name == "max"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min if name == "min" else info.max)
    return None


def apply_op(op: Operator, args, dtypes, helpers: dict):
    """``(ir, dtype)`` of ``op`` applied to IR ``args`` of ``dtypes``; helpers go into ``helpers``."""
    try:
        rdt = op.result_dtype(*dtypes)
    except DTypeError:
        raise
    rname = rdt.name
    name = op.name
    if op.is_user:
        hname = op._c_name([value_dtype(d) for d in dtypes])
        helpers[hname] = (op.c_helper(list(dtypes)), op)
        user_function_check.note(op, dtypes)
        return Call(hname, tuple(args)), rname
    if name in _COMPARE:
        common = np.result_type(*[np.dtype(d) for d in dtypes]).name
        a, b = [cast(x, d, common) for x, d in zip(args, dtypes)]
        return BinOp(_INFIX[name], a, b), rname
    if name in ("and", "or"):
        return BinOp(_INFIX[name], args[0], args[1]), rname
    if name == "not":
        return UnOp("!", args[0]), rname
    if name == "isnan":   # (of the operand in its own dtype: an integer is never NaN)
        return isnan_of(args[0], dtypes[0]), rname
    if name == "astype":
        return converted(args[0], dtypes[0], rname), rname
    if np.dtype(dtypes[0]).kind == "c" and name in ("abs", "real", "imag", "conj"):
        return Call(c_math_name(name, dtypes[0]), (args[0],)), rname
    if name in ("real", "conj"):   # (of a real value: the value itself, as numpy's)
        return args[0], rname
    if name == "imag":
        return const_of(0, rname), rname
    conv = [cast(x, d, rname) for x, d in zip(args, dtypes)]
    if complex_helped(name, dtypes):   # (numpy's formulas, a real operand made complex: C's rescue infinities)
        hname = f"ss_{name}_{rname}"
        helpers[hname] = (op.c_helper([rname, rname]), op)
        return Call(hname, tuple(conv)), rname
    if name in _INFIX:
        return wrap(BinOp(_INFIX[name], conv[0], conv[1]), rname), rname
    if name == "div":
        return BinOp("/", conv[0], conv[1]), rname
    if name == "neg":
        return wrap(UnOp("-", conv[0]), rname), rname
    if name in ("min", "max"):
        a, b = conv
        bound = _bound(name, rdt)
        if bound is not None and any(isinstance(x, Const) and x.value == bound for x in (a, b)):
            return Const(bound, rname), rname   # min(t, false) is false: no comparison that is always false
        for k in (0, 1):   # max(0, b) of a bool b is b, and min(0, b) is 0 (not for -0.0: its sign may show)
            c, other, odt = conv[k], conv[1 - k], np.dtype(dtypes[1 - k])
            if isinstance(c, Const) and odt.kind == "b" and not (isinstance(c.value, float) and (
                    math.isnan(c.value) or math.copysign(1.0, c.value) < 0 and c.value == 0)) and c.value <= 0:
                return (other if name == "max" else c), rname
        cmp = BinOp("<" if name == "min" else ">", a, b)
        if rdt.kind == "f" and not (isinstance(a, Const) and not math.isnan(a.value)):
            cmp = BinOp("||", Call("isnan", (a,)), cmp)
        return Select(cmp, a, b), rname
    if name == "abs":
        if rdt.kind == "f":
            return Call("fabs", (conv[0],)), rname
        if rdt.kind == "u":
            return conv[0], rname
        return wrap(Select(BinOp("<", conv[0], Const(0, rname)), UnOp("-", conv[0]), conv[0]), rname), rname
    if name == "pow":
        if rdt.kind == "f":
            return Call(c_math_name("pow", rdt), tuple(conv)), rname
        hname = f"ss_pow_{rname}"
        helpers[hname] = (op.c_helper([rdt, rdt]), op)
        return Call(hname, tuple(conv)), rname
    if name in ("lshift", "rshift") and constant_shift(name, *conv, rname) is not None:
        return constant_shift(name, *conv, rname), rname
    if name in ("floordiv", "mod", "lshift", "rshift"):
        hname = f"ss_{name}_{rname}"
        helpers[hname] = (op.c_helper([rdt, rdt]), op)
        return Call(hname, tuple(conv)), rname
    if name == "ldexp":
        return Call("ldexp", (cast(args[0], dtypes[0], rname), Cast("int32", args[1]))), rname
    if name in ROUNDING and rdt.kind in "biu":
        return conv[0], rname   # an integer is its own floor
    if name in COMPLEX_HELPED and rdt.kind == "c":   # (by parts: <complex.h> has no complex expm1)
        hname = f"ss_{name}_{rname}"
        helpers[hname] = (op.c_helper([rdt]), op)
        return Call(hname, (conv[0],)), rname
    if name in ("sqrt", "exp", "log", "round") + UNARY_MATH + BINARY_MATH:
        return Call(c_math_name(name, rdt), tuple(conv)), rname
    if name == "choose":
        a, b = conv
        return Select(BinOp("==", a, const_of(op.identity_for(rdt), rname)), b, a), rname
    if name == "overwrite":
        return conv[1], rname
    raise DTypeError(f"operator {op.name} has no C translation in the lattice strategy")


def to_ir(e, value_of, helpers: dict | None = None):
    """``(ir, dtype, helpers)`` of an index-notation expression; ``value_of(access) -> (ir, dtype)``."""
    helpers = {} if helpers is None else helpers

    def visit(x):
        if isinstance(x, Access):
            return value_of(x)
        if isinstance(x, Literal):
            dt = x.dtype.name
            return const_of(x.value, dt), dt
        if isinstance(x, IndexValue):   # the loop's variable (every loop names its index so)
            return Var(x.index.name), "int64"
        if isinstance(x, NCall):
            parts = [visit(a) for a in x.args]
            return apply_op(x.op, [p[0] for p in parts], [p[1] for p in parts], helpers)
        if isinstance(x, Reduce):
            raise TypeError(f"a reduction cannot be lowered inside an expression: {x}")
        raise TypeError(f"not an expression: {x!r}")

    ir, dt = visit(e)
    return ir, dt, helpers


def fold_power(fill: Const, skipped, dtype: str, helpers: dict):
    """``fill ** skipped`` in ``dtype`` (a real or integer one): a product's fill folded in for the ``skipped``
    coordinates (an int64 expression) its loops did not visit.

    >>> print(fold_power(Const(2.0, "float64"), Var("n"), "float64", {}))
    pow(2.0, (float64)n)
    """
    return apply_op(lookup("pow"), [fill, Cast(dtype, skipped)], [dtype, dtype], helpers)[0]


def python_helper(op: Operator, hname: str):
    """A Python implementation of a helper for :func:`compiler.imperative.interpret`."""
    return helper_impl(op, hname)


#: the operators C updates in place (``t += v``) when the result keeps the target's dtype
COMPOUND = {"add": "+", "mul": "*", "bitand": "&", "bitor": "|", "bitxor": "^"}


def compound_of(op, tdt: str, dt: str) -> str | None:
    """The C compound operator of ``t = op(t, v)`` for a target of dtype ``tdt`` and a value of ``dt``,
    or None where C's has another meaning: a user function, a result of another dtype, a complex product
    (numpy's formula, ``ss_mul``: C's ``*=`` rescues infinities).

    >>> from compiler.algebra import lookup
    >>> compound_of(lookup("mul"), "float64", "int32"), compound_of(lookup("mul"), "complex128", "complex128")
    ('*', None)
    """
    if op.is_user or op.name not in COMPOUND or op.result_dtype(tdt, dt).name != tdt:
        return None
    return None if complex_helped(op.name, [tdt, dt]) else COMPOUND[op.name]


def literal_text(v) -> str:
    """A fill or initial value as a comment shows it: ``0.0``, not ``np.float64(0.0)``."""
    return str(v.item() if hasattr(v, "item") else v)


def names_used(stmts) -> set:
    """The variables and buffers imperative statements name (what
    :func:`~compiler.imperative.traverse.names_read` finds, by one walk: the emitters ask it of
    statements they just made, which no summary remembers yet).

    >>> from compiler.imperative.ir import Assign, Load, Var
    >>> sorted(names_used([Assign(Var("s"), Load("x", Var("i")))]))
    ['i', 's', 'x']
    """
    out = set()
    for s in stmts:
        for n in ir_walk(s):
            if isinstance(n, Var):
                out.add(n.name)
            elif isinstance(n, (Load, Store, Grow, Prefetch, BufferArg)):
                out.add(n.buffer)
    return out


__all__ = ["COMPOUND", "compound_of", "to_ir", "apply_op", "const_of", "cast", "not_fill", "is_fill", "literal_text",
           "names_used", "python_helper", "fold_power"]
