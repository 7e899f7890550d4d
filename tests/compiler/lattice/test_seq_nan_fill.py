"""Shape operators over operands of fill NaN that store NaN entries explicitly: a sparse output keeps
only the entries that are not the fill (NaN equal to NaN), so its storage is what from_numpy builds,
array by array, in both strategies (issue 30). Before, the lattice kernel's filter was ``v != NaN``,
true for every value, and stored each NaN it copied."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss

NAN = float("nan")


def with_stored_nans(dense: np.ndarray, kind: str, nans) -> ss.Tensor:
    """``dense`` (NaN where empty) in ``kind`` of fill NaN, storing NaN explicitly at ``nans`` too
    (scipy's arrays keep every entry given, shared as they are)."""
    rows, cols = np.nonzero(~np.isnan(dense))
    extra = [(r, c) for r, c in nans if np.isnan(dense[r, c])]
    r = np.concatenate([rows, [e[0] for e in extra]]).astype(np.int64)
    c = np.concatenate([cols, [e[1] for e in extra]]).astype(np.int64)
    v = np.concatenate([dense[rows, cols], np.full(len(extra), NAN)])
    m = sp.coo_array((v, (r, c)), shape=dense.shape)
    m = m.asformat(kind) if kind != "coo" else m
    if kind != "coo":
        m.sort_indices()
    else:
        order = np.lexsort((m.col, m.row))
        m = sp.coo_array((m.data[order], (m.row[order], m.col[order])), shape=dense.shape)
    t = ss.Tensor.from_scipy(m, fill=NAN)
    assert t.nnz == len(v)
    return t


def assert_storage_of_from_numpy(out: ss.Tensor, want: np.ndarray):
    ref = ss.Tensor.from_numpy(want, out.format)
    for got_arrays, ref_arrays in zip(out.level_arrays(), ref.level_arrays()):
        assert set(got_arrays) == set(ref_arrays)
        for name in ref_arrays:
            np.testing.assert_array_equal(got_arrays[name], ref_arrays[name], err_msg=name)
    np.testing.assert_array_equal(out.vals, ref.vals)


D = np.full((5, 4), NAN)
D[0, 1], D[2, 3], D[3, 0], D[4, 2], D[1, 1] = 1.0, -2.0, 0.0, np.inf, 5.0
STORED_NANS = [(0, 0), (2, 1), (4, 3), (3, 3)]

PROGRAMS = {
    "slice": ("C[k, j] = slice(A[i, j], i -> k, (4, -1, -2))", lambda a: a[::-2], "csr"),
    "vstack": ("C[l, j] = concat((A[i, j], A[k, j]), (i, k) -> l)", lambda a: np.vstack([a, a]), "csr"),
    "hstack": ("C[i, l] = concat((A[i, j], A[i, k]), (j, k) -> l)", lambda a: np.hstack([a, a]), "coo"),
    "ravel": ("c[k] = collapse(A[i, j], (i, j) -> k)", lambda a: a.reshape(-1), "sparse_vector"),
    "row": ("c[j] = A[2, j]", lambda a: a[2], "sparse_vector"),
}


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("kind", ["csr", "coo"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_stored_nans_are_dropped_by_shape_operators(strategy, kind, name):
    prog, op, out = PROGRAMS[name]
    A = with_stored_nans(D, kind, STORED_NANS)
    out_fmt = ss.parse_format(out, ndim=op(D).ndim, fill=NAN)
    k = ss.lower(prog, strategy, A=A, **{prog[0]: out_fmt})
    want = op(D)
    got = k(A=A)
    np.testing.assert_array_equal(got.to_numpy(), want)
    assert_storage_of_from_numpy(got, want)
    assert_storage_of_from_numpy(k.interpret(A=A), want)
    oracle, fill = ss.evaluate(prog, A=A)
    np.testing.assert_array_equal(oracle, want)


def test_a_csc_row_slice_into_csc_drops_stored_nans():
    A = with_stored_nans(D, "csc", STORED_NANS)
    k = ss.lower("C[k, j] = slice(A[i, j], i -> k, (0, 5, 2))", "lattice", A=A, C=ss.csc(fill=NAN))
    assert_storage_of_from_numpy(k(A=A), D[::2])


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(0, 5), cols=st.integers(0, 4), kind=st.sampled_from(["csr", "coo"]),
       strategy=st.sampled_from(["lattice", "looplets"]), name=st.sampled_from(sorted(PROGRAMS)),
       seed=st.integers(0, 2 ** 16))
@example(rows=3, cols=4, kind="coo", strategy="lattice", name="vstack", seed=0)
@example(rows=0, cols=2, kind="csr", strategy="lattice", name="slice", seed=1)
def test_nan_fill_storage_by_property(rows, cols, kind, strategy, name, seed):
    prog, op, out = PROGRAMS[name]
    r = np.random.default_rng(seed)
    dense = np.where(r.random((max(rows, 5) if name in ("slice", "row") else rows, cols)) < 0.4,
                     r.choice([1.0, -0.0, np.inf, -2.5], (max(rows, 5) if name in ("slice", "row") else rows, cols)),
                     NAN)
    nans = [(int(i), int(j)) for i, j in zip(*np.nonzero(r.random(dense.shape) < 0.3))]
    A = with_stored_nans(dense, kind, nans)
    want = op(dense)
    k = ss.lower(prog, strategy, A=A, **{prog[0]: ss.parse_format(out, ndim=want.ndim, fill=NAN)})
    got = k(A=A)
    np.testing.assert_array_equal(got.to_numpy(), want)
    assert_storage_of_from_numpy(got, want)
