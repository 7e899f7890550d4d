"""Output levels with levels below them under the lattice strategy (issue 29, item 3).

A SparseByteMap, SparseBand, SparseBlockList or SparseHash output level with Dense levels below it is
assembled by the kernel: each position it keeps (a byte map's slot, a band's position from its
first coordinate, a block list's or a hash's next position) gets a block of the Dense slots below, holding
the fill until stored into, and the coordinate is kept if a slot gets another value
(compiler/lattice/emit_blocks.py). Before, they were built through SparseList stand-ins and
converted after each call (the trace's ``convert`` step). Each kernel is checked against the
dense oracle, the IR interpreter and the storage ``Tensor.from_numpy`` builds, array by array, and
the kernels of the sums and reductions against a bounds-checked build too (output_cases.BOUNDS_CHECKED).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.format import Format
from compiler.lattice.output_build import assembles, building_output
from compiler.errors import FormatError
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseHash,
                             SparseInterval, SparseList, SparsePoint, SparseRunList)
from compiler.testing import random_sparse
from tests.compiler.lattice.output_cases import (BOUNDS_CHECKED, EXPRS, EXPRS3, FILLS, assembled_natively, check,
                                                 leaf, run_blocks, runs_inputs, used)

RANGED = [SparseByteMap, SparseBand, SparseBlockList]
#: the sparse levels that hold a block of Dense slots per position they keep
HOLDERS = [*RANGED, SparseHash]
#: what the lowering step says of the sparse level over the Dense block
HOW = {SparseByteMap: "marked and stored in its slot", SparseBand: "its band runs from the fiber's first entry",
       SparseBlockList: "a gap starting a new block", SparseHash: "each entry keeping its key"}
BLOCK = "gets a block of slots"


def over(cls, fill=0.0, dense=1):
    """``cls(Dense(...(Element(fill))))``, ``dense`` Dense levels under ``cls``."""
    inner = leaf(fill)
    for _ in range(dense):
        inner = Dense(inner)
    return cls(inner)


#: three-mode nestings: the holding level over one or two Dense levels, under a Dense, a SparseList or a SparseHash
NESTED3 = {f"{above}({cls.name}(Dense))": (lambda fill, cls=cls, up=up: Format(up(over(cls, fill))))
           for cls in HOLDERS for above, up in (("Dense", Dense), ("SparseList", SparseList))}
NESTED3.update({f"{cls.name}(Dense(Dense))": (lambda fill, cls=cls: Format(over(cls, fill, dense=2)))
                for cls in HOLDERS})
NESTED3["SparseHash(SparseBand(Dense))"] = lambda fill: Format(SparseHash(over(SparseBand, fill)))
NESTED3["SparseHash(SparseHash(Dense))"] = lambda fill: Format(SparseHash(over(SparseHash, fill)))
NESTED2 = {f"{cls.name}(Dense)": (lambda fill, cls=cls: Format(over(cls, fill))) for cls in HOLDERS}
#: the sparse level of each nesting over the Dense block (what its lowering note says)
LEVEL = {name: next(c for c in HOLDERS if f"{c.name}(Dense" in name) for name in [*NESTED2, *NESTED3]}


def matrices(seed=21, shape=(7, 5), density=0.3, fill=0.0):
    """CSR and DCSR operands with empty rows (gaps in a band, breaks between blocks) and an
    operand for SpMM."""
    rng = np.random.default_rng(seed)
    a, b = (random_sparse(shape, density, rng, fill=fill, empty=(1, 4)) for _ in range(2))
    d = random_sparse((shape[1], 4), 0.5, rng, fill=fill)
    return {"A": Tensor.from_numpy(a, "csr", fill=fill), "B": Tensor.from_numpy(b, "dcsr", fill=fill),
            "D": Tensor.from_numpy(d, "csr", fill=fill)}


def cubes(seed=22, shape=(4, 6, 3), density=0.3, fill=0.0):
    rng = np.random.default_rng(seed)
    t, u = (random_sparse(shape, density, rng, fill=fill, empty=(1,)) for _ in range(2))
    t[:, 2] = u[:, 3] = fill   # (a gap inside each band of the middle mode)
    m = random_sparse((shape[2], shape[2]), 0.5, rng, fill=fill)
    return {"T": Tensor.from_numpy(t, "csf", fill=fill), "U": Tensor.from_numpy(u, "csf", fill=fill),
            "M": Tensor.from_numpy(m, "csr", fill=fill)}


@pytest.mark.parametrize("cls", HOLDERS)
@pytest.mark.parametrize("what", ["sum", "product", "copy", "spmm"])
def test_a_sparse_level_over_dense_is_assembled_by_the_kernel(cls, what):
    # before: built as a SparseList(Dense) stand-in and converted after each call (the convert step;
    # SparseHash(Dense) until outnest2)
    expr, out = EXPRS[what], Format(over(cls))
    k = check(expr, out, checked=what in BOUNDS_CHECKED, **used(expr, matrices()))
    assembled_natively(k, out, HOW[cls])
    assembled_natively(k, out, BLOCK)
    assert "C1_start" in k.c_source


def _two_each(names, whats):
    """Each of ``names`` with two of ``whats`` in turn, so each expression meets a share of the nestings
    (all of them times all expressions built 63 kernels; the property below draws the other pairs)."""
    whats = list(whats)
    return [(n, whats[(2 * k + d) % len(whats)]) for k, n in enumerate(names) for d in (0, 1)]


@pytest.mark.parametrize("out, what", _two_each(NESTED3, EXPRS3))
def test_ranged_levels_over_dense_in_three_modes(out, what):
    expr = EXPRS3[what]
    k = check(expr, NESTED3[out](0.0), checked=what in BOUNDS_CHECKED, **used(expr, cubes()))
    assembled_natively(k, NESTED3[out](0.0), HOW[LEVEL[out]])
    assembled_natively(k, NESTED3[out](0.0), BLOCK)
    assert "_kept" in k.c_source and "_start" in k.c_source


@pytest.mark.parametrize("cls", HOLDERS)
def test_spmv_of_each_slice_into_a_sparse_level_over_dense(cls):
    # C[i, j] = T[i, j, k] * v[k]: SpMV of each slice T[i] (a row of C kept where a product is
    # not the fill; v's zero at k = 1 makes some products vanish)
    t = cubes(seed=23)["T"]
    v = Tensor.from_numpy(np.array([1.0, 0.0, 2.0]), "dense")
    out = Format(over(cls))
    k = check("C[i, j] = T[i, j, k] * v[k]", out, T=t, v=v)
    assembled_natively(k, out, BLOCK)


def test_a_band_keeps_its_gap_positions_at_the_fill():
    # rows 1 and 2 are empty between rows 0 and 3: the band stores them, blocks of the fill; a row
    # whose values cancel (row 4: 1 + -1) is not kept, and the band ends at row 3
    a = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 2.0], [1.0, 0.0]])
    b = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [-1.0, 0.0]])
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    out = Format(over(SparseBand))
    k = check(EXPRS["sum"], out, A=A, B=B)
    assembled_natively(k, out, BLOCK)
    got = k(A=A, B=B)
    assert got.levels[0].ofs.tolist() == [0, 4] and got.levels[0].idx.tolist() == [4]
    assert got.vals.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0]


def test_a_byte_map_block_not_kept_holds_only_the_fill():
    # row 0's one product underflows to -0.0, equal to the fill: its slot is not marked and its
    # block keeps the fill (a -0.0 stored there would differ from from_numpy's 0.0 bit for bit)
    a = np.array([[0.0, -1e-200], [2.0, 0.0]])
    b = np.array([[0.0, 1e-200], [3.0, 0.0]])
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    for cls in HOLDERS:
        out = Format(Dense(over(cls, dense=1)))
        k = check("C[i, j, k] = A[i, j] * B[i, k]", out, A=A, B=B)
        assembled_natively(k, out, BLOCK)
        assert not np.signbit(k(A=A, B=B).vals).any()


def test_assembles_asks_the_levels_not_their_names():
    class Ragged(SparseBand):   # a band's subclass holds blocks of Dense slots as a band does
        name = "Ragged"

    class Slots(Dense):   # a full level that does not declare it is located under a sparse one
        name = "Slots"
        locates_under_appended = False
    dense = Dense(Element(0.0))
    assert assembles((Ragged(dense), dense), 0) and assembles((Ragged(dense), dense), 1)
    assert assembles((SparseList(dense), Ragged(dense), dense, dense), 3)
    assert not assembles((Ragged(dense), dense), 1, one_pass=False)   # (two-phase: no blocks)
    assert not assembles((Ragged(dense), Slots(dense)), 1)
    assert not assembles((Ragged(dense), SparseHash(dense)), 0)   # (a hash below: a stand-in)
    class Keyed(SparseHash):   # a hash's subclass holds blocks of Dense slots as a hash does
        name = "Keyed"
    assert assembles((Keyed(dense), dense), 1) and assembles((Dense(dense), Keyed(dense), dense), 2)
    assert not assembles((Keyed(dense), dense), 1, one_pass=False)
    assert not assembles((SparseList(dense), SparseByteMap(dense), SparseByteMap(dense), dense), 1)
    assert building_output(Format(Dense(Ragged(Dense(Element(0.0))))), "C") is None


def special(x, fill, rng):
    """Some stored values of ``x`` made NaN, inf, -inf or -0.0."""
    stored = ~np.isnan(x) if np.isnan(fill) else x != fill
    x[stored & (rng.random(x.shape) < 0.3)] = rng.choice([np.nan, np.inf, -np.inf, -0.0])
    return x


@settings(max_examples=12, suppress_health_check=[HealthCheck.too_slow])
@given(out=st.sampled_from(list(NESTED2) + list(NESTED3)), what=st.sampled_from(["sum", "product", "copy", "spmm"]),
       shape=st.tuples(st.integers(0, 6), st.integers(0, 5), st.integers(0, 3)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), stored_special=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(out="SparseBand(Dense)", what="sum", shape=(5, 3, 1), fill=np.nan, density=0.3, stored_special=True, seed=0)
@example(out="SparseByteMap(Dense)", what="product", shape=(4, 4, 1), fill=1.0, density=0.0, stored_special=False,
         seed=0)   # all fill
@example(out="SparseBlockList(Dense)", what="copy", shape=(0, 3, 1), fill=-np.inf, density=1.0, stored_special=True,
         seed=0)   # no rows
@example(out="Dense(SparseBand(Dense))", what="copy", shape=(2, 5, 0), fill=np.inf, density=0.7,
         stored_special=False, seed=1)   # no slots in a block
@example(out="SparseList(SparseByteMap(Dense))", what="spmm", shape=(3, 4, 2), fill=0.0, density=0.3,
         stored_special=True, seed=2)
@example(out="SparseHash(SparseBand(Dense))", what="sum", shape=(4, 5, 2), fill=0.0, density=0.3,
         stored_special=True, seed=3)
@example(out="SparseHash(Dense)", what="sum", shape=(5, 3, 1), fill=np.nan, density=0.3, stored_special=True, seed=4)
@example(out="SparseHash(SparseHash(Dense))", what="copy", shape=(3, 0, 2), fill=1.0, density=0.7,
         stored_special=False, seed=5)   # no rows in a slice
@example(out="Dense(SparseHash(Dense))", what="product", shape=(3, 4, 2), fill=-np.inf, density=0.0,
         stored_special=False, seed=6)   # all fill
def test_property_ranged_levels_over_dense(out, what, shape, fill, density, stored_special, seed):
    rng = np.random.default_rng(seed)
    n, m, p = shape
    if out in NESTED2:
        a, b = (random_sparse((n, m), density, rng, fill=fill) for _ in range(2))
        d = random_sparse((m, p), density, rng, fill=fill)
        arrays = {"A": (a, "csr"), "B": (b, "dcsr"), "D": (d, "csr")}
        expr, fmt = EXPRS[what], NESTED2[out]
    else:
        t, u = (random_sparse((n, m, p), density, rng, fill=fill) for _ in range(2))
        mm = random_sparse((p, p), density, rng, fill=fill)
        arrays = {"T": (t, "csf"), "U": (u, "csf"), "M": (mm, "csr")}
        expr, fmt = EXPRS3["contract" if what == "spmm" else what], NESTED3[out]
    tensors = {name: Tensor.from_numpy(special(x, fill, rng) if stored_special else x, f, fill=fill)
               for name, (x, f) in arrays.items()}
    run_blocks(expr, fmt, used(expr, tensors), BLOCK)



# -- run-length, point and interval levels innermost under an appended level (a SparseList, a SparseHash) ----
# (a fiber's runs closed, a RunList's rest of the fill, as its parent keeps it; a parent whose fiber got no
# run keeps no entry)

RUNS = [RunList, SparseRunList]
AS_RUNS = "appended in storage order as runs"
#: two- and three-mode nestings of a run-length level under appended levels
RUNS_UNDER = {f"{up.__name__}({cls.name})": (lambda fill, cls=cls, up=up: Format(up(cls(leaf(fill)))))
              for cls in RUNS for up in (SparseList, SparseHash)}
RUNS_UNDER3 = {"Dense(SparseList(RunList))": lambda fill: Format(Dense(SparseList(RunList(leaf(fill))))),
               "SparseList(SparseList(SparseRunList))":
                   lambda fill: Format(SparseList(SparseList(SparseRunList(leaf(fill))))),
               "SparseHash(SparseHash(RunList))": lambda fill: Format(SparseHash(SparseHash(RunList(leaf(fill)))))}


@pytest.mark.parametrize("out", list(RUNS_UNDER))
@pytest.mark.parametrize("what", ["sum", "product", "copy", "spmm"])
def test_runs_under_an_appended_level_are_assembled_by_the_kernel(out, what):
    # before: built as DCSR and converted after each call (the convert step)
    expr, fmt = EXPRS[what], RUNS_UNDER[out](0.0)
    k = check(expr, fmt, checked=what in BOUNDS_CHECKED, **used(expr, runs_inputs(31)))
    assembled_natively(k, fmt, AS_RUNS)


@pytest.mark.parametrize("out", list(RUNS_UNDER3))
@pytest.mark.parametrize("what", ["sum", "copy", "contract"])
def test_runs_under_appended_levels_in_three_modes(out, what):
    rng = np.random.default_rng(32)
    t, u = (random_sparse((4, 5, 6), 0.5, rng, lo=1, hi=3, empty=(1,)) for _ in range(2))
    m = random_sparse((6, 6), 0.5, rng, lo=1, hi=3)
    tensors = {"T": Tensor.from_numpy(t, "csf"), "U": Tensor.from_numpy(u, "csf"), "M": Tensor.from_numpy(m, "csr")}
    expr, fmt = EXPRS3[what], RUNS_UNDER3[out](0.0)
    k = check(expr, fmt, checked=what in BOUNDS_CHECKED, **used(expr, tensors))
    assembled_natively(k, fmt, AS_RUNS)


@pytest.mark.parametrize("cls", RUNS)
def test_spmv_of_each_slice_into_runs_under_a_list(cls):
    t = cubes(seed=33)["T"]
    v = Tensor.from_numpy(np.array([1.0, 0.0, 1.0]), "dense")
    fmt = Format(SparseList(cls(leaf())))
    k = check("C[i, j] = T[i, j, k] * v[k]", fmt, T=t, v=v)
    assembled_natively(k, fmt, AS_RUNS)


def test_a_row_of_runs_is_closed_as_its_parent_keeps_it():
    # DCSR rows 0, 2 and 3: each a RunList fiber covering the row (its rest a run of the fill); row 1,
    # whose one value cancels, is not kept
    a = np.array([[0.0, 2.0, 2.0, 0.0], [5.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [3.0, 0.0, 0.0, 0.0]])
    b = np.array([[0.0, 0.0, 0.0, 0.0], [-5.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    A, B = Tensor.from_numpy(a, "dcsr"), Tensor.from_numpy(b, "dcsr")
    fmt = Format(SparseList(RunList(leaf())))
    k = check(EXPRS["sum"], fmt, A=A, B=B)
    assembled_natively(k, fmt, AS_RUNS)
    got = k(A=A, B=B)
    assert got.levels[0].idx.tolist() == [0, 2, 3]
    assert got.levels[1].pos.tolist() == [0, 3, 5, 7]
    assert got.levels[1].right.tolist() == [1, 3, 4, 3, 4, 1, 4]


@pytest.mark.parametrize("cls", [SparsePoint, SparseInterval])
def test_a_point_or_interval_under_a_list(cls):
    # one entry per kept row (rows 1 and 4 empty); a row of two entries is refused, naming the output
    a = np.zeros((6, 5))
    a[[0, 2, 3, 5], [4, 1, 1, 0]] = [1.0, 2.0, 2.0, 3.0]
    A = Tensor.from_numpy(a, "csr")
    fmt = Format(SparseList(cls(leaf())))
    k = check("C[i, j] = A[i, j]", fmt, A=A)
    assembled_natively(k, fmt, "each call checks")
    a[3, 3] = 7.0
    with pytest.raises(FormatError, match=rf"^C: level 1 \({cls.name}\): fiber 2 "):
        k(A=Tensor.from_numpy(a, "csr"))


@settings(max_examples=12, suppress_health_check=[HealthCheck.too_slow])
@given(out=st.sampled_from(list(RUNS_UNDER)), what=st.sampled_from(["sum", "product", "copy", "spmm"]),
       shape=st.tuples(st.integers(0, 6), st.integers(0, 6)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), stored_special=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(out="SparseList(RunList)", what="sum", shape=(3, 4), fill=np.nan, density=0.7, stored_special=True, seed=0)
@example(out="SparseHash(SparseRunList)", what="product", shape=(4, 4), fill=1.0, density=0.0, stored_special=False,
         seed=0)   # all fill
@example(out="SparseList(SparseRunList)", what="copy", shape=(0, 3), fill=-np.inf, density=1.0, stored_special=True,
         seed=0)   # no rows
@example(out="SparseHash(RunList)", what="spmm", shape=(3, 0), fill=np.inf, density=0.7, stored_special=False,
         seed=1)   # no columns
@example(out="SparseList(SparseRunList)", what="copy", shape=(4, 5), fill=1.0, density=1.0, stored_special=True,
         seed=3)   # stored -0.0s beside a fill of 1.0: runs of their own
def test_property_runs_under_an_appended_level(out, what, shape, fill, density, stored_special, seed):
    tensors = runs_inputs(seed, shape, fill, density)
    if stored_special:   # (NaN, ±inf or -0.0: equal neighbours merge as numpy's == says)
        rng = np.random.default_rng(seed)
        tensors = {name: Tensor.from_numpy(special(t.to_numpy(), fill, rng), f, fill=fill)
                   for (name, t), f in zip(tensors.items(), ("csr", "dcsr", "csr"))}
    run_blocks(EXPRS[what], RUNS_UNDER[out], used(EXPRS[what], tensors), AS_RUNS)


# -- run-length, point and interval levels that do not cover their fibers, above other levels -----------------
# (appended as a SparseList is, each coordinate whose fiber below got entries its own run [i, i + 1), as
# from_numpy stores them: runs of equal fibers are not merged)

UNIT = "its own run [i, i + 1)"
#: two- and three-mode nestings of a SparseRunList above other levels
UNITS2 = {f"SparseRunList({below.__name__})": (lambda fill, below=below: Format(SparseRunList(below(leaf(fill)))))
          for below in (SparseList, Dense, SparseHash, SparseByteMap, RunList)}
UNITS3 = {"Dense(SparseRunList(SparseList))": lambda fill: Format(Dense(SparseRunList(SparseList(leaf(fill))))),
          "SparseList(SparseRunList(Dense))": lambda fill: Format(SparseList(SparseRunList(Dense(leaf(fill))))),
          "SparseRunList(SparseList(SparseList))":
              lambda fill: Format(SparseRunList(SparseList(SparseList(leaf(fill))))),
          "SparseHash(SparseRunList(SparseBand))": lambda fill: Format(SparseHash(SparseRunList(SparseBand(leaf(fill))))),
          "SparseRunList(SparseHash(Dense))": lambda fill: Format(SparseRunList(SparseHash(Dense(leaf(fill))))),
          "SparseRunList(SparseRunList(SparseRunList))":
              lambda fill: Format(SparseRunList(SparseRunList(SparseRunList(leaf(fill)))))}


@pytest.mark.parametrize("out", list(UNITS2))
@pytest.mark.parametrize("what", ["sum", "product", "copy", "spmm"])
def test_a_run_level_above_another_is_assembled_by_the_kernel(out, what):
    # before: built as DCSR (or SparseList(Dense)) and converted after each call (the convert step)
    expr, fmt = EXPRS[what], UNITS2[out](0.0)
    k = check(expr, fmt, checked=what in BOUNDS_CHECKED, **used(expr, matrices(seed=41)))
    assembled_natively(k, fmt, UNIT)


@pytest.mark.parametrize("out, what", _two_each(UNITS3, EXPRS3))
def test_run_levels_above_others_in_three_modes(out, what):
    expr, fmt = EXPRS3[what], UNITS3[out](0.0)
    k = check(expr, fmt, checked=what in BOUNDS_CHECKED, **used(expr, cubes(seed=42)))
    assembled_natively(k, fmt, UNIT)


def test_equal_rows_are_runs_of_their_own():
    # rows 3 and 4 are equal: from_numpy keeps them as two runs, and so does the kernel; the empty rows
    # 1, 2 and 5 are no runs
    a = np.array([[0, 1.0, 0], [0, 0, 0], [0, 0, 0], [2.0, 0, 3.0], [2.0, 0, 3.0], [0, 0, 0]])
    A = Tensor.from_numpy(a, "csr")
    for below in (SparseList, Dense):
        fmt = Format(SparseRunList(below(leaf())))
        k = check("C[i, j] = A[i, j]", fmt, A=A)
        assembled_natively(k, fmt, UNIT)
        got = k(A=A)
        assert got.levels[0].left.tolist() == [0, 3, 4] and got.levels[0].right.tolist() == [1, 4, 5]


@pytest.mark.parametrize("fmt", [Format(SparsePoint(SparseList(leaf()))), Format(SparseInterval(Dense(leaf()))),
                                 Format(SparsePoint(SparseHash(leaf())))])
def test_a_point_or_interval_above_another_level(fmt):
    # one row kept (row 2), then a second row kept: refused after the call, naming the output and the fiber
    a = np.zeros((4, 5))
    a[2, [1, 3]] = [1.0, 2.0]
    A = Tensor.from_numpy(a, "csr")
    k = check("C[i, j] = A[i, j] * A[i, j]", fmt, A=A)
    assembled_natively(k, fmt, "each call checks")
    a[0, 4] = 7.0
    with pytest.raises(FormatError, match=rf"^C: level 0 \({fmt.levels[0].name}\): fiber 0 "):
        k(A=Tensor.from_numpy(a, "csr"))


def test_a_point_in_each_slice_above_a_list():
    # Dense(SparsePoint(SparseList)): each slice T[i] keeps one row at most
    t = np.zeros((3, 4, 5))
    t[0, 2, [0, 4]] = [1.0, 2.0]
    t[2, 1, 3] = 3.0
    T = Tensor.from_numpy(t, "csf")
    fmt = Format(Dense(SparsePoint(SparseList(leaf()))))
    k = check("C[i, j, k] = T[i, j, k] + T[i, j, k]", fmt, T=T)
    assembled_natively(k, fmt, "each call checks")


def test_assembles_asks_whether_a_run_level_covers_its_fibers():
    class Spans(SparseRunList):   # a subclass is appended above another level as its parent is
        name = "Spans"
    dense = Dense(Element(0.0))
    assert assembles((Spans(dense), dense), 0) and assembles((Spans(dense), dense), 1)
    assert assembles((Spans(dense), SparseList(dense)), 1) and assembles((SparsePoint(dense), dense), 1)
    assert not assembles((dense, RunList(dense), SparseList(dense)), 1)   # (under Dense: gaps in skipped fibers)
    assert not assembles((RunList(dense), SparseHash(dense)), 0)   # (a hash below: a stand-in)
    assert not assembles((Spans(dense), dense), 0, one_pass=False)


@settings(max_examples=12, suppress_health_check=[HealthCheck.too_slow])
@given(out=st.sampled_from(list(UNITS2) + list(UNITS3)), what=st.sampled_from(["sum", "product", "copy", "spmm"]),
       shape=st.tuples(st.integers(0, 6), st.integers(0, 5), st.integers(0, 3)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), stored_special=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(out="SparseRunList(SparseList)", what="sum", shape=(5, 3, 1), fill=np.nan, density=0.3, stored_special=True,
         seed=0)
@example(out="SparseRunList(Dense)", what="product", shape=(4, 4, 1), fill=1.0, density=0.0, stored_special=False,
         seed=0)   # all fill
@example(out="SparseRunList(RunList)", what="copy", shape=(0, 3, 1), fill=-np.inf, density=1.0, stored_special=True,
         seed=0)   # no rows
@example(out="Dense(SparseRunList(SparseList))", what="copy", shape=(2, 5, 0), fill=np.inf, density=0.7,
         stored_special=False, seed=1)   # no columns
@example(out="SparseRunList(SparseHash(Dense))", what="spmm", shape=(3, 4, 2), fill=0.0, density=0.3,
         stored_special=True, seed=2)
def test_property_run_levels_above_others(out, what, shape, fill, density, stored_special, seed):
    rng = np.random.default_rng(seed)
    n, m, p = shape
    if out in UNITS2:
        a, b = (random_sparse((n, m), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
        d = random_sparse((m, p), density, rng, fill=fill, lo=1, hi=3)
        arrays = {"A": (a, "csr"), "B": (b, "dcsr"), "D": (d, "csr")}
        expr, fmt = EXPRS[what], UNITS2[out]
    else:
        t, u = (random_sparse((n, m, p), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
        mm = random_sparse((p, p), density, rng, fill=fill, lo=1, hi=3)
        arrays = {"T": (t, "csf"), "U": (u, "csf"), "M": (mm, "csr")}
        expr, fmt = EXPRS3["contract" if what == "spmm" else what], UNITS3[out]
    tensors = {name: Tensor.from_numpy(special(x, fill, rng) if stored_special else x, f, fill=fill)
               for name, (x, f) in arrays.items()}
    run_blocks(expr, fmt, used(expr, tensors), UNIT)


# -- a byte map over a level appended as a SparseList, under located levels: a fiber per slot ------------------
# (its lengths summed after the loops; a coordinate marked and kept if the fiber in its slot got entries)

SLOTTED = "a fiber of level"
OVER2 = {f"SparseByteMap({below.__name__})": (lambda fill, below=below: Format(SparseByteMap(below(leaf(fill)))))
         for below in (SparseList, SparseRunList)}
OVER3 = {"Dense(SparseByteMap(SparseList))": lambda fill: Format(Dense(SparseByteMap(SparseList(leaf(fill))))),
         "SparseByteMap(SparseList(SparseList))":
             lambda fill: Format(SparseByteMap(SparseList(SparseList(leaf(fill))))),
         "SparseByteMap(SparseList(Dense))": lambda fill: Format(SparseByteMap(SparseList(Dense(leaf(fill))))),
         "SparseByteMap(SparseRunList(SparseHash))":
             lambda fill: Format(SparseByteMap(SparseRunList(SparseHash(leaf(fill)))))}


@pytest.mark.parametrize("out", list(OVER2))
@pytest.mark.parametrize("what", ["sum", "product", "copy", "spmm"])
def test_a_byte_map_over_a_sparse_level_is_assembled_by_the_kernel(out, what):
    # before: built as DCSR and converted after each call (the convert step)
    expr, fmt = EXPRS[what], OVER2[out](0.0)
    k = check(expr, fmt, checked=what in BOUNDS_CHECKED, **used(expr, matrices(seed=51)))
    assembled_natively(k, fmt, SLOTTED)


@pytest.mark.parametrize("out, what", _two_each(OVER3, EXPRS3))
def test_byte_maps_over_sparse_levels_in_three_modes(out, what):
    expr, fmt = EXPRS3[what], OVER3[out](0.0)
    k = check(expr, fmt, checked=what in BOUNDS_CHECKED, **used(expr, cubes(seed=52)))
    assembled_natively(k, fmt, SLOTTED)


def test_a_byte_map_gives_each_slot_a_fiber():
    # rows 1 and 2 empty, row 4's values cancel: their slots are unmarked, their fibers empty
    a = np.array([[0, 1.0, 0], [0, 0, 0], [0, 0, 0], [2.0, 0, 3.0], [4.0, 0, 0]])
    b = np.zeros_like(a)
    b[4, 0] = -4.0
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    fmt = Format(SparseByteMap(SparseList(leaf())))
    k = check(EXPRS["sum"], fmt, A=A, B=B)
    assembled_natively(k, fmt, SLOTTED)
    got = k(A=A, B=B)
    assert got.levels[0].srt.tolist() == [0, 3] and got.levels[0].tbl.tolist() == [True, False, False, True, False]
    assert got.levels[1].pos.tolist() == [0, 1, 1, 1, 3, 3]


def test_assembles_a_byte_map_over_a_sparse_level_only_under_located_levels():
    class Marks(SparseByteMap):   # a subclass is assembled as a byte map is
        name = "Marks"
    dense = Dense(Element(0.0))
    lst = SparseList(dense)
    assert assembles((Marks(lst), lst), 0) and assembles((Marks(lst), lst), 1)
    assert assembles((dense, Marks(lst), lst), 1) and assembles((dense, Marks(lst), SparseRunList(dense)), 1)
    assert not assembles((lst, Marks(lst), lst), 1)   # (its slots not counted up front: a stand-in)
    assert not assembles((Marks(lst), RunList(dense)), 0)   # (a RunList below: a stand-in)
    assert not assembles((Marks(lst), lst), 0, one_pass=False)
    assert not assembles((SparseBand(lst), SparseHash(dense)), 0)


@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(out=st.sampled_from(list(OVER2) + list(OVER3)), what=st.sampled_from(["sum", "product", "copy", "spmm"]),
       shape=st.tuples(st.integers(0, 6), st.integers(0, 5), st.integers(0, 3)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), stored_special=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(out="SparseByteMap(SparseList)", what="sum", shape=(5, 3, 1), fill=np.nan, density=0.3, stored_special=True,
         seed=0)
@example(out="SparseByteMap(SparseRunList)", what="product", shape=(4, 4, 1), fill=1.0, density=0.0,
         stored_special=False, seed=0)   # all fill
@example(out="Dense(SparseByteMap(SparseList))", what="copy", shape=(0, 3, 1), fill=-np.inf, density=1.0,
         stored_special=True, seed=0)   # no slices
@example(out="SparseByteMap(SparseList(Dense))", what="spmm", shape=(3, 4, 0), fill=np.inf, density=0.7,
         stored_special=False, seed=1)   # no slots in a block
def test_property_byte_maps_over_sparse_levels(out, what, shape, fill, density, stored_special, seed):
    rng = np.random.default_rng(seed)
    n, m, p = shape
    if out in OVER2:
        a, b = (random_sparse((n, m), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
        d = random_sparse((m, p), density, rng, fill=fill, lo=1, hi=3)
        arrays = {"A": (a, "csr"), "B": (b, "dcsr"), "D": (d, "csr")}
        expr, fmt = EXPRS[what], OVER2[out]
    else:
        t, u = (random_sparse((n, m, p), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
        mm = random_sparse((p, p), density, rng, fill=fill, lo=1, hi=3)
        arrays = {"T": (t, "csf"), "U": (u, "csf"), "M": (mm, "csr")}
        expr, fmt = EXPRS3["contract" if what == "spmm" else what], OVER3[out]
    tensors = {name: Tensor.from_numpy(special(x, fill, rng) if stored_special else x, f, fill=fill)
               for name, (x, f) in arrays.items()}
    run_blocks(expr, fmt, used(expr, tensors), SLOTTED)


# -- a RunList as the outermost level over a level appended as a SparseList ----------------------------------
# (each kept coordinate its own run; a gap between them, and the rest after the last, a run of the fill over
# an empty fiber below)

COVERS = "a run of the fill over an empty fiber"
RUNS_OVER = {"RunList(SparseList)": lambda fill: Format(RunList(SparseList(leaf(fill)))),
             "RunList(SparseRunList)": lambda fill: Format(RunList(SparseRunList(leaf(fill)))),
             "RunList(SparseList(SparseList))": lambda fill: Format(RunList(SparseList(SparseList(leaf(fill))))),
             "RunList(SparseList(Dense))": lambda fill: Format(RunList(SparseList(Dense(leaf(fill)))))}


@pytest.mark.parametrize("out", list(RUNS_OVER))
@pytest.mark.parametrize("what", ["sum", "product", "copy", "spmm"])
def test_a_run_list_over_a_sparse_level_is_assembled_by_the_kernel(out, what):
    # before: built as DCSR (or CSF) and converted after each call (the convert step)
    fmt = RUNS_OVER[out](0.0)
    expr = EXPRS[what] if fmt.ndim == 2 else EXPRS3["contract" if what == "spmm" else what]
    k = check(expr, fmt, checked=what in BOUNDS_CHECKED,
              **used(expr, matrices(seed=61) if fmt.ndim == 2 else cubes(seed=62)))
    assembled_natively(k, fmt, COVERS)


def test_a_run_list_covers_its_gaps_with_runs_of_the_fill():
    # rows 0, 3 and 6 kept: runs [0, 1), [1, 3) of the fill, [3, 4), [4, 6) of the fill (row 5's values
    # cancel), [6, 7), and the rest [7, 8) of the fill; no rows: no runs
    a = np.zeros((8, 3))
    a[[0, 3, 5, 6], [1, 0, 2, 2]] = [1.0, 2.0, 3.0, 4.0]
    b = np.zeros_like(a)
    b[5, 2] = -3.0
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    fmt = Format(RunList(SparseList(leaf())))
    k = check(EXPRS["sum"], fmt, A=A, B=B)
    assembled_natively(k, fmt, COVERS)
    got = k(A=A, B=B)
    assert got.levels[0].right.tolist() == [1, 3, 4, 6, 7, 8]
    assert got.levels[1].pos.tolist() == [0, 1, 1, 2, 2, 3, 3]
    empty = Tensor.from_numpy(np.zeros((0, 3)), "csr")
    assert check("C[i, j] = A[i, j]", fmt, A=empty)(A=empty).levels[0].right.tolist() == []


@settings(max_examples=12, suppress_health_check=[HealthCheck.too_slow])
@given(out=st.sampled_from(list(RUNS_OVER)), what=st.sampled_from(["sum", "product", "copy", "spmm"]),
       shape=st.tuples(st.integers(0, 6), st.integers(0, 5), st.integers(0, 3)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), stored_special=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(out="RunList(SparseList)", what="sum", shape=(5, 3, 1), fill=np.nan, density=0.3, stored_special=True, seed=0)
@example(out="RunList(SparseRunList)", what="product", shape=(4, 4, 1), fill=1.0, density=0.0, stored_special=False,
         seed=0)   # all fill: one run of the fill
@example(out="RunList(SparseList(Dense))", what="copy", shape=(0, 3, 1), fill=-np.inf, density=1.0,
         stored_special=True, seed=0)   # no rows
@example(out="RunList(SparseList(SparseList))", what="spmm", shape=(3, 4, 2), fill=0.0, density=0.3,
         stored_special=True, seed=2)
def test_property_run_lists_over_sparse_levels(out, what, shape, fill, density, stored_special, seed):
    rng = np.random.default_rng(seed)
    n, m, p = shape
    fmt = RUNS_OVER[out]
    if fmt(0.0).ndim == 2:
        a, b = (random_sparse((n, m), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
        d = random_sparse((m, p), density, rng, fill=fill, lo=1, hi=3)
        arrays = {"A": (a, "csr"), "B": (b, "dcsr"), "D": (d, "csr")}
        expr = EXPRS[what]
    else:
        t, u = (random_sparse((n, m, p), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
        mm = random_sparse((p, p), density, rng, fill=fill, lo=1, hi=3)
        arrays = {"T": (t, "csf"), "U": (u, "csf"), "M": (mm, "csr")}
        expr = EXPRS3["contract" if what == "spmm" else what]
    tensors = {name: Tensor.from_numpy(special(x, fill, rng) if stored_special else x, f, fill=fill)
               for name, (x, f) in arrays.items()}
    run_blocks(expr, fmt, used(expr, tensors), COVERS)



# -- a band or block list over a level appended as a SparseList: a fiber per position -------------------------
# (a band of rows, or blocks of rows, each a compressed fiber; a band's positions between kept rows empty fibers)

RANGES = "a fiber of level"
RANGES_OVER2 = {"SparseBand(SparseList)": lambda fill: Format(SparseBand(SparseList(leaf(fill)))),
                "SparseBlockList(SparseList)": lambda fill: Format(SparseBlockList(SparseList(leaf(fill)))),
                "SparseBand(SparseRunList)": lambda fill: Format(SparseBand(SparseRunList(leaf(fill))))}
RANGES_OVER3 = {"Dense(SparseBand(SparseList))": lambda fill: Format(Dense(SparseBand(SparseList(leaf(fill))))),
                "SparseHash(SparseBlockList(SparseList))":
                    lambda fill: Format(SparseHash(SparseBlockList(SparseList(leaf(fill))))),
                "SparseBand(SparseList(Dense))": lambda fill: Format(SparseBand(SparseList(Dense(leaf(fill))))),
                "SparseBlockList(SparseList(SparseBand))":
                    lambda fill: Format(SparseBlockList(SparseList(SparseBand(leaf(fill)))))}


@pytest.mark.parametrize("out", list(RANGES_OVER2))
@pytest.mark.parametrize("what", ["sum", "product", "copy"])
def test_a_band_or_block_list_over_a_sparse_level_is_assembled_by_the_kernel(out, what):
    # before: built as DCSR (or SparseList(SparseRunList)) and converted after each call (the convert step)
    expr, fmt = EXPRS[what], RANGES_OVER2[out](0.0)
    k = check(expr, fmt, checked=what in BOUNDS_CHECKED, **used(expr, matrices(seed=71)))
    assembled_natively(k, fmt, RANGES)


@pytest.mark.parametrize("out", list(RANGES_OVER3))
def test_bands_and_block_lists_over_sparse_levels_in_three_modes(out):
    expr, fmt = EXPRS3["contract"], RANGES_OVER3[out](0.0)
    k = check(expr, fmt, **used(expr, cubes(seed=72)))
    assembled_natively(k, fmt, RANGES)


def test_a_band_of_rows_holds_empty_fibers_in_its_gaps():
    # rows 1, 3 and 4 kept: the band [1, 5) holds row 2 as an empty fiber; row 5's values cancel and
    # row 6 is empty, so the band ends at row 4. As blocks: [1, 2) and [3, 5), no fiber for row 2
    a = np.zeros((7, 3))
    a[[1, 3, 4, 5], [2, 0, 1, 1]] = [1.0, 2.0, 3.0, 4.0]
    b = np.zeros_like(a)
    b[5, 1] = -4.0
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    band, blocks = RANGES_OVER2["SparseBand(SparseList)"](0.0), RANGES_OVER2["SparseBlockList(SparseList)"](0.0)
    k = check(EXPRS["sum"], band, A=A, B=B)
    assembled_natively(k, band, RANGES)
    got = k(A=A, B=B)
    assert got.levels[0].ofs.tolist() == [0, 4] and got.levels[0].idx.tolist() == [5]
    assert got.levels[1].pos.tolist() == [0, 1, 1, 2, 3]
    got = check(EXPRS["sum"], blocks, A=A, B=B)(A=A, B=B)
    assert got.levels[0].pos.tolist() == [0, 2] and got.levels[0].idx.tolist() == [2, 5]
    assert got.levels[0].ofs.tolist() == [0, 1, 3] and got.levels[1].pos.tolist() == [0, 1, 2, 3]


def test_assembles_a_band_or_block_list_over_a_level_appended_as_a_list():
    class Ragged(SparseBand):   # a subclass is assembled as a band is
        name = "Ragged"
    dense = Dense(Element(0.0))
    lst = SparseList(dense)
    assert assembles((Ragged(lst), lst), 0) and assembles((SparseBlockList(lst), SparseRunList(dense)), 0)
    assert assembles((SparseHash(lst), Ragged(lst), lst), 1) and assembles((dense, Ragged(lst), lst), 1)
    assert not assembles((Ragged(lst), lst), 0, one_pass=False)
    assert not assembles((Ragged(lst), SparseHash(dense)), 0)   # (a hash below: a stand-in)
    assert not assembles((Ragged(lst), RunList(dense)), 0)   # (runs covering their fibers: a stand-in)
    assert assembles((SparseByteMap(lst), Ragged(lst), lst), 1)   # (in a byte map's slots too)
    assert not assembles((lst, SparseByteMap(lst), Ragged(lst), lst), 2)   # (its slots not counted up front)


@settings(max_examples=6, suppress_health_check=[HealthCheck.too_slow])
@given(out=st.sampled_from(list(RANGES_OVER2) + list(RANGES_OVER3)), what=st.sampled_from(["sum", "product", "copy"]),
       shape=st.tuples(st.integers(0, 6), st.integers(0, 5), st.integers(0, 3)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), stored_special=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(out="SparseBand(SparseList)", what="sum", shape=(5, 3, 1), fill=np.nan, density=0.3, stored_special=True,
         seed=0)
@example(out="SparseBlockList(SparseList)", what="product", shape=(4, 4, 1), fill=1.0, density=0.0,
         stored_special=False, seed=0)   # all fill: no positions
@example(out="SparseBand(SparseRunList)", what="copy", shape=(0, 3, 1), fill=-np.inf, density=1.0,
         stored_special=True, seed=0)   # no rows
@example(out="Dense(SparseBand(SparseList))", what="copy", shape=(2, 5, 0), fill=np.inf, density=0.7,
         stored_special=False, seed=1)   # no columns
@example(out="SparseBand(SparseList(Dense))", what="sum", shape=(6, 4, 2), fill=0.0, density=0.3,
         stored_special=True, seed=2)
def test_property_bands_and_block_lists_over_sparse_levels(out, what, shape, fill, density, stored_special, seed):
    rng = np.random.default_rng(seed)
    n, m, p = shape
    if out in RANGES_OVER2:
        a, b = (random_sparse((n, m), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
        arrays = {"A": (a, "csr"), "B": (b, "dcsr")}
        expr, fmt = EXPRS[what], RANGES_OVER2[out]
    else:
        t, u = (random_sparse((n, m, p), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
        arrays = {"T": (t, "csf"), "U": (u, "csf")}
        expr, fmt = EXPRS3[what], RANGES_OVER3[out]
    tensors = {name: Tensor.from_numpy(special(x, fill, rng) if stored_special else x, f, fill=fill)
               for name, (x, f) in arrays.items()}
    run_blocks(expr, fmt, used(expr, tensors), RANGES)



# -- a RunList as the outermost level over Dense levels: a block of slots per run -----------------------------
# (each kept coordinate its own run over its block; a gap between them, and the rest after the last, a run of the
# fill over a block of the fill)

OVER_BLOCKS = "a run of the fill over a block of the fill"
RUNS_OVER_DENSE = {"RunList(Dense)": lambda fill: Format(RunList(Dense(leaf(fill)))),
                   "RunList(Dense(Dense))": lambda fill: Format(RunList(Dense(Dense(leaf(fill)))))}


@pytest.mark.parametrize("what", ["sum", "product", "copy"])
def test_a_run_list_over_dense_is_assembled_by_the_kernel(what):
    # before: built as SparseList(Dense) and converted after each call (the convert step)
    expr, fmt = EXPRS[what], RUNS_OVER_DENSE["RunList(Dense)"](0.0)
    k = check(expr, fmt, checked=what in BOUNDS_CHECKED, **used(expr, matrices(seed=81)))
    assembled_natively(k, fmt, OVER_BLOCKS)
    assembled_natively(k, fmt, BLOCK)


def test_a_run_list_over_dense_levels_in_three_modes():
    expr, fmt = EXPRS3["contract"], RUNS_OVER_DENSE["RunList(Dense(Dense))"](0.0)
    k = check(expr, fmt, **used(expr, cubes(seed=82)))
    assembled_natively(k, fmt, OVER_BLOCKS)


def test_a_run_list_over_dense_covers_its_gaps_with_blocks_of_the_fill():
    # rows 1, 3 and 4 kept (equal rows 3 and 4: two runs): runs [0, 1) of the fill, [1, 2), [2, 3) of the
    # fill, [3, 4), [4, 5), and [5, 7) of the fill (row 5's values cancel), a block of slots each
    a = np.zeros((7, 2))
    a[[1, 3, 4, 5], [1, 0, 0, 1]] = [1.0, 2.0, 2.0, 3.0]
    b = np.zeros_like(a)
    b[5, 1] = -3.0
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    fmt = RUNS_OVER_DENSE["RunList(Dense)"](0.0)
    k = check(EXPRS["sum"], fmt, A=A, B=B)
    assembled_natively(k, fmt, OVER_BLOCKS)
    got = k(A=A, B=B)
    assert got.levels[0].pos.tolist() == [0, 6] and got.levels[0].right.tolist() == [1, 2, 3, 4, 5, 7]
    assert got.vals.tolist() == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 2.0, 0.0, 0.0, 0.0]
    for rows in (0, 3):   # no rows: no runs; all fill: one run over one block of the fill
        z = Tensor.from_numpy(np.zeros((rows, 2)), "csr")
        got = k(A=z, B=z)
        assert got.levels[0].right.tolist() == ([3] if rows else []) and got.vals.tolist() == [0.0, 0.0][:2 * (rows > 0)]


def test_assembles_a_run_list_over_dense_levels_only_outermost():
    class Spans(RunList):   # a subclass is assembled as a RunList is
        name = "Spans"
    dense = Dense(Element(0.0))
    assert assembles((Spans(dense), dense), 0) and assembles((Spans(dense), dense, dense), 0)
    assert not assembles((dense, Spans(dense), dense), 1)   # (under Dense: a stand-in)
    assert not assembles((Spans(dense), dense), 0, one_pass=False)


@settings(max_examples=6, suppress_health_check=[HealthCheck.too_slow])
@given(out=st.sampled_from(list(RUNS_OVER_DENSE)), what=st.sampled_from(["sum", "product", "copy"]),
       shape=st.tuples(st.integers(0, 6), st.integers(0, 5), st.integers(0, 3)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), stored_special=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(out="RunList(Dense)", what="sum", shape=(5, 3, 1), fill=np.nan, density=0.3, stored_special=True, seed=0)
@example(out="RunList(Dense)", what="product", shape=(4, 4, 1), fill=1.0, density=0.0, stored_special=False,
         seed=0)   # all fill: one run over a block of the fill
@example(out="RunList(Dense(Dense))", what="copy", shape=(0, 3, 1), fill=-np.inf, density=1.0, stored_special=True,
         seed=0)   # no rows
@example(out="RunList(Dense)", what="copy", shape=(3, 0, 1), fill=np.inf, density=0.7, stored_special=False,
         seed=1)   # no slots in a block
def test_property_run_lists_over_dense_levels(out, what, shape, fill, density, stored_special, seed):
    rng = np.random.default_rng(seed)
    n, m, p = shape
    if out == "RunList(Dense)":
        a, b = (random_sparse((n, m), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
        arrays, expr = {"A": (a, "csr"), "B": (b, "dcsr")}, EXPRS[what]
    else:
        t, u = (random_sparse((n, m, p), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
        arrays, expr = {"T": (t, "csf"), "U": (u, "csf")}, EXPRS3[what]
    tensors = {name: Tensor.from_numpy(special(x, fill, rng) if stored_special else x, f, fill=fill)
               for name, (x, f) in arrays.items()}
    run_blocks(expr, RUNS_OVER_DENSE[out], used(expr, tensors), OVER_BLOCKS)



# -- a byte map over a hash, band, block list or byte map, under located levels: a fiber per slot ------------
# (the level below located by its slot as under Dense levels: a hash's and a byte map's keys slot * size + i,
# a band's end per slot, 0 in an unmarked slot)

SLOTS_OVER2 = {f"SparseByteMap({below.__name__})": (lambda fill, below=below: Format(SparseByteMap(below(leaf(fill)))))
               for below in (SparseHash, SparseBand, SparseBlockList, SparseByteMap)}
SLOTS_OVER3 = {"Dense(SparseByteMap(SparseHash))": lambda fill: Format(Dense(SparseByteMap(SparseHash(leaf(fill))))),
               "SparseByteMap(SparseBand(Dense))": lambda fill: Format(SparseByteMap(SparseBand(Dense(leaf(fill))))),
               "SparseByteMap(SparseByteMap(Dense))":
                   lambda fill: Format(SparseByteMap(SparseByteMap(Dense(leaf(fill))))),
               "SparseByteMap(SparseBlockList(SparseList))":
                   lambda fill: Format(SparseByteMap(SparseBlockList(SparseList(leaf(fill)))))}


@pytest.mark.parametrize("out", list(SLOTS_OVER2))
@pytest.mark.parametrize("what", ["sum", "product", "copy"])
def test_a_byte_map_over_a_hash_band_block_list_or_byte_map_is_assembled_by_the_kernel(out, what):
    # before: built as SparseList(that level) and converted after each call (the convert step)
    expr, fmt = EXPRS[what], SLOTS_OVER2[out](0.0)
    k = check(expr, fmt, checked=what in BOUNDS_CHECKED, **used(expr, matrices(seed=91)))
    assembled_natively(k, fmt, SLOTTED)


@pytest.mark.parametrize("out", list(SLOTS_OVER3))
def test_byte_maps_over_keyed_ranged_and_marked_levels_in_three_modes(out):
    expr, fmt = EXPRS3["contract"], SLOTS_OVER3[out](0.0)
    k = check(expr, fmt, **used(expr, cubes(seed=92)))
    assembled_natively(k, fmt, SLOTTED)


def test_a_byte_map_of_bands_ends_each_slot_s_band():
    # rows 0 and 3 kept (row 3's band [1, 4) holds the fill at 2); rows 1 and 2 empty, row 4 cancelled:
    # their slots unmarked, their bands empty (end 0)
    a = np.array([[5.0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 1.0, 0, 2.0], [3.0, 0, 0, 0]])
    b = np.zeros_like(a)
    b[4, 0] = -3.0
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    fmt = SLOTS_OVER2["SparseByteMap(SparseBand)"](0.0)
    k = check(EXPRS["sum"], fmt, A=A, B=B)
    assembled_natively(k, fmt, SLOTTED)
    got = k(A=A, B=B)
    assert got.levels[0].srt.tolist() == [0, 3] and got.levels[0].tbl.tolist() == [True, False, False, True, False]
    assert got.levels[1].ofs.tolist() == [0, 1, 1, 1, 4, 4] and got.levels[1].idx.tolist() == [1, 0, 0, 4, 0]
    assert got.vals.tolist() == [5.0, 1.0, 0.0, 2.0]


def test_assembles_a_byte_map_over_keyed_ranged_and_marked_levels_only_under_located_levels():
    class Marks(SparseByteMap):   # a subclass is assembled as a byte map is, above and below
        name = "Marks"
    dense = Dense(Element(0.0))
    for below in (SparseHash(dense), SparseBand(dense), SparseBlockList(dense), Marks(dense)):
        assert assembles((Marks(below), below), 0) and assembles((Marks(below), below), 1)
        assert assembles((dense, Marks(below), below), 2)
        assert not assembles((SparseList(dense), Marks(below), below), 1)   # (under a list: a stand-in)
        assert not assembles((Marks(below), below), 1, one_pass=False)
    assert not assembles((Marks(dense), RunList(dense)), 0)   # (runs covering their fibers: a stand-in)


@settings(max_examples=6, suppress_health_check=[HealthCheck.too_slow])
@given(out=st.sampled_from(list(SLOTS_OVER2) + list(SLOTS_OVER3)), what=st.sampled_from(["sum", "product", "copy"]),
       shape=st.tuples(st.integers(0, 6), st.integers(0, 5), st.integers(0, 3)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), stored_special=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(out="SparseByteMap(SparseHash)", what="sum", shape=(5, 3, 1), fill=np.nan, density=0.3, stored_special=True,
         seed=0)
@example(out="SparseByteMap(SparseBand)", what="product", shape=(4, 4, 1), fill=1.0, density=0.0,
         stored_special=False, seed=0)   # all fill
@example(out="SparseByteMap(SparseBlockList)", what="copy", shape=(0, 3, 1), fill=-np.inf, density=1.0,
         stored_special=True, seed=0)   # no rows
@example(out="SparseByteMap(SparseByteMap)", what="sum", shape=(3, 0, 1), fill=np.inf, density=0.7,
         stored_special=False, seed=1)   # no columns
@example(out="SparseByteMap(SparseBand(Dense))", what="copy", shape=(4, 5, 0), fill=0.0, density=0.7,
         stored_special=True, seed=2)   # no slots in a block
def test_property_byte_maps_over_keyed_ranged_and_marked_levels(out, what, shape, fill, density, stored_special, seed):
    rng = np.random.default_rng(seed)
    n, m, p = shape
    if out in SLOTS_OVER2:
        a, b = (random_sparse((n, m), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
        arrays, expr, fmt = {"A": (a, "csr"), "B": (b, "dcsr")}, EXPRS[what], SLOTS_OVER2[out]
    else:
        t, u = (random_sparse((n, m, p), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
        arrays, expr, fmt = {"T": (t, "csf"), "U": (u, "csf")}, EXPRS3[what], SLOTS_OVER3[out]
    tensors = {name: Tensor.from_numpy(special(x, fill, rng) if stored_special else x, f, fill=fill)
               for name, (x, f) in arrays.items()}
    run_blocks(expr, fmt, used(expr, tensors), SLOTTED)
