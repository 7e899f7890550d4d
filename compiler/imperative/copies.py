"""Copies of locals: a local declared as a copy of another, where neither ever changes, is that other.

Level protocols name what they compute in the context they compute it in, and some names end up
naming another local's value: a walk over a fiber's entries declares its end ``qA_end = qA_stop``
(a search would narrow it, when the walk is cut short), and a phase of a merge declares its stop
``phase_stop_2 = lastA`` (the least of the phase's stops, here one). The C compiler folds both;
a student reading the C meets two names for one value. :func:`drop_copies` replaces each such
local by the one it copies and drops its declaration.

Exact when the copy ``v = w`` has one declaration, of ``w``'s type, and ``w`` has one declaration;
neither is assigned, nor a loop's variable: then ``v`` holds ``w``'s value wherever it is read
(both are declared once, so no other local of either name hides them, and ``v``'s scope lies
inside ``w``'s, since its declaration reads ``w``). A name a pragma mentions is left as it is.

>>> from compiler.imperative.ir import Var, Declare, While, CompoundAssign, Load, Store
>>> q, stop, end = Var("q"), Var("q_stop"), Var("q_end")
>>> body = [Declare(q, "int64", Load("pos", 0)), Declare(stop, "int64", Load("pos", 1)),
...         Declare(end, "int64", stop), While(q < end, [Store("out", q, 1.0), CompoundAssign("+", q, 1)])]
>>> for s in drop_copies(body):
...     print(str(s).strip())
int64 q = pos[0];
int64 q_stop = pos[1];
while (q < q_stop) {
    out[q] = 1.0;
    q += 1;
}
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import fields, replace

from .ir import Assign, Block, CompoundAssign, Declare, Expr, For, Pragma, Stmt, Var
from .traverse import walk

__all__ = ["copies", "drop_copies"]


def copies(stmts) -> dict[str, str]:
    """``{copy: the local it stands for}`` of ``stmts`` (see the module docstring), each copy of a
    copy followed to the first local.

    >>> from compiler.imperative.ir import Var, Declare, Assign
    >>> a, b, c = Var("a"), Var("b"), Var("c")
    >>> copies([Declare(a, "int64", 1), Declare(b, "int64", a), Declare(c, "int64", b)])
    {'b': 'a', 'c': 'a'}
    >>> copies([Declare(a, "int64", 1), Declare(b, "int64", a), Assign(a, 2)])   # a changes
    {}
    """
    declared, dtypes, changed, pragmas, candidates = Counter(), {}, set(), [], {}
    for n in walk(tuple(stmts)):
        if isinstance(n, Declare):
            declared[n.var.name] += 1
            dtypes[n.var.name] = n.dtype
            if isinstance(n.init, Var):
                candidates[n.var.name] = n.init.name
        elif isinstance(n, (Assign, CompoundAssign)):
            changed.add(n.target.name)
        elif isinstance(n, For):
            changed.add(n.var.name)
        elif isinstance(n, Pragma):
            pragmas.append(n.text)
    mentioned = set(re.findall(r"[A-Za-z_]\w*", " ".join(pragmas)))

    def steady(name) -> bool:
        return declared[name] == 1 and name not in changed and name not in mentioned
    out = {v: w for v, w in candidates.items() if steady(v) and steady(w) and dtypes[v] == dtypes[w]}
    for v in list(out):
        while out[v] in out:
            out[v] = out[out[v]]
    return out


def drop_copies(stmts) -> list:
    """``stmts`` with each copy (:func:`copies`) replaced by the local it stands for, and its
    declaration gone."""
    mapping = copies(stmts)
    if not mapping:
        return list(stmts)
    return _without(list(stmts), mapping)


def _without(stmts: list, mapping: dict) -> list:
    return [_renamed(s, mapping) for s in stmts
            if not (isinstance(s, Declare) and s.var.name in mapping)]


def _renamed(node, mapping: dict):
    """``node`` with each read of a copy a read of the local it stands for (statement lists
    inside lose the copies' declarations)."""
    if isinstance(node, Var):
        return Var(mapping[node.name]) if node.name in mapping else node
    if isinstance(node, Block):
        return Block(tuple(_without(list(node.body), mapping)))
    if not isinstance(node, (Expr, Stmt)):
        return node
    changes = {}
    for f in fields(node):
        v = getattr(node, f.name)
        if isinstance(v, (Expr, Stmt)):
            new = _renamed(v, mapping)
        elif isinstance(v, tuple) and any(isinstance(x, (Expr, Stmt)) for x in v):
            new = tuple(_renamed(x, mapping) for x in v)
        else:
            continue
        if new is not v:
            changes[f.name] = new
    return replace(node, **changes) if changes else node
