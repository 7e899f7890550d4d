"""Index notation drawn as its expression tree: the ``parse`` step's drawing.

The assignment is the root (``=``, ``+=``, ...), its written access and its right-hand side below;
an operator holds its operands left to right, a reduction (``sum[j]``) its body, a shape operator
its operands (its own text with each operand as ``·``). Accesses are boxes, operators ellipses.
The text is the same tree indented. Each node's ``data["nodes"]`` entry says what it is (the
access's tensor and indices, the reduction's indices), as the printer's parts do.

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

from ..trace import Artifact
from .ast import Access, Assign, Call, IndexValue, Literal, Reduce, access_about, assign_spelling, op_reference, \
    reduction_name

__all__ = ["notation_artifact", "notation_tree"]


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
        return e.notation_text(lambda _: "·"), {"role": "shape"}
    return type(e).__name__, {"role": "node"}


def notation_tree(program) -> tuple[str, str, dict]:
    """``(text, dot, data)`` of the tree of ``program`` (an assignment or an expression); see the
    module docstring."""
    lines: list[str] = []
    # (compact: a tree is as deep as the expression nests, and its pane is a few hundred pixels tall)
    dot = ["digraph notation {", "  ranksep=0.25; nodesep=0.2;",
           '  node [fontname="monospace", fontsize=12, height=0.3, margin="0.08,0.03"];', "  edge [arrowsize=0.6];"]
    nodes: dict[str, dict] = {}

    def add(label: str, about: dict, depth: int, parent: str | None) -> str:
        ident = f"n{len(nodes)}"
        nodes[ident] = about
        lines.append("  " * depth + label)
        shape = "box" if about["role"] == "access" else "ellipse"
        dot.append(f'  {ident} [label="{_quote(label)}", shape={shape}];')
        if parent is not None:
            dot.append(f"  {parent} -> {ident};")
        return ident

    def visit(e, depth: int, parent: str | None) -> None:
        me = add(*_label(e), depth, parent)
        for c in e.children():
            visit(c, depth + 1, me)

    if isinstance(program, Assign):
        root = add(assign_spelling(program.op), {"role": "assign"}, 0, None)
        lhs, about = _label(program.lhs)
        add(lhs, {**about, "mode": "update"}, 1, root)
        visit(program.rhs, 1, root)
    else:
        visit(program, 0, None)
    return "\n".join(lines), "\n".join(dot + ["}"]), {"nodes": nodes}


def notation_artifact(program) -> Artifact:
    """The ``notation-tree`` artifact of ``program``, drawn when first read (most traces never are)."""
    name = program.lhs.tensor if isinstance(program, Assign) else "expression"
    return Artifact.deferred("notation-tree", name, lambda: notation_tree(program))
