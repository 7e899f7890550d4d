"""Prefetching the next rows' entries: where Prefetch goes, and that it changes no result."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.backend import compile_function, emit_c
from compiler.format import csc, csf, csr, dense
from compiler.imperative import Buffer, Function, Scalar, interpret, pretty
from compiler.imperative.ir import (Assign, Block, CompoundAssign, Declare, For, If, Load, Prefetch, Store, Tagged,
                                    Var, While)
from compiler.imperative.prefetch import DISTANCE, INDIRECT_DISTANCE, prefetch

i, p, t, n = Var("i"), Var("p"), Var("t"), Var("n")


def prefetches(stmts):
    return [(s.buffer, str(s.index)) for s in _walk(stmts) if isinstance(s, Prefetch)]


def _walk(stmts):
    for s in stmts:
        yield s
        for field in ("body", "then", "otherwise"):
            b = getattr(s, field, None)
            if isinstance(b, Block):
                yield from _walk(b.body)


def rows(inner_start=None, inner_stop=None, body=None):
    body = body or [CompoundAssign("+", t, Load("val", p) * Load("x", Load("idx", p)))]
    inner = For(p, inner_start if inner_start is not None else Load("pos", i),
                inner_stop if inner_stop is not None else Load("pos", i + 1), body)
    return For(i, 0, n, [Declare(t, "float64", 0.0), Tagged("row", [inner]), Store("y", i, t)])


def test_each_array_read_at_the_position_is_fetched_past_the_rows_end():
    got = prefetches(prefetch([rows()]))
    assert got == [("val", f"pos[i + 1] + {DISTANCE}"), ("idx", f"pos[i + 1] + {DISTANCE}")]
    assert "the CPU's own prefetcher falls behind short rows" in pretty(prefetch([rows()])[0])


@pytest.mark.parametrize("fmt, fiber", [(csr(), "row"), (csc(), "column")])
def test_the_comment_names_what_the_fibers_are(fmt, fiber):
    S = sp.random(50, 40, 0.1, format="csr", random_state=3)
    A, x = Tensor.from_scipy(S, fmt, name="A"), Tensor.from_numpy(np.arange(40.0), dense(1), name="x")
    k = lower("y[i] = A[i, j] * x[j]", A=A, x=x)
    assert f"past this {fiber}'s end: the CPU's own prefetcher falls behind short {fiber}s" in k.c_source
    assert k.c_source.count("falls behind short") == 1
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), S @ np.arange(40.0))


def test_a_3d_tensors_inner_levels_hold_fibers():
    T = Tensor.from_numpy(np.random.default_rng(0).random((4, 5, 6)) * (np.arange(6) % 2), csf(3), name="T")
    x = Tensor.from_numpy(np.arange(6.0), dense(1), name="x")
    k = lower("y[i, j] = T[i, j, k] * x[k]", T=T, x=x)
    comments = [line for line in k.c_source.splitlines() if "falls behind" in line]
    assert comments and all("past this fiber's end" in c and "row" not in c for c in comments)
    np.testing.assert_allclose(k(T=T, x=x).to_numpy(), T.to_numpy() @ np.arange(6.0))


def test_a_narrow_rows_end_is_widened_before_the_distance_is_added():
    got = prefetches(prefetch([rows()], narrow={"pos"}))
    assert got == [("val", f"(int64)pos[i + 1] + {DISTANCE}"), ("idx", f"(int64)pos[i + 1] + {DISTANCE}")]


@pytest.mark.parametrize("index_dtype, fetch", [("int32", "(int64_t)A1_pos[i + 1] + 64"),
                                                ("int64", "A1_idx[A1_pos[i + 1] + 64]")])
def test_int32_csr_spmv_fetches_from_a_widened_end(index_dtype, fetch):
    S = sp.random(50, 40, 0.1, format="csr", random_state=2)
    A, x = Tensor.from_scipy(S, csr(index_dtype=index_dtype), name="A"), np.arange(40.0)
    k = lower("y[i] = A[i, j] * x[j]", A=A, x=Tensor.from_numpy(x, dense(1)))
    assert fetch in k.c_source
    np.testing.assert_allclose(k(A=A, x=Tensor.from_numpy(x, dense(1))).to_numpy(), S @ x)


@pytest.mark.parametrize("loop", [
    rows(inner_start=Load("pos", i + 1), inner_stop=Load("pos", i + 2)),   # not this row's segment
    rows(inner_start=Load("pos", i), inner_stop=Load("end", i + 1)),       # two different arrays
    rows(inner_start=Var("lo"), inner_stop=Var("hi")),                     # not a segment of pos
    rows(body=[CompoundAssign("+", t, Load("x", i))]),                      # reads nothing at p
    While(Var("go"), [For(p, Load("pos", i), Load("pos", i + 1), [CompoundAssign("+", t, Load("a", p))])]),
])
def test_other_loops_are_left_alone(loop):
    assert prefetch([loop]) == [loop]


def test_a_pragma_stays_on_its_loop():
    from compiler.imperative.ir import Pragma
    loop = rows()
    inner = loop.body.body[1].body.body[0]
    marked = For(i, 0, n, [Pragma("omp simd reduction(+:t)"), inner])
    body = prefetch([marked])[0].body.body
    assert [type(s).__name__ for s in body] == ["Comment", "Prefetch", "Prefetch", "Pragma", "For"]


def test_a_dcsr_row_sum_prefetches_and_vectorizes():
    from compiler.format import dcsr
    S = sp.random(40, 30, 0.1, format="csr", random_state=3)
    B = Tensor.from_scipy(S, dcsr())
    k = lower("y[i] = B[i, j]", B=B)
    src = k.c_source
    assert src.index("__builtin_prefetch") < src.index("#pragma omp simd") < src.index("for (int64_t pB1")
    np.testing.assert_allclose(k(B=B).to_numpy(), np.asarray(S.sum(axis=1)).ravel())


def test_a_top_level_segment_loop_has_no_row_to_fetch_ahead_of():
    loop = For(p, Load("pos", i), Load("pos", i + 1), [CompoundAssign("+", t, Load("a", p))])
    assert prefetch([loop]) == [loop]


def test_prefetch_is_not_an_access():
    """Past the end: the interpreter ignores it, the C does not fault, checked mode does not check it."""
    m, y = Scalar("m", "int64"), Buffer("y", "float64", "inout")
    fn = Function("ahead", (m, Buffer("a", "float64"), y),
                  [Prefetch("a", Var("m") + 1_000_000), Store("y", 0, Load("a", 0))])
    a = np.array([3.0])
    assert interpret(fn, m=1, a=a, y=np.zeros(1))["y"][0] == 3.0
    for checked in (False, True):
        assert "__builtin_prefetch(&a[m + 1000000]);" in emit_c(fn, checked)
        assert compile_function(fn, checked=checked)(m=1, a=a, y=np.zeros(1))["y"][0] == 3.0


def test_csr_spmv_prefetches_and_is_right():
    rng = np.random.default_rng(0)
    S = sp.random(300, 200, 0.05, format="csr", random_state=1)
    A, x = Tensor.from_scipy(S, csr()), rng.random(200)
    k = lower("y[i] = A[i, j] * x[j]", A=A, x=Tensor.from_numpy(x, dense(1)))
    assert "prefetch" in [s.stage for s in k.trace.steps]
    assert k.c_source.count("__builtin_prefetch") == 2 and "x_val[A1_pos" not in k.c_source
    np.testing.assert_allclose(k(A=A, x=Tensor.from_numpy(x, dense(1))).to_numpy(), S @ x)


# --------------------------------------------------------------------------- rows picked by a coordinate

k, q = Var("k"), Var("q")


def gustavson(first=None, inner_stop=None):
    """``for p in A's row i: k = A_idx[p]; for q in B's row k: w[B_idx[q]] += B_val[q]``."""
    first = first if first is not None else Declare(k, "int64", Load("A_idx", p))
    inner = For(q, Load("B_pos", k), inner_stop if inner_stop is not None else Load("B_pos", k + 1),
                [Store("w", Load("B_idx", q), Load("B_val", q), "+")])
    return For(p, Load("A_pos", i), Load("A_pos", i + 1), [first, Tagged("lattice:j:B", [inner])])


def picked(loop):
    """The guard, the declared coordinate and the fetches that ``loop``'s body starts with."""
    guard = loop.body.body[1]
    assert isinstance(guard, If) and not guard.otherwise
    ahead, *fetches = guard.then.body
    return str(guard.cond), f"{ahead.var.name} = {ahead.init}", [(f.buffer, str(f.index)) for f in fetches]


