"""SparseBand as an input of the lattice strategy (issue 29, item 2).

A band's fiber stores the contiguous coordinates ``lo..hi`` (the fill too, where it falls inside),
so its iterator walks positions as a SparseList's does and computes each coordinate from its
position, ``p + (idx[parent] - ofs[parent + 1])`` (:mod:`compiler.lattice.block_iterators`). Each
kernel is checked against the dense oracle (compiler.evaluate), the IR interpreter and a
bounds-checked build: SpMV, an elementwise sum into CSR, an elementwise product into a dense
output and a diagonal, over matrices whose second level is the band and over band vectors.
"""

from functools import partial

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.errors import StrategyError
from compiler.format import Format, csr, dense, sparse_vector
from compiler.levels import Dense, Element, RunList, SparseBand, SparseList
from compiler.testing import check_lowered, random_sparse


def band_matrix(a, fill=0.0):
    return Tensor.from_numpy(a, Format(Dense(SparseBand(Element(fill)))))


def band_vector(v, fill=0.0):
    return Tensor.from_numpy(v, Format(SparseBand(Element(fill))))


#: program -> (the output's format for a fill, whether it reads a band matrix A and another
#: matrix B, or a band vector v and another vector w; square: whether A must be square)
MATRIX = {
    "y[i] = A[i, j] * x[j]": None,
    "C[i, j] = A[i, j] + B[i, j]": csr,
    "C[i, j] = A[i, j] * B[i, j]": partial(dense, 2),
    "y[i] = A[i, i]": None,
}
VECTOR = {
    "y[i] = A[i, j] * v[j]": None,
    "z[i] = v[i] + w[i]": sparse_vector,
    "z[i] = v[i] * w[i]": partial(dense, 1),
    "s = v[i] * w[i]": None,
}


def _matrix_case(prog, a, b, x, fill):
    tensors = {"A": band_matrix(a, fill)}
    if "B[" in prog:
        tensors["B"] = Tensor.from_numpy(b, csr(fill))
    if "x[" in prog:
        tensors["x"] = x
    make = MATRIX[prog]
    return check_lowered(prog, out=make(fill) if make else None, checked=True, **tensors)


def _vector_case(prog, a, v, w, fill):
    tensors = {"v": band_vector(v, fill)}
    if "w[" in prog:
        tensors["w"] = Tensor.from_numpy(w, sparse_vector(fill))
    if "A[" in prog:
        tensors["A"] = Tensor.from_numpy(a, csr())
    make = VECTOR[prog]
    return check_lowered(prog, out=make(fill) if make else None, checked=True, **tensors)


