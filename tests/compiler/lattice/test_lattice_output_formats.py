"""Every output format under the lattice strategy (issue 29, item 3, lattice side).

The lattice emission places Dense levels by position (under Dense levels, and as blocks under
an appended SparseList level: TACO's {sparse, dense}) and appends SparseList and SparseCOO
levels in storage order, a SparseByteMap innermost under Dense levels, a SparseHash under those, a
SparseList or a SparseHash, a SparseBand or SparseBlockList innermost there (over Dense levels:
test_lattice_output_nestings.py), RunList, SparseRunList
and SparseInterval levels under Dense ones as runs, and SparsePoint ones as lists (every call
checking that a point or an interval fits); any other output level (those levels elsewhere, a
Dense level under a sparse one in a two-phase
kernel under a level other than a SparseList; a schedule keeps the kernel's assembly:
test_lattice_output_reordered.py) is built as a
SparseList and the call converts it to the format asked, and the
trace's ``convert`` step says so (compiler/lattice/output_build.py). Each kernel is checked
against the dense oracle, the IR interpreter and the storage ``Tensor.from_numpy`` builds for the
format, and the kernels of the sums, reductions and transposes against a bounds-checked build too
(output_cases.BOUNDS_CHECKED); the suite validates every output too (SPARSESCOPE_VALIDATE_OUTPUTS).
"""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.errors import FormatError
from compiler.format import Format, parse_format
from compiler.lattice.output_build import assembles, building_output
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseCOO,
                             SparseHash, SparseInterval, SparseList, SparsePoint, SparseRunList)
from compiler.testing import assert_canonical, check_lowered, random_sparse
from tests.compiler.lattice.output_cases import (BOUNDS_CHECKED, EXPRS, EXPRS3, FILLS, assembled_natively, check,
                                                  expected, leaf, lower_and_check, run_blocks, runs_inputs, used)

#: output levels under a Dense level (some built through a SparseList stand-in, converted after the call)
CONVERTED = [RunList, SparseBand, SparseBlockList, SparseByteMap, SparseHash, SparseRunList]
#: ... which hold at most one entry (or run) per fiber: only a result that fits converts
AT_MOST_ONE = [SparsePoint, SparseInterval]


def under_dense(cls, fill=0.0, ndim=2):
    leaf = cls(Element(fill, dtype="float64"))
    return Format(Dense(leaf) if ndim == 2 else Dense(Dense(leaf)))


def sparse_over_dense(fill=0.0):
    return Format(SparseList(Dense(leaf(fill))))


def hash_of_hashes(fill=0.0):
    return Format(SparseHash(SparseHash(leaf(fill))))


FORMATS = {cls.name: (lambda fill, cls=cls: under_dense(cls, fill)) for cls in CONVERTED}
FORMATS["SparseList(Dense)"] = sparse_over_dense
FORMATS["SparseHash(SparseHash)"] = hash_of_hashes

#: (format, expression) pairs the lattice kernel assembles itself: a SparseList of Dense rows
#: (TACO's {sparse, dense}), a SparseByteMap under Dense (appended, marked and stored in its
#: slot) and a SparseHash under Dense (appended, its keys inserted in its table after the loops) whose loops run in its storage order over inputs read as stored
#: (the sum and product read B, CSC, in column order: the output is then built as a stand-in
#: in that order, converted alone)
ASSEMBLED_IN_ORDER = {(out, what) for out in ("SparseList(Dense)", "SparseByteMap", "SparseHash", "SparseBand",
                                              "SparseBlockList", "SparseHash(SparseHash)", "RunList", "SparseRunList")
                      for what in ("copy", "spmm")}
#: what the lowering step says of each format the kernel assembles
HOW = {"SparseList(Dense)": "block of slots", "SparseByteMap": "marked and stored in its slot",
       "SparseHash": "its table is built after the loops", "SparseBand": "its band runs from the fiber's first entry",
       "SparseBlockList": "a gap starting a new block", "SparseHash(SparseHash)": "its table is built after the loops",
       "RunList": "appended in storage order as runs", "SparseRunList": "appended in storage order as runs"}

def inputs(seed=0, shape=(5, 6), fill=0.0):
    rng = np.random.default_rng(seed)
    a, b = (random_sparse(shape, 0.4, rng, fill=fill, empty=(2,)) for _ in range(2))
    d = random_sparse((shape[1], 4), 0.5, rng, fill=fill)
    return {"A": Tensor.from_numpy(a, "csr", fill=fill), "B": Tensor.from_numpy(b, "csc", fill=fill),
            "D": Tensor.from_numpy(d, "csr", fill=fill)}


@pytest.mark.parametrize("out", list(FORMATS))
@pytest.mark.parametrize("what", list(EXPRS))
def test_every_output_format_matches_the_oracle(out, what):
    # before: "output C: the lattice strategy cannot assemble level 1 (RunList)" (and SparseBand,
    # ...), "a Dense level under a sparse level cannot be assembled by appending" for
    # SparseList(Dense), and for a transpose "no loop order visits every tensor in storage order"
    expr = EXPRS[what]
    k = check(expr, FORMATS[out](0.0), checked=what in BOUNDS_CHECKED, **used(expr, inputs()))
    if (out, what) in ASSEMBLED_IN_ORDER:
        # assembled by the kernel itself: nothing converted, and the lowering says how
        assert not k.lowered.conversions and k.lowered.output_format == FORMATS[out](0.0)
        assert any(HOW[out] in s.note for s in k.trace.steps if s.stage == "lower")
        return
    (step,) = [s for s in k.trace.steps if s.stage == "convert" and s.note.startswith("C is")]
    assert "the lattice strategy assembles no level" in step.note and "after each call" in step.note


@pytest.mark.parametrize("out", list(FORMATS))
def test_a_transpose_builds_the_output_in_the_loops_order_and_converts_once(out):
    # the output is converted after the call anyway: it is built in the order the loops write
    # (CSC here), and A is read as it is stored, not converted too
    tensors = inputs(seed=1)
    k = check("C[j, i] = A[i, j]", FORMATS[out](0.0), A=tensors["A"])
    assert [t for t, _ in k.lowered.conversions] == ["C"]
    assert k.lowered.output_format.mode_order == (1, 0)
    assert all(lvl.name in ("Dense", "SparseList") for lvl in k.lowered.output_format.levels)


@pytest.mark.parametrize("fmt", ["csr", "csc", "dcsr", "coo", "dense"])
def test_formats_the_lattice_assembles_are_not_converted(fmt):
    f = parse_format(fmt, ndim=2)
    assert building_output(f, "C") is None
    k = ss.lower("C[i, j] = A[i, j] + B[i, j]", strategy="lattice", C=f, **inputs())
    assert not any(s.stage == "convert" and s.note.startswith("C is") for s in k.trace.steps)


