"""Row spans: a loop over consecutive rows of a compressed level, each appending its row's
entries to a sparse output, copies all the rows' entries as one run, then sets the rows' counts.

A CSR vstack, ``D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)`` into CSR, copies each part
row by row (the looplets' form; the lattice's counts ``D1_pos[l + 1] += 1`` in the append instead
of storing the row's end)::

    for (int64 j = 0; j < B0_size; j++) {
        int64 qB = B1_pos[j];
        int64 qB_stop = B1_pos[j + 1];
        while (qB < qB_stop) { ...append B1_idx[qB], B_val[qB] at D1_nnz, unless the value is 0.0... }
        D1_pos[j + 1] = D1_nnz;
    }

The rows are consecutive, so their positions run through ``[B1_pos[0], B1_pos[B0_size])`` in
order, and the entries land in the output one after the other: where the append reads nothing of
the row but the entry's position (no row coordinate stored, as a COO output would), all of B's
entries are one run, copied in one SIMD loop by
:func:`compiler.imperative.blockcopy.copy_run`, which counts the values the filter drops as it
goes (scipy's vstack copies each operand's arrays whole; row by row, each row's run paid its
set-up, growth checks and tail: 0.54-0.59 against 0.47-0.53 ms for 1M entries, the C alone).
The rows' counts follow from ``B1_pos`` when the copy dropped no value (a stored fill), so the loop over the
rows stays, counting only; a run that dropped one is appended again row by row, as before (and
:func:`~compiler.imperative.blockcopy.block_copy` makes each row's append a block copy there)::

    int64 qB_first = B1_pos[0];
    int64 n_span = (0 < B0_size ? B1_pos[B0_size] : qB_first) - qB_first;
    int64 n_dropped = 0;
    grow D1_idx to D1_nnz + n_span; grow D_val to D1_nnz + n_span;
    for (int64 t = 0; t < n_span; t++) { ...copy entry qB_first + t to D1_nnz + t, count it if dropped... }
    if (n_dropped == 0) {
        for (int64 j = 0; j < B0_size; j++) { ...D1_nnz += qB_stop - qB;... D1_pos[j + 1] = D1_nnz; }
    } else {
        the rows' loop as it was
    }

A loop qualifies when it steps a row ``r`` by one from 0 and its body is only: the row's first
and last positions read from one input's ``pos`` at ``r`` and ``r + 1`` (and locals not read by
the append), the append loop (as :func:`~compiler.imperative.blockcopy.match` reads it), perhaps
under ``if (q < q_stop)``, whose stored values read nothing of the row, and stores of the output's
count into slots that do not move with it (the row's end). Anything else keeps its loop.

>>> from compiler.imperative.ir import CompoundAssign, Declare, For, Grow, If, Load, Store, Var, While
>>> q, n, j = Var("qB"), Var("n"), Var("j")
>>> append = While(q < Var("qB_stop"), [Grow("D_val", n + 1), Grow("D1_idx", n + 1),
...     Store("D_val", n, Load("B_val", q)),
...     If(Load("D_val", n).ne(0.0), [Store("D1_idx", n, Load("B1_idx", q)), CompoundAssign("+", n, 1)]),
...     CompoundAssign("+", q, 1)])
>>> rows = For(j, 0, Var("B0_size"), [Declare(q, "int64", Load("B1_pos", j)),
...     Declare(Var("qB_stop"), "int64", Load("B1_pos", j + 1)), append, Store("D1_pos", j + 1, n)])
>>> out = row_spans([rows], {"D_val": "float64", "B_val": "float64"})
>>> for st in out[1:3]: print(st)
int64 qB_first = B1_pos[0];
int64 n_span = (0 < B0_size ? B1_pos[B0_size] : qB_first) - qB_first;
>>> print(out[-2])
for (int64 t = 0; t < n_span; t++) {
    D_val[n + t] = B_val[qB_first + t];
    D1_idx[n + t] = B1_idx[qB_first + t];
    n_dropped += (int64)(B_val[qB_first + t] == 0.0);
}
>>> print(out[-1].cond); print(out[-1].then)
n_dropped == 0
for (int64 j = 0; j < B0_size; j++) {
    int64 qB = B1_pos[j];
    int64 qB_stop = B1_pos[j + 1];
    n += qB_stop - qB;
    D1_pos[j + 1] = n;
}
>>> out[-1].otherwise.body == (rows,)
True
"""

