"""Render steps and artifacts to HTML and SVG: Pygments for code, Graphviz for drawings (:mod:`explorer.drawings`).

Everything here is plain text in, HTML/SVG text out, with inline styles only, so the output
drops into a notebook, a widget pane or a self-contained exported page alike.

Renderers are chosen by artifact kind (:func:`register_renderer`); any kind without one gets
the generic renderer: its drawing (when it has DOT) and its text.

Provenance: an artifact may carry ``data["provenance"] = {id: [C line numbers]}`` (1-based
lines of the final C source), naming which lattice point, looplet or expression node produced
which C lines. Each id gets a colour, used both for those C lines and for the drawing's node of
that id, so the two read together: a step's view (:func:`render_step`) assigns its ids distinct
colours (:mod:`explorer.palette`), and where no view does, :func:`color_for` hashes the id.
Without the data nothing changes.

>>> html = render_c("int f(void) {\\n  return 0;\\n}", provenance={"p0": [2]})
>>> 'data-line="2"' in html and color_for("p0") in html
True
"""

from __future__ import annotations

import html as _html
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping, Sequence

from pygments import format as format_tokens
from pygments import highlight
from pygments.lexer import RegexLexer, bygroups
from pygments.lexers import CLexer, DiffLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text

from compiler.trace import Artifact, Step

from .drawings import FOCUS_COLOR, highlight_svg, inline_svg, render_dot, tag_names
from .factviews import facts_table
from .fit import fit_svg, root_in_view, rooted_left
from .legend import legend_html
from .linking import LINE_BOX, PART_BOX, link_handlers, scroll_to_line
from .nests import compact_nest_dot
from .palette import PALETTE, color_for, colors_of, view_colors_attr
from .provenance import (Mark, Provenance, TagInfo, collect_provenance, describer, is_node, program_marks, rank_of,
                         trace_provenance)
from .session import StepView, unified_diff
from .sharedcolours import shared_colours_html
from .shapeviews import describe_shapes, shape_data_of, shape_marks, shapes_table
from .stepdiff import c_opening_line, c_view, diff_view
from .theme import (CODE_BACKGROUND, CODE_BORDER, CODE_TEXT, LINE_NUMBER, LINE_NUMBER_ON_COLOR, MUTED,
                    TEXT_ON_COLOR, highlight_classes, style_tokens)
from .zoom import zoom_controls

__all__ = [
    "FOCUS_COLOR", "Diff", "IndexNotationLexer", "PALETTE", "RENDERERS", "color_for", "collect_provenance",
    "CPaint", "PRE_STYLE", "c_paint", "code_lines", "diff_steps", "drawn_artifacts", "error_banner", "fold_rewrites",
    "highlight_svg", "inline_svg", "kernel_c", "kernel_c_parts",
    "node_tags_of", "register_renderer", "render_artifact",
    "render_c", "render_code", "render_diff", "render_dot", "render_program", "render_step", "section", "step_focus",
    "tag_names",
]

# --- code ------------------------------------------------------------------------------------

class IndexNotationLexer(RegexLexer):
    """A small lexer for index notation and the compiler's non-C IR texts."""

    name = "sparsescope index notation"
    aliases = ["index-notation"]
    tokens = {
        "root": [
            (r"\s+", Text),
            (r"#.*?$", Comment.Single),
            (r"//.*?$", Comment.Single),
            (r"<<[^>]*>>=", Operator),
            (r"(sum|prod|max|min|choose|forall|where|for|if|let|else|end|in|while|alloc|switch|case|with)\b",
             Keyword),
            # index notation's shape operators (BURRITO's), and the sequences' projections
            (r"(collapse|split|concat|slice|broadcast|π0|π1)(?=\()", Name.Builtin),
            (r"([A-Za-z_]\w*)(\[)", bygroups(Name.Variable, Punctuation)),
            (r"[A-Za-z_]\w*(?=\()", Name.Function),
            (r"[A-Za-z_][\w.]*", Name),
            (r"\d+\.\d*([eE][-+]?\d+)?|\d*\.\d+([eE][-+]?\d+)?|\d+|inf|nan", Number),
            (r'"[^"]*"', String),
            (r"\+=|\*=|-=|==|!=|<=|>=|<-|->|&&|\|\||[-+*/%=<>!&|^~∈∩∪⊔×·∅Ƒ←→]", Operator),
            (r"[\[\](){},;:.]", Punctuation),
            (r".", Text),
        ]
    }


_C_HINT = re.compile(r"[{};]\s*$", re.M)


def _lexer_for(text: str, language: str | None):
    if language == "c" or (language is None and _C_HINT.search(text)):
        return CLexer(stripnl=False, ensurenl=False)
    return IndexNotationLexer(stripnl=False, ensurenl=False)


@lru_cache(maxsize=16)
def _tokens(text: str, lexer_type: type) -> tuple:
    """``(offset, token type, text)`` of ``text`` by a lexer of ``lexer_type`` (as :func:`_lexer_for` makes it): a
    page shows one kernel's C beside most of its steps, and lexing it again for each was most of an export's time
    (a 3-D CSF product's 19 steps: 7.2 s of 7.4)."""
    return tuple(lexer_type(stripnl=False, ensurenl=False).get_tokens_unprocessed(text))


