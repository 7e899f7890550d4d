"""An update that leaves the fill in a stored SparseHash entry leaves no entry (compiler.looplets.overwrites'
``updating_stored``, compiler.looplets.stored_fills).

Before, ``y[i] += a[i]`` then ``y[i] += b[i]`` by two loops into a SparseHash, where ``b = -a`` at a key
``a`` stored, kept the key holding an explicit 0 (so did a scatter ``y[I[k]] += v[k]`` whose values at
one coordinate summed to 0, ``y[i] = a[i]`` then ``y[i] += b[i]`` summing to the fill, inf + -inf into a
NaN fill, and an outer-product or Gustavson SpGEMM ``C[i, j] += A[i, k] * B[k, j]`` into Dense(SparseHash),
SparseHash(SparseHash) or SparseList(SparseHash) whose products cancelled, the outer level keeping a
row the cancellations emptied): the values were right, the storage held more than
``Tensor.from_numpy`` (or Finch, or scipy) does. Now the freeze leaves those entries out, and every
hash or SparseList level above leaves out an entry whose fiber they emptied. An update whose entry
no earlier entry into it stored (a row sum, an inner product, ``max`` alone) emits no compaction.
Oracles: numpy, ``Tensor.from_numpy``'s storage, the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.format import Format
from compiler.levels import Dense, Element, SparseHash, SparseList
from compiler.looplets import compile_program, loop_program
from compiler.looplets.gallery import inner, outer

from tests.compiler.looplets.test_looplets_coordinates import at_constant, scatter
from tests.compiler.looplets.test_looplets_inplace import row_sums_into
from tests.compiler.looplets.test_overwrites import matrix_format, vector_format
from tests.compiler.looplets.test_stored_fills import run_both


@loop_program
def plus_twice(y, a, b):
    for i in _:
        y[i] += a[i]
    for i in _:
        y[i] += b[i]


@loop_program
def then_plus(y, a, b):
    for i in _:
        y[i] = a[i]
    for i in _:
        y[i] += b[i]


@loop_program
def then_times(y, a, b):
    for i in _:
        y[i] = a[i]
    for i in _:
        y[i] *= b[i]


@loop_program
def gustavson(C, A, B):
    for i in _:
        for k in _:
            for j in _:
                C[i, j] += A[i, k] * B[k, j]


@loop_program
def by_columns(C, A, B):
    for j in _:
        for k in _:
            for i in _:
                C[i, j] += A[i, k] * B[k, j]


@loop_program
def outer_max(C, A, B):
    for k in _:
        for i in _:
            for j in _:
                C[i, j] <<= max, A[i, k] * B[k, j]


@loop_program
def rows_plus(D, A, B):
    for i in _:
        for j in _:
            D[i, j] = A[i, j]
        for j in _:
            D[i, j] += B[i, j]


@loop_program
def entries_plus(D, A, B):
    for i in _:
        for j in _:
            D[i, j] = A[i, j]
            D[i, j] += B[i, j]


@loop_program
def fibers_plus(D, A, B):
    for i in _:
        for j in _:
            for k in _:
                D[i, j, k] = A[i, j, k]
            for k in _:
                D[i, j, k] += B[i, j, k]


def dense(v):
    return Tensor.from_numpy(np.asarray(v), "dense")


@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan])
def test_updates_that_cancel_leave_no_entry_in_a_hash(fill):
    y = vector_format("hash", fill)
    a = np.array([1.0, 0, 2, 3, np.inf, -0.5, np.nan, 0])
    b = np.array([-1.0, 5, 0, -3, -np.inf, 0.5, 0, 0])
    A, B = Tensor.from_numpy(a, "sparse"), Tensor.from_numpy(b, "sparse")
    # (0 + 1 - 1, 1 + 3 - 3: the fill again; inf - inf: NaN, the fill of a NaN-filled y)
    with np.errstate(invalid="ignore"):
        run_both(compile_program(plus_twice, y=y, a=A, b=B), fill + a + b, a=A, b=B)
        run_both(compile_program(then_plus, y=y, a=A, b=B), a + b, a=A, b=B)
    # (a stored -0.0 is the fill 0 too, as Tensor.from_numpy says: 3 * -0.0 leaves no entry)
    c, d = np.array([3.0, 2, 4, -2]), np.array([-0.0, 0.5, 1, 0.0])
    C, D = Tensor.from_numpy(c, "sparse"), Tensor.from_numpy(d, "sparse", fill=1.0)
    run_both(compile_program(then_times, y=y, a=C, b=D), c * d, a=C, b=D)


@pytest.mark.parametrize("fill", [0.0, 1.0])
def test_a_scatter_or_a_constant_coordinate_summing_to_the_fill_leaves_no_entry(fill):
    I, v = dense([0, 1, 0, 2, 1]), dense([1.0, 2, -1, 3, -2])   # (0: 1 - 1, 1: 2 - 2)
    Y = Tensor.from_numpy(np.full(3, fill), vector_format("hash", fill))
    run_both(compile_program(scatter, y=Y, I=I, x=v), fill + np.array([0.0, 0, 3]), y=Y, I=I, x=v)
    Y3 = Tensor.from_numpy(np.full(3, fill), vector_format("hash", fill))   # (y[2] += x[i])
    x = dense([1.0, -2, 1])
    run_both(compile_program(at_constant, y=Y3, x=x), np.full(3, fill), y=Y3, x=x)


PRODUCTS = [(outer, "dense_hash"), (outer, "hash_hash"), (gustavson, "dense_hash"), (gustavson, "hash_hash"),
            (gustavson, "sparse_hash"), (by_columns, "dense_hash"), (by_columns, "hash_hash")]


@pytest.mark.parametrize("fill", [0.0, 1.0])
@pytest.mark.parametrize("prog, out", PRODUCTS)
def test_products_that_cancel_leave_no_entry(prog, out, fill):
    # (row 1 of the product cancels whole, row 2 at one entry; row 0 is inf, and NaN where inf meets -inf or 0)
    a = np.array([[np.inf, 0, -np.inf], [1, 1, 0], [0, 2, 1]])
    b = np.array([[1.0, 2, 0, 3], [-1, -2, 0, -3], [0, 4, 0, 0]])
    with np.errstate(invalid="ignore"):
        want = fill + a @ b
    A, B = Tensor.from_numpy(a, "csc" if prog is outer else "csr"), Tensor.from_numpy(b, "csr")
    k = compile_program(prog, C=matrix_format(out, fill), A=A, B=B)
    run_both(k, want, A=A, B=B)
    assert "its loop over k updates an entry again" in k.trace.find("stored-fills")[0].after


@pytest.mark.parametrize("out", [Dense(SparseHash(Element(0.0))), SparseHash(SparseHash(Element(0.0)))])
def test_index_notation_products_that_cancel_leave_no_entry(out):
    # (its loops i, k, j update each entry of C once per k)
    a = np.array([[1.0, 1, 0], [0, 2, 1], [0, 0, 3]])
    b = np.array([[1.0, 2, 5], [-1, -2, 0], [2, 4, 0]])
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    k = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B, C=Format(out), strategy="looplets")
    want, _ = ss.evaluate("C[i, j] = A[i, k] * B[k, j]", A=a, B=b)
    run_both(k, want, A=A, B=B)   # (row 1: 2 * -1 + 2, 2 * -2 + 4, 0)


def test_only_updates_that_may_find_their_entry_stored_compact_the_output():
    # (an outer product updates an entry once per k; each entry is located once around the updates
    # of a row sum, of a dot product, of two updates in one iteration; max never comes back to the
    # fill: no stored-fills step, no compaction in the C, and no fill stored either way)
    m = np.array([[1.0, -1, 0], [0, 0, 0], [2, 0, 3], [0, 5, -5]])
    M = Tensor.from_numpy(m, "csr")
    a = np.array([[1.0, 1], [0, 2]])
    b = np.array([[1.0, -2], [-1, 3]])
    # (gallery's inner product reads its B by rows: Bt holds b's transpose)
    A, Ac, B, Bt = (Tensor.from_numpy(x, f) for x, f in ((a, "csr"), (a, "csc"), (b, "csr"), (b.T, "csr")))
    k = compile_program(outer, C=matrix_format("dense_hash", 0.0), A=Ac, B=B)
    assert k.trace.find("stored-fills") and "kept" in k.c_source
    run_both(k, a @ b, A=Ac, B=B)
    cases = [(compile_program(row_sums_into, y=vector_format("hash", 0.0), A=M), m.sum(axis=1), dict(A=M)),
             (compile_program(inner, C=matrix_format("dense_hash", 0.0), A=A, B=Bt), a @ b, dict(A=A, B=Bt)),
             (compile_program(inner, C=matrix_format("hash_hash", 0.0), A=A, B=Bt), a @ b, dict(A=A, B=Bt)),
             (compile_program(entries_plus, D=matrix_format("dense_hash", 0.0), A=A, B=B), a + b, dict(A=A, B=B)),
             (compile_program(outer_max, C=matrix_format("dense_hash", 0.0), A=Ac, B=B),
              np.maximum(0, (a[:, :, None] * b[None]).max(axis=1)), dict(A=Ac, B=B))]
    for k, want, tensors in cases:
        assert not k.trace.find("stored-fills") and "kept" not in k.c_source
        run_both(k, want, **tensors)


@pytest.mark.parametrize("fill", [0.0, np.nan])
@pytest.mark.parametrize("nest", [(SparseList, SparseList, SparseHash), (Dense, SparseList, SparseHash),
                                  (SparseList, SparseHash, SparseHash), (SparseHash, SparseHash, SparseHash)])
def test_fibers_emptied_by_updates_leave_no_entry_above(nest, fill):
    # (fiber (0, 1) comes back to the fill, and all of slice 2: 1 - 1 into the fill 0, inf - inf into
    # NaN; each level above leaves out the entry it emptied, a SparseList's starts moved down with
    # its entries, a SparseList below one renumbered)
    x = 1.0 if fill == 0 else np.inf
    a = np.zeros((3, 3, 2))
    a[0, 0, 0], a[0, 1] = 4.0, [x, -x]
    a[1, 2, 1], a[2, 0], a[2, 2, 1] = np.nan, [x, x], -x
    b = np.zeros_like(a)
    b[0, 1], b[2], b[1, 0, 0], b[1, 2, 0] = -a[0, 1], -a[2], -0.0, -np.inf
    a = np.where(a == 0, fill, a)
    out = Element(fill)
    for level in reversed(nest):
        out = level(out)
    A, B = Tensor.from_numpy(a, "coo", fill=fill), Tensor.from_numpy(b, "coo")
    k = compile_program(fibers_plus, D=Format(out), A=A, B=B)
    with np.errstate(invalid="ignore"):
        run_both(k, a + b, A=A, B=B)


def small_ints(shape, density, rng):
    """Whole numbers, so that sums cancel exactly in any order."""
    return np.where(rng.random(shape) < density, rng.integers(1, 4, shape) * rng.choice([-1.0, 1.0], shape), 0.0)


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(0, 4), m=st.integers(0, 4), half=st.integers(0, 2), density=st.sampled_from([0.0, 0.5, 1.0]),
       fill=st.sampled_from([0.0, 1.0, np.nan]), out=st.sampled_from(["dense_hash", "hash_hash", "sparse_hash"]),
       prog=st.sampled_from(["rows_plus", "gustavson"]), special=st.sampled_from([None, np.nan, np.inf, -np.inf]),
       seed=st.integers(0, 2 ** 16))
def test_updates_store_what_from_numpy_does(n, m, half, density, fill, out, prog, special, seed):
    rng = np.random.default_rng(seed)
    if prog == "rows_plus":
        # (D = A, then D += B: where B is the fill less A the entry comes back to the fill; into a NaN
        # fill, inf - inf does)
        a = small_ints((n, m), density, rng)
        if fill != fill:
            a = np.where(rng.random(a.shape) < 0.5, a * np.inf, a)
        b = np.where(rng.random(a.shape) < 0.5, (fill - a) if fill == fill else -a, small_ints((n, m), 0.3, rng))
        if special is not None and a.size:
            a.flat[rng.integers(a.size)] = special
        a = np.where(a == 0, fill, a)
        A, B = Tensor.from_numpy(a, "csr", fill=fill), Tensor.from_numpy(b, "csr")
        want = a + b
    else:
        # (B's lower rows are its upper ones negated, so a row of A equal in both halves cancels)
        p = small_ints((half, m), density, rng)
        left = small_ints((n, half), density, rng)
        a = np.hstack([left, np.where(rng.random((n, 1)) < 0.5, left, small_ints((n, half), density, rng))])
        b = np.vstack([p, -p])
        if special is not None and b.size:
            b.flat[rng.integers(b.size)] = special
        A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
        with np.errstate(invalid="ignore"):
            want = fill + a @ b
    k = compile_program(rows_plus if prog == "rows_plus" else gustavson, **{"D" if prog == "rows_plus" else "C":
                                                                          matrix_format(out, fill)}, A=A, B=B)
    with np.errstate(invalid="ignore"):
        run_both(k, want, A=A, B=B)
