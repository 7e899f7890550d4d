"""Provenance of constants folded from fills (issue 30 item 6): where the looplets strategy's
simplifier folds an absent operand's fill into a constant (``y[i] = A[i] * 2 + 1`` writes ``1.0``
where A is absent, its fill 0), the line writing it carries the tags of the expression nodes that
made the constant (``*``, ``+``, the literals), not the root's alone, so clicking ``*`` in a
linked step outlines it. All read from the data the compiler recorded."""

from __future__ import annotations

import html as _html
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.levels import Element, SparseRunList
from compiler.notation import parse
from compiler.notation.drawing import tree_nodes
from explorer import explore, render_step

NAN, INF = float("nan"), float("inf")


def _c(kernel):
    return [a for s in kernel.trace.steps for a in s.artifacts if a.kind == "c"][-1]


def _writes(c, output: str = "y") -> dict[int, str]:
    """``{C line: text}`` of the lines that store into ``output``'s values."""
    return {k: line for k, line in enumerate(c.text.splitlines(), 1) if re.search(rf"\b{output}_val\[[^]]*\] =", line)}


def _constant(line: str) -> bool:
    """Whether a C line writing the output stores a constant (reads no tensor's value)."""
    return "_val[" not in line.split("=", 1)[1]


def test_a_fill_regions_constant_carries_the_operators_that_made_it():
    """``y[i] = A[i] * 2 + 1``, A sparse (fill 0), by the looplets strategy: the lines writing
    ``1.0`` (A's fill runs between and after its entries) carry ``*``, ``+``, ``2`` and ``1``'s
    tags besides the root's and the output's, not ``A[i]``'s (not read there); the line reading A
    carries all. In the linked parse step, the ``*`` node names its tag and each of those C lines
    carries it. Before, the constant's lines carried the root, the output and ``1`` only."""
    program = "y[i] = A[i] * 2 + 1"
    a = np.array([1.5, 0.0, 0.0, 3.0, 0.0])
    A = ss.Tensor.from_numpy(a, "sv")
    kernel = ss.lower(program, "looplets", y="dense", A=A)
    np.testing.assert_allclose(np.asarray(kernel(A=A).to_numpy()), a * 2 + 1)
    np.testing.assert_allclose(np.asarray(kernel.interpret(A=A).to_numpy()), a * 2 + 1)
    nodes = {n.label: f"expr:{n.ident}" for n in tree_nodes(parse(program))}
    c = _c(kernel)
    prov = explore(kernel.trace).provenance()
    writes = _writes(c)
    constants = [k for k, line in writes.items() if _constant(line)]
    assert constants and all(writes[k].rstrip().endswith("= 1.0;") for k in constants), writes
    for label in ("=", "y[i]", "+", "*", "2", "1"):
        assert set(prov[nodes[label]]) == set(writes), label
    assert set(prov[nodes["A[i]"]]) == set(writes) - set(constants)

    # the linked parse step: the * node carries its tag, the constant's C lines carry it too
    html = render_step(explore(kernel.trace).step(0), linked=True)
    star = re.search(r'data-tags="([^"]*)">\s*<title>[^<]*</title>(?:(?!</g>).)*>\*</text>', html, re.S)
    assert star and star.group(1).split() == [nodes["*"]], star
    line_tags = {int(m.group(1)): _html.unescape(m.group(2)).split() for m in re.finditer(
        r'<span class="ln" data-line="(\d+)"[^>]*data-tags="([^"]*)"', html)}
    assert all(nodes["*"] in line_tags[k] for k in constants), {k: line_tags.get(k) for k in constants}


PROGRAMS = ("y[i] = A[i] * 2 + 1", "y[i] = A[i] * B[i] + 1", "y[i] = (A[i] + 1) * B[i]")
VALUES = st.sampled_from([0.0, 1.5, -2.0, NAN, INF, -INF])


@pytest.mark.parametrize("strategy", ["looplets", "lattice"])
@settings(max_examples=6, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(PROGRAMS), st.lists(VALUES, max_size=5), st.lists(VALUES, max_size=5),
       st.sampled_from([0.0, 1.0, NAN, INF]), st.sampled_from(["sparse", "dense", "sparse-runs"]), st.sampled_from([0.0, 2.0]))
@example(PROGRAMS[1], [], [], 0.0, "sparse", 0.0)              # (empty)
@example(PROGRAMS[0], [0.0] * 4, [], 0.0, "sparse", 0.0)       # (all fill: only constants written)
@example(PROGRAMS[2], [1.5, NAN, 0.0], [INF, 0.0, 2.0], NAN, "sparse", 2.0)
def test_every_constant_written_carries_every_operator(strategy, program, a, b, a_fill, a_format, b_fill):
    """For any fills (NaN and infinities too), stored NaN and infinities, A sparse, sparse
    run-length or dense, an empty or all-fill A: each line writing a constant into the output (its operands'
    fills folded, or an annihilator) carries the tag of every node but the accesses, which it
    does not read; each line reading a tensor carries that tensor's access. The kernel agrees
    with the dense oracle and the IR interpreter."""
    n = max(len(a), len(b))
    a, b = np.array((a + [a_fill] * n)[:n]), np.array((b + [b_fill] * n)[:n])
    formats = {"dense": "dense", "sparse": ss.parse_format("sparse", fill=a_fill),
               "sparse-runs": ss.Format(SparseRunList(Element(a_fill)))}
    A = ss.Tensor.from_numpy(a, formats[a_format])
    B = ss.Tensor.from_numpy(b, ss.parse_format("sparse", fill=b_fill))
    operands = {"A": A, "B": B} if "B" in program else {"A": A}
    kernel = ss.lower(program, strategy, y="dense", **operands)
    want, _ = ss.evaluate(program, **{k: v.to_numpy() for k, v in operands.items()})
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(np.asarray(kernel(**operands).to_numpy()), want)
        np.testing.assert_allclose(np.asarray(kernel.interpret(**operands).to_numpy()), want)
    c, nodes = _c(kernel), tree_nodes(parse(program))
    prov = c.data["provenance"]
    for k, line in _writes(c).items():
        tags = {t for t, lines in prov.items() if k in lines and t.startswith("expr:")}
        reads = {t for t in operands if f"{t}_val[" in line.split("=", 1)[1]}
        accesses = {f"expr:{m.ident}" for m in nodes if m.about.get("role") == "access" and m.about.get("mode") != "update"}
        read = {f"expr:{m.ident}" for m in nodes if f"expr:{m.ident}" in accesses and m.tensors <= reads}
        assert tags & accesses == read, (program, line, sorted(tags))
        if not reads:
            assert tags == {f"expr:{m.ident}" for m in nodes} - accesses, (program, line, sorted(tags))
