"""The fill of an index-notation expression, and its operators' dtype checks, as the dense oracle
computes them: shared by :mod:`compiler.reference`, :mod:`compiler.reference_shape` (shape
operators) and the kernels' runtime, which gives a fresh dense output the same fill.

>>> from compiler.notation import parse
>>> expression_fill(parse("y[i] = A[i, j] * x[j]").rhs, {"A": 0.0, "x": 5.0}, None)
np.float64(0.0)
"""

from __future__ import annotations

import math

import numpy as np

from .algebra import NOVALUE
from .errors import DTypeError
from .notation.ast import Access, Call, IndexValue, Literal, Reduce
from .notation.shape import Concat, ShapeOp
from .values import same_value


def as_scalar(x):
    """``x`` as a numpy scalar (a 0-d array's element)."""
    return np.asarray(x)[()]


def expression_fill(e, fills: dict, extents: dict):
    """The fill of expression ``e``: ``e`` evaluated on the fills of its tensors (``fills``, by
    tensor name), a reduction over ``n`` elements (the product of its indices' ``extents``, by
    :class:`~compiler.notation.ast.Index`) through :meth:`~compiler.algebra.Operator.reduce_fill`.

    A kernel's fresh dense output carries this fill, as :func:`compiler.reference.evaluate`'s result does.
    With ``extents=None``, the fill whatever the extents, or :class:`NeedsExtents`: a
    reduction has one only where its body's fill is the reduction's identity.

    >>> from compiler.notation import parse
    >>> from compiler.notation.ast import Index
    >>> prog = parse("y[i] = sum[j](A[i, j] + 1)")
    >>> expression_fill(prog.rhs, {"A": 2.0}, {Index("i"): 3, Index("j"): 4})
    np.float64(12.0)
    >>> expression_fill(parse("y[i] = A[i, j] * x[j]").rhs, {"A": 0.0, "x": 5.0}, None)
    np.float64(0.0)
    """
    if isinstance(e, Access):
        return fills[e.tensor]
    if isinstance(e, Literal):
        return as_scalar(np.asarray(e.value, dtype=e.dtype))
    if isinstance(e, IndexValue):   # a different value at every coordinate: no fill of its own
        return NOVALUE
    if isinstance(e, Call):
        return e.op.fill(*[expression_fill(a, fills, extents) for a in e.args])
    if isinstance(e, Concat):
        # (its first non-empty part's: a kernel's output stores the others' fills where they differ)
        parts = [expression_fill(x, fills, extents) for x in e.operands]
        if all(same_value(f, parts[0]) for f in parts):
            return parts[0]
        if extents is None:
            raise NeedsExtents(f"{e} has a fill only for given extents of {', '.join(map(str, e.indices))}")
        chosen = e.fill_operand(extents)
        return next(f for x, f in zip(e.operands, parts) if x is chosen)
    if isinstance(e, ShapeOp):   # (a shape operator moves its operand's values: the fill stays)
        return expression_fill(e.children()[0], fills, extents)
    if isinstance(e, Reduce):
        body = expression_fill(e.body, fills, extents)
        if extents is None:   # (an identity reduced over any count is the identity)
            identity = e.op.identity_for(np.asarray(body).dtype)
            if identity is NOVALUE or not same_value(body, identity):
                raise NeedsExtents(f"{e} has a fill only for given extents of {', '.join(map(str, e.indices))}")
            return identity
        return e.op.reduce_fill(body, math.prod(extents[i] for i in e.indices))
    raise TypeError(f"not an index-notation expression: {e!r}")


class NeedsExtents(LookupError):
    """A reduction's fill depends on how many elements it reduces (see :func:`expression_fill`)."""


def check_dtypes(e, dtypes):
    """Re-raise an operator's DTypeError naming the offending operand (and its tensor)."""
    try:
        e.op.result_dtype(*dtypes)
    except DTypeError as err:
        k = getattr(err, "position", None)
        operands = e.args if isinstance(e, Call) else (e.body, e.body)
        if k is None or k >= len(operands):
            raise DTypeError(f"{err} in {e}") from None
        arg = operands[k]
        who = f"tensor {arg.tensor}" if isinstance(arg, Access) else f"{arg}"
        raise DTypeError(f"{err} in {e}: {who} has dtype {dtypes[k].name}") from None
