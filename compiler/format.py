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

import ast
import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import serialize
from .dtypes import is_integer
from .errors import FormatError, ShapeError
from .levels import Dense, Element, Level, SparseCOO, SparseList, flatten, level_class
from .levels.level import exact_key
from .levels.shorthand import shorthand


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
            # (the level classes too: a user's level class may share a built-in one's name, and
            # lower()'s cache must not hand it the built-in's kernel)
            levels, leaf = flatten(self.root)
            key = (self.root.format_key(), self.mode_order, tuple(type(lvl) for lvl in (*levels, leaf)))
            object.__setattr__(self, "_key", key)
        return key

    def __eq__(self, other):
        return self is other or (isinstance(other, Format) and self.key() == other.key())

    def __hash__(self):
        h = self.__dict__.get("_hash")   # (kept: lower()'s cache hashes the formats of every call)
        if h is None:
            h = hash(self.key())
            object.__setattr__(self, "_hash", h)
        return h

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
        return shorthand(self.levels, self.mode_order)

    @property
    def is_dense(self) -> bool:
        """Whether every level is located by coordinate (Dense, or a level that says it is one): the
        format stores every element, in row-major storage order, and a numpy array is its values.

        >>> dense(2).is_dense, csr().is_dense
        (True, False)
        """
        return all(lvl.located_by_coordinate for lvl in self.levels)


def narrow_index_levels(fmt: Format) -> tuple:
    """``(level number, level, storage modes, index dtype)`` of each level whose index dtype is
    narrower than int64: a coordinate or count past its maximum must be refused, not wrapped.

    >>> [(n, lvl.name, list(modes), idt.name) for n, lvl, modes, idt in
    ...  narrow_index_levels(parse_format("csr", index_dtype="int32"))]
    [(1, 'SparseList', [1], 'int32')]
    """
    out, k = [], 0
    for n, lvl in enumerate(fmt.levels):
        idt = getattr(lvl, "index_dtype", None)
        if idt is not None and np.dtype(idt).itemsize < 8:
            out.append((n, lvl, range(k, k + lvl.nmodes), np.dtype(idt)))
        k += lvl.nmodes
    return tuple(out)


def with_index_dtype(fmt: Format, index_dtype) -> Format:
    """``fmt`` with every level that has an index dtype given ``index_dtype`` (the others as they are).

    >>> print(with_index_dtype(parse_format("csr"), "int32"))
    Dense(SparseList(Element(0.0), index_dtype='int32'))
    """
    levels, node = flatten(fmt.root)
    idt = np.dtype(index_dtype)
    for lvl in reversed(levels):
        given = {"index_dtype": idt} if getattr(lvl, "index_dtype", None) is not None else {}
        node = dataclasses.replace(lvl, child=node, **given)
    return Format(node, fmt.mode_order)


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
    >>> parse_format("Dense(SparseList(Element(0.0))), mode_order=(1, 0)") == parse_format(str(csc()))
    True
    """
    if isinstance(fmt, Format):
        return fmt
    if isinstance(fmt, Level):
        return Format(fmt)
    if isinstance(fmt, str):
        # (formats are immutable: a shorthand's is built once per set of arguments; the array front end asks for a
        # default result's format at each compute, and building one takes 40 us)
        key = (fmt, ndim, exact_key(fill), dtype, index_dtype)
        try:
            made = _SHORTHAND_MADE.get(key)
        except TypeError:   # (an argument that is no key: built, and refused where it is wrong)
            key = made = None
        if made is None:
            made = _parse_text(fmt, ndim, fill, dtype, index_dtype)
            if key is not None:
                if len(_SHORTHAND_MADE) >= 512:
                    _SHORTHAND_MADE.clear()
                _SHORTHAND_MADE[key] = made
        return made
    raise FormatError(f"cannot use {type(fmt).__name__} {fmt!r} as a format")


#: (text, ndim, exact_key(fill), dtype, index_dtype) -> the Format parse_format made of them
_SHORTHAND_MADE: dict = {}


def _parse_text(fmt: str, ndim, fill, dtype, index_dtype) -> Format:
    """:func:`parse_format` of a string: a shorthand name or a level spec's text."""
    key = fmt.strip().lower()
    if "(" in key:
        return _format_from_spec_text(fmt)
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


# names a spec's text may use besides the level classes: the way floats and bools print
_SPEC_NAMES = {"inf": float("inf"), "nan": float("nan"), "True": True, "False": False}


def _format_from_spec_text(text: str) -> Format:
    """The Format a printed spec spells (``str(fmt)``: level constructors and an optional
    ``mode_order=``), read from the text's syntax tree: nothing in it is evaluated as Python.
    A leaf with a float fill and no dtype is float64, as printed.

    >>> print(_format_from_spec_text("SparseCOO(2, Element(-inf, dtype='float32'))"))
    SparseCOO(2, Element(-inf, dtype='float32'))
    >>> _format_from_spec_text("Dense(Element(0.0), size=exit())")
    Traceback (most recent call last):
    ...
    compiler.errors.FormatError: format 'Dense(Element(0.0), size=exit())': exit(...) is not a level format
    """
    where = f"format {text!r}" if len(text) <= 100 else f"format {text[:60]!r}... ({len(text)} characters)"
    try:
        call = ast.parse(f"Format({text.strip()})", mode="eval").body
    except (SyntaxError, RecursionError, MemoryError, ValueError) as e:   # (too deep: RecursionError)
        detail = e.msg if isinstance(e, SyntaxError) else "nested too deep"
        raise FormatError(f"{where}: cannot read it as a level spec ({detail}); write it as "
                          f"Dense(SparseList(Element(0.0))), optionally followed by , mode_order=(1, 0)") from None
    if len(call.args) != 1 or any(k.arg != "mode_order" for k in call.keywords):
        raise FormatError(f"{where}: a spec is one root level, optionally followed by , mode_order=(...)")
    root = _spec_value(call.args[0], where)
    if not isinstance(root, Level):
        raise FormatError(f"{where}: the root is {root!r}, not a level such as Dense(...)")
    order = _spec_value(call.keywords[0].value, where) if call.keywords else None
    try:
        return Format(root, order)
    except (TypeError, ValueError) as e:
        raise FormatError(f"{where}: {e}") from None


def _spec_value(node, where: str):
    """The value a node of a spec's syntax tree spells: a number, string, tuple, or a level."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
        return node.value
    if isinstance(node, ast.Name) and node.id in _SPEC_NAMES:
        return _SPEC_NAMES[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _spec_value(node.operand, where)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Tuple):
        return tuple(_spec_value(e, where) for e in node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        cls = _level_named(node.func.id, where)
        args = [_spec_value(a, where) for a in node.args]
        kwargs = {k.arg: _spec_value(k.value, where) for k in node.keywords if k.arg is not None}
        if cls is Element and len(args) < 3 and "dtype" not in kwargs and args and type(args[0]) is float:
            kwargs["dtype"] = "float64"   # (a float64 leaf prints without its dtype, as the shorthands make it)
        try:
            return cls(*args, **kwargs)
        except (TypeError, ValueError) as e:   # (a FormatError is a ValueError: it names the level)
            raise FormatError(f"{where}: {node.func.id}(...): {e}") from None
    raise FormatError(f"{where}: {ast.unparse(node)} is not a number, a tuple or a level such as Dense(...)")


def _level_named(name: str, where: str) -> type:
    try:
        return level_class(name)
    except FormatError:
        raise FormatError(f"{where}: {name}(...) is not a level format") from None
