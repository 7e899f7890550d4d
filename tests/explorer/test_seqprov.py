"""Provenance of the shape operators' sequence layer (issue 30 item 6): a sequence lattice's points
are coloured by the C their loops produced and linked with it, an edge says which Fig. 27 rules
simplified what was left, and each step of a loop's derivation (Fig. 11) is linked, in its drawing
and its text, with the C its expression node computes: all from the data the compiler recorded."""

from __future__ import annotations

import html as _html
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from explorer import explore, render_step
from explorer.renderers import color_for
from rendered_colors import view_colors


@pytest.fixture(scope="module")
def vstack():
    """``[P; Q] @ x`` (CSR parts, a dense x) by the lattice strategy, as ``out[i] = sum[j](concat((A[k,
    j], B[l, j]), (k, l) -> i) * C[j])``: two loops of i (P's rows, then Q's, offset), a loop of j in
    each; its kernel checked against scipy."""
    P, Q = (sp.random(n, 5, density=0.4, format="csr", random_state=n) for n in (6, 4))
    x = np.arange(5.0)
    k = ss.lower(xp.concat([ss.asarray(P), ss.asarray(Q)], axis=0) @ ss.asarray(x), strategy="lattice")
    assert str(k.program) == "out[i] = sum[j](concat((A[k, j], B[l, j]), (k, l) -> i) * C[j])"
    got = k(A=P, B=Q, C=x)
    np.testing.assert_allclose(np.asarray(got.to_numpy()), sp.vstack([P, Q]) @ x)
    return k


def _c(kernel):
    return [a for s in kernel.trace.steps for a in s.artifacts if a.kind == "c"][-1]


def _drawn(html: str) -> dict[str, tuple[list[str], str]]:
    """``{node id: (data-tags, fill of its shape)}`` of the linked nodes of a step's HTML."""
    out = {}
    for m in re.finditer(r'class="node highlighted" data-tags="([^"]*)">\s*<title>([^<]*)</title>(.*?)</g>', html, re.S):
        fill = re.search(r'<(?:polygon|ellipse|path)[^>]*fill="([^"]*)"', m.group(3))
        out[m.group(2)] = (m.group(1).split(), fill.group(1) if fill else "")
    return out


def test_each_sequence_lattice_point_is_coloured_and_linked_by_its_loops_code(vstack):
    """Every point of every sequence lattice is drawn in the colour of the loop that iterates it,
    and linked with it (``data-tags``): that loop's C lines, a ``while`` over the point's
    operands. Before, every point was drawn in one blue, linked with nothing (the drawing kept no
    tags, and the lattice's sequence was read as its index)."""
    session = explore(vstack)
    prov = _c(vstack).data["provenance"]
    lines = _c(vstack).text.splitlines()
    points = 0
    for i, step in enumerate(vstack.trace.steps):
        art = next((a for a in step.artifacts if a.kind == "seq-lattice"), None)
        if art is None:
            continue
        html = render_step(session.step(i), parts=["artifacts"])
        drawn = _drawn(html)
        for node, tags in art.data["node_tags"].items():
            (tag,) = tags
            assert drawn[node] == ([tag], view_colors(html)[tag]), (art.name, node, drawn)
            code = [lines[n - 1] for n in prov[tag]]
            assert code[0].lstrip().startswith("while ("), (tag, code[:2])
            points += 1
    assert points == 4   # i: k_A ⊔ l_B and |k_A| + l_B; j: j_A; j: j_B


def test_a_sequence_lattice_says_what_simplified_its_removals():
    """The edges of ``concat(a, b) + c``'s lattice name the Fig. 27 rules that simplified each
    removal (``concat-left-done``, ``union-left-empty``); what simplified to ∅ is drawn as no loop."""
    rng = np.random.default_rng(0)
    vs = [ss.asarray(ss.Tensor.from_numpy(np.where(rng.random(n) < 0.5, rng.random(n), 0.0), "sparse"))
          for n in (4, 3, 7)]
    k = ss.lower(xp.concat(vs[:2]) + vs[2], strategy="lattice")
    art = next(a for s in k.trace.steps for a in s.artifacts if a.kind == "seq-lattice")
    assert "concat-left-done" in art.dot and "union-left-empty" in art.dot and "no loop" in art.dot
    html = render_step(explore(k).step(k.trace.stages().index("lattice")), parts=["artifacts"])
    assert len(_drawn(html)) == len(art.data["node_tags"]) == 5


