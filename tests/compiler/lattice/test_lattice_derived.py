"""Derived iteration spaces (split up/down, fuse, pos) against the oracle, and clear refusals."""

import numpy as np
import pytest

from compiler import Tensor, evaluate, lower
from compiler.backend import build
from compiler.errors import StrategyError
from compiler.format import csr, dcsr, dense, sparse_vector
from compiler.lattice import Schedule

FACTORS = [1, 2, 3, 16, 1000]


def check(prog, schedule, out=None, **tensors):
    kw = dict(tensors)
    if out is not None:
        kw[prog.split("[")[0]] = out
    k = lower(prog, options={"schedule": schedule}, **kw)
    want, _ = evaluate(prog, **tensors)
    np.testing.assert_allclose(k(**tensors).to_numpy(), want)
    np.testing.assert_allclose(k.interpret(**tensors).to_numpy(), want)
    return k


def rand(shape, density, rng, empty=()):
    a = rng.integers(1, 6, size=shape).astype(float)
    a[rng.random(shape) >= density] = 0.0
    for r in empty:
        a[r] = 0.0
    return a


# the E2/E10 matrix: rows 0 and 2 empty
E2 = np.array([[0, 0, 0, 0, 0], [0, 1, 0, 2, 3], [0, 0, 0, 0, 0], [0, 0, 4, 5, 0]], float)


@pytest.mark.parametrize("factor", FACTORS + [None])
def test_fuse_pos_split_spmv_e10(factor):
    A, x = Tensor.from_numpy(E2, csr(), name="A"), np.arange(1.0, 6.0)
    s = Schedule().fuse("i", "j", "f").pos("f", "fpos", "A")
    if factor is not None:
        s = s.split("fpos", "f0", "f1", factor)
    k = check("y[i] = A[i, j] * x[j]", s, A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), [0, 25, 0, 32])
    assert "while (fpos == A1_pos[i + 1])" in k.c_source   # pitfall 17: while, not if
    stages = [st.stage for st in k.trace.steps]
    assert stages.count("schedule:fuse") == stages.count("schedule:pos") == 1
    assert ("schedule:split" in stages) == (factor is not None)


@pytest.mark.parametrize("direction", ["down", "up"])
@pytest.mark.parametrize("factor", FACTORS)
def test_fused_positions_random_with_empty_rows(direction, factor):
    rng = np.random.default_rng(factor)
    a = rand((13, 9), 0.3, rng, empty=(0, 5, 12))
    A, x = Tensor.from_numpy(a, csr(), name="A"), rng.random(9)
    check("y[i] = A[i, j] * x[j]",
          Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "p0", "p1", factor, direction), A=A, x=x)


def test_fused_positions_of_an_empty_matrix():
    A, x = Tensor.from_numpy(np.zeros((4, 3)), csr(), name="A"), np.ones(3)
    check("y[i] = A[i, j] * x[j]", Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "a", "b", 4),
          A=A, x=x)


@pytest.mark.parametrize("factor", FACTORS)
def test_split_down_dense_add_e15(factor):
    rng = np.random.default_rng(0)
    b, c = rng.random(37), rng.random(37)
    k = check("a[i] = b[i] + c[i]", Schedule().split("i", "i0", "i1", factor), b=b, c=c)
    assert "if (i >= b0_size)" in k.c_source or "if (i >= c0_size)" in k.c_source
    assert f"i1 < {factor}" in k.c_source


@pytest.mark.parametrize("factor", FACTORS)
def test_divide_spmv_has_both_guards(factor):
    rng = np.random.default_rng(1)
    A, x = Tensor.from_numpy(rand((11, 7), 0.3, rng, empty=(2,)), csr(), name="A"), rng.random(7)
    k = check("y[i] = A[i, j] * x[j]", Schedule().split("i", "i0", "i1", factor, "up"), A=A, x=x)
    assert f"i0 < {factor}" in k.c_source
    assert "if (i >= A0_size)" in k.c_source and "if (i >= (i0 + 1) * i_block)" in k.c_source


@pytest.mark.parametrize("factor", [1, 2, 5])
def test_pos_and_split_inner_positions(factor):
    rng = np.random.default_rng(2)
    A, x = Tensor.from_numpy(rand((8, 10), 0.4, rng, empty=(3,)), csr(), name="A"), rng.random(10)
    k = check("y[i] = A[i, j] * x[j]", Schedule().pos("j", "jp", "A").split("jp", "j0", "j1", factor), A=A, x=x)
    assert "jp >= A1_pos[i + 1]" in k.c_source


