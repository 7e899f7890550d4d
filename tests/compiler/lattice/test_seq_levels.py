"""Every level format as an input of the lattice's shape operators (issue 30 item 3): the sequence lowering
walks a level through its lattice iterator (compiler/lattice/seqwalk.py), the coordinate of a position, its
fiber's bounds, the block or run it keeps beside it, its child. On main it walked Dense, SparseList and
SparseCOO levels by their arrays' names, so a SparseBand (``ofs``, ``idx``) was read as a SparseList, its
per-fiber band end taken for per-entry coordinates: wrong answers, coordinates past the output's extent and
reads past ``idx``'s end; every other level was refused, and the array front end retried and materialized.

Each level as a matrix's row level under Dense, as its outer level and as a vector, under a ravel, a split,
a vertical stack with a CSR, a horizontal stack, strided slices (positive and negative steps), a slice
times a CSR and a broadcast; fills 0 and NaN with NaN and ±inf stored, empty and all-fill operands: one
lattice kernel, no retry, against numpy, the dense oracle, the IR interpreter and the sequence CFIR's
interpreter; none converts an input (a block or run level walked backwards moves its block or run down
beside its position; on main it was read converted to a SparseList)."""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler import array as xp
from compiler.format import Format
from compiler.lattice.block_iterators import BlockListIterator
from compiler.lattice.iterators import ITERATORS, iterated_by
from compiler.lattice.seqcheck import check_seq_lattice
from compiler.lattice.seqderive import seq_evaluate
from compiler.lattice.seqlattice import build_seq_lattice
from compiler.lattice.sequences import Concat, Level, Product
from compiler.lattice.seqwalk import stored_entries
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseHash,
                             SparseInterval, SparseList, SparsePoint, SparseRunList)
from tests.compiler.lattice.split_kernels import one_lattice_kernel

nan, inf = np.nan, np.inf

LEVELS = [SparseList, SparseBand, SparseBlockList, SparseByteMap, SparseHash, SparsePoint, SparseInterval, RunList,
          SparseRunList]
#: the levels that hold a matrix's rows as its outer level (a fiber of rows: at most one for a SparsePoint)
OUTER = [SparseList, SparseBand, SparseBlockList, SparseByteMap, SparseHash, SparsePoint, SparseRunList]
ODD = (nan, inf, -inf)


def stored(a, fill):
    return ~((a == fill) | (np.isnan(a) & np.isnan(fill)))


def level_array(level, shape, density=0.5, seed=0, fill=0.0, odd=()):
    """A random array of ``shape`` that ``level`` can hold in its last mode (at most one entry per fiber for a
    SparsePoint, one run of one value for a SparseInterval); ``odd``: values stored first."""
    rng = np.random.default_rng(seed)
    a = np.where(rng.random(shape) < density, rng.choice([1.0, -2.0, 3.5], shape), fill)
    a.flat[:len(odd)] = odd
    rows = a.reshape(-1, shape[-1])
    for r, row in enumerate(rows):
        if level is SparsePoint:
            keep = np.flatnonzero(stored(row, fill))[:1]
            row[np.setdiff1d(np.arange(len(row)), keep)] = fill
        elif level is SparseInterval:
            held = row[stored(row, fill)]
            row[:] = fill
            if len(held):
                lo = int(rng.integers(0, len(row)))
                # (a NaN equals no NaN: its run is one coordinate)
                row[lo:lo + 1 if np.isnan(held[0]) else int(rng.integers(lo + 1, len(row) + 1))] = held[0]
    return a


def rows_of(level, fill):
    return Format(Dense(level(Element(fill))))


def outer_of(level, fill):
    return Format(level(SparseList(Element(fill))))


def vector_of(level, fill):
    return Format(level(Element(fill)))


def lowered(a, fmt, b, op, out=None):
    """``op`` of ``a`` stored in ``fmt`` (and ``b`` as a CSR of its fill) as one lattice kernel, checked."""
    fill = fmt.fill
    A, B = xp.asarray(Tensor.from_numpy(a, fmt)), xp.asarray(Tensor.from_numpy(b, "csr" if b.ndim == 2 else
                                                                               "sparse", fill=fill))
    with np.errstate(invalid="ignore"):
        want = OPS[op](a, b, np)
    kernel = one_lattice_kernel(OPS[op](A, B, xp), want, out)
    got = seq_evaluate(kernel.program, loop_order=kernel.formats["out"].mode_order, **kernel.arguments)
    np.testing.assert_array_equal(got, want)
    # (every level walked as it is stored, backwards too: a block or run level moves its block down)
    assert not kernel.trace.find("convert"), [step.note for step in kernel.trace.find("convert")]
    return kernel


