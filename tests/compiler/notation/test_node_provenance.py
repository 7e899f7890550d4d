"""The code each node of the parse step's expression tree computes, tagged by the lowering
(``expr:nK``) in both strategies, so the explorer links a tree node to its C lines."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.notation import parse
from compiler.notation.drawing import tree_nodes

PROGRAM = "y[i] = A[i] * B[i] + C[i]"


def _c(kernel):
    return [a for s in kernel.trace.steps for a in s.artifacts if a.kind == "c"][-1]


def computes(line: str, n, nodes) -> bool:
    """Whether ``line``, a C line writing the output, computes node ``n`` of the tree ``nodes``: an
    access where it reads its tensor, the right-hand side's root always (where every operand is
    absent it writes their fill), any other operator where it computes one of its operands (the
    others absent: their fills are computed with), or where the line writes a constant (read
    nothing: the operands' fills were folded into it)."""
    if n.about.get("role") == "access" and n.about.get("mode") != "update":
        return f"{next(iter(n.tensors))}_val[" in line
    parent = next((m for m in nodes if m.ident == n.parent), None)
    if n.parent is None or n.about.get("mode") == "update" or parent.parent is None:
        return True
    if not n.tensors:   # (a literal: where its parent is computed)
        return computes(line, parent, nodes)
    if "_val[" not in line.split("=", 1)[1]:
        return True
    return any(computes(line, m, nodes) for m in nodes if m.parent == n.ident and m.tensors)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_each_node_tags_the_statements_that_compute_it(strategy):
    """In a union of a product and an operand (three lattice points), ``+`` is computed by every
    line writing the output, ``*`` where A or B is present (the other absent, its fill computed
    with: the line writing ``A * 0`` computes the product), ``C[i]`` where C is: each node tags
    exactly the lines writing the output that compute it so. The kernel agrees with the dense
    oracle."""
    rng = np.random.default_rng(3)
    data = {n: np.where(rng.random(12) < 0.5, rng.random(12), 0.0) for n in "ABC"}
    kernel = ss.lower(PROGRAM, strategy, A="sv", B="sv", C="sv")
    want, _ = ss.evaluate(PROGRAM, **data)
    got = kernel(**{n: ss.Tensor.from_numpy(v, "sv") for n, v in data.items()})
    np.testing.assert_allclose(np.asarray(got.to_numpy()), want)

    c = _c(kernel)
    lines, prov, origins = c.text.splitlines(), c.data["provenance"], c.data["origins"]
    nodes = tree_nodes(parse(PROGRAM))
    assert [n.label for n in nodes] == ["=", "y[i]", "+", "*", "A[i]", "B[i]", "C[i]"]
    writes = set(prov["expr:n0"])
    assert writes and all("y_val[" in lines[k - 1] for k in writes)
    for n in nodes:
        tag = f"expr:{n.ident}"
        assert origins[tag]["kind"] == "expression" and origins[tag]["nodes"] == [n.ident]
        assert set(prov[tag]) == {k for k in writes if computes(lines[k - 1], n, nodes)}, (strategy, n.label)
    # the sum is computed where C alone is stored too (A * B is then its fill, 0): not only where all are
    assert any("C_val[" in lines[k - 1] and "A_val[" not in lines[k - 1] for k in prov["expr:n2"])


def test_a_loop_programs_statement_tags_its_code_by_its_own_tree():
    """A loop program's statements are trees of their own (:mod:`compiler.looplets.statement_trees`):
    the histogram's update tags its code with its nodes, ``expr:l<line>n<m>``."""
    from compiler.looplets.histogram import histogram_program

    img = np.array([[1, 17, 40, 63]])
    kernel = ss.lower(histogram_program("shift"), "looplets", bins=np.zeros(4, np.int64), img=img,
                      mask=np.ones_like(img, bool), shift=np.int64(4), top=np.int64(64))
    c = _c(kernel)
    np.testing.assert_array_equal(kernel(bins=np.zeros(4, np.int64), img=img, mask=np.ones_like(img, bool),
                                         shift=np.int64(4), top=np.int64(64)).to_numpy(), [1, 1, 1, 1])
    trees = histogram_program("shift").statement_trees()
    (((line, _), nodes),) = trees.items()
    assert [n.label for n in nodes] == ["+=", "bins[>>(v, shift[])]", "1"]
    tags = sorted(t for t in c.data["provenance"] if t.startswith("expr"))
    assert tags == [f"expr:l{line}n{m}" for m in range(3)]
    assert all("bins_val[" in c.text.splitlines()[k - 1] for t in tags for k in c.data["provenance"][t])


CONCAT = "y[l] = concat((a[i], b[j]), (i, j) -> l) + c[l]"
NAN, INF = float("nan"), float("inf")
VALUES = st.sampled_from([0.0, 1.5, -2.0, NAN, INF, -INF])


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(VALUES, max_size=3), st.lists(VALUES, min_size=1, max_size=3), st.lists(VALUES, min_size=6, max_size=6),
       st.sampled_from([0.0, 1.5, NAN]), st.sampled_from(["sparse", "dense"]), st.sampled_from([0.0, -2.0]))
