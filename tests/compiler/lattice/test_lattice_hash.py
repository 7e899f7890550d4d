"""SparseHash in the lattice strategy: located by probing its table in an intersection, iterated
through its sorted view (ordered, so it merges) elsewhere."""

from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.format import Format, csr, dense, sparse_vector
from compiler.imperative import Buffer, Function, Scalar, interpret
from compiler.imperative.ir import Store, Var
from compiler.lattice.iterators import hash_capacity_stmts, hash_ir
from compiler.levels import Dense, Element, SparseHash, SparseList
from compiler.levels.sparse_hash import hash_slot, table_capacity
from compiler.testing import check_lowered as check, random_sparse

rand = partial(random_sparse, hi=5)


def hv(a, fill=0.0):
    """``a`` stored with a SparseHash innermost level (Dense above it for a matrix)."""
    root = SparseHash(Element(fill)) if a.ndim == 1 else Dense(SparseHash(Element(fill)))
    return Tensor.from_numpy(a, Format(root))


# -- the hashing mirrors compiler.levels.sparse_hash ----------------------------------------

@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2 ** 40), min_size=1, max_size=20), st.integers(3, 20))
def test_hash_ir_is_hash_slot(keys, log_cap):
    cap = 2 ** log_cap
    f = Function("h", (Buffer("out", "int64", "inout"), Scalar("k", "int64"), Scalar("cap", "int64")),
                 [Store("out", 0, hash_ir(Var("k"), Var("cap")))])
    # the looplet strategy's copy of the same hashing (kept apart so the strategies stay independent)
    from compiler.looplets.hash_tables import hash_expr
    g = Function("g", f.params, [Store("out", 0, hash_expr(Var("k"), Var("cap")))])
    for key in keys:
        got = interpret(f, out=np.zeros(1, np.int64), k=key, cap=cap)["out"][0]
        assert got == hash_slot(key, cap) == interpret(g, out=np.zeros(1, np.int64), k=key, cap=cap)["out"][0]


@pytest.mark.parametrize("nnz", [0, 1, 3, 4, 5, 17, 1000])
def test_capacity_is_table_capacity(nnz):
    f = Function("c", (Buffer("out", "int64", "inout"), Scalar("n", "int64")),
                 hash_capacity_stmts(Var("cap"), Var("n")) + [Store("out", 0, Var("cap"))])
    assert interpret(f, out=np.zeros(1, np.int64), n=nnz)["out"][0] == table_capacity(nnz)


# -- located in intersections ----------------------------------------------------------------

def test_spmv_locates_a_hash_vector():
    rng = np.random.default_rng(1)
    a, x = rand((8, 30), 0.3, rng), rand(30, 0.4, rng)
    A = Tensor.from_numpy(a, csr(), name="A")
    k = check("y[i] = A[i, j] * x[j]", A=A, x=hv(x))
    src = k.c_source
    assert "x0_tbl[slotx0]" in src and "x0_idx" not in src      # probed, not iterated
    assert "for (int64_t pA1 = A1_pos[i]" in src                # A drives the loop
    np.testing.assert_allclose(k(A=A, x=hv(x)).to_numpy(), sp.csr_matrix(a) @ x)
    assert "x0 (SparseHash) located by probing its hash table" in k.trace.find("lower")[0].note


def test_elementwise_intersection_with_a_hash_matrix():
    rng = np.random.default_rng(2)
    a, h = rand((7, 9), 0.4, rng), rand((7, 9), 0.4, rng)
    A = Tensor.from_numpy(a, csr(), name="A")
    k = check("C[i, j] = A[i, j] * H[i, j]", out=csr(), A=A, H=hv(h))
    assert "H1_tbl" in k.c_source and "H1_idx" not in k.c_source
    got = k(A=A, H=hv(h))
    ref = sp.csr_matrix(a).multiply(sp.csr_matrix(h)).tocsr()
    ref.sort_indices()
    np.testing.assert_array_equal(got.levels[1].pos, ref.indptr)
    np.testing.assert_array_equal(got.levels[1].idx, ref.indices)
    np.testing.assert_allclose(got.vals, ref.data)


def test_hash_under_a_sparse_list():
    # the key of (fiber p, coordinate j) is p * size + j, p the SparseList position; the
    # table's capacity counts the keys under every stored row
    rng = np.random.default_rng(3)
    a, h = rand((6, 9), 0.5, rng), rand((6, 9), 0.5, rng)
    h[2] = 0
    H = Tensor.from_numpy(h, Format(SparseList(SparseHash(Element(0.0)))), name="H")
    k = check("C[i, j] = A[i, j] * H[i, j]", out=dense(2), A=Tensor.from_numpy(a, csr(), name="A"), H=H)
    assert "pH0 * H1_size + j" in k.c_source and "H1_pos[H0_pos[1]]" in k.c_source


