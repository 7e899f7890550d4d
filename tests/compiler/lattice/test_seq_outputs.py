"""Shape operators into every output level format under the lattice strategy (issue 30; issue 29's
output levels). The sequence lowering's loops run in the output's mode order, each coordinate once,
increasing, so the lattice emission's one-pass assembly writes every level it writes
(compiler/lattice/seqassembly.py); a format it does not assemble is built in its SparseList stand-in
and converted (a ``convert`` step), never refused and materialized. The output's own question is
asked of its levels' capabilities (compiler/lattice/seqoutput.py): a band is no SparseList.

Each case: a stack, a ravel, a split, a strided slice or a fused product through the array front end
(no ``retry`` nor ``materialize`` step), against numpy, ``compiler.evaluate``, the IR interpreter and
the storage ``Tensor.from_numpy`` builds for the format; fills 0, 1 and NaN with NaN and ±inf
stored, empty and all-fill results."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.format import Format
from compiler.lattice.seqassembly import sequence_assembled
from compiler.lattice.seqoutput import output_kind
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseCOO, SparseHash,
                             SparseInterval, SparseList, SparsePoint, SparseRunList)
from compiler.testing import assert_canonical

#: the levels that can hold a fiber: each as a matrix's row level under Dense, and as a vector
LEVELS = [SparseList, SparseBand, SparseBlockList, SparseHash, SparseByteMap, SparseRunList, RunList,
          SparseInterval, SparsePoint]
#: ... which hold at most one entry (or run) per fiber: given results that fit
AT_MOST_ONE = (SparseInterval, SparsePoint)


def leaf(fill):
    return Element(fill, dtype="float64")


def rows_of(cls):
    return lambda fill: Format(Dense(cls(leaf(fill))))


MATRICES = {f"Dense({cls.name})": rows_of(cls) for cls in LEVELS}
MATRICES.update({
    "dcsr": lambda fill: Format(SparseList(SparseList(leaf(fill)))),
    "SparseList(Dense)": lambda fill: Format(SparseList(Dense(leaf(fill)))),
    "SparseHash(SparseHash)": lambda fill: Format(SparseHash(SparseHash(leaf(fill)))),
    "RunList(SparseList)": lambda fill: Format(RunList(SparseList(leaf(fill)))),
    "coo": lambda fill: Format(SparseCOO(2, leaf(fill))),
    # (no level the lattice emission assembles above a hash but a SparseList: its stand-in, converted)
    "SparseBand(SparseHash)": lambda fill: Format(SparseBand(SparseHash(leaf(fill)))),
})
VECTORS = {cls.name: (lambda fill, cls=cls: Format(cls(leaf(fill)))) for cls in LEVELS}
VECTORS["SparseCOO"] = lambda fill: Format(SparseCOO(1, leaf(fill)))
CUBES = {
    "csf": lambda fill: Format(SparseList(SparseList(SparseList(leaf(fill))))),
    "Dense(SparseList(SparseList))": lambda fill: Format(Dense(SparseList(SparseList(leaf(fill))))),
    "Dense(Dense(SparseHash))": lambda fill: Format(Dense(Dense(SparseHash(leaf(fill))))),
    "SparseList(SparseList(Dense))": lambda fill: Format(SparseList(SparseList(Dense(leaf(fill))))),
    "Dense(SparseByteMap(SparseList))": lambda fill: Format(Dense(SparseByteMap(SparseList(leaf(fill))))),
    "coo3": lambda fill: Format(SparseCOO(3, leaf(fill))),
}
CONVERTED = {"SparseBand(SparseHash)"}


def one_each(fmt) -> bool:
    """Whether ``fmt`` holds at most one entry (or run) per fiber of one of its levels."""
    return any(lvl.at_most_one for lvl in fmt.levels)


def matrix(shape, fill, seed, sparse_rows=False, all_fill=False):
    """Integers, NaN and ±inf at about half the positions (at most one per row with
    ``sparse_rows``), ``fill`` elsewhere."""
    rng = np.random.default_rng(seed)
    a = np.full(shape, fill, dtype=float)
    if all_fill or 0 in shape:
        return a
    values = np.array([1.0, 2.0, -3.0, np.nan, np.inf, -np.inf])
    if sparse_rows:
        for r in range(shape[0]):
            if rng.random() < 0.6:
                a[r, rng.integers(shape[1])] = values[rng.integers(len(values))]
        return a
    keep = rng.random(shape) < 0.5
    a[keep] = values[rng.integers(len(values), size=int(keep.sum()))]
    return a


def operand(a, fmt, fill):
    return xp.asarray(ss.Tensor.from_numpy(a, fmt, fill=fill))


def check(expr, want, fmt, converted=False):
    """The kernel of ``expr`` into ``fmt``: one lattice kernel (no retry, no materialization; a
    ``convert`` step only for a stand-in), its result and the IR interpreter's equal numpy's and the
    oracle's, stored as Tensor.from_numpy stores ``want`` in ``fmt``."""
    kernel = expr.lower(strategy="lattice", format=fmt)
    stages = [s.stage for s in kernel.trace.steps]
    assert "retry" not in stages and "materialize" not in stages, [s.note for s in kernel.trace.steps]
    assert ("convert" in stages) == converted
    got = kernel()
    assert got.format == fmt
    assert_canonical(got, want)
    oracle, _ = ss.evaluate(kernel.program, **kernel.arguments)
    np.testing.assert_array_equal(oracle, want)
    np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)
    return kernel


