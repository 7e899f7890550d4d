"""Derived iteration spaces: the ``split``, ``fuse`` and ``pos`` relations (taco.md §2.9).

A scheduling command does not rewrite the accesses: they keep using the original
index variables. It adds a *relation* from original variables to derived ones, and
the code generator maps coordinates back (the provenance graph):

==============================  ==========================================  ============================
relation                        derived loop(s)                             recovers
==============================  ==========================================  ============================
``split(i, i0, i1, s, down)``   ``i0 < ceil(N/s)``, ``i1 < s``              ``i = i0*s + i1``; guard
                                                                            ``if (i >= N) break``
``split(i, i0, i1, B, up)``     ``i0 < B``, ``i1 < ceil(N/B)`` (divide)     ``i = i0*b + i1``; guards
                                                                            ``i >= N``, ``i >= (i0+1)*b``
``fuse(i, j, f)``               ``f < N_i*N_j`` (both loops dense)          ``i = f / N_j``, ``j = f % N_j``
``pos(j, jp, A)``               ``jp`` over A's positions of ``j``          ``j = A_idx[jp]``
``pos(f, fp, A)`` (f fused)     ``fp`` over all of A's positions of ``j``   ``j = A_idx[fp]``; ``i`` by the
                                                                            walk ``while (fp == pos[i+1]) i++``
``split(i, i0, i1, s)`` then    ``i0`` over blocks of coordinates, ``ip``   ``i = A_idx[ip]``; a block's last
``pos(i1, ip, A)``              over A's positions inside block ``i0``      position by binary search
==============================  ==========================================  ============================

A split applies to a loop variable: a dense coordinate loop, a fused variable, or a
position variable (a split of a split: tiles). ``pos`` applies to a loop variable, a
fused one, or the inner variable of a split of a loop variable: block ``i0`` covers the
coordinates ``[i0*s, i0*s + s)``, and ``ip`` runs over the positions of A's entries there (the
block's first position carried from the block before, its end found by a binary search in A's
sorted coordinates; a block without entries is skipped). A split of a *sparse*
coordinate loop (one that merges iterators) runs the lattice loops once per block
with the guard ``if (i >= i_hi) break`` (``i_hi = min((i0+1)*b, N)``: the tail guard
and, for ``up``, the block's end), the iterators' positions carried from one block to
the next; the inner variable is implicit (``i1 = i - i0*b``). The fused walk carries
the row from one position to the next; the rows are a Dense level's coordinates
(CSR) or a compressed level's positions (DCSR, ``i = A0_idx[r]``). Blocks of fused
positions run on threads only with a binary search for each block's first row
(pitfall 17), and only when each position writes its own output element.

>>> from compiler.notation import parse
>>> from compiler.lattice.cin import concretize
>>> s = concretize(parse("y[i] = A[i, j] * x[j]"))
>>> print(SuchThat(s, (Fuse("i", "j", "f"), Pos("f", "fpos", "A"), Split("fpos", "f0", "f1", 16))))
forall f0:
  forall f1:
    y[i] += A[i, j] * x[j]
such that fuse(i, j, f), pos(f, fpos, A), split(fpos, f0, f1, 16, down)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import serialize
from ..errors import StrategyError
from ..notation.ast import parts_record
from .cin import INDENT, Forall, Skip, Stmt, Where, stmt_lines, assignments, expr_accesses


@serialize.node
@dataclass(frozen=True)
class Split:
    """``index`` iterated as ``outer`` blocks of ``inner``: ``factor`` is the block size (down)
    or the number of blocks (up, taco's ``divide``)."""

    index: str
    outer: str
    inner: str
    factor: int
    direction: str = "down"

    def __str__(self) -> str:
        return f"split({self.index}, {self.outer}, {self.inner}, {self.factor}, {self.direction})"

    @property
    def derived(self) -> tuple:
        return (self.outer, self.inner)


@serialize.node
@dataclass(frozen=True)
class Fuse:
    """The directly nested loops ``outer``, ``inner`` iterated as one loop ``fused``."""

    outer: str
    inner: str
    fused: str

    def __str__(self) -> str:
        return f"fuse({self.outer}, {self.inner}, {self.fused})"

    @property
    def derived(self) -> tuple:
        return (self.fused,)


@serialize.node
@dataclass(frozen=True)
class Pos:
    """``index`` iterated over the positions ``position`` of ``tensor``'s level for it."""

    index: str
    position: str
    tensor: str

    def __str__(self) -> str:
        return f"pos({self.index}, {self.position}, {self.tensor})"

    @property
    def derived(self) -> tuple:
        return (self.position,)


@serialize.node
@dataclass(frozen=True)
class SuchThat(Stmt):
    """A concrete statement with its relations (taco's ``suchthat``), for display in the trace."""

    stmt: Stmt
    relations: tuple

    def __str__(self) -> str:
        return "\n".join(line for line, _ in self._lines(False))

    def printed_parts(self) -> tuple[str, dict]:
        """The text and where its loop heads and accesses are printed, as
        :meth:`~compiler.lattice.cin.Stmt.printed_parts` gives them (a derived loop's head with its
        variable: ``forall f0``).

        >>> from compiler.notation import parse
        >>> from compiler.lattice.cin import concretize
        >>> s = SuchThat(concretize(parse("y[i] = A[i, j] * x[j]")), (Fuse("i", "j", "f"),))
        >>> text, parts = s.printed_parts()
        >>> [(text.splitlines()[int(n) - 1][a:b], role) for n, v in parts.items() for a, b, _, role in v]
        [('forall f', 'loop'), ('y[i]', 'access'), ('A[i, j]', 'access'), ('x[j]', 'access')]
        """
        return parts_record(self._lines(True))

    def _lines(self, spans: bool) -> list[tuple[str, tuple]]:
        lines = _derived_lines(self.stmt, self.relations, 0, spans)
        for r in self.relations:
            order = getattr(r, "loops", None)   # a LoopOrder (compiler.lattice.schedule_compose)
            heads = [x.strip()[len("forall "):-1] for x, _ in lines[:len(order or ())]]
            if order and sorted(heads) == sorted(order) and all(x.lstrip().startswith("forall ") for x, _ in
                                                                 lines[:len(order)]):
                lines = [_forall_line(k, v, spans) for k, v in enumerate(order)] + lines[len(order):]
        return lines + [("such that " + ", ".join(str(r) for r in self.relations), ())]


def _forall_line(depth: int, index: str, spans: bool) -> tuple[str, tuple]:
    """``forall index:`` at ``depth``, with its head as a loop part under ``spans``."""
    pad, head = INDENT * depth, f"forall {index}"
    return f"{pad}{head}:", ((len(pad), len(pad) + len(head), {"index": index}, "loop"),) if spans else ()


def _derived_lines(s, relations, depth: int, spans: bool = False) -> list[tuple[str, tuple]]:
    """``s`` printed with each original forall replaced by the loops that iterate it."""
    if isinstance(s, Where):
        own = stmt_lines(Where(Skip(), Skip(), s.temp), depth, True)   # where: / producer: / declaration
        pad = INDENT * depth
        decl = [(x, p if spans else ()) for x, p in own if x.startswith(pad + INDENT) and "skip" not in x]
        return ([(f"{pad}where:", ())] + _derived_lines(s.consumer, relations, depth + 1, spans)
                + [(f"{pad}producer:", ())] + decl + _derived_lines(s.producer, relations, depth + 1, spans))
    if not isinstance(s, Forall):
        return stmt_lines(s, depth, True) if spans else [(x, ()) for x in stmt_lines(s, depth)]
    name = s.index.name
    fused_inner = {r.inner for r in relations if isinstance(r, Fuse)}
    if name in fused_inner:
        return _derived_lines(s.body, relations, depth, spans)
    loops = [final_variable(name, relations)]
    loops = _expand(loops[0], relations)
    out = [_forall_line(depth + k, v, spans) for k, v in enumerate(loops)]
    return out + _derived_lines(s.body, relations, depth + len(loops), spans)


def final_variable(name: str, relations) -> str:
    """The variable that iterates ``name`` after fuse and pos (before splits)."""
    for r in relations:
        if isinstance(r, Fuse) and r.outer == name:
            name = r.fused
    for r in relations:
        if isinstance(r, Pos) and r.index == name:
            name = r.position
    return name


def _expand(name: str, relations) -> list[str]:
    for r in relations:
        if isinstance(r, Split) and r.index == name:
            return _expand(r.outer, relations) + _expand(r.inner, relations)   # (a split of a split: tiles)
        if isinstance(r, Pos) and r.index == name:
            return _expand(r.position, relations)   # (the positions of a split's block)
    return [name]


# -- checking the commands -------------------------------------------------------------------


def _forall_chain(s) -> list:
    """Every forall index of ``s`` with its directly nested child forall index (or None)."""
    out = []
    if isinstance(s, Forall):
        out.append((s.index.name, s.body.index.name if isinstance(s.body, Forall) else None))
        out += _forall_chain(s.body)
    elif hasattr(s, "consumer"):
        out += _forall_chain(s.consumer) + _forall_chain(s.producer)
    elif hasattr(s, "define"):
        out += _forall_chain(s.define) + _forall_chain(s.mutate)
    return out


def _names_in_use(stmt, relations, formats) -> set:
    names = {i for i, _ in _forall_chain(stmt)} | set(formats)
    for a in assignments(stmt):
        names.add(a.lhs.tensor)
        names |= {i.name for i in a.lhs.indices}
        for acc in expr_accesses(a.rhs):
            names.add(acc.tensor)
            names |= {i.name for i in acc.indices}
    for r in relations:
        names |= set(r.derived)
    return names


def add_relation(command, stmt, relations: tuple, program, formats) -> tuple:
    """``relations`` with the relation of ``command`` (split, fuse or pos) added, after checking it."""
    what = f"schedule: {command} does not apply"
    args = command.args
    loops = dict(_forall_chain(stmt))
    taken = _names_in_use(stmt, relations, formats)
    taken_tensors = {program.lhs.tensor, *formats}
    derived_by = {v: r for r in relations for v in r.derived}
    consumed = {r.index for r in relations if isinstance(r, (Split, Pos))} | \
        {v for r in relations if isinstance(r, Fuse) for v in (r.outer, r.inner)}

    def fresh(name):
        from ..imperative.ir import c_name_problem
        problem = c_name_problem(name, taken_tensors)
        if problem:
            raise StrategyError(f"{what}: {name!r} cannot name a variable of the generated C: {problem}")
        if name in taken:
            raise StrategyError(f"{what}: {name} is already a variable or tensor; name the new variable afresh")

    def live(name, kinds):
        """``name`` is a loop variable that nothing has transformed yet; return what derived it."""
        if not isinstance(name, str):
            raise StrategyError(f"{what}: {name!r} is not a variable name")
        if name in consumed:
            raise StrategyError(f"{what}: {name} is already transformed (a variable has at most one "
                                f"incoming relation); apply the command to the variable that replaced it")
        if name in loops:
            return None
        if name in derived_by:
            r = derived_by[name]
            if not isinstance(r, kinds):
                made = type(r).__name__.lower()   # (pos: a position variable)
                # (issue 31: a fuse of a split's variable was told about pos)
                why = (f"pos iterates the positions of the level that stores a coordinate: of {r.index}'s "
                       f"block {r.outer}, pos({r.inner}, ...) iterates the positions, and {name} counts blocks, "
                       f"which no level stores" if isinstance(r, Split) and command.name == "pos" and name == r.outer
                       else f"pos of the block of a split applies to a split of a loop over coordinates, and "
                       f"{r.index} is not one; apply pos to the coordinate loop first, then split the positions"
                       if isinstance(r, Split) and command.name == "pos" else "fuse joins two loops over coordinates into one, and a split's variables count blocks "
                       f"and offsets in a block; fuse {r.index} with the loop it nests with first, then split the "
                       f"fused variable" if isinstance(r, Split) else
                       "fusing a fused variable again (three loops into one) is not supported" if isinstance(r, Fuse)
                       else f"{command.name} of a {made} variable is not supported: {command.name} the coordinate "
                       f"loops first, then {made} the result")
                raise StrategyError(f"{what}: {name} comes from {r}: {why}")
            return r
        raise StrategyError(f"{what}: {name} is not a loop variable of the statement (its loops are "
                            f"{', '.join(loops) or 'none'})")

    if command.name == "split":
        if len(args) not in (4, 5):
            raise StrategyError(f"{what}: write split(index, outer, inner, factor[, 'down' or 'up'])")
        index, outer, inner, factor = args[:4]
        direction = args[4] if len(args) == 5 else "down"
        if isinstance(factor, np.integer):
            factor = int(factor)
        if isinstance(factor, bool) or not isinstance(factor, int) or not 0 < factor < 2 ** 63:
            raise StrategyError(f"{what}: the factor must be a positive integer below 2**63 (an int64), "
                                f"not {factor!r}")
        if direction not in ("down", "up"):
            raise StrategyError(f"{what}: the direction is 'down' (constant block size) or 'up' "
                                f"(constant number of blocks), not {direction!r}")
        live(index, (Fuse, Pos, Split))
        fresh(outer)
        fresh(inner)
        if outer == inner:
            raise StrategyError(f"{what}: the outer and inner variables need different names")
        return relations + (Split(index, outer, inner, int(factor), direction),)

    if command.name == "fuse":
        if len(args) != 3:
            raise StrategyError(f"{what}: write fuse(outer, inner, fused)")
        outer, inner, fused = args
        live(outer, ())
        live(inner, ())
        if loops.get(outer) != inner:
            raise StrategyError(f"{what}: {inner} is not directly nested in {outer} (fuse needs the loop "
                                f"over {inner} to be the whole body of the loop over {outer})")
        fresh(fused)
        out = program.lhs.tensor
        if out in formats and not all(lvl.located_by_coordinate for lvl in formats[out].levels):
            raise StrategyError(f"{what}: the fused loop adds into the output {out} out of its storage "
                                f"order (a scatter), which needs a dense output; {out} is sparse")
        return relations + (Fuse(outer, inner, fused),)

    if command.name == "pos":
        if len(args) != 3:
            raise StrategyError(f"{what}: write pos(index, position, tensor)")
        index, position, tensor = args
        r = live(index, (Fuse, Split))
        if isinstance(r, Split) and (index != r.inner or r.index not in loops):
            live(index, (Fuse,))   # (refused, saying why)
        fresh(position)
        accs = [a for a in expr_accesses(program.rhs) if a.tensor == tensor]
        if not accs:
            raise StrategyError(f"{what}: {tensor} is not an input of {program}")
        if len({str(a) for a in accs}) > 1:
            raise StrategyError(f"{what}: {tensor} is accessed more than once, so its positions are ambiguous")
        acc, fmt = accs[0], formats[tensor]
        path = [acc.indices[m].name for m in fmt.mode_order]
        levels = [lvl for lvl in fmt.levels for _ in range(lvl.nmodes)]
        want = [r.outer, r.inner] if isinstance(r, Fuse) else [r.index] if r is not None else [index]
        for v in want:
            if v not in path:
                raise StrategyError(f"{what}: {tensor} is not indexed by {v} ({acc}), so it has no "
                                    f"positions for {v}")
        k = path.index(want[-1])
        if not levels[k].compressed:
            raise StrategyError(f"{what}: {tensor} stores {want[-1]} in a {levels[k].name} level; pos iterates the "
                                f"positions of a SparseList (compressed) level")
        if isinstance(r, Fuse):
            ko = path.index(r.outer)
            if ko != k - 1:
                raise StrategyError(f"{what}: {tensor} does not store {r.inner} directly under {r.outer} "
                                    f"(its storage order is {', '.join(path)})")
            if not (levels[ko].located_by_coordinate or levels[ko].compressed):
                raise StrategyError(f"{what}: {tensor} stores {r.outer} in a {levels[ko].name} level; the fused "
                                    f"position walk is implemented over a Dense (CSR) or SparseList (DCSR) "
                                    f"parent level only")
        return relations + (Pos(index, position, tensor),)
    raise AssertionError(command.name)


def parallel_origin(index, relations):
    """The forall that ``parallelize(index)`` runs on threads: ``index``, or the loop whose split made it.

    Among the derived variables only the outer variable of a split runs on threads:

    * a split of a plain loop ``i``: blocks of ``i``;
    * a split of ``pos(i, ip, A)`` (``i`` a plain loop): blocks of A's positions of ``i``,
      each a distinct ``i`` (the level is unique), so the threads own their rows;
    * ``pos`` of a split's inner variable (``split(i, i0, i1, b)``, ``pos(i1, ip, A)``): blocks of
      coordinates, each searching its own positions (a thread carries nothing from the block before);
    * a split of fused positions ``fuse(i, j, f)`` + ``pos(f, fp, A)`` (or of ``f`` alone):
      each block finds the row of its first position by binary search; the threads
      own their elements only if the output is indexed by both ``i`` and ``j``
      (checked by :func:`check_parallel_blocks`).

    An inner block loop is not the outermost loop, and a position loop without a split
    would search the row of every position.
    """
    from ..notation.ast import Index
    made = {v: r for r in relations for v in r.derived}
    if index.name in made:
        r = made[index.name]
        if not isinstance(r, Split) or index.name != r.outer:
            why = ("only the outer loop of a split of it runs on threads (each block then searches its first "
                   "row once, by binary search)" if isinstance(r, (Pos, Fuse)) else
                   f"only the outer loop of a split runs on threads: the inner one runs within each block of "
                   f"{r.outer}, so its threads would start and join once per block; parallelize {r.outer}")
            raise StrategyError(f"parallelize({index}) does not apply: {index} comes from {r}, and {why}")
        while isinstance(made.get(r.index), Split) and r.index == made[r.index].outer:
            r = made[r.index]   # the outer loop of a split of a split's outer loop: blocks of blocks
        if isinstance(made.get(r.index), Split):
            raise StrategyError(f"parallelize({index}) does not apply: {index} splits {r.index}, the inner loop of "
                                f"{made[r.index]}, and only the outer loop of a split runs on threads")
        src = made.get(r.index)
        if src is None:
            return Index(r.index)
        if isinstance(src, Pos) and src.index not in made:
            return Index(src.index)
        # fused: f itself, or pos(f, ...) (pos accepts only a plain or a fused variable)
        fuse = src if isinstance(src, Fuse) else made[src.index]
        return Index(fuse.outer)
    for r in relations:
        if isinstance(r, Split) and r.index == index.name:
            raise StrategyError(f"parallelize({index}) does not apply: {index} is iterated by {r}; "
                                f"parallelize {r.outer} instead")
        if isinstance(r, (Fuse, Pos)) and index.name in (getattr(r, "outer", None), getattr(r, "inner", None),
                                                          getattr(r, "index", None)):
            raise StrategyError(f"parallelize({index}) does not apply: {index} is iterated through {r}; "
                                f"split its loop and parallelize the outer block loop")
    return index


def check_parallel_blocks(index, relations, output_path: list, output: str) -> None:
    """Refuse parallel blocks of fused positions whose threads would add into the same output element.

    A block of fused positions may start or end inside a row, so two threads can meet in
    one row: that is race-free only when every position writes its own element, i.e. the
    output's storage order starts with the fused variables (``C[i, j] = A[i, j] * ...``).
    ``y[i] += A[i, j] * x[j]`` needs atomic updates (``parallelize(f0, races="atomics")``).
    """
    r = blocks_split_rows(index, relations, output_path)
    if r is not None:
        raise StrategyError(f"parallelize({index}) does not apply: a block of {index} may start or end inside a "
                            f"row of {r.outer}, so two threads would add into the same element of {output} "
                            f"(indexed {', '.join(output_path) or 'by nothing'}), a race. Parallelize a split of "
                            f"{r.outer} instead, compute an output indexed by {r.outer} and {r.inner}, or make "
                            f"each update atomic: parallelize({index}, races='atomics') (or races='copies', "
                            f"a copy of {output} per thread)")


def blocks_split_rows(index, relations, output_path: list):
    """The ``fuse`` whose blocks of positions (parallel loop ``index``) may split a row of the
    output between threads (its storage order does not start with the fused variables), or None."""
    made = {v: r for r in relations for v in r.derived}
    r = made.get(index.name)
    while r is not None and not isinstance(r, Fuse):
        r = made.get(r.index)
    return r if r is not None and output_path[:2] != [r.outer, r.inner] else None


__all__ = ["Fuse", "Pos", "Split", "SuchThat", "add_relation", "blocks_split_rows", "check_parallel_blocks", "final_variable",
           "parallel_origin"]
