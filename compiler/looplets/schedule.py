"""The looplets strategy's schedule: ``privatize``, counting a scatter-reduction into several tables.

The user's :class:`~compiler.schedule.Schedule` is both strategies' (:mod:`compiler.schedule`);
this module applies the commands the looplets strategy takes (:data:`LOOPLETS_COMMANDS`, what
``capabilities("looplets").schedule_commands`` says) and refuses the others, naming the strategy
that takes them. A loop program states its own loops (index notation's come from the formats), so
the lattice strategy's commands (reorder, split, ...) have nothing to act on here;
``privatize(tensor, copies)`` does: after lowering, the loop around
each update of ``tensor`` at a computed coordinate is unrolled ``copies`` times, each lane updating
its own table (:mod:`compiler.imperative.tables`), which breaks the chain of a histogram's
consecutive ``bins[b] += 1`` into the same bin. Pass it as ``options={"schedule": ...}``.

>>> import numpy as np
>>> from compiler.schedule import Schedule
>>> from compiler.looplets.compile import compile_program
>>> from compiler.looplets.language import loop_program
>>> @loop_program
... def counts(bins, v):
...     bins[...] = 0
...     for i in _:
...         bins[v[i]] += 1
>>> v = np.array([1, 1, 3, 0, 1], np.int64)
>>> k = compile_program(counts, bins=np.zeros(4, np.int64), v=v, schedule=Schedule().privatize("bins", 2))
>>> k(v=v).to_numpy().tolist()
[1, 3, 0, 1]
>>> print(k.trace.find("privatize")[0].note)
bins: 1 loop unrolled by 2, each lane updating its own table (1 extra table of 4 elements on the stack), the tables added into bins after the loops
"""

from __future__ import annotations

import numpy as np

from ..binding import array_name
from ..capabilities import applied_by
from ..errors import StrategyError
from ..imperative.ir import BinOp, Const, Var
from ..imperative.tables import NotPrivatizable, privatize_tables
from ..levels import Element
from ..schedule import Privatize, as_schedule, signature

__all__ = ["LOOPLETS_COMMANDS", "LOOPLETS_COMMAND_KINDS", "NOTATION_PRIVATIZE", "privatizations", "privatize_one"]

#: the commands of :data:`compiler.schedule.COMMANDS` the looplets strategy applies
LOOPLETS_COMMANDS = ("privatize",)

#: why ``privatize`` does not apply to index notation under looplets (the capabilities say so, and the
#: playground offers it to loop programs only): the output's loops are its outermost, so no update
#: of it is at a computed coordinate
NOTATION_PRIVATIZE = ("privatize counts a loop program's scatter (an update at a computed coordinate, "
                      "bins[v[i]] += 1) into several tables; under looplets index notation writes its output at "
                      "its own loops' coordinates (the output's loops outermost), so no update scatters; write the "
                      "scatter as a loop program, or give each thread its own copy of the output with the lattice "
                      "strategy's parallelize(i, races='copies')")

#: ``Capabilities.command_kinds`` of the looplets strategy
LOOPLETS_COMMAND_KINDS = (("privatize", ("loop program",), NOTATION_PRIVATIZE),)


def privatizations(schedule, kind: str = "loop program") -> tuple:
    """The ``(tensor, copies, workspace)`` of each ``privatize`` of ``schedule`` (a
    :class:`~compiler.schedule.Schedule`, or a list of commands) for a program of ``kind``
    (:data:`compiler.capabilities.PROGRAM_KINDS`); any other command is refused, naming the
    strategy that applies it, and so is one that does not apply to that kind of program.

    >>> privatizations([("privatize", "bins", 4)])
    (('bins', 4, True),)
    >>> privatizations([("privatize", "y", 4)], "index notation")
    Traceback (most recent call last):
    ...
    compiler.errors.StrategyError: schedule: privatize(y, 4) does not apply to index notation: privatize counts a loop program's scatter (an update at a computed coordinate, bins[v[i]] += 1) into several tables; under looplets index notation writes its output at its own loops' coordinates (the output's loops outermost), so no update scatters; write the scatter as a loop program, or give each thread its own copy of the output with the lattice strategy's parallelize(i, races='copies')
    >>> privatizations([("split", "i", "i0", "i1", 4)])
    Traceback (most recent call last):
    ...
    compiler.errors.StrategyError: schedule: split(i, i0, i1, 4) is a command of the lattice strategy (strategy='lattice'); the looplets strategy takes its loops from the loop program or the formats, and its schedule takes privatize(tensor, copies=4, workspace=True) only
    """
    out = []
    for c in as_schedule(schedule).commands:
        if c.name not in LOOPLETS_COMMANDS:
            raise StrategyError(f"schedule: {c} is {applied_by(c.name)}; the looplets strategy takes its loops "
                                f"from the loop program or the formats, and its schedule takes "
                                f"{', '.join(map(signature, LOOPLETS_COMMANDS))} only")
        why = next((why for name, kinds, why in LOOPLETS_COMMAND_KINDS if name == c.name and kind not in kinds), None)
        if why is not None:
            raise StrategyError(f"schedule: {c} does not apply to {kind}: {why}")
        p = Privatize.of(c)
        out.append((p.tensor, p.copies, p.workspace))
    return tuple(out)


def privatize_one(stmts, asked: tuple, infos: dict, outs, out_sizes: dict, fresh) -> tuple[list, str]:
    """``(statements, note)``: ``stmts`` after one privatization ``asked``, a ``(tensor, copies,
    workspace)`` of :func:`privatizations`. Raises :class:`~compiler.errors.StrategyError` naming
    the command when it does not apply."""
    tensor, copies, workspace = asked
    command = f"privatize({tensor!r}, copies={copies})"
    info = infos.get(tensor)
    if info is None or info.role == "temporary":
        raise StrategyError(f"schedule: {command}: the program has no output {tensor} "
                            f"(its outputs: {', '.join(outs)})")
    if tensor not in outs:
        raise StrategyError(f"schedule: {command}: {tensor} is an input; privatize splits the updates of an "
                            f"output")
    # (each table copies the output's values slot for slot: every level a slot per coordinate)
    if not all(lvl.located_by_coordinate for lvl in info.levels) or not isinstance(info.leaf, Element):
        raise StrategyError(f"schedule: {command}: {tensor} is {info.format}; privatize needs a dense output "
                            f"(Dense levels over an Element), which a table copies slot for slot")
    sizes = out_sizes[tensor]
    if all(isinstance(size, Const) for size in sizes):
        length = Const(int(np.prod([size.value for size in sizes], dtype=np.int64)), "int64")
    else:   # (the output's sizes are parameters of the kernel)
        length = Var(array_name(tensor, 0, "size"))
        for m in range(1, len(sizes)):
            length = BinOp("*", length, Var(array_name(tensor, m, "size")))
    try:
        return privatize_tables(stmts, array_name(tensor, None, "vals"), length, info.dtype, copies, fresh,
                                workspace=workspace, name=tensor)
    except NotPrivatizable as e:
        raise StrategyError(f"schedule: {command} does not apply: {e}") from None
