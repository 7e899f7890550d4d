"""A scipy.sparse matrix whose arrays were written malformed after it was built (issue 30): refused
with a FormatError naming the tensor and scipy's array before scipy's own routines read them (on
main, an ``indptr`` entry past the arrays crashed the process in scipy's sort_indices, a CSR's
column index past its extent in the conversion to CSC, a COO's row in the conversion to CSR; a COO
with a short ``col`` raised numpy's broadcast error)."""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import compiler as ss
import compiler.array as xp
from compiler.errors import FormatError

BIG = 10**9
TARGETS = [None, "csr", "csc", "coo", "dcsr"]


def written(make, **arrays):
    """A valid 4x4 matrix of ``make``'s kind with ``arrays`` assigned afterwards (as a user may),
    its flags saying nothing of their order."""
    m = make(np.diag([1.0, 2.0, 0.0, 0.0]))
    for name, value in arrays.items():
        setattr(m, name, np.asarray(value))
    if m.format != "coo":
        m.has_sorted_indices = False
    m.has_canonical_format = False
    return m


MALFORMED = [
    (lambda: written(sp.csr_matrix, indptr=[0, BIG, 2, 2, 2]), "indptr is not non-decreasing: indptr[1]=1000000000 > indptr[2]=2"),
    (lambda: written(sp.csr_array, indptr=[0, -BIG, 2, 2, 2]), "indptr is not non-decreasing"),
    (lambda: written(sp.csr_matrix, indptr=[0, 1, 2, 2, 9]), "indptr[-1]=9 but indices has length 2"),
    (lambda: written(sp.csr_matrix, indptr=[1, 1, 2, 2, 2]), "indptr[0] must be 0"),
    (lambda: written(sp.csr_matrix, indptr=[0, 1, 2]), "indptr has length 3, expected 5"),
    (lambda: written(sp.csr_matrix, indices=[0, BIG]), "indices[1]=1000000000 is out of range [0, 4)"),
    (lambda: written(sp.csc_matrix, indices=[-3, 1]), "indices[0]=-3 is out of range [0, 4)"),
    (lambda: written(sp.csc_array, indptr=[0, BIG, 2, 2, 2]), "indptr[1]=1000000000 > indptr[2]=2"),
    (lambda: written(sp.csr_matrix, indices=[0.0, 1.0]), "indices must be a 1-D integer array, got float64"),
    (lambda: written(sp.csr_matrix, data=[1.0]), "indices has length 2 but data 1"),
    (lambda: written(sp.coo_matrix, row=[0, BIG]), "row[1]=1000000000 is out of range [0, 4)"),
    (lambda: written(sp.coo_array, col=[0, -BIG]), "col[1]=-1000000000 is out of range"),
    (lambda: written(sp.coo_matrix, col=[0]), "row, col and data have lengths 2, 1 and 2"),
    (lambda: written(sp.coo_matrix, data=[1.0]), "row, col and data have lengths 2, 2 and 1"),
    (lambda: written(sp.bsr_matrix, indptr=[0, BIG, 2, 2, 2]), "indptr is not non-decreasing"),
]


@pytest.mark.parametrize("make, says", MALFORMED)
@pytest.mark.parametrize("target", TARGETS)
def test_a_malformed_scipy_matrix_is_refused_naming_it_and_its_array(make, says, target):
    with pytest.raises(FormatError, match=r"^A \(\w+ of shape \(4, 4\)\): ") as err:
        ss.Tensor.from_scipy(make(), format=target, name="A")
    assert says in str(err.value)


@pytest.mark.parametrize("make, says", MALFORMED[:3] + MALFORMED[10:11])
def test_einsum_and_the_array_front_end_refuse_it_too(make, says):
    with pytest.raises(FormatError, match=re.escape(says)):
        ss.einsum("y[i] = A[i, j] * x[j]", A=make(), x=np.ones(4))
    with pytest.raises(FormatError, match=re.escape(says)):
        ss.lower("y[i] = A[i, j] * x[j]", A="csc", x="dense")(A=make(), x=np.ones(4))
    with pytest.raises(FormatError, match=r"^A \(.*" + re.escape(says)):
        (xp.asarray(make(), name="A") @ xp.asarray(np.ones(4))).compute()


