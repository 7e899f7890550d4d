"""TACO's precompute: sub-expressions and multi-index workspaces (taco.md §2.8), against the oracle."""

import re
from dataclasses import fields, replace
from functools import partial

import numpy as np
import pytest
import scipy.sparse
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.errors import StrategyError
from compiler.format import coo, csc, csf, csr, dcsr, dense, sparse_vector
from compiler.lattice import Schedule
from compiler.lattice.cin import Where
from compiler.testing import check_lowered, random_sparse as rand

#: compiled, interpreted and bounds-checked runs, each against the oracle
check = partial(check_lowered, checked=True)

EWISE = "A[i, j] = B[i, j] * (C[i, j] + D[i, j])"
SUM = "C[i, j] + D[i, j]"


def step(k):
    (s,) = k.trace.find("schedule:precompute")
    return s


def test_e5_union_inside_intersection():
    # taco.md E5: b = {1:2, 3:3, 5:4}, c = {1:1, 5:1}, d = {3:7, 5:1}
    vec = lambda d: Tensor.from_numpy(np.array([d.get(i, 0.0) for i in range(8)]), sparse_vector())  # noqa: E731
    b, c, d = vec({1: 2, 3: 3, 5: 4}), vec({1: 1, 5: 1}), vec({3: 7, 5: 1})
    s = Schedule().precompute("i", "w", expr="c[i] + d[i]")
    k = check("a[i] = b[i] * (c[i] + d[i])", s, b=b, c=c, d=d)
    assert k(b=b, c=c, d=d).to_numpy().tolist() == [0, 2, 0, 21, 0, 8, 0, 0]
    after = str(step(k).after)
    assert "w[i] = c[i] + d[i]" in after and "a[i] = b[i] * w[i]" in after
    assert "holds c[i] + d[i]" in step(k).note
    # the where is outermost: nothing to reset after the consumer
    assert "_reset" not in k.c_source
    ks = check("a[i] = b[i] * (c[i] + d[i])", s, out=sparse_vector(), b=b, c=c, d=d)
    assert ks(b=b, c=c, d=d).levels[0].idx.tolist() == [1, 3, 5]


@pytest.mark.parametrize("out", [None, csr(), dcsr()], ids=["dense", "csr", "dcsr"])
def test_sum_precomputed_per_row(out):
    rng = np.random.default_rng(1)
    B, C, D = (Tensor.from_numpy(rand((6, 7), 0.4, rng), csr(), name=n) for n in "BCD")
    k = check(EWISE, Schedule().precompute("j", "w", expr=SUM), out=out, B=B, C=C, D=D)
    where = step(k).after.body
    assert isinstance(where, Where) and where.temp.indices and where.temp.op is None
    assert "w[j] = C[i, j] + D[i, j]" in str(where)
    # recreated per row: reset after the consumer
    assert "w[j_reset] = 0.0;" in k.c_source


def test_csc_spmv_plus_vector():
    # y = A x + z with A stored by columns: the product is gathered over i first
    rng = np.random.default_rng(2)
    A = Tensor.from_numpy(rand((9, 7), 0.3, rng), csc(), name="A")
    z = Tensor.from_numpy(rand(9, 0.4, rng), sparse_vector(), name="z")
    x = rng.random(7)
    k = check("y[i] = A[i, j] * x[j] + z[i]", Schedule().precompute("i", "w", expr="A[i, j] * x[j]"),
              A=A, x=x, z=z)
    text = str(step(k).after)
    assert "w[i] += A[i, j] * x[j]" in text and "y[i] = w[i] + z[i]" in text
    assert text.index("forall j") < text.index("forall i:\n      w[i]")


@pytest.mark.parametrize("z_fmt", [dense(1), sparse_vector()], ids=["dense-z", "sparse-z"])
def test_a_sparse_workspace_filled_column_by_column_is_sorted_before_a_merge_with_the_rows(z_fmt):
    # the columns list the rows in the order they find them (1 before 0 below); the consumer
    # walks every row (z dense: the universe of i) beside the list, so the list must be sorted
    # (found by fuzzing: y came out [10, 21])
    A = Tensor.from_numpy(np.array([[0.0, 1.0], [1.0, 0.0]]), csc(), name="A")
    z = Tensor.from_numpy(np.array([10.0, 20.0]), z_fmt, name="z")
    s = Schedule().precompute("i", "w", expr="A[i, j] * x[j]")
    k = check("y[i] = A[i, j] * x[j] + z[i]", s, A=A, x=np.ones(2), z=z)
    assert k(A=A, x=np.ones(2), z=z).to_numpy().tolist() == [11.0, 21.0]
    rng = np.random.default_rng(5)
    A = Tensor.from_numpy(rand((30, 9), 0.3, rng, empty=(4,)), csc(), name="A")
    z = Tensor.from_numpy(rand(30, 0.5, rng), z_fmt, name="z")
    check("y[i] = A[i, j] * x[j] + z[i]", s, A=A, x=rng.random(9), z=z)


def test_mttkrp_sums_k_into_a_row_workspace():
    rng = np.random.default_rng(3)
    B = Tensor.from_numpy(rand((4, 5, 6), 0.3, rng), csf(), name="B")
    C, D = rng.random((5, 3)), rng.random((6, 3))
    prog = "A[i, l] = B[i, j, k] * D[k, l] * C[j, l]"
    k = check(prog, Schedule().precompute("l", "w", expr="B[i, j, k] * D[k, l]"), B=B, C=C, D=D)
    text = str(step(k).after)
    assert "w[l] += B[i, j, k] * D[k, l]" in text and "A[i, l] += w[l] * C[j, l]" in text


def test_loop_invariant_vector_is_hoisted():
    rng = np.random.default_rng(4)
    A = Tensor.from_numpy(rand((5, 6), 0.5, rng), csr(), name="A")
    x, z = (Tensor.from_numpy(rand(6, 0.5, rng), sparse_vector(), name=n) for n in "xz")
    k = check("y[i] = A[i, j] * (x[j] + z[j])", Schedule().precompute("j", "w", expr="x[j] + z[j]"), A=A, x=x, z=z)
    after = step(k).after
    assert isinstance(after, Where)   # computed once, outside the loop over i


def test_scaled_reduction_moves_into_the_workspace():
    # sum_j s[i] * A[i, j] = s[i] * sum_j A[i, j]: the product distributes over the sum
    rng = np.random.default_rng(5)
    A = Tensor.from_numpy(rand((5, 4), 0.5, rng), csr(), name="A")
    s = rng.random(5)
    k = check("y[i] = s[i] * A[i, j] + 1", Schedule().precompute("i", "w", expr="A[i, j]"), A=A, s=s)
    assert "y[i] = s[i] * w[i] + 1" in str(step(k).after)


