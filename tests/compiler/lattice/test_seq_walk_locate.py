"""Slices of the levels the sequence emitter walks (compiler/lattice/seqwalk.py): a band, a block list, a run
list, a sparse run list, an interval, each located as its lattice iterator says (``seek_stmts``): a band's
position is computed, a block list's and a run list's cursor gallops over its blocks' or runs' ends, an
interval's is its coordinate. On main the emitter stepped such a cursor one entry at a time to the slice's
start and between the coordinates a strided slice keeps (``while (... % 7 != 0) pA0 += 1;``): a locate into a
long band or run was O(distance).

Vectors and matrices (rows of the level under Dense) sliced with steps ±1, ±2, ±5 from starts in the middle,
by both strategies; fills 0, 1 and NaN with NaN and ±inf stored, empty and all-fill operands; each kernel
against numpy, the dense oracle and the IR interpreter, and a lattice kernel also against the sequence CFIR's
interpreter. The C's loops that are not the main loop never step the walked cursor by one."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, evaluate
from compiler import array as xp
from compiler.format import Format
from compiler.imperative.ir import CompoundAssign, Const, Store, While
from compiler.imperative.traverse import walk as ir_walk
from compiler.lattice.seqderive import seq_evaluate
from compiler.levels import Dense, Element, RunList, SparseBand, SparseBlockList, SparseInterval, SparseRunList
from tests.compiler.lattice.split_kernels import one_lattice_kernel

sys.path.insert(0, str(Path(__file__).parent))
from test_seqemit import run_all  # noqa: E402

nan, inf = np.nan, np.inf

WALKED = [SparseBand, SparseBlockList, RunList, SparseRunList, SparseInterval]
VALUES = [1.0, -2.0, 3.5]
#: (fill, values stored first) of the example tests, in turn
FILLS = [(0.0, ()), (0.0, (nan, inf)), (1.0, (-inf,)), (nan, (inf, -inf)), (1.0, (nan,))]
#: slices of a vector of 23 (python's start, stop, step)
VECTOR_SLICES = [(5, None, 1), (5, None, 2), (3, 20, 5), (None, None, -1), (17, None, -2), (20, 2, -5), (11, 4, -1),
                 (None, None, 5), (9, None, -5), (22, None, 2)]
#: slices of a matrix's rows (its second mode) of 13, the rows taken forward or backwards
MATRIX_SLICES = [(5, None, 2), (2, 11, 5), (None, None, -1), (10, 1, -2), (7, None, -5), (6, 7, 1)]


def walked_array(level, shape, seed, fill=0.0, odd=(), density=0.8):
    """A random array of ``shape`` that ``level`` holds in its last mode: each row all fill (1 - ``density``
    of them) or a stretch of stored values, in runs for a run list, in blocks for a block list, one run of one
    value for an interval; ``odd``: values stored at the stretch's start (an interval's run is its first,
    one coordinate long if it is a NaN, which equals no NaN)."""
    rng = np.random.default_rng(seed)
    a = np.full(shape, fill)
    n = shape[-1]
    for row in a.reshape(-1, n) if a.size else ():
        if n == 0 or rng.random() >= density:
            continue
        lo = int(rng.integers(0, n))
        hi = int(rng.integers(lo + 1, n + 1))
        if level is SparseInterval:
            v = odd[0] if odd else float(rng.choice(VALUES))
            row[lo:lo + 1 if np.isnan(v) else hi] = v
            continue
        if level in (RunList, SparseRunList):
            cuts = sorted(int(c) for c in rng.integers(lo, hi, 3))
            for s, e in zip([lo] + cuts, cuts + [hi]):
                row[s:e] = rng.choice(VALUES + [fill])
        else:
            row[lo:hi] = rng.choice(VALUES, hi - lo)
            if level is SparseBlockList and hi - lo > 2:   # (a gap: two blocks)
                g = int(rng.integers(lo + 1, hi - 1))
                row[g:g + (hi - lo) // 3] = fill
        k = min(len(odd), hi - lo)
        row[lo:lo + k] = odd[:k]
    return a


def fmt_of(level, fill, ndim):
    return Format(level(Element(fill)) if ndim == 1 else Dense(level(Element(fill))))


def checked(a, level, fill, op, strategy):
    """``op`` of ``a`` stored in ``level`` as one kernel of ``strategy``, against numpy, the dense oracle and
    the IR interpreter (and, under the lattice, the sequence CFIR's interpreter); the kernel."""
    X = xp.asarray(Tensor.from_numpy(a, fmt_of(level, fill, a.ndim)))
    want = op(a)
    if strategy == "lattice":
        kernel = one_lattice_kernel(op(X), want)
        got = seq_evaluate(kernel.program, loop_order=kernel.formats["out"].mode_order, **kernel.arguments)
        np.testing.assert_array_equal(got, want)
        return kernel
    kernel = op(X).lower(None, strategy="looplets")
    np.testing.assert_array_equal(kernel().to_numpy(), want)
    np.testing.assert_array_equal(evaluate(kernel.program, **kernel.arguments)[0], want)
    np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)
    return kernel


