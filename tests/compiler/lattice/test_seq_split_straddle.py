"""A split of a concatenation whose group straddles the two parts, transposed so the group's minor index is not
stored right after its major one (compiler/lattice/seqstraddle.py; issue 30, found by a differential probe).

``out[i, j, k] = split(concat((A[m, j], B[n, j]), (m, n) -> l), l -> (i:3, k:2))`` of two 3-row parts: group
``i = 1`` holds A's row 2 and B's row 0. The loops over the concatenation run once per part, so A's loop wrote
``(1, j, 0)`` for every ``j`` before B's ``(1, j, 1)``: a COO out of order, a CSF with the fiber of ``i = 1``
appended twice, once. Such an output holds each group across the parts now (compiler/lattice/seqstraddlesort.py,
tests/compiler/lattice/test_seq_split_straddle_sort.py); a dense output, a scatter and a COO or CSR stored
``i, k, ...`` take the straddling group as the loops write it, each kernel checked against evaluate, the sequence
CFIR's interpreter and the IR interpreter (one_kernel); the array front end's against numpy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from compiler.format import Format
from compiler.levels import Dense, Element, SparseHash, SparseList
from tests.compiler.lattice.test_seq_concat_fills import one_kernel

nan, inf = np.nan, np.inf

PROGRAM = "c[i, j, k] = split(concat((A[m, j], B[n, j]), (m, n) -> l), l -> (i:{I}, k:{K}))"
PARTS = ["dense", "csr", "csc", "coo", "hash"]


def part_format(name, fill):
    if name == "hash":
        return Format(Dense(SparseHash(Element(fill))))
    return ss.parse_format(name, ndim=2, fill=fill)


def part(rows, cols, name, fill, seed, odd=()):
    """A ``rows`` x ``cols`` Tensor in ``name`` of ``fill``, half its entries stored, ``odd`` values first."""
    r = np.random.default_rng(seed)
    a = np.where(r.random((rows, cols)) < 0.5, r.choice([1.0, -2.0, 3.5], (rows, cols)), fill)
    a.flat[:len(odd)] = odd[:a.size]
    return Tensor.from_numpy(a, part_format(name, fill))


def check(program, out, **tensors):
    """``program`` into ``out`` (a format name of the result's fill; None: dense): the lattice's kernel, right
    (one_kernel)."""
    return one_kernel(program, out, **tensors)[0]


def issue_parts():
    """The issue's two 3 x 5 parts, dense of fill 1, and the result numpy gives."""
    Da = np.full((3, 5), 1.0)
    Da[2, 2], Da[0, 1] = 2.0, 3.0
    Db = np.full((3, 5), 1.0)
    Db[0, 1], Db[1, 1], Db[2, 0] = 2.0, -3.0, 0.5
    fmt = Format(Dense(Dense(Element(1.0))))
    return Tensor.from_numpy(Da, fmt), Tensor.from_numpy(Db, fmt), \
        np.transpose(np.concatenate([Da, Db]).reshape(-1, 2, 5), (0, 2, 1))


def test_the_issue_is_the_lattices_and_the_default_lowerings():
    A, B, want = issue_parts()
    program = PROGRAM.format(I=3, K=2)
    for out in ("coo", "csf"):
        c = ss.parse_format(out, ndim=3, fill=1.0)
        k = ss.lower(program, A=A, B=B, c=c)
        assert k.strategy == "lattice" and "groups of 2 of i's split straddle position 3" in \
            k.trace.find("straddle")[0].note
        got = k(A=A, B=B)
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)


def test_a_dcsr_of_a_straddling_split_holds_the_group_a_csr_and_coo_take_it_as_written():
    # (no index between: the DCSR appended row 1 twice, once per part, where it did not hold the group; the CSR's
    # rows and the COO's entries come in order)
    program = "c[i, k] = split(concat((a[m], b[n]), (m, n) -> l), l -> (i:3, k:2))"
    a = Tensor.from_numpy(np.array([0.0, 2.0, 3.0]), "dense")
    b = Tensor.from_numpy(np.array([4.0, 0.0, 5.0]), "dense")
    k = ss.lower(program, strategy="lattice", a=a, b=b, c=ss.parse_format("dcsr", ndim=2))
    assert "append the group's coordinate i anew" in k.trace.find("straddle")[0].note
    check(program, "dcsr", a=a, b=b)
    for out in ("csr", "coo", None):
        assert "straddle" not in check(program, out, a=a, b=b).trace.stages()


