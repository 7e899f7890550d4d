"""Kernels over the run-length, point, interval, byte-map and COO levels, and random writes."""

import numpy as np
import pytest

from compiler import Tensor
from compiler.levels import (Dense, Element, Pattern, RunList, SparseByteMap, SparseInterval, SparseList,
                             SparsePoint, SparseRunList)
from compiler.looplets import compile_program, loop_program


def rle_image(rng, h, w, max_run=5):
    img = np.zeros((h, w))
    for r in range(h):
        c = 0
        while c < w:
            run = int(rng.integers(1, max_run))
            img[r, c:c + run] = rng.integers(0, 4)
            c += run
    return img


@loop_program
def blend(C, A, B):
    for i in _:
        for j in _:
            C[i, j] = 0.3 * A[i, j] + 0.7 * B[i, j]


@pytest.mark.parametrize("la,lb", [(RunList, RunList), (RunList, SparseRunList), (SparseRunList, SparseList)])
def test_alpha_blending_run_length_images(la, lb):
    rng = np.random.default_rng(3)
    a, b = rle_image(rng, 6, 17), rle_image(rng, 6, 17)
    A = Tensor.from_numpy(a, Dense(la(Element(0.0))))
    B = Tensor.from_numpy(b, Dense(lb(Element(0.0))))
    k = compile_program(blend, C="dense", A=A, B=B)
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), 0.3 * a + 0.7 * b)


def test_run_sum_integrates_runs():
    """A sum over a RunList multiplies each run's value by its length: no loop over pixels."""
    @loop_program
    def total(s, A):
        for i in _:
            for j in _:
                s += A[i, j]
    a = rle_image(np.random.default_rng(0), 4, 30)
    A = Tensor.from_numpy(a, Dense(RunList(Element(0.0))))
    k = compile_program(total, s=Element(0.0), A=A)
    assert k(A=A) == pytest.approx(a.sum())
    assert "for (int64_t j" not in k.c_source


def test_erosion_on_sparse_run_list():
    """1-D erosion: a pixel stays set when it and both neighbours are set (padded with 0)."""
    @loop_program
    def erode(C, A):
        for i in _:
            for j in _:
                C[i, j] = coalesce(A[i, ~(j - 1)], 0.0) * A[i, j] * coalesce(A[i, ~(j + 1)], 0.0)
    a = (rle_image(np.random.default_rng(5), 5, 20) > 1).astype(float)
    A = Tensor.from_numpy(a, Dense(SparseRunList(Element(0.0))))
    k = compile_program(erode, C="dense", A=A)
    p = np.pad(a, ((0, 0), (1, 1)))
    np.testing.assert_allclose(k(A=A).to_numpy(), p[:, :-2] * p[:, 1:-1] * p[:, 2:])


def test_masked_histogram_into_byte_map():
    """Scatter into a SparseByteMap output: out-of-order writes, the stored set is listed at freeze."""
    @loop_program
    def hist(H, M, img):
        for i in _:
            for j in _:
                if M[i, j]:
                    H[img[i, j]] += 1.0
    rng = np.random.default_rng(1)
    img = rng.integers(0, 10, (6, 7))
    mask = rng.random((6, 7)) < 0.4
    M = Tensor.from_numpy(mask, Dense(SparseList(Pattern())))
    I = Tensor.from_numpy(img, "dense")
    H0 = Tensor.from_numpy(np.zeros(10), SparseByteMap(Element(0.0)))
    k = compile_program(hist, H=H0, M=M, img=I)
    H = k(M=M, img=I)
    np.testing.assert_allclose(H.to_numpy(), np.bincount(img[mask], minlength=10))
    assert H.levels[0].srt.tolist() == sorted(set(img[mask].tolist()))
    H.validate()


