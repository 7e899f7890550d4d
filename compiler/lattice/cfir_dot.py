"""The lattice strategy's CFIR drawn as a tree (the ``cfir`` step's drawing).

A forall holds its loops (``while i <- A0 ∩ B0``), one after the other left to right; a loop
with a switch holds its cases, most specific first; a case, an ``alloc`` or a workspace holds
its body. Consecutive assignments and folds are one box (see :mod:`compiler.treedot`).

>>> from compiler.notation import parse
>>> from compiler.format import sparse_vector, dense
>>> from compiler.lattice.plan import Setup
>>> from compiler.lattice.cfir_builder import build_cfir
>>> setup = Setup.create(parse("a[i] = b[i] + c[i]"), {"b": sparse_vector(), "c": sparse_vector(), "a": dense(1)})
>>> dot = cfir_dot(build_cfir(setup.statement, setup))
>>> [line.split('"')[1] for line in dot.splitlines() if "label=" in line and "->" not in line][:3]
['forall i', 'while i <- b0 ∩ c0', 'case b0 c0']
"""

from __future__ import annotations

from ..treedot import TreeDot
from .cfir import CAlloc, CCase, CDenseWorkspace, CForall, CLoop, CSeq, CWorkspace

__all__ = ["cfir_dot"]


def _head(node) -> str:
    """A node's first printed line, without its closing ``:``."""
    line = str(node).splitlines()[0].strip()
    return line[:-1] if line.endswith(":") else line


def cfir_dot(cfir) -> str:
    """DOT source of the CFIR ``cfir`` as a tree."""
    t = TreeDot("cfir")
    _visit(t, cfir, None, "")
    return t.source()


def _visit(t: TreeDot, n, parent, edge: str) -> None:
    run: list[str] = []

    def flush():
        nonlocal edge
        if run:
            t.statements(list(run), parent, edge)
            run.clear()
            edge = ""

    for s in (n.stmts if isinstance(n, CSeq) else (n,)):
        if isinstance(s, CSeq):
            flush()
            _visit(t, s, parent, edge)
            edge = ""
        elif isinstance(s, CForall):
            flush()
            me = t.control(_head(s), parent, edge)
            edge = ""
            for loop in s.loops:
                _loop(t, loop, me)
            if s.fold is not None:
                t.statements([str(s.fold)], me)
        elif isinstance(s, CAlloc):
            flush()
            me = t.control(_head(s), parent, edge)
            edge = ""
            _visit(t, s.body, me, "")
        elif isinstance(s, (CWorkspace, CDenseWorkspace)):
            flush()
            me = t.control(_head(s), parent, edge)
            edge = ""
            # the producer, then the consumer; the printed sort and reset lines between and after
            lines = str(s).splitlines()
            parts = s.body.stmts if isinstance(s.body, CSeq) else (s.body,)
            _visit(t, parts[0], me, "produce")
            between = [x for x in lines if x.strip().startswith(("sort ", f"({s.temp}_list"))]
            if between:
                t.statements(between, me)
            for x in parts[1:]:
                _visit(t, x, me, "consume")
            t.statements([lines[-1]], me)
        else:
            run.extend(str(s).splitlines())
    flush()


def _loop(t: TreeDot, loop: CLoop, parent: str) -> None:
    lines = str(loop).splitlines()
    me = t.control(_head(loop), parent)
    switch = len(lines) > 1 and lines[1].strip().startswith("switch ")
    if not switch:
        _visit(t, loop.cases[0].body, me, "")
        return
    for case in loop.cases:
        _case(t, case, me)


def _case(t: TreeDot, case: CCase, parent: str) -> None:
    text = str(case).splitlines()[0].strip()
    if ":" in text and not text.endswith(":"):
        # one statement (or omit): the case box, the statement below it
        head, stmt = text.split(":", 1)
        me = t.control(head, parent)
        t.statements([stmt], me)
        return
    me = t.control(_head(case), parent)
    _visit(t, case.body, me, "")
