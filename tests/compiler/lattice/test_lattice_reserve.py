"""Reserving a sparse output's room from a count of workspace scatters (compiler.lattice.reserve)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from compiler import Tensor, lower
from compiler.backend import compile_function, emit_c
from compiler.format import csr
from compiler.imperative import interpret
from compiler.imperative.examples import filter_nonzeros
from compiler.imperative.ir import (Block, BinOp, Const, Declare, For, Function, Grow, If, Load, Store, UnOp,
                                    Var, While)
from compiler.lattice.reserve import count_scatters

i, p, k, j, q, n = Var("i"), Var("pA1"), Var("k"), Var("j"), Var("pB1"), Var("n")
INPUTS = {"A1_pos", "A1_idx", "B1_pos", "B1_idx"}


def mark():
    return If(UnOp("!", Load("w_set", j)), [Store("w_set", j, Const(True, "bool"))])


def gustavson_rows(inner):
    return [For(i, 0, Var("A0_size"), [Declare(Var("w_n"), "int64", Const(0, "int64")),
                                         For(p, Load("A1_pos", i), Load("A1_pos", i + 1),
                                             [Declare(k, "int64", Load("A1_idx", p)), *inner])])]


def test_counts_the_innermost_loop_and_drops_the_rest():
    inner = [For(q, Load("B1_pos", k), Load("B1_pos", k + 1), [Declare(j, "int64", Load("B1_idx", q)), mark(),
                                                                Store("w", j, Const(1.0, "float64"), "+")])]
    copy_out = For(Var("pw"), 0, Var("w_n"), [Store("w_set", Load("w_list", Var("pw")), Const(False, "bool"))])
    rows = gustavson_rows(inner)
    rows = [For(i, rows[0].start, rows[0].stop, list(rows[0].body.body) + [copy_out])]
    out = count_scatters(rows, {"w_set"}, INPUTS, {"A0_size"}, n)
    text = "\n".join(str(s) for s in out)
    assert "n += B1_pos[k + 1] - B1_pos[k];" in text
    assert "w_n" not in text and "w_set" not in text and "B1_idx" not in text   # unused: pruned


@pytest.mark.parametrize("inner, why", [
    ([While(BinOp("<", q, Var("q_end")), [mark()])], "a merge loop: no closed-form trip count"),
    ([For(q, Load("w_list", k), Load("B1_pos", k + 1), [mark()])], "a bound read from a workspace"),
    ([For(q, Load("B1_pos", k), Var("pC1"), [mark()])], "a bound from a variable the count cannot know"),
])
def test_no_count_when_the_loops_read_more_than_inputs(inner, why):
    assert count_scatters(gustavson_rows(inner), {"w_set"}, INPUTS, {"A0_size"}, n) is None, why


def test_no_workspace_no_count():
    rows = gustavson_rows([Store("y", k, Const(1.0, "float64"), "+")])
    assert count_scatters(rows, {"w_set"}, INPUTS, {"A0_size"}, n) is None


def test_conditions_on_inputs_are_kept():
    guarded = [If(BinOp("<", k, Var("A0_size")),
                  [For(q, Load("B1_pos", k), Load("B1_pos", k + 1), [Declare(j, "int64", Load("B1_idx", q)), mark()])])]
    out = count_scatters(gustavson_rows(guarded), {"w_set"}, INPUTS, {"A0_size"}, n)
    assert "if (k < A0_size)" in "\n".join(str(s) for s in out)


def test_spgemm_reserves_once_and_stays_right():
    k_ = lower("C[i, j] = A[i, k] * B[k, j]", A=csr(), B=csr(), C=csr())
    src = k_.c_source
    assert "n_scatters += B1_pos[k + 1] - B1_pos[k];" in src
    assert src.index("n_scatters") < src.index("workspace w[j]")   # counted before the rows
    assert "C reserves one entry per scatter" in k_.trace.steps[[s.stage for s in k_.trace.steps].index("lower")].note
    rng = np.random.default_rng(4)
    for m, d in ((0, 0.0), (1, 1.0), (30, 0.0), (30, 0.2), (40, 1.0)):
        A = sp.random(m, 25, density=d, format="csr", random_state=rng)
        B = sp.random(25, 17, density=d, format="csr", random_state=rng)
        got = k_(A=Tensor.from_scipy(A, csr()), B=Tensor.from_scipy(B, csr())).to_numpy()
        np.testing.assert_allclose(got, (A @ B).toarray(), rtol=1e-12)


def test_elementwise_kernels_have_no_count():
    assert "n_scatters" not in lower("C[i, j] = A[i, j] + B[i, j]", A=csr(), B=csr(), C=csr()).c_source


def hinted(hint_size: int, first: bool = False) -> Function:
    """filter_nonzeros with a reservation hint of ``hint_size`` elements before its loop (the
    buffers' ``first`` growths, or not)."""
    fn = filter_nonzeros(name=f"hinted_{hint_size.bit_length()}_{int(first)}")
    hints = [Grow(b, Const(hint_size, "int64"), hint=True, first=first) for b in ("B_idx", "B_val")]
    return Function(fn.name, fn.params, Block(tuple(hints) + fn.body.body), fn.helpers)


@pytest.mark.parametrize("first", [False, True], ids=["tested", "first"])
@pytest.mark.parametrize("size", [0, 3, 1000, 1 << 60, (1 << 63) - 1])
def test_a_hint_is_only_a_hint(size, first):
    """Too small, right, or impossible to allocate (2^60 elements; 2^63 - 1, where doubling would
    overflow): the kernel still grows as needed. A first growth (the buffer still empty) tests no
    capacity: when memory is short, the buffer stays NULL with capacity 0."""
    fn = hinted(size, first)
    c = emit_c(fn)
    if first:
        assert "B_idx = grow_buffer(B_idx, &B_idx_cap" in c and "// if NULL, the loops grow it as they go" in c
        assert "void *room" not in c and "> B_idx_cap" not in c.split("for (")[0]
    else:
        assert "void *room = grow_buffer(B_idx" in c and "// else the loops grow it as they go" in c
    assert "reserve B_idx for" in str(fn.body)
    x = np.array([0.0, 2.0, 0.0, 3.0, 4.0] * 40)
    for checked in (False, True):
        out = compile_function(fn, checked=checked)(n=len(x), x=x)
        np.testing.assert_array_equal(out["B_idx"], np.flatnonzero(x))
        np.testing.assert_array_equal(out["B_val"], x[x != 0])
    ref = interpret(fn, n=len(x), x=x)   # the interpreter skips hints
    np.testing.assert_array_equal(ref["B_idx"], np.flatnonzero(x))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.floats(0, 1))
