"""Looplets: lazy, hierarchical descriptions of one dimension of a fiber.

Conventions (half-open, 0-based; the papers are 1-based and inclusive):

* a :class:`Phase` ``stop`` is the *exclusive* end of the phase (``None``: to the
  end of the target extent); the papers' inclusive ``stride`` ``s`` is ``s + 1`` here;
* a :class:`Stepper`/:class:`Jumper` ``stop`` is the exclusive end of the current
  child, evaluated after its ``preamble`` (a SparseList chunk ends at ``idx[q] + 1``);
* a :class:`Spike` over ``[a, b)`` is ``body`` on ``[a, b - 1)`` and ``tail`` at ``b - 1``;
* :class:`Shift` ``delta``: inner coordinate = outer coordinate - ``delta``.

A looplet body is another looplet, a sub-fiber (more modes to unfurl) or a program
value (:class:`~compiler.looplets.program.Literal` / ``Value``). Host code
(seek, next, preambles) is imperative IR, built with fresh names at unfurl time.

>>> from compiler.looplets.program import Literal
>>> from compiler.imperative.ir import Var
>>> band = Sequence((Phase(Var("lo"), Run(Literal(0.0))),
...                  Phase(Var("hi"), Lookup(lambda i: Literal(1.0), "i -> 1.0")),
...                  Phase(None, Run(Literal(0.0)))))
>>> print(nest_text(band))
Sequence
  Phase(stop=lo)
    Run(0.0)
  Phase(stop=hi)
    Lookup(i -> 1.0)
  Phase(stop=_)
    Run(0.0)
>>> print(nest_text(truncate(Spike(Literal(0.0), Literal(2.0)), Var("a"), Var("b"), Var("c"))))
Switch
  Case(c == b)
    Spike
      body: 0.0
      tail: 2.0
  Case(true)
    Run(0.0)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from ..imperative.ir import Const
from . import extents as X


class Looplet:
    """Base class of looplets; :meth:`style` names the lowering rule that handles it."""

    style = "Lookup"

    def label(self) -> str:
        return type(self).__name__


@dataclass(frozen=True, eq=False)
class Lookup(Looplet):
    """Random access: the element at index ``i`` is ``body(i)`` (``i`` an IR expression)."""

    body: Callable[[Any], Any]
    text: str = "i -> ..."
    owner: Any = None  # the output tensor, for a Lookup over output sub-fibers
    style = "Lookup"

    def label(self):
        return f"Lookup({self.text})"


@dataclass(frozen=True, eq=False)
class Run(Looplet):
    """The same ``body`` over the whole target extent."""

    body: Any
    style = "Run"

    def label(self):
        return f"Run({_value_text(self.body)})"


@dataclass(frozen=True, eq=False)
class Fill(Looplet):
    """A region (of any remaining rank) holding the fill ``value`` only: Finch's FillLeaf."""

    value: Any
    style = "Run"

    def label(self):
        return f"Fill({_value_text(self.value)})"


@dataclass(frozen=True, eq=False)
class AcceptRun(Looplet):
    """Write side (Finch's AcceptRun): an output that stores a region as one run.

    ``accept(start, stop)`` gives ``(preamble, child, epilogue)``: the host code that opens
    a run over ``[start, stop)``, the sub-fiber its value is written into, and the code
    that closes the run (appending or merging it) if the body wrote it. When every read
    of the loop is constant over the region, the body is lowered once for the whole
    run; otherwise each index is a run of length one.
    """

    accept: Callable[[Any, Any], tuple]
    text: str = "run"
    owner: Any = None  # the output tensor
    style = "AcceptRun"

    def label(self):
        return f"AcceptRun({self.text})"


@dataclass(frozen=True, eq=False)
class Spike(Looplet):
    """``body`` on all but the last index of the target, then ``tail`` at the last index."""

    body: Any
    tail: Any
    style = "Spike"


@dataclass(frozen=True, eq=False)
class Phase:
    """Not a looplet: ``body`` on the region ending (exclusively) at ``stop``."""

    stop: Any
    body: Any


@dataclass(frozen=True, eq=False)
class Sequence(Looplet):
    """Phases one after another (the Looplets paper's Pipeline)."""

    phases: tuple
    style = "Sequence"


