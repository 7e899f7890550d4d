"""The level iterator protocol of the lattice strategy, dispatching on the level class.

Each storage mode of an access gets a :class:`ModeIterator`: how to bound,
iterate, read coordinates from, locate into, and descend from one fiber of that
level, both as imperative IR (for the C kernels) and in Python (for the CFIR
interpreter). A *parent* is a position (an int or IR expression), or for the
inner modes of a SparseCOO level a segment ``(lo, hi)`` of positions.

=============  ==========  ==================================================
level          kind        protocol
=============  ==========  ==================================================
Dense          dense       locate: ``parent * size + i``
SparseList     sparse      positions ``[pos[parent], pos[parent+1])``, ``idx[p]``
SparseCOO j    sparse      positions of the parent segment, ``idx{j}[p]``;
                           every mode but the last is non-unique: equal
                           coordinates form a segment that the next mode walks
=============  ==========  ==================================================

Any other level (run-length, hashed) is refused with :class:`StrategyError`.

>>> from compiler.format import coo
>>> its = mode_iterators("A", "A", coo())
>>> [(it.kind, it.unique, it.param("idx")) for it in its]
[('sparse', False, 'A0_idx0'), ('sparse', True, 'A0_idx1')]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..binding import array_name
from ..errors import StrategyError
from ..format import Format
from ..imperative.ir import BinOp, Const, Load, Var
from ..levels import Dense, SparseCOO, SparseList


@dataclass(frozen=True)
class ModeIterator:
    """The iterator of storage mode ``mode`` of one access (``name``) of ``tensor``."""

    name: str         # the access's name in generated code ("A", "A_2")
    tensor: str       # the tensor (parameter prefix)
    mode: int         # storage mode
    level: int        # storage level number
    sub: int          # mode within a SparseCOO level (0 otherwise)
    level_name: str
    nsub: int = 1

    @property
    def kind(self) -> str:
        return "dense" if self.level_name == "Dense" else "sparse"

    @property
    def unique(self) -> bool:
        return self.level_name != "SparseCOO" or self.sub == self.nsub - 1

    @property
    def label(self) -> str:
        return f"{self.name}{self.level}" + (f".{self.sub}" if self.nsub > 1 else "")

    def param(self, kind: str) -> str:
        """The kernel parameter of this level's array ``kind`` (pos, idx) or its size."""
        if kind == "size":
            return array_name(self.tensor, self.mode, "size")
        if kind == "idx" and self.level_name == "SparseCOO":
            return array_name(self.tensor, self.level, f"idx{self.sub}")
        return array_name(self.tensor, self.level, kind)

    # -- imperative IR -----------------------------------------------------------------

    def bounds(self, parent):
        """IR ``(lo, hi)`` of the positions of the fiber under ``parent``."""
        if self.level_name == "SparseList" or (self.level_name == "SparseCOO" and self.sub == 0):
            pos = self.param("pos")
            after = Const(parent.value + 1, "int64") if isinstance(parent, Const) else BinOp("+", parent, 1)
            return Load(pos, parent), Load(pos, after)
        if self.level_name == "SparseCOO":
            return parent
        raise AssertionError("a Dense level has no position bounds; locate into it")

    def coord(self, p):
        return Load(self.param("idx"), p)

    def child(self, p, segend=None):
        """The parent of the next mode after visiting position ``p`` (segment end ``segend``)."""
        if not self.unique:
            return (p, segend)
        return p

    def locate(self, parent, i):
        return BinOp("+", BinOp("*", parent, Var(self.param("size"))), i)

    # -- Python (the CFIR interpreter) --------------------------------------------------

    def py_fiber(self, arrays: dict, sizes: dict, parent) -> list:
        """``[(coord, child parent), ...]`` of the fiber under ``parent``, deduplicated."""
        if self.level_name == "Dense":
            n = sizes[self.param("size")]
            return [(i, parent * n + i) for i in range(n)]
        if self.level_name == "SparseList":
            pos, idx = arrays[self.param("pos")], arrays[self.param("idx")]
            return [(int(idx[p]), p) for p in range(int(pos[parent]), int(pos[parent + 1]))]
        lo, hi = (int(arrays[self.param("pos")][parent]), int(arrays[self.param("pos")][parent + 1])) \
            if self.sub == 0 else parent
        idx = arrays[self.param("idx")]
        out, p = [], lo
        while p < hi:
            s = p + 1
            if not self.unique:
                while s < hi and idx[s] == idx[p]:
                    s += 1
            out.append((int(idx[p]), (p, s) if not self.unique else p))
            p = s
        return out


