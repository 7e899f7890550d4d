"""How each builtin operator runs, by name: its result dtype rule, its numpy implementation
(the oracle) and its C expression. :class:`compiler.algebra.Operator` looks its builtins up
here; user functions register their numpy implementation in :data:`IMPLS`.

Kept apart from the operators' algebra (identities, annihilators, fills), which does not
depend on how an operator computes. Each table takes the operator as its first argument,
so an entry can read its parameter (``choose(z)``) or name it in an error.

>>> from compiler.algebra import lookup
>>> C_EXPRS["min"](lookup("min"), ["a", "b"], [np.dtype("int64")] * 2)
'(a < b ? a : b)'
>>> DTYPE_RULES["div"](lookup("/"), [np.dtype("int32"), np.dtype("int32")]).name
'float64'
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .dtypes import c_type, value_dtype
from .dtypes import result_dtype as _promote
from .errors import DTypeError


def dtype_error(message: str, position: int | None) -> DTypeError:
    """A :class:`DTypeError` that knows the offending argument's ``position``, for callers
    that can name the tensor."""
    err = DTypeError(message)
    err.position = position
    return err


def c_literal(value, dtype) -> str:
    """``value`` as a C literal of ``dtype``.

    >>> c_literal(float("inf"), "float64"), c_literal(1.5, "float32"), c_literal(True, "bool")
    ('INFINITY', '1.5f', 'true')
    """
    dt = value_dtype(dtype)
    if dt.kind == "b":
        return "true" if value else "false"
    if dt.kind in "iu":
        v = int(value)
        if dt.kind == "u" and v >= 2 ** 31:
            return f"{v}u" if dt.itemsize == 4 else f"UINT64_C({v})"
        if dt.itemsize == 8 and not -(2 ** 31) < v < 2 ** 31:
            return f"INT64_C({v})" if v != np.iinfo(np.int64).min else "INT64_MIN"
        return str(v)
    v = float(value)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "(-INFINITY)"
    text = repr(v)
    return text + "f" if dt == np.float32 else text


# -- dtype rules ---------------------------------------------------------------


def _arith(op, dts):
    dt = _promote(*dts)
    return np.dtype("int64") if dt.kind == "b" else dt


def _int8_of_bools(op, dts):
    """numpy's dtype of ``//``, ``%``, ``**`` and shifts: its first integer loop, int8, for bools alone."""
    return np.dtype("int8") if all(d.kind == "b" for d in dts) else _arith(op, dts)


def _float_result(dts):
    dt = _promote(*dts)
    return dt if dt.kind in "fc" else np.dtype("float64")


def real_part_dtype(dtype) -> np.dtype:
    """The dtype of a complex ``dtype``'s real and imaginary parts (a real dtype's own: ``abs``,
    ``real`` and ``imag`` of a real value).

    >>> real_part_dtype("complex64").name, real_part_dtype("complex128").name, real_part_dtype("int8").name
    ('float32', 'float64', 'int8')
    """
    dt = np.dtype(dtype)
    return np.dtype("float32" if dt == np.complex64 else "float64") if dt.kind == "c" else dt


def _real_only(rule, why="complex numbers have no order"):
    """``rule``, refusing a complex operand (the Array API standard leaves the function undefined for
    complex numbers): the error names the operator and the dtype, never a C compiler's."""
    def checked(op, dts):
        for k, d in enumerate(dts):
            if d.kind == "c":
                raise dtype_error(f"operator {op.label} is not defined for {d.name} (argument {k}): {why}; "
                                  f"apply it to real(x), imag(x) or abs(x)", k)
        return rule(op, dts)
    return checked


def _complex_parts(op, dts):
    """``real``, ``imag`` and ``abs``: a complex operand's part dtype; ``abs`` of a real one as arithmetic."""
    if dts[0].kind == "c":
        return real_part_dtype(dts[0])
    return _arith(op, dts) if op.name == "abs" else dts[0]


def _astype_rule(op, dts):
    rdt = np.dtype(op.param)
    if dts[0].kind == "c" and rdt.kind not in "cb":
        raise dtype_error(f"astype({rdt.name}) of {dts[0].name}: a complex value has no {rdt.name}; the Array "
                          f"API standard does not cast complex to real (take real(x), imag(x) or abs(x))", 0)
    return rdt


def _integers_together(op, dts, dt):
    """``dt``, the promoted dtype of integer operands ``dts``, unless it is a float: numpy has no
    integer type holding both int64 and uint64, and neither C nor numpy has a bitwise float."""
    if dt.kind == "f":
        signed = next(k for k, d in enumerate(dts) if d.kind == "i")
        raise dtype_error(f"operator {op.label} does not accept {' and '.join(d.name for d in dts)} together: "
                          f"no integer type holds both (numpy promotes them to float64); cast one to the "
                          f"other's type", signed)
    return dt


def _bitwise(op, dts):
    for k, d in enumerate(dts):
        if d.kind not in "biu":
            raise dtype_error(f"operator {op.label} does not accept {d.name} (argument {k}): "
                               f"it needs integer or bool operands", k)
    return _integers_together(op, dts, _promote(*dts))