A4 = np.array([[0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, 5.0, 6.0]])
B4 = np.array([[1.0, 0.0, 0.0, 4.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [7.0, 0.0, 5.0, 0.0]])


@pytest.mark.parametrize("prog", MATRIX)
def test_a_band_matrix_against_the_oracle(prog):
    """Row 0 stores a fill inside its band (A[0, 2]), row 1 nothing, the diagonal is partly stored."""
    k = _matrix_case(prog, A4, B4, np.arange(1.0, 5.0), 0.0)
    assert "A1_ofs" in k.c_source and "A1_idx[i] - A1_ofs[i + 1]" in k.c_source


@pytest.mark.parametrize("prog", VECTOR)
def test_a_band_vector_against_the_oracle(prog):
    v = np.array([0.0, 0.0, 1.0, 0.0, 2.0, 0.0])
    w = np.array([3.0, 0.0, 4.0, 0.0, 0.0, 5.0])
    k = _vector_case(prog, np.arange(24.0).reshape(4, 6) % 3, v, w, 0.0)
    assert "v0_idx[0] - v0_ofs[1]" in k.c_source


def test_the_band_walks_positions_and_computes_its_coordinates():
    """SpMV over a band row: one counted loop over the row's positions, the column computed from
    the position (no idx array per entry), the value read at the position."""
    A = band_matrix(A4)
    k = lower("y[i] = A[i, j] * x[j]", "lattice", A=A, x=np.ones(4))
    src = k.c_source
    assert "for (int64_t pA1 = A1_ofs[i]; pA1 < A1_ofs[i + 1]; pA1++)" in src
    assert "int64_t j = pA1 + (A1_idx[i] - A1_ofs[i + 1]);" in src and "A_val[pA1]" in src


def test_a_band_diagonal_is_located_not_searched():
    """``A[i, i]`` of a band: the position i would have is computed and tested against the row's
    positions, no bisection."""
    k = _matrix_case("y[i] = A[i, i]", A4, B4, None, 0.0)
    src = k.c_source
    assert "atA1 = i - (A1_idx[i] - A1_ofs[i + 1])" in src and "A1_ofs[i] <= atA1 && atA1 < A1_ofs[i + 1]" in src
    assert "while" not in src
    np.testing.assert_array_equal(k(A=band_matrix(A4)).to_numpy(), np.diagonal(A4))


def test_a_band_above_a_dense_level():
    """``SparseBand(Dense)``: the Dense level's fibers sit at the band's positions."""
    a = A4.T.copy()
    A = Tensor.from_numpy(a, Format(SparseBand(Dense(Element(0.0)))))
    check_lowered("y[i] = A[i, j] * x[j]", checked=True, A=A, x=np.arange(1.0, 5.0))
    check_lowered("C[i, j] = A[i, j] * B[i, j]", out=dense(2), checked=True, A=A, B=Tensor.from_numpy(B4, csr()))


def test_a_hash_under_a_band_counts_the_bands_positions():
    """A SparseHash's capacity counts the keys under every fiber: under a band, the fibers are the
    band's positions, ``ofs`` at the number of rows."""
    from compiler.levels import SparseHash
    h = np.zeros((3, 4, 5))
    h[0, 1, 2], h[0, 2, 0], h[2, 0, 4] = 1.0, 2.0, 3.0
    H = Tensor.from_numpy(h, Format(Dense(SparseBand(SparseHash(Element(0.0))))))
    b = random_sparse((3, 4, 5), 0.5, np.random.default_rng(4))
    k = check_lowered("C[i, j, k] = H[i, j, k] * B[i, j, k]", out=dense(3), checked=True, H=H,
                      B=Tensor.from_numpy(b, Format(Dense(Dense(SparseList(Element(0.0)))))))
    assert "H1_ofs[H0_size]" in k.c_source


def test_a_level_the_lattice_cannot_iterate_is_still_named():
    A = Tensor.from_numpy(A4, Format(Dense(RunList(Element(0.0)))))
    with pytest.raises(StrategyError, match=r"level 1 \(RunList\) of tensor A cannot be iterated coordinate by "
                                            r"coordinate.*strategy='looplets'"):
        lower("y[i] = A[i, j] * x[j]", "lattice", A=A, x=np.ones(4))


FILLS = [0.0, 1.0, float("nan"), float("inf")]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(0, 5), n=st.integers(0, 5), density=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       fill=st.sampled_from(FILLS), prog=st.sampled_from(sorted(MATRIX)), seed=st.integers(0, 2 ** 16))
@example(m=3, n=3, density=0.3, fill=float("nan"), prog="C[i, j] = A[i, j] + B[i, j]", seed=1)
@example(m=4, n=4, density=0.0, fill=1.0, prog="y[i] = A[i, i]", seed=0)
@example(m=2, n=5, density=1.0, fill=float("inf"), prog="y[i] = A[i, j] * x[j]", seed=2)
def test_band_matrix_property(m, n, density, fill, prog, seed):
    """Band rows of every shape (empty rows, all-fill, full), any fill, against the oracle."""
    if "A[i, i]" in prog:
        n = m
    rng = np.random.default_rng(seed)
    a = random_sparse((m, n), density, rng, fill=fill)
    b = random_sparse((m, n), density, rng, fill=fill)
    _matrix_case(prog, a, b, random_sparse((n,), 1.0, rng), fill)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 7), density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), fill=st.sampled_from(FILLS),
       prog=st.sampled_from(sorted(VECTOR)), seed=st.integers(0, 2 ** 16))
@example(n=6, density=0.3, fill=float("nan"), prog="z[i] = v[i] + w[i]", seed=3)
@example(n=0, density=1.0, fill=0.0, prog="s = v[i] * w[i]", seed=0)
def test_band_vector_property(n, density, fill, prog, seed):
    rng = np.random.default_rng(seed)
    v = random_sparse((n,), density, rng, fill=fill)
    w = random_sparse((n,), density, rng, fill=fill)
    _vector_case(prog, random_sparse((3, n), 0.5, rng), v, w, fill)



def test_a_split_of_a_merged_band_loop():
    """A coordinate split of a loop merging a band with a sparse vector: the blocks skip ahead to
    the next coordinate either stores, the band's computed from its position."""
    from compiler.lattice import Schedule
    rng = np.random.default_rng(5)
    v, w = random_sparse((23,), 0.3, rng), random_sparse((23,), 0.3, rng)
    k = check_lowered("z[i] = v[i] + w[i]", Schedule().split("i", "i0", "i1", 4), out=dense(1), checked=True,
                      v=band_vector(v), w=Tensor.from_numpy(w, sparse_vector()))
    assert "v0_idx[0] - v0_ofs[1]" in k.c_source and "i_next" in k.c_source
