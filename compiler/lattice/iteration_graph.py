"""The iteration graph of a statement: tensor paths in storage order and a loop order.

Each access ``A[i, j]`` contributes a *path*: its indices in the order its levels
store them (CSC stores ``j`` before ``i``). A loop order must visit every path
in order, so that each level is reached after its parent (taco.md §2.3). The
graph also says, per level, whether the lattice compiler iterates it (a sparse
level) or locates into it (a Dense level).

Tensors whose levels are all Dense can be located in any order once their
indices are bound, so they do not constrain the order (their path is drawn
dotted). A dense output does not constrain it either; a sparse output does,
since it is assembled by appending in storage order.

>>> from compiler.format import csr, csc, dense
>>> from compiler.notation import parse
>>> g = IterationGraph.build(parse("y[i] = A[i, j] * x[j]"),
...                          {"A": csc(), "x": dense(1), "y": dense(1)})
>>> [i.name for i in g.order()]
['j', 'i']
>>> print(g.text())
y[i]: i (Dense, located) [output, any order]
A[i, j]: j (Dense, iterated) -> i (SparseList, iterated)
x[j]: j (Dense, located) [any order]
order: j, i
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import StrategyError
from ..format import Format
from ..notation.ast import Access, Assign, Index
from .cin import expr_accesses



class LoopOrderError(StrategyError):
    """No loop order visits every tensor in its storage order (the iteration graph has a cycle);
    ``conflicts`` is the sentence that names the orders the tensors ask for."""

    def __init__(self, message: str, conflicts: str = ""):
        super().__init__(message)
        self.conflicts = conflicts

@dataclass(frozen=True)
class TensorPath:
    """One access's indices in storage order, with the level (name) storing each."""

    access: Access
    indices: tuple[Index, ...]
    level_names: tuple[str, ...]
    output: bool
    flexible: bool  # all levels Dense: locatable in any order
    levels: tuple = ()   # the level storing each index (what the graph asks of it)

    @property
    def tensor(self) -> str:
        return self.access.tensor


def storage_path(access: Access, fmt: Format) -> tuple[tuple[Index, ...], tuple[str, ...]]:
    """The indices of ``access`` in storage order, and the name of the level storing each."""
    if len(access.indices) != fmt.ndim:
        raise StrategyError(f"{access} uses {len(access.indices)} indices but tensor {access.tensor} "
                            f"has {fmt.ndim} modes")
    names = []
    for lvl in fmt.levels:
        names += [lvl.name] * lvl.nmodes
    return tuple(access.indices[m] for m in fmt.mode_order), tuple(names)


def storage_levels(fmt: Format) -> tuple:
    """The level storing each storage mode of ``fmt`` (a level of several modes once per mode).

    >>> from compiler.format import coo
    >>> [lvl.name for lvl in storage_levels(coo())]
    ['SparseCOO', 'SparseCOO']
    """
    return tuple(lvl for lvl in fmt.levels for _ in range(lvl.nmodes))


def is_all_dense(fmt: Format) -> bool:
    """Whether every level of ``fmt`` has a slot per coordinate (TACO's dense levels)."""
    return all(lvl.located_by_coordinate for lvl in fmt.levels)


