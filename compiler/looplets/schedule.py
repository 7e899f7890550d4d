"""The looplets strategy's schedule: ``privatize``, counting a scatter-reduction into several tables.

A loop program states its own loops, so the lattice strategy's commands (reorder, split, ...)
have nothing to act on here; ``privatize(tensor, copies)`` does: after lowering, the loop around
each update of ``tensor`` at a computed coordinate is unrolled ``copies`` times, each lane updating
its own table (:mod:`compiler.imperative.tables`), which breaks the chain of a histogram's
consecutive ``bins[b] += 1`` into the same bin. Pass it as ``options={"schedule": ...}``.

>>> import numpy as np
>>> from compiler.lattice.schedule import Schedule
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
from ..errors import StrategyError
from ..imperative.ir import BinOp, Const, Var
from ..imperative.tables import NotPrivatizable, privatize_tables
from ..levels import Element

__all__ = ["privatizations", "privatize_one"]


def privatizations(schedule) -> tuple:
    """The ``(tensor, copies, workspace)`` of each ``privatize`` of ``schedule`` (a lattice
    :class:`~compiler.lattice.schedule.Schedule`, or a list of commands); any other command is refused.

    >>> privatizations([("privatize", "bins", 4)])
    (('bins', 4, True),)
    """
    from ..lattice.schedule import as_schedule
    out = []
    for c in as_schedule(schedule).commands:
        if c.name != "privatize":
            raise StrategyError(f"schedule: {c} is a command of the lattice strategy (strategy='lattice'); the "
                                f"looplets strategy takes its loops from the loop program or the formats, and its "
                                f"schedule takes privatize(tensor, copies) only")
        args = tuple(c.args)
        tensor, copies, workspace = (args + (None, 4, True)[len(args):])[:3]
        if not isinstance(tensor, str) or len(c.args) > 3:
            raise StrategyError(f"schedule: {c} needs the output's name, e.g. privatize('bins', copies=4)")
        if isinstance(copies, bool) or not isinstance(copies, (int, np.integer)) or not 2 <= copies <= 16:
            raise StrategyError(f"schedule: {c}: copies is the number of tables, an integer from 2 to 16, "
                                f"not {copies!r}")
        if not isinstance(workspace, bool):
            raise StrategyError(f"schedule: {c}: workspace is True or False, not {workspace!r}")
        out.append((tensor, int(copies), workspace))
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