@dataclass(frozen=True)
class WorkspaceIterator:
    """Iterates the coordinates set in a dense workspace ``w`` (its coordinate list).

    The workspace is three scratch arrays: ``w`` (values, dense over the index),
    ``w_set`` (occupancy bitmap) and ``w_list`` (the coordinates set, ``w_n`` of
    them). Its positions are ``[0, w_n)``, the coordinate at ``p`` is ``w_list[p]``
    and the value at coordinate ``j`` is ``w[j]`` (located by coordinate, not by
    position). The list is sorted before a consumer that needs order reads it.

    >>> it = WorkspaceIterator("w")
    >>> it.label, it.param("idx"), str(it.coord(Var("p")))
    ('w', 'w_list', 'w_list[p]')
    """

    name: str
    tensor: str = ""
    mode: int = 0
    level: int = 0
    sub: int = 0
    level_name: str = "Workspace"
    nsub: int = 1

    kind = "sparse"
    unique = True

    @property
    def label(self) -> str:
        return self.name

    def param(self, kind: str) -> str:
        return {"idx": f"{self.name}_list", "set": f"{self.name}_set", "count": f"{self.name}_n",
                "val": self.name}[kind]

    def bounds(self, parent):
        return Const(0, "int64"), Var(self.param("count"))

    def coord(self, p):
        return Load(self.param("idx"), p)

    def child(self, p, segend=None):
        return p

    def py_fiber(self, arrays: dict, sizes: dict, parent) -> list:
        """``[(coord, coord), ...]``: the interpreter keeps a workspace as a dict in ``arrays``."""
        return [(j, j) for j in sorted(arrays[self.name])]


def mode_iterators(name: str, tensor: str, fmt: Format) -> list[ModeIterator]:
    """One :class:`ModeIterator` per storage mode of an access ``name`` to ``tensor`` of ``fmt``."""
    out = []
    mode = 0
    for k, lvl in enumerate(fmt.levels):
        if isinstance(lvl, Dense):
            out.append(ModeIterator(name, tensor, mode, k, 0, "Dense"))
        elif isinstance(lvl, SparseList):
            if not lvl.ordered or not lvl.unique:
                raise StrategyError(f"level {k} ({lvl.name}) of tensor {tensor} is not ordered and unique")
            out.append(ModeIterator(name, tensor, mode, k, 0, "SparseList"))
        elif isinstance(lvl, SparseCOO):
            if lvl is not fmt.levels[-1]:
                raise StrategyError(f"tensor {tensor}: the lattice strategy supports SparseCOO only as the "
                                    f"innermost level")
            for j in range(lvl.ndim):
                out.append(ModeIterator(name, tensor, mode + j, k, j, "SparseCOO", lvl.ndim))
        else:
            raise StrategyError(
                f"level {k} ({lvl.name}) of tensor {tensor} cannot be iterated coordinate by coordinate, "
                f"which the lattice strategy needs; convert {tensor} with .asformat('csr'/'coo'/...) "
                f"or use strategy='looplets'")
        mode += lvl.nmodes
    return out


def py_arrays(tensor_name: str, t) -> tuple[dict, dict]:
    """The arrays and sizes of a Tensor keyed by kernel parameter names (for the interpreter)."""
    from ..binding import input_args
    args = input_args(tensor_name, t)
    arrays = {k: v for k, v in args.items() if isinstance(v, np.ndarray)}
    sizes = {k: v for k, v in args.items() if not isinstance(v, np.ndarray)}
    return arrays, sizes


__all__ = ["ModeIterator", "WorkspaceIterator", "mode_iterators", "py_arrays"]