# theme-safe (see explorer.theme): the theme's background and text, light without a theme
PRE_STYLE = (f"margin:0;padding:6px 8px;background:{CODE_BACKGROUND};color:{CODE_TEXT};"
              f"border:1px solid {CODE_BORDER};"
              "border-radius:4px;font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;"
              "overflow:auto;white-space:pre")


def render_code(text: str, language: str | None = None, line_colors: Mapping[int, str] | None = None,
                line_titles: Mapping[int, str] | None = None, linenos: bool = True,
                line_tags: Mapping[int, Iterable[str]] | None = None,
                marks: Iterable[Mark] | None = None,
                describe: Callable[[Sequence[str]], str] | None = None,
                focus_lines: Iterable[int] = (), most: str = "",
                color: Callable[[str], str] = color_for) -> str:
    """Highlight ``text`` as HTML (``language``: ``"c"``, ``"ir"``, or ``None`` to guess).

    ``line_colors`` maps 1-based line numbers to a background colour; each line is a
    ``<span class="ln" data-line="N">`` so panes can address lines; ``line_tags`` adds
    ``data-tags="tag1 tag2"`` (provenance tags) to lines. ``marks``
    (:class:`~explorer.provenance.Mark`) colour parts of lines, or whole lines, by their first
    tag: a part becomes ``<span class="pv" data-tags="...">``. ``describe(tags)`` gives a
    marked part's tooltip (what its tags stand for; by default the tags themselves).
    ``focus_lines`` get a bar in the focus colour (the code of the looplet a step lowers).
    ``most``: the most the block may be tall (a CSS length); beyond it, it scrolls.
    ``color(tag)``: a mark's colour (its view's: :func:`~explorer.palette.colors_of`).

    >>> h = render_code("y[i] = A[i, j] * x[j]", language="ir")
    >>> h.startswith("<pre") and 'data-line="1"' in h
    True
    >>> from explorer.provenance import Mark
    >>> h = render_code("y[i] = A[i]", "ir", marks=[Mark(1, 7, 11, "A[i]", ("p0",))])
    >>> '<span class="pv" data-tags="p0"' in h and color_for("p0") in h
    True
    """
    line_colors = dict(line_colors or {})
    line_titles = dict(line_titles or {})
    line_tags = {n: list(t) for n, t in (line_tags or {}).items()}
    spans: list[Mark] = []
    for m in marks or ():
        if m.start is None:  # a whole line
            line_colors.setdefault(m.line, color(m.tags[0]))
            line_titles.setdefault(m.line, describe(m.tags) if describe else ", ".join(m.tags))
            line_tags.setdefault(m.line, list(m.tags))
        else:
            spans.append(m)
    lines = code_lines(text, language) if not spans else _split_lines(
        _highlight_marked(text, _lexer_for(text, language), highlight_classes(), spans, describe, color), text)
    width = len(str(len(lines)))
    focus_lines = set(focus_lines)
    out = []
    for n, line in enumerate(lines, 1):
        # a provenance colour is the same pastel in every theme: dark text on it
        on_color = n in line_colors
        line = style_tokens(line, on_color)
        style = f"background:{line_colors[n]};color:{TEXT_ON_COLOR};" if on_color else ""
        if n in focus_lines:
            style += f"box-shadow:inset 5px 0 0 {FOCUS_COLOR};"
        style += LINE_BOX
        cls = "ln ss-focus" if n in focus_lines else "ln"
        style = f' style="{style}"'
        title = f' title="{_attr(line_titles[n])}"' if n in line_titles else ""
        num_color = LINE_NUMBER_ON_COLOR if on_color else LINE_NUMBER
        num = (f'<span class="lno" style="color:{num_color};user-select:none">{n:>{width}} </span>'
               if linenos else "")
        tags = (f' data-tags="{_html.escape(" ".join(line_tags[n]))}"' if line_tags.get(n) else "")
        out.append(f'<span class="{cls}" data-line="{n}"{style}{title}{tags}>{num}{line}</span>')
    height = f";max-height:{most}" if most else ""
    return f'<pre class="code" style="{PRE_STYLE}{height}">' + "\n".join(out) + "</pre>"


def code_lines(text: str, language: str | None = None) -> list[str]:
    """The lines of ``text`` highlighted as Pygments' class spans, unstyled (:func:`render_code` styles them; a
    page that shares one C between its steps styles them by CSS, :mod:`explorer.sharedc`).

    >>> code_lines("int x;\\nreturn x;", "c")[1]
    '<span class="k">return</span><span class="w"> </span><span class="n">x</span><span class="p">;</span>'
    """
    lexer = _lexer_for(text, language)
    return _split_lines(format_tokens(((t, v) for _, t, v in _tokens(text, type(lexer))), highlight_classes()), text)


def _split_lines(body: str, text: str) -> list[str]:
    """The highlighted ``body`` of ``text`` cut into its lines (no empty last one for a final newline)."""
    lines = body.split("\n")
    if lines and lines[-1] == "" and not text.endswith("\n\n"):
        lines.pop()
    return lines


def _attr(text: str) -> str:
    """``text`` as an attribute value on one line (a tooltip of several lines keeps its breaks;
    the code is cut into lines at its newlines)."""
    return _html.escape(text).replace("\n", "&#10;")


