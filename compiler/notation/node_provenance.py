"""Which code each node of the parse step's expression tree produced, as provenance data.

A strategy tags each statement it emits to compute the program's expression (a lattice case's
update, a looplet leaf's assignment) with :func:`computing`: the tensors it reads and the one it
writes (``None``: a temporary), as an :class:`~compiler.imperative.ir.Origin` of kind
``"expression"``. Once the strategy is done, :func:`name_nodes` replaces each such tag by one tag
per tree node (:func:`~compiler.notation.drawing.node_tag`) the statement computes, nested
outermost first, so the C emitter records each node's C lines as it records a lattice point's:

- the assignment and its written access: every statement writing the program's output;
- an access: every statement reading its tensor;
- an operator over operands reading tensors: every statement reading all of them, and every
  statement writing the output that reads one of them: where the others are absent their fills
  are computed with (a union's case where only ``A`` is present computes ``A[i] + B[i]`` as
  ``A[i] + 0``, and one writing ``A[i] * 2`` computes ``A[i] * B[i]`` with ``B``'s fill 2);
- the right-hand side's root: every statement writing the output, even one writing a constant
  (where every operand is absent, the fill of the whole expression);
- an operator over an operand whose fill the statement computes with (its ``fills``): every
  statement writing the output with it (the looplets' fill region of ``A[i] * 2 + 1`` writes
  ``1.0``, folded from ``A``'s fill through ``*`` and ``+``: both are computed there; the access
  ``A[i]``, not read, is not);
- into a temporary, the statement's ``fills`` (tensors whose fills it computes with, as a sum's
  count of skipped coordinates times its summand's fill) stand for their accesses: the
  operators over them are computed, the accesses (not read) are not;
- a concatenation: every statement computing one of its operands (its value there is that
  operand's: the loop over ``A``'s part of ``concat((A[i], B[j]), ...)`` computes it);
- a node reading none (a literal): where its parent is computed.

A loop program is several statements, each drawn as a tree of its own (its ``statement_trees()``,
:mod:`compiler.looplets.statement_trees`, by where each starts: ``{(line, column): nodes}``): a
statement tagged with the ``line`` and ``column`` of the program's statement it computes is named
by that statement's tree (by its line alone where the line holds one statement); one of no known
statement is left untagged.

>>> from compiler.imperative.ir import Buffer, Function, Tagged, Var
>>> from compiler.notation import parse
>>> y = Buffer("y", "float64", "inout")
>>> fn = Function("k", (y,), computing([y.store(0, Var("a"))], ["A"], "y"))
>>> named = name_nodes(fn, parse("y[i] = A[i] + B[i]"))
>>> tags = []
>>> s = named.body.body[0]
>>> while isinstance(s, Tagged):
...     tags.append((s.tag, s.origin.nodes)); s = s.body.body[0]
>>> tags
[('expr:n0', ('n0',)), ('expr:n1', ('n1',)), ('expr:n2', ('n2',)), ('expr:n3', ('n3',))]
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from ..imperative.ir import Block, Function, Origin, Stmt, Tagged
from ..imperative.traverse import map_bodies
from .ast import Assign
from .drawing import TreeNode, node_tag, tree_nodes

__all__ = ["EXPRESSION", "computing", "name_nodes", "nodes_computed", "statement_at", "value_depth"]

#: the origin kind of a statement computing the program's expression
EXPRESSION = "expression"
# the tag of such a statement until name_nodes names its nodes
_UNNAMED = "expr"


def computing(stmts: Iterable[Stmt], reads: Iterable[str], writes: str | None, line: int | None = None,
              fills: Iterable[str] = (), column: int | None = None) -> list[Stmt]:
    """``stmts`` tagged as computing the program's expression from tensors ``reads`` into
    ``writes`` (the output's name; ``None`` for a temporary); ``line`` and ``column``: where the
    loop program's statement they compute starts; ``fills``: tensors whose fills they compute
    with in place of their entries. No statements: none.

    >>> computing([], ["A"], "y")
    []
    """
    stmts = list(stmts)
    if not stmts:
        return stmts
    return [Tagged(_UNNAMED, stmts, "", Origin(EXPRESSION, None, tuple(sorted(set(reads))), writes=writes,
                                               line=line, column=column, fills=tuple(sorted(set(fills)))))]


def nodes_computed(nodes: list[TreeNode], output: str, reads: Iterable[str], writes: str | None,
                   fills: Iterable[str] = ()) -> list[TreeNode]:
    """The ``nodes`` of a tree of an assignment to ``output`` that a statement reading ``reads``
    (computing with the fills of ``fills``) and writing ``writes`` computes (see the module
    docstring), in preorder.

    >>> from compiler.notation import parse
    >>> nodes = tree_nodes(parse("y[i] = A[i] * B[i] + C[i] * 2"))
    >>> [n.label for n in nodes_computed(nodes, "y", ["A", "B"], None)]
    ['*', 'A[i]', 'B[i]']
    >>> [n.label for n in nodes_computed(nodes, "y", ["C"], "y")]
    ['=', 'y[i]', '+', '*', 'C[i]', '2']
    >>> [n.label for n in nodes_computed(nodes, "y", [], "y")]   # (a value of no operand's)
    ['=', 'y[i]', '+']
    >>> [n.label for n in nodes_computed(nodes, "y", [], "y", fills=["A", "B", "C"])]   # (the fill where all are absent)
    ['=', 'y[i]', '+', '*', '*', '2']
    >>> [n.label for n in nodes_computed(nodes, "y", [], None, fills=["A", "B"])]
    ['*']
    >>> [n.label for n in nodes_computed(nodes, "y", ["C"], "y", fills=["A", "B"])]   # (A's and B's fills folded, plus C * 2)
    ['=', 'y[i]', '+', '*', '*', 'C[i]', '2']
    >>> nodes = tree_nodes(parse("y[l] = concat((A[i], B[j]), (i, j) -> l) * 2"))
    >>> [n.label for n in nodes_computed(nodes, "y", ["B"], "y")]
    ['=', 'y[l]', '*', 'concat((·, ·), (i, j) -> l)', 'B[j]', '2']
    """
    reads, fills = set(reads), set(fills)
    operands: dict[str | None, list[TreeNode]] = {}
    for n in nodes:
        operands.setdefault(n.parent, []).append(n)
    written = writes == output
    root = next((n.ident for n in nodes if n.about.get("role") == "assign"), None)
    rhs = next((n.ident for n in nodes if n.parent == root and n.about.get("mode") != "update"), None)
    done: set[str] = set()
    filled: set[str] = set()   # (accesses whose fills are computed with: not read)
    # (operands before the nodes over them)
    for n in reversed(nodes):
        if n.about.get("role") == "assign" or n.about.get("mode") == "update":
            ok = written
        elif n.about.get("role") == "access":
            ok = n.tensors <= reads
            if not ok and n.tensors <= fills:
                filled.add(n.ident)
        elif n.tensors:
            kids = [c.ident for c in operands.get(n.ident, ()) if c.tensors]
            valued = [c in done or c in filled for c in kids]
            if written:   # (an operand read, or its fill folded into the value written)
                ok = any(valued) or n.ident == rhs
            elif n.about.get("kind") == "concat":
                ok = any(valued)
            else:
                ok = bool(kids) and all(valued)
        else:
            continue
        if ok:
            done.add(n.ident)
    for n in nodes:   # (a literal where its parent is computed, outermost first)
        if not n.tensors and n.about.get("role") != "assign" and n.parent in done:
            done.add(n.ident)
    return [n for n in nodes if n.ident in done]


#: a statement computing more tree nodes than this is tagged once, standing for all of them
#: (:attr:`~compiler.imperative.ir.Tagged.also`), not by a tag nested per node
NESTED_NODES = 64


def name_nodes(fn: Function, program) -> Function:
    """``fn`` with each statement :func:`computing` tagged by the tree nodes of ``program`` it
    computes (see the module docstring): an assignment's tree, or the tree of a loop program's
    statement by where it starts (``program.statement_trees()``: ``{(line, column): nodes}``).
    Past :data:`NESTED_NODES` nodes, one tag stands for them all.

    >>> from compiler.imperative.ir import Buffer, Var
    >>> from compiler.notation import parse
    >>> y = Buffer("y", "float64", "inout")
    >>> wide = parse("y[i] = " + " + ".join(["A[i]"] * 40))
    >>> s = name_nodes(Function("k", (y,), computing([y.store(0, Var("a"))], ["A"], "y")), wide).body.body[0]
    >>> s.tag, len(s.also), len(s.origin.nodes), isinstance(s.body.body[0], Tagged)
    ('expr:n0', 80, 81, False)
    """
    if isinstance(program, Assign):
        trees = {None: tree_nodes(program)}
    else:
        ask = getattr(program, "statement_trees", None)
        trees = ask() if callable(ask) else {}

    known: dict = {}

    def named(o: Origin) -> list[TreeNode]:
        # (statements of one statement's tree reading the same tensors compute the same nodes: each case of
        # the loops and each local computing a shared subexpression, over a tree that doubles with each share)
        key = (o.line, o.column, o.operands, o.writes, o.fills)
        if key not in known:
            nodes = trees.get(None) if isinstance(program, Assign) else statement_at(trees, o.line, o.column)
            output = next((n.about.get("tensor") for n in nodes if n.about.get("mode") == "update"), None) \
                if nodes is not None else None
            known[key] = [] if nodes is None else nodes_computed(nodes, output, o.operands, o.writes, o.fills)
        return known[key]

    def origin(o: Origin, nodes: list[TreeNode]) -> Origin:
        return Origin(EXPRESSION, None, tuple(sorted(frozenset().union(*(n.tensors for n in nodes)))),
                      writes=o.writes, nodes=tuple(n.ident for n in nodes),
                      line=None if isinstance(program, Assign) else o.line,
                      column=None if isinstance(program, Assign) else o.column,
                      depth=value_depth(nodes[0]) if len(nodes) == 1 else None)

    def stmt(s: Stmt) -> list[Stmt]:
        if isinstance(s, Tagged) and s.tag == _UNNAMED:
            body = stmts(s.body.body)
            o, nodes = s.origin, named(s.origin)
            if len(nodes) > NESTED_NODES:
                # (one tag standing for them all: the tree of an expression reading a shared subexpression
                # doubles with each use, a tag nested per node nested past Python's recursion limit)
                first = nodes[0]
                return [Tagged(node_tag(first.ident), body, f"the expression tree's node {first.label} and the "
                               f"{len(nodes) - 1} nodes below it that this statement computes", origin(o, nodes),
                               also=tuple(node_tag(n.ident) for n in nodes[1:]))]
            for n in reversed(nodes):
                body = [Tagged(node_tag(n.ident), body, f"the expression tree's node {n.label}", origin(o, [n]))]
            return body
        return [map_bodies(s, stmts)]

    def stmts(ss) -> list[Stmt]:
        return [x for s in ss for x in stmt(s)]

    body = stmts(fn.body.body)
    return replace(fn, body=Block(tuple(body)))


def value_depth(node: TreeNode) -> int | None:
    """How deep ``node`` is in its statement's tree, or ``None`` for the assignment and its written
    access, which stand for the statement itself (:attr:`~compiler.imperative.ir.Origin.depth`).

    >>> from compiler.notation import parse
    >>> [value_depth(n) for n in tree_nodes(parse("y[i] = A[i] * 2"))]
    [None, None, 1, 2, 2]
    """
    if node.about.get("role") == "assign" or node.about.get("mode") == "update":
        return None
    return node.depth


def statement_at(trees: dict, line: int | None, column: int | None) -> list[TreeNode] | None:
    """The tree in ``trees`` (``{(line, column): nodes}``) of the statement starting at ``line`` and
    ``column``; where that line holds one statement alone, its tree whatever the column (a pass
    that rebuilt the statement may have dropped it); else None.

    >>> statement_at({(4, 8): ["y"], (5, 8): ["z"], (5, 20): ["w"]}, 4, 0), statement_at({(5, 8): ["z"], (5, 20): ["w"]}, 5, 0)
    (['y'], None)
    """
    if (line, column) in trees:
        return trees[(line, column)]
    same = [nodes for (n, _), nodes in trees.items() if n == line]
    return same[0] if len(same) == 1 else None
