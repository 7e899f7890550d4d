"""A COO vstack into COO copies each part as one block under the lattice strategy
(compiler.lattice.coo_segments): the segment walk over a part's rows becomes one loop over its
positions, which block_copy copies whole; an hstack, whose rows interleave the parts' entries, keeps
its segment walk. Each kernel is checked against numpy, compiler.evaluate and the IR interpreter,
on empty parts, stored zeros (the block's fallback) and fills 0 and NaN (issue 30, Fig. 24c)."""

from functools import lru_cache

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.lattice.coo_segments import CHUNK
from compiler.imperative.ir import BinOp, Const, Declare, Load, Select, Var, While
from compiler.imperative.traverse import walk

VSTACK = "D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)"
HSTACK = "D[i, l] = concat((B[i, j], C[i, k]), (j, k) -> l)"
RAVEL = "c[k] = collapse(B[i, j], (i, j) -> k)"
NB, NC, M = 3, 2, 12   # a part holds 8 entries or more in some examples: the block path


def coo(dense: np.ndarray, fill: float, stored=()) -> ss.Tensor:
    """``dense`` as a COO tensor of ``fill`` (sorted), also storing ``stored`` (coordinates) explicitly."""
    empty = np.isnan(dense) if np.isnan(fill) else dense == fill
    keep = ~empty
    for r, c in stored:
        keep[r, c] = True
    rows, cols = np.nonzero(keep)
    m = sp.coo_array((dense[rows, cols], (rows, cols)), shape=dense.shape)
    return ss.Tensor.from_scipy(m, fill=fill)


@lru_cache(maxsize=None)
def kernel(program: str, fill: float):
    """One kernel per program and fill, reused for every example (the lattice specializes to shapes)."""
    shapes = (NB, M), (NC, M)
    if program == HSTACK:
        shapes = (M, NB), (M, NC)
    B, C = (coo(np.full(s, fill), fill) for s in shapes)
    if program == RAVEL:
        return ss.lower(program, "lattice", B=B, c=ss.parse_format("sparse_vector", fill=fill))
    return ss.lower(program, "lattice", B=B, C=C, D=ss.parse_format("coo", ndim=2, fill=fill))


def stage(k, name):
    return next((s for s in k.trace.steps if s.stage == name), None)


def loops(fn):
    """The ``(position, bound)`` names of the ``while (p < bound)`` loops of ``fn``."""
    return {(n.cond.left.name, n.cond.right.name) for n in walk(fn) if isinstance(n, While)
            and isinstance(n.cond, BinOp) and n.cond.op == "<" and isinstance(n.cond.left, Var)
            and isinstance(n.cond.right, Var)}


def chunked(fn):
    """``(chunk end, part end)`` of each block copy that counts ``n_copy = p < stop ? stop - p : 0``
    entries where ``stop = p + CHUNK < end ? p + CHUNK : end``."""
    stops = {n.var.name: n.init.otherwise.name for n in walk(fn) if isinstance(n, Declare) and n.init is not None
             and n.var.name.endswith("_stop") and isinstance(n.init, Select)
             and n.init.then == BinOp("+", n.init.cond.left.left, Const(CHUNK, "int64"))}
    return [(c.then.left.name, stops[c.then.left.name]) for c in
            (n.init for n in walk(fn) if isinstance(n, Declare) and n.var.name.startswith("n_copy"))]


def part_ends(fn):
    """``{name: tensor}`` of the locals set to a COO part's last position, ``X0_pos[1]``."""
    return {n.target.name: n.value.buffer[0] for n in walk(fn) if type(n).__name__ == "Assign"
            and isinstance(n.value, Load) and n.value.buffer.endswith("0_pos") and n.value.index.value == 1}