def test_min_plus_workspace_starts_at_infinity():
    rng = np.random.default_rng(6)
    A = rand((4, 5), 0.5, rng)
    A[A == 0] = np.inf
    At = Tensor.from_numpy(A, csr(fill=np.inf), name="A")
    prog = "y[i] = min[j](A[i, j] + x[j]) * 2"
    k = check(prog, Schedule().precompute("i", "w", expr="A[i, j] + x[j]"), A=At, x=rng.random(5))
    assert step(k).after.temp.init == np.inf


def test_precompute_inside_an_earlier_workspace():
    rng = np.random.default_rng(7)
    B, C, D = (Tensor.from_numpy(rand((5, 6), 0.4, rng), csr(), name=n) for n in "BCD")
    s = Schedule().precompute("j", "w", expr="B[i, j] * (C[i, j] + D[i, j])").precompute("j", "v", expr=SUM)
    k = check(EWISE, s, out=csr(), B=B, C=C, D=D)
    assert "v[j] = C[i, j] + D[i, j]" in str(k.trace.find("schedule:precompute")[1].after)


# -- several indices: dense workspaces --------------------------------------------------------


@pytest.mark.parametrize("out", [None, csr()], ids=["dense", "csr"])
def test_outer_product_spgemm_through_a_2d_workspace(out):
    rng = np.random.default_rng(8)
    A = Tensor.from_numpy(rand((6, 5), 0.3, rng), csc(), name="A")
    B = Tensor.from_numpy(rand((5, 7), 0.3, rng), csr(), name="B")
    s = Schedule().reorder("k", "i", "j").precompute(("i", "j"), "w")
    k = check("C[i, j] = A[i, k] * B[k, j]", s, out=out, A=A, B=B)
    assert "w[i, j] = 0  (workspace: dense over i, j)" in str(step(k).after)
    assert "alloc workspace w[i, j]" in k.trace.find("cfir")[0].artifacts[0].text
    assert "w[i * B1_size + j] += " in k.c_source
    assert "_reset" not in k.c_source   # used once: allocated at its fill, never reset


def test_2d_workspace_is_reset_per_use():
    # TTM-like: for each i, w[j, l] = sum_k B[i, j, k] * C[k, l], then a sparse-times-dense read
    rng = np.random.default_rng(9)
    B = Tensor.from_numpy(rand((3, 4, 5), 0.4, rng), csf(), name="B")
    C, E = rng.random((5, 2)), rng.random((4, 2))
    prog = "A[i, l] = B[i, j, k] * C[k, l] * E[j, l]"
    s = Schedule().precompute(("j", "l"), "w", expr="B[i, j, k] * C[k, l]")
    k = check(prog, s, B=B, C=C, E=E)
    assert "pw_reset" in k.c_source
    text = str(step(k).after)
    assert "w[j, l] += B[i, j, k] * C[k, l]" in text and "A[i, l] += w[j, l] * E[j, l]" in text


def test_2d_workspace_of_a_sub_expression_keeps_the_fill():
    rng = np.random.default_rng(10)
    C, D = (Tensor.from_numpy(rand((4, 5), 0.5, rng), csr(fill=1.0), name=n) for n in "CD")
    B = Tensor.from_numpy(rand((4, 5), 0.5, rng), csr(), name="B")
    k = check(EWISE, Schedule().precompute("i, j", "w", expr=SUM), B=B, C=C, D=D)
    assert step(k).after.temp.init == 2.0   # the sum of two fills of 1


# -- property test -----------------------------------------------------------------------------

FORMATS = {"dense": lambda n: dense(n), "sparse": lambda n: sparse_vector() if n == 1 else csr(),
           "dcsr": lambda n: sparse_vector() if n == 1 else dcsr()}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([1, 2]), st.tuples(st.integers(0, 6), st.integers(0, 6)),
       st.sampled_from([0.0, 0.3, 1.0]), st.lists(st.sampled_from(sorted(FORMATS)), min_size=4, max_size=4),
       st.integers(0, 2 ** 16), st.sampled_from([None, "dense", "sparse"]))
def test_sub_expression_precompute_property(ndim, shape, density, fmts, seed, ws_format):
    rng = np.random.default_rng(seed)
    shape = shape[:ndim]
    idx = "i, j"[: 1 if ndim == 1 else 4]
    prog = f"A[{idx}] = B[{idx}] * (C[{idx}] + D[{idx}])"
    tensors = {n: Tensor.from_numpy(rand(shape, density, rng, lo=-3, hi=4), FORMATS[f](ndim), name=n)
               for n, f in zip("BCD", fmts[1:])}
    out = FORMATS[fmts[0]](ndim)
    check(prog, Schedule().precompute(idx.split(", ")[-1], "w", expr=f"C[{idx}] + D[{idx}]", format=ws_format),
          out=out, **tensors)


# -- the workspace's format ----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["dense", "sparse"])
@pytest.mark.parametrize("fill", [0.0, 2.0])
def test_spgemm_through_a_dense_or_a_sparse_workspace(fmt, fill):
    rng = np.random.default_rng(11)
    A = Tensor.from_numpy(rand((7, 6), 0.3, rng), csr(fill=fill), name="A")
    B = Tensor.from_numpy(rand((6, 9), 0.3, rng), csr(), name="B")
    s = Schedule().reorder("i", "k", "j").precompute("j", "w", format=fmt)
    k = check("C[i, j] = A[i, k] * B[k, j]", s, out=csr(), A=A, B=B)
    sparse = fmt == "sparse"
    assert ("sparse: values, a bitmap and a coordinate list" in step(k).note) == sparse
    assert ("w_list" in k.c_source) == sparse and ("pw_reset" in k.c_source) != sparse
    assert ("(workspace: sparse over j: values, a bitmap" if sparse else "(workspace: dense over j)") \
        in str(step(k).after)


def test_a_dense_workspace_is_the_default_over_several_indices():
    A, B = csr(), csr()
    s = Schedule().reorder("k", "i", "j")
    k = lower("C[i, j] = A[i, k] * B[k, j]", A=csc(), B=B, options={"schedule": s.precompute(("i", "j"), "w")})
    assert "(workspace: dense over i, j)" in str(step(k).after)
    with pytest.raises(StrategyError, match="a workspace's format is dense or sparse, not 'hash'"):
        lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B,
              options={"schedule": [("precompute", "j", "w", None, "hash")]})


# -- several indices: sparse workspaces ----------------------------------------------------------

OUTER = Schedule().reorder("k", "i", "j").precompute(("i", "j"), "w", format="sparse")


