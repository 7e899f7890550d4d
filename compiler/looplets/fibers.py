"""Fibers of a loop program's tensors, as the looplets strategy names them: a :class:`TensorInfo`
per tensor (its format, role and array names), a :class:`SubFiber` for fiber ``pos`` of one of its
storage levels, and the :class:`Namer` and :class:`UnfurlContext` the unfurls draw fresh names from.

>>> from compiler.format import csr
>>> info = TensorInfo.from_format("A", csr())
>>> child_fiber(info.root(), Var("i")).label()
'A.lvl1[i]'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..binding import array_name
from ..dtypes import dtype_name
from ..errors import StrategyError
from ..format import Format
from ..imperative import ir
from ..imperative.ir import Const, Load, Var
from ..levels import Element, Pattern
from ..names import FreshNames
from .bounds import IntFacts
from .program import Literal, Value


class Namer(FreshNames):
    """Fresh, readable C names: ``q``, ``q_2``, ... never reused in one kernel, nor C's words.

    >>> fresh = Namer({"q"})
    >>> fresh("q"), fresh("q"), fresh("if")
    ('q_2', 'q_3', 'if_2')
    """

    def clashes(self, name: str) -> bool:
        return name in self.taken or name in ir.RESERVED


class UnfurlContext:
    """What unfurling needs from the lowerer: fresh names; the facts it knows of the integers
    the nests compute (:class:`~compiler.looplets.bounds.IntFacts`), which the levels add to; and
    ``listed``, the byte-map outputs whose writes list the slots they mark (declared since
    their last freeze: every marked slot is one listed, so the freeze sorts the list and
    need not scan the table); ``reset``, the byte-map outputs whose declaration first thing
    the runtime does instead of the kernel (see :func:`compiler.looplets.reset_outputs.runtime_resets`),
    ``was_reset``, those whose declaration the lowering left to it; ``in_order``, whether each
    declaration's writes come in the order of the coordinates (:mod:`compiler.looplets.write_order`)
    and ``ordered``, the listed outputs so written, whose freeze need not sort; and ``in_range``, the
    computed coordinates it proved in range and left unchecked."""

    def __init__(self, namer: Namer | None = None, facts: IntFacts | None = None):
        self.fresh = namer or Namer()
        self.facts = facts if facts is not None else IntFacts()
        self.listed: set[str] = set()
        self.reset: set[str] = set()
        self.was_reset: set[str] = set()
        self.in_order: dict = {}
        self.ordered: set[str] = set()
        #: the computed coordinates lowered without a check, each with why it is in range
        self.in_range: list[str] = []
        #: the outputs assembled by a two-phase scatter (:mod:`compiler.looplets.scatter`), each with
        #: the pass being lowered (``count``, ``store``; None between them)
        self.scattered: dict = {}
        #: the scattered outputs whose entries are updated (a reduction: SpGEMM's sum over k), each
        #: write combined with its fiber's last entry, with the value a new entry starts at
        self.combined: dict = {}
        #: the C locals a scatter's entries are computed in before they take a slot, by the name of
        #: the 0-D stand-in each entry's write goes to (:func:`compiler.looplets.scatter.scatter_unfurl`)
        self.entry_locals: dict = {}
        #: the outputs a write of the fill may empty a stored entry of, each with the levels whose
        #: freeze leaves such entries out (:func:`compiler.looplets.level_writers.fill_dropping`)
        self.drops_fills: dict = {}


@dataclass(eq=False)
class TensorInfo:
    """A tensor as the lowering sees it: its format, parameter names and role."""

    name: str
    format: Format
    role: str = "input"  # "input", "output" or "temporary"
    shape: Any = None

    @classmethod
    def from_format(cls, name, fmt, role="input", shape=None):
        return cls(name, fmt, role, shape)

    @property
    def levels(self):
        return self.format.levels

    @property
    def leaf(self):
        return self.format.leaf

    @property
    def ndim(self):
        return self.format.ndim

    def size(self, m: int):
        """The extent of storage mode ``m`` (a kernel scalar parameter)."""
        return Var(array_name(self.name, m, "size"))

    def array(self, level, kind):
        return array_name(self.name, level, kind)

    def root(self, mode="read"):
        return SubFiber(self, 0, Const(0, "int64"), mode)

    @property
    def fill(self):
        return self.leaf.fill

    @property
    def scalar_kind(self) -> str | None:
        """For a 0-D tensor: ``Scalar``, ``SparseScalar`` or ``ShortCircuitScalar``
        (see :mod:`compiler.looplets.scalars`); None for tensors with levels."""
        if self.levels:
            return None
        return getattr(self.format, "kind", "Scalar")

    @property
    def dtype(self) -> str:
        return dtype_name(self.leaf.dtype if self.leaf.dtype is not None else "float64")   # (memoized)

    def storage_mode(self, level: int) -> int:
        """The storage mode number of the first mode of storage level ``level``."""
        return sum(lvl.nmodes for lvl in self.levels[:level])


@dataclass(frozen=True, eq=False)
class SubFiber:
    """Fiber ``pos`` of storage level ``level`` of ``tensor`` (the leaf when past the last level).

    ``dirty`` names the flag a sparse output parent watches: writing sets it.
    """

    tensor: TensorInfo
    level: int
    pos: Any
    mode: str = "read"
    dirty: Any = None
    #: inside a multi-mode level (SparseCOO): ``(mode, lo, hi)``, the next mode to unfurl
    #: and the range of stored tuples that share the modes before it
    seg: Any = None
    #: a test (IR) that the fiber is there, or None (always): where it fails the fiber is empty, all
    #: its fill (the child of a merged walk's step where that walk's child does not end there,
    #: :mod:`.merged_walks`); only levels that say they can be absent (:func:`.absent_fibers.can_be_absent`)
    present: Any = None

    @property
    def is_leaf(self) -> bool:
        return self.level >= len(self.tensor.levels)

    @property
    def lvl(self):
        return self.tensor.leaf if self.is_leaf else self.tensor.levels[self.level]

    def label(self) -> str:
        return f"{self.tensor.name}.lvl{self.level}[{self.pos}]" if self.level else self.tensor.name

    def __str__(self):
        return self.label()


def fiber_tag(info: TensorInfo) -> str:
    return info.name if len(info.name) <= 3 else info.name[:3]


def child_fiber(f: SubFiber, pos, dirty=None) -> SubFiber:
    """The fiber at position ``pos`` of the level below ``f``'s (absent where ``f`` is)."""
    return SubFiber(f.tensor, f.level + 1, pos, f.mode, dirty if dirty is not None else f.dirty,
                    present=f.present)