def test_a_point_whose_loop_made_no_code_is_drawn_dashed():
    """A point whose tag has no C line (its loop simplified away where the kernel was emitted),
    once there is C, is drawn dashed on no fill, saying so, and linked with nothing."""
    from compiler.lattice.sequences import Concat, Level
    from compiler.lattice.seqlattice import build_seq_lattice
    from explorer.renderers import render_artifact

    L = build_seq_lattice(Concat(Level("a", 0, "compressed", 3), Level("b", 0, "compressed", 2)))
    art = ss.Artifact("seq-lattice", "forall k ∈ i_a ⊔ i_b", L.text(), L.dot(),
                      data={"index": "k", "node_tags": L.node_tags("k")})
    html = render_artifact(art, provenance={"lattice:k:i_a⊔i_b": [4, 5]})
    assert list(_drawn(html)) == ["p0"]
    p1 = html[html.index("<title>p1</title>"):].split("</g>")[0]
    assert 'stroke-dasharray' in p1 and 'fill="none"' in p1
    assert "produced no C" in html


def test_each_derivation_step_links_the_code_of_its_expression_node(vstack):
    """The derivation of each loop's sequence (Fig. 11) names, per step, its node of the
    expression tree: its drawing's boxes and its text's expression parts carry that node's tag
    (``expr:nK``, as the parse step's tree does), coloured as its C lines, which read the node's
    tensors (``concat(A, B) * C`` in A's loop reads A and C, in B's B and C)."""
    from compiler.notation.drawing import tree_nodes
    from explorer.renderers import render_artifact

    session = explore(vstack)
    prov = session.provenance()
    c = _c(vstack)
    lines = c.text.splitlines()
    nodes = {f"expr:{n.ident}": n for n in tree_nodes(vstack.program)}
    at = vstack.trace.stages().index("seq-derive")
    arts = [a for a in vstack.trace.steps[at].artifacts if a.kind == "seq-derivation"]
    assert [a.name for a in arts] == ["Seq(..., i)", "Seq(..., j)"]
    for art in arts:
        text = art.text.splitlines()
        steps = {n: spans for n, spans in art.data["line_spans"].items() if spans[0][3] == "node"}
        for n, ((start, end, tag, _),) in steps.items():
            line = text[int(n) - 1]
            # (the part recorded is the step's expression, printed as Seq(<expression>, <index>))
            assert line[start - 4:start] == "Seq(" and line[end:].startswith(", "), (line, start, end)
            # (the lines reading values: a node's lines also write the output, once its value is summed)
            reads = [x for x in (lines[k - 1] for k in c.data["provenance"][tag])
                     if "_val[" in x and not x.lstrip().startswith("out_val[")]
            assert reads and all(any(f"{t}_val[" in x for t in nodes[tag].tensors) for x in reads), (tag, reads)
            if nodes[tag].about["role"] == "access":
                assert all(f"{next(iter(nodes[tag].tensors))}_val[" in x for x in reads), (tag, reads)
        html = render_artifact(art, provenance=prov)
        drawn = _drawn(html)
        assert drawn == {node: (tags, color_for(tags[0])) for node, tags in art.data["node_tags"].items()}, art.name
        marked = re.findall(r'<span class="pv" data-tags="(expr:n\d+)"', html)
        assert marked == [tag for (_, _, tag, _), in steps.values()], art.name


