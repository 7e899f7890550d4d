"""An array expression as the trace shows it: a tree of its nodes (operator, shape, dtype), each with
the index notation it became in the one statement, or why it was materialized instead.

The ``array`` step carries it as an ``array-expression`` artifact: text (the tree indented), DOT
(a drawing, materialized nodes dashed), ``data["nodes"]`` (the same as JSON) and
``data["node_tags"]``: each node's provenance tags, those of the nodes of the statement's own tree
(:func:`compiler.notation.drawing.expression_nodes`) that hold the very index notation it became,
so the explorer links a node and the C lines that compute it as it links the index notation's
tree (the lowering tags those lines: :mod:`compiler.notation.node_provenance`); and that tree's
nodes (``data["tree"]``: what each is, as a ``notation-tree`` drawing's ``data["nodes"]``, and
``data["tree_tags"]``), so the statement's printed accesses take their nodes' tags too.

>>> import numpy as np
>>> from compiler.tensor import Tensor
>>> from compiler.array.fuse import Emitter, notation
>>> from compiler.array.nodes import Leaf, ShapeOp
>>> a = Leaf(Tensor.from_numpy(np.eye(4), "csr", name="M"))
>>> node = ShapeOp("index", (a,), (((0, 4, 2), (0, 4, 1)),), (2, 4))
>>> assign, _, em = notation(node, Emitter(None, False, fuse_shapes=True))
>>> print(assign)
out[i, j] = slice(M[k, j], k -> i, (0, 4, 2))
>>> art = expression_artifact(node, em, assign)
>>> print(art.text)
index [0:4:2, :]  (2, 4) float64  -> slice(M[k, j], k -> i, (0, 4, 2))
  M (csr)  (4, 4) float64
>>> art.data["node_tags"]
{'n0': ['expr:n2']}
"""

from __future__ import annotations

from typing import Any

from ..notation.drawing import expression_nodes as statement_nodes
from ..notation.drawing import node_tag
from ..trace import Artifact
from .nodes import Broadcast, Leaf, Map, Node, Permute, Reduction, Scalar, ShapeOp


def index_items(node: ShapeOp) -> str:
    """The items of an ``index`` node as Python writes them (``0:6:2``, ``3``; ``:`` for the whole axis; ``5::-1``
    down to the first entry, whose stop numpy writes as none).

    >>> import numpy as np
    >>> from compiler.array import asarray
    >>> index_items(asarray(np.ones((6, 4)))[::-2, 1].node), index_items(asarray(np.ones((6, 4)))[1:3].node)
    ('5::-2, 1', '1:3, :')
    """
    (items,) = node.params
    child = node.args[0]
    shown = []
    for k, it in enumerate(items):
        if not isinstance(it, tuple):
            shown.append(str(it))
            continue
        start, stop, step = it
        if (start, stop, step) == (0, child.shape[k] if k < child.ndim else None, 1):
            shown.append(":")
            continue
        shown.append(f"{start}:{'' if stop < 0 else stop}" + (f":{step}" if step != 1 else ""))
    return ", ".join(shown)


def expression_text(node: Node, name) -> str:
    """The expression as text, ``name(tensor)`` naming stored tensors as the statement does.

    >>> import numpy as np
    >>> from compiler.array import asarray, concat
    >>> a, x = asarray(np.ones((4, 3))), asarray(np.ones(3))
    >>> expression_text((a @ x).node, lambda t: "A" if t.ndim == 2 else "x")
    'add-reduce(mul(A, broadcast(x, (1, 3))), axes=(1,))'
    >>> expression_text(concat([a[1:3], a[::2]]).node, lambda t: "A")
    'concat((A[1:3, :], A[0:4:2, :]), axis=0)'
    """
    def text(n):
        if isinstance(n, Leaf):
            return name(n.tensor)
        if isinstance(n, Scalar):
            return repr(n.value)
        if isinstance(n, Map):
            return f"{n.op.name}({', '.join(text(a) for a in n.args)})"
        if isinstance(n, Reduction):
            return f"{n.op.name}-reduce({text(n.child)}, axes={n.axes})"
        if isinstance(n, Permute):
            return f"permute_dims({text(n.child)}, {n.axes})"
        if isinstance(n, Broadcast):
            return f"broadcast({text(n.child)}, {n.shape})"
        if n.kind == "index":
            return f"{text(n.args[0])}[{index_items(n)}]"
        if n.kind == "reshape":
            return f"reshape({text(n.args[0])}, {n.shape})"
        return f"{n.kind}(({', '.join(text(a) for a in n.args)}), axis={n.params[0]})"
    return text(node)


def node_label(node: Node, name) -> str:
    """What a node does, in the array language's terms; ``name(tensor)`` names stored tensors."""
    if isinstance(node, Leaf):
        short = getattr(node.tensor.format, "shorthand", None)
        return f"{name(node.tensor)} ({short})" if short else name(node.tensor)
    if isinstance(node, Scalar):
        return repr(node.value)
    if isinstance(node, Map):
        return node.op.name
    if isinstance(node, Reduction):
        return f"{node.op.name} over axes {node.axes}" + (" (keepdims)" if node.keepdims else "")
    if isinstance(node, Permute):
        return f"permute_dims {node.axes}"
    if isinstance(node, Broadcast):
        return f"broadcast to {node.shape}"
    if isinstance(node, ShapeOp):
        if node.kind == "index":
            return f"index [{index_items(node)}]"
        if node.kind in ("concat", "stack"):
            return f"{node.kind} axis {node.params[0]}"
        return f"{node.kind} to {node.shape}"
    return type(node).__name__