def _shift(op, dts):
    for k, d in enumerate(dts):
        if d.kind not in "biu":
            raise dtype_error(f"operator {op.label} does not accept {d.name} (argument {k}): "
                               f"it shifts integers", k)
    return _integers_together(op, dts, _int8_of_bools(op, dts))


def _ldexp(op, dts):
    if dts[1].kind not in "biu":
        raise dtype_error(f"operator ldexp does not accept {dts[1].name} (argument 1): "
                           f"the exponent must be an integer", 1)
    return dts[0] if dts[0].kind == "f" else np.dtype("float64")


#: numpy's elementwise float functions of one argument that C's <math.h> has by the same name (the
#: Array API's names: numpy 1 spells the inverse functions ``arcsin``, ...)
UNARY_MATH = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
              "expm1", "log1p", "log2", "log10", "floor", "ceil", "trunc")
#: those of two arguments (``atan2(y, x)``, ``hypot(x, y)``, ``copysign(x, y)``, ``nextafter(x, y)``)
BINARY_MATH = ("atan2", "hypot", "copysign", "nextafter")
#: the functions that also take complex values, as <complex.h>'s ``c``-prefixed ones (``csqrt``); the
#: others are real functions (the standard leaves ``floor`` or ``atan2`` of a complex undefined)
COMPLEX_MATH = ("sqrt", "exp", "log", "pow", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
                "tanh", "asinh", "acosh", "atanh")
#: those the standard defines for complex values and C has no complex version of: a helper
#: ``ss_<name>_<dtype>`` computes them by parts (:func:`c_complex_helper`)
COMPLEX_HELPED = ("expm1", "log1p", "log2", "log10", "round")
#: functions of the parts of a complex value: ``real`` and ``imag`` (C's ``creal``, ``cimag``) and ``conj``
COMPLEX_PARTS = ("real", "imag", "conj")
#: numpy's ufunc of each of them
NUMPY_MATH = {n: getattr(np, {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
                              "acosh": "arccosh", "atanh": "arctanh", "atan2": "arctan2"}.get(n, n))
              for n in UNARY_MATH + BINARY_MATH}
#: those of them that give an integer or bool back unchanged, in its dtype (as numpy 2 does), and ``round``
#: (to the nearest, ties to even: C's ``nearbyint`` in the default rounding mode, not C's ``round``)
ROUNDING = ("floor", "ceil", "trunc", "round")
#: the C function of a builtin whose name C spells otherwise
C_MATH_NAMES = {"round": "nearbyint"}
#: the functions whose float32 result is not the double one's rounded (the float after 1.0f is not
#: the double after 1.0): called by their float name on float32
C_FLOAT_NAMES = {"nextafter": "nextafterf"}


def c_math_name(name: str, dtype) -> str:
    """The C function computing the builtin ``name`` for a result of ``dtype``.

    >>> c_math_name("round", "float64"), c_math_name("nextafter", "float32"), c_math_name("sin", "float32")
    ('nearbyint', 'nextafterf', 'sin')
    >>> c_math_name("sqrt", "complex64"), c_math_name("real", "complex128")
    ('csqrt', 'creal')
    """
    dt = np.dtype(dtype)
    if dt.kind == "c":   # (the double _Complex function for both, as float32 calls the double one)
        return name if name == "conj" else "c" + name
    if dt == np.float32 and name in C_FLOAT_NAMES:
        return C_FLOAT_NAMES[name]
    return C_MATH_NAMES.get(name, name)

#: result dtype rules: ``rule(op, operand dtypes)``, by builtin name
DTYPE_RULES: dict[str, Callable] = {
    **{n: _arith for n in ("add", "sub", "mul", "neg")},
    "pow": _int8_of_bools,
    **{n: _real_only(_int8_of_bools, "numpy's floored division has no complex meaning") for n in ("floordiv", "mod")},
    "div": lambda op, dts: _float_result(dts),
    **{n: (lambda op, dts: _promote(*dts)) for n in ("choose", "overwrite")},
    **{n: _real_only(lambda op, dts: _promote(*dts)) for n in ("min", "max")},
    **{n: _bitwise for n in ("bitand", "bitor", "bitxor")},
    **{n: (lambda op, dts: np.dtype("bool")) for n in ("and", "or", "not", "eq", "ne", "isnan")},
    **{n: _real_only(lambda op, dts: np.dtype("bool")) for n in ("lt", "le", "gt", "ge")},
    "ldexp": _real_only(_ldexp, "it scales a real float by a power of two"),
    "lshift": _shift, "rshift": _shift,
    "astype": _astype_rule,
    **{n: (lambda op, dts: _float_result(dts)) for n in ("sqrt", "exp", "log") + UNARY_MATH + BINARY_MATH
       if n in COMPLEX_MATH + COMPLEX_HELPED},
    **{n: _real_only(lambda op, dts: _float_result(dts), "it is a real function") for n in UNARY_MATH + BINARY_MATH
       if n not in COMPLEX_MATH + COMPLEX_HELPED + ROUNDING},
    **{n: _real_only(lambda op, dts: dts[0] if dts[0].kind in "biu" else _float_result(dts),
                     "complex numbers have no order") for n in ROUNDING if n not in COMPLEX_HELPED},
    # (each part of a complex rounded on its own, ties to even, as the standard says)
    "round": lambda op, dts: dts[0] if dts[0].kind in "biu" else _float_result(dts),
    **{n: _complex_parts for n in ("abs", "real", "imag")},
    "conj": lambda op, dts: dts[0],
}


