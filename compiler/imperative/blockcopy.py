"""Block copies: a loop appending a fiber's entries to a sparse output one by one becomes a
count and a copy of the whole run, when none of the run's values is dropped.

A shape operator's kernel copies stored entries unchanged: a CSR vstack appends each row of
``B`` to ``D`` with one loop per row::

    while (qB < qB_end) {
        int64 i = B1_idx[qB];
        grow D1_idx to D1_nnz + 1; grow D_val to D1_nnz + 1;
        D_val[D1_nnz] = B_val[qB];
        if (D_val[D1_nnz] != 0.0) { D1_idx[D1_nnz] = i; D1_nnz += 1; }
        qB += 1;
    }

Each entry's append depends on the one before (``D1_nnz`` moves only if the value is kept), so
the C compiler runs it one entry at a time, two growth checks and a test each: on a 20k x 20k
vstack of 1M entries, on a loaded machine, it took twice as long as scipy's (which concatenates
the arrays; on a quiet one both kinds of copy are bound by memory). The
filter itself only drops a value equal to the fill, which an input may store explicitly. So
:func:`block_copy` grows the buffers once and copies the run in one map loop, counting its dropped
values in SIMD lanes as it goes (the loop marked as :mod:`compiler.imperative.vectorize` marks
its kinds). When there are none the run is done; a run holding a dropped value is appended again
by the loop as it was, from the same count, over what the copy wrote (the buffers already have
room)::

    int64 n_copy = qB < qB_end ? qB_end - qB : 0;
    int64 n_dropped = 0;
    if (n_copy >= 8) {
        grow D1_idx to D1_nnz + n_copy; grow D_val to D1_nnz + n_copy;
        for (int64 t = 0; t < n_copy; t++) {
            D_val[D1_nnz + t] = B_val[qB + t]; D1_idx[D1_nnz + t] = B1_idx[qB + t];
            n_dropped += (int64)(B_val[qB + t] == 0.0);
        }
    }
    if (n_copy >= 8 && n_dropped == 0) { D1_nnz += n_copy; qB = qB_end; } else { the loop above }

One pass, where counting the run first and copying it after read its values twice: a COO vstack
of 1M entries went from 1.3x the time of the hand-written memcpy bound to about 1x.

A shorter run (:data:`SHORT_RUN`) is appended entry by entry: a row of one or two entries costs
more counted and copied. So is every run of a loop the caller names (``leave``): the looplets
strategy names the walks of what a merge leaves of a fiber (in ``C = A + B`` of CSR, A's entries
past B's last), whose count and tests each row pays for while the run is rarely long (8 entries or
more in 0.35% of random rows of 10): CSR + CSR ran 1.1x slower with them.

A loop qualifies when it steps one position ``q`` up to a bound no statement changes, its body
reading inputs only at ``q`` (and the value it just stored), writing outputs only at the output's
count ``nnz``, which it increments by one (under the filter, if any) and nothing else assigns, and
perhaps adding a constant to a slot that does not move (a row's count, ``D1_pos[l + 1] += 1``,
which the block adds ``n_copy`` times).
A NaN is never dropped (``NaN != 0.0``), nor copied otherwise than by the loop.

>>> from compiler.imperative.ir import While, Declare, Store, If, CompoundAssign, Grow, Load, Var
>>> q, n = Var("q"), Var("n")
>>> loop = While(q < Var("q_end"), [Declare(Var("i"), "int64", Load("B1_idx", q)),
...     Grow("D1_idx", n + 1), Store("D_val", n, Load("B_val", q)),
...     If(Load("D_val", n).ne(0.0), [Store("D1_idx", n, Var("i")), CompoundAssign("+", n, 1)]),
...     CompoundAssign("+", q, 1)])
>>> out = block_copy([loop], {"D_val": "float64", "B_val": "float64"})
>>> print(out[1])
int64 n_copy = q < q_end ? q_end - q : 0;
>>> for st in out[3].then.body[1:]: print(st)
#pragma omp simd reduction(+:n_dropped)
for (int64 t = 0; t < n_copy; t++) {
    D_val[n + t] = B_val[q + t];
    D1_idx[n + t] = B1_idx[q + t];
    n_dropped += (int64)(B_val[q + t] == 0.0);
}
>>> print(out[4].cond); print(out[4].then)
n_copy >= 8 && n_dropped == 0
n += n_copy;
q = q_end;
>>> out[4].otherwise.body == (loop,)
True
"""

