"""The values of the sequence CFIR (:mod:`compiler.lattice.seqcfir`): reads of tensors through their
level iterators, literals, temporaries, ``+``, ``*``, any other operator of the notation and the body of
a concatenation; their printer; and their specialization per sub-point of a lattice, where a read not
live there is its fill and literals fold (:func:`specialize_value`).

>>> from compiler.lattice.sequences import Level
>>> a = Level("a", 0, "compressed", 4)
>>> e = Add(Read("a", (a,)), Lit(1.0))
>>> str(e), str(specialize_value(e, frozenset())), str(specialize_value(e, {a.key}))
('a(i_a) + 1', '1', 'a(i_a) + 1')
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import serialize, values
from ..algebra import NOVALUE, Operator, lookup
from .seqvalues import NAN_PROPAGATING
from .sequences import side_key
from ..values import same_value


# -- values -----------------------------------------------------------------------------------------


class Value:
    def __str__(self) -> str:
        return value_text(self)


@serialize.node
@dataclass(frozen=True)
class Read(Value):
    """``A(i_A, j_A)``: the value of ``tensor`` where its level iterators ``levels`` are."""

    tensor: str
    levels: tuple
    #: what the read is where its levels are not all live (the tensor's fill: ``x - y`` where only
    #: ``y`` is stored is ``fill_x - y``)
    fill: float = 0.0
    #: whether its values and fill are surely finite and small (as the lowering assumes the tensor's,
    #: :attr:`compiler.values.Facts.small`): then ``0 * x`` is 0 where only ``x`` is stored, and that case
    #: writes nothing (:func:`fold`)
    finite: bool = False
    #: the loop indices a stand-in located at each of their coordinates is read at (``A_i_1(i)``, column 1 of
    #: ``A`` in row ``i``: :mod:`compiler.lattice.seqlocated`); it has no levels, a value every coordinate has
    at: tuple = ()
    #: the tensor's integer dtype where it is not int64 (its fill, read where it is absent, is a value of that
    #: dtype: an int32 fill times an int32 value wraps in int32, as numpy's product does)
    typed: str | None = field(default=None, repr=False)


@serialize.node
@dataclass(frozen=True)
class Lit(Value):
    value: float
    #: an integer literal's dtype where it is not int64 (``x + 1`` of a uint8 ``x`` adds a uint8 1)
    typed: str | None = field(default=None, repr=False)


@serialize.node
@dataclass(frozen=True)
class Temp(Value):
    """A scalar temporary (the ``t`` of a ``where``)."""

    name: str


@serialize.node
@dataclass(frozen=True)
class Add(Value):
    a: Value
    b: Value


@serialize.node
@dataclass(frozen=True)
class Mul(Value):
    a: Value
    b: Value


@serialize.node
@dataclass(frozen=True)
class Op(Value):
    """An elementwise operator of the notation on values (``x - y``, ``where(c, x, y)``, ``sin(x)``,
    ``x > y``): its numpy meaning in the interpreter, its C translation in the emitter."""

    op: Operator
    args: tuple


@serialize.node
@dataclass(frozen=True)
class Cat(Value):
    """``concat(a, b)``: ``a`` where the left side is iterated, ``b`` where the right one is: where a leaf
    of ``left`` (the leaf keys of the left side's concatenated index) or of ``right`` is live."""

    a: Value
    b: Value
    left: frozenset = frozenset()
    right: frozenset = frozenset()
    #: its value where the loops are at neither side's leaves: the result's fill (its first operand's)
    fill: float = 0.0


ZERO = Lit(0.0)


def value_children(e: Value) -> tuple:
    """The values ``e`` is made of.

    >>> value_children(Add(Lit(1.0), Temp("t")))
    (Lit(value=1.0), Temp(name='t'))
    """
    if isinstance(e, Op):
        return tuple(e.args)
    return (e.a, e.b) if isinstance(e, (Add, Mul, Cat)) else ()


def value_text(e) -> str:
    """The text of value ``e``: ``A(i_A) + 1``."""
    return value_parts(e, 0, ())[0]


def value_parts(e, at: int, scope: tuple) -> tuple[str, list]:
    """The text of value ``e`` printed at column ``at`` and where its reads are in the line:
    ``[start, end, about, "access"]``, each read of its tensor at the loops ``scope`` around it."""
    if isinstance(e, Read):
        text = f"{e.tensor}({', '.join([str(lv) for lv in e.levels] + list(e.at))})"
        return text, [[at, at + len(text), {"tensor": e.tensor, "indices": list(scope), "mode": "read"}, "access"]]
    if isinstance(e, Lit):
        v = e.value
        if isinstance(v, (bool, complex)) or v != v or v in (float("inf"), float("-inf")) or v != int(v):
            return repr(v), []
        return str(int(v)), []
    if isinstance(e, Temp):
        return e.name, []

    def bracketed(x) -> bool:
        """Whether operand ``x`` of a product or an operator is bracketed (a sum, an infix operator)."""
        return isinstance(x, Add) or isinstance(x, Op) and x.op.arity == 2 and not x.op.symbol.isidentifier()

    if isinstance(e, (Add, Mul, Cat)):
        head, sep, tail = ("concat(", ", ", ")") if isinstance(e, Cat) else ("", f" {'+' if isinstance(e, Add) else '*'} ", "")
        operands = (e.a, e.b)
        wraps = [isinstance(e, Mul) and bracketed(x) for x in operands]
    elif isinstance(e, Op):
        infix = not e.op.symbol.isidentifier()
        operands = tuple(e.args)
        wraps = [isinstance(x, (Add, Mul)) or bracketed(x) for x in operands]
        if infix and e.op.arity == 2:
            head, sep, tail = "", f" {e.op.symbol} ", ""
        elif infix and e.op.arity == 1:
            head, sep, tail = e.op.symbol, "", ""
        else:
            head, sep, tail, wraps = f"{e.op.name}(", ", ", ")", [False] * len(operands)
    else:
        raise TypeError(f"not a value: {e!r}")
    text, parts = head, []
    for k, x in enumerate(operands):
        text += (sep if k else "") + ("(" if wraps[k] else "")
        shown, where = value_parts(x, at + len(text), scope)
        text += shown + (")" if wraps[k] else "")
        parts += where
    return text + tail, parts


# -- specialization per sub-point ---------------------------------------------------------------------


def _live_read(r: Read, defs) -> bool:
    return all(lv.key in defs for lv in r.levels)


def value_facts(e: Value) -> values.Facts:
    """What the value ``e`` may hold (:class:`compiler.values.Facts`): a read's values are finite where
    it says so (:attr:`Read.finite`), a temporary's anything.

    >>> from compiler.algebra import lookup
    >>> str(value_facts(Op(lookup("*"), (Read("a", (), 0.0, True), Lit(2.0))))), str(value_facts(Read("b", ())))
    ('finite', 'may hold NaN, +inf, -inf')
    """
    if isinstance(e, Lit):
        return values.of_value(e.value)
    if isinstance(e, Read):
        return values.Facts(scale=values.small_scale()) if e.finite else values.ANY
    if isinstance(e, Op):
        return values.of_call(e.op, [value_facts(a) for a in e.args])
    if isinstance(e, (Add, Mul)):
        return values.of_call(lookup("+" if isinstance(e, Add) else "*"), [value_facts(e.a), value_facts(e.b)])
    if isinstance(e, Cat):
        return value_facts(e.a) | value_facts(e.b) | values.of_value(e.fill)
    return values.ANY


def computed(op: Operator, args: tuple) -> "Lit":
    """``op`` of the literals ``args`` in numpy's dtypes, as the emitter computes it: a typed integer in its dtype
    (an int32 product of fills wraps in int32), another integer in int64, a float in float64.

    >>> from compiler.algebra import lookup
    >>> computed(lookup("*"), (Lit(50000, "int32"), Lit(50000, "int32")))
    Lit(value=-1794967296)
    >>> computed(lookup("*"), (Lit(50000, "int32"), Lit(50000))), computed(lookup("+"), (Lit(1.5), Lit(2)))
    (Lit(value=2500000000), Lit(value=3.5))
    """
    def scalar(a):
        v = a.value
        if isinstance(v, bool) or not isinstance(v, int):
            return v
        return np.asarray(v, dtype=a.typed or "int64")[()]
    with np.errstate(all="ignore"):
        out = np.asarray(op(*(scalar(a) for a in args)))[()]
    typed = out.dtype.name if out.dtype.kind in "iu" and out.dtype.name != "int64" else None
    return Lit(out.item(), typed)


def fold(op: Operator, args: tuple) -> Value:
    """``op`` of ``args`` (values), computed now where every argument is a literal, NaN where one is
    and ``op`` propagates it, its annihilator where an argument is and the others surely hold no value
    it does not annihilate (``0 * x`` of a finite ``x``: not of one that may be inf).

    >>> from compiler.algebra import lookup
    >>> fold(lookup("-"), (Lit(0.0), Lit(2.0))), fold(lookup("-"), (Lit(float("nan")), Temp("t")))
    (Lit(value=-2.0), Lit(value=nan))
    >>> fold(lookup("-"), (Temp("t"), Lit(0.0))), str(fold(lookup("-"), (Lit(0.0), Temp("t"))))
    (Temp(name='t'), '0 - t')
    >>> fold(lookup("*"), (Lit(0.0), Read("x", (), 0.0, True))), str(fold(lookup("*"), (Lit(0.0), Read("y", ()))))
    (Lit(value=0.0), '0 * y()')
    """
    if all(isinstance(a, Lit) for a in args):
        return computed(op, args)
    if op.name in NAN_PROPAGATING and any(isinstance(a, Lit) and a.value != a.value for a in args):
        return Lit(float("nan"))
    for ann in op.annihilators:
        for k in ann.positions or range(len(args)):
            a = args[k]
            if isinstance(a, Lit) and isinstance(a.value, bool) == isinstance(ann.value, bool) \
                    and ann.holds_for(type(a.value)) and same_value(a.value, ann.value_for(type(a.value))) \
                    and values.annihilates(op, ann, [value_facts(x) for n, x in enumerate(args) if n != k])[0]:
                return a
    if op.arity == 2 and not op.is_user and op.identity is not NOVALUE:
        # (x - 0 is x; 0 - x is not: the identity at its positions only)
        for k in op.identity_positions or (0, 1):
            # (a complex 1 is no identity of a product: Operator.neutral_for)
            if isinstance(args[k], Lit) and not isinstance(args[k].value, bool) and args[k].value == op.identity \
                    and not isinstance(args[1 - k], Lit) \
                    and op.neutral_for(np.asarray(args[k].value).dtype) is not NOVALUE:
                return args[1 - k]
    return Op(op, args)


def cat_sides(e: "Cat", defs) -> tuple[bool, bool]:
    """Whether the loops at ``defs`` are at the left side of concatenation ``e``, and at its right: where a live
    leaf is that side's. Where none is, a live π0 group whose operand's leaves are all one side's places the loop
    in that side (a loop over a part ``π0(U, 1)`` is in that part, though no coordinate of ``U`` is live there:
    the part's constants are written, its reads are absent); a π0 over both sides tells neither.

    >>> from compiler.lattice.sequences import Concat, Project, Universe
    >>> u, w = Universe(2, "u"), Universe(2, "w")
    >>> cat = Cat(Lit(1.0), Lit(2.0), frozenset([side_key(u.key)]), frozenset([side_key(w.key)]))
    >>> cat_sides(cat, {Project(0, w, 2).group_key}), cat_sides(cat, {Project(0, Concat(u, w), 2).group_key})
    ((False, True), (False, False))
    """
    live = frozenset(map(side_key, defs))
    a, b = bool(e.left & live), bool(e.right & live)
    if a or b:
        return a, b
    for key in defs:
        if isinstance(key, tuple) and len(key) == 3 and key[0] == "π0":
            leaves = frozenset(side_key(leaf.key) for leaf in key[1].iters())
            a, b = a or bool(leaves) and leaves <= e.left, b or bool(leaves) and leaves <= e.right
    return a, b


def specialize_value(e: Value, defs, known_temps=None) -> Value:
    """``e`` with reads not live under ``defs`` replaced by their fill, the temporaries of
    ``known_temps`` by their value (a sum whose loops vanished) and literals folded (0
    propagated: ``0 + x = x``, ``0 * x = 0``, ``concat(0, y) = y``), a concatenation's side taken by which
    side's leaves are live (at neither: the result's fill).

    >>> from compiler.lattice.sequences import Level
    >>> a, b = Level("a", 0, "compressed", 2), Level("b", 0, "dense", 3, "l")
    >>> cat = Cat(Read("a", (a,)), Add(Read("b", (b,)), Lit(1.0)), frozenset([a.key]), frozenset([b.key]))
    >>> str(specialize_value(cat, {a.key})), str(specialize_value(cat, frozenset())), str(specialize_value(cat, {b.key}))
    ('a(i_a)', '0', 'b(l_b) + 1')
    """
    known_temps = known_temps or {}
    if isinstance(e, Read):
        return e if _live_read(e, defs) else Lit(e.fill, e.typed if isinstance(e.fill, int) else None)
    if isinstance(e, Temp):
        return known_temps.get(e.name, e)
    if isinstance(e, Op):
        return fold(e.op, tuple(specialize_value(x, defs, known_temps) for x in e.args))
    if isinstance(e, Cat) and (e.left or e.right):
        a, b = cat_sides(e, defs)
        if a != b:
            # (the side whose leaves the loops are at: the other one's reads, constants and fill are not there)
            return specialize_value(e.a if a else e.b, defs, known_temps)
        if not a:
            # (at neither: a part storing nothing there, of the result's fill, as a part of another walks
            # every coordinate)
            return Lit(e.fill)
    if isinstance(e, (Add, Mul, Cat)):
        a, b = specialize_value(e.a, defs, known_temps), specialize_value(e.b, defs, known_temps)
        if isinstance(e, Cat):
            # (outside the concatenation's loops: the side not iterated reads its fill)
            return b if isinstance(a, Lit) else a if isinstance(b, Lit) else Cat(a, b, e.left, e.right, e.fill)
        nan = float("nan")
        if isinstance(a, Lit) and isinstance(b, Lit):
            return computed(lookup("+" if isinstance(e, Add) else "*"), (a, b))
        if any(isinstance(x, Lit) and x.value != x.value for x in (a, b)):
            return Lit(nan)
        if isinstance(e, Mul):
            return ZERO if ZERO in (a, b) else type(e)(a, b)
        if a == ZERO:
            return b
        if b == ZERO:
            return a
        return type(e)(a, b)
    return e


__all__ = ["Value", "Read", "Lit", "Temp", "Add", "Mul", "Op", "Cat", "ZERO", "value_children", "value_text",
           "value_parts", "value_facts", "fold", "specialize_value"]