@dataclass(frozen=True, eq=False)
class Stepper(Looplet):
    """A variable number of children, each ending (exclusively) at ``stop``.

    ``seek(start)`` returns IR statements that move the state to the child holding
    ``start``; ``preamble`` runs at the start of each step (it may define names
    ``stop`` uses); ``next`` advances to the following child.
    """

    seek: Callable[[Any], tuple]
    stop: Any
    chunk: Any
    next: tuple
    preamble: tuple = ()
    #: optional :class:`Positions`: the stepper walks stored positions one by one
    #: (a Spike per position), so a lone stepper can loop over them directly
    positions: Any = None
    #: the local that ``seek`` and ``next`` move (the stepper's position), for a stepper without
    #: :class:`Positions` whose seek a Sequence's later phase may know it need not run (a SparseCOO
    #: mode's segments); a stepper with positions moves ``positions.q``
    state: Any = None
    #: optional :class:`Descent`: how the stepper's cursor seeks down its fiber
    descent: Any = None
    #: the cursor starts at its fiber's end (carried down it, :mod:`.carried`): a seek to a coordinate
    #: no stored one is below still moves it, where a cursor at the fiber's start needs none
    from_end: bool = False
    #: optional :class:`Entries`: the stored children a stepper without :class:`Positions` walks in
    #: order (a SparseCOO mode's segments, each several tuples), so its walk may be merged with others'
    entries: Any = None
    #: of a walk run on past its entries to the end of others' (:mod:`.merged_walks`), where the last of
    #: them ends (else None): past its entries its child is its fill, so a step's child is present where
    #: it ends and absent (empty) elsewhere, and every step before that end ends by it
    merged: Any = None
    style = "Stepper"


@dataclass(frozen=True, eq=False)
class Positions:
    """How a spike-per-entry :class:`Stepper` walks its stored positions.

    ``q`` is the position variable (the stepper's state), ``q_stop`` the end of the
    fiber's positions, ``last`` the exclusive upper bound of its stored coordinates,
    ``coord(q)`` the coordinate stored at position ``q`` and ``search(var, target)``
    statements setting ``var`` to the first position in ``[q, q_stop)`` whose
    coordinate is ``>= target``. The lowerer's single-stepper fast path (Finch.jl's
    approach) loops ``for q in [q, q_end)`` with one load per entry and no merge.
    """

    q: Any
    q_stop: Any
    last: Any
    coord: Callable[[Any], Any]
    search: Callable[[Any, Any], list]
    first: Any = Const(0, "int64")
    #: whether, where the gaps and the fill past the last entry do nothing, the walk of every position ends the
    #: loop with no phase stop at the last entry's coordinate: a flat walk's (:mod:`.flat_reductions`), which
    #: reads no coordinate, where finding the last one may take a search (a raveled CSR's last entry's row)
    walks_whole: bool = False


@dataclass(frozen=True, eq=False)
class Entries:
    """The stored children a :class:`Stepper` without :class:`Positions` walks: its cursor ``q``
    runs over ``[q, q_stop)``, one child a step (a SparseCOO mode's segment of the tuples sharing a
    coordinate), and ``last`` is one past the last child's coordinate (its walk's phase stop)."""

    q: Any
    q_stop: Any
    last: Any


@dataclass(frozen=True, eq=False)
class Descent:
    """How a :class:`Stepper`'s cursor seeks down its fiber: a cursor carried down the fiber, read
    at descending coordinates (:mod:`.carried`), starts at ``q_stop`` (the end of the fiber's
    children: entries, blocks or runs) and each seek moves ``q`` (the stepper's state) down with
    ``seek(lo, target)``'s statements, to the first child in ``[lo, q)`` that ends past ``target``
    (``q`` if none): a gallop down the entries' coordinates (a SparseList's) or the blocks' or runs'
    ends (a SparseBlockList's, a run list's)."""

    q: Any
    q_stop: Any
    seek: Callable[[Any, Any], list]


@dataclass(frozen=True, eq=False)
class Jumper(Looplet):
    """A Stepper that leads: coiterated with others, the longest child wins.

    ``body(full)`` is the looplet for a region that may cover several children
    (``full`` is False then); with ``full`` True the region is exactly the current child.
    """

    seek: Callable[[Any], tuple]
    stop: Any
    body: Callable[[bool], Any]
    next: tuple
    preamble: tuple = ()
    style = "Jumper"


@dataclass(frozen=True, eq=False)
class Case:
    """One arm of a :class:`Switch`: ``body`` when the IR condition ``cond`` holds."""

    cond: Any
    body: Any


@dataclass(frozen=True, eq=False)
class Switch(Looplet):
    """The first case whose condition holds at run time (if / else if)."""

    cases: tuple
    style = "Switch"


@dataclass(frozen=True, eq=False)
class Shift(Looplet):
    """``body`` with its coordinates shifted: inner = outer - ``delta``."""

    delta: Any
    body: Any
    style = "Shift"

    def label(self):
        return f"Shift({self.delta})"


@dataclass(frozen=True, eq=False)
class Thunk(Looplet):
    """Host code around a looplet: ``preamble`` before the statement, ``epilogue`` after."""

    preamble: tuple
    body: Any
    epilogue: tuple = ()
    owner: Any = None
    style = "Thunk"