def float_to_int_bounds(dtype) -> tuple[float, float]:
    """The open interval of floats whose conversion to the integer ``dtype`` is defined (C's cast of a
    float is undefined, and numpy's warns and gives what the hardware does, outside it, and for NaN).

    >>> float_to_int_bounds("int8"), float_to_int_bounds("uint64")
    ((-129.0, 128.0), (-1.0, 1.8446744073709552e+19))
    """
    info = np.iinfo(dtype)
    lo = float(info.min) - 1.0
    if lo == float(info.min):   # (-2**63 - 1 is no double: the one below -2**63)
        lo = float(np.nextafter(float(info.min), -math.inf))
    return lo, float(info.max) + 1.0


def cast_sentinel(dtype):
    """What ``astype`` gives for a float without an integer of ``dtype`` (NaN, an infinity, too large):
    the dtype's minimum for int32 and int64 (numpy's on x86-64), 0 for the others."""
    dt = np.dtype(dtype)
    return dt.type(np.iinfo(dt).min if dt.name in ("int32", "int64") else 0)


def _astype_impl(op, arrays, rdt):
    x = np.asarray(arrays[0])
    if x.dtype.kind == "c" and rdt.kind == "b":   # (numpy's cast is the truth value of the whole number)
        return x != 0
    if x.dtype.kind != "f" or rdt.kind not in "iu":
        return x.astype(rdt)
    lo, hi = float_to_int_bounds(rdt)
    ok = (x > lo) & (x < hi)
    return np.where(ok, np.where(ok, x, 0).astype(rdt), cast_sentinel(rdt))


def _c_astype(op, a, dts):
    rdt, src = np.dtype(op.param), np.dtype(dts[0])
    if src.kind != "f" or rdt.kind not in "iu":
        return f"(({c_type(rdt)}){a[0]})"
    lo, hi = float_to_int_bounds(rdt)
    return (f"({a[0]} > {lo!r} && {a[0]} < {hi!r} ? ({c_type(rdt)}){a[0]} : "
            f"{c_literal(cast_sentinel(rdt), rdt)})")


# -- numpy implementations -----------------------------------------------------


def _cast(arrays, dt):
    return [a.astype(dt, copy=False) for a in arrays]


def _ufunc_impl(ufunc):
    return lambda op, arrays, rdt: ufunc(*_cast(arrays, rdt))


def with_real_operand(symbol: str, a, b):
    """``a symbol b`` (``+ - * /``) of a complex and a real operand as C99 computes it (Annex G), part by
    part, or None where both or neither are complex (or a real is divided by a complex): numpy makes the
    real operand complex first, so its ``(inf + 0j) * 2`` is ``inf + nan j`` (``0 * inf``) where C's is
    ``inf + 0j``. The kernels add and subtract as C does (the parts differ from numpy's in a zero's sign only),
    and multiply and divide as numpy does (:func:`complex_helped`); a sum of ``n`` equal complex values is ``n``
    times each part (:meth:`compiler.algebra.Operator.reduce_fill`).

    >>> with_real_operand("*", np.complex128(complex("inf+0j")), np.float64(2.0))
    np.complex128(inf+0j)
    >>> with_real_operand("-", np.float64(1.0), np.complex128(2 - 0j)), with_real_operand("/", 1.0, 2j) is None
    (np.complex128(-1-0j), True)
    """
    a, b = np.asarray(a), np.asarray(b)
    if (a.dtype.kind == "c") == (b.dtype.kind == "c") or (symbol == "/" and b.dtype.kind == "c"):
        return None
    z, r = (a, b) if a.dtype.kind == "c" else (b, a)
    rdt = np.result_type(a.dtype, b.dtype)
    z, r = np.broadcast_arrays(z.astype(rdt), r.astype(real_part_dtype(rdt)))
    if symbol == "+":
        re, im = z.real + r, z.imag
    elif symbol == "-":
        re, im = (z.real - r, z.imag) if a.dtype.kind == "c" else (r - z.real, -z.imag)
    else:
        re, im = (z.real * r, z.imag * r) if symbol == "*" else (z.real / r, z.imag / r)
    out = np.empty(z.shape, rdt)
    out.real, out.imag = re, im
    return out[()] if out.ndim == 0 else out


