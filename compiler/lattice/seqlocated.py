"""Reads at constant coordinates only (``w[1]``, ``A[2, 3]``) in the sequence lowering: each entry located
once, before the loops, and read by every use as a scalar.

``square(sign(w))[1]`` reads ``w[1]`` six times; walked as a sequence of one coordinate, each read had its
own cursor, and the cases of each nested in the others' (5,067 lines of C for a NaN fill). Here each
distinct entry becomes a 0-d stand-in (``w_1[]``), a value every coordinate has, so the lattice walks
nothing for it; the kernel computes it once at its start: each level of the tensor located at its
constant as the level's iterator says (TACO's locate for a Dense level's slot, a SparseByteMap's mark or
a SparseHash's probe; a search of a sorted fiber, a SparseCOO's non-last mode a segment of equal
coordinates, :class:`~compiler.lattice.diagonal.Found`), the stored value where every level holds it and
the tensor's fill where one does not. The stand-in may hold what the tensor stores and its fill
(:func:`stand_in_facts`), so an operator that only a finite value annihilates walks every coordinate.

>>> from compiler.notation import parse
>>> from compiler.format import Format
>>> from compiler.levels import Element, SparseList
>>> program, reads = located_reads(parse("y[i] = w[1] * w[1] + v[i] * w[2]"), {"y", "v", "w"})
>>> print(program)
y[i] = w_1[] * w_1[] + v[i] * w_2[]
>>> reads[0]
LocatedRead(name='w_1', tensor='w', coords=(1,))
>>> from compiler.names import FreshNames
>>> stmts, var = located_stmts(reads[0], Format(SparseList(Element(float("nan")))), FreshNames())
>>> print(*stmts, sep=chr(10))
float64 w_1 = nan;
int64 end = w0_pos[1];
int64 lo = lower_bound(w0_idx, w0_pos[0], end, 1);
int64 pw0 = lo < end && w0_idx[lo] == 1 ? lo : -1;
if (pw0 >= 0) {
    w_1 = w_val[pw0];
}
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .. import values
from ..binding import array_name
from ..format import Format, dense
from ..imperative.ir import Assign as IRAssign
from ..imperative.ir import BinOp, Comment, Const, Declare, If, Load, Var
from ..imperative.search import lower_bound_call
from ..names import FreshNames
from ..notation.ast import Access, Assign
from ..notation.ast import walk as walk_notation
from .diagonal import Found
from .iterators import hash_capacity_stmts, mode_iterators
from .seqreads import map_accesses

I64 = "int64"


@dataclass(frozen=True)
class LocatedRead:
    """The entry of ``tensor`` at ``coords`` (one per logical mode, in range), read in the statement as
    the 0-d stand-in ``name``."""

    name: str
    tensor: str
    coords: tuple


def located_reads(program: Assign, taken) -> tuple[Assign, tuple]:
    """``program`` with each access at constants only replaced by a 0-d stand-in (one per distinct entry),
    and the :class:`LocatedRead` of each; ``taken``: the names the stand-ins must not take (the tensors').
    A statement reading no entry is returned as it is."""
    found: dict = {}
    names = FreshNames(set(taken) | {a.tensor for a in walk_notation(program) if isinstance(a, Access)})

    def located(x):
        if not (x.indices and all(isinstance(i, int) for i in x.indices)):
            return x
        if x not in found:
            found[x] = LocatedRead(names(f"{x.tensor}_" + "_".join(str(c) for c in x.indices)), x.tensor,
                                   tuple(x.indices))
        return Access(found[x].name, ())

    rhs = map_accesses(program.rhs, located)
    if not found:
        return program, ()
    return replace(program, rhs=rhs), tuple(found.values())


def stand_in_format(fmt: Format) -> Format:
    """The format of a stand-in of an entry of a tensor of ``fmt``: a 0-d Dense of its dtype and fill."""
    return dense(0, fill=fmt.fill, dtype=fmt.dtype)


def stand_in_facts(read: LocatedRead, fmt: Format) -> values.Facts:
    """What the stand-in may hold: what its tensor stores (as the lowering assumes), and its fill."""
    return values.assumed(read.tensor) | values.of_value(fmt.fill)


def located_value(read: LocatedRead, tensor):
    """The entry's value in the Tensor ``tensor`` (its fill where it stores none): the interpreters' data.

    >>> from compiler.tensor import Tensor
    >>> t = Tensor.from_numpy(np.array([0.0, 2.0, 0.0]), "sparse", fill=0.0)
    >>> located_value(LocatedRead("w_1", "w", (1,)), t), located_value(LocatedRead("w_2", "w", (2,)), t)
    (2.0, 0.0)
    """
    return np.asarray(tensor.to_numpy())[read.coords].item()


def located_stmts(read: LocatedRead, fmt: Format, fresh) -> tuple[list, Var]:
    """Statements declaring the variable of ``read``'s value in a tensor of ``fmt`` (its fill where some
    level does not hold it), and that variable: each level located at its constant as its iterator
    says, the next level located only where it is held (see the module's docstring)."""
    its = mode_iterators(read.tensor, read.tensor, fmt)
    dt = np.dtype(fmt.dtype).name
    var = Var(fresh(read.name))
    fill = fmt.fill if fmt.fill is not None else 0
    fill = bool(fill) if dt == "bool" else fill
    head = [Declare(var, dt, Const(np.asarray(fill).astype(dt).item(), dt))]
    caps: list = []

    def fibers_above(s: int):
        """IR of the number of fibers of storage level ``s`` (a hash's table counts their keys)."""
        out = Const(1, I64)
        for up in its[:s]:
            if up.fibers_by_size:
                size = Var(up.param("size"))
                out = size if isinstance(out, Const) else BinOp("*", out, size)
            else:
                out = up.stored_count(out)
        return out

    def chain(s: int, parent) -> list:
        if s == len(its):
            return [IRAssign(var, Load(array_name(read.tensor, None, "val"), parent))]
        it = its[s]
        c = Const(int(read.coords[fmt.mode_order[s]]), I64)
        if it.located_by_coordinate:
            return chain(s + 1, it.locate(parent, c))
        if not it.unique:
            # (a SparseCOO's mode above its last: the segment of positions holding c, two searches)
            first, stop = it.bounds(parent)
            lo, hi = Var(fresh(f"lo{read.tensor}{it.level}")), Var(fresh(f"hi{read.tensor}{it.level}"))
            crd = it.param(it.crd)
            return [Declare(lo, I64, lower_bound_call(crd, first, stop, c)),
                    Declare(hi, I64, lower_bound_call(crd, lo, stop, BinOp("+", c, Const(1, I64)))),
                    If(BinOp("<", lo, hi), chain(s + 1, (lo, hi)))]
        cap = None
        if it.probed:
            cap = Var(fresh(f"{read.tensor}{it.level}_cap"))
            caps.extend(hash_capacity_stmts(cap, it.stored_count(fibers_above(s))))
        q = Var(fresh(f"p{read.tensor}{it.level}"))
        return Found(it).find_stmts(q, parent, c, lambda base: Var(fresh(base)), cap) + \
            [If(BinOp(">=", q, Const(0, I64)), chain(s + 1, q))]

    body = chain(0, Const(0, I64))
    if caps:
        caps.insert(0, Comment(f"{read.tensor}'s hashed level: its table's capacity, the smallest power of two "
                               f"holding twice its keys"))
    return head + caps + body, var


__all__ = ["LocatedRead", "located_reads", "located_stmts", "located_value", "stand_in_facts", "stand_in_format"]
