"""A 3-D column-major flatten into a sparse output (issue 30, :mod:`compiler.lattice.seqflatsort`):
``xp.permute_dims(a3, (2, 1, 0)).reshape(-1)``, its entries sorted by the flat coordinate in a workspace of as
many, by counting their keys (all indices but the last) where those are at most COUNTED_SPAN (8) times the
entries, else by a merge sort, the kernel choosing at run time. Before, its entries were counting-sorted per key
(4M counters for 2000³, whose flat extent overflows int32, and more than memory for larger extents, 4·10^12 for
(2·10^6)³), then, past 2¹⁶ keys, merge-sorted whatever the entries, the choice fixed at compile time: a kernel of
more keys merge-sorted a tensor whose entries filled them, and one of fewer kept a counter per key for a few.

Counted, the loops run twice more (each key's entries counted, then each entry placed at its key's next slot): the
workspace of the entries and the counters are all the scratch, the flat coordinates and counts in int32 where the
flat extent fits, the merge's scratch copy allocated where it merges only. Before, the counting sort placed the
entries in the loops' order, then into a scratch copy: four arrays of the entries, whose fresh pages faulted at
each call where glibc returned them to the system (100³ at 5%: 557 page faults a call, 303 now).

Checked against numpy (the entries' flat coordinates, computed from their coordinates: no dense array of such
extents exists) and the IR interpreter, and, for small extents, against the dense oracle (``compiler.evaluate``),
the CFIR interpreter and numpy, with fills 0/1/NaN, NaN/±inf/-0.0 stored, empty and all-fill tensors, inputs
taking each branch of one kernel, and by a property.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.imperative.sorting import COUNTED_SPAN
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


def keys_of(perm, shape) -> int:
    """The keys of the flatten of a tensor of ``shape`` by ``perm``: the flat coordinates of all its indices but
    the last."""
    return int(np.prod([shape[p] for p in perm[:-1]], dtype=np.int64))


def branch(perm, A) -> str:
    """The sort the kernel of the flatten of ``A`` by ``perm`` takes for its entries (``A``'s, all stored)."""
    return "counted" if keys_of(perm, A.shape) <= COUNTED_SPAN * A.nnz else "merged"


def sorted_kernel(perm, A, out="sparse", fill=0.0):
    """The flatten of ``A`` by ``perm`` lowered into ``out`` as one kernel whose entries are sorted in a workspace of
    as many, counted or merged as the kernel finds them; its kernel and result."""
    k = ss.lower(program(perm), strategy="lattice", A=A, c=ss.parse_format(out, ndim=1, fill=fill))
    (step,) = k.trace.find("loop-order")
    assert "else merge-sorted by m" in step.note and k.trace.find("convert") == [], step.note
    # (both sorts in the C, the run time choosing: a counter per key only where the keys are at most 8 per entry)
    keys = keys_of(perm, A.shape)
    keys = keys if keys < 2**31 else f"INT64_C({keys})"     # (as C writes a constant past int)
    src = k.c_source
    counted, merged = src.split(f"if ({keys} <= 8 * c_n_entries) {{")[1].split("} else {", 1)
    assert f"c_key_counts = alloc_array({keys}, sizeof *c_key_counts, true);" in counted, src
    assert "// merged by m" in merged and "c_merge_m = alloc_array(" in merged and "c_merge_m" not in counted, src
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
    assert branch(perm, A) == "merged"
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


@pytest.mark.parametrize("fmt", ["csf", "coo"])
@pytest.mark.parametrize("out", ["sparse", "coo"])
def test_few_keys_past_int32_are_counted_in_int64(fmt, out):
    # (A[i, j, k] of 2 x 2 x 2^31 flattened (j, i), then k: 4 keys, each entry's m = (j·2 + i)·2^31 + k past int32)
    perm, shape = (1, 0, 2), (2, 2, 2**31)
    at, vals, A = few_entries(shape, fmt, 12, 4, odd=(nan, -inf, inf))
    assert branch(perm, A) == "counted"
    k, got = sorted_kernel(perm, A, out)
    assert "int64_t *c_sorted_m = " in k.c_source and "int64_t *c_key_counts = " in k.c_source, k.c_source
    m = np.ravel_multi_index(tuple(at[p] for p in perm), tuple(shape[p] for p in perm))
    order = np.argsort(m)
    for result in (got, k.interpret(A=A)):
        coords, values = result.to_coords()
        np.testing.assert_array_equal(coords[0], m[order])
        np.testing.assert_array_equal(values, vals[order])


# (extents past the old bound of 2^16 keys: (2, 300, 300)'s |k|·|j| is 90000, its flat extent 180000)
SHAPES = [(2, 300, 300), (1, 260, 260), (3, 300, 250)]


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("density", [0.0, 0.002, 0.005])
def test_fills_and_empty_or_full_operands(fill, density):
    a, A = tensor3(SHAPES[0], "csf", 3, fill=fill, density=density, odd=(nan, -inf) if density else ())
    assert branch((2, 1, 0), A) == "merged"
    got = lowered(program((2, 1, 0)), {"A": A}, "sparse", fill=fill, order=(2, 1, 0))[1]
    np.testing.assert_array_equal(got, np.transpose(a, (2, 1, 0)).reshape(-1))


@pytest.mark.parametrize("fill, odd", [(0.0, (nan, inf, -inf)), (1.0, (-0.0, nan)), (nan, (-0.0, -inf))])
@pytest.mark.parametrize("perm", [(2, 1, 0), (1, 2, 0), (0, 2, 1)])
@pytest.mark.parametrize("out", ["sparse", "coo"])
def test_one_kernel_counts_or_merges_as_the_entries_fill_the_keys(fill, odd, perm, out):
    # (90 keys, or 30 for (0, 2, 1): A's 2 x 6 x 15 entries at density 0.3, about 54, counted; at 0.01, about 2,
    # merged; none, merged)
    shape, fmt = (2, 6, 15), ss.parse_format("csf", ndim=3, fill=fill)
    want = {}
    for density in (0.3, 0.01, 0.0):
        a, A = tensor3(shape, "csf", 7, fill=fill, density=density, odd=odd if density else ())
        want[branch(perm, A)] = (a, A)
    assert set(want) == {"counted", "merged"}
    kernels = []
    for a, A in want.values():
        k, got = lowered(program(perm), {"A": A}, out, fill=fill, order=PERMS[perm][1])
        # (A as stored: a -0.0 of A's is kept, its sign too)
        flat = np.transpose(A.to_numpy(), perm).reshape(-1)
        np.testing.assert_array_equal(got, np.transpose(a, perm).reshape(-1))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(flat))
        kernels.append(k)
    # (the same C for both: the branch is the run time's)
    assert kernels[0].c_source == kernels[1].c_source
    src = kernels[0].c_source
    assert f"if ({keys_of(perm, shape)} <= 8 * c_n_entries) {{" in src and "// merged by m" in src, src
    # (the flat extent fits int32: so do the workspace's flat coordinates and the counters)
    assert "int32_t *c_sorted_m = " in src and "int32_t *c_key_counts = " in src, src
    counted, merged = want["counted"][1], want["merged"][1]
    k = kernels[0]
    for A in (counted, merged, ss.Tensor.from_numpy(np.full(shape, fill), fmt)):
        np.testing.assert_array_equal(k(A=A).to_numpy(), np.transpose(A.to_numpy(), perm).reshape(-1))


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(["csf", "coo"]), st.sampled_from([(2, 1, 0), (1, 2, 0)]), st.sampled_from([0.0, 1.0, nan]),
       st.sampled_from([0.0, 0.001, 0.01, 0.2]), st.sampled_from([(), (nan,), (inf, -inf), (-0.0,)]),
       st.sampled_from(SHAPES[:1] + [(2, 6, 15), (3, 4, 5)]), st.sampled_from(["sparse", "coo"]),
       st.integers(0, 2**16))
@example("coo", (1, 2, 0), nan, 0.01, (inf, -inf), (2, 300, 300), "coo", 1)
@example("csf", (2, 1, 0), 1.0, 0.2, (-0.0,), (3, 4, 5), "sparse", 2)
def test_flattens_by_property(fmt, perm, fill, density, odd, shape, out, seed):
    a, A = tensor3(shape, fmt, seed, fill=fill, density=density, odd=odd)
    k, got = lowered(program(perm), {"A": A}, out, fill=fill, order=PERMS[perm][1])
    assert "else merge-sorted by m" in k.trace.find("loop-order")[0].note
    np.testing.assert_array_equal(got, np.transpose(a, perm).reshape(-1))
    # (A as stored: a -0.0 beside fill 0.0 is not stored, one beside another fill is, its sign kept)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.transpose(A.to_numpy(), perm).reshape(-1)))