def _arith_impl(ufunc, symbol):
    def impl(op, arrays, rdt):
        # (a product or quotient as numpy's, the kernels' helpers': the real operand made complex)
        mixed = with_real_operand(symbol, *arrays) if rdt.kind == "c" and symbol in "+-" else None
        return ufunc(*_cast(arrays, rdt)) if mixed is None else mixed
    return impl


def _compare_impl(ufunc):
    def impl(op, arrays, rdt):
        common = _promote(*[a.dtype for a in arrays])
        return ufunc(*_cast(arrays, common))
    return impl


def ieee_pow(a, b) -> np.ndarray:
    """``a ** b`` as C's ``pow`` (IEEE 754) computes it, elementwise.

    numpy computes an exponent it sees as one value 0.5 as a square root:
    ``np.power(-inf, 0.5)`` is NaN and ``np.power(-0.0, 0.5)`` is -0.0, where C's pow
    gives inf and 0.0. A full, one-dimensional exponent array runs numpy's pow itself.

    >>> ieee_pow(np.array([-np.inf, -0.0, 4.0]), 0.5)
    array([inf,  0.,  2.])
    """
    a, b = np.broadcast_arrays(a, b)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        out = np.power(np.array(a).reshape(-1), np.array(b).reshape(-1)).reshape(a.shape)
    return out[()] if out.ndim == 0 else out   # a scalar for scalars, as np.power gives


def _pow_impl(op, arrays, rdt):
    a, b = _cast(arrays, rdt)
    if rdt.kind in "fc":
        return ieee_pow(a, b)
    neg = b < 0
    pos = np.power(a, np.where(neg, 0, b).astype(rdt))
    # 1 / a**k truncated toward zero: only |a| == 1 survives
    negval = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0)).astype(rdt)
    return np.where(neg, negval, pos)


def _divmod_impl(ufunc):
    def impl(op, arrays, rdt):
        # numpy's own semantics: an integer x // 0 and x % 0 are 0 (numpy warns), a float's
        # follow IEEE (inf or NaN), and INT_MIN // -1 wraps
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return ufunc(*_cast(arrays, rdt))
    return impl


def _ldexp_impl(op, arrays, rdt):
    a, b = arrays
    # C's ldexp takes an int; beyond this range the result is 0 or inf anyway
    e = np.clip(b.astype(np.int64), -(2 ** 31), 2 ** 31 - 1).astype(np.int32)
    return np.ldexp(a.astype(rdt), e)


def _choose_impl(op, arrays, rdt):
    a, b = _cast(arrays, rdt)
    # z as a value of the dtype, like identity_for (choose(3) on bools compares with True)
    return np.where(a == op.identity_for(rdt), b, a)


def _overwrite_impl(op, arrays, rdt):
    a, b = np.broadcast_arrays(*arrays)
    return b.astype(rdt)


#: numpy implementations: ``impl(op, arrays, result dtype)``, by builtin name; a user
#: function's is registered under a key of its name, C body and arity
IMPLS: dict[Any, Callable] = {
    "add": _arith_impl(np.add, "+"), "sub": _arith_impl(np.subtract, "-"), "mul": _arith_impl(np.multiply, "*"),
    "div": _arith_impl(np.true_divide, "/"), "neg": _ufunc_impl(np.negative),
    # (of the operand as it is: cast to the real result first, a complex value would lose its imaginary part)
    "abs": lambda op, arrays, rdt: np.abs(arrays[0]), "real": lambda op, arrays, rdt: np.real(arrays[0]),
    "imag": lambda op, arrays, rdt: np.imag(arrays[0]), "conj": lambda op, arrays, rdt: np.conj(arrays[0]),
    "min": _ufunc_impl(np.minimum), "max": _ufunc_impl(np.maximum),
    "bitand": _ufunc_impl(np.bitwise_and), "bitor": _ufunc_impl(np.bitwise_or),
    "bitxor": _ufunc_impl(np.bitwise_xor),
    "and": lambda op, arrays, rdt: np.logical_and(*arrays),
    "or": lambda op, arrays, rdt: np.logical_or(*arrays),
    "not": lambda op, arrays, rdt: np.logical_not(*arrays),
    "isnan": lambda op, arrays, rdt: np.isnan(arrays[0]),
    "lt": _compare_impl(np.less), "le": _compare_impl(np.less_equal),
    "gt": _compare_impl(np.greater), "ge": _compare_impl(np.greater_equal),
    "eq": _compare_impl(np.equal), "ne": _compare_impl(np.not_equal),
    "choose": _choose_impl, "overwrite": _overwrite_impl, "astype": _astype_impl,
    "pow": _pow_impl, "ldexp": _ldexp_impl,
    "floordiv": _divmod_impl(np.floor_divide), "mod": _divmod_impl(np.remainder),
    "lshift": _ufunc_impl(np.left_shift), "rshift": _ufunc_impl(np.right_shift),
    "sqrt": _ufunc_impl(np.sqrt), "exp": _ufunc_impl(np.exp), "log": _ufunc_impl(np.log),
    **{n: _ufunc_impl(NUMPY_MATH[n]) for n in UNARY_MATH + BINARY_MATH},
    # (an integer is its own floor; numpy before 2.1 gave a float)
    **{n: (lambda f: lambda op, arrays, rdt: arrays[0].astype(rdt) if rdt.kind in "biu" else f(arrays[0]))(
        getattr(np, n)) for n in ROUNDING},
}

