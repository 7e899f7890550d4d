"""Index notation drawn as its expression tree: the ``parse`` step's drawing.

The assignment is the root (``=``, ``+=``, ...), its written access and its right-hand side below;
an operator holds its operands left to right, a reduction (``sum[j]``) its body, a shape operator
its operands (its own text with each operand as ``·``). Accesses are boxes, operators ellipses.
The text is the same tree indented. Each node's ``data["nodes"]`` entry says what it is (the
access's tensor and indices, the reduction's indices), as the printer's parts do, and its
``data["node_tags"]`` entry the tag of the C it produced (the lowering tags each statement
computing the expression with the nodes it computes: :mod:`compiler.notation.node_provenance`).

>>> from compiler.notation import parse
>>> text, dot, data = notation_tree(parse("y[i] = A[i, j] * x[j]"))
>>> print(text)
=
  y[i]
  sum[j]
    *
      A[i, j]
      x[j]
>>> data["nodes"]["n4"]
{'tensor': 'A', 'indices': ['i', 'j'], 'role': 'access'}
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..trace import Artifact
from .ast import Access, Assign, Call, IndexValue, Literal, Reduce, access_about, assign_spelling, op_reference, \
    reduction_name

__all__ = ["TreeNode", "expression_nodes", "node_tag", "notation_artifact", "notation_tree", "tree_drawing",
           "tree_nodes"]


def node_tag(ident: str) -> str:
    """The provenance tag of the code that node ``ident`` of a program's tree produced.

    >>> node_tag("n3")
    'expr:n3'
    """
    return f"expr:{ident}"


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _label(e) -> tuple[str, dict]:
    """A node's label and what it is."""
    if isinstance(e, Access):
        return str(e), {**{k: v for k, v in access_about(e, "read").items() if k != "mode"}, "role": "access"}
    if isinstance(e, Reduce):
        return (f"{reduction_name(e.op)}[{', '.join(i.name for i in e.indices)}]",
                {"indices": [i.name for i in e.indices], "role": "reduce"})
    if isinstance(e, Call):
        op = e.op
        return (op.symbol if not op.is_user and op.symbol and not op.symbol[0].isalpha() else op_reference(op),
                {"role": "operator"})
    if isinstance(e, (Literal, IndexValue)):
        return str(e), {"role": "value"}
    if hasattr(e, "notation_text"):   # a shape operator: its text, each operand a dot
        return e.notation_text(lambda _: "·"), {"role": "shape", "kind": type(e).__name__.lower()}
    return type(e).__name__, {"role": "node"}


@dataclass(frozen=True)
class TreeNode:
    """One node of the expression tree: its ``ident`` (``n0`` is the root, numbered in preorder),
    its label, what it is (``about``, as ``data["nodes"]`` records it), the tensors its subtree
    reads (``tensors``; the written access: its own tensor) and its parent's ident."""

    ident: str
    label: str
    about: dict = field(hash=False)
    tensors: frozenset = frozenset()
    parent: str | None = None
    depth: int = 0


def tree_nodes(program) -> list[TreeNode]:
    """The nodes of ``program``'s tree (an assignment or an expression), in preorder: the numbering
    its drawing and the compiler's tags of the code each node produced share.

    >>> from compiler.notation import parse
    >>> [(n.ident, n.label, sorted(n.tensors)) for n in tree_nodes(parse("y[i] = A[i] + x[i]"))]
    [('n0', '=', []), ('n1', 'y[i]', ['y']), ('n2', '+', ['A', 'x']), ('n3', 'A[i]', ['A']), ('n4', 'x[i]', ['x'])]
    """
    return [n for n, _ in expression_nodes(program)]


def expression_nodes(program) -> list[tuple[TreeNode, object]]:
    """:func:`tree_nodes` of ``program``, each with the program's node it stands for (the
    assignment for its root, the written access for the next).

    >>> from compiler.notation import parse
    >>> [(n.ident, str(e)) for n, e in expression_nodes(parse("y[i] = A[i] * 2"))][2:]
    [('n2', 'A[i] * 2'), ('n3', 'A[i]'), ('n4', '2')]
    """
    out: list[tuple[TreeNode, object]] = []

    def add(e, label: str, about: dict, tensors, depth: int, parent: str | None) -> str:
        ident = f"n{len(out)}"
        out.append((TreeNode(ident, label, about, frozenset(tensors), parent, depth), e))
        return ident

    def visit(e, depth: int, parent: str | None) -> None:
        me = add(e, *_label(e), _tensors(e), depth, parent)
        for c in e.children():
            visit(c, depth + 1, me)

    if isinstance(program, Assign):
        root = add(program, assign_spelling(program.op), {"role": "assign"}, (), 0, None)
        lhs, about = _label(program.lhs)
        add(program.lhs, lhs, {**about, "mode": "update"}, {program.lhs.tensor}, 1, root)
        visit(program.rhs, 1, root)
    else:
        visit(program, 0, None)
    return out


def _tensors(e) -> set[str]:
    if isinstance(e, Access):
        return {e.tensor}
    return {t for c in e.children() for t in _tensors(c)}


def notation_tree(program) -> tuple[str, str, dict]:
    """``(text, dot, data)`` of the tree of ``program`` (an assignment or an expression); see the
    module docstring. ``data["node_tags"]`` gives each node the tag of the code it produced
    (:func:`~compiler.notation.node_provenance.node_tag`), which the C artifact's provenance
    holds once a strategy lowered the program."""
    return tree_drawing(tree_nodes(program))


def tree_drawing(nodes: list[TreeNode]) -> tuple[str, str, dict]:
    """``(text, dot, data)`` of the trees of ``nodes`` (in preorder, each tree after the one before:
    a loop program's statements), drawn as :func:`notation_tree` draws one.

    >>> root, leaf = TreeNode("a0", "=", {"role": "assign"}), TreeNode("a1", "x", {"role": "value"}, parent="a0", depth=1)
    >>> text, dot, data = tree_drawing([root, leaf])
    >>> print(text), data["node_tags"]
    =
      x
    (None, {'a0': ['expr:a0'], 'a1': ['expr:a1']})
    """
    lines: list[str] = []
    # (compact: a tree is as deep as the expression nests, and its pane is a few hundred pixels tall)
    dot = ["digraph notation {", "  ranksep=0.25; nodesep=0.2;",
           '  node [fontname="monospace", fontsize=12, height=0.3, margin="0.08,0.03"];', "  edge [arrowsize=0.6];"]
    for n in nodes:
        lines.append("  " * n.depth + n.label)
        shape = "box" if n.about["role"] == "access" else "ellipse"
        dot.append(f'  {n.ident} [label="{_quote(n.label)}", shape={shape}];')
        if n.parent is not None:
            dot.append(f"  {n.parent} -> {n.ident};")
    return "\n".join(lines), "\n".join(dot + ["}"]), {"nodes": {n.ident: n.about for n in nodes},
                                                     "node_tags": {n.ident: [node_tag(n.ident)] for n in nodes}}


def notation_artifact(program) -> Artifact:
    """The ``notation-tree`` artifact of ``program``, drawn when first read (most traces never are)."""
    name = program.lhs.tensor if isinstance(program, Assign) else "expression"
    return Artifact.deferred("notation-tree", name, lambda: notation_tree(program))