def test_the_group_stored_right_after_its_major_index_is_taken():
    # (c stored i, k, j: A's part of group 1 at k = 0 before B's at k = 1, in order)
    A, B = part(3, 4, "dense", 0.0, 1, odd=(nan, inf)), part(3, 4, "csr", 0.0, 2, odd=(-inf,))
    program = PROGRAM.format(I=3, K=2)
    want = ss.evaluate(program, A=A, B=B)[0]
    for levels in (Dense(Dense(Dense(Element(0.0)))), Dense(Dense(SparseList(Element(0.0))))):
        c = Format(levels, (0, 2, 1))
        k = ss.lower(program, strategy="lattice", A=A, B=B, c=c)
        got = k(A=A, B=B)
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
    c = Format(ss.parse_format("coo", ndim=3).root, (0, 2, 1))
    got = ss.lower(program, strategy="lattice", A=A, B=B, c=c)(A=A, B=B)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
def test_dense_levels_over_one_list_stored_across_the_group_are_scattered(fill):
    # (c stored i, j, k as Dense, Dense, SparseList: appended in the loops' order, fiber (1, j) got A's k = 0 for
    # every j before B's k = 1, and the rows' counts placed B's values in A's fibers on main)
    A, B = part(3, 4, "dense", fill, 7, odd=(nan, -inf)), part(3, 4, "dense", fill, 8, odd=(inf,))
    program = PROGRAM.format(I=3, K=2)
    want = ss.evaluate(program, A=A, B=B)[0]
    k = ss.lower(program, strategy="lattice", A=A, B=B, c=Format(Dense(Dense(SparseList(Element(fill))))))
    note = k.trace.find("loop-order")[0].note
    assert "straddle position 3" in note and "built by a scatter" in note
    got = k(A=A, B=B)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(A=A, B=B).to_numpy(), want)


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("out", ["coo", "csf", None])
@pytest.mark.parametrize("K, rows", [(2, (3, 3)), (2, (4, 2)), (3, (4, 2)), (3, (3, 3))])
def test_group_sizes_straddling_or_not(K, rows, out, fill):
    # (rows[0] % K: a group straddles A's end; NaN and ±inf stored)
    A = part(rows[0], 3, "dense", fill, K + rows[0], odd=(nan, -inf))
    B = part(rows[1], 3, "dense", fill, rows[1], odd=(inf,))
    program = PROGRAM.format(I=sum(rows) // K, K=K)
    kernel = check(program, out, A=A, B=B)
    assert ("straddle" in kernel.trace.stages()) == (out is not None and rows[0] % K != 0)


@pytest.mark.parametrize("fills", [(0.0, 0.0), (1.0, 1.0), (nan, nan), (nan, 1.0), (0.0, 1.0)])
@pytest.mark.parametrize("fa, fb", [(PARTS[x], PARTS[(x + 1) % len(PARTS)]) for x in range(len(PARTS))])
def test_part_formats_and_fills(fa, fb, fills):
    A = part(3, 4, fa, fills[0], 3, odd=(nan,))
    B = part(3, 4, fb, fills[1], 4, odd=(inf, -inf))
    for out in ("coo", "csf"):
        check(PROGRAM.format(I=3, K=2), out, A=A, B=B)


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([(2, 1, 3), (2, 3, 1), (3, 2, 4), (2, 2, 2), (3, 3, 3)]), st.sampled_from(PARTS),
       st.sampled_from(PARTS), st.sampled_from([0.0, 1.0, nan]), st.sampled_from(["coo", "csf", None]),
       st.integers(0, 2 ** 16))
def test_property(sizes, fa, fb, fill, out, seed):
    K, ra, rb = sizes
    A = part(ra, 2, fa, fill, seed, odd=(nan,))
    B = part(rb, 2, fb, fill, seed + 1, odd=(inf,))
    check(PROGRAM.format(I=(ra + rb) // K, K=K), out, A=A, B=B)


@pytest.mark.parametrize("fa, fb", [("dense", "dense"), ("csr", "coo")])
def test_the_array_form(fa, fb):
    # (the probe's: a of fill NaN, b of fill 1, the default output)
    a = part(3, 5, fa, nan, 5, odd=(2.0, -inf))
    b = part(3, 5, fb, 1.0, 6, odd=(inf,))
    want = np.transpose(np.concatenate([a.to_numpy(), b.to_numpy()]).reshape(-1, 2, 5), (0, 2, 1))
    got = xp.permute_dims(xp.concat([xp.asarray(a), xp.asarray(b)]).reshape(-1, 2, 5), (0, 2, 1)).compute()
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
