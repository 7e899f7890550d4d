"""The transpose of a split's groups into a sparse output under the lattice strategy (issue 30):
``out[i, j, k] = split(A[l, j], l -> (i, k))`` of a CSR/COO/DCSR ``A`` into a COO or CSF stored ``i, j, k``.
Looped ``i, j, k`` the loop over ``j`` would merge the group's rows' fibers (refused on main, saying why);
the loops run ``i, k, j`` instead, walking ``A`` as stored, and each group's entries are sorted by ``j``
before the output appends them (:mod:`compiler.lattice.seqgroupsort`: a counting sort per group).

Each case against the dense oracle, the IR interpreter and the CFIR interpreter in the loops' order
(``run_all``): CSR/COO/DCSR/dense inputs, COO/CSF/dense/Dense-Dense-SparseList outputs, fills 0/1/NaN,
NaN/±inf stored, empty and all-fill operands, an operand along ``j``, and by a property; a one-column ``A``
(its loop over ``j`` of one coordinate, all fill on main). The array
front end's transposes of reshapes (``permute_dims(A.reshape(I, K, J), (0, 2, 1))`` into COO/CSF, and
the column-first splits of a collapse or a slice into CSR/CSC) are one lattice kernel that walks.

With two modes, ``C[i, k] = split(a[l], l -> (i, k))`` (of a vector, a collapse or a slice) into a COO or DCSR
stored column-major: the loops run ``i, k`` and the whole output is sorted by ``k`` in two passes (on main:
each group searched for ``k``'s coordinate, or refused).
"""

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp, evaluate
from compiler.format import Format
from compiler.imperative.ir import Allocate, Const
from compiler.imperative.traverse import walk
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

sys.path.insert(0, str(Path(__file__).parent))
from test_seqemit import run_all  # noqa: E402

nan, inf = np.nan, np.inf
TRANSPOSE = "out[i, j, k] = split(A[l, j], l -> (i:{I}, k:{K}))"
ROWS = "Dense(Dense(SparseList(Element({fill}))))"


def out_format(name, fill=0.0):
    return ss.parse_format(ROWS.format(fill=fill)) if name == "rows" else \
        ss.parse_format(name, ndim=3, fill=fill)


def check(program, tensors, out, fill=0.0):
    """``program`` compiled by the lattice into ``out`` (a format name; ``rows``: Dense, Dense, SparseList)
    of ``fill``, against the dense oracle, the IR and the CFIR interpreters; its kernel."""
    with np.errstate(invalid="ignore"):
        want = evaluate(program, **{t: x.to_numpy() for t, x in tensors.items()})[0]
    fmt = out_format(out, fill)
    np.testing.assert_array_equal(run_all(program, tensors, out=fmt), want)
    return ss.lower(program, strategy="lattice", **tensors, out=fmt)


def matrix(a, fmt, fill=0.0):
    return Tensor.from_numpy(a, fmt, fill=fill)


def sorted_groups(k):
    """Whether kernel ``k`` ran its loops i, k, j and sorted each group before appending it."""
    steps = k.trace.find("loop-order")
    return bool(steps) and steps[0].data.get("order") == [0, 2, 1] and "sort each group of i" in steps[0].note


@pytest.mark.parametrize("afmt", ["csr", "coo", "dcsr"])
@pytest.mark.parametrize("out", ["coo", "csf"])
def test_a_transpose_of_a_reshaped_sparse_matrix_sorts_each_group(afmt, out):
    a = operand((12, 5), "dense", 30, odd=(nan, 0.0, inf, -inf))[0]
    k = check(TRANSPOSE.format(I=3, K=4), {"A": matrix(a, afmt)}, out)
    np.testing.assert_array_equal(k(A=matrix(a, afmt)).to_numpy(), a.reshape(3, 4, 5).transpose(0, 2, 1))
    assert sorted_groups(k), [s.note for s in k.trace.find("loop-order")]
    assert "while k <- π1(l_A, 4)\n    while j <- j_A" in k.trace.find("cfir")[0].after_text
    # (one workspace for the kernel, its counts back to 0 after each group)
    assert k.c_source.count("out_j_count[j] = 0;") == 1, k.c_source


