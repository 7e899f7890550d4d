"""BURRITO's sequence expressions (shape-operators.md §4): the ordered coordinate sets a forall
iterates once shape operators are in the program.

A leaf is a :class:`Level`, one level iterator of a tensor (``i_A``: tensor ``A``, mode 0, its
kind and size), or the universe :class:`Universe` ``U_i`` of a broadcast. The combinators are
:class:`Union` (``∪``, from ``+``), :class:`Intersect` (``∩``, from ``*``), :class:`Product`
(``×``, collapse), :class:`Concat` (``⊔``, concat), :class:`Project` (``π0``/``π1``, split) and
:class:`Slice` (``a[s:e:r]``), :class:`Stride` (``a[k::J]``, a split's major index inside its minor one's
loop); :class:`Offset` (``|a| + X``), :class:`Pad` (``X + |b|``),
:class:`Empty` (``∅``) and :class:`Full` (``Ƒ``) only appear while a lattice simplifies. (The
paper writes full as 𝓕, U+1D4D5, a glyph only math fonts draw: the explorer showed it in another
font, wider than its line's; Ƒ, U+0191, is in the monospace fonts the code and drawings use.)

Every node has a logical :meth:`~Seq.size` (the extent of the dimension it iterates, not its
number of coordinates), a :attr:`~Seq.dense` predicate, its leaves (:meth:`~Seq.iters`) and the
leaves its loop advances (:meth:`~Seq.iterated`: a concatenation's loop advances only its left
side). :func:`coordinates` is the set-semantics reference evaluator every lattice and CFIR
interpreter is checked against.

Data are the stored coordinates of each tensor (``{"A": {(0, 1), (1, 0)}, ...}``): a dense
level holds every coordinate of its extent, a compressed or singleton level those stored under
its parent's coordinate (the parent is bound by an enclosing product, or by :func:`bind` from
an enclosing loop).

>>> A = Level("A", 0, "dense", 2, "i"); A1 = Level("A", 1, "compressed", 3, "j")
>>> b = Level("b", 0, "compressed", 6, "k")
>>> s = Union(Product(A, A1), b)
>>> print(s, s.size(), s.dense)
(i_A × j_A) ∪ k_b 6 False
>>> sorted(coordinates(s, {"A": {(0, 1), (1, 0), (1, 2)}, "b": {(4,)}}))
[1, 3, 4, 5]
>>> print(s.text(ascii=True))
(i_A * j_A) | k_b
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from .. import serialize
from ..errors import SparsescopeError

KINDS = ("dense", "compressed", "singleton")


class SequenceError(SparsescopeError, ValueError):
    """A sequence expression that does not fit together (sizes, slice bounds, an unbound level)."""


class Seq:
    """Base of the sequence expression nodes (frozen dataclasses; equality is structural)."""

    def size(self) -> int:
        raise NotImplementedError

    @property
    def dense(self) -> bool:
        raise NotImplementedError

    def children(self) -> tuple:
        return ()

    def iters(self) -> frozenset:
        """The leaves (levels and universes) this sequence reads."""
        out = frozenset()
        for c in self.children():
            out |= c.iters()
        return out

    def iterated(self) -> frozenset:
        """The leaves the loop over this sequence advances (a concatenation's: its left side's)."""
        out = frozenset()
        for c in self.children():
            out |= c.iterated()
        return out

    def text(self, ascii: bool = False) -> str:
        return _text(self, ascii, top=True)

    def __str__(self) -> str:
        return self.text()


@serialize.node
@dataclass(frozen=True)
class Level(Seq):
    """Level ``mode`` of ``tensor``, iterated by index ``index``: printed ``i_A``.

    ``reverse``: the level walked from its last coordinate to its first (a slice with a negative
    step), its coordinate ``x`` read as ``extent - 1 - x`` so the sequences above it still see
    coordinates in increasing order; printed ``rev(i_A)``. :meth:`real` maps a coordinate back.
    """

    tensor: str
    mode: int
    kind: str
    extent: int
    index: str = "i"
    reverse: bool = False
    #: the tensor whose first level this walks for the rows a column of it located there may be in (``A[i, 1]`` of a
    #: COO, :func:`~compiler.lattice.seqlocated.rows_walked`): the leaves of one such tensor, one a column, walk one
    #: set of coordinates and run out together (:func:`~compiler.lattice.seqlattice.build_seq_lattice`)
    rows_of: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise SequenceError(f"level {self.mode} of {self.tensor}: kind {self.kind!r} is not one of {KINDS}")
        if self.extent < 0 or self.mode < 0:
            raise SequenceError(f"level {self.mode} of {self.tensor}: negative size or mode")

    @property
    def key(self) -> tuple:
        return (self.tensor, self.mode)

    @property
    def parent_key(self):
        return (self.tensor, self.mode - 1) if self.mode else None

    def real(self, x: int) -> int:
        """The stored coordinate at this leaf's coordinate ``x`` (itself unless reversed)."""
        return self.extent - 1 - x if self.reverse else x

    def size(self) -> int:
        return self.extent

    @property
    def dense(self) -> bool:
        return self.kind == "dense"

    def iters(self) -> frozenset:
        return frozenset([self])

    iterated = iters


