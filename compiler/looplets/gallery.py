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

__all__ = ["spmv", "gustavson", "outer", "inner", "inner_gallop", "triangles_walk", "triangles_gallop"]


@loop_program
def spmv(y, A, x):
    """``y = A x`` with A row-major: each row's stored entries are walked."""
    for i in _:
        for j in _:
            y[i] += A[i, j] * x[j]


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