def test_a_row_picked_by_the_coordinate_is_fetched_a_few_entries_ahead():
    rows_loop = prefetch([For(i, 0, n, [gustavson()])])[0]
    loop = rows_loop.body.body[-1]
    assert picked(loop) == (f"p + {INDIRECT_DISTANCE} < A_pos[n]", f"k_ahead = A_idx[p + {INDIRECT_DISTANCE}]",
                            [("B_idx", "B_pos[k_ahead]"), ("B_val", "B_pos[k_ahead]")])
    assert "fetch the row that the entry 4 ahead reads" in pretty(rows_loop)


def test_the_guard_of_a_loop_outside_rows_is_its_own_end():
    """A sparse vector's entries picking a CSC matrix's columns (SpMSpV): no row loop around."""
    loop = For(p, Load("x_pos", 0), Load("x_pos", 1), gustavson().body)
    assert picked(prefetch([loop])[0])[0] == f"p + {INDIRECT_DISTANCE} < x_pos[1]"


def test_the_guard_of_a_row_block_is_the_end_of_its_last_row():
    loop = prefetch([For(i, Var("lo"), Var("hi"), [gustavson()])])[0].body.body[-1]
    assert picked(loop)[0] == f"p + {INDIRECT_DISTANCE} < A_pos[hi]"


