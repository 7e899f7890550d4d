"""Walks over the imperative IR (compiler.imperative.traverse): the walk of statements meets every
statement the whole walk meets, in its order, on kernels both strategies lowered."""

import re

import numpy as np
import pytest

import compiler as ss
from compiler.imperative.ir import Expr, For, Pragma, Stmt, Var
from compiler.imperative.traverse import pragma_names, statements, walk


def kernels():
    A = ss.Tensor.from_numpy(np.array([[0, 1.0, 0, 2.0], [3.0, 0, 0, 4.0], [0, 0, 5.0, 0]]), "csr")
    B = ss.Tensor.from_numpy(np.array([[1.0, 0, 0, 2.0], [0, 0, 3.0, 0], [4.0, 0, 0, 0]]), "coo")
    x = np.arange(4.0)
    yield ss.lower("y[i] = A[i, j] * x[j]", "lattice", A=A, x=x)
    yield ss.lower("C[i, j] = A[i, j] + B[i, j]", "looplets", A=A, B=B, C="coo")   # (its simd loops count drops)
    yield ss.lower("y[i] = max[j](A[i, j] + x[j])", "looplets", A=A, x=x)
    yield ss.lower("D[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)", "lattice", A=A, B=B, D="csr")


@pytest.mark.parametrize("k", range(4))
def test_statements_meet_every_statement_in_walk_order(k):
    fn = list(kernels())[k].function
    everything = list(walk(fn.body))
    assert [n for n in statements(fn.body) if isinstance(n, Stmt)] == [n for n in everything if isinstance(n, Stmt)]
    assert not any(isinstance(m, Stmt) for n in everything if isinstance(n, Expr) for m in walk(n))
    # the pragmas' words, as the passes read them from the whole walk
    words = set(re.findall(r"[A-Za-z_]\w*", " ".join(n.text for n in everything if isinstance(n, Pragma))))
    assert pragma_names(fn.body.body) == words
    assert words or k in (0, 3)   # (the looplets' kernels have simd loops)


def test_pragma_names_of_nested_pragmas():
    loop = For(Var("i"), 0, 4, [Pragma("omp simd reduction(+:s_2)"), For(Var("j"), 0, 2, [Pragma("omp simd")])])
    assert pragma_names([loop, Pragma("omp parallel for")]) == {"omp", "simd", "reduction", "s_2", "parallel", "for"}
    assert pragma_names([For(Var("i"), 0, 4, [])]) == set()