@pytest.mark.parametrize("out", [None, csr(), dcsr()], ids=["dense", "csr", "dcsr"])
def test_outer_product_spgemm_through_a_sparse_2d_workspace(out):
    rng = np.random.default_rng(8)
    A = Tensor.from_numpy(rand((6, 5), 0.3, rng, empty=(2,)), csc(), name="A")
    B = Tensor.from_numpy(rand((5, 7), 0.3, rng), csr(), name="B")
    k = check("C[i, j] = A[i, k] * B[k, j]", OUTER, out=out, A=A, B=B)
    assert "(workspace: sparse over i, j: values, a bitmap and a list of row-major positions)" \
        in str(step(k).after)
    cfir = k.trace.find("cfir")[0].artifacts[0].text
    assert "list w_list of row-major positions" in cfir and "while i <- w.0" in cfir and "while j <- w.1" in cfir
    src = k.c_source
    # the positions set are scattered once, sorted, and read back mode by mode: no loop over every (i, j)
    assert "int64_t w_at = i * B1_size + j;" in src
    assert "int64_t i = w_list[pw0] / B1_size;" in src and "int64_t j = w_list[pw0_1] % B1_size;" in src
    assert "for (int64_t i = 0;" not in src


def test_the_sparse_2d_workspace_in_the_cfir_interpreter():
    from compiler.lattice.cfir_interpreter import interpret_cfir
    from compiler.lattice.cfir_builder import build_cfir
    from compiler.lattice.plan import Setup
    from compiler.notation import parse
    rng = np.random.default_rng(13)
    A = Tensor.from_numpy(rand((5, 4), 0.4, rng), csc(), name="A")
    B = Tensor.from_numpy(rand((4, 6), 0.4, rng), csr(), name="B")
    p = parse("C[i, j] = A[i, k] * B[k, j]")
    setup = Setup.create(p, {"A": A.format, "B": B.format, "C": csr()}, schedule=OUTER)
    got = interpret_cfir(build_cfir(setup.statement, setup), setup, A=A, B=B)
    np.testing.assert_allclose(got, A.to_numpy() @ B.to_numpy())


@pytest.mark.parametrize("fmts", [("sparse", "sparse", "sparse"), ("dense", "sparse", "sparse"),
                                  ("sparse", "dense", "sparse"), ("dense", "dense", "sparse")])
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_a_producer_that_lists_each_coordinate_once_needs_no_bitmap_nor_sort(fmts, density):
    # one forall over i around one assignment reaches each coordinate once, ascending: the list
    # comes out sorted and unique, so neither the bitmap's test nor a sort is emitted
    from compiler.lattice.cfir import CWorkspace
    from compiler.lattice.cfir_interpreter import interpret_cfir
    from compiler.lattice.cfir_builder import build_cfir
    from compiler.lattice.plan import Setup
    from compiler.notation import parse
    rng = np.random.default_rng(17)
    fmt = {"sparse": sparse_vector(), "dense": dense(1)}
    b, c, d = (Tensor.from_numpy(rand((70,), density, rng), fmt[f], name=n) for f, n in zip(fmts, "bcd"))
    s = Schedule().precompute("i", "w", expr="c[i] + d[i]")
    k = check("a[i] = b[i] * (c[i] + d[i])", s, b=b, c=c, d=d)
    assert "w_set" not in k.c_source and "sort" not in k.c_source
    assert "listed once each, in order, by the producer" in k.c_source
    p = parse("a[i] = b[i] * (c[i] + d[i])")
    setup = Setup.create(p, {"b": b.format, "c": c.format, "d": d.format, "a": dense(1)}, schedule=s)
    cfir = build_cfir(setup.statement, setup)
    (ws,) = [n for n in _cfir_nodes(cfir) if isinstance(n, CWorkspace)]
    assert ws.once and "sort w_list" not in str(cfir)
    np.testing.assert_allclose(interpret_cfir(cfir, setup, b=b, c=c, d=d),
                               b.to_numpy() * (c.to_numpy() + d.to_numpy()))


def _cfir_nodes(n):
    yield n
    for field in ("body", "stmts", "loops", "cases"):
        x = getattr(n, field, None)
        for child in (x if isinstance(x, tuple) else () if x is None else (x,)):
            if hasattr(child, "__dataclass_fields__"):
                yield from _cfir_nodes(child)


def test_a_producer_that_reaches_a_coordinate_again_keeps_the_bitmap_test_and_the_cfir_checks_the_claim():
    from compiler.lattice.cfir import CNode, CWorkspace
    from compiler.lattice.cfir_interpreter import interpret_cfir
    from compiler.lattice.cfir_builder import build_cfir
    from compiler.lattice.plan import Setup
    from compiler.notation import parse
    rng = np.random.default_rng(19)
    A = Tensor.from_numpy(rand((6, 5), 0.5, rng), csr(), name="A")
    B = Tensor.from_numpy(rand((5, 7), 0.5, rng), csr(), name="B")
    s = Schedule().reorder("i", "k", "j").precompute("j", "w", format="sparse")
    k = check("C[i, j] = A[i, k] * B[k, j]", s, out=csr(), A=A, B=B)
    assert "if (!w_set[j])" in k.c_source   # row k and row k' of B may share a column j
    setup = Setup.create(parse("C[i, j] = A[i, k] * B[k, j]"), {"A": A.format, "B": B.format, "C": csr()},
                         schedule=s)
    cfir = build_cfir(setup.statement, setup)
    (ws,) = [n for n in _cfir_nodes(cfir) if isinstance(n, CWorkspace)]
    assert not ws.once

    def claim(n):   # the same CFIR, wrongly claiming the producer lists each coordinate once
        if isinstance(n, tuple):
            return tuple(claim(x) for x in n)
        if not isinstance(n, CNode):
            return n
        n = replace(n, once=True) if isinstance(n, CWorkspace) else n
        return replace(n, **{f.name: claim(getattr(n, f.name)) for f in fields(n)})
    with pytest.raises(AssertionError, match="the producer claims to set each coordinate once, ascending"):
        interpret_cfir(claim(cfir), setup, A=A, B=B)


def test_a_sparse_2d_workspace_is_reset_per_use():
    rng = np.random.default_rng(9)
    B = Tensor.from_numpy(rand((3, 4, 5), 0.4, rng, empty=(1,)), csf(), name="B")
    c = Tensor.from_numpy(rand((2, 5), 0.5, rng), csr(), name="c")
    prog = "A[i, j, l] = B[i, j, k] * c[l, k]"
    s = Schedule().precompute(("j", "l"), "w", format="sparse")
    for out in (None, csf()):
        k = check(prog, s, out=out, B=B, c=c)
        assert "pw_reset" in k.c_source and "w[j_reset] = 0.0;" in k.c_source


def test_a_sparse_2d_min_plus_workspace_starts_at_infinity():
    inf = np.inf
    rng = np.random.default_rng(14)

    tropical = partial(rand, density=0.35, rng=rng, fill=inf, lo=0, hi=9)
    A = Tensor.from_numpy(tropical((5, 4)), csc(fill=inf), name="A")
    B = Tensor.from_numpy(tropical((4, 6)), csr(fill=inf), name="B")
    k = check("C[i, j] = min[k](A[i, k] + B[k, j])", OUTER, out=csr(fill=inf), A=A, B=B)
    assert "w_list" in k.c_source


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 7), st.integers(0, 6), st.integers(0, 7), st.sampled_from([0.0, 0.2, 0.6, 1.0]),
       st.sampled_from(["dense", "csr", "dcsr"]), st.integers(0, 2 ** 16))