from __future__ import annotations

from dataclasses import fields, replace

from .ir import (Assign, BinOp, Block, Cast, Comment, CompoundAssign, Const, Declare, Expr, For, Grow, If, Load,
                 Pragma, Select, Store, Tagged, UnOp, Var, While)
from .traverse import fresh_namer, map_bodies, untagged, walk


#: a run shorter than this is appended entry by entry: counting and copying it as a block cost more
#: than they save (a CSR vstack of 1M rows of about one entry each took 13 ms so, 10 ms entry by entry)
SHORT_RUN = 8


def _is_one(e) -> bool:
    """Whether ``e`` is the constant 1 of any integer dtype (an int32 ``pos`` counts by an int32 1)."""
    return isinstance(e, Const) and e.value == 1 and not isinstance(e.value, bool)


def _subst(e: Expr, f) -> Expr:
    """``e`` with each subexpression that ``f`` maps (to a non-None value) replaced, bottom-up."""
    got = f(e)
    if got is not None:
        return got
    changes = {}
    for fld in fields(e):
        v = getattr(e, fld.name)
        if isinstance(v, Expr):
            changes[fld.name] = _subst(v, f)
        elif isinstance(v, tuple) and all(isinstance(x, Expr) for x in v):
            changes[fld.name] = tuple(_subst(x, f) for x in v)
    return replace(e, **changes) if changes else e


def _one(name: str) -> Expr:
    return BinOp("+", Var(name), Const(1, "int64"))


class _Copy:
    """What an append loop does, read from its body (see :func:`match`)."""

    def __init__(self, q, end, nnz, locals_, stores, grows, keep, counters):
        self.q, self.end, self.nnz = q, end, nnz
        self.locals, self.stores, self.grows, self.keep = locals_, stores, grows, keep
        self.counters = counters


def match(loop, dtypes: dict) -> _Copy | None:
    """The append loop's parts (its position, bound and output count, the values stored, the
    buffers grown, the filter), or None when ``loop`` is no such loop."""
    if not isinstance(loop, While) or not (isinstance(loop.cond, BinOp) and loop.cond.op == "<"
                                           and isinstance(loop.cond.left, Var)):
        return None
    q, end = loop.cond.left.name, loop.cond.right
    if any(isinstance(n, Load) for n in walk(end)):
        return None
    if isinstance(end, Const) and not isinstance(end.value, bool) and end.value < SHORT_RUN:
        return None   # (a run of at most a few entries, from a position or coordinate of 0 up: never copied as a block)
    body = [s for s in untagged(loop.body.body) if not isinstance(s, Comment)]
    if not body or body[-1] != CompoundAssign("+", Var(q), Const(1, "int64")):
        return None
    body = body[:-1]
    locals_, stores, grows, keep, nnz = {}, {}, [], None, None
    straight = body
    if body and isinstance(body[-1], If) and body[-1].otherwise is None:
        keep, straight = body[-1].cond, body[:-1]
        inner = untagged(body[-1].then.body)
        if not inner or not isinstance(inner[-1], CompoundAssign):
            return None
        bump, kept_stores = inner[-1], inner[:-1]
    else:
        if not straight or not isinstance(straight[-1], CompoundAssign):
            return None
        bump, kept_stores, straight = straight[-1], [], straight[:-1]
    if bump.op != "+" or bump.value != Const(1, "int64") or bump.target.name == q:
        return None
    nnz = bump.target.name
    counters = []
    for s in [*straight, *((None,) if keep is not None else ()), *kept_stores]:
        if s is None:
            straight = ()   # (what follows runs for a kept entry only)
        elif isinstance(s, Declare) and s.init is not None and straight:
            locals_[s.var.name] = s.init
        elif isinstance(s, Grow) and s.needed == _one(nnz):
            grows.append(s.buffer)
        elif isinstance(s, Store) and s.op == "+" and s.buffer not in stores:
            counters.append(s)   # (a count of the entries a row holds, TACO's pos[l + 1] += 1)
        elif not _store_at(s, nnz, stores):
            return None
    if not stores or any(b not in stores for b in grows):
        return None
    moving = {q, nnz, *locals_}
    if any(isinstance(n, Load) or isinstance(n, Var) and n.name in moving for c in counters
           for n in walk((c.index, c.value))) or any(isinstance(n, Load) and n.buffer in {c.buffer for c in counters}
                                                     for n in walk(loop.body)):
        return None
    assigned = {q, nnz, *locals_}
    if any(isinstance(n, Var) and n.name in assigned - {q} for n in walk(end)):
        return None

    def at_q(index) -> bool:
        """``q``, or ``top - q`` (a run walked down from ``top``, which nothing in the loop assigns: a reversed
        copy, as of a column sliced ``[::-1]``)."""
        return index == Var(q) or isinstance(index, BinOp) and index.op == "-" and index.right == Var(q) \
            and not any(isinstance(n, Load) or isinstance(n, Var) and n.name in moving for n in walk(index.left))

    def pure(e) -> bool:
        """Reads only inputs at q, this entry's stored values and names nothing else assigns."""
        e = _subst(e, lambda x: Const(0, "int64") if isinstance(x, Load) and x.index == Var(nnz)
                   and x.buffer in stores else None)
        return not any(isinstance(n, Load) and (not at_q(n.index) or n.buffer in stores)
                       or isinstance(n, Var) and n.name == nnz for n in walk(e))

    exprs = [*locals_.values(), *stores.values(), *([keep] if keep is not None else [])]
    if not all(pure(e) for e in exprs):
        return None
    # (the filter reads back a value stored in this entry, converted to the output's dtype)
    if keep is not None and any(isinstance(n, Load) and n.buffer in stores and n.buffer not in dtypes
                                for n in walk(keep)):
        return None
    return _Copy(q, end, nnz, locals_, stores, grows, keep, tuple(counters))