#: The one lowering priority order (highest first); see :mod:`compiler.looplets.looplet_rules`.
PRIORITY = ("Thunk", "Switch", "Run", "Sequence", "Spike", "Jumper", "Stepper", "AcceptRun", "Lookup")


def resolve(a: str, b: str) -> str:
    """The style that handles looplets of styles ``a`` and ``b``: the higher priority.

    A total order, so the fold over operands is associative and commutative.

    >>> resolve("Stepper", "Spike"), resolve("Lookup", "Sequence"), resolve("Run", "Sequence")
    ('Spike', 'Sequence', 'Run')
    """
    return a if PRIORITY.index(a) <= PRIORITY.index(b) else b


def map_nest(nest, fn):
    """``nest`` with each part ``x`` for which ``fn(x)`` is not None replaced by it, tried outermost
    first; the looplets' children (each value a :class:`Run` holds, spikes' bodies and tails, phases,
    cases, the chunks of steppers, what lookups and jumpers give) are mapped in turn, the rest kept.

    >>> print(nest_text(map_nest(Spike(Fill(0.0), "x"), lambda l: Fill(1.0) if l == "x" else None)))
    Spike
      body: Fill(0.0)
      tail: Fill(1.0)
    """
    def m(l):
        out = fn(l)
        if out is not None:
            return out
        if isinstance(l, Run):
            return Run(m(l.body))
        if isinstance(l, Spike):
            return Spike(m(l.body), m(l.tail))
        if isinstance(l, Sequence):
            return Sequence(tuple(Phase(p.stop, m(p.body)) for p in l.phases))
        if isinstance(l, Switch):
            return Switch(tuple(Case(c.cond, m(c.body)) for c in l.cases))
        if isinstance(l, (Shift, Thunk)):
            return replace(l, body=m(l.body))
        if isinstance(l, Stepper):
            return replace(l, chunk=m(l.chunk))
        if isinstance(l, (Lookup, Jumper)):
            return replace(l, body=lambda x, f=l.body: m(f(x)))
        return l
    return m(nest)


# --------------------------------------------------------------------------- shift and truncate


def push_shift(delta, body):
    """Move a shift one level down, so the outermost node is not a Shift.

    Lookups read ``body(i - delta)``, declared stops move by ``+delta``, seeks by
    ``-delta``; values and sub-fibers (other modes) drop the shift.
    """
    if isinstance(body, Shift):
        return push_shift(X.add(delta, body.delta), body.body)
    if not isinstance(body, Looplet) or isinstance(body, (Run, Fill)):
        return body
    if isinstance(body, AcceptRun):  # the run's bounds are the tensor's coordinates
        return AcceptRun(lambda a, b, f=body.accept: f(X.sub(a, delta), X.sub(b, delta)),
                         f"{body.text} (shifted {delta})", body.owner)
    if isinstance(body, Lookup):
        return Lookup(lambda i, f=body.body: f(X.sub(i, delta)), f"{body.text} (shifted {delta})")
    if isinstance(body, Spike):
        return Spike(Shift(delta, body.body), Shift(delta, body.tail))
    if isinstance(body, Sequence):
        return Sequence(tuple(Phase(None if p.stop is None else X.add(p.stop, delta), Shift(delta, p.body))
                              for p in body.phases))
    if isinstance(body, Stepper):
        pos, down = body.positions, body.descent
        if pos is not None:
            pos = Positions(pos.q, pos.q_stop, X.add(pos.last, delta),
                            lambda q, f=pos.coord: X.add(f(q), delta),
                            lambda v, t, f=pos.search: f(v, X.sub(t, delta)), X.add(pos.first, delta))
        if down is not None:
            down = Descent(down.q, down.q_stop, lambda lo, t, f=down.seek: f(lo, X.sub(t, delta)))
        ent = body.entries
        if ent is not None:
            ent = Entries(ent.q, ent.q_stop, X.add(ent.last, delta))
        return Stepper(lambda s, f=body.seek: f(X.sub(s, delta)), X.add(body.stop, delta),
                       Shift(delta, body.chunk), body.next, body.preamble, pos, descent=down,
                       from_end=body.from_end, entries=ent,
                       merged=None if body.merged is None else X.add(body.merged, delta))
    if isinstance(body, Jumper):
        return Jumper(lambda s, f=body.seek: f(X.sub(s, delta)), X.add(body.stop, delta),
                      lambda full, f=body.body: Shift(delta, f(full)), body.next, body.preamble)
    if isinstance(body, Switch):
        return Switch(tuple(Case(c.cond, Shift(delta, c.body)) for c in body.cases))
    if isinstance(body, Thunk):
        return Thunk(body.preamble, Shift(delta, body.body), body.epilogue)
    raise TypeError(f"cannot shift {body!r}")


