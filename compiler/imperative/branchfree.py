"""Branch-free appends: the coordinate of an entry stored at the output's end always, and the count moved by the
test that keeps the entry, where the test chose whether to store and count.

A sparse output keeps an entry only where its value is not the fill: ``if (out_val[n] != 0.0) { out1_idx[n] = j;
n += 1; }``. Where kept and dropped entries mix at random, as in the cross product of a matrix of density 0.5 (each
of its three components is zero or not as A's entries fall), the processor mispredicts that branch about every
other entry. Stored always and counted by the test's 0 or 1, ``out1_idx[n] = j; n += (int64)(out_val[n] != 0.0);``,
the append has no branch.

Exact where the slot at ``n`` has room (a growth of the buffer to ``n + 1`` came before, and nothing since moved
``n`` or the buffer), the test and the coordinate only compute a value (:func:`~.traverse.pure`), the coordinate
loads nothing (it is stored where the entry is dropped too), and the test reads nothing of the buffer: a slot past
the count holds no entry, and the next append overwrites it.

>>> from compiler.imperative.ir import BinOp, CompoundAssign, Grow, If, Load, Store, Var
>>> n = Var("n")
>>> body = [Grow("idx", BinOp("+", n, 1)), Store("val", n, Var("v")),
...         If(BinOp("!=", Load("val", n), 0.0), [Store("idx", n, Var("j")), CompoundAssign("+", n, 1)])]
>>> for s in branch_free_appends(body)[2:]:
...     print(str(s).strip())
idx[n] = j;
n += (int64)(val[n] != 0.0);
"""

from __future__ import annotations

from .ir import BinOp, Block, Cast, CompoundAssign, Const, Grow, If, Load, Store, Tagged, Var
from .traverse import assigned_in, map_bodies, pure, walk

__all__ = ["branch_free_appends"]


def branch_free_appends(stmts) -> list:
    """``stmts`` with each append whose test chose whether to store and count made branch-free (module docstring)."""
    return _appends(list(stmts), {})


def _appends(stmts: list, grown: dict) -> list:
    """``stmts`` rewritten; ``grown``: ``{buffer: count}`` of the growths to ``count + 1`` that still hold (changed in
    place as the statements go)."""
    out = []
    for s in stmts:
        if isinstance(s, (Tagged, Block)):     # (their statements run in order, here)
            out.append(map_bodies(s, lambda body: _appends(body, grown)))
            continue
        if isinstance(s, Grow) and isinstance(s.needed, BinOp) and s.needed.op == "+" and \
                isinstance(s.needed.left, Var) and s.needed.right == Const(1, "int64"):
            grown[s.buffer] = s.needed.left.name
            out.append(s)
            continue
        made = _branch_free(s, grown)
        if made is not None:
            out += made
        else:
            # (a loop's or branch's body from nothing grown: its own growths, in its own order)
            out.append(map_bodies(s, lambda body: _appends(body, {})))
        changed = assigned_in(s)
        for buffer in [b for b, n in grown.items() if b in changed or n in changed]:
            del grown[buffer]
    return out


def _branch_free(s, grown: dict) -> list | None:
    """``s`` as a branch-free append, or None: ``if (test) { buf[n] = x; n += 1; }`` where ``buf`` was grown to
    ``n + 1``."""
    if not (isinstance(s, If) and s.otherwise is None and len(s.then.body) == 2):
        return None
    store, count = s.then.body
    if not (isinstance(store, Store) and store.op is None and isinstance(store.index, Var)
            and isinstance(count, CompoundAssign) and count.op == "+" and count.target == store.index
            and count.value == Const(1, "int64") and grown.get(store.buffer) == store.index.name):
        return None
    test_reads = {n.buffer for n in walk(s.cond) if isinstance(n, Load)}
    if not (pure(s.cond) and pure(store.value) and store.buffer not in test_reads
            and not any(isinstance(n, Load) for n in walk(store.value))):
        return None
    return [store, CompoundAssign("+", count.target, Cast("int64", s.cond))]