def test_a_coo_vstack_walks_each_part_whole_and_copies_it_as_one_block():
    k = kernel(VSTACK, 0.0)
    step = stage(k, "flatten-segments")
    assert step is not None
    ends = part_ends(step.before)
    # before: each part's rows, then each row's entries up to its segment end; after: one loop a part
    assert {t for p, e in loops(step.before) if e in ends for t in [ends[e]]} == {"B", "C"}
    after = {(p, e) for p, e in loops(step.after) if e in ends}
    assert sorted(ends[e] for _, e in after) == ["B", "C"]
    assert all(p.endswith("1") for p, _ in after)   # the entries' own position, not the rows'
    assert not any(e.endswith("_seg") or e.endswith("1_end") for _, e in loops(step.after))
    # and block_copy copies a part a chunk at a time, the chunks' ends below the part's end
    assert sorted(ends[e] for _, e in chunked(stage(k, "block-copy").after)) == ["B", "C"]


def test_an_hstack_interleaves_the_parts_so_its_rows_stay_segments():
    k = kernel(HSTACK, 0.0)
    step = stage(k, "flatten-segments")
    ends = part_ends(step.before)

    def merged(fn):
        """The loop over the rows both parts hold (its condition reads both cursors)."""
        got = [n for n in walk(fn) if isinstance(n, While) and n.cond.op == "&&"
               and not any(isinstance(x, Var) and x.name.endswith("_seg") for x in walk(n.cond))]
        assert len(got) == 1
        return got[0]
    # there, each part's run of a row in turn, up to its segment end, as before
    rows = loops(merged(step.after).body)
    assert rows == loops(merged(step.before).body) and len(rows) == 4
    assert all(e.startswith(p) and e.endswith("_end") and e not in ends for p, e in rows)
    # past the other part's last row, a part's entries are contiguous again: one loop each
    tails = {(p, e) for p, e in loops(step.after) if e in ends}
    assert sorted(ends[e] for _, e in tails) == ["B", "C"]
    b, c = np.arange(M * NB, dtype=float).reshape(M, NB), np.arange(M * NC, dtype=float).reshape(M, NC)
    # rows both hold; B's rows past C's last (a tail of 18 entries: one block), then C's past B's
    # (a stored zero in B's tail: its fallback drops it; in a row of its own past C's last)
    zeroed = np.where(np.arange(M * NB).reshape(M, NB) == 26, 0.0, b)
    rows = np.arange(M)[:, None]
    for b, c, stored in ((b, c, ()), (zeroed, np.where(rows < 6, c, 0.0), [(8, 2)]),
                         (np.where(rows < 4, b, 0.0), c, [(11, 0)]), (np.where(rows < 4, b, 0.0), c, ())):
        B, C = coo(b, 0.0, stored), coo(c, 0.0, stored[:0])
        want = np.hstack([b, c])
        ref = ss.Tensor.from_numpy(want, ss.parse_format("coo", ndim=2))
        for got in (k(B=B, C=C), k.interpret(B=B, C=C)):
            np.testing.assert_array_equal(got.to_numpy(), want)
            np.testing.assert_array_equal(got.to_coords()[0], ref.to_coords()[0])
        np.testing.assert_array_equal(ss.evaluate(HSTACK, B=B, C=C)[0], want)


def test_a_coo_ravel_walks_its_entries_in_one_loop_copied_as_one_block():
    k = kernel(RAVEL, 0.0)
    step = stage(k, "flatten-segments")
    # before: the product's loop steps the entry and, past its segment, the row; after: the entries
    product = BinOp("&&", BinOp("<", Var("pB0"), Var("pB0_end")), BinOp("<", Var("pB1"), Var("pB1_end")))

    def products(fn):
        return [n for n in walk(fn) if isinstance(n, While) and n.cond == product]
    assert len(products(step.before)) == 1 and ("pB1", "pB0_end") not in loops(step.before)
    assert not products(step.after) and ("pB1", "pB0_end") in loops(step.after)
    assert [e for _, e in chunked(stage(k, "block-copy").after)] == ["pB0_end"]


