"""Values computed again: a local declared with what an earlier local of its type still holds is declared a copy
of it, which :func:`~compiler.imperative.copies.drop_copies` then folds.

Level protocols compute what a read needs where it is read. ``linalg.cross(A, y)`` reads each of A's columns in
two of its three components, and each read loaded the row's bounds and searched the row for its column: six
searches a row where three find every entry (the kernel was 3.7x from a hand-written one). The second
declaration of ``lower_bound(A1_idx, qA_start, qA_stop, 1)`` is the first's value, as is a second load of
``A1_pos[i]``, once its bounds are the first's.

Exact: a declaration's value is an earlier local's when its expression is the same (read through the copies this
pass made), calls only helpers that compute a value (:func:`~.traverse.pure`), and loads only from buffers the
kernel only reads (its parameters of intent ``"in"``: C's ``const``); and when nothing since the earlier
declaration assigned the earlier local or any local the expression reads. A loop's body starts from what holds
before the loop and is not assigned anywhere in it (its next iteration sees what the body changed); each branch of
an ``if`` from what holds before it; after a loop or branch, what it assigned no longer holds. Scopes follow C's:
what an inner scope declares is gone after it.

>>> from compiler.imperative.ir import Declare, Load, Var
>>> from compiler.imperative.search import lower_bound_call
>>> body = [Declare(Var("a"), "int64", Load("pos", Var("i"))), Declare(Var("b"), "int64", Load("pos", Var("i"))),
...         Declare(Var("q"), "int64", lower_bound_call("idx", Var("a"), Var("n"), 1)),
...         Declare(Var("r"), "int64", lower_bound_call("idx", Var("b"), Var("n"), 1))]
>>> for s in same_values(body):
...     print(str(s).strip())
int64 a = pos[i];
int64 b = a;
int64 q = lower_bound(idx, a, n, 1);
int64 r = q;
"""

from __future__ import annotations

from .copies import renamed
from .ir import Allocate, Block, Buffer, BufferArg, Call, Const, Declare, For, If, Load, Tagged, Var, While
from .traverse import assigned_in, buffers_stored, map_bodies, names_read, pure, var_names, walk

__all__ = ["read_only", "same_values"]


def same_values(stmts, inputs=None) -> list:
    """``stmts`` with each declaration of a value an earlier local holds a copy of that local (module docstring).
    ``inputs``: the buffers the kernel only reads (its parameters of intent ``"in"``), the only ones whose loads it
    reuses; None: those ``stmts`` never change, found by walking them (a kernel's parameters say it at no cost)."""
    stmts = list(stmts)
    return _Values(frozenset(inputs) if inputs is not None else None, _written(stmts) if inputs is None else None
                   ).scope(stmts, {}, {})


def read_only(params) -> frozenset:
    """The buffers among a kernel's ``params`` that it only reads (intent ``"in"``): :func:`same_values`' inputs."""
    return frozenset(p.name for p in params if isinstance(p, Buffer) and p.intent == "in")


def _written(stmts) -> frozenset:
    """The buffers ``stmts`` may change: stored to, assigned (an output grown: its pointer moves), or handed to a
    helper that may write them."""
    block = Block(tuple(stmts))
    out = set(buffers_stored(block)) | (set(assigned_in(block)) & set(names_read(block)))
    if not pure(block):
        for n in walk(block):
            if isinstance(n, Call) and not pure(n):
                out |= {a.name if isinstance(a, Var) else a.buffer for a in n.args if isinstance(a, (Var, BufferArg))}
    return frozenset(out)


class _Values:
    def __init__(self, inputs: frozenset | None, written: frozenset | None):
        self.inputs, self.written = inputs, written

    def key(self, s: Declare, alias: dict):
        """What ``s`` computes, read through ``alias`` (None: not a value this pass reuses)."""
        e = s.init
        if e is None or isinstance(e, (Var, Const)) or not pure(e):
            return None
        nodes = list(walk(e))
        read = {n.buffer for n in nodes if isinstance(n, (Load, BufferArg))}
        if not read or (not read <= self.inputs if self.inputs is not None else read & self.written):
            return None
        return (s.dtype, renamed(e, alias) if alias else e)

    def scope(self, stmts: list, held: dict, alias: dict) -> list:
        """``stmts``, one C scope; ``held``: ``{(dtype, expression): local}`` of what holds on entry, ``alias``:
        ``{copy: local}`` of the copies made (both changed in place as the scope goes)."""
        out = []
        for s in stmts:
            if isinstance(s, (Tagged, Block, Allocate)):     # (their statements print inline: this scope's)
                out.append(map_bodies(s, lambda body: self.scope(body, held, alias)))
                continue
            if isinstance(s, Declare):
                _forget(held, alias, {s.var.name})
                key = self.key(s, alias)
                if key is not None and s.var.name not in var_names(s.init):
                    if key in held:
                        alias[s.var.name] = held[key]
                        s = Declare(s.var, s.dtype, Var(held[key]))
                    else:
                        held[key] = s.var.name
                out.append(s)
                continue
            changed = assigned_in(s)
            if isinstance(s, (For, While, If)):
                # (a loop's body sees what its iterations do not change; a branch what holds before it)
                inner = dict(held), dict(alias)
                if not isinstance(s, If):
                    _forget(*inner, changed)
                s = map_bodies(s, lambda body, inner=inner: self.scope(body, dict(inner[0]), dict(inner[1])))
            _forget(held, alias, changed)
            out.append(s)
        return out


def _forget(held: dict, alias: dict, names) -> None:
    """Drop from ``held`` and ``alias`` what reads or names a local of ``names`` (assigned or declared again)."""
    names = set(names)
    if not names:
        return
    for key in [k for k, v in held.items() if v in names or not var_names(k[1]).isdisjoint(names)]:
        del held[key]
    for copy in [c for c, w in alias.items() if c in names or w in names]:
        del alias[copy]
