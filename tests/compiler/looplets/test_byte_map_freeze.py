"""A declared SparseByteMap output lists the slots its writes mark and its freeze sorts that list
(compiler.looplets.lifecycle_lowering's listed freeze), rather than scanning every slot: a BFS
round's frontier of a few vertices among many costs its entries. Checked against numpy and the
IR interpreter, as one fiber and under a Dense level, with writes that cancel to the fill (no
entry), writes to one slot twice, and lists short, long and dense enough to scan."""

import re

import numpy as np
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.format import Format
from compiler.levels import Dense, Element, SparseByteMap, SparseList
from compiler.looplets import compile_program, loop_program

BY_COLUMNS = (1, 0)
COLUMNS = Format(Dense(SparseList(Element(0.0, dtype="float64"))), BY_COLUMNS)


@loop_program
def row_sums(y, A):
    """Each stored column of ``A`` adds into ``y`` at its rows: the slots in the order met."""
    y[...] = 0.0
    for j in _:
        for i in _:
            y[i] += A[i, j]


@loop_program
def column_products(Y, A, B):
    """Gustavson's SpGEMM column by column into ``Dense(SparseByteMap)``: ``Y[:, k] = A B[:, k]``."""
    Y[...] = 0.0
    for k in _:
        for j in _:
            for i in _:
                Y[i, k] += A[i, j] * B[j, k]


def cancelling(rows, cols, density, seed):
    """A matrix whose nonzeros come in pairs ``x, -x`` in some rows (sums to the fill, 0)."""
    rng = np.random.default_rng(seed)
    M = np.where(rng.random((rows, cols)) < density, rng.integers(1, 5, (rows, cols)).astype(float), 0.0)
    for r in range(0, rows, 3):   # (every third row: its entries cancel when its count is even)
        nz = np.flatnonzero(M[r])
        M[r, nz[1::2]] = -M[r, nz[0::2]][:len(nz[1::2])]
    return M


def stored(T):
    level = T.levels[-1]
    return level.pos.tolist(), level.srt.tolist()


def check(kernel, want, **tensors):
    got, interpreted = kernel(**tensors), kernel.interpret(**tensors)
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(interpreted.to_numpy(), want)
    assert stored(got) == stored(interpreted)
    # each fiber lists exactly its nonzeros (a slot summed to the fill is no entry), in order
    pos, srt = stored(got)
    cols = want.reshape(len(pos) - 1, -1) if want.ndim == 1 else want.T
    for f in range(len(pos) - 1):
        assert srt[pos[f]:pos[f + 1]] == np.flatnonzero(cols[f]).tolist()
    assert got.levels[-1].tbl.sum() == len(srt)   # (unmarked: the slots left at the fill)
    return got


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 300), st.integers(1, 12), st.sampled_from([0.0, 0.01, 0.1, 0.5, 1.0]), st.integers(0, 2**31))
@example(1, 1, 0.0, 0)            # no entry
@example(200, 1, 0.3, 5)          # one column: a list of about 60, bit-sorted or merged
@example(4000, 3, 0.004, 1)       # a few entries among many slots: rank-sorted
def test_a_declared_byte_map_vector_sorts_the_slots_it_listed(n, cols, density, seed):
    M = cancelling(n, cols, density, seed)
    A = Tensor.from_scipy(sp.csc_array(M), "csc", name="A").asformat(COLUMNS)
    kernel = compile_program(row_sums, y=SparseByteMap(Element(0.0, dtype="float64")), A=A)
    # (the freeze sorts the list its writes made; the only pass over every slot is the scan of a dense list)
    assert re.search(r"rebuild \w+ in order from the bitmap", kernel.c_source)
    # (each scratch array in the branch that sorts with it: the scan allocates none, the rank sort's is
    # on the stack, so a round of a few entries calls no allocator for its sort)
    freeze = kernel.c_source[kernel.c_source.index("rebuild "):]
    assert "alloc_array" not in kernel.c_source[:kernel.c_source.index("rebuild ")].split("int row_sums(")[1]
    assert re.search(r"by rank.*\n\s*int64_t tmp\w*\[64\];", freeze)
    assert len(re.findall(r"= alloc_array\(", freeze)) == 3   # (the bit sort's two, the merge's one)
    check(kernel, M.sum(axis=1), A=A)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 40), st.integers(1, 15), st.integers(1, 12), st.sampled_from([0.05, 0.2, 0.6]),
       st.integers(0, 2**31))
@example(30, 5, 7, 0.05, 3)
def test_a_declared_dense_of_byte_maps_gives_each_fiber_its_sorted_slots(m, inner, n, density, seed):
    A_ = cancelling(m, inner, density, seed)
    B_ = np.where(np.random.default_rng(seed + 1).random((inner, n)) < density, 1.0, 0.0)
    B_[:, ::4] = 0.0   # (some columns of Y without an entry: their fibers are empty)
    A = Tensor.from_scipy(sp.csc_array(A_), "csc", name="A").asformat(COLUMNS)
    B = Tensor.from_scipy(sp.csc_array(B_), "csc", name="B").asformat(COLUMNS)
    out = Format(Dense(SparseByteMap(Element(0.0, dtype="float64"))), BY_COLUMNS)
    kernel = compile_program(column_products, Y=out, A=A, B=B)
    assert re.search(r"rebuild \w+ in order from the bitmap", kernel.c_source)
    check(kernel, A_ @ B_, A=A, B=B)


@loop_program
def column_sums(y, A):
    """Each column of ``A`` (stored by columns) sums into ``y[j]``: one loop lists the slots in order."""
    y[...] = 0.0
    for j in _:
        for i in _:
            y[j] += A[i, j]


@loop_program
def twice(y, A):
    """Two loops write ``y`` one after the other: the second lists slots after the first's."""
    y[...] = 0.0
    for j in _:
        for i in _:
            y[j] += A[i, j]
    for j in _:
        for i in _:
            y[i] += A[i, j]


@settings(max_examples=4, deadline=None)
@given(st.integers(1, 80), st.integers(1, 8), st.sampled_from([0.0, 0.1, 0.5, 1.0]), st.integers(0, 2**31))
@example(40, 9, 0.3, 2)   # columns that cancel to the fill: listed, then not kept
@example(1, 2, 0.5, 0)    # (fewer rows than columns: its square part has as many of each as rows)
def test_a_byte_map_written_in_its_loops_order_is_not_sorted(n, cols, density, seed):
    # (BFS's pull step writes _F[k] in its loop over k: its freeze scanned the n flags, or sorted)
    M = cancelling(cols, n, density, seed).T   # (n x cols: its columns' entries cancel in pairs)
    A = Tensor.from_scipy(sp.csc_array(M), "csc", name="A").asformat(COLUMNS)
    kernel = compile_program(column_sums, y=SparseByteMap(Element(0.0, dtype="float64")), A=A)
    assert "is in order already: one loop listed each coordinate as it visited it" in kernel.c_source
    assert not re.search(r"rebuild \w+ in order from the bitmap|sort \w+\[0:", kernel.c_source)
    check(kernel, M.sum(axis=0), A=A)
    k = min(n, cols)
    S = M[:k, :k]   # (square: both loops index y)
    A = Tensor.from_scipy(sp.csc_array(S), "csc", name="A").asformat(COLUMNS)
    kernel = compile_program(twice, y=SparseByteMap(Element(0.0, dtype="float64")), A=A)
    assert re.search(r"rebuild \w+ in order from the bitmap", kernel.c_source)
    check(kernel, S.sum(axis=0) + S.sum(axis=1), A=A)
