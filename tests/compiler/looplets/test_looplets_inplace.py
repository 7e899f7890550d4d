"""A loop program updates a given output in place unless it assigns it first (issue 28 item 4;
Finch.jl's typical_inplace_sparse_add, Finch issue #284): the output's values are the start."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.errors import UsageError
from compiler.looplets import compile_program, loop_program


@loop_program
def inplace_add(B, A):
    for i in _:
        B[i] += A[i]


@loop_program
def assigned_add(B, A):
    B[...] = 0
    for i in _:
        B[i] += A[i]


@loop_program
def row_sums_into(y, A):
    for i in _:
        for j in _:
            y[i] += A[i, j]


@loop_program
def total(s, A):
    for i in _:
        s += A[i]


def test_typical_inplace_sparse_add():
    A = Tensor.from_numpy(np.array([2.0, 0, 3]), "sparse")
    B = Tensor.from_numpy(np.full(3, 1.1), "dense")
    for lowered in (ss.lower(inplace_add, strategy="looplets", B=B, A=A), compile_program(inplace_add, B=B, A=A)):
        np.testing.assert_allclose(lowered(A=A, B=B).to_numpy(), [3.1, 1.1, 4.1])
        np.testing.assert_allclose(B.to_numpy(), np.full(3, 1.1))   # (the given tensor is not changed)
    # as index notation already did
    np.testing.assert_allclose(ss.lower("B[i] += A[i]", strategy="looplets", B=B, A=A)(A=A, B=B).to_numpy(),
                               [3.1, 1.1, 4.1])


def test_an_output_assigned_first_ignores_the_given_values():
    A = Tensor.from_numpy(np.array([2.0, 0, 3]), "sparse")
    B = Tensor.from_numpy(np.full(3, 1.1), "dense")
    np.testing.assert_allclose(ss.lower(assigned_add, B=B, A=A)(A=A, B=B).to_numpy(), [2.0, 0, 3.0])


def test_an_output_not_given_at_the_call_starts_at_its_fill():
    A = Tensor.from_numpy(np.array([2.0, 0, 3]), "sparse")
    k = ss.lower(inplace_add, B=ss.dense(1, fill=1.0), A=A)
    np.testing.assert_allclose(k(A=A).to_numpy(), [3.0, 1.0, 4.0])


def test_a_scalar_output_starts_from_its_given_value():
    A = Tensor.from_numpy(np.array([2.0, 0, 3]), "sparse")
    s = Tensor.from_numpy(np.array(10.0), ss.parse_format("dense", ndim=0))
    assert float(compile_program(total, s=s, A=A)(A=A, s=s)) == 15.0


def test_a_sparse_output_given_with_entries_is_refused_not_ignored():
    A = Tensor.from_numpy(np.array([2.0, 0, 3]), "sparse")
    B = Tensor.from_numpy(np.array([0.0, 1.0, 0.0]), "sparse")
    k = ss.lower(inplace_add, B="sparse", A=A)
    with pytest.raises(UsageError, match="output B .* given with entries.*dense format"):
        k(A=A, B=B)
    empty = Tensor.from_numpy(np.zeros(3), "sparse")   # (nothing to start from: fine)
    np.testing.assert_array_equal(k(A=A, B=empty).to_numpy(), [2.0, 0, 3.0])


@settings(max_examples=25)
@given(m=st.integers(0, 5), n=st.integers(0, 5), seed=st.integers(0, 2**16), fmt=st.sampled_from(["csr", "dense"]))
def test_row_sums_accumulate_onto_the_given_output(m, n, seed, fmt):
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((m, n)) < 0.5, rng.integers(1, 9, (m, n)), 0).astype(float)
    y0 = rng.integers(-5, 5, m).astype(float)
    A, y = Tensor.from_numpy(a, fmt), Tensor.from_numpy(y0, "dense")
    got = ss.lower(row_sums_into, y=y, A=A)(A=A, y=y)
    np.testing.assert_array_equal(got.to_numpy(), y0 + a.sum(axis=1))
