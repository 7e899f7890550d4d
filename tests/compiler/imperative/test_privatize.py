"""Per-thread parts of scratch arrays (privatize) and the View statement in every backend."""

import numpy as np
import pytest

from compiler.backend import build, compile_function, emit_c
from compiler.errors import KernelError
from compiler.imperative import Buffer, Function, Scalar, interpret, pretty
from compiler.imperative.ir import (Allocate, Assign, Block, Call, CompoundAssign, Declare, For, If, Load, Pragma,
                                    Store, Tagged, Var, View)
from compiler.imperative.traverse import walk
from compiler.imperative.privatize import privatize

i, j, t, n, m = Var("i"), Var("j"), Var("t"), Var("n"), Var("m")


def histogram_rows():
    """Each row ``i`` counts its values (0..m-1) in the scratch array ``h``, writes the count of
    the most frequent one to ``y[i]``, and clears ``h`` again: a workspace per iteration."""
    count = For(j, 0, 4, [Store("h", Load("x", i * 4 + j), 1, "+")])
    best = [Declare(t, "int64", 0),
            For(j, 0, m, [If(Load("h", j) > t, [Assign(t, Load("h", j))]), Store("h", j, 0)]),
            Store("y", i, t)]
    loop = [Pragma("omp parallel for schedule(guided)"), Tagged("row", [For(i, 0, n, [count, *best])])]
    return Function("hist", (Scalar("n", "int64"), Scalar("m", "int64"), Buffer("x", "int64", "in"),
                             Buffer("y", "int64", "inout")), [Allocate("h", "int64", m, 0, loop)])


def private(fn):
    return Function(fn.name, fn.params, privatize(fn.body.body, {p.name for p in fn.params}))


def test_the_array_grows_a_part_per_thread_and_each_iteration_views_its_own():
    fn = private(histogram_rows())
    text = pretty(fn)
    assert "int64 h_all[m * thread_count()] = {0, ...};" in text
    assert "int64 h[m] = &h_all[thread_id() * m];" in text
    assert "// this thread's own part of h_all" in text
    views = [s for s in walk(fn.body) if isinstance(s, View)]
    assert len(views) == 1
    # the view is the first statement of the loop inside the provenance tag
    loop = next(s for s in walk(fn.body) if isinstance(s, For) and s.var == i)
    assert isinstance(loop.body.body[1], View)
    assert any(isinstance(s, Tagged) for s in walk(fn.body))


@pytest.mark.parametrize("checked", [False, True])
def test_threads_compute_what_the_interpreter_computes(checked):
    rng = np.random.default_rng(0)
    rows, m_ = 5000, 7
    x = rng.integers(0, m_, rows * 4)
    want = np.array([np.bincount(x[r * 4:(r + 1) * 4], minlength=m_).max() for r in range(rows)])
    fn = private(histogram_rows())
    got = interpret(fn, n=rows, m=m_, x=x, y=np.zeros(rows, np.int64))["y"]
    np.testing.assert_array_equal(got, want)
    if not checked and build.openmp_support() is not None:
        pytest.skip("the C compiler has no OpenMP")
    k = compile_function(fn, checked=checked)
    for _ in range(3):
        np.testing.assert_array_equal(k(n=rows, m=m_, x=x, y=np.zeros(rows, np.int64))["y"], want)
    src = emit_c(fn, checked=checked)
    assert "int64_t *restrict h = h_all + thread_id() * m;" in src
    assert "static inline int64_t thread_count(void)" in src


def test_the_unprivatized_loop_is_the_sequential_meaning():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 5, 40)
    fn = histogram_rows()
    a = interpret(fn, n=10, m=5, x=x, y=np.zeros(10, np.int64))["y"]
    b = interpret(private(fn), n=10, m=5, x=x, y=np.zeros(10, np.int64))["y"]
    np.testing.assert_array_equal(a, b)


def test_a_checked_build_names_the_view_out_of_bounds():
    bad = For(j, 0, 4, [Store("h", Load("x", i * 4 + j) + 100, 1, "+")])
    loop = [Pragma("omp parallel for"), For(i, 0, n, [bad])]
    fn = private(Function("bad", (Scalar("n", "int64"), Scalar("m", "int64"), Buffer("x", "int64", "in")),
                          [Allocate("h", "int64", m, 0, loop)]))
    k = compile_function(fn, checked=True)
    with pytest.raises(KernelError, match=r"write of h\[10[0-9]\] is out of bounds \(length 3\)"):
        k(n=2, m=3, x=np.zeros(8, np.int64))
    with pytest.raises(KernelError, match=r"write of h\[10[0-9]\] is out of bounds \(length 3\)"):
        interpret(fn, n=2, m=3, x=np.zeros(8, np.int64))