def test_unsorted_and_duplicate_entries_are_not_errors():
    m = written(sp.csr_matrix, indices=[3, 1, 1], data=[1.0, 2.0, 4.0], indptr=[0, 3, 3, 3, 3])
    for target in TARGETS:
        np.testing.assert_array_equal(ss.Tensor.from_scipy(m, format=target).to_numpy()[0], [0, 6.0, 0, 1.0])


# -- a property: any written arrays are refused, or read as scipy defines them ------------------------

def expected(kind: str, shape, arrays: dict):
    """The dense matrix ``arrays`` stand for (duplicates summed, as scipy does), or None if they are
    malformed: scipy's rules, written out here independently of the code under test."""
    rows, cols = shape
    out = np.zeros(shape)
    if kind == "coo":
        row, col, data = arrays["row"], arrays["col"], arrays["data"]
        if not len(row) == len(col) == len(data) or np.any((row < 0) | (row >= rows) | (col < 0) | (col >= cols)):
            return None
        np.add.at(out, (row, col), data)
        return out
    indptr, indices, data = arrays["indptr"], arrays["indices"], arrays["data"]
    outer, inner = (rows, cols) if kind == "csr" else (cols, rows)
    if len(indptr) != outer + 1 or indptr[0] != 0 or np.any(np.diff(indptr) < 0) or len(indices) != len(data) or \
            indptr[-1] > len(indices) or np.any((indices[:indptr[-1]] < 0) | (indices[:indptr[-1]] >= inner)):
        return None
    for r in range(outer):
        for p in range(indptr[r], indptr[r + 1]):
            if kind == "csr":
                out[r, indices[p]] += data[p]
            else:
                out[indices[p], r] += data[p]
    return out


@st.composite
def written_matrices(draw):
    kind = draw(st.sampled_from(["csr", "csc", "coo"]))
    shape = (draw(st.integers(0, 4)), draw(st.integers(0, 4)))
    dense = draw(st.lists(st.sampled_from([0.0, 0.0, 1.5, -2.0, np.nan, np.inf]), min_size=shape[0] * shape[1],
                          max_size=shape[0] * shape[1]))
    m = getattr(sp, f"{kind}_matrix")(np.array(dense).reshape(shape))
    names = ["row", "col", "data"] if kind == "coo" else ["indptr", "indices", "data"]
    arrays = {name: np.array(getattr(m, name)) for name in names}
    for _ in range(draw(st.integers(1, 2))):
        name = draw(st.sampled_from(names))
        arr = arrays[name]
        how = draw(st.sampled_from(["set", "shorten", "lengthen"]))
        if how == "set" and len(arr):
            value = draw(st.sampled_from([-1, 0, 1, 2, 3, 4, 5, -BIG, BIG]))
            arr[draw(st.integers(0, len(arr) - 1))] = value if name != "data" else float(value)
        elif how == "shorten" and len(arr):
            arrays[name] = arr[:-1]
        elif how == "lengthen":
            arrays[name] = np.append(arr, arr[:1] if len(arr) else 0).astype(arr.dtype)
    for name, arr in arrays.items():
        setattr(m, name, arr)
    if kind != "coo":
        m.has_sorted_indices = False
    m.has_canonical_format = False
    return m, expected(kind, shape, arrays)


@settings(max_examples=30, deadline=None)
@given(written_matrices(), st.sampled_from(TARGETS))
def test_written_arrays_are_refused_or_read_as_scipy_defines_them(case, target):
    m, want = case
    if want is None:
        with pytest.raises(FormatError, match=r"^A \("):
            ss.Tensor.from_scipy(m, format=target, name="A")
        return
    t = ss.Tensor.from_scipy(m, format=target, name="A")
    np.testing.assert_array_equal(t.to_numpy(), want)
    x = np.arange(1.0, m.shape[1] + 1)
    np.testing.assert_allclose(ss.einsum("y[i] = A[i, j] * x[j]", A=t, x=x).to_numpy(),
                               ss.evaluate("y[i] = A[i, j] * x[j]", A=want, x=x)[0], equal_nan=True)
