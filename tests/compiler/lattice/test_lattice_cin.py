"""Concrete index notation: concretization, scalar promotion, loop order."""

import pytest
from hypothesis import given, settings, strategies as st

from compiler.errors import StrategyError
from compiler.format import csc, csr, dense, sparse_vector
from compiler.lattice.plan import Setup
from compiler.lattice.cin import Forall, Where, concretize, foralls, scalar_promote
from compiler.lattice.iteration_graph import IterationGraph
from compiler.notation import parse
from compiler.notation.ast import Index


def test_elementwise_is_nested_foralls():
    s = concretize(parse("A[i, j] = B[i, j] + C[i, j]"))
    assert str(s) == "forall i:\n  forall j:\n    A[i, j] = B[i, j] + C[i, j]"


def test_top_level_reduction_becomes_compound_assignment():
    s = concretize(parse("a = b[i] * c[i]"))
    assert str(s) == "forall i:\n  a[] += b[i] * c[i]"


def test_nested_reduction_becomes_where_with_temporary():
    s = concretize(parse("y[i] = A[i, j] * x[j] + d[i]"))
    assert isinstance(s, Forall) and isinstance(s.body, Where)
    assert s.body.temp.name == "t_j" and s.body.temp.init == 0
    assert "y[i] = t_j[] + d[i]" in str(s)


def test_ttv_concretizes_with_temporary_after_promotion():
    s = scalar_promote(concretize(parse("A[i, j] = B[i, j, k] * c[k]")))
    assert [i.name for i in foralls(s)] == ["i", "j", "k"]
    assert "A[i, j] = t_k[]" in str(s)


def test_scalar_promotion_needs_reductions_innermost():
    s = concretize(parse("y[i] = A[i, j] * x[j]"))
    from compiler.lattice.cin import with_order
    from compiler.notation.ast import Index
    scattered = with_order(s, [Index("j"), Index("i")])
    assert scalar_promote(scattered) is scattered


def test_scalar_promotion_reaches_through_nested_reductions():
    # the assignment reads t_k: the sum over j still goes to a scalar, with t_k's where inside it
    s = scalar_promote(concretize(parse("y[i] = sum[j](sum[k](A[i, k]) * B[i, j])")))
    assert str(s) == ("forall i:\n  where:\n    y[i] = t_j[]\n  producer:\n    t_j = 0\n    forall j:\n"
                      "      where:\n        t_j[] += t_k[] * B[i, j]\n      producer:\n        t_k = 0\n"
                      "        forall k:\n          t_k[] += A[i, k]")


def test_scalar_promotion_reaches_into_a_workspace_consumer():
    from compiler.lattice.precompute import precompute_expr
    from compiler.notation import parse_expr
    s = concretize(parse("y[i] = sum[j](A[i, j] * x[j] + B[i, j])"))
    s = precompute_expr(s, parse_expr("x[j]"), ["j"], "w", fill_of=lambda e: 0.0)
    promoted = scalar_promote(s)
    assert "y[i] = t_j[]" in str(promoted) and "t_j[] += A[i, j] * w[j] + B[i, j]" in str(promoted)


@pytest.mark.parametrize("prog, renamed", [
    ("y[i] = max[j](A[i, j]) * B[i, j]", "y[i] = sum[j](max[j_2](A[i, j_2]) * B[i, j])"),
    ("y[i] = sum[j](B[i, j] * max[j](A[i, j] + sum[j](A[i, j])))",
     "y[i] = sum[j](B[i, j] * max[j_2](A[i, j_2] + sum[j_3](A[i, j_3])))"),
    ("y[i] = max[j](A[i, j]) + x[i]", "y[i] = max[j](A[i, j]) + x[i]"),
])
def test_unshadow_renames_a_reduction_over_a_bound_index(prog, renamed):
    from compiler.lattice.cin import unshadow
    assert str(unshadow(parse(prog))) == renamed


def test_csc_spmv_scatters():
    setup = Setup.create(parse("y[i] = A[i, j] * x[j]"), {"A": csc(), "x": dense(1)})
    assert [i.name for i in foralls(setup.statement)] == ["j", "i"]
    assert not setup.promoted