@serialize.node
@dataclass(frozen=True)
class Universe(Seq):
    """``U_i``: every coordinate of ``[0, extent)`` (a broadcast dimension). ``owner`` tells apart
    universes of one index that need cursors of their own: the broadcast terms of a collapsed sum,
    ``(U_j#1 × k_x) ∪ (U_j#2 × k_y)``, each the outer loop of its own product.

    >>> print(Union(Universe(3, "j", "1"), Universe(3, "j")))
    U_j#1 ∪ U_j
    """

    extent: int
    index: str = "i"
    owner: str = ""
    #: the concatenations whose one part holds it (a constant, a broadcast or a fill in that part, along
    #: another index): per concatenation, the leaf keys of that part's concatenated index, and of all
    #: its parts' (:func:`~compiler.lattice.seqparts.tie`); it is :meth:`away` where a loop is at another part
    ties: tuple = ()

    @property
    def key(self) -> tuple:
        return ("U", self.index, self.extent, self.owner) + ((self.ties,) if self.ties else ())

    def away(self, live) -> bool:
        """Whether a loop is at another part of a concatenation it is tied to (``live(key)``: whether
        the leaf of ``key`` is at the loops' coordinate): no leaf of its part is, one of another's is.
        Where no loop over that concatenated index is around, it is there at every coordinate.

        >>> u = Universe(3, "j", "l_B", ((frozenset([("B", 0)]), frozenset([("A", 0), ("B", 0)])),))
        >>> u.away({("A", 0)}.__contains__), u.away({("B", 0)}.__contains__), u.away(set().__contains__)
        (True, False, False)
        """
        return any(not any(map(live, part)) and any(map(live, parts)) for part, parts in self.ties)

    def size(self) -> int:
        return self.extent

    dense = True

    def iters(self) -> frozenset:
        return frozenset([self])

    iterated = iters


def side_key(key):
    """A leaf's key as a concatenation's part tells it (:attr:`Universe.ties`): a universe's without its
    owner and ties (a term of a collapsed sum owns its universes apart, at the same coordinates).

    >>> side_key(Universe(3, "l", "1").key), side_key(("A", 0))
    (('U', 'l', 3), ('A', 0))
    """
    return key[:3] if isinstance(key, tuple) and len(key) > 3 and key[0] == "U" else key


@serialize.node
@dataclass(frozen=True)
class Empty(Seq):
    """``∅``: a sparse sequence with nothing left (``was`` names what it replaced, for printing)."""

    extent: int
    was: str = field(default="", compare=False)

    def size(self) -> int:
        return self.extent

    dense = False


