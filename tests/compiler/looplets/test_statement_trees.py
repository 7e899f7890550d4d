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
    """Each statement's tree names the code it computes: its root and written access every line
    computing the statement, a node reading tensors exactly the lines reading them all (where an
    operand is absent its fill is computed with, not the node: ``+`` only where ``b`` is stored).
    The kernel agrees with numpy (an absent ``b`` reads its fill, a stored NaN or infinity is
    computed with)."""
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

    def reading(n, where) -> set:
        return {k for k in where if all(f"{t}_val[" in lines[k - 1] for t in n.tensors)}
    for nodes in trees.values():
        root, lhs = (f"expr:{n.ident}" for n in nodes[:2])
        everywhere = set(prov[root])
        assert everywhere and set(prov[lhs]) == everywhere and origins[root]["kind"] == "expression"
        for n in nodes[2:]:
            tagged = set(prov.get(f"expr:{n.ident}", ()))
            assert tagged <= everywhere, n.label
            if n.tensors:   # (where an operand is absent its fill is computed with: not the node)
                assert reading(n, tagged) == tagged and reading(n, everywhere) <= tagged, (n.label, tagged)
    # (A's stored entries are read with x by the product, and b's with y by the sum)
    product, plus = (trees[line][k] for line, k in ((min(trees), 2), (max(trees), 2)))
    assert prov[f"expr:{product.ident}"] and prov[f"expr:{plus.ident}"]


def test_the_program_step_draws_the_statements_linked_with_their_code():
    """The ``program`` step draws each statement's tree; a node's box carries its tag in its
    colour once the C has lines of it (before, a loop program drew none, and tagged no code)."""
    import re

    from explorer import explore, render_step
    from explorer.renderers import color_for

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
        assert tag == f"expr:{node}" and f'fill="{color_for(tag)}"' in group, (node, tag)


def test_statements_sharing_a_line_are_not_guessed():
    """Two statements on one line (or a program built without lines) are known by no line: neither
    is drawn nor tags its code."""
    from compiler.looplets.program import Access, Assign, Block, Index, Literal, Loop, TensorRef
    from compiler.looplets.statement_trees import statement_trees

    i = Index("i")
    body = Loop(i, None, Block((Assign(Access(TensorRef("y"), (i,), "update"), None, Literal(1.0), line=3),
                                Assign(Access(TensorRef("z"), (i,), "update"), None, Literal(2.0), line=3),
                                Assign(Access(TensorRef("w"), (i,), "update"), None, Literal(3.0)))))
    assert statement_trees(body) == {}
