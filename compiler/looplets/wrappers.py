"""Wrapper tensors at unfurl time: index modifiers turned into looplet transformations.

Wrapperization (:func:`compiler.looplets.passes.wrapperize`) leaves each access index as
a chain of modifiers, the one nearest the tensor outermost. When the access is unfurled
on its loop, :func:`apply_modifiers` wraps the tensor's looplet nest in the chain's
transformations, from the tensor side outwards:

============================  ==============================================================
modifier (printed wrapper)    looplet transformation
============================  ==============================================================
``Permit`` (``permissive``)   ``Sequence(Phase(0, missing), Phase(size, nest), Phase(missing))``
``Offset`` (``offset``)       ``Shift(-delta, nest)``: outer ``i`` reads inner ``i + delta``
``Window`` (``window``)       nothing if the access is not permissive: dimensionalization
                              gave the loop the window's extent, and the lowerers truncate
                              the child to the loop (steppers seek to its start, spikes
                              lose their tails at its end); permissive: ``missing`` outside
                              ``[lo, hi)``, as ``Permit`` does outside the tensor
``Protocol``                  chosen before (the level unfurls a Jumper for ``gallop``)
============================  ==============================================================

A permit on a *later* index reaches the regions of one value of the level being unfurled
(:func:`read_below`): where a DCSR ``B`` stores no row ``n``, ``B[n, ~l]`` is ``B``'s fill only for
``l`` inside ``B``'s columns and ``missing`` past them, so such a region is no constant but a
:class:`FillFiber`, unfurled on the later index as the fill, ``missing`` outside.

Window bounds and constant offsets are *static*: integers and tensor sizes. They turn
into IR here and in dimensionalization by the same folding (:func:`static_ir`), so the
extent of a windowed loop and the shifted stops of its looplets are provably equal and
no runtime phase checks are emitted.

>>> from compiler.looplets.program import Literal, Size, Call
>>> from compiler.algebra import lookup
>>> from compiler.imperative.ir import Var
>>> print(static_ir(Call(lookup("-"), (Size(Var("A0_size"), "int64", "A", 0), Literal(1)))))
A0_size - 1
>>> static_value(Call(lookup("-"), (Size(Var("A0_size"), "int64", "A", 0), Literal(1))),
...              {}, {"A": (7,)}, lambda t, m: m)
6
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..algebra import Operator
from ..imperative.ir import Const
from . import extents as X
from .looplets import Fill, Looplet, Run, Sequence, Phase, Shift, map_nest
from .modifiers import Offset, Permit, Protocol, Window
from .program import MISSING, Call, IndexModifier, Literal, Size, Value


def static_ir(e):
    """The IR of a static integer expression (folded with :mod:`~compiler.looplets.extents`),
    or None if ``e`` is not one (it then depends on an outer loop index)."""
    if isinstance(e, Literal) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return Const(e.value, "int64")
    if isinstance(e, Value) and e.expr is not None and e.dtype.startswith("int"):
        return e.expr
    if isinstance(e, Call) and isinstance(e.op, Operator) and e.op.name in ("add", "sub", "mul", "neg"):
        args = [static_ir(a) for a in e.args]
        if any(a is None for a in args):
            return None
        if e.op.name == "add":
            return X.add(*args)
        if e.op.name == "sub":
            return X.sub(*args)
        if e.op.name == "neg":
            return X.neg(*args)
        from ..imperative.ir import BinOp
        a, b = args
        if isinstance(a, Const) and isinstance(b, Const):
            return Const(a.value * b.value, "int64")
        return BinOp("*", a, b)
    return None


def static_value(e, tensors, shapes, storage=None):
    """The int value of a static expression when the sizes it reads are known, else None.

    ``shapes`` holds storage shapes; ``storage(tensor, logical mode)`` maps a logical mode
    to its storage position (by default from ``tensors[name].format.mode_order``).
    """
    if isinstance(e, Literal) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    if isinstance(e, Size):
        shape = shapes.get(e.tensor)
        if shape is None:
            return None
        k = storage(e.tensor, e.mode) if storage else tensors[e.tensor].format.mode_order.index(e.mode)
        return int(shape[k])
    if isinstance(e, Call) and isinstance(e.op, Operator) and e.op.name in ("add", "sub", "mul", "neg"):
        args = [static_value(a, tensors, shapes, storage) for a in e.args]
        if any(a is None for a in args):
            return None
        return {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                "neg": lambda a: -a}[e.op.name](*args)
    return None


def modifier_chain(x) -> tuple[list, object]:
    """The modifiers of an access index, nearest the tensor first, and its bare index."""
    mods = []
    while isinstance(x, IndexModifier):
        mods.append(x)
        x = x.index
    return mods, x


def base_index(x):
    """The bare index under an access index's modifiers (``i`` of ``~(i + 1)``)."""
    return modifier_chain(x)[1]