def test_each_derivation_links_the_loops_its_sequence_becomes(vstack):
    """The derivation of each loop index's sequence ends with the loops it becomes (a forall per
    lattice of that index: ``i``'s one over ``k_A ⊔ l_B``, ``j``'s one in each part, over ``j_A``
    and ``j_B``), each drawn as a box below the derivation's root and printed as a line, linked
    with its lattice's points' loops: their C lines are the ``while`` loops over the index, and
    every loop of the C over a point of the index is one of them. Before, a derivation linked no
    loop. A loop of several points (``i``'s, a concatenation) has a node per point below it, with that
    point's tag and colour: before, only the first point's loop in the C was coloured on the step."""
    from explorer.renderers import render_artifact

    c = _c(vstack)
    lines, prov = c.text.splitlines(), c.data["provenance"]
    at = vstack.trace.stages().index("seq-derive")
    arts = [a for a in vstack.trace.steps[at].artifacts if a.kind == "seq-derivation"]
    lattices = [a for s in vstack.trace.steps for a in s.artifacts if a.kind == "seq-lattice"]
    session = explore(vstack)
    for art, index, seqs in zip(arts, "ij", (["k_A ⊔ l_B"], ["j_A", "j_B"])):
        loops = {node: tags for node, tags in art.data["node_tags"].items() if re.fullmatch(r"loop\d+", node)}
        each = {node: tags for node, tags in art.data["node_tags"].items() if re.fullmatch(r"loop\d+p\d+", node)}
        points = [tags for a in lattices if a.data["index"] == index for tags in a.data["node_tags"].values()]
        assert list(loops.values()) == [[t for ts in points[:1] for t in ts] + [t for ts in points[1:] for t in ts]] \
            if index == "i" else list(loops.values()) == points, (index, loops, points)
        text = art.text.splitlines()
        heads = [(text[int(n) - 1][a:b], tag) for n, ((a, b, tag, role),) in art.data["line_spans"].items()
                 if role == "loop"]
        assert heads == [(f"forall {index} ∈ {s}", tags[0]) for s, tags in zip(seqs, loops.values())], heads
        # (each loop's C: the while loops of its points, all of the index's)
        for tags in loops.values():
            assert lines[prov[tags[0]][0] - 1].lstrip().startswith("while ("), tags
        ours = {t for tags in loops.values() for t in tags}
        assert ours == {t for t, o in c.data["origins"].items() if o["kind"] == "lattice" and o["index"] == index}
        html = render_artifact(art, provenance=session.provenance())
        for node, tags in loops.items():
            assert _drawn(html)[node] == (tags, color_for(tags[0])), (node, tags)
            points = [each[f"{node}p{n}"] for n in range(len(tags))] if len(tags) > 1 else []
            assert points == ([[t] for t in tags] if index == "i" else []), (node, points)
            for n, (tag,) in enumerate(points):
                assert _drawn(html)[f"{node}p{n}"] == ([tag], color_for(tag)), (node, n)
        marked = [(m.group(1).split()[0], _html.unescape(re.sub("<[^>]+>", "", m.group(2)))) for m in re.finditer(
            r'<span class="pv" data-tags="(lattice:[^"]*)"[^>]*>((?:<span[^>]*>[^<]*</span>|[^<])*)</span>', html)]
        assert marked == [(tag, head) for head, tag in heads], marked


NAN, INF = float("nan"), float("inf")
VALUES = st.sampled_from([0.0, 1.5, -2.0, NAN, INF, -INF])
CONCAT = "y[l] = concat((a[i], b[j]), (i, j) -> l) * c[l]"


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(VALUES, max_size=3), st.lists(VALUES, min_size=1, max_size=3), st.lists(VALUES, min_size=6, max_size=6),
       st.sampled_from([0.0, 1.5, NAN]), st.sampled_from(["sparse", "dense"]))
@example([], [0.0], [1.5] * 6, 0.0, "sparse")     # (a empty, b all its fill)
def test_every_loop_of_a_derivations_index_is_linked_from_it(a, b, c, fill, c_format):
    """For any fills (NaN among them), values (NaN and infinities stored) and formats, each
    derivation's loops are every lattice of its index (the tags of all their points, none missing,
    none of another index), and each such loop that made C starts with a loop statement. The
    kernel agrees with the dense oracle."""
    at = ss.parse_format("sparse", fill=fill)
    A, B = ss.Tensor.from_numpy(np.array(a), at), ss.Tensor.from_numpy(np.array(b), at)
    C = ss.Tensor.from_numpy(np.array(c[:len(a) + len(b)]), c_format)
    k = ss.lower(CONCAT, "lattice", a=A, b=B, c=C)
    want, _ = ss.evaluate(CONCAT, a=A.to_numpy(), b=B.to_numpy(), c=C.to_numpy())
    np.testing.assert_allclose(np.asarray(k(a=A, b=B, c=C).to_numpy()), want)
    art = _c(k)
    lines, prov = art.text.splitlines(), art.data["provenance"]
    at_derive = k.trace.stages().index("seq-derive")
    lattices = [a_ for s in k.trace.steps for a_ in s.artifacts if a_.kind == "seq-lattice"]
    for dv in (a_ for a_ in k.trace.steps[at_derive].artifacts if a_.kind == "seq-derivation"):
        index = dv.name[len("Seq(..., "):-1]
        loops = [tags for node, tags in dv.data["node_tags"].items() if re.fullmatch(r"loop\d+", node)]
        assert sorted(t for tags in loops for t in tags) == sorted(
            t for L in lattices if L.data["index"] == index for tags in L.data["node_tags"].values() for t in tags)
        for tags in loops:
            assert all(t.startswith(f"lattice:{index}:") for t in tags), tags
            if prov.get(tags[0]):
                assert lines[prov[tags[0]][0] - 1].lstrip().startswith(("while (", "for (")), tags
