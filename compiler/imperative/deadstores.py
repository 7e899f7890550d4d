"""Dead stores: an assignment to a local that nothing reads before the local is set again or its scope ends.

Level protocols leave a merge's position where the next phase would read it, in every context:
a phase ends ``i = phase_stop;`` and a tail ``j = lastB;`` although no phase follows, and nothing
reads them before their scope ends. The C compiler drops such stores; a student reading the C
should not have to. :func:`drop_dead_stores` drops an assignment (``=`` or ``op=``, computed
without effects) to a local declared in the kernel when the local is dead after it: on no path
from it is the local read before it is assigned again or its scope ends.

Liveness is computed backwards over C's scopes: a scope's locals die at its end (a local of the
same name outside is live there as it was after the scope), a ``break`` goes on as its loop's end
does, a branch as either arm. A loop's head keeps alive what its condition and its body read (at
any depth), so a store in a loop is dropped only where it is dead by its own scope or by what
follows within the body. Provenance tags, blocks and scratch arrays share the scope around them
(C sees their declarations after them). A name a pragma mentions, and a name not declared
around the store (a parameter, an output scalar the kernel stores at its end), keep their stores.

>>> from compiler.imperative.ir import Var, Declare, If, Assign, Store, Load, BinOp
>>> i, stop = Var("i"), Var("phase_stop")
>>> body = [Declare(i, "int64", 0), Declare(stop, "int64", Load("pos", 1)),
...         If(BinOp("<", i, stop), [Store("out", i, 1.0), Assign(i, stop)])]
>>> for s in drop_dead_stores(body):
...     print(str(s).strip())
int64 i = 0;
int64 phase_stop = pos[1];
if (i < phase_stop) {
    out[i] = 1.0;
}
"""

from __future__ import annotations

from dataclasses import replace

from .ir import Allocate, Assign, Block, Break, CompoundAssign, Declare, For, If, Tagged, While
from .traverse import map_bodies, pragma_names, pure, same_block, sets_fresh, var_names

__all__ = ["drop_dead_stores"]

_EMPTY: frozenset = frozenset()


def drop_dead_stores(stmts) -> list:
    """``stmts`` without the assignments to locals that are dead after them (module docstring)."""
    stmts = list(stmts)
    return _Liveness(pragma_names(stmts)).scope(stmts, frozenset(), None, _Declared({}, 0, None))[1]


class _Declared:
    """The locals declared around a statement: those of its scope declared before item ``k``
    (``first``: each name's first declaration there), then those around that scope (``outer``)."""

    __slots__ = ("first", "k", "outer")

    def __init__(self, first: dict, k: int, outer):
        self.first, self.k, self.outer = first, k, outer

    def __contains__(self, name: str) -> bool:
        scope = self
        while scope is not None:
            if scope.first.get(name, scope.k) < scope.k:
                return True
            scope = scope.outer
        return False


class _Liveness:
    def __init__(self, mentioned: set):
        self.mentioned = mentioned

    def scope(self, stmts: list, live: frozenset, brk, around: _Declared) -> tuple[frozenset, list]:
        """``(what is live at the start of stmts, stmts without their dead stores)`` for ``stmts``,
        one C scope, after which ``live`` is live; ``brk``: what is live where a ``break`` goes;
        ``around``: the locals declared in the scopes around it."""
        items = _items(stmts)
        declared = frozenset(s.var.name for s in items if isinstance(s, Declare))
        # an outer local of a name this scope declares: live before the declaration as after the scope
        saved, live = live & declared, live - declared
        # the locals each item sees declared around it: those around the scope and those declared in it
        # before the item, looked up through the scopes (a set per item cost as much as the rest of the
        # pass, and a set per branch or loop, the union of all the locals around it, was quadratic in
        # the size of a deep looplet nest)
        first: dict = {}
        for k, s in enumerate(items):
            if isinstance(s, Declare):
                first.setdefault(s.var.name, k)

        def visible(k: int) -> _Declared:
            return _Declared(first, k, around)

        def sees(name: str, k: int) -> bool:
            return first.get(name, k) < k or name in around
        new: list = [None] * len(items)
        for k in range(len(items) - 1, -1, -1):
            s = items[k]
            if isinstance(s, Allocate):     # (its header: the length is read before its statements)
                live = live | _reads(s)
                new[k] = s
            elif isinstance(s, Declare):
                live = (live - {s.var.name}) | (saved & {s.var.name}) | _reads(s)
                new[k] = s
            elif isinstance(s, (Assign, CompoundAssign)) and self.dead(s, live, sees(s.target.name, k)):
                new[k] = None
            elif isinstance(s, Assign):
                live = (live - {s.target.name}) | _reads(s)
                new[k] = s
            elif isinstance(s, Break):
                live = brk if brk is not None else live
                new[k] = s
            elif isinstance(s, If):
                inside = visible(k)
                then_live, then = self.scope(list(s.then.body), live, brk, inside)
                if s.otherwise is None:
                    other_live, other = live, None
                else:
                    other_live, other = self.scope(list(s.otherwise.body), live, brk, inside)
                new[k] = _with_branches(s, then, other)
                live = then_live | other_live | _reads(s)
            elif isinstance(s, (For, While)):
                live, new[k] = self.loop(s, live, visible(k))
            else:
                live = live | _reads(s)
                new[k] = s
        return live, _rebuilt(stmts, iter(new))

    def loop(self, s, after: frozenset, around: _Declared):
        """``(what is live before the loop s, s without its dead stores)``, ``after`` live after it.
        Its head keeps alive what the loop reads at any depth but a local each iteration sets before it
        reads it (:func:`_set_first`: a search's position, ``pC0 = 0;`` before a loop that starts with
        ``pC0 = idx[p];``): a sound bound on what its body needs from one iteration to the next, found
        without iterating to a fixed point (nested loops would each iterate their bodies again)."""
        reads = (var_names(s) - _set_first(s.body.body)) | _reads(s)
        if isinstance(s, While):
            head = after | reads
            _, body = self.scope(list(s.body.body), head, after, around)
            return head, _with_body(s, body)
        var = s.var.name
        head = after | reads | {var}   # (the increment reads the variable)
        _, body = self.scope(list(s.body.body), head, after, _Declared({var: -1}, 0, around))
        return (head - {var}) | (after & {var}) | _reads(s), _with_body(s, body)

    def dead(self, s, live: frozenset, declared: bool) -> bool:
        """Whether the assignment ``s`` is dead: its local is ``declared`` around it, not ``live`` after it,
        no pragma's, and its value computed without effects."""
        name = s.target.name
        return declared and name not in live and name not in self.mentioned and pure(s.value)


