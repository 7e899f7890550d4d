"""The dtypes of index-notation expressions, and whether an output's format can hold them.

Both strategies type a program the same way: an operator gives the dtype of its result
from its arguments' (``+`` of two bools counts in int64), and a sum or product of narrow
integers accumulates in 64 bits, as numpy's does.

>>> from compiler.format import dense
>>> from compiler.notation import parse
>>> check_output_dtype(parse("y[i] += x[i]"), {"x": dense(1, dtype="bool"), "y": dense(1, dtype="bool")})
Traceback (most recent call last):
...
compiler.errors.DTypeError: output y's format holds bool, but the update y[i] += x[i] computes int64, which it cannot hold without losing values; give y an int64 format
"""

from __future__ import annotations

import numpy as np

from ..dtypes import weak_literal_dtype
from ..errors import DTypeError
from .ast import Access, Call, IndexValue, Literal, Reduce
from .shape import ShapeOp


def expr_dtype(e, dtype_of) -> np.dtype:
    """The dtype of an index-notation expression (``dtype_of(access)`` for accesses)."""
    if isinstance(e, Access):
        return np.dtype(dtype_of(e))
    if isinstance(e, Literal):
        return e.dtype
    if isinstance(e, IndexValue):   # a coordinate, as the kernels' int64_t loop variables
        return np.dtype("int64")
    if isinstance(e, Call):
        return e.op.result_dtype(*[expr_dtype(a, dtype_of) for a in e.args])
    if isinstance(e, Reduce):
        return reduce_dtype(e.op, expr_dtype(e.body, dtype_of))
    if isinstance(e, ShapeOp):   # a shape operator moves values; a concat's is its operands' common dtype
        return np.result_type(*[expr_dtype(c, dtype_of) for c in e.children()])
    raise TypeError(f"not an expression: {e!r}")


def type_literals(e, dtype_of):
    """``e`` with each int literal that is an operand beside an unsigned integer operand typed
    as :func:`weak_literal_dtype` says; the expression itself when there is none.

    >>> from compiler.notation import parse
    >>> prog = parse("y[i] = (x[i] << 1) + 2.5")
    >>> typed = type_literals(prog.rhs, lambda a: np.dtype("uint64"))
    >>> typed.args[0].args[1].dtype, typed.args[1].dtype
    (dtype('uint64'), dtype('float64'))
    """
    if isinstance(e, Call):
        args = [type_literals(a, dtype_of) for a in e.args]
        plain = [isinstance(a, Literal) and a.typed is None for a in args]
        dts = [None if p else expr_dtype(a, dtype_of) for a, p in zip(args, plain)]
        for k, a in enumerate(args):
            if plain[k]:
                dt = weak_literal_dtype(a.value, [d for d in dts if d is not None])
                if dt is not None:
                    args[k] = Literal(a.value, dt.name)
        args = tuple(args)
        return e if args == e.args else Call(e.op, args)
    if isinstance(e, Reduce):
        body = type_literals(e.body, dtype_of)
        return e if body == e.body else Reduce(e.op, e.indices, body)
    return e


def reduce_dtype(op, d) -> np.dtype:
    """The dtype a reduction by ``op`` of ``d`` values accumulates in: as numpy's, a sum or
    product of narrower integers (or bools) counts in 64 bits, so it does not overflow first.

    >>> from compiler.algebra import lookup
    >>> reduce_dtype(lookup("+"), np.dtype("int32")), reduce_dtype(lookup("max"), np.dtype("int32"))
    (dtype('int64'), dtype('int32'))
    """
    r = np.dtype(op.result_dtype(d, d))
    if not op.is_user and op.name in ("add", "mul") and r.kind in "iub" and r.itemsize < 8:
        return np.dtype("uint64" if r.kind == "u" else "int64")
    return r


def check_output_dtype(program, formats: dict) -> np.dtype:
    """The dtype of ``program``'s right-hand side, or where the output is not in ``formats``, of
    that fresh output (for an update, its result on the right side's dtype); refuse an output
    format (when ``formats`` gives one) that cannot hold it, or the result of the program's
    update, without losing values. As numpy's ``out=`` arguments (``same_kind``): a float is
    not truncated into an int (0.5 would become 0, then the fill), an int not squeezed into a
    bool; an int64 may go into an int32 (numpy's ``y += x`` wraps around too)."""
    try:
        rdt = expr_dtype(program.rhs, lambda a: formats[a.tensor].dtype)
    except DTypeError as e:
        raise DTypeError(f"in {program}: {e}") from None
    out = program.lhs.tensor
    if out not in formats:
        if program.op is not None and not program.op.is_user:
            # a fresh output of an update starts at the identity in the right side's dtype, then
            # takes the update's result (as the oracle's: y[i] += b[i] over bools counts in int64)
            return np.dtype(program.op.result_dtype(rdt.name, rdt.name))
        return rdt
    odt = np.dtype(formats[out].dtype)
    checks = [(f"{program.rhs} is", rdt)]
    if program.op is not None and not program.op.is_user:
        checks.append((f"the update {program} computes", np.dtype(program.op.result_dtype(odt.name, rdt.name))))
    for what, dt in checks:
        if not np.can_cast(dt, odt, casting="same_kind"):
            article = "an" if dt.name.startswith("int") else "a"
            raise DTypeError(f"output {out}'s format holds {odt.name}, but {what} {dt.name}, which it cannot hold "
                             f"without losing values; give {out} {article} {dt.name} format")
    return rdt