def protocol_of(x):
    """The protocol annotation (``gallop``/``walk``) among an access index's modifiers, or None."""
    return next((m.name for m in modifier_chain(x)[0] if isinstance(m, Protocol)), None)


def _missing_outside(start, stop, nest):
    """``nest`` on ``[start, stop)``, ``missing`` before and after (a permissive region)."""
    gap = Fill(Literal(MISSING))
    return Sequence((Phase(start, gap), Phase(stop, nest), Phase(None, gap)))


def apply_modifiers(idx, nest, fiber, to_ir):
    """Wrap a freshly unfurled looplet ``nest`` (of ``fiber``) for the modifiers of ``idx``.

    ``to_ir`` lowers a program expression that is not static (a Toeplitz offset by an
    outer index, already substituted by its value).

    >>> from compiler.looplets.modifiers import Offset, Window
    >>> from compiler.looplets.program import Index
    >>> from compiler.looplets.looplets import Run, nest_text
    >>> w = Window(Offset(Index("i"), Literal(2)), Literal(2), Literal(5))
    >>> print(nest_text(apply_modifiers(w, Run(Literal(1.0)), None, None)))
    Shift(-2)
      Run(1.0)
    """
    mods, _ = modifier_chain(idx)
    permit = any(isinstance(m, Permit) for m in mods)
    if permit:
        # (a SparseCOO level stores several modes: its seg says which one this fiber unfurls)
        inner = fiber.seg[0] if fiber.seg is not None else 0
        # (a fiber over several modes, a raveled matrix's, gives its extent)
        extent = getattr(fiber, "extent", None)
        size = extent() if extent is not None else fiber.tensor.size(fiber.tensor.storage_mode(fiber.level) + inner)
        nest = _missing_outside(Const(0, "int64"), size, nest)
    for m in mods:
        if isinstance(m, Offset):
            d = static_ir(m.delta)
            d = to_ir(m.delta) if d is None else d
            if not (isinstance(d, Const) and d.value == 0):
                nest = Shift(X.neg(d), nest)
        elif isinstance(m, Window) and permit:
            nest = _missing_outside(static_ir(m.lo), static_ir(m.hi), nest)
    return nest


def permissive(x) -> bool:
    """Whether access index ``x`` is read permissively (a ``~`` among its modifiers)."""
    return any(isinstance(m, Permit) for m in modifier_chain(x)[0])


@dataclass(frozen=True, eq=False)
class FillFiber:
    """The fiber under a region of one ``value`` of ``tensor``'s levels, from storage mode ``mode``
    on, read at a permissive index: each mode unfurls to the value, padded with ``missing`` outside
    the mode's extent by the permit (:func:`apply_modifiers`)."""

    tensor: Any
    mode: int
    value: Any
    is_leaf = False
    seg = None

    def extent(self):
        """The extent of the storage mode this fiber unfurls (IR)."""
        return self.tensor.size(self.mode)

    def unfurl(self, ctx, mode):
        return Fill(self.value)

    def label(self):
        return f"{self.tensor.name}.fill[mode {self.mode}]"

    def __str__(self):
        return self.label()


def read_below(nest, fiber, rest):
    """``nest`` (of ``fiber``, read at the later indices ``rest``) with each region of one value
    below the level made a :class:`FillFiber` read on at ``rest`` where one of them is permissive
    (the sub-tensor is that value inside its extents, ``missing`` outside them), else ``nest``.

    >>> from compiler.format import dcsr
    >>> from compiler.looplets.fibers import TensorInfo, UnfurlContext
    >>> from compiler.looplets.levels import unfurl
    >>> from compiler.looplets.looplets import nest_text
    >>> from compiler.looplets.program import Index
    >>> B = TensorInfo.from_format("B", dcsr()).root()
    >>> nest = read_below(unfurl(B, UnfurlContext(), "read"), B, (Permit(Index("l")),))
    >>> print(nest_text(nest).splitlines()[-1].strip())
    Run(B.fill[mode 1])
    """
    if not any(permissive(x) for x in rest):
        return nest
    mode = fiber.tensor.ndim - len(rest)

    def below(l):
        if isinstance(l, (Fill, Run)):
            v = l.value if isinstance(l, Fill) else l.body
            return Run(FillFiber(fiber.tensor, mode, v)) if isinstance(v, (Literal, Value)) else l
        return None if isinstance(l, Looplet) else l   # (a sub-fiber: read on by its own levels)
    return map_nest(nest, below)
