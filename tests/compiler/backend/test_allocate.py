"""Scratch arrays (Allocate): workspaces in compiled kernels and in the interpreter."""

import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import KernelError
from compiler.backend import compile_function, emit_c
from compiler.imperative import (Allocate, Buffer, Const, For, Function, Scalar, Var,
                                 interpret, pretty)


def column_sums(init: float) -> Function:
    m, n = Scalar("m", "int64"), Scalar("n", "int64")
    pos, idx, val = Buffer("A_pos", "int64"), Buffer("A_idx", "int64"), Buffer("A_val", "float64")
    out = Buffer("out", "float64", "inout")
    i, p, j = Var("i"), Var("p"), Var("j")
    from compiler.imperative import Load, Store

    body = Allocate("w", "float64", n.var, Const(init, "float64"), [
        For(i, 0, m.var, [
            For(p, pos[i], pos[i + 1], [Store("w", idx[p], val[p], "+")]),
        ]),
        For(j, 0, n.var, [out.store(j, Load("w", j))]),
    ])
    return Function("column_sums", (m, n, pos, idx, val, out), body)


@pytest.mark.parametrize("init", [0.0, 2.5])
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 9), st.integers(0, 9), st.floats(0, 1), st.integers(0, 1000))
def test_workspace_kernel_matches_interpreter_and_scipy(init, m, n, density, seed):
    S = sp.random(m, n, density=density, format="csr", random_state=seed)
    args = dict(m=m, n=n, A_pos=S.indptr.astype(np.int64), A_idx=S.indices.astype(np.int64), A_val=S.data)
    fn = column_sums(init)
    got = compile_function(fn)(**args, out=np.zeros(n))["out"]
    ref = interpret(fn, **args, out=np.zeros(n))["out"]
    expected = np.asarray(S.sum(axis=0)).ravel() + init
    np.testing.assert_allclose(got, expected)
    np.testing.assert_allclose(ref, expected)


def test_emitted_c_allocates_initializes_and_frees():
    c = emit_c(column_sums(2.5))
    assert "double *w = alloc_array(n, sizeof *w, false);" in c
    assert "w[w_k] = 2.5;" in c
    assert c.index("free(w);") > c.index("out[j] = w[j];")
    zero = emit_c(column_sums(0.0))
    assert "alloc_array(n, sizeof *w, true)" in zero and "w_k" not in zero
    assert "float64 w[n] = {2.5, ...};" in pretty(column_sums(2.5))


def test_checked_mode_bounds_scratch_arrays():
    from compiler.imperative import Load, Store

    n, out = Scalar("n", "int64"), Buffer("out", "float64", "inout")
    body = Allocate("w", "float64", n.var, Const(0.0, "float64"), [
        Store("w", n.var, 1.0),  # one past the end
        out.store(0, Load("w", 0)),
    ])
    fn = Function("off_by_one", (n, out), body)
    with pytest.raises(KernelError, match=r"write of w\[3\] is out of bounds \(length 3\)"):
        compile_function(fn, checked=True)(n=3, out=np.zeros(1))
    with pytest.raises(KernelError, match=r"w\[3\] is out of bounds"):
        interpret(fn, n=3, out=np.zeros(1))


def test_zero_length_scratch_array():
    fn = column_sums(0.0)
    empty = dict(m=0, n=0, A_pos=np.zeros(1, np.int64), A_idx=np.zeros(0, np.int64),
                 A_val=np.zeros(0), out=np.zeros(0))
    assert compile_function(fn)(**empty)["out"].shape == (0,)


def test_checked_mode_runs_openmp_loops_on_one_thread():
    from compiler.imperative import Pragma

    n, out = Scalar("n", "int64"), Buffer("out", "float64", "inout")
    i = Var("i")
    fn = Function("fill_parallel", (n, out), [Pragma("omp parallel for"), For(i, 0, n.var, [out.store(i, 1.0)])])
    assert "#pragma omp parallel for" in emit_c(fn)
    checked = emit_c(fn, checked=True)
    assert "#pragma omp" not in checked and "checked mode runs this loop on one thread" in checked
    result = compile_function(fn, checked=True)(n=4, out=np.zeros(4))["out"]
    np.testing.assert_array_equal(result, np.ones(4))