def test_assembles_asks_the_levels_not_their_names():
    class Mine(SparseList):   # a subclass of an appended level is appended as its parent is
        name = "Mine"
    assert assembles((Dense(Element(0.0)), Mine(Element(0.0))), 1)
    # a slot per coordinate under a list: a block per entry, in a one-pass kernel, if the level says so
    assert assembles((Mine(Element(0.0)), Dense(Element(0.0))), 1)
    assert not assembles((Mine(Element(0.0)), Dense(Element(0.0))), 1, one_pass=False)

    class Slots(Dense):   # a full level that does not declare it is located under an appended one
        name = "Slots"
        locates_under_appended = False
    assert not assembles((Mine(Element(0.0)), Slots(Element(0.0))), 1)
    assert not assembles((Mine(Element(0.0)), Dense(Element(0.0)), Slots(Element(0.0))), 1)   # (nor one above it)
    assert not assembles((SparseCOO(1, Element(0.0)), Dense(Element(0.0))), 1)   # (a COO level appends alone)
    assert assembles((SparseList(Element(0.0)), RunList(Element(0.0))), 1)   # (runs: innermost, test_..._nestings)
    assert not assembles((Dense(Element(0.0)), RunList(Element(0.0)), SparseList(Element(0.0))), 1)
    assert not assembles((Dense(Element(0.0)), RunList(Element(0.0))), 1, one_pass=False)

    class Runs(SparseRunList):   # a subclass of a level appended as runs is appended so too
        name = "Runs"
    assert assembles((Dense(Element(0.0)), Runs(Element(0.0))), 1)
    assert building_output(Format(Dense(Mine(Element(0.0)))), "C") is None

    class Ragged(SparseBand):   # a band's subclass is appended as a band, innermost or over Dense levels
        name = "Ragged"
    assert assembles((Dense(Element(0.0)), Ragged(Element(0.0))), 1)
    assert assembles((Mine(Element(0.0)), Ragged(Element(0.0))), 1)
    assert not assembles((Dense(Element(0.0)), Ragged(Element(0.0))), 1, one_pass=False)
    assert assembles((Ragged(Element(0.0)), Dense(Element(0.0))), 0)   # (tests/.../test_lattice_output_nestings.py)
    assert assembles((Ragged(Element(0.0)), Mine(Element(0.0))), 0)   # (over a list: a fiber per position)
    assert not assembles((Ragged(Element(0.0)), SparseHash(Element(0.0))), 0)
    assert assembles((SparseHash(Element(0.0)), SparseBlockList(Element(0.0))), 1)   # (under a hash too)
    assert assembles((SparseByteMap(Element(0.0)), SparseBlockList(Element(0.0))), 1)   # (a fiber per slot)
    assert not assembles((Mine(Element(0.0)), SparseByteMap(Element(0.0)), SparseBlockList(Element(0.0))), 2)
    assert assembles((Mine(Element(0.0)), SparseByteMap(Element(0.0))), 1)   # (a byte map under a list: innermost)
    assert not assembles((Mine(Element(0.0)), SparseByteMap(Element(0.0)), Mine(Element(0.0))), 1)

    class Table(SparseHash):   # a hash's subclass keeps its keys as a hash does, under a list or a hash too
        name = "Table"
    assert assembles((Mine(Element(0.0)), Table(Element(0.0))), 1)
    assert assembles((Table(Element(0.0)), Table(Element(0.0))), 0) and assembles((Table(Element(0.0)),) * 2, 1)
    assert not assembles((Table(Element(0.0)), Table(Element(0.0))), 0, one_pass=False)


@pytest.mark.parametrize("out", [Format(SparseList(SparseCOO(2, leaf()))), Format(Dense(SparseCOO(2, leaf()))),
                                 Format(SparseCOO(2, SparseList(leaf())))])
def test_a_coo_level_the_emission_takes_only_alone_is_built_through_lists(out):
    # before: "output C: SparseCOO must be the only level of a sparse output", from the emission,
    # though the plan let a COO level under a SparseList or a Dense level through
    t = random_sparse((3, 4, 5), 0.3, np.random.default_rng(5), empty=(1,))
    T = Tensor.from_numpy(t, "csf")
    k = check("C[i, j, k] = T[i, j, k]", out, T=T)
    assert all(lvl.nmodes == 1 for lvl in k.lowered.output_format.levels)
    check("C[k, j, i] = T[i, j, k] * T[i, j, k]", out, T=T)


def test_three_modes_under_dense_and_in_reverse_storage_order():
    t = random_sparse((3, 4, 5), 0.3, np.random.default_rng(2), empty=(1,))
    T = Tensor.from_numpy(t, "csf")
    for out in (under_dense(SparseHash, ndim=3), under_dense(RunList, ndim=3),
                Format(SparseList(Dense(SparseList(leaf()))), (2, 1, 0)),
                Format(Dense(SparseByteMap(SparseBand(leaf()))), (2, 1, 0))):
        check("C[i, j, k] = T[i, j, k]", out, T=T)
        check("C[k, j, i] = T[i, j, k]", out, T=T)


@pytest.mark.parametrize("cls", CONVERTED + AT_MOST_ONE)
def test_vector_outputs(cls):
    # SpMV and a sparse-vector sum into a one-level output
    rng = np.random.default_rng(3)
    a = random_sparse((6, 5), 0.4, rng, empty=(1, 4))
    x = random_sparse((6,), 0.5, rng)
    A, X = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(x, "sparse_vector")
    out = Format(cls(leaf()))
    if cls in AT_MOST_ONE:   # (one entry, or one run of equal values, per vector)
        X1 = Tensor.from_numpy(np.where(np.arange(6) == 2, 3.0, 0.0), "sparse_vector")
        check("y[i] = X[i] * Z[i]", out, X=X1, Z=X)
        return
    check("y[i] = A[i, j] * v[j]", out, A=A, v=np.arange(5.0))
    check("y[i] = X[i] + Z[i]", out, X=X, Z=Tensor.from_numpy(a[:, 0], "sparse_vector"))


@pytest.mark.parametrize("cls", AT_MOST_ONE)
def test_at_most_one_entry_per_fiber_outputs(cls):
    # a diagonal (one entry per row: one run too) times a matrix, its copy and its transpose
    d = np.diag([1.0, 0.0, 3.0, 4.0])
    m = random_sparse((4, 4), 0.6, np.random.default_rng(4))
    D, M = Tensor.from_numpy(d, "csr"), Tensor.from_numpy(m, "csr")
    out = under_dense(cls)
    check("C[i, j] = D[i, j] * M[i, j]", out, D=D, M=M)
    check("C[i, j] = D[i, j]", out, D=D)
    check("C[j, i] = D[i, j]", out, D=D)
    check("C[i, j] = D[i, j] + D[i, j]", out, D=D)


