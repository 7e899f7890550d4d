"""Hypersparse kernels: an index of a huge extent that the kernel visits only where an operand
stores a coordinate is renumbered for the call by the coordinates stored (compressible_indices,
and the runtime's _Compression), checked against products accumulated entry by entry; and a
top-level fiber intersected inside an enclosing loop gallops (against the oracle)."""

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.testing import assert_same_storage


def entries(t):
    coords, vals = t.to_coords()
    return {tuple(int(c[n]) for c in coords): float(v) for n, v in enumerate(vals)}


def product_entries(A, B, D=None):
    """``A B (+ D)`` accumulated entry by entry; entries that cancel to 0 are not stored."""
    rows = defaultdict(list)
    for (k, j), b in entries(B).items():
        rows[k].append((j, b))
    acc = defaultdict(float)
    for (i, k), a in entries(A).items():
        for j, b in rows[k]:
            acc[i, j] += a * b
    for key, d in (entries(D).items() if D is not None else ()):
        acc[key] += d
    return {key: v for key, v in acc.items() if v != 0.0}


def hypersparse(rng, shape, nnz, fmt="dcsr", rows=None):
    r = rng.integers(0, shape[0], nnz) if rows is None else rows
    c = rng.integers(0, shape[1], nnz)
    return ss.Tensor.from_coords([r, c], rng.integers(1, 4, nnz).astype(float), shape, fmt)


@pytest.mark.parametrize("options", [{}, {"assembly": "two-phase"}])
def test_spgemm_over_a_trillion_columns_runs_in_a_workspace_of_the_columns_stored(options):
    # a workspace of 2^40 doubles (8 TB) cannot be allocated: the call renumbers j
    rng = np.random.default_rng(1)
    n = 2 ** 40
    A = hypersparse(rng, (n, n), 300)
    ks = A.to_coords()[0][1]
    B = hypersparse(rng, (n, n), 400, rows=np.concatenate([ks, rng.integers(0, n, 100)]))
    k = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B, C="dcsr", options=options)
    assert "j" in k.lowered.compressible
    C = k(A=A, B=B)
    want = product_entries(A, B)
    assert C.shape == (n, n) and entries(C) == want
    assert_same_storage(C, ss.Tensor.from_coords([np.array([i for i, _ in want], dtype=np.int64),
                                                  np.array([j for _, j in want], dtype=np.int64)],
                                                 np.array(list(want.values())), (n, n), "dcsr"))


def test_every_operand_of_the_index_is_renumbered_by_the_union_of_their_coordinates():
    rng = np.random.default_rng(2)
    m, n = 5, 3 * 10 ** 11
    A = hypersparse(rng, (m, n), 20, fmt="csr")
    B = hypersparse(rng, (n, n), 60, rows=np.concatenate([A.to_coords()[0][1], rng.integers(0, n, 40)]))
    D = hypersparse(rng, (m, n), 10, fmt="csr")     # columns of its own, and rows over a dense level
    C = ss.lower("C[i, j] = A[i, k] * B[k, j] + D[i, j]", A=A, B=B, D=D, C="csr")(A=A, B=B, D=D)
    assert entries(C) == product_entries(A, B, D) and C.format == ss.csr()


def test_a_small_extent_is_not_renumbered_and_the_kernel_is_the_same():
    # below COMPRESS_EXTENT (and where the stored coordinates are not few) the call is as before
    rng = np.random.default_rng(3)
    A, B = hypersparse(rng, (50, 60), 200), hypersparse(rng, (60, 70), 300)
    k = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B, C="dcsr")
    inputs = {"A": A, "B": B}
    assert k._plan().compression.apply(inputs) == (inputs, None)
    np.testing.assert_allclose(k(A=A, B=B).to_numpy(), A.to_numpy() @ B.to_numpy())


@pytest.mark.parametrize("program, formats, want", [
    ("C[i, j] = A[i, k] * B[k, j]", {"A": "csr", "B": "csr", "C": "csr"}, ("j",)),
    # B sparse around 1: every j counts (a loop over the universe), so j keeps its extent
    ("C[i, j] = A[i, k] * B[k, j]", {"A": "csr", "B": ss.csr(fill=1.0)}, ()),
    ("y[i] = A[i, j] * x[j]", {"A": "csr", "x": "dense"}, ()),   # no workspace
])
def test_compressible_indices_are_those_a_workspace_spans_and_no_loop_sweeps(program, formats, want):
    fmts = {name: ss.parse_format(f, ndim=2 if name != "x" else 1) for name, f in formats.items()}
    k = ss.lower(program, **fmts)
    assert k.lowered.compressible == want


