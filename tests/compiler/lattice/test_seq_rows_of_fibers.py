"""Outputs with Dense levels between two sparse ones (``SparseList(Dense(SparseList))``, CSF with a
Dense middle; a SparseHash below them too, each key its row's slot times the size plus the coordinate)
written directly by the lattice strategy: each entry the upper level appends gets a row
of the Dense slots, each slot a fiber of the SparseList below (compiler/lattice/emit_blocks.py,
``row_segment``; compiler/lattice/output_build.py, ``rows_of_fibers``). Main built them in a
SparseList stand-in and converted after each call (a ``convert`` step) in every sequence kernel
writing them (concatenations, reshapes, slices, sums) and in the einsum kernels.

Each case: one lattice kernel, no ``convert``, ``retry`` nor ``materialize`` step; its result and the
IR interpreter's equal numpy's and ``compiler.evaluate``'s, stored as ``Tensor.from_numpy`` stores
them; fills 0, 1 and NaN with NaN and ±inf stored, empty and all-fill results."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.format import Format
from compiler.lattice.output_build import assembles, building_output, rows_of_fibers
from compiler.levels import Dense, Element, SparseByteMap, SparseHash, SparseList, SparseRunList
from compiler.testing import assert_canonical

sys.path.insert(0, str(Path(__file__).parent))
from test_seq_outputs import check as check_output  # noqa: E402


def leaf(fill):
    return Element(fill, dtype="float64")


#: the outputs, each with a Dense level between two sparse ones (3-D, then 4-D)
CUBES = {
    "SparseList(Dense(SparseList))": lambda f: Format(SparseList(Dense(SparseList(leaf(f))))),
    "SparseHash(Dense(SparseList))": lambda f: Format(SparseHash(Dense(SparseList(leaf(f))))),
    "SparseRunList(Dense(SparseList))": lambda f: Format(SparseRunList(Dense(SparseList(leaf(f))))),
    "SparseList(Dense(SparseList)) stored k, j, i": lambda f: Format(SparseList(Dense(SparseList(leaf(f)))),
                                                                    (2, 1, 0)),
    "SparseList(Dense(SparseHash))": lambda f: Format(SparseList(Dense(SparseHash(leaf(f))))),
}
HYPERCUBES = {
    "SparseList(Dense(Dense(SparseList)))": lambda f: Format(SparseList(Dense(Dense(SparseList(leaf(f)))))),
    "Dense(SparseList(Dense(SparseList)))": lambda f: Format(Dense(SparseList(Dense(SparseList(leaf(f)))))),
    "SparseList(SparseList(Dense(SparseList)))": lambda f: Format(SparseList(SparseList(Dense(SparseList(leaf(f)))))),
    "SparseList(Dense(SparseList(Dense)))": lambda f: Format(SparseList(Dense(SparseList(Dense(leaf(f)))))),
    "SparseList(Dense(Dense(SparseHash)))": lambda f: Format(SparseList(Dense(Dense(SparseHash(leaf(f)))))),
}
VALUES = np.array([1.0, 2.0, -3.0, np.nan, np.inf, -np.inf])


def values(shape, fill, seed, density=0.4):
    """``VALUES`` (NaN and ±inf among them) at about ``density`` of the positions, ``fill`` elsewhere."""
    rng = np.random.default_rng(seed)
    a = np.full(shape, fill, dtype=float)
    keep = rng.random(shape) < density
    a[keep] = VALUES[rng.integers(len(VALUES), size=int(keep.sum()))]
    return a


def operand(a, fill, fmt=None):
    fmt = fmt or {1: "sparse_vector", 2: "csr", 3: "csf"}.get(a.ndim) or \
        Format(SparseList(SparseList(SparseList(SparseList(leaf(fill))))))
    return xp.asarray(ss.Tensor.from_numpy(a, fmt, fill=fill))


def check(expr, want, fmt):
    """The lattice kernel of ``expr`` into ``fmt`` writes it directly (no ``convert`` step: main's
    stand-in), as numpy, the oracle and the IR interpreter say, in ``Tensor.from_numpy``'s storage."""
    return check_output(expr, want, fmt, converted=False)


