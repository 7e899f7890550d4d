"""The dense reference evaluator: the numpy oracle every compiled kernel is tested against.

:func:`evaluate` runs an index-notation statement densely with numpy and returns
the result and its fill value (the fill a compiled kernel's output must carry).

>>> import numpy as np
>>> A = np.array([[1, 0, 2], [0, 3, 0]])
>>> x = np.array([1, 2, 3])
>>> y, fill = evaluate("y[i] = A[i, j] * x[j]", A=A, x=x)
>>> y, fill
(array([7, 6]), np.int64(0))

Semantics:

* Inputs are numpy arrays (fill 0), Python/numpy scalars (0-d, their own fill),
  scipy.sparse matrices (fill 0) or tensor-like objects with ``to_numpy()`` and
  ``fill``.
* Each index has one extent, inferred from the accesses, which must agree
  (a repeated index in one access reads a diagonal). Index names are global:
  two reductions over ``j`` in different terms must have the same extent.
* ``y[...] = e`` creates a fresh output of ``e``'s dtype; an output passed as
  ``y=`` only fixes the shape (needed when an output index is on no right-side
  access; the value is broadcast). ``y[...] op= e`` starts from the given ``y``,
  or from the operator's identity.
* Literals are strongly typed: bool, int64, float64; except that an int literal beside an
  unsigned integer operand takes that operand's dtype when it fits (``x + 1`` of uint8 ``x``
  is uint8, as numpy's Python ints are).
* The fill is the expression evaluated on the input fills, with reductions of
  ``n`` elements through :meth:`~compiler.algebra.Operator.reduce_fill`.
"""

from __future__ import annotations

import math

import numpy as np

from .algebra import NOVALUE, Operator
from .dtypes import value_dtype
from .errors import DTypeError, ShapeError, SparsescopeError, UsageError, nesting_guard
from .notation.ast import Access, Assign, Call, IndexValue, Literal, Reduce, accesses
from .notation.dtypes import type_literals
from .notation.parser import parse
from .notation.shape import has_shape_operators
from .scipy_arrays import check_scipy_arrays
from .reference_fill import NeedsExtents, as_scalar, check_dtypes, expression_fill
from .values import same_value
from .reference_shape import evaluate_shaped


class EvaluationError(SparsescopeError, ValueError):
    """A program that cannot run on the given tensors (unknown tensor, no initial value, ...)."""


def _as_input(name: str, value):
    """(array, fill) of a tensor-like input, with a supported dtype and a fill of that dtype."""
    if hasattr(value, "to_numpy") and hasattr(value, "fill"):
        arr, fill = np.asarray(value.to_numpy()), value.fill
    elif hasattr(value, "toarray") and hasattr(value, "nnz"):  # scipy.sparse
        if type(value).__module__.startswith("scipy.sparse"):
            check_scipy_arrays(value, f"tensor {name}")   # (scipy's toarray trusts them: a crash, or wrong)
        arr, fill = np.asarray(value.toarray()), 0
    elif isinstance(value, np.ndarray):
        arr, fill = value, 0
    elif isinstance(value, (bool, int, float, np.generic)):
        arr = np.asarray(value)
        fill = value
    else:
        raise UsageError(f"tensor {name}: expected a numpy array, scalar or Tensor, "
                        f"not {type(value).__name__}")
    try:
        dt = value_dtype(arr.dtype)
    except DTypeError as e:
        raise DTypeError(f"tensor {name}: {e}") from None
    arr = arr.astype(dt, copy=False)
    with np.errstate(all="ignore"):
        cast = np.asarray(fill).astype(dt)
    if not same_value(cast[()], fill):
        raise DTypeError(f"tensor {name}: fill value {fill!r} does not fit its dtype {dt.name}")
    return arr, cast[()]


def evaluate(program, functions=None, **tensors):
    """Evaluate ``program`` (text or an :class:`~compiler.notation.ast.Assign`) densely.

    Returns ``(result, fill)``: a numpy array (0-d for a 0-d output) and a numpy
    scalar of the result's dtype.

    >>> import numpy as np
    >>> inf = float("inf")
    >>> B = np.array([[inf, 3.0], [4.0, 2.0]])
    >>> c = np.array([1.0, inf])
    >>> evaluate("a[i] = min[j](B[i, j] + c[j])", B=B, c=c)
    (array([inf,  5.]), np.float64(0.0))
    >>> evaluate("s[] += x[i]", x=np.arange(4), s=10)
    (array(16), np.int64(10))
    >>> evaluate("y[i] = A[i, j] * x[j]", A=np.ones((2, 4)), x=np.ones(5))
    Traceback (most recent call last):
    ...
    compiler.errors.ShapeError: index j has extent 4 in A[i, j] (mode 1) but 5 in x[j] (mode 0)
    """
    with nesting_guard(program):
        return _evaluate(program, functions, tensors)


