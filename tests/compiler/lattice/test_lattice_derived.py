"""Derived iteration spaces (split up/down, fuse, pos) against the oracle, and clear refusals."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.backend import build
from compiler.errors import StrategyError
from compiler.format import Format, csc, csr, dcsr, dense, parse_format, sparse_vector
from compiler.levels import Element, SparseHash, SparseList
from compiler.lattice import Schedule
from compiler.testing import check_lowered as check, random_sparse as rand
from hypersparse_cases import hypersparse_pair

FACTORS = [1, 2, 3, 16, 1000]


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


@pytest.mark.parametrize("fmt", [csr, dcsr])
@pytest.mark.parametrize("factor", [None, 3])
def test_a_sum_over_fused_positions_walks_no_row(fmt, factor):
    """Summing every entry reads no row: the fused loop is one flat loop over A's values, into a
    scalar temporary (the whole reduction is promoted, both fused loops inside it)."""
    rng = np.random.default_rng(7)
    A = Tensor.from_numpy(rand((9, 6), 0.3, rng, empty=(0, 4, 8)), fmt(), name="A")
    s = Schedule().fuse("i", "j", "f").pos("f", "fp", "A")
    if factor is not None:
        s = s.split("fp", "f0", "f1", factor)
    k = check("s[] = A[i, j]", s, checked=True, A=A)
    src = k.c_source
    assert "the row of position" not in src and "while (fp ==" not in src
    assert "double t_ij = 0.0;" in src and "s_val[0] = t_ij;" in src
    if factor is None:
        assert "#pragma omp simd reduction(+:t_ij)" in src
    assert "reads no row, so no row pointer walks" in next(st for st in k.trace.steps if st.stage == "lower").note
    # a body that reads the row keeps the walk
    x = rng.random(9)
    k = check("s[] = A[i, j] * x[i]", s, A=A, x=x)
    assert "the row of position" in k.c_source


@pytest.mark.parametrize("fmt", [csr, dcsr, csc])
def test_a_reduction_of_every_entry_runs_over_the_positions_by_itself(fmt):
    """No schedule given: a scalar reduction of every entry of one compressed matrix whose fill is
    the identity gets fuse + pos automatically (noted in its trace steps), one flat loop."""
    rng = np.random.default_rng(11)
    A = Tensor.from_numpy(rand((7, 5), 0.4, rng, empty=(0, 3)), fmt(), name="A")
    k = check("s[] = A[i, j] * A[i, j]", checked=True, A=A)
    steps = [st for st in k.trace.steps if st.stage.startswith("schedule:")]
    assert [st.stage for st in steps] == ["schedule:fuse", "schedule:pos"]
    assert all(st.note.startswith("automatic, as the loops read every entry of A and no row") for st in steps)
    assert "for (int64_t pA = A1_pos[" in k.c_source and "; pA < A1_pos[" in k.c_source
    assert k.c_source.count("for (") == 1


@pytest.mark.parametrize("prog, fmt, schedule", [
    ("s[] = max[i, j](A[i, j])", csr(), None),          # the fill 0 is not max's identity: folded after the loop
    ("s[] = prod[i, j](A[i, j])", csr(), None),         # ... nor prod's, and prod cannot fold it: every coordinate
    ("s[] = A[i, j] * x[i]", csr(), None),               # reads the row
    ("y[i] = A[i, j]", csr(), None),                     # not a scalar
    ("s[] = A[i, j]", Format(SparseList(SparseList(Element(0.0)))), None),   # DCSR-like without Dense: fused
    ("s[] = A[i, j]", csr(), Schedule().parallelize("i")),   # the user's schedule stands
])
def test_when_the_flat_loop_is_automatic(prog, fmt, schedule):
    rng = np.random.default_rng(12)
    A = Tensor.from_numpy(rand((6, 5), 0.4, rng), fmt, name="A")
    tensors = {"A": A, **({"x": rng.random(6)} if "x" in prog else {})}
    try:
        k = check(prog, schedule, **tensors)
    except StrategyError as e:   # the user's schedule may not apply; then nothing is automatic either
        assert "automatic" not in str(e)
        return
    automatic = any("automatic" in st.note for st in k.trace.steps if st.stage.startswith("schedule:"))
    assert automatic == (prog in ("s[] = A[i, j]", "s[] = max[i, j](A[i, j])") and schedule is None)


@pytest.mark.parametrize("factor", FACTORS)
def test_split_down_dense_add_e15(factor):
    rng = np.random.default_rng(0)
    b, c = rng.random(37), rng.random(37)
    k = check("a[i] = b[i] + c[i]", Schedule().split("i", "i0", "i1", factor), b=b, c=c)
    # the tail guard is the inner loop's bound, so the block is a plain loop (in SIMD lanes)
    assert f"int64_t i1_stop = b0_size - i0 * {factor} < {factor} ? b0_size - i0 * {factor} : {factor};" \
        in k.c_source or f"int64_t i1_stop = c0_size - i0 * {factor}" in k.c_source
    assert "i1 < i1_stop" in k.c_source and "break;" not in k.c_source
    assert "#pragma omp simd" in k.c_source


@pytest.mark.parametrize("factor", FACTORS)
def test_divide_spmv_has_the_tail_guard_only(factor):
    rng = np.random.default_rng(1)
    A, x = Tensor.from_numpy(rand((11, 7), 0.3, rng, empty=(2,)), csr(), name="A"), rng.random(7)
    k = check("y[i] = A[i, j] * x[j]", Schedule().split("i", "i0", "i1", factor, "up"), A=A, x=x)
    assert f"int64_t i_blocks = {factor} < A0_size ? {factor} : A0_size;" in k.c_source
    assert "i0 < i_blocks" in k.c_source
    # i = i0 * i_block + i1 with i1 < i_block never reaches the next block: only the end is tested
    assert "if (i >= A0_size)" in k.c_source and "(i0 + 1) * i_block" not in k.c_source


@pytest.mark.parametrize("factor", [1, 2, 5])
def test_pos_and_split_inner_positions(factor):
    rng = np.random.default_rng(2)
    A, x = Tensor.from_numpy(rand((8, 10), 0.4, rng, empty=(3,)), csr(), name="A"), rng.random(10)
    k = check("y[i] = A[i, j] * x[j]", Schedule().pos("j", "jp", "A").split("jp", "j0", "j1", factor), A=A, x=x)
    assert "int64_t jp_start = A1_pos[i];" in k.c_source     # the row's first position, read once
    assert f"int64_t j1_stop = A1_pos[i + 1] - jp_start - j0 * {factor}" in k.c_source


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
    # its comment names i1 only to say that the loop needs no such variable
    assert "so i1 = i - i0 * " in k.c_source and "needs no variable" in k.c_source and "int64_t i1" not in k.c_source
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
    # (a split of a split of a dense loop or a pos loop runs: test_schedule_compose.py)
    ("a[i] = b[i] + c[i]", {"b": sparse_vector(), "c": sparse_vector(), "A": None, "x": None},
     Schedule().split("i", "i0", "i1", 4).split("i0", "i00", "i01", 2),
     r"split\(i0, i00, i01, 2, down\) does not apply: i0 is a loop of split\(i, i0, i1, 4, down\), a split of the loop "
     r"over i, which iterates b's level 0 \(SparseList\) and c's level 0 \(SparseList\): its blocks run in the one "
     r"while loop that merges them"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("j", "j0", "j1", 4).parallelize("j0"), "outermost"),
    # (a block on its own thread binary-searches its first position: a band's has no crd array to search)
    ("a[i] = b[i] + c[i]", {"b": parse_format("SparseBand(Element(0.0))"), "c": sparse_vector(), "A": None, "x": None},
     Schedule().split("i", "i0", "i1", 4).parallelize("i0"),
     r"parallelize\(i0\) does not apply: each block of split\(i, i0, i1, 4, down\) on its own thread would find its "
     r"first position in b's level 0 \(SparseBand\), which has no search by coordinate"),
    ("y[i] = A[i, j] * x[j] + d[i]", {"d": dense(1)}, Schedule().fuse("i", "j", "f"), "not directly nested"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().fuse("j", "i", "f"), "i is not directly nested in j"),
    ("C[i, j] = A[i, j] * B[i, j]", {"B": dense(2), "C": csr(), "x": None}, Schedule().fuse("i", "j", "f"),
     "needs a dense output"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().pos("i", "ip", "x"), "x is not indexed by i"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().pos("j", "jp", "x"), "Dense level"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().pos("j", "jp", "Z"), "Z is not an input"),
    ("y[i] = A[i, j] * x[j]", {"x": sparse_vector()}, Schedule().pos("j", "jp", "A"), "also iterates x"),
    ("y[i] = A[i, j] * x[j]", {"A": Format(SparseHash(SparseList(Element(0.0))))},
     Schedule().fuse("i", "j", "f").pos("f", "fp", "A"), "Dense \\(CSR\\) or SparseList \\(DCSR\\) parent level"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().fuse("i", "j", "f").pos("f", "fp", "A").parallelize("fp"),
     "only the outer loop of a split of it runs on threads"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().fuse("i", "j", "f").pos("f", "fp", "A").parallelize("i"),
     "split its loop and parallelize the outer block loop"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "a", "b", 4)
     .parallelize("a"), "two threads would add into the same element of y .*or make each update atomic: "
     r"parallelize\(a, races='atomics'\)"),
    ("y[i] = A[i, j] * x[j]", {"A": dcsr()}, Schedule().fuse("i", "j", "f").pos("f", "fp", "A")
     .split("fp", "a", "b", 4).parallelize("a"), "two threads would add into the same element of y"),
    ("C[i, j] = A[i, j] * B[i, j]", {"B": dense(2), "C": dense(2).__class__(dense(2).root, (1, 0)), "x": None},
     Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "a", "b", 4).parallelize("a"),
     "does not index the output C's outer mode"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().pos("j", "jp", "A").split("jp", "a", "b", 4).parallelize("a"),
     "only the outermost loop can be parallelized"),
    ("y[i] = A[i, j] * x[j] * b[i]", {"A": dcsr(), "b": sparse_vector()},
     Schedule().fuse("i", "j", "f").pos("f", "fp", "A"), "the compressed row level of the tensor"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("i", "i0", "i1", 4).parallelize("i"), "parallelize i0 instead"),
    ("y[i] = A[i, j] * x[j]", {}, Schedule().split("i", "i0", "i1", 4).reorder("j", "i"),
     r"reorder\(j, i\) does not apply: i is iterated through split\(i, i0, i1, 4, down\); name the variables that "
     r"run as loops \(j, i0, i1\)"),
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


# -- splits relative to a tensor's nonzeros, fused positions over a compressed parent, parallel blocks

def openmp():
    return build.openmp_support() is None


@pytest.mark.parametrize("direction", ["down", "up"])
@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize("parallel", [False, True])
def test_pos_split_of_the_row_level(direction, factor, parallel):
    # pos(i, ip, A) over DCSR's row level: blocks of equally many non-empty rows (Fig. 3-17b);
    # every position is its own row, so the blocks may run on threads
    rng = np.random.default_rng(factor)
    a = rand((17, 9), 0.25, rng, empty=(0, 3, 4, 16))
    A, x = Tensor.from_numpy(a, dcsr(), name="A"), rng.random(9)
    s = Schedule().pos("i", "ip", "A").split("ip", "p0", "p1", factor, direction)
    if parallel:
        s = s.parallelize("p0")
    k = check("y[i] = A[i, j] * x[j]", s, A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), a @ x)
    assert "int64_t i = A0_idx[ip];" in k.c_source
    assert ("#pragma omp parallel for" in k.c_source) == parallel


def test_pos_split_of_a_sparse_vector_into_a_dense_output():
    rng = np.random.default_rng(4)
    b, c = rand(30, 0.3, rng), rng.random(30)
    B = Tensor.from_numpy(b, sparse_vector(), name="b")
    check("a[i] = b[i] * c[i]", Schedule().pos("i", "ip", "b").split("ip", "p0", "p1", 4).parallelize("p0"),
          b=B, c=c)


@pytest.mark.parametrize("direction", ["down", "up"])
@pytest.mark.parametrize("factor", FACTORS + [None])
def test_fused_positions_over_a_compressed_parent(direction, factor):
    # DCSR: the row pointer moves over A's row positions, i = A0_idx[pA0] (taco keeps i_pos)
    rng = np.random.default_rng(7 if factor is None else factor)
    a = rand((13, 9), 0.3, rng, empty=(0, 5, 6, 12))
    A, x = Tensor.from_numpy(a, dcsr(), name="A"), rng.random(9)
    s = Schedule().fuse("i", "j", "f").pos("f", "fp", "A")
    if factor is not None:
        s = s.split("fp", "p0", "p1", factor, direction)
    k = check("y[i] = A[i, j] * x[j]", s, A=A, x=x)
    src = k.c_source
    assert "int64_t pA0 = A0_pos[0];" in src and "while (fp == A1_pos[pA0 + 1])" in src
    assert "int64_t i = A0_idx[pA0];" in src
    assert "the row pointer pA0 walks A's row positions" in k.trace.find("lower")[0].note
    # E10's traversal on E2 stored as DCSR
    E = Tensor.from_numpy(E2, dcsr(), name="A")
    np.testing.assert_allclose(k(A=E, x=np.arange(1.0, 6.0)).to_numpy(), [0, 25, 0, 32])


def test_fused_positions_of_an_empty_dcsr_matrix():
    A = Tensor.from_numpy(np.zeros((4, 3)), dcsr(), name="A")
    check("y[i] = A[i, j] * x[j]", Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "a", "b", 2),
          A=A, x=np.ones(3))


@pytest.mark.parametrize("fmt", [csr, dcsr])
@pytest.mark.parametrize("direction", ["down", "up"])
@pytest.mark.parametrize("factor", FACTORS)
def test_parallel_blocks_of_fused_positions(fmt, direction, factor):
    # each position writes its own C[i, j]: the blocks run on threads, each finding its first
    # row by binary search (a block may start inside a row or after empty rows)
    rng = np.random.default_rng(30 + factor)
    a = rand((11, 8), 0.35, rng, empty=(0, 4, 5, 10))
    A = Tensor.from_numpy(a, fmt(), name="A")
    B = Tensor.from_numpy(rng.random((11, 8)), dense(2), name="B")
    s = Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "p0", "p1", factor, direction)
    k = check("C[i, j] = A[i, j] * B[i, j]", s.parallelize("p0"), out=dense(2), A=A, B=B)
    src = k.c_source
    assert "binary search for the row holding position fp_first" in src
    assert "the blocks of p0 run on threads; each finds the row of its first position" in k.trace.find("lower")[0].note
    assert src.index("#pragma omp parallel for") < src.index("for (int64_t p0")
    row = "i" if fmt is csr else "pA0"
    # once per block, one call of the search helper (issue 31: it was an inline bisection)
    assert src.index(f"int64_t {row} = lower_bound_int64(A1_pos, ") < src.index("for (int64_t p1")
    assert f"{row}_hi" not in src
    if openmp():
        np.testing.assert_allclose(k(A=A, B=B).to_numpy(), a * B.to_numpy())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 9), st.integers(1, 7), st.floats(0.0, 1.0), st.integers(1, 40),
       st.sampled_from(["down", "up"]), st.booleans(), st.integers(0, 2 ** 16))
def test_property_fused_position_blocks(m, n, density, factor, direction, compressed, seed):
    rng = np.random.default_rng(seed)
    a = rand((m, n), density, rng)
    A = Tensor.from_numpy(a, dcsr() if compressed else csr(), name="A")
    B = Tensor.from_numpy(rng.random((m, n)), dense(2), name="B")
    s = Schedule().fuse("i", "j", "f").pos("f", "fp", "A").split("fp", "p0", "p1", factor, direction)
    check("C[i, j] = A[i, j] * B[i, j]", s.parallelize("p0"), out=dense(2), A=A, B=B)
    x = rng.random(n)
    check("y[i] = A[i, j] * x[j]", s, A=A, x=x)


@pytest.mark.parametrize("factor", [1, 3, 16])
def test_parallel_blocks_of_a_fused_dense_loop(factor):
    # fuse without pos: i = f / N, j = f % N for every f, nothing carried; C[i, j] is per position
    rng = np.random.default_rng(factor)
    B, D = rng.random((5, 7)), rng.random((5, 7))
    s = Schedule().fuse("i", "j", "f").split("f", "f0", "f1", factor).parallelize("f0")
    k = check("C[i, j] = B[i, j] + D[i, j]", s, out=dense(2), B=Tensor.from_numpy(B, dense(2), name="B"),
              D=Tensor.from_numpy(D, dense(2), name="D"))
    assert "#pragma omp parallel for" in k.c_source
    with pytest.raises(StrategyError, match="two threads would add into the same element of y"):
        lower("y[i] = B[i, j] * x[j]", B=dense(2), x=dense(1), options={"schedule": s})


@pytest.mark.parametrize("prog", ["s = min[i, j](A[i, j])", "y[i] = min[j](A[i, j])"])
def test_pos_of_a_loop_that_visits_every_coordinate_says_why(prog):
    # A is the loop's only operand, and it said "A is not iterated there": the fill 0 is not
    # min's identity, so the rows A does not store still count
    with pytest.raises(StrategyError, match=r"pos\(i, ip, A\) does not apply: the loop over i must follow A's "
                       r"positions alone, but it visits every coordinate of i \(a union with the dense range\): "
                       r"where A stores nothing, the value still counts"):
        lower(prog, options={"schedule": Schedule().pos("i", "ip", "A")}, A=dcsr())
    lower(prog, options={"schedule": Schedule().pos("i", "ip", "A")}, A=dcsr(fill=np.inf))   # min's identity


@pytest.mark.parametrize("direction, factor", [("down", 2 ** 61 + 1), ("down", 2 ** 62), ("up", 3), ("up", 4)])
def test_split_of_an_extent_near_2_63_runs_every_block(direction, factor):
    # (n + factor - 1) / factor overflowed to a negative block count: no block ran, the result was
    # empty; (i0 + 1) * factor, the block's end, overflowed too (a few blocks each: quick to run)
    n = 2 ** 63 - 1000
    x = Tensor(SparseList(Element(0.0, vals=np.array([2.0, 3.0])), size=n, pos=np.array([0, 2]),
                          idx=np.array([0, n - 1])), name="x")
    k = lower("y[i] = x[i] * 2", x=x, y=sparse_vector(),
              options={"schedule": Schedule().split("i", "i0", "i1", factor, direction)})
    y = k(x=x)
    assert y.levels[0].idx.tolist() == [0, n - 1] and y.vals.tolist() == [4.0, 6.0]


def test_split_block_count_and_end_cannot_overflow_in_the_c():
    x = Tensor.from_numpy(np.array([1.0, 0, 2, 0, 0, 3, 0]), sparse_vector(), name="x")
    k = lower("y[i] = x[i] * 2", x=x, y=sparse_vector(), options={"schedule": Schedule().split("i", "i0", "i1", 4)})
    assert "i0 < x0_size / 4 + (int64_t)(x0_size % 4 != 0); i0++" in k.c_source
    assert "int64_t i_hi = i0 * 4 < x0_size - 4 ? i0 * 4 + 4 : x0_size;" in k.c_source
    np.testing.assert_array_equal(k(x=x).to_numpy(), [2.0, 0, 4, 0, 0, 6, 0])


@pytest.mark.parametrize("prog, want", [("z[i] = x[i] * 2", {0: 4.0, 2 ** 40 - 1: 6.0}),
                                        ("z[i] = x[i] + y[i]", {0: 3.0, 5: 1.0, 2 ** 40 - 1: 3.0}),
                                        ("z[i] = x[i] * y[i]", {0: 2.0})])
def test_a_split_of_a_hypersparse_loop_skips_the_empty_blocks(prog, want):
    # 2^38 blocks of 4, 2 or 3 of them with an entry: each empty block was visited (at 2^62, a hang)
    x, y = hypersparse_pair()
    tensors = {"x": x, "y": y} if "y[i]" in prog else {"x": x}
    k = lower(prog, z=sparse_vector(), options={"schedule": Schedule().split("i", "i0", "i1", 4)}, **tensors)
    assert "i0 = i_next / 4 - 1;" in k.c_source
    for run in (k, k.interpret):
        z = run(**tensors)
        assert dict(zip(z.levels[0].idx.tolist(), z.vals.tolist())) == want


@pytest.mark.parametrize("prog, out", [("y[i] = A[i, j] * x[j]", dense(1)), ("C[i, j] = A[i, j] * 2", csr())])
@pytest.mark.parametrize("n", [0, 2])
def test_split_up_runs_no_more_blocks_than_elements(prog, out, n):
    # split up into 2^62 blocks of a 2-row matrix ran 2^62 empty blocks (a hang); it runs 2 of 1 row
    a = np.array([[1.0, 0, 2], [0, 3, 0]])[:n]
    A, x = Tensor.from_numpy(a, csr(), name="A"), np.array([1.0, 2.0, 3.0])
    tensors = {"A": A, "x": x} if "x[j]" in prog else {"A": A}
    want = a @ x if "x[j]" in prog else a * 2
    k = lower(prog, **{prog[0]: out}, **tensors,
              options={"schedule": Schedule().split("i", "i0", "i1", 2 ** 62, "up")})
    assert "int64_t i_blocks = INT64_C(4611686018427387904) < A0_size ? INT64_C(4611686018427387904) : A0_size;" \
        in k.c_source
    for run in (k, k.interpret):
        np.testing.assert_array_equal(run(**tensors).to_numpy(), want)


def test_split_up_of_a_sparse_loop_runs_no_more_blocks_than_elements():
    x = Tensor.from_numpy(np.array([1.0, 0, 2, 0, 0, 3, 0]), sparse_vector(), name="x")
    k = lower("y[i] = x[i] * 2", x=x, y=sparse_vector(),
              options={"schedule": Schedule().split("i", "i0", "i1", 2 ** 62, "up")})
    assert "int64_t i_blocks = INT64_C(4611686018427387904) < x0_size ? INT64_C(4611686018427387904) : x0_size;" \
        in k.c_source
    for run in (k, k.interpret):
        np.testing.assert_array_equal(run(x=x).to_numpy(), [2.0, 0, 4, 0, 0, 6, 0])
