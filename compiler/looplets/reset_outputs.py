"""Which outputs of a loop program the runtime starts clear instead of the kernel's declaration.

A byte-map output declared first thing (a BFS step's ``_F[...] = -1``), outside any loop or
branch, has its declaration done by the runtime: it hands the kernel a fresh table at the fill,
or an earlier result's arrays with only its entries cleared (:mod:`compiler.reused_outputs`), so
a round costs its frontier's edges, not the graph's vertices. Declared in C, each call filled the
n values and cleared the n flags. The byte map may sit under Dense levels (``Dense(SparseByteMap)``:
a batch of frontiers, or a 2-d mask): its fibers' slots are ``fiber * size + coordinate``, and
the runtime clears each stored entry of each fiber.

>>> from compiler.levels import Dense, SparseByteMap, SparseList, Element
>>> from compiler.format import Format
>>> from compiler.looplets.fibers import TensorInfo
>>> info = lambda root: TensorInfo("M", Format(root), "output")
>>> reset_refusal(info(Dense(SparseByteMap(Element(False))))) is None
True
>>> print(reset_refusal(info(SparseList(SparseByteMap(Element(False))))))
output M: its level 0 (SparseList) above its byte map (level 1) is not Dense: the runtime clears a byte map's entries only where each fiber has a slot block of its own (Dense levels above it)
"""

from __future__ import annotations

from ..levels import Element
from .level_writers import marks_table
from .program import Block, Declare, walk

__all__ = ["runtime_resets", "reset_refusal", "reuse_refusals"]


def reset_refusal(info) -> str | None:
    """Why the runtime cannot start output ``info`` (a :class:`~compiler.looplets.fibers.TensorInfo`)
    clear, naming the tensor and the level, or None when it can: its last level a byte map, every
    level above it Dense, its values an Element (a value per slot, at the fill off the entries)."""
    levels, name = info.levels, info.name
    k = next((k for k, lvl in enumerate(levels) if marks_table(lvl)), None)
    if k is None:
        return None if not levels else (
            f"output {name} ({info.format}) has no byte-map level: reuse() gives an earlier result to write "
            f"into for a byte-map output declared first thing (a BFS step's _F[...] = -1)")
    if k != len(levels) - 1:
        below = levels[k + 1]
        return (f"output {name}: its level {k} ({levels[k].name}) has level {k + 1} ({below.name}) below it: the "
                f"runtime clears a byte map's entries only where it is the output's last level")
    above = next((j for j in range(k) if not levels[j].located_by_coordinate), None)
    if above is not None:
        return (f"output {name}: its level {above} ({levels[above].name}) above its byte map (level {k}) is not "
                f"Dense: the runtime clears a byte map's entries only where each fiber has a slot block of its "
                f"own (Dense levels above it)")
    if not isinstance(info.leaf, Element):
        return (f"output {name}: its byte map (level {k}) holds a {info.leaf.name}, not values: the runtime "
                f"clears a byte map of values (an Element leaf)")
    return None


def _first_declarations(body, outputs) -> dict:
    """The declarations of ``outputs`` (names) that ``body`` (a normalized program) makes first
    thing, outside any loop or branch, by output."""
    firsts = {}
    for n in walk(body):
        if isinstance(n, Declare) and n.tns.name in outputs:
            firsts.setdefault(n.tns.name, n)
    top = body.stmts if isinstance(body, Block) else ()
    return {t: d for t, d in firsts.items() if not d.implicit and any(s is d for s in top)}


def runtime_resets(body, outputs: dict) -> set:
    """The outputs of ``body`` (a normalized program; ``outputs``, their infos) whose declaration the
    runtime does instead of the kernel: a byte map of values under Dense levels (or alone) declared
    first thing (see the module docstring). Its declaration must start it at its fill, as a byte
    map's must (the lowering refuses another start)."""
    return {t for t in _first_declarations(body, outputs)
            if outputs[t].levels and reset_refusal(outputs[t]) is None}


def reuse_refusals(body, outputs: dict) -> dict:
    """For each byte-map output of ``body`` declared first thing that the runtime cannot start clear,
    why (:func:`reset_refusal`): what a call giving it ``reuse(...)`` is told."""
    out = {}
    for t in _first_declarations(body, outputs):
        info = outputs[t]
        why = reset_refusal(info) if any(marks_table(lvl) for lvl in info.levels) else None
        if why is not None:
            out[t] = why
    return out