def sliced(sl, ndim):
    s = slice(*sl)
    return (lambda x: x[s]) if ndim == 1 else (lambda x: x[:, s])


def stepping_loops(kernel, cursor):
    """The loops of the kernel's IR other than a main loop (one that writes the output) that step ``cursor``
    by one: a locate or a slice's alignment walking entry by entry."""
    return [n for n in ir_walk(kernel.function.body) if isinstance(n, While)
            and any(isinstance(s, CompoundAssign) and s.target.name == cursor and s.value == Const(1, "int64")
                    for s in n.body.body)
            and not any(isinstance(s, Store) for s in ir_walk(n.body))]


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("level", WALKED, ids=lambda L: L.__name__)
def test_slices_of_a_vector(level, strategy):
    for seed, sl in enumerate(VECTOR_SLICES):
        fill, odd = FILLS[seed % len(FILLS)]
        checked(walked_array(level, (23,), seed, fill, odd, density=1.0), level, fill, sliced(sl, 1), strategy)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("level", WALKED, ids=lambda L: L.__name__)
def test_slices_of_a_matrix_rows(level, strategy):
    ops = [sliced(sl, 2) for sl in MATRIX_SLICES]
    # (the rows backwards too, and a ravel's slice: a located product locates the row's level)
    ops += [lambda x: x[::-1, 9::-2], lambda x: x.reshape(-1)[7::5]]
    for seed, op in enumerate(ops):
        fill, odd = FILLS[seed % len(FILLS)]
        checked(walked_array(level, (4, 13), seed + 10, fill, odd), level, fill, op, strategy)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("level", WALKED, ids=lambda L: L.__name__)
def test_empty_and_all_fill_operands(level, strategy):
    full = np.full((3, 13), 2.5)
    for a, fill in [(np.zeros((3, 13)), 0.0), (full, 0.0), (np.full((3, 13), nan), nan), (np.zeros((2, 0)), 0.0)]:
        for sl in [(5, None, 2), (10, 1, -5)]:
            checked(a, level, fill, sliced(sl, 2), strategy)
        checked(a[0], level, fill, sliced((4, None, 5), 1), strategy)


#: what the C of ``x[5::7]`` locates the slice's start with, per level: no step
START_LOCATE = {
    SparseBand: "pA0 = 5 - (A0_idx[pA0_up] - A0_ofs[pA0_up + 1]);",
    SparseBlockList: "rA0 = seek_int64(A0_idx, rA0, A0_pos[pA0_up + 1], 6);",
    RunList: "rA0 = seek_int64(A0_right, rA0, A0_pos[pA0_up + 1], 6);",
    SparseRunList: "rA0 = seek_int64(A0_right, rA0, A0_pos[pA0_up + 1], 6);",
    SparseInterval: "pA0 = 5;",
}