def test_pos_split_into_a_sparse_output():
    rng = np.random.default_rng(3)
    a = rand((6, 9), 0.4, rng, empty=(1,))
    A, B = Tensor.from_numpy(a, csr(), name="A"), rng.random((6, 9))
    k = check("C[i, j] = A[i, j] * B[i, j]", Schedule().pos("j", "jp", "A").split("jp", "j0", "j1", 2, "up"),
              out=csr(), A=A, B=B)
    assert k(A=A, B=B).levels[1].name == "SparseList"


def test_split_rows_of_a_sparse_output():
    rng = np.random.default_rng(4)
    A = Tensor.from_numpy(rand((9, 6), 0.3, rng, empty=(0,)), csr(), name="A")
    B = Tensor.from_numpy(rand((9, 6), 0.3, rng, empty=(4,)), csr(), name="B")
    for d in ("down", "up"):
        check("C[i, j] = A[i, j] + B[i, j]", Schedule().split("i", "i0", "i1", 4, d), out=csr(), A=A, B=B)


@pytest.mark.parametrize("factor", [None, 1, 5, 7])
def test_fuse_dense_loops(factor):
    rng = np.random.default_rng(5)
    B, C = rng.random((5, 7)), rng.random((5, 7))
    s = Schedule().fuse("i", "j", "f")
    if factor:
        s = s.split("f", "f0", "f1", factor)
    k = check("A[i, j] = B[i, j] * C[i, j]", s, B=B, C=C)
    assert "f % " in k.c_source and "f / " in k.c_source


@pytest.mark.parametrize("direction", ["down", "up"])
@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize("prog", ["a[i] = b[i] + c[i]", "a[i] = b[i] * c[i]", "a[i] = b[i] * (c[i] + d[i])",
                                  "a[i] = b[i] + d[i]"])
def test_coordinate_split_of_a_sparse_loop(prog, factor, direction):
    rng = np.random.default_rng(factor)
    b = Tensor.from_numpy(rand((37,), 0.3, rng), sparse_vector(), name="b")
    c = Tensor.from_numpy(rand((37,), 0.3, rng), sparse_vector(), name="c")
    d = rng.random(37) if prog.endswith("d[i]") else Tensor.from_numpy(rand((37,), 0.3, rng), sparse_vector(), name="d")
    tensors = {t: v for t, v in {"b": b, "c": c, "d": d}.items() if f"{t}[i]" in prog}
    s = Schedule().split("i", "i0", "i1", factor, direction)
    k = check(prog, s, **tensors)
    assert "i_hi" in k.c_source
    check(prog, s, out=sparse_vector(), **tensors)


@pytest.mark.parametrize("factor", [1, 2, 3, 1000])
def test_coordinate_split_of_the_inner_sparse_loop(factor):
    rng = np.random.default_rng(7)
    A = Tensor.from_numpy(rand((9, 13), 0.4, rng, empty=(0, 5)), csr(), name="A")
    B = Tensor.from_numpy(rand((9, 13), 0.4, rng, empty=(3,)), csr(), name="B")
    check("y[i] = A[i, j] * x[j]", Schedule().split("j", "j0", "j1", factor), A=A, x=rng.random(13))
    check("C[i, j] = A[i, j] + B[i, j]", Schedule().split("j", "j0", "j1", factor, "up"), out=csr(), A=A, B=B)


def test_trace_shows_derived_loops_and_relations():
    A, x = Tensor.from_numpy(E2, csr(), name="A"), np.ones(5)
    k = lower("y[i] = A[i, j] * x[j]", A=A, x=x,
              options={"schedule": Schedule().fuse("i", "j", "f").pos("f", "fpos", "A").split("fpos", "f0", "f1", 8)})
    step = [st for st in k.trace.steps if st.stage == "schedule:split"][0]
    text = str(step.after)
    assert "forall f0:" in text and "forall f1:" in text
    assert "such that fuse(i, j, f), pos(f, fpos, A), split(fpos, f0, f1, 8, down)" in text