def _highlight_marked(text: str, lexer, formatter, marks: list[Mark], describe=None, color=color_for) -> str:
    """Pygments HTML of ``text`` with each mark's characters wrapped in a coloured span
    (tokens are cut at mark boundaries; marks lie within one line and do not overlap)."""
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    ranges: list[tuple[int, int, Mark]] = []
    for m in sorted(marks, key=lambda m: (m.line, m.start)):
        if m.line > len(starts) - 1 or m.end is None or m.end <= m.start:
            continue
        a, b = starts[m.line - 1] + m.start, starts[m.line - 1] + m.end
        if ranges and a < ranges[-1][1]:
            continue  # overlapping: the earlier mark wins
        ranges.append((a, b, m))
    cuts = sorted({x for a, b, _ in ranges for x in (a, b)})
    pieces: list[tuple[int, Any, str]] = []  # (offset, token type, text), cut at every boundary
    for offset, ttype, value in _tokens(text, type(lexer)):
        inner = [c - offset for c in cuts if offset < c < offset + len(value)]
        for lo, hi in zip([0] + inner, inner + [len(value)]):
            pieces.append((offset + lo, ttype, value[lo:hi]))
    out: list[str] = []
    k, seg, seg_mark = 0, [], None

    def flush():
        if not seg:
            return
        html = format_tokens([(t, v) for _, t, v in seg], formatter)
        if not "".join(v for _, _, v in seg).endswith("\n") and html.endswith("\n"):
            html = html[:-1]  # the formatter ends its last line; a piece of a line has no end
        if seg_mark is not None:
            tags = " ".join(seg_mark.tags)
            title = describe(seg_mark.tags) if describe else tags
            html = (f'<span class="pv" data-tags="{_html.escape(tags)}" title="{_attr(title)}" '
                    f'style="background:{color(seg_mark.tags[0])};color:{TEXT_ON_COLOR};'
                    f'border-radius:2px;{PART_BOX}">{style_tokens(html, on_color=True)}</span>')
        out.append(html)

    for offset, ttype, value in pieces:
        while k < len(ranges) and offset >= ranges[k][1]:
            k += 1
        mark = ranges[k][2] if k < len(ranges) and ranges[k][0] <= offset < ranges[k][1] else None
        if mark is not seg_mark:
            flush()
            seg, seg_mark = [], mark
        seg.append((offset, ttype, value))
    flush()
    return "".join(out)


def render_program(text: str, provenance: Mapping[str, Iterable[int]] | None = None,
                   step: int | None = None, language: str | None = None,
                   shapes: Mapping | None = None, linenos: bool = True) -> str:
    """The program pane: ``text`` highlighted, with the parts that provenance tags name
    (accesses, loops, lattice points, looplets; in IR or C text, lines) in their tags' colours,
    the colours their C lines have (see :func:`~explorer.provenance.program_marks`), and with
    ``shapes`` (a trace's shape data, :func:`~explorer.shapeviews.shape_data_of`) each shape
    operator's name and binding marked, its tooltip the premise of its extent.

    >>> text = "forall j:\\n  y[] += A[j] * x[j]"
    >>> read = lambda t: {"tensor": t, "indices": ["j"], "mode": "read"}
    >>> p = Provenance({"lattice:j:A∩x": [3]}, {"lattice:j:A∩x": TagInfo("lattice:j:A∩x", "lattice", "j", ("A", "x"))},
    ...                parts={text: {1: [(0, 8, {"index": "j"}, "loop")],   # (where its printer put each part)
    ...                              2: [(9, 13, read("A"), "access"), (16, 20, read("x"), "access")]}})
    >>> html = render_program(text, p)
    >>> html.count('data-tags="lattice:j:A∩x"'), color_for("lattice:j:A∩x") in html
    (3, True)
    """
    marks = program_marks(text, provenance, step) if provenance else []
    if shapes:
        marks = sorted(marks + shape_marks(text, shapes),
                       key=lambda m: (m.line, m.start if m.start is not None else -1))
    # a part in the colour of the node the view's drawings show it as (an access of the parse
    # step's tree, not the lattice point its tags list first; a shape operator's name, its box), as
    # its C lines are
    view = getattr(provenance, "colors", None)
    rank = rank_of(provenance)
    for k, m in enumerate(marks if view is not None else ()):
        if view.drawn:
            tag = None if m.tags[0] in view.drawn else view.drawn_tag(m.tags, rank)
        else:   # (no drawing tells them apart: a part of the expression as its tree's node, not as the
            # first of the lattice points it is computed in, which would paint the statement in that one)
            tag = min((t for t in m.tags if is_node(provenance, t)), key=rank, default=None)
        if tag is not None and tag != m.tags[0]:
            marks[k] = replace(m, tags=(tag, *(t for t in m.tags if t != tag)))
    describe = describe_shapes(shapes, describer(provenance)) if shapes else describer(provenance)
    return render_code(text, language, marks=marks, describe=describe, linenos=linenos, color=colors_of(provenance))


