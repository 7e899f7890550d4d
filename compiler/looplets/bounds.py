"""What the looplet lowering knows of the integers its code computes, each fact with its origin.

:func:`compiler.looplets.extents.prove_le` proves ``a <= b`` from the expressions alone (``n - 1 <=
n``, ``min(a, b) <= a``). While the lowering is :func:`assuming` an :class:`IntFacts`, it also uses:

* **stored coordinates**: an entry of an array a level says holds coordinates of one of its modes
  (:meth:`compiler.levels.level.Level.coordinate_arrays`) is in ``[0, size)``: the level's
  ``check`` validates it when the tensor is built, and a kernel trusts a built tensor (README;
  ``checked=True`` validates each call's). Only the raw load is bounded: ``A1_idx[q] - 1`` may be
  -1, as a shifted coordinate may;
* **bounds of locals**: a local the lowering declares once and never assigns, known to lie in a
  range (a fiber's ``last``, one past its last coordinate or 0, is in ``[0, size]``);
* **definitions**: a local declared once and never assigned, of an expression whose values do not
  change while it is live (a phase's stop, ``min(lastA, lastB)``), is that expression; so is a size
  the call checks equal to another (every operand an index reads unshifted has its extent);
* **positivity**: a local that is at least 1 exactly when a test holds and else 0 (a fiber's
  ``last`` is positive exactly when the fiber stores an entry, ``q < q_stop``), so a phase up to it
  that starts at 0 or below runs when the fiber is not empty, a test that does not load the fiber's
  last coordinate (a cache miss at the row's end, before its entries are read from its start);
* **ranges**: constant bounds of every entry of an array (a uint8 image's are in ``[0, 255]``) or of
  a parameter (an output's extent fixed when the kernel is compiled), which
  :func:`compiler.looplets.ranges.value_range` reads to bound a computed coordinate. ``prove_le``
  does not read them: they bound values, not the loops' extents it compares.

>>> from compiler.imperative.ir import Load, Var
>>> from compiler.looplets import extents as X
>>> facts = IntFacts()
>>> facts.coordinate_array("A1_idx", Var("A1_size"), "A.lvl1 stores coordinates of mode 1")
>>> facts.bound(Var("lastA"), 0, Var("A1_size"), "one past A's fiber's last coordinate")
>>> with assuming(facts):
...     X.prove_le(0, Load("A1_idx", Var("q"))), X.prove_le(0, X.sub(Load("A1_idx", Var("q")), 1))
(True, False)
>>> with assuming(facts):
...     print(X.imin(Var("lastA"), Var("A1_size")))
lastA
>>> print(facts.table())
0 <= A1_idx[_] < A1_size: A.lvl1 stores coordinates of mode 1
0 <= lastA <= A1_size: one past A's fiber's last coordinate
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar

import numpy as np

from ..binding import array_name, level_arrays
from ..imperative.ir import Load, Var, as_expr
from ..imperative.traverse import walk
from ..notation import ast as N
from ..notation.shape import Concat


class IntFacts:
    """The facts of one lowering (see the module docstring); each method records one, with the
    sentence saying why it holds."""

    def __init__(self):
        #: buffer name -> (the size its entries are below, origin)
        self.coordinates: dict = {}
        #: local name -> (lower bound or None, upper bound or None, origin)
        self.bounds: dict = {}
        #: local name -> (the expression it equals, origin)
        self.definitions: dict = {}
        #: buffer or parameter name -> (least value, greatest value, origin, of a buffer's entries)
        self.ranges: dict = {}
        #: local name -> (the test it is positive exactly when, origin)
        self.positive: dict = {}

    def coordinate_array(self, buffer: str, size, origin: str) -> None:
        """Every entry of ``buffer`` is a coordinate in ``[0, size)``."""
        self.coordinates[buffer] = (as_expr(size), origin)

    def bound(self, var: Var, low, high, origin: str) -> None:
        """``low <= var <= high`` wherever ``var`` is read (either may be None: unknown)."""
        self.bounds[var.name] = (None if low is None else as_expr(low), None if high is None else as_expr(high),
                                 origin)

    def define(self, var: Var, expr, origin: str) -> None:
        """``var == expr`` wherever ``var`` is read: ``var`` is never assigned, and nothing ``expr``
        reads changes while ``var`` is live."""
        self.definitions[var.name] = (as_expr(expr), origin)

    def positive_when(self, var: Var, test, origin: str) -> None:
        """``var >= 1`` exactly when ``test`` holds, else ``var == 0``, wherever ``var`` is read
        before what ``test`` reads changes (``test`` reads locals declared with ``var`` and assigned
        only after the first phase up to ``var`` is entered)."""
        self.positive[var.name] = (as_expr(test), origin)

    def positive_test(self, e):
        """The test ``e`` (a local) is positive exactly when, or None when none is known."""
        return self.positive[e.name][0] if isinstance(e, Var) and e.name in self.positive else None

    def value_range(self, subject: str, low: int, high: int, origin: str, entries: bool = True) -> None:
        """Every entry of buffer ``subject`` (or, not ``entries``, parameter ``subject``) is in
        ``[low, high]``."""
        self.ranges[subject] = (int(low), int(high), origin, entries)

    def range_of(self, subject: str):
        """``(low, high)`` of a buffer's entries or a parameter, or None when no range is known."""
        r = self.ranges.get(subject)
        return None if r is None else r[:2]

    def coordinate_size(self, e):
        """The size an expression's value is below when it is a stored coordinate, else None."""
        if isinstance(e, Load) and e.buffer in self.coordinates:
            return self.coordinates[e.buffer][0]
        return None

    def low(self, e):
        return self.bounds[e.name][0] if isinstance(e, Var) and e.name in self.bounds else None

    def high(self, e):
        return self.bounds[e.name][1] if isinstance(e, Var) and e.name in self.bounds else None

    def definition(self, e):
        return self.definitions[e.name][0] if isinstance(e, Var) and e.name in self.definitions else None

    def records(self) -> list[dict]:
        """The facts as data, one dict each (the trace's ``int-facts`` step holds them): ``kind``
        (``coordinates``, ``bound``, ``definition``, ``positive`` or ``range``), ``subject`` (a buffer or a local),
        ``low``, ``high`` (bounds, as text; None: none), ``equals`` (a definition's
        expression), ``fact`` (the whole fact, as text) and ``reason`` (why it holds); a ``positive``
        fact also ``reads``, the locals its test reads.

        >>> f = IntFacts()
        >>> f.bound(Var("lastA"), 0, Var("A1_size"), "one past A's last coordinate")
        >>> f.records()[0]["fact"], f.records()[0]["high"]
        ('0 <= lastA <= A1_size', 'A1_size')
        """
        out = [{"kind": "coordinates", "subject": b, "low": "0", "high": str(size), "equals": None,
                "fact": f"0 <= {b}[_] < {size}", "reason": why}
               for b, (size, why) in self.coordinates.items()]
        out += [{"kind": "bound", "subject": v, "low": None if lo is None else str(lo),
                 "high": None if hi is None else str(hi), "equals": None,
                 "fact": f"{'' if lo is None else f'{lo} <= '}{v}{'' if hi is None else f' <= {hi}'}", "reason": why}
                for v, (lo, hi, why) in self.bounds.items()]
        out += [{"kind": "definition", "subject": v, "low": None, "high": None, "equals": str(e),
                 "fact": f"{v} == {e}", "reason": why} for v, (e, why) in self.definitions.items()]
        out += [{"kind": "positive", "subject": v, "low": None, "high": None, "equals": None,
                 "fact": f"{v} > 0 exactly when {t}", "reason": why,
                 "reads": sorted({n.name for n in walk(t) if isinstance(n, Var)})}
                for v, (t, why) in self.positive.items()]
        out += [{"kind": "range", "subject": v, "low": str(lo), "high": str(hi), "equals": None,
                 "fact": f"{lo} <= {v}{'[_]' if each else ''} <= {hi}", "reason": why}
                for v, (lo, hi, why, each) in self.ranges.items()]
        return out

    def table(self) -> str:
        """The facts, one a line with its origin (the text of the trace's ``int-facts`` step)."""
        return "\n".join(f"{r['fact']}: {r['reason']}" for r in self.records())