def test_the_fetched_coordinate_gets_a_fresh_name():
    taken = For(i, 0, n, [Declare(Var("k_ahead"), "int64", 0), gustavson()])
    assert picked(prefetch([taken])[0].body.body[-1])[1].startswith("k_ahead_2 = ")


@pytest.mark.parametrize("loop", [
    gustavson(first=Declare(k, "int64", Load("A_idx", p + 1))),    # not the coordinate at p
    gustavson(first=Assign(k, Load("A_idx", p))),                  # not declared: may change
    gustavson(inner_stop=Load("B_pos", k + 2)),                    # not row k
    gustavson(inner_stop=Load("B_end", k + 1)),                    # not one pos array
])
def test_loops_that_do_not_pick_a_row_by_their_coordinate_are_left_alone(loop):
    got = prefetch([For(i, 0, n, [loop])])[0].body.body[-1]
    assert not any(isinstance(s, If) for s in got.body.body)


def spgemm_inputs(seed):
    """Two CSR matrices whose last rows and columns hold entries (the guard's edge)."""
    A = sp.random(60, 50, 0.08, format="lil", random_state=seed)
    B = sp.random(50, 40, 0.08, format="lil", random_state=seed + 1)
    A[59, 49], B[49, 39] = 1.5, 2.5
    return A.tocsr(), B.tocsr()


@pytest.mark.parametrize("checked", [False, True])
def test_spgemm_fetches_picked_rows_and_stays_in_bounds(checked):
    SA, SB = spgemm_inputs(4)
    A, B = Tensor.from_scipy(SA, csr(), name="A"), Tensor.from_scipy(SB, csr(), name="B")
    kernel = lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B, C=csr(), checked=checked)
    ir = str(kernel.lowered.function)
    assert "if (pA1 + 4 < A1_pos[A0_size])" in ir and "int64 k_ahead = A1_idx[pA1 + 4];" in ir
    assert "__builtin_prefetch(&B1_idx[" in kernel.c_source
    np.testing.assert_allclose(kernel(A=A, B=B).to_numpy(), (SA @ SB).toarray())
    # the interpreter reads the coordinate ahead too (and checks its bounds), but fetches nothing
    np.testing.assert_allclose(kernel.interpret(A=A, B=B).to_numpy(), (SA @ SB).toarray())


def test_spmspv_on_a_csc_matrix_fetches_the_picked_columns():
    from compiler.format import csc, sparse_vector
    S = sp.random(70, 60, 0.1, format="csc", random_state=5)
    xs = np.zeros(60)
    xs[[0, 7, 58, 59]] = [1.0, 2.0, 3.0, 4.0]
    A, x = Tensor.from_scipy(S, csc(), name="A"), Tensor.from_numpy(xs, sparse_vector(), name="x")
    for checked in (False, True):
        kernel = lower("y[i] = A[i, j] * x[j]", A=A, x=x, checked=checked)
        assert "if (px0 + 4 < x0_pos[1])" in str(kernel.lowered.function)
        np.testing.assert_allclose(kernel(A=A, x=x).to_numpy(), S @ xs)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 9), st.integers(0, 9), st.integers(1, 9), st.sampled_from([0.0, 0.2, 1.0]),
       st.sampled_from(["csr", "dcsr", "coo"]), st.integers(0, 2 ** 16))
def test_property_checked_spgemm_reads_no_coordinate_past_the_end(m, n, p, density, fa, seed):
    """Checked builds fail on any read past an array's end, the guarded coordinate ahead included;
    COO and DCSR rows are picked from a loop over A's entries and over A's stored rows."""
    from compiler.format import coo, dcsr
    from compiler.testing import random_sparse
    rng = np.random.default_rng(seed)
    a, b = random_sparse((m, n), density, rng), random_sparse((n, p), density, rng)
    A = Tensor.from_numpy(a, {"csr": csr(), "dcsr": dcsr(), "coo": coo()}[fa], name="A")
    B = Tensor.from_numpy(b, csr(), name="B")
    kernel = lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B, C=csr(), checked=True)
    assert "k_ahead = A" in str(kernel.lowered.function)
    np.testing.assert_allclose(kernel(A=A, B=B).to_numpy(), a @ b)
    np.testing.assert_allclose(kernel.interpret(A=A, B=B).to_numpy(), a @ b)