def render_c(source: str, provenance: Mapping[str, Iterable[int]] | None = None,
             only: Iterable[str] | None = None, linenos: bool = True, focus: Iterable[str] = (),
             most: str = "") -> str:
    """C source as highlighted HTML; lines named in ``provenance`` get their id's colour.

    ``only`` restricts the colouring to some ids (the selected lattice point or looplet);
    the lines of the ``focus`` tags (the looplet a ``lower:*`` step lowers) get a focus bar;
    ``most``: the most the code may be tall, beyond which it scrolls (:func:`render_code`).

    >>> 'style="color' in render_c("int x = 1;")
    True
    """
    paint = c_paint(provenance, only, focus)
    return render_code(source, "c", paint.colors, paint.titles, linenos, paint.tags, focus_lines=paint.focus,
                       most=most)


@dataclass(frozen=True)
class CPaint:
    """What a view shows on a C source's lines (:func:`c_paint`): each line's colour, tooltip and tags (by line
    number, from 1) and the lines with the focus bar."""

    colors: dict
    titles: dict
    tags: dict
    focus: frozenset


def c_paint(provenance: Mapping[str, Iterable[int]] | None = None, only: Iterable[str] | None = None,
            focus: Iterable[str] = ()) -> CPaint:
    """The colours, tooltips, tags and focus bars :func:`render_c` gives a C source's lines, as data (a page
    sharing one C between its steps paints each step's copy with them, :mod:`explorer.sharedc`).

    >>> p = c_paint({"p0": [2]})
    >>> p.colors == {2: color_for("p0")}, p.tags, p.focus
    (True, {2: ['p0']}, frozenset())
    """
    tags: dict[int, list[str]] = {}
    keep = set(only) if only is not None else None
    for ident, lines in (provenance or {}).items():
        if keep is not None and ident not in keep:
            continue
        for n in lines:
            tags.setdefault(int(n), []).append(str(ident))
    # a line in the colour of the innermost of its tags the view's drawings show (a lattice case's
    # point, not its loop's; of the expression tree, the outermost node it computes, not an operand
    # read in it; an array step's box, not a looplet no box names), else of one its program shows,
    # else plain (ViewColors.line_tag, Provenance.rank)
    color = colors_of(provenance)
    view = getattr(provenance, "colors", None)
    if view is not None:   # (the drawings and the program are drawn before the C: what they show)
        view.shown_so_far()
    chosen = getattr(provenance, "chosen", False)
    rank, shown_rank = rank_of(provenance), provenance.statement_first if isinstance(provenance, Provenance) else None
    colors = {}
    for n in sorted(tags):
        tag = view.line_tag(tags[n], rank, chosen, shown_rank) if view is not None else tags[n][0]
        if tag is not None:
            colors[n] = color(tag)
        else:
            view.reserve(tags[n][0])
    # a line's tooltip says what produced it (the lattice point's code, the looplet lowered)
    describe = describer(provenance) or ", ".join
    titles = {n: describe(ts) for n, ts in tags.items()}
    focus_lines = frozenset(int(n) for t in focus for n in (provenance or {}).get(t, ()))
    return CPaint(colors, titles, tags, focus_lines)


# --- artifacts ----------------------------------------------------------------------------------

Renderer = Callable[..., str]
RENDERERS: dict[str, Renderer] = {}


def register_renderer(kind: str):
    """Decorator: use ``fn(artifact, highlight=..., provenance=...) -> HTML`` for ``kind``."""
    def deco(fn: Renderer) -> Renderer:
        RENDERERS[kind] = fn
        return fn
    return deco


def _title(artifact: Artifact, extra: str = "") -> str:
    return (f'<div class="artifact-title" style="font:600 12px sans-serif;margin:6px 0 2px">'
            f'{_html.escape(artifact.kind)}: {_html.escape(artifact.name)}{extra}</div>')


def _generic(artifact: Artifact, highlight=None, provenance=None, show_text: bool = True) -> str:
    parts = [_title(artifact, zoom_controls() if artifact.dot else "")]
    if artifact.dot:
        # scaled to the pane (a wide fiber tree keeps its root in view); zoomed, it scrolls (pan);
        # the view keeps a zoom level per kind of drawing (explorer.zoom)
        svg = render_dot(artifact.dot, highlight, provenance, nodes=node_tags_of(artifact))
        left = rooted_left(artifact.dot)
        parts.append(f'<div class="drawing" data-zoom-key="{_html.escape(artifact.kind)}" style="overflow:auto">'
                     f'{fit_svg(svg, left)}</div>' + (root_in_view() if left else ""))
        if show_text and artifact.text:
            parts.append(f"<details><summary>text</summary>{_artifact_text(artifact, provenance)}</details>")
    elif artifact.text:
        parts.append(render_code(artifact.text, None, linenos=False))
    return f'<div class="artifact" data-kind="{_html.escape(artifact.kind)}">' + "".join(parts) + "</div>"


def _artifact_text(artifact: Artifact, provenance) -> str:
    """An artifact's text, its parts marked where its printer recorded them (its ``data["line_spans"]``
    as the trace's provenance keeps them: a lattice's points, a derivation's expression nodes)."""
    if isinstance(provenance, Provenance) and provenance.recorded("spans", artifact.text) is not None:
        return render_program(artifact.text, provenance, language="ir", linenos=False)
    return render_code(artifact.text, "ir", linenos=False)


