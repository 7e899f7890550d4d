"""Wrappers and masks of the looplet strategy (issue #4), each against a dense numpy oracle:
windows (``A[lo:hi][i]``, ``A[window(i, lo, hi)]``), offsets, permissive padding,
swizzles (lazy transposes), the triangular and diagonal masks; their Finch-like
printing, the wrapperize step of the trace, and errors pointing at the user's line."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseCOO,
                             SparseList, SparseRunList)
from compiler.looplets import ProgramError, compile_program, loop_program
from compiler.format import Format
from compiler.looplets.gallery import concat

VECTOR_FORMATS = {
    "Dense": lambda: Dense(Element(0.0)),
    "SparseList": lambda: SparseList(Element(0.0)),
    "RunList": lambda: RunList(Element(0.0)),
    "SparseRunList": lambda: SparseRunList(Element(0.0)),
    "SparseBand": lambda: SparseBand(Element(0.0)),
    "SparseBlockList": lambda: SparseBlockList(Element(0.0)),
    "SparseCOO": lambda: SparseCOO(1, Element(0.0)),
    "SparseByteMap": lambda: SparseByteMap(Element(0.0)),
}
MATRIX_FORMATS = ["dense", "csr", "dcsr", Dense(RunList(Element(0.0))), Dense(SparseBand(Element(0.0)))]


def vector(n, density, seed, fmt="SparseList"):
    """A random vector storable in ``fmt`` (a band is one contiguous stored region; runs repeat)."""
    rng = np.random.default_rng(seed)
    v = np.where(rng.random(n) < density, rng.integers(1, 5, n).astype(float), 0.0)
    if fmt == "SparseBand":
        lo = int(rng.integers(0, n + 1))
        hi = int(rng.integers(lo, n + 1))
        v = np.zeros(n)
        v[lo:hi] = rng.integers(1, 5, hi - lo)
    if fmt in ("RunList", "SparseRunList") and n:
        v = np.repeat(v[: max(1, n // 3) + 1], 3)[:n]
    return v


def matrix(shape, density, seed, fmt="csr"):
    rng = np.random.default_rng(seed)
    m = np.where(rng.random(shape) < density, rng.random(shape) + 0.5, 0.0)
    if isinstance(fmt, Dense) and fmt.child.name == "SparseBand":  # one band per row
        m = np.zeros(shape)
        for r in range(shape[0]):
            lo = int(rng.integers(0, shape[1] + 1))
            m[r, lo:int(rng.integers(lo, shape[1] + 1))] = rng.random() + 0.5
    return m


def vec_tensor(v, fmt):
    return Tensor.from_numpy(v, VECTOR_FORMATS[fmt]())


# --------------------------------------------------------------------------- window


@loop_program
def read_slice(y, A):
    for i in _:
        y[i] = A[3:9][i]


@loop_program
def sum_window(s, A):
    for i in _:
        s += A[window(i, 2, len(A) - 1)]


@pytest.mark.parametrize("fmt", list(VECTOR_FORMATS))
def test_window_reads_match_numpy_slices_in_every_format(fmt):
    a = vector(12, 0.5, 1, fmt)
    A = vec_tensor(a, fmt)
    k = compile_program(read_slice, y="dense", A=A)
    np.testing.assert_allclose(k(A=A).to_numpy(), a[3:9])
    # bounds from the tensor's size; the same kernel serves another input of that size
    k = compile_program(sum_window, s=Element(0.0), A=A)
    assert float(k(A=A)) == pytest.approx(a[2:11].sum())
    b = vector(12, 0.7, 2, fmt)
    assert float(k(A=vec_tensor(b, fmt))) == pytest.approx(b[2:11].sum())


def window_program(lo, hi):
    return loop_program(source=f"def w(y, A):\n    for i in _:\n        y[i] = A[window(i, {lo}, {hi})]\n")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(0, 14), density=st.sampled_from([0.0, 0.3, 1.0]),
       fmt=st.sampled_from(["Dense", "SparseList", "RunList", "SparseBand", "SparseCOO"]))
def test_window_against_numpy_for_any_bounds(data, n, density, fmt):
    """Empty windows, full windows and windows at either edge included."""
    lo = data.draw(st.sampled_from(sorted({0, n, n // 2, max(0, n - 1)})), label="lo")
    hi = data.draw(st.sampled_from(sorted({lo, n, min(n, lo + 1), (lo + n + 1) // 2})), label="hi")
    a = vector(n, density, n + 7, fmt)
    A = vec_tensor(a, fmt)
    k = compile_program(window_program(lo, hi), y="dense", A=A)
    got = k(A=A).to_numpy()
    assert got.shape == (hi - lo,)
    np.testing.assert_allclose(got, a[lo:hi])


@pytest.mark.parametrize("fmt", MATRIX_FORMATS, ids=str)
def test_two_dimensional_windows_and_negative_bounds(fmt):
    a = matrix((7, 9), 0.4, 3, fmt)
    A = Tensor.from_numpy(a, fmt)

    @loop_program
    def block(C, A):
        for i in _:
            for j in _:
                C[i, j] = A[1:-2, 4:][i, j]

    @loop_program
    def inner_window(y, A):
        for i in _:
            for j in _:
                y[i] += A[i, window(j, 2, 7)]

    np.testing.assert_allclose(compile_program(block, C="dense", A=A)(A=A).to_numpy(), a[1:-2, 4:])
    np.testing.assert_allclose(compile_program(inner_window, y="dense", A=A)(A=A).to_numpy(),
                               a[:, 2:7].sum(axis=1))


@pytest.mark.parametrize("fa,fb", [("SparseList", "Dense"), ("RunList", "SparseList"),
                                   ("SparseBand", "SparseCOO"), ("Dense", "Dense")])
def test_concatenation_by_windows_of_the_output(fa, fb):
    a, b = vector(6, 0.5, 4, fa), vector(5, 0.5, 5, fb)
    A, B = vec_tensor(a, fa), vec_tensor(b, fb)
    C = Tensor.from_numpy(np.zeros(11), "dense")
    k = compile_program(concat, C=C, A=A, B=B)
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), np.concatenate([a, b]))
    # each loop takes its own window's extent (sibling loops may reuse a name)
    dims = k.trace.steps[k.trace.stages().index("dimensionalize")].after
    assert "for i = 0:A0_size" in dims and "for i = 0:B0_size" in dims


@pytest.mark.parametrize("fmt", ["coo", "csr", "dcsr", "dense"])
def test_permissive_reads_of_a_matrix_see_its_last_column(fmt):
    # (before: a COO matrix's inner mode was padded at its mode 0 size, so a 2x3 COO read as
    # A[i, ~l] lost column 2, and an hstack through ~(l - 3) lost its last column)
    @loop_program
    def hstack(D, A, B):
        for i in _:
            for l in range(6):
                D[i, l] = coalesce(A[i, ~l], B[i, ~(l - 3)])
    a = np.array([[0, 1.0, 0], [2.0, 0, 3.0]])
    A, B = Tensor.from_numpy(a, fmt), Tensor.from_numpy(a * 10, fmt)
    k = compile_program(hstack, D="dense", A=A, B=B)
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(), np.hstack([a, a * 10]))


@pytest.mark.parametrize("fmt", ["Dense", "SparseList", "RunList", "SparseBand"])
def test_permissive_window_pads_outside_the_tensor(fmt):
    @loop_program
    def pad(y, A):
        for i in _:
            y[i] = coalesce(A[~window(i, -2, A.shape[0] + 1)], 0.0)

    @loop_program
    def clip(y, A):  # a permissive window inside the tensor is missing outside the window
        for i in range(8):
            y[i] = coalesce(A[~window(i, 3, 6)], -1.0)
    a = vector(9, 0.6, 6, fmt)
    A = vec_tensor(a, fmt)
    k = compile_program(pad, y="dense", A=A)
    np.testing.assert_allclose(k(A=A).to_numpy(), np.pad(a, (2, 1)))
    k = compile_program(clip, y="dense", A=A)
    np.testing.assert_allclose(k(A=A).to_numpy(), np.concatenate([a[3:6], -np.ones(5)]))


def test_window_looplets_are_shifted_and_need_no_runtime_phase_checks():
    A = vec_tensor(vector(12, 0.5, 1), "SparseList")
    k = compile_program(read_slice, y="dense", A=A)
    nests = [a.text for s in k.trace.steps if s.stage == "unfurl" for a in s.artifacts]
    assert any(t.startswith("Shift(-3)") for t in nests)
    # the loop's extent is the window's, so the window adds no phase of its own: the kernel
    # has the phases of reading A whole, only shifted
    whole = loop_program(source="def w(y, A):\n    for i in _:\n        y[i] = A[i]\n")
    plain = compile_program(whole, y="dense", A=A).c_source
    # (one test per phase: the plain kernel's first phase stops at lastA, entered when A stores an
    # entry, qA < qA_stop; the window's, shifted, tests the running position against its stop)
    assert k.c_source.count("if (i < ") == plain.count("if (i < ") + plain.count("if (qA < qA_stop)") == 2
    # the seek is shifted by 3: from the loop's start 0, a search for coordinate 3 (which a stored
    # coordinate may be below, unlike 0)
    assert "qA = seek_int64(A0_idx, qA, qA_stop, 3);" in k.c_source


@pytest.mark.parametrize("fmt", ["Dense", "SparseList", "RunList"])
def test_a_window_kernel_reused_on_other_shapes_clips_like_numpy(fmt):
    """The kernel is compiled for one shape; run on a smaller tensor, the window is clipped to
    the tensor (numpy's a[3:9]) instead of reading past its end; windows of an output
    stay inside it when the inputs grow."""
    A = vec_tensor(vector(12, 0.5, 1, fmt), fmt)
    k = compile_program(read_slice, y="dense", A=A)
    for n in (12, 7, 4, 2):
        a = vector(n, 0.6, n, fmt)
        np.testing.assert_allclose(k(A=vec_tensor(a, fmt)).to_numpy(), a[3:9])

    a, b = vector(4, 0.5, 3, fmt), vector(3, 0.5, 4, "Dense")
    k = compile_program(concat, C=Tensor.from_numpy(np.zeros(7), "dense"), A=vec_tensor(a, fmt),
                        B=vec_tensor(b, "Dense"))
    big = vector(9, 0.5, 5, fmt)
    np.testing.assert_allclose(k(A=vec_tensor(big, fmt), B=vec_tensor(b, "Dense")).to_numpy(), big[:7])


# --------------------------------------------------------------------------- offset and Toeplitz


@pytest.mark.parametrize("fmt", ["Dense", "SparseList", "RunList", "SparseBand", "SparseBlockList"])
@pytest.mark.parametrize("c", [-3, -1, 1, 4])
def test_permissive_offsets_shift_the_vector(fmt, c):
    prog = loop_program(source=f"def s(y, A):\n    for i in _:\n        y[i] = coalesce(A[~(i + {c})], 0.0)\n")
    a = vector(10, 0.5, 8, fmt)
    A = vec_tensor(a, fmt)
    y = Tensor.from_numpy(np.zeros(10), "dense")
    ref = np.array([a[i + c] if 0 <= i + c < 10 else 0.0 for i in range(10)])
    np.testing.assert_allclose(compile_program(prog, y=y, A=A)(A=A).to_numpy(), ref)


@pytest.mark.parametrize("fmt", ["Dense", "SparseList", "RunList"])
def test_toeplitz_matches_the_convolution_matrix(fmt):
    @loop_program
    def toeplitz(T, A):
        for i in _:
            for j in _:
                T[i, j] = coalesce(A[~(i + j)], 0.0)
    a = vector(7, 0.6, 9, fmt)
    A = vec_tensor(a, fmt)
    T = Tensor.from_numpy(np.zeros((5, 4)), "dense")
    ref = np.array([[a[i + j] if i + j < 7 else 0.0 for j in range(4)] for i in range(5)])
    np.testing.assert_allclose(compile_program(toeplitz, T=T, A=A)(A=A).to_numpy(), ref)


# --------------------------------------------------------------------------- swizzle


@loop_program
def spmv_t(y, A, x):
    for j in _:
        for i in _:
            y[i] += swizzle(A, 1, 0)[i, j] * x[j]


@pytest.mark.parametrize("shape,density", [((1, 1), 1.0), ((6, 9), 0.3), ((20, 7), 0.1), ((5, 5), 0.0)])
def test_swizzle_spmv_computes_a_transpose_x_from_csr(shape, density):
    a = matrix(shape, density, 10)
    A = Tensor.from_numpy(a, "csr")
    xd = np.arange(shape[0], dtype=float) + 1
    x = Tensor.from_numpy(xd, "dense")
    k = compile_program(spmv_t, y="dense", A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), a.T @ xd)
    # compiled away: the kernel is the one written with A[j, i], walking A's rows as stored
    stages = k.trace.stages()
    wrap = k.trace.steps[stages.index("wrapperize")]
    assert "swizzle(A, 1, 0)[i, j]" in wrap.before and "A[j, i]" in wrap.after
    assert "swizzle" not in wrap.after
    by_hand = loop_program(source="def spmv_t(y, A, x):\n    for j in _:\n        for i in _:\n"
                                  "            y[i] += A[j, i] * x[j]\n")
    assert k.c_source == compile_program(by_hand, y="dense", A=A, x=x).c_source


def test_discordant_swizzled_reads_are_located_and_writes_are_rejected():
    @loop_program
    def discordant(y, A, x):
        for i in _:
            for j in _:
                y[i] += swizzle(A, 1, 0)[i, j] * x[j]
    a = matrix((6, 8), 0.4, 11)
    A = Tensor.from_numpy(a, "csr")
    x = Tensor.from_numpy(np.arange(6.0), "dense")
    k = compile_program(discordant, y="dense", A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), a.T @ np.arange(6.0))

    prog = loop_program(source="def t(C, A):\n    for i in _:\n        for j in _:\n"
                               "            swizzle(C, 1, 0)[i, j] = A[i, j]\n")
    with pytest.raises(ProgramError, match="written out of order") as e:
        compile_program(prog, C="csr", A=A)
    assert "line 4 of t" in str(e.value)


@pytest.mark.parametrize("axes", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)])
def test_swizzle_is_numpy_transpose_in_three_dimensions(axes):
    rng = np.random.default_rng(12)
    a = rng.random((2, 3, 4))
    A = Tensor.from_numpy(a, "dense")
    t = a.transpose(axes)
    prog = loop_program(source=f"def p(B, A):\n    for i in _:\n        for j in _:\n            for k in _:\n"
                               f"                B[i, j, k] = swizzle(A, {', '.join(map(str, axes))})[i, j, k]\n")
    B = Tensor.from_numpy(np.zeros(t.shape), "dense")
    np.testing.assert_allclose(compile_program(prog, B=B, A=A)(A=A).to_numpy(), t)
    # swizzles compose like transposes
    nested = loop_program(source="def p(B, A):\n    for i in _:\n        for j in _:\n            for k in _:\n"
                                 "                B[i, j, k] = swizzle(swizzle(A, 1, 2, 0), 1, 2, 0)[i, j, k]\n")
    ref = a.transpose(1, 2, 0).transpose(1, 2, 0)
    B = Tensor.from_numpy(np.zeros(ref.shape), "dense")
    np.testing.assert_allclose(compile_program(nested, B=B, A=A)(A=A).to_numpy(), ref)


# --------------------------------------------------------------------------- masks


@pytest.mark.parametrize("op,ref", [("<=", lambda a: np.triu(a)), ("<", lambda a: np.triu(a, 1)),
                                    (">=", lambda a: np.tril(a)), (">", lambda a: np.tril(a, -1)),
                                    ("==", lambda a: np.diag(np.diag(a))),
                                    ("!=", lambda a: a - np.diag(np.diag(a)))])
@pytest.mark.parametrize("fmt", ["csr", "dense", "dcsr", Dense(RunList(Element(0.0)))], ids=str)
def test_triangular_and_diagonal_masks(op, ref, fmt):
    prog = loop_program(source=f"def m(y, A):\n    for i in _:\n        for j in _:\n"
                               f"            if i {op} j:\n                y[i] += A[i, j]\n")
    rev = loop_program(source=f"def m(y, A):\n    for i in _:\n        for j in _:\n"
                              f"            if j {op} i:\n                y[j] += A[j, i]\n")
    a = matrix((7, 7), 0.5, 13)
    if isinstance(fmt, Dense):
        a = np.repeat(a[:, :3], [2, 3, 2], axis=1)  # runs
    A = Tensor.from_numpy(a, fmt)
    k = compile_program(prog, y="dense", A=A)
    np.testing.assert_allclose(k(A=A).to_numpy(), ref(a).sum(axis=1))
    wrap = k.trace.steps[k.trace.stages().index("wrapperize")].after
    assert "Mask(" in wrap and f"i {op} j" not in wrap
    # the same kernel with the loop indices' roles swapped (the inner index on the left)
    np.testing.assert_allclose(compile_program(rev, y="dense", A=A)(A=A).to_numpy(), ref(a).sum(axis=1))


def test_masks_restrict_the_loop_instead_of_testing_each_element():
    prog = loop_program(source="def m(y, A):\n    for i in _:\n        for j in _:\n"
                               "            if i >= j:\n                y[i] += A[i, j]\n")
    A = Tensor.from_numpy(matrix((6, 6), 1.0, 14), "dense")
    src = compile_program(prog, y="dense", A=A).c_source
    assert ">=" not in src and "<=" not in src


# --------------------------------------------------------------------------- printing and the trace


def test_wrappers_print_in_finch_syntax():
    @loop_program
    def stencil(B, A, F):
        for i in _:
            for j in _:
                B[i] += coalesce(A[~(i + j - 1)], 0.0) * F[j] * A[2:5][gallop(j)]
    a = vector(9, 0.5, 15)
    A, F = vec_tensor(a, "SparseList"), Tensor.from_numpy(np.ones(3), "dense")
    k = compile_program(stencil, B=Tensor.from_numpy(np.zeros(9), "dense"), A=A, F=F)
    wrap = k.trace.steps[k.trace.stages().index("wrapperize")]
    assert "A[permit(i + j - 1)]" in wrap.before and "A[window(gallop(j), 2, 5)]" in wrap.before
    assert "offset(permissive(A, true), i - 1)[j]" in wrap.after
    assert "protocolize(offset(window(A, 2:5), 2), gallop)[j]" in wrap.after
    pad = np.concatenate([[0.0], a, [0.0]])
    ref = np.array([sum(pad[i + j] * a[2 + j] for j in range(3)) for i in range(9)])
    np.testing.assert_allclose(k(A=A, F=F).to_numpy(), ref)


def test_multi_mode_wrappers_print_one_wrapper_per_layer():
    from compiler.algebra import lookup
    from compiler.looplets.passes import Offset, Permit, Window
    from compiler.looplets.program import Access, Call, Index, Literal, Size, TensorRef, show_expr
    i, j = Index("i"), Index("j")
    hi = Call(lookup("-"), (Size(None, "int64", "A", 1), Literal(1)))
    acc = Access(TensorRef("A"), (Permit(Offset(i, Literal(-1))), Window(Offset(j, Literal(1)), Literal(1), hi)))
    assert show_expr(acc) == "offset(window(permissive(A, true, false), _, 1:size(A, 1) - 1), -1, 1)[i, j]"


def test_the_trace_records_wrapperize_with_the_wrapper_and_round_trips():
    from compiler.trace import Trace
    a = vector(12, 0.5, 1)
    A = vec_tensor(a, "SparseList")
    k = compile_program(read_slice, y="dense", A=A)
    step = k.trace.steps[k.trace.stages().index("wrapperize")]
    assert "A[window(i, 3, 9)]" in step.before
    assert "offset(window(A, 3:9), 3)[i]" in step.after
    back = Trace.from_json(k.trace.to_json())
    assert back.steps[back.stages().index("wrapperize")].after == step.after
    dims = k.trace.steps[k.trace.stages().index("dimensionalize")]
    # the window's extent, clipped to A's size when the kernel runs (numpy's a[3:9])
    loop = next(line for line in dims.after.splitlines() if line.startswith("for i = 0:"))
    assert "9 < A0_size ? 9 : A0_size" in loop and loop.endswith(" - 3") and "window 3:9 of A" in dims.note


# --------------------------------------------------------------------------- errors


def src(body: str) -> str:
    return "def k(y, A, x):\n" + body


A2 = Tensor.from_numpy(np.array([[0, 1.0, 0], [2.0, 0, 3.0]]), "csr")
X3 = Tensor.from_numpy(np.array([1.0, 2.0, 3.0]), "dense")


def compile_error(body, **kw):
    with pytest.raises(ProgramError) as e:
        compile_program(loop_program(source=src(body)), y="dense", A=A2, x=X3, **kw)
    return str(e.value)


@pytest.mark.parametrize("body,line", [("    for i in _:\n        y[i] = x[1:5][i]\n", 3),
                                       ("    for i in _:\n\n        y[i] = x[window(i, -1, 2)]\n", 4),
                                       ("    for i in _:\n        for j in _:\n            y[i] += A[:, 1:4][i, j]\n", 4)])
def test_window_out_of_bounds_names_tensor_mode_and_line(body, line):
    msg = compile_error(body)
    assert msg.startswith(f"line {line} of k: the window")
    assert "is out of bounds" in msg and "has size" in msg
    assert ("mode 1 of A has size 3" in msg) if "A[" in body else ("mode 0 of x has size 3" in msg)


def test_window_bounds_reversed():
    msg = compile_error("    for i in _:\n        y[i] = x[window(i, 2, 1)]\n")
    assert msg.startswith("line 3 of k: the window 2:1 of x has its bounds reversed")
    msg = compile_error("    for i in _:\n        y[i] = x[len(x):1][i]\n")
    assert msg.startswith("line 3 of k: the window size(x, 0):1 (= 3:1) of x (mode 0) has its bounds reversed")


def test_fixed_coordinates_in_a_window_slice_are_rejected():
    with pytest.raises(ProgramError, match="every entry of a window slice is lo:hi or ':'") as e:
        loop_program(source=src("    for j in _:\n        y[j] = A[1, 2:][j]\n"))
    assert str(e.value).startswith("line 3 of k:")


def test_window_bounds_must_be_static():
    msg = compile_error("    for i in _:\n        for j in _:\n            y[i] += x[window(j, i, 3)]\n")
    assert msg.startswith("line 4 of k: the bounds of a window of x must be integers or tensor sizes")


@pytest.mark.parametrize("call,match", [("swizzle(A, 1, 1)[i, j]", "must be a permutation of 0..1"),
                                        ("swizzle(A, 0, 2)[i, j]", "must be a permutation of 0..1"),
                                        ("swizzle(A, 1, 0, 2)[i, j, i]", "names 3 axes but A has 2 mode"),
                                        ("swizzle(A, j, 0)[i, j]", "axes of swizzle"),
                                        ("swizzle(A, 1, 0)[i]", "has 2 mode\\(s\\) but is indexed with 1")])
def test_swizzle_with_a_bad_permutation(call, match):
    with pytest.raises(ProgramError, match=match) as e:
        compile_program(loop_program(source=src(f"    for i in _:\n        for j in _:\n            y[i] += {call}\n")),
                        y="dense", A=A2, x=X3)
    assert str(e.value).startswith("line 4 of k:")


@pytest.mark.parametrize("expr", ["A[i, i * j]", "A[i, j * 2]", "A[i, 2 - j]"])
def test_index_expression_no_wrapper_covers(expr):
    msg = compile_error(f"    for i in _:\n        for j in _:\n            y[i] += {expr}\n")
    assert msg.startswith("line 4 of k: no wrapper covers the index expression")
    assert f"    y[i] += {expr}" in msg


@pytest.mark.parametrize("fmt,modes", [(Format(Dense(SparseList(SparseList(Element(0.0))))), 3),
                                       (Format(Dense(Element(0.0))), 1)])
def test_an_output_format_of_another_order_is_named(fmt, modes):
    # (a format of more modes than the output's indices once raised an IndexError choosing its write order)
    with pytest.raises(ProgramError, match=f"C has {modes} mode\\(s\\) but is indexed with 2 index") as e:
        compile_program(loop_program(source="def k(C, A, B):\n    for i in _:\n        for j in _:\n"
                                            "            C[i, j] += A[i, j] * B[i, j]\n"),
                        C=fmt, A="csr", B="csr")
    assert str(e.value).startswith("line 4 of k:")