def test_property_sparse_2d_workspace(m, n, q, density, out, seed):
    rng = np.random.default_rng(seed)
    A = Tensor.from_numpy(rand((m, n), density, rng, lo=-3, hi=4), csc(), name="A")
    B = Tensor.from_numpy(rand((n, q), density, rng, lo=-3, hi=4), csr(), name="B")
    check("C[i, j] = A[i, k] * B[k, j]", OUTER, out={"dense": None, "csr": csr(), "dcsr": dcsr()}[out], A=A, B=B)


# -- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize("prog, formats, schedule, message", [
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().precompute("i", "w", expr="A[i, j]"),
     r"precompute\(A\[i, j\], i\) does not apply: .*A\[i, j\] is under the sum over j and, in "
     r"A\[i, j\] \* x\[j\], x\[j\] uses j too"),
    ("y[i] = sum[j](A[i, j] + 1)", {"A": csr()}, Schedule().precompute("i", "w", expr="A[i, j]"),
     r"the sum over j does not distribute over add in A\[i, j\] \+ 1"),
    ("y[i] = max[j](A[i, j] + x[j]) * 2", {"A": csr(), "x": dense(1)},
     Schedule().precompute("i", "w", expr="A[i, j]"), r"x\[j\] uses j too"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().precompute("i", "w", expr="B[i, j] * x[j]"),
     r"B\[i, j\] \* x\[j\] does not occur in the statement \(y\[i\] \+= A\[i, j\] \* x\[j\]\)"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().precompute("k", "w", expr="A[i, j] * x[j]"),
     r"workspace index k is not a free index of A\[i, j\] \* x\[j\]"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().precompute("i", "x", expr="x[j]"),
     "workspace name x is already a tensor"),
    ("y[i] = A[i, j] * x[j] + z[i]", {"A": csr(), "x": dense(1), "z": dense(1)},
     Schedule().precompute("j", "w", expr="A[i, j] * x[j]"), r"j is not a loop around y\[i\]"),
    ("a[i] = b[i] * (c[i] + d[i])", {"b": dense(1), "c": dense(1), "d": dense(1)},
     Schedule().precompute("i", "w", expr="c[i] +"),
     r"schedule: precompute\(i, w, c\[i\] \+\): its expression does not parse: expected an expression, found "
     r"the end of the input\n    c\[i\] \+\n {10}\^"),
    ("a[i] = b[i] * (c[i] + d[i])", {"b": dense(1), "c": dense(1), "d": dense(1)},
     Schedule().precompute("i, i", "w", expr="c[i] + d[i]"), "workspace index repeated"),
    ("C[i, j] = x[i] * z[j]", {"x": sparse_vector(), "z": sparse_vector()}, Schedule().precompute("j", "w"),
     r"precompute\(j\): without an expression, precompute gathers a reduction's result in the workspace, and "
     r"C\[i, j\] = x\[i\] \* z\[j\] reduces nothing; name the sub-expression"),
])
def test_inapplicable_precompute_says_why(prog, formats, schedule, message):
    with pytest.raises(Exception, match=message) as e:
        lower(prog, options={"schedule": schedule}, **formats)
    assert e.type.__name__ in ("StrategyError", "ParseError")


def test_shared_loop_outside_the_workspace_is_refused():
    # j is used by both sides (x[j] stays in the consumer), so it cannot go inside the where
    with pytest.raises(StrategyError, match=r"workspace index i would be outside the loop over j"):
        lower("y[i] = A[i, j] * x[j]", options={"schedule": Schedule().reorder("i", "j").precompute(
            "i", "w", expr="A[i, j]")}, A=dense(2), x=dense(1))


# -- regrouping: the sub-expression up to commutativity and associativity ----------------------


@pytest.mark.parametrize("prog, expr, producer", [
    ("a[i] = b[i] * (c[i] + d[i])", "d[i] + c[i]", "w[i] = d[i] + c[i]"),
    ("a[i] = b[i] * (c[i] + e[i] + d[i])", "c[i] + d[i]", "w[i] = c[i] + d[i]"),
    ("a[i] = b[i] * c[i] * d[i]", "d[i] * b[i]", "w[i] = d[i] * b[i]"),
    ("a[i] = min(b[i], min(c[i], d[i]))", "min(d[i], b[i])", "w[i] = min(d[i], b[i])"),
])
def test_precompute_regroups_commutative_associative_chains(prog, expr, producer):
    rng = np.random.default_rng(5)
    vs = {t: Tensor.from_numpy(rand(9, 0.6, rng), sparse_vector()) for t in "bcde" if f"{t}[i]" in prog}
    k = check(prog, Schedule().precompute("i", "w", expr=expr), **vs)
    assert producer in str(step(k).after)


def test_precompute_does_not_regroup_what_does_not_commute():
    rng = np.random.default_rng(6)
    vs = {t: Tensor.from_numpy(rand(9, 0.6, rng), dense(1)) for t in "bcd"}
    with pytest.raises(StrategyError, match=r"d\[i\] - c\[i\] does not occur in the statement .*not even after "
                                            r"reordering the operands of commutative and associative operators"):
        lower("a[i] = b[i] * (c[i] - d[i])", options={"schedule": Schedule().precompute("i", "w", expr="d[i] - c[i]")},
              **vs)
    # a sum over j is not a chain of the sum's operands: x[j] + A[i, j] does not regroup out of it
    with pytest.raises(StrategyError, match="does not occur"):
        lower("y[i] = A[i, j] * x[j] + z[i]", A=csr(), x=dense(1), z=dense(1),
              options={"schedule": Schedule().precompute("i", "w", expr="z[i] + x[j]")})


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.permutations(["b", "c", "d", "e"]), st.integers(2, 4), st.floats(0, 1), st.integers(0, 12))
def test_any_order_of_a_sum_chain_regroups(order, size, density, n):
    """Precompute any sub-multiset of a sum chain, written in any order: same values as the oracle."""
    rng = np.random.default_rng(size * 97 + n)
    vs = {t: Tensor.from_numpy(rand(n, density, rng), sparse_vector()) for t in "bcde"}
    prog = "a[i] = f[i] * (b[i] + c[i] + d[i] + e[i])"
    vs["f"] = Tensor.from_numpy(rand(n, 1.0, rng), dense(1))
    expr = " + ".join(f"{t}[i]" for t in order[:size])
    check(prog, Schedule().precompute("i", "w", expr=expr), **vs)