def check(fill, b, c, stored_b=(), stored_c=(), program=VSTACK):
    B, C = coo(b, fill, stored_b), coo(c, fill, stored_c)
    k = kernel(program, fill)
    tensors = dict(B=B) if program == RAVEL else dict(B=B, C=C)
    want = b.reshape(-1) if program == RAVEL else np.vstack([b, c])
    ref = ss.Tensor.from_numpy(want, ss.parse_format("sparse_vector" if program == RAVEL else "coo", ndim=want.ndim,
                                                     fill=fill))
    oracle, _ = ss.evaluate(program, **tensors)
    np.testing.assert_array_equal(oracle, want)
    for got in (k(**tensors), k.interpret(**tensors)):
        np.testing.assert_array_equal(got.to_numpy(), want)
        # stored entries equal to the fill are dropped: the storage is from_numpy's
        for g, r in zip(got.level_arrays(), ref.level_arrays()):
            for name in r:
                np.testing.assert_array_equal(g[name], r[name], err_msg=name)
        np.testing.assert_array_equal(got.vals, ref.vals)


FULL_B = np.arange(1, NB * M + 1, dtype=float).reshape(NB, M)
FULL_C = -np.arange(1, NC * M + 1, dtype=float).reshape(NC, M)


@pytest.mark.parametrize("program", [VSTACK, RAVEL], ids=["vstack", "ravel"])
@pytest.mark.parametrize("fill", [0.0, float("nan")])
@pytest.mark.parametrize("case", ["full", "B empty", "C empty", "both empty", "stored fill", "short"])
def test_coo_parts(program, fill, case):
    if program == RAVEL and case in ("C empty", "both empty"):
        return
    empty_b, empty_c = np.full((NB, M), fill), np.full((NC, M), fill)
    short_b = empty_b.copy()
    short_b[1, 2], short_b[2, 0] = 4.0, 5.0
    b, c = {"full": (FULL_B, FULL_C), "B empty": (empty_b, FULL_C), "C empty": (FULL_B, empty_c),
            "both empty": (empty_b, empty_c), "stored fill": (np.where(FULL_B > 30, fill, FULL_B), FULL_C),
            "short": (short_b, FULL_C[:, ::-1].copy())}[case]
    # "stored fill": B stores entries equal to the fill, which its block's fallback drops
    stored = [(2, j) for j in range(M)] if case == "stored fill" else ()
    check(fill, b, c, stored_b=stored, program=program)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2 ** 16), density=st.sampled_from([0.0, 0.2, 0.7, 1.0]),
       nan=st.booleans(), stored=st.floats(0, 0.5), program=st.sampled_from([VSTACK, RAVEL]))
@example(seed=0, density=1.0, nan=False, stored=0.1, program=VSTACK)
@example(seed=0, density=1.0, nan=True, stored=0.0, program=RAVEL)
def test_coo_by_property(seed, density, nan, stored, program):
    fill = float("nan") if nan else 0.0
    r = np.random.default_rng(seed)

    def draw(rows):
        d = np.where(r.random((rows, M)) < density, r.choice([1.0, -2.5, np.inf, -0.0 if nan else 3.0], (rows, M)),
                     fill)
        extra = [(int(i), int(j)) for i, j in zip(*np.nonzero(r.random(d.shape) < stored))]
        return d, extra

    (b, sb), (c, sc) = draw(NB), draw(NC)
    check(fill, b, c, sb, sc, program)


def copies(fn):
    """The block copies' loops of ``fn``: each ``for`` loop that stores to an output (its stores tagged with
    the expression nodes they copy, or not)."""
    from compiler.imperative.ir import For, Store, Tagged
    return [n for n in walk(fn) if isinstance(n, For) and any(
        isinstance(s, Store) or isinstance(s, Tagged) and any(isinstance(x, Store) for x in walk(s))
        for s in n.body.body)]


