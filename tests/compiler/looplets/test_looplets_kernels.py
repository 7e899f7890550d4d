"""Kernels lowered by the looplet strategy, each checked against a dense numpy oracle."""

import numpy as np
import pytest

from compiler import Tensor, Trace, lower
from compiler.format import csr
from compiler.levels import Dense, Element, Pattern, RunList, SparseBand, SparseBlockList, SparseList
from compiler.looplets import compile_program, loop_program
from compiler.reference import evaluate

rng = np.random.default_rng(7)


def sparse(shape, density, rng=rng):
    return rng.random(shape) * (rng.random(shape) < density)


@loop_program
def spmv(y, A, x):
    y[...] = 0
    for i in _:
        for j in _:
            y[i] += A[i, j] * x[j]


@loop_program
def spmv_col(y, A, x):
    for j in _:
        for i in _:
            y[i] += A[i, j] * x[j]


def banded(n, b):
    M = np.zeros((n, n))
    for i in range(n):
        for j in range(max(0, i - b), min(n, i + b + 1)):
            M[i, j] = rng.random() + 0.5
    return M


def blocky(n):
    M = np.zeros((n, n))
    for i in range(n):
        for start in rng.choice(n, 3, replace=False):
            M[i, start:start + rng.integers(1, 5)] = rng.random() + 0.1
    return M


@pytest.mark.parametrize("level", [SparseList, SparseBand, SparseBlockList, Dense])
@pytest.mark.parametrize("M", [banded(9, 2), blocky(12), sparse((6, 11), 0.3), np.zeros((3, 4))])
def test_spmv_row_major(level, M):
    A = Tensor.from_numpy(M, Dense(level(Element(0.0))))
    x = Tensor.from_numpy(rng.random(M.shape[1]), "dense")
    k = compile_program(spmv, y="dense", A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), M @ x.to_numpy())


def test_a_program_lowers_itself_as_compile_program_lowers_it():
    """``LoopProgram.lower`` calls the compiler that ``compiler.looplets.compile`` installs (the
    language does not import the compiler back): the same C and the same result."""
    M = sparse((6, 7), 0.4)
    A = Tensor.from_numpy(M, "csr")
    x = Tensor.from_numpy(rng.random(7), "dense")
    k = spmv.lower(y="dense", A=A, x=x)
    assert k.c_source == compile_program(spmv, y="dense", A=A, x=x).c_source
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), M @ x.to_numpy())


@pytest.mark.parametrize("level", [SparseList, SparseBand, SparseBlockList])
def test_spmv_column_major(level):
    M = sparse((8, 5), 0.4)
    A = Tensor.from_numpy(M, Dense(level(Element(0.0))), ) .asformat(
        __import__("compiler").Format(Dense(level(Element(0.0))), (1, 0)))
    x = Tensor.from_numpy(rng.random(5), "dense")
    k = compile_program(spmv_col, y="dense", A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), M @ x.to_numpy())


def test_spmv_pattern():
    M = (rng.random((7, 9)) < 0.3)
    A = Tensor.from_numpy(M, Dense(SparseList(Pattern())))

    @loop_program
    def count(y, A, x):
        for i in _:
            for j in _:
                y[i] += ifelse(A[i, j], x[j], 0.0)
    x = Tensor.from_numpy(rng.random(9), "dense")
    k = compile_program(count, y="dense", A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), M.astype(float) @ x.to_numpy())


def test_dot_list_band_locates_the_band():
    """The Looplets paper's Figure 1: C = 3.0*3.7 + 2.7*4.7, band located, list searched."""
    @loop_program
    def dot(C, A, B):
        for i in _:
            C += A[i] * B[i]
    A = Tensor.from_numpy(np.array([0, 1.9, 0, 3.0, 2.7, 0, 0, 0, 5.5, 0, 0]), SparseList(Element(0.0)))
    B = Tensor.from_numpy(np.array([0, 0, 0, 3.7, 4.7, 9.2, 1.5, 8.7, 0, 0, 0]), SparseBand(Element(0.0)))
    k = compile_program(dot, C=Element(0.0), A=A, B=B)
    assert k(A=A, B=B) == pytest.approx(23.79)
    src = k.c_source
    # one while loop over the list's entries in the band (plus a galloping search for its first
    # entry there and one for its last: the single-stepper fast path; each gallop is one call of the
    # helper, whose two loops are defined once before the kernel), none over the band
    kernel = src[src.index("\nint dot("):]
    assert kernel.count("while (qA < qA_end)") == 1 and kernel.count("while") == 1 and "for (" not in src
    assert kernel.count(" = seek_int64(A0_idx, qA, qA_stop, ") == 2 and src.count("step = step * 2") == 1
    assert "B_val[qB - loB + " in src  # random access into the band