def test_cycle_is_reported_with_tensors():
    g = IterationGraph.build(parse("A[i, j] = B[i, j] + C[j, i]"), {"A": dense(2), "B": csr(), "C": csr()})
    with pytest.raises(StrategyError, match=r"B\[i, j\].*C\[j, i\]|C\[j, i\].*B\[i, j\]"):
        g.order()


def test_sparse_output_out_of_storage_order_gets_a_workspace():
    setup = Setup.create(parse("y[i] = A[i, j] * x[j]"), {"A": csc(), "x": dense(1), "y": sparse_vector()})
    assert isinstance(setup.statement, Where) and setup.statement.temp.indices
    assert [s[0] for s in setup.steps] == ["precompute"]


def test_sparse_output_in_outer_product_order_gets_a_matrix_workspace():
    # outer-product order: the reduction k is outside the output's loops, so no workspace over j
    # helps; one over i, j gathers the whole product first (it was refused: "would scatter")
    setup = Setup.create(parse("C[i, j] = A[i, k] * B[k, j]"), {"A": csc(), "B": csr(), "C": csr()},
                         order=["k", "i", "j"])
    assert isinstance(setup.statement, Where) and setup.statement.temp.indices == (Index("i"), Index("j"))
    assert [i.name for i in foralls(setup.statement.producer)] == ["k", "i", "j"]
    assert [i.name for i in foralls(setup.statement.consumer)] == ["i", "j"]


def test_reorder_schedule_is_checked():
    with pytest.raises(StrategyError, match=r"reorder\(j, i\) does not apply: A\[i, j\] is stored with i before j"):
        Setup.create(parse("y[i] = A[i, j] * x[j]"), {"A": csr(), "x": dense(1)}, order=["j", "i"])


@settings(max_examples=40, deadline=None)
@given(program=st.sampled_from([
    "y[i] = A[i, j] * x[j]", "y[i] = A[i, j] * x[j] + d[i]", "C[i, j] = A[i, k] * B[k, j]",
    "y[i] = where[i, j] * end[j]", "a[] = Run[i, j] * sum[k](B[j, k])", "z[i] = max[j](A[i, j]) + min[k](B[i, k])"]),
       promote=st.booleans(), workspace=st.booleans())
def test_printed_parts_are_what_the_printer_printed(program, promote, workspace):
    """Each part a CIN statement records (issue 29 §5) spans the text printed for it: a forall's
    head, each access (the written one ``update``, a workspace's declaration too), each reduction's
    head; all accesses are there, in print order."""
    from compiler.lattice.cin import assignments
    from compiler.lattice.precompute import precompute, workspace_name
    from compiler.notation.ast import Access, walk
    s = concretize(parse(program))
    s = scalar_promote(s) if promote else s
    if workspace and len(foralls(s)) > 1:
        inner = foralls(s)[-1]
        try:
            s = precompute(s, [inner], workspace_name(s))
        except StrategyError:
            pass
    text, record = s.printed_parts()
    assert text == str(s)
    lines = text.splitlines()
    seen = []
    for n, parts in record.items():
        for a, b, about, role in parts:
            part = lines[int(n) - 1][a:b]
            if role == "loop":
                assert part == f"forall {about['index']}"
            elif role == "reduce":
                assert part.endswith(f"[{', '.join(about['indices'])}]") and lines[int(n) - 1][b] == "("
            else:
                assert role == "access" and part == f"{about['tensor']}[{', '.join(about['indices'])}]", part
                seen.append(part)
                if about["mode"] == "update":
                    assert lines[int(n) - 1][:a].strip() == "", part   # (only a statement's left side)
    expected = [str(x) for st_ in assignments(s) for x in [st_.lhs, *walk(st_.rhs)] if isinstance(x, Access)]
    workspaces = [x for x in seen if x not in expected]
    assert sorted(x for x in seen if x in expected) == sorted(expected)
    assert all(x.split("[")[0] not in {"A", "B", "x", "d", "y", "C", "a", "z"} for x in workspaces)
    heads = [n for n, line in enumerate(lines, 1) if line.lstrip().startswith("forall ")]
    assert heads == [int(n) for n, parts in record.items() if any(p[3] == "loop" for p in parts)]
