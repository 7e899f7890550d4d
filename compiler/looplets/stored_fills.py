"""The entries of a hash output that a write left holding the fill, left out at its freeze.

A SparseHash output inserts a key only when the first write of it stores other than the fill
(:func:`compiler.looplets.levels.unfurl_sparse_hash`). A later write can leave the fill in that
key's entry: a write of the fill over it (a write that may overwrite, ``Assign.overwrites``), or an
update that finds it stored (``y[i] += a[i]`` then ``y[i] += b[i]`` with ``b = -a``, an outer-product
SpGEMM's products cancelling; :func:`compiler.looplets.overwrites.updating_stored`). The key stays
in the table with the fill as its value: the values are right, but the output stores an explicit
fill, which ``Tensor.from_numpy``, Finch and scipy leave out. A hash cannot simply forget one key
(linear probing finds the keys after it through its slot, and its child position is the key's
index), so its freeze, before it sorts the keys, compacts them instead: the leaf level keeps the
keys whose value is not the fill, each level above (a SparseHash, or a SparseList once its starts
are carried forward) keeps the entries whose fiber below still holds one (the level below renumbered
after them: a hash's keys, a list's starts), and the compacted tables are built again at the
capacity the fewer keys take. The lowering emits this only for the outputs such a write goes to, so
other kernels' C is unchanged.

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


def drop_stored_fills_stmts(info, levels: tuple, fresh, fibers=None) -> list:
    """The statements that leave out of output ``info``'s ``levels`` (its last level first, a
    SparseHash, then the levels above it, each a SparseHash or a SparseList over the one below) the
    entries a write of the fill emptied, and build the hashes' tables again (``fresh``: fresh names;
    ``fibers``: the fibers of a SparseList among them under Dense levels only, whose starts are
    carried forward). See the module docstring's example."""
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
        dropped += _drop_empty_fibers(info, k, fresh, fibers)
    for k in levels:
        if info.levels[k].keys_in_table:
            dropped += rebuild_table_stmts(info, k, fresh)
    return scan + [If(BinOp("<", kept, nnz), dropped)]


def _drop_empty_fibers(info, k, fresh, fibers) -> list:
    """Level ``k`` keeps the entries whose fiber of level ``k + 1`` holds an entry, and level ``k + 1``
    refers to its fibers by their entries' new positions (``held[q]``: whether fiber ``q`` holds an
    entry, then its new position plus one)."""
    nnz, held, kept = Var(info.array(k, "nnz")), fresh("held"), Var(fresh("kept"))
    body = [*_mark_held(info, k + 1, held, fresh), Declare(kept, "int64", Const(0, "int64")),
            *_compact(info, k, held, kept, fresh, fibers), *_renumber(info, k + 1, held, nnz, fresh), Assign(nnz, kept)]
    return [ir.Allocate(held, "int64", nnz, Const(0, "int64"), body)]


def _mark_held(info, k, held, fresh) -> list:
    """``held[p] = 1`` for each fiber ``p`` of level ``k`` that holds an entry: a hash's keys are
    ``p * size + i``; another level's fiber ``p`` is ``pos[p]:pos[p + 1]``."""
    one = Const(1, "int64")
    r = Var(fresh("r"))
    if info.levels[k].keys_in_table:
        a = hash_names(info, k)
        size = info.size(info.storage_mode(k))
        return [ir.For(r, 0, Var(a["nnz"]), [Store(held, BinOp("/", Load(a["keys"], r), size), one)])]
    pos = info.array(k, info.levels[k].starts_array)
    return [ir.For(r, 0, Var(info.array(k - 1, "nnz")), [
        If(BinOp("<", Load(pos, r), Load(pos, X.add(r, 1))), [Store(held, r, one)])])]


def _compact(info, k, held, kept, fresh, fibers) -> list:
    """Level ``k``'s entries ``q`` with ``held[q]`` moved down in order, ``kept`` counting them and
    ``held[q]`` set to ``kept``: a hash's keys; a list's coordinates, fiber by fiber (its starts
    set to the kept counts; its fibers the entries above it, or ``fibers`` under Dense levels)."""
    one = Const(1, "int64")
    q = Var(fresh("q"))
    if info.levels[k].keys_in_table:
        keys = hash_names(info, k)["keys"]
        return [ir.For(q, 0, Var(info.array(k, "nnz")), [If(BinOp("!=", Load(held, q), Const(0, "int64")), [
            Store(keys, kept, Load(keys, q)), CompoundAssign("+", kept, one), Store(held, q, kept)])])]
    lvl = info.levels[k]
    pos, crd = info.array(k, lvl.starts_array), info.array(k, lvl.crd_array)
    p, start, stop = Var(fresh("p")), Var(fresh("start")), Var(fresh("stop"))
    if k > 0 and not info.levels[k - 1].slot_per_coordinate:
        fibers = Var(info.array(k - 1, "nnz"))
    return [Declare(start, "int64", Const(0, "int64")),
            ir.For(p, 0, fibers, [
                Declare(stop, "int64", Load(pos, X.add(p, 1))),
                ir.For(q, start, stop, [If(BinOp("!=", Load(held, q), Const(0, "int64")), [
                    Store(crd, kept, Load(crd, q)), CompoundAssign("+", kept, one), Store(held, q, kept)])]),
                Store(pos, X.add(p, 1), kept), Assign(start, stop)])]


def _renumber(info, k, held, parents, fresh) -> list:
    """Level ``k`` refers to the ``parents`` entries above it by their new positions (``held[q] - 1``
    for entry ``q``, 0 if it was left out, its fiber empty): a hash's keys ``p * size + i`` renumbered;
    another level's starts moved down with the entries kept."""
    r, p = Var(fresh("r")), Var(fresh("p"))
    if info.levels[k].keys_in_table:
        keys, nnz = hash_names(info, k)["keys"], Var(info.array(k, "nnz"))
        size = info.size(info.storage_mode(k))
        return [ir.For(r, 0, nnz, [
            Declare(p, "int64", BinOp("/", Load(keys, r), size)),
            Store(keys, r, X.add(BinOp("*", X.sub(Load(held, p), 1), size), BinOp("%", Load(keys, r), size)))])]
    pos = info.array(k, info.levels[k].starts_array)
    return [ir.For(r, 0, parents, [If(BinOp("!=", Load(held, r), Const(0, "int64")), [
        Store(pos, Load(held, r), Load(pos, X.add(r, 1)))])])]
