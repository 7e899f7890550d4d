"""A loop between a split's major and minor index under the lattice strategy (issue 30):
``out[i, j, k] = split(A[l], l -> (i, k)) * b[j]`` looped i, j, k. π1 shares A's cursor with π0 and walked its
group once, so every j after the first found it walked (a wrong answer, then a refusal on main); the π0 loop now
saves where its group starts and the π1 loop restarts there on each entry (``pA0 = pA0_start``, the CFIR's
``from l_A's group start``). Sparse, COO and dense vectors, CSR/COO/dense matrices reshaped (a product under the
split: its inner level's fiber restarts too), splits of splits, fills 0/1/NaN, NaN/±inf stored, empty operands;
each against the dense oracle, the IR interpreter and the CFIR interpreter, with no retry. A loop in between over a
level below the split one (``split(A[l, j], l -> (i, k))``, a transpose) lowers when that level is Dense (its
position follows the row the minor walk is at), the output dense (its loops then run i, k, j) or sparse with j and k
innermost (the loops run i, k, j, each group sorted: test_seq_split_transpose), and stays refused otherwise, naming
the looplets."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp, evaluate
from compiler.errors import StrategyError
from compiler.trace import Trace
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand

sys.path.insert(0, str(Path(__file__).parent))
from test_seqemit import run_all  # noqa: E402

nan, inf = np.nan, np.inf
BROADCAST = "out[i, j, k] = split(A[l], l -> (i:{I}, k:{K})) {op} b[j]"


def check(program, tensors, out=None, checked=False):
    """``program`` compiled by the lattice against the dense oracle, the IR and the CFIR interpreters
    (:func:`run_all`), into ``out`` (a format name, or dense); its kernel."""
    with np.errstate(invalid="ignore"):
        want = evaluate(program, **tensors)[0]
    fmt = None if out is None else ss.parse_format(out, ndim=want.ndim, fill=0.0)
    got = run_all(program, tensors, checked=checked, out=fmt)
    np.testing.assert_array_equal(got, want)
    return ss.lower(program, strategy="lattice", **tensors, **({} if fmt is None else {"out": fmt}))


def tensors_of(a, afmt, b, bfmt, fa=0.0, fb=0.0):
    return {"A": Tensor.from_numpy(a, afmt, fill=fa), "b": Tensor.from_numpy(b, bfmt, fill=fb)}


@pytest.mark.parametrize("afmt", ["sparse", "coo", "dense"])
@pytest.mark.parametrize("bfmt", ["sparse", "dense"])
def test_the_minor_walk_restarts_at_its_groups_start(afmt, bfmt):
    a, b = np.array([1.0, 0, 3, 4, 5, 0]), np.array([1.0, 2.0])
    k = check(BROADCAST.format(I=2, K=3, op="*"), tensors_of(a, afmt, b, bfmt), checked=afmt == "sparse")
    np.testing.assert_array_equal(k(**tensors_of(a, afmt, b, bfmt)).to_numpy(),
                                  a.reshape(2, 1, 3) * b[None, :, None])
    cfir = k.trace.find("cfir")[0].after_text
    assert "while k <- π1(l_A, 3) from l_A's group start" in cfir, cfir
    # (recorded, and kept through the trace's JSON)
    assert Trace.from_json(k.trace.to_json()).find("cfir")[0].after_text == cfir
    assert [r.rule for r in k.trace.find("cfir")[0].rewrites] == ["rewind"]
    # (saved where the group is entered, restored at each j)
    assert "pA0_start = pA0;" in k.c_source and "pA0 = pA0_start;" in k.c_source, k.c_source


def test_no_restart_without_a_loop_in_between():
    k = check("out[i, k, j] = split(A[l], l -> (i:2, k:3)) * b[j]",
              tensors_of(np.array([1.0, 0, 3, 4, 5, 0]), "sparse", np.array([1.0, 2.0]), "sparse"))
    assert "_start" not in k.c_source and "group start" not in k.trace.find("cfir")[0].after_text


@pytest.mark.parametrize("case", [
    # fills 1 and NaN (a product whose fill is not 0; NaN-fill operands), NaN and ±inf stored under a union
    "fill-1", "fill-nan", "stored-nan-inf",
    # an empty split operand, an all-fill vector in between (its loop never runs: π0's next drains the group)
    "empty-A", "empty-b",
    # into COO, split sizes 1 (the minor walk one coordinate) and a group per entry
    "coo-out", "minor-1", "major-1",
    # two loops in between, a split of a split with the loop between the outer or the inner pair
    "two-between", "split-split-outer", "split-split-inner",
])
def test_a_loop_between_with_fills_values_and_shapes(case):
    rng = np.random.default_rng(len(case))
    if case in ("fill-1", "fill-nan"):
        f = 1.0 if case == "fill-1" else nan
        a, _ = operand(8, "dense", 1, fill=f)
        b, _ = operand(3, "dense", 2, fill=f)
        check(BROADCAST.format(I=2, K=4, op="*" if f == 1 else "+"), tensors_of(a, "sparse", b, "sparse", f, f))
    elif case == "stored-nan-inf":
        a, _ = operand(8, "dense", 3, odd=(nan, inf, -inf))
        check(BROADCAST.format(I=4, K=2, op="+"), tensors_of(a, "coo", np.array([1.0, 0, -2.0]), "sparse"))
    elif case in ("empty-A", "empty-b"):
        a = np.zeros(6) if case == "empty-A" else np.array([0, 2.0, 0, 0, 5, 6])
        b = np.zeros(2) if case == "empty-b" else np.array([1.0, -1.0])
        check(BROADCAST.format(I=3, K=2, op="*"), tensors_of(a, "sparse", b, "sparse"), out="coo")
        check(BROADCAST.format(I=3, K=2, op="+"), tensors_of(a, "sparse", b, "sparse"))
    elif case == "coo-out":
        check(BROADCAST.format(I=3, K=4, op="*"), tensors_of(operand(12, "dense", 4)[0], "sparse",
                                                             rng.random(3), "dense"), out="coo")
    elif case in ("minor-1", "major-1"):
        I, K = (6, 1) if case == "minor-1" else (1, 6)
        check(BROADCAST.format(I=I, K=K, op="*"), tensors_of(operand(6, "dense", 5)[0], "sparse",
                                                             np.array([2.0, 0, 3.0]), "sparse"))
    elif case == "two-between":
        check("out[i, j, m, k] = split(A[l], l -> (i:2, k:3)) * b[j] * b[m]",
              tensors_of(operand(6, "dense", 6)[0], "coo", np.array([1.0, 2.0, 0]), "sparse"))
    else:
        order = "i, j, k, m" if case == "split-split-outer" else "i, k, j, m"
        check(f"out[{order}] = split(split(A[l], l -> (i:2, n:6)), n -> (k:3, m:2)) * b[j]",
              tensors_of(operand(12, "dense", 7)[0], "sparse", np.array([1.0, 3.0]), "sparse"))


@pytest.mark.parametrize("afmt", ["csr", "coo", "dense"])
def test_a_reshaped_matrix_restarts_its_rows_fiber_too(afmt):
    # (π0(r_A × c_A, 6): the group's start is a row and a position in it, the row's fiber with it)
    a = operand((3, 4), "dense", 8, odd=(0.0, 2.0))[0]
    k = check("out[i, j, k] = split(collapse(A[r, c], (r, c) -> l), l -> (i:2, k:6)) * b[j]",
              tensors_of(a, afmt, np.array([1.0, 0, 2.0]), "sparse"), checked=afmt == "csr")
    if afmt == "csr":
        assert "pA1_end = pA1_end_start;" in k.c_source, k.c_source


def test_the_array_front_ends_broadcast_between_is_one_lattice_kernel():
    (x, X), (b, B) = operand(12, "sparse_vector", 9), operand(3, "sparse_vector", 10)
    one_lattice_kernel(X.reshape(2, 1, 6) * B.reshape(1, 3, 1), x.reshape(2, 1, 6) * b.reshape(1, 3, 1))
    (a, A), (c, C) = operand((3, 4), "csr", 11, odd=(inf,)), operand(2, "dense", 12)
    with np.errstate(invalid="ignore"):
        want = np.transpose(a.reshape(2, 6)[:, :, None] + c, (0, 2, 1))
    one_lattice_kernel(xp.permute_dims(xp.expand_dims(A.reshape(2, 6), axis=2) + C, (0, 2, 1)), want, "coo")


def test_a_union_split_with_a_loop_between():
    (x, X), (y, Y), (b, B) = operand(12, "sparse_vector", 13), operand(12, "coo", 14), operand(3, "sparse_vector", 15)
    one_lattice_kernel(xp.permute_dims(xp.expand_dims((X + Y).reshape(2, 6), axis=2) * B, (0, 2, 1)),
                       np.transpose((x + y).reshape(2, 6)[:, :, None] * b, (0, 2, 1)))


ROWS_DENSE = "SparseList(Dense(Element(0.0)))"


@pytest.mark.parametrize("afmt, out", [("dense", None), (ROWS_DENSE, None), ("dense", "coo"), (ROWS_DENSE, "coo")])
def test_a_dense_level_below_the_split_looped_in_between(afmt, out):
    # (a transpose: j_A walks the group's first row's coordinates, and each read is at the row the
    # minor walk is at, a Dense level's position computed from its parent's)
    a = operand((6, 4), "dense", 16, odd=(nan, inf, 0.0, -inf))[0]
    k = check("out[i, j, k] = split(A[l, j], l -> (i:2, k:3))", {"A": Tensor.from_numpy(a, afmt)}, out=out,
              checked=out is None)
    np.testing.assert_array_equal(k(A=Tensor.from_numpy(a, afmt)).to_numpy(), a.reshape(2, 3, 4).transpose(0, 2, 1))
    assert "while j <- j_A\n    while k <- π1(l_A, 3) from l_A's group start" in k.trace.find("cfir")[0].after_text
    b = np.array([0, 2.0, -1.0, 0])
    check("out[i, j, k] = split(A[l, j], l -> (i:3, k:2)) + b[j]",
          {"A": Tensor.from_numpy(a, afmt), "b": Tensor.from_numpy(b, "sparse")}, out=out)


def test_the_array_front_ends_transpose_of_a_reshape_is_one_lattice_kernel():
    (a, A) = operand((6, 4), "dense", 17)
    one_lattice_kernel(xp.permute_dims(A.reshape(2, 3, 4), (0, 2, 1)), a.reshape(2, 3, 4).transpose(0, 2, 1))
    (x, X), (c, C) = operand((6, 2), "dense", 18, fill=1.0), operand(2, "sparse_vector", 19, fill=1.0)
    one_lattice_kernel(xp.permute_dims(X.reshape(3, 2, 2) * C, (0, 2, 1)),
                       (x.reshape(3, 2, 2) * c).transpose(0, 2, 1))


@pytest.mark.parametrize("afmt", ["csr", "coo", "dcsr"])
def test_a_sparse_level_below_the_split_looped_in_between_sorts_every_entry_or_is_refused_saying_why(afmt):
    # (into a sparse output of mode order i, j, m, k: neither the loops i, k, j, m of a dense output
    # (test_seq_split_restarts) nor i, j, k, m, the two innermost swapped and each group sorted
    # (test_seq_split_transpose, as into a COO stored i, j, k), take j out from between i and k; the loops in
    # the program's order i, j, m, k... cannot either, i, k, j, m can, every entry sorted after them
    # (compiler/lattice/seqentrysort.py; it was refused)
    a = operand((6, 4), "dense", 16)[0]
    A, b = Tensor.from_numpy(a, afmt), Tensor.from_numpy(np.array([1.0, 0, -2.0]), "sparse")
    program = "out[i, j, m, k] = split(A[l, j], l -> (i:2, k:3)) * b[m]"
    out = ss.parse_format("coo", ndim=4)
    k = ss.lower(program, strategy="lattice", A=A, b=b, out=out)
    assert "sort every entry" in k.trace.find("loop-order")[0].note
    want = evaluate(program, A=a, b=b.to_numpy())[0]
    np.testing.assert_array_equal(run_all(program, {"A": A, "b": b}, checked=afmt == "csr", out=out), want)
    # (where the output's modes after the first span more than an int64 key, still refused)
    big = Tensor.from_coords([[0, 2 ** 61 - 1]], [1.0, -2.0], (2 ** 61,), format="sparse")
    with pytest.raises(StrategyError, match=r"the loop over j, between a split's major and minor index, iterates "
                                            r"level 1 of A \(j_A\), (compressed|singleton), below the split level 0 "
                                            r"\(l_A\): .*store that level Dense.*strategy='looplets'"):
        ss.lower(program, strategy="lattice", A=A, b=big, out=out)
    np.testing.assert_array_equal(ss.lower(program, strategy="looplets", A=A, b=b)(A=A, b=b).to_numpy(), want)


@st.composite
def between_cases(draw):
    """(A's format, fill, density, stored odd values, b's format and fill, I, K, J, operator, output); a
    matrix format of A: the transpose ``split(A[l, j], ...)``, its Dense level looped in between."""
    I, K = draw(st.sampled_from([(2, 3), (3, 2), (1, 4), (4, 1), (2, 2)]))
    fill = draw(st.sampled_from([0.0, 0.0, 1.0, nan]))
    op = "*" if fill == 0 or draw(st.booleans()) and fill == 1 else "+"
    odd = draw(st.sampled_from([(), (nan,), (inf, -inf)])) if op == "+" else ()
    return (draw(st.sampled_from(["sparse", "coo", "dense", "dense-matrix", ROWS_DENSE])), fill,
            draw(st.sampled_from([0.0, 0.4, 1.0])), odd, draw(st.sampled_from(["sparse", "dense"])),
            draw(st.sampled_from([fill, 0.0])), I, K, draw(st.integers(1, 3)), op,
            draw(st.sampled_from([None, "coo"])) if fill == 0 else None)


@settings(max_examples=7, deadline=None)
@given(between_cases(), st.integers(0, 2**16))
@example(("coo", nan, 0.4, (inf, -inf), "sparse", nan, 2, 3, 2, "+", None), 1)
@example(("sparse", 0.0, 0.0, (), "dense", 0.0, 3, 2, 3, "*", "coo"), 2)
@example((ROWS_DENSE, 1.0, 0.4, (nan,), "sparse", 0.0, 2, 2, 3, "+", None), 3)
def test_a_loop_between_by_property(drawn, seed):
    afmt, fa, density, odd, bfmt, fb, I, K, J, op, out = drawn
    matrix = afmt in ("dense-matrix", ROWS_DENSE)
    a = operand((I * K, J) if matrix else I * K, "dense", seed, density=density, fill=fa, odd=odd)[0]
    b = operand(J, "dense", seed + 1, fill=fb)[0]
    program = BROADCAST.format(I=I, K=K, op=op).replace("A[l]", "A[l, j]" if matrix else "A[l]")
    check(program, tensors_of(a, "dense" if afmt == "dense-matrix" else afmt, b, bfmt, fa, fb), out=out)


@pytest.mark.parametrize("bfmt", ["dense", "csr", "coo"])
def test_the_second_part_of_a_concatenation_of_two_fills_rewinds_its_minor_walk_too(bfmt):
    # (found by a differential probe: the parts of two fills are fissioned into a loop each, and in the
    # second one the π1 was simplified to |m_A| + n_B while the loop around still named the concatenation:
    # its group was not found opened, not rewound, and every j after the first wrote nothing, a wrong
    # answer on lower()'s default path on main. The loops around a case are now the case's sequences)
    a = np.array([[0.5, 0.5, 7.0, -3.0]])
    b = np.array([[1.0, 1.0, 1.0, 1.0], [9.0, 1.0, nan, 1.0], [1.0, inf, 2.0, 1.0]])
    tensors = {"A": Tensor.from_numpy(a, "dense"), "B": Tensor.from_numpy(b, bfmt, fill=1.0)}
    program = "out[i, j, k] = split(concat((A[m, j], B[n, j]), (m, n) -> l), l -> (i:2, k:2))"
    k = check(program, tensors)
    if bfmt == "dense":   # (a sparse B's loops run i, k, j into the dense output: nothing to rewind)
        assert "from |m_A| + n_B's group start" in k.trace.find("cfir")[0].after_text
    np.testing.assert_array_equal(k(**tensors).to_numpy(), np.concatenate([a, b]).reshape(2, 2, 4).transpose(0, 2, 1))
