"""How one output of one kernel takes an earlier result given as ``reuse(...)``, planned once.

A kernel called round after round with ``reuse(older)`` (a BFS's frontier, Bellman-Ford's
distances and changed set) is given the same few sets of arrays again and again (two,
alternating). What depends only on those arrays, not on what they hold, is checked the first time
a set is met and kept here, by the arrays themselves (weakly: a set no result holds any more is
forgotten with its arrays): that they are writeable, contiguous and of the output's dtype, and the
identities of the memory they own, which the alias check compares with the call's other arguments.
Each call still checks what only it decides: that this reuse was not given before, the tensor's
format and shape against the call's, that no other argument shares the arrays, and, for a byte
map a kernel did not make, that its values off its entries are at the fill. The general path
(:mod:`compiler.runtime`) and the fast path (:mod:`compiler.fastcall`) take a reuse through the
same plan, the one kept on the output's call plan.

>>> import numpy as np, compiler as ss
>>> from compiler.looplets.case_studies import bfs_push_parents, PARENT_FRONTIER
>>> from compiler.looplets.compile import compile_program
>>> from compiler.reused_outputs import reuse
>>> A = ss.Tensor.from_numpy(np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0]]),
...                          ss.Format(ss.Dense(ss.SparseList(ss.Pattern())), (1, 0)), name="A")
>>> F = ss.Tensor.from_numpy(np.array([0, -1, -1]), PARENT_FRONTIER, name="F")
>>> V = ss.Tensor.from_numpy(np.array([True, False, False]), "dense", name="V")
>>> step = compile_program(bfs_push_parents, _F=PARENT_FRONTIER, F=F, A=A, V=V)
>>> one, two = step(F=F, A=A, V=V), step(F=F, A=A, V=V)
>>> for _ in range(4):                       # each round writes into the result before last
...     one, two = two, step(F=F, A=A, V=V, _F=reuse(one))
>>> two.to_numpy().tolist(), step._plan().reuse.planned   # (two sets of arrays, each checked once)
([-1, 0, 0], 2)
"""

from __future__ import annotations

import weakref

import numpy as np

from .errors import FormatError, UsageError
from .levels.level import is_fill
from .reused_outputs import Reused, mark_of, marked_arrays, stored_slots

__all__ = ["ReusePlan", "reuse_refused"]

#: how many sets of arrays a plan keeps (a driver alternates two; a third is the odd caller's)
KEPT = 8


