"""Lowering of a fully lowered program expression (no loop index left) to an imperative IR
expression and its dtype: literals, values, leaf reads, calls of builtin operators inline (in
numpy's dtype, numpy's semantics where C's differ: NaN wins a min or max, floor division and
shifts in helpers) and user functions as C helpers. :class:`ExpressionLowering` is the part of
:class:`~compiler.looplets.lowerers.Lowerer` that does it.

>>> promote_dtypes("int32", "float32"), compound_symbol(None, "float64", "float64")
('float64', None)
"""

from __future__ import annotations

import numpy as np

from .. import user_function_check
from ..algebra import Operator
from ..imperative import cints, ir
from ..imperative.ir import BinOp, Const, Select, UnOp
from ..opimpls import (BINARY_MATH, COMPLEX_HELPED, COMPLEX_PARTS, ROUNDING, UNARY_MATH, c_math_name, complex_helped,
                      real_part_dtype)
from .errors import ProgramError
from .fibers import SubFiber, leaf_value
from .looplets import Fill
from .program import MISSING, Access, Call, Count, Index, Literal, Value, Variable


def numpy_dtype(d):
    """The numpy dtype named ``d``."""
    return np.dtype(d)


def promote_dtypes(*dtypes) -> str:
    """The name of the dtype numpy computes ``dtypes`` in together."""
    return np.result_type(*dtypes).name


def compound_symbol(op, dt, vdt):
    """The C compound operator for ``x op= v`` when it means the same as ``x = op(x, v)``."""
    if op is None or op.is_user:
        return None
    sym = {"add": "+", "mul": "*", "sub": "-", "bitand": "&", "bitor": "|", "bitxor": "^"}.get(op.name)
    if sym is None:
        return None
    if dt == "bool" or complex_helped(op.name, [dt, vdt]):   # (a complex product: ss_mul, numpy's)
        return None
    return sym



def copies(e: Call, dtypes) -> bool:
    """Whether ``e`` is the sum of ``n`` copies of a complex value as :func:`compiler.looplets.simplify.integrate`
    makes it, ``n * v`` with ``n`` a :class:`~compiler.looplets.program.Count`: computed part by part, as the
    copies' sum (``3 * (inf + 0j)`` is ``inf + 0j``), not as numpy's product with 3 made complex. (A uint32
    tensor's value times a complex64 one is a product of the program: numpy's complex128, not the complex64 part
    by part.)"""
    return (isinstance(e.op, Operator) and not e.op.is_user and e.op.name == "mul" and isinstance(e.args[0], Count)
            and numpy_dtype(dtypes[0]).kind in "iu" and numpy_dtype(dtypes[1]).kind == "c")