@pytest.mark.parametrize("cls", AT_MOST_ONE)
def test_a_result_that_does_not_fit_is_an_error_naming_the_output(cls, monkeypatch):
    monkeypatch.delenv("SPARSESCOPE_VALIDATE_OUTPUTS", raising=False)   # (checked even without it)
    a = np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 0.0]])
    A = Tensor.from_numpy(a, "csr")
    k = ss.lower("C[i, j] = A[i, j]", strategy="lattice", A=A, C=under_dense(cls))
    # (appended by the kernel, as a SparseList or as runs, and every call checks its output)
    with pytest.raises(FormatError, match=rf"^C: level 1 \({cls.name}\): fiber 0 stores 2 (coordinates|runs); "
                                          rf"a {cls.name} fiber stores at most one; use Sparse(List|RunList)$"):
        k(A=A)


def run_property(out, what, shape, fill, density, seed):
    expr = EXPRS[what]
    rng = np.random.default_rng(seed)
    n, m = shape
    a, b = (random_sparse((n, m), density, rng, fill=fill) for _ in range(2))
    d = random_sparse((m, 3), density, rng, fill=fill)
    tensors = {"A": Tensor.from_numpy(a, "csr", fill=fill), "B": Tensor.from_numpy(b, "dcsr", fill=fill),
               "D": Tensor.from_numpy(d, "csc", fill=fill)}
    lower_and_check(expr, FORMATS[out], used(expr, tensors))


@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(out=st.sampled_from(list(FORMATS)), what=st.sampled_from(list(EXPRS)),
       shape=st.tuples(st.integers(1, 6), st.integers(1, 6)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), seed=st.integers(0, 2 ** 16))
@example(out="SparseHash(SparseHash)", what="sum", shape=(3, 4), fill=np.nan, density=0.3, seed=0)
@example(out="RunList", what="product", shape=(4, 4), fill=1.0, density=0.0, seed=0)   # all fill
@example(out="SparseList(Dense)", what="transpose", shape=(1, 5), fill=np.inf, density=1.0, seed=0)
@example(out="SparseBand", what="spmm", shape=(5, 2), fill=-np.inf, density=0.7, seed=1)
def test_property_every_output_format(out, what, shape, fill, density, seed):
    run_property(out, what, shape, fill, density, seed)


@pytest.mark.parametrize("out", ["RunList", "SparseHash(SparseHash)", "SparseList(Dense)"])
def test_empty_inputs(out):
    # no rows at all, and rows with no entries
    for shape in ((0, 4), (3, 0)):
        e = np.zeros(shape)
        A, B = Tensor.from_numpy(e, "csr"), Tensor.from_numpy(e, "csr")
        k = ss.lower("C[i, j] = A[i, j] + B[i, j]", strategy="lattice", A=A, B=B, C=FORMATS[out](0.0))
        got = k(A=A, B=B)
        assert got.shape == shape and got.format == FORMATS[out](0.0)
        assert_canonical(got, e)


def test_a_loop_order_given_builds_the_output_in_that_order():
    # the output is converted after the call anyway, so the order given need not follow its
    # storage (a CSR output refuses reorder(j, i): "C[i, j] is stored with i before j")
    tensors = inputs(seed=6)
    out = under_dense(RunList)
    k = ss.lower("C[i, j] = A[i, j] + B[i, j]", strategy="lattice", C=out, options={"order": ["j", "i"]},
                 A=tensors["A"], B=tensors["B"])
    assert k.lowered.output_format.mode_order == (1, 0)
    assert_canonical(k(A=tensors["A"], B=tensors["B"]), expected("C[i, j] = A[i, j] + B[i, j]", tensors))


@pytest.mark.parametrize("options", [{"assembly": "two-phase"}, {"schedule": [("parallelize", "i")]}])
@pytest.mark.parametrize("what", ["sum", "spmm"])
def test_the_stand_in_is_assembled_two_phase_and_on_threads(options, what):
    # the SparseList built in place of the format asked takes the lattice's other assemblies too
    # (the SpMM's through its workspace); a hash under Dense rows, and a SparseList or a hash of Dense
    # rows, are assembled natively there (test_lattice_two_phase.py, test_lattice_two_phase_threads.py)
    expr = EXPRS[what]
    tensors = used(expr, inputs(seed=7))
    for out in (under_dense(SparseBand), Format(SparseByteMap(Dense(leaf())))):
        k = check_lowered(expr, out=out, options=options, **tensors)
        got = k(**tensors)
        assert got.format == out
        assert_canonical(got, expected(expr, tensors))


# -- Dense levels under an appended one, assembled by the kernel (TACO's {sparse, dense}) ------------

#: output formats whose Dense levels under a SparseList are blocks the kernel assembles
BLOCKS2 = {"SparseList(Dense)": lambda fill: Format(SparseList(Dense(leaf(fill))))}
BLOCKS3 = {"SparseList(Dense(Dense))": lambda fill: Format(SparseList(Dense(Dense(leaf(fill))))),
           "SparseList(SparseList(Dense))": lambda fill: Format(SparseList(SparseList(Dense(leaf(fill))))),
           "Dense(SparseList(Dense))": lambda fill: Format(Dense(SparseList(Dense(leaf(fill)))))}
@pytest.mark.parametrize("what", ["sum", "product", "copy", "spmm"])
def test_a_sparse_list_of_dense_rows_is_assembled_by_the_kernel(what):
    # before: built as a DCSR stand-in and converted after each call (the convert step)
    rng = np.random.default_rng(11)
    a, b = (random_sparse((6, 5), 0.3, rng, empty=(1, 4)) for _ in range(2))
    d = random_sparse((5, 4), 0.5, rng)
    tensors = {"A": Tensor.from_numpy(a, "csr"), "B": Tensor.from_numpy(b, "dcsr"), "D": Tensor.from_numpy(d, "csr")}
    expr = EXPRS[what]
    out = sparse_over_dense()
    k = check(expr, out, checked=what in BOUNDS_CHECKED, **used(expr, tensors))
    assembled_natively(k, out)
    assert "C1_start" in k.c_source and "C0_idx[pC0] = i" in k.c_source


@pytest.mark.parametrize("out", list(BLOCKS3))
@pytest.mark.parametrize("what", list(EXPRS3))
def test_blocks_of_dense_levels_under_sparse_ones_in_three_modes(out, what):
    rng = np.random.default_rng(12)
    t, u = (random_sparse((4, 3, 5), 0.3, rng, empty=(1, 2)) for _ in range(2))
    m = random_sparse((5, 5), 0.4, rng)
    tensors = {"T": Tensor.from_numpy(t, "csf"), "U": Tensor.from_numpy(u, "csf"), "M": Tensor.from_numpy(m, "csr")}
    expr = EXPRS3[what]
    k = check(expr, BLOCKS3[out](0.0), checked=what in BOUNDS_CHECKED, **used(expr, tensors))
    assembled_natively(k, BLOCKS3[out](0.0))


@pytest.mark.parametrize("options", [{"assembly": "two-phase"}, {"schedule": [("parallelize", "i")]}])
@pytest.mark.parametrize("out", [sparse_over_dense(), under_dense(SparseByteMap), under_dense(SparseHash),
                                 under_dense(SparseBand), under_dense(SparseBlockList),
                                 *[Format(cls(Dense(leaf())))
                                   for cls in (SparseByteMap, SparseBand, SparseBlockList, SparseHash)]])