@pytest.mark.parametrize("fill", [0.0, 1.0, np.inf])
def test_a_precomputed_operand_with_a_fill_sweeps_i_twice_in_one_scope(fill):
    """The workspace's producer and its consumer both sweep the universe of i in one block:
    the second starts i again instead of declaring it twice (found by fuzzing)."""
    from compiler.format import dcsr
    from compiler.testing import check_lowered
    A = Tensor.from_numpy(np.array([[3.0, fill], [fill, 2.0], [fill, fill]]), dcsr(fill=fill), name="A")
    x = np.array([1.0, 0.0, 2.0])
    k = check_lowered("y[i] = sum[j](A[i, j]) + x[i]", Schedule().precompute("i", "w", expr="A[i, j]"),
                      checked=True, A=A, x=x)
    assert k.c_source.count("int64_t i = 0;") <= 1


# -- reductions the formats cannot nest: precomputed automatically --------------------------------

MATRICES = {"csc": csc, "csr": csr, "coo": lambda **k: coo(2, **k), "dense": lambda **k: dense(2, **k)}


def auto_steps(k):
    return [s for s in k.trace.find("precompute") if s.note.startswith("automatic")]


@pytest.mark.parametrize("fa, fb", [("csc", "csc"), ("csc", "csr"), ("coo", "csc"), ("csc", "dense")])
@pytest.mark.parametrize("out", [None, sparse_vector()], ids=["dense", "sparse"])
def test_row_sums_of_a_column_major_matrix_are_precomputed(fa, fb, out):
    # y[i] = sum[j](A[i, j]) + sum[j](B[i, j]): each sum runs inside the loop over i, which a
    # CSC matrix cannot iterate first; it runs before the loop instead, into a workspace over i
    rng = np.random.default_rng(4)
    a, b = rand((7, 5), 0.4, rng), rand((7, 5), 0.4, rng)
    A, B = Tensor.from_numpy(a, MATRICES[fa](), name="A"), Tensor.from_numpy(b, MATRICES[fb](), name="B")
    k = check("y[i] = A[i, j] + B[i, j]", out=out, A=A, B=B)
    want = np.asarray(scipy.sparse.csc_matrix(a).sum(axis=1) + scipy.sparse.csr_matrix(b).sum(axis=1)).ravel()
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), want)
    steps = auto_steps(k)
    hoisted = [t for t, f in (("A", fa), ("B", fb)) if f in ("csc", "coo") and (t, f) != ("A", "coo")]
    assert len(steps) == len(hoisted)
    for s in steps:
        assert "is stored in the order j, i but reduced inside the loop over i" in s.note
    # a dense result reads a dense workspace; a sparse one iterates the workspace's coordinates
    kinds = {w.temp.kind for w in _wheres_of(k) if w.temp.workspace}
    assert kinds <= ({"dense"} if out is None else {"auto"})


def _wheres_of(k):
    from compiler.lattice.ordering import wheres
    return wheres(k.trace.find("precompute")[-1].after)


def test_automatic_precompute_is_the_one_a_user_would_write():
    rng = np.random.default_rng(2)
    A = Tensor.from_numpy(rand((9, 7), 0.3, rng), csc(), name="A")
    z = Tensor.from_numpy(rand(9, 0.4, rng), sparse_vector(), name="z")
    x = rng.random(7)
    auto = check("y[i] = A[i, j] * x[j] + z[i]", A=A, x=x, z=z)
    (s,) = auto_steps(auto)
    assert "y[i] = w[i] + z[i]" in s.after_text and "w[i] += A[i, j] * x[j]" in s.after_text
    user = check("y[i] = A[i, j] * x[j] + z[i]",
                 Schedule().precompute("i", "w", expr="A[i, j] * x[j]", format="dense"), A=A, x=x, z=z)
    assert str(s.after) == str(user.trace.find("schedule:precompute")[0].after)
    # then, as w is only added to z: y starts at z and the columns add into it (taco's sequence),
    # where the user's own workspace stays as scheduled
    (seq,) = auto.trace.find("sequence")
    assert str(seq.after) == "forall i:\n  y[i] = z[i]\nforall j:\n  forall i:\n    y[i] += A[i, j] * x[j]"
    assert "w" not in {p.name for p in auto.function.params} and "alloc_array" not in auto.c_source
    assert not user.trace.find("sequence") and "alloc_array(" in user.c_source


@pytest.mark.parametrize("out", [csr(), dense(2)], ids=["csr", "dense"])
@pytest.mark.parametrize("prog", ["C[i, j] = A[i, k] * B[k, j] + D[i, j]",
                                  "C[i, j] = max(sum[k](A[i, k] * B[k, j]), D[i, j])"])
def test_an_automatic_workspace_keeps_the_loops_the_formats_allow_around_it(prog, out):
    # A*B + D with CSR operands: B needs k before j, not before i. The workspace is a row w[j],
    # computed for each i (Gustavson's), not a matrix w[i, j] computed before every loop, and the
    # rows run on threads
    rng = np.random.default_rng(3)
    A = Tensor.from_numpy(rand((9, 7), 0.3, rng), csr(), name="A")
    B = Tensor.from_numpy(rand((7, 8), 0.3, rng), csr(), name="B")
    D = Tensor.from_numpy(rand((9, 8), 0.3, rng), csr(), name="D")
    k = check(prog, out=out, checked=True, A=A, B=B, D=D)
    (step,) = [s for s in k.trace.steps if s.stage == "precompute"]
    assert step.note.endswith("the reduction runs first (for each i), into a workspace w[j]")
    assert step.after_text.startswith("forall i:")
    check(prog, Schedule().parallelize("i"), out=out, checked=True, A=A, B=B, D=D)


def test_automatic_workspaces_in_both_sides_of_a_scalar_sum():
    # each reduction runs in a where outside every loop: the precompute looked for j around s (and
    # refused); then both workspaces were named w, and shared one array (a wrong sum)
    rng = np.random.default_rng(4)
    A = Tensor.from_numpy(rand((5, 3), 0.5, rng), csr(), name="A")
    B = Tensor.from_numpy(rand((5, 3), 0.5, rng), csr(), name="B")
    x = rng.random(3)
    k = check("s = sum[j](x[j] * sum[l](A[l, j])) + sum[j](x[j] * max[l](B[l, j]))", checked=True, A=A, B=B, x=x)
    notes = [s.note for s in k.trace.steps if s.stage == "precompute"]
    assert [n.rsplit(" ", 1)[-1] for n in notes] == ["w[j]", "w_2[j]"]
    check("s = sum[j](x[j] * sum[l](A[l, j])) + sum[j](x[j])", checked=True, A=A, x=x)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# two CSC sums of fill 1 in a sequence, each counting per i the j where A (or B) ran: both tallies were
