"""Data-free tensor formats: a level spec plus a mode order, and the common shorthands.

A :class:`Format` is hashable and compares by its ``format_key`` (level classes,
index dtypes, value dtype, fill, mode order), so it can key a kernel cache.

>>> print(csr())
Dense(SparseList(Element(0.0)))
>>> print(csc())
Dense(SparseList(Element(0.0))), mode_order=(1, 0)
>>> csr() == parse_format("csr"), csr() == csc(), csr().shorthand
(True, False, 'csr')
>>> parse_format(Dense(SparseList(Element(0.0, dtype="float64")))) == csr()
True
>>> parse_format(Dense(SparseList(Element(0.0)))) == csr()  # a spec without dtype is not float64
False
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import serialize
from .dtypes import is_integer
from .errors import FormatError, ShapeError
from .levels import Dense, Element, Level, SparseCOO, SparseList, flatten


def checked_mode_order(given, ndim: int, where: str = "") -> tuple[int, ...]:
    """``given`` (None: storage order is logical order) as a permutation of ``range(ndim)``, or a
    FormatError saying why it is not one.

    >>> checked_mode_order([1, 0], 2), checked_mode_order(None, 3)
    ((1, 0), (0, 1, 2))
    >>> checked_mode_order("ab", 2)
    Traceback (most recent call last):
    ...
    compiler.errors.FormatError: mode_order 'ab' must be a tuple of mode numbers, a permutation of range(2)
    """
    if given is None:
        return tuple(range(ndim))
    if isinstance(given, str) or not np.iterable(given) or not all(is_integer(m) for m in given):
        raise FormatError(f"mode_order {given!r} must be a tuple of mode numbers, a permutation of "
                          f"range({ndim}){where}")
    order = tuple(int(m) for m in given)
    if sorted(order) != list(range(ndim)):
        raise FormatError(f"mode_order {order} is not a permutation of range({ndim}){where}")
    return order


@serialize.node
@dataclass(frozen=True, eq=False)
class Format:
    """A data-free format: the root level spec and the storage order of the modes.

    ``mode_order[k]`` is the mode stored by storage level ``k`` (CSC has ``(1, 0)``).
    """

    root: Level
    mode_order: Any = None

    def __post_init__(self):
        levels, _ = flatten(self.root)
        object.__setattr__(self, "root", self.root.spec())
        ndim = sum(lvl.nmodes for lvl in levels)
        order = checked_mode_order(self.mode_order, ndim, f" for {self.root.spec_str()}")
        object.__setattr__(self, "mode_order", order)

    @property
    def levels(self) -> tuple[Level, ...]:
        """The non-leaf level specs, outermost first."""
        return flatten(self.root)[0]

    @property
    def leaf(self) -> Level:
        return flatten(self.root)[1]

    @property
    def ndim(self) -> int:
        return len(self.mode_order)

    @property
    def fill(self):
        return self.leaf.fill

    @property
    def dtype(self):
        return self.leaf.dtype

    def key(self) -> tuple:
        """The hashable description equal formats share (computed once: formats are immutable)."""
        key = self.__dict__.get("_key")
        if key is None:
            key = (self.root.format_key(), self.mode_order)
            object.__setattr__(self, "_key", key)
        return key

    def __eq__(self, other):
        return self is other or (isinstance(other, Format) and self.key() == other.key())

    def __hash__(self):
        return hash(self.key())

    def __str__(self) -> str:
        s = self.root.spec_str()
        if self.mode_order != tuple(range(self.ndim)):
            s += f", mode_order={self.mode_order}"
        return s

    def __repr__(self) -> str:
        return f"Format({self})"

    @property
    def shorthand(self) -> str | None:
        """The shorthand this format's structure matches ("csr", "coo", ...), or None."""
        names = tuple(lvl.name for lvl in self.levels)
        identity = self.mode_order == tuple(range(self.ndim))
        if all(n == "Dense" for n in names) and identity:
            return "dense"
        if names == ("Dense", "SparseList"):
            return {(0, 1): "csr", (1, 0): "csc"}[self.mode_order]
        if names == ("SparseCOO",) and identity:
            return "coo"
        if names == ("SparseList",):
            return "sparse_vector"
        if names == ("SparseList", "SparseList") and identity:
            return "dcsr"
        if len(names) >= 3 and all(n == "SparseList" for n in names) and identity:
            return "csf"
        return None


def _leaf(fill, dtype) -> Element:
    return Element(fill, dtype=dtype)