@pytest.mark.parametrize("level", WALKED, ids=lambda L: L.__name__)
def test_a_strided_slice_locates_its_start_and_each_kept_coordinate(level):
    a = walked_array(level, (40,), 3, density=1.0)
    kernel = checked(a, level, 0.0, lambda x: x[5::7], "lattice")
    assert START_LOCATE[level] in kernel.c_source, kernel.c_source
    # (the next coordinate the slice keeps, sought: ``kept`` is its sequence coordinate)
    assert "int64_t kept = " in kernel.c_source
    assert stepping_loops(kernel, "pA0") == [], kernel.c_source
    rows = checked(walked_array(level, (3, 40), 4), level, 0.0, lambda x: x[:, 5::7], "lattice")
    assert stepping_loops(rows, "pA1") == [], rows.c_source


@pytest.mark.parametrize("level", [SparseBand, SparseInterval], ids=lambda L: L.__name__)
def test_a_backwards_slice_locates_down(level):
    """Walked backwards (a band, an interval: they keep no block beside the position), the cursor goes
    straight to the last coordinate at or below the target, not below the fiber's first position."""
    a = walked_array(level, (30,), 5, density=1.0)
    kernel = checked(a, level, 0.0, lambda x: x[20:2:-5], "lattice")
    assert "if (pA0 < pA0_lo) {" in kernel.c_source, kernel.c_source
    assert [n for n in ir_walk(kernel.function.body) if isinstance(n, While)
            and any(isinstance(s, CompoundAssign) and s.op == "-" and s.target.name == "pA0" for s in n.body.body)
            and not any(isinstance(s, Store) for s in ir_walk(n.body))] == [], kernel.c_source


@pytest.mark.parametrize("level", WALKED, ids=lambda L: L.__name__)
def test_a_transposed_split_seeks_each_residue_class(level):
    """A split's major index collapsed inside its minor one, ``U_k × l_a[k::4]`` (compiler/lattice/seqstride.py):
    a walked level's cursor goes to the next coordinate of the residue class as its iterator finds it, where
    it stepped over each coordinate between."""
    a = walked_array(level, (24,), 6, density=1.0)
    t = Tensor.from_numpy(a, fmt_of(level, 0.0, 1))
    program = "out[m] = collapse(split(a[l], l -> (i:6, k:4)), (k, i) -> m)"
    out = ss.parse_format("sparse", ndim=1)
    np.testing.assert_array_equal(run_all(program, {"a": t}, out=out), a.reshape(6, 4).T.reshape(-1))
    np.testing.assert_array_equal(evaluate(program, a=a)[0], a.reshape(6, 4).T.reshape(-1))
    kernel = ss.lower(program, strategy="lattice", a=t, out=out)
    assert "int64_t target = " in kernel.c_source and stepping_loops(kernel, "pa0") == [], kernel.c_source


@st.composite
def cases(draw):
    """``(level, shape, seed, fill, odd, density, slice, strategy)``."""
    level = draw(st.sampled_from(WALKED))
    n = draw(st.integers(0, 14))
    shape = (n,) if draw(st.booleans()) else (draw(st.integers(1, 3)), n)
    step = draw(st.sampled_from([1, -1, 2, -2, 5, -5]))
    start = draw(st.one_of(st.none(), st.integers(0, max(n - 1, 0))))
    stop = draw(st.one_of(st.none(), st.integers(-1, n)))
    return (level, shape, draw(st.integers(0, 99)), draw(st.sampled_from([0.0, 1.0, nan])),
            draw(st.sampled_from([(), (nan,), (inf, -inf)])), draw(st.sampled_from([0.0, 0.5, 1.0])),
            (start, None if stop == -1 else stop, step), draw(st.sampled_from(["lattice", "looplets"])))


@settings(max_examples=7, deadline=None)
@given(cases())
@example((SparseRunList, (2, 9), 1, nan, (inf,), 1.0, (7, None, -2), "lattice"))
@example((SparseBlockList, (14,), 2, 0.0, (nan,), 1.0, (3, 12, 5), "looplets"))
def test_slices_of_walked_levels_by_property(case):
    level, shape, seed, fill, odd, density, sl, strategy = case
    a = walked_array(level, shape, seed, fill, odd, density)
    checked(a, level, fill, sliced(sl, len(shape)), strategy)