@serialize.node
@dataclass(frozen=True)
class Full(Seq):
    """``Ƒ``: a dense sequence that has been iterated to its end."""

    extent: int
    was: str = field(default="", compare=False)

    def size(self) -> int:
        return self.extent

    dense = True


def _same_size(op: str, a: Seq, b: Seq) -> None:
    if a.size() != b.size():
        raise SequenceError(f"{a} {op} {b}: the operands iterate dimensions of different sizes "
                            f"({a.size()} and {b.size()})")


@dataclass(frozen=True)
class _Merge(Seq):
    """Two sequences over one dimension merged coordinate by coordinate (∪ or ∩, ``symbol``)."""

    a: Seq
    b: Seq
    symbol = ""

    def __post_init__(self):
        _same_size(self.symbol, self.a, self.b)

    def children(self):
        return (self.a, self.b)

    def size(self):
        return self.a.size()

    @property
    def dense(self):
        return self.a.dense and self.b.dense


@serialize.node
@dataclass(frozen=True)
class Union(_Merge):
    """``a ∪ b``: coordinates of either (the sequence of ``+``)."""

    symbol = "∪"


@serialize.node
@dataclass(frozen=True)
class Intersect(_Merge):
    """``a ∩ b``: coordinates of both (the sequence of ``*``)."""

    symbol = "∩"


@serialize.node
@dataclass(frozen=True)
class Product(Seq):
    """``a × b``: ``x·|b| + y`` for ``x`` in ``a`` and ``y`` in ``b`` under ``x`` (collapse)."""

    a: Seq
    b: Seq

    def children(self):
        return (self.a, self.b)

    def size(self):
        return self.a.size() * self.b.size()

    @property
    def dense(self):
        return self.a.dense and self.b.dense


@serialize.node
@dataclass(frozen=True)
class Concat(Seq):
    """``a ⊔ b``: ``a``'s coordinates, then ``b``'s shifted by ``|a|`` (concat)."""

    a: Seq
    b: Seq

    def children(self):
        return (self.a, self.b)

    def size(self):
        return self.a.size() + self.b.size()

    @property
    def dense(self):
        return self.a.dense and self.b.dense

    def iterated(self):
        return self.a.iterated()


@serialize.node
@dataclass(frozen=True)
class Project(Seq):
    """``π_k(a, J)``: ``x // J`` (k = 0, the outer index of a split) or ``x mod J`` (k = 1, the
    inner index: the coordinates of the group the enclosing ``π0`` loop is at).

    ``group`` (k = 1 only): the operand of that ``π0`` loop when it is not ``a``: what is left of a
    union once an operand ran out inside a group, ``π1(k_b, 4 @ k_a ∪ k_b)``, walks ``b`` through
    the rest of the group the loop over ``π0(k_a ∪ k_b, 4)`` is at (printed after ``@``).

    >>> a, b = Level("a", 0, "compressed", 8, "k"), Level("b", 0, "compressed", 8, "k")
    >>> p = Project(1, b, 4, Union(a, b))
    >>> print(p, p.group_key == Project(0, Union(a, b), 4).group_key)
    π1(k_b, 4 @ k_a ∪ k_b) True
    """

    k: int
    a: Seq
    J: int
    group: Seq | None = None

    def __post_init__(self):
        if self.k not in (0, 1):
            raise SequenceError(f"projection π{self.k}: k must be 0 or 1")
        if self.J < 1 or self.a.size() % self.J:
            raise SequenceError(f"π{self.k}({self.a}, {self.J}): {self.J} does not divide the "
                                f"size {self.a.size()} of {self.a}")
        if self.group is not None and (self.k != 1 or self.group.size() != self.a.size()):
            raise SequenceError(f"π{self.k}({self.a}, {self.J}): only a π1 follows the group of another "
                                f"operand's π0, of its size ({self.group})")

    def children(self):
        return (self.a,)

    def size(self):
        return self.a.size() // self.J if self.k == 0 else self.J

    @property
    def dense(self):
        return self.a.dense

    @property
    def group_key(self) -> tuple:
        """The key the π0 loop over ``a`` binds its group under (shared with its π1)."""
        return ("π0", self.a if self.group is None else self.group, self.J)