@example([], [NAN], [1.5] * 6, NAN, "sparse", 1.5)     # (a empty, b holding only its NaN fill)
def test_the_sequence_lowering_tags_the_nodes_each_statement_computes(a, b, c, fill, c_format, c_fill):
    """By the lattice strategy's sequences, a concatenation is computed by each part's loop (its
    value there is that part's), a sum by every line writing the output (where an operand is
    absent, its fill is computed with): each node tags exactly the lines of the output that compute
    it so. The kernel agrees with the dense oracle, for any fill,
    NaN and infinities stored, an empty part."""
    at = ss.parse_format("sparse", fill=fill)
    A, B = ss.Tensor.from_numpy(np.array(a), at), ss.Tensor.from_numpy(np.array(b), at)
    C = ss.Tensor.from_numpy(np.array(c[:len(a) + len(b)]),
                             ss.parse_format("sparse", fill=c_fill) if c_format == "sparse" else "dense")
    kernel = ss.lower(CONCAT, "lattice", a=A, b=B, c=C)
    want, _ = ss.evaluate(CONCAT, a=A.to_numpy(), b=B.to_numpy(), c=C.to_numpy())
    np.testing.assert_allclose(np.asarray(kernel(a=A, b=B, c=C).to_numpy()), want)

    c_art = _c(kernel)
    lines, prov = c_art.text.splitlines(), c_art.data["provenance"]
    nodes = tree_nodes(parse(CONCAT))
    assert [n.label for n in nodes] == ["=", "y[l]", "+", "concat((·, ·), (i, j) -> l)", "a[i]", "b[j]", "c[l]"]
    writes = set(prov["expr:n0"])
    assert writes and set(prov["expr:n1"]) == writes

    for n in nodes[2:]:
        assert set(prov.get(f"expr:{n.ident}", ())) == {k for k in writes if computes(lines[k - 1], n, nodes)}, n.label
    # (each part's loop computes the concatenation, where its part is stored)
    assert set(prov["expr:n3"]) == set(prov.get("expr:n4", ())) | set(prov["expr:n5"]) and prov["expr:n5"]


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(VALUES, min_size=4, max_size=4), st.lists(VALUES, min_size=4, max_size=4),
       st.sampled_from([1.0, 2.0, NAN, INF]))
