"""Outputs written into an earlier result's arrays: a BFS round costs its frontier, not the graph.

A loop program that declares a byte-map output first thing (a BFS step's ``_F[...] = -1``) has
its declaration done by the runtime (:func:`compiler.looplets.reset_outputs.runtime_resets`): a fresh
table of flags all clear and values all at the fill, as Finch's byte map starts. A caller that
calls the kernel again and again (a BFS, round after round) may instead give it an earlier result
to write into, ``_F=reuse(old)``: the call clears only the entries ``old`` stores (its sorted
list, ``srt``), as Finch's byte map clears its dirty list, and hands its arrays to the kernel,
so a round allocates and touches nothing in proportion to the vertices. ``old`` is consumed: its
arrays now hold the new result (read that one); reading it raises a UsageError saying so.

Only a tensor whose values off its entries are at the fill can be cleared so: a result of such a
kernel is (it is marked when built); any other tensor of the format is checked once, in one pass.

>>> import numpy as np, compiler as ss
>>> from compiler.looplets.case_studies import bfs_push_parents, PARENT_FRONTIER
>>> from compiler.looplets.compile import compile_program
>>> G = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]])
>>> A = ss.Tensor.from_numpy(G.T.copy(), ss.Format(ss.Dense(ss.SparseList(ss.Pattern())), (1, 0)), name="A")
>>> F = ss.Tensor.from_numpy(np.array([0, -1, -1]), PARENT_FRONTIER, name="F")
>>> V = ss.Tensor.from_numpy(np.array([True, False, False]), "dense", name="V")
>>> step = compile_program(bfs_push_parents, _F=PARENT_FRONTIER, F=F, A=A, V=V)
>>> first = step(F=F, A=A, V=V)
>>> table = first.levels[0].tbl
>>> again = step(F=F, A=A, V=V, _F=reuse(first))       # first's arrays, cleared of its entries
>>> again.to_numpy().tolist(), again.levels[0].tbl is table
([-1, 0, 0], True)
>>> first.to_numpy()                                   # doctest: +ELLIPSIS
Traceback (most recent call last):
...
compiler.errors.UsageError: tensor ... was given to reuse(): its arrays hold the result of the call it was given to; read that result instead
"""

from __future__ import annotations

import numpy as np

from .errors import ShapeError, UsageError
from .sealing import unseal
from .tensor import Tensor

__all__ = ["Reused", "reuse", "mark_cleared_off_entries", "mark_of", "marked_arrays", "stored_slots"]

#: the attribute marking a tensor whose values off its entries are at the fill (a kernel's result)
_MARK = "_fill_off_entries"
#: the attribute keeping all the arrays a tensor holds, for the aliasing checks of later calls
_HELD = "_held_arrays"
#: the attribute keeping the ids of the memory owners of those arrays (each a view's base, else itself)
_OWNERS = "_held_owners"


class Reused:
    """An earlier result given to a kernel call as the output to write into (see :func:`reuse`);
    its ``shape`` is the tensor's, which the call checks as a given output's. The output's
    :class:`compiler.reuse_plans.ReusePlan` takes its arrays."""

    __slots__ = ("tensor", "used")

    def __init__(self, tensor: Tensor):
        if not isinstance(tensor, Tensor):
            raise UsageError(f"reuse() takes a Tensor, an earlier result of the kernel, not {type(tensor).__name__}")
        # (handed back to be written into and consumed: its arrays, sealed when the kernel made them,
        # are the runtime's again; see compiler.sealing)
        if tensor.__dict__.get("_sealed"):   # (not a user's own read-only arrays, which the plan refuses)
            pending = tensor.__dict__.get("_pending")   # (a result whose levels no one built: its arrays as made)
            unseal(list(pending[1][1].values()) if pending is not None else
                   [a for d in tensor.level_arrays() for a in d.values()])
        self.tensor, self.used = tensor, False

    @property
    def shape(self) -> tuple:
        return self.tensor.shape

    def __repr__(self) -> str:
        return f"reuse({self.tensor!r})"

    def fitting(self, name: str, fmt, storage: tuple) -> Tensor:
        """The tensor, unless it was given to a call before or its format or storage extents are not those
        of output ``name`` of this call (``fmt``, ``storage``)."""
        t = self.tensor
        if self.used:
            raise UsageError(f"output {name}: this reuse() was given to a call before; its tensor's arrays hold "
                             f"that call's result now: reuse that result instead")
        if t.format is not fmt and t.format != fmt:
            raise UsageError(f"output {name}: reuse() of a tensor of format {t.format}, but this kernel writes "
                             f"{name} as {fmt}")
        if tuple(t.storage_shape) != tuple(storage):
            raise ShapeError(f"output {name} has shape {tuple(storage)} in this call, but the tensor given to "
                             f"reuse() has shape {t.shape}")
        return t

    def unshared(self, name: str, written: tuple, ids, arguments) -> None:
        """Refuse a call whose other tensors (``arguments``, dicts by name) share one of ``written``
        (the tensor's arrays the kernel writes; ``ids``, the ids of their memory, each owning it, or
        None: compared by the memory they span)."""
        t = self.tensor
        seen = set()   # (the tensors given are bound too: each checked once)
        for given in arguments:
            for other, value in given.items():
                if other == name or id(value) in seen:
                    continue
                seen.add(id(value))
                if value.__class__ is Reused:
                    if value is self or value.tensor is t:
                        raise UsageError(f"output {name}: the tensor given to reuse() is given to reuse() for "
                                         f"{other} too: two outputs would be written into one tensor's arrays; "
                                         f"reuse a different result for each")
                    value = value.tensor
                if value is t or _shares(value, written, ids):
                    raise UsageError(f"output {name}: the tensor given to reuse() shares its arrays with {other}, "
                                     f"which this call takes too: the kernel would write into what {other} holds; "
                                     f"reuse another result")

    def consume(self) -> None:
        """Mark this reuse given, and its tensor, whose arrays now hold the call's result, unreadable."""
        self.used = True
        _consume(self.tensor)