def _set_first(stmts) -> frozenset:
    """The locals that ``stmts`` (a loop's body) set before anything in them reads them: each first mentioned by
    a plain assignment at the body's own level, whose value does not read it.

    >>> from compiler.imperative.ir import Var, Load
    >>> p, q = Var("p"), Var("q")
    >>> sorted(_set_first([Assign(p, Load("idx", q)), Assign(q, p), If(p, [Assign(q, 1)])]))
    ['p']
    """
    seen: set = set()
    out = set()
    for s in _items(stmts):
        if isinstance(s, Assign) and s.target.name not in seen and sets_fresh(s, s.target.name):
            out.add(s.target.name)
        seen |= var_names(s)
    return frozenset(out)


def _with_body(s, body: list):
    """The loop ``s`` with ``body`` for its statements: ``s`` itself where they are its own (a
    pass that changes nothing keeps the tree, and the identity memos of later passes find it)."""
    block = same_block(s.body, body)
    return s if block is s.body else replace(s, body=block)


def _with_branches(s, then: list, other):
    """The ``if`` ``s`` with ``then`` and ``other`` (None: no else) for its branches, ``s`` itself where
    they are its own."""
    then_block = same_block(s.then, then)
    other_block = None if other is None else same_block(s.otherwise, other)
    if then_block is s.then and other_block is s.otherwise:
        return s
    return replace(s, then=then_block, otherwise=other_block)


def _items(stmts) -> list:
    """One scope's statements in order, those of tags, blocks and scratch arrays spliced in (a
    scratch array as its header, then its statements)."""
    out = []
    for s in stmts:
        if isinstance(s, (Tagged, Block)):
            out += _items(s.body if isinstance(s, Block) else s.body.body)
        elif isinstance(s, Allocate):
            out += [s, *_items(s.body.body)]
        else:
            out.append(s)
    return out


def _rebuilt(stmts, new) -> list:
    """``stmts`` with its scope's items replaced, in :func:`_items`' order, by those of ``new``
    (None: dropped)."""
    out = []
    for s in stmts:
        if isinstance(s, (Tagged, Block)):
            out.append(map_bodies(s, lambda body: _rebuilt(body, new)))
        elif isinstance(s, Allocate):
            next(new)
            out.append(map_bodies(s, lambda body: _rebuilt(body, new)))
        else:
            t = next(new)
            if t is not None:
                out.append(t)
    return out


def _reads(s) -> frozenset:
    """The locals ``s``'s own expressions read (not those of the statements inside it; not an
    assignment's target, but ``x op= v`` reads ``x``)."""
    if isinstance(s, Assign):
        node = s.value
    elif isinstance(s, Declare):
        node = s.init
    elif isinstance(s, For):
        return var_names(s.start) | var_names(s.stop)
    elif isinstance(s, Allocate):
        return var_names(s.length) | (_EMPTY if s.init is None else var_names(s.init))
    elif isinstance(s, (If, While)):
        node = s.cond   # (its own expression: a copy without its bodies cost a rebuilt statement)
    else:
        node = map_bodies(s, lambda body: [])
    return _EMPTY if node is None else var_names(node)