def expression_nodes(root: Node, em) -> list[dict[str, Any]]:
    """The nodes of ``root`` in pre-order, each once (a graph may share a node): ``id``, ``label``,
    ``shape``, ``dtype``, ``children`` (ids), ``notation`` (what the emitter ``em`` made of it,
    or ``None``) and ``fate`` (why it was materialized, or ``""``)."""
    ids: dict[int, str] = {}
    out: list[dict[str, Any]] = []

    def visit(node: Node) -> str:
        if id(node) in ids:
            return ids[id(node)]
        ident = ids[id(node)] = f"n{len(ids)}"
        entry: dict[str, Any] = {"id": ident}
        out.append(entry)
        emitted = em.emitted.get(id(node))
        entry.update(label=node_label(node, em.name), shape=list(node.shape), dtype=node.dtype.name,
                     notation=None if emitted is None else str(emitted), fate=em.fates.get(id(node), ""))
        entry["children"] = [visit(c) for c in node.children()]
        return ident

    visit(root)
    return out


def _text(nodes: list[dict]) -> str:
    by_id = {n["id"]: n for n in nodes}
    lines: list[str] = []
    seen: set[str] = set()

    def show(ident: str, depth: int) -> None:
        n = by_id[ident]
        became = (f"  [{n['fate']}]" if n["fate"] else "") + (
            f"  -> {n['notation']}" if n["notation"] is not None else "")
        again = "  (shared, as above)" if ident in seen else ""
        lines.append(f"{'  ' * depth}{n['label']}  {tuple(n['shape'])} {n['dtype']}{became}{again}")
        if ident not in seen:
            seen.add(ident)
            for c in n["children"]:
                show(c, depth + 1)

    show(nodes[0]["id"], 0)
    return "\n".join(lines)


def _quote(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def _dot(nodes: list[dict]) -> str:
    lines = ["digraph array {", '  node [shape=box, fontname="monospace"];']
    for n in nodes:
        label = [n["label"], f"{tuple(n['shape'])} {n['dtype']}"]
        style = ""
        if n["fate"]:
            # materialized: computed apart, before the kernel runs
            label.append("its own kernel" if n["fate"].startswith("own kernel") else "materialized")
            style = ', style="dashed,filled", fillcolor="#fde2c4"'
        text = "\\n".join(map(_quote, label))   # (DOT's line break)
        lines.append(f'  {n["id"]} [label="{text}"{style}];')
        for c in n["children"]:
            lines.append(f"  {n['id']} -> {c};")
    lines.append("}")
    return "\n".join(lines)


def node_tags(root: Node, em, statement) -> dict[str, list[str]]:
    """``{array node id: tags}``: the tags of the nodes of ``statement``'s tree (the assignment
    ``em`` made of ``root``) that are the index notation each array node became, found by identity
    (a node whose notation is not in the statement, one materialized apart, gets none)."""
    where: dict[int, list[str]] = {}
    for tree_node, expr in statement_nodes(statement):
        where.setdefault(id(expr), []).append(node_tag(tree_node.ident))
    ids: dict[int, str] = {}
    out: dict[str, list[str]] = {}

    def visit(node: Node) -> None:
        if id(node) in ids:
            return
        ids[id(node)] = ident = f"n{len(ids)}"   # (expression_nodes' numbering: pre-order, each once)
        emitted = em.emitted.get(id(node))
        if emitted is not None and id(emitted) in where:
            out[ident] = where[id(emitted)]
        for c in node.children():
            visit(c)

    visit(root)
    return out


def expression_artifact(root: Node, em, statement=None) -> Artifact:
    """The ``array-expression`` artifact of ``root`` as the emitter ``em`` lowered it into the
    assignment ``statement`` (its nodes linked to the code of theirs; without it, to none), made when
    first read: an array expression computed in a loop records it at each compute, and most traces are
    never looked at (it was a quarter of the front end's time per compute)."""
    def make():
        nodes = expression_nodes(root, em)
        data = {"nodes": nodes}
        if statement is not None:
            data["node_tags"] = node_tags(root, em, statement)
            # the statement's own tree (what each node is, and its tag), in preorder: the explorer
            # tags the statement's printed accesses and reductions with their nodes' tags by it
            tree = [n for n, _ in statement_nodes(statement)]
            data["tree"] = {n.ident: n.about for n in tree}
            data["tree_tags"] = {n.ident: [node_tag(n.ident)] for n in tree}
        return _text(nodes), _dot(nodes), data
    return Artifact.deferred("array-expression", "array expression", make)


__all__ = ["expression_artifact", "expression_nodes", "expression_text", "index_items", "node_label", "node_tags"]