@pytest.mark.parametrize("name", sorted(CUBES))
@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan])
def test_concatenations(name, fill):
    fmt = CUBES[name](fill)
    a, b = values((2, 3, 4), fill, 1), values((1, 3, 4), fill, 2)
    check(xp.concat([operand(a, fill), operand(b, fill)]), np.concatenate([a, b]), fmt)
    c = values((2, 2, 4), fill, 3)
    check(xp.concat([operand(a, fill), operand(c, fill)], axis=1), np.concatenate([a, c], axis=1), fmt)
    check(xp.concat([operand(a, fill), operand(a, fill)], axis=2), np.concatenate([a, a], axis=2), fmt)
    check(xp.stack([operand(a[0], fill), operand(b[0], fill)]), np.stack([a[0], b[0]]), fmt)


@pytest.mark.parametrize("name", sorted(CUBES))
@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_reshapes_and_slices(name, fill):
    fmt = CUBES[name](fill)
    m = values((4, 6), fill, 4)
    check(operand(m, fill).reshape(4, 2, 3), m.reshape(4, 2, 3), fmt)   # (a split)
    v = values((24,), fill, 5)
    check(operand(v, fill).reshape(2, 3, 4), v.reshape(2, 3, 4), fmt)
    a = values((3, 4, 2), fill, 6)
    check(operand(a, fill).reshape(2, 3, 4), a.reshape(2, 3, 4), fmt)   # (a ravel, then a split)
    check(operand(a, fill)[::2, 1:, ::-1], a[::2, 1:, ::-1], fmt)


@pytest.mark.parametrize("name", sorted(CUBES))
@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_sums(name, fill):
    # (sums of a concatenation and of a split: sequence kernels with a reduction)
    fmt = CUBES[name](fill)
    a, b = values((2, 3, 2, 3), fill, 7), values((1, 3, 2, 3), fill, 15)
    m = values((4, 18), fill, 16)
    with np.errstate(invalid="ignore"):
        for axis in (3, 1, 0):
            check(xp.sum(xp.concat([operand(a, fill), operand(b, fill)]), axis=axis),
                  np.concatenate([a, b]).sum(axis=axis), fmt)
        check(xp.sum(operand(m, fill).reshape(4, 3, 2, 3), axis=1), m.reshape(4, 3, 2, 3).sum(axis=1), fmt)


def test_a_fused_product_of_concatenations():
    # (finite values: the lattice's intersections skip where a factor is 0, as 0 * inf would not)
    fmt = CUBES["SparseList(Dense(SparseList))"](0.0)
    rng = np.random.default_rng(8)
    a, b, d = (np.where(rng.random(s) < 0.5, rng.integers(1, 4, s), 0).astype(float)
               for s in ((2, 3, 4), (1, 3, 4), (3, 3, 4)))
    check(xp.concat([operand(a, 0.0), operand(b, 0.0)]) * operand(d, 0.0), np.concatenate([a, b]) * d, fmt)


@pytest.mark.parametrize("name", sorted(HYPERCUBES))
@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_four_modes(name, fill):
    fmt = HYPERCUBES[name](fill)
    a, b = values((2, 2, 3, 2), fill, 9), values((1, 2, 3, 2), fill, 10)
    check(xp.concat([operand(a, fill), operand(b, fill)]), np.concatenate([a, b]), fmt)
    m = values((4, 12), fill, 11)
    check(operand(m, fill).reshape(4, 2, 3, 2), m.reshape(4, 2, 3, 2), fmt)


@pytest.mark.parametrize("name", sorted(CUBES) + sorted(HYPERCUBES))
def test_empty_and_all_fill_results(name):
    fmt = {**CUBES, **HYPERCUBES}[name](1.0)
    shape = (2, 3, 2) if name in CUBES else (2, 2, 3, 2)
    a = np.ones(shape)
    check(xp.concat([operand(a, 1.0), operand(a[:1], 1.0)]), np.concatenate([a, a[:1]]), fmt)
    check(operand(a, 1.0)[2:1], a[2:1], fmt)   # (no row)


