"""Register promotion: a loop that reduces into one fixed output slot keeps it in a local.

``while (q < q_end) { y_val[i] += A_val[q] * x_val[idx[q]]; q += 1; }`` stores
``y_val[i]`` on every iteration (the C compiler may not prove that nothing else
reads it). When the slot's index does not change inside the loop and the loop
touches the buffer only at that slot, the slot is loaded once into a local before
the loop and stored once after it:

>>> from compiler.imperative.ir import Var, While, BinOp, Store, Load, CompoundAssign, Const
>>> q, n, i = Var("q"), Var("n"), Var("i")
>>> loop = While(BinOp("<", q, n), [Store("y_val", i, Load("a", q), "+"),
...                                 CompoundAssign("+", q, Const(1, "int64"))])
>>> for s in promote([loop], {"y_val": "float64"}, lambda b: "y_acc"):
...     print(str(s).strip())
float64 y_acc = y_val[i];
while (q < n) {
    y_acc += a[q];
    q += 1;
}
y_val[i] = y_acc;
"""

from __future__ import annotations

from dataclasses import replace

from ..imperative.guard import CheckCoordinate
from ..opimpls import BINARY_MATH, UNARY_MATH
from ..imperative.ir import (SEARCH_FUNCTIONS, Allocate, Assign, Block, BufferArg, Call, CompoundAssign, Declare, For, Grow, If, Load, Store, Var,
                             While)
from ..imperative.traverse import assigned_in, buffers_stored, slots_stored, var_names, walk


try:  # provenance tags (the explorer colours C lines by looplet)
    from ..imperative.ir import Tagged as _Tagged
except ImportError:  # pragma: no cover - an IR without tags
    _Tagged = None


def _vars(e) -> set:
    return {n.name for n in walk(e) if isinstance(n, Var)}


def _candidate(loop, body, dtypes):
    """The (buffer, index) of the one invariant slot the loop updates, or None."""
    # (first by summaries remembered per subtree: in a nest storing into an output, each loop around the
    # store stores there too, at an index its own variable changes; walking each one's body was
    # quadratic in the nest's depth)
    changed = set(assigned_in(tuple(body)))
    if isinstance(loop, For):
        changed.add(loop.var.name)
    if all(b not in dtypes or var_names(index) & changed for b, index in slots_stored(tuple(body))):
        return None
    nodes = list(walk(tuple(body)))   # (one walk: one per store made a kernel of many stores quadratic)
    if any(isinstance(n, CheckCoordinate) for n in nodes):
        return None  # (a slot loaded before the loop would be read before the check of its coordinate)
    calls = [n for n in nodes if isinstance(n, Call)]
    pure = ("sqrt", "exp", "log", "pow", "fmin", "fmax", "nearbyint", "isnan", "isinf", "isfinite") + UNARY_MATH + BINARY_MATH + SEARCH_FUNCTIONS
    if calls and any(c.function not in pure for c in calls):
        return None  # helpers could read the buffer
    slot, mixed = {}, set()   # each buffer's first index read or written; those read or written at another
    for n in nodes:
        if isinstance(n, (Store, Load)):
            if n.buffer not in slot:
                slot[n.buffer] = n.index
            elif n.index != slot[n.buffer]:
                mixed.add(n.buffer)
        elif isinstance(n, (Grow, Allocate, BufferArg)):   # (a search reads its buffer anywhere)
            mixed.add(n.buffer)
    for st in (n for n in nodes if isinstance(n, Store)):
        b = st.buffer
        if b not in dtypes or _vars(st.index) & changed or any(isinstance(n, Load) for n in walk(st.index)):
            continue
        if b not in mixed:
            return b, st.index
    return None


def _replace_slot(stmts, buf, index, acc):
    def expr(e):
        return _map_expr(e, lambda n: acc if isinstance(n, Load) and n.buffer == buf and n.index == index else None)

    def stmt(s):
        if isinstance(s, Store) and s.buffer == buf:
            v = expr(s.value)
            return CompoundAssign(s.op, acc, v) if s.op else Assign(acc, v)
        return _map_stmt(s, stmt, expr)
    return [stmt(s) for s in stmts]