def test_blocks_are_built_through_a_stand_in_where_not_one_pass(options, out):
    # two-phase kernels, sequential or threaded, append no bands or block lists, and only fill
    # blocks under a SparseList or a SparseHash and a byte map's slots or a hash's entries under Dense
    # levels (test_lattice_two_phase.py, test_lattice_two_phase_threads.py): the stand-in is converted
    tensors = inputs(seed=13)
    k = check_lowered("C[i, j] = A[i, j]", out=out, options=options, A=tensors["A"])
    natively = out in (sparse_over_dense(), under_dense(SparseByteMap), under_dense(SparseHash),
                       Format(SparseHash(Dense(leaf()))))
    assert [t for t, _ in k.lowered.conversions] == ([] if natively else ["C"])
    assert_canonical(k(A=tensors["A"]), tensors["A"].to_numpy())


# -- a SparseByteMap or a SparseHash under Dense levels, appended in order by the kernel -----------------
# (a byte map's entries marked and stored in their slots; a hash's keys inserted in its table after the loops)

SLOTTED = {SparseByteMap: ("marked and stored in its slot", "C1_tbl[C_slot]"),
           SparseHash: ("its table is built after the loops", "C1_key[pC1] = ")}


@pytest.mark.parametrize("cls", list(SLOTTED))
@pytest.mark.parametrize("what", ["sum", "product", "copy", "spmm"])
def test_a_byte_map_or_hash_under_dense_is_assembled_by_the_kernel(cls, what):
    # before: built as CSR and converted after each call (the convert step)
    rng = np.random.default_rng(14)
    a, b = (random_sparse((6, 5), 0.3, rng, empty=(1, 4)) for _ in range(2))
    d = random_sparse((5, 4), 0.5, rng)
    tensors = {"A": Tensor.from_numpy(a, "csr"), "B": Tensor.from_numpy(b, "dcsr"), "D": Tensor.from_numpy(d, "csr")}
    expr, out = EXPRS[what], under_dense(cls)
    k = check(expr, out, checked=what in BOUNDS_CHECKED, **used(expr, tensors))
    how, code = SLOTTED[cls]
    assembled_natively(k, out, how)
    assert code in k.c_source


@pytest.mark.parametrize("cls", list(SLOTTED))
def test_a_byte_map_or_hash_vector_and_three_modes(cls):
    rng = np.random.default_rng(15)
    a = random_sparse((6, 5), 0.4, rng, empty=(1, 4))
    A = Tensor.from_numpy(a, "csr")
    how = SLOTTED[cls][0]
    k = check_lowered("y[i] = A[i, j] * x[j]", out=Format(cls(leaf())), checked=True, A=A, x=np.arange(5.0))
    assembled_natively(k, Format(cls(leaf())), how)
    assert_canonical(k(A=A, x=np.arange(5.0)), a @ np.arange(5.0))
    t = random_sparse((3, 4, 5), 0.3, rng, empty=(1,))
    out = Format(Dense(Dense(cls(leaf()))))
    k = check("C[i, j, k] = T[i, j, k] * T[i, j, k]", out, T=Tensor.from_numpy(t, "csf"))
    assembled_natively(k, out, how)


@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(cls=st.sampled_from(list(SLOTTED)), what=st.sampled_from(["sum", "product", "copy", "spmm", "spmv"]),
       shape=st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 4)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), seed=st.integers(0, 2 ** 16))
@example(cls=SparseByteMap, what="sum", shape=(3, 4, 1), fill=np.nan, density=0.3, seed=0)
@example(cls=SparseHash, what="product", shape=(4, 4, 1), fill=1.0, density=0.0, seed=0)    # all fill
@example(cls=SparseByteMap, what="copy", shape=(0, 3, 1), fill=-np.inf, density=1.0, seed=0)   # no rows
@example(cls=SparseHash, what="spmv", shape=(3, 0, 1), fill=np.inf, density=0.7, seed=1)    # no columns
@example(cls=SparseHash, what="copy", shape=(5, 5, 1), fill=0.0, density=1.0, seed=2)    # collisions in the table
def test_property_byte_map_and_hash_outputs(cls, what, shape, fill, density, seed):
    rng = np.random.default_rng(seed)
    n, m, p = shape
    a, b = (random_sparse((n, m), density, rng, fill=fill) for _ in range(2))
    d = random_sparse((m, p), density, rng, fill=fill)
    tensors = {"A": Tensor.from_numpy(a, "csr", fill=fill), "B": Tensor.from_numpy(b, "dcsr", fill=fill),
               "D": Tensor.from_numpy(d, "csr", fill=fill), "x": Tensor.from_numpy(d[:, 0] if p else np.full(m, fill),
                                                                               "sparse_vector", fill=fill)}
    if what == "spmv":
        expr, fmt = "y[i] = A[i, j] * x[j]", lambda f: Format(cls(leaf(f)))
    else:
        expr, fmt = EXPRS[what], lambda f: under_dense(cls, f)
    run_blocks(expr, fmt, used(expr, tensors), SLOTTED[cls][0])


@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(out=st.sampled_from(list(BLOCKS2) + list(BLOCKS3)), what=st.sampled_from(["sum", "product", "copy", "spmm"]),
       shape=st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 4)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), seed=st.integers(0, 2 ** 16))
@example(out="SparseList(Dense)", what="sum", shape=(3, 4, 1), fill=np.nan, density=0.3, seed=0)
@example(out="SparseList(Dense)", what="product", shape=(4, 4, 1), fill=1.0, density=0.0, seed=0)   # all fill
@example(out="SparseList(Dense)", what="copy", shape=(3, 0, 1), fill=np.inf, density=1.0, seed=0)   # 0 columns
@example(out="SparseList(SparseList(Dense))", what="sum", shape=(0, 3, 2), fill=-np.inf, density=0.7, seed=1)
@example(out="Dense(SparseList(Dense))", what="spmm", shape=(2, 3, 4), fill=0.0, density=1.0, seed=2)
def test_property_blocks_under_sparse_levels(out, what, shape, fill, density, seed):
    rng = np.random.default_rng(seed)
    n, m, p = shape
    if out in BLOCKS2:
        a, b = (random_sparse((n, m), density, rng, fill=fill) for _ in range(2))
        d = random_sparse((m, p), density, rng, fill=fill)
        tensors = {"A": Tensor.from_numpy(a, "csr", fill=fill), "B": Tensor.from_numpy(b, "dcsr", fill=fill),
                   "D": Tensor.from_numpy(d, "csr", fill=fill)}
        expr, fmt = EXPRS[what], BLOCKS2[out]
    else:
        t, u = (random_sparse((n, m, p), density, rng, fill=fill) for _ in range(2))
        mm = random_sparse((p, p), density, rng, fill=fill)
        tensors = {"T": Tensor.from_numpy(t, "csf", fill=fill), "U": Tensor.from_numpy(u, "csf", fill=fill),
                   "M": Tensor.from_numpy(mm, "csr", fill=fill)}
        expr, fmt = EXPRS3["contract" if what == "spmm" else what], BLOCKS3[out]
    run_blocks(expr, fmt, used(expr, tensors))