def test_the_interpreter_checks_a_views_extent():
    fn = Function("v", (Scalar("n", "int64"),), [Allocate("a", "float64", 4, 0.0, [
        View("b", "float64", "a", n, 3), Store("b", 0, 1.0)])])
    interpret(fn, n=1)
    with pytest.raises(KernelError, match=r"View b of a\[2:5\] is out of bounds \(length 4\)"):
        interpret(fn, n=2)


def test_read_only_scratch_stays_shared():
    loop = [Pragma("omp parallel for"), For(i, 0, n, [Store("y", i, Load("tbl", i))])]
    body = [Allocate("tbl", "int64", n, 7, loop)]
    assert privatize(body) == body


def test_scratch_used_outside_the_loop_is_refused():
    loop = [Pragma("omp parallel for"), For(i, 0, n, [Store("h", i, 1)])]
    body = [Allocate("h", "int64", n, 0, [*loop, Store("y", 0, Load("h", 0))])]
    with pytest.raises(ValueError, match="scratch array h is written in a parallel loop and also used outside it"):
        privatize(body)


@pytest.mark.parametrize("checked", [False, True])
def test_a_shared_array_stays_one_array_for_all_threads(checked):
    """Each iteration writes only its own element of a ``shared`` array, which the code after
    the loop reads: privatize leaves it, and the threads compute what the interpreter does."""
    loop = [Pragma("omp parallel for"), For(i, 0, n, [Store("h", i, Load("x", i) * 2)])]
    after = For(i, 0, n, [Store("y", i, Load("h", i) + 1)])
    body = [Allocate("h", "int64", n, None, [*loop, after], shared=True)]
    assert privatize(body) == body
    fn = Function("doubled", (Scalar("n", "int64"), Buffer("x", "int64", "in"), Buffer("y", "int64", "inout")),
                  privatize(body))
    assert "int64 h[n];  // one array for all threads" in pretty(fn)
    assert "int64_t *h = alloc_array(n, sizeof *h, false);" in emit_c(fn)
    x = np.arange(50, dtype=np.int64)
    want = {"y": x * 2 + 1}
    got = interpret(fn, n=50, x=x, y=np.zeros(50, np.int64))
    np.testing.assert_array_equal(got["y"], want["y"])
    k = compile_function(fn, checked=checked)
    np.testing.assert_array_equal(k(n=50, x=x, y=np.zeros(50, np.int64))["y"], want["y"])
    from compiler import serialize
    assert serialize.decode(serialize.encode(fn)) == fn


def test_a_length_the_kernel_changes_is_refused():
    loop = [Pragma("omp parallel for"), For(i, 0, n, [Store("h", 0, 1)])]
    body = [Declare(m, "int64", 3), CompoundAssign("+", m, 1), Allocate("h", "int64", m, 0, loop)]
    with pytest.raises(ValueError, match="the length of h reads m, which the kernel assigns"):
        privatize(body)


def test_no_parallel_loop_no_change():
    body = [Allocate("h", "int64", n, 0, [For(i, 0, n, [Store("h", i, 1)])])]
    assert privatize(body) == body
    assert not any(isinstance(s, Call) for s in walk(Block(tuple(privatize(body)))))


def test_a_privatized_function_survives_serialization():
    from compiler import serialize
    fn = private(histogram_rows())
    assert serialize.decode(serialize.encode(fn)) == fn


def test_a_view_ends_with_its_array():
    # the same names again after the first array is freed: nothing of the first survives
    part = [View("b", "float64", "a", 0, 2), Store("b", 1, 5.0)]
    again = Allocate("b", "float64", 1, 1.0, [Store("y", 0, Load("b", 0))])
    fn = Function("v", (Buffer("y", "float64", "inout"),), [Allocate("a", "float64", 4, 0.0, part), again])
    assert interpret(fn, y=np.zeros(1))["y"][0] == 1.0