def check_repeated_indices(acc: Access, fmt: Format) -> None:
    """Refuse an access that repeats an index (a diagonal, ``A[i, i]``) on levels it cannot locate.

    The loop over ``i`` binds ``i`` once, and each level storing a mode of ``i`` is then located at
    it (``p * N + i``), which a Dense level under a Dense one does; the tensor's last level may
    be sparse, searched for ``i`` under the level above, located or iterated (CSR's columns under
    its rows, DCSR's or COO's under their sparse rows; :mod:`compiler.lattice.diagonal`), and so may a
    Dense last level under a sparse one (located once the level above is at ``i``). A sparse level in
    the middle, or a Dense one there under a sparse one of ``i``, is refused.

    >>> from compiler.format import csf, dcsr
    >>> from compiler.notation import parse
    >>> check_repeated_indices(parse("y[i] = A[i, i]").rhs, dcsr())
    >>> check_repeated_indices(parse("y[i, j] = B[i, i, j]").rhs, csf())
    Traceback (most recent call last):
    ...
    compiler.errors.StrategyError: B[i, i, j] repeats index i (a diagonal): the lattice strategy finds i in B's level 1 (SparseList), which it searches only as the last level and locates only as a Dense level under a Dense one or as the last level; store B with Dense levels for i, or use strategy='looplets'
    """
    if len(set(acc.indices)) == len(acc.indices):
        return
    level_of = []
    for k, lvl in enumerate(fmt.levels):
        level_of += [(k, lvl)] * lvl.nmodes
    last, first_dense = len(fmt.levels) - 1, {}
    for sm, m in enumerate(fmt.mode_order):
        i = acc.indices[m]
        k, lvl = level_of[sm]
        dense = lvl.located_by_coordinate
        first = i not in first_dense   # (in storage order: the level the loop over i starts from)
        first_dense.setdefault(i, dense)
        # after the first: Dense levels located under Dense ones, or the last level found (a sparse
        # one searched, a Dense one located, under the level above once it is at i)
        if acc.indices.count(i) > 1 and not first and k < last and not (dense and first_dense[i]):
            raise StrategyError(
                f"{acc} repeats index {i} (a diagonal): the lattice strategy finds {i} in {acc.tensor}'s "
                f"level {k} ({lvl.name}), which it searches only as the last level and locates only as a "
                f"Dense level under a Dense one or as the last level; store {acc.tensor} with Dense levels "
                f"for {i}, or use strategy='looplets'")


