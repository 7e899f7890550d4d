"""The user's schedule, one for both strategies: its commands, their arguments checked and printed.

The algorithm (index notation or a loop program) says what to compute; a :class:`Schedule` says
how: a list of commands, each a small frozen :class:`Command`. This module knows every command's
arguments (the :class:`Schedule` method that writes it is its signature) but applies none: each
strategy applies the commands it takes and refuses the others, naming the strategy that takes them
(``compiler.capabilities.capabilities(strategy).schedule_commands`` says which):

* the lattice strategy (:mod:`compiler.lattice.schedule`, TACO's scheduling language): ``reorder``,
  ``precompute``, ``parallelize``, ``split``, ``fuse``, ``pos``;
* the looplets strategy (:mod:`compiler.looplets.schedule`): ``privatize``.

Pass a schedule as ``lower(..., options={"schedule": s})``; commands may also be given as tuples,
``[("reorder", "i", "k", "j"), ("precompute", "j")]``.

>>> s = Schedule().reorder("i", "k", "j").precompute("j", "w")
>>> s
Schedule(reorder(i, k, j), precompute(j, w))
>>> Schedule().precompute(("i", "j"), "w", expr="C[i, j] + D[i, j]")
Schedule(precompute((i, j), w, C[i, j] + D[i, j]))
>>> Schedule().precompute("j", format="dense")
Schedule(precompute(j, w, format=dense))
>>> as_schedule([("parallelize", "i")])
Schedule(parallelize(i))
>>> signature("privatize")
'privatize(tensor, copies=4, workspace=True)'
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from .errors import StrategyError

__all__ = ["COMMANDS", "Command", "Privatize", "Schedule", "as_schedule", "signature"]

#: every scheduling command, in the order the tools list them
COMMANDS = ("reorder", "precompute", "parallelize", "split", "fuse", "pos", "privatize")


@dataclass(frozen=True)
class Command:
    """One scheduling command: its name and arguments (strings and numbers), as the user gave them
    (a strategy checks them when it applies the command).

    >>> str(Command("split", ("i", "i0", "i1", 4, "down")))
    'split(i, i0, i1, 4, down)'
    """

    name: str
    args: tuple

    def __post_init__(self):
        if self.name not in COMMANDS:
            raise StrategyError(f"unknown scheduling command {self.name!r}; the strategies' schedules know "
                                f"{', '.join(COMMANDS)}")

    def __str__(self) -> str:
        # an argument left out (None) is skipped: those after it are written as keywords
        names = list(inspect.signature(getattr(Schedule, self.name)).parameters)[1:]
        parts, keywords = [], False
        for k, a in enumerate(self.args):
            if a is None:
                keywords = True
            elif keywords and k < len(names):
                parts.append(f"{names[k]}={arg_text(a)}")
            else:
                parts.append(arg_text(a))
        return f"{self.name}({', '.join(parts)})"


def arg_text(a) -> str:
    """A command's argument as the schedule prints it: a tuple of names as ``(i, j)``.

    >>> arg_text(("i", "j")), arg_text(4)
    ('(i, j)', '4')
    """
    return f"({', '.join(str(x) for x in a)})" if isinstance(a, (tuple, list)) else str(a)


@dataclass(frozen=True)
class Privatize:
    """A ``privatize`` command's arguments, checked: count the updates of ``tensor`` into
    ``copies`` tables (2 to 16), the extra ones allocated when they do not fit on the stack unless
    ``workspace`` is False.

    >>> Privatize.of(Command("privatize", ("bins",)))
    Privatize(tensor='bins', copies=4, workspace=True)
    >>> Privatize.of(Command("privatize", ("bins", 1)))
    Traceback (most recent call last):
    ...
    compiler.errors.StrategyError: schedule: privatize(bins, 1): copies is the number of tables, an integer from 2 to 16, not 1
    """

    tensor: str
    copies: int = 4
    workspace: bool = True

    @classmethod
    def of(cls, c: Command) -> "Privatize":
        """The arguments of ``c`` (a ``privatize`` command), defaults filled in; a StrategyError
        says which one is wrong."""
        args = tuple(c.args)
        tensor, copies, workspace = (args + (None, 4, True)[len(args):])[:3]
        if not isinstance(tensor, str) or len(args) > 3:
            raise StrategyError(f"schedule: {c} needs the output's name, e.g. privatize('bins', copies=4)")
        if isinstance(copies, bool) or not isinstance(copies, (int, np.integer)) or not 2 <= copies <= 16:
            raise StrategyError(f"schedule: {c}: copies is the number of tables, an integer from 2 to 16, "
                                f"not {copies!r}")
        if not isinstance(workspace, bool):
            raise StrategyError(f"schedule: {c}: workspace is True or False, not {workspace!r}")
        return cls(tensor, int(copies), workspace)


@dataclass(frozen=True)
class Schedule:
    """An immutable list of commands; each method returns a longer schedule (its docstring says
    what the command does; :mod:`compiler.lattice.schedule` and :mod:`compiler.looplets.schedule`
    say how each strategy applies it)."""

    commands: tuple = ()

    def _add(self, name, *args) -> "Schedule":
        return Schedule(self.commands + (Command(name, tuple(args)),))

    def reorder(self, *indices: str) -> "Schedule":
        """Put the loops in this order (the lattice strategy; after split, pos or fuse, name the
        loops they made)."""
        return self._add("reorder", *indices)

    def precompute(self, index, workspace: str = "w", expr=None, format=None) -> "Schedule":
        """Compute ``expr`` (index notation; default: the whole right-hand side) into
        ``workspace`` over ``index`` (a name, or a tuple of names) before it is used.

        ``format`` is the workspace's: ``"sparse"`` (the default over one index: values,
        an occupancy bitmap and the list of coordinates set, so the consumer visits and
        resets only those; over several indices the list holds row-major positions, sorted,
        and the consumer reads it mode by mode like a SparseCOO level) or ``"dense"`` (a
        plain array, the default over several indices: the consumer visits, and resets,
        every entry).
        """
        index = tuple(index) if isinstance(index, (tuple, list)) else index
        args = [index, workspace, expr, format]
        while args[-1] is None:
            args.pop()
        return self._add("precompute", *args)

    def parallelize(self, index: str, races: str = "none") -> "Schedule":
        """Run the loop over ``index`` on OpenMP threads.

        ``races`` says what to do where the threads would update the same elements of a
        dense output (a loop over ``j`` of ``y[i] += A[i, j] * x[j]``): ``"none"`` refuses
        such a loop, ``"atomics"`` makes each update atomic (``#pragma omp atomic``), as
        TACO's ``OutputRaceStrategy::Atomics``, or ``"copies"`` gives each thread its own copy
        of the output to update, and adds the copies into it after the loop (TACO's
        ``Temporary``): more memory, no atomic instruction per update. A scalar result is
        reduced into each thread's copy either way, except that ``"atomics"`` makes every update
        of its one accumulator atomic instead (TACO's ``parallelizeAtomicReduction``).
        """
        return self._add("parallelize", index) if races == "none" else self._add("parallelize", index, races)

    def split(self, index: str, outer: str, inner: str, factor: int, direction: str = "down") -> "Schedule":
        """Iterate ``index`` as blocks: ``down``, of ``factor`` iterations; ``up``, ``factor`` blocks."""
        return self._add("split", index, outer, inner, factor, direction)

    def fuse(self, outer: str, inner: str, fused: str) -> "Schedule":
        """Iterate two directly nested loops as one."""
        return self._add("fuse", outer, inner, fused)

    def pos(self, index: str, position: str, tensor: str) -> "Schedule":
        """Iterate the positions of ``tensor``'s level of ``index``."""
        return self._add("pos", index, position, tensor)

    def privatize(self, tensor: str, copies: int = 4, workspace: bool = True) -> "Schedule":
        """Count the updates of ``tensor``, a small dense output at computed coordinates (a
        histogram's bins), into ``copies`` tables: the loop around them unrolled, each lane updating
        its own table, the tables combined after (:mod:`compiler.imperative.tables`). The extra
        tables are on the stack when their length is a small constant, else allocated when the
        kernel runs (refused with ``workspace=False``). The looplets strategy applies it.

        >>> Schedule().privatize("bins", copies=4)
        Schedule(privatize(bins, 4))
        """
        return self._add("privatize", tensor, copies) if workspace is True else \
            self._add("privatize", tensor, copies, workspace)

    def __repr__(self) -> str:
        return f"Schedule({', '.join(str(c) for c in self.commands)})"


def as_schedule(value) -> Schedule:
    """A :class:`Schedule` from a schedule, a list of :class:`Command` or of tuples ``(name, *args)``."""
    if value is None:
        return Schedule()
    if isinstance(value, Schedule):
        return value
    if isinstance(value, (list, tuple)):
        out = []
        for c in value:
            if isinstance(c, Command):
                out.append(c)
            elif isinstance(c, (list, tuple)) and c and isinstance(c[0], str):
                out.append(Command(c[0], tuple(c[1:])))
            else:
                raise StrategyError(f"schedule: {c!r} is not a command; write (name, *args), "
                                    f"e.g. ('reorder', 'i', 'k', 'j')")
        return Schedule(tuple(out))
    raise StrategyError(f"schedule: expected a Schedule or a list of commands, not {type(value).__name__}")


def signature(name: str, editable: bool = False) -> str:
    """How a command is written, with its arguments' names and defaults (what a schedule editor
    offers); with ``editable``, as text a schedule editor reads back (``explorer.rebuild``): the
    arguments left out by default (None) are dropped, and a variable number of them named once.

    >>> signature("reorder"), signature("split")
    ('reorder(*indices)', "split(index, outer, inner, factor, direction='down')")
    >>> signature("precompute", editable=True)
    "precompute(index, workspace='w')"
    """
    if name not in COMMANDS:
        raise StrategyError(f"unknown scheduling command {name!r}; the strategies' schedules know "
                            f"{', '.join(COMMANDS)}")
    words = []
    for p in list(inspect.signature(getattr(Schedule, name)).parameters.values())[1:]:
        if editable and p.default is None:
            continue
        star = "*" if p.kind is p.VAR_POSITIONAL and not editable else ""
        words.append(f"{star}{p.name}" + ("" if p.default is p.empty else f"={p.default!r}"))
    return f"{name}({', '.join(words)})"
