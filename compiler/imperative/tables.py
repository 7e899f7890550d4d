"""Count a scatter-reduction into several tables: the loop around it unrolled, each lane its own table.

A histogram's ``bins[bin(v[i])] += 1`` runs at one update per store-to-load latency when
consecutive pixels fall in the same bin: each ``+=`` reads what the one before wrote. With
``copies`` tables, the loop around the update is unrolled ``copies`` times; lane 0 updates the
output itself and lane ``t`` its own table ``t - 1``, so consecutive updates never wait for each
other. A remainder loop (the loop as it was) runs the last iterations, and after the loops the
tables are combined into the output. The tables start at the operator's identity: a stack array
when their length is a constant of at most :data:`STACK_LIMIT` elements, else a scratch array the
kernel allocates (``workspace``), or a refusal.

An update qualifies when it is ``out[index] op= value`` with ``op`` associative and commutative
(:data:`IDENTITIES`) and ``index`` computed (it reads memory: a scatter); the output is read or
assigned nowhere between its first and last update.

>>> from compiler.imperative import Block, For, Load, Store, Var, pretty
>>> from compiler.imperative.traverse import fresh_namer
>>> i = Var("i")
>>> loop = For(i, 0, Var("n"), [Store("bins", Load("v", i), 1, "+")])
>>> stmts, note = privatize_tables([loop], "bins", 4, "int64", 2, fresh_namer([loop]))
>>> print(pretty(Block(tuple(stmts))))
int64 bins_tables[4] = {0, ...};
// 2 iterations a step, each updating its own table of bins (the last iteration after them)
int64 i_2 = 0;
while (i_2 + 1 < n) {
    bins[v[i_2]] += 1;
    bins_tables[v[i_2 + 1]] += 1;
    i_2 += 2;
}
for (int64 i = i_2; i < n; i++) {
    bins[v[i]] += 1;
}
// bins gathers its table
for (int64 p = 0; p < 4; p++) {
    bins[p] += bins_tables[p];
}
>>> note
'bins: 1 loop unrolled by 2, each lane updating its own table (1 extra table of 4 elements on the stack), the tables added into bins after the loops'
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from ..errors import StrategyError
from .ir import (Allocate, Assign, BinOp, Block, Break, Comment, CompoundAssign, Const, Declare, For, If, Load, Store,
                 Tagged, Var, While, as_expr)
from .traverse import assigned_names, map_bodies, map_children, untagged, walk

#: the updates several tables can take, by operator, with the identity the tables start from
#: (associative and commutative: the lanes' order of updates does not change the result, but for
#: floating-point rounding)
IDENTITIES = {"+": 0, "*": 1, "|": 0, "^": 0, "&": -1}
#: the most elements the extra tables may hold on the stack (64 KiB of int64)
STACK_LIMIT = 8192


class NotPrivatizable(StrategyError):
    """Why an output's updates cannot be counted into several tables."""


def privatize_tables(stmts, buffer: str, length, dtype: str, copies: int, fresh, *, workspace: bool = True,
                     stack_limit: int = STACK_LIMIT, name: str | None = None) -> tuple[list, str]:
    """``(statements, note)``: ``stmts`` with the updates of ``buffer`` (``length`` elements of
    ``dtype``) counted into ``copies`` tables (``buffer`` and ``copies - 1`` more); ``fresh``
    gives new local names; ``name`` is what the notes and refusals call the buffer (the user's
    tensor). Raises :class:`NotPrivatizable` saying why it does not apply."""
    what = name or buffer
    if copies < 2:
        raise NotPrivatizable(f"copies must be 2 or more, not {copies}")
    stmts, length = list(stmts), as_expr(length)
    updates = [n for n in walk(tuple(stmts)) if isinstance(n, Store) and n.buffer == buffer]
    if not any(s.op is not None for s in updates):
        raise NotPrivatizable(f"{what} is assigned (=), never updated (+= and the like): only an update "
                              f"can be split between tables and combined after")
    ops = {s.op for s in updates if s.op is not None}
    wrong = sorted(ops - set(IDENTITIES))
    if wrong:
        raise NotPrivatizable(f"{what} is updated with {', '.join(o + '=' for o in wrong)}, which is not "
                              f"associative and commutative; tables combine {', '.join(o + '=' for o in IDENTITIES)}")
    if len(ops) > 1:
        raise NotPrivatizable(f"{what} is updated with {' and '.join(o + '=' for o in sorted(ops))}: "
                              f"tables combine one operator")
    op = ops.pop()
    computed = _computed_locals(stmts)
    if not any(isinstance(n, Load) or (isinstance(n, Var) and n.name in computed)
               for s in updates if s.op is not None for n in walk(s.index)):
        raise NotPrivatizable(f"{what} is updated at the loops' own coordinates, not at a computed one (a "
                              f"scatter): consecutive iterations update different elements already")
    tables = fresh(f"{buffer[:-4] if buffer.endswith('_val') else buffer}_tables")
    extra = BinOp("*", Const(copies - 1, "int64"), length) if not isinstance(length, Const) else \
        Const((copies - 1) * length.value, "int64")
    stack = isinstance(extra, Const) and extra.value <= stack_limit
    if not stack and not workspace:
        size = f"{extra.value} elements" if isinstance(extra, Const) else f"{copies - 1} x {length} elements, " \
                                                                           f"known when the kernel runs"
        raise NotPrivatizable(f"the extra tables of {what} ({size}) do not fit on the stack (at most "
                              f"{stack_limit}) and no workspace is allowed")
    unroll = _Unroll(buffer, tables, length, copies, fresh, what)
    p = Var(fresh("p"))
    combined = Load(tables, p)
    for t in range(1, copies - 1):
        combined = BinOp(op, combined, Load(tables, _plus(p, _times(t, length))))
    gather = [Comment(f"{what} gathers its table{'s' if copies > 2 else ''}"),
              For(p, Const(0, "int64"), length, [Store(buffer, p, combined, op)])]

    def wrap(region):
        region = unroll.stmts(region)
        if not unroll.count:
            raise NotPrivatizable(f"no loop of the kernel runs around the updates of {what}: nothing to unroll")
        return [Allocate(tables, dtype, extra, _identity(op, dtype), region + gather, stack=stack)]
    stmts = _in_region(stmts, buffer, what, wrap)
    note = (f"{what}: {unroll.count} loop{'s' if unroll.count > 1 else ''} unrolled by {copies}, each lane "
            f"updating its own table ({copies - 1} extra table{'s' if copies > 2 else ''} of {length} elements "
            f"{'on the stack' if stack else 'allocated when the kernel runs'}), the tables "
            f"{'added into' if op == '+' else 'combined into'} {what} after the loops")
    return stmts, note