def test_checked_mode_keeps_simd_loops_in_order():
    from compiler.imperative import Pragma
    from compiler.imperative.ir import CompoundAssign, Declare, Load

    n, x, out = Scalar("n", "int64"), Buffer("x", "float64"), Buffer("out", "float64", "inout")
    i, acc = Var("i"), Var("acc")
    fn = Function("total", (n, x, out), [Declare(acc, "float64", 0.0), Pragma("omp simd reduction(+:acc)"),
                                         For(i, 0, n.var, [CompoundAssign("+", acc, Load("x", i))]),
                                         out.store(0, acc)])
    assert "#pragma omp simd reduction(+:acc)" in emit_c(fn)
    checked = emit_c(fn, checked=True)
    assert "#pragma" not in checked and "runs this loop in its written order" in checked
    for mode in (False, True):
        got = compile_function(fn, checked=mode)(n=5, x=np.arange(5.0), out=np.zeros(1))["out"]
        np.testing.assert_array_equal(got, [10.0])


def test_tagged_statements_map_to_their_c_lines_in_the_trace():
    from compiler import Trace
    from compiler.imperative import Tagged

    n, out = Scalar("n", "int64"), Buffer("out", "float64", "inout")
    i = Var("i")
    fn = Function("tagged", (n, out), [
        Tagged("first", [For(i, 0, n.var, [out.store(i, 1.0)])]),
        Tagged("second", [out.store(0, 2.0)]),
    ])
    trace = Trace()
    kernel = compile_function(fn, trace=trace)
    lines = kernel.c_source.splitlines()
    prov = trace.find("emit-c")[0].artifact("c").data["provenance"]
    assert [lines[k - 1].strip() for k in prov["first"]] == ["for (int64_t i = 0; i < n; i++) {",
                                                            "out[i] = 1.0;", "}"]
    assert [lines[k - 1].strip() for k in prov["second"]] == ["out[0] = 2.0;"]
    # tags change nothing: the interpreter and the kernel agree
    np.testing.assert_array_equal(kernel(n=3, out=np.zeros(3))["out"], [2.0, 1.0, 1.0])
    np.testing.assert_array_equal(interpret(fn, n=3, out=np.zeros(3))["out"], [2.0, 1.0, 1.0])
    # a second lowering served from the memory cache still carries the provenance
    again = Trace()
    compile_function(fn, trace=again)
    assert again.find("emit-c")[0].artifact("c").data["provenance"] == prov


def two_scratch_arrays(first: int | None = None) -> Function:
    """``out[0] = n`` through two scratch arrays: ``w`` of ``first`` (or n) entries, ``v`` of n."""
    from compiler.imperative import Load, Store

    n, out = Scalar("n", "int64"), Buffer("out", "float64", "inout")
    body = Allocate("w", "float64", n.var if first is None else first, Const(0.0, "float64"), [
        Allocate("v", "float64", n.var, Const(1.0, "float64"), [
            Store("w", n.var - 1, Load("v", n.var - 1) * Const(1.0, "float64") + (n.var - 1)),
            out.store(0, Load("w", n.var - 1) + 1.0),
        ])])
    return Function("two_scratch", (n, out), body)


def test_directly_nested_allocations_are_checked_together_and_freed_on_failure():
    c = emit_c(two_scratch_arrays())
    check = "if (!w || !v) {\n        free(v); free(w);\n        return KERNEL_OUT_OF_MEMORY;\n    }"
    assert check in c
    assert compile_function(two_scratch_arrays())(n=5, out=np.zeros(1))["out"][0] == 6.0
    # v cannot be allocated (2^60 doubles): w, already allocated, is freed, and the call says why
    with pytest.raises(MemoryError, match=r"out of memory: scratch array v needs n = 1152921504606846976 float64 "
                                          r"elements \(9\.2 EB\), more than this machine's .* of memory"):
        compile_function(two_scratch_arrays(first=4))(n=2 ** 60, out=np.zeros(1))
    # called directly (a runtime's fast path, without the caller's frame): its status, and the same error
    k = compile_function(two_scratch_arrays(first=4))
    run, fail = k.direct_call
    assert k.pointer_parameters() == ("n", "out")
    out = np.zeros(1)
    assert run(5, k.pointer("out", out)) == 0 and out[0] == 6.0
    status = run(2 ** 60, k.pointer("out", out))
    with pytest.raises(MemoryError, match=r"out of memory: scratch array v needs n = 1152921504606846976 float64 "):
        fail(status, {"n": 2 ** 60})


