"""Kernels written directly in the imperative IR, for tests, benchmarks and teaching.

>>> print(csr_spmv())
kernel spmv(int64 m, in int64 A_pos[], in int64 A_idx[], in float64 A_val[], in float64 x[], inout float64 y[]) {
    for (int64 i = 0; i < m; i++) {
        float64 acc = 0.0;
        for (int64 pA = A_pos[i]; pA < A_pos[i + 1]; pA++) {
            acc += A_val[pA] * x[A_idx[pA]];
        }
        y[i] = acc;
    }
}
"""

from __future__ import annotations

from .ir import (Buffer, CompoundAssign, Const, Declare, For, Function, Grow, Growable, If,
                 OutScalar, Scalar, Var)


def csr_spmv(index: str = "int64", value: str = "float64", name: str = "spmv") -> Function:
    """``y[i] = sum_j A[i, j] * x[j]`` for a CSR matrix ``A`` with ``m`` rows."""
    m = Scalar("m", "int64")
    A_pos, A_idx = Buffer("A_pos", index), Buffer("A_idx", index)
    A_val, x = Buffer("A_val", value), Buffer("x", value)
    y = Buffer("y", value, "inout")
    i, pA, acc = Var("i"), Var("pA"), Var("acc")
    body = For(i, 0, m.var, [
        Declare(acc, value, Const(0, value)),
        For(pA, A_pos[i], A_pos[i + 1], [
            CompoundAssign("+", acc, A_val[pA] * x[A_idx[pA]]),
        ]),
        y.store(i, acc),
    ])
    return Function(name, (m, A_pos, A_idx, A_val, x, y), body)


def filter_nonzeros(value: str = "float64", index: str = "int64", name: str = "sparsify") -> Function:
    """Gather the nonzeros of the dense vector ``x`` (length ``n``) into ``B_idx`` / ``B_val``.

    The outputs are growable; ``B_nnz`` reports their length.
    """
    n, x = Scalar("n", "int64"), Buffer("x", value)
    B_nnz = OutScalar("B_nnz", "int64")
    B_idx, B_val = Growable("B_idx", index, "B_nnz"), Growable("B_val", value, "B_nnz")
    i, nnz = Var("i"), B_nnz.var
    body = For(i, 0, n.var, [
        If(x[i].ne(Const(0, value)), [
            Grow("B_idx", nnz + 1),
            Grow("B_val", nnz + 1),
            B_idx.store(nnz, i),
            B_val.store(nnz, x[i]),
            CompoundAssign("+", nnz, 1),
        ]),
    ])
    return Function(name, (n, x, B_nnz, B_idx, B_val), body)
