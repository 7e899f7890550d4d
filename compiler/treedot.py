"""Program trees as Graphviz drawings that stay readable when the program is large.

The CFIR and the imperative IR are drawn as trees laid out left to right, as code indents
(:mod:`compiler.lattice.cfir_dot`, :mod:`compiler.imperative.ir_dot`): control (loops, branches, cases, allocations) as rounded
boxes, straight-line code as square boxes. A run of straight-line statements is one box, and a
long run shows its first lines and how many more there are; a line longer than
:data:`MAX_CHARS` is cut with ``…``. Each box's tooltip holds its full text, so nothing is lost.

Provenance: a box may carry the tags of the code it shows (``tags=``, innermost first: the
``Tagged`` nodes of the IR around it, the lattice point of a CFIR loop or case). They are kept
beside the DOT, ``{node id: tags}`` (:attr:`TreeDot.node_tags`, recorded as the artifact's
``data["node_tags"]``), so the explorer links a box and the C lines of its tags as data, never
by reading labels back.

>>> t = TreeDot("ir")
>>> loop = t.control("for (int64 i = 0; i < n; i++)", tags=("lattice:i:U",))
>>> _ = t.statements([f"s{k} = {k};" for k in range(5)], loop)
>>> t.node_tags
{'n0': ['lattice:i:U']}
>>> print(t.source())
digraph ir {
  rankdir=LR; ranksep=0.25; nodesep=0.15;
  node [shape=box, fontname="monospace", fontsize=12];
  edge [fontname="monospace", fontsize=10];
  n0 [label="for (int64 i = 0; i < n; i++)", style=rounded, tooltip="for (int64 i = 0; i < n; i++)"];
  n1 [label="s0 = 0;\\ls1 = 1;\\l… 3 more (5 statements)\\l", tooltip="s0 = 0;\\ns1 = 1;\\ns2 = 2;\\ns3 = 3;\\ns4 = 4;"];
  n0 -> n1;
}
"""

from __future__ import annotations

__all__ = ["MAX_CHARS", "RUN_SHOWN", "TOOLTIP_LINES", "TreeDot", "short"]

#: A label line longer than this is cut (its box's tooltip has it whole).
MAX_CHARS = 40
#: A run of more statements than this shows its first ``RUN_SHOWN - 1`` and a count.
RUN_SHOWN = 3
#: A tooltip lists at most this many lines (then how many more).
TOOLTIP_LINES = 40


def short(line: str, limit: int = MAX_CHARS) -> str:
    """``line`` cut to ``limit`` characters, ending in ``…`` when cut.

    >>> short("abcdef", 4)
    'abc…'
    """
    line = line.strip()
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


class TreeDot:
    """A DOT tree built node by node; each method returns the new node's id."""

    def __init__(self, name: str):
        self.name = name
        self.lines: list[str] = []
        self.count = 0
        #: ``{node id: provenance tags}`` of the boxes drawn with tags (innermost first)
        self.node_tags: dict[str, list[str]] = {}

    def _node(self, label: str, tooltip: str, parent: str | None, edge: str, attrs: str,
              tags: tuple[str, ...] = ()) -> str:
        me = f"n{self.count}"
        self.count += 1
        if tags:
            self.node_tags[me] = list(dict.fromkeys(tags))
        self.lines.append(f'  {me} [label="{label}"{attrs}, tooltip="{tooltip}"];')
        if parent is not None:
            self.lines.append(f"  {parent} -> {me}" + (f' [label="{_quote(edge)}"]' if edge else "") + ";")
        return me

    def control(self, line: str | list[str], parent: str | None = None, edge: str = "",
                tags: tuple[str, ...] = ()) -> str:
        """A loop, branch, case or allocation in a rounded box: one line, or a few that open
        one after the other (nested allocations), counted as :meth:`statements` are."""
        return self._box([line] if isinstance(line, str) else line, parent, edge, ", style=rounded", "lines", tags)

    def statements(self, lines: list[str], parent: str | None = None, edge: str = "",
                   tags: tuple[str, ...] = ()) -> str:
        """A run of straight-line statements as one square box (long runs counted)."""
        return self._box(lines, parent, edge, "", "statements", tags)

    def _box(self, lines: list[str], parent, edge: str, attrs: str, what: str, tags: tuple[str, ...]) -> str:
        lines = [x.strip() for x in lines if x.strip()]
        if len(lines) == 1:
            return self._node(_quote(short(lines[0])), _quote(lines[0]), parent, edge, attrs, tags)
        shown = lines if len(lines) <= RUN_SHOWN else lines[:RUN_SHOWN - 1]
        label = "".join(_quote(short(x)) + "\\l" for x in shown)
        if len(shown) < len(lines):
            label += f"… {len(lines) - len(shown)} more ({len(lines)} {what})\\l"
        tip = lines[:TOOLTIP_LINES] + ([f"… {len(lines) - TOOLTIP_LINES} more"] if len(lines) > TOOLTIP_LINES else [])
        return self._node(label, "\\n".join(_quote(x) for x in tip), parent, edge, attrs, tags)

    def source(self) -> str:
        # left to right, as code indents: siblings stack down in order, and a long block stays narrow
        head = [f"digraph {self.name} {{", "  rankdir=LR; ranksep=0.25; nodesep=0.15;", '  node [shape=box, fontname="monospace", fontsize=12];',
                '  edge [fontname="monospace", fontsize=10];']
        return "\n".join(head + self.lines + ["}"])
