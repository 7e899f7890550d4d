"""A permissive read on a later index reaches the fill regions of an earlier level (issue 30): where a
DCSR or COO ``B`` stores no row ``n``, ``B[n, ~l]`` is ``B``'s fill for ``l`` inside ``B``'s columns
and ``missing`` past them, so ``coalesce(B[n, ~l], C[n, ~(l - |B|)])`` (a concat read at an index a
reshape computes) gives ``C``'s value there. The looplets strategy took the whole row as ``B``'s
fill (``(a @ concat([b, c], axis=1)).reshape(2, 4)`` gave 0 where numpy gives ``0 * inf = NaN``,
and a row of a reshaped concat ``B``'s fill where ``C``'s entries are). Against numpy, the dense
oracle and the IR interpreter, across the strategies."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.format import Format, coo, csr, dcsr
from compiler.levels import Dense, Element, SparseBand
from compiler.looplets import compile_program, loop_program

nan, inf = np.nan, np.inf
STRATEGIES = (None, "lattice", "looplets")
#: the parts' formats: rows not stored (DCSR, COO), rows dense with entries listed or a band
PARTS = {
    "dcsr": lambda fill: dcsr(fill=fill),
    "coo": lambda fill: coo(fill=fill),
    "csr": lambda fill: csr(fill=fill),
    "band": lambda fill: Format(Dense(SparseBand(Element(fill)))),
    "dense": lambda fill: Format(Dense(Dense(Element(fill)))),
}


def part(D, fmt, fill=0.0):
    return xp.asarray(Tensor.from_numpy(D, PARTS[fmt](fill)))


def assert_same(got, want):
    got = np.asarray(got)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("out", [None, "coo", "dense"])
def test_a_matmul_by_a_concat_read_at_a_computed_index(strategy, out):
    """The probe's case: ``B = [[0]]`` stores no row, so the loop over ``n`` walked ``B``'s rows only
    and never read ``C = [[inf]]``: 0 where ``0 * inf`` is NaN."""
    Da, Db, Dc = np.zeros((4, 1)), np.array([[0.0]]), np.array([[inf]])
    a = xp.asarray(Tensor.from_numpy(Da, Format(Dense(Dense(Element(0.0))))))
    e = (a @ xp.concat([part(Db, "dcsr"), part(Dc, "band")], axis=1)).reshape(2, 4)
    with np.errstate(invalid="ignore"):
        want = (Da @ np.concatenate([Db, Dc], 1)).reshape(2, 4)
    assert_same(e.compute(strategy=strategy, format=out, checked=True), want)


@pytest.mark.parametrize("first", ["dcsr", "coo"])
@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
def test_a_reshaped_concat_reads_the_next_part_where_a_row_is_not_stored(first, fill):
    """``concat([b, c], axis=1).reshape(2, 2, 2)``: row 0 of ``b`` is all fill (not stored), its
    second half is ``c``'s row; the looplets strategy gave ``b``'s fill over the whole row."""
    Db = np.array([[fill, fill], [1.0, fill]])
    Dc = np.array([[inf, 2.0], [-inf, fill]])
    e = xp.concat([part(Db, first, fill), part(Dc, "band", fill)], axis=1).reshape(2, 2, 2)
    want = np.concatenate([Db, Dc], 1).reshape(2, 2, 2)
    for strategy in STRATEGIES:
        assert_same(e.compute(strategy=strategy, format="dense"), want)


@loop_program
def padded_rows(C, A):
    for i in _:
        for j in _:
            C[i, j] = coalesce(A[i, ~(j - 1)], -5.0)


@pytest.mark.parametrize("fmt", ["dcsr", "coo", "csr"])
@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
def test_a_padded_read_of_rows_not_stored(fmt, fill):
    """``coalesce(A[i, ~(j - 1)], -5)``: column 0 reads past ``A``'s first column (the padding),
    in a row ``A`` stores as in one it does not (there it was ``A``'s fill)."""
    a = np.full((3, 4), fill)
    a[1, 2], a[1, 0] = 2.0, -inf
    A = Tensor.from_numpy(a, PARTS[fmt](fill))
    k = compile_program(padded_rows, C=Tensor.from_numpy(np.zeros((3, 4)), "dense"), A=A)
    want = np.concatenate([np.full((3, 1), -5.0), a[:, :-1]], 1)
    np.testing.assert_array_equal(k(A=A).to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(A=A).to_numpy(), want)


@settings(max_examples=8)   # (each a kernel of seconds, two strategies: 15 were 12 s of the suite)
@given(fmts=st.lists(st.sampled_from(sorted(PARTS)), min_size=2, max_size=3),
       fill=st.sampled_from([0.0, 1.0, nan]), rows=st.integers(1, 3), J=st.sampled_from([1, 2, 3]),
       density=st.sampled_from([0.0, 0.3, 0.7]), seed=st.integers(0, 2 ** 16))
@example(fmts=["dcsr", "band"], fill=0.0, rows=2, J=2, density=0.3, seed=1)
@example(fmts=["coo", "dcsr", "csr"], fill=nan, rows=3, J=3, density=0.0, seed=2)
def test_a_concat_along_columns_split_by_a_reshape(fmts, fill, rows, J, density, seed):
    """Parts of any column count (0 too), rows all fill or not, NaN and ±inf stored, read where a
    reshape splits the concatenated columns into groups of ``J`` (straddling the parts)."""
    rng = np.random.default_rng(seed)
    total = J * int(rng.integers(1, 4))
    cuts = np.sort(rng.integers(0, total + 1, len(fmts) - 1))
    widths = np.diff(np.concatenate([[0], cuts, [total]]))
    parts = []
    for w, fmt in zip(widths, fmts):
        D = np.where(rng.random((rows, w)) < density, rng.choice([2.0, -1.0, nan, inf, -inf], (rows, w)), fill)
        if fmt == "band":   # (one contiguous run of stored entries per row)
            D = np.where(np.arange(w) < rng.integers(0, w + 1), D, fill)
        parts.append((D, fmt))
    want = np.concatenate([D for D, _ in parts], 1).reshape(rows, total // J, J)
    e = xp.concat([part(D, fmt, fill) for D, fmt in parts], axis=1).reshape(rows, total // J, J)
    for strategy in (None, "looplets"):
        assert_same(e.compute(strategy=strategy, format="dense"), want)