class ReusePlan:
    """How output ``name`` (of format ``fmt``, fill ``fill``, values ``dtype``) of a kernel takes an
    earlier result given as ``reuse(tensor)``: a byte map declared first thing is cleared of its
    entries (``clears``), a Dense output the program updates from the value given is updated in
    place. :attr:`planned` counts the sets of arrays checked so far."""

    __slots__ = ("name", "format", "fill", "dtype", "clears", "planned", "_known")

    def __init__(self, name: str, fmt, fill, dtype, clears: bool):
        self.name, self.format, self.fill, self.dtype, self.clears = name, fmt, fill, np.dtype(dtype), clears
        self.planned = 0
        # id of a set's first array -> (a weak reference to it, the set, the ids of their owners or None)
        self._known: dict = {}

    def take(self, given: Reused, storage: tuple, *arguments: dict) -> dict:
        """The arrays of the output for a call of storage extents ``storage`` whose other tensors are
        ``arguments`` (dicts by name, none of which may share an array with ``given``'s), by the
        output's array names (a byte map's starts and marks, ``"val"``), the entries ``given`` stored
        cleared; ``given`` is consumed. Raises naming what does not fit before it clears anything."""
        t = given.fitting(self.name, self.format, storage)
        if not self.clears:
            vals = t.vals
            ids = self._planned((vals,), self._check_values)
            given.unshared(self.name, (vals,), ids, arguments)
            given.consume()
            return {"val": vals}
        marked = mark_of(t)
        if marked is not None:   # (a result the runtime started clear: the arrays it made)
            pos, tbl, srt, vals = marked
            ids = self._planned((tbl, vals, pos), None)
        else:
            # (the byte map is the last level: compiler.looplets.reset_outputs)
            last = t.levels[-1]
            (pos, tbl, srt), vals = marked_arrays(last), t.leaf.vals
            ids = self._planned((tbl, vals, pos), lambda arrays: self._check_byte_map(last, arrays))
            # (what the arrays hold is this call's to check: their owner may have written them since)
            if not np.all(is_fill(vals[~tbl.astype(bool)], self.fill)):
                raise FormatError(f"output {self.name}: the tensor given to reuse() holds values other than its "
                                  f"fill {self.fill!r} off its entries, which the kernel would read as written; "
                                  f"pass a kernel's result, or a tensor made from numpy")
        given.unshared(self.name, (tbl, vals, pos), ids, arguments)
        slots = stored_slots(pos, srt, storage[-1])
        if len(slots) * 8 >= len(tbl):
            # (entries in an eighth of the slots or more: a fill of every slot streams, where a scatter to
            # the entries costs ~5x more a slot; a BFS's middle frontiers hold most of the graph)
            tbl.fill(False)
            vals.fill(self.fill)
        else:
            tbl[slots] = False
            vals[slots] = self.fill
        pos[:] = 0
        given.consume()
        level = self.format.levels[-1]
        return {level.starts_array: pos, level.mark_array: tbl, "val": vals}

    def _planned(self, arrays: tuple, check) -> frozenset | None:
        """The ids of the memory owners of ``arrays`` (None when one is a view: compared by the memory
        it spans), after ``check(arrays)`` (or None: nothing to check) the first time this set is met."""
        known = self._known.get(id(arrays[0]))
        if known is not None and known[0]() is arrays[0] and all(a is b for a, b in zip(known[1], arrays)):
            return known[2]
        if check is not None:
            check(arrays)
        ids = frozenset(id(a) for a in arrays) if all(a.base is None for a in arrays) else None
        if len(self._known) >= KEPT:
            self._known.clear()
        self._known[id(arrays[0])] = (weakref.ref(arrays[0]), arrays, ids)
        self.planned += 1
        return ids

    def _check_values(self, arrays: tuple) -> None:
        vals, = arrays
        if not (vals.flags.c_contiguous and vals.flags.writeable) or vals.dtype != self.dtype:
            raise UsageError(f"output {self.name}: the values of the tensor given to reuse() are not a writeable "
                             f"contiguous {self.dtype.name} array; pass a kernel's result")

    def _check_byte_map(self, level, arrays: tuple) -> None:
        tbl, vals, pos = arrays
        for what, a in ((level.starts_array, pos), (level.mark_array, tbl), ("values", vals)):
            if not (a.flags.c_contiguous and a.flags.writeable):
                raise UsageError(f"output {self.name}: the {what} array of the tensor given to reuse() is not a "
                                 f"writeable contiguous array (a view of another's); pass a kernel's result")


def reuse_refused(name: str, outputs, reusable, refusals: dict) -> str:
    """Why a call may not give ``reuse(...)`` as tensor ``name`` (``outputs``: the kernel's;
    ``reusable``: those that may be; ``refusals``: the lowering's reasons, by output, for the byte
    maps declared first thing that the runtime cannot start clear).

    >>> reuse_refused("x", {"y"}, {"y"}, {})
    'reuse() is for an output of the kernel; x is an input'
    """
    if name not in outputs:
        return f"reuse() is for an output of the kernel; {name} is an input"
    if name in refusals:
        return refusals[name]
    ok = f"; only {', '.join(sorted(reusable))} can" if reusable else ""
    return (f"output {name}: reuse() gives an earlier result to write into, for a byte-map output the program "
            f"declares first thing (a BFS step's _F[...] = -1) or a Dense one it updates from the value given "
            f"(a Bellman-Ford step's D), which {name} is not{ok}")
