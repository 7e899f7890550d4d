"""Outputs written into an earlier result's arrays: a BFS round costs its frontier, not the graph.

A loop program that declares a byte-map output first thing (a BFS step's ``_F[...] = -1``) has
its declaration done by the runtime (:func:`compiler.looplets.compile.runtime_resets`): a fresh
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

from .errors import FormatError, ShapeError, UsageError
from .levels.level import is_fill
from .tensor import Tensor

__all__ = ["Reused", "reuse", "mark_cleared_off_entries"]

#: the attribute marking a tensor whose values off its entries are at the fill (a kernel's result)
_MARK = "_fill_off_entries"


class Reused:
    """An earlier result given to a kernel call as the output to write into (see :func:`reuse`);
    its ``shape`` is the tensor's, which the call checks as a given output's."""

    __slots__ = ("tensor", "used")

    def __init__(self, tensor: Tensor):
        if not isinstance(tensor, Tensor):
            raise UsageError(f"reuse() takes a Tensor, an earlier result of the kernel, not {type(tensor).__name__}")
        self.tensor, self.used = tensor, False

    @property
    def shape(self) -> tuple:
        return self.tensor.shape

    def __repr__(self) -> str:
        return f"reuse({self.tensor!r})"

    def take(self, name: str, fmt, storage: tuple, fill, tensors: dict) -> dict | None:
        """The arrays of output ``name`` (``pos``, ``tbl`` and ``val`` by kind) for a call whose output
        is ``fmt`` of storage extents ``storage`` and whose other tensors are ``tensors``, the entries
        the tensor stored cleared; raises naming what does not fit (or None, for the fast path: the
        general path then raises)."""
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
        marked = t.__dict__.get(_MARK)
        if marked is not None:   # (a result the runtime started clear: the arrays it made, its entries' list)
            pos, tbl, stored, vals = marked
        else:
            level, leaf = t.levels[0], t.leaf
            pos, tbl, vals = level.pos, level.tbl, leaf.vals
            for what, a in (("pos", pos), ("tbl", tbl), ("values", vals)):
                if not (a.flags.c_contiguous and a.flags.writeable):
                    raise UsageError(f"output {name}: the {what} array of the tensor given to reuse() is not a "
                                     f"writeable contiguous array (a view of another's); pass a kernel's result")
            if not np.all(is_fill(vals[~tbl.astype(bool)], fill)):
                raise FormatError(f"output {name}: the tensor given to reuse() holds values other than its fill "
                                  f"{fill!r} off its entries, which the kernel would read as written; pass a "
                                  f"kernel's result, or a tensor made from numpy")
            stored = level.srt[int(pos[0]):int(pos[-1])]
        owned = tbl.base is None and vals.base is None and pos.base is None
        for other, value in tensors.items():
            if value is self:
                continue
            if value is t or _shares(value, (tbl, vals, pos), owned):
                raise UsageError(f"output {name}: the tensor given to reuse() shares its arrays with {other}, "
                                 f"which the kernel reads: it would read what it writes; reuse another result")
        tbl[stored] = False
        vals[stored] = fill
        pos[:] = 0
        self.used = True
        _consume(t)
        return {"pos": pos, "tbl": tbl, "val": vals}


def reuse(tensor: Tensor) -> Reused:
    """``tensor`` (an earlier result of a kernel, a byte-map output declared first thing by its
    program: a BFS step's next frontier) given to a call as the output to write into:
    ``step(F=F, A=A, V=V, _F=reuse(older))``. The call clears only the entries ``tensor`` stores and
    writes into its arrays; ``tensor`` itself is consumed (read the call's result)."""
    return Reused(tensor)


def mark_cleared_off_entries(t: Tensor, pos=None, tbl=None, srt=None, vals=None) -> Tensor:
    """Mark ``t`` (a one-level byte map the runtime started clear, a kernel's result) as a tensor whose
    values off its entries are at the fill, keeping its arrays (``pos``, ``tbl``, the stored
    coordinates ``srt`` and ``vals``; taken from ``t`` when not given), so :meth:`Reused.take` finds
    them at once and need not look at the values; returns ``t``."""
    if pos is None:
        level = t.levels[0]
        pos, tbl, srt, vals = level.pos, level.tbl, level.srt[int(level.pos[0]):int(level.pos[-1])], t.leaf.vals
    t.__dict__[_MARK] = (pos, tbl, srt, vals)
    return t


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


def _shares(value, arrays: tuple, owned: bool) -> bool:
    """Whether tensor ``value`` (or a numpy, scipy or pydata array) holds one of ``arrays`` or a view
    of one. With ``owned`` (each of ``arrays`` owns its memory, as a kernel's result's do), a view's
    ``base`` is the array it views, and a tensor a kernel bound is asked for the arrays the kernel
    reads (kept on it); otherwise each of its arrays is compared by the memory it spans."""
    bound = value.__dict__.get("_bound_args") if value.__class__ is Tensor else None
    if bound is not None:
        held = bound[1].values()
    elif isinstance(value, Tensor):
        held = [a for d in value.level_arrays() for a in d.values()]
    elif isinstance(value, np.ndarray):
        held = [value]
    else:
        held = list(vars(value).values()) if hasattr(value, "__dict__") else []
    for b in held:
        if b.__class__ is not np.ndarray:
            continue
        if owned:
            base = b if b.base is None else b.base
            if any(base is a for a in arrays):
                return True
        elif any(np.may_share_memory(a, b) for a in arrays):
            return True
    return False