def test_a_band_of_rows_is_no_sparse_list():
    # (a SparseBand's arrays, ofs and idx, look like a SparseList's pos and idx: main stored the
    # rows' entries as a list into the band's arrays, wrong values)
    a = sp.random(6, 8, 0.3, format="csr", random_state=1)
    b = sp.random(4, 8, 0.3, format="csr", random_state=2)
    fmt = Format(Dense(SparseBand(leaf(0.0))))
    out = xp.concat([xp.asarray(a), xp.asarray(b)]).compute(strategy="lattice", format=fmt)
    assert out.format == fmt
    np.testing.assert_array_equal(out.to_numpy(), np.vstack([a.toarray(), b.toarray()]))


@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_vstack_of_csr_and_coo(name, fill):
    fmt = MATRICES[name](fill)
    a, b = (matrix((3, 5), fill, seed, sparse_rows=one_each(fmt)) for seed in (1, 2))
    check(xp.concat([operand(a, "csr", fill), operand(b, "coo", fill)]), np.vstack([a, b]), fmt, name in CONVERTED)


@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("fill", [0.0, 1.0])
def test_hstack(name, fill):
    fmt = MATRICES[name](fill)
    # (a row of two stacked parts holds one entry when the second part is all fill)
    a = matrix((4, 3), fill, 3, sparse_rows=one_each(fmt))
    b = matrix((4, 2), fill, 4, all_fill=one_each(fmt))
    check(xp.concat([operand(a, "csr", fill), operand(b, "csr", fill)], axis=1), np.hstack([a, b]), fmt,
          name in CONVERTED)


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_strided_slice(name):
    fmt = MATRICES[name](0.0)
    a = matrix((7, 6), 0.0, 5, sparse_rows=one_each(fmt))
    check(operand(a, "csr", 0.0)[1::2, ::2], a[1::2, ::2], fmt, name in CONVERTED)


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_split_of_a_sparse_vector(name):
    fmt = MATRICES[name](0.0)
    v = matrix((1, 12), 0.0, 6).ravel()
    if one_each(fmt):
        v = np.where(np.arange(12) % 4 == 1, v, 0.0)   # (one per row of 4)
    check(operand(v, "sparse_vector", 0.0).reshape(3, 4), v.reshape(3, 4), fmt, name in CONVERTED)


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_a_fused_product_of_stacks(name):
    # (finite values: the lattice's intersections skip where a factor is 0, as 0 * inf would not)
    fmt = MATRICES[name](0.0)
    rng = np.random.default_rng(7)
    a, b, c = (np.where(rng.random((3, 4)) < 0.5, rng.integers(1, 4, (3, 4)), 0).astype(float) for _ in range(3))
    if one_each(fmt):
        a = np.diag([1.0, 0.0, 2.0, 0.0])[:3]
        b[:] = 0.0
    d = np.where(rng.random((6, 4)) < 0.7, 2.0, 0.0)
    expr = xp.concat([operand(a, "csr", 0.0), operand(b, "coo", 0.0)]) * operand(d, "csr", 0.0)
    check(expr, np.vstack([a, b]) * d, fmt, name in CONVERTED)


@pytest.mark.parametrize("name", sorted(VECTORS))
@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan])
def test_ravel_into_each_vector_level(name, fill):
    fmt = VECTORS[name](fill)
    a = matrix((3, 4), fill, 8)
    if one_each(fmt):
        a = np.full((3, 4), fill)
        a[1, 2] = np.inf
    check(operand(a, "csr", fill).reshape(-1), a.ravel(), fmt)