def node_tags_of(artifact: Artifact) -> dict[str, list[str]] | None:
    """A program tree's ``{node id: provenance tags}`` (its ``data["node_tags"]``), or ``None``
    for a drawing whose nodes are named by their labels (lattices, looplet nests).

    >>> node_tags_of(Artifact("ir", "k", "", data={"node_tags": {"n1": ["zero"]}}))
    {'n1': ['zero']}
    """
    data = artifact.data if isinstance(artifact.data, Mapping) else {}
    nodes = data.get("node_tags")
    if not isinstance(nodes, Mapping):
        return None
    return {str(k): [str(t) for t in v] for k, v in nodes.items() if isinstance(v, (list, tuple))}


@register_renderer("c")
def _render_c_artifact(artifact: Artifact, highlight=None, provenance=None) -> str:
    prov = provenance if provenance is not None else collect_provenance([artifact])
    return (f'<div class="artifact" data-kind="c">{_title(artifact)}'
            f"{render_c(artifact.text, prov)}</div>")


@register_renderer("seq-lattice")
def _render_seq_lattice(artifact: Artifact, highlight=None, provenance=None) -> str:
    """A sequence lattice: each point in the colour of the C its loop produced, linked with it (its
    ``data["node_tags"]``); once there is C, a point whose loop produced none is drawn dashed on
    the page's colour, its tooltip saying so.

    >>> a = Artifact("seq-lattice", "forall i ∈ a", "", 'digraph { p0 [label="0: a"]; p1 [label="1: b"] }',
    ...              data={"index": "i", "node_tags": {"p0": ["lattice:i:a"], "p1": ["lattice:i:b"]}})
    >>> html = render_artifact(a, provenance={"lattice:i:a": [3]})
    >>> html.count('data-tags="lattice:i:a"'), html.count("stroke-dasharray"), "no C" in html
    (1, 1, True)
    """
    nodes = node_tags_of(artifact) or {}
    dead = [n for n, tags in nodes.items() if provenance and not any(t in provenance for t in tags)]
    if not dead or not artifact.dot:
        return _generic(artifact, highlight, provenance)
    note = "its loop produced no C (simplified away where the kernel was emitted)"
    restyled = "".join(f'  {n} [style=dashed, fillcolor=none, tooltip="{note}"];\n' for n in dead)
    dot = artifact.dot.rstrip().removesuffix("}") + restyled + "}"
    return _generic(replace(artifact, dot=dot), highlight, provenance)


@register_renderer("shapes")
def _render_shapes(artifact: Artifact, highlight=None, provenance=None) -> str:
    """The extents shape inference gave and each shape operator's premise, as a table (from the
    artifact's data; its text without data)."""
    data = artifact.data if isinstance(artifact.data, Mapping) else None
    if not data:
        return _generic(artifact, highlight, provenance)
    return (f'<div class="artifact" data-kind="shapes">{_title(artifact)}{shapes_table(data, colors_of(provenance))}</div>')


@register_renderer("int-facts")
def _render_int_facts(artifact: Artifact, highlight=None, provenance=None) -> str:
    """The looplet lowering's integer facts and why each holds, as a table (from the artifact's
    data; its text without data)."""
    table = facts_table(artifact.data)
    if not table:
        return _generic(artifact, highlight, provenance)
    return f'<div class="artifact" data-kind="int-facts">{_title(artifact)}{table}</div>'


@register_renderer("looplet-nest")
def _render_nest(artifact: Artifact, highlight=None, provenance=None) -> str:
    """A looplet nest drawn compact and top to bottom (:func:`~explorer.nests.compact_nest_dot`),
    scaled to the pane's width when it is still wider (as every drawing is)."""
    if not artifact.dot:
        return _generic(artifact, highlight, provenance)
    html = _generic(replace(artifact, dot=compact_nest_dot(artifact.dot)), highlight, provenance)
    # Graphviz measured the labels in Courier; browsers without Courier use any monospace
    return html.replace('font-family="Courier"', 'font-family="Courier,monospace"')


def render_artifact(artifact: Artifact, highlight: Iterable[str] | None = None,
                    provenance: Mapping[str, Any] | None = None) -> str:
    """HTML for one artifact, by kind (see :data:`RENDERERS`), else drawing plus text.

    Provenance defaults to the artifact's own ``data["provenance"]``.

    >>> html = render_artifact(Artifact("mystery", "m", "some text", dot="digraph { q }"))
    >>> "<svg" in html and "some text" in html
    True
    """
    if provenance is None:
        provenance = collect_provenance([artifact])
    if provenance and artifact.kind != "c" and str(artifact.name).startswith("forall "):
        # the drawing of one loop's lattice: only tags "<kind>:<this index>:<point>" name its nodes
        # (a sequence lattice's name goes on with its sequence, "forall i ∈ k_A ⊔ l_B")
        data = artifact.data if isinstance(artifact.data, Mapping) else {}
        index = str(data.get("index") or (str(artifact.name).split() + [""])[1])
        kept = [t for t in provenance if len(str(t).split(":")) < 3 or str(t).split(":")[1] == index]
        provenance = (provenance.only(kept) if isinstance(provenance, Provenance)
                      else {t: provenance[t] for t in kept})
    elif provenance and artifact.kind == "looplet-nest":
        kept = nest_provenance(artifact, provenance)
        provenance = provenance.only(list(kept)) if isinstance(provenance, Provenance) else kept
    fn = RENDERERS.get(artifact.kind, _generic)
    return (fn(artifact, highlight=highlight, provenance=provenance) + shared_colours_html(artifact, provenance)
            + legend_html(artifact))


