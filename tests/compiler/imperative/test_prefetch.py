"""Prefetching the next rows' entries: where Prefetch goes, and that it changes no result."""

import numpy as np
import pytest
import scipy.sparse as sp

from compiler import Tensor, lower
from compiler.backend import compile_function, emit_c
from compiler.format import csr, dense
from compiler.imperative import Buffer, Function, Scalar, interpret, pretty
from compiler.imperative.ir import Block, CompoundAssign, Declare, For, Load, Prefetch, Store, Tagged, Var, While
from compiler.imperative.prefetch import DISTANCE, prefetch

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
