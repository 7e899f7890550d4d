"""The shape operators of a statement as data, for the trace: what each consumes and produces, the
premise of Fig. 9 that gave its result's extent, and where in its printed text its name and its
binding (``(i, j) -> k``) are, so the explorer can mark them without reading the text back.

>>> from compiler.notation import parse
>>> from compiler.notation.infer import infer_shapes
>>> prog = parse("c[k] = collapse(A[i, j], (i, j) -> k)")
>>> data = shape_data(prog, infer_shapes(prog, {"A": (2, 3)}))
>>> data["extents"], data["operators"][0]["rule"]
({'i': '2', 'j': '3', 'k': '6'}, '|k| = |i|·|j| = 2·3 = 6')
>>> op = data["operators"][0]
>>> [op["text"][a:b] for a, b in op["marks"]]
['collapse', '(i, j) -> k']
"""

from __future__ import annotations

from ..trace import Artifact
from .ast import Access, walk
from .drawing import expression_nodes, node_tag
from .infer import ShapeInfo, extent_text
from .shape import Broadcast, Collapse, Concat, ShapeOp, Slice, Split


def _binding(node: ShapeOp) -> str:
    """The part of the operator's text that binds its indices (as :meth:`notation_text` prints it)."""
    if isinstance(node, Collapse):
        i, j = node.indices
        return f"({i}, {j}) -> {node.result}"
    if isinstance(node, Split):
        parts = ", ".join(f"{r}:{s}" if s is not None else str(r) for r, s in zip(node.results, node.sizes))
        return f"{node.index} -> ({parts})"
    if isinstance(node, Concat):
        return f"({', '.join(map(str, node.indices))}) -> {node.result}"
    if isinstance(node, Slice):
        return f"{node.index} -> {node.result}, ({node.start}, {node.stop}, {node.step})"
    if isinstance(node, Broadcast):
        return f"{node.index}:{node.size}" if node.size is not None else str(node.index)
    raise TypeError(f"not a shape operator: {node!r}")


def _rule(node: ShapeOp, info: ShapeInfo | None) -> str:
    """The premise that gave the operator's result its extent, with the numbers (``""`` without
    shape information)."""
    if info is None:
        return ""
    ext = info.extents

    def n(i) -> str:
        return extent_text(ext[i]) if i in ext else "?"

    if isinstance(node, Collapse):
        (i, j), k = node.indices, node.result
        return f"|{k}| = |{i}|·|{j}| = {n(i)}·{n(j)} = {n(k)}"
    if isinstance(node, Split):
        (i, j), k = node.results, node.index
        return f"|{k}| = |{i}|·|{j}|: {n(k)} = {n(i)}·{n(j)}"
    if isinstance(node, Concat):
        parts = " + ".join(f"|{i}|" for i in node.indices)
        values = " + ".join(n(i) for i in node.indices)
        return f"|{node.result}| = {parts} = {values} = {n(node.result)}"
    if isinstance(node, Slice):
        return (f"|{node.result}| = {node.count}: {node.index} from {node.start} by {node.step} "
                f"while short of {node.stop}")
    return f"|{node.index}| = {n(node.index)}, a new index"


def operator_data(node: ShapeOp, info: ShapeInfo | None = None) -> dict:
    """One operator as data: kind, text, consumed and produced indices, rule, and ``marks``: the
    ``[start, end)`` offsets in ``text`` of its name and of its binding."""
    text = str(node)
    kind = type(node).__name__.lower()
    binding = _binding(node)
    # a broadcast binds its index first; every other operator binds after its operand(s)
    at = len(kind) + 1 if isinstance(node, Broadcast) else text.rfind(binding)
    consumed = [str(i) for k in range(len(node.children())) for i in node.consumed(k)]
    return {"kind": kind, "text": text, "marks": [[0, len(kind)], [at, at + len(binding)]],
            "consumes": consumed, "produces": [str(i) for i in node.produced()], "rule": _rule(node, info)}


def shape_data(program, info: ShapeInfo | None = None) -> dict:
    """Every shape operator of ``program`` (outermost first) and constant index, with each index's
    extent and where it came from, as JSON-able data (the ``shapes`` step's ``data``). Each operator
    has the ``tag`` of its node in the program's tree (:func:`~compiler.notation.drawing.node_tag`),
    so the explorer colours its name as the drawing colours its box.

    >>> from compiler.notation import parse
    >>> shape_data(parse("y[k] = 2 * collapse(A[i, j], (i, j) -> k)"))["operators"][0]["tag"]
    'expr:n4'
    """
    tags = {id(e): node_tag(n.ident) for n, e in expression_nodes(program)}
    operators = [{**operator_data(n, info), **({"tag": tags[id(n)]} if id(n) in tags else {})}
                 for n in walk(program) if isinstance(n, ShapeOp)]
    constants = [{"access": str(n), "modes": [m for m, i in enumerate(n.indices) if isinstance(i, int)]}
                 for n in walk(program) if isinstance(n, Access) and any(isinstance(i, int) for i in n.indices)]
    out = {"operators": operators, "constants": constants}
    if info is not None:
        out["extents"] = {str(i): extent_text(e) for i, e in info.extents.items()}
        out["sources"] = {str(i): str(s) for i, s in info.sources.items()}
    return out


def shape_text(data: dict) -> str:
    """:func:`shape_data` as text: each index's extent and where it came from, then each
    operator's rule.

    >>> from compiler.notation import parse
    >>> print(shape_text(shape_data(parse("y[k] = slice(x[j], j -> k, (1, 4, 2))"))))
    slice(x[j], j -> k, (1, 4, 2))  consumes j, makes k
    """
    lines = [f"|{i}| = {e}   from {data.get('sources', {}).get(i, '?')}" for i, e in data.get("extents", {}).items()]
    for op in data["operators"]:
        what = f"consumes {', '.join(op['consumes'])}, makes {', '.join(op['produces'])}"
        lines.append(f"{op['text']}  {what}" + (f": {op['rule']}" if op["rule"] else ""))
    for c in data["constants"]:
        lines.append(f"{c['access']}  a constant index in mode(s) {', '.join(map(str, c['modes']))}")
    return "\n".join(lines)


def shape_artifact(data: dict) -> Artifact:
    """The ``shapes`` artifact of a statement's :func:`shape_data` (text; the data for a table)."""
    return Artifact("shapes", "extents and shape operators", shape_text(data), data=data)


__all__ = ["operator_data", "shape_artifact", "shape_data", "shape_text"]
