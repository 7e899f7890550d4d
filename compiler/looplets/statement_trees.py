"""A loop program's statements as expression trees: the ``program`` step's drawing, and the trees
whose nodes tag the code they compute (:mod:`compiler.notation.node_provenance`), as index
notation's one statement is drawn by the ``parse`` step.

Each assignment is a tree of its own: its spelling (``=``, ``+=``, ``<<max>>=``) at the root, the
access it writes and its right-hand side below, an operator over its operands, accesses and values
as leaves. A statement is known by where it starts in the program, its line and column (the
lowering tags the code of a statement with them): node ``m`` of the statement at line ``L`` is
``l<L>n<m>``, its code's tag ``expr:l<L>n<m>``; statements sharing a line (``y[i] = a[i]; z[i] =
b[i]``) are told apart by their columns, node ``m`` of the one at column ``C`` being
``l<L>c<C>n<m>``. Statements the program does not place apart (no line, or one line and column,
as a program built without source may give) are not guessed: none of them is drawn.

>>> from compiler.looplets.language import loop_program
>>> @loop_program
... def axpy(y, a, x):
...     for i in _:
...         y[i] += a[i] * x[i]
>>> trees = statement_trees(axpy.body)
>>> [(n.ident, n.label, sorted(n.tensors)) for nodes in trees.values() for n in nodes]
[('l4n0', '+=', []), ('l4n1', 'y[i]', ['y']), ('l4n2', '*', ['a', 'x']), ('l4n3', 'a[i]', ['a']), ('l4n4', 'x[i]', ['x'])]
>>> @loop_program
... def two(y, z, a):
...     for i in _:
...         y[i] = a[i]; z[i] = a[i] * 2
>>> {key: [n.ident for n in nodes][:2] for key, nodes in statement_trees(two.body).items()}
{(4, 8): ['l4c8n0', 'l4c8n1'], (4, 21): ['l4c21n0', 'l4c21n1']}
"""

from __future__ import annotations

from collections import Counter

from ..algebra import Operator
from ..notation.drawing import TreeNode, tree_drawing
from ..trace import Artifact
from .program import Access, Assign, Call, TensorRef, assign_text, show_expr, walk

__all__ = ["statement_artifact", "statement_trees"]


def _label(e) -> tuple[str, dict, set]:
    """A node's label, what it is, and the tensors its subtree reads."""
    if isinstance(e, Access):
        read = {n.tns.name for n in walk(e) if isinstance(n, Access) and isinstance(n.tns, TensorRef)}
        about = {"role": "access", "indices": [show_expr(i) for i in e.idxs]}
        if isinstance(e.tns, TensorRef):
            about["tensor"] = e.tns.name
        return show_expr(e), about, read
    if isinstance(e, Call):
        op = e.op
        if isinstance(op, Operator):
            symbol = op.symbol if not op.is_user and op.symbol and not op.symbol[0].isalpha() else op.name
        else:
            symbol = str(op)   # (coalesce, ifelse)
        return symbol, {"role": "operator"}, set()
    return show_expr(e), {"role": "value"}, set()


def _tree(s: Assign, prefix: str) -> list[TreeNode]:
    out: list[TreeNode] = []

    def add(label: str, about: dict, tensors, depth: int, parent: str | None) -> str:
        ident = f"{prefix}n{len(out)}"
        out.append(TreeNode(ident, label, about, frozenset(tensors), parent, depth))
        return ident

    def visit(e, depth: int, parent: str) -> frozenset:
        label, about, read = _label(e)
        me = add(label, about, read, depth, parent)
        if isinstance(e, Call):
            at = len(out) - 1
            for a in e.args:
                read |= visit(a, depth + 1, me)
            out[at] = TreeNode(me, label, about, frozenset(read), parent, depth)
        return frozenset(read)

    root = add(assign_text(s.op), {"role": "assign"}, (), 0, None)
    label, about, read = _label(s.lhs)
    add(label, {**about, "mode": "update"}, read, 1, root)
    visit(s.rhs, 1, root)
    return out


def statement_trees(body) -> dict[tuple[int, int], list[TreeNode]]:
    """``{(line, column): nodes}``: the tree of each assignment of the program ``body`` at a place
    of its own, its nodes in preorder (see the module docstring)."""
    stmts = [s for s in walk(body) if isinstance(s, Assign)]
    places = Counter((s.line, s.column) for s in stmts)
    lines = Counter(s.line for s in stmts)
    return {(s.line, s.column): _tree(s, f"l{s.line}" if lines[s.line] == 1 else f"l{s.line}c{s.column}")
            for s in stmts if s.line and places[(s.line, s.column)] == 1}


def statement_artifact(body, name: str) -> Artifact:
    """The ``notation-tree`` artifact of a loop program's statements (:func:`statement_trees`), one
    tree after another, drawn when first read; its ``data["node_tags"]`` give each node the tag of
    the code it computes."""
    def draw():
        return tree_drawing([n for nodes in statement_trees(body).values() for n in nodes])
    return Artifact.deferred("notation-tree", name, draw)