def test_parallelize_the_outer_block_loop():
    if build.openmp_support() is not None:
        pytest.skip("the C compiler has no OpenMP")
    rng = np.random.default_rng(6)
    A, x = Tensor.from_numpy(rand((40, 9), 0.3, rng), csr(), name="A"), rng.random(9)
    k = check("y[i] = A[i, j] * x[j]", Schedule().split("i", "i0", "i1", 8).parallelize("i0"), A=A, x=x)
    assert "#pragma omp parallel for" in k.c_source.split("for (int64_t i0")[0]


@pytest.mark.parametrize("prog, formats, schedule, message", [
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("i", "i0", "i1", 0), "positive integer"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("i", "i0", "i1", 2.5), "positive integer"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("i", "i0", "i1", 4, "sideways"), "'down'"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("k", "k0", "k1", 4), "k is not a loop variable"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("i", "A", "i1", 4), "A is already a variable or tensor"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("i", "i0", "i1", 4).split("i", "a", "b", 2),
     "already transformed"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("i", "i0", "i1", 4).split("i0", "a", "b", 2),
     "split of such a variable is not supported"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("j", "j0", "j1", 4).parallelize("j0"), "outermost"),
    ("a[i] = b[i] + c[i]", {"b": sparse_vector(), "c": sparse_vector(), "A": None, "x": None},
     Schedule().split("i", "i0", "i1", 4).parallelize("i0"), "carry the iterators' positions"),
    ("y[i] = A[i, j] * x[j] + d[i]", {"d": dense(1)}, Schedule().fuse("i", "j", "f"), "not directly nested"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().fuse("j", "i", "f"), "i is not directly nested in j"),
    ("C[i, j] = A[i, j] * B[i, j]", {"B": dense(2), "C": csr(), "x": None}, Schedule().fuse("i", "j", "f"),
     "needs a dense output"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().pos("i", "ip", "x"), "x is not indexed by i"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().pos("j", "jp", "x"), "Dense level"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().pos("j", "jp", "Z"), "Z is not an input"),
    ("y[i] = A[i, j] * x[j]", {"x": sparse_vector()}, Schedule().pos("j", "jp", "A"), "also iterates x"),
    ("y[i] = A[i, j] * x[j]", {"A": dcsr()}, Schedule().fuse("i", "j", "f").pos("f", "fp", "A"),
     "Dense parent level"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().fuse("i", "j", "f").pos("f", "fp", "A").parallelize("fp"),
     "binary search"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "a", "b", 4)
     .parallelize("a"), "binary search"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("i", "i0", "i1", 4).parallelize("i"), "parallelize i0 instead"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("i", "i0", "i1", 4).reorder("j", "i"), "before the derived"),
])
def test_inapplicable_derived_schedules_say_why(prog, formats, schedule, message):
    fm = {"A": csr(), "x": dense(1), **formats}
    fm = {k: v for k, v in fm.items() if v is not None and k in prog}
    with pytest.raises(StrategyError, match=message):
        lower(prog, options={"schedule": schedule}, **fm)


def test_lattice_points_tag_their_c_lines():
    b = Tensor.from_numpy(np.array([0, 1.0, 0, 2, 3]), sparse_vector(), name="b")
    c = Tensor.from_numpy(np.array([4.0, 0, 0, 5, 0]), sparse_vector(), name="c")
    k = lower("a[i] = b[i] + c[i]", b=b, c=c)
    step = [st for st in k.trace.steps if st.stage == "emit-c"][0]
    art = [a for a in step.artifacts if a.kind == "c"][0]
    tags = art.data["provenance"]
    assert {"lattice:i:b∩c", "lattice:i:b", "lattice:i:c"} <= set(tags)
    src = art.text.splitlines()
    assert any("while" in src[n - 1] for n in tags["lattice:i:b∩c"])


def test_scheduled_statements_survive_serialization():
    import json

    from compiler import serialize
    A, x = Tensor.from_numpy(E2, csr(), name="A"), np.ones(5)
    k = lower("y[i] = A[i, j] * x[j]", A=A, x=x,
              options={"schedule": Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "a", "b", 2)})
    steps = [st for st in k.trace.steps if st.stage.startswith("schedule:")]
    assert len(steps) == 3
    for st in steps:
        back = serialize.decode(json.loads(json.dumps(serialize.encode(st.after))))
        assert str(back) == str(st.after)