def _store_at(s, nnz: str, stores: dict) -> bool:
    """Whether ``s`` stores a value at the output's count ``nnz`` (recorded in ``stores``), once a buffer."""
    if isinstance(s, Store) and s.op is None and s.index == Var(nnz) and s.buffer not in stores:
        stores[s.buffer] = s.value
        return True
    return False


def _dtype_of(e, dtypes: dict) -> str | None:
    if isinstance(e, Load):
        return dtypes.get(e.buffer)
    if isinstance(e, Cast):
        return e.dtype
    return None


def block_copy(stmts, dtypes: dict | None = None, fresh=None, leave=()) -> list:
    """``stmts`` with each append loop that copies a run of entries (see the module docstring)
    preceded by its block copy, the loop kept for a run holding a value the filter drops.
    ``dtypes`` gives the buffers' dtypes (a filtered value is compared as the output stores it);
    ``fresh(base)`` names the new locals (by default, names neither ``stmts`` nor ``dtypes`` has);
    a loop whose bound is a local named in ``leave`` is left as it is (a run the caller knows to be
    short, as the tail of a merge)."""
    dtypes = dict(dtypes or {})
    leave = frozenset(leave)
    return _rewrite(list(stmts), dtypes, fresh or fresh_namer(stmts, dtypes), leave)


def _rewrite(stmts: list, dtypes: dict, fresh, leave) -> list:
    out = []
    for s in stmts:
        c = None if isinstance(s, While) and isinstance(s.cond, BinOp) and isinstance(s.cond.right, Var) \
            and s.cond.right.name in leave else match(s, dtypes)
        if c is None:
            out.append(map_bodies(s, lambda body: _rewrite(list(body), dtypes, fresh, leave)))
        else:
            out += _emit(c, s, dtypes, fresh)
    return out