def _computed_locals(stmts) -> set[str]:
    """The locals whose value is read from memory, directly or through other such locals (a
    coordinate read from an index array: ``coord = v[i]``)."""
    sets = [(n.var.name, n.init) for n in walk(tuple(stmts)) if isinstance(n, Declare) and n.init is not None]
    sets += [(n.target.name, n.value) for n in walk(tuple(stmts)) if isinstance(n, (Assign, CompoundAssign))]
    out, grew = set(), True
    while grew:
        grew = False
        for name, value in sets:
            if name not in out and any(isinstance(n, Load) or (isinstance(n, Var) and n.name in out)
                                       for n in walk(value)):
                out.add(name)
                grew = True
    return out


def _identity(op: str, dtype: str) -> Const:
    """The tables' start: the identity of ``op`` in ``dtype`` (all bits set for ``&``)."""
    value = IDENTITIES[op]
    if op == "&":
        value = True if dtype == "bool" else 2 ** (8 * np.dtype(dtype).itemsize) - 1 if dtype.startswith("uint") else -1
    return Const(np.asarray(value).astype(dtype).item(), dtype)


def _times(t: int, e):
    if t == 0 or isinstance(e, Const):
        return Const(t * e.value if t else 0, "int64")
    return e if t == 1 else BinOp("*", Const(t, "int64"), e)


def _plus(e, offset):
    return e if isinstance(offset, Const) and offset.value == 0 else BinOp("+", offset, e)


def _has_update(node, buffer: str) -> bool:
    return any(isinstance(n, Store) and n.buffer == buffer and n.op is not None for n in walk(node))


def _in_region(stmts: list, buffer: str, what: str, wrap) -> list:
    """``stmts`` with the statements from the first to the last one that updates ``buffer`` made
    ``wrap(those statements)``, where nothing else reads or assigns it (a block or tag holding
    other accesses too, the reset of the output, say, is looked into, and kept)."""
    at = [k for k, s in enumerate(stmts) if _has_update(s, buffer)]
    first, last = at[0], at[-1]
    s = stmts[first]
    if first == last and isinstance(s, (Tagged, Block)) and _other_access(s, buffer):
        inner = _in_region(list(s.body.body if isinstance(s, Tagged) else s.body), buffer, what, wrap)
        s = replace(s, body=Block(tuple(inner))) if isinstance(s, Tagged) else Block(tuple(inner))
        return stmts[:first] + [s] + stmts[first + 1:]
    for s in stmts[first:last + 1]:
        if _other_access(s, buffer):
            verb = "reads" if any(isinstance(n, Load) and n.buffer == buffer for n in walk(s)) else "assigns (=)"
            raise NotPrivatizable(f"the kernel {verb} {what} between its updates: its tables would hold "
                                  f"part of what it reads")
    return stmts[:first] + wrap(stmts[first:last + 1]) + stmts[last + 1:]


def _other_access(node, buffer: str) -> bool:
    return any((isinstance(n, Load) and n.buffer == buffer) or (isinstance(n, Store) and n.buffer == buffer
                                                                and n.op is None) for n in walk(node))


