"""2-D convolution with offsets and coalesce padding (gather) and by scattering (the full
convolution), symmetric SpMV from a stored upper triangle, and 1-D convolution in gather form
(with and without a search per output), against numpy."""

import re

import numpy as np
import pytest

from compiler import Tensor
from compiler.levels import Dense, Element, SparseList
from compiler.looplets import compile_program, loop_program
from compiler.looplets.gallery import conv2d, conv2d_scatter, symv


def sparse(shape, density, seed=0):
    rng = np.random.default_rng(seed)
    return np.where(rng.random(shape) < density, rng.random(shape) + 0.5, 0.0)


def conv2d_ref(a, f):
    m, n = a.shape
    pad = np.zeros((m + 2, n + 2))
    pad[1:-1, 1:-1] = a
    return np.array([[np.sum(pad[i:i + 3, j:j + 3] * f) for j in range(n)] for i in range(m)])


@pytest.mark.parametrize("shape,density,fmt", [((1, 1), 1.0, "csr"), ((6, 9), 0.3, "csr"),
                                               ((12, 10), 0.05, "csr"), ((7, 7), 0.5, "dense"),
                                               ((8, 5), 0.2, "dcsr")])
def test_conv2d_with_offsets_and_padding(shape, density, fmt):
    a = sparse(shape, density, 1)
    f = np.array([[0.5, 1.0, -1.0], [2.0, -3.0, 0.25], [1.0, 0.0, 4.0]])
    A = Tensor.from_numpy(a, fmt)
    F = Tensor.from_numpy(f, "dense")
    B = Tensor.from_numpy(np.zeros(shape), "dense")
    k = compile_program(conv2d, B=B, A=A, F=F)
    np.testing.assert_allclose(k(A=A, F=F).to_numpy(), conv2d_ref(a, f))


@pytest.mark.parametrize("shape,density,fmt", [((1, 1), 1.0, "csr"), ((6, 9), 0.3, "csr"),
                                               ((12, 10), 0.05, Dense(SparseList(Element(0.0), index_dtype="int32"))),
                                               ((7, 7), 0.5, "dense"), ((8, 5), 0.2, "dcsr"), ((9, 4), 0.0, "csr")])
@pytest.mark.parametrize("fshape", [(3, 3), (5, 2)])
def test_conv2d_scatter_is_the_full_convolution(shape, density, fmt, fshape):
    a = sparse(shape, density, 5)
    f = np.random.default_rng(6).random(fshape) - 0.5
    m, n = shape
    kh, kw = fshape
    A, F = Tensor.from_numpy(a, fmt), Tensor.from_numpy(f, "dense")
    B = Tensor.from_numpy(np.zeros((m + kh - 1, n + kw - 1)), "dense")
    k = compile_program(conv2d_scatter, B=B, A=A, F=F)
    full = np.zeros((m + kh - 1, n + kw - 1))
    for di in range(kh):
        for dj in range(kw):
            full[di:di + m, dj:dj + n] += a * f[di, dj]
    got = k(A=A, F=F).to_numpy()
    np.testing.assert_allclose(got, full)
    # with the filter flipped, its middle is the 3x3 gather form's "same" correlation
    if fshape == (3, 3):
        Ff = Tensor.from_numpy(f[::-1, ::-1].copy(), "dense")
        np.testing.assert_allclose(k(A=A, F=Ff).to_numpy()[1:m + 1, 1:n + 1], conv2d_ref(a, f))


@pytest.mark.parametrize("n,density,fmt", [(1, 1.0, "csr"), (8, 0.4, "csr"), (30, 0.1, "csr"),
                                           (12, 0.3, Dense(SparseList(Element(0.0))))])
