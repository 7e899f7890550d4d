"""The imperative IR drawn as a tree (the drawing of the ``lower`` and ``imperative`` steps).

The kernel is the root; loops, branches (their ``then`` and ``else`` edges; an ``else if``
beside the ``if`` it follows) and scratch arrays hold their bodies; the straight-line statements between them are one box each run,
long runs counted (see :mod:`compiler.treedot`). Tags (which lattice point or looplet made a
piece of code) change nothing in the program and are not drawn: they are each box's
provenance (:func:`ir_tree`).

>>> from compiler.imperative import Var, For, Store, Assign, Function, Buffer
>>> i = Var("i")
>>> fn = Function("k", (Buffer("y", "float64"),), [For(i, 0, 4, [Store("y", i, 1.0)])])
>>> [line.split('"')[1] for line in ir_dot(fn).splitlines() if "label=" in line and "->" not in line]
['kernel k(in float64 y[])', 'for (int64 i = 0; i < 4; i++)', 'y[i] = 1.0;']
"""

from __future__ import annotations

from .ir import Allocate, Block, For, Function, If, Tagged, While
from .printer import pretty
from ..trace import Artifact
from ..treedot import TreeDot

__all__ = ["ir_artifact", "ir_dot", "ir_tree"]


def _head(s) -> str:
    """A compound statement's first printed line, without its opening brace (a block of its
    own, a scope for its names, is ``{ … }``)."""
    line = pretty(s).splitlines()[0].strip()
    if line == "{":
        return "{ … }"
    return line[:-1].rstrip() if line.endswith("{") else line


def ir_dot(fn: Function) -> str:
    """DOT source of the kernel ``fn`` (or of one statement) as a tree."""
    return ir_tree(fn).source()


def ir_artifact(fn: Function) -> Artifact:
    """The ``ir`` artifact of the kernel ``fn``: its text, its tree, and each box's tags
    (``data["node_tags"]``), which the explorer links with the C lines of those tags; each made
    when first read (:meth:`~compiler.trace.Artifact.deferred`)."""
    def make():
        tree = ir_tree(fn)
        return str(fn), tree.source(), {"node_tags": tree.node_tags}
    return Artifact.deferred("ir", fn.name, make)


def ir_tree(fn: Function) -> TreeDot:
    """The tree of :func:`ir_dot`, whose :attr:`~compiler.treedot.TreeDot.node_tags` give each
    box the tags of the ``Tagged`` nodes around its code, innermost first (a run of statements
    is cut where its tags change, so a box is of one lattice point or looplet).

    >>> from compiler.imperative import Var, For, Store, Function, Buffer, Tagged
    >>> i = Var("i")
    >>> loop = Tagged("lattice:i:U", [For(i, 0, 4, [Tagged("zero", [Store("y", i, 0.0)])])])
    >>> ir_tree(Function("k", (Buffer("y", "float64"),), [loop])).node_tags
    {'n1': ['lattice:i:U'], 'n2': ['zero', 'lattice:i:U']}
    """
    t = TreeDot("ir")
    if isinstance(fn, Function):
        root = t.control(_head(fn))
        if fn.helpers:
            t.statements([f"helper {h.name}" for h in fn.helpers], root, "helpers")
        _block(t, fn.body, root, "", ())
    else:
        _block(t, fn, None, "", ())
    return t


def _flat(body, tags: tuple[str, ...]):
    """The statements of ``body`` with blocks and tags opened, each with the tags around it
    (innermost first)."""
    for s in (body.body if isinstance(body, Block) else (body,)):
        if isinstance(s, Block):
            yield from _flat(s, tags)
        elif isinstance(s, Tagged):
            yield from _flat(s.body, s.tags[::-1] + tags)
        else:
            yield s, tags


def _block(t: TreeDot, body, parent, edge: str, tags: tuple[str, ...]) -> None:
    run: list[str] = []
    run_tags = tags

    def flush():
        nonlocal run, edge
        if run:
            t.statements(run, parent, edge, run_tags)
            run, edge = [], ""

    for s, s_tags in _flat(body, tags):
        compound = isinstance(s, (For, While, If, Allocate)) or isinstance(getattr(s, "body", None), Block)
        if not compound:
            if s_tags != run_tags:
                flush()
                run_tags = s_tags
            run.extend(pretty(s).splitlines())
            continue
        flush()
        if isinstance(s, Allocate):
            # arrays allocated one inside the other (a workspace's values, bitmap, list) are one box
            chain = [s]
            inner_tags = s_tags
            while (len(inner := list(_flat(chain[-1].body, inner_tags))) == 1
                   and isinstance(inner[0][0], Allocate)):
                chain.append(inner[0][0])
                inner_tags = inner[0][1]
            me = t.control([_head(a) for a in chain], parent, edge, s_tags)
            _block(t, chain[-1].body, me, "", inner_tags)
            t.statements([pretty(a).splitlines()[-1] for a in reversed(chain)], me, "", s_tags)
        elif isinstance(s, If):
            me = t.control(_head(s), parent, edge, s_tags)
            scope = _head(s) == "{ … }"
            _block(t, s.then, me, "" if scope else "then", s_tags)
            # an else-if chain, as printed: each "else if" beside the first branch, not nested in
            # the one before (a chain of n tests stays two boxes deep)
            other = s.otherwise
            while other is not None and len(other.body) == 1 and isinstance(other.body[0], If):
                branch = t.control("else " + _head(other.body[0]), me, "", s_tags)
                _block(t, other.body[0].then, branch, "then", s_tags)
                other = other.body[0].otherwise
            if other is not None:
                _block(t, other, me, "else", s_tags)
        else:
            me = t.control(_head(s), parent, edge, s_tags)
            _block(t, s.body, me, "", s_tags)
        edge = ""
        run_tags = tags
    flush()
