"""The index dtype of an output whose format the user named without one, chosen as scipy chooses it.

scipy.sparse gives a result int32 index arrays unless a value they must hold would not fit:
``get_index_dtype(arrays, maxval)`` (scipy/sparse/_sputils.py) returns int64 when ``maxval`` (the
result's largest extent, or its entry count: ``max(shape)`` for a COO, ``max(nnz, n)`` for a
stack) exceeds 2**31 - 1, or when an input index array is wider than int32 (for sparse arrays it
does not look at that array's contents), else int32. Here the same bound decides, once, when a
kernel is lowered: int32 when the output's largest extent and the most entries it can store fit
(:func:`count_bound`, from the operands' stored counts), else int64. The inputs' own index dtypes
do not decide it: a Tensor built from numpy holds int64 indices whatever its size, so scipy's
input rule would never narrow one; what an int32 output must hold is checked instead (coordinates
before a call, each count as the kernel stores it: :mod:`compiler.imperative.narrow`).

Which outputs: one given as :class:`OpenIndex` (the array front end's result for a shorthand
name or no format), or given as a shorthand name (``out="csr"``) to index notation, with shape
operators or without. A Format or a Tensor says its index dtype and keeps it (``csr()`` is int64,
``csr(index_dtype="int32")`` int32).

>>> import numpy as np
>>> from compiler import Tensor, parse_format
>>> from compiler.notation import parse
>>> A = Tensor.from_numpy(np.eye(3), "csr")
>>> fmt, why = fitted_format(parse("C[k, j] = slice(A[i, j], i -> k, (0, 3, 2))"),
...                          parse_format("csr"), {"A": A})
>>> fmt.levels[1].index_dtype.name, why
('int32', 'int32 indices, as scipy chooses them: the largest value an index array of C holds is at most 3 (extents (2, 3); at most 3 entries) <= 2147483647')
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .errors import FormatError, ShapeError
from .format import Format, parse_format, with_index_dtype
from .notation import Access, Assign, Call, Literal, Reduce, free_indices
from .notation.ast import IndexValue
from .notation.infer import infer_shapes
from .notation.shape import Broadcast, ShapeOp
from .tensor import Tensor

INT32_MAX = int(np.iinfo(np.int32).max)


@dataclass(frozen=True)
class OpenIndex:
    """An output format whose index dtype the lowering chooses (int32 where scipy's would be).

    >>> OpenIndex(parse_format("coo")).format.shorthand
    'coo'
    """

    format: Format


def open_output(value, ndim: int):
    """The Format whose index dtype is left open that an output of ``ndim`` modes given as ``value``
    names, or None: an :class:`OpenIndex`'s, or a shorthand name's (``"csr"``; a spec text states
    its dtypes; a name that does not fit is left for the lowering to refuse).

    >>> open_output("csr", 2).shorthand, open_output(parse_format("csr"), 2), open_output("Dense(Element(0.0))", 1)
    ('csr', None, None)
    """
    if isinstance(value, OpenIndex):
        return value.format
    if isinstance(value, str) and "(" not in value:
        try:
            return _shorthand(value, ndim)
        except (FormatError, ShapeError):
            return None
    return None


# (a Format is immutable: the one built for a name, and its narrowed copy, serve every call, so a
# solver's loop over fresh tensors pays the format's construction once)
@functools.lru_cache(maxsize=256)
def _shorthand(name: str, ndim: int) -> Format:
    return parse_format(name, ndim=ndim)


@functools.lru_cache(maxsize=256)
def _narrowed(fmt: Format, index_dtype: str) -> Format:
    return with_index_dtype(fmt, index_dtype)


def stored_bound(value) -> int | None:
    """The most coordinates other than its fill a tensor given as ``value`` holds: its stored count
    (its logical size where one stored value covers a run of coordinates), an array's size, None
    for a format (no data).

    >>> stored_bound(Tensor.from_numpy(np.eye(4), "csr")), stored_bound(np.ones((2, 3))), stored_bound("csr")
    (4, 6, None)
    """
    if isinstance(value, Tensor):
        if any(getattr(lvl, "appends_runs", False) for lvl in value.levels):
            return math.prod(value.shape)
        return int(value.nnz)
    if isinstance(value, (np.ndarray, int, float, bool, complex, np.generic)):
        return int(np.size(value))
    return None


def count_bound(expr, stored: dict, extents: dict) -> int | None:
    """An upper bound on the coordinates of ``expr`` (over its free indices) not at its fill, from
    ``stored`` (tensor name -> :func:`stored_bound`) and ``extents`` (index -> int); None when one
    is unknown. Where every operand is at its fill the result is at the result's, so an entry needs
    an operand's: an access bounds by its stored count, an elementwise call by the sum of its
    arguments' (each times the extents of the call's indices it lacks), a reduction or a shape
    operator that moves coordinates by its operand's, a broadcast by its operand's times the
    new extent.

    >>> from compiler.notation import parse
    >>> p = parse("C[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l) + x[i]")
    >>> count_bound(p.rhs, {"A": 5, "B": 7, "x": 2}, {"l": 4})   # (x's entries meet every l)
    20
    >>> count_bound(parse("C[i, j] = x[i] * y[j]").rhs, {"x": 2, "y": 3}, {"i": 4, "j": 10})
    32
    """
    def extent(i):
        n = extents.get(i, extents.get(getattr(i, "name", None)))
        return n if isinstance(n, int) else None

    def times_missing(n, have, want):
        for i in want:
            if i not in have:
                e = extent(i)
                if e is None or n is None:
                    return None
                n *= e
        return n

    def visit(e):
        if isinstance(e, Access):
            return stored.get(e.tensor)
        if isinstance(e, Literal):
            return 1
        if isinstance(e, IndexValue):
            return extent(e.index)
        if isinstance(e, Call):
            want = free_indices(e)
            total = 0
            for a in e.args:
                n = times_missing(visit(a), set(free_indices(a)), want)
                if n is None:
                    return None
                total += n
            return total
        if isinstance(e, Reduce):
            return visit(e.body)
        if isinstance(e, Broadcast):
            n = visit(e.operand)
            size = e.size if e.size is not None else extent(e.index)
            return None if n is None or size is None else n * size
        if isinstance(e, ShapeOp):   # (collapse, split, concat, slice: each operand entry one or none)
            parts = [visit(c) for c in e.children()]
            return None if None in parts else sum(parts)
        return None

    return visit(expr)


def fitted_format(program: Assign, fmt: Format, tensors: dict) -> tuple[Format, str]:
    """``fmt`` with the index dtype scipy would give the output of ``program`` for ``tensors`` (name
    -> Tensor, array or format), and why ("" for a format with no index arrays). int64 where the output's extents or entry count are
    unknown when lowering (an operand given as a format) or exceed int32's maximum."""
    out = program.lhs.tensor
    if not any(getattr(lvl, "index_dtype", None) is not None for lvl in fmt.levels):
        return fmt, ""
    shapes = {n: tuple(int(x) for x in np.shape(v)) for n, v in tensors.items()
              if n != out and isinstance(v, (Tensor, np.ndarray))}
    try:
        info = infer_shapes(program, shapes)
    except ShapeError:
        info = None   # (reported when the kernel is lowered or called)
    out_shape = None if info is None else info.output
    stored = {n: stored_bound(v) for n, v in tensors.items() if n != out}
    bound = None
    if out_shape is not None and all(isinstance(n, int) for n in out_shape):
        extents = {i: n for i, n in (info.extents or {}).items() if isinstance(n, int)}
        extents.update((i, n) for i, n in zip(program.lhs.indices, out_shape) if not isinstance(i, int))
        entries = count_bound(program.rhs, stored, extents)
        rhs_free = set(free_indices(program.rhs))
        if entries is not None:
            for i, n in zip(program.lhs.indices, out_shape):
                if i not in rhs_free:
                    entries *= n
        whole = math.prod(out_shape)
        bound = whole if entries is None else min(entries, whole)
    if bound is None:
        return _narrowed(fmt, "int64"), (f"int64 indices: the extents of {out} are not known when "
                                                f"lowering (an operand given as a format)")
    maxval = max([bound, *out_shape])
    what = (f"the largest value an index array of {out} holds is at most {maxval} (extents "
            f"{tuple(out_shape)}; at most {bound} entries)")
    if maxval > INT32_MAX:
        return _narrowed(fmt, "int64"), f"int64 indices, as scipy chooses them: {what} > {INT32_MAX}"
    return _narrowed(fmt, "int32"), f"int32 indices, as scipy chooses them: {what} <= {INT32_MAX}"


__all__ = ["OpenIndex", "open_output", "stored_bound", "count_bound", "fitted_format", "INT32_MAX"]