def input_facts(tensors: dict, equal_sizes=()) -> IntFacts:
    """The facts of a lowering's inputs: each array a level of an input says holds coordinates
    (:meth:`~compiler.levels.level.Level.stored_coordinates`), the range of each array of a
    narrow integer dtype (uint8: ``[0, 255]``), and ``equal_sizes``, groups of size parameters the
    call checks equal (each group's later sizes defined as its first).

    >>> from compiler.format import csr
    >>> from compiler.looplets.fibers import TensorInfo
    >>> infos = {t: TensorInfo.from_format(t, csr()) for t in "AB"}
    >>> print(input_facts(infos, [(Var("A1_size"), Var("B1_size"))]).table())
    0 <= A1_idx[_] < A1_size: A.lvl1 (SparseList) stores coordinates of its mode 1, validated when A is built
    0 <= B1_idx[_] < B1_size: B.lvl1 (SparseList) stores coordinates of its mode 1, validated when B is built
    B1_size == A1_size: the call checks that A1_size, B1_size, the extents of one index, are equal
    """
    facts = IntFacts()
    for name, info in tensors.items():
        if info.role != "input":
            continue
        for k, lvl in enumerate(info.levels):
            for array, m in lvl.stored_coordinates().items():
                mode = info.storage_mode(k) + m
                facts.coordinate_array(array_name(name, k, array), info.size(mode),
                                       f"{name}.lvl{k} ({lvl.name}) stores coordinates of its mode {mode}, "
                                       f"validated when {name} is built")
        for k, kind, dt in level_arrays(info.format):
            # (narrow integer values are bounded by their dtype; int64's bound nothing. A level's
            # stored coordinates have their own, tighter fact)
            if k is None and dt.kind in "iub" and dt.itemsize < 8:
                low, high = (0, 1) if dt.kind == "b" else (np.iinfo(dt).min, np.iinfo(dt).max)
                facts.value_range(array_name(name, k, kind), low, high, f"{name}'s {dt.name} entries")
    for group in equal_sizes:
        for size in group[1:]:
            if size != group[0]:
                facts.define(size, group[0], f"the call checks that {', '.join(map(str, group))}, the extents "
                                             f"of one index, are equal")
    return facts


