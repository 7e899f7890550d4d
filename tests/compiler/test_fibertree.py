import re

import numpy as np

from compiler.fibertree import fiber_tree_artifact, fiber_tree_dot, fiber_tree_text
from compiler.tensor import Tensor
from compiler.trace import Trace

ARR = np.array([[0, 1.5, 0, 0], [0, 0, 0, 0], [2.0, 0, 0, 3.0]])


def labels(dot):
    return re.findall(r'n\d+ \[label="([^"]*)"', dot)


def test_csr_tree_has_all_rows_and_stored_columns():
    dot = fiber_tree_dot(Tensor.from_numpy(ARR, "csr"), "A")
    assert dot.startswith('digraph "A" {') and dot.rstrip().endswith("}")
    # dense rows 0, 1, 2; stored columns 1 | 0, 3; values
    assert labels(dot) == ["0", "1", "2", "1", "0", "3", "1.5", "2.0", "3.0"]
    assert 'label="i: Dense"' in dot and 'label="j: SparseList"' in dot and 'label="values: Element"' in dot


def test_dcsr_tree_skips_empty_rows_and_csc_walks_columns():
    assert labels(fiber_tree_dot(Tensor.from_numpy(ARR, "dcsr")))[:2] == ["0", "2"]
    dot = fiber_tree_dot(Tensor.from_numpy(ARR, "csc"), "A")
    assert 'label="j: Dense"' in dot and 'label="i: SparseList"' in dot
    assert labels(dot)[4:] == ["2", "0", "2", "2.0", "1.5", "3.0"]


def test_coo_nodes_are_tuples():
    dot = fiber_tree_dot(Tensor.from_numpy(ARR, "coo"))
    assert labels(dot) == ["(0, 1)", "(2, 0)", "(2, 3)", "1.5", "2.0", "3.0"]


def test_large_tensor_stays_small():
    big = Tensor.from_numpy(np.ones((1000, 1000)), "dense")
    dot = fiber_tree_dot(big, "B", max_children=4)
    assert len(labels(dot)) < 60
    assert "… 996 more" in dot
    text = fiber_tree_text(big, "B", max_children=4)
    assert len(text.splitlines()) < 40 and "… (996 more)" in text


def test_text_and_artifact_round_trip_through_a_trace():
    t = Tensor.from_numpy(ARR, "csr", name="A")
    text = t.fiber_tree_text()
    assert text.splitlines()[:3] == ["A: Dense(SparseList(Element(0.0))) shape=(3, 4) fill=0.0", "i=0", "  j=1: 1.5"]
    art = fiber_tree_artifact(t)
    assert art.kind == "fiber-tree" and art.name == "A" and art.dot == t.fiber_tree_dot()
    tr = Trace()
    tr.record("inputs", artifacts=[art])
    again = Trace.from_json(tr.to_json()).steps[0].artifact("fiber-tree")
    assert again.text == text and again.data["nnz"] == 3


def test_scalar_pattern_and_empty():
    assert fiber_tree_text(Tensor.from_numpy(np.float64(4.0), "dense")).endswith("value: 4.0")
    from compiler.levels import Dense, Pattern, SparseList
    p = Tensor.from_numpy(np.array([[True, False]]), Dense(SparseList(Pattern())))
    assert "True" in labels(fiber_tree_dot(p))
    e = Tensor.from_numpy(np.zeros((0, 3)), "csr")
    assert labels(fiber_tree_dot(e)) == []
