"""Reversed slices of block lists and run lists under the lattice's shape operators (issue 30): ``x[::-1]``,
``x[::-3]``, ``x[n-2:0:-2]`` of a vector stored as a RunList, a SparseRunList or a SparseBlockList, and
``A[:, ::-1]`` of a matrix whose rows are, walk the level from its end, the run or block kept beside the
cursor moved down with it (compiler/lattice/run_iterators.py, block_iterators.py). On main each was read
converted to a SparseList before every call (a ``convert`` step: 27-57 ms at n = 1e6, where the walk takes a
few).

Each kernel is one lattice kernel (no retry, no ``convert``) checked against numpy, the dense oracle
(compiler.evaluate), the IR interpreter and the sequence CFIR's interpreter: runs and blocks touching both
ends, one-element runs and blocks, empty vectors and all-fill ones, fills 0, 1 and NaN with NaN and ±inf
stored, fused with operators around (``x[::-1] * 2 + y``, ``y`` a SparseList), and written into run list
and block list outputs, whose runs come out coalesced as Tensor.from_numpy builds them."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler import array as xp
from compiler.format import Format
from compiler.lattice.seqderive import seq_evaluate
from compiler.levels import Dense, Element, RunList, SparseBlockList, SparseList, SparseRunList
from tests.compiler.lattice.split_kernels import one_lattice_kernel

nan, inf = np.nan, np.inf

LEVELS = [RunList, SparseRunList, SparseBlockList]
FILLS = [0.0, 1.0, nan]


def vectors(fill: float) -> dict:
    """Vectors of ``fill``: runs (blocks) touching both ends, NaN and ±inf among them; one-element runs
    apart with the fill at both ends; empty; all fill; one element."""
    f = fill
    return {"ends": np.array([2.0, 2.0, f, 3.0, f, f, inf, inf, -inf, f, nan, 5.0, 5.0]),
            "ones": np.array([f, 1.0, f, 2.0, f, -inf, f, nan, f]),
            "empty": np.zeros(0),
            "fill": np.full(7, f),
            "single": np.array([4.0])}


#: reversed slices (of a vector of extent n), alone and fused with a sparse vector y of the same fill
SLICES = {"::-1": lambda n: slice(None, None, -1), "::-3": lambda n: slice(None, None, -3),
          "n-2:0:-2": lambda n: slice(n - 2, 0, -2) if n >= 2 else slice(0, 0, -2)}


def stored_in(level, a, fill):
    return Tensor.from_numpy(a, Format(level(Element(fill))) if a.ndim == 1 else Format(Dense(level(Element(fill)))))


def reversed_kernel(expr, want, out=None):
    """``expr`` as one lattice kernel checked against ``want`` (numpy's) by every oracle, converting nothing."""
    kernel = one_lattice_kernel(expr, want, out)
    assert not kernel.trace.find("convert"), [s.note for s in kernel.trace.find("convert")]
    got = seq_evaluate(kernel.program, loop_order=kernel.formats["out"].mode_order, **kernel.arguments)
    np.testing.assert_array_equal(got, want)
    return kernel


def fused(a, y, s, m):
    """``a[s] * 2 + y[:len(a[s])]`` in numpy (m = np) or the array front end (m = xp)."""
    part = a[s]
    n = part.shape[0]
    return part * 2 + y[:n]


@pytest.mark.parametrize("fill", FILLS, ids=str)
@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_a_reversed_slice_of_a_vector(level, fill):
    for name, v in vectors(fill).items():
        A = xp.asarray(stored_in(level, v, fill))
        for key, make in SLICES.items():
            s = make(len(v))
            k = reversed_kernel(A[s], v[s])
            # (walked down: of one coordinate or none, the slice is no reversed walk)
            assert len(v[s]) < 2 or "-= 1;" in k.c_source, (name, key)


@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_the_bounds_checked_build_reads_within_the_levels_arrays(level):
    """Walked down, a run or block is read only while the cursor is in its fiber (an empty one's last run
    is ``pos[1] - 1``, none)."""
    for name in ("ends", "ones", "empty", "fill"):
        v = vectors(0.0)[name]
        A = xp.asarray(stored_in(level, v, 0.0))
        for make in SLICES.values():
            s = make(len(v))
            k = A[s].lower(strategy="lattice", checked=True)
            np.testing.assert_array_equal(k().to_numpy(), v[s])


@pytest.mark.parametrize("fill", FILLS, ids=str)
@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_a_reversed_slice_fused_with_operators_around(level, fill):
    """``x[::-1] * 2 + y`` (y a SparseList of the same fill): one kernel, the reversed walk merged with y's."""
    rng = np.random.default_rng(1)
    for name, v in vectors(fill).items():
        if name in ("empty", "single"):   # (the property's)
            continue
        y = np.where(rng.random(len(v)) < 0.5, rng.choice([1.0, -3.0, inf], len(v)), fill)
        A, Y = xp.asarray(stored_in(level, v, fill)), xp.asarray(Tensor.from_numpy(y, "sparse", fill=fill))
        for make in SLICES.values():
            s = make(len(v))
            with np.errstate(invalid="ignore"):
                want = fused(v, y, s, np)
            reversed_kernel(fused(A, Y, s, xp), want)


#: rows of runs (blocks) touching both ends, an all-fill row, one-element runs, NaN and ±inf stored
M = np.array([[1.0, 1.0, 0, 2.0, 2.0, 2.0], [0.0] * 6, [0, 3.0, 0, inf, 0, -inf], [nan, 4.0, 4.0, 4.0, 0, 5.0]])
MATRIX = {"[:, ::-1]": (slice(None), slice(None, None, -1)), "[:, ::-2]": (slice(None), slice(None, None, -2)),
          "[::-1, 4:0:-2]": (slice(None, None, -1), slice(4, 0, -2)),
          "[1:3, ::-3]": (slice(1, 3), slice(None, None, -3))}


@pytest.mark.parametrize("fill", [0.0, nan], ids=str)
@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_a_reversed_inner_slice_of_a_matrix(level, fill):
    a = np.where(M == 0, fill, M)
    A = xp.asarray(stored_in(level, a, fill))
    for s in MATRIX.values():
        reversed_kernel(A[s], a[s])
    # (fused: the reversed rows times 2 plus a CSR of the same fill)
    b = np.where(np.arange(24).reshape(4, 6) % 5 == 0, 1.5, fill)
    B = xp.asarray(Tensor.from_numpy(b, "csr", fill=fill))
    with np.errstate(invalid="ignore"):
        reversed_kernel(A[:, ::-1] * 2 + B, a[:, ::-1] * 2 + b)


OUTPUTS = [RunList, SparseRunList, SparseBlockList]


def assert_built_as_from_numpy(got: Tensor, want: np.ndarray, fmt: Format):
    """The kernel's output level holds what Tensor.from_numpy builds for the same values: its runs
    coalesced (a NaN extends a run of NaN), its blocks maximal."""
    ref = Tensor.from_numpy(want, fmt)
    for mine, theirs in zip(got.levels, ref.levels):
        for name in getattr(theirs, "index_arrays", ()):
            np.testing.assert_array_equal(getattr(mine, name), getattr(theirs, name), err_msg=name)
    np.testing.assert_array_equal(got.vals, ref.vals)


@pytest.mark.parametrize("out", OUTPUTS, ids=lambda L: L.__name__)
@pytest.mark.parametrize("level", LEVELS + [SparseList], ids=lambda L: L.__name__)
def test_a_reversed_slice_written_into_a_run_or_block_output(level, out):
    """The loops give the output its coordinates in increasing order, so the runs a reversed input's
    walk appends extend one another as they do forwards (equal values touching: one run)."""
    for name in ("ends", "ones"):   # (of fill NaN, empty and all fill: the property's)
        v = vectors(0.0)[name]
        A = xp.asarray(stored_in(level, v, 0.0))
        fmt = Format(out(Element(0.0)))
        for make in SLICES.values():
            s = make(len(v))
            k = reversed_kernel(A[s], v[s], fmt)
            assert_built_as_from_numpy(k(), v[s], fmt)
    a = np.where(M == 0, 1.0, M)
    fmt = Format(Dense(out(Element(1.0))))
    k = reversed_kernel(xp.asarray(stored_in(level, a, 1.0))[:, ::-1], a[:, ::-1], fmt)
    assert_built_as_from_numpy(k(), a[:, ::-1], fmt)


def test_the_walk_starts_in_the_last_run_and_moves_it_down():
    """The kernel reads the run list's own arrays (no SparseList copy): the run from the fiber's last,
    moved down as the coordinate crosses a run's start; a SparseRunList's jumps the gap down to the run
    before; a block list's block from its last, moved down at a block's first position."""
    v = vectors(0.0)["ends"]
    src = reversed_kernel(xp.asarray(stored_in(RunList, v, 0.0))[::-1], v[::-1]).c_source
    assert "rA0 = A0_pos[pA0_up + 1] - 1;" in src and "pA0 = A0_size - 1;" in src
    assert "if (rA0 > A0_pos[pA0_up] && pA0 < A0_right[rA0 - 1])" in src
    src = reversed_kernel(xp.asarray(stored_in(SparseRunList, v, 0.0))[::-1], v[::-1]).c_source
    assert "if (pA0 < A0_left[rA0])" in src and "pA0 = A0_right[rA0] - 1;" in src
    src = reversed_kernel(xp.asarray(stored_in(SparseBlockList, v, 0.0))[::-1], v[::-1]).c_source
    assert "pA0 = A0_ofs[A0_pos[pA0_up + 1]] - 1;" in src and "if (pA0 < A0_ofs[rA0])" in src


def test_a_strided_reversed_slice_seeks_down_to_each_kept_coordinate():
    """``x[::-3]``: from a coordinate the slice does not keep, the run list gallops down over its runs'
    ends to the next kept one (not a step per coordinate), the block list over its blocks' ends."""
    v = vectors(0.0)["ends"]
    for level, array in ((RunList, "A0_right"), (SparseRunList, "A0_right"), (SparseBlockList, "A0_idx")):
        src = reversed_kernel(xp.asarray(stored_in(level, v, 0.0))[::-3], v[::-3]).c_source
        assert f"seek_back_int64({array}, rA0, A0_pos[pA0_up] - 1, " in src, level


@st.composite
def reversed_cases(draw):
    """``(level, shape, density, seed, fill, odd, slice, fused, out)``."""
    level = draw(st.sampled_from(LEVELS))
    shape = draw(st.sampled_from([(0,), (1,), (5,), (12,), (3, 7)]))
    n = shape[-1]
    step = draw(st.sampled_from([-1, -2, -3]))
    start, stop = draw(st.integers(-1, n)), draw(st.integers(-1, n))
    s = slice(None if start < 0 else start, None if stop < 0 else stop, step)
    out = draw(st.sampled_from([None] + OUTPUTS))
    return (level, shape, draw(st.sampled_from([0.0, 0.4, 0.8, 1.0])), draw(st.integers(0, 99)),
            draw(st.sampled_from(FILLS)), draw(st.sampled_from([(), (nan,), (inf, -inf)])), s,
            draw(st.booleans()), out)


@settings(max_examples=7, deadline=None)
@given(reversed_cases())
def test_reversed_slices_by_property(case):
    level, shape, density, seed, fill, odd, s, fuse, out = case
    rng = np.random.default_rng(seed)
    # (runs: each value repeated 1 to 3 times, so both runs and blocks of several coordinates occur)
    a = np.where(rng.random(shape) < density, rng.choice([1.0, -2.0, 3.5], shape), fill)
    a = np.repeat(a.reshape(-1, shape[-1])[:, ::3], 3, axis=1)[:, :shape[-1]].reshape(shape) if shape[-1] else a
    a.flat[:len(odd)] = odd
    A = xp.asarray(stored_in(level, a, fill))
    at = s if a.ndim == 1 else (slice(None), s)
    want, expr = a[at], A[at]
    if fuse:
        y = np.where(rng.random(want.shape) < 0.5, 1.5, fill)
        Y = xp.asarray(Tensor.from_numpy(y, "sparse" if y.ndim == 1 else "csr", fill=fill))
        with np.errstate(invalid="ignore"):
            want = want * 2 + y
        expr = expr * 2 + Y
        fill = fill * 2 + fill
    fmt = None if out is None else Format(out(Element(fill)) if want.ndim == 1 else Dense(out(Element(fill))))
    k = reversed_kernel(expr, want, fmt)
    if fmt is not None:
        assert_built_as_from_numpy(k(), want, fmt)