def reuse(tensor: Tensor) -> Reused:
    """``tensor`` (an earlier result of a kernel, a byte-map output declared first thing by its
    program: a BFS step's next frontier) given to a call as the output to write into:
    ``step(F=F, A=A, V=V, _F=reuse(older))``. The call clears only the entries ``tensor`` stores and
    writes into its arrays; ``tensor`` itself is consumed (read the call's result). A Dense output the
    program updates from the value given (a Bellman-Ford round's ``D[i] <<= min, d``) takes ``tensor``'s
    values as that value and updates them in place, with no copy: ``step(_D=D, D=reuse(older), ...)``."""
    return Reused(tensor)


def mark_cleared_off_entries(t: Tensor, pos=None, tbl=None, srt=None, vals=None) -> Tensor:
    """Mark ``t`` (a byte map, under Dense levels or alone, that the runtime started clear: a kernel's
    result) as a tensor whose values off its entries are at the fill, keeping the arrays of its byte
    map (``pos``, ``tbl``, the stored coordinates ``srt``) and ``vals`` (taken from ``t`` when not
    given), so :meth:`Reused.take` finds them at once and need not look at the values; returns ``t``."""
    if pos is None:
        (pos, tbl, srt), vals = marked_arrays(t.levels[-1]), t.leaf.vals
    t.__dict__[_MARK] = (pos, tbl, srt, vals)
    return t


def mark_of(t: Tensor):
    """``(pos, tbl, srt, vals)`` of ``t`` marked by :func:`mark_cleared_off_entries`, else None."""
    return t.__dict__.get(_MARK)


def marked_arrays(level) -> tuple:
    """``(starts, marks, coordinates)`` of a level that marks its slots (a byte map's ``pos``, ``tbl``
    and sorted coordinates ``srt``), by the names the level gives them.

    >>> from compiler.levels import Element, SparseByteMap
    >>> lvl = SparseByteMap(Element(0.0, [2.0]), 3, pos=[0, 1], tbl=[False, True, False], srt=[1])
    >>> [a.tolist() for a in marked_arrays(lvl)]
    [[0, 1], [False, True, False], [1]]
    """
    arrays = level.arrays()
    return arrays[level.starts_array], arrays[level.mark_array], arrays[level.crd_array]


def stored_slots(pos: np.ndarray, srt: np.ndarray, size: int) -> np.ndarray:
    """The slots of a byte map's entries (``fiber * size + coordinate``, a fiber's block of ``size``
    slots), from its ``pos`` (one more than its fibers) and sorted coordinates ``srt``.

    >>> stored_slots(np.array([0, 2, 2, 3]), np.array([1, 3, 0]), 4).tolist()   # fibers 0 and 2
    [1, 3, 8]
    """
    if len(pos) == 2:   # (one fiber: its coordinates are its slots)
        return srt[int(pos[0]):int(pos[1])]
    fibers, first = len(pos) - 1, int(pos[0])
    counts = np.diff(pos)
    return np.repeat(np.arange(fibers, dtype=np.int64) * size, counts) + srt[first:first + int(counts.sum())]


def _consume(t: Tensor) -> None:
    """Make ``t``, whose arrays now hold a later result, refuse to be read: its levels (and what a
    kernel kept of them) would list its old entries over the new ones' table and count, and a kernel
    reading them would read past its list."""
    kept = {"name": t.name, "_shape": t.shape, "_mode_order": t.mode_order, "_format": t.format, "_nnz": None,
            "_pending": (_consumed, (t.name,))}
    t.__dict__.clear()
    t.__dict__.update(kept)


def _consumed(name):
    raise UsageError(f"tensor {name or ''} was given to reuse(): its arrays hold the result of the call it was "
                     f"given to; read that result instead")


def _shares(value, arrays: tuple, ids) -> bool:
    """Whether ``value`` (a tensor, a numpy, scipy or pydata array) holds one of ``arrays`` or a view
    of one, among all its arrays (not only those a kernel reads). With ``ids`` (the ids of ``arrays``,
    each of which owns its memory, as a kernel's result's do), a view's ``base`` is the array it views;
    otherwise (``None``) each of its arrays is compared by the memory it spans."""
    if isinstance(value, Tensor):
        d = value.__dict__
        owners = d.get(_OWNERS)
        if owners is not None and ids is not None:
            # (a round of a BFS checks the same graph and visited set again: one set operation)
            return not owners.isdisjoint(ids)
        held = d.get(_HELD)
        if held is None:
            pending = d.get("_pending")
            if pending is not None and pending[0] is _consumed:
                return False   # (consumed: it holds no arrays of its own any more)
            # (a tensor's arrays never change, only their contents: kept for its next call, as are the
            # ids of their owners, which these references keep alive)
            marked = d.get(_MARK)   # (a kernel's result: its byte map's and values' arrays are all it holds)
            held = d[_HELD] = marked if marked is not None else tuple(
                a for lv in value.level_arrays() for a in lv.values())
            d[_OWNERS] = frozenset(id(b if b.base is None else b.base) for b in held if b.__class__ is np.ndarray)
    elif isinstance(value, np.ndarray):
        held = (value,)
    else:
        held = tuple(vars(value).values()) if hasattr(value, "__dict__") else ()
    for b in held:
        if b.__class__ is not np.ndarray:
            continue
        if ids is not None:
            if id(b if b.base is None else b.base) in ids:   # (by identity, as `is`)
                return True
        elif any(np.may_share_memory(a, b) for a in arrays):
            return True
    return False