def test_spgemm_with_reserve_matches_scipy(m, kk, nn, d):
    rng = np.random.default_rng(m * 961 + kk * 31 + nn)
    A = sp.random(m, kk, density=d, format="csr", random_state=rng)
    B = sp.random(kk, nn, density=d, format="csr", random_state=rng)
    kern = lower("C[i, j] = A[i, k] * B[k, j]", A=csr(), B=csr(), C=csr())
    got = kern(A=Tensor.from_scipy(A, csr()), B=Tensor.from_scipy(B, csr()))
    ref = (A @ B).tocsr()
    ref.sort_indices()
    np.testing.assert_allclose(got.to_numpy(), ref.toarray(), rtol=1e-12)


@pytest.mark.parametrize("factor", [1, 2, 3, 4])
@pytest.mark.parametrize("direction", ["down", "up"])
def test_a_split_keeps_its_tail_guard_in_the_count(factor, direction):
    """The count of scatters runs the split's blocks too, each stopping at the end: without its tail
    guard the last block reads pos past its end (found by fuzzing: a CSC SpMV into a sparse vector).
    A down split bounds its inner loop (``j1 < j1_stop``), an up split breaks out of it."""
    from compiler import Tensor
    from compiler.format import sparse_vector
    from compiler.lattice import Schedule
    from compiler.testing import check_lowered
    A = Tensor.from_numpy(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]), "csc", name="A")
    k = check_lowered("y[i] = A[i, j] * x[j]", Schedule().split("j", "j0", "j1", factor, direction),
                      out=sparse_vector(), checked=True, A=A, x=np.ones(3))
    count = k.c_source[k.c_source.index("count them first"):k.c_source.index("y0_idx = grow_buffer(")]
    if factor > 1 and direction == "up":
        assert "if (j >= A0_size) {" in count and "break;" in count
    elif factor > 1:
        assert "int64_t j1_stop = A0_size - j0 * " in count and "j1 < j1_stop" in count
