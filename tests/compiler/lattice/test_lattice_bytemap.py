"""SparseByteMap in the lattice strategy: iterated alone or in a union, located in an intersection."""

from functools import partial

import numpy as np
import pytest

from compiler import Tensor, lower
from compiler.format import csr, sparse_vector
from compiler.levels import Dense, Element, SparseByteMap
from compiler.testing import check_lowered as check, random_sparse

rand = partial(random_sparse, hi=5)


def bm(a, fill=0.0):
    root = SparseByteMap(Element(fill)) if a.ndim == 1 else Dense(SparseByteMap(Element(fill)))
    return Tensor.from_numpy(a, root)


@pytest.fixture
def vecs():
    rng = np.random.default_rng(0)
    return rand(20, 0.3, rng), rand(20, 0.3, rng), rand(20, 0.3, rng)


def test_intersection_locates_the_bytemap(vecs):
    x, y, _ = vecs
    k = check("a[i] = b[i] * c[i]", b=bm(x), c=Tensor.from_numpy(y, sparse_vector()))
    assert "b0_tbl[i]" in k.c_source and "b0_srt" not in k.c_source   # located, not iterated
    assert "for (int64_t pc0" in k.c_source                           # c drives the loop


def test_union_iterates_the_bytemap(vecs):
    x, y, _ = vecs
    k = check("a[i] = b[i] + c[i]", b=bm(x), c=Tensor.from_numpy(y, sparse_vector()))
    assert "b0_srt" in k.c_source and "b0_tbl" not in k.c_source


def test_union_inside_intersection(vecs):
    x, y, z = vecs
    k = check("a[i] = b[i] * (c[i] + d[i])", b=bm(x), c=Tensor.from_numpy(y, sparse_vector()),
              d=Tensor.from_numpy(z, sparse_vector()))
    assert "b0_tbl" in k.c_source and "b0_srt" not in k.c_source


def test_two_bytemaps_one_drives(vecs):
    x, y, _ = vecs
    k = check("a[i] = b[i] * c[i]", b=bm(x), c=bm(y))
    src = k.c_source
    assert ("b0_srt" in src and "c0_tbl" in src) != ("c0_srt" in src and "b0_tbl" in src)


def test_a_bytemap_that_must_drive_is_iterated(vecs):
    x, _, _ = vecs
    # b * (c + 1): where c is absent the work is b alone, so c cannot drive; b is iterated
    k = check("a[i] = b[i] * (c[i] + 1.0)", b=bm(x), c=Tensor.from_numpy(vecs[1], sparse_vector()))
    assert "b0_srt" in k.c_source


def test_matrices():
    rng = np.random.default_rng(1)
    A, B = rand((7, 11), 0.3, rng), rand((7, 11), 0.3, rng)
    A[2] = 0
    x = rng.random(11)
    check("y[i] = A[i, j] * x[j]", A=bm(A), x=x)
    k = check("y[i] = A[i, j] * x[j]", A=Tensor.from_numpy(A, csr()), x=bm(rand(11, 0.4, rng)))
    assert "x0_tbl" in k.c_source
    check("C[i, j] = A[i, j] * B[i, j]", out=csr(), A=Tensor.from_numpy(A, csr()), B=bm(B))
    check("C[i, j] = A[i, j] + B[i, j]", out=csr(), A=Tensor.from_numpy(A, csr()), B=bm(B))
    check("C[i, j] = A[i, k] * B[k, j]", out=csr(), A=bm(A[:, :7].copy()), B=bm(B))


def test_nonzero_fill_and_stale_values_behind_the_table():
    b = np.array([2.0, 5.0, 2.0, 7.0])
    t = bm(b, fill=2.0)
    c = Tensor.from_numpy(np.array([1.0, 3.0, 0.0, 4.0]), sparse_vector())
    check("a[i] = b[i] * c[i]", b=t, c=c)
    # a value behind an unset table entry is not part of the tensor: the table decides
    lvl = t.levels[0]
    vals = t.vals.copy()
    vals[0] = 99.0
    from dataclasses import replace
    stale = Tensor(replace(lvl, child=replace(lvl.child, vals=vals)), shape=(4,))
    assert stale.to_numpy()[0] == 2.0
    k = lower("a[i] = b[i] * c[i]", b=stale, c=c)
    np.testing.assert_allclose(k(b=stale, c=c).to_numpy(), np.array([2.0, 15.0, 0.0, 28.0]))


def test_a_bytemap_output_is_assembled_by_the_kernel():
    # (it was refused, then built as a SparseList and converted after the call;
    # tests/compiler/lattice/test_lattice_output_formats.py checks every output format)
    b = bm(np.array([1.0, 0.0, 3.0]))
    k = lower("a[i] = b[i] * 2.0", b=b, a=b.format)
    assert not any(s.stage == "convert" for s in k.trace.steps)
    assert any("level 0 (SparseByteMap) is appended in storage order" in s.note for s in k.trace.steps)
    got = k(b=b)
    assert got.format == b.format
    np.testing.assert_array_equal(got.to_numpy(), [2.0, 0.0, 6.0])
