"""Renumbering, for one call, of an index of a huge extent by the coordinates stored.

The runtime (:mod:`compiler.lowering`) applies a :class:`Compression` to the inputs of a
call whose kernel the lattice strategy marked ``compressible`` (see its docstring).

>>> import numpy as np
>>> from compiler import Tensor
>>> A = Tensor.from_numpy(np.array([[0, 2.0, 0, 0], [1.0, 0, 0, 3.0]]), "csr")
>>> B = renumbered(A, 1, 1, np.array([0, 0, 1]), 2)    # columns 1, 0, 3 read as ranks 0, 0, 1
>>> B.shape, B.levels[1].idx.tolist()
((2, 2), [0, 0, 1])
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .format import Format
from .notation import accesses
from .tensor import Tensor, replace_level


class Compression:
    """Renumbering, for one call, of an index of a huge extent by the coordinates stored.

    A kernel's workspace over an index spans its extent: Gustavson's SpGEMM
    ``C[i, j] = A[i, k] * B[k, j]`` scatters row products into an array over ``j``,
    which for a hypersparse ``B`` of 10^12 columns cannot be allocated. When the
    lattice strategy says the kernel visits only coordinates some operand stores
    (:func:`compiler.lattice.lowering.compressible_indices`), a call whose extent
    of such an index is past :data:`COMPRESS_EXTENT` and 16 times the coordinates
    stored for it renumbers it: each input's level of that index reads the rank of
    its coordinate among all stored ones, the kernel runs over that many, and the
    output's coordinates are mapped back. Ranks keep the order, so sorted levels
    stay sorted. Only an index every tensor stores in a SparseList level, read by one
    access per tensor, is renumbered; an update of a given output is not.
    """

    def __init__(self, kernel):
        program, formats = kernel.program, kernel.formats
        self.plans = []   # (index, ((tensor, level, mode), ...), the output's (level, mode) or None)
        tensors = [acc.tensor for acc in accesses(program.rhs)]
        for name in kernel.lowered.compressible:
            uses, ok = [], True
            for acc in accesses(program.rhs):
                modes = [m for m, i in enumerate(acc.indices) if i.name == name]
                if not modes:
                    continue
                level = sparse_list_level(formats[acc.tensor], modes)
                ok = ok and level is not None and tensors.count(acc.tensor) == 1
                uses.append((acc.tensor, level, modes[0]))
            out_modes = [m for m, i in enumerate(program.lhs.indices) if i.name == name]
            out = (sparse_list_level(formats[program.lhs.tensor], out_modes), out_modes[0]) if out_modes else None
            if ok and uses and (out is None or out[0] is not None):
                self.plans.append((name, tuple(uses), out))

    def apply(self, inputs: dict):
        """``(inputs, restore)``: the inputs with each huge index renumbered, and what maps the
        output back (None when no index is renumbered)."""
        coords = []
        for name, uses, out in self.plans:
            t0, _, m0 = uses[0]
            extent = inputs[t0]._shape[m0]
            if extent <= COMPRESS_EXTENT:
                continue
            stored = [_crd(inputs[t].levels[k]) for t, k, _ in uses]
            if extent <= 16 * sum(len(a) for a in stored):
                continue
            kept = np.unique(np.concatenate(stored))
            inputs = dict(inputs)
            for (t, k, m), idx in zip(uses, stored):
                inputs[t] = renumbered(inputs[t], k, m, np.searchsorted(kept, idx), len(kept))
            coords.append((out, kept, extent))
        if not coords:
            return inputs, None

        def restore(tensor: Tensor) -> Tensor:
            for out, kept, extent in coords:
                if out is not None:
                    k, m = out
                    tensor = renumbered(tensor, k, m, kept[_crd(tensor.levels[k])], extent)
            return tensor
        return inputs, restore


#: the extent past which a call renumbers a compressible index (see :class:`_Compression`)
COMPRESS_EXTENT = 1 << 23


def sparse_list_level(fmt: Format, modes: list) -> int | None:
    """The number of the level that stores the one mode in ``modes`` as a compressed list (a
    SparseList: :attr:`~compiler.levels.level.Level.compressed`, its coordinates sorted in its
    :attr:`~compiler.levels.level.Level.crd_array`, which a renumbering keeps sorted), else None."""
    if len(modes) != 1:
        return None
    s, k = fmt.mode_order.index(modes[0]), 0
    for n, lvl in enumerate(fmt.levels):
        if k == s:
            return n if lvl.compressed else None
        k += lvl.nmodes
    return None


def renumbered(tensor: Tensor, k: int, mode: int, idx: np.ndarray, size: int) -> Tensor:
    """``tensor`` with level ``k`` (a SparseList of mode ``mode``) reading coordinates ``idx`` of extent ``size``."""
    node = replace_level(tensor.root, k, lambda lvl: replace(lvl, size=size, **{
        lvl.crd_array: idx.astype(_crd(lvl).dtype, copy=False)}))
    shape = tuple(size if m == mode else e for m, e in enumerate(tensor.shape))
    return Tensor(node, shape=shape, mode_order=tensor.mode_order, name=tensor.name, check=False)


def _crd(level):
    """The stored coordinates of a compressed ``level`` (a SparseList's ``idx``)."""
    return getattr(level, level.crd_array)