def test_upper_triangle_sum():
    M = sparse((6, 9), 0.5)

    @loop_program
    def tri(s, A):
        s[...] = 0.0
        for j in _:
            for i in _:
                if i <= j:
                    s += A[i, j]
    A = Tensor.from_numpy(M, "csc")
    k = compile_program(tri, s=Element(0.0), A=A)
    assert k(A=A) == pytest.approx(np.triu(M).sum())
    # the mask restricts iteration: no loop runs over the lower triangle
    stages = [s for s in k.trace.stages()]
    paper = ["dimensionalize", "lower:Declare", "unfurl", "lower:Lookup", "unfurl", "lower:Thunk",
             "lower:Sequence", "lower:Run", "simplify", "lower:Stepper", "lower:Spike", "simplify",
             "lower:Freeze"]
    it = iter(stages)
    assert all(any(s == p for s in it) for p in paper), stages


@pytest.mark.parametrize("op,fill", [("+", 0.0), ("*", 1.0), ("max", 0.0)])
def test_elementwise_dense_out(op, fill):
    a, b = sparse((10,), 0.4), sparse((10,), 0.4)
    A = Tensor.from_numpy(a, SparseList(Element(0.0)))
    B = Tensor.from_numpy(b, Dense(Element(0.0)))
    src = {"+": "C[i] = A[i] + B[i]", "*": "C[i] = A[i] * B[i]", "max": "C[i] = max(A[i], B[i])"}[op]
    prog = loop_program(source=f"def k(C, A, B):\n    for i in _:\n        {src}\n")
    k = compile_program(prog, C="dense", A=A, B=B)
    ref = {"+": a + b, "*": a * b, "max": np.maximum(a, b)}[op]
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), ref)


def test_sparse_output_intersection():
    a, b = sparse((20,), 0.5), sparse((20,), 0.5)
    A = Tensor.from_numpy(a, SparseList(Element(0.0)))
    B = Tensor.from_numpy(b, SparseList(Element(0.0)))
    prog = loop_program(source="def k(C, A, B):\n    for i in _:\n        C[i] = A[i] * B[i]\n")
    k = compile_program(prog, C=SparseList(Element(0.0)), A=A, B=B)
    out = k(A=A, B=B)
    np.testing.assert_allclose(out.to_numpy(), a * b)
    assert out.nnz == np.count_nonzero(a * b)


def test_sparse_matrix_output_csr():
    a, b = sparse((5, 8), 0.4), sparse((5, 8), 0.4)
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    k = compile_program("C[i, j] = A[i, j] + B[i, j]", C="csr", A=A, B=B)
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), a + b)


def test_sum_with_fill():
    a = np.where(rng.random(12) < 0.5, 2.0, rng.random(12))
    A = Tensor.from_numpy(a, SparseList(Element(2.0)), fill=2.0)
    k = compile_program("s[] = A[i]", s=Element(0.0), A=A)
    assert k(A=A) == pytest.approx(a.sum())


@pytest.mark.parametrize("expr", ["y[i] = A[i, j] * x[j]", "C[i, j] = A[i, j] * B[i, j]",
                                  "s[] = A[i, j]", "y[i] = A[i, j]"])
def test_index_notation_against_reference(expr):
    a, b = sparse((4, 6), 0.5), sparse((4, 6), 0.5)
    x = rng.random(6)
    tensors = {"A": Tensor.from_numpy(a, "csr"), "B": Tensor.from_numpy(b, "csr"),
               "x": Tensor.from_numpy(x, "dense")}
    from compiler.notation import parse
    stmt = parse(expr)
    names = [n for n in ("A", "B", "x") if f"{n}[" in expr]
    out = stmt.lhs.tensor
    fmt = Element(0.0) if out == "s" else "dense"
    k = compile_program(expr, **{out: fmt}, **{n: tensors[n] for n in names})
    got = k(**{n: tensors[n] for n in names})
    ref, _ = evaluate(expr, **{n: tensors[n].to_numpy() for n in names})
    got = got if out == "s" else got.to_numpy()
    np.testing.assert_allclose(got, ref)


def test_convolution_with_offsets_and_padding():
    a = sparse((15,), 0.4)
    f = np.array([1.0, -2.0, 0.5])

    @loop_program
    def conv(B, A, F):
        for i in _:
            for j in _:
                B[i] += coalesce(A[~(i + j - 1)], 0.0) * F[j]
    A = Tensor.from_numpy(a, SparseList(Element(0.0)))
    F = Tensor.from_numpy(f, "dense")
    B = Tensor.from_numpy(np.zeros(15), "dense")
    k = compile_program(conv, B=B, A=A, F=F)
    pad = np.concatenate([[0.0], a, [0.0]])
    ref = np.array([sum(pad[i + j] * f[j] for j in range(3)) for i in range(15)])
    np.testing.assert_allclose(k(A=A, F=F).to_numpy(), ref)


def test_concatenation_through_offsets():
    a, b = sparse((5,), 0.6), sparse((4,), 0.6)
    A = Tensor.from_numpy(a, SparseList(Element(0.0)))
    B = Tensor.from_numpy(b, SparseList(Element(0.0)))
    C = Tensor.from_numpy(np.zeros(9), "dense")

    @loop_program
    def cat(C, A, B):
        for i in _:
            C[i] = coalesce(A[~i], B[~(i - 5)])
    k = compile_program(cat, C=C, A=A, B=B)
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), np.concatenate([a, b]))


