"""Loop programs of the papers' kernels, ready to compile.

The tests check them against the dense oracle and ``benchmarks/bench_looplets.py``
times them, so both use these definitions rather than copies.

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.looplets import compile_program
>>> A = Tensor.from_numpy(np.array([[0, 2.0], [3.0, 0]]), "csr")
>>> x = Tensor.from_numpy(np.array([1.0, 10.0]), "dense")
>>> compile_program(spmv, y="dense", A=A, x=x)(A=A, x=x).to_numpy()
array([20.,  3.])
"""

from ..levels import Element, SparseByteMap
from .language import loop_program

__all__ = ["spmv", "spmv_then_axpy", "symv", "gustavson", "outer", "inner", "inner_gallop", "triangles_walk", "triangles_gallop",
           "conv2d", "conv2d_scatter", "concat"]


@loop_program
def spmv(y, A, x):
    """``y = A x`` with A row-major: each row's stored entries are walked."""
    for i in _:
        for j in _:
            y[i] += A[i, j] * x[j]


@loop_program
def spmv_then_axpy(y, z, A, x, b):
    """``y = A x``, then ``z = 2 y + b``: two statements, each drawn as a tree of its own whose
    nodes the explorer links with the code they compute (:mod:`.statement_trees`)."""
    for i in _:
        for j in _:
            y[i] += A[i, j] * x[j]
    for i in _:
        z[i] = y[i] * 2.0 + b[i]


@loop_program
def symv(y, A, x):
    """``y = A x`` for a symmetric A of which only the upper triangle is read (the masks skip
    any stored entry below the diagonal): each stored ``A[i, j]``, ``i < j``, serves both
    ``y[i]`` (as ``A[i, j]``) and ``y[j]`` (as ``A[j, i]``); the diagonal counts once."""
    for i in _:
        for j in _:
            if i <= j:
                y[i] += A[i, j] * x[j]
            if i < j:
                y[j] += A[i, j] * x[i]


@loop_program
def gustavson(C, A, B, w=SparseByteMap(Element(0.0))):
    """SpGEMM row by row: row i of A scales rows of B into a byte-map workspace ``w``,
    which is then copied (in order) into row i of C."""
    for i in _:
        w[...] = 0.0
        for k in _:
            for j in _:
                w[j] += A[i, k] * B[k, j]
        for j in _:
            C[i, j] = w[j]


@loop_program
def outer(C, A, B):
    """SpGEMM by outer products: column k of A times row k of B, accumulated into C
    out of order (so C's rows must be SparseHash or another unordered level)."""
    for k in _:
        for i in _:
            for j in _:
                C[i, j] += A[i, k] * B[k, j]


@loop_program
def inner(C, A, B):
    """``C = A B^T`` by inner products: each pair of rows merged two-finger."""
    for i in _:
        for j in _:
            for k in _:
                C[i, j] += A[i, k] * B[j, k]


@loop_program
def inner_gallop(C, A, B):
    """:data:`inner` with both rows galloping: each side skips ahead by binary search."""
    for i in _:
        for j in _:
            for k in _:
                C[i, j] += A[i, gallop(k)] * B[j, gallop(k)]


@loop_program
def triangles_walk(C, A):
    """Triangles of a graph given by its strictly lower triangle A, two-finger merge."""
    for i in _:
        for j in _:
            for k in _:
                C += A[i, j] * A[j, k] * A[i, k]


@loop_program
def triangles_gallop(C, A):
    """:data:`triangles_walk` with galloping intersections (fast on power-law graphs)."""
    for i in _:
        for j in _:
            for k in _:
                C += A[i, j] * A[j, gallop(k)] * A[i, gallop(k)]


@loop_program
def conv2d(B, A, F):
    """3x3 correlation in gather form with zero padding ("same" size):
    ``B[i, j] = sum A[i + di - 1, j + dj - 1] * F[di, dj]`` over the taps, the reads outside
    A permissive (``~``) and replaced by 0 (``coalesce``). With A sparse, each output seeks
    into A's rows (a search per output and tap)."""
    for i in _:
        for j in _:
            for di in _:
                for dj in _:
                    B[i, j] += coalesce(A[~(i + di - 1), ~(j + dj - 1)], 0.0) * F[di, dj]


@loop_program
def conv2d_scatter(B, A, F):
    """Full 2-D convolution in scatter form, for a filter F of any size: each stored
    ``A[i, j]`` is scattered to ``B[i + di, j + dj]``, one pass over A's stored entries per
    tap (taps outermost: the shifted write is a Toeplitz offset of the loop over A, so the
    pass is A's position loop, with no search). B is ``(m + kh - 1) x (n + kw - 1)``; the
    correlation with a filter f is this kernel with ``F = f[::-1, ::-1]``, and its "same"
    part is ``B[kh // 2 : kh // 2 + m, kw // 2 : kw // 2 + n]``."""
    for di in _:
        for dj in _:
            for i in _:
                for j in _:
                    B[i + di, j + dj] += A[i, j] * F[di, dj]


@loop_program
def concat(C, A, B):
    """Concatenation through windows of the output: ``C[0:n]`` takes A, ``C[n:]`` takes B
    (``n`` the length of A), two loops appending to one output in order."""
    for i in _:
        C[0:A.shape[0]][i] = A[i]
    for i in _:
        C[A.shape[0]:][i] = B[i]