OPS = {
    "ravel": lambda a, b, m: a.reshape(-1),
    "split": lambda a, b, m: a.reshape(a.shape[0] * 2, -1) if a.ndim == 2 else a.reshape(3, -1),
    "vstack": lambda a, b, m: m.concat([a, b]) if m is xp else m.concatenate([a, b]),
    "hstack": lambda a, b, m: m.concat([a, a], axis=a.ndim - 1) if m is xp else m.concatenate([a, a], axis=-1),
    "pos": lambda a, b, m: a[1::2, 1:7:3] if a.ndim == 2 else a[1:11:2],
    "neg": lambda a, b, m: a[::-1, ::-2] if a.ndim == 2 else a[::-3],
    "neg-rows": lambda a, b, m: a[::-2],
    "times": lambda a, b, m: a[1:4] * b if a.ndim == 2 else a[2:10] * b[:8],
    "broadcast": lambda a, b, m: m.broadcast_to(a[1:3, None, :], (2, 3, a.shape[1])),
}
MATRIX_OPS = ["ravel", "split", "vstack", "hstack", "pos", "neg", "times", "broadcast"]


@pytest.mark.parametrize("op", MATRIX_OPS)
@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_each_level_as_the_rows_of_a_matrix(level, op):
    """Fill 0, NaN and ±inf stored (but under the product, whose factors the lattice needs finite)."""
    odd = () if op == "times" else ODD
    a = level_array(level, (4, 8), 0.5, 1, 0.0, odd)
    lowered(a, rows_of(level, 0.0), level_array(SparseList, (3, 8), 0.4, 2), op)


@pytest.mark.parametrize("op", ["ravel", "vstack", "neg"])
@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_each_level_of_nan_fill(level, op):
    a = level_array(level, (4, 8), 0.5, 3, nan, (inf, -inf))
    lowered(a, rows_of(level, nan), level_array(SparseList, (3, 8), 0.4, 4, nan), op)


@pytest.mark.parametrize("op", ["ravel", "vstack", "neg-rows"])
@pytest.mark.parametrize("level", OUTER, ids=lambda L: L.__name__)
def test_each_level_as_the_outer_level(level, op):
    a = level_array(SparseList, (4, 6), 0.4, 5, 0.0, ODD)
    if level is SparsePoint:
        a[1:] = 0.0     # (one row stored at most)
    lowered(a, outer_of(level, 0.0), level_array(SparseList, (3, 6), 0.4, 6), op)


@pytest.mark.parametrize("op", ["split", "vstack", "neg", "times"])
@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_each_level_as_a_vector(level, op):
    odd = () if op == "times" else ODD
    a = level_array(level, (12,), 0.5, 7, 0.0, odd)
    lowered(a, vector_of(level, 0.0), level_array(SparseList, (12,), 0.4, 8), op, "sparse" if op != "split" else "csr")


@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_empty_and_all_fill_operands(level):
    for a in (np.zeros((4, 8)), np.full((4, 8), 2.5) if level is not SparsePoint else np.eye(4, 8)):
        for op in ("ravel", "vstack", "neg"):
            lowered(a, rows_of(level, 0.0), np.zeros((3, 8)), op)
    lowered(np.full((4, 8), nan), rows_of(level, nan), np.full((3, 8), nan), "vstack")


def test_a_band_is_walked_by_its_band_not_as_a_list():
    """The case of the issue: each row's band end ``idx`` is one per row, not one per entry; on main the
    kernel read ``A1_idx`` at the entries' positions (past its end) and wrote coordinates past 32."""
    D = np.zeros((4, 8))
    D[0, 2:5], D[1, 6], D[3, 0:2] = [1, 2, 3], 4, [5, 6]
    kernel = lowered(D, rows_of(SparseBand, 0.0), np.zeros((3, 8)), "ravel")
    # (the coordinate of position pA1 is its band's: the band end of its row less the row's end)
    assert "pA1 + (A1_idx[pA1_up] - A1_ofs[pA1_up + 1])" in kernel.c_source
    assert "A1_idx[pA1]" not in kernel.c_source


@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_the_bounds_checked_build_reads_within_each_levels_arrays(level):
    """On main the band's kernel read ``A1_idx[4]`` of 4 (checked: a KernelError)."""
    a = level_array(level, (4, 8), 0.5, 12, 0.0, (nan, inf))
    t = Tensor.from_numpy(a, rows_of(level, 0.0))
    k = lower("c[k] = collapse(A[i, j], (i, j) -> k)", strategy="lattice", checked=True, A=t)
    np.testing.assert_array_equal(k(A=t).to_numpy(), a.reshape(-1))


