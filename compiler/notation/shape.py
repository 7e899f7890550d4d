"""Shape operators of index notation (BURRITO, Root et al. 2024, §4): collapse, split, concat,
slice and broadcast, as AST nodes beside :mod:`compiler.notation.ast`'s.

Each operator consumes the indices of its operand(s) that it names and produces new ones: the
consumed indices are bound inside it (not free outside), the produced one(s) are free.

>>> from compiler.notation import parse
>>> prog = parse("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]")
>>> print(prog)
c[k] = collapse(A[i, j], (i, j) -> k) + b[k]
>>> [str(i) for i in free_indices_of(prog.rhs)]
['k']

Coordinates (0-based, half-open), for the operand's coordinates ``x`` of ``i``, ``y`` of ``j``:

* ``collapse(E, (i, j) -> k)``: ``k = x * |j| + y`` (the first listed index is the major one);
* ``split(E, k -> (i, j))``: ``i = k // |j|``, ``j = k % |j|`` (``j:4`` gives ``|j|``);
* ``concat((E0, E1), (j0, j1) -> l)``: ``l = y`` in ``E0``, ``l = |j0| + y`` in ``E1``, ...;
* ``slice(E, j -> k, (start, stop, step))``: ``y = start + step * k`` for every ``k >= 0`` with ``y``
  in the half-open range from ``start`` towards ``stop`` (``step < 0`` walks it backwards: numpy's
  ``E[start:stop:step]`` with normalized, non-wrapping bounds, ``stop = -1`` reaching 0);
* ``broadcast(l, E)`` (``broadcast(l:5, E)``): ``E`` repeated along a new index ``l``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import serialize
from .ast import Access, Call, Expr, Index, Reduce, free_indices, walk


def _index(i) -> Index:
    return i if isinstance(i, Index) else Index(str(i))


def _size_text(i: Index, size) -> str:
    return f"{i}:{size}" if size is not None else str(i)


class ShapeOp(Expr):
    """Base of the shape operators: what they consume and produce, for :func:`free_indices`."""

    def consumed(self, k: int) -> tuple[Index, ...]:
        """The indices of operand ``k`` this operator binds."""
        raise NotImplementedError

    def produced(self) -> tuple[Index, ...]:
        raise NotImplementedError

    def with_children(self, children) -> "ShapeOp":
        """The same operator over new operands (in :meth:`children` order)."""
        raise NotImplementedError

    def with_consumed(self, k: int, indices) -> "ShapeOp":
        """The same operator binding ``indices`` (as many as :meth:`consumed` gives) in operand ``k``."""
        raise NotImplementedError

    def with_produced(self, indices) -> "ShapeOp":
        """The same operator producing ``indices`` (as many as :meth:`produced` gives)."""
        raise NotImplementedError

    def free_of(self, child_free: list) -> tuple[Index, ...]:
        """The free indices of the node from those of its children: the produced ones take the place
        of the first consumed one (a broadcast's goes first)."""
        out: dict[Index, None] = {}
        placed = False
        for k, free in enumerate(child_free):
            gone = set(self.consumed(k))
            for i in free:
                if i in gone:
                    if not placed:
                        out.update(dict.fromkeys(self.produced()))
                        placed = True
                    continue
                out.setdefault(i)
        if not placed:
            out = {**dict.fromkeys(self.produced()), **out}
        return tuple(out)


@serialize.node
@dataclass(frozen=True)
class Collapse(ShapeOp):
    """``collapse(operand, (i, j) -> k)``: ``k = i * |j| + j`` (row-major for ``(i, j)``)."""

    operand: Expr
    indices: tuple[Index, Index]
    result: Index

    def __post_init__(self):
        object.__setattr__(self, "indices", tuple(_index(i) for i in self.indices))
        object.__setattr__(self, "result", _index(self.result))
        if len(self.indices) != 2:
            raise TypeError(f"collapse takes two indices, got {len(self.indices)}")

    def children(self):
        return (self.operand,)

    def consumed(self, k):
        return self.indices

    def produced(self):
        return (self.result,)

    def with_children(self, children):
        return replace(self, operand=children[0])

    def with_consumed(self, k, indices):
        return replace(self, indices=tuple(indices))

    def with_produced(self, indices):
        return replace(self, result=indices[0])

    def notation_text(self, show) -> str:
        i, j = self.indices
        return f"collapse({show(self.operand)}, ({i}, {j}) -> {self.result})"

    __str__ = Expr.__str__


@serialize.node
@dataclass(frozen=True)
class Split(ShapeOp):
    """``split(operand, k -> (i, j))``: ``i = k // |j|``, ``j = k % |j|``; ``sizes`` gives ``|i|``,
    ``|j|`` where no access or output does (``k -> (i, j:4)``)."""

    operand: Expr
    index: Index
    results: tuple[Index, Index]
    sizes: tuple = (None, None)

    def __post_init__(self):
        object.__setattr__(self, "index", _index(self.index))
        object.__setattr__(self, "results", tuple(_index(i) for i in self.results))
        sizes = tuple(self.sizes)
        if len(self.results) != 2 or len(sizes) != 2:
            raise TypeError("split makes two indices, with two sizes (None where inferred)")
        for s in sizes:
            if s is not None and (isinstance(s, bool) or not isinstance(s, int) or s < 0):
                raise TypeError(f"a split size must be a non-negative int or None, not {s!r}")
        object.__setattr__(self, "sizes", sizes)

    def children(self):
        return (self.operand,)

    def consumed(self, k):
        return (self.index,)

    def produced(self):
        return self.results

    def with_children(self, children):
        return replace(self, operand=children[0])

    def with_consumed(self, k, indices):
        return replace(self, index=indices[0])

    def with_produced(self, indices):
        return replace(self, results=tuple(indices))

    def notation_text(self, show) -> str:
        parts = ", ".join(_size_text(i, s) for i, s in zip(self.results, self.sizes))
        return f"split({show(self.operand)}, {self.index} -> ({parts}))"

    __str__ = Expr.__str__


@serialize.node
@dataclass(frozen=True)
class Concat(ShapeOp):
    """``concat((E0, E1, ...), (j0, j1, ...) -> l)``: ``E1``'s ``j1`` continues after ``|j0|``, ..."""

    operands: tuple[Expr, ...]
    indices: tuple[Index, ...]
    result: Index

    def __post_init__(self):
        object.__setattr__(self, "operands", tuple(self.operands))
        object.__setattr__(self, "indices", tuple(_index(i) for i in self.indices))
        object.__setattr__(self, "result", _index(self.result))
        if len(self.operands) < 2 or len(self.operands) != len(self.indices):
            raise TypeError(f"concat takes two or more operands and one index each, got "
                            f"{len(self.operands)} operand(s) and {len(self.indices)} index(es)")

    def children(self):
        return self.operands

    def fill_operand(self, extents: dict | None = None) -> Expr:
        """The operand whose fill the concatenation takes: its first whose part is not empty by ``extents``
        (each index's; one not there counts as not empty), else its first. An empty part's fill is no value
        of the result: ``concat`` of an empty ``B`` of fill NaN and a ``B1`` of fill 0 is 0 where ``B1``
        stores nothing.

        >>> from compiler.notation import parse_expr
        >>> e = parse_expr("concat((B[q, j], B1[r, j]), (q, r) -> p)")
        >>> str(e.fill_operand({Index("q"): 0})), str(e.fill_operand({Index("q"): 2})), str(e.fill_operand())
        ('B1[r, j]', 'B[q, j]', 'B[q, j]')
        """
        return next((x for x, i in zip(self.operands, self.indices) if (extents or {}).get(i) != 0),
                    self.operands[0])

    def consumed(self, k):
        return (self.indices[k],)

    def produced(self):
        return (self.result,)

    def with_children(self, children):
        return replace(self, operands=tuple(children))

    def with_consumed(self, k, indices):
        return replace(self, indices=self.indices[:k] + tuple(indices) + self.indices[k + 1:])

    def with_produced(self, indices):
        return replace(self, result=indices[0])

    def notation_text(self, show) -> str:
        ops = ", ".join(show(e) for e in self.operands)
        idx = ", ".join(map(str, self.indices))
        return f"concat(({ops}), ({idx}) -> {self.result})"

    __str__ = Expr.__str__


@serialize.node
@dataclass(frozen=True)
class Slice(ShapeOp):
    """``slice(operand, j -> k, (start, stop, step))``: ``k`` walks ``j = start, start + step, ...``
    while short of ``stop`` (bounds normalized: no negative wrap-around; ``step != 0``)."""

    operand: Expr
    index: Index
    result: Index
    start: int
    stop: int
    step: int = 1

    def __post_init__(self):
        object.__setattr__(self, "index", _index(self.index))
        object.__setattr__(self, "result", _index(self.result))
        for name in ("start", "stop", "step"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"slice {name} must be an int, not {v!r}")
        if self.step == 0:
            raise TypeError("slice step must not be 0")

    @property
    def count(self) -> int:
        """How many coordinates the slice keeps (``ceil((stop - start) / step)``, at least 0).

        >>> Slice(None, "j", "k", 1, 9, 2).count, Slice(None, "j", "k", 8, -1, -3).count
        (4, 3)
        """
        span = (self.stop - self.start) if self.step > 0 else (self.start - self.stop)
        step = abs(self.step)
        return max(0, (span + step - 1) // step)

    def children(self):
        return (self.operand,)

    def consumed(self, k):
        return (self.index,)

    def produced(self):
        return (self.result,)

    def with_children(self, children):
        return replace(self, operand=children[0])

    def with_consumed(self, k, indices):
        return replace(self, index=indices[0])

    def with_produced(self, indices):
        return replace(self, result=indices[0])

    def notation_text(self, show) -> str:
        return (f"slice({show(self.operand)}, {self.index} -> {self.result}, "
                f"({self.start}, {self.stop}, {self.step}))")

    __str__ = Expr.__str__


@serialize.node
@dataclass(frozen=True)
class Broadcast(ShapeOp):
    """``broadcast(l, operand)`` (``broadcast(l:5, operand)`` with its extent): a new index ``l``."""

    index: Index
    operand: Expr
    size: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "index", _index(self.index))
        s = self.size
        if s is not None and (isinstance(s, bool) or not isinstance(s, int) or s < 0):
            raise TypeError(f"a broadcast size must be a non-negative int or None, not {s!r}")

    def children(self):
        return (self.operand,)

    def consumed(self, k):
        return ()

    def produced(self):
        return (self.index,)

    def with_children(self, children):
        return replace(self, operand=children[0])

    def with_consumed(self, k, indices):
        return self

    def with_produced(self, indices):
        return replace(self, index=indices[0])

    def notation_text(self, show) -> str:
        return f"broadcast({_size_text(self.index, self.size)}, {show(self.operand)})"

    __str__ = Expr.__str__


#: the shape operators' names in the text, as the parser reads them
SHAPE_OPERATORS = {"collapse": Collapse, "split": Split, "concat": Concat, "slice": Slice,
                   "broadcast": Broadcast}


def has_shape_operators(e) -> bool:
    """Whether ``e`` (an expression or statement) uses a shape operator or a constant index.

    >>> from compiler.notation import parse
    >>> has_shape_operators(parse("y[j] = A[2, j]")), has_shape_operators(parse("y[i] = x[i]"))
    (True, False)
    """
    return any(isinstance(n, ShapeOp) or (isinstance(n, Access) and any(isinstance(i, int) for i in n.indices))
               for n in walk(e))


def rename_index(e, old: Index, new: Index):
    """``e`` with the free occurrences of index ``old`` renamed ``new`` (not inside an operand of a
    shape operator or a reduction that binds ``old`` again).

    >>> from compiler.notation import parse_expr
    >>> print(rename_index(parse_expr("slice(A[j], j -> k, (0, 4, 2)) + b[j]"), Index("j"), Index("m")))
    slice(A[j], j -> k, (0, 4, 2)) + b[m]
    """
    if isinstance(e, Access):
        return replace(e, indices=tuple(new if i == old else i for i in e.indices))
    if isinstance(e, Reduce):
        return e if old in e.indices else replace(e, body=rename_index(e.body, old, new))
    if isinstance(e, Call):
        return replace(e, args=tuple(rename_index(a, old, new) for a in e.args))
    if isinstance(e, ShapeOp):
        kids = [c if old in e.consumed(k) else rename_index(c, old, new) for k, c in enumerate(e.children())]
        return e.with_children(kids).with_produced([new if i == old else i for i in e.produced()])
    return e


def distinct_bindings(e, taken=frozenset()):
    """``e`` with each index a shape operator binds bound once only: an index that an earlier
    operator (in pre-order) already bound is renamed in the operand it binds (a fresh name, not in
    ``taken`` nor in ``e``). A consumed index is local to its operand, so this changes nothing
    that ``e`` means; it lets a lowering key an access by its indices, as two slices of one
    tensor by one index name would otherwise read through one iterator.

    >>> from compiler.notation import parse
    >>> e = parse("d[k] = slice(A[j], j -> k, (0, 8, 2)) + slice(A[j], j -> k, (1, 8, 2))").rhs
    >>> print(distinct_bindings(e, {"d", "k"}))
    slice(A[j], j -> k, (0, 8, 2)) + slice(A[j2], j2 -> k, (1, 8, 2))
    """
    names = set(taken) | {i.name for n in walk(e) for i in getattr(n, "indices", ()) if isinstance(i, Index)}
    names |= {i.name for n in walk(e) if isinstance(n, ShapeOp)
              for k in range(len(n.children())) for i in (*n.consumed(k), *n.produced())}
    bound: set = set()

    def fresh(i: Index) -> Index:
        n = 2
        while f"{i.name}{n}" in names:
            n += 1
        names.add(f"{i.name}{n}")
        return Index(f"{i.name}{n}")

    def visit(x):
        if isinstance(x, Call):
            return replace(x, args=tuple(visit(a) for a in x.args))
        if isinstance(x, Reduce):
            return replace(x, body=visit(x.body))
        if not isinstance(x, ShapeOp):
            return x
        kids = []
        for k, c in enumerate(x.children()):
            binds = list(x.consumed(k))
            for q, i in enumerate(binds):
                if i in bound:
                    binds[q] = fresh(i)
                    c = rename_index(c, i, binds[q])
                bound.add(binds[q])
            x = x.with_consumed(k, binds) if binds != list(x.consumed(k)) else x
            kids.append(c)
        return x.with_children([visit(c) for c in kids])

    return visit(e)


def free_indices_of(e) -> tuple[Index, ...]:
    """:func:`compiler.notation.ast.free_indices` (re-exported for shape-aware callers)."""
    return free_indices(e)


__all__ = ["ShapeOp", "Collapse", "Split", "Concat", "Slice", "Broadcast", "SHAPE_OPERATORS",
           "has_shape_operators", "free_indices_of", "rename_index", "distinct_bindings"]