#: builtins whose reduction numpy runs as one ufunc's ``reduce``
REDUCE_UFUNCS = {
    "add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum,
    "bitand": np.bitwise_and, "bitor": np.bitwise_or, "bitxor": np.bitwise_xor,
    "and": np.logical_and, "or": np.logical_or,
}


# -- C expressions -------------------------------------------------------------


def _c_infix(sym):
    return lambda op, a, dts: f"({a[0]} {sym} {a[1]})"


def _c_div(op, a, dts):
    rdt = op.result_dtype(*dts)
    ct = c_type(rdt)
    x, y = [f"({ct}){s}" if d != rdt else s for s, d in zip(a, dts)]
    return f"({x} / {y})"


def _c_minmax(cmp):
    def emit(op, a, dts):
        x, y = a
        if _promote(*dts).kind == "f":
            # NaN-propagating, as numpy.minimum/maximum
            return f"(isnan({x}) || {x} {cmp} {y} ? {x} : {y})"
        return f"({x} {cmp} {y} ? {x} : {y})"
    return emit


def _c_neg(op, a, dts):
    rdt = op.result_dtype(*dts)
    return f"(-({c_type(rdt)}){a[0]})" if dts[0].kind == "b" else f"(-{a[0]})"


def _c_abs(op, a, dts):
    d = dts[0]
    if d.kind == "c":
        return f"cabs({a[0]})"
    if d.kind == "f":
        return f"{'fabsf' if d == np.float32 else 'fabs'}({a[0]})"
    if d.kind == "b":
        return f"((int64_t){a[0]})"
    return f"({a[0]} < 0 ? -{a[0]} : {a[0]})"


def _c_part(op, a, dts):
    """``real``, ``imag`` or ``conj``: <complex.h>'s ``creal``, ``cimag``, ``conj`` of a complex value; of a
    real one, the value itself (its imaginary part is 0)."""
    if dts[0].kind == "c":
        return f"{c_math_name(op.name, dts[0])}({a[0]})"
    return "0" if op.name == "imag" else a[0]


def _c_math(name):
    def emit(op, a, dts):
        rdt = op.result_dtype(*dts)
        fn = "c" + name if rdt.kind == "c" else name + "f" if rdt == np.float32 else name
        return f"{fn}({', '.join(a)})"
    return emit


def _c_isnan(op, a, dts):
    # (C's isnan takes no complex value, where a NaN part makes v != v; an integer is never NaN)
    kind = np.dtype(dts[0]).kind
    return f"isnan({a[0]})" if kind == "f" else f"({a[0]} != {a[0]})" if kind == "c" else "false"


def _c_pow(op, a, dts):
    rdt = op.result_dtype(*dts)
    if rdt.kind == "c":
        return f"ss_pow_{rdt.name}({a[0]}, {a[1]})"
    if rdt.kind == "f":
        return f"{'powf' if rdt == np.float32 else 'pow'}({a[0]}, {a[1]})"
    return f"ss_pow_{rdt.name}({a[0]}, {a[1]})"


def _c_helper_call(op, a, dts):
    return f"ss_{op.name}_{op.result_dtype(*dts).name}({a[0]}, {a[1]})"


def _c_ldexp(op, a, dts):
    rdt = op.result_dtype(dts[0], np.dtype("int64"))
    return f"{'ldexpf' if rdt == np.float32 else 'ldexp'}({a[0]}, (int){a[1]})"


def _c_choose(op, a, dts):
    z = c_literal(op.param, _promote(*dts))
    return f"({a[0]} == {z} ? {a[1]} : {a[0]})"


def c_ipow_helper(rdt) -> str:
    t = c_type(rdt)
    u = "uint64_t" if rdt.itemsize == 8 else "uint32_t"
    # unsigned arithmetic wraps like numpy instead of overflowing (undefined in C)
    negative = "    if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 == 0 ? 1 : -1) : 0;\n" if rdt.kind == "i" else ""
    return (f"static inline {t} ss_pow_{rdt.name}({t} a, {t} b) {{\n"
            f"{negative}"
            f"    {u} r = 1, x = ({u})a;\n"
            f"    while (b) {{ if (b & 1) r *= x; x *= x; b >>= 1; }}\n"
            f"    return ({t})r;\n"
            f"}}")


def _complex_binary(name: str, rdt) -> tuple:
    """What a complex helper of two values of ``rdt`` is written with: its head (signature and the
    operands' parts ``ar``, ``ai``, ``br``, ``bi``), C's suffix for ``rdt``'s functions (``f`` for
    complex64), its part type and its constructor (``CMPLX``, ``CMPLXF``)."""
    rdt = np.dtype(rdt)
    f = "f" if rdt == np.complex64 else ""
    t, part = c_type(rdt), c_type(real_part_dtype(rdt))
    head = (f"static inline {t} ss_{name}_{rdt.name}({t} a, {t} b) {{\n"
            f"    {part} ar = creal{f}(a), ai = cimag{f}(a), br = creal{f}(b), bi = cimag{f}(b);\n")
    return head, f, part, f"CMPLX{f.upper()}"