class ExpressionLowering:
    """Program expressions to IR expressions, for :class:`~compiler.looplets.lowerers.Lowerer`
    (which holds ``helpers``, ``helper_ops`` and the ``scalars`` reads this uses)."""

    def expr(self, e, line=0):
        """``(IR expression, dtype)`` of a fully lowered program expression."""
        if isinstance(e, Literal):
            v = e.value
            if v is MISSING:
                raise ProgramError("a missing value reached the generated code; wrap the permissive "
                                   "access in coalesce(..., default)", line)
            if e.dtype is not None and not isinstance(v, bool) and e.dtype != "bool":
                # (a tensor's fill, or folded from fills: a value of its dtype, as numpy's are, not a weak literal)
                return Const(v, e.dtype), e.dtype
            if isinstance(v, bool):
                return Const(v, "bool"), "bool"
            if isinstance(v, int):   # (past int64, as numpy types it: uint64 when it fits)
                dt = "uint64" if 2 ** 63 <= v < 2 ** 64 else "int64"
                return Const(v, dt), dt
            if isinstance(v, complex):
                return Const(v, "complex128"), "complex128"
            return Const(float(v), "float64"), "float64"
        if isinstance(e, Value):
            return e.expr, e.dtype
        if isinstance(e, Access):
            t = e.tns
            if isinstance(t, Fill):
                return self.expr(t.value, line)
            if isinstance(t, SubFiber) and t.is_leaf and not e.idxs:
                if not t.tensor.levels:
                    return self.scalars.read(t, line)
                return self.expr(leaf_value(t), line)
            if isinstance(t, (Literal, Value)):
                return self.expr(t, line)
            raise ProgramError(f"access {e} is not fully indexed (an index of it is never looped over)", line)
        if isinstance(e, Call):
            if e.op == "coalesce":
                return self.expr(e.args[0], line)
            if e.op == "ifelse":
                (c, _), (a, da), (b, db) = (self.expr(x, line) for x in e.args)
                return Select(c, a, b), promote_dtypes(da, db)
            parts = [self.expr(a, line) for a in e.args]
            owners = [self.fill_owner(a) for a in e.args]
            # (a signed tensor's fill is one of its values, in its dtype: where B is its fill 2, an int8 A * B
            # wraps in int8 as numpy's, where an int64 2 made it int64: 89 * 2 was 178, numpy's -78)
            parts = [(Const(x.value, own.name), own.name) if own is not None and own.kind == "i" and d == "int64"
                     and isinstance(x, Const) and np.iinfo(own).min <= x.value <= np.iinfo(own).max else (x, d)
                     for (x, d), own in zip(parts, owners)]
            parts = cints.weak_constants(parts, owners)
            if copies(e, [d for _, d in parts]):
                # (n copies of a complex value added, simplify's integrate: each part times n, as their sum)
                (n, _), (v, dv) = parts
                return BinOp("*", ir.Cast(real_part_dtype(numpy_dtype(dv)).name, n), v), dv
            return self.apply(e.op, [p[0] for p in parts], [p[1] for p in parts], line), \
                e.op.result_dtype(*[p[1] for p in parts]).name
        if isinstance(e, Index):
            raise ProgramError(f"index {e.name} is used outside of its loop", line)
        if isinstance(e, Variable):
            raise ProgramError(f"variable {e.name} is not defined", line)
        raise ProgramError(f"cannot lower expression {e!r}", line)

    def fill_owner(self, e):
        """The dtype of the tensors ``e`` is a literal folded from the fills of (None for a literal of the
        program, or fills of several dtypes): an int8's fill 0 beside a uint8 is no Python int, which numpy
        would type uint8 (0 - 1 would wrap), nor is a uint32's (see :func:`~compiler.imperative.cints.weak_constants`)."""
        if not isinstance(e, Literal):
            return None
        if e.dtype is not None:
            return numpy_dtype(e.dtype)
        owners = {numpy_dtype(self.tensors[n].format.dtype) for n in e.fills if n in self.tensors}
        return owners.pop() if len(owners) == 1 else None

    def apply(self, op: Operator, args, dtypes, line=0):
        """IR for ``op(args)``: builtin operators inline, user functions as C helpers."""
        if op.is_user:
            h = op.c_helper(dtypes)
            name = op._c_name([numpy_dtype(d) for d in dtypes])
            self.helpers.setdefault(name, ir.Helper(name, h))
            self.helper_ops.setdefault(name, op)
            user_function_check.note(op, dtypes)
            return ir.Call(name, tuple(args))
        n = op.name
        rdt = op.result_dtype(*dtypes).name
        if n == "astype":
            return cints.converted(args[0], dtypes[0], rdt)
        if numpy_dtype(dtypes[0]).kind == "c" and n in ("abs",) + COMPLEX_PARTS:
            return ir.Call(c_math_name(n, numpy_dtype(dtypes[0])), (args[0],))
        if n in ("real", "conj"):   # (of a real value: the value itself, as numpy's)
            return args[0]
        if n == "imag":
            return Const(0, rdt)
        if n == "isnan":   # (of the operand in its own dtype: an integer is never NaN)
            return cints.isnan_of(args[0], dtypes[0])
        a, given = args, dtypes
        if len(set(map(str, dtypes)) | {rdt}) > 1 and n not in ("and", "or", "not", "ldexp", "div"):
            # in numpy's dtype: C would compute int32 + 1 in 32 bits, and int32 < uint32 as unsigned
            common = promote_dtypes(*dtypes) if n in ("lt", "le", "gt", "ge", "eq", "ne") else rdt
            a = cints.operands(args, dtypes, common)
            dtypes = [common] * len(dtypes)
        infix = {"add": "+", "sub": "-", "mul": "*", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
                 "eq": "==", "ne": "!=", "and": "&&", "or": "||", "bitand": "&", "bitor": "|", "bitxor": "^"}
        if complex_helped(n, given):
            # (numpy's formulas, a real operand made complex: C's * and / rescue infinities, and its / scales)
            name = f"ss_{n}_{rdt}"
            self.helpers.setdefault(name, ir.Helper(name, op.c_helper([rdt, rdt])))
            self.helper_ops.setdefault(name, op)
            return ir.Call(name, tuple(a))
        if n in infix:
            return cints.wrap(BinOp(infix[n], a[0], a[1]), rdt)
        if n == "div":
            x, y = a
            # in numpy's dtype, which neither operand has: C would divide int by int, float32 by int32 in float
            if numpy_dtype(rdt).kind in "fc" and rdt not in map(str, dtypes):
                x = ir.Cast(rdt, x)
            return BinOp("/", x, y)
        if n in ("min", "max"):
            better = BinOp("<" if n == "min" else ">", a[0], a[1])
            # a NaN wins, as in numpy (and the vectorizer knows the form); an integer or bool operand, which
            # an operand of another dtype leaves uncast, is never NaN (and C's isnan takes no integer)
            if str(given[0]).startswith("float"):
                better = BinOp("||", ir.Call("isnan", (a[0],)), better)
            return Select(better, a[0], a[1])
        if n == "neg":
            return cints.wrap(UnOp("-", a[0]), rdt)
        if n == "not":
            return UnOp("!", a[0])
        if n == "abs":
            if numpy_dtype(rdt).kind == "u":
                return a[0]
            return cints.wrap(Select(BinOp("<", a[0], Const(0, dtypes[0] if dtypes[0] != "bool" else "int64")),
                                     UnOp("-", a[0]), a[0]), rdt)
        if n == "overwrite":
            return a[1]
        if n in ("lshift", "rshift"):
            plain = cints.constant_shift(n, a[0], a[1], rdt)
            if plain is not None:
                return plain
        if n in ("floordiv", "mod", "lshift", "rshift"):   # numpy's semantics where C's differ, in a helper
            name = f"ss_{n}_{rdt}"
            self.helpers.setdefault(name, ir.Helper(name, op.c_helper([rdt, rdt])))
            self.helper_ops.setdefault(name, op)
            return ir.Call(name, tuple(a))
        if n in ROUNDING and numpy_dtype(rdt).kind in "biu":
            return a[0]   # an integer is its own floor
        if n in COMPLEX_HELPED and numpy_dtype(rdt).kind == "c":   # (by parts: <complex.h> has no complex expm1)
            name = f"ss_{n}_{rdt}"
            self.helpers.setdefault(name, ir.Helper(name, op.c_helper([rdt])))
            self.helper_ops.setdefault(name, op)
            return ir.Call(name, tuple(a))
        if n == "pow" and numpy_dtype(rdt).kind in "iuc":
            # (integers wrap as numpy's, where C's pow computes a double; complex 0 ** 0 is 1, C's cpow's NaN)
            name = f"ss_pow_{rdt}"
            self.helpers.setdefault(name, ir.Helper(name, op.c_helper([rdt, rdt])))
            self.helper_ops.setdefault(name, op)
            return ir.Call(name, tuple(a))
        if n in ("sqrt", "exp", "log", "pow", "round") + UNARY_MATH + BINARY_MATH:
            return ir.Call(c_math_name(n, numpy_dtype(rdt)), tuple(a))
        if n == "choose":
            z = Const(op.param, dtypes[0])
            return Select(BinOp("==", a[0], z), a[1], a[0])
        raise ProgramError(f"operator {op} has no C lowering in the looplet strategy", line)
