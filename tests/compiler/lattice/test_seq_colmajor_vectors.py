"""A sparse vector beside a column-major flatten (issue 30): ``a.T.reshape(-1) * x`` and ``+ x`` with ``x`` a
SparseList or COO vector, ``c[m] = collapse(A[i, j], (j, i) -> m) * x[m]``. The loops run ``A``'s order ``(i,
j)``; ``x`` read at ``m = j·I + i`` would be searched for each ``i`` in every group ``j``, refused on main. Its
entries are re-sorted by ``i`` into sparse rows first (a counting sort: :mod:`compiler.lattice.seqcolmajor`,
:class:`~compiler.lattice.seqsumrows.RowBuckets`), which the loops walk beside ``A``'s rows as stored.

Each case against the dense oracle (``compiler.evaluate``), numpy, the IR interpreter and the CFIR interpreter of
the statement with its collapse undone (which searches ``x``): CSR/COO/DCSR/dense ``A``, dense and sparse
outputs, fills 0/1/NaN, NaN/±inf stored, empty and all-fill vectors, by a property; the array form with no
``retry``, ``materialize`` or ``convert`` step.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, evaluate
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand
from tests.compiler.lattice.test_seq_colmajor import lowered, matrix

nan, inf = np.nan, np.inf


def vector(n, fmt, seed, fill=0.0, density=0.5, odd=()):
    x = operand(n, "dense", seed, density=density, fill=fill, odd=odd)[0]
    return x, Tensor.from_numpy(x, fmt, fill=fill)


def resorted(program, A, X, out, fill):
    """``program`` over ``A`` and ``X`` lowered as one kernel, checked by
    :func:`~tests.compiler.lattice.test_seq_colmajor.lowered`, that re-sorted a sparse ``A`` by column (its loops
    then in ``m``'s order, the output appended as it comes, not sorted) or, a dense ``A`` (whose every entry a
    sort would place), ``X`` by row; its kernel and result."""
    by_columns = not all(lv.located_by_coordinate for lv in A.format.levels)
    k, got = lowered(program, {"A": A, "x": X}, out, fill=fill, order=(0, 1) if by_columns else (1, 0))
    (step,) = k.trace.find("loop-order")
    into = "re-sorted by j into the sparse rows of w[j, i]" if by_columns else \
        "re-sorted by i into the sparse rows of w[i, j]"
    assert step.data["resorted"] == ["w"] and into in step.note, step.note
    # (one counting sort: A's, or x's and the result's)
    assert k.c_source.count("phase 1") == 1 + (not by_columns and out is not None), k.c_source
    return k, got


@pytest.mark.parametrize("xfmt", ["sparse", "coo"])
@pytest.mark.parametrize("afmt", ["csr", "coo", "dcsr", "dense"])
@pytest.mark.parametrize("op", ["*", "+"])
@pytest.mark.parametrize("out", [None, "sparse"])
def test_a_sparse_vector_beside_it_is_re_sorted_into_rows(xfmt, afmt, op, out):
    a, A = matrix((4, 5), afmt, 1, odd=(nan, inf, -inf))
    x, X = vector(20, xfmt, 2, odd=(-inf, 0.0, nan))
    program = f"c[m] = collapse(A[i, j], (j, i) -> m) {op} x[m]"
    with np.errstate(invalid="ignore"):
        want = a.T.reshape(-1) * x if op == "*" else a.T.reshape(-1) + x
    k, got = resorted(program, A, X, out, 0.0)
    np.testing.assert_array_equal(got, want)
    # (A counted per column j, placed, then walked column by column beside x's groups, or x per row i beside a
    # dense A's rows: no search of x's groups, no row sort)
    count = "w_next[i] += 1;" if afmt == "dense" else "w_next[j] += 1;"
    assert count in k.c_source and "seek(" not in k.c_source and "w_row" not in k.c_source, k.c_source


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("density", [0.0, 0.4, 1.0])
@pytest.mark.parametrize("op", ["*", "+"])
@pytest.mark.parametrize("out", [None, "sparse"])
def test_fills_and_empty_or_full_vectors(fill, density, op, out):
    # (a vector of the fill only, one storing every entry; the result's fill what the oracle says)
    a, A = matrix((3, 4), "csr", 3, fill=fill, odd=(nan, -inf))
    x, X = vector(12, "sparse", 4, fill=fill, density=density, odd=(inf, nan) if density else ())
    program = f"c[m] = collapse(A[i, j], (j, i) -> m) {op} x[m]"
    with np.errstate(invalid="ignore"):
        want = evaluate(program, A=A, x=X)
    got = resorted(program, A, X, out, float(want[1]))[1]
    np.testing.assert_array_equal(got, want[0])


def test_beside_a_dense_vector_and_another_flatten():
    # (both flattens re-sorted by column, the vectors walked as stored in m's order)
    a, A = matrix((3, 4), "csr", 5, odd=(inf,))
    b, B = matrix((3, 4), "coo", 6)
    x, X = vector(12, "sparse", 7, odd=(nan,))
    d = np.arange(12.0)
    program = "c[m] = (collapse(A[i, j], (j, i) -> m) + collapse(B[k, l], (l, k) -> m)) * x[m] + d[m]"
    tensors = {"A": A, "B": B, "x": X, "d": Tensor.from_numpy(d, "dense")}
    for out in (None, "sparse"):
        k, got = lowered(program, tensors, out, order=(0, 1))
        np.testing.assert_array_equal(got, ((a + b).T.reshape(-1) * x) + d)
        assert k.trace.find("loop-order")[0].data["resorted"] == ["w", "w2"]


@pytest.mark.parametrize("shape", [(0, 3), (0, 0), (3, 0), (1, 1), (4, 1)])
@pytest.mark.parametrize("op", ["*", "+"])
def test_empty_extents(shape, op):
    # (no rows, (0, 3): the sequences split no vector into groups of 0, and x, of extent 0, holds no entry: read
    # as its fill, refused on main)
    a = np.ones(shape)
    x = np.ones(a.size)
    program = f"c[m] = collapse(A[i, j], (j, i) -> m) {op} x[m]"
    A, X = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(x, "sparse")
    if shape[0] == 0:
        # (A flattened alone, its loops in its order)
        k, got = lowered(program, {"A": A, "x": X}, "sparse")
        assert "read as its fill" in k.trace.find("loop-order")[0].note
    else:
        got = resorted(program, A, X, "sparse", 0.0)[1]
    np.testing.assert_array_equal(got, a.T.reshape(-1) * x if op == "*" else a.T.reshape(-1) + x)


@pytest.mark.parametrize("case", ["times", "plus"])
@pytest.mark.parametrize("xfmt", ["sparse", "coo"])
def test_the_array_form_is_one_lattice_kernel(case, xfmt):
    a, A = operand((4, 3), "csr", 8, odd=(nan, inf))
    x, X = operand(12, xfmt, 9, odd=(-inf,))
    with np.errstate(invalid="ignore"):     # (inf * 0: NaN, as numpy says)
        expr, want = (A.T.reshape(-1) * X, a.T.reshape(-1) * x) if case == "times" else \
            (A.T.reshape(-1) + X, a.T.reshape(-1) + x)
    for out in (None, "dense"):
        kernel = one_lattice_kernel(expr, want, out)
        stages = kernel.trace.stages()
        assert not {"retry", "materialize", "convert"} & set(stages), stages
        assert any("re-sorted by" in s.note for s in kernel.trace.find("loop-order"))


@settings(max_examples=7, deadline=None)
@given(st.sampled_from(["csr", "coo", "dcsr", "dense"]), st.sampled_from(["sparse", "coo"]),
       st.sampled_from([0.0, 0.0, 1.0, nan]), st.sampled_from([0.0, 0.4, 1.0]), st.sampled_from([0.0, 0.3, 1.0]),
       st.sampled_from([(), (nan,), (inf, -inf)]), st.sampled_from([(1, 4), (4, 1), (2, 3), (3, 3)]),
       st.sampled_from([None, "sparse", "coo"]), st.sampled_from(["*", "+", "-"]), st.integers(0, 2**16))
@example("dcsr", "coo", nan, 0.4, 1.0, (inf, -inf), (3, 3), "coo", "+", 1)
@example("dense", "sparse", 1.0, 1.0, 0.0, (nan,), (1, 4), "sparse", "*", 2)
def test_sparse_vectors_beside_column_major_flattens_by_property(afmt, xfmt, fill, adensity, xdensity, odd, shape,
                                                                 out, op, seed):
    a, A = matrix(shape, afmt, seed, fill=fill, density=adensity, odd=odd)
    x, X = vector(a.size, xfmt, seed + 1, fill=fill, density=xdensity, odd=odd[::-1])
    program = f"c[m] = collapse(A[i, j], (j, i) -> m) {op} x[m]"
    with np.errstate(invalid="ignore"):
        want = evaluate(program, A=A, x=X)
    resorted(program, A, X, out, float(want[1]))


def test_given_no_strategy_the_lattice_lowers_it():
    a, A = matrix((3, 4), "csr", 10)
    x, X = vector(12, "sparse", 11)
    k = ss.lower("c[m] = collapse(A[i, j], (j, i) -> m) * x[m]", A=A, x=X)
    assert k.strategy == "lattice"
    np.testing.assert_array_equal(k(A=A, x=X).to_numpy(), a.T.reshape(-1) * x)


@pytest.mark.parametrize("xfmt", ["sparse", "coo"])
@pytest.mark.parametrize("op", ["*", "+"])
def test_room_for_every_entry_is_reserved_up_front(xfmt, op):
    # (the loop around each store walks stored entries only: c takes at most A's and x's, room for them all grown
    # once, and no append checks for room, which made + x 1.16x scipy's time)
    a, A = matrix((4, 5), "csr", 12, odd=(nan, inf, -inf))
    x, X = vector(20, xfmt, 13, odd=(-inf, 0.0, nan))
    k, got = resorted(f"c[m] = collapse(A[i, j], (j, i) -> m) {op} x[m]", A, X, "sparse", 0.0)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got, a.T.reshape(-1) * x if op == "*" else a.T.reshape(-1) + x)
    assert "no append checks for room" in k.trace.find("loop-order")[0].note
    assert "pc0 + 1, sizeof" not in k.c_source and "the loops grow it as they go" not in k.c_source, k.c_source
    assert k.c_source.count("return KERNEL_OUT_OF_MEMORY;") >= 2, k.c_source      # (the room grown for sure)


@pytest.mark.parametrize("case", ["a literal", "a dense vector", "runs"])
def test_loops_walking_more_than_stored_entries_check_for_room(case):
    # (a literal added into an output of fill 0 takes every coordinate, a dense d beside, d's, and a run of x each
    # of the coordinates it covers: more than the inputs store; each append checks for room)
    a, A = matrix((3, 4), "csr", 14, odd=(nan,))
    x, X = vector(12, "sparse", 15, odd=(inf,))
    if case == "runs":
        x = np.repeat([0.0, 7.0, -inf, 0.0], 3)
        X = Tensor.from_numpy(x, ss.parse_format("SparseRunList(Element(0.0))"))
    tensors, program = {"A": A, "x": X}, "c[m] = collapse(A[i, j], (j, i) -> m) + x[m]"
    if case == "a dense vector":
        tensors["d"], program = Tensor.from_numpy(np.arange(12.0), "dense"), program + " + d[m]"
    else:
        program += " + 1.0"
    k, got = lowered(program, tensors, "sparse", order=(0, 1))
    assert "no append checks for room" not in k.trace.find("loop-order")[0].note
    assert "pc0 + 1, sizeof" in k.c_source, k.c_source