from __future__ import annotations

from dataclasses import replace

from .blockcopy import copy_run, match
from .ir import (Assign, BinOp, Block, Comment, CompoundAssign, Const, Declare, Expr, For, If, Load, Select, Store,
                 Tagged, Var, While)
from .traverse import fresh_namer, map_bodies, untagged, walk

__all__ = ["row_spans"]


def row_spans(stmts, dtypes: dict | None = None, fresh=None, leave=()) -> list:
    """``stmts`` with each loop over consecutive rows whose appends copy the rows' entries
    unchanged (see the module docstring) preceded by one append of all of them, the loop counting
    the rows only (or, when that append dropped a value, run as it was). ``dtypes``, ``fresh`` and
    ``leave`` as :func:`~compiler.imperative.blockcopy.block_copy` takes them: an append whose
    bound is named in ``leave`` (the tail a merge leaves) keeps its loop."""
    dtypes = dict(dtypes or {})
    return _rewrite(list(stmts), dtypes, fresh or fresh_namer(stmts, dtypes), frozenset(leave))


def _rewrite(stmts: list, dtypes: dict, fresh, leave) -> list:
    out = []
    for k, s in enumerate(stmts):
        loop, tag = s, None
        if isinstance(s, Tagged):
            inner = [x for x in s.body.body if not isinstance(x, Comment)]
            if len(inner) == 1 and isinstance(inner[0], While):
                loop, tag = inner[0], s
        spanned = None
        if isinstance(loop, (For, While)):
            rows = _rows(loop, stmts[:k])
            if rows is not None:
                spanned = _span(loop, *rows, dtypes, fresh, leave)
        if spanned is None:
            out.append(map_bodies(s, lambda body: _rewrite(list(body), dtypes, fresh, leave)))
        elif tag is not None:
            out.append(replace(tag, body=Block(tuple(spanned))))
        else:
            out += spanned
    return out


def _rows(loop, before: list):
    """``(row, stop, body)`` of a loop stepping ``row`` by one from 0 to ``stop``: a ``for``, or a
    ``while (row < stop)`` ending in ``row += 1`` whose row was last set to 0 in ``before``."""
    if isinstance(loop, For):
        if loop.start != Const(0, "int64"):
            return None
        return loop.var.name, loop.stop, list(untagged(loop.body.body))
    cond = loop.cond
    if not (isinstance(cond, BinOp) and cond.op == "<" and isinstance(cond.left, Var)):
        return None
    r = cond.left.name
    body = [x for x in untagged(loop.body.body) if not isinstance(x, Comment)]
    if not body or body[-1] != CompoundAssign("+", Var(r), Const(1, "int64")):
        return None
    for s in reversed(before):
        if isinstance(s, Assign) and s.target == Var(r):
            return (r, cond.right, body[:-1]) if s.value == Const(0, "int64") else None
        if any(isinstance(n, Var) and n.name == r for n in walk(s)):
            return None
    return None


class _Rows:
    """What a loop over rows does, read from its body (see :func:`_read`)."""

    def __init__(self):
        self.values = {}       # local -> the expression it holds (None: declared, not yet set)
        self.append = None     # the append loop
        self.guards = []       # the ``q < q_stop`` conditions around it
        self.ends = []         # stores of the output's count after it


def _read(stmts, r: str, into: _Rows) -> bool:
    """Reads a row's statements into ``into``; False at one that is not such a row's."""
    for s in stmts:
        if isinstance(s, Comment):
            continue
        if isinstance(s, Declare):
            into.values[s.var.name] = s.init
        elif isinstance(s, Assign) and s.target.name in into.values and into.append is None:
            into.values[s.target.name] = s.value
        elif isinstance(s, If) and s.otherwise is None and into.append is None:
            into.guards.append(s.cond)
            if not _read(untagged(s.then.body), r, into):
                return False
        elif isinstance(s, While) and into.append is None:
            into.append = s
        elif isinstance(s, Store) and s.op is None and into.append is not None and isinstance(s.value, Var):
            into.ends.append(s)
        else:
            return False
    return True