def c_cpow_helper(rdt) -> str:
    """The C function ``ss_pow_<dtype>``: numpy's power of complex values of ``rdt``, where C's ``cpow``
    (``exp(b log a)`` in glibc) gives NaN for ``0 ** 0``. As numpy's: 1 for an exponent 0; for a base 0,
    0 where the exponent is a positive real, else NaN; an integer exponent under 100 in magnitude by
    repeated products (numpy's, each part's formula; 1 over the product for a negative one); else cpow.

    >>> print(c_cpow_helper("complex64").splitlines()[0])
    static inline float _Complex ss_pow_complex64(float _Complex a, float _Complex b) {
    """
    head, f, part, make = _complex_binary("pow", rdt)
    return (head +
            f"    if (br == 0 && bi == 0)\n"
            f"        return {make}(1, 0);\n"
            f"    if (ar == 0 && ai == 0)\n"
            f"        return br > 0 && bi == 0 ? {make}(0, 0) : {make}(NAN, NAN);\n"
            f"    if (bi != 0 || br != trunc{f}(br) || br <= -100 || br >= 100)\n"
            f"        return cpow{f}(a, b);\n"
            f"    if (br == 1)\n"
            f"        return a;\n"
            f"    {part} sr = ar * ar - ai * ai, si = ar * ai + ai * ar;\n"
            f"    if (br == 2)\n"
            f"        return {make}(sr, si);\n"
            f"    if (br == 3)\n"
            f"        return {make}(sr * ar - si * ai, sr * ai + si * ar);\n"
            f"    int n = (int)(br < 0 ? -br : br);\n"
            f"    {part} rr = 1, ri = 0, pr = ar, pi = ai;\n"
            f"    for (;;) {{\n"
            f"        if (n & 1) {{\n"
            f"            {part} r = rr * pr - ri * pi;\n"
            f"            ri = rr * pi + ri * pr;\n"
            f"            rr = r;\n"
            f"        }}\n"
            f"        n >>= 1;\n"
            f"        if (n == 0)\n"
            f"            break;\n"
            f"        {part} p = pr * pr - pi * pi;\n"
            f"        pi = pr * pi + pi * pr;\n"
            f"        pr = p;\n"
            f"    }}\n"
            f"    if (br > 0)\n"
            f"        return {make}(rr, ri);\n"
            f"    {part} d = rr * rr + ri * ri;\n"
            f"    return {make}(rr / d, -ri / d);\n"
            f"}}")


def complex_helped(name: str, dtypes) -> bool:
    """Whether ``name`` of operands of ``dtypes`` is a complex product or quotient computed by numpy's
    formula (:func:`compiler.opimpls.c_cmul_helper`, :func:`~compiler.opimpls.c_cdiv_helper`): a product or a
    quotient with a complex operand. A real operand is made complex first, as numpy makes it: ``(inf + 0j) * 2.0``
    is ``inf + nan j`` (``inf * 0``), where C99's, a real operand times each part, is ``inf + 0j``.

    >>> complex_helped("mul", ["complex128", "complex64"]), complex_helped("mul", ["complex128", "float64"])
    (True, True)
    >>> complex_helped("div", ["float64", "complex128"]), complex_helped("div", ["float64", "int32"])
    (True, False)
    """
    return name in ("mul", "div") and any(np.dtype(d).kind == "c" for d in dtypes)


def c_cmul_helper(rdt) -> str:
    """The C function ``ss_mul_<dtype>``: numpy's product of complex values of ``rdt``, by its parts' formula.
    C's ``*`` (Annex G) recomputes a product whose parts came out NaN from an infinite operand:
    ``(inf + inf j) * -1j`` is ``inf - inf j`` in C and ``nan + nan j`` in numpy. Where the CPU fuses a
    multiply and an add, numpy's vector loop does (``ar * br - ai * bi`` with ``ar * br`` unrounded: in
    ``(-2.5 + 1j) * (inf + 1e308j)``, ``-2.5 * 1e308 + inf`` is ``inf``, not NaN), and so does the helper.

    >>> print(c_cmul_helper("complex128"))
    static inline double _Complex ss_mul_complex128(double _Complex a, double _Complex b) {
        double ar = creal(a), ai = cimag(a), br = creal(b), bi = cimag(b);
    #ifdef __FMA__
        return CMPLX(fma(ar, br, -(ai * bi)), fma(ar, bi, ai * br));
    #else
        return CMPLX(ar * br - ai * bi, ar * bi + ai * br);
    #endif
    }
    """
    head, f, part, make = _complex_binary("mul", rdt)
    return (head +
            f"#ifdef __FMA__\n"
            f"    return {make}(fma{f}(ar, br, -(ai * bi)), fma{f}(ar, bi, ai * br));\n"
            f"#else\n"
            f"    return {make}(ar * br - ai * bi, ar * bi + ai * br);\n"
            f"#endif\n"
            f"}}")


