"""The keys of a hash output that a write of the fill emptied, left out at its freeze.

A SparseHash output inserts a key only when the first write of it stores other than the fill
(:func:`compiler.looplets.levels.unfurl_sparse_hash`). A later write of the fill over that key (a
write that may overwrite, ``Assign.overwrites``, :mod:`compiler.looplets.overwrites`) leaves the key
in the table with the fill as its value: the values are right, but the output stores an explicit
fill, which ``Tensor.from_numpy``, Finch and scipy leave out. A hash cannot simply forget one key
(linear probing finds the keys after it through its slot, and its child position is the key's
index), so its freeze, before it sorts the keys, compacts them instead: the leaf level keeps the
keys whose value is not the fill, each hash level above keeps the keys whose fiber below still holds
one (the keys under it renumbered), and the compacted tables are built again at the capacity the
fewer keys take. The lowering emits this only for the outputs such a write goes to, so other
kernels' C is unchanged.

>>> from compiler.format import Format
>>> from compiler.levels import Element, SparseHash
>>> from compiler.looplets.fibers import TensorInfo
>>> from compiler.imperative.ir import Block
>>> y = TensorInfo("y", Format(SparseHash(Element(0.0))), "output")
>>> print(Block(tuple(drop_stored_fills_stmts(y, (0,), str))))
int64 kept = 0;
for (int64 q = 0; q < y0_nnz; q++) {
    if (y_val[q] != 0.0) {
        y0_key[kept] = y0_key[q];
        y_val[kept] = y_val[q];
        kept += 1;
    }
}
if (kept < y0_nnz) {
    y0_nnz = kept;
    y0_cap = 8;
    while (y0_cap < y0_nnz * 2) {
        y0_cap = y0_cap * 2;
    }
    grow y0_tbl to y0_cap;
    for (int64 s = 0; s < y0_cap; s++) {
        y0_tbl[s] = 0;
    }
    for (int64 r = 0; r < y0_nnz; r++) {
        int64 h = (y0_key[r] ^ (y0_key[r] >> 13) ^ (y0_key[r] >> 29)) & (y0_cap - 1);
        while (y0_tbl[h] != 0) {
            h = (h + 1) & (y0_cap - 1);
        }
        y0_tbl[h] = r + 1;
    }
}
"""

from __future__ import annotations

from ..imperative import ir
from ..imperative.ir import Assign, BinOp, CompoundAssign, Const, Declare, If, Load, Store, Var
from . import extents as X
from .hash_tables import hash_names, rebuild_table_stmts
from .levels import not_fill


def drop_stored_fills_stmts(info, levels: tuple, fresh) -> list:
    """The statements that leave out of output ``info``'s hash ``levels`` (its last level first,
    then the levels above it, each a SparseHash keyed by the positions of the one above) the keys a
    write of the fill emptied, and build their tables again (``fresh``: fresh names). See the module
    docstring's example."""
    leaf = levels[0]
    a = hash_names(info, leaf)
    nnz, vals = Var(a["nnz"]), info.array(None, "vals")
    kept, q = Var(fresh("kept")), Var(fresh("q"))
    one = Const(1, "int64")
    scan = [Declare(kept, "int64", Const(0, "int64")),
            ir.For(q, 0, nnz, [If(not_fill(info, Load(vals, q)), [
                Store(a["keys"], kept, Load(a["keys"], q)), Store(vals, kept, Load(vals, q)),
                CompoundAssign("+", kept, one)])])]
    dropped = [Assign(nnz, kept)]
    for k in levels[1:]:
        dropped += _drop_empty_fibers(info, k, fresh)
    for k in levels:
        dropped += rebuild_table_stmts(info, k, fresh)
    return scan + [If(BinOp("<", kept, nnz), dropped)]


def _drop_empty_fibers(info, k, fresh) -> list:
    """Hash level ``k`` keeps the keys whose fiber of level ``k + 1`` holds a key; level ``k + 1``'s
    keys (``parent * size + i``) are renumbered after their parent's new position."""
    a, below = hash_names(info, k), hash_names(info, k + 1)
    nnz, keys, size = Var(a["nnz"]), a["keys"], info.size(info.storage_mode(k + 1))
    held, r, q, kept, p = fresh("held"), Var(fresh("r")), Var(fresh("q")), Var(fresh("kept")), Var(fresh("p"))
    one, zero = Const(1, "int64"), Const(0, "int64")
    # (held[q]: whether fiber q holds a key, then its new position plus one)
    mark = ir.For(r, 0, Var(below["nnz"]), [Store(held, BinOp("/", Load(below["keys"], r), size), one)])
    compact = [Declare(kept, "int64", zero),
               ir.For(q, 0, nnz, [If(BinOp("!=", Load(held, q), zero), [
                   Store(keys, kept, Load(keys, q)), CompoundAssign("+", kept, one), Store(held, q, kept)])])]
    renumber = ir.For(r, 0, Var(below["nnz"]), [
        Declare(p, "int64", BinOp("/", Load(below["keys"], r), size)),
        Store(below["keys"], r, X.add(BinOp("*", X.sub(Load(held, p), 1), size),
                                      BinOp("%", Load(below["keys"], r), size)))])
    return [ir.Allocate(held, "int64", nnz, zero, [mark, *compact, renumber, Assign(nnz, kept)])]
