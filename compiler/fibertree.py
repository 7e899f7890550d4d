"""Draw a tensor as a coordinate (fiber) tree, as the TACO and Finch papers do.

The root is the tensor; each storage level is one rank of nodes labelled with
their coordinates (a dense level shows every coordinate, a sparse level only the
stored ones); the leaves carry the values. Fibers with more than ``max_children``
children show the first ones and a "…" node saying how many were left out, and a rank's
``2 * max_children`` places are shared among its parents (at least one child each), so a huge
tensor still draws at a size a pane shows readably.

>>> import numpy as np
>>> from compiler.tensor import Tensor
>>> A = Tensor.from_numpy(np.array([[0, 1.5], [0, 0], [2.0, 0]]), "csr")
>>> print(fiber_tree_text(A, "A"))
A: Dense(SparseList(Element(0.0))) shape=(3, 2) fill=0.0
i=0
  j=1: 1.5
i=1
i=2
  j=0: 2.0
"""

from __future__ import annotations

import numpy as np

from .trace import Artifact

_VARS = "ijklmnopqrstuvwxyz"


def _var(mode: int) -> str:
    return _VARS[mode] if mode < len(_VARS) else f"i{mode}"


def _value(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (float, np.floating)):
        s = f"{float(v):.6g}"
        return s + ".0" if s.lstrip("-").isdigit() else s  # keep floats looking like floats
    return str(v)


def _coord(coords, r: int) -> str:
    if len(coords) == 1:
        return str(int(coords[0][r]))
    return "(" + ", ".join(str(int(c[r])) for c in coords) + ")"


def _level_modes(tensor) -> list[tuple[int, ...]]:
    """The modes each storage level consumes."""
    out, k = [], 0
    for lvl in tensor.levels:
        out.append(tuple(tensor.mode_order[k:k + lvl.nmodes]))
        k += lvl.nmodes
    return out


def _header(tensor, name: str) -> str:
    return f"{name}: {tensor.format} shape={tensor.shape} fill={tensor.fill!r}"


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def fiber_tree_dot(tensor, name: str = "A", max_children: int = 8) -> str:
    """Graphviz DOT source of ``tensor``'s coordinate tree (see the module docstring).

    >>> import numpy as np
    >>> from compiler.tensor import Tensor
    >>> dot = fiber_tree_dot(Tensor.from_numpy(np.array([0, 4.0, 0, 5.0]), "sv"), "x")
    >>> '"x"' in dot and 'label="1"' in dot and 'label="5.0"' in dot and 'label="0"' not in dot
    True
    """
    # a rank's width is what a pane shows readably at "fit": about two fibers' worth of nodes,
    # shared among the rank's parents (each keeps a slot for its "… more" node), so a deep fiber
    # of a big tensor draws a few children of each parent rather than 64 hairlines
    max_rank = 2 * max_children
    lines = [f'digraph "{_esc(name)}" {{',
             "  node [fontname=\"Helvetica\", fontsize=10];",
             "  edge [arrowhead=none];",
             f'  root [label="{_esc(name)}", shape=box, tooltip="{_esc(_header(tensor, name))}"];']
    counter = [0]

    def fresh() -> str:
        counter[0] += 1
        return f"n{counter[0]}"

    def rank(level_label: str, ids: list[str], rank_no: int):
        legend = f"legend{rank_no}"
        lines.append(f'  {legend} [label="{_esc(level_label)}", shape=plaintext, fontcolor=gray40];')
        lines.append(f"  {{rank=same; {legend}; {'; '.join(ids)}}}")
        return legend

    frontier = [("root", 0)]  # (node id, position) of the nodes whose fibers come next
    prev_legend = None
    modes = _level_modes(tensor)
    for k, lvl in enumerate(tensor.levels):
        nxt, ids = [], []
        share = max(1, min(max_children, max_rank // max(len(frontier), 1) - 1))
        for node, p in frontier:
            coords, child, total = lvl.fiber(p, share)
            for r in range(len(child)):
                nid = fresh()
                ids.append(nid)
                lines.append(f'  {nid} [label="{_coord(coords, r)}", shape=circle];')
                lines.append(f"  {node} -> {nid};")
                nxt.append((nid, int(child[r])))
            if total > len(child):
                nid = fresh()
                ids.append(nid)
                lines.append(f'  {nid} [label="… {total - len(child)} more", shape=plaintext];')
                lines.append(f"  {node} -> {nid} [style=dashed];")
        vars_ = ",".join(_var(m) for m in modes[k])
        legend = rank(f"{vars_}: {lvl.name}", ids or [], k)
        if prev_legend:
            lines.append(f"  {prev_legend} -> {legend} [style=invis];")
        prev_legend = legend
        frontier = nxt
    # the leaves: one value per innermost stored node
    ids = []
    values = tensor.leaf.values_at(np.array([p for _, p in frontier], dtype=np.int64))
    for (node, _), v in zip(frontier, values):
        nid = fresh()
        ids.append(nid)
        lines.append(f'  {nid} [label="{_esc(_value(v))}", shape=box, style=filled, fillcolor="#eef3fb"];')
        lines.append(f"  {node} -> {nid};")
    legend = rank(f"values: {tensor.leaf.name}", ids, len(tensor.levels))
    if prev_legend:
        lines.append(f"  {prev_legend} -> {legend} [style=invis];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def fiber_tree_text(tensor, name: str = "A", max_children: int = 8) -> str:
    """The coordinate tree as indented text, one line per node (see the module docstring)."""
    modes = _level_modes(tensor)
    out = [_header(tensor, name)]
    levels = tensor.levels
    if not levels:
        out.append(f"value: {_value(tensor.leaf.values_at(np.zeros(1, dtype=np.int64))[0])}")
        return "\n".join(out)

    def walk(k: int, p: int, depth: int):
        lvl = levels[k]
        coords, child, total = lvl.fiber(p, max_children)
        names = ",".join(_var(m) for m in modes[k])
        indent = "  " * depth
        last = k == len(levels) - 1
        vals = tensor.leaf.values_at(child) if last else None
        for r in range(len(child)):
            head = f"{indent}{names}={_coord(coords, r)}"
            if last:
                out.append(f"{head}: {_value(vals[r])}")
            else:
                out.append(head)
                walk(k + 1, int(child[r]), depth + 1)
        if total > len(child):
            out.append(f"{indent}… ({total - len(child)} more)")

    walk(0, 0, 0)
    return "\n".join(out)


def fiber_tree_artifact(tensor, name: str | None = None, max_children: int = 8) -> Artifact:
    """A ``fiber-tree`` trace artifact holding both drawings of ``tensor``.

    >>> import numpy as np
    >>> from compiler.tensor import Tensor
    >>> a = fiber_tree_artifact(Tensor.from_numpy(np.eye(2), "csr", name="B"))
    >>> a.kind, a.name, a.dot.startswith('digraph "B"')
    ('fiber-tree', 'B', True)
    """
    name = name or tensor.name or "A"
    return Artifact("fiber-tree", name, fiber_tree_text(tensor, name, max_children),
                    fiber_tree_dot(tensor, name, max_children),
                    {"format": str(tensor.format), "shape": list(tensor.shape), "nnz": tensor.nnz})
