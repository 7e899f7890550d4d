"""A loop program's statements as expression trees (the ``program`` step's drawing), each node
tagging the code it computes (``expr:l<line>n<m>``), as index notation's tree does: checked on
sparse vectors of any fill, NaN and infinities among their values, against numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.looplets.compile import compile_program
from compiler.looplets.gallery import spmv_then_axpy as two_statements
from compiler.looplets.language import loop_program


def _c(kernel):
    return [a for s in kernel.trace.steps for a in s.artifacts if a.kind == "c"][-1]


NAN, INF = float("nan"), float("inf")
VALUES = st.sampled_from([0.0, 1.5, -2.0, NAN, INF, -INF])


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(VALUES, min_size=6, max_size=6), st.lists(VALUES, min_size=3, max_size=3),
       st.lists(VALUES, min_size=2, max_size=2), st.sampled_from([0.0, 1.0, NAN]),
       st.sampled_from(["csr", "dense"]))
# (NaN and infinities stored, a NaN fill; then empty: no entry stored in A, b all its fill)
@example(a=[0.0, NAN, 0.0, INF, 0.0, 1.5], x=[1.5, -INF, NAN], b=[NAN, 0.0], b_fill=NAN, a_format="csr")
@example(a=[0.0] * 6, x=[1.0, 2.0, 3.0], b=[1.0, 1.0], b_fill=1.0, a_format="csr")
def test_each_statement_tags_the_code_of_its_nodes(a, x, b, b_fill, a_format):
    """Each statement's tree names the code it computes: its root, written access and right-hand
    side's root every line computing the statement, an access the lines reading its tensor, an
    operator the lines computing one of its operands (where ``b`` is absent, ``+`` is computed with
    its fill). The kernel agrees with numpy (an absent ``b`` reads its fill, a stored NaN or
    infinity is computed with)."""
    A = ss.Tensor.from_numpy(np.array(a).reshape(2, 3), a_format)
    xt = ss.Tensor.from_numpy(np.array(x), "dense")
    bt = ss.Tensor.from_numpy(np.array(b), ss.parse_format("sparse", fill=b_fill))
    k = compile_program(two_statements, y="dense", z="dense", A=A, x=xt, b=bt)
    got = k(A=A, x=xt, b=bt)
    # (the dense meaning: 0 * NaN is NaN, whether A stores its 0 or not)
    with np.errstate(invalid="ignore"):
        y = np.array([sum(a[3 * i + j] * x[j] for j in range(3)) for i in range(2)])
    np.testing.assert_allclose(got.y.to_numpy(), y)
    np.testing.assert_allclose(got.z.to_numpy(), y * 2.0 + bt.to_numpy())

    trees = two_statements.statement_trees()
    assert [[n.label for n in nodes] for nodes in trees.values()] == [
        ["+=", "y[i]", "*", "A[i, j]", "x[j]"], ["=", "z[i]", "+", "*", "y[i]", "2.0", "b[i]"]]
    c = _c(k)
    lines, prov, origins = c.text.splitlines(), c.data["provenance"], c.data["origins"]

    def computes(line: str, n, nodes) -> bool:
        if n.about["role"] == "access":
            return f"{next(iter(n.tensors))}_val[" in line
        if not n.tensors:   # (a literal: where its parent is computed)
            return computes(line, next(m for m in nodes if m.ident == n.parent), nodes)
        return n.parent == nodes[0].ident or any(computes(line, m, nodes) for m in nodes
                                                  if m.parent == n.ident and m.tensors)
    for nodes in trees.values():
        root, lhs = (f"expr:{n.ident}" for n in nodes[:2])
        everywhere = set(prov[root])
        assert everywhere and set(prov[lhs]) == everywhere and origins[root]["kind"] == "expression"
        for n in nodes[2:]:
            tagged = set(prov.get(f"expr:{n.ident}", ()))
            assert tagged == {k for k in everywhere if computes(lines[k - 1], n, nodes)}, (n.label, tagged)
    # (A's stored entries are read with x by the product, and b's with y by the sum)
    product, plus = (trees[line][k] for line, k in ((min(trees), 2), (max(trees), 2)))
    assert prov[f"expr:{product.ident}"] and prov[f"expr:{plus.ident}"]


def test_the_program_step_draws_the_statements_linked_with_their_code():
    """The ``program`` step draws each statement's tree; a node's box carries its tag in its
    colour once the C has lines of it (before, a loop program drew none, and tagged no code)."""
    import re

    from explorer import explore, render_step

    A = ss.Tensor.from_numpy(np.array([[0, 2.0, 0], [1.0, 0, 3.0]]), "csr")
    k = compile_program(two_statements, y="dense", z="dense", A=A, x=np.ones(3), b=np.ones(2))
    at = k.trace.stages().index("program")
    (art,) = k.trace.steps[at].artifacts
    assert art.kind == "notation-tree" and art.text.splitlines()[:2] == ["+=", "  y[i]"]
    html = render_step(explore(k).step(at), parts=["artifacts"])
    drawn = dict(re.findall(r'class="node highlighted" data-tags="([^"]*)">\s*<title>([^<]*)</title>', html))
    assert sorted(drawn.values()) == sorted(art.data["node_tags"]) and len(drawn) == 12
    for tag, node in drawn.items():
        group = html[html.index(f"<title>{node}</title>"):].split("</g>")[0]
        assert tag == f"expr:{node}" and f'fill="{view_colors(html)[tag]}"' in group, (node, tag)


def test_statements_sharing_a_line_are_not_guessed():
    """Two statements at one place (a program built without source: one line, no columns), or
    without a line, are told apart by nothing: neither is drawn nor tags its code."""
    from compiler.looplets.program import Access, Assign, Block, Index, Literal, Loop, TensorRef
    from compiler.looplets.statement_trees import statement_trees

    i = Index("i")
    body = Loop(i, None, Block((Assign(Access(TensorRef("y"), (i,), "update"), None, Literal(1.0), line=3),
                                Assign(Access(TensorRef("z"), (i,), "update"), None, Literal(2.0), line=3),
                                Assign(Access(TensorRef("w"), (i,), "update"), None, Literal(3.0)))))
    assert statement_trees(body) == {}


@loop_program
def one_line(y, z, a, b):
    for i in _:
        y[i] = a[i] * 2.0; z[i] += a[i] + b[i]


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(VALUES, min_size=4, max_size=4), st.lists(VALUES, min_size=4, max_size=4),
       st.sampled_from([0.0, NAN]), st.sampled_from(["sparse", "dense"]))
@example(a=[0.0] * 4, b=[0.0] * 4, fill=0.0, fmt="sparse")    # (both all fill)
def test_statements_sharing_a_line_each_tag_the_code_of_their_own_tree(a, b, fill, fmt):
    """Two statements written on one line are told apart by their columns: each is drawn as a tree
    of its own (``l<line>c<column>n<m>``), and its nodes tag the code of that statement alone (on
    main neither was drawn, and their code was tagged by no node). The kernel agrees with numpy
    for any fill, NaN and infinities stored, all-fill inputs."""
    at = ss.parse_format(fmt, fill=fill) if fmt == "sparse" else "dense"
    A, B = (ss.Tensor.from_numpy(np.array(v), at) for v in (a, b))
    k = compile_program(one_line, y="dense", z="dense", a=A, b=B)
    got = k(a=A, b=B)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(got.y.to_numpy(), A.to_numpy() * 2.0)
        np.testing.assert_allclose(got.z.to_numpy(), A.to_numpy() + B.to_numpy())
    trees = one_line.statement_trees()
    assert [[n.label for n in nodes] for nodes in trees.values()] == [
        ["=", "y[i]", "*", "a[i]", "2.0"], ["+=", "z[i]", "+", "a[i]", "b[i]"]]
    (line, c1), (line2, c2) = trees
    assert line == line2 and c1 < c2 and trees[(line, c1)][0].ident == f"l{line}c{c1}n0"
    c = _c(k)
    lines, prov = c.text.splitlines(), c.data["provenance"]
    for nodes, written in zip(trees.values(), ("y_val[", "z_val[")):
        for n in nodes:
            tagged = [lines[m - 1] for m in prov.get(f"expr:{n.ident}", ())]
            assert tagged and all(written in x for x in tagged if "_val[" in x), (n.label, tagged)
    # the program step draws both trees, each node in its tag's colour
    from explorer import explore, render_step
    import re
    at_step = k.trace.stages().index("program")
    html = render_step(explore(k).step(at_step), parts=["artifacts"])
    drawn = dict(re.findall(r'class="node highlighted" data-tags="([^"]*)">\s*<title>([^<]*)</title>', html))
    assert sorted(drawn.values()) == sorted(n.ident for nodes in trees.values() for n in nodes)
    for tag, node in drawn.items():
        assert tag == f"expr:{node}" and f'fill="{view_colors(html)[tag]}"' in html[html.index(f"<title>{node}</title>"):].split("</g>")[0]


def view_colors(html: str) -> dict[str, str]:
    """The colours the rendered step gave its tags (its ``data-colors``: distinct in one view)."""
    import html as _html
    import json
    import re
    return json.loads(_html.unescape(re.search(r'data-colors="([^"]*)"', html).group(1)))