def test_a_run_level_walks_its_coordinates_keeping_its_run():
    a = level_array(SparseRunList, (4, 8), 0.6, 9)
    kernel = lowered(a, rows_of(SparseRunList, 0.0), np.zeros((3, 8)), "ravel")
    # (a coordinate in the gap before the run jumps to its start)
    assert "rA1" in kernel.c_source and "A1_left[rA1]" in kernel.c_source


@dataclass(frozen=True, eq=False, repr=False)
class ForwardBlocks(SparseBlockList):
    """A user's block list whose lattice iterator keeps its block beside the position, moved forward only."""

    name: ClassVar[str] = "ForwardBlocks"


@dataclass(frozen=True)
class ForwardOnly(BlockListIterator):
    walks_back = False


def test_a_level_whose_block_moves_forward_only_is_converted_walked_backwards(monkeypatch):
    """The walk asks the iterator whether it walks backwards (``walks_back``), not the level's class."""
    monkeypatch.setitem(ITERATORS, ForwardBlocks, iterated_by(ForwardOnly))
    a = level_array(SparseBlockList, (4, 8), 0.6, 10)
    A = Tensor.from_numpy(a, rows_of(ForwardBlocks, 0.0))
    kernel = one_lattice_kernel(xp.asarray(A)[::-1, ::-2], a[::-1, ::-2], None)
    (step,) = kernel.trace.find("convert")
    assert "level 1 (ForwardBlocks) is walked backwards" in step.note and "reads A as csr" in step.note, step.note
    assert "O(nnz log nnz)" in step.note
    # (forwards it is walked as it is stored)
    assert not one_lattice_kernel(xp.asarray(A)[1::2, 1:7:3], a[1::2, 1:7:3], None).trace.find("convert")


@pytest.mark.parametrize("level", LEVELS, ids=lambda L: L.__name__)
def test_the_sequence_interpreter_and_check_read_fibers_through_the_iterators(level):
    """The entries the sequence interpreter and the lattice check run over are the levels' iterators' (a run
    level's every coordinate, a hash's sorted view), each the array's value there."""
    a = level_array(level, (4, 8), 0.5, 11, 0.0, (nan, inf))
    t = Tensor.from_numpy(a, rows_of(level, 0.0))
    entries = stored_entries("A", t)
    assert list(entries) == sorted(entries)
    for (i, j), v in entries.items():
        np.testing.assert_array_equal(v, a[i, j])
    assert set(zip(*np.nonzero(stored(a, 0.0)))) <= set(entries)
    rows = Product(Level("A", 0, "dense", 4, "i"), Level("A", 1, "compressed", 8, "j"))
    assert check_seq_lattice(build_seq_lattice(Concat(rows, Level("B", 0, "compressed", 5, "k"))),
                             tensors={"A": t, "B": Tensor.from_numpy(np.array([0, 1.0, 0, 2, 0]), "sparse")}).exact


@st.composite
def level_cases(draw):
    """``(level, where, shape, density, seed, fill, odd, op)``."""
    level = draw(st.sampled_from(LEVELS))
    where = draw(st.sampled_from(["rows", "vector"] + (["outer"] if level in OUTER and level is not SparsePoint
                                                       else [])))
    shape = (draw(st.sampled_from([2, 4])), 8) if where != "vector" else (12,)
    fill = draw(st.sampled_from([0.0, nan]))
    ops = ["ravel", "vstack", "hstack", "pos", "neg"] if where != "vector" else ["split", "vstack", "neg"]
    return (level, where, shape, draw(st.sampled_from([0.0, 0.3, 0.7, 1.0])), draw(st.integers(0, 99)), fill,
            draw(st.sampled_from([(), (nan,), (inf, -inf)])), draw(st.sampled_from(ops)))


@settings(max_examples=7, deadline=None)
@given(level_cases())
@example((SparseBand, "rows", (4, 8), 0.7, 1, 0.0, (inf,), "hstack"))
@example((SparseRunList, "outer", (2, 8), 1.0, 2, nan, (), "neg"))
def test_levels_under_shape_operators_by_property(case):
    level, where, shape, density, seed, fill, odd, op = case
    a = level_array(SparseList if where == "outer" else level, shape, density, seed, fill, odd)
    fmt = {"rows": rows_of, "outer": outer_of, "vector": vector_of}[where](level, fill)
    b = level_array(SparseList, (3,) + shape[1:] if len(shape) == 2 else shape, density, seed + 1, fill)
    lowered(a, fmt, b, op, "csr" if op == "split" else None)
