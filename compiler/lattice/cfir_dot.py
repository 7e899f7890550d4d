"""The lattice strategy's CFIR drawn as a tree (the ``cfir`` step's drawing).

A forall holds its loops (``while i <- A0 ∩ B0``), one after the other left to right; a loop
with a switch holds its cases, most specific first; a case, an ``alloc`` or a workspace holds
its body. Consecutive assignments and folds are one box (see :mod:`compiler.treedot`).

>>> from compiler.lattice.examples import sparse_vector_sum
>>> setup, cfir = sparse_vector_sum()
>>> dot = cfir_dot(cfir)
>>> [line.split('"')[1] for line in dot.splitlines() if "label=" in line and "->" not in line][:3]
['forall i', 'while i <- b0 ∩ c0', 'case b0 c0']
"""

from __future__ import annotations

from ..treedot import TreeDot
from .cfir import (CAlloc, CAssign, CCase, CDenseWorkspace, CFold, CForall, CLoop, CSeq, CSkip, CWorkspace, case_head,
                   case_tag, iterated_tag, loop_head, loop_tag)

__all__ = ["cfir_dot", "cfir_line_spans", "cfir_line_tags", "cfir_tree", "lattice_line_spans", "lattice_line_tags",
           "lattice_node_tags"]


def _head(node) -> str:
    """A node's first printed line, without its closing ``:``."""
    line = str(node).splitlines()[0].strip()
    return line[:-1] if line.endswith(":") else line


def cfir_dot(cfir, names=None) -> str:
    """DOT source of the CFIR ``cfir`` as a tree."""
    return cfir_tree(cfir, names).source()


def cfir_tree(cfir, names=None) -> TreeDot:
    """The tree of :func:`cfir_dot`, whose :attr:`~compiler.treedot.TreeDot.node_tags` give a
    loop's box and what it runs the tag of the loop's code, and a case's box and body the tag
    of the case (``names``: the setup's generated name of each access, which case tags use;
    without it cases carry their loop's tag), as the emitter tags them.

    >>> from compiler.lattice.examples import sparse_vector_sum
    >>> setup, cfir = sparse_vector_sum()
    >>> tags = cfir_tree(cfir, setup.names).node_tags
    >>> tags["n1"], tags["n2"]
    (['lattice:i:b∩c'], ['lattice:i:b∩c'])
    """
    t = TreeDot("cfir")
    _visit(t, cfir, None, "", (), names)
    return t


def _visit(t: TreeDot, n, parent, edge: str, tags=(), names=None) -> None:
    run: list[str] = []

    def flush():
        nonlocal edge
        if run:
            t.statements(list(run), parent, edge, tags)
            run.clear()
            edge = ""

    for s in (n.stmts if isinstance(n, CSeq) else (n,)):
        if isinstance(s, CSeq):
            flush()
            _visit(t, s, parent, edge, tags, names)
            edge = ""
        elif isinstance(s, CForall):
            # (a forall runs several loops: its box is none of their points)
            flush()
            me = t.control(_head(s), parent, edge, tags)
            edge = ""
            for loop in s.loops:
                _loop(t, loop, me, tags, names)
            if s.fold is not None:
                t.statements([str(s.fold)], me, "", tags)
        elif isinstance(s, CAlloc):
            flush()
            me = t.control(_head(s), parent, edge, tags)
            edge = ""
            _visit(t, s.body, me, "", tags, names)
        elif isinstance(s, (CWorkspace, CDenseWorkspace)):
            flush()
            me = t.control(_head(s), parent, edge, tags)
            edge = ""
            # the producer, then the consumer; the printed sort and reset lines between and after
            lines = str(s).splitlines()
            parts = s.body.stmts if isinstance(s.body, CSeq) else (s.body,)
            _visit(t, parts[0], me, "produce", tags, names)
            between = [x for x in lines if x.strip().startswith(("sort ", f"({s.temp}_list"))]
            if between:
                t.statements(between, me, "", tags)
            for x in parts[1:]:
                _visit(t, x, me, "consume", tags, names)
            t.statements([lines[-1]], me, "", tags)
        else:
            run.extend(str(s).splitlines())
    flush()


def _loop(t: TreeDot, loop: CLoop, parent: str, tags, names) -> None:
    lines = str(loop).splitlines()
    tags = (loop_tag(loop),) + tuple(tags)
    me = t.control(_head(loop), parent, "", tags)
    switch = len(lines) > 1 and lines[1].strip().startswith("switch ")
    if not switch:
        # one case, drawn as the loop's body: its code is still tagged as the case
        _visit(t, loop.cases[0].body, me, "", _with_case(tags, loop, loop.cases[0], names), names)
        return
    for case in loop.cases:
        _case(t, case, me, loop, tags, names)