@serialize.node
@dataclass(frozen=True)
class Slice(Seq):
    """``a[s:e:r]``: ``(x - s) / r`` for ``x`` in ``a`` with ``s <= x < e`` and ``r | x - s``."""

    a: Seq
    start: int
    stop: int
    step: int = 1

    def __post_init__(self):
        if self.step < 1:
            raise SequenceError(f"{self.a}[{self.start}:{self.stop}:{self.step}]: the step must be at least 1")
        if not 0 <= self.start <= self.stop <= self.a.size():
            raise SequenceError(f"{self.a}[{self.start}:{self.stop}:{self.step}]: need 0 <= start <= stop "
                                f"<= {self.a.size()} (the size of {self.a})")

    def children(self):
        return (self.a,)

    def size(self):
        return -(-(self.stop - self.start) // self.step)

    @property
    def dense(self):
        return self.a.dense


@serialize.node
@dataclass(frozen=True)
class Stride(Seq):
    """``a[k::J]``: ``x // J`` for ``x`` in ``a`` with ``x mod J`` the coordinate of the loop over
    ``index`` around it (or of the universe ``over``). The major index of ``split(a, l -> (i, k))``
    walked inside the loop over its minor index (a CSC output of a row-major split, a transpose): each
    group searched for the coordinate ``k`` is at, where ``π0``/``π1`` would walk the minor index
    inside its group.

    >>> a = Level("a", 0, "compressed", 6, "l")
    >>> s = Stride(a, 3, "k")
    >>> print(s, s.size())
    l_a[k::3] 2
    >>> sorted(coordinates(s, {"a": {(1,), (2,), (4,)}}, {at_index("k"): 1}))
    [0, 1]
    """

    a: Seq
    J: int
    index: str
    #: the universe whose coordinate the residue is, where no loop is around: the left operand of the
    #: product ``U_k × l_a[k::J]``, a split collapsed minor index first (``collapse(split(a[l], l -> (i,
    #: k)), (k, i) -> m)``)
    over: Seq | None = None

    def __post_init__(self):
        if self.J < 1 or self.a.size() % self.J:
            raise SequenceError(f"{self.a}[{self.index}::{self.J}]: {self.J} does not divide the size "
                                f"{self.a.size()} of {self.a}")

    def children(self):
        return (self.a,)

    def size(self):
        return self.a.size() // self.J

    @property
    def dense(self):
        return self.a.dense


def at_index(index: str) -> tuple:
    """The key an environment binds the coordinate of the loop over ``index`` under (a :class:`Stride`'s).

    >>> at_index("k")
    ('at', 'k')
    """
    return ("at", index)


@serialize.node
@dataclass(frozen=True)
class Offset(Seq):
    """``|a| + X``: ``X`` shifted right by ``n`` (what is left of ``a ⊔ X`` once ``a`` is done)."""

    n: int
    a: Seq
    label: str = field(default="", compare=False)

    def children(self):
        return (self.a,)

    def size(self):
        return self.n + self.a.size()

    # it holds no coordinate below n, so it is never dense (nor located) even over a dense X
    dense = False


@serialize.node
@dataclass(frozen=True)
class Pad(Seq):
    """``X + |b|``: ``X`` in a dimension ``n`` longer (what is left of ``X ⊔ b`` once ``b`` is done)."""

    a: Seq
    n: int
    label: str = field(default="", compare=False)

    def children(self):
        return (self.a,)

    def size(self):
        return self.a.size() + self.n

    # it holds no coordinate in its last n: never dense, unlike the artifact's Pad
    dense = False


EMPTIES = (Empty, Full)
LEAVES = (Level, Universe)

_GLYPHS = {Union: ("∪", "|"), Intersect: ("∩", "&"), Product: ("×", "*"), Concat: ("⊔", "++")}


def _text(s: Seq, ascii: bool, top: bool = False) -> str:
    if isinstance(s, Level):
        return f"rev({s.index}_{s.tensor})" if s.reverse else f"{s.index}_{s.tensor}"
    if isinstance(s, Universe):
        return f"U_{s.index}#{s.owner}" if s.owner else f"U_{s.index}"
    if isinstance(s, Empty):
        return f"empty({s.extent})" if ascii else "∅"
    if isinstance(s, Full):
        return f"full({s.extent})" if ascii else "Ƒ"
    if type(s) in _GLYPHS:
        g = _GLYPHS[type(s)][1 if ascii else 0]
        t = f"{_text(s.a, ascii)} {g} {_text(s.b, ascii)}"
        return t if top else f"({t})"
    if isinstance(s, Project):
        group = "" if s.group is None else f" @ {_text(s.group, ascii, True)}"
        return f"{'pi' if ascii else 'π'}{s.k}({_text(s.a, ascii, True)}, {s.J}{group})"
    if isinstance(s, Slice):
        step = f":{s.step}" if s.step != 1 else ""
        return f"{_text(s.a, ascii)}[{s.start}:{s.stop}{step}]"
    if isinstance(s, Stride):
        return f"{_text(s.a, ascii)}[{s.index}::{s.J}]"
    if isinstance(s, Offset):
        t = f"{s.label or s.n} + {_text(s.a, ascii)}"
        return t if top else f"({t})"
    if isinstance(s, Pad):
        t = f"{_text(s.a, ascii)} + {s.label or s.n}"
        return t if top else f"({t})"
    raise TypeError(f"not a sequence expression: {s!r}")


def rebuild(s: Seq, kids: tuple) -> Seq:
    """``s`` with its children replaced by ``kids`` (same node type, same parameters)."""
    if isinstance(s, (Union, Intersect, Product, Concat)):
        return type(s)(*kids)
    if isinstance(s, Project):
        return Project(s.k, kids[0], s.J, s.group)
    if isinstance(s, Slice):
        return Slice(kids[0], s.start, s.stop, s.step)
    if isinstance(s, Stride):
        return Stride(kids[0], s.J, s.index, s.over)
    if isinstance(s, Offset):
        return Offset(s.n, kids[0], s.label)
    if isinstance(s, Pad):
        return Pad(kids[0], s.n, s.label)
    return s


def reverse(s: Seq) -> Seq:
    """``s`` walked backwards: coordinate ``x`` becomes ``size - 1 - x`` (a slice with a negative
    step), each level leaf walked from its end, so the loop still meets coordinates in increasing
    order and an output appended in loop order stays sorted.

    >>> a = Level("a", 0, "compressed", 4); b = Level("b", 0, "dense", 4)
    >>> print(reverse(Union(a, b)))
    rev(i_a) ∪ rev(i_b)
    >>> sorted(coordinates(reverse(Slice(a, 1, 4, 2)), {"a": {(1,), (2,), (3,)}}))
    [0, 1]
    """
    if isinstance(s, Level):
        return Level(s.tensor, s.mode, s.kind, s.extent, s.index, not s.reverse)
    if isinstance(s, (Universe, Empty, Full)):
        return s     # (every coordinate, or none: the same set either way)
    if isinstance(s, (Union, Intersect, Product)):
        # (a product: (|a| - 1 - x)·|b| + |b| - 1 - y is |a|·|b| - 1 - (x·|b| + y))
        return type(s)(reverse(s.a), reverse(s.b))
    if isinstance(s, Slice):
        # the kept coordinates s, s + r, ..., last, read from the last one down
        n = s.a.size()
        m = s.size()
        if m == 0:
            return Slice(reverse(s.a), 0, 0, 1)
        last = s.start + s.step * (m - 1)
        first = n - 1 - last
        return Slice(reverse(s.a), first, first + s.step * (m - 1) + 1, s.step)
    if isinstance(s, Concat):
        # b's coordinates first, then a's after |b|
        return Concat(reverse(s.b), reverse(s.a))
    if isinstance(s, Project):
        # (|a| - 1 - x) // J is |a| / J - 1 - x // J, and (|a| - 1 - x) mod J is J - 1 - x mod J
        return Project(s.k, reverse(s.a), s.J, None if s.group is None else reverse(s.group))
    raise SequenceError(f"{s}: a lattice's {type(s).__name__.lower()} is not walked backwards")


def walk(s: Seq):
    """``s`` and every sub-expression, parents first."""
    yield s
    for c in s.children():
        yield from walk(c)


def chain_operands(s: Seq, kind: type) -> list:
    """The operands of the chain of ``kind`` merges ``s`` (``[s]`` where it is none of them).

    >>> a, b, c = (Level(t, 0, "compressed", 4) for t in "abc")
    >>> [str(x) for x in chain_operands(Union(Union(a, b), c), Union)], chain_operands(a, Union) == [a]
    (['i_a', 'i_b', 'i_c'], True)
    """
    return chain_operands(s.a, kind) + chain_operands(s.b, kind) if isinstance(s, kind) else [s]


# -- set semantics ------------------------------------------------------------------------------

ABSENT = object()   # a leaf known not to be at the enclosing coordinate (its children are empty)


def leaf_fiber(leaf: Seq, data: Mapping[str, Iterable[tuple]], env: Mapping) -> list[int]:
    """The sorted coordinates of ``leaf`` under the coordinates ``env`` binds its ancestors to.

    >>> leaf_fiber(Level("A", 1, "compressed", 3, "j"), {"A": {(0, 2), (1, 0), (0, 1)}}, {("A", 0): 0})
    [1, 2]
    """
    if isinstance(leaf, Universe):
        live = {side_key(k) for k, v in env.items() if v is not ABSENT}
        return [] if leaf.away(live.__contains__) else range(leaf.size())
    if any(env.get((leaf.tensor, m)) is ABSENT for m in range(leaf.mode)):
        return []       # under a parent not stored there: no fiber, dense or not
    if leaf.dense:
        return range(leaf.size())
    prefix = []
    for m in range(leaf.mode):
        c = env.get((leaf.tensor, m))
        if c is None:
            raise SequenceError(f"level {leaf.mode} of {leaf.tensor} ({leaf}) is read outside a loop over "
                                f"its parent level {m} (nothing binds its coordinate)")
        if c is ABSENT:
            return []
        prefix.append(c)
    prefix = tuple(prefix)
    if leaf.tensor not in data:
        raise SequenceError(f"no coordinates given for tensor {leaf.tensor}")
    return sorted({leaf.real(c[leaf.mode]) for c in data[leaf.tensor]
                   if tuple(c[:leaf.mode]) == prefix and c[leaf.mode] < leaf.extent})


def coordinates(s: Seq, data: Mapping[str, Iterable[tuple]], env: Mapping | None = None) -> frozenset:
    """The coordinate set of ``s`` (shape-operators.md §4.2), levels read from ``data``.

    ``env`` binds enclosing coordinates: a level's ancestors by ``(tensor, mode)``, a π1's group
    by its π0's :attr:`Project.group_key` (without it, π1 is the global set of residues).

    >>> a = Level("a", 0, "compressed", 3); b = Level("b", 0, "compressed", 2)
    >>> d = {"a": {(0,), (2,)}, "b": {(1,)}}
    >>> sorted(coordinates(Product(a, b), d)), sorted(coordinates(Concat(a, b), d))
    ([1, 5], [0, 2, 4])
    """
    env = env or {}
    if isinstance(s, LEAVES):
        return frozenset(leaf_fiber(s, data, env))
    if isinstance(s, EMPTIES):
        return frozenset()
    if isinstance(s, Union):
        return coordinates(s.a, data, env) | coordinates(s.b, data, env)
    if isinstance(s, Intersect):
        return coordinates(s.a, data, env) & coordinates(s.b, data, env)
    if isinstance(s, Product):
        n = s.b.size()
        return frozenset(x * n + y for x in coordinates(s.a, data, env)
                         for y in coordinates(s.b, data, bind(s.a, x, data, env)))
    if isinstance(s, Concat):
        n = s.a.size()
        return coordinates(s.a, data, env) | {n + y for y in coordinates(s.b, data, env)}
    if isinstance(s, Project):
        xs = coordinates(s.a, data, env)
        if s.k == 0:
            return frozenset(x // s.J for x in xs)
        g = env.get(s.group_key)
        return frozenset(x % s.J for x in xs if g is None or x // s.J == g)
    if isinstance(s, Slice):
        return frozenset((x - s.start) // s.step for x in coordinates(s.a, data, env)
                         if s.start <= x < s.stop and (x - s.start) % s.step == 0)
    if isinstance(s, Stride):
        k = stride_at(s, env)
        return frozenset(x // s.J for x in coordinates(s.a, data, env) if x % s.J == k)
    if isinstance(s, Offset):
        return frozenset(s.n + y for y in coordinates(s.a, data, env))
    if isinstance(s, Pad):
        return coordinates(s.a, data, env)
    raise TypeError(f"not a sequence expression: {s!r}")


def stride_at(s: Stride, env: Mapping) -> int:
    """The coordinate of the loop around ``s`` its residue is (``env``'s :func:`at_index`), or of its
    universe (bound by the product it is the right operand of)."""
    k = env.get(at_index(s.index) if s.over is None else s.over.key)
    if k is None:
        raise SequenceError(f"{s} is read outside the loop over {s.index}")
    return k


def bind(s: Seq, x: int, data, env: Mapping | None = None) -> dict:
    """``env`` extended with the coordinates the leaves of ``s`` are at when ``s`` is at ``x``
    (:data:`ABSENT` for a leaf not at ``x``): what a loop over ``s`` fixes for the loops inside.

    >>> A = Level("A", 0, "compressed", 2); B = Level("B", 0, "compressed", 2)
    >>> e = bind(Union(A, B), 1, {"A": {(1, 0)}, "B": {(0, 0)}})
    >>> e[("A", 0)], e[("B", 0)] is ABSENT
    (1, True)
    """
    env = dict(env or {})
    _bind(s, x, data, env)
    return env


def _absent(s: Seq, env: dict) -> None:
    for leaf in s.iters():
        env.setdefault(leaf.key, ABSENT)


def _bind(s: Seq, x, data, env: dict) -> None:
    if x is None or x not in coordinates(s, data, env):
        _absent(s, env)
        return
    if isinstance(s, Level):
        env[s.key] = s.real(x)       # (ancestors are bound to stored coordinates)
    elif isinstance(s, Universe):
        env[s.key] = x
    elif isinstance(s, (Union, Intersect)):
        _bind(s.a, x, data, env)
        _bind(s.b, x, data, env)
    elif isinstance(s, Product):
        n = s.b.size()
        _bind(s.a, x // n, data, env)
        _bind(s.b, x % n, data, env)
    elif isinstance(s, Concat):
        n = s.a.size()
        _bind(s.a, x if x < n else None, data, env)
        _bind(s.b, x - n if x >= n else None, data, env)
    elif isinstance(s, Project):
        if s.k == 0:
            env[s.group_key] = x
        else:
            _bind(s.a, env[s.group_key] * s.J + x, data, env)
    elif isinstance(s, Slice):
        _bind(s.a, s.start + s.step * x, data, env)
    elif isinstance(s, Stride):
        _bind(s.a, x * s.J + stride_at(s, env), data, env)
    elif isinstance(s, Offset):
        _bind(s.a, x - s.n, data, env)
    elif isinstance(s, Pad):
        _bind(s.a, x, data, env)


def span(s: Seq) -> tuple[int, int]:
    """``[lo, hi)``, the coordinates ``s`` may hold at most: an offset's operand shifted, a padded
    one where it was, an intersection where both may be; the whole extent for the others.

    >>> a = Level("a", 0, "compressed", 4, "l")
    >>> span(Pad(a, 2)), span(Offset(4, Level("b", 1, "compressed", 2, "m")))
    ((0, 4), (4, 6))
    """
    if isinstance(s, Pad):
        return span(s.a)
    if isinstance(s, Offset):
        lo, hi = span(s.a)
        return lo + s.n, hi + s.n
    if isinstance(s, Union):
        (a, b), (c, d) = span(s.a), span(s.b)
        return min(a, c), max(b, d)
    if isinstance(s, Intersect):
        (a, b), (c, d) = span(s.a), span(s.b)
        return max(a, c), min(b, d)
    return 0, s.size()


def can_meet(a: Seq, b: Seq) -> bool:
    """Whether ``a`` and ``b`` may be at one coordinate: their spans overlap, and for two products
    of one inner extent, both their outer and their inner operands may meet (an hstack's ravel,
    ``(j_A × (l_A + 2)) ∪ (j_B × (4 + m_B))``: A's columns are 0-3, B's 4-5, so never).

    >>> A = Product(Level("A", 0, "dense", 3, "j"), Pad(Level("A", 1, "compressed", 4, "l"), 2))
    >>> B = Product(Level("B", 0, "dense", 3, "j"), Offset(4, Level("B", 1, "compressed", 2, "m")))
    >>> can_meet(A, B), can_meet(A, A)
    (False, True)
    """
    if isinstance(a, Product) and isinstance(b, Product) and a.b.size() == b.b.size():
        return can_meet(a.a, b.a) and can_meet(a.b, b.b)
    (lo, hi), (lo2, hi2) = span(a), span(b)
    return max(lo, lo2) < min(hi, hi2)


def never_at_one(s: Seq) -> bool:
    """Whether the operands of a union or an intersection in ``s`` can never be at one coordinate
    (a switch's case for both of them never runs), also under a projection (the straddle of an
    hstack split, ``π1((k_A × (n_A + 2)) ∪ (k_B × (4 + p_B)), 10)``, not under a π0) or a product.

    >>> A = Product(Level("A", 0, "dense", 3, "j"), Pad(Level("A", 1, "compressed", 4, "l"), 2))
    >>> B = Product(Level("B", 0, "dense", 3, "j"), Offset(4, Level("B", 1, "compressed", 2, "m")))
    >>> never_at_one(Project(1, Union(A, B), 6)), never_at_one(Project(0, Union(A, B), 6))
    (True, False)
    """
    if isinstance(s, (Union, Intersect)):
        return not can_meet(s.a, s.b) or never_at_one(s.a) or never_at_one(s.b)
    if isinstance(s, Product):
        return never_at_one(s.a) or never_at_one(s.b)
    if isinstance(s, Project):
        # (a π0 is at a group, where its operands' coordinates may differ: A's and B's rows meet)
        return s.k == 1 and never_at_one(s.a)
    if isinstance(s, (Slice, Stride, Pad, Offset)):
        return never_at_one(s.a)
    return False


def lower_bound(fiber, x: int) -> int:
    """The first position of ``fiber`` (sorted) holding ``x`` or more (a compressed level's locate)."""
    return bisect.bisect_left(fiber, x)


__all__ = ["span", "can_meet", "never_at_one", "Seq", "Level", "Universe", "Empty", "Full", "Union", "Intersect", "Product", "Concat",
           "Project", "Slice", "Stride", "at_index", "stride_at", "Offset", "Pad", "SequenceError", "coordinates", "bind", "leaf_fiber",
           "rebuild", "reverse", "walk", "chain_operands", "lower_bound", "side_key", "ABSENT", "EMPTIES", "LEAVES", "KINDS"]