def test_large_coordinates_and_collisions():
    # keys past 2^13 and 2^29 (the shifts of the hash), and a table half full (probing)
    n = 2 ** 30 + 5
    rows = np.array([0, 0, 0, 1, 1, 1])
    cols = np.array([3, 2 ** 13 + 1, 2 ** 29 + 7, 5, 2 ** 13 + 1, 2 ** 30 + 1])
    h = sp.csr_matrix((np.arange(1.0, 7.0), (rows, cols)), shape=(2, n))
    a = sp.csr_matrix((np.array([2.0, 3.0, 4.0, 5.0]), (np.array([0, 0, 1, 1]),
                                                        np.array([2 ** 13 + 1, 2 ** 29 + 7, 6, 2 ** 30 + 1]))),
                      shape=(2, n))
    H = Tensor.from_scipy(h, Format(Dense(SparseHash(Element(0.0)))), name="H")
    A = Tensor.from_scipy(a, csr(), name="A")
    k = lower("C[i, j] = A[i, j] * H[i, j]", A=A, H=H, C=csr())
    assert "H1_tbl" in k.c_source
    for r in (k(A=A, H=H), k.interpret(A=A, H=H)):
        assert r.levels[1].pos.tolist() == [0, 2, 3]
        assert r.levels[1].idx.tolist() == [2 ** 13 + 1, 2 ** 29 + 7, 2 ** 30 + 1]
        assert r.vals.tolist() == [4.0, 9.0, 30.0]


# -- iterated through the sorted view --------------------------------------------------------

def test_union_iterates_the_sorted_view():
    rng = np.random.default_rng(4)
    x, y = rand(25, 0.3, rng), rand(25, 0.3, rng)
    k = check("a[i] = b[i] + c[i]", out=sparse_vector(), b=hv(x), c=Tensor.from_numpy(y, sparse_vector()))
    src = k.c_source
    assert "b0_idx[pb0]" in src and "b_val[b0_ptr[pb0]]" in src and "b0_tbl" not in src
    r = k(b=hv(x), c=Tensor.from_numpy(y, sparse_vector()))
    assert r.levels[0].idx.tolist() == sorted(r.levels[0].idx.tolist())   # merged in order


def test_hash_alone_is_iterated():
    rng = np.random.default_rng(5)
    h = rand((5, 8), 0.4, rng)
    k = check("s[i] = H[i, j]", H=hv(h))
    assert "H1_ptr" in k.c_source and "H1_tbl" not in k.c_source


def test_two_hashes_one_drives():
    rng = np.random.default_rng(6)
    x, y = rand(30, 0.4, rng), rand(30, 0.4, rng)
    k = check("a[i] = b[i] * c[i]", b=hv(x), c=hv(y))
    assert k.c_source.count("_tbl[slot") >= 1 and ("b0_ptr" in k.c_source or "c0_ptr" in k.c_source)


def test_nonzero_fill():
    rng = np.random.default_rng(7)
    x, y = rand(12, 0.5, rng, fill=1.0), rand(12, 0.5, rng)
    check("a[i] = b[i] * c[i]", b=hv(x, fill=1.0), c=Tensor.from_numpy(y, sparse_vector()))
    check("a[i] = b[i] + c[i]", b=hv(x, fill=1.0), c=Tensor.from_numpy(y, sparse_vector()))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 6), st.integers(0, 12), st.floats(0.0, 1.0), st.integers(0, 2 ** 16),
       st.sampled_from(["C[i, j] = A[i, j] * H[i, j]", "C[i, j] = A[i, j] + H[i, j]",
                        "y[i] = A[i, j] * x[j]"]))
def test_property_against_the_oracle(m, n, density, seed, prog):
    rng = np.random.default_rng(seed)
    a = rand((m, n), density, rng)
    A = Tensor.from_numpy(a, csr(), name="A")
    if prog.startswith("y"):
        x = rand(n, density, rng)
        check(prog, A=A, x=hv(x))
        return
    check(prog, out=csr(), A=A, H=hv(rand((m, n), density, rng)))


@pytest.mark.parametrize("prog", ["y[i] = H[i, j] * x[j]", "y[i] = H[i, j] * x[j] * b[i]",
                                  "C[i, j] = H[i, j] + A[i, j]"])
def test_hash_above_a_sparse_list(prog):
    # the rows in a hash table: the child (SparseList) fiber of a row is ptr[p] when iterated,
    # the probed position when located
    rng = np.random.default_rng(8)
    h, a = rand((7, 6), 0.4, rng), rand((7, 6), 0.4, rng)
    h[3] = 0
    H = Tensor.from_numpy(h, Format(SparseHash(SparseList(Element(0.0)))), name="H")
    tensors = {"H": H, "x": rng.random(6), "b": Tensor.from_numpy(rand(7, 0.5, rng), sparse_vector(), name="b"),
               "A": Tensor.from_numpy(a, csr(), name="A")}
    check(prog, out=csr() if prog.startswith("C") else None, **{k: v for k, v in tensors.items() if f"{k}[" in prog})


def test_a_threaded_csr_output_probes_a_hash_operand():
    # the table's capacity is computed at the kernel's start; the threaded two-phase kernel
    # was assembled before the lowering asked for it (z0_cap undeclared)
    from compiler.lattice import Schedule
    rng = np.random.default_rng(3)
    a, z = rand((9, 12), 0.4, rng), rand(12, 0.5, rng)
    A = Tensor.from_numpy(a, csr(), name="A")
    k = check("C[i, j] = A[i, j] * z[j]", Schedule().parallelize("i"), out=csr(), checked=True, A=A, z=hv(z))
    assert "int64_t z0_cap" in k.c_source and "#pragma omp parallel for" in k.c_source
    np.testing.assert_allclose(k(A=A, z=hv(z)).to_numpy(), a * z)