@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_einsum_kernels_write_it_directly_too(fill):
    # (the lattice emission's one-pass kernels share the assembly: a sum, a product with a matrix)
    fmt = CUBES["SparseList(Dense(SparseList))"](fill)
    a, b = values((3, 3, 4), fill, 12), values((3, 3, 4), fill, 13)
    A, B = (ss.Tensor.from_numpy(x, "csf", fill=fill) for x in (a, b))
    for out in (fmt, CUBES["SparseList(Dense(SparseHash))"](fill)):
        k = ss.lower("C[i, j, k] = A[i, j, k] + B[i, j, k]", strategy="lattice", A=A, B=B, C=out)
        assert "convert" not in [s.stage for s in k.trace.steps]
        with np.errstate(invalid="ignore"):
            assert_canonical(k(A=A, B=B), a + b)
            np.testing.assert_array_equal(k.interpret(A=A, B=B).to_numpy(), a + b)
    m = np.where(np.random.default_rng(14).random((4, 4)) < 0.5, 2.0, fill)
    M = ss.Tensor.from_numpy(m, "csr", fill=fill)
    if fill == 0.0:
        p = np.where(np.isfinite(a), a, 0.0)
        P = ss.Tensor.from_numpy(p, "csf")
        k = ss.lower("C[i, j, k] = P[i, j, l] * M[l, k]", strategy="lattice", P=P, M=M, C=fmt)
        assert "convert" not in [s.stage for s in k.trace.steps]
        assert_canonical(k(P=P, M=M), np.einsum("ijl,lk->ijk", p, m))


def test_what_is_assembled():
    rows = SparseList(Dense(SparseList(leaf(0.0))))
    levels = (rows, rows.child, rows.child.child)
    assert rows_of_fibers(levels, 1) and assembles(levels, 1)
    assert building_output(Format(rows), "C") is None
    # (a two-phase kernel, and one on threads, too: tests/compiler/lattice/test_lattice_two_phase_rows.py)
    assert assembles(levels, 1, one_pass=False, two_phase=True)
    assert building_output(Format(rows), "C", False, True, True) is None
    # (a hash below the Dense ones: a fiber of keys per slot; a byte map: a block of slots per fiber, as
    # its innermost level only)
    hashed = SparseList(Dense(SparseHash(leaf(0.0))))
    assert rows_of_fibers((hashed, hashed.child, hashed.child.child), 1)
    assert assembles((hashed, hashed.child, hashed.child.child), 2)
    marked = SparseList(Dense(SparseByteMap(leaf(0.0))))
    assert rows_of_fibers((marked, marked.child, marked.child.child), 1)
    assert building_output(Format(marked), "C") is None
    above = SparseList(Dense(SparseByteMap(SparseList(leaf(0.0)))))
    assert not rows_of_fibers((above, above.child, above.child.child, above.child.child.child), 1)

    class Rows(SparseList):   # (a SparseList's subclass declares what a SparseList does: asked, not named)
        name = "Rows"
    mine = Rows(Dense(Rows(leaf(0.0))))
    assert rows_of_fibers((mine, mine.child, mine.child.child), 1)


@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_hash_fibers_under_rows_of_a_hash(fill):
    # (each key of the upper hash kept where its row's fibers got entries, each lower key its row's slot's)
    fmt = Format(SparseHash(Dense(SparseHash(leaf(fill)))))
    a, b = values((2, 3, 4), fill, 17), values((1, 3, 4), fill, 18)
    a[1] = fill
    check(xp.concat([operand(a, fill), operand(b, fill)]), np.concatenate([a, b]), fmt)


SHAPES = st.tuples(st.integers(0, 3), st.integers(1, 3), st.integers(1, 4))


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(sorted(CUBES)), kernel=st.sampled_from(["concat", "hstack", "slice", "split", "sum"]),
       shape=SHAPES, fill=st.sampled_from([0.0, 1.0, np.nan]), density=st.sampled_from([0.0, 0.3, 1.0]),
       seed=st.integers(0, 2 ** 16))