def when_present(f: SubFiber, value, absent):
    """``value``, an IR expression of fiber ``f``'s, where ``f`` is there, else ``absent`` (C's
    ``?:`` evaluates only the branch taken: an absent fiber reads nothing).

    >>> from compiler.format import csr
    >>> root = TensorInfo.from_format("A", csr()).root()
    >>> print(when_present(SubFiber(root.tensor, 1, Var("q"), present=Var("here")), Var("x"), Const(0, "int64")))
    here ? x : 0
    """
    return value if f.present is None else ir.Select(f.present, value, absent)


def fill_value(info: TensorInfo):
    """The fill of ``info``'s tensor as a literal of its dtype (what is folded from it wraps as numpy's values do)."""
    return Literal(info.fill, dtype=info.dtype)


def leaf_value(f: SubFiber):
    """The value a read of leaf fiber ``f`` gives (a program expression)."""
    if isinstance(f.lvl, Pattern):
        return Literal(True) if f.present is None else Value(f.present, "bool")
    if isinstance(f.lvl, Element):
        return Value(when_present(f, Load(f.tensor.array(None, "vals"), f.pos), Const(f.tensor.fill, f.tensor.dtype)),
                     f.tensor.dtype, source=f.tensor.name)
    raise StrategyError(f"tensor {f.tensor.name}: cannot read leaf level {f.lvl.name}")