class _Unroll:
    """Unrolls each innermost loop around an update of ``buffer``, lane ``t`` updating table ``t``."""

    def __init__(self, buffer, tables, length, copies, fresh, what):
        self.buffer, self.tables, self.length, self.copies, self.fresh = buffer, tables, length, copies, fresh
        self.what = what
        self.count = 0

    def stmts(self, stmts) -> list:
        out = []
        for s in stmts:
            out += self.stmt(s)
        return out

    def stmt(self, s) -> list:
        if not _has_update(s, self.buffer):
            return [s]
        if isinstance(s, (For, While)) and not any(isinstance(n, (For, While)) and _has_update(n, self.buffer)
                                                   for n in walk(s.body)):
            return self.unroll(s)
        if isinstance(s, (For, While, Tagged, Block, If, Allocate)):
            return [map_bodies(s, self.stmts)]
        return [s]

    def unroll(self, loop) -> list:
        body = untagged(loop.body.body)
        if isinstance(loop, For):
            var, start, stop = loop.var, loop.start, loop.stop
        else:   # while (q < stop) { ...; q += 1; }
            cond, step = loop.cond, body[-1] if body else None
            if not (isinstance(cond, BinOp) and cond.op == "<" and isinstance(cond.left, Var)
                    and _is_increment(step, cond.left)):
                raise NotPrivatizable(f"the loop around the update of {self.what} (while ({cond})) does not "
                                      f"count up by one: its iterations cannot be dealt out to tables")
            var, stop, body = cond.left, cond.right, body[:-1]
        inner = [n for s in body for n in walk(s)]
        assigned = assigned_names(inner)
        if var.name in assigned or any(isinstance(n, Break) for n in inner):
            raise NotPrivatizable(f"the loop over {var} around the update of {self.what} assigns {var} or "
                                  f"breaks out: its iterations cannot be dealt out to tables")
        stored = {n.buffer for n in inner if isinstance(n, Store)}
        if any((isinstance(n, Var) and n.name in assigned) or (isinstance(n, Load) and n.buffer in stored)
               for n in walk(stop)):
            raise NotPrivatizable(f"the loop over {var} around the update of {self.what} moves its own end "
                                  f"({stop}): its iterations cannot be dealt out to tables")
        self.count += 1
        k = self.copies
        lanes_var = Var(self.fresh(re.sub(r"_[0-9]+$", "", var.name))) if isinstance(loop, For) else var
        lanes = []
        for t in range(k):
            lanes += self.lane(body, var, lanes_var, t)
        last = "iteration" if k == 2 else f"up to {k - 1} iterations"
        head = [Comment(f"{k} iterations a step, each updating its own table of {self.what} (the last "
                        f"{last} after them)")]
        step_loop = While(BinOp("<", BinOp("+", lanes_var, Const(k - 1, "int64")), stop),
                          lanes + [CompoundAssign("+", lanes_var, Const(k, "int64"))])
        if isinstance(loop, For):
            return head + [Declare(lanes_var, loop.dtype, start), step_loop, replace(loop, start=lanes_var)]
        return head + [step_loop, loop]

    def lane(self, body, var, lanes_var, t) -> list:
        """Lane ``t``'s copy of ``body``: the loop's variable moved ``t`` on, its locals renamed,
        and (past lane 0) its updates into table ``t - 1``."""
        at = lanes_var if t == 0 else BinOp("+", lanes_var, Const(t, "int64"))
        names = {var.name: at}
        for n in (n for s in body for n in walk(s)):
            if isinstance(n, Declare) or isinstance(n, For):
                v = n.var.name   # (c_2's lanes: c_5, c_6, ..., not c_2_2)
                names.setdefault(v, Var(self.fresh(re.sub(r"_[0-9]+$", "", v))))
        return [_lane_stmt(s, names, self.buffer, self.tables, _times(t - 1, self.length) if t else None)
                for s in body]


def _is_increment(s, var: Var) -> bool:
    one = Const(1, "int64")
    return (isinstance(s, CompoundAssign) and s.op == "+" and s.target == var and s.value == one) or \
        (isinstance(s, Assign) and s.target == var and s.value == BinOp("+", var, one))


def _lane_stmt(node, names: dict, buffer: str, tables: str, offset):
    """``node`` with its variables renamed by ``names`` (to expressions; a declared or assigned
    variable to a variable) and, when ``offset`` is given, its updates of ``buffer`` made into
    ``tables`` at ``offset`` on."""
    if isinstance(node, Var):
        return names.get(node.name, node)
    if isinstance(node, Store) and node.buffer == buffer and node.op is not None and offset is not None:
        node = Store(tables, _plus(node.index, offset), node.value, node.op)
    return map_children(node, lambda x: _lane_stmt(x, names, buffer, tables, offset))


__all__ = ["privatize_tables", "NotPrivatizable", "IDENTITIES", "STACK_LIMIT"]
