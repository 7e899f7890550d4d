"""The parse step draws the index notation's expression tree (its drawing was empty)."""

import re

import pytest

from compiler import Trace
from compiler.notation import parse
from compiler.notation.ast import Access, Assign, walk
from compiler.notation.drawing import notation_tree

PROGRAMS = ["y[i] = A[i, j] * x[j]", "y[i] = A[i, j] * x[j] + -x[i]", "s[] max= A[i, j]",
            "C[i, k] = slice(A[i, j], j -> k, (151, 2, -3))", "y[i] = sqrt(x[i]) + 2 * i"]


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_node_of_the_program_is_drawn_once_under_its_parent(program):
    p = parse(program)
    text, dot, data = notation_tree(p)
    nodes = [n for n in walk(p)]   # (the assignment, its lhs, then the rhs' nodes in pre-order)
    assert len(data["nodes"]) == len(nodes) == len(text.splitlines())
    edges = [line for line in dot.splitlines() if re.fullmatch(r"\s*n\d+ -> n\d+;", line)]
    assert len(edges) == len(nodes) - 1   # (a tree: every node but the root has one parent)
    accesses = [n for n in nodes if isinstance(n, Access)]
    drawn = [about for about in data["nodes"].values() if about["role"] == "access"]
    assert [(a["tensor"], a["indices"]) for a in drawn] == [(a.tensor, [i.name for i in a.loop_indices])
                                                           for a in accesses]
    assert sum(f'label="{a}", shape=box' in dot for a in {str(a) for a in accesses}) == len({str(a) for a in accesses})
    assert isinstance(nodes[0], Assign) and text.splitlines()[1] == f"  {p.lhs}"


def test_the_parse_step_records_the_tree_drawn_when_read():
    trace = Trace()
    parse("y[i] = A[i, j] * x[j]", trace=trace)
    (art,) = trace.steps[0].artifacts
    assert art.kind == "notation-tree" and art.name == "y"
    assert art.dot.startswith("digraph notation {") and art.text.splitlines()[:3] == ["=", "  y[i]", "  sum[j]"]
    assert Trace.from_json(trace.to_json()).steps[0].artifacts[0].dot == art.dot
