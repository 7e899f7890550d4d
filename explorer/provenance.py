"""Provenance across a trace: which program parts, drawing nodes and C lines each tag names.

The compiler tags the code each lattice point or looplet produced
(``lattice:<index>:<operands>``, ``looplet:<Style>:<n>``) and the C artifact maps every tag to
its C lines (``data["provenance"]``), to what it stands for (``data["tags"]``) and to its
origin (``data["origins"]``: the kind, the index, the operands and a looplet's style, as the
lowering recorded them). Each statement computing the program's expression is tagged by the
nodes of the parse step's expression tree it computes (``expr:n3``, origin kind ``expression``
with its ``nodes``); those tags come last, so a C line keeps its lattice point's or looplet's
colour, and the tree's nodes name them (its artifact's ``data["node_tags"]``). The step that lowered a looplet says so in its ``data``
(``{"tag": ...}``), a looplet nest's artifact names its tensor and index in its ``data``, and a
lattice's artifact the tags of its drawing's points (``data["node_tags"]``) and of its text's
lines (``data["line_tags"]``, kept as :attr:`Provenance.texts`) and where in a line its points,
loops and cases are printed (``data["line_spans"]``, kept as :attr:`Provenance.spans`). A step
showing index notation, concrete index notation or looplet IR records where the loops, accesses,
reductions and looplets of its program texts are printed and what each is
(``data["before_spans"]``, ``data["after_spans"]``, kept as :attr:`Provenance.parts`), each
record with the step that printed it; so do a lattice's and a CFIR's steps (their heading, forall
heads and accesses) and a schedule's (``such that``), and the shape operators' sequence
expressions, lattices and CFIR. Nothing is read back from printed text: a text without a record
(a trace saved before the compiler recorded them, a program given as text) is marked where the
trace's records place its points and loops, and nowhere else.

:func:`trace_provenance` gathers that into a :class:`Provenance` (``{tag: C lines}`` with a
:class:`TagInfo` per tag); :func:`program_marks` finds the parts of a program text a tag
names: the accesses of its operands that use its index, the loops over its index, a lattice's
points, loops and cases, looplets waiting to be lowered, and, in IR or C text, the lines that
line up with tagged C lines.

>>> from compiler import Trace, Artifact
>>> t = Trace()
>>> c = "void k(void) {\\n  for (;;) {}\\n  y = A * x;\\n}"
>>> origins = {"lattice:j:A∩x": {"kind": "lattice", "index": "j", "operands": ["A", "x"]},
...            "lattice:j:A": {"kind": "lattice", "index": "j", "operands": ["A"]}}
>>> _ = t.record("emit-c", after=c, artifacts=[Artifact("c", "k", c, data={"provenance": {
...     "lattice:j:A∩x": [3], "lattice:j:A": [2, 3]}, "origins": origins})])
>>> prov = trace_provenance(t)
>>> prov["lattice:j:A∩x"], prov.info["lattice:j:A∩x"].operands
([3], ('A', 'x'))
>>> text = "forall j:\\n  y[] += A[j] * x[j]"
>>> read = lambda t: {"tensor": t, "indices": ["j"], "mode": "read"}
>>> printed = Provenance(prov, prov.info, parts={text: {1: [(0, 8, {"index": "j"}, "loop")],
...                                                    2: [(9, 13, read("A"), "access"), (16, 20, read("x"), "access")]}})
>>> [(m.line, m.text, m.tags) for m in program_marks(text, printed)]
[(1, 'forall j', ('lattice:j:A', 'lattice:j:A∩x')), (2, 'A[j]', ('lattice:j:A∩x', 'lattice:j:A')), (2, 'x[j]', ('lattice:j:A∩x',))]
>>> program_marks(text, prov)   # (no record of where its parts are: none is guessed)
[]
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from .palette import ViewColors, color_for

if TYPE_CHECKING:  # annotations only
    from compiler.trace import Artifact

#: the origin kind of the code a node of the expression tree computes (the compiler's
#: ``compiler.notation.node_provenance.EXPRESSION``; a trace is read without the compiler)
EXPRESSION = "expression"

__all__ = ["EXPRESSION", "Mark", "Provenance", "TagInfo", "collect_provenance", "describer", "is_node", "looplet_heads",
           "looplet_style", "program_marks", "rank_of", "trace_provenance"]


@dataclass(frozen=True)
class TagInfo:
    """What the trace says about one tag: its kind (``lattice``, ``looplet``, ``expression`` or
    ``""``), its index, its operands (tensor names), a looplet's style, the step that lowered it,
    and the nodes of the parse step's expression tree whose code it tags (``expression``), with
    the depth of its one node in that tree (``None``: the assignment or its written access)."""

    tag: str
    kind: str = ""
    index: str | None = None
    operands: tuple[str, ...] = ()
    style: str | None = None
    step: int | None = None
    what: str = ""
    nodes: tuple[str, ...] = ()
    depth: int | None = None

    def describe(self) -> str:
        """What the tag stands for, in the user's terms: what the compiler recorded (the
        lattice loop or case, the looplets lowered), else what the tag's text says.

        >>> TagInfo("lattice:j:A∩x", "lattice", "j", ("A", "x")).describe()
        'the lattice point of j where A and x are present'
        >>> TagInfo("t", what="case A0 x0: y[i] += A[i, j] * x[j]").describe()
        'case A0 x0: y[i] += A[i, j] * x[j]'
        """
        if self.what:
            return self.what
        if self.kind == "lattice":
            names = " and ".join(self.operands)
            return (f"the lattice point of {self.index} where {names} "
                    f"{'is' if len(self.operands) == 1 else 'are'} present" if names
                    else f"the dense range of {self.index}")
        if self.kind == "looplet":
            on = f" on {self.index}" if self.index else ""
            of = f" of {', '.join(self.operands)}" if self.operands else ""
            return f"the {self.style} looplet{of}{on}"
        return self.tag


class Provenance(dict):
    """``{tag: sorted C lines}`` (as :func:`collect_provenance` gives) that
    also knows each tag's :class:`TagInfo` (``.info``) and the C text the lines are of
    (``.c_text``). Iteration order is the C pane's colour precedence: inner tags first.
    ``.texts`` maps a printed artifact (a lattice's text) to the tags the compiler recorded for
    its lines (``{line: tags}``, from its ``data["line_tags"]``), ``.spans`` to the columns of the
    points, loops and cases printed in them (``{line: [(start, end, tag, role)]}``, from its
    ``data["line_spans"]``; ``role``: ``point``, ``loop`` or ``case``). ``.parts`` maps a program
    text (index notation, concrete index notation, looplet IR) to every part printed in it
    (``{line: [(start, end, about, role)]}``, from a step's ``data["before_spans"]``/
    ``["after_spans"]``; ``role``: ``loop``, ``access``, ``reduce`` or ``looplet``, ``about`` what
    it is: its index, tensor, indices, style), and such a text is marked by them alone.

    Each of the three records the step that printed the text (``{text: {step: record}}``; a
    record given as ``{text: record}`` is of no known step): two steps may print one text of
    different things (``Lookup(...)[i] = Stepper[i]``, once of ``a``'s looplet, once of
    ``b``'s), and a text shown at a step takes the record of the latest step up to it that
    printed it (:meth:`recorded`).

    >>> p = Provenance({"lattice:i:U": [1, 2], "lattice:i:A": [2]},
    ...                {"lattice:i:A": TagInfo("lattice:i:A", "lattice", "i", ("A",))})
    >>> p.info["lattice:i:A"].index, list(p.only("lattice:i:A"))
    ('i', ['lattice:i:A'])
    """

    def __init__(self, lines: Mapping[str, Iterable[int]] = (), info: Mapping[str, TagInfo] | None = None,
                 c_text: str = "", texts: Mapping[str, Mapping[int, Sequence[str]]] | None = None,
                 spans: Mapping[str, Mapping[int, Sequence[tuple[int, int, str, str]]]] | None = None,
                 parts: Mapping[str, Mapping[int, Sequence[tuple[int, int, Mapping, str]]]] | None = None,
                 trees: Mapping[str, Sequence[tuple[Mapping, Sequence[str]]]] | None = None):
        super().__init__({str(k): sorted(int(n) for n in v) for k, v in dict(lines).items()})
        self.info: dict[str, TagInfo] = {t: (info or {}).get(t) or TagInfo(t) for t in self}
        self.c_text = c_text
        self.texts: dict[str, dict[int | None, dict[int, list[str]]]] = {
            t: {k: {int(n): list(v) for n, v in by_line.items()} for k, by_line in _by_step(at).items()}
            for t, at in (texts or {}).items()}
        self.spans: dict[str, dict[int | None, dict[int, list[tuple[int, int, str, str]]]]] = {
            t: {k: {int(n): [(int(a), int(b), str(tag), str(role)) for a, b, tag, role in v]
                    for n, v in by_line.items()} for k, by_line in _by_step(at).items()}
            for t, at in (spans or {}).items()}
        self.parts: dict[str, dict[int | None, dict[int, list[tuple[int, int, Mapping, str]]]]] = {
            t: {k: {int(n): list(v) for n, v in by_line.items()} for k, by_line in _by_step(at).items()}
            for t, at in (parts or {}).items()}
        self.trees: dict[str, dict[int | None, list[tuple[Mapping, list[str]]]]] = {
            t: {k: [(dict(about), [str(x) for x in tags]) for about, tags in nodes] for k, nodes in at.items()}
            for t, at in (trees or {}).items()}
        #: the colours of the view this provenance is drawn in (:meth:`for_view`), else none
        self.colors: ViewColors | None = None
        #: whether this is a choice of some of a view's tags (:meth:`only`): their C lines are
        #: coloured whether or not the view's drawings and program show them
        self.chosen = False

    def for_view(self, colors: ViewColors | None = None) -> "Provenance":
        """The same provenance for drawing one view: its tags get colours in the order the
        renderers ask for them (:class:`~explorer.palette.ViewColors`; ``colors``: those of a view
        drawn before, kept), not by their hash.

        >>> p = Provenance({"b": [1], "a": [2]}).for_view()
        >>> p.color("a"), p.color("b"), p.only("b").color("b")
        ('#e16306', '#009f00', '#009f00')
        """
        view = self.only(list(self))
        view.colors = colors if colors is not None else ViewColors()
        view.chosen = False
        return view

    def color(self, tag: str) -> str:
        """``tag``'s colour: its view's (:meth:`for_view`), else its hash's."""
        return self.colors.color(tag) if self.colors is not None else color_for(tag)

    def recorded(self, kind: str, text: str, step: int | None = None):
        """The record of ``kind`` (``"texts"``, ``"spans"`` or ``"parts"``) for ``text`` shown at
        ``step``: the latest step's up to ``step`` that printed it, else the first (``None``
        where the compiler recorded none).

        >>> p = Provenance(parts={"y[i] = Stepper[i]": {3: {1: ["A"]}, 7: {1: ["B"]}}})
        >>> p.recorded("parts", "y[i] = Stepper[i]", 5), p.recorded("parts", "y[i] = Stepper[i]", 9)
        ({1: ['A']}, {1: ['B']})
        """
        at = getattr(self, kind).get(text)
        if not at:
            return None
        steps = sorted(at, key=lambda k: -1 if k is None else k)
        if step is not None:
            upto = [k for k in steps if k is not None and k <= step]
            if upto:
                return at[upto[-1]]
        return at[steps[0]]

    def latest_tree(self, step: int | None) -> list[tuple[Mapping, list[str]]]:
        """The expression tree drawn last up to ``step`` (see :attr:`trees`), whatever its text; none
        without a step.

        >>> p = Provenance(trees={"y[i] = A[i]": {0: [({"role": "assign"}, ["expr:n0"])]}})
        >>> p.latest_tree(2), p.latest_tree(None)
        ([({'role': 'assign'}, ['expr:n0'])], [])
        """
        if step is None:
            return []
        drawn = [(k, nodes) for at in self.trees.values() for k, nodes in at.items() if k is not None and k <= step]
        return max(drawn, key=lambda kn: kn[0])[1] if drawn else []

    def only(self, tags: Iterable[str] | str | None) -> "Provenance":
        """The same provenance restricted to ``tags`` (one tag, several, or ``None``: all)."""
        if tags is None:
            return self
        keep = {tags} if isinstance(tags, str) else set(tags)
        out = Provenance({t: v for t, v in self.items() if t in keep},
                         {t: i for t, i in self.info.items() if t in keep}, self.c_text, self.texts, self.spans,
                         self.parts, self.trees)
        out.colors = self.colors   # (the view's colours: a tag chosen keeps its colour)
        out.chosen = True
        return out

    def describe(self, tags: Iterable[str] | str) -> str:
        """The tooltip of a part with ``tags``: what each stands for, one per line."""
        tags = [tags] if isinstance(tags, str) else list(tags)
        return "\n".join(dict.fromkeys((self.info.get(t) or TagInfo(t)).describe() for t in tags))

    def lowered_at(self, step: int) -> list[str]:
        """The tags of the looplets lowered at ``step`` (a ``lower:*`` step), widest first.

        >>> p = Provenance({"looplet:Stepper:4": [3]},
        ...                {"looplet:Stepper:4": TagInfo("looplet:Stepper:4", "looplet", "j", ("A",), "Stepper", 12)})
        >>> p.lowered_at(12), p.lowered_at(11)
        (['looplet:Stepper:4'], [])
        """
        return self.widest_first(t for t, info in self.info.items() if info.step == step)

    def by_index(self, index: str) -> list[str]:
        """The tags whose index is ``index``, in precedence order."""
        return [t for t in self if self.info[t].index == index]

    def rank(self, tag: str) -> tuple:
        """How inner ``tag`` is, least first, among the tags of one C line or program part: a lattice
        point or looplet by the C lines it names (a case before its loop), then a node of the
        expression tree by its depth, outermost first (a line computing ``A[i] * B[i] + C[i]`` is
        the ``+``'s, not its operand ``A[i]``'s, which names the same lines), the statement's
        assignment and written access last.

        >>> p = Provenance({"loop": [1, 2], "case": [2], "+": [2], "A": [2]},
        ...                {"+": TagInfo("+", EXPRESSION, depth=1), "A": TagInfo("A", EXPRESSION, depth=3)})
        >>> sorted(p, key=p.rank)
        ['case', 'loop', '+', 'A']
        """
        info = self.info.get(tag)
        lines = len(self.get(tag, ()))
        if info is None or info.kind != EXPRESSION:
            return (0, lines)
        return (1, info.depth, lines) if info.depth is not None else (2, lines)

    def statement_first(self, tag: str) -> tuple:
        """Of the tags of a C line that the program shows and no drawing does, the one it is
        coloured by comes least: a node of the expression tree before a loop (the statement is
        inside its loops), the widest node first and, of as wide, the written access (it names every
        line writing the statement; an operand read in one of them, or a dense operand read in all,
        does not stand for the statement); any other in its order.

        >>> p = Provenance({"loop": [1, 2, 3], "out": [2, 3], "A": [2]},
        ...                {"out": TagInfo("out", EXPRESSION), "A": TagInfo("A", EXPRESSION)})
        >>> min(["loop", "A", "out"], key=p.statement_first), min(["loop"], key=p.statement_first)
        ('out', 'loop')
        """
        info = self.info.get(tag)
        if info is None or info.kind != EXPRESSION:
            return (1,)
        return (0, -len(self.get(tag, ())), info.depth is not None)

    def widest_first(self, tags: Iterable[str]) -> list[str]:
        """``tags`` with the outermost first: a loop before its cases (whose C lines are some of the
        loop's), and of loops one after the other (a concatenation's parts) the first in the C.

        >>> Provenance({"case": [4], "loop": [3, 4, 5]}).widest_first(["case", "loop"])
        ['loop', 'case']
        >>> Provenance({"left": [3, 4], "right": [5, 6, 7]}).widest_first(["right", "left"])
        ['left', 'right']
        """
        tags = list(tags)
        if not tags:
            return tags
        lines = {t: set(self.get(t, ())) for t in tags}
        outer = [t for t in tags if not any(lines[t] < lines[u] for u in tags)]
        top = min(outer, key=lambda t: (min(lines[t], default=1 << 30), -len(lines[t])))
        return [top] + [t for t in tags if t != top]


def rank_of(provenance) -> Callable[[str], tuple]:
    """How inner each tag of ``provenance`` is, least first (:meth:`Provenance.rank`; of a plain
    ``{tag: lines}``, by its C lines: a lattice case's point has fewer than its loop), the order
    :meth:`~explorer.palette.ViewColors.drawn_tag` picks a part's tag by.

    >>> rank_of({"loop": [3, 4, 5], "case": [4]})("case"), rank_of({})("other")
    ((0, 1), (0, 0))
    """
    if isinstance(provenance, Provenance):
        return provenance.rank
    return lambda tag: (0, len(provenance.get(tag, ())))


def describer(provenance) -> Callable[[Sequence[str]], str] | None:
    """Tooltips from what the trace says each tag stands for (:meth:`Provenance.describe`; a plain
    ``{tag: lines}``: none).

    >>> describer({"p0": [3]}) is None, describer(Provenance({"p0": [3]}))(["p0"])
    (True, 'p0')
    """
    return provenance.describe if isinstance(provenance, Provenance) else None


def is_node(provenance, tag: str) -> bool:
    """Whether ``tag`` names code that a node of the expression tree computed.

    >>> is_node(Provenance({"expr:n2": [4]}, {"expr:n2": TagInfo("expr:n2", EXPRESSION)}), "expr:n2")
    True
    """
    info = provenance.info.get(tag) if isinstance(provenance, Provenance) else None
    return info is not None and info.kind == EXPRESSION


# --- looplet kinds --------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _head_styles() -> dict[str, str]:
    """Looplet class name -> the lowering rule (style) that handles it (``Fill`` -> ``Run``)."""
    try:
        from compiler.looplets import looplets as LL
    except Exception:  # a trace can be viewed without the looplet compiler: heads are styles
        return {}
    out: dict[str, str] = {}
    for obj in vars(LL).values():
        if isinstance(obj, type) and issubclass(obj, LL.Looplet):
            out[obj.__name__] = getattr(obj, "style", obj.__name__)
    return out


def looplet_style(head: str) -> str | None:
    """The style of a looplet drawn as ``head(...)``, or ``None`` for something else.

    >>> looplet_style("Fill(0.0)"), looplet_style("Stepper(stop=j)"), looplet_style("A.lvl2[q]")
    ('Run', 'Stepper', None)
    """
    return _head_styles().get(head.split("(", 1)[0].strip())


def looplet_heads(style: str) -> list[str]:
    """The drawn heads of the looplets a style's rule lowers (``Run``: ``Run``, ``Fill``, ...).

    >>> "Fill" in looplet_heads("Run") and looplet_heads("Stepper") == ["Stepper"]
    True
    """
    heads = [h for h, s in _head_styles().items() if s == style]
    return heads or [style]


# --- from a trace -------------------------------------------------------------------------------

def collect_provenance(artifacts: Iterable[Artifact]) -> dict[str, list[int]]:
    """Merge ``data["provenance"]`` of ``artifacts`` into ``{id: sorted C lines}``.

    Malformed or missing data is ignored (provenance is an optional extra).

    >>> from compiler.trace import Artifact
    >>> a = Artifact("lattice", "L", "", data={"provenance": {"p0": [3, 4], "p1": [7]}})
    >>> collect_provenance([a, Artifact("c", "k", "")])
    {'p0': [3, 4], 'p1': [7]}
    """
    out: dict[str, set[int]] = {}
    for a in artifacts:
        data = a.data if isinstance(a.data, Mapping) else {}
        prov = data.get("provenance")
        if not isinstance(prov, Mapping):
            continue
        for ident, lines in prov.items():
            try:
                out.setdefault(str(ident), set()).update(int(n) for n in lines)
            except (TypeError, ValueError):
                continue
    return {k: sorted(v) for k, v in out.items()}


def _origin_info(tag: str, origin: Mapping, step: int | None) -> TagInfo:
    return TagInfo(tag, str(origin.get("kind") or ""), origin.get("index"),
                   tuple(str(o) for o in origin.get("operands") or ()), origin.get("style"), step,
                   nodes=tuple(str(n) for n in origin.get("nodes") or ()),
                   depth=origin["depth"] if isinstance(origin.get("depth"), int) else None)


def trace_provenance(source) -> Provenance:
    """The provenance of a trace (or a session, or a list of steps); see the module docstring.

    Tags and C lines come from every artifact's ``data["provenance"]``, what each tag stands
    for from ``data["tags"]`` and ``data["origins"]`` (kind, index, operands, style, as the
    compiler recorded them), and the step that lowered a looplet from the step whose ``data``
    names its tag. The C text is the last C artifact's. Without provenance data the result is
    empty.
    """
    steps = list(getattr(source, "steps", source))
    artifacts = [a for s in steps for a in s.artifacts]
    lines = collect_provenance(artifacts)
    if not lines:
        return Provenance()
    c_arts = [a for a in artifacts if a.kind == "c"]
    with_prov = [a for a in c_arts if isinstance(a.data, Mapping) and a.data.get("provenance")]
    c_text = (with_prov or c_arts)[-1].text if c_arts else ""
    whats: dict[str, str] = {}
    origins: dict[str, Mapping] = {}
    for a in with_prov:
        whats.update({str(t): str(w) for t, w in (a.data.get("tags") or {}).items()})
        origins.update({str(t): o for t, o in (a.data.get("origins") or {}).items() if isinstance(o, Mapping)})
    lowered: dict[str, int] = {}
    for k, s in enumerate(steps):
        data = getattr(s, "data", None)
        if isinstance(data, Mapping) and data.get("tag"):
            lowered.setdefault(str(data["tag"]), k)
    info = {}
    for tag in lines:
        base = _origin_info(tag, origins[tag], lowered.get(tag)) if tag in origins else TagInfo(tag)
        info[tag] = replace(base, what=whats.get(tag, ""))
    # the expression tree's nodes last: a C line takes its colour and its click's link from the
    # lattice point or looplet that made it, and a node's tag links the lines it computes
    lines = dict(sorted(lines.items(), key=lambda kv: info[kv[0]].kind == EXPRESSION))
    # each record by the text it is of and the step that printed it (one text may be printed of
    # different things at two steps)
    texts, spans, parts, trees = {}, {}, {}, {}
    for k, s in enumerate(steps):
        data = getattr(s, "data", None)
        tree = _tree_of(s)
        if tree:
            trees.setdefault(getattr(s, "after_text", ""), {})[k] = tree
        for side in ("before", "after") if isinstance(data, Mapping) else ():
            recorded = _parts(data.get(side + "_spans"))
            if recorded is not None:
                parts.setdefault(getattr(s, side + "_text"), {})[k] = recorded
        for a in s.artifacts:
            recorded = a.data.get("line_tags") if isinstance(a.data, Mapping) else None
            if isinstance(recorded, Mapping):
                try:
                    texts.setdefault(a.text, {})[k] = {int(n): [str(t) for t in ts] for n, ts in recorded.items()}
                except (TypeError, ValueError):
                    pass   # (malformed: the text's names are read instead)
            columns = a.data.get("line_spans") if isinstance(a.data, Mapping) else None
            if isinstance(columns, Mapping):
                try:
                    spans.setdefault(a.text, {})[k] = {int(n): [(int(x), int(y), str(t), str(r)) for x, y, t, r in v]
                                                       for n, v in columns.items()}
                except (TypeError, ValueError):
                    pass   # (malformed: its heads are not marked)
    return Provenance(lines, info, c_text, texts, spans, parts, trees)


def _tree_of(step) -> list[tuple[Mapping, list[str]]]:
    """The nodes of the expression tree of ``step``'s program, in preorder, each with what it is
    and its tags: a ``notation-tree`` drawing's (``data["nodes"]``, ``data["node_tags"]``), or the
    statement tree an ``array-expression`` records (``data["tree"]``, ``data["tree_tags"]``);
    ``[]`` where the step draws none."""
    for a in getattr(step, "artifacts", ()):
        if a.kind not in ("notation-tree", "array-expression"):
            continue
        data = a.data if isinstance(a.data, Mapping) else {}
        nodes, tags = ((data.get("nodes"), data.get("node_tags")) if a.kind == "notation-tree"
                       else (data.get("tree"), data.get("tree_tags")))
        if isinstance(nodes, Mapping) and isinstance(tags, Mapping):
            return [(about, list(tags.get(ident) or ())) for ident, about in nodes.items() if isinstance(about, Mapping)]
    return []


def _by_step(records: Mapping) -> Mapping:
    """``{step: record}`` as given, or a lone record (``{line: ...}``) as of no known step."""
    records = dict(records)
    if records and all(isinstance(v, Mapping) for v in records.values()):
        return records
    return {None: records}


def _parts(recorded) -> dict[int, list[tuple[int, int, Mapping, str]]] | None:
    """A step's record of the parts of one of its texts (see :attr:`Provenance.parts`), or None
    where it has none or a malformed one (the text is then marked by its other records alone)."""
    if not isinstance(recorded, Mapping):
        return None
    try:
        return {int(n): [(int(a), int(b), about, str(role)) for a, b, about, role in v if isinstance(about, Mapping)]
                for n, v in recorded.items()}
    except (TypeError, ValueError):
        return None


# --- marks in a program text ------------------------------------------------------------------

@dataclass(frozen=True)
class Mark:
    """A part of a program text a tag names: ``line`` (1-based), columns ``[start, end)`` of
    that line (``None``: the whole line), the text, and the tags (the colouring one first)."""

    line: int
    start: int | None
    end: int | None
    text: str
    tags: tuple[str, ...] = field(default=())


_C_LIKE = re.compile(r"[{};]\s*$", re.M)
_IR_VALUE = re.compile(r"\$\{[^{}]*\}")  # ``${A_val[qA]}``: a value in looplet IR, not a C block


def _align(text_lines: list[str], c_lines: list[str]) -> dict[int, int]:
    """1-based line of ``text_lines`` -> 1-based line of ``c_lines`` it matches (IR against C:
    the same statements, but C spells types ``int64_t`` and qualifies pointers)."""
    def norm(s: str) -> str:
        s = re.sub(r"\b(\w+)_t\b", r"\1", s)
        s = re.sub(r"\b(const|restrict)\b", "", s)
        s = re.sub(r"\bfloat64\b", "double", re.sub(r"\bfloat32\b", "float", s))
        return re.sub(r"\s+", " ", s).strip()
    a, b = [norm(x) for x in text_lines], [norm(x) for x in c_lines]
    out: dict[int, int] = {}
    for blk in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        # a run of lone braces matches anywhere: only runs with a statement in them count
        if any(a[blk.a + k] not in ("", "{", "}") for k in range(blk.size)):
            out.update({blk.a + k + 1: blk.b + k + 1 for k in range(blk.size)})
    return out


def _c_marks(text: str, prov: Provenance) -> list[Mark]:
    c_lines = prov.c_text.splitlines()
    lines = text.splitlines()
    mapping = ({n: n for n in range(1, len(lines) + 1)} if text.strip() == prov.c_text.strip()
               else _align(lines, c_lines))
    by_line: dict[int, list[str]] = {}
    for tag, ns in prov.items():
        for n in ns:
            by_line.setdefault(n, []).append(tag)
    return [Mark(n, None, None, lines[n - 1], tuple(by_line[c])) for n, c in sorted(mapping.items())
            if c in by_line]


def program_marks(text: str, prov: Provenance | Mapping[str, Iterable[int]] | None,
                  step: int | None = None) -> list[Mark]:
    """The parts of program ``text`` that tags of ``prov`` name (see the module docstring),
    in text order. ``step`` (the step showing the text) picks, for a looplet waiting to be
    lowered (``Stepper[j]``), the tag of its coming lowering.

    >>> tags = {"lattice:i:A∩B": ("A", "B"), "lattice:i:A": ("A",), "lattice:i:B": ("B",)}
    >>> prov = Provenance({"lattice:i:A∩B": [5], "lattice:i:A": [7], "lattice:i:B": [9]},
    ...                   {t: TagInfo(t, "lattice", "i", ops) for t, ops in tags.items()})
    >>> text = "lattice at i:\\n[A | ] P  A[i]\\nloops:\\n  while i <- A0 ∩ B0: A B"
    >>> printed = Provenance(prov, prov.info, spans={text: {2: [(0, 8, "lattice:i:A", "point")],
    ...                                                     4: [(2, 20, "lattice:i:A∩B", "loop")]}},
    ...                      parts={text: {1: [(0, 12, {"index": "i"}, "lattice")],
    ...                                    2: [(10, 14, {"tensor": "A", "indices": ["i"], "mode": "read"}, "access")]}})
    >>> [(m.text, m.tags[0]) for m in program_marks(text, printed)]
    [('lattice at i', 'lattice:i:A∩B'), ('[A | ] P', 'lattice:i:A'), ('A[i]', 'lattice:i:A'), ('while i <- A0 ∩ B0', 'lattice:i:A∩B')]
    """
    if not prov or not text:
        return []
    if not isinstance(prov, Provenance):
        prov = Provenance(prov)
    order = {t: k for k, t in enumerate(prov)}

    def sort(tags: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted(dict.fromkeys(tags), key=order.__getitem__))
    printed = prov.recorded("parts", text, step)
    # where the printer put each point, loop and case of a lattice's or CFIR's text
    placed = prov.recorded("spans", text, step)
    if printed is not None and placed is None:   # (a program whose printer said where each part is)
        return _part_marks(text, printed, prov, step, sort)
    # a looplet IR line may end in a value ``${...}``: that brace does not make the text C
    if _C_LIKE.search(_IR_VALUE.sub("", text)) and prov.c_text:
        return _c_marks(text, prov)

    # the tags the compiler recorded for this text's lines (a lattice loop's own, then its body's point's)
    known = {n: [t for t in ts if t in prov] for n, ts in (prov.recorded("texts", text, step) or {}).items()}
    placed = placed or {}

    marks: list[Mark] = []
    # (indent, index, body tag) of enclosing loops: the tag of the point a lattice loop without
    # cases runs (``while i <- a0:``), for the accesses in its body
    scopes: list[tuple[int, str, str | None]] = []
    for n, line in enumerate(text.splitlines(), 1):
        indent = len(line) - len(line.lstrip())
        while scopes and scopes[-1][0] >= indent and line.strip():
            scopes.pop()
        line_tag: str | None = None  # a lattice point or case: its accesses take its tag first
        # the recorded heads: a point's or case's tag is the line's; a loop opens a scope for its
        # body (its index, its body's point), after the line
        opens = None
        for start, end, tag, role in placed.get(n, ()):
            if tag not in prov:
                continue
            marks.append(Mark(n, start, end, line[start:end], (tag,)))
            if role == "loop":
                opens = (indent, prov.info[tag].index, (known.get(n) or [tag])[-1])
            else:
                line_tag = tag
        if line_tag is None and scopes:
            line_tag = scopes[-1][2]
        if opens is not None:
            scopes.append(opens)
        # the parts its printer recorded (a lattice's heading, a forall's head, the accesses); a
        # text without a printer's record (a trace saved before they were) has its recorded heads alone
        here = _recorded_parts(printed.get(n, ()), line) if printed is not None else []
        heads = [(a, b, about.get("index"), role) for a, b, about, role in here if role in ("lattice", "loop")]
        for start, end, index, role in heads:   # (a lattice's heading or a forall's: every tag of its index)
            if role == "loop":
                scopes.append((indent, index, None))
            tags = prov.widest_first(prov.by_index(index))
            if tags:
                marks.append(Mark(n, start, end, line[start:end], tuple(tags)))

        # (kind, start, end, tensor, indices, writes) as the printer recorded them
        terms = [(role, a, b, about.get("tensor"), list(about.get("indices") or ()), about.get("mode") == "update")
                 for a, b, about, role in here if role in ("access", "reduce")]
        rhs_tensors = {t[3] for t in terms if t[0] == "access" and not t[5]}
        for kind, start, end, name, indices, writes in terms:
            if kind == "reduce":
                tags = [t for i in indices for t in prov.widest_first(prov.by_index(i))]
            else:
                tags = _access_tags(prov, name, indices, writes, rhs_tensors, line_tag, sort)
            tags = list(dict.fromkeys(tags))
            if tags:
                marks.append(Mark(n, start, end, line[start:end], tuple(tags)))
    return sorted(marks, key=lambda m: (m.line, m.start if m.start is not None else -1))


def _recorded_parts(parts, line: str) -> list:
    """The parts recorded for ``line`` that fit in it (a record that does not fit its text: nothing is guessed)."""
    return [(a, b, about, role) for a, b, about, role in parts if 0 <= a < b <= len(line)]


def _access_tags(prov: Provenance, name: str | None, indices: Sequence[str], writes: bool, rhs_tensors: set,
                 line_tag: str | None, sort) -> list[str]:
    """The tags of an access of tensor ``name`` at ``indices`` (``writes``: the one its statement
    writes, of a statement reading ``rhs_tensors``) on a line of ``line_tag`` (a lattice point's
    or case's, or None): the tags of its indices that name it (a lattice point's also the access
    it writes), the line's first."""
    tags = [t for t, info in prov.info.items() if info.index in indices
            and (name in info.operands or (info.kind == "lattice" and writes and set(info.operands) & rhs_tensors))]
    # the line's point first: for its operands' accesses, and for the access it writes
    # (the lhs, when the point's operands are read on the rhs)
    lt = prov.info[line_tag] if line_tag else None
    first = lt is not None and (name in lt.operands or (
        writes and lt.index in indices and bool(set(lt.operands) & rhs_tensors)))
    return ([line_tag] if first else []) + list(sort(tags))


def _part_marks(text: str, parts: Mapping[int, Sequence[tuple[int, int, Mapping, str]]], prov: Provenance,
                step: int | None, sort) -> list[Mark]:
    """The marks of a program text from the parts its printer recorded (see
    :attr:`Provenance.parts`): a loop takes its index's tags, a reduction its indices', a looplet
    the tag of its coming lowering, an access the tags of its indices that name its tensor."""
    lines = text.splitlines()
    marks = []
    # the nodes of the text's expression tree, by what they are, in preorder: the accesses and
    # reductions of the text, in text order, are those nodes in order, and take their tags too
    # (after their own: a C line of a tree node outlines the part, which keeps its colour)
    tree: dict[tuple, list[list[str]]] = {}
    # (a text drawn as no tree, the concretize step's loops around the parse step's statement: the
    # tree drawn last, its accesses paired with the text's by tensor and indices)
    # (an access whose indices a pass renamed, a concatenation's part in a loop of its own: ``x[i2]`` of the
    # tree's ``x[i]``, takes the tags of its tensor's one node, where the tree reads that tensor once)
    by_tensor: dict[str, list[list[str]]] = {}
    for about, tags in prov.recorded("trees", text, step) or prov.latest_tree(step):
        kept = [t for t in tags if t in prov]
        tree.setdefault(_tree_key(about, about.get("role")), []).append(kept)
        if about.get("role") == "access":
            by_tensor.setdefault(about.get("tensor"), []).append(kept)
    for n, here in sorted(parts.items()):
        if not 1 <= n <= len(lines):
            continue
        line = lines[n - 1]
        here = sorted(here, key=lambda part: part[0])
        rhs_tensors = {about.get("tensor") for _, _, about, role in here
                       if role == "access" and about.get("mode") == "read"}
        for start, end, about, role in here:
            if not 0 <= start < end <= len(line):
                continue   # (a record that does not fit its text: nothing is guessed)
            if role == "loop":
                tags = prov.widest_first(prov.by_index(about.get("index")))
            elif role == "reduce":   # (sum[j]: the tags of its indices)
                tags = [t for i in about.get("indices") or () for t in prov.widest_first(prov.by_index(i))]
            elif role == "looplet":
                tags = _coming_looplet(prov, about.get("style"), [about.get("index")], step, about.get("tensor"))
            else:
                tags = _access_tags(prov, about.get("tensor"), list(about.get("indices") or ()),
                                    about.get("mode") == "update", rhs_tensors, None, sort)
            nodes = tree.get(_tree_key(about, role))
            if nodes:
                tags = list(tags) + nodes.pop(0)
            elif role == "access" and len(by_tensor.get(about.get("tensor"), ())) == 1:
                tags = list(tags) + by_tensor[about.get("tensor")][0]
            tags = list(dict.fromkeys(tags))
            if tags:
                marks.append(Mark(n, start, end, line[start:end], tuple(tags)))
    return sorted(marks, key=lambda m: (m.line, m.start))


def _tree_key(about: Mapping, role: str | None) -> tuple:
    """What a tree node or a printed part is, to pair them: an access's tensor and indices, a
    reduction's indices (anything else: its role alone, paired with no part)."""
    if role == "access":
        return ("access", about.get("tensor"), tuple(about.get("indices") or ()))
    if role == "reduce":
        return ("reduce", tuple(about.get("indices") or ()))
    return (role,)


def _coming_looplet(prov: Provenance, style: str | None, indices: Sequence[str], step: int | None,
                    tensor: str | None = None) -> list[str]:
    """The tag lowering a looplet of ``style`` on one of ``indices`` (reading ``tensor``, when
    known) next, at or after ``step``."""
    if style is None:
        return []
    tags = [(info.step if info.step is not None else 1 << 30, t) for t, info in prov.info.items()
            if info.style == style and info.index in indices and (step is None or info.step is None or info.step >= step)
            and (tensor is None or not info.operands or tensor in info.operands)]
    tags.sort()
    if step is None:
        return [t for _, t in tags]
    return [tags[0][1]] if tags else []