def nest_provenance(artifact: Artifact, provenance: Mapping[str, Any]) -> dict:
    """The tags that may name nodes of a looplet nest: looplet tags lowered on the index the
    nest was unfurled on, for the nest's tensor (when the trace says so); other tags go.

    >>> from explorer.provenance import TagInfo
    >>> p = Provenance({"looplet:Lookup:1": [2], "looplet:Stepper:4": [3]},
    ...                {"looplet:Lookup:1": TagInfo("looplet:Lookup:1", "looplet", "i", ("y",), "Lookup"),
    ...                 "looplet:Stepper:4": TagInfo("looplet:Stepper:4", "looplet", "j", ("A",), "Stepper")})
    >>> nest = Artifact("looplet-nest", "A.lvl1[i][j]", "", data={"tensor": "A", "index": "j"})
    >>> list(nest_provenance(nest, p))
    ['looplet:Stepper:4']
    """
    info = getattr(provenance, "info", {})
    data = artifact.data if isinstance(artifact.data, Mapping) else {}
    index, tensor = data.get("index"), data.get("tensor")
    out = {}
    for tag, lines in provenance.items():
        ti = info.get(tag) or TagInfo(tag)
        if ti.kind != "looplet":
            continue
        if index and ti.index and ti.index != index:
            continue
        if tensor and ti.operands and tensor not in ti.operands:
            continue
        out[tag] = lines
    return out


# --- diffs --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Diff:
    """A unified diff between two programs; ``str()`` is the text, :meth:`html` the HTML."""

    text: str
    a: int | None = None
    b: int | None = None

    @property
    def added(self) -> int:
        return sum(1 for ln in self.text.splitlines() if ln.startswith("+") and not ln.startswith("+++"))

    @property
    def removed(self) -> int:
        return sum(1 for ln in self.text.splitlines() if ln.startswith("-") and not ln.startswith("---"))

    def html(self) -> str:
        return render_diff(self.text)

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return bool(self.text)


def render_diff(text: str) -> str:
    """A unified diff as coloured HTML (or a note that nothing changed)."""
    if not text:
        return f'<div class="diff-empty" style="color:{MUTED};font:12px sans-serif">(no change)</div>'
    body = style_tokens(highlight(text, DiffLexer(), highlight_classes()))
    return f'<pre class="diff" style="{PRE_STYLE}">{body}</pre>'


def diff_steps(session, i: int, j: int, context: int = 3) -> Diff:
    """The unified diff from the program at step ``i`` to the program at step ``j``.

    >>> from compiler import Trace
    >>> from explorer.session import explore
    >>> t = Trace()
    >>> _ = t.record("a", after="x = 1")
    >>> _ = t.record("b", before="x = 1", after="x = 2")
    >>> d = diff_steps(explore(t), 0, 1)
    >>> d.added, d.removed
    (1, 1)
    """

    s_i, s_j = session.step(i), session.step(j)
    text = unified_diff(session.program_text(s_i.index), session.program_text(s_j.index),
                        f"step {s_i.index} ({s_i.stage})", f"step {s_j.index} ({s_j.stage})", context)
    return Diff(text, s_i.index, s_j.index)


# --- steps --------------------------------------------------------------------------------------

def drawn_artifacts(step: Step) -> list[Artifact]:
    """The artifacts of ``step`` that the drawing pane shows (all but the C). A kernel's tree
    (an ``ir`` artifact) is drawn when first shown: the lowering records it deferred
    (:func:`compiler.imperative.ir_dot.ir_artifact`).

    >>> from compiler.imperative import Buffer, Function, Store
    >>> from compiler.imperative.ir_dot import ir_artifact
    >>> fn = Function("k", (Buffer("y", "float64"),), [Store("y", 0, 1.0)])
    >>> step = Step("cleanup", after=fn, artifacts=[ir_artifact(fn), Artifact("c", "k", "")])
    >>> [a.kind for a in drawn_artifacts(step)], drawn_artifacts(step)[0].dot is not None
    (['ir'], True)
    """
    return [a for a in step.artifacts if a.kind != "c"]


def step_focus(step: Step) -> list[str]:
    """Names of "the step's part" in drawings: artifacts' ``data["focus"]`` (a name or list),
    and the part after ``:`` in the stage name (``lower:Stepper`` -> ``Stepper``)."""
    names: list[str] = []
    for a in step.artifacts:
        data = a.data if isinstance(a.data, Mapping) else {}
        focus = data.get("focus")
        if isinstance(focus, str):
            names.append(focus)
        elif isinstance(focus, (list, tuple)):
            names.extend(str(f) for f in focus)
    if ":" in step.stage:
        names.append(step.stage.split(":", 1)[1])
    return names


