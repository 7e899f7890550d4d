"""The imperative IR drawn as a tree (the drawing of the ``lower`` and ``imperative`` steps).

The kernel is the root; loops, branches (their ``then`` and ``else`` edges; an ``else if``
beside the ``if`` it follows) and scratch arrays hold their bodies; the straight-line statements between them are one box each run,
long runs counted (see :mod:`compiler.treedot`). Tags (which lattice point or looplet made a
piece of code) change nothing in the program and are not drawn.

>>> from compiler.imperative import Var, For, Store, Assign, Function, Buffer
>>> i = Var("i")
>>> fn = Function("k", (Buffer("y", "float64"),), [For(i, 0, 4, [Store("y", i, 1.0)])])
>>> [line.split('"')[1] for line in ir_dot(fn).splitlines() if "label=" in line and "->" not in line]
['kernel k(in float64 y[])', 'for (int64 i = 0; i < 4; i++)', 'y[i] = 1.0;']
"""

from __future__ import annotations

from .ir import Allocate, Block, For, Function, If, Tagged, While
from .printer import pretty
from ..treedot import TreeDot

__all__ = ["ir_dot"]


def _head(s) -> str:
    """A compound statement's first printed line, without its opening brace (a block of its
    own, a scope for its names, is ``{ … }``)."""
    line = pretty(s).splitlines()[0].strip()
    if line == "{":
        return "{ … }"
    return line[:-1].rstrip() if line.endswith("{") else line


def ir_dot(fn: Function) -> str:
    """DOT source of the kernel ``fn`` (or of one statement) as a tree."""
    t = TreeDot("ir")
    if isinstance(fn, Function):
        root = t.control(_head(fn))
        if fn.helpers:
            t.statements([f"helper {h.name}" for h in fn.helpers], root, "helpers")
        _block(t, fn.body, root, "")
    else:
        _block(t, fn, None, "")
    return t.source()


def _flat(body):
    """The statements of ``body`` with blocks and tags opened."""
    for s in (body.body if isinstance(body, Block) else (body,)):
        if isinstance(s, Block):
            yield from _flat(s)
        elif isinstance(s, Tagged):
            yield from _flat(s.body)
        else:
            yield s


def _block(t: TreeDot, body, parent, edge: str) -> None:
    run: list[str] = []
    for s in _flat(body):
        compound = isinstance(s, (For, While, If, Allocate)) or isinstance(getattr(s, "body", None), Block)
        if not compound:
            run.extend(pretty(s).splitlines())
            continue
        if run:
            t.statements(run, parent, edge)
            run, edge = [], ""
        if isinstance(s, Allocate):
            # arrays allocated one inside the other (a workspace's values, bitmap, list) are one box
            chain = [s]
            while len(inner := list(_flat(chain[-1].body))) == 1 and isinstance(inner[0], Allocate):
                chain.append(inner[0])
            me = t.control([_head(a) for a in chain], parent, edge)
            _block(t, chain[-1].body, me, "")
            t.statements([pretty(a).splitlines()[-1] for a in reversed(chain)], me)
        elif isinstance(s, If):
            me = t.control(_head(s), parent, edge)
            scope = _head(s) == "{ … }"
            _block(t, s.then, me, "" if scope else "then")
            # an else-if chain, as printed: each "else if" beside the first branch, not nested in
            # the one before (a chain of n tests stays two boxes deep)
            other = s.otherwise
            while other is not None and len(other.body) == 1 and isinstance(other.body[0], If):
                branch = t.control("else " + _head(other.body[0]), me)
                _block(t, other.body[0].then, branch, "then")
                other = other.body[0].otherwise
            if other is not None:
                _block(t, other, me, "else")
        else:
            me = t.control(_head(s), parent, edge)
            _block(t, s.body, me, "")
        edge = ""
    if run:
        t.statements(run, parent, edge)