def grid_corner(extra: int = 0) -> Function:
    """``out[0] = w[m * n + extra - 1]`` of a zeroed scratch array of ``m * n + extra`` entries."""
    from compiler.imperative import Load

    m, n, out = Scalar("m", "int64"), Scalar("n", "int64"), Buffer("out", "float64", "inout")
    length = m.var * n.var + extra if extra else m.var * n.var
    body = Allocate("w", "float64", length, Const(0.0, "float64"), [out.store(0, Load("w", length - 1) + 1.0)])
    return Function("grid_corner", (m, n, out), body)


@pytest.mark.parametrize("checked", [False, True])
@pytest.mark.parametrize("extra", [0, 1])
def test_a_scratch_length_that_overflows_int64_is_refused_not_wrapped(checked, extra):
    # 2^32 * 2^32 wraps to 0 in int64_t: allocated, the kernel would write past one element
    c = emit_c(grid_corner(extra), checked=checked)
    assert ("length_sum(length_product(m, n), 1)" if extra else "alloc_array(length_product(m, n),") in c
    assert ("length_sum" in c) == bool(extra)
    k = compile_function(grid_corner(extra), checked=checked)
    assert k(m=3, n=4, out=np.zeros(1))["out"][0] == 1.0
    length = "m \\* n \\+ 1 = 18446744073709551617" if extra else \
        "m \\* n = 4294967296 \\* 4294967296 = 18446744073709551616"
    with pytest.raises(MemoryError, match=f"kernel grid_corner: out of memory: scratch array w needs {length} "
                                          f"float64 elements \\(147\\.6 EB\\), more than an int64 length holds"):
        k(m=2 ** 32, n=2 ** 32, out=np.zeros(1))
    # a length just under 2^63 elements passes the product's check and fails the byte count
    with pytest.raises(MemoryError, match="scratch array w needs"):
        k(m=2 ** 31, n=2 ** 31, out=np.zeros(1))
    # negative sizes are no array either (and, with no scalar to blame, the message stays general)
    with pytest.raises(MemoryError, match="out of memory"):
        k(m=-1, n=5, out=np.zeros(1))


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_checked_mode_frees_scratch_arrays_when_a_bounds_error_leaves_the_kernel():
    from compiler.imperative import Load, Store

    n, out = Scalar("n", "int64"), Buffer("out", "float64", "inout")
    body = Allocate("w", "float64", n.var, Const(1.0, "float64"), [   # written through: resident
        Store("w", n.var, 1.0),  # one past the end
        out.store(0, Load("w", 0)),
    ])
    k = compile_function(Function("leaky", (n, out), body), checked=True)
    assert "free(check.scratch[k])" in k.c_source
    size = 4_000_000   # 32 MB per call
    for _ in range(3):
        with pytest.raises(KernelError, match="out of bounds"):
            k(n=size, out=np.zeros(1))
    before = _rss_bytes()
    for _ in range(20):
        with pytest.raises(KernelError, match="out of bounds"):
            k(n=size, out=np.zeros(1))
    assert _rss_bytes() - before < 100 * 2 ** 20   # 20 leaked calls would be 640 MB


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_an_allocation_sized_from_another_waits_for_its_check():
    from compiler.imperative import Load

    n, out = Scalar("n", "int64"), Buffer("out", "float64", "inout")
    body = Allocate("w", "int64", n.var, Const(3, "int64"), [
        Allocate("v", "float64", Load("w", 0), Const(1.0, "float64"), [out.store(0, Load("v", 2))])])
    c = emit_c(Function("sized", (n, out), body))
    assert c.index("if (w == NULL)") < c.index("double *v = alloc_array(w[0]")
    assert compile_function(Function("sized", (n, out), body))(n=2, out=np.zeros(1))["out"][0] == 1.0