def test_symmetric_spmv_from_a_stored_upper_triangle(n, density, fmt):
    s = sparse((n, n), density, 2)
    S = np.triu(s) + np.triu(s, 1).T  # the symmetric matrix; only its upper triangle is stored
    U = Tensor.from_numpy(np.triu(S), fmt)
    xd = np.arange(n, dtype=float) + 1.0
    x = Tensor.from_numpy(xd, "dense")
    k = compile_program(symv, y="dense", A=U, x=x)
    np.testing.assert_allclose(k(A=U, x=x).to_numpy(), S @ xd)
    # the masks read only the upper triangle: a lower triangle in storage is ignored
    F = Tensor.from_numpy(np.triu(S) + 100.0 * np.tril(s, -1), fmt)
    np.testing.assert_allclose(k(A=F, x=x).to_numpy(), S @ xd)


# 1-D convolution in gather form, B[i] = sum_j A[i + j - 1] * F[j] with zero padding. With the
# outputs outermost, A[~(i + j - 1)] is unfurled once per output and its stepper seeks (a
# binary search) to i - 1 every time. With the taps outermost, A[i + j - 1] is a Toeplitz read
# shifted by the tap: the stepper seeks once per tap and the outputs come straight from A's
# position loop (O(taps * (log nnz + nnz)), no search per output).


@loop_program
def conv1d_per_output(B, A, F):
    for i in _:
        for j in _:
            B[i] += coalesce(A[~(i + j - 1)], 0.0) * F[j]


@loop_program
def conv1d_per_tap(B, A, F):
    for j in _:
        for i in _:
            B[i] += coalesce(A[~(i + j - 1)], 0.0) * F[j]


def loops_around_searches(c_source) -> list:
    """For each search of a kernel (a call of a search helper: ``q = seek_int64(...)``), the loops
    enclosing it."""
    stack, out = [], []
    for line in c_source.splitlines():
        text = line.strip()
        if re.search(r" = (seek|seek_back|lower_bound)_\w+\(", text):
            out.append([h for h in stack if h.startswith(("for (", "while ("))])
        stack.extend([text] * text.count("{"))
        for _ in range(text.count("}")):
            stack.pop()
    return out


@pytest.mark.parametrize("n,density", [(1, 1.0), (9, 0.0), (40, 0.2), (25, 0.7)])
@pytest.mark.parametrize("fmt", [SparseList(Element(0.0)), Dense(Element(0.0))], ids=["SparseList", "Dense"])
def test_conv1d_gather_forms_match_numpy(n, density, fmt):
    a = sparse((n,), density, 3)
    f = np.array([0.5, -2.0, 3.0])
    A, F = Tensor.from_numpy(a, fmt), Tensor.from_numpy(f, "dense")
    ref = np.correlate(np.pad(a, 1), f, mode="valid")
    for prog in (conv1d_per_output, conv1d_per_tap):
        k = compile_program(prog, B=Tensor.from_numpy(np.zeros(n), "dense"), A=A, F=F)
        np.testing.assert_allclose(k(A=A, F=F).to_numpy(), ref)


def test_conv1d_with_taps_outermost_searches_once_per_tap_not_per_output():
    A = Tensor.from_numpy(sparse((50,), 0.2, 4), SparseList(Element(0.0)))
    F = Tensor.from_numpy(np.array([1.0, 2.0, 3.0]), "dense")
    B = Tensor.from_numpy(np.zeros(50), "dense")
    per_output = compile_program(conv1d_per_output, B=B, A=A, F=F).c_source
    per_tap = compile_program(conv1d_per_tap, B=B, A=A, F=F).c_source
    # outputs outermost: the seek into A runs inside the loop over the outputs
    assert any(any(h.startswith("for (int64_t i = 0; i < B0_size") for h in loops)
               for loops in loops_around_searches(per_output))
    # taps outermost: every search is inside the tap loop only, and the outputs are written
    # from A's position loop (no dense loop over B at all)
    searches = loops_around_searches(per_tap)
    assert searches and all(loops == ["for (int64_t j = 0; j < F0_size; j++) {"] for loops in searches)
    assert "for (int64_t i" not in per_tap
    assert "while (qA < qA_end)" in per_tap
    assert re.search(r"B_val\[i_\d+\] \+= A_val\[qA\] \* F_val\[j\];", per_tap)