@pytest.mark.parametrize("per_group, out", [(5, "coo"), (40, "csf"), (150, "coo")])
def test_a_groups_columns_sorted_each_way(per_group, out):
    # (the columns a group has, among 1000, sorted by rank (5), in a bitmap of words (40) or rebuilt by a
    # scan of their marks (150): compiler.imperative.sorting)
    r = np.random.default_rng(per_group)
    a = np.zeros((6, 1000))
    for g in range(3):
        rows, cols = r.integers(2 * g, 2 * g + 2, per_group), r.choice(1000, per_group, replace=False)
        a[rows, cols] = r.choice([1.0, -2.0, nan], per_group)
    k = check(TRANSPOSE.format(I=3, K=2), {"A": matrix(a, "csr")}, out)
    assert sorted_groups(k)


@pytest.mark.parametrize("out", ["coo", "csf"])
def test_a_groups_workspace_holds_the_largest_groups_entries_not_its_block(out):
    # (K = 20000 rows per group of J = 500000 columns: a group's K·J block is 80 GB per array, where the
    # groups hold 7 entries at most; the kernel and the IR interpreter, which allocates each scratch array
    # at its length, run only if the workspace is sized by the entries phase 1 counts)
    I, K, J = 2, 20_000, 500_000
    rows = np.array([0, 5, 5, 19_999, 20_000, 20_003, 39_999, 39_999, 39_999, 39_999, 39_999])
    cols = np.array([7, 499_999, 3, 7, 0, 0, 1, 2, 3, 4, 5])
    vals = np.arange(1.0, len(rows) + 1)
    A = sp.csr_matrix((vals, (rows, cols)), shape=(I * K, J))
    A.sort_indices()
    t = Tensor.from_scipy(A, name="A")
    k = ss.lower(TRANSPOSE.format(I=I, K=K), strategy="lattice", A=t, out=out_format(out))
    assert sorted_groups(k)
    lengths = [n.length for n in walk(k.function.body) if isinstance(n, Allocate)]
    assert all(not isinstance(x, Const) or x.value <= J for x in lengths), lengths
    order = np.lexsort((rows % K, cols, rows // K))
    want = np.stack([rows // K, cols, rows % K])[:, order], vals[order]
    for got in (k(A=t), k.interpret(A=t)):
        coords, values = got.to_coords()
        np.testing.assert_array_equal(coords, want[0])
        np.testing.assert_array_equal(values, want[1])


@pytest.mark.parametrize("out", ["dense", "rows"])
def test_outputs_that_take_entries_out_of_order_are_not_sorted(out):
    # (a dense output is written at random, a Dense-Dense-SparseList one scattered whole)
    a = operand((6, 4), "dense", 31)[0]
    k = check(TRANSPOSE.format(I=2, K=3), {"A": matrix(a, "csr")}, out)
    assert not sorted_groups(k) and "_count" not in k.c_source


def test_a_dense_level_below_the_split_is_walked_in_the_outputs_order():
    a = operand((6, 4), "dense", 32)[0]
    k = check(TRANSPOSE.format(I=2, K=3), {"A": matrix(a, "dense")}, "coo")
    assert k.trace.find("loop-order") == []


@pytest.mark.parametrize("case", ["fill-1", "fill-nan", "stored-nan-inf", "empty", "all-fill", "one-group",
                                  "one-row-each", "plus-b", "times-b", "times-B"])
def test_a_sorted_transpose_with_fills_values_and_operands(case):
    program = TRANSPOSE.format(I=3, K=2)
    if case in ("fill-1", "fill-nan"):
        f = 1.0 if case == "fill-1" else nan
        a = operand((6, 4), "dense", 33, fill=f, odd=(0.0, inf))[0]
        k = check(program, {"A": matrix(a, "csr", f)}, "coo", fill=f)
    elif case == "stored-nan-inf":
        k = check(program, {"A": matrix(operand((6, 4), "dense", 34, odd=(nan, inf, -inf, nan))[0], "coo")}, "csf")
    elif case in ("empty", "all-fill"):
        f = 0.0 if case == "empty" else 2.0
        k = check(program, {"A": matrix(np.full((6, 4), f), "dcsr", f)}, "csf", fill=f)
    elif case in ("one-group", "one-row-each"):
        k = check(TRANSPOSE.format(I=1, K=6) if case == "one-group" else TRANSPOSE.format(I=6, K=1),
                  {"A": matrix(operand((6, 4), "dense", 35)[0], "csr")}, "coo")
    elif case in ("plus-b", "times-b"):
        b = Tensor.from_numpy(np.array([0, 2.0, -1.0, 0]), "sparse")
        k = check(program + (" + b[j]" if case == "plus-b" else " * b[j]"),
                  {"A": matrix(operand((6, 4), "dense", 36)[0], "csr"), "b": b}, "csf")
    else:
        B = matrix(operand((6, 4), "dense", 37)[0], "coo")
        k = check("out[i, j, k] = split(A[l, j] * B[l, j], l -> (i:3, k:2))",
                  {"A": matrix(operand((6, 4), "dense", 38)[0], "csr"), "B": B}, "coo")
    assert sorted_groups(k)


@pytest.mark.parametrize("out", ["dense", "coo"])
def test_a_one_column_matrix_looped_between_the_splits_indices(out):
    # (the loop over j walks one coordinate, of the group's first row's fiber: all fill on main where that
    # row had none; now its loops run i, k, j as for any J)
    a = np.zeros((6, 1))
    a[1, 0], a[3, 0] = 5.0, nan
    k = check(TRANSPOSE.format(I=2, K=3), {"A": matrix(a, "csr")}, out)
    np.testing.assert_array_equal(k(A=matrix(a, "csr")).to_numpy(), a.reshape(2, 3, 1).transpose(0, 2, 1))
    assert k.trace.find("loop-order")[0].data["order"] == [0, 2, 1]


def test_given_no_strategy_the_sorted_transpose_is_right():
    a = operand((6, 4), "dense", 39)[0]
    A = matrix(a, "csr")
    got = ss.lower(TRANSPOSE.format(I=2, K=3), A=A, out=out_format("coo"))(A=A).to_numpy()
    np.testing.assert_array_equal(got, a.reshape(2, 3, 4).transpose(0, 2, 1))


@pytest.mark.parametrize("fmt", ["coo", "csf"])
def test_the_array_front_ends_transpose_of_a_reshape_into_a_sparse_output_is_one_lattice_kernel(fmt):
    (a, A) = operand((6, 4), "csr", 40, odd=(inf,))
    k = one_lattice_kernel(xp.permute_dims(A.reshape(2, 3, 4), (0, 2, 1)), a.reshape(2, 3, 4).transpose(0, 2, 1),
                           fmt)
    assert sorted_groups(k)
    (a, A), (b, B) = operand((6, 4), "coo", 41), operand(4, "sparse_vector", 42)
    one_lattice_kernel(xp.permute_dims(A.reshape(3, 2, 4), (0, 2, 1)) * xp.expand_dims(B, axis=1),
                       a.reshape(3, 2, 4).transpose(0, 2, 1) * b[:, None], fmt)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_the_array_front_ends_column_first_splits_of_a_collapse_or_slice_walk(fmt):
    # (walked in the split's order, a CSR built by a scatter; no group searched for its minor coordinate)
    (a, A), (v, V) = operand((6, 4), "csr", 43, odd=(nan,)), operand(30, "sparse_vector", 44, odd=(-inf,))
    for expr, want in [(xp.permute_dims(A.reshape(-1).reshape(4, 6), (1, 0)), a.reshape(-1).reshape(4, 6).T),
                       (V.reshape(5, 6).T, v.reshape(5, 6).T),
                       (V[3:27].reshape(4, 6).T, v[3:27].reshape(4, 6).T),
                       (A[1:5].reshape(-1).reshape(2, 8).T, a[1:5].reshape(-1).reshape(2, 8).T)]:
        k = one_lattice_kernel(expr, want, fmt)
        assert "::" not in k.trace.find("cfir")[0].after_text, k.trace.find("cfir")[0].after_text


# -- two modes: the whole output sorted -------------------------------------------------------------------


SPLIT = "C[i, k] = split(a[l], l -> (i:{I}, k:{K}))"
OF_COLLAPSE = "C[i, k] = split(collapse(A[m, n], (m, n) -> l), l -> (i:{I}, k:{K}))"
OF_SLICE = "C[i, k] = split(slice(a[m], m -> l, (1, 13, 1)), l -> (i:{I}, k:{K}))"


def column_major(name, fill=0.0):
    """A COO or DCSR stored column-major (a COO of mode order 1, 0; a DCSC)."""
    return Format(ss.parse_format(name, ndim=2, fill=fill).root, (1, 0))


def check2(program, tensors, out, fill=0.0):
    with np.errstate(invalid="ignore"):
        want = evaluate(program, **{t: x.to_numpy() for t, x in tensors.items()})[0]
    fmt = column_major(out, fill)
    np.testing.assert_array_equal(run_all(program, tensors, out=fmt), want)
    k = ss.lower(program, strategy="lattice", **tensors, C=fmt)
    if all(lvl.located_by_coordinate for x in tensors.values() for lvl in x.format.levels):
        # (a dense vector's residue class is a counter stepping by K, no search: its loops stay k, i)
        assert k.trace.find("loop-order") == [] and "::" in k.trace.find("cfir")[0].after_text
        return k
    # (walked in the split's order, the entries sorted by k: no group searched for its minor coordinate)
    (step,) = k.trace.find("loop-order")
    assert "sort the entries before C appends them" in step.note and step.data["order"] == [0, 1], step.note
    assert "::" not in k.trace.find("cfir")[0].after_text
    return k


@pytest.mark.parametrize("out", ["coo", "dcsr"])
@pytest.mark.parametrize("form", ["vector", "collapse", "slice"])
def test_a_split_into_a_column_major_output_is_walked_and_sorted(out, form):
    # (on main a split vector searched each group for k's coordinate, l_a[k::3], and a split of a collapse or
    # slice was refused)
    x = Tensor.from_numpy(operand(12, "dense", 50, odd=(nan, inf, -inf))[0], "sparse")
    if form == "vector":
        check2(SPLIT.format(I=4, K=3), {"a": x}, out)
    elif form == "collapse":
        check2(OF_COLLAPSE.format(I=4, K=3), {"A": matrix(operand((3, 4), "dense", 51, odd=(nan,))[0], "csr")}, out)
    else:
        check2(OF_SLICE.format(I=3, K=4), {"a": Tensor.from_numpy(operand(14, "dense", 52)[0], "coo")}, out)


@pytest.mark.parametrize("case", ["fill-1", "fill-nan", "empty", "all-fill", "one-row", "one-column"])
def test_a_sorted_split_with_fills_and_operands(case):
    if case in ("fill-1", "fill-nan"):
        f = 1.0 if case == "fill-1" else nan
        check2(SPLIT.format(I=3, K=4), {"a": Tensor.from_numpy(operand(12, "dense", 53, fill=f)[0], "sparse",
                                                                fill=f)}, "coo", fill=f)
    elif case in ("empty", "all-fill"):
        f = 0.0 if case == "empty" else 2.0
        check2(SPLIT.format(I=3, K=4), {"a": Tensor.from_numpy(np.full(12, f), "coo", fill=f)}, "dcsr", fill=f)
    else:
        I, K = (1, 6) if case == "one-row" else (6, 1)
        check2(SPLIT.format(I=I, K=K), {"a": Tensor.from_numpy(operand(6, "dense", 54)[0], "sparse")}, "coo")


@pytest.mark.parametrize("fmt", ["coo", "dcsr"])
def test_the_array_front_ends_column_first_splits_into_coo_or_dcsr_are_one_lattice_kernel(fmt):
    # (on main: retried, each reshape materialized)
    (a, A), (v, V) = operand((6, 4), "csr", 55, odd=(nan,)), operand(30, "sparse_vector", 56, odd=(-inf,))
    for expr, want in [(xp.permute_dims(A.reshape(-1).reshape(4, 6), (1, 0)), a.reshape(-1).reshape(4, 6).T),
                       (V[3:27].reshape(4, 6).T, v[3:27].reshape(4, 6).T)]:
        k = one_lattice_kernel(expr, want, fmt)
        assert "sort the entries before out appends them" in k.trace.find("loop-order")[0].note


# -- by property -------------------------------------------------------------------------------------------


@st.composite
def transpose_cases(draw):
    """(A's format, fill, density, stored odd values, I, K, J, output, b's format or None)."""
    fill = draw(st.sampled_from([0.0, 0.0, 1.0, nan]))
    I, K = draw(st.sampled_from([(2, 3), (3, 2), (1, 4), (4, 1), (2, 2)]))
    return (draw(st.sampled_from(["csr", "coo", "dcsr"])), fill, draw(st.sampled_from([0.0, 0.4, 1.0])),
            draw(st.sampled_from([(), (nan,), (inf, -inf)])), I, K, draw(st.integers(1, 4)),
            draw(st.sampled_from(["coo", "csf"])), draw(st.sampled_from([None, "sparse", "dense"])) if fill == 0
            else None)


@settings(max_examples=7, deadline=None)
@given(transpose_cases(), st.integers(0, 2**16))
@example(("coo", nan, 0.4, (inf, -inf), 2, 3, 3, "csf", None), 1)
@example(("dcsr", 0.0, 1.0, (nan,), 3, 2, 4, "coo", "sparse"), 2)
@example(("csr", 1.0, 0.0, (), 1, 4, 2, "coo", None), 3)
def test_a_sorted_transpose_by_property(drawn, seed):
    afmt, fill, density, odd, I, K, J, out, bfmt = drawn
    a = operand((I * K, J), "dense", seed, density=density, fill=fill, odd=odd)[0]
    tensors = {"A": matrix(a, afmt, fill)}
    program = TRANSPOSE.format(I=I, K=K)
    if bfmt is not None:
        tensors["b"] = Tensor.from_numpy(operand(J, "dense", seed + 1)[0], bfmt)
        program += " * b[j]"
    assert sorted_groups(check(program, tensors, out, fill=fill))


@settings(max_examples=5, deadline=None)
@given(st.sampled_from(["sparse", "coo", "dense"]), st.sampled_from([0.0, 0.0, 1.0, nan]),
       st.sampled_from([0.0, 0.4, 1.0]), st.sampled_from([(), (nan,), (inf, -inf)]),
       st.sampled_from([(2, 3), (3, 2), (1, 4), (4, 1), (3, 3)]), st.sampled_from(["coo", "dcsr"]),
       st.integers(0, 2**16))
@example("coo", nan, 0.4, (inf, -inf), (3, 2), "dcsr", 1)
def test_a_sorted_split_by_property(afmt, fill, density, odd, sizes, out, seed):
    I, K = sizes
    a = operand(I * K, "dense", seed, density=density, fill=fill, odd=odd)[0]
    check2(SPLIT.format(I=I, K=K), {"a": Tensor.from_numpy(a, afmt, fill=fill)}, out, fill=fill)
