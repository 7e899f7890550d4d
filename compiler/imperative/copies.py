"""Copies of locals: a local declared as a copy of another, where neither changes while the copy lives, is that other.

Level protocols name what they compute in the context they compute it in, and some names end up
naming another local's value: a walk over a fiber's entries declares its end ``qA_end = qA_stop``
(a search would narrow it, when the walk is cut short), a phase of a merge declares its stop
``phase_stop_2 = lastA`` (the least of the phase's stops, here one), a COO row's walk its end
``qA1_stop = qA0_next`` (the row's segment, found by a loop that advanced ``qA0_next`` before), and a
lattice point its coordinate ``j = jA``. The C compiler folds each; a student reading the C meets
two names for one value. :func:`drop_copies` replaces each such local by the one it copies and
drops its declaration.

Exact in C's scopes: the copy ``v = w`` is declared with ``w``'s type, where ``w`` is a local
(declared before it, in its scope or one around it: not a parameter, not a loop's variable), and in
what follows ``v``'s declaration in its scope (down to any depth) nothing declares, assigns or loops
over ``v`` or ``w``. Then each read of ``v`` reads ``w``'s value, from the same declaration of ``w``
(nothing hides it). ``w`` may change before (the loop that found a segment's end), and each name may
be declared again in another scope. Provenance tags, blocks and scratch arrays share the scope
around them (C sees their declarations after them). A name a pragma mentions is left as it is.

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

from .ir import Allocate, Block, Declare, Expr, For, If, Stmt, Tagged, Var, While
from .traverse import assigned_in, map_bodies, map_children, pragma_names, var_names

__all__ = ["copies", "drop_copies", "renamed"]


def copies(stmts) -> dict[str, str]:
    """``{copy: the local it stands for}`` of ``stmts`` (see the module docstring), each copy of a
    copy followed to the first local. (A name that copies different locals in different scopes
    shows the first.)

    >>> from compiler.imperative.ir import Var, Declare, Assign
    >>> a, b, c = Var("a"), Var("b"), Var("c")
    >>> copies([Declare(a, "int64", 1), Declare(b, "int64", a), Declare(c, "int64", b)])
    {'b': 'a', 'c': 'a'}
    >>> copies([Declare(a, "int64", 1), Declare(b, "int64", a), Assign(a, 2)])   # a changes
    {}
    """
    found: dict[str, str] = {}
    _Copies(stmts, found).scope(list(stmts), {})
    return found


def drop_copies(stmts) -> list:
    """``stmts`` with each copy (:func:`copies`) replaced by the local it stands for, and its
    declaration gone."""
    return _Copies(stmts, {}).scope(list(stmts), {})


class _Copies:
    def __init__(self, stmts, found: dict):
        self.found = found
        self.mentioned = pragma_names(stmts)

    def scope(self, stmts: list, env: dict) -> list:
        """``stmts``, one C scope, without its copies (and its inner scopes' too); ``env``: the
        dtypes of the locals declared around it (not loops' variables), which a copy may stand for."""
        items = _scope_items(stmts)
        if not any(isinstance(s, Declare) for s in items) and not any(_has_body(s) for s in items):
            return list(stmts)
        # what the statements of the scope from each one on declare or assign, at any depth
        after: list[set] = [set() for _ in range(len(items) + 1)]
        for k in range(len(items) - 1, -1, -1):
            after[k] = after[k + 1] | assigned_in(items[k])
        env = dict(env)
        sources: dict[int, tuple[str, str]] = {}   # a copy's position in items -> (copy, its source)
        envs: dict[int, dict] = {}                 # what the inner scopes of the statement there see
        resolved: dict[str, str] = {}
        for k, s in enumerate(items):
            if _has_body(s):
                envs[k] = dict(env)
            if isinstance(s, Declare):
                if (isinstance(s.init, Var) and env.get(s.init.name) == s.dtype
                        and not {s.var.name, s.init.name} & (after[k + 1] | self.mentioned)):
                    resolved[s.var.name] = resolved.get(s.init.name, s.init.name)
                    sources[k] = (s.var.name, resolved[s.var.name])
                    self.found.setdefault(*sources[k])
                env[s.var.name] = s.dtype
        position, mapping = iter(range(len(items))), {}

        def rebuild(stmts) -> list:   # in _scope_items' order, so positions match
            out = []
            for s in stmts:
                if isinstance(s, (Tagged, Block)):
                    out.append(map_bodies(s, rebuild))
                    continue
                if isinstance(s, Allocate):
                    out.append(map_bodies(renamed(s, mapping, deep=False), rebuild))
                    continue
                k = next(position)
                if k in sources:
                    mapping[sources[k][0]] = sources[k][1]
                    continue
                s = renamed(s, mapping) if mapping else s
                if k in envs:
                    inner = envs[k]
                    if isinstance(s, For):   # (a loop's variable stays: it is not a local declared once)
                        inner = {n: d for n, d in inner.items() if n != s.var.name}
                    s = map_bodies(s, lambda body, inner=inner: self.scope(body, inner))
                out.append(s)
            return out
        return rebuild(list(stmts))


def _scope_items(stmts) -> list:
    """The statements of one C scope in order: tags', blocks' and scratch arrays' statements
    spliced in (they print inline), each loop or branch one item (its bodies are scopes of their own)."""
    out = []
    for s in stmts:
        if isinstance(s, (Tagged, Block, Allocate)):
            out += _scope_items(s.body if isinstance(s, Block) else s.body.body)
        else:
            out.append(s)
    return out


def _has_body(s) -> bool:
    return isinstance(s, (For, While, If))


def renamed(node, mapping: dict, deep: bool = True):
    """``node`` with each read of a copy a read of the local it stands for (``deep``: in the
    statements inside it too; else only in its own expressions)."""
    if isinstance(node, Var):
        return Var(mapping[node.name]) if node.name in mapping else node
    if not isinstance(node, (Expr, Stmt)):
        return node
    # (a subtree naming no copy is kept as it is, unwalked: var_names is remembered per node, and most
    # of a kernel's statements and expressions read none of a scope's copies)
    if var_names(node).isdisjoint(mapping):
        return node
    return map_children(node, lambda x: x if isinstance(x, Block) and not deep else renamed(x, mapping))