def error_banner(message: str) -> str:
    return ('<div class="error-banner" style="background:#fde8e8;color:#8a1111;border:1px solid #f3b4b4;'
            'padding:6px 8px;border-radius:4px;font:13px sans-serif;white-space:pre-wrap">'
            f"{_html.escape(message)}</div>")


#: The most a step's C section is tall: a pane that scrolls on its own, so a click on a drawing
#: node scrolls the C to its first line and not the page, which would take the node out of view.
C_SECTION_MOST = "60vh"


def section(title: str, body: str, cls: str = "", opens: int | None = None) -> str:
    """A titled part of a step's HTML (``cls``: extra classes, e.g. ``c-section``; ``opens``: the
    C line a C section opens scrolled to, its ``data-ss-open``, which the page scrolls to when it
    shows the step and a notebook's output at once)."""
    at = f' data-ss-open="{int(opens)}"' if opens is not None else ""
    return (f'<div class="pane{" " + cls if cls else ""}"{at}><div class="pane-title" style="font:600 13px sans-serif;'
            f'margin:8px 0 3px">{_html.escape(title)}</div>{body}</div>')


def fold_rewrites(rewrites) -> list[tuple[Any, int]]:
    """Identical rewrites (same rule, before and after) as one ``(rewrite, count)``, in the
    order each first happened: a lattice derivation repeats ``0.0 + C[i] -> C[i]`` once per
    point that needs it.

    >>> from compiler.trace import Rewrite
    >>> [(r.before, n) for r, n in fold_rewrites([Rewrite("id", "0 + x", "x"), Rewrite("k", "1", "1"),
    ...                                           Rewrite("id", "0 + x", "x")])]
    [('0 + x', 2), ('1', 1)]
    """
    counts: dict[tuple[str, str, str], list] = {}
    for r in rewrites:
        entry = counts.setdefault((r.rule, r.before, r.after), [r, 0])
        entry[1] += 1
    return [(r, n) for r, n in counts.values()]


def render_rewrites(step: Step) -> str:
    """The rewrites of a step as an HTML table ('' when there are none): identical rows folded
    into one with a count (``×3``). A lattice's ``derive:*`` row goes from an expression to the
    iteration algebra derived for it; a row that records no right-hand side (traces saved before
    derivations recorded one) has no arrow.

    >>> from compiler import Trace
    >>> from compiler.trace import Rewrite
    >>> s = Trace().record("lattice", rewrites=[Rewrite("derive:identity", "a + b", "")] +
    ...                    [Rewrite("identity", "0 + b", "b")] * 3)
    >>> html = render_rewrites(s)
    >>> html.count("<tr"), "×3" in html, html.count("&rarr;")
    (2, True, 1)
    """
    if not step.rewrites:
        return ""
    # each cell on one line, in a box that scrolls sideways: a narrow pane (the widget's) broke
    # rule names at each hyphen and expressions at each space, a row over several lines
    # (JupyterLab right-aligns table cells)
    cell = "<td style='padding:2px 6px;text-align:left;white-space:nowrap'>"
    rows = []
    for r, n in fold_rewrites(step.rewrites):
        result = (f"{cell}&rarr;</td>{cell}<code>{_html.escape(r.after)}</code></td>" if r.after
                  else f"<td colspan='2' style='padding:2px 6px;color:{MUTED};white-space:nowrap'>"
                       f"its iteration algebra was derived by this rule</td>")
        count = f"×{n}" if n > 1 else ""
        rows.append(f"<tr>{cell}<b>{_html.escape(r.rule)}</b></td>{cell}<code>{_html.escape(r.before)}</code></td>"
                    f"{result}<td style='padding:2px 6px;color:{MUTED}'>{count}</td></tr>")
    return (f'<div class="ss-rewrites" style="overflow-x:auto;max-width:100%">'
            f'<table class="rewrites" style="border-collapse:collapse;font-size:12px">{"".join(rows)}</table></div>')


