"""SparseHash: conversion from numpy and scipy and back, the hash table, validation."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.errors import FormatError
from compiler.levels import Dense, Element, SparseDict, SparseHash
from compiler.levels.sparse_hash import build_table, hash_slot, table_capacity

FMT = Dense(SparseHash(Element(0.0)))


def random(shape, density, seed=0):
    rng = np.random.default_rng(seed)
    return np.where(rng.random(shape) < density, rng.random(shape) + 0.5, 0.0)


@pytest.mark.parametrize("shape,density", [((0, 3), 0.5), ((4, 0), 0.5), ((5, 7), 0.0), ((9, 13), 0.3),
                                           ((3, 50), 0.9)])
def test_round_trip_numpy_and_scipy(shape, density):
    M = random(shape, density)
    T = Tensor.from_numpy(M, FMT)
    T.validate()
    np.testing.assert_array_equal(T.to_numpy(), M)
    np.testing.assert_array_equal(T.asformat("csr").to_numpy(), M)
    S = Tensor.from_numpy(sp.csr_matrix(M).toarray(), FMT)
    np.testing.assert_array_equal(S.to_numpy(), M)


def test_locate_finds_every_stored_coordinate_and_nothing_else():
    M = random((6, 11), 0.4, seed=3)
    h = Tensor.from_numpy(M, FMT).levels[1]
    vals = Tensor.from_numpy(M, FMT).leaf.vals
    for p in range(6):
        for i in range(11):
            q = h.locate(p, i)
            assert (q >= 0) == (M[p, i] != 0)
            if q >= 0:
                assert vals[q] == M[p, i]


def test_table_is_at_most_half_full_and_a_power_of_two():
    for n in (0, 1, 4, 5, 100):
        cap = table_capacity(n)
        assert cap >= 8 and cap & (cap - 1) == 0 and 2 * n <= cap < max(16, 4 * n + 1)
    key = np.arange(0, 300, 7)
    tbl = build_table(key)
    assert sorted(tbl[tbl > 0] - 1) == list(range(len(key)))
    assert int(hash_slot(12345, 64)) == (12345 ^ (12345 >> 13) ^ (12345 >> 29)) & 63


def test_sparse_dict_alias():
    assert SparseDict is SparseHash


def test_validation_names_the_problem():
    T = Tensor.from_numpy(random((3, 5), 0.5, seed=1), FMT)
    h = T.levels[1]
    bad_tbl = h.tbl.copy()
    bad_tbl[bad_tbl > 0] = 0
    with pytest.raises(FormatError, match="tbl"):
        Tensor(Dense(SparseHash(T.leaf, 5, h.pos, h.idx, h.ptr, h.key, bad_tbl), 3), shape=(3, 5))
    bad_key = h.key.copy()
    bad_key[0] += 1
    with pytest.raises(FormatError, match="key"):
        Tensor(Dense(SparseHash(T.leaf, 5, h.pos, h.idx, h.ptr, bad_key, h.tbl), 3), shape=(3, 5))
    with pytest.raises(FormatError, match="pos, idx, ptr, key and tbl"):
        SparseHash(Element(0.0), 5, pos=h.pos)


def test_a_negative_table_slot_is_refused():
    # an empty slot must be 0: a negative one passed, and the lattice kernel then probed forever
    T = Tensor.from_numpy(np.array([[0, 2.0, 0], [3.0, 0, 4.0]]), FMT)
    h = T.levels[1]
    tbl = h.tbl.copy()
    tbl[tbl == 0] = -5
    with pytest.raises(FormatError, match=r"H: level 1 \(SparseHash\): tbl\[\d+\]=-5 is negative; a slot holds 0 "
                                          r"\(empty\) or a child position plus one"):
        Tensor(Dense(SparseHash(Element(0.0, T.vals), 3, h.pos, h.idx, h.ptr, h.key, tbl), 2), name="H")


def test_strided_arrays_are_made_contiguous_and_a_fractional_key_is_refused():
    # kernels read level arrays as C arrays: a strided view (a[::2]) raised "must be C-contiguous"
    from compiler import einsum
    T = Tensor.from_numpy(np.array([[0, 2.0, 0], [3.0, 0, 4.0]]), FMT)
    h = T.levels[1]
    every_other = lambda a: np.repeat(a, 2)[::2]  # noqa: E731
    H = Tensor(Dense(SparseHash(Element(0.0, every_other(T.vals)), 3, *map(every_other, (h.pos, h.idx, h.ptr, h.key,
                                                                                         h.tbl))), 2), name="H")
    assert all(a.flags.c_contiguous for a in H.levels[1].arrays().values()) and H.vals.flags.c_contiguous
    np.testing.assert_array_equal(einsum("y[i] = H[i, j] * x[j]", H=H, x=np.ones(3)).to_numpy(), [2.0, 7.0])
    from compiler.errors import DTypeError
    with pytest.raises(DTypeError, match=r"SparseHash key: value 1.5 \(float64\) cannot be stored as int64 exactly"):
        SparseHash(Element(0.0, T.vals), 3, h.pos, h.idx, h.ptr, h.key + 0.5, h.tbl)


def sequential_table(key, cap):
    """Linear probing, one key after another in child-position order (as a kernel inserts)."""
    tbl = [0] * cap
    for q, k in enumerate(key.tolist()):
        h = int(hash_slot(k, cap))
        while tbl[h]:
            h = (h + 1) % cap
        tbl[h] = q + 1
    return tbl


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2 ** 20), unique=True, max_size=200), st.sampled_from([None, 8, 512]),
       st.integers(0, 2 ** 16))
@example([8 * q for q in range(4)] + [1, 2, 3], 8, 0)        # one home slot: a cluster over later homes
@example([7, 15, 23, 0, 31], 8, 0)                          # a cluster wrapping past the last slot
@example([], None, 0)
def test_the_table_is_the_one_sequential_insertion_builds(keys, cap, seed):
    # build_table places the keys alone in their cluster at once and probes the others in order,
    # so a kernel's table (which inserts in order) and Tensor.from_numpy's stay the same
    key = np.array(keys, dtype=np.int64)
    np.random.default_rng(seed).shuffle(key)
    cap = table_capacity(len(key)) if cap is None else max(cap, table_capacity(len(key)))
    assert build_table(key, cap).tolist() == sequential_table(key, cap)