def test_an_index_read_through_a_dense_level_or_twice_by_one_tensor_is_not_renumbered():
    f = {"A": ss.csr(), "B": ss.csr(), "C": ss.csr()}
    k = ss.lower("C[i, j] = A[i, k] * B[k, j] + A[i, j]", **f)    # A read twice
    assert k._plan().compression is None or all(name != "j" for name, *_ in k._plan().compression.plans)
    k = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=ss.csr(), B=ss.dense(2), C=ss.csr())
    assert k._plan().compression is None


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.sampled_from([2 ** 24, 10 ** 9, 2 ** 50]),
       st.sampled_from(["dcsr", "csr"]), st.integers(0, 2 ** 31))
def test_hypersparse_spgemm_matches_the_products_entry_by_entry(nnz_a, nnz_b, n, out, seed):
    rng = np.random.default_rng(seed)
    m = 7 if out == "csr" else n      # (a CSR output has a dense level of rows)
    A = hypersparse(rng, (m, n), nnz_a, fmt=out)
    ks = A.to_coords()[0][1]
    B = hypersparse(rng, (n, n), nnz_b, rows=np.concatenate([ks, rng.integers(0, n, nnz_b)])[:nnz_b])
    C = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B, C=out)(A=A, B=B)
    assert C.shape == (m, n) and entries(C) == product_entries(A, B)


# --- galloping: a top-level fiber intersected inside an enclosing loop ---------------------------


def test_dcsr_spgemm_gallops_through_bs_rows_and_csr_spgemm_locates_them():
    # A[i, k] * B[k, j]: for each row of A, k meets B's rows; a DCSR B's rows are a sorted list
    # that a plain merge would scan whole for every row of A
    k = ss.lower("C[i, j] = A[i, k] * B[k, j]", A="dcsr", B="dcsr", C="dcsr")
    assert "pB0 = seek_int64(B0_idx, pB0, pB0_end, kA);" in k.c_source   # (the galloping helper's call)
    assert "seek_" not in ss.lower("C[i, j] = A[i, k] * B[k, j]", A="csr", B="csr", C="csr").c_source
    # (a union visits B's rows where A has none: no galloping there)
    assert "seek_" not in ss.lower("C[i, j] = A[i, j] + B[i, j]", A="dcsr", B="dcsr", C="dcsr").c_source


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 12), st.integers(0, 12), st.sampled_from([0.0, 0.1, 0.5, 1.0]),
       st.sampled_from([0.0, 0.1, 0.5, 1.0]), st.sampled_from(["dcsr", "csr"]), st.integers(0, 2 ** 31))
def test_galloping_intersections_match_the_oracle(m, n, da, db, fa, seed):
    rng = np.random.default_rng(seed)
    A = ss.Tensor.from_numpy(np.where(rng.random((m, n)) < da, rng.integers(1, 4, (m, n)), 0.0), fa)
    B = ss.Tensor.from_numpy(np.where(rng.random((n, 6)) < db, rng.integers(1, 4, (n, 6)), 0.0), "dcsr")
    b = ss.Tensor.from_numpy(np.where(rng.random(n) < db, rng.integers(1, 4, n), 0.0), "sparse")
    for program, tensors in (("C[i, j] = A[i, k] * B[k, j]", {"A": A, "B": B}),
                             ("y[i] = A[i, k] * b[k]", {"A": A, "b": b})):
        want, _ = ss.evaluate(program, **tensors)
        k = ss.lower(program, **tensors)
        np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)


def test_an_index_read_as_a_value_is_not_renumbered():
    # C[i, j] = A[i, k] * B[k, j] * j reads j's coordinate: renumbering j by the columns stored
    # multiplied by the column's rank among them (56.0 for a column of 2^30), not by the column
    rng = np.random.default_rng(3)
    for n in (2 ** 20, 2 ** 40):
        A = hypersparse(rng, (n, n), 30)
        ks = A.to_coords()[0][1]
        B = hypersparse(rng, (n, n), 40, rows=np.concatenate([ks, rng.integers(0, n, 10)]))
        k = ss.lower("C[i, j] = A[i, k] * B[k, j] * j", A=A, B=B, C="dcsr")
        assert "j" not in k.lowered.compressible
        if n == 2 ** 40:   # so its workspace spans every column: refused, naming it, as it cannot be allocated
            with pytest.raises(MemoryError, match=r"scratch array w needs B1_size = 1099511627776 float64"):
                k(A=A, B=B)
            continue
        want = {(i, j): v * j for (i, j), v in product_entries(A, B).items() if v * j != 0.0}
        assert entries(k(A=A, B=B)) == pytest.approx(want)
