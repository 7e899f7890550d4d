"""The scheduling API over concrete index notation (taco.md §2.10), Halide-style.

The algorithm (index notation) says what to compute; a :class:`Schedule` says how:
a list of commands applied in order to the concrete statement. Each command records
a trace step ``schedule:<name>`` with the statement before and after; a command that
does not apply raises :class:`~compiler.errors.StrategyError` saying why.

=======================  ========================================================================
command                  effect
=======================  ========================================================================
``reorder(i, k, j)``     put the top chain of loops in this order (storage order is checked)
``precompute(j, w)``     gather the right-hand side in a dense workspace ``w[j]`` (a ``where``)
``parallelize(i)``       run the outermost loop ``i`` with OpenMP threads; refused when the
                         threads would race (a sparse output, a scatter, a shared workspace);
                         of derived loops, the outer loop of a split (of ``i``, of ``pos(i)``
                         over a row level, or of fused positions with one output element each:
                         each block binary-searches its first row)
``split(i, i0, i1, s)``  iterate ``i`` as blocks (``down``: of size ``s``; ``up``: ``s`` blocks),
                         dense, position or sparse (merged) coordinate loops alike
``fuse(i, j, f)``        iterate two directly nested loops as one (a dense output)
``pos(i, ip, A)``        iterate the positions of ``A``'s level of ``i`` (or of a fused ``f``, over
                         a Dense (CSR) or compressed (DCSR) row level: the nnz-balanced loop)
=======================  ========================================================================

``split``, ``fuse`` and ``pos`` build a derived iteration space (:mod:`compiler.lattice.derived`):
they add relations; the statement keeps its original foralls and the code generator
maps the derived variables back. ``reorder`` and ``precompute`` come before them.

Pass a schedule as ``lower(..., options={"schedule": s})``; commands may also be given
as tuples, ``[("reorder", "i", "k", "j"), ("precompute", "j")]``.

>>> s = Schedule().reorder("i", "k", "j").precompute("j", "w")
>>> s
Schedule(reorder(i, k, j), precompute(j, w))
>>> as_schedule([("parallelize", "i")])
Schedule(parallelize(i))
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import StrategyError
from ..notation.ast import Index

COMMANDS = ("reorder", "precompute", "parallelize", "split", "fuse", "pos")
DERIVED = ("split", "fuse", "pos")


@dataclass(frozen=True)
class Command:
    """One scheduling command: its name and arguments (strings and numbers)."""

    name: str
    args: tuple

    def __post_init__(self):
        if self.name not in COMMANDS:
            raise StrategyError(f"unknown scheduling command {self.name!r}; the lattice strategy knows "
                                f"{', '.join(COMMANDS)}")

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True)
class Schedule:
    """An immutable list of commands; each method returns a longer schedule."""

    commands: tuple = ()

    def _add(self, name, *args) -> "Schedule":
        return Schedule(self.commands + (Command(name, tuple(args)),))

    def reorder(self, *indices: str) -> "Schedule":
        return self._add("reorder", *indices)

    def precompute(self, index: str, workspace: str = "w") -> "Schedule":
        return self._add("precompute", index, workspace)

    def parallelize(self, index: str) -> "Schedule":
        return self._add("parallelize", index)

    def split(self, index: str, outer: str, inner: str, factor: int, direction: str = "down") -> "Schedule":
        return self._add("split", index, outer, inner, factor, direction)

    def fuse(self, outer: str, inner: str, fused: str) -> "Schedule":
        return self._add("fuse", outer, inner, fused)

    def pos(self, index: str, position: str, tensor: str) -> "Schedule":
        return self._add("pos", index, position, tensor)

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


def apply_schedule(schedule: Schedule, stmt, graph, program, formats) -> tuple:
    """``(statement, steps, parallel index or None, relations)`` after applying every command in order."""
    from .cfir import _order_statement
    from .cin import precompute
    from .derived import SuchThat, add_relation, check_no_derived
    steps, parallel, relations = [], None, ()
    for c in schedule.commands:
        before = SuchThat(stmt, relations) if relations else stmt
        if c.name in DERIVED:
            relations = add_relation(c, stmt, relations, program, formats)
            r = relations[-1]
            note = {"split": "derived loops {1}, {2} iterate {0} ({4}, factor {3})",
                    "fuse": "one loop {2} iterates {0} and {1}",
                    "pos": "{1} iterates the positions of {2}'s level of {0}"}[c.name]
            steps.append((f"schedule:{c.name}", before, SuchThat(stmt, relations),
                          note.format(*[getattr(r, f) for f in r.__dataclass_fields__])))
            continue
        if c.name in ("reorder", "precompute"):
            check_no_derived(c, relations)
        if c.name == "reorder":
            stmt = _order_statement(stmt, graph, list(c.args))
            note = f"loops in the order {', '.join(str(a) for a in c.args)}"
        elif c.name == "precompute":
            if not c.args:
                raise StrategyError("schedule: precompute needs the workspace's index")
            name = c.args[1] if len(c.args) > 1 else "w"
            taken = {program.lhs.tensor} | set(formats)
            if name in taken:
                raise StrategyError(f"schedule: {c} does not apply: workspace name {name} is already a tensor")
            stmt = precompute(stmt, [c.args[0]], name)
            note = f"workspace {name}[{c.args[0]}]"
        else:  # parallelize
            if len(c.args) != 1:
                raise StrategyError(f"schedule: {c} needs exactly one index")
            parallel = Index(c.args[0])
            note = f"{parallel} runs on OpenMP threads"
        steps.append((f"schedule:{c.name}", before, SuchThat(stmt, relations) if relations else stmt, note))
    return stmt, steps, parallel, relations


def check_parallel(index: Index, setup) -> None:
    """Refuse ``parallelize(index)`` when the threads would race or it is not the outer loop."""
    from .cin import Forall, Where, _loops
    from .iteration_graph import is_all_dense, storage_path
    order, body = _loops(setup.statement)
    what = f"parallelize({index}) does not apply"
    if not order or order[0] != index:
        raise StrategyError(f"{what}: only the outermost loop can be parallelized, and the loops run "
                            f"{', '.join(i.name for i in order) or '(none)'}")
    out = setup.output.tensor
    if not is_all_dense(setup.output_format):
        raise StrategyError(f"{what}: the sparse output {out} is appended through one shared counter, "
                            f"so the threads would race; use a dense output")
    path = storage_path(setup.output, setup.output_format)[0]
    if not path or path[0] != index:
        raise StrategyError(f"{what}: {index} does not index the output {out}'s outer mode, so "
                            f"iterations of {index} add into the same elements of {out} (a race)")

    def has_workspace(s) -> bool:
        if isinstance(s, Where):
            return s.temp.workspace or has_workspace(s.consumer) or has_workspace(s.producer)
        if isinstance(s, Forall):
            return has_workspace(s.body)
        return False
    if has_workspace(setup.statement):
        raise StrategyError(f"{what}: the workspace would be shared by the threads (a race); "
                            f"per-thread workspaces are not implemented")


__all__ = ["Command", "Schedule", "as_schedule", "apply_schedule", "check_parallel"]