def _with_case(tags: tuple, loop: CLoop, case: CCase, names) -> tuple:
    """``tags`` with the case's own first, when the access names are known."""
    if names is None or not all(k in names for k in case.present):
        return tags
    return tuple(dict.fromkeys((case_tag(loop.index, [names[k] for k in case.present]),) + tags))


def _case(t: TreeDot, case: CCase, parent: str, loop: CLoop, tags, names) -> None:
    tags = _with_case(tags, loop, case, names)
    text = str(case).splitlines()[0].strip()
    if ":" in text and not text.endswith(":"):
        # one statement (or omit): the case box, the statement below it
        head, stmt = text.split(":", 1)
        me = t.control(head, parent, "", tags)
        t.statements([stmt], me, "", tags)
        return
    me = t.control(_head(case), parent, "", tags)
    _visit(t, case.body, me, "", tags, names)


def lattice_node_tags(lattice, names) -> dict[str, list[str]]:
    """``{node id: tags}`` of a lattice's drawing (:meth:`~compiler.lattice.lattice.Lattice.dot`,
    whose node ``p<n>`` is its point ``n``), as the emitter tags the code each point made: the case
    of the operands present first, then the loop that iterates the point's sparse operands
    (``names``: the setup's generated name of each access). Recorded as the lattice artifact's
    ``data["node_tags"]``, so the explorer links a point and its C lines without reading its label.

    >>> from compiler.lattice.examples import sparse_vector_sum
    >>> setup, _ = sparse_vector_sum()
    >>> lattice_node_tags(setup.lattices[0], setup.names)["p0"]
    ['lattice:i:b∩c']
    """
    L, out = lattice, {}
    sparse = {op.key for op in L.operands if op.kind == "sparse"}
    loops = {frozenset(loop.iterated): iterated_tag(L.index, [names[k] for k in loop.iterated], L.universe)
             for loop in L.loops}
    for n, p in enumerate(L.points):
        tags = [case_tag(L.index, [names[op.key] for op in L.operands if op.key in p.present])]
        if frozenset(p.present & sparse) in loops:
            tags.append(loops[frozenset(p.present & sparse)])
        out[f"p{n}"] = list(dict.fromkeys(tags))
    return out


def lattice_line_tags(lattice, names) -> dict[str, list[str]]:
    """``{line: tags}`` of a lattice's text (:meth:`~compiler.lattice.lattice.Lattice.text`, 1-based
    lines as strings, JSON's keys): each point's line the tags of :func:`lattice_node_tags`, each
    loop's line (``while j <- A ∩ B: ...``) its loop's tag. Recorded as the lattice artifact's
    ``data["line_tags"]``, so the explorer marks the text's points and loops without deriving tags
    from the names printed in it.

    >>> from compiler.lattice.examples import sparse_vector_sum
    >>> setup, _ = sparse_vector_sum()
    >>> L = setup.lattices[0]
    >>> tags = lattice_line_tags(L, setup.names)
    >>> L.text().splitlines()[5], tags["6"]
    ('  while i <- b ∩ c: b c, b, c', ['lattice:i:b∩c'])
    """
    L = lattice
    points = lattice_node_tags(L, names)
    out = {str(n + 2): points[f"p{n}"] for n in range(len(L.points))}
    first_loop = len(L.points) + 3   # (the header, the points, then "loops:")
    for m, loop in enumerate(L.loops):
        out[str(first_loop + m)] = [iterated_tag(L.index, [names[k] for k in loop.iterated], L.universe)]
    return out


def lattice_line_spans(lattice, names) -> dict[str, list[list]]:
    """``{line: [[start, end, tag, role]]}`` of a lattice's text: the columns of each point's label
    and each loop's head (:meth:`~compiler.lattice.lattice.Lattice.text_spans`) with the tag the
    line gets first in :func:`lattice_line_tags`, and which it is (``"point"``, ``"loop"``). Recorded as the artifact's ``data["line_spans"]``, so
    the explorer marks them where the printer put them instead of finding them by pattern.

    >>> from compiler.lattice.examples import sparse_vector_sum
    >>> setup, _ = sparse_vector_sum()
    >>> lattice_line_spans(setup.lattices[0], setup.names)["2"]
    [[0, 10, 'lattice:i:b∩c', 'point']]
    """
    tags = lattice_line_tags(lattice, names)
    first_loop = len(lattice.points) + 3
    return {str(n): [[a, b, tags[str(n)][0], "loop" if n >= first_loop else "point"]]
            for n, (a, b) in lattice.text_spans().items() if tags.get(str(n))}


