"""A sparse output of the looplets strategy stores no entry equal to its fill (issue 28 item 7;
TACO's SparsifyTest), in index notation and loop programs alike, as the lattice strategy does."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.levels import (Dense, Element, SparseBand, SparseBlockList, SparseByteMap, SparseCOO, SparseHash,
                             SparseList, SparseRunList)
from compiler.looplets import loop_program

#: sparse vector formats a loop writes by appending or marking, with their fill
FORMATS = {
    "SparseList": lambda fill: SparseList(Element(fill)),
    "SparseCOO": lambda fill: SparseCOO(1, Element(fill)),
    "SparseBlockList": lambda fill: SparseBlockList(Element(fill)),
    "SparseByteMap": lambda fill: SparseByteMap(Element(fill)),
    "SparseRunList": lambda fill: SparseRunList(Element(fill)),
    "SparseHash": lambda fill: SparseHash(Element(fill)),
}


@loop_program
def copy(a, b):
    for i in _:
        a[i] = b[i]


def entries(t: Tensor) -> int:
    """How many entries a vector stores (a byte map's nnz counts its slots: its marks here)."""
    lvl = t.levels[0]
    if isinstance(lvl, SparseByteMap):
        assert len(lvl.srt) == lvl.tbl.sum()
        return int(lvl.tbl.sum())
    return t.nnz


def non_fill_count(v: np.ndarray, fill) -> int:
    return int(np.sum(~np.isnan(v))) if math.isnan(fill) else int(np.sum(v != fill))


def test_taco_sparsify_stores_three_entries_by_both_strategies_and_as_a_loop_program():
    b = np.array([3.0, 0, 4, 0, 2])
    results = [ss.lower("a[i] = b[i]", strategy=s, a="sparse", b=b)(b=b) for s in ("lattice", "looplets")]
    results.append(ss.lower(copy, strategy="looplets", a="sparse", b=b)(b=b))
    for r in results:
        assert r.nnz == 3
        np.testing.assert_array_equal(r.levels[0].idx, [0, 2, 4])
        np.testing.assert_array_equal(r.to_numpy(), b)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("fill", [0.0, 1.0, float("nan")])
def test_a_copy_into_a_sparse_vector_drops_the_fill(fmt, fill):
    b = np.array([3.0, fill, 4.0, fill, fill, 2.0, 2.0, fill])
    a = ss.lower(copy, a=FORMATS[fmt](fill), b=b)(b=b)
    assert entries(a) == (3 if fmt == "SparseRunList" else 4)   # (a run of two 2.0s is one run)
    np.testing.assert_array_equal(a.to_numpy(), b)


def test_a_sum_that_cancels_to_the_fill_is_not_stored():
    """``y[i] += A[i, j]`` into a SparseList: row 1 sums to 0 (the fill), so is no entry."""
    A = Tensor.from_numpy(np.array([[1.0, 2.0], [1.0, -1.0], [0.0, 0.0], [5.0, 0.0]]), "dense")
    got = {s: ss.lower("y[i] = sum[j](A[i, j])", strategy=s, y="sparse", A=A)(A=A) for s in ("lattice", "looplets")}
    for r in got.values():
        np.testing.assert_array_equal(r.to_numpy(), [3.0, 0.0, 0.0, 5.0])
    assert got["looplets"].nnz == got["lattice"].nnz == 2


def test_a_csr_product_of_dense_matrices_stores_only_nonzeros():
    rng = np.random.default_rng(7)
    A = np.where(rng.random((5, 6)) < 0.5, 1.0, 0.0)
    B = np.where(rng.random((5, 6)) < 0.5, 2.0, 0.0)
    expected = A * B
    for s in ("lattice", "looplets"):
        C = ss.lower("C[i, j] = A[i, j] * B[i, j]", strategy=s, C="csr", A=A, B=B)(A=A, B=B)
        assert C.nnz == np.count_nonzero(expected)
        np.testing.assert_array_equal(C.to_numpy(), expected)


@settings(max_examples=40)
@given(fmt=st.sampled_from(sorted(FORMATS)), fill=st.sampled_from([0.0, -1.0, float("nan")]),
       values=st.lists(st.sampled_from([0.0, -1.0, 2.5, float("nan"), 7.0]), max_size=12))
@example(fmt="SparseList", fill=0.0, values=[3.0, 0.0, 4.0, 0.0, 2.0])
@example(fmt="SparseByteMap", fill=float("nan"), values=[float("nan"), 1.0])
def test_a_sparse_output_never_stores_its_fill(fmt, fill, values):
    b = np.array(values, dtype=float)
    a = ss.lower(copy, a=FORMATS[fmt](fill), b=b)(b=b)
    np.testing.assert_array_equal(a.to_numpy(), b)   # (NaN equals NaN here)
    if fmt != "SparseRunList":   # (runs: equal neighbours share one)
        assert entries(a) == non_fill_count(b, fill)
    else:
        assert entries(a) <= non_fill_count(b, fill)


@settings(max_examples=40)
@given(fill=st.sampled_from([0.0, -1.0, float("nan")]),
       values=st.lists(st.sampled_from([0.0, -1.0, 2.5, float("nan")]), max_size=10), rows=st.integers(1, 3))
@example(fill=0.0, values=[3.0, 0.0, 4.0, 0.0, 2.0, 0.0], rows=1)
@example(fill=float("nan"), values=[float("nan"), 3.0, float("nan"), 4.0, float("nan")], rows=2)
def test_a_band_output_stores_the_band_from_the_first_to_the_last_value_not_the_fill(fill, values, rows):
    """A SparseBand output's band starts at the first value written that is not the fill and ends
    after the last (the fills between are the band's), as Tensor.from_numpy stores it; it stored
    every write (issue 28 item 7's remainder)."""
    b = np.array([values[k:] + values[:k] for k in range(rows)], dtype=float).reshape(rows, len(values))
    fmt = ss.Format(Dense(SparseBand(Element(fill))))
    a = ss.lower("a[i, j] = b[i, j]", strategy="looplets", a=fmt, b=b)(b=b)
    np.testing.assert_array_equal(a.to_numpy(), b)
    assert a.nnz == Tensor.from_numpy(b, fmt).nnz


def test_a_hash_output_inserts_a_key_only_for_a_value_not_the_fill():
    """Columns accumulated into rows of SparseHash in any order: an entry whose first write is the
    fill is no key (nor one a later write of the fill makes); one a later write makes is."""
    A = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [2.0, -2.0, 0.0], [float("nan"), 0.0, 0.0]])
    fmt = ss.Format(Dense(SparseHash(Element(0.0))))
    want = A.T.copy()
    y = ss.lower(transpose, a=fmt, A=A)(A=A)
    np.testing.assert_array_equal(y.to_numpy(), want)
    assert y.nnz == Tensor.from_numpy(want, fmt).nnz == 4


@loop_program
def transpose(a, A):
    for i in _:
        for j in _:
            a[j, i] = A[i, j]