def _map_expr(e, fn):
    out = fn(e)
    if out is not None:
        return out
    if hasattr(e, "__dataclass_fields__"):
        from dataclasses import fields
        from ..imperative.ir import Expr
        changes = {}
        for f in fields(e):
            v = getattr(e, f.name)
            if isinstance(v, Expr):
                changes[f.name] = _map_expr(v, fn)
            elif isinstance(v, tuple) and v and all(isinstance(x, Expr) for x in v):
                changes[f.name] = tuple(_map_expr(x, fn) for x in v)
        return replace(e, **changes) if changes else e
    return e


def _map_stmt(s, stmt, expr):
    if isinstance(s, Block):
        return Block(tuple(stmt(t) for t in s.body))
    if isinstance(s, For):
        return replace(s, start=expr(s.start), stop=expr(s.stop), body=Block(tuple(stmt(t) for t in s.body.body)))
    if isinstance(s, While):
        return replace(s, cond=expr(s.cond), body=Block(tuple(stmt(t) for t in s.body.body)))
    if isinstance(s, If):
        return replace(s, cond=expr(s.cond), then=Block(tuple(stmt(t) for t in s.then.body)),
                       otherwise=None if s.otherwise is None else Block(tuple(stmt(t) for t in s.otherwise.body)))
    if isinstance(s, Allocate):
        return replace(s, length=expr(s.length), body=Block(tuple(stmt(t) for t in s.body.body)))
    if _Tagged is not None and isinstance(s, _Tagged):
        return replace(s, body=Block(tuple(stmt(t) for t in s.body.body)))
    if isinstance(s, Declare):
        return replace(s, init=None if s.init is None else expr(s.init))
    if isinstance(s, (Assign, CompoundAssign)):
        return replace(s, value=expr(s.value))
    if isinstance(s, Store):
        return replace(s, index=expr(s.index), value=expr(s.value))
    if isinstance(s, Grow):
        return replace(s, needed=expr(s.needed))
    return s


def promote(stmts, dtypes: dict, fresh) -> list:
    """``stmts`` with every innermost-first loop's invariant output slot kept in a local.

    ``dtypes`` maps the buffers that may be promoted (kernel outputs and scratch
    arrays) to their dtypes; ``fresh(base)`` names the locals.
    """
    out = []
    for s in stmts:
        if isinstance(s, (For, While)):
            inner = promote(list(s.body.body), dtypes, fresh)
            body = Block(tuple(inner))
            # (most loops store to no buffer that may be promoted: told by a summary the enclosing loops find
            # again for this body, where a walk of each loop's body at every level of a nest was quadratic)
            cand = _candidate(s, inner, dtypes) if not buffers_stored(body).isdisjoint(dtypes) else None
            if cand is None:
                out.append(replace(s, body=body))
                continue
            buf, index = cand
            acc = Var(fresh(buf.replace("_val", "") + "_acc"))
            body = _replace_slot(inner, buf, index, acc)
            out.append(Declare(acc, dtypes[buf], Load(buf, index)))
            out.append(replace(s, body=Block(tuple(body))))
            out.append(Store(buf, index, acc))
        elif isinstance(s, If):
            out.append(replace(s, then=Block(tuple(promote(list(s.then.body), dtypes, fresh))),
                               otherwise=None if s.otherwise is None else
                               Block(tuple(promote(list(s.otherwise.body), dtypes, fresh)))))
        elif isinstance(s, Allocate):
            d = dict(dtypes)
            d[s.buffer] = s.dtype
            out.append(replace(s, body=Block(tuple(promote(list(s.body.body), d, fresh)))))
        elif isinstance(s, Block):
            out.extend(promote(list(s.body), dtypes, fresh))
        elif _Tagged is not None and isinstance(s, _Tagged):
            out.append(replace(s, body=Block(tuple(promote(list(s.body.body), dtypes, fresh)))))
        else:
            out.append(s)
    return out