# named i_ran, declared and freed twice (C the compiler rejected; issue 28, item 8)
@example("csc", "csc", 1.0, 1.0, "sum", 3, 2, 0.3, 0, False, 0)
@given(st.sampled_from(["csc", "coo"]), st.sampled_from(sorted(MATRICES)),
       st.sampled_from([0.0, 1.0, -2.0, np.inf, -np.inf]), st.sampled_from([0.0, 1.0, np.inf]),
       st.sampled_from(["sum", "max", "min"]), st.integers(0, 5), st.integers(0, 5),
       st.sampled_from([0.0, 0.3, 1.0]), st.sampled_from([0, 1, 2, 3]), st.booleans(), st.integers(0, 2 ** 16))
def test_property_nested_reductions_of_column_major_matrices(fa, fb, fill_a, fill_b, r, m, n, density,
                                                             form, sparse_out, seed):
    """Each nested reduction whose matrix is stored by columns is precomputed, whatever its
    fill, operator and the output's format (and two only added together become a sequence when
    their operators agree); checked against the oracle and the interpreter."""
    rng = np.random.default_rng(seed)
    progs = [f"y[i] = {r}[j](A[i, j]) + B[i, j]", f"y[i] = max({r}[j](A[i, j]), sum[j](B[i, j]))",
             f"y[i] = {r}[j](A[i, j]) * B[i, j]", f"y[i] = sum[k](B[i, k]) + {r}[j](A[i, j])"]
    prog = progs[form]
    if form == 2:   # inf * 0 where a fill-0 operand is skipped is NaN in the oracle only (by design)
        fill_a, fill_b = (0.0 if np.isinf(f) else f for f in (fill_a, fill_b))
    a, b = (rand((m, n), density, rng, lo=-3, hi=4) for _ in "ab")
    a[a == 0], b[b == 0] = fill_a, fill_b
    A = Tensor.from_numpy(a, MATRICES[fa](fill=fill_a), name="A")
    B = Tensor.from_numpy(b, MATRICES[fb](fill=fill_b), name="B")
    out = None
    if sparse_out:
        from compiler.reference import evaluate
        out = sparse_vector(fill=float(evaluate(prog, A=A, B=B)[1]))
    check(prog, out=out, A=A, B=B)


@pytest.mark.parametrize("prog, fill", [("y[i] = sum[j](A[i, j]) + B[i, j]", 1.0),
                                        ("y[i] = sum[k](B[i, k]) + sum[j](A[i, j])", 1.0),
                                        ("y[i] = sum[j](A[i, j]) + sum[j](B[i, j]) + sum[j](C[i, j])", 1.0),
                                        ("y[i] = A[i, j] * x[j] + B[i, j] * z[j]", np.inf)])
def test_each_nest_of_a_sequence_counts_its_column_major_fill_in_its_own_array(prog, fill):
    # (issue 28, item 8) a sequence's nests each fold a CSC matrix's fill into y[i], counting per i
    # the j where a case ran: the counts were one name for every nest, so the C declared and freed
    # i_ran twice and the compiler rejected it
    rng = np.random.default_rng(5)
    mats = {}
    for t in "ABC":
        mats[t] = Tensor.from_numpy(rand((4, 3), 0.4, rng, fill=fill), csc(fill=fill), name=t)
    vecs = {"x": rng.random(3), "z": rng.random(3)}
    tensors = {t: v for t, v in {**mats, **vecs}.items() if f"{t}[" in prog}
    k = check(prog, **tensors)
    assert k.trace.find("sequence")
    tallies = re.findall(r"int64_t \*(i_ran\w*) = alloc_array", k.c_source)
    assert len(tallies) >= 2 and len(set(tallies)) == len(tallies)


def test_a_workspace_value_test_reads_the_workspace():
    # max(min[j](A), ...) with A's min in a workspace that starts at inf, max's annihilator: the
    # lattice tests the workspace's value against inf (this used to look the workspace up as a tensor)
    a = np.array([[1.0, np.inf], [np.inf, np.inf]])
    A = Tensor.from_numpy(a, csc(fill=np.inf), name="A")
    B = Tensor.from_numpy(np.array([[2.0, 0.0], [0.0, 0.0]]), csr(fill=1.0), name="B")
    k = check("y[i] = max(min[j](A[i, j]), sum[j](B[i, j]))", A=A, B=B)
    assert k(A=A, B=B).to_numpy().tolist() == [2.0, np.inf]
    assert "w[i] != INFINITY" in k.c_source


def test_nested_reduction_the_formats_cannot_order_reads_two_inputs_converted():
    # A, C (CSC) and B, D (CSR) disagree, and reading any one in the other order leaves the others
    # so: the kernel reads A and C as CSR (the first two met among the fewest)
    rng = np.random.default_rng(4)
    arrays = {t: rng.random((5, 4)) * (rng.random((5, 4)) < 0.6) for t in "ABCD"}
    tensors = {t: Tensor.from_numpy(a, csc() if t in "AC" else csr(), name=t) for t, a in arrays.items()}
    k = lower("y[i] = max[j](A[i, j] * B[i, j] * C[i, j] * D[i, j]) + 1", **tensors)
    assert [s.note.split(":")[0] for s in k.trace.find("convert")] == ["A is csc", "C is csc"]
    assert [(t, f.shorthand) for t, f in k.lowered.conversions] == [("A", "csr"), ("C", "csr")]
    a, b, c, d = (arrays[t] for t in "ABCD")
    for run in (k, k.interpret):
        np.testing.assert_allclose(run(**tensors).to_numpy(), (a * b * c * d).max(axis=1) + 1)


def test_nested_reduction_the_formats_cannot_order_reads_one_input_converted():
    rng = np.random.default_rng(2)
    a, b = rng.random((5, 4)) * (rng.random((5, 4)) < 0.5), rng.random((5, 4)) * (rng.random((5, 4)) < 0.5)
    A, B = Tensor.from_numpy(a, csc(), name="A"), Tensor.from_numpy(b, csr(), name="B")
    k = lower("y[i] = max[j](A[i, j] * B[i, j]) + 1", A=A, B=B)
    (step,) = k.trace.find("convert")
    assert step.note.startswith("A is csc: no loop order visits every tensor in storage order: j before i "
                                "(from A[i, j]); i before j (from B[i, j]); the kernel reads A as csr")
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), (a * b).max(axis=1) + 1)


def test_derived_loops_leave_a_misnested_reduction_to_the_builder():
    # split(i) binds i first: the nested sum over j would run inside it, which CSC cannot do
    with pytest.raises(StrategyError, match=r"A\[i, j\] is stored in the order j, i, so j must be iterated before i"):
        lower("y[i] = A[i, j] + 1", A=csc(), options={"schedule": Schedule().split("i", "i0", "i1", 2)})