def test_a_block_not_kept_leaves_no_signed_zero_for_the_next_coordinate():
    # row 0's one product underflows to -0.0, equal to the fill: the row is not kept, and its
    # block's slots go to row 1; a -0.0 stored there showed as row 1's (1, 1) (found in review)
    a = np.array([[0.0, -1e-200], [2.0, 0.0]])
    b = np.array([[0.0, 1e-200], [3.0, 0.0]])
    tensors = {"A": Tensor.from_numpy(a, "csr"), "B": Tensor.from_numpy(b, "csr")}
    k = ss.lower(EXPRS["product"], strategy="lattice", C=sparse_over_dense(), **tensors)
    assembled_natively(k, sparse_over_dense())
    got = k(**tensors).to_numpy()
    np.testing.assert_array_equal(got, [[0.0, 0.0], [6.0, 0.0]])
    assert not np.signbit(got).any(), got


# -- run-length levels under Dense, appended as runs by the kernel ---------------------------------
# (an entry of the last run's value where that run ends extends it; a RunList's gaps are runs of the fill)

RUNS = [RunList, SparseRunList]
AS_RUNS = "appended in storage order as runs"


@pytest.mark.parametrize("cls", RUNS)
@pytest.mark.parametrize("what", ["sum", "product", "copy", "spmm"])
def test_a_run_length_level_under_dense_is_assembled_by_the_kernel(cls, what):
    # before: built as CSR and converted after each call (the convert step)
    expr, out = EXPRS[what], under_dense(cls)
    tensors = used(expr, runs_inputs(16))
    k = check(expr, out, checked=what in BOUNDS_CHECKED, **tensors)
    assembled_natively(k, out, AS_RUNS)
    assert "C1_right[pC1 - 1] = j + 1" in k.c_source or "C1_right[pC1 - 1] = k + 1" in k.c_source


@pytest.mark.parametrize("cls", RUNS)
def test_a_run_length_vector_and_three_modes(cls):
    rng = np.random.default_rng(17)
    a = random_sparse((8, 5), 0.5, rng, lo=1, hi=3, empty=(1, 4))
    A = Tensor.from_numpy(a, "csr")
    x = np.ones(5)
    k = check_lowered("y[i] = A[i, j] * x[j]", out=Format(cls(leaf())), checked=True, A=A, x=x)
    assembled_natively(k, Format(cls(leaf())), AS_RUNS)
    assert_canonical(k(A=A, x=x), a @ x)
    t = random_sparse((3, 4, 5), 0.5, rng, lo=1, hi=3, empty=(1,))
    out = Format(Dense(Dense(cls(leaf()))))
    k = check("C[i, j, k] = T[i, j, k] * T[i, j, k]", out, T=Tensor.from_numpy(t, "csf"))
    assembled_natively(k, out, AS_RUNS)


@pytest.mark.parametrize("cls", RUNS)
def test_runs_merge_nans_and_signed_zeros(cls):
    # from_numpy merges neighbours that compare equal, NaN equal to NaN: two NaNs are one run, a 0.0
    # after a -0.0 extends its run, which keeps the -0.0 (fill 1: both zeros are stored)
    a = np.array([[np.nan, np.nan, -0.0, 0.0, 0.0, 1.0, 2.0], [0.0, -0.0, 1.0, 1.0, np.inf, np.inf, -np.inf]])
    A = Tensor.from_numpy(a, "csr", fill=1.0)
    out = under_dense(cls, fill=1.0)
    k = ss.lower("C[i, j] = A[i, j]", strategy="lattice", A=A, C=out)
    assembled_natively(k, out, AS_RUNS)
    got = k(A=A)
    assert_canonical(got, a)
    right, vals = got.levels[1].right.tolist(), [repr(float(v)) for v in got.vals]
    if cls is RunList:   # (the gaps: runs of the fill, 1.0)
        assert right == [2, 5, 6, 7, 2, 4, 6, 7]
        assert vals == ["nan", "-0.0", "1.0", "2.0", "0.0", "1.0", "inf", "-inf"]
    else:
        assert right == [2, 5, 7, 2, 6, 7]
        assert vals == ["nan", "-0.0", "2.0", "0.0", "inf", "-inf"]


@pytest.mark.parametrize("cls", RUNS)
def test_rows_the_loops_skip_get_their_runs(cls):
    # B is DCSR: rows 0, 2, 3 and 5 are never visited; a RunList closes each with one run of the fill
    b = np.zeros((6, 4))
    b[1, 1:3] = 5.0
    b[4, 0] = 2.0
    B = Tensor.from_numpy(b, "dcsr")
    out = under_dense(cls)
    k = check("C[i, j] = B[i, j]", out, B=B)
    assembled_natively(k, out, AS_RUNS)
    assert k(B=B).levels[1].pos.tolist() == ([0, 1, 4, 5, 6, 8, 9] if cls is RunList else [0, 0, 1, 1, 1, 2, 2])


