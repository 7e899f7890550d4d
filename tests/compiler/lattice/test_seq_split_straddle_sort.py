"""A split's groups straddling a concatenation's parts, held across the parts before a COO, CSF or DCSR appends
them (compiler/lattice/seqstraddlesort.py; issue 30).

``out[i, j, k] = split(concat((A[m, j], B[n, j]), (m, n) -> l), l -> (i:3, k:2))`` of two 3-row parts: group
``i = 1`` holds A's row 2 and B's row 0. On main the lattice refused every case here (seqstraddle: each part's
loop would append or sort its own half of the group) and the default lowering took the looplets'. Each kernel
is built bounds-checked first, then checked against evaluate, the IR interpreter and the sequence CFIR's
interpreter (run_all; one_kernel); the array forms against numpy, one lattice kernel with no conversion."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from compiler.format import Format
from compiler.levels import Dense, Element, SparseHash, SparseList
from tests.compiler.lattice.test_seq_concat_fills import one_kernel
from tests.compiler.lattice.test_seq_product_unions import one_fused_kernel
from tests.compiler.lattice.test_seq_split_straddle import issue_parts
from tests.compiler.lattice.test_seqemit import run_all

nan, inf = np.nan, np.inf

PROGRAM = "c[i, j, k] = split(concat((A[m, j], B[n, j]), (m, n) -> l), l -> (i:{I}, k:{K}))"
VECTORS = "c[i, k] = split(concat((A[m], B[n]), (m, n) -> l), l -> (i:{I}, k:{K}))"
# (hstack, then each row's columns split: the straddling groups of i lie inside each row j)
ROWS = "c[j, i, k] = split(concat((A[j, m], B[j, n]), (m, n) -> l), l -> (i:{I}, k:{K}))"
PARTS = ["dense", "csr", "csc", "coo", "hash"]


def part(shape, name, fill, seed, odd=(), density=0.5):
    """A Tensor of ``shape`` in ``name`` (a vector: dense or sparse) of ``fill``, ``odd`` values stored first."""
    r = np.random.default_rng(seed)
    a = np.where(r.random(shape) < density, r.choice([1.0, -2.0, 3.5], shape), fill)
    a.flat[:len(odd)] = odd[:a.size]
    if name == "hash":
        return Tensor.from_numpy(a, Format(Dense(SparseHash(Element(fill)))))
    if len(shape) == 1:
        name = "dense" if name == "dense" else "sparse"
    return Tensor.from_numpy(a, ss.parse_format(name, ndim=len(shape), fill=fill))


def held(program, out, checked=False, **tensors):
    """``program`` into ``out`` (a Format) by the lattice, its groups held across the parts (a ``straddle``
    step), right against evaluate, the IR and the CFIR interpreters; the result."""
    with np.errstate(invalid="ignore"):
        want = ss.evaluate(program, **tensors)[0]
        k = ss.lower(program, strategy="lattice", checked=checked, **tensors, c=out)
        assert "straddle" in k.trace.stages(), k.trace.stages()
        np.testing.assert_array_equal(k(**tensors).to_numpy(), want)
        # (a CSC part is read converted: the CFIR interpreter walks the copy)
        tensors = {t: x.asformat(Format(x.format.root, tuple(range(x.ndim)))) if t in dict(k.lowered.conversions)
                   else x for t, x in tensors.items()}
        got = run_all(program, tensors, checked=checked, out=out)
    np.testing.assert_array_equal(got, want)
    return k


def test_the_issue_is_the_lattices():
    A, B, _ = issue_parts()
    for out in ("coo", "csf"):
        k = held(PROGRAM.format(I=3, K=2), ss.parse_format(out, ndim=3, fill=1.0), checked=True, A=A, B=B)
        note = k.trace.find("straddle")[0].note
        assert "straddle position 3" in note and "holds each group of i across the parts" in note
        # (one copy of the group sort serves both parts: it runs after the loops)
        assert k.c_source.count("the js the group has, in order") == 1


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("out", ["coo", "csf", "dcsr"])
@pytest.mark.parametrize("K, rows", [(2, (3, 3)), (3, (4, 2)), (3, (2, 4)), (3, (3, 3))])
def test_vectors_and_matrices_straddling_or_not(K, rows, out, fill):
    # (rows[0] % K: a group straddles A's end; NaN and ±inf stored; a DCSR of the split vectors, a COO or CSF of
    # the split matrices)
    vectors = out == "dcsr"
    shape = (lambda r: (r,)) if vectors else (lambda r: (r, 3))
    A = part(shape(rows[0]), "dense" if vectors else "csr", fill, K + rows[0], odd=(nan, -inf))
    B = part(shape(rows[1]), "sparse" if vectors else "coo", fill, rows[1], odd=(inf,))
    program = (VECTORS if vectors else PROGRAM).format(I=sum(rows) // K, K=K)
    k, _ = one_kernel(program, out, A=A, B=B)
    assert ("straddle" in k.trace.stages()) == bool(rows[0] % K)


@pytest.mark.parametrize("fills", [(0.0, 0.0), (1.0, 1.0), (nan, nan)])
@pytest.mark.parametrize("fa, fb", [(PARTS[x], PARTS[(x + 2) % len(PARTS)]) for x in range(len(PARTS))])
def test_part_formats(fa, fb, fills):
    A = part((3, 4), fa, fills[0], 3, odd=(nan,))
    B = part((3, 4), fb, fills[1], 4, odd=(inf, -inf))
    out = ss.parse_format("csf", ndim=3, fill=fills[0])
    held(PROGRAM.format(I=3, K=2), out, A=A, B=B)


@pytest.mark.parametrize("out", ["coo", "csf"])
def test_empty_and_all_fill_parts_and_a_straddling_group_one_part_skips(out):
    # (sparse parts skip rows: B's row 0 empty, the group held from A alone; A's row 2 empty, B's half alone;
    # both empty; every value the fill)
    a, b = np.arange(1.0, 13.0).reshape(3, 4), -np.arange(1.0, 13.0).reshape(3, 4)
    cases = [(a, b * [[0], [1], [1]]), (a * [[1], [1], [0]], b), (a * 0, b * 0), (a * 0, b), (a, b * 0)]
    fmt = ss.parse_format(out, ndim=3)
    for x, y in cases:
        A, B = Tensor.from_numpy(x, "coo"), Tensor.from_numpy(y, "dcsr")
        held(PROGRAM.format(I=3, K=2), fmt, A=A, B=B)
    ones = Format(Dense(SparseList(Element(1.0))))
    A, B = Tensor.from_numpy(np.ones((3, 4)), ones), Tensor.from_numpy(np.ones((3, 4)), ones)
    held(PROGRAM.format(I=3, K=2), ss.parse_format(out, ndim=3, fill=1.0), A=A, B=B)


def test_three_parts_straddle_twice():
    # (concat((A, B)), C): groups of 2 over 3 + 2 + 3 rows straddle positions 3 and 5
    program = "c[i, j, k] = split(concat((concat((A[m, j], B[n, j]), (m, n) -> p), C[q, j]), (p, q) -> l), " \
              "l -> (i:4, k:2))"
    A, B, C = (part((r, 3), f, 0.0, r + 10, odd=(nan,)) for r, f in ((3, "csr"), (2, "dense"), (3, "coo")))
    k = held(program, ss.parse_format("csf", ndim=3), checked=True, A=A, B=B, C=C)
    assert "straddle position" in k.trace.find("straddle")[0].note


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
@pytest.mark.parametrize("out", ["coo", "dcsr"])
def test_split_vectors_in_either_order(out, order):
    # (stored k, i: all the entries sorted by k at once, SortedOutput, each group's halves meeting in its slots;
    # stored i, k into a DCSR: bucketed by i, its coordinate appended once)
    A, B = part((3,), "dense", 0.0, 1, odd=(nan,)), part((3,), "sparse", 0.0, 2, odd=(-inf,))
    fmt = Format(ss.parse_format(out, ndim=2).root, order)
    program = VECTORS.format(I=3, K=2)
    with np.errstate(invalid="ignore"):
        want = ss.evaluate(program, A=A, B=B)[0]
        np.testing.assert_array_equal(run_all(program, {"A": A, "B": B}, checked=order == (1, 0), out=fmt), want)


@pytest.mark.parametrize("order", [(0, 1, 2), (0, 2, 1)])
@pytest.mark.parametrize("parts", [("dense", "dense"), ("csr", "csr")])
def test_straddling_groups_inside_each_row(parts, order):
    # (the loop over j runs around both parts' loops: each row's group sort spans them)
    A = part((4, 3), parts[0], 0.0, 5, odd=(nan, inf))
    B = part((4, 3), parts[1], 0.0, 6, odd=(-inf,))
    program = ROWS.format(I=3, K=2)
    with np.errstate(invalid="ignore"):
        want = ss.evaluate(program, A=A, B=B)[0]
        for out in ("coo", "csf"):
            fmt = Format(ss.parse_format(out, ndim=3).root, order)
            np.testing.assert_array_equal(run_all(program, {"A": A, "B": B}, checked=parts[0] == "csr", out=fmt), want)


FOUR = "c[i, j, k, x] = split(concat((A[m, j, x], B[n, j, x]), (m, n) -> l), l -> (i:{I}, k:{K}))"


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("out, order", [("coo", (0, 1, 2, 3)), ("csf", (0, 1, 2, 3)), ("csf", (1, 0, 3, 2)),
                                        ("coo", (3, 0, 1, 2))])
def test_a_fourth_mode_sorts_every_entry(out, order, fill):
    # (the group buffer sorts a group by one index; with four modes every entry is bucketed by the first stored
    # mode and sorted by the others: compiler/lattice/seqentrysort.py; on main it was refused)
    A = part((3, 2, 2), "csf", fill, 1, odd=(nan, -inf))
    B = part((3, 2, 2), "dense", fill, 2, odd=(inf,))
    program = FOUR.format(I=3, K=2)
    with np.errstate(invalid="ignore"):
        want, fill = ss.evaluate(program, A=A, B=B)
        fmt = Format(ss.parse_format(out, ndim=4, fill=fill).root, order)
        k = ss.lower(program, strategy="lattice", A=A, B=B, c=fmt)
        notes = [s.note for s in k.trace.find("straddle") + k.trace.find("loop-order")]
        assert any("sort every entry" in n or "sorts every entry" in n for n in notes), notes
        np.testing.assert_array_equal(run_all(program, {"A": A, "B": B}, checked=order == (0, 1, 2, 3) and
                                              fill == 0.0, out=fmt), want)


@pytest.mark.parametrize("order", [(1, 2, 0), (2, 1, 0)])
@pytest.mark.parametrize("out", ["coo", "csf"])
def test_the_split_index_stored_third_sorts_every_entry(out, order):
    # (stored j, k, i or k, j, i: a group of i would be sorted by two indices; on main it was refused)
    A = part((3, 4), "csr", 0.0, 3, odd=(nan,))
    B = part((3, 4), "coo", 0.0, 4, odd=(inf, -inf))
    program = PROGRAM.format(I=3, K=2)
    with np.errstate(invalid="ignore"):
        want = ss.evaluate(program, A=A, B=B)[0]
        fmt = Format(ss.parse_format(out, ndim=3).root, order)
        k = ss.lower(program, strategy="lattice", A=A, B=B, c=fmt)
        assert "sort every entry" in k.trace.find("loop-order")[0].note
        np.testing.assert_array_equal(run_all(program, {"A": A, "B": B}, checked=out == "csf", out=fmt), want)


def test_empty_and_all_fill_parts_of_four_modes():
    program = FOUR.format(I=3, K=2)
    fmt = Format(ss.parse_format("csf", ndim=4).root, (1, 0, 3, 2))
    z, full = np.zeros((3, 2, 2)), np.arange(1.0, 13.0).reshape(3, 2, 2)
    for x, y in ((z, z), (z, full), (full, z)):
        tensors = {"A": Tensor.from_numpy(x, "coo"), "B": Tensor.from_numpy(y, "dense")}
        np.testing.assert_array_equal(run_all(program, tensors, out=fmt), ss.evaluate(program, **tensors)[0])


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([(2, 1, 3), (2, 3, 1), (3, 2, 4), (2, 2, 2)]), st.sampled_from(["dense", "csf", "coo"]),
       st.sampled_from(["dense", "csf", "coo"]), st.sampled_from([0.0, 1.0, nan]), st.sampled_from(["coo", "csf"]),
       st.sampled_from([(0, 1, 2, 3), (2, 0, 3, 1), (3, 2, 1, 0)]), st.sampled_from([0.0, 0.4, 1.0]),
       st.integers(0, 2 ** 16))
def test_four_modes_by_property(sizes, fa, fb, fill, out, order, density, seed):
    K, ra, rb = sizes
    A = part((ra, 2, 2), fa, fill, seed, odd=(nan,), density=density)
    B = part((rb, 2, 2), fb, fill, seed + 1, odd=(inf, -inf), density=density)
    program = FOUR.format(I=(ra + rb) // K, K=K)
    with np.errstate(invalid="ignore"):
        want, fill = ss.evaluate(program, A=A, B=B)
        fmt = Format(ss.parse_format(out, ndim=4, fill=fill).root, order)
        np.testing.assert_array_equal(run_all(program, {"A": A, "B": B}, out=fmt), want)


@settings(max_examples=7, deadline=None)
@given(st.sampled_from([(2, 1, 3), (2, 3, 1), (3, 2, 4), (2, 2, 2), (3, 4, 2)]), st.sampled_from(PARTS),
       st.sampled_from(PARTS), st.sampled_from([0.0, 1.0, nan]), st.sampled_from(["coo", "csf"]),
       st.sampled_from([0.0, 0.3, 1.0]), st.integers(0, 2 ** 16))
def test_property(sizes, fa, fb, fill, out, density, seed):
    K, ra, rb = sizes
    A = part((ra, 3), fa, fill, seed, odd=(nan,), density=density)
    B = part((rb, 3), fb, fill, seed + 1, odd=(inf, -inf), density=density)
    one_kernel(PROGRAM.format(I=(ra + rb) // K, K=K), out, A=A, B=B)


@pytest.mark.parametrize("fa, fb, out", [("dense", "dense", "coo"), ("csr", "coo", "csf"), ("coo", "csr", None)])
def test_the_array_form(fa, fb, out):
    # (the issue's: a of fill NaN, b of fill 1; into a COO, a CSF, the default output)
    a = part((3, 5), fa, nan, 5, odd=(2.0, -inf))
    b = part((3, 5), fb, 1.0, 6, odd=(inf,))
    want = np.transpose(np.concatenate([a.to_numpy(), b.to_numpy()]).reshape(-1, 2, 5), (0, 2, 1))
    expr = xp.permute_dims(xp.concat([xp.asarray(a), xp.asarray(b)]).reshape(-1, 2, 5), (0, 2, 1))
    fmt = None if out is None else ss.parse_format(out, ndim=3, fill=nan)
    k = expr.lower(fmt, strategy="lattice")
    assert not {"retry", "materialize", "convert"} & set(k.trace.stages()), k.trace.stages()
    assert fmt is None or "straddle" in k.trace.stages()
    got = k()
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(k.interpret().to_numpy(), want)


@pytest.mark.parametrize("perm", [(1, 2, 0), (2, 1, 0)])
def test_the_array_form_with_the_split_index_last(perm):
    # (the groups of the reshape's rows straddle the parts, and the permuted result stores them last: on main the
    # lattice refused it and the array front end retried it with the concatenation materialized)
    a = part((3, 5), "csr", 0.0, 11, odd=(nan, -inf))
    b = part((3, 5), "coo", 0.0, 12, odd=(inf,))
    want = np.transpose(np.concatenate([a.to_numpy(), b.to_numpy()]).reshape(-1, 2, 5), perm)
    expr = xp.permute_dims(xp.concat([xp.asarray(a), xp.asarray(b)]).reshape(-1, 2, 5), perm)
    for fmt in (None, ss.parse_format("csf", ndim=3)):
        one_fused_kernel(expr, want, fmt)