def test_precompute_without_an_expression_names_the_nested_reduction():
    # it said the statement "reduces nothing"
    with pytest.raises(StrategyError, match=r"y\[i\] = sum\[j\]\(A\[i, j\]\) \+ x\[i\] assigns its value without "
                       r"reducing into y\[i\] \(its sum\[j\]\(A\[i, j\]\) is nested inside the expression\); "
                       r"name the sub-expression to compute first, "
                       r"e.g. precompute\(i, w, expr='sum\[j\]\(A\[i, j\]\)'\)"):
        lower("y[i] = sum[j](A[i, j]) + x[i]", A=csr(), x=dense(1), options={"schedule": Schedule().precompute("i", "w")})
    # ... which is what works
    A = Tensor.from_numpy(np.array([[1.0, 0.0], [0.0, 0.0], [0.0, -2.0]]), csr(), name="A")
    x = Tensor.from_numpy(np.array([1.0, 2.0, 3.0]), dense(1), name="x")
    check_lowered("y[i] = sum[j](A[i, j]) + x[i]", Schedule().precompute("i", "w", expr="sum[j](A[i, j])"),
                  A=A, x=x)


def test_parallelize_after_an_automatic_precompute_says_why_not():
    with pytest.raises(StrategyError, match=r"parallelize\(i\) does not apply: the statement first computes the "
                       r"workspace w, which the formats need \(a reduction stored in an order that does not nest in "
                       r"the loops around it: see the trace's precompute step\), outside every loop, so no loop "
                       r"encloses all of it"):
        lower("y[i] = sum[j](A[i, j]) * 2", A=csc(), options={"schedule": Schedule().parallelize("i")})
    # the same workspace asked for
    with pytest.raises(StrategyError, match=r"parallelize\(i\) does not apply: the statement first computes the "
                       r"workspace w \(the schedule's precompute\), outside every loop"):
        lower("y[i] = sum[j](A[i, j]) * 2", A=csr(),
              options={"schedule": Schedule().precompute("i", "w", expr="sum[j](A[i, j])").parallelize("i")})
    # y = A 1 + 1 is a sequence, y = 1; y += A 1: i runs in both loop nests
    with pytest.raises(StrategyError, match=r"parallelize\(i\) does not apply: y is defined, then updated, by two "
                       r"loop nests \(a sequence\), and i runs in both: outermost in one, inside the other, where "
                       r"its iterations would race"):
        lower("y[i] = A[i, j] + 1", A=csc(), options={"schedule": Schedule().parallelize("i")})


# -- found by fuzzing ------------------------------------------------------------------------------


def test_a_user_function_with_an_algebra_reads_a_precomputed_workspace():
    from compiler import user_function
    xorf = user_function("xorf", lambda a, b: a + b if (a == 0) != (b == 0) else 0.0,
                         "return (x != 0) != (y != 0) ? x + y : 0.0;", algebra="(x | y) & !(x & y)", dtype="float64")
    b = Tensor.from_numpy(np.array([4.0, 3, 0, 2]), sparse_vector(), name="b")
    k = check("a[i] = xorf(b[i], 2.0)", Schedule().precompute("i", "w", expr="b[i]"), functions={"xorf": xorf}, b=b)
    assert k(b=b).to_numpy().tolist() == [0.0, 0.0, 2.0, 0.0]


@pytest.mark.parametrize("out", [sparse_vector(), dense(1, fill=4.0)], ids=["sparse", "dense-fill-4"])
def test_a_precomputed_sub_expression_under_a_reduction_with_fills(out):
    # the consumer reduces over j into y: it starts at the sum's identity, and a sparse y sums
    # over j before appending (it gave 1 for 3 into a sparse y, 6 for 2 into a dense one of fill 4)
    A = Tensor.from_numpy(np.full((1, 3), 1.0), csr(fill=1.0), name="A")
    x = Tensor.from_numpy(np.array([0.0, 4.0, 0.0]), sparse_vector(fill=1.0), name="x")
    z = Tensor.from_numpy(np.array([-2.0, 1.0, 1.0]), sparse_vector(fill=1.0), name="z")
    k = check("y[i] = A[i, j] * (x[j] + z[j])", Schedule().precompute("j", "w", expr="x[j] + z[j]"),
              out=out, A=A, x=x, z=z)
    assert k(A=A, x=x, z=z).to_numpy().tolist() == [4.0]


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_an_empty_min_over_a_workspace_is_the_identity(dtype):
    b = Tensor.from_numpy(np.zeros(0, dtype), sparse_vector(dtype=dtype, fill=np.zeros((), dtype).item()), name="b")
    k = check("s = min[i](b[i] * 2)", Schedule().precompute("i", "w", expr="b[i] * 2"), b=b)
    assert k(b=b).to_numpy() == (np.inf if dtype == "float64" else np.iinfo(np.int64).max)


def test_precompute_names_a_reduction_by_a_user_function():
    from compiler import user_function
    addu = user_function("addu", lambda a, b: a + b, "return x + y;", identity=0, commutative=True,
                         associative=True)
    A = Tensor.from_numpy(np.array([[1.0, 0, 2], [0, 3, 0]]), csr(), name="A")
    x = np.array([1.0, 2.0])
    k = check("y[i] = addu[j](A[i, j]) + x[i]", Schedule().precompute("i", "w", expr="addu[j](A[i, j])"),
              functions={"addu": addu}, A=A, x=x)
    assert k(A=A, x=x).to_numpy().tolist() == [4.0, 5.0]


def T(a, fmt, name):
    return Tensor.from_numpy(np.asarray(a), fmt, name=name)


def test_a_column_major_reduction_nested_in_another_is_precomputed():
    A, B = T([[1.0, 0, 2], [0, 3, 0]], csc(), "A"), T([[0.0, 1, 2], [4, 0, 0]], csr(), "B")
    k = check("y[i] = max[j](sum[k](A[i, k]) + B[i, j]) * 2", A=A, B=B)
    assert [s.note.split(":")[0] for s in auto_steps(k)] == ["automatic"]
    assert k(A=A, B=B).to_numpy().tolist() == [10.0, 14.0]


@pytest.mark.parametrize("fa", [csr, lambda **k: coo(2, **k)], ids=["csr", "coo"])
@pytest.mark.parametrize("r", ["max", "sum"])
def test_a_misnested_reduction_inside_a_loop_invariant_one_is_hoisted_first(fa, r):
    # sum[i](max[k](A[k, i])) does not use j: moved out of the loop over j first, its loop over i
    # is the statement's own, and max's workspace w[i] goes around it (it was refused: "i is not
    # a loop around y[j]")
    a = np.array([[1.0, 0, -2], [0, 3, 0], [-4, 0, 0], [0, 0, 0]])
    A, z = T(a, fa(), "A"), np.array([1.0, 2.0, 3.0, 4.0])
    k = check(f"y[j] = z[j] + sum[i]({r}[k](A[k, i]))", checked=True, A=A, z=z)
    inner = a.max(axis=0) if r == "max" else a.sum(axis=0)
    np.testing.assert_allclose(k(A=A, z=z).to_numpy(), z + inner.sum())
    assert [s.stage for s in k.trace.steps if s.stage in ("hoist", "precompute")] == ["hoist", "precompute"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(MATRICES)), st.sampled_from([0.0, 1.0, -np.inf]), st.sampled_from(["sum", "max", "min"]),
       st.sampled_from(["sum", "max"]), st.integers(0, 5), st.integers(0, 5), st.sampled_from([0.0, 0.3, 1.0]),
       st.integers(0, 2 ** 16))
