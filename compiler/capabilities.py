"""What a lowering strategy can do, asked of the strategy rather than guessed from names.

Each strategy registers a function that reads its own registries (the lattice strategy's
level iterators, the looplet strategy's unfurls) and says which level formats it can read,
which it can assemble as an output's level, and which commands of the schedule
(:mod:`compiler.schedule`) it applies. Tools such as the explorer's format pickers and schedule
editor ask :func:`capabilities` instead of keeping their own lists.

>>> caps = capabilities("lattice")
>>> "SparseList" in caps.reads and caps.schedule
True
>>> capabilities("looplets").schedule_commands, capabilities("looplets").shares_constant_reads
(('privatize',), True)
>>> capabilities("lattice").shares_constant_reads, capabilities("lattice").shares_constant_fibers
(True, True)
>>> capabilities("lattice").lowers_for_shapes, capabilities("looplets").lowers_for_shapes
(True, False)
>>> capabilities("looplets").commands_for("loop program"), capabilities("looplets").commands_for("index notation")
(('privatize',), ())
>>> applied_by("privatize")
"a command of the looplets strategy (strategy='looplets')"
>>> capabilities("lattice").why_not("SparseBand", output=True) is None   # (built as a SparseList, converted)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .errors import StrategyError

__all__ = ["Capabilities", "PROGRAM_KINDS", "applied_by", "capabilities", "program_kind", "register_capabilities"]

#: the kinds of program a command of the schedule may apply to (:meth:`Capabilities.commands_for`)
PROGRAM_KINDS = ("index notation", "loop program")


def program_kind(program) -> str:
    """The kind of ``program`` (one of :data:`PROGRAM_KINDS`): index notation (a string or a
    parsed statement), else a loop program.

    >>> program_kind("y[i] = A[i, j] * x[j]")
    'index notation'
    """
    from .notation.ast import Assign
    return "index notation" if isinstance(program, (str, Assign)) else "loop program"


@dataclass(frozen=True)
class Capabilities:
    """The level formats (by their Finch names) a strategy reads and assembles, and the commands
    of a schedule (``options={"schedule": ...}``, :data:`compiler.schedule.COMMANDS`) it applies.

    >>> Capabilities("s", ("Dense",), ("Dense",), ()).why_not("Dense", output=True) is None
    True
    """

    strategy: str
    reads: tuple[str, ...]
    assembles: tuple[str, ...]
    schedule_commands: tuple[str, ...] = ()
    #: ``(command, kinds, why)`` for each command that applies to some kinds of program only
    #: (:data:`PROGRAM_KINDS`), with why it does not apply to the others
    command_kinds: tuple = ()
    #: whether every read of a tensor's entry at constant indices (``w[1]``) is located once, for all of them
    #: (the looplets' follow, the lattice's stand-in); else each read gets an iterator of its own, their
    #: cases multiplying
    shares_constant_reads: bool = False
    #: whether every read of a fiber at a constant coordinate under a loop (a row, ``A[2, j]``) is located
    #: once, for all of them (the looplets' follow; the lattice's one cursor, where no intersection with
    #: another access's reads moves it apart from its other reads: :mod:`compiler.lattice.seqreads`)
    shares_constant_fibers: bool = False
    #: whether, lowered again for the tensors' shapes (``options={"shapes": ...}``), a statement without shape
    #: operators whose kernel reads an input converted may read none (the lattice's bucketed sums,
    #: :mod:`compiler.lattice.bucketed_sums`); the array front end then tries that lowering too
    lowers_for_shapes: bool = False

    def __post_init__(self):
        from .schedule import COMMANDS
        if not isinstance(self.schedule_commands, tuple) or not set(self.schedule_commands) <= set(COMMANDS):
            raise StrategyError(f"strategy {self.strategy!r}: schedule_commands is a tuple of the commands "
                                f"{', '.join(COMMANDS)}, not {self.schedule_commands!r}")
        for entry in self.command_kinds:
            if not (isinstance(entry, tuple) and len(entry) == 3 and entry[0] in self.schedule_commands
                    and set(entry[1]) <= set(PROGRAM_KINDS) and isinstance(entry[2], str)):
                raise StrategyError(f"strategy {self.strategy!r}: command_kinds holds (command, kinds, why) of its "
                                    f"schedule's commands, kinds among {', '.join(PROGRAM_KINDS)}, not {entry!r}")

    def commands_for(self, kind: str) -> tuple[str, ...]:
        """The commands of the schedule that apply to a program of ``kind`` (:data:`PROGRAM_KINDS`).

        >>> Capabilities("s", (), (), ("privatize",), (("privatize", ("loop program",), "no"),)).commands_for(
        ...     "index notation")
        ()
        """
        return tuple(c for c in self.schedule_commands if self.why_not_command(c, kind) is None)

    def why_not_command(self, command: str, kind: str) -> str | None:
        """Why the strategy's ``command`` does not apply to a program of ``kind``; None when it may
        (it may still refuse a given program, saying why)."""
        if kind not in PROGRAM_KINDS:
            raise StrategyError(f"a kind of program is one of {', '.join(PROGRAM_KINDS)}, not {kind!r}")
        return next((why for c, kinds, why in self.command_kinds if c == command and kind not in kinds), None)

    @property
    def schedule(self) -> bool:
        """Whether the strategy takes a schedule at all (a command of it)."""
        return bool(self.schedule_commands)

    def why_not(self, level: str, output: bool) -> str | None:
        """Why a ``level`` (a name) cannot be an input's (or, with ``output``, the output's)
        level under this strategy; None when it can. A multi-mode name such as
        ``SparseCOO(2)`` is looked up by its level name."""
        name = level.split("(", 1)[0]
        if output:
            return None if name in self.assembles else \
                f"the {self.strategy} strategy cannot assemble a {name} output level"
        return None if name in self.reads else f"the {self.strategy} strategy cannot read a {name} level"


_CAPABILITIES: dict[str, Callable[[], Capabilities]] = {}


def register_capabilities(strategy: str, fn: Callable[[], Capabilities]) -> None:
    """Make ``capabilities(strategy)`` call ``fn()``; it is called on every query, so levels
    registered later (``register_iterator``, ``register_unfurl``) are counted."""
    _CAPABILITIES[strategy] = fn


def capabilities(strategy: str) -> Capabilities:
    """What ``strategy`` can read, assemble and schedule (a StrategyError for an unknown one)."""
    from .lowering import strategies

    known = strategies()   # imports the strategy packages, which register themselves
    fn = _CAPABILITIES.get(strategy)
    if fn is None:
        raise StrategyError(f"unknown strategy {strategy!r}; known: {', '.join(known)}"
                            if strategy not in known else
                            f"strategy {strategy!r} does not say which levels it supports")
    return fn()


def applied_by(command: str) -> str:
    """Which strategy applies the schedule's ``command`` (a name), as a refusal by another
    strategy says it.

    >>> applied_by("reorder")
    "a command of the lattice strategy (strategy='lattice')"
    """
    from .lowering import strategies
    takers = [s for s in strategies() if s in _CAPABILITIES and command in capabilities(s).schedule_commands]
    if not takers:
        return "a command no strategy applies"
    return "a command of " + " or ".join(f"the {s} strategy (strategy={s!r})" for s in takers)