def shape_equal_sizes(assign, infos: dict) -> list:
    """Groups of size parameters each call of a kernel of ``assign`` (index notation with shape
    operators) checks equal: the input modes each index reads directly, whose extents every call's
    shape inference (:func:`compiler.notation.infer.infer_shapes`, index names being global)
    requires to agree. (A vstack's ``B[j, i]`` and ``C[k, i]``: ``C1_size == B1_size``, so a walk of
    ``C``'s row needs no cut at ``B1_size``.)

    >>> from compiler.format import csr
    >>> from compiler.looplets.fibers import TensorInfo
    >>> from compiler.notation import parse
    >>> infos = {t: TensorInfo.from_format(t, csr()) for t in "BC"}
    >>> shape_equal_sizes(parse("D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)"), infos)
    [[Var(name='B1_size'), Var(name='C1_size')]]
    """
    groups: dict = {}
    for i, size in _direct_sizes(assign, infos):
        if size not in groups.setdefault(i, []):
            groups[i].append(size)
    return [g for g in groups.values() if len(g) > 1]


def _direct_sizes(assign, infos: dict):
    """``(index, size parameter)`` of each input mode an access of ``assign`` reads an index at directly."""
    for n in N.walk(assign.rhs):
        info = infos.get(n.tensor) if isinstance(n, N.Access) else None
        if info is None or info.role != "input":
            continue
        order = info.format.mode_order
        for m, i in enumerate(n.indices):
            if not isinstance(i, int):
                yield i, info.size(order.index(m))


def concat_part_sizes(assign, infos: dict) -> list:
    """The size parameters of the parts of each concatenation in ``assign`` read at an index no loop of it
    walks (an input mode a part's index reads directly): each at least 0, so the windows of the parts, read
    at a split's ``q + p·|q|``, follow in order, and a combination of two parts' windows is provably empty
    (:meth:`~compiler.looplets.looplet_rules.LoopletRules.lower_sequence`). A concatenation whose index is a loop
    splits that loop into one per part instead.

    >>> from compiler.format import csr
    >>> from compiler.looplets.fibers import TensorInfo
    >>> from compiler.notation import parse
    >>> infos = {t: TensorInfo.from_format(t, csr()) for t in "BC"}
    >>> concat_part_sizes(parse("D[i, p, q] = split(concat((B[i, j], C[i, k]), (j, k) -> l), l -> (p:2, q:3))"),
    ...                   infos)
    [Var(name='B1_size'), Var(name='C1_size')]
    >>> concat_part_sizes(parse("D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l)"), infos)
    []
    """
    walked = set(assign.lhs.indices) | {i for n in N.walk(assign.rhs) if isinstance(n, N.Reduce) for i in n.indices}
    parts = {j for n in N.walk(assign.rhs) if isinstance(n, Concat) and n.result not in walked for j in n.indices}
    out = []
    for i, size in _direct_sizes(assign, infos):
        if i in parts and size not in out:
            out.append(size)
    return out


_CURRENT: ContextVar = ContextVar("int_facts", default=None)


@contextlib.contextmanager
def assuming(facts: IntFacts):
    """Prove under ``facts`` (see the module docstring) until the block ends."""
    token = _CURRENT.set(facts)
    try:
        yield facts
    finally:
        _CURRENT.reset(token)


def current() -> IntFacts | None:
    """The facts being assumed, or None outside :func:`assuming`."""
    return _CURRENT.get()


__all__ = ["IntFacts", "assuming", "concat_part_sizes", "current", "input_facts", "shape_equal_sizes"]