@example([0.0] * 4, [2.0] * 4, 2.0)      # (all fill)
def test_a_fill_operands_lines_carry_its_operators_tag(strategy, a, b, b_fill):
    """``A[i] * B[i]`` with B of a fill f other than 0 is a union: where B is absent, the line
    writing A's entry times f (A's entry itself for f = 1) computes the product with B's fill, and
    carries ``*``'s tag, as every line writing the output does. ``sum[i](B[i])`` folds B's fill in
    for the coordinates B does not store: those lines carry the sum's tag. On main neither did.
    Both kernels agree with the dense oracle."""
    A = ss.Tensor.from_numpy(np.array(a), "sv")
    B = ss.Tensor.from_numpy(np.array(b), ss.parse_format("sparse", fill=b_fill))
    for program in ("y[i] = A[i] * B[i]", "y[] = sum[i](B[i])"):
        kernel = ss.lower(program, strategy, y="dense", A=A, B=B)
        want, _ = ss.evaluate(program, A=A.to_numpy(), B=B.to_numpy())
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(np.asarray(kernel(A=A, B=B).to_numpy()), want)
        c = _c(kernel)
        lines, prov = c.text.splitlines(), c.data["provenance"]
        writes, operator = set(prov["expr:n0"]), set(prov["expr:n2"])   # (n2: the right-hand side's root)
        if program.startswith("y[i]"):
            assert writes and writes <= operator, (program, sorted(writes - operator))
            assert any("A_val[" in lines[k - 1] and "B_val[" not in lines[k - 1] for k in operator), program
        else:   # (a line adding the fill times the coordinates skipped, into the sum)
            assert any("+=" in lines[k - 1] and "B_val[" not in lines[k - 1] for k in operator), program


def r7(levels, arrays, where):
    """Issue 30's r7: ``where(a > b, e, where(c != e, d, f))`` nested ``levels`` times, each level reading
    the expression below twice (its tree doubles with each level)."""
    e = arrays[0]
    for lvl in range(levels):
        a, b, c, d, f = (arrays[(2 * lvl + n) % 8] for n in range(1, 6))
        e = where(a > b, e, where(c != e, d, f))
    return e


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_statement_computing_hundreds_of_tree_nodes_is_tagged_once_for_them_all(strategy):
    # r7 at N = 5 over 1x1x1 tensors in COO, CSF and dense of fills 0, 1, NaN, inf: 327 tree nodes, a tag
    # nested per node nested past Python's recursion limit ("the program nests too deeply")
    from compiler import array as xp
    fills, formats = [0.0, 1.0, np.nan, np.inf], ["coo", "csf", "dense", "coo"]
    tensors = []
    for k in range(8):
        d = np.full((1, 1, 1), fills[k % 4])
        d[0, 0, 0] = float(k) - 3.0 if k % 3 else fills[k % 4]
        tensors.append(ss.Tensor.from_numpy(d, format=formats[k % 4], fill=fills[k % 4], name=f"t{k}"))
    kernel = ss.lower(r7(5, [xp.asarray(t) for t in tensors], xp.where), strategy=strategy)
    with np.errstate(invalid="ignore"):
        want = r7(5, [t.to_numpy() for t in tensors], np.where)
    np.testing.assert_array_equal(kernel().to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)
    assert len(kernel.c_source.splitlines()) < 800

    c = _c(kernel)
    prov, origins, lines = c.data["provenance"], c.data["origins"], c.text.splitlines()
    nodes = tree_nodes(kernel.program)
    assert len(nodes) > 300
    writes = set(prov["expr:n0"])   # (the root: every statement writing the output)
    assert writes and all("out" in lines[k - 1].split("=")[0] for k in writes)
    # (the looplets compute each shared subexpression once, into a local: its line keeps the tags of the
    # nodes it computes)
    local = {k + 1 for k, text in enumerate(lines) if re.match(r"\s*(double|bool) sub(_\d+)* = ", text)}
    assert bool(local) == (strategy == "looplets")
    assert all(any(k in set(v) for v in prov.values()) for k in local)
    for n in nodes:   # (each node's tag names lines of the statements computing it, as when nested)
        tag = f"expr:{n.ident}"
        assert prov[tag] and set(prov[tag]) <= writes | local, n.label
        assert n.ident in origins[tag]["nodes"] and origins[tag]["kind"] == "expression"
    assert set(prov[f"expr:{nodes[2].ident}"]) == writes   # (the right-hand side's root)
    # one tag stands for many nodes: the provenance nests no deeper than a handful of tags
    tagged = [t for t in walk_tagged(kernel.function.body) if t.also]
    assert tagged and all(len(t.also) + 1 == len(t.origin.nodes) > 64 for t in tagged)


def walk_tagged(node):
    from compiler.imperative.ir import Tagged
    from compiler.imperative.traverse import walk
    return [n for n in walk(node) if isinstance(n, Tagged)]