def test_property_reductions_inside_a_loop_invariant_one(fa, fill, r, outer, m, n, density, seed):
    rng = np.random.default_rng(seed)
    a = rand((m, n), density, rng, lo=-3, hi=4)
    a[a == 0] = fill
    A, z = Tensor.from_numpy(a, MATRICES[fa](fill=fill), name="A"), rng.integers(-3, 4, 4).astype(float)
    check(f"y[j] = z[j] + {outer}[i]({r}[k](A[k, i]))", A=A, z=z)


def test_precompute_names_a_reduction_as_the_user_wrote_it():
    # the program's max[j] is renamed apart (j_2) from the implicit sum over j around it
    A, B = T([[1.0, 0, 2], [0, 3, 0]], csr(), "A"), T([[0.0, 1, 2], [4, 0, 0]], csr(), "B")
    k = check("y[i] = max[j](A[i, j]) * B[i, j]", Schedule().precompute("i", "w", expr="max[j](A[i, j])"), A=A, B=B)
    assert k(A=A, B=B).to_numpy().tolist() == [6.0, 12.0]


@pytest.mark.parametrize("r", ["max", "sum"])
def test_precomputing_a_reduction_of_a_column_major_matrix_orders_its_loops_by_the_format(r):
    D, x = T([[0.0, 5], [0, 0]], csc(), "D"), T([1.0, 2], sparse_vector(), "x")
    k = check(f"y[i] = {r}[l](D[i, l]) * x[i]", Schedule().precompute("i", "w", expr=f"{r}[l](D[i, l])"), D=D, x=x)
    after = step(k).after_text
    assert f"w[i] {'max=' if r == 'max' else '+='} D[i, l]" in after
    assert after.index("forall l") < after.index("forall i:\n      w[i]")


@pytest.mark.parametrize("prog, out", [("y[w] = sum[j](A[w, j]) * 2", None), ("C[i, w] = A[i, k] * B[k, w]", csr())])
def test_a_generated_workspace_avoids_the_index_names(prog, out):
    A = T([[1.0, 0, 2], [0, 3, 0]], csc() if "y" in prog else csr(), "A")
    B = T([[1.0, 0], [0, 2], [3, 0]], csr(), "B")
    k = check(prog, out=out, A=A, B=B)
    assert "w[w]" not in k.c_source and "w_2" in k.c_source


def test_a_user_precompute_beside_an_automatic_one():
    # the user's workspace holds B's sum; A's, stored by columns, is precomputed automatically
    A, B = T([[1.0, 0, 2], [0, 3, 0]], csc(), "A"), T([[0.0, 1, 2], [4, 0, 0]], csr(), "B")
    k = check("y[i] = A[i, j] + B[i, j]", Schedule().precompute("i", "w", expr="B[i, j]"), A=A, B=B)
    assert k(A=A, B=B).to_numpy().tolist() == [6.0, 7.0]
    assert len(auto_steps(k)) == 1


@pytest.mark.parametrize("fmt", ["sparse", "dense"])
def test_two_nested_reductions_over_j_get_their_own_temporaries(fmt):
    # the user's workspace computes min[j](B); the consumer's max[j](A) had the same name t_j,
    # and the min started at max's identity (the result was -inf)
    A, B = T([[1.0, 0], [0, 2]], dense(2), "A"), T([[1.0, 2], [5, 3]], dense(2), "B")
    C = T([[1.0, 0], [0, 0]], csc(), "C")
    k = check("y[i] = max[j](A[i, j]) * min[j](B[i, j]) + C[i, j]",
              Schedule().precompute("i", "w", expr="min[j](B[i, j])", format=fmt), A=A, B=B, C=C)
    assert k(A=A, B=B, C=C).to_numpy().tolist() == [2.0, 6.0]


def test_an_int_sum_added_to_a_float_keeps_its_workspace():
    # the sum stays exact in int64 and is added to z once; a float y would round each term
    # (2^53 + 1 + 1 in float64, from 0 on, stays 2^53: each + 1 rounds back)
    a = np.zeros((3, 3), np.int64)
    a[0] = 2 ** 53, 1, 1
    A = Tensor.from_numpy(a, csc(dtype="int64"), name="A")
    x, z = np.ones(3, np.int64), np.zeros(3)
    k = check("y[i] = A[i, j] * x[j] + z[i]", A=A, x=x, z=z)
    assert not k.trace.find("sequence")
    assert k(A=A, x=x, z=z).to_numpy()[0] == 2.0 ** 53 + 2


@pytest.mark.parametrize("out", [None, sparse_vector()], ids=["dense", "sparse"])
def test_two_column_major_reductions_of_one_access_each_get_a_workspace(out):
    # A[i, j] occurs under both sums: the automatic precompute of sum[j](A[i, j]) takes the whole
    # reduction, not A[i, j] (whose other occurrence, beside x[j], cannot be summed alone)
    rng = np.random.default_rng(31)
    A = Tensor.from_numpy(rand((12, 9), 0.3, rng, empty=(2,)), csc(), name="A")
    k = check("y[i] = sum[j](A[i, j] * x[j]) + sum[j](A[i, j])", out=out, A=A, x=rng.random(9))
    assert len(auto_steps(k)) == 2


@pytest.mark.parametrize("program", ["y[j] = max[i](A[i, j]) + min[i](A[i, j])",
                                     "y[j] = max[i](A[i, j]) * sum[i](A[i, j])",
                                     "y[j] = max[i](A[i, j]) + A[i, j]",
                                     "y[j] = max[i](A[i, j]) - max[i](A[i, j] * 2)"])
@pytest.mark.parametrize("shape", [(3, 4), (0, 2)])
def test_one_operand_reduced_by_two_operators_gets_a_workspace_for_each(program, shape):
    # the columns' max and min of a CSR matrix, each computed first into a workspace over j: a precompute of
    # A[i, j] under both held only the last operator's (y = w + w, the min twice), until precompute_expr
    # refused an expression reduced over one index by two operators (hypothesis found it, tests/compiler/
    # looplets/test_counted_gaps.py)
    a = np.array([[1.0, 0.0, -2.0, 0.0], [3.0, 5.0, 0.0, 0.0], [0.0, -4.0, 0.0, 7.0]])[:shape[0], :shape[1]]
    A = Tensor.from_numpy(a, csr(), name="A")
    k = check(program, A=A)
    ws = {w.temp.name for w in _wheres_of(k) if w.temp.workspace}
    if "sum" in program or "min" in program:
        assert len(ws) == 2, k.trace.find("precompute")[-1].after_text