def c_cdiv_helper(rdt) -> str:
    """The C function ``ss_div_<dtype>``: numpy's quotient of complex values of ``rdt`` (Smith's method,
    scaled by the reciprocal of the divisor's norm; a zero divisor divides each part by 0). C's ``/``
    (libgcc's ``__divdc3``) scales otherwise and rescues infinities: it differed from numpy in the last
    digit of 42% of quotients of random values, and in NaN against infinity for infinite operands.

    >>> print(c_cdiv_helper("complex64").splitlines()[0])
    static inline float _Complex ss_div_complex64(float _Complex a, float _Complex b) {
    """
    head, f, part, make = _complex_binary("div", rdt)
    return (head +
            f"    {part} abs_br = fabs{f}(br), abs_bi = fabs{f}(bi);\n"
            f"    if (abs_br >= abs_bi) {{\n"
            f"        if (abs_br == 0 && abs_bi == 0)\n"
            f"            return {make}(ar / abs_br, ai / abs_br);\n"
            f"        {part} rat = bi / br, scl = 1 / (br + bi * rat);\n"
            f"        return {make}((ar + ai * rat) * scl, (ai - ar * rat) * scl);\n"
            f"    }}\n"
            f"    {part} rat = br / bi, scl = 1 / (bi + br * rat);\n"
            f"    return {make}((ar * rat + ai) * scl, (ai * rat - ar) * scl);\n"
            f"}}")


def c_divmod_helper(name: str, rdt) -> str:
    """The C function ``ss_<name>_<dtype>`` computing numpy's ``floor_divide`` (``name`` is
    ``floordiv``) or ``remainder`` (``mod``) of two values of ``rdt``.

    C's ``/`` and ``%`` truncate toward zero and trap on ``x / 0`` and ``INT_MIN / -1``; numpy
    rounds toward minus infinity, gives the remainder the divisor's sign, and for integers
    returns 0 for a zero divisor and wraps ``INT_MIN // -1``. Floats follow numpy's
    ``npy_divmod`` (fmod, then a correction, rounding the quotient to the nearest integer).

    >>> print(c_divmod_helper("mod", np.dtype("int32")))
    static inline int32_t ss_mod_int32(int32_t a, int32_t b) {
        if (b == 0 || b == -1) return 0;
        int32_t r = a % b;
        return r != 0 && (r < 0) != (b < 0) ? r + b : r;
    }
    """
    rdt = np.dtype(rdt)
    t = c_type(rdt)
    head = f"static inline {t} ss_{name}_{rdt.name}({t} a, {t} b) {{\n"
    if rdt.kind == "u":   # no negative operand: C's truncation is numpy's floor
        return head + f"    return b == 0 ? 0 : a {'/' if name == 'floordiv' else '%'} b;\n}}"
    if rdt.kind == "i":
        u = "uint64_t" if rdt.itemsize == 8 else "uint32_t"
        if name == "floordiv":
            # (-a through unsigned: INT_MIN // -1 wraps to INT_MIN as in numpy, not a trap)
            return head + (f"    if (b == 0) return 0;\n"
                           f"    if (b == -1) return ({t})(({u})0 - ({u})a);\n"
                           f"    {t} q = a / b;\n"
                           f"    return a % b != 0 && (a < 0) != (b < 0) ? q - 1 : q;\n}}")
        return head + (f"    if (b == 0 || b == -1) return 0;\n"
                       f"    {t} r = a % b;\n"
                       f"    return r != 0 && (r < 0) != (b < 0) ? r + b : r;\n}}")
    f = "f" if rdt == np.float32 else ""
    if name == "mod":
        body = (f"    {t} m = fmod{f}(a, b);\n"
                f"    if (b == 0) return m;\n"
                f"    if (m != 0) return (b < 0) != (m < 0) ? m + b : m;\n"
                f"    return copysign{f}(0, b);\n}}")
        return head + body
    body = (f"    {t} m = fmod{f}(a, b);\n"
            f"    if (b == 0) return a / b;\n"
            f"    {t} d = (a - m) / b;\n"
            f"    if (m != 0 && (b < 0) != (m < 0)) d -= 1;\n"
            f"    if (d == 0) return copysign{f}(0, a / b);\n"
            f"    {t} q = floor{f}(d);\n"
            f"    return d - q > 0.5{f} ? q + 1 : q;\n}}")
    return head + body