def copy_run(c: _Copy, loop, dtypes: dict, fresh, n: Var, start: Expr | None = None) -> tuple[list, Var | None]:
    """The statements copying the run of ``n`` entries that the append ``loop`` (read by :func:`match`
    into ``c``) would append from position ``start`` (its own position by default): the buffers
    grown, then one SIMD loop, which also counts the values the filter drops into the local it gives
    (declared first; None where the loop has no filter). The output's count does not move."""
    t = Var(fresh("t"))
    q, nnz = Var(c.q), Var(c.nnz)
    base = q if start is None else start

    def at_t(e, read_back=False):
        def f(x):
            if x == q:
                return BinOp("+", base, t)
            if isinstance(x, Var) and x.name in c.locals:
                return at_t(c.locals[x.name], read_back)
            if isinstance(x, Load) and x.index == nnz and x.buffer in c.stores:
                if read_back and not isinstance(c.stores[x.buffer], Load):
                    # (the filter tests a computed value as the copy just stored it: not computed again)
                    return Load(x.buffer, BinOp("+", nnz, t))
                v = at_t(c.stores[x.buffer])     # (what the loop stored there, as the buffer holds it)
                return v if _dtype_of(v, dtypes) == dtypes[x.buffer] else Cast(dtypes[x.buffer], v)
            return None
        return _subst(e, f)

    # (each copy keeps the expression tags of the store it copies: the explorer links the expression
    # tree's nodes to its line as to the loop's)
    copies = [_as_tagged(_expression_tags(loop, b), Store(b, BinOp("+", nnz, t), at_t(v))) for b, v in c.stores.items()]
    grows = [Grow(b, BinOp("+", nnz, n)) for b in c.grows]
    if c.keep is None:
        return [*grows, Pragma("omp simd"), For(t, Const(0, "int64"), n, Block(tuple(copies)))], None
    dropped = Var(fresh("n_dropped"))
    keep = at_t(c.keep, read_back=True)
    drop = replace(keep, op="==") if isinstance(keep, BinOp) and keep.op == "!=" else \
        keep.operand if isinstance(keep, UnOp) and keep.op == "!" else UnOp("!", keep)
    tested = [tag for b in c.stores if any(isinstance(x, Load) and x.buffer == b for x in walk(c.keep))
              for tag in _expression_tags(loop, b)]
    count = _as_tagged(list(dict.fromkeys(tested)), CompoundAssign("+", dropped, Cast("int64", drop)))
    copy = For(t, Const(0, "int64"), n, Block((*copies, count)))
    return [Declare(dropped, "int64", Const(0, "int64")), *grows,
            Pragma(f"omp simd reduction(+:{dropped.name})"), copy], dropped


def _emit(c: _Copy, loop, dtypes: dict, fresh) -> list:
    n = Var(fresh("n_copy"))
    q, nnz = Var(c.q), Var(c.nnz)
    block, dropped = copy_run(c, loop, dtypes, fresh, n)
    done = [*(replace(k, value=n if _is_one(k.value) else BinOp("*", k.value, n)) for k in c.counters),
            CompoundAssign("+", nnz, n), Assign(q, c.end)]
    head = [Declare(n, "int64", Select(BinOp("<", q, c.end), BinOp("-", c.end, q), Const(0, "int64")))]
    is_long = BinOp(">=", n, Const(SHORT_RUN, "int64"))
    if dropped is None:
        return _tagged(loop, [Comment(f"a run of {SHORT_RUN} entries or more is copied as a block"), *head,
                              If(is_long, Block(tuple(block + done)), Block((loop,)))])
    # (one pass: the copy counts the dropped values as it goes, and a run holding one is appended
    # again by the loop, over what the copy wrote from the same count: only that rare run pays twice;
    # the loop in the else, so that a copied run's last position is a dead store when nothing reads it)
    return _tagged(loop, [Comment(f"a run of {SHORT_RUN} entries or more is copied as a block, counting the values "
                                  f"the filter drops; a shorter run, or one holding such a value, is appended "
                                  f"entry by entry"),
                          *head, block[0], If(is_long, Block(tuple(block[1:]))),
                          If(BinOp("&&", is_long, BinOp("==", dropped, Const(0, "int64"))), Block(tuple(done)),
                             Block((loop,)))])


def _expression_tags(loop, buffer: str) -> list:
    """The tags computing the program's expression (origin kind ``expression``) around the store
    into ``buffer`` in ``loop``, outermost first."""
    def find(stmts, around: list):
        for s in stmts:
            if isinstance(s, Store) and s.buffer == buffer:
                return around
            inner = around + [s] if isinstance(s, Tagged) and getattr(s.origin, "kind", None) == "expression" else around
            for name in ("body", "then", "otherwise"):
                v = getattr(s, name, None)
                found = find(v.body, inner) if isinstance(v, Block) else None
                if found is not None:
                    return found
        return None
    return find(loop.body.body, []) or []


def _as_tagged(tags: list, stmt):
    """``stmt`` under each of ``tags`` (outermost first)."""
    for tag in reversed(tags):
        stmt = replace(tag, body=Block((stmt,)))
    return stmt


def _tagged(loop, stmts: list) -> list:
    """``stmts`` under the provenance tag of the append in ``loop`` (the looplet or lattice point
    that wrote it, which the explorer links the C lines to), if it has one."""
    tag = next((n for n in walk(loop.body) if isinstance(n, Tagged)), None)
    return stmts if tag is None else [replace(tag, body=Block(tuple(stmts)))]


__all__ = ["block_copy", "copy_run", "match"]