def test_a_chunk_is_copied_once_counting_its_dropped_values_as_it_goes():
    # (one pass over a chunk's values: no loop counts them before the copy reads them again)
    from compiler.imperative.ir import CompoundAssign, For
    for program in (VSTACK, RAVEL):
        after = stage(kernel(program, 0.0), "block-copy").after
        fors = [n for n in walk(after) if isinstance(n, For)]
        assert fors and fors == copies(after)
        for f in fors:
            counts = [s for s in f.body.body if isinstance(s, CompoundAssign) and s.target.name.startswith("n_dropped")]
            assert len(counts) == 1 and any(isinstance(n, Load) and n.buffer in ("B_val", "C_val")
                                            for n in walk(counts[0]))


# a part of two chunks (4,200 entries) and a short one, stored whole, values of every kind; the
# entries at a chunk's end and the next one's start are where a copy is redone from
LONG, SHORT = (2, 2100), (1, 2100)
EDGES = (0, CHUNK - 1, CHUNK, 2 * 2100 - 1)


def stored_part(shape, fill, values, where):
    """A COO part of ``shape`` storing every entry: ``values`` cycled, the positions ``where`` (flat)
    holding the fill (stored explicitly: the output drops them)."""
    d = np.resize(np.asarray(values, float), shape[0] * shape[1])
    d[list(where)] = fill
    d = d.reshape(shape)
    rows, cols = np.indices(shape).reshape(2, -1)
    return ss.Tensor.from_scipy(sp.coo_array((d.ravel(), (rows, cols)), shape=shape), fill=fill), d


@lru_cache(maxsize=None)
def stack_kernel(strategy, out, fill):
    B, C = (ss.Tensor.from_numpy(np.full(s, fill), "coo", fill=fill) for s in (LONG, SHORT))
    return ss.lower(VSTACK, strategy, B=B, C=C, D=ss.parse_format(out, ndim=2, fill=fill))


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("out, fill", [("coo", 0.0), ("coo", np.nan), ("coo", -np.inf), ("csr", np.inf),
                                       ("csr", np.nan)])
def test_one_pass_copies_of_stored_nan_inf_and_fills_against_the_oracle(strategy, out, fill):
    k = stack_kernel(strategy, out, fill)
    assert "n_dropped" in k.c_source
    every = [1.0, np.nan, np.inf, -np.inf, -0.0, 2.5, 0.0]     # (each a fill for one of the kernels)
    kinds = [v for v in every if not (v == fill or np.isnan(v) and np.isnan(fill))]
    all_fill = range(LONG[0] * LONG[1])
    cases = [((kinds, ()), (kinds, ())),                          # nothing dropped: whole chunks copied
             ((kinds, EDGES), (kinds, (5,))),                     # fills at the chunks' edges: redone
             ((kinds, all_fill), (kinds, range(2100))),           # all-fill parts: every entry dropped
             ((every, ()), (kinds, (2099,)))]                      # the fill among the values (NaN too)
    for (bv, bw), (cv, cw) in cases:
        (B, b), (C, c) = stored_part(LONG, fill, bv, bw), stored_part(SHORT, fill, cv, cw)
        want = np.vstack([b, c])
        oracle, _ = ss.evaluate(VSTACK, B=B, C=C)
        np.testing.assert_array_equal(oracle, want)
        ref = ss.Tensor.from_numpy(want, ss.parse_format(out, ndim=2, fill=fill))
        got = k(B=B, C=C)
        np.testing.assert_array_equal(got.to_numpy(), want)
        # (every stored fill dropped: the storage is from_numpy's)
        for g, r in zip(got.level_arrays(), ref.level_arrays()):
            for name in r:
                np.testing.assert_array_equal(g[name], r[name], err_msg=name)
        np.testing.assert_array_equal(got.vals, ref.vals)
    # empty parts (nothing stored)
    E, F = (ss.Tensor.from_numpy(np.full(s, fill), "coo", fill=fill) for s in (LONG, SHORT))
    assert k(B=E, C=F).nnz == 0
    B, b = stored_part(LONG, fill, kinds, EDGES)
    np.testing.assert_array_equal(k(B=B, C=F).to_numpy(), np.vstack([b, np.full(SHORT, fill)]))