@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(cls=st.sampled_from(RUNS), what=st.sampled_from(["sum", "product", "copy", "spmm", "spmv"]),
       shape=st.tuples(st.integers(0, 6), st.integers(0, 6)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), special=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(cls=RunList, what="sum", shape=(3, 4), fill=np.nan, density=0.7, special=True, seed=0)
@example(cls=SparseRunList, what="product", shape=(4, 4), fill=1.0, density=0.0, special=False, seed=0)   # all fill
@example(cls=RunList, what="copy", shape=(0, 3), fill=-np.inf, density=1.0, special=True, seed=0)   # no rows
@example(cls=RunList, what="spmv", shape=(3, 0), fill=np.inf, density=0.7, special=False, seed=1)   # no columns
@example(cls=SparseRunList, what="spmm", shape=(5, 5), fill=0.0, density=1.0, special=True, seed=2)
def test_property_run_length_outputs(cls, what, shape, fill, density, special, seed):
    tensors = runs_inputs(seed, shape, fill, density, special)
    if what == "spmv":
        A = tensors["A"]
        x = Tensor.from_numpy(np.where(np.arange(shape[1]) % 2 == 0, 1.0, fill), "sparse_vector", fill=fill)
        expr, fmt, tensors = "y[i] = A[i, j] * x[j]", lambda f: Format(cls(leaf(f))), {"A": A, "x": x}
    else:
        expr, fmt = EXPRS[what], lambda f: under_dense(cls, f)
    run_blocks(expr, fmt, used(expr, tensors), AS_RUNS)


# -- SparsePoint (a list) and SparseInterval (runs) under Dense, appended by the kernel ---------------
# (at most one entry, or one run, per fiber: every call checks the output and refuses one that holds more)

AT_MOST_ONE_HOW = {SparsePoint: "appended in storage order as a SparseList is; each call checks",
                   SparseInterval: "each call checks that no fiber holds more than one run"}


def one_per_row(shape, density, rng, fill=0.0, interval=False, special=False, like=None):
    """A matrix of at most one stored entry (``interval``: one run of one value) per row, each row
    stored with probability ``density``; ``like``: the entries (or runs) of another such matrix,
    each kept or not, with other values. ``special`` values are NaN (alone: one entry, never an
    interval), inf and -inf."""
    n, m = shape
    a = np.full(shape, fill)
    spans = like if like is not None else []
    for r in range(n if like is None and m else 0):
        lo = int(rng.integers(0, m))
        spans.append((r, lo, int(rng.integers(lo + 1, m + 1)) if interval else lo + 1))
    for r, lo, hi in spans:
        if rng.random() >= density:
            continue
        # (NaN only where the run is one entry: a NaN point beside the other operand's run of 2 made 2 runs)
        nonfinite = [np.nan, np.inf, -np.inf] if hi - lo == 1 else [np.inf, -np.inf]
        v = float(rng.choice(nonfinite)) if special and rng.random() < 0.4 else float(rng.integers(1, 4))
        a[r, lo:(lo + 1 if np.isnan(v) else hi)] = v
    return a, spans


@pytest.mark.parametrize("cls", AT_MOST_ONE)
@pytest.mark.parametrize("what", ["sum", "product", "copy", "spmm"])
def test_a_point_or_interval_under_dense_is_assembled_by_the_kernel(cls, what):
    # before: built as CSR and converted after each call (the convert step)
    rng = np.random.default_rng(18)
    a, spans = one_per_row((7, 6), 0.8, rng, interval=cls is SparseInterval)
    b, _ = one_per_row((7, 6), 0.8, rng, interval=cls is SparseInterval, like=spans)
    tensors = {"A": Tensor.from_numpy(a, "csr"), "B": Tensor.from_numpy(b, "dcsr"),
               "D": Tensor.from_numpy(2.0 * np.eye(6), "csr")}
    expr, out = EXPRS[what], under_dense(cls)
    k = check(expr, out, checked=what in BOUNDS_CHECKED, **used(expr, tensors))
    assembled_natively(k, out, AT_MOST_ONE_HOW[cls])


@pytest.mark.parametrize("cls", AT_MOST_ONE)
def test_a_point_or_interval_vector(cls):
    a = np.zeros((6, 5))
    if cls is SparsePoint:
        a[3, 1] = 2.0    # one stored entry of y
    else:
        a[1:4, :2] = 1.0   # y[1:4] one run of 2.0
    A, x = Tensor.from_numpy(a, "csr"), np.ones(5)
    out = Format(cls(leaf()))
    k = check_lowered("y[i] = A[i, j] * x[j]", out=out, checked=True, A=A, x=x)
    assembled_natively(k, out, AT_MOST_ONE_HOW[cls])
    assert_canonical(k(A=A, x=x), a @ x)
    # a result that does not fit is refused at the call, naming the output and the fiber
    two = Tensor.from_numpy(np.eye(6, 5) * np.arange(1.0, 6.0), "csr")   # (y: 1, 2, 3, 4, 5, 0)
    with pytest.raises(FormatError, match=r"^y: level 0 \(" + cls.name + r"\): fiber 0 stores [0-9]+ "):
        k(A=two, x=x)


def test_an_interval_with_a_gap_or_two_values_is_refused_as_asformat_refuses_it():
    # [1, 0, 1] and [1, 2]: two runs in a fiber; asformat refuses both (from_numpy below)
    k = None
    for row in ([1.0, 0.0, 1.0], [1.0, 2.0, 0.0]):
        A = Tensor.from_numpy(np.array([row, [0.0, 0.0, 0.0]]), "csr")
        with pytest.raises(FormatError, match="SparseInterval stores at most one run"):
            A.asformat(under_dense(SparseInterval))
        k = k or ss.lower("C[i, j] = A[i, j]", strategy="lattice", A=A, C=under_dense(SparseInterval))
        with pytest.raises(FormatError, match=r"fiber 0 stores 2 runs; a SparseInterval fiber stores at most one"):
            k(A=A)


@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(cls=st.sampled_from(AT_MOST_ONE), what=st.sampled_from(["sum", "product", "copy", "vector"]),
       shape=st.tuples(st.integers(0, 6), st.integers(0, 6)), fill=st.sampled_from(FILLS),
       density=st.sampled_from([0.0, 0.3, 0.7, 1.0]), special=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(cls=SparseInterval, what="sum", shape=(3, 4), fill=np.nan, density=0.7, special=True, seed=0)
@example(cls=SparsePoint, what="product", shape=(4, 4), fill=1.0, density=0.0, special=False, seed=0)   # all fill
@example(cls=SparseInterval, what="copy", shape=(0, 3), fill=-np.inf, density=1.0, special=True, seed=0)   # no rows
@example(cls=SparsePoint, what="sum", shape=(3, 0), fill=np.inf, density=0.7, special=False, seed=1)   # no columns
@example(cls=SparseInterval, what="vector", shape=(1, 6), fill=0.0, density=1.0, special=True, seed=2)
@example(cls=SparseInterval, what="vector", shape=(0, 4), fill=0.0, density=0.7, special=True, seed=4)
def test_property_point_and_interval_outputs(cls, what, shape, fill, density, special, seed):
    # inputs whose sum, product and copy fit: the same columns (or runs) in every row of A and B
    rng = np.random.default_rng(seed)
    interval = cls is SparseInterval
    if what == "vector":
        shape = (1, shape[1])
    a, spans = one_per_row(shape, density, rng, fill, interval, special)
    b, _ = one_per_row(shape, density, rng, fill, interval, special, like=spans)
    tensors = {"A": Tensor.from_numpy(a, "csr", fill=fill), "B": Tensor.from_numpy(b, "dcsr", fill=fill)}
    if what == "vector":   # (the one row, as a vector)
        expr, fmt = "y[j] = v[j] + w[j]", lambda f: Format(cls(leaf(f)))
        tensors = {"v": Tensor.from_numpy(a[0], "sparse_vector", fill=fill),
                   "w": Tensor.from_numpy(b[0], "sparse_vector", fill=fill)}
    else:
        expr, fmt = EXPRS[what], lambda f: under_dense(cls, f)
    run_blocks(expr, fmt, used(expr, tensors), AT_MOST_ONE_HOW[cls])


@pytest.mark.parametrize("root", [Dense(SparseByteMap(leaf())), Dense(SparseHash(leaf())), Dense(SparseBand(leaf())),
                                  SparseList(SparseBlockList(leaf()))])
def test_a_value_equal_to_the_fill_leaves_no_signed_zero_in_the_values(root):
    # row 0's one product underflows to -0.0, equal to the fill 0.0: it is not stored. A byte map
    # stored it in its slot, unmarked (from_numpy holds the fill there; the values compared equal,
    # as -0.0 == 0.0): found by checking the sign bits of every natively assembled format
    a = np.array([[0.0, -1e-200], [2.0, 0.0]])
    b = np.array([[0.0, 1e-200], [3.0, 0.0]])
    tensors = {"A": Tensor.from_numpy(a, "csr"), "B": Tensor.from_numpy(b, "csr")}
    k = ss.lower(EXPRS["product"], strategy="lattice", C=Format(root), **tensors)
    assert not k.lowered.conversions
    for got in (k(**tensors), k.interpret(**tensors)):
        want = Tensor.from_numpy(np.array([[0.0, 0.0], [6.0, 0.0]]), Format(root))
        assert_canonical(got, want.to_numpy())
        np.testing.assert_array_equal(np.signbit(got.vals), np.signbit(want.vals))


# -- a SparseBand or SparseBlockList innermost, appended in order by the kernel ------------------------------
# (a band's gaps filled with the fill, so it runs from a fiber's first entry to its last; a block list
# starting a new block at each gap)

RANGED = {SparseBand: ("its band runs from the fiber's first entry", "C1_idx[i] = C1_lo + (pC1 - pC1_begin)"),
          SparseBlockList: ("a gap starting a new block", "C1_ofs[C1_blocks] = pC1")}


def dcsr_inputs(seed, shape=(6, 7), fill=0.0, density=0.4, empty=(1, 4)):
    """A CSR ``A``, a DCSR ``B`` (both read in the output's storage order), a CSR ``D`` and a sparse
    vector ``x``, with rows of consecutive entries (blocks) and gaps inside them (a band's fill)."""
    rng = np.random.default_rng(seed)
    n, m = shape
    a, b = (random_sparse((n, m), density, rng, fill=fill, empty=empty) for _ in range(2))
    if n and m:
        a[0, :] = np.where(np.arange(m) % 3 == 2, fill, 2.0)   # (blocks of two, a gap of one)
    d = random_sparse((m, 3), density, rng, fill=fill)
    return {"A": Tensor.from_numpy(a, "csr", fill=fill), "B": Tensor.from_numpy(b, "dcsr", fill=fill),
            "D": Tensor.from_numpy(d, "csr", fill=fill),
            "x": Tensor.from_numpy(d[:, 0] if m else np.full(m, fill), "sparse_vector", fill=fill)}


@pytest.mark.parametrize("cls", list(RANGED))
@pytest.mark.parametrize("what", ["sum", "product", "copy", "spmm"])
def test_a_band_or_block_list_under_dense_is_assembled_by_the_kernel(cls, what):
    # before: built as CSR and converted after each call (the convert step)
    expr, out = EXPRS[what], under_dense(cls)
    k = check(expr, out, checked=what in BOUNDS_CHECKED, **used(expr, dcsr_inputs(21)))
    how, code = RANGED[cls]
    assembled_natively(k, out, how)
    assert code in k.c_source


@pytest.mark.parametrize("cls", list(RANGED))
def test_a_band_or_block_list_vector_under_a_list_and_in_three_modes(cls):
    how = RANGED[cls][0]
    tensors = dcsr_inputs(22)
    a = tensors["A"].to_numpy()
    # SpMV into a vector (the output's one fiber), and a sparse vector sum
    out = Format(cls(leaf()))
    k = check("y[i] = A[i, j] * v[j]", out, A=tensors["A"], v=np.arange(7.0))
    assembled_natively(k, out, how)
    k = check("y[i] = X[i] + Z[i]", out, X=Tensor.from_numpy(a[:, 2], "sparse_vector"),
              Z=Tensor.from_numpy(a[:, 3], "sparse_vector"))
    assembled_natively(k, out, how)
    # under a SparseList: a row is appended if it got entries, its band end or blocks with it
    out = Format(SparseList(cls(leaf())))
    for expr in (EXPRS["copy"], EXPRS["spmm"], "C[i, j] = A[i, j] * B[i, j]"):
        k = check(expr, out, **used(expr, tensors))
        assembled_natively(k, out, how)
    t = random_sparse((3, 4, 5), 0.5, np.random.default_rng(23), empty=(1,))
    out = Format(Dense(Dense(cls(leaf()))))
    k = check("C[i, j, k] = T[i, j, k] * T[i, j, k]", out, T=Tensor.from_numpy(t, "csf"))
    assembled_natively(k, out, how)


@pytest.mark.parametrize("cls", list(RANGED))
def test_a_band_keeps_the_fill_inside_and_a_block_list_splits_at_it(cls):
    # row 0: 1 at 0, 2 at 1, the fill at 2 (stored inside the band; a gap between blocks), 3 at 3;
    # row 1 has no entry (an empty band ends at 0); row 2 one entry at the end
    a = np.array([[1.0, 2.0, 0.0, 3.0, 0.0], [0.0] * 5, [0.0, 0.0, 0.0, 0.0, 4.0]])
    A = Tensor.from_numpy(a, "csr")
    k = check("C[i, j] = A[i, j]", under_dense(cls), A=A)
    assembled_natively(k, under_dense(cls), RANGED[cls][0])
    got = k(A=A)
    lvl = got.levels[1]
    if cls is SparseBand:
        assert (lvl.ofs.tolist(), lvl.idx.tolist(), got.vals.tolist()) == ([0, 4, 4, 5], [4, 0, 5],
                                                                           [1.0, 2.0, 0.0, 3.0, 4.0])
    else:
        assert (lvl.pos.tolist(), lvl.idx.tolist(), lvl.ofs.tolist()) == ([0, 2, 2, 3], [2, 4, 5], [0, 2, 3, 4])


SPECIALS = [np.nan, np.inf, -np.inf, -0.0]
#: where the band, block or hash level is: under Dense levels, under a SparseList, alone (a vector), under two
#: Dense levels, under a SparseHash
WRAPS = {"Dense": Dense, "SparseList": SparseList, "alone": lambda lvl: lvl,
         "Dense(Dense)": lambda lvl: Dense(Dense(lvl)), "SparseHash": SparseHash}
#: what the lowering says of each level appended innermost
APPENDED = {**RANGED, SparseHash: (SLOTTED[SparseHash][0], ""), SparseByteMap: (SLOTTED[SparseByteMap][0], "")}


def ranged_case(cls, where, what, tensors, fill):
    """``(expression, format for the oracle's fill, tensors)``: ``what`` into ``cls`` placed ``where``
    (a vector: SpMV; three modes: ``what`` of A and B stacked)."""
    fmt = lambda f: Format(WRAPS[where](cls(leaf(f))))   # noqa: E731
    if where == "alone":
        return "y[i] = A[i, j] * x[j]", fmt, used("A[x[", tensors)
    if where == "Dense(Dense)":
        t = np.stack([tensors["A"].to_numpy(), tensors["B"].to_numpy()], axis=1)
        expr = {"sum": "C[i, j, k] = T[i, j, k] + T[i, j, k]", "product": "C[i, j, k] = T[i, j, k] * T[i, j, k]"}.get(
            what, "C[i, j, k] = T[i, j, k]")
        return expr, fmt, {"T": Tensor.from_numpy(t, "csf", fill=fill)}
    return EXPRS[what], fmt, used(EXPRS[what], tensors)


@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(cls=st.sampled_from(list(APPENDED)), where=st.sampled_from(list(WRAPS)),
       what=st.sampled_from(["sum", "product", "copy", "spmm"]), shape=st.tuples(st.integers(0, 6), st.integers(0, 6)),
       fill=st.sampled_from(FILLS), density=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       special=st.sampled_from([None] + SPECIALS), seed=st.integers(0, 2 ** 16))
@example(cls=SparseBand, where="Dense", what="sum", shape=(3, 5), fill=np.nan, density=0.3, special=None, seed=0)
@example(cls=SparseBlockList, where="Dense", what="product", shape=(4, 4), fill=1.0, density=0.0, special=None,
         seed=0)   # all fill
@example(cls=SparseBand, where="SparseList", what="copy", shape=(0, 3), fill=-np.inf, density=1.0, special=None,
         seed=0)   # no rows
@example(cls=SparseBlockList, where="alone", what="spmm", shape=(3, 0), fill=np.inf, density=0.7, special=None,
         seed=1)   # no columns
@example(cls=SparseBand, where="Dense(Dense)", what="sum", shape=(5, 6), fill=0.0, density=0.7, special=np.nan,
         seed=2)   # stored NaN
@example(cls=SparseBlockList, where="SparseList", what="product", shape=(5, 6), fill=0.0, density=0.7,
         special=-0.0, seed=3)   # a stored -0.0 beside a fill of 0.0
@example(cls=SparseBand, where="Dense", what="copy", shape=(4, 6), fill=np.inf, density=0.7, special=-np.inf,
         seed=4)   # stored -inf beside a fill of inf
@example(cls=SparseHash, where="SparseHash", what="sum", shape=(5, 6), fill=1.0, density=0.7, special=np.inf,
         seed=5)   # a hash of hashes
@example(cls=SparseHash, where="SparseList", what="spmm", shape=(6, 6), fill=0.0, density=1.0, special=None,
         seed=6)   # collisions in the tables
@example(cls=SparseBlockList, where="SparseHash", what="copy", shape=(0, 0), fill=np.nan, density=0.3, special=None,
         seed=7)   # nothing at all
@example(cls=SparseByteMap, where="SparseList", what="product", shape=(5, 6), fill=0.0, density=0.3, special=-0.0,
         seed=8)   # a byte map's block of slots under rows not kept
@example(cls=SparseByteMap, where="SparseHash", what="spmm", shape=(4, 5), fill=np.nan, density=0.7, special=np.inf,
         seed=9)
def test_property_band_and_block_list_outputs(cls, where, what, shape, fill, density, special, seed):
    tensors = dcsr_inputs(seed, shape, fill, density, empty=())
    if special is not None:   # (some stored values NaN, infinite or a signed zero)
        a = tensors["A"].to_numpy()
        stored = (a != fill) & ~np.isnan(a) if not np.isnan(fill) else ~np.isnan(a)
        a[stored & (np.arange(a.size).reshape(a.shape) % 3 == 0)] = special
        tensors["A"] = Tensor.from_numpy(a, "csr", fill=fill)
    expr, fmt, tensors = ranged_case(cls, where, what, tensors, fill)
    run_blocks(expr, fmt, tensors, APPENDED[cls][0])


# -- a SparseHash under a SparseList or a SparseHash, or above other levels, appended by the kernel ----------
# (its entries appended as a SparseList's, each keeping its key parent * size + i, the parent's position its
# counter while the fiber under it is appended; its table built after the loops); a SparseByteMap there too
# (a block of slots per fiber, prepared as the fiber starts)

HASH_NESTS = {"SparseList(SparseHash)": Format(SparseList(SparseHash(leaf()))),
              "SparseHash(SparseHash)": Format(SparseHash(SparseHash(leaf()))),
              "SparseHash(SparseBand)": Format(SparseHash(SparseBand(leaf()))),
              "SparseHash(SparseBlockList)": Format(SparseHash(SparseBlockList(leaf()))),
              "SparseList(SparseByteMap)": Format(SparseList(SparseByteMap(leaf()))),
              "SparseHash(SparseByteMap)": Format(SparseHash(SparseByteMap(leaf())))}
HASH_NESTS3 = {"SparseHash(SparseHash(SparseHash))": Format(SparseHash(SparseHash(SparseHash(leaf())))),
               "Dense(SparseHash(SparseHash))": Format(Dense(SparseHash(SparseHash(leaf())))),
               "SparseHash(SparseList(SparseBand))": Format(SparseHash(SparseList(SparseBand(leaf())))),
               "SparseList(SparseHash(SparseBlockList))": Format(SparseList(SparseHash(SparseBlockList(leaf()))))}


@pytest.mark.parametrize("out", list(HASH_NESTS))
@pytest.mark.parametrize("what", ["sum", "product", "copy", "spmm"])
def test_a_hash_under_or_above_appended_levels_is_assembled_by_the_kernel(out, what):
    # before: SparseList(SparseHash), SparseHash(...) and SparseList(SparseByteMap) were built through
    # SparseLists and converted
    expr, fmt = EXPRS[what], HASH_NESTS[out]
    k = check(expr, fmt, checked=what in BOUNDS_CHECKED, **used(expr, dcsr_inputs(31)))
    assembled_natively(k, fmt, SLOTTED[SparseByteMap if "ByteMap" in out else SparseHash][0])
    if "ByteMap" in out:   # (a block of slots per row, at the row's position: the list's or the hash's counter)
        assert re.search(r"C_slot = pC0 \* C1_size \+ [jk];", k.c_source)
        return
    # (each entry's key: the row's position is the hash's or the list's counter as the row is appended)
    key = r"C0_key\[pC0\] = i;" if out.startswith("SparseHash") else r"C1_key\[pC1\] = pC0 \* C1_size \+ [jk];"
    assert re.search(key, k.c_source)


@pytest.mark.parametrize("out", list(HASH_NESTS3))
def test_hashes_nested_in_three_modes(out):
    rng = np.random.default_rng(32)
    t, u = (random_sparse((4, 3, 5), 0.4, rng, empty=(1, 2)) for _ in range(2))
    tensors = {"T": Tensor.from_numpy(t, "csf"), "U": Tensor.from_numpy(u, "csf")}
    for what in ("sum", "product", "copy"):
        expr = EXPRS3[what]
        k = check(expr, HASH_NESTS3[out], checked=what in BOUNDS_CHECKED, **used(expr, tensors))
        assembled_natively(k, HASH_NESTS3[out], SLOTTED[SparseHash][0])