def render_step(step, index: int | None = None, session=None, parts: Iterable[str] | None = None,
                provenance: Mapping[str, Iterable[int]] | None = None, linked: bool = False) -> str:
    """HTML for one step: header, error, program, diff, rewrites, artifacts and C.

    ``step`` is a :class:`~compiler.trace.Step` or a session :class:`~explorer.session.StepView`
    (which also gives the diff from the previous step's program). ``parts`` restricts the
    sections (``"header"``, ``"program"``, ``"diff"``, ``"rewrites"``, ``"artifacts"``, ``"c"``).
    ``provenance`` (``{tag: C lines}``, e.g. of the whole trace) colours the program, drawings and C;
    by default the step's own.

    ``linked``: for a notebook's output (``display(HTML(render_step(view, linked=True)))``), the
    step links its parts as the exported page does (:mod:`explorer.linking`): hovering a coloured
    part outlines every part of its tag, clicking one keeps them outlined and scrolls the C to the
    tag's first line, and a step that draws something shows the kernel's C beside it
    (:func:`kernel_c`). A notebook runs no ``<script>`` of an output shown in a widget, so the
    handlers are inline, on the step's box (the page's own script is not needed).

    >>> from compiler import Trace
    >>> t = Trace(); s = t.record("parse", before="y[i]=A[i]", after="y[i] = A[i]")
    >>> "parse" in render_step(s, 0), "onclick=" in render_step(s, 0, linked=True)
    (True, True)
    """

    view = step if isinstance(step, StepView) else None
    if view is not None:
        session, index, step = view.session, view.index, view.step
    want = set(parts) if parts is not None else {"header", "program", "diff", "rewrites", "artifacts", "c"}
    out = []
    if "header" in want:
        label = f"step {index}: " if index is not None else ""
        note = (f' <span style="color:{MUTED};font-weight:normal">— {_html.escape(step.note.splitlines()[0])}</span>'
                if step.note and step.error is None else "")
        out.append(f'<div class="step-header" style="font:600 14px sans-serif;margin:4px 0">'
                   f"{label}{_html.escape(step.stage)}{note}</div>")
    if step.error is not None:
        out.append(error_banner(step.error))
    prov = _step_provenance(step, view, provenance)
    if prov.colors is None:   # (the step is a view of its own: its tags get distinct colours)
        prov = prov.for_view()
    focus = step_focus(step)
    # the drawings first: their nodes get the view's first colours (distinct while the palette lasts)
    drawings = "".join(render_artifact(a, focus, prov or None) for a in drawn_artifacts(step)) \
        if "artifacts" in want else ""
    prov.colors.drawn_so_far()
    shapes = shape_data_of(session.steps if session is not None else [step])
    if "program" in want:
        program = view.program if view is not None else (step.after_text or step.before_text)
        if program:
            out.append(section("program", render_program(program, prov, index, shapes=shapes)))
    if "diff" in want:
        if view is not None:
            shown = diff_view(session, index)
            title, text, kind = shown.title, shown.text, shown.kind
        else:
            title, kind = "diff: what the step changed", "diff"
            text = _unified(step.before_text, step.after_text) if step.before_text else ""
        if text:
            out.append(section(title, render_diff(text) if kind == "diff" else render_program(text, prov, index, shapes=shapes)))
    if "rewrites" in want and step.rewrites:
        distinct = len(fold_rewrites(step.rewrites))
        extra = f", {distinct} distinct" if distinct < len(step.rewrites) else ""
        out.append(section(f"rewrites ({len(step.rewrites)}{extra})", render_rewrites(step)))
    if drawings:
        out.append(section("artifacts", drawings))
    if "c" in want:
        opens = c_opening_line(session, index) if session is not None and index is not None else None
        for a in step.artifacts:
            if a.kind == "c":
                out.append(section(f"C: {a.name}", render_c(a.text, prov, most=C_SECTION_MOST), "c-section", opens))
        if linked and session is not None and index is not None:
            out.append(kernel_c(session, index, prov))
            if opens is not None:   # (a notebook's output runs no script: an image's onerror scrolls it)
                out.append(scroll_to_line(opens, ".c-section", ".ss-linked-step"))
    if step.error is not None and step.note:
        out.append(f"<details><summary>traceback</summary><pre>{_html.escape(step.note)}</pre></details>")
    handlers = f" {link_handlers('.c-section', root='.ss-linked-step')}" if linked else ""
    return (f'<div class="step{" ss-linked-step" if linked else ""}" data-stage="{_html.escape(step.stage)}"'
            f'{view_colors_attr(prov)}{handlers}>' + "".join(out) + "</div>")


def kernel_c(session, i: int, prov) -> str:
    """The C next to step ``i`` of ``session`` that draws something, lowers a looplet or shows a
    program coloured by the C's tags (and emits none itself), so its parts and C lines link both
    ways on the step's own: the C as it stands there, or the kernel's, titled which
    (:func:`~explorer.stepdiff.c_view`); the lines of the looplet a ``lower:*`` step lowers carry
    the focus bar. Else ``""``."""
    shown = kernel_c_parts(session, i, prov)
    if shown is None:
        return ""
    title, text, paint, opens = shown
    return section(title, render_code(text, "c", paint.colors, paint.titles, True, paint.tags, focus_lines=paint.focus,
                                      most=C_SECTION_MOST), "c-section", opens)


def kernel_c_parts(session, i: int, prov) -> tuple | None:
    """What :func:`kernel_c` shows, as data: ``(title, C source, its CPaint, the line it opens at)``, else None."""
    step = session.steps[i]
    lowered = prov.lowered_at(i) if prov else []
    if not prov or any(a.kind == "c" for a in step.artifacts) or not (
            lowered or any(a.kind != "c" and a.dot for a in step.artifacts)
            or program_marks(session.program_text(i), prov, i)):
        return None
    c = c_view(session, i)
    if c.emitted_at is None:
        return None
    return c.title, c.text, c_paint(prov, focus=lowered), c_opening_line(session, i)


def _step_provenance(step: Step, view, provenance) -> Provenance:
    """The provenance a step is drawn with: the one given, else its session's, else its own."""
    if isinstance(provenance, Provenance):
        return provenance
    if provenance is not None:
        c_text = ""
        if view is not None:
            c = view.session.last_artifact("c")
            c_text = c.text if c is not None else ""
        c_text = next((a.text for a in step.artifacts if a.kind == "c"), c_text)
        return Provenance(provenance, c_text=c_text)
    if view is not None:
        return view.session.provenance()
    return trace_provenance([step])


def _unified(a: str, b: str) -> str:

    return unified_diff(a, b, "before", "after")