def unshift(l):
    """``l`` with any outer Shift pushed down (a no-op for other nodes)."""
    while isinstance(l, Shift):
        l = push_shift(l.delta, l.body)
    return l


def truncate(l, start, stop, new_stop):
    """``l`` (targeting ``[start, stop)``) restricted to a sub-extent ending at ``new_stop``.

    Only the end matters: Lookups, Runs, Steppers and Sequences are self-similar
    (they are positioned by absolute coordinates and seeks). A Spike keeps its tail
    only when the sub-extent still ends at ``stop``: statically a Run or the Spike,
    otherwise a run-time :class:`Switch`.
    """
    l = unshift(l)
    if isinstance(l, Spike):
        if X.prove_eq(new_stop, stop):
            return l
        if X.prove_lt(new_stop, stop):
            return Run(l.body)
        return Switch((Case(new_stop.eq(stop) if hasattr(new_stop, "eq") else Const(True, "bool"), l),
                       Case(Const(True, "bool"), Run(l.body))))
    if isinstance(l, Switch):
        return Switch(tuple(Case(c.cond, truncate(c.body, start, stop, new_stop)) for c in l.cases))
    if isinstance(l, Thunk):
        return Thunk(l.preamble, truncate(l.body, start, stop, new_stop), l.epilogue)
    return l


# --------------------------------------------------------------------------- rendering


def _value_text(v) -> str:
    from .program import Node, show_expr
    if isinstance(v, Node):
        return show_expr(v)
    label = getattr(v, "label", None)
    return label() if callable(label) else str(v)


def _children(l) -> list[tuple[str, Any]]:
    if isinstance(l, Spike):
        return [("body", l.body), ("tail", l.tail)]
    if isinstance(l, Sequence):
        return [(f"Phase(stop={'_' if p.stop is None else p.stop})", p.body) for p in l.phases]
    if isinstance(l, Stepper):
        return [("chunk", l.chunk)]
    if isinstance(l, Jumper):
        return [("full", l.body(True)), ("several", l.body(False))]
    if isinstance(l, Switch):
        return [(f"Case({c.cond})", c.body) for c in l.cases]
    if isinstance(l, (Shift, Thunk)):
        return [("", l.body)]
    if isinstance(l, Lookup):
        return []
    return []


def _head(l) -> str:
    if isinstance(l, Stepper):
        pre = " ".join(str(s).strip() for s in l.preamble)
        nxt = " ".join(str(s).strip() for s in l.next)
        return f"Stepper(stop={l.stop}{', preamble: ' + pre if pre else ''}, next: {nxt})"
    if isinstance(l, Jumper):
        nxt = " ".join(str(s).strip() for s in l.next)
        return f"Jumper(stop={l.stop}, next: {nxt})"
    if isinstance(l, Thunk):
        pre = " ".join(str(s).strip() for s in l.preamble)
        epi = " ".join(str(s).strip() for s in l.epilogue)
        return f"Thunk(preamble: {pre}{', epilogue: ' + epi if epi else ''})"
    return _value_text(l)


def nest_text(l, depth: int = 0, limit: int = 6) -> str:
    """An indented text drawing of a looplet nest (down to ``limit`` levels)."""
    pad = "  " * depth
    lines = [pad + _head(l)]
    if depth >= limit:
        return lines[0]
    for name, child in _children(l):
        if name.startswith("Phase") or name.startswith("Case"):
            lines.append(pad + "  " + name)
            lines.append(nest_text(child, depth + 2, limit))
        elif isinstance(child, Looplet) and _children(child):
            if name:
                lines.append(pad + "  " + name + ":")
            lines.append(nest_text(child, depth + (2 if name else 1), limit))
        else:
            lines.append(f"{pad}  {name + ': ' if name else ''}{_head(child) if isinstance(child, Looplet) else _value_text(child)}")
    return "\n".join(lines)


def nest_dot(l, name: str = "nest") -> str:
    """Graphviz DOT of a looplet nest (one node per looplet, edges labelled by role)."""
    out = [f'digraph "{name}" {{', "  node [shape=box, fontname=monospace];"]
    counter = [0]

    def esc(s):
        return s.replace("\\", "\\\\").replace('"', '\\"')

    def visit(x, depth):
        k = counter[0]
        counter[0] += 1
        out.append(f'  n{k} [label="{esc(_head(x) if isinstance(x, Looplet) else _value_text(x))}"];')
        if isinstance(x, Looplet) and depth < 8:
            for role, child in _children(x):
                c = visit(child, depth + 1)
                out.append(f'  n{k} -> n{c} [label="{esc(role)}"];')
        return k

    visit(l, 0)
    out.append("}")
    return "\n".join(out)
