"""A split's minor walk where a product or the loop order repeats its group, or walks it first (issue 30), under
the lattice strategy. Four shapes, refused or wrong on main:

* ``collapse(broadcast(k, split(A[m], m -> (i, l))), (k, l) -> j)`` (np.tile of the rows of a split vector):
  ``U_k × π1(m_A, L)`` walks the group the loop over ``i`` opened once per ``k``; the product restarts the π1
  at the group's start (``seqrewind.product_rewinds``), as a loop between the split's indices does. Refused
  on main.
* ``C[i, j, k] = split(A[l, j], l -> (i, k))`` of a CSR/COO/DCSR ``A`` (a transpose of its reshape): the loop
  over ``j`` between the split's indices would merge the group's rows' fibers. A dense output takes its
  entries in any order, so its loops run ``i, k, j`` (a ``loop-order`` step); so do a sparse output's in mode
  order ``i, j, k``, each group sorted before it is appended (test_seq_split_transpose). Refused on main.
* ``C[i, k] = split(a[l], l -> (i, k))`` into a CSC output (loops ``k, i``): the loop over ``k`` walks ``U_k``
  and the one over ``i`` the residue class ``l_a[k::K]``, each group searched (``sequences.Stride``,
  ``seqstride``). Refused on main.
* ``collapse(split(a[l], l -> (i, k)), (k, i) -> m)`` (the minor index collapsed first, a transpose):
  ``U_k × l_a[k::K]``. Silently all-fill on main (the π1 left of its π0 simplified to ∅), and the looplets
  refuse it.

Given no strategy, lower() takes the lattice's search only where the looplets refuse the statement (the
split into CSC stays theirs, as on main: the search costs a walk of each group per column).

Each lowered case is checked against the dense oracle, the IR interpreter and the CFIR interpreter
(``run_all``), over sparse/COO/dense vectors and CSR/COO/DCSR matrices, dense/CSR/CSC/COO outputs, fills 0/1/NaN,
NaN/±inf stored, empty and all-fill operands, and by a property.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp, evaluate
from compiler.format import Format
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

sys.path.insert(0, str(Path(__file__).parent))
from test_seqemit import run_all  # noqa: E402

nan, inf = np.nan, np.inf
TILE = "out[i, j] = collapse(broadcast(k:{K}, split(A[m], m -> (i:{I}, l:{L}))), (k, l) -> j)"
TRANSPOSE = "out[i, j, k] = split(A[l, j], l -> (i:{I}, k:{K}))"


def check(program, tensors, out=None, checked=False):
    """``program`` compiled by the lattice into ``out`` (a format name, a Format, or dense), against the dense
    oracle, the IR and the CFIR interpreters; its kernel."""
    with np.errstate(invalid="ignore"):
        want = evaluate(program, **tensors)[0]
    fmt = ss.parse_format(out, ndim=want.ndim, fill=0.0) if isinstance(out, str) else out
    np.testing.assert_array_equal(run_all(program, tensors, checked=checked, out=fmt), want)
    return ss.lower(program, strategy="lattice", **tensors, **({} if fmt is None else {program.split("[")[0]: fmt}))


def vector(a, fmt, fill=0.0):
    return Tensor.from_numpy(a, fmt, fill=fill)


# -- a product restarting a π1 of a group a loop around opened -------------------------------------------


@pytest.mark.parametrize("afmt", ["sparse", "coo", "dense"])
@pytest.mark.parametrize("out", [None, "csr", "coo"])
def test_a_tiled_split_row_walks_its_group_once_per_tile(afmt, out):
    a = np.array([1.0, 0, 3, 4, 5, 0, 0, 0, -2.0])
    k = check(TILE.format(K=2, I=3, L=3), {"A": vector(a, afmt)}, out=out, checked=afmt == "sparse" and out is None)
    np.testing.assert_array_equal(k(A=vector(a, afmt)).to_numpy(), np.tile(a.reshape(3, 3), (1, 2)))
    assert "while j <- U_k × π1(m_A, 3)" in k.trace.find("cfir")[0].after_text
    # (saved where the loop over i enters the group, restored as the product restarts its right operand)
    assert "pA0_start = pA0;" in k.c_source and "pA0 = pA0_start;" in k.c_source, k.c_source


@pytest.mark.parametrize("case", ["fill-1", "fill-nan", "stored-nan-inf", "empty", "all-fill", "one-tile",
                                  "times-b", "plus-b", "union"])
def test_a_tiled_split_row_with_fills_values_and_operands(case):
    tile = TILE.format(K=3, I=2, L=4)
    if case in ("fill-1", "fill-nan"):
        f = 1.0 if case == "fill-1" else nan
        check(tile, {"A": vector(operand(8, "dense", 1, fill=f)[0], "sparse", f)})
    elif case == "stored-nan-inf":
        check(tile, {"A": vector(operand(8, "dense", 2, odd=(nan, inf, -inf))[0], "coo")}, out="coo")
    elif case in ("empty", "all-fill"):
        f = 0.0 if case == "empty" else 2.0
        check(tile, {"A": vector(np.full(8, f), "sparse", f)}, out="csr" if f == 0 else None)
    elif case == "one-tile":
        check(TILE.format(K=1, I=4, L=2), {"A": vector(operand(8, "dense", 3)[0], "sparse")}, out="coo")
    elif case in ("times-b", "plus-b"):
        op = "*" if case == "times-b" else "+"
        b = vector(operand((2, 12), "dense", 4, odd=(inf,) if op == "+" else ())[0], "csr")
        check(f"{tile} {op} B[i, j]",
              {"A": vector(operand(8, "dense", 5)[0], "sparse"), "B": b}, out="csr")
    else:
        x, y = operand(8, "dense", 6)[0], operand(8, "dense", 7)[0]
        check("out[i, j] = collapse(broadcast(k:2, split(A[m] * C[m], m -> (i:2, l:4))), (k, l) -> j)",
              {"A": vector(x, "sparse"), "C": vector(y, "coo")}, out="coo")


def test_the_array_front_ends_tile_of_a_reshape_is_one_lattice_kernel():
    (x, X), (y, Y) = operand(12, "sparse_vector", 8, odd=(inf,)), operand((4, 9), "csr", 9)
    one_lattice_kernel(xp.broadcast_to(X.reshape(4, 1, 3), (4, 3, 3)).reshape(4, 9),
                       np.tile(x.reshape(4, 3), (1, 3)))
    (x, X) = operand(12, "sparse_vector", 8)
    one_lattice_kernel(xp.broadcast_to(X.reshape(4, 1, 3), (4, 3, 3)).reshape(4, 9) * Y,
                       np.tile(x.reshape(4, 3), (1, 3)) * y, "csr")


def test_a_product_repeating_the_group_over_another_index_restarts_its_minor_walk():
    # ((π0 × U_n) × π1 is π0 × (U_n × π1): the inner product restarts the π1 at its group's start for each n;
    # before, refused. More in test_seq_product_operands.py)
    a = np.array([1.0, 0, 3, 4, 5, 0])
    program = "out[j] = collapse(collapse(broadcast(n:2, split(A[m], m -> (i:2, l:3))), (i, n) -> k), (k, l) -> j)"
    k = check(program, {"A": vector(a, "sparse")})
    np.testing.assert_array_equal(k(A=vector(a, "sparse")).to_numpy(), np.repeat(a.reshape(2, 1, 3), 2, 1).ravel())
    assert "while j <- π0(m_A, 3) × (U_n × π1(m_A, 3))" in k.trace.find("cfir")[0].after_text


# -- a sparse level below the split, looped between its indices ----------------------------------------


@pytest.mark.parametrize("afmt", ["csr", "coo", "dcsr"])
def test_a_transpose_of_a_reshaped_sparse_matrix_into_a_dense_output_loops_i_k_j(afmt):
    a = operand((6, 4), "dense", 10, odd=(nan, 0.0, inf, -inf))[0]
    k = check(TRANSPOSE.format(I=2, K=3), {"A": Tensor.from_numpy(a, afmt)}, checked=afmt == "csr")
    np.testing.assert_array_equal(k(A=Tensor.from_numpy(a, afmt)).to_numpy(), a.reshape(2, 3, 4).transpose(0, 2, 1))
    step = k.trace.find("loop-order")[0]
    assert step.data["order"] == [0, 2, 1] and "they run i, k, j instead" in step.note, step.note
    assert "while k <- π1(l_A, 3)\n    while j <- j_A" in k.trace.find("cfir")[0].after_text
    # (with a vector along j, a fill 1, an empty and an all-fill A)
    b = Tensor.from_numpy(np.array([0, 2.0, -1.0, 0]), "sparse")
    check(TRANSPOSE.format(I=3, K=2) + " + b[j]", {"A": Tensor.from_numpy(a, afmt), "b": b})
    check(TRANSPOSE.format(I=3, K=2) + " * b[j]", {"A": Tensor.from_numpy(np.nan_to_num(a), afmt), "b": b})
    one = operand((6, 4), "dense", 11, fill=1.0)[0]
    check(TRANSPOSE.format(I=2, K=3), {"A": Tensor.from_numpy(one, afmt, fill=1.0)})
    for full in (np.zeros((6, 4)), np.full((6, 4), 3.0)):
        check(TRANSPOSE.format(I=6, K=1), {"A": Tensor.from_numpy(full, afmt, fill=float(full[0, 0]))})


def test_a_transpose_into_a_sparse_output_of_either_order_lowers():
    a = operand((6, 4), "dense", 12)[0]
    A = Tensor.from_numpy(a, "csr")
    want = a.reshape(2, 3, 4).transpose(0, 2, 1)
    # (stored i, j, k: the loops run i, k, j and each group is sorted by j before it is appended,
    # test_seq_split_transpose; refused on main)
    k = check(TRANSPOSE.format(I=2, K=3), {"A": A}, out="coo")
    assert "sort each group of i" in k.trace.find("loop-order")[0].note
    # (a COO stored i, k, j takes the loops i, k, j: no loop between the split's indices)
    coo = ss.parse_format("coo", ndim=3, fill=0.0)
    k = check(TRANSPOSE.format(I=2, K=3), {"A": A}, out=Format(coo.root, (0, 2, 1)))
    assert k.trace.find("loop-order") == []
    np.testing.assert_array_equal(
        ss.lower(TRANSPOSE.format(I=2, K=3), A=A, out=coo)(A=A).to_numpy(), want)


def test_the_array_front_ends_transpose_of_a_reshaped_csr_into_dense_is_one_lattice_kernel():
    (a, A) = operand((6, 4), "csr", 13, odd=(inf,))
    one_lattice_kernel(xp.permute_dims(A.reshape(2, 3, 4), (0, 2, 1)), a.reshape(2, 3, 4).transpose(0, 2, 1),
                       "dense")
    (a, A), (b, B) = operand((6, 4), "csr", 13), operand(4, "sparse_vector", 14)
    one_lattice_kernel(xp.permute_dims(A.reshape(3, 2, 4), (0, 2, 1)) * xp.expand_dims(B, axis=1),
                       a.reshape(3, 2, 4).transpose(0, 2, 1) * b[:, None], "dense")


# -- the minor index walked before the major one: each group searched ---------------------------------------


SPLIT = "C[i, k] = split(a[l], l -> (i:{I}, k:{K}))"
COLLAPSED = "c[m] = collapse(split(a[l], l -> (i:{I}, k:{K})), (k, i) -> m)"


@pytest.mark.parametrize("afmt", ["sparse", "coo", "dense"])
def test_a_split_into_csc_is_scattered_not_searched(afmt):
    # (the search of each group for the column's coordinate, l_a[k::3], lowers it; loops in the split's own
    # order and a scatter into the CSC walk each entry once: at 200000 entries, 1%, into 400 x 500, 0.017 ms
    # against the looplets' 0.16 ms and the search's 1.2 ms)
    a = np.array([1.0, 0, 3, 4, 5, 0, 0, 7, 0, 0, 2, 9])
    k = check(SPLIT.format(I=4, K=3), {"a": vector(a, afmt)}, out="csc", checked=afmt == "sparse")
    np.testing.assert_array_equal(k(a=vector(a, afmt)).to_numpy(), a.reshape(4, 3))
    assert "while i <- π0(l_a, 3)\n  while k <- π1(l_a, 3)" in k.trace.find("cfir")[0].after_text
    (step,) = k.trace.find("loop-order")
    assert "search each group of a split" in step.note and "scatter" in step.note, step.note


@pytest.mark.parametrize("case", ["fill-1", "fill-nan", "stored-nan-inf", "empty", "all-fill", "one-row",
                                  "one-column", "times-B", "plus-b", "union", "reduced"])
def test_a_split_into_csc_with_fills_values_and_operands(case):
    split = SPLIT.format(I=3, K=4)
    if case in ("fill-1", "fill-nan"):
        f = 1.0 if case == "fill-1" else nan
        check(split, {"a": vector(operand(12, "dense", 20, fill=f)[0], "sparse", f)},
              out=Format(ss.parse_format("dense", ndim=2, fill=f).root, (1, 0)))
    elif case == "stored-nan-inf":
        check(split, {"a": vector(operand(12, "dense", 21, odd=(nan, inf, -inf))[0], "coo")}, out="csc")
    elif case in ("empty", "all-fill"):
        f = 0.0 if case == "empty" else 2.0
        check(split, {"a": vector(np.full(12, f), "sparse", f)}, out="csc" if f == 0 else None)
    elif case in ("one-row", "one-column"):
        check(SPLIT.format(I=1, K=6) if case == "one-row" else SPLIT.format(I=6, K=1),
              {"a": vector(operand(6, "dense", 22)[0], "sparse")}, out="csc")
    elif case == "times-B":
        check(split + " * B[i, k]", {"a": vector(operand(12, "dense", 23)[0], "sparse"),
                                     "B": Tensor.from_numpy(operand((3, 4), "dense", 24)[0], "csc")}, out="csc")
    elif case == "plus-b":
        check(split + " + b[k]", {"a": vector(operand(12, "dense", 25, odd=(inf,))[0], "coo"),
                                  "b": vector(np.array([0, 1.0, 0, -2.0]), "sparse")}, out="csc")
    elif case == "union":
        check("C[i, k] = split(a[l] + d[l], l -> (i:3, k:4))",
              {"a": vector(operand(12, "dense", 26)[0], "sparse"), "d": vector(operand(12, "dense", 27)[0], "coo")},
              out="csc")
    else:
        # (a row sum of the split: the loop over i is a reduction inside the one over k)
        check("y[k] = sum[i](split(a[l], l -> (i:3, k:4)))", {"a": vector(operand(12, "dense", 28)[0], "sparse")})


@pytest.mark.parametrize("afmt", ["sparse", "coo", "dense"])
def test_a_split_collapsed_minor_index_first_is_its_transpose(afmt):
    # (on main: the π1 left of its π0 in one product simplified to ∅, a kernel writing nothing; the looplets
    # refuse it: a column-major walk of a row-major split)
    a = np.array([1.0, 0, 3, 4, 5, 0])
    k = check(COLLAPSED.format(I=2, K=3), {"a": vector(a, afmt)}, checked=afmt == "sparse")
    np.testing.assert_array_equal(k(a=vector(a, afmt)).to_numpy(), a.reshape(2, 3).T.ravel())
    assert "while m <- U_k × l_a[k::3]" in k.trace.find("cfir")[0].after_text
    # (the array front end's, computed given no strategy: all 0 on main too)
    np.testing.assert_array_equal(xp.asarray(vector(a, afmt)).reshape(2, 3).T.reshape(6).compute().to_numpy(),
                                  a.reshape(2, 3).T.ravel())
    check(COLLAPSED.format(I=3, K=2), {"a": vector(operand(6, "dense", 29, odd=(nan, inf))[0], afmt)}, out="sparse")
    check(COLLAPSED.format(I=2, K=3), {"a": vector(np.zeros(6), afmt)}, out="coo")
    f = operand(6, "dense", 30, fill=1.0)[0]
    check(COLLAPSED.format(I=3, K=2), {"a": vector(f, afmt, 1.0)})


def test_given_no_strategy_the_search_is_lowered_only_where_looplets_refuse():
    # (a split into CSC: the lattice scatters it, walking each entry once, and no strategy takes that; the
    # split collapsed minor index first: looplets refuse it, and the lattice searches each group)
    a = operand(12, "dense", 34)[0]
    csc = ss.lower(SPLIT.format(I=4, K=3), a=vector(a, "sparse"), C=ss.parse_format("csc", ndim=2))
    assert csc.strategy == "lattice" and csc.trace.find("loop-order")
    np.testing.assert_array_equal(csc(a=vector(a, "sparse")).to_numpy(), a.reshape(4, 3))
    k = ss.lower(COLLAPSED.format(I=4, K=3), a=vector(a, "sparse"))
    note = k.trace.find("strategy")[0].note
    assert k.strategy == "lattice" and "searches each group of a split" in note and "looplets refuse" in note, note
    np.testing.assert_array_equal(k(a=vector(a, "sparse")).to_numpy(), a.reshape(4, 3).T.ravel())


def test_the_array_front_ends_column_major_reshapes_are_one_lattice_kernel():
    (x, X), (y, Y) = operand(12, "sparse_vector", 31, odd=(nan,)), operand((4, 3), "csc", 32)
    one_lattice_kernel(X.reshape(4, 3), x.reshape(4, 3), "csc")
    one_lattice_kernel(X.reshape(2, 6).T.reshape(12), x.reshape(2, 6).T.ravel())
    one_lattice_kernel(X.reshape(4, 3).T, x.reshape(4, 3).T, "csr")
    (x, X) = operand(12, "coo", 33)
    one_lattice_kernel(X.reshape(4, 3) * Y, x.reshape(4, 3) * y, "csc")


# -- by property -------------------------------------------------------------------------------------------


@st.composite
def restart_cases(draw):
    """(shape: tile, transpose, csc or collapsed, A's format, fill, density, stored odd values, sizes, output)."""
    shape = draw(st.sampled_from(["tile", "transpose", "csc", "collapsed"]))
    fill = draw(st.sampled_from([0.0, 0.0, 1.0, nan]))
    fmts = ["csr", "coo", "dcsr", "dense"] if shape == "transpose" else ["sparse", "coo", "dense"]
    sizes = draw(st.sampled_from([(2, 3, 2), (3, 2, 1), (1, 4, 3), (4, 1, 2)]))
    outs = {"tile": [None, "csr", "coo"], "transpose": [None], "csc": ["csc", None], "collapsed": [None, "sparse"]}
    return (shape, draw(st.sampled_from(fmts)), fill, draw(st.sampled_from([0.0, 0.4, 1.0])),
            draw(st.sampled_from([(), (nan,), (inf, -inf)])), sizes,
            draw(st.sampled_from(outs[shape])) if fill == 0 else None)


@settings(max_examples=7, deadline=None)
@given(restart_cases(), st.integers(0, 2**16))
@example(("tile", "coo", nan, 0.4, (inf, -inf), (2, 3, 2), None), 1)
@example(("transpose", "csr", 0.0, 0.4, (nan,), (3, 2, 2), None), 2)
@example(("csc", "sparse", 0.0, 1.0, (inf,), (2, 3, 1), "csc"), 3)
@example(("collapsed", "coo", 1.0, 0.0, (), (4, 1, 2), None), 4)
def test_restarted_and_searched_minor_walks_by_property(drawn, seed):
    shape, afmt, fill, density, odd, (I, K, n), out = drawn
    if shape == "transpose":
        a = operand((I * K, n), "dense", seed, density=density, fill=fill, odd=odd)[0]
        check(TRANSPOSE.format(I=I, K=K), {"A": Tensor.from_numpy(a, afmt, fill=fill)})
        return
    a = operand(I * K, "dense", seed, density=density, fill=fill, odd=odd)[0]
    if shape == "tile":
        check(TILE.format(K=n, I=I, L=K), {"A": vector(a, afmt, fill)}, out=out)
    else:
        check((SPLIT if shape == "csc" else COLLAPSED).format(I=I, K=K), {"a": vector(a, afmt, fill)}, out=out)