def test_user_function_reduction():
    from compiler.user_functions import user_function
    absmax = user_function("absmax", lambda x, y: max(abs(x), abs(y)),
                           "return fabs(x) > fabs(y) ? fabs(x) : fabs(y);", identity=0.0,
                           commutative=True, associative=True)
    a = sparse((4, 6), 0.5) - 0.3

    @loop_program
    def k(y, A):
        for i in _:
            for j in _:
                y[i] <<= absmax, A[i, j]
    A = Tensor.from_numpy(a, "csr")
    kern = compile_program(k, y="dense", A=A)
    np.testing.assert_allclose(kern(A=A).to_numpy(), np.abs(a).max(axis=1))


def test_let_and_several_statements():
    a = sparse((5, 5), 0.5)

    @loop_program
    def two(y, A, x):
        for i in _:
            xi = x[i] * 2.0
            for j in _:
                y[j] += A[i, j] * xi
                y[j] += 1.0
    A = Tensor.from_numpy(a, "csr")
    x = Tensor.from_numpy(rng.random(5), "dense")
    k = compile_program(two, y="dense", A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), 2 * x.to_numpy() @ a + 5.0)


@loop_program
def repeated_reads(y, A, x):
    y[...] = 0
    for i in _:
        for j in _:
            y[i] += A[i, j] * A[i, j] * x[j] + A[i, j]


@pytest.mark.parametrize("fmt", ["csr", Dense(SparseBand(Element(0.0))), Dense(RunList(Element(0.0))),
                                 Dense(SparseBlockList(Element(0.0)))], ids=str)
def test_identical_reads_share_one_walk_of_the_fiber(fmt):
    """`A[i, j]` three times is unfurled once: one set of cursors over each row."""
    a = np.array([[0, 2.0, 2.0, 0, 0], [0, 0, 0, 0, 0], [1.0, 1.0, 0, 3.0, 3.0]])
    A = Tensor.from_numpy(a, fmt)
    x = np.arange(5.0)
    trace = Trace()
    k = compile_program(repeated_reads, y="dense", A=A, x=x, trace=trace, checked=True)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), (a * a) @ x + a.sum(axis=1))
    nests = [a for s in trace.steps if s.stage == "unfurl" for a in s.artifacts if a.name.startswith("A")]
    assert len(nests) == 2, [a.name for a in nests]  # the rows (on i) and one row's entries (on j)
    assert k.c_source.count("A1_pos[i]") <= 1 and k.c_source.count("A1_ofs[i]") <= 1


@pytest.mark.parametrize("prog", ["y[i] min= A[i, j]", "y[i] *= A[i, j]", "y[i] max= A[i, j]", "y[i] += A[i, j]"])
@pytest.mark.parametrize("a", [np.array([[3.0, 5.0, 1.0], [2.0, 4.0, 6.0]]), -np.ones((2, 3)), np.zeros((2, 0)),
                               np.array([[3, 0, 1], [0, 0, 0]], np.int64)], ids=["pos", "neg", "empty", "int"])
def test_an_update_of_an_output_not_given_starts_at_the_identity(prog, a):
    # it started at 0: y[i] min= A[i, j] of positive rows gave [0, 0], and max= of -1s gave 0
    from compiler import evaluate
    A = Tensor.from_numpy(a, csr(dtype=a.dtype.name, fill=np.zeros((), a.dtype).item()), name="A")
    want, _ = evaluate(prog, A=A)
    got = lower(prog, strategy="looplets", A=A)(A=A).to_numpy()
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def test_the_output_not_given_takes_the_result_dtype():
    # an int64 result was stored in float64: 2^53 + 1 came back as 2^53
    a = np.array([[2 ** 53 + 1, 0], [0, 2 ** 62 + 1]], np.int64)
    A = Tensor.from_numpy(a, csr(dtype="int64", fill=0), name="A")
    got = lower("y[i] = A[i, j]", strategy="looplets", A=A)(A=A).to_numpy()
    assert got.dtype == np.int64 and got.tolist() == [2 ** 53 + 1, 2 ** 62 + 1]
    s = lower("s[] = A[i, j]", strategy="looplets", A=A)(A=A).to_numpy()
    assert s.dtype == np.int64 and int(s) == 2 ** 53 + 2 ** 62 + 2


def test_a_zero_d_output_is_its_value_on_every_call():
    """A loop program's 0-d output comes back as its value (``float(k(A=A))``), on the fast call
    path too: the second call of the same tensors returned the runtime's 0-d Tensor."""
    @loop_program
    def total(s, A):
        s[...] = 0.0
        for i in _:
            for j in _:
                s += A[i, j]
    M = sparse((4, 5), 0.5)
    A = Tensor.from_numpy(M, "csr")
    k = compile_program(total, s=Element(0.0), A=A)
    for _ in range(3):
        got = k(A=A)
        assert not isinstance(got, Tensor) and got == pytest.approx(M.sum())
