"""A row slice of a CSR reserves its output's room from the rows it keeps (compiler.kept_rows), in
both strategies: the returned arrays' allocations hold what the slice keeps, not all of A's
entries (which, for every other row of half the matrix, is four times as many). Each result
against scipy's slice."""

import ctypes

import numpy as np
import pytest
import scipy.sparse as sp

import compiler as ss
from compiler.kept_rows import kept_row_entries

try:   # (glibc: the bytes a malloc'ed block holds, at least what was asked for)
    _usable = ctypes.CDLL(None).malloc_usable_size
    _usable.restype, _usable.argtypes = ctypes.c_size_t, [ctypes.c_void_p]
except (OSError, AttributeError):
    _usable = None

A = sp.random(400, 60, density=0.4, format="csr", random_state=np.random.default_rng(3))
A.data += 1.0      # (no stored zero: every kept entry is written)


def allocated(a: np.ndarray) -> int:
    """How many elements the block holding ``a`` (a kernel's growable output) has room for."""
    return _usable(a.ctypes.data) // a.itemsize


@pytest.mark.skipif(_usable is None, reason="needs glibc's malloc_usable_size")
@pytest.mark.parametrize("rows", [(0, 200, 2), (399, -1, -3), (10, 110, 1), (7, 7, 2)])
@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_a_row_slice_reserves_the_entries_of_the_rows_it_keeps(strategy, rows):
    program = f"D[k, i] = slice(A[j, i], j -> k, {rows})"
    t = ss.Tensor.from_scipy(A, name="A")
    k = ss.lower(program, strategy=strategy, A=t, D="csr")
    got = k(A=t)
    want = A[slice(*rows) if rows[1] >= 0 else slice(rows[0], None, rows[2])]
    np.testing.assert_array_equal(got.to_numpy(), want.toarray())
    kept = want.nnz
    # (an empty slice reserves nothing: no hint, no count)
    assert ("loops grow it as they go" in k.c_source) == bool(range(*rows))
    assert kept < A.nnz / 2 or rows == (10, 110, 1)
    idx, val = got.levels[1].idx, got.vals
    assert len(val) == kept
    for arr in (idx, val) if kept else ():
        # room for the kept entries (a block rounds up by a few bytes), not for A's
        assert kept <= allocated(arr) <= kept + 16, (arr.dtype, allocated(arr), kept, A.nnz)


def test_the_lattice_coo_output_of_a_strided_slice_counts_the_kept_rows_too():
    t = ss.Tensor.from_scipy(A, name="A")
    k = ss.lower("D[k, i] = slice(A[j, i], j -> k, (1, 300, 4))", strategy="lattice", A=t, D="coo")
    c = k.c_source
    assert "n_kept += (int64_t)A1_pos[r * 4 + 2] - (int64_t)A1_pos[r * 4 + 1];" in c
    assert "A1_pos[A0_size]" not in c
    np.testing.assert_array_equal(k(A=t).to_numpy(), A[1:300:4].toarray())


def test_a_tensor_read_elsewhere_too_reserves_all_its_entries():
    # (A also read unsliced, D = vstack(A[::2], A): its count stays every entry it stores)
    t = ss.Tensor.from_scipy(A[:100], name="A")
    k = ss.lower("D[l, i] = concat((slice(A[j, i], j -> k, (0, 100, 2)), A[m, i]), (k, m) -> l)",
                 strategy="lattice", A=t, D="csr")
    assert "n_kept" not in k.c_source and "(int64_t)A1_pos[A0_size] >" in k.c_source
    np.testing.assert_array_equal(k(A=t).to_numpy(), sp.vstack([A[0:100:2], A[:100]]).toarray())


def test_the_count_in_ir():
    stmts, n = kept_row_entries("B1_pos", 9, -1, -4, lambda base: base + "_0")
    assert str(n) == "n_kept_0" and len(stmts) == 2
    assert "n_kept_0 += (int64)B1_pos[r_0 * (-4) + 10] - (int64)B1_pos[r_0 * (-4) + 9];" in str(stmts[1])
    assert kept_row_entries("B1_pos", 4, 4, 3, str) == ([], kept_row_entries("B1_pos", 2, 2, 1, str)[1])
