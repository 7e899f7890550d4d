"""The statements of the sequence CFIR (:mod:`compiler.lattice.seqcfir`) and of the concrete index notation it is
built from, with their printer: :class:`Forall`, :class:`Assign`, :class:`Reduce`, :class:`Alloc`, :class:`Fold`,
:class:`Block`, :class:`Skip` (the input), :class:`While`, :class:`Switch` and :class:`Bind` (the CFIR).

>>> from compiler.lattice.sequences import Level
>>> from compiler.lattice.seqcfirvalues import Read, Temp
>>> a = Level("a", 0, "compressed", 4)
>>> print(While("i", a, (), Assign("c", ("i",), Read("a", (a,)))))
while i <- i_a
  c(i) = a(i_a)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import serialize
from .seqcfirvalues import Lit, Value, value_children, value_parts, value_text
from .seqlattice import loop_tag
from .sequences import Seq

INDENT = "  "


# -- statements (CIN and CFIR) -------------------------------------------------------------------------


class Stmt:
    def __str__(self) -> str:
        return "\n".join(printed_lines(self, 0))

    def children(self) -> tuple:
        """The statements this one runs (a block's, a loop's body, a switch's cases): a walker's next step.

        >>> Block((Skip(), Block((Skip(),)))).children()
        (Skip(), Block(stmts=(Skip(),)))
        """
        if isinstance(self, Block):
            return self.stmts
        if isinstance(self, Switch):
            return tuple(body for _, body in self.cases)
        body = getattr(self, "body", None)
        return (body,) if isinstance(body, Stmt) else ()

    def printed_parts(self) -> tuple[str, dict]:
        """The text and where its parts are printed (``{line: [[start, end, about, role]]}``,
        lines 1-based as strings, as a trace step records them): each ``forall``'s head (role
        ``loop``, its index), each read and each written output (role ``access``: the tensor, the
        loops around it, read or update). A ``while`` head is recorded with its tag instead
        (:func:`loop_spans`).

        >>> from compiler.lattice.sequences import Level
        >>> from compiler.lattice.seqcfirvalues import Read
        >>> a = Level("a", 0, "compressed", 4)
        >>> text, parts = Forall("i", a, Assign("c", ("i",), Read("a", (a,)))).printed_parts()
        >>> print(text)
        forall i ∈ i_a
          c(i) = a(i_a)
        >>> parts["1"], [(text.splitlines()[1][x:y], about["indices"]) for x, y, about, _ in parts["2"]]
        ([[0, 8, {'index': 'i'}, 'loop']], [('c(i)', ['i']), ('a(i_a)', ['i'])])
        """
        lines = _spanned_lines(self, 0)
        return "\n".join(x for x, _, _ in lines), {str(n): parts for n, (_, _, parts) in enumerate(lines, 1) if parts}


@serialize.node
@dataclass(frozen=True)
class Assign(Stmt):
    """``out(idxs) = value``."""

    out: str
    idxs: tuple
    value: Value


@serialize.node
@dataclass(frozen=True)
class Reduce(Stmt):
    """``out(idxs) += value`` (``idxs`` empty: a scalar temporary); ``count``: a counter of the
    coordinates summed, one more with each (a sum whose summand's fill is not 0: :class:`Fold`).
    ``op``: another reduction into a scalar temporary, ``t = max(t, value)`` (None: the sum). ``ordered``: a
    product run at every coordinate in order, which multiplies even by 1 (of complex values not a no-op where one is
    infinite: :func:`~compiler.lattice.seqvalues.in_order`)."""

    out: str
    idxs: tuple
    value: Value
    count: str = ""
    op: Any = None
    ordered: bool = False

    @property
    def unchanged(self) -> float:
        """The value that leaves the temporary as it is (the operator's identity: 0 for a sum).

        >>> from compiler.algebra import lookup
        >>> Reduce("t", (), Lit(1.0)).unchanged, Reduce("t", (), Lit(1.0), op=lookup("max")).unchanged
        (0.0, -inf)
        """
        return 0.0 if self.op is None else float(self.op.identity)


@serialize.node
@dataclass(frozen=True)
class Alloc(Stmt):
    """``alloc t``: a scalar temporary, 0 (and its ``count``, 0, where it has one); ``init``: another start
    (the identity of the reduction into it: ``-inf`` for ``max``); ``dtype``: the dtype it reduces in, where it is
    not the output's (``max[i](x[i]) != 0`` of a float ``x`` into a bool output reduces in float64)."""

    name: str
    count: str = ""
    init: float = 0.0
    dtype: str = ""


@serialize.node
@dataclass(frozen=True)
class Fold(Stmt):
    """``t += (extent - count) * fill`` where ``count < extent``: the summand's ``fill`` for each of
    the ``extent`` coordinates of a sum its loops skipped (``count`` those they summed). Only where
    some were skipped: ``0 * NaN`` is NaN. With ``idxs``, at every coordinate of output ``out`` of
    ``shape``, ``count`` one per coordinate (a sum whose loops run around the output's:
    :mod:`compiler.lattice.seqhoist`)."""

    out: str
    count: str
    extent: int
    fill: float
    idxs: tuple = ()
    shape: tuple = ()
    #: another reduction (a scalar's): ``t = max(t, fill) if count < extent``, the fill a fixed point of ``op``
    #: (an idempotent operator's any fill, a product's 0, 1, inf or NaN), so once is as many times
    op: Any = None
    #: a product's fill that is not its fixed point (2, -inf), into a scalar: ``t = t * fill ** (extent - count)``
    #: (exact for the integer count; NaN and inf as IEEE's pow gives them)
    power: bool = False

    def missed(self, counted: int):
        """What the fold adds after ``counted`` coordinates were summed (reduces, with ``op``).

        >>> from compiler.algebra import lookup
        >>> Fold("t", "n", 4, 1.0).missed(1), Fold("t", "n", 4, float("nan")).missed(4)
        (3.0, 0.0)
        >>> Fold("t", "n", 4, 0.0, op=lookup("max")).missed(1), Fold("t", "n", 4, 0.0, op=lookup("max")).missed(4)
        (0.0, -inf)
        >>> Fold("t", "n", 4, -2.0, op=lookup("mul"), power=True).missed(1)
        -8.0
        >>> mul = lookup("mul")
        >>> Fold("t", "n", 66, 2, op=mul, power=True).missed(1), Fold("t", "n", 4, 3, op=mul, power=True).missed(2)
        (0, 9)
        """
        if self.op is not None and self.power:
            if counted >= self.extent:
                return 1.0
            if isinstance(self.fill, (int, np.integer)) and not isinstance(self.fill, bool):
                # (an integer's power wraps in 64 bits, as numpy's product of that many does)
                wide = np.uint64 if np.asarray(self.fill).dtype.kind == "u" else np.int64
                with np.errstate(over="ignore"):
                    return int(np.power(wide(self.fill), wide(self.extent - counted)))
            return float(np.power(np.float64(self.fill), self.extent - counted))
        if self.op is not None:
            return self.fill if counted < self.extent else float(self.op.identity)
        return (self.extent - counted) * self.fill if counted < self.extent else 0.0


@serialize.node
@dataclass(frozen=True)
class Block(Stmt):
    """Statements one after the other (the CFIR's ``cfir; cfir``)."""

    stmts: tuple


@serialize.node
@dataclass(frozen=True)
class Skip(Stmt):
    """Nothing to do (a body whose every read is absent at its sub-point)."""


@serialize.node
@dataclass(frozen=True)
class Forall(Stmt):
    """``forall index ∈ seq: body`` (concrete index notation)."""

    index: str
    seq: Seq
    body: Stmt


@serialize.node
@dataclass(frozen=True)
class While(Stmt):
    """``while index <- seq with located = iterated, ...: body``, until an edge sequence runs out.

    ``init``: what the first loop of a lattice's series initializes (its sequence and every
    located one of the series), which the later loops continue with; empty for the others.
    """

    index: str
    seq: Seq
    locs: tuple
    body: Stmt
    init: tuple = ()
    #: the π1s the first loop of the series restarts at their group's start (a loop between it and
    #: the π0's walks the group once per coordinate: :mod:`compiler.lattice.seqrewind`)
    rewind: tuple = ()
    #: a merged union (Finch's stepper over its operands, :meth:`Compiler.merged`): the loop runs until
    #: every operand of ``seq`` ran out, at the least coordinate of those left, and its body tests each
    #: operand there (a one-case :class:`Switch` around each part that reads it); not one loop per point
    merged: bool = False


@serialize.node
@dataclass(frozen=True)
class Bind(Stmt):
    """``index = outer·size + inner``, then ``body``: the coordinate of a product whose operands'
    loops are nested, the right one's lattice inside each coordinate of the left
    (:mod:`compiler.lattice.seqproductnest`)."""

    index: str
    outer: str
    inner: str
    size: int
    body: Stmt

    @property
    def made_of(self) -> tuple[str, str]:
        """The loops ``index`` is made of: written at where ``index`` is (a product nested twice)."""
        return (self.outer, self.inner)


@serialize.node
@dataclass(frozen=True)
class Switch(Stmt):
    """``switch index`` with ``case seq: body`` per sub-point, the first one at ``index`` runs."""

    index: str
    cases: tuple


def printed_lines(s, depth: int) -> list[str]:
    return [line for line, _, _ in _spanned_lines(s, depth)]


def loop_spans(s: Stmt) -> dict[str, list[list]]:
    """``{line: [[start, end, tag, "loop"]]}`` of ``str(s)``: where each ``while`` loop's head is
    printed, with the tag of its code (``lattice:<index>:<sequence>``, as the emitter tags it), for
    the explorer to mark it there (lines 1-based, as strings).

    >>> from compiler.lattice.sequences import Level
    >>> from compiler.lattice.seqcfirvalues import Read, Temp
    >>> a = Level("a", 0, "compressed", 4)
    >>> loop_spans(While("i", a, (), Assign("c", ("i",), Read("a", (a,)))))
    {'1': [[0, 14, 'lattice:i:i_a', 'loop']]}
    """
    return {str(n): [list(x) for x in spans] for n, (_, spans, _) in enumerate(_spanned_lines(s, 0), 1) if spans}


def while_clauses(w: While) -> list[str]:
    """The loop's head and what qualifies it, each a line of its drawn box (the printer joins them).

    >>> from compiler.lattice.sequences import Level
    >>> a = Level("a", 0, "compressed", 4); b = Level("b", 0, "dense", 4)
    >>> while_clauses(While("i", a, ((b, a),), Skip(), merged=True))
    ['while i <- i_a', 'with i_b = i_a', 'until all ran out']
    """
    locs = ", ".join(f"{a} = {b}" for a, b in w.locs)
    return [f"while {w.index} <- {w.seq}"] + ([f"with {locs}"] if locs else []) + \
        ([f"from {', '.join(str(p.a) for p in w.rewind)}'s group start"] if w.rewind else []) + \
        (["until all ran out"] if w.merged else [])


def while_tag(w: While) -> str:
    """The provenance tag of a loop's code, ``lattice:<index>:<sequence>`` (:func:`~.seqlattice.loop_tag`)."""
    return loop_tag(w.index, w.seq)


def _spanned_lines(s, depth: int, scope: tuple = ()) -> list[tuple[str, tuple, list]]:
    """Each line of ``s`` printed at ``depth`` inside the loops ``scope``: its text, its loop
    heads' spans with their tags (:func:`loop_spans`) and its parts (:meth:`Stmt.printed_parts`)."""
    pad = INDENT * depth
    if isinstance(s, (Assign, Reduce)):
        lhs = f"{s.out}({', '.join(s.idxs)})" if s.idxs or isinstance(s, Assign) else s.out
        op = " = " if isinstance(s, Assign) else " += " if s.op is None else f" = {s.op.name}({lhs}, "
        value, parts = value_parts(s.value, len(pad) + len(lhs) + len(op), scope)
        value += ")" if isinstance(s, Reduce) and s.op is not None else ""
        # (the output written, not a temporary: a temporary has no indices)
        written = ([[len(pad), len(pad) + len(lhs), {"tensor": s.out, "indices": list(s.idxs), "mode": "update"},
                     "access"]] if s.idxs else [])
        at = f"({', '.join(s.idxs)})" if s.idxs else ""
        counted = [(f"{pad}{s.count}{at} += 1", (), [])] if isinstance(s, Reduce) and s.count else []
        return [(f"{pad}{lhs}{op}{value}", (), written + parts)] + counted
    if isinstance(s, Alloc):
        start = f" = {value_text(Lit(s.init))}" if s.init != 0 else ""
        return [(f"{pad}alloc {s.name}{start}" + (f", {s.count}" if s.count else ""), (), [])]
    if isinstance(s, Fold) and s.op is not None:
        at = f"({', '.join(s.idxs)})" if s.idxs else ""
        every = f"forall {', '.join(s.idxs)}: " if s.idxs else ""
        fill = value_text(Lit(s.fill)) + (f" ** ({s.extent} - {s.count}{at})" if s.power else "")
        return [(f"{pad}{every}{s.out}{at} = {s.op.name}({s.out}{at}, {fill}) if {s.count}{at} < "
                 f"{s.extent}", (), [])]
    if isinstance(s, Fold):
        fill = value_text(Lit(s.fill))
        at = f"({', '.join(s.idxs)})" if s.idxs else ""
        every = f"forall {', '.join(s.idxs)}: " if s.idxs else ""
        return [(f"{pad}{every}{s.out}{at} += ({s.extent} - {s.count}{at}) * {fill} if {s.count}{at} < {s.extent}",
                 (), [])]
    if isinstance(s, Skip):
        return [(f"{pad}skip", (), [])]
    if isinstance(s, Block):
        return [line for x in s.stmts for line in _spanned_lines(x, depth, scope)]
    if isinstance(s, Forall):
        head = f"forall {s.index}"
        return ([(f"{pad}{head} ∈ {s.seq}", (), [[len(pad), len(pad) + len(head), {"index": s.index}, "loop"]])]
                + _spanned_lines(s.body, depth + 1, scope + (s.index,)))
    if isinstance(s, While):
        head, *clauses = while_clauses(s)
        return ([(f"{pad}{' '.join([head] + clauses)}", ((len(pad), len(pad) + len(head), while_tag(s), "loop"),), [])]
                + _spanned_lines(s.body, depth + 1, scope + (s.index,)))
    if isinstance(s, Bind):
        return [(f"{pad}{s.index} = {s.outer}·{s.size} + {s.inner}", (), [])] + _spanned_lines(s.body, depth, scope)
    if isinstance(s, Switch):
        out = [(f"{pad}switch {s.index}", (), [])]
        for seq, body in s.cases:
            out.append((f"{pad}case {seq}:", (), []))
            out += _spanned_lines(body, depth + 1, scope)
        return out
    raise TypeError(f"not a statement: {s!r}")


def c_lines_at_least(s: Stmt) -> int:
    """How many lines of C ``s`` makes at the least: one per statement, loop head and case (each case an
    ``if``; a reduction that counts what it summed, two), none for a switch's head or a ``skip`` (a lower
    bound for :mod:`compiler.lowering_budget`: the emitter makes several lines of most).

    >>> from compiler.lattice.sequences import Level
    >>> from compiler.lattice.seqcfirvalues import Read
    >>> a = Level("a", 0, "compressed", 4)
    >>> c_lines_at_least(While("i", a, (), Switch("i", ((a, Assign("c", ("i",), Read("a", (a,)))), (a, Skip())))))
    4
    """
    if isinstance(s, Skip):
        return 0
    if isinstance(s, Block):
        return sum(c_lines_at_least(x) for x in s.stmts)
    if isinstance(s, Switch):
        return sum(1 + c_lines_at_least(body) for _, body in s.cases)
    if isinstance(s, (Forall, While, Bind)):
        return 1 + c_lines_at_least(s.body)
    return 2 if isinstance(s, Reduce) and s.count else 1


def loop_count(s: Stmt) -> int:
    """The ``while`` loops in ``s``.

    >>> from compiler.lattice.sequences import Level
    >>> a = Level("a", 0, "compressed", 4)
    >>> loop_count(Block((While("i", a, (), Skip()), While("j", a, (), While("k", a, (), Skip())))))
    3
    """
    return int(isinstance(s, While)) + sum(loop_count(x) for x in s.children())


def reduces_into(s: Stmt, name: str) -> bool:
    """Whether ``s`` sums into the scalar temporary ``name``."""
    if isinstance(s, Reduce):
        return s.out == name and not s.idxs
    if isinstance(s, Block):
        return any(reduces_into(x, name) for x in s.stmts)
    if isinstance(s, (Forall, While, Bind)):
        return reduces_into(s.body, name)
    if isinstance(s, Switch):
        return any(reduces_into(b, name) for _, b in s.cases)
    return False


def written(s: Stmt) -> frozenset:
    """The tensors the statement ``s`` writes: an assignment's output, and what a sum whose loops run around
    its coordinates adds into (an output or a workspace; not a scalar temporary).

    >>> from compiler.lattice.sequences import Level
    >>> from compiler.lattice.seqcfirvalues import Read, Temp
    >>> a = Level("a", 0, "compressed", 4)
    >>> summed = Forall("i", a, Block((Reduce("w", ("i",), Read("a", (a,))), Reduce("t", (), Read("a", (a,))))))
    >>> sorted(written(summed)), sorted(written(Block((summed, Assign("c", ("i",), Temp("t"))))))
    (['w'], ['c', 'w'])
    """
    if isinstance(s, Assign):
        return frozenset({s.out})
    if isinstance(s, (Reduce, Fold)):
        return frozenset({s.out} if s.idxs else ())
    if isinstance(s, Block):
        return frozenset().union(*(written(x) for x in s.stmts))
    if isinstance(s, (Forall, While, Bind)):
        return written(s.body)
    if isinstance(s, Switch):
        return frozenset().union(*(written(b) for _, b in s.cases))
    return frozenset()


def cin_parts(s) -> tuple[list, set]:
    """Every value node of the CIN ``s`` (its statements before lowering: blocks, foralls, assignments and
    reductions), and its loop indices.

    >>> from compiler.lattice.seqcfirvalues import Read
    >>> from compiler.lattice.sequences import Universe
    >>> values, indices = cin_parts(Forall("i", Universe(3, "i"), Assign("y", ("i",), Read("x", ("i_x",)))))
    >>> [type(v).__name__ for v in values], indices
    (['Read'], {'i'})
    """
    values, indices, stack = [], set(), [s]
    while stack:
        x = stack.pop()
        if isinstance(x, Block):
            stack += x.stmts
        elif isinstance(x, Forall):
            indices.add(x.index)
            stack.append(x.body)
        elif isinstance(x, (Assign, Reduce)):
            stack.append(x.value)
        elif isinstance(x, Value):
            values.append(x)
            stack += value_children(x)
    return values, indices


__all__ = ["Stmt", "Assign", "Reduce", "Alloc", "Fold", "Block", "Skip", "Forall", "While", "Bind", "Switch",
           "loop_spans", "while_clauses", "while_tag", "printed_lines", "reduces_into", "written", "cin_parts",
           "INDENT"]
