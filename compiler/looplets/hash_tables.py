"""A SparseHash output's table in a kernel: its arrays' names, the home slot of a key, linear
probing, and the table grown or built again around its keys.

The table is open addressing over a power-of-two capacity ``cap`` kept at most half full
(:func:`compiler.levels.sparse_hash.table_capacity`, which readers recompute), a slot holding a
key's child position plus one (0: empty), a key ``parent * size + i`` hashed as
:func:`compiler.levels.sparse_hash.hash_slot` hashes it. The update unfurl of a SparseHash
(:func:`compiler.looplets.levels.unfurl_sparse_hash`) probes and inserts, its follow read probes,
and its freeze's compaction (:mod:`compiler.looplets.stored_fills`) builds the table again.

>>> from compiler.imperative.ir import Var
>>> print(ir.Block(tuple(probe_stmts(Var("slot"), "y0_key", "y0_tbl", Var("cap"), Var("key"), str))))
int64 slot = (key ^ (key >> 13) ^ (key >> 29)) & (cap - 1);
while (y0_tbl[slot] != 0 && y0_key[y0_tbl[slot] - 1] != key) {
    slot = (slot + 1) & (cap - 1);
}
"""

from __future__ import annotations

from ..imperative import ir
from ..imperative.ir import Assign, BinOp, Const, Declare, Load, Var, While
from ..levels.sparse_hash import MIN_CAPACITY
from . import extents as X


def hash_names(info, k):
    """A hash level's kernel names by role, its arrays' names asked of the level."""
    lvl = info.levels[k]
    key, table = lvl.keys_in_table
    arrays = {"starts": lvl.starts_array, "coords": lvl.crd_array, "child": lvl.child_array, "keys": key, "table": table}
    return {role: info.array(k, n) for role, n in (*arrays.items(), ("nnz", "nnz"), ("cap", "cap"))}


def hash_expr(key, cap):
    """IR of :func:`compiler.levels.sparse_hash.hash_slot`."""
    return BinOp("&", BinOp("^", BinOp("^", key, BinOp(">>", key, Const(13, "int64"))),
                            BinOp(">>", key, Const(29, "int64"))), X.sub(cap, 1))


def probe_stmts(slot, key_b, tbl_b, cap, key, fresh) -> list:
    """Linear probing: ``slot`` (declared) ends at ``key``'s slot or the first empty one."""
    return [Declare(slot, "int64", hash_expr(key, cap)),
            While(ir.and_(BinOp("!=", Load(tbl_b, slot), Const(0, "int64")),
                          BinOp("!=", Load(key_b, X.sub(Load(tbl_b, slot), 1)), key)),
                  [Assign(slot, BinOp("&", X.add(slot, 1), X.sub(cap, 1)))])]


def rehash_stmts(info, k, fresh) -> list:
    """Double the table and insert every key again (keeps it at most half full)."""
    cap = Var(hash_names(info, k)["cap"])
    return [Assign(cap, BinOp("*", cap, Const(2, "int64"))), *reinsert_stmts(info, k, fresh)]


def reinsert_stmts(info, k, fresh) -> list:
    """Empty hash level ``k``'s table, grown to its capacity ``cap``, and insert its ``nnz`` keys again."""
    a = hash_names(info, k)
    nnz, cap = Var(a["nnz"]), Var(a["cap"])
    s, r, h = Var(fresh("s")), Var(fresh("r")), Var(fresh("h"))
    return [ir.Grow(a["table"], cap),
            ir.For(s, 0, cap, [ir.Store(a["table"], s, Const(0, "int64"))]),
            ir.For(r, 0, nnz, [
                Declare(h, "int64", hash_expr(Load(a["keys"], r), cap)),
                While(BinOp("!=", Load(a["table"], h), Const(0, "int64")),
                      [Assign(h, BinOp("&", X.add(h, 1), X.sub(cap, 1)))]),
                ir.Store(a["table"], h, X.add(r, 1))])]


def rebuild_table_stmts(info, k, fresh) -> list:
    """Hash level ``k``'s table at the capacity its keys take now (the smallest that keeps it at
    most half full, which readers recompute), its keys inserted again."""
    a = hash_names(info, k)
    nnz, cap = Var(a["nnz"]), Var(a["cap"])
    return [Assign(cap, Const(MIN_CAPACITY, "int64")),
            While(BinOp("<", cap, BinOp("*", nnz, Const(2, "int64"))), [Assign(cap, BinOp("*", cap, Const(2, "int64")))]),
            *reinsert_stmts(info, k, fresh)]