def dense(ndim: int = 2, fill=0.0, dtype="float64") -> Format:
    """All levels Dense.

    >>> print(dense(3))
    Dense(Dense(Dense(Element(0.0))))
    """
    root: Level = _leaf(fill, dtype)
    for _ in range(ndim):
        root = Dense(root)
    return Format(root)


def csr(fill=0.0, dtype="float64", index_dtype="int64") -> Format:
    """Compressed sparse rows: ``Dense(SparseList(Element))``."""
    return Format(Dense(SparseList(_leaf(fill, dtype), index_dtype=index_dtype)))


def csc(fill=0.0, dtype="float64", index_dtype="int64") -> Format:
    """Compressed sparse columns: CSR's levels with mode order ``(1, 0)``."""
    return Format(Dense(SparseList(_leaf(fill, dtype), index_dtype=index_dtype)), (1, 0))


def coo(ndim: int = 2, fill=0.0, dtype="float64", index_dtype="int64") -> Format:
    """Coordinate list: one ``SparseCOO(ndim)`` level.

    >>> print(coo(3, fill=1.5))
    SparseCOO(3, Element(1.5))
    """
    return Format(SparseCOO(ndim, _leaf(fill, dtype), index_dtype=index_dtype))


def dcsr(fill=0.0, dtype="float64", index_dtype="int64") -> Format:
    """Doubly compressed rows: ``SparseList(SparseList(Element))``."""
    return Format(SparseList(SparseList(_leaf(fill, dtype), index_dtype=index_dtype),
                             index_dtype=index_dtype))


def sparse_vector(fill=0.0, dtype="float64", index_dtype="int64") -> Format:
    """A sparse vector: ``SparseList(Element)``."""
    return Format(SparseList(_leaf(fill, dtype), index_dtype=index_dtype))


def csf(ndim: int = 3, fill=0.0, dtype="float64", index_dtype="int64") -> Format:
    """Compressed sparse fibers: ``ndim`` nested SparseLists.

    >>> print(csf())
    SparseList(SparseList(SparseList(Element(0.0))))
    """
    root: Level = _leaf(fill, dtype)
    for _ in range(ndim):
        root = SparseList(root, index_dtype=index_dtype)
    return Format(root)


#: shorthand name -> (builder, fixed ndim or None when it follows the data)
_SHORTHANDS = {
    "dense": (dense, None),
    "csr": (csr, 2),
    "csc": (csc, 2),
    "coo": (coo, None),
    "dcsr": (dcsr, 2),
    "sparse": (sparse_vector, 1),
    "sv": (sparse_vector, 1),
    "sparse_vector": (sparse_vector, 1),
    "csf": (csf, None),
}


def parse_format(fmt, *, ndim: int | None = None, fill=0.0, dtype="float64",
                 index_dtype="int64") -> Format:
    """Normalize a shorthand string, a level spec or a :class:`Format` to a Format.

    For strings, ``fill``, ``dtype`` and ``index_dtype`` fill in the leaf and the
    sparse levels, and ``ndim`` picks the order of "dense", "coo" and "csf" (and is
    checked against the fixed order of the others).

    >>> print(parse_format("coo", ndim=3, dtype="int32", fill=0))
    SparseCOO(3, Element(0, dtype='int32'))
    >>> parse_format("csr", ndim=1)
    Traceback (most recent call last):
    ...
    compiler.errors.ShapeError: format 'csr' is for 2-D tensors, not 1-D
    """
    if isinstance(fmt, Format):
        return fmt
    if isinstance(fmt, Level):
        return Format(fmt)
    if isinstance(fmt, str):
        key = fmt.strip().lower()
        if key not in _SHORTHANDS:
            raise FormatError(f"unknown format {fmt!r}; use one of {', '.join(_SHORTHANDS)}, "
                              f"a level spec such as Dense(SparseList(Element(0.0))), or a Format")
        build, fixed = _SHORTHANDS[key]
        if ndim is not None and (not is_integer(ndim) or ndim < 0):
            raise ShapeError(f"format {fmt!r}: ndim must be the number of modes, an integer >= 0; got {ndim!r}")
        if fixed is not None:
            if ndim is not None and ndim != fixed:
                raise ShapeError(f"format {fmt!r} is for {fixed}-D tensors, not {ndim}-D")
            if build is dense:
                return build(fixed, fill=fill, dtype=dtype)
            return build(fill=fill, dtype=dtype, index_dtype=index_dtype)
        if build is dense:
            return dense(2 if ndim is None else ndim, fill=fill, dtype=dtype)
        default = 3 if build is csf else 2
        return build(default if ndim is None else ndim, fill=fill, dtype=dtype, index_dtype=index_dtype)
    raise FormatError(f"cannot use {type(fmt).__name__} {fmt!r} as a format")