class IterationGraph:
    """Index variables and tensor paths of one statement; see the module docstring."""

    def __init__(self, variables: list[Index], paths: list[TensorPath]):
        self.variables = list(variables)
        self.paths = list(paths)

    @classmethod
    def build(cls, program: Assign, formats: dict[str, Format]) -> "IterationGraph":
        """The graph of an index-notation statement (its output and every access)."""
        variables: list[Index] = list(program.lhs.indices)
        accesses = [program.lhs] + expr_accesses(program.rhs)
        for acc in accesses[1:]:
            for i in acc.indices:
                if i not in variables:
                    variables.append(i)
        paths, seen = [], set()
        for k, acc in enumerate(accesses):
            if (acc, k == 0) in seen:
                continue
            seen.add((acc, k == 0))
            if acc.tensor not in formats:
                raise StrategyError(f"no format for tensor {acc.tensor}")
            fmt = formats[acc.tensor]
            check_repeated_indices(acc, fmt)
            indices, names = storage_path(acc, fmt)
            paths.append(TensorPath(acc, indices, names, k == 0, is_all_dense(fmt), storage_levels(fmt)))
        return cls(variables, paths)

    def restricted(self, accesses) -> "IterationGraph":
        """The graph of the paths of ``accesses`` only: the loops of one side of a ``where``
        iterate that side's tensors alone."""
        keep = set(accesses)
        return IterationGraph(self.variables, [p for p in self.paths if p.access in keep])

    def edges(self) -> list[tuple[Index, Index, TensorPath]]:
        """Order constraints ``(before, after, path)`` from the constraining paths."""
        out = []
        for p in self.paths:
            if p.flexible:
                continue
            for a, b in zip(p.indices, p.indices[1:]):
                if a != b:   # (a diagonal's repeated index is one loop)
                    out.append((a, b, p))
        return out

    def order(self, variables: list[Index] | None = None, prefer=None, inner=()) -> list[Index]:
        """A loop order over ``variables`` (default: all) that respects every constraining path.

        Among the variables that may come next, one stored after a variable of ``inner``
        (the loops nested inside, a reduction's) comes last; then an index of a sparse output comes
        first (it is appended in storage order), then one that indexes a sparse level, then
        the earliest in ``prefer`` (default: output indices, then first use).
        A cycle raises :class:`StrategyError` naming the tensors involved.
        """
        chain = list(self.variables if variables is None else variables)
        prefer = list(prefer or self.variables)
        rank = {v: prefer.index(v) if v in prefer else len(prefer) for v in chain}
        inset = set(chain)
        before: dict[Index, set[Index]] = {v: set() for v in chain}
        why: dict[tuple, list[str]] = {}
        for p in self.paths:
            if p.flexible:
                continue
            idx = [i for i in p.indices if i in inset]
            for a in range(len(idx)):
                for b in range(a + 1, len(idx)):
                    if idx[a] == idx[b]:   # a repeated index (a diagonal) is one loop
                        continue
                    before[idx[b]].add(idx[a])
                    why.setdefault((idx[a], idx[b]), []).append(str(p.access))
        sparse = {i for p in self.paths for i, lvl in zip(p.indices, p.levels) if not lvl.located_by_coordinate}
        # a variable stored after an index of an inner loop (a nested reduction's) is bound
        # last: the reduction then runs inside the loops before it (a smaller workspace)
        blocked = {i for p in self.paths if not p.flexible for k, i in enumerate(p.indices)
                   if any(q in inner for q in p.indices[:k])}
        # a sparse output is appended in its storage order: its indices come before a reduction's
        appended = {i for p in self.paths if p.output and not p.flexible for i in p.indices}
        done: list[Index] = []
        left = list(chain)
        while left:
            ready = [v for v in left if before[v] <= set(done)]
            if not ready:
                raise LoopOrderError(*self._cycle_message(left, before, why))
            ready.sort(key=lambda v: (v in blocked, v not in appended, v not in sparse, rank[v]))
            done.append(ready[0])
            left.remove(ready[0])
        return done

    def _cycle_message(self, left, before, why) -> tuple[str, str]:
        pairs = []
        for v in left:
            for u in sorted(before[v] & set(left), key=lambda x: x.name):
                pairs.append(f"{u} before {v} (from {', '.join(why[(u, v)])})")
        tensors = sorted({t for v in left for u in before[v] & set(left) for t in why[(u, v)]})
        conflicts = f"no loop order visits every tensor in storage order: {'; '.join(pairs)}"
        return (f"{conflicts}. Tensors {', '.join(tensors)} disagree; store one of them in the other order "
                f"(e.g. csc instead of csr) or make it dense"), conflicts

    def roles(self, path: TensorPath) -> list[str]:
        """For each level of ``path``: ``iterated`` (sparse or dense loop) or ``located``."""
        out = []
        for lvl in path.levels:
            if path.output or path.flexible:
                out.append("located" if lvl.located_by_coordinate else "appended")
            else:
                out.append("iterated")
        return out

    def text(self, order=None) -> str:
        """One line per path, then the loop order."""
        lines = []
        for p in self.paths:
            steps = " -> ".join(f"{i} ({n}, {r})" for i, n, r in zip(p.indices, p.level_names, self.roles(p)))
            tags = []
            if p.output:
                tags.append("output")
            if p.flexible:
                tags.append("any order")
            lines.append(f"{p.access}: {steps}" + (f" [{', '.join(tags)}]" if tags else ""))
        try:
            order = self.order() if order is None else order
            lines.append("order: " + ", ".join(i.name for i in order))
        except StrategyError as e:
            lines.append(f"order: none ({e})")
        return "\n".join(lines)

    def dot(self) -> str:
        """Graphviz: index variables as nodes, one edge chain per tensor path.

        Output paths are dashed, paths that do not constrain the order dotted.
        """
        lines = ["digraph iteration_graph {", "  rankdir=LR;", '  node [shape=circle, fontname="monospace"];',
                 '  root [shape=point];']
        for v in self.variables:
            lines.append(f'  "{v.name}";')
        colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"]
        for n, p in enumerate(self.paths):
            style = "dashed" if p.output else "dotted" if p.flexible else "solid"
            color = colors[n % len(colors)]
            prev = "root"
            for i in p.indices:
                lines.append(f'  "{prev}" -> "{i.name}" [label="{p.tensor}", style={style}, color="{color}", '
                             f'fontcolor="{color}"];')
                prev = i.name
        lines.append("}")
        return "\n".join(lines)


__all__ = ["IterationGraph", "LoopOrderError", "TensorPath", "check_repeated_indices", "is_all_dense", "storage_levels",
           "storage_path"]
