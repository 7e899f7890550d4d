"""A program's printed accesses and reductions carry the tags of the expression tree's nodes they
are (explorer.provenance: ``Provenance.trees``, paired with the printer's parts in order), so a
C line of a tree node outlines the program's part as it outlines the node's box; in Compare's
columns as in the single view."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

import compiler as ss
from compiler import array as xp
from explorer import explore
from explorer.provenance import program_marks


def parse_marks(program, strategy, **formats):
    kernel = ss.lower(program, strategy, **formats)
    session = explore(kernel.trace)
    prov = session.provenance()
    at = session.stages().index("parse")
    tree = next(a for a in session.steps[at].artifacts if a.kind == "notation-tree")
    return program_marks(session.program_text(at), prov, at), tree, prov


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_each_access_carries_its_own_nodes_tag(strategy):
    """``y[i] = A[i, j] * x[j] + A[i, j]``: the two ``A[i, j]`` are two nodes, each part takes its
    own node's tag (paired in order), after the strategy's tags (which keep colouring it); the
    written ``y[i]`` and ``sum`` theirs."""
    marks, tree, prov = parse_marks("y[i] = sum[j](A[i, j] * x[j]) + A[i, k] * x[k]", strategy, A="csr", x="dense")
    nodes = tree.data["nodes"]
    expr = {m.text + f"@{m.start}": [t for t in m.tags if t.startswith("expr:")] for m in marks}
    by_about = [(ident, about) for ident, about in nodes.items() if about["role"] in ("access", "reduce")]
    want = [f"expr:{ident}" for ident, _ in by_about]
    got = [t for m in sorted(marks, key=lambda m: m.start) for t in m.tags if t.startswith("expr:")]
    assert got == [t for t in want if t in prov], (expr, want)
    a_parts = [m for m in marks if m.text in ("A[i, j]", "A[i, k]")]
    assert len(a_parts) == 2 and len({m.tags[-1] for m in a_parts}) == 2, a_parts
    for m in marks:
        if len(m.tags) > 1:   # (a part the strategy tags keeps its first tag: its colour)
            assert not m.tags[0].startswith("expr:"), m


def test_the_array_statements_parts_carry_its_tree_tags():
    """``[A; B] x``'s array step: its statement's accesses take the tags of the statement tree's
    nodes the array step records (``data["tree"]``), the ones the boxes of ``A``, ``B`` and ``x``
    carry; ``x[j]``, which the looplets tag nowhere else, is marked by its node alone."""
    A, B = (sp.random(n, 5, density=0.4, format="csr", random_state=k) for k, n in enumerate((6, 4)))
    expr = xp.concat([ss.asarray(A, name="A"), ss.asarray(B, name="B")], axis=0) @ ss.asarray(np.arange(5.0), name="x")
    session = explore(ss.lower(expr, strategy="looplets").trace)
    at = session.stages().index("array")
    art = session.steps[at].artifacts[0]
    assert art.kind == "array-expression" and set(art.data["tree_tags"]) == set(art.data["tree"])
    boxes = {n["label"].split()[0]: art.data["node_tags"].get(n["id"], []) for n in art.data["nodes"]}
    marks = {m.text: m.tags for m in program_marks(session.program_text(at), session.provenance(), at)}
    for access, box in (("A[k, j]", "A"), ("B[l, j]", "B"), ("x[j]", "x")):
        assert boxes[box][0] in marks[access], (access, marks[access], boxes[box])
    assert [t for t in marks["x[j]"]] == boxes["x"][:1]


def test_a_saved_trace_keeps_the_tree_tags(tmp_path):
    kernel = ss.lower("y[i] = A[i, j] * x[j]", "looplets", A="csr", x="dense")
    path = tmp_path / "t.json"
    path.write_text(kernel.trace.to_json())
    session = explore(ss.Trace.from_json(path.read_text()))
    at = session.stages().index("parse")
    marks = program_marks(session.program_text(at), session.provenance(), at)
    assert any(re.fullmatch(r"expr:n\d+", t) for m in marks if m.text == "x[j]" for t in m.tags), marks