@example(name="SparseHash(Dense(SparseList))", kernel="split", shape=(0, 1, 1), fill=0.0, density=0.0, seed=0)
def test_property(name, kernel, shape, fill, density, seed):
    fmt = CUBES[name](fill)
    a = values(shape, fill, seed, density)
    b = values((2, *shape[1:]), fill, seed + 1, density)
    if kernel == "concat":
        check(xp.concat([operand(a, fill), operand(b, fill)]), np.concatenate([a, b]), fmt)
    elif kernel == "hstack":
        c = values((shape[0], 2, shape[2]), fill, seed + 2, density)
        check(xp.concat([operand(a, fill), operand(c, fill)], axis=1), np.concatenate([a, c], axis=1), fmt)
    elif kernel == "slice":
        check(operand(a, fill)[::-1, 1:, ::2], a[::-1, 1:, ::2], fmt)
    elif kernel == "split":
        m = a.reshape(shape[0], shape[1] * shape[2])   # (not -1: numpy will not infer it beside an extent 0)
        check(operand(m, fill).reshape(shape), a, fmt)
    elif fill != 1.0:   # (a sum's fill is n times the operand's: 1.0 sums to another)
        d = values((*shape, 2), fill, seed + 3, density)
        with np.errstate(invalid="ignore"):
            want = np.concatenate([d, d], axis=3).sum(axis=3)
        check(xp.sum(xp.concat([operand(d, fill), operand(d, fill)], axis=3), axis=3), want, fmt)


@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan, -np.inf])
def test_byte_map_fibers_under_rows(fill):
    """``SparseList(Dense(SparseByteMap))``: each fiber of the byte map under a row of Dense slots gets its
    block of slots, unmarked and at the fill up to it as it starts (the fibers before it unvisited
    too), and after the loops up to every row's (main: a SparseList stand-in, converted)."""
    fmt = Format(SparseList(Dense(SparseByteMap(leaf(fill)))))
    a, b = values((2, 3, 4), fill, 19), values((2, 3, 4), fill, 20)
    a[0, 2], b[0, 2] = fill, fill   # (a row's last fiber unvisited: its slots set after the loops)
    check(xp.concat([operand(a, fill), operand(b[:1], fill)]), np.concatenate([a, b[:1]]), fmt)().validate()
    A, B = (ss.Tensor.from_numpy(x, "csf", fill=fill) for x in (a, b))
    with np.errstate(invalid="ignore"):
        want = a * b
    out = Format(SparseList(Dense(SparseByteMap(leaf(float(ss.evaluate("C[i, j, k] = A[i, j, k] * B[i, j, k]",
                                                                            A=A, B=B)[1]))))))
    k = ss.lower("C[i, j, k] = A[i, j, k] * B[i, j, k]", strategy="lattice", A=A, B=B, C=out)
    assert "convert" not in [s.stage for s in k.trace.steps]
    got = k(A=A, B=B)
    got.validate()
    assert_canonical(got, want)
    np.testing.assert_array_equal(k.interpret(A=A, B=B).to_numpy(), want)


@pytest.mark.parametrize("empty", [True, False], ids=["empty", "all-fill"])
def test_byte_map_fibers_under_rows_of_empty_and_all_fill_results(empty):
    fmt = Format(SparseList(Dense(SparseByteMap(leaf(1.0)))))
    a = np.ones((2, 3, 2))
    got = check(operand(a, 1.0)[2:1] if empty else xp.concat([operand(a, 1.0), operand(a[:1], 1.0)]),
                a[2:1] if empty else np.ones((3, 3, 2)), fmt)()
    got.validate()
    assert got.levels[0].arrays()["idx"].size == 0


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=SHAPES, fill=st.sampled_from([0.0, 1.0, np.nan]), density=st.sampled_from([0.0, 0.3, 1.0]),
       seed=st.integers(0, 2 ** 16))
def test_property_byte_map_fibers(shape, fill, density, seed):
    fmt = Format(SparseList(Dense(SparseByteMap(leaf(fill)))))
    a, b = values(shape, fill, seed, density), values((2, *shape[1:]), fill, seed + 1, density)
    check(xp.concat([operand(a, fill), operand(b, fill)]), np.concatenate([a, b]), fmt)().validate()
    check(operand(a, fill)[::-1, 1:, ::2], a[::-1, 1:, ::2], fmt)().validate()
