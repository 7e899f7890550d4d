"""The dense oracle of index notation with shape operators: each sub-expression is a numpy array with
one named axis per free index, so collapse is a reshape, concat a concatenate, slice a take.

:func:`compiler.reference.evaluate` hands a program with shape operators here, after which it
applies the assignment (``=`` or ``op=``) as for any other program.

>>> import numpy as np
>>> from compiler.reference import evaluate
>>> A = np.array([[0, 1], [2, 3], [4, 5]])
>>> evaluate("c[k] = collapse(A[i, j], (j, i) -> k)", A=A)[0]     # A.ravel(order="F")
array([0, 2, 4, 1, 3, 5])
>>> evaluate("y[k] = slice(x[j], j -> k, (4, -1, -2))", x=np.arange(6))[0]
array([4, 2, 0])
"""

from __future__ import annotations

import math

import numpy as np

from .errors import DTypeError
from .notation.ast import Access, Assign, Call, Index, Literal, Reduce
from .notation.infer import infer_shapes, slice_coordinates
from .notation.shape import Broadcast, Collapse, Concat, Slice, Split
from .reference_fill import check_dtypes, expression_fill


class _Labelled:
    """An array and the index of each of its axes (every axis at its index's full extent)."""

    def __init__(self, arr: np.ndarray, axes: tuple):
        self.arr, self.axes = arr, tuple(axes)

    def aligned(self, order: tuple) -> np.ndarray:
        """The array with axes in ``order`` (size 1 where it has no such axis), for broadcasting."""
        missing = [i for i in order if i not in self.axes]
        arr = self.arr.reshape(self.arr.shape + (1,) * len(missing))
        axes = self.axes + tuple(missing)
        return np.transpose(arr, [axes.index(i) for i in order]) if order else arr

    def moved_first(self, i: Index) -> tuple[np.ndarray, tuple]:
        k = self.axes.index(i)
        return np.moveaxis(self.arr, k, 0), self.axes[:k] + self.axes[k + 1:]


def evaluate_shaped(assign: Assign, inputs: dict):
    """``(rhs, fill)``: the right side of ``assign`` as an array in the output's shape, and its fill."""
    shapes = {name: np.shape(arr) for name, (arr, _) in inputs.items()}
    info = infer_shapes(assign, shapes)
    extents = info.extents

    def value(e) -> _Labelled:
        if isinstance(e, Access):
            arr = inputs[e.tensor][0]
            fixed = tuple(i if isinstance(i, int) else slice(None) for i in e.indices)
            arr = arr[fixed]
            names = [i for i in e.indices if isinstance(i, Index)]
            uniq = list(dict.fromkeys(names))
            if names:
                labels = [uniq.index(i) for i in names]
                arr = np.einsum(arr, labels, list(range(len(uniq))))  # reads diagonals of repeated indices
            return _Labelled(np.asarray(arr), tuple(uniq))
        if isinstance(e, Literal):
            return _Labelled(np.asarray(e.value, dtype=e.dtype), ())
        if isinstance(e, Call):
            args = [value(a) for a in e.args]
            order = tuple(dict.fromkeys(i for a in args for i in a.axes))
            check_dtypes(e, [a.arr.dtype for a in args])
            out = np.asarray(e.op(*[a.aligned(order) for a in args]))
            return _Labelled(np.broadcast_to(out, tuple(extents[i] for i in order)).copy(), order)
        if isinstance(e, Reduce):
            body = value(e.body)
            check_dtypes(e, [body.arr.dtype, body.arr.dtype])
            keep = tuple(i for i in body.axes if i not in e.indices)
            arr = body.aligned(keep + tuple(e.indices))
            arr = arr.reshape(arr.shape[:len(keep)] + (math.prod(arr.shape[len(keep):]),))
            return _Labelled(np.asarray(e.op.reduce(arr, axis=-1)), keep)
        if isinstance(e, Collapse):
            v = value(e.operand)
            (i, j), k = e.indices, e.result
            rest = tuple(x for x in v.axes if x not in (i, j))
            arr = v.aligned((i, j) + rest)
            arr = arr.reshape((extents[i] * extents[j],) + arr.shape[2:])
            return _Labelled(arr, (k,) + rest)
        if isinstance(e, Split):
            arr, rest = value(e.operand).moved_first(e.index)
            i, j = e.results
            return _Labelled(arr.reshape((extents[i], extents[j]) + arr.shape[1:]), (i, j) + rest)
        if isinstance(e, Concat):
            parts, rest = [], None
            for a, i in zip(e.operands, e.indices):
                arr, others = value(a).moved_first(i)
                if rest is None:
                    rest = others
                parts.append(_Labelled(arr, (i,) + others).aligned((i,) + rest))
            try:
                dtype = np.result_type(*parts)
            except TypeError:
                raise DTypeError(f"{e}: the operands' dtypes {', '.join(p.dtype.name for p in parts)} have no "
                                 f"common dtype") from None
            return _Labelled(np.concatenate([p.astype(dtype, copy=False) for p in parts], axis=0), (e.result,) + rest)
        if isinstance(e, Slice):
            arr, rest = value(e.operand).moved_first(e.index)
            return _Labelled(arr[np.asarray(slice_coordinates(e), dtype=np.int64)], (e.result,) + rest)
        if isinstance(e, Broadcast):
            v = value(e.operand)
            n = extents[e.index]
            arr = np.broadcast_to(v.arr[None], (n,) + v.arr.shape)
            return _Labelled(arr, (e.index,) + v.axes)
        raise TypeError(f"not an index-notation expression: {e!r}")

    rhs = value(assign.rhs)
    out = tuple(assign.lhs.indices)
    arr = np.broadcast_to(rhs.aligned(out), info.output) if out else rhs.arr.reshape(())
    fill = expression_fill(assign.rhs, {name: f for name, (_, f) in inputs.items()}, extents)
    return np.array(arr), fill


__all__ = ["evaluate_shaped"]