def cfir_line_spans(cfir, names) -> dict[str, list[list]]:
    """``{line: [[start, end, tag, role]]}`` of the CFIR's text: the columns of each loop's head and
    each case's head (:func:`~compiler.lattice.cfir.loop_head`, :func:`~compiler.lattice.cfir.case_head`)
    with the loop's or case's tag and which it is (``"loop"``, ``"case"``). Recorded as the artifact's ``data["line_spans"]``, like a
    lattice's: a case testing values (``case m0 (values m[i])``) reads as no case to a pattern.

    >>> from compiler.lattice.examples import sparse_vector_sum
    >>> setup, cfir = sparse_vector_sum()
    >>> lines, spans = str(cfir).splitlines(), cfir_line_spans(cfir, setup.names)
    >>> [(lines[int(n) - 1][a:b], t, role) for n, ((a, b, t, role),) in spans.items()][:2]
    [('while i <- b0 ∩ c0', 'lattice:i:b∩c', 'loop'), ('case b0 c0', 'lattice:i:b∩c', 'case')]
    """
    lines = str(cfir).splitlines()
    out = {}
    for n, heads in _tagged_lines(cfir, names)[1].items():
        line = lines[int(n) - 1]
        start = len(line) - len(line.lstrip())
        spans = [[start, start + len(head), tag, role] for head, tag, role in heads
                 if tag and line.startswith(head, start)]
        if spans:
            out[n] = spans
    return out


def cfir_line_tags(cfir, names) -> dict[str, list[str]]:
    """``{line: tags}`` of the CFIR's text (``str(cfir)``, 1-based lines as strings): a loop's line
    the loop's tag, then the tag of its first case (the point of all it iterates and locates, whose
    accesses its body reads); a case's line the case's tag (``names``: the setup's generated name of
    each access). Recorded as the CFIR artifact's ``data["line_tags"]``, like a lattice's.

    >>> from compiler.lattice.examples import sparse_vector_sum
    >>> setup, cfir = sparse_vector_sum()
    >>> lines, tags = str(cfir).splitlines(), cfir_line_tags(cfir, setup.names)
    >>> [(lines[int(n) - 1].strip(), ts) for n, ts in tags.items()][:2]
    [('while i <- b0 ∩ c0:', ['lattice:i:b∩c']), ('case b0 c0: a[i] = b[i] + c[i]', ['lattice:i:b∩c'])]
    """
    return {n: ts for n, ts in _tagged_lines(cfir, names)[0].items() if ts}


def _tagged_lines(cfir, names) -> tuple[dict[str, list[str]], dict[str, list[tuple[str, str, str]]]]:
    """The tags of each line of the CFIR's text, and the head (a loop's, a case's) it starts
    with, with its tag and role: one walk counting the printer's lines for both."""
    out: dict[str, list[str]] = {}
    heads: dict[str, list[tuple[str, str, str]]] = {}

    def size(n) -> int:
        return len(str(n).splitlines())

    def case_tags(loop: CLoop, case: CCase) -> list[str]:
        known = names is not None and all(k in names for k in case.present)
        return [case_tag(loop.index, [names[k] for k in case.present])] if known else []

    def walk(n, line: int) -> int:
        """Tag the lines of ``n``, the first at ``line``; the line after it."""
        if isinstance(n, CSeq):
            for s in n.stmts:
                line = walk(s, line)
            return line
        if isinstance(n, CForall):
            line += 1
            for loop in n.loops:
                line = walk(loop, line)
            return line if n.fold is None else walk(n.fold, line)
        if isinstance(n, CLoop):
            first = case_tags(n, n.cases[0]) if n.cases else []
            out[str(line)] = list(dict.fromkeys([loop_tag(n), *first]))
            heads[str(line)] = [(loop_head(n), loop_tag(n), "loop")]
            if len(n.cases) == 1 and not n.cases[0].tests and not n.cases[0].value_tests:
                return walk(n.cases[0].body, line + 1)
            line += 2   # (the head and its switch)
            for case in n.cases:
                out[str(line)] = case_tags(n, case)
                heads[str(line)] = [(case_head(case), t, "case") for t in out[str(line)][:1]]
                end = walk(case.body, line + 1)   # (a body of one line, untagged, is printed on the case's)
                line = line + 1 if case.omit or end == line + 2 else end
            return line
        if isinstance(n, CAlloc):
            return walk(n.body, line + 1)
        if isinstance(n, CWorkspace):
            parts = n.body.stmts if isinstance(n.body, CSeq) else (n.body,)
            line = walk(parts[0], line + 1) + (1 if n.ordered else 0)
            for x in parts[1:]:
                line = walk(x, line)
            return line + 1
        if isinstance(n, CDenseWorkspace):
            return walk(n.body, line + 1) + 1
        # (an assignment, a fold or a skip is one line)
        return line + (1 if isinstance(n, (CAssign, CFold, CSkip)) else size(n))

    walk(cfir, 1)
    return out, heads