@pytest.mark.parametrize("name", sorted(CUBES))
def test_split_into_three_modes(name):
    fmt = CUBES[name](0.0)
    a = matrix((3, 6), 0.0, 9)
    check(operand(a, "csr", 0.0).reshape(3, 2, 3), a.reshape(3, 2, 3), fmt)


@pytest.mark.parametrize("name", ["dcsr", "Dense(SparseHash)", "Dense(SparseBand)", "Dense(RunList)",
                                  "SparseList(Dense)", "Dense(SparseByteMap)"])
def test_empty_and_all_fill_results(name):
    fmt = MATRICES[name](1.0)
    a = matrix((4, 3), 1.0, 0, all_fill=True)
    check(xp.concat([operand(a, "csr", 1.0), operand(a[:2], "coo", 1.0)]), np.vstack([a, a[:2]]), fmt)
    check(operand(a, "csr", 1.0)[3:1], a[3:1], fmt)   # (no row)


def test_what_is_assembled_and_what_stands_in():
    # (what the sequence emitter appends itself, the C it wrote before; the lattice's code the rest)
    appended = {n for n in MATRICES if output_kind(MATRICES[n](0.0)) is not None}
    assert appended == {"Dense(SparseList)", "Dense(SparsePoint)", "coo"}
    assert all(sequence_assembled(MATRICES[n](0.0)) for n in set(MATRICES) - appended - CONVERTED)
    assert not sequence_assembled(MATRICES["SparseBand(SparseHash)"](0.0))
    kernel = xp.concat([operand(np.eye(3), "csr", 0.0)] * 2).lower(
        strategy="lattice", format=MATRICES["SparseBand(SparseHash)"](0.0))
    (note,) = [s.note for s in kernel.trace.steps if s.stage == "convert"]
    assert "level 0 (SparseBand)" in note and "converted to" in note


@pytest.mark.parametrize("name, how", [("Dense(SparseHash)", "its table is built after the loops"),
                                       ("Dense(SparseByteMap)", "marked and stored in its slot"),
                                       ("SparseList(Dense)", "block of slots"),
                                       ("Dense(RunList)", "appended in storage order as runs")])
def test_the_lowering_step_says_how_it_assembles(name, how):
    a = matrix((3, 4), 0.0, 10)
    kernel = check(xp.concat([operand(a, "csr", 0.0)] * 2), np.vstack([a, a]), MATRICES[name](0.0))
    (lower,) = [s.note for s in kernel.trace.steps if s.stage == "lower"]
    assert how in lower


@pytest.mark.parametrize("cls", AT_MOST_ONE)
def test_a_result_that_does_not_fit_one_entry_per_fiber_is_an_error(cls):
    a = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
    kernel = xp.concat([operand(a, "csr", 0.0)] * 2).lower(strategy="lattice", format=rows_of(cls)(0.0))
    with pytest.raises(ss.FormatError, match=f"{cls.name}.*fiber 0"):
        kernel()


@st.composite
def cases(draw):
    kind = draw(st.sampled_from(["vstack", "hstack", "slice", "split"]))
    name = draw(st.sampled_from(sorted(set(MATRICES) - set(f"Dense({c.name})" for c in AT_MOST_ONE))))
    fill = draw(st.sampled_from([0.0, 1.0, np.nan]))
    rows, cols = draw(st.integers(0, 4)), draw(st.integers(1, 4))
    return kind, name, fill, rows, cols, draw(st.booleans()), draw(st.integers(0, 2 ** 16))


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases())
@example(("vstack", "dcsr", np.nan, 0, 2, False, 0))           # an empty operand
@example(("hstack", "Dense(RunList)", 1.0, 3, 3, True, 1))     # all fill
@example(("split", "SparseHash(SparseHash)", 0.0, 2, 3, False, 2))
def test_shape_operators_into_any_output_by_property(case):
    kind, name, fill, rows, cols, all_fill, seed = case
    fmt = MATRICES[name](fill)
    a = matrix((rows, cols), fill, seed, all_fill=all_fill)
    b = matrix((rows, cols), fill, seed + 1)
    x, y = operand(a, "csr", fill), operand(b, "coo", fill)
    expr, want = {"vstack": lambda: (xp.concat([x, y]), np.vstack([a, b])),
                  "hstack": lambda: (xp.concat([x, y], axis=1), np.hstack([a, b])),
                  "slice": lambda: (x[::-2, 1::2], a[::-2, 1::2]),
                  "split": lambda: (x.reshape(-1).reshape(cols, rows), a.reshape(cols, rows))}[kind]()
    check(expr, want, fmt, name in CONVERTED)