def test_transpose_into_byte_map_writes_out_of_order():
    @loop_program
    def transpose(C, A):
        for i in _:
            for j in _:
                C[j, i] = A[i, j]
    M = np.round(np.random.default_rng(0).random((4, 6)) * 3) * (np.random.default_rng(1).random((4, 6)) < 0.5)
    A = Tensor.from_numpy(M, "csr")
    out = Tensor.from_numpy(np.zeros((6, 4)), Dense(SparseByteMap(Element(0.0))))
    C = compile_program(transpose, C=out, A=A)(A=A)
    C.validate()
    np.testing.assert_array_equal(C.to_numpy(), M.T)
    # into a SparseList output, which is appended in order, C is built in its own order by a
    # scatter in the program's loops (issue 29; before, built as CSC and converted; before that, refused)
    k = compile_program(transpose, C=Tensor.from_numpy(np.zeros((6, 4)), "csr"), A=A)
    np.testing.assert_array_equal(k(A=A).to_numpy(), M.T)
    assert not k.lowered.conversions and k.trace.find("scatter")


def test_sparse_point_and_interval_spmv():
    @loop_program
    def spmv(y, A, x):
        for i in _:
            for j in _:
                y[i] += A[i, j] * x[j]
    P = np.zeros((5, 9)); P[0, 3] = 2; P[2, 8] = 1; P[4, 0] = 3
    I = np.zeros((5, 9)); I[1, 2:6] = 1.5; I[3, 0:9] = 2.0; I[4, 8] = 1.0
    x = Tensor.from_numpy(np.arange(9.0) + 1, "dense")
    for level, X in ((SparsePoint, P), (SparseInterval, I)):
        A = Tensor.from_numpy(X, Dense(level(Element(0.0))))
        k = compile_program(spmv, y="dense", A=A, x=x)
        np.testing.assert_allclose(k(A=A, x=x).to_numpy(), X @ x.to_numpy())


def test_scatter_convolution_matches_numpy():
    """Convolution by scattering the sparse signal's entries (the single-stepper fast path)."""
    @loop_program
    def conv(Y, A, F):
        for j in _:
            for i in _:
                Y[i + 4 - j] += A[i] * F[j]
    rng = np.random.default_rng(2)
    s = rng.random(50) * (rng.random(50) < 0.1)
    f = rng.random(5)
    S = Tensor.from_numpy(s, SparseList(Element(0.0)))
    F = Tensor.from_numpy(f, "dense")
    k = compile_program(conv, Y=Tensor.from_numpy(np.zeros(54), "dense"), A=S, F=F)
    np.testing.assert_allclose(k(A=S, F=F).to_numpy()[2:52], np.correlate(np.pad(s, 2), f, mode="valid"))
    assert "while (qA < qA_stop)" in k.c_source


def test_csr_spmv_uses_the_position_loop():
    @loop_program
    def spmv(y, A, x):
        for i in _:
            for j in _:
                y[i] += A[i, j] * x[j]
    A = Tensor.from_numpy(np.array([[0, 2.0, 0], [1.0, 0, 3.0]]), "csr")
    x = Tensor.from_numpy(np.array([1.0, 2.0, 3.0]), "dense")
    src = compile_program(spmv, y="dense", A=A, x=x).c_source
    assert "while (qA < qA_stop)" in src and "step_stop" not in src
    assert "y_acc += A_val[qA]" in src  # the row sum stays in a local


def test_byte_map_output_through_the_shared_runtime():
    """The runtime allocates a SparseByteMap output's table (``C0_tbl``) like a pos array."""
    from compiler.lowering import lower
    from compiler.format import Format
    a = np.array([0, 1.5, 0, 2.0, 0])
    A = Tensor.from_numpy(a, SparseList(Element(0.0)))
    k = lower("C[i] += A[i]", strategy="looplets", A=A, C=Format(SparseByteMap(Element(0.0))))
    out = k(A=A)
    np.testing.assert_array_equal(out.to_numpy(), a)
    assert out.levels[0].srt.tolist() == [1, 3]