def c_shift_helper(name: str, rdt) -> str:
    """The C function ``ss_<name>_<dtype>`` shifting as numpy's ``left_shift`` (``name`` is
    ``lshift``) or ``right_shift`` (``rshift``) does.

    C leaves a shift by a negative count or by the width or more undefined, and a left shift
    of a negative value; numpy gives 0 (-1 for a negative value shifted right) and wraps.

    >>> print(c_shift_helper("rshift", np.dtype("int32")))
    static inline int32_t ss_rshift_int32(int32_t a, int32_t b) {
        if (b < 0 || b >= 32) return a < 0 ? -1 : 0;
        return a >> b;
    }
    """
    rdt = np.dtype(rdt)
    t, bits = c_type(rdt), 8 * rdt.itemsize
    u = "uint64_t" if rdt.itemsize == 8 else "uint32_t"
    head = f"static inline {t} ss_{name}_{rdt.name}({t} a, {t} b) {{\n"
    negative = "b < 0 || " if rdt.kind == "i" else ""
    if name == "lshift":
        return head + (f"    if ({negative}b >= {bits}) return 0;\n"
                       f"    return ({t})(({u})a << b);\n}}")
    if rdt.kind == "u":
        return head + (f"    if (b >= {bits}) return 0;\n"
                       f"    return ({t})(a >> b);\n}}")
    # (>> of a negative value is arithmetic in every C compiler this project supports)
    return head + (f"    if ({negative}b >= {bits}) return a < 0 ? -1 : 0;\n"
                   f"    return a >> b;\n}}")


def c_complex_helper(name: str, rdt) -> str:
    """The C function ``ss_<name>_<dtype>`` computing ``expm1``, ``log1p``, ``log2``, ``log10`` or
    ``round`` of a complex value of ``rdt`` by its parts, as numpy does (<complex.h> has none of them).

    >>> print(c_complex_helper("round", np.dtype("complex64")))
    static inline float _Complex ss_round_complex64(float _Complex z) {
        return CMPLXF(nearbyintf(crealf(z)), nearbyintf(cimagf(z)));
    }
    """
    rdt = np.dtype(rdt)
    f = "f" if rdt == np.complex64 else ""
    t, part = c_type(rdt), c_type(real_part_dtype(rdt))
    head = f"static inline {t} ss_{name}_{rdt.name}({t} z) {{\n"
    make = f"CMPLX{f.upper()}"
    if name == "round":
        return head + f"    return {make}(nearbyint{f}(creal{f}(z)), nearbyint{f}(cimag{f}(z)));\n}}"
    if name == "expm1":   # e^x cos y - 1, written so a small x and y keep their digits
        return head + (f"    {part} x = creal{f}(z), y = cimag{f}(z);\n"
                       f"    {part} h = sin{f}(y / 2);\n"
                       f"    return {make}(expm1{f}(x) * cos{f}(y) - 2 * h * h, exp{f}(x) * sin{f}(y));\n}}")
    if name == "log1p":
        return head + (f"    {part} x = creal{f}(z) + 1, y = cimag{f}(z);\n"
                       f"    return {make}(log{f}(hypot{f}(x, y)), atan2{f}(y, x));\n}}")
    scale = {"log2": "1.4426950408889634", "log10": "0.4342944819032518"}[name]   # log2(e), log10(e)
    return head + (f"    {t} w = clog{f}(z);\n"
                   f"    return {make}(creal{f}(w) * {scale}{f}, cimag{f}(w) * {scale}{f});\n}}")


def _c_complex_helped(plain):
    def emit(op, a, dts):
        rdt = op.result_dtype(*dts)
        return f"ss_{op.name}_{rdt.name}({a[0]})" if rdt.kind == "c" else plain(op, a, dts)
    return emit


#: C expressions: ``emit(op, argument expressions, operand dtypes)``, by builtin name
C_EXPRS: dict[str, Callable] = {
    "add": _c_infix("+"), "sub": _c_infix("-"), "mul": _c_infix("*"), "div": _c_div,
    "min": _c_minmax("<"), "max": _c_minmax(">"),
    "bitand": _c_infix("&"), "bitor": _c_infix("|"), "bitxor": _c_infix("^"),
    "and": _c_infix("&&"), "or": _c_infix("||"), "not": lambda op, a, dts: f"(!{a[0]})",
    "neg": _c_neg, "abs": _c_abs, "isnan": _c_isnan,
    **{n: _c_part for n in COMPLEX_PARTS},
    "lt": _c_infix("<"), "le": _c_infix("<="), "gt": _c_infix(">"), "ge": _c_infix(">="),
    "eq": _c_infix("=="), "ne": _c_infix("!="),
    "choose": _c_choose, "overwrite": lambda op, a, dts: a[1], "astype": _c_astype,
    "pow": _c_pow, "ldexp": _c_ldexp, "floordiv": _c_helper_call, "mod": _c_helper_call,
    "lshift": _c_helper_call, "rshift": _c_helper_call,
    "sqrt": _c_math("sqrt"), "exp": _c_math("exp"), "log": _c_math("log"),
    **{n: _c_math(n) for n in UNARY_MATH + BINARY_MATH},
    **{n: (lambda f: lambda op, a, dts: a[0] if dts[0].kind in "biu" else f(op, a, dts))(
        _c_math(C_MATH_NAMES.get(n, n))) for n in ROUNDING},
}
C_EXPRS.update({n: _c_complex_helped(C_EXPRS[n]) for n in COMPLEX_HELPED})