def _evaluate(program, functions, tensors: dict):
    assign = parse(program, functions) if isinstance(program, str) else program
    if not isinstance(assign, Assign):
        raise UsageError(f"evaluate() needs a statement or an Assign, not {type(assign).__name__}")
    inputs = {name: _as_input(name, value) for name, value in tensors.items()}
    if all(a.tensor in inputs for a in accesses(assign.rhs)):   # (else an error names the missing one below)
        rhs = type_literals(assign.rhs, lambda a: inputs[a.tensor][0].dtype)
        assign = assign if rhs is assign.rhs else Assign(assign.lhs, assign.op, rhs)
    lhs = assign.lhs
    out_name = lhs.tensor
    if has_shape_operators(assign):
        for acc in accesses(assign.rhs):
            if acc.tensor not in inputs:
                known = ", ".join(sorted(inputs)) or "none"
                raise EvaluationError(f"tensor {acc.tensor} (in {acc}) was not given; given tensors: {known}")
        result, rhs_fill = evaluate_shaped(assign, inputs)
        return _update(assign, inputs, result, rhs_fill)

    # -- extents --------------------------------------------------------------
    extents: dict = {}  # Index -> (extent, access, mode)

    def register(acc: Access):
        if acc.tensor not in inputs:
            known = ", ".join(sorted(inputs)) or "none"
            raise EvaluationError(f"tensor {acc.tensor} (in {acc}) was not given; given tensors: {known}")
        arr = inputs[acc.tensor][0]
        if arr.ndim != len(acc.indices):
            raise ShapeError(f"{acc} has {len(acc.indices)} indices but {acc.tensor} has "
                             f"{arr.ndim} mode(s) (shape {tuple(arr.shape)})")
        for mode, (i, n) in enumerate(zip(acc.indices, arr.shape)):
            if i in extents and extents[i][0] != n:
                m0, a0, k0 = extents[i]
                raise ShapeError(f"index {i} has extent {m0} in {a0} (mode {k0}) but {n} in {acc} (mode {mode})")
            extents.setdefault(i, (n, acc, mode))

    for acc in accesses(assign.rhs):
        register(acc)
    given_out = out_name in inputs
    if given_out:
        register(lhs)
    for i in lhs.indices:
        if i not in extents:
            raise ShapeError(f"output index {i} of {lhs} appears in no access on the right side, so "
                             f"its extent is unknown; pass the output {out_name}=... to fix the shape")

    order = list(lhs.indices) + [i for i in extents if i not in lhs.indices]
    pos = {i: k for k, i in enumerate(order)}
    ext = [extents[i][0] for i in order]
    ndim = len(order)

    # -- values ---------------------------------------------------------------
    def value(e) -> np.ndarray:
        if isinstance(e, Access):
            arr = inputs[e.tensor][0]
            names = [pos[i] for i in e.indices]
            uniq = sorted(set(names))
            if names:
                arr = np.einsum(arr, names, uniq)  # permutes, and reads diagonals of repeated indices
            shape = [ext[k] if k in uniq else 1 for k in range(ndim)]
            return arr.reshape(shape)
        if isinstance(e, Literal):
            return np.asarray(e.value, dtype=e.dtype).reshape((1,) * ndim)
        if isinstance(e, IndexValue):   # its coordinates along its own axis
            k = pos[e.index]
            return np.arange(ext[k], dtype=np.int64).reshape([ext[k] if m == k else 1 for m in range(ndim)])
        if isinstance(e, Call):
            args = [value(a) for a in e.args]
            check_dtypes(e, [a.dtype for a in args])
            return e.op(*args)
        if isinstance(e, Reduce):
            body = value(e.body)
            axes = [pos[i] for i in e.indices]
            shape = list(body.shape)
            for k in axes:
                shape[k] = ext[k]
            body = np.broadcast_to(body, shape)
            check_dtypes(e, [body.dtype, body.dtype])
            n = len(axes)
            moved = np.moveaxis(body, axes, list(range(ndim - n, ndim)))
            # an explicit length: -1 is ambiguous when another extent is 0
            merged = moved.reshape(moved.shape[:ndim - n] + (math.prod(moved.shape[ndim - n:]),))
            reduced = np.asarray(e.op.reduce(merged, axis=-1))
            return np.expand_dims(reduced, tuple(sorted(axes)))
        raise TypeError(f"not an index-notation expression: {e!r}")

    rhs = value(assign.rhs)
    rhs_fill = expression_fill(assign.rhs, {name: f for name, (_, f) in inputs.items()},
                               {i: n for i, (n, _, _) in extents.items()})
    # every non-output axis has been reduced to size 1 by now
    rhs = rhs.reshape(rhs.shape[:len(lhs.indices)])
    out_shape = tuple(ext[:len(lhs.indices)])
    rhs = np.broadcast_to(rhs, out_shape)

    return _update(assign, inputs, rhs, rhs_fill)


def _update(assign: Assign, inputs: dict, rhs: np.ndarray, rhs_fill):
    """The result of ``lhs = rhs`` or ``lhs op= rhs`` from the right side's (output-shaped) value."""
    lhs, out_name, out_shape = assign.lhs, assign.lhs.tensor, rhs.shape
    op = assign.op
    if op is None:
        result, result_fill = rhs.copy(), rhs_fill
    else:
        if out_name in inputs:
            init, init_fill = inputs[out_name]
            init = init.reshape(out_shape)
        else:
            ident = op.identity_for(rhs.dtype)
            if ident is NOVALUE:
                raise EvaluationError(f"{lhs} {_spell(op)} ... needs an initial {out_name}: "
                                      f"operator {op.name} has no identity to start from")
            init, init_fill = np.full(out_shape, ident, dtype=rhs.dtype), ident
        try:
            op.result_dtype(init.dtype, rhs.dtype)
        except DTypeError as err:
            raise DTypeError(f"{err} in the update of {lhs} (dtype {init.dtype.name}) "
                             f"with a right side of dtype {rhs.dtype.name}") from None
        result = np.asarray(op(init, rhs))
        result_fill = op.fill(init_fill, rhs_fill)
    if result_fill is NOVALUE:
        # the value off the stored entries depends on the coordinate (B[i] + i): no fill holds
        # everywhere, and the result is dense; it says 0, as a dense output's default
        result_fill = 0
    result_fill = as_scalar(np.asarray(result_fill).astype(result.dtype))
    return result, result_fill


def _spell(op: Operator) -> str:
    from .notation.ast import assign_spelling
    return assign_spelling(op)


__all__ = ["evaluate", "expression_fill", "EvaluationError", "NeedsExtents"]