def _resolve(e, values: dict):
    """``e`` with a chain of locals that only copy another followed to what the first holds."""
    seen = set()
    while isinstance(e, Var) and e.name in values and e.name not in seen and values[e.name] is not None:
        seen.add(e.name)
        e = values[e.name]
    return e


def _span(loop, r: str, stop: Expr, body: list, dtypes: dict, fresh, leave):
    rows = _Rows()
    if not _read(body, r, rows) or rows.append is None:
        return None
    w = rows.append
    if isinstance(w.cond, BinOp) and isinstance(w.cond.right, Var) and w.cond.right.name in leave:
        return None
    c = match(w, dtypes)
    if c is None:
        return None
    first, last = _resolve(Var(c.q), rows.values), _resolve(c.end, rows.values)
    one = BinOp("+", Var(r), Const(1, "int64"))
    if not (isinstance(first, Load) and first.index == Var(r) and isinstance(last, Load)
            and last.buffer == first.buffer and last.index == one):
        return None
    pos, nnz = first.buffer, c.nnz
    # (a guard ``q < q_stop`` around the append only skips an empty row)
    if any(not (isinstance(g, BinOp) and g.op == "<" and g.left == Var(c.q)
                and _resolve(g.right, rows.values) == last) for g in rows.guards):
        return None
    written = {n.buffer for n in walk(loop.body) if isinstance(n, Store)}
    # (what an entry stores reads nothing of its row: the row, its locals and the row's positions)
    row_names = {r, *rows.values} - {c.q}
    entry = [*c.locals.values(), *c.stores.values(), *([c.keep] if c.keep is not None else ())]
    if pos in written or any(isinstance(n, Var) and n.name in row_names for n in walk(tuple(entry))):
        return None
    # (a row's end stored at a slot of the row: the append's position, count and locals are not the row's)
    moved = {c.q, nnz, *c.locals}
    if any(x.value != Var(nnz) or x.buffer in c.stores or any(isinstance(n, Load) or isinstance(n, Var)
                                                                and n.name in moved for n in walk(x.index))
           for x in rows.ends):
        return None
    if any(isinstance(n, Var) and n.name == nnz for v in rows.values.values() if v is not None for n in walk(v)):
        return None
    q_first, n = Var(fresh(f"{c.q}_first")), Var(fresh("n_span"))
    block, dropped = copy_run(c, w, dtypes, fresh, n, q_first)
    # (the rows' loop then only counts: each row's entries, and what each entry added to a slot of its row)
    count = BinOp("-", c.end, Var(c.q))
    done = [*(replace(k, value=count if _is_one(k.value) else BinOp("*", k.value, count)) for k in c.counters),
            CompoundAssign("+", Var(c.nnz), count)]
    counting = _replaced(loop, w, done)
    head = [Comment(f"the rows' entries are one run of positions, {pos}[0] to {pos}[{stop}]: copied as one block"
                    + ("" if dropped is None else ", then the rows counted from " + pos + " unless the filter "
                       "dropped one of the values (then the rows are appended again one by one)")),
            Declare(q_first, "int64", Load(pos, Const(0, "int64"))),
            Declare(n, "int64", BinOp("-", Select(BinOp("<", Const(0, "int64"), stop), Load(pos, stop), q_first),
                                      q_first))]
    if dropped is None:
        return [*head, *block, counting]
    return [*head, *block, If(BinOp("==", dropped, Const(0, "int64")), [counting], [loop])]


def _is_one(e) -> bool:
    return isinstance(e, Const) and e.value == 1 and not isinstance(e.value, bool)


def _replaced(node, target, stmts: list):
    """``node`` with the statement ``target`` (found by identity) replaced by ``stmts``."""
    def f(body):
        out = []
        for s in body:
            if s is target:
                out += stmts
            else:
                out.append(map_bodies(s, f))
        return out
    return map_bodies(node, f)
