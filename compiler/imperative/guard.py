"""A check of a coordinate a program computes, in every build of its kernel.

A loop's index stays inside the extents its loop runs over, so an access at a loop index
is in bounds by construction and goes unchecked. A coordinate a program computes, a scatter
``y[I[i]] += x[i]``, a gather ``y[i] = x[I[i]]``, a histogram ``bins[v[i] // w] += 1``, is bounded
by nothing but the data: a :class:`CheckCoordinate` before the access leaves the kernel with
:data:`STATUS_COORDINATE` when it is outside ``[0, extent)``, recording (site, value, extent) in
the kernel's error slots, and the runtime raises a :class:`~compiler.errors.KernelError` that
says which access of which line it was (:func:`coordinate_message`).

>>> from compiler.imperative import Var, pretty
>>> s = CheckCoordinate(Var("c"), Var("y0_size"), "y", 0, "line 3 of scatter (y[I[i]] += x[i])")
>>> print(pretty(s))
check 0 <= c < y0_size;  // y, mode 0: line 3 of scatter (y[I[i]] += x[i])
>>> print(coordinate_message("scatter", s.site, 7, 3))
kernel scatter: line 3 of scatter (y[I[i]] += x[i]): coordinate 7 of y (mode 0) is outside its extent [0, 3)
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import serialize
from .ir import Expr, Stmt, as_expr
from .traverse import walk

#: the status a kernel returns for a computed coordinate out of range (after the C emitter's
#: 1, out of bounds in checked mode, and 2, out of memory)
STATUS_COORDINATE = 3

#: the noun of a check of a coordinate an input's owner stored (:mod:`compiler.imperative.owned_coordinates`):
#: out of range, the input is malformed (a FormatError), not the program
STORED = "stored coordinate"


@serialize.node
@dataclass(frozen=True)
class CheckCoordinate(Stmt):
    """Leave the kernel unless ``0 <= value < extent``, the extent of (logical) ``mode`` of
    ``tensor``; ``where`` names the program's line, for the error the runtime raises."""

    value: Expr
    extent: Expr
    tensor: str
    mode: int
    where: str
    #: what the value is, for the message: a coordinate, or an output's "entry count"
    #: (:mod:`compiler.imperative.narrow`)
    noun: str = "coordinate"

    def __post_init__(self):
        object.__setattr__(self, "value", as_expr(self.value))
        object.__setattr__(self, "extent", as_expr(self.extent))
        if "\n" in self.what or "*/" in self.what:
            raise ValueError("a CheckCoordinate's description is one line without '*/'")

    @property
    def site(self) -> tuple:
        return (self.tensor, self.mode, self.where, self.noun)

    @property
    def what(self) -> str:
        """The access checked, as a comment in the code says it."""
        return f"{self.tensor}, mode {self.mode}: {self.where}"


def coordinate_sites(body, nodes=None) -> list[tuple]:
    """The sites (tensor, mode, line, noun) of the coordinate checks in ``body``, numbered as the C
    emitter and the runtime number them (the first of equal ones: a looplet lowering may copy
    a check into several of its cases); ``nodes``: ``body``'s nodes, where they are walked already."""
    return list(dict.fromkeys(n.site for n in (walk(body) if nodes is None else nodes)
                              if isinstance(n, CheckCoordinate)))


def coordinate_message(kernel: str, site: tuple, value: int, extent: int) -> str:
    """The error a coordinate out of range raises (the same from a C kernel and the interpreter)."""
    tensor, mode, where, noun = site
    if noun != "coordinate":
        return f"kernel {kernel}: {where}: {noun} {value} is outside [0, {extent})"
    return f"kernel {kernel}: {where}: coordinate {value} of {tensor} (mode {mode}) is outside its extent [0, {extent})"


__all__ = ["CheckCoordinate", "STATUS_COORDINATE", "STORED", "coordinate_message", "coordinate_sites"]
