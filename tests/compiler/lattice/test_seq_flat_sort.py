"""A 3-D column-major flatten into a sparse output whose keys are too many to count (issue 30,
:mod:`compiler.lattice.seqflatsort`): ``xp.permute_dims(a3, (2, 1, 0)).reshape(-1)`` of a tensor of large extents
and few entries. On main its entries were counting-sorted by all indices but the last, a counter per key: 4M of
them for 2000³ (whose flat extent overflows int32), and more than memory for larger extents (4·10^12 for
(2·10^6)³), where the kernel ran out of memory. Past 2¹⁶ keys the entries are merge-sorted by the flat coordinate instead, in a workspace of as many.

Checked against numpy (the entries' flat coordinates, computed from their coordinates: no dense array of such
extents exists) and the IR interpreter, and, for extents just past the bound, against the dense oracle
(``compiler.evaluate``), the CFIR interpreter and numpy, with fills 0/1/NaN, NaN/±inf stored, empty and all-fill
tensors, and by a property.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.lattice.seqflatsort import COUNTED_KEYS
from tests.compiler.lattice.test_seq_colmajor import lowered
from tests.compiler.lattice.test_seq_colmajor_3d import PERMS, program, tensor3

nan, inf = np.nan, np.inf


def few_entries(shape, fmt, n, seed, odd=()):
    """A tensor of ``shape`` with about ``n`` entries at random coordinates (``odd`` the first values): its
    coordinates, values and the Tensor (of ``fmt``)."""
    rng = np.random.default_rng(seed)
    flat = np.unique(rng.integers(0, np.prod(shape, dtype=np.int64), n, dtype=np.int64))
    at = np.unravel_index(flat, shape)
    vals = rng.choice([1.0, -2.0, 3.5], len(flat))
    vals[:len(odd)] = odd[:len(flat)]
    return at, vals, Tensor.from_coords(at, vals, shape, fmt)


def sorted_kernel(perm, A, out="sparse", fill=0.0):
    """The flatten of ``A`` by ``perm`` lowered into ``out`` as one kernel whose entries are merge-sorted, not
    counted per key; its kernel and result."""
    k = ss.lower(program(perm), strategy="lattice", A=A, c=ss.parse_format(out, ndim=1, fill=fill))
    (step,) = k.trace.find("loop-order")
    assert "merge-sorted by m" in step.note and k.trace.find("convert") == [], step.note
    # (no counter per key: the only arrays the sort allocates are the entries' and their merge's)
    assert "_count" not in k.c_source and "c_sorted_m" in k.c_source, k.c_source
    got = k(A=A)
    got.validate()
    return k, got


@pytest.mark.parametrize("fmt", ["csf", "coo"])
@pytest.mark.parametrize("perm", [(2, 1, 0), (1, 2, 0), (0, 2, 1)])
@pytest.mark.parametrize("shape", [(2000, 2000, 2000), (2 * 10**6,) * 3])
@pytest.mark.parametrize("out", ["sparse", "coo"])
def test_large_extents_and_few_entries(fmt, perm, shape, out):
    # (2000³ overflows int32 and would take 4M counters; (2·10^6)³, 8·10^18 in int64, 4·10^12 of them: 32 TB)
    at, vals, A = few_entries(shape, fmt, 40, 1, odd=(nan, inf, -inf))
    k, got = sorted_kernel(perm, A, out)
    moved = tuple(at[p] for p in perm)
    m = np.ravel_multi_index(moved, tuple(shape[p] for p in perm))
    order = np.argsort(m)
    coords, values = got.to_coords()
    np.testing.assert_array_equal(coords[0], m[order])
    np.testing.assert_array_equal(values, vals[order])
    coords, values = k.interpret(A=A).to_coords()
    np.testing.assert_array_equal(coords[0], m[order])
    np.testing.assert_array_equal(values, vals[order])


@pytest.mark.parametrize("n", [0, 1])
def test_empty_and_one_entry(n):
    at, vals, A = few_entries((2000, 2000, 2000), "coo", n, 2)
    got = sorted_kernel((2, 1, 0), A)[1]
    coords, values = got.to_coords()
    assert len(values) == n and (n == 0 or coords[0][0] == np.ravel_multi_index(at[::-1], (2000,) * 3))


# (extents just past the bound: the key space |k|·|j| of (2, 300, 300) is 90000 > 2^16, the flat one 180000)
SHAPES = [(2, 300, 300), (1, 260, 260), (3, 300, 250)]


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("density", [0.0, 0.002, 0.005])
def test_fills_and_empty_or_full_operands(fill, density):
    assert 300 * 300 > COUNTED_KEYS
    a, A = tensor3(SHAPES[0], "csf", 3, fill=fill, density=density, odd=(nan, -inf) if density else ())
    got = lowered(program((2, 1, 0)), {"A": A}, "sparse", fill=fill, order=(2, 1, 0))[1]
    np.testing.assert_array_equal(got, np.transpose(a, (2, 1, 0)).reshape(-1))


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["csf", "coo"]), st.sampled_from([(2, 1, 0), (1, 2, 0)]), st.sampled_from([0.0, 1.0, nan]),
       st.sampled_from([0.0, 0.001, 0.01]), st.sampled_from([(), (nan,), (inf, -inf)]), st.sampled_from(SHAPES),
       st.sampled_from(["sparse", "coo"]), st.integers(0, 2**16))
@example("coo", (1, 2, 0), nan, 0.01, (inf, -inf), (3, 300, 250), "coo", 1)
def test_flattens_past_the_bound_by_property(fmt, perm, fill, density, odd, shape, out, seed):
    # ((1, 2, 0)'s keys |j|·|k|; each perm's over 2^16 for these extents)
    a, A = tensor3(shape, fmt, seed, fill=fill, density=density, odd=odd)
    k, got = lowered(program(perm), {"A": A}, out, fill=fill, order=PERMS[perm][1])
    assert "merge-sorted by m" in k.trace.find("loop-order")[0].note
    np.testing.assert_array_equal(got, np.transpose(a, perm).reshape(-1))
