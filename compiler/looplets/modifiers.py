"""The index modifiers of an access, which wrapperization (:func:`compiler.looplets.passes.wrapperize`)
makes from index expressions and unfurling (:func:`compiler.looplets.wrappers.apply_modifiers`)
turns into wrapper looplets: an offset, a permissive read, a window, a traversal protocol.

>>> from compiler.looplets.program import Index, Literal
>>> print(Window(Offset(Index("i"), Literal(2)), Literal(2), Literal(5)))
window(i + 2, 2, 5)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .program import IndexModifier, show_expr


@dataclass(frozen=True)
class Offset(IndexModifier):
    """Index modifier: the access reads coordinate ``index + delta``.

    Prints as Finch's ``offset(A, delta)[index]``; unfurls to ``Shift(-delta)``.
    """

    index: Any
    delta: Any
    wrapper = "offset"
    neutral = "0"

    def wrapper_arg(self):
        return show_expr(self.delta)

    def __str__(self):
        return f"{self.index} + {self.delta}"


@dataclass(frozen=True)
class Permit(IndexModifier):
    """Index modifier ``~index``: reads outside the tensor give ``missing``.

    Prints as Finch's ``permissive(A, true)[index]``.
    """

    index: Any
    wrapper = "permissive"
    neutral = "false"

    def wrapper_arg(self):
        return "true"

    def __str__(self):
        return f"~{self.index}"


@dataclass(frozen=True)
class Window(IndexModifier):
    """Index modifier: the access sees only the coordinates ``[lo, hi)`` of its mode.

    ``A[window(i, 2, 5)]`` (or ``A[2:5][i]``) is wrapperized, as in Finch.jl
    (``A[I(k)] -> offset(window(A, I), start(I))``), into ``Window(Offset(i, 2), 2, 5)``,
    printed ``offset(window(A, 2:5), 2)[i]``: ``i`` runs over ``0:3`` and reads ``A[2 + i]``.
    ``lo`` and ``hi`` are loop-invariant program expressions (integers, tensor sizes).
    """

    index: Any
    lo: Any
    hi: Any
    wrapper = "window"
    neutral = "_"

    def wrapper_arg(self):
        return f"{show_expr(self.lo)}:{show_expr(self.hi)}"

    def __str__(self):
        return f"window({self.index}, {self.lo}, {self.hi})"


@dataclass(frozen=True)
class Protocol(IndexModifier):
    """Index modifier ``gallop(i)`` / ``walk(i)``: how the access's level is traversed on ``i``.

    ``walk`` (the default) steps through stored entries, following the other operands;
    ``gallop`` unfurls a :class:`~compiler.looplets.looplets.Jumper` that leads: two
    galloping lists intersect by mutual lookahead (each skips to the other's coordinate).
    """

    index: Any
    name: str
    wrapper = "protocolize"
    neutral = "_"

    def wrapper_arg(self):
        return self.name

    def __str__(self):
        return f"{self.name}({self.index})"


PROTOCOLS = ("walk", "gallop", "follow")
