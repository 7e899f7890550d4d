import gc
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import backend
from compiler.errors import CompileError, CompilerNotFoundError, DTypeError, KernelError
from compiler.imperative import (Assign, Call, Function, Helper, OutScalar, Scalar, interpret)
from compiler.imperative.examples import csr_spmv, filter_nonzeros
from compiler.trace import Trace


def spmv_args(A, index, value, x=None):
    x = np.linspace(-1, 1, A.shape[1]).astype(value) if x is None else x
    return dict(m=A.shape[0], A_pos=A.indptr.astype(index), A_idx=A.indices.astype(index),
                A_val=A.data.astype(value), x=x, y=np.zeros(A.shape[0], value))


@st.composite
def csr_matrices(draw):
    m = draw(st.integers(0, 12))
    n = draw(st.integers(1, 12))
    density = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))  # 0.0: all rows empty
    seed = draw(st.integers(0, 2 ** 16))
    return sp.random(m, n, density=density, format="csr", random_state=seed)


@settings(max_examples=60, deadline=None)
@given(csr_matrices(), st.sampled_from(["int32", "int64"]), st.sampled_from(["float32", "float64"]),
       st.booleans())
def test_spmv_matches_interpreter_and_scipy(A, index, value, checked):
    fn = csr_spmv(index, value)
    kernel = backend.compile_function(fn, checked=checked)
    args = spmv_args(A, index, value)
    out = kernel(**args)
    assert out["y"] is args["y"]  # written in place, no copy
    reference = interpret(fn, **{**args, "y": np.zeros_like(args["y"])})["y"]
    np.testing.assert_allclose(out["y"], reference, rtol=1e-6)
    tol = 1e-5 if value == "float32" else 1e-12
    np.testing.assert_allclose(out["y"], A.astype(value) @ args["x"], rtol=tol, atol=tol)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.0, 1.5, -2.0, 3.25]), max_size=100),
       st.sampled_from(["int32", "int64"]), st.booleans())
def test_growable_output_matches_interpreter_and_numpy(values, index, checked):
    fn = filter_nonzeros("float64", index)
    x = np.array(values, dtype=np.float64)
    out = backend.compile_function(fn, checked=checked)(n=len(x), x=x)
    expected = interpret(fn, n=len(x), x=x)
    nz = np.flatnonzero(x)
    assert out["B_nnz"] == expected["B_nnz"] == len(nz)
    assert out["B_idx"].dtype == np.dtype(index)
    np.testing.assert_array_equal(out["B_idx"], nz)
    np.testing.assert_array_equal(out["B_val"], x[nz])
    np.testing.assert_array_equal(out["B_idx"], expected["B_idx"])


def test_growable_arrays_keep_their_memory_alive():
    k = backend.compile_function(filter_nonzeros())
    x = np.arange(1.0, 100_001.0)
    out = k(n=len(x), x=x)
    idx = out.pop("B_idx")
    del out, k
    gc.collect()
    junk = [np.full(100_000, -1.0) for _ in range(20)]  # reuse any freed memory
    assert idx.base is not None and idx.flags.writeable
    np.testing.assert_array_equal(idx, np.arange(100_000))
    del junk


def test_calls_after_one_that_grew_nothing_keep_every_result_apart():
    """The cells a call's C writes its grown buffers' pointers into are kept from call to call (made
    once per kernel, not per call): a call that grows nothing must not hand back the pointer of the
    call before (which another result owns, and both would free), and each result keeps its own
    memory whichever calls come after."""
    k = backend.compile_function(filter_nonzeros(name="sparsify_pooled"))
    xs = [np.array([0.0, 2.0, 0.0, 3.0]), np.zeros(3), np.array([5.0, 0.0]), np.zeros(0), np.arange(1.0, 40.0)]
    outs = [(x, k(n=len(x), x=x)) for x in xs]
    gc.collect()
    junk = [np.full(64, -1.0) for _ in range(50)]  # (reuse any memory freed twice or too early)
    for x, out in outs:
        nz = np.flatnonzero(x)
        assert out["B_nnz"] == len(nz)
        np.testing.assert_array_equal(out["B_idx"], nz)
        np.testing.assert_array_equal(out["B_val"], x[nz])
    del junk


def test_two_calls_on_two_threads_at_once_each_take_their_own_cells(monkeypatch):
    """Two threads in one kernel at once never share the pooled cells its C writes the out scalars and
    grown pointers into (both would free one pointer). Made deterministic by hooks: both calls reach
    the pool's one set of cells together (the pool waits for both before it hands one out), then both
    are inside the C function together (it waits for both before it runs) and name their cells."""
    k = backend.compile_function(filter_nonzeros(name="sparsify_pooled"))
    g = k.caller.__globals__
    k(n=1, x=np.ones(1))   # (the pool now holds one set)
    together = threading.Barrier(2, timeout=20)

    class Pool(list):
        def pop(self, *at):
            together.wait()
            return super().pop(*at)

    pool = Pool(g["__k_pool"])
    g["__k_pool"].clear()
    monkeypatch.setitem(g, "__k_pool", pool)
    run, ffi, cells = g["__k_fn"], k._ffi, {}

    def inside(*args):   # (the C function, once both calls are in it)
        mine = {int(ffi.cast("intptr_t", a)) for a in args
                if isinstance(a, ffi.CData) and ffi.typeof(a).kind == "pointer"}
        cells[threading.get_ident()] = mine
        together.wait()
        return run(*args)
    monkeypatch.setitem(g, "__k_fn", inside)
    xs = [np.array([0.0, 2.0, 0.0, 3.0]), np.array([5.0, 0.0, 7.0, 0.0, 9.0])]
    outs, errors = [None, None], []

    def call(j):
        try:
            outs[j] = k(n=len(xs[j]), x=xs[j])
        except BaseException as e:   # (reported below; the other thread is let go)
            errors.append(e)
            together.abort()
    threads = [threading.Thread(target=call, args=(j,)) for j in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    first, second = cells.values()
    assert len(first) == len(second) == 3 and not first & second, "the two calls shared a cell"
    for x, out in zip(xs, outs):
        nz = np.flatnonzero(x)
        assert out["B_nnz"] == len(nz)
        np.testing.assert_array_equal(out["B_idx"], nz)
        np.testing.assert_array_equal(out["B_val"], x[nz])
    assert len(pool) == 2, "both sets are back in the pool"


@pytest.mark.parametrize("checked", [False, True])
def test_a_growable_past_the_2mb_page_size_keeps_every_element(checked):
    """Grown by doubling to 2^20 elements (8 MB: advised onto 2 MB pages), realloc keeps the contents."""
    x = np.arange(1.0, 1_000_001.0)
    x[::7] = 0.0
    out = backend.compile_function(filter_nonzeros(), checked=checked)(n=len(x), x=x)
    nz = np.flatnonzero(x)
    np.testing.assert_array_equal(out["B_idx"], nz)
    np.testing.assert_array_equal(out["B_val"], x[nz])


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_repeated_large_growable_outputs_do_not_leak():
    k = backend.compile_function(filter_nonzeros())
    x = np.ones(2_000_000)  # each call returns 2 x 16 MB (capacity 2^21 elements)
    for _ in range(3):
        k(n=len(x), x=x)
    gc.collect()
    before = _rss_bytes()
    for _ in range(12):
        out = k(n=len(x), x=x)
        assert out["B_nnz"] == len(x)
    del out
    gc.collect()
    assert _rss_bytes() - before < 100 * 2 ** 20  # 12 leaked calls would be ~380 MB


def test_memory_then_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    fn = csr_spmv(name="spmv_cache_test")
    backend.clear_memory_cache()
    backend.reset_stats()
    first = backend.compile_function(fn)
    assert backend.stats() == {"emits": 1, "compiles": 1, "disk_hits": 0, "memory_hits": 0}
    assert backend.compile_function(csr_spmv(name="spmv_cache_test")) is first
    assert backend.stats() == {"emits": 1, "compiles": 1, "disk_hits": 0, "memory_hits": 1}
    backend.clear_memory_cache()
    trace = Trace()
    second = backend.compile_function(fn, trace=trace)
    assert second is not first
    assert backend.stats() == {"emits": 2, "compiles": 1, "disk_hits": 1, "memory_hits": 1}
    assert trace.stages() == ["emit-c", "compile"]
    assert trace[0].artifact("c").text == second.c_source
    assert trace[1].note.startswith("disk cache")
    A = sp.random(5, 5, density=0.5, format="csr", random_state=0)
    np.testing.assert_allclose(second(**spmv_args(A, "int64", "float64"))["y"], A @ np.linspace(-1, 1, 5))


def test_fresh_process_hits_disk_cache(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.getcwd()!r})
        from compiler import backend
        from compiler.imperative.examples import csr_spmv
        backend.compile_function(csr_spmv(name="spmv_process_test"))
        s = backend.stats()
        print(s["compiles"], s["disk_hits"])
    """)
    env = dict(os.environ, SPARSESCOPE_CACHE_DIR=str(tmp_path))
    run = lambda: subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                                 text=True, check=True).stdout.split()
    assert run() == ["1", "0"]
    assert run() == ["0", "1"]


def test_trace_records_compiled_and_memory_cache():
    fn = csr_spmv(name="spmv_trace_test")
    trace = Trace()
    backend.compile_function(fn, trace=trace)
    backend.compile_function(fn, trace=trace)
    notes = [s.note for s in trace.find("compile")]
    assert notes[0].startswith("compiled") and notes[1].startswith("memory cache")
    assert Trace.from_json(trace.to_json())[0].artifact("c").text.startswith("/* sparsescope kernel")


def test_checked_mode_reports_out_of_bounds():
    A = sp.random(6, 10, density=0.4, format="csr", random_state=3)
    args = spmv_args(A, "int64", "float64")
    args["A_idx"][2] = 12
    k = backend.compile_function(csr_spmv(), checked=True)
    with pytest.raises(KernelError, match=r"^checked kernel spmv: read of x\[12\] is out of bounds \(length 10\)$"):
        k(**args)
    args = spmv_args(A, "int64", "float64")
    args["A_pos"][-1] += 3  # the last row runs past the end of A_idx
    # C leaves the evaluation order of A_val[pA] * x[A_idx[pA]] open: either read fails first
    with pytest.raises(KernelError, match=rf"read of A_(idx|val)\[{A.nnz}\] is out of bounds \(length {A.nnz}\)"):
        k(**args)
    # the process survived and the kernel still works
    good = spmv_args(A, "int64", "float64")
    np.testing.assert_allclose(k(**good)["y"], A @ good["x"])


def test_argument_errors_name_the_parameter():
    k = backend.compile_function(csr_spmv())
    A = sp.random(4, 4, density=0.5, format="csr", random_state=1)
    args = spmv_args(A, "int64", "float64")
    with pytest.raises(DTypeError, match="argument A_idx must have dtype int64, got int32"):
        k(**{**args, "A_idx": args["A_idx"].astype(np.int32)})
    with pytest.raises(ValueError, match="argument x must be C-contiguous"):
        k(**{**args, "x": np.zeros(8)[::2]})
    ro = args["y"].copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="argument y is written by the kernel but the array is read-only"):
        k(**{**args, "y": ro})
    with pytest.raises(TypeError, match="argument x must be a numpy array"):
        k(**{**args, "x": [0.0] * 4})
    with pytest.raises(TypeError, match="argument m must be a int64 scalar"):
        k(**{**args, "m": 4.5})
    with pytest.raises(TypeError, match="x"):
        k(**{k_: v for k_, v in args.items() if k_ != "x"})


def test_missing_compiler_raises_one_clear_error(monkeypatch):
    monkeypatch.setenv("CC", "sparsescope-no-such-compiler")
    with pytest.raises(CompilerNotFoundError, match="apt-get install gcc"):
        backend.compile_function(csr_spmv(name="spmv_no_cc"))


def test_invalid_helper_gives_compile_error():
    r = OutScalar("r", "float64")
    fn = Function("bad_helper", (Scalar("a", "float64"), r), [Assign(r.var, Call("broken", (Scalar("a", "float64").var,)))],
                  helpers=(Helper("broken", "static inline double broken(double v) { return v +; }"),))
    with pytest.raises(CompileError, match=r"rejected kernel bad_helper(.|\n)*\| static inline double broken"):
        backend.compile_function(fn)


def test_helper_and_math_kernel_matches_interpreter():
    a, r = Scalar("a", "float64"), OutScalar("r", "float64")
    fn = Function("hyp", (a, r), [Assign(r.var, Call("sqrt", (Call("sq", (a.var,)) + 16.0,)))],
                  helpers=(Helper("sq", "static inline double sq(double v) { return v * v; }"),))
    assert backend.compile_function(fn)(a=3.0)["r"] == 5.0
    assert interpret(fn, helpers={"sq": lambda v: v * v}, a=3.0)["r"] == 5.0


def test_integer_semantics_match_interpreter():
    a, b, r = Scalar("a", "int64"), Scalar("b", "int64"), OutScalar("r", "int64")
    fn = Function("divmod_mix", (a, b, r), [Assign(r.var, (a.var / b.var) * 100 + a.var % b.var)])
    k = backend.compile_function(fn)
    for x, y in [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 5)]:
        assert k(a=x, b=y)["r"] == interpret(fn, a=x, b=y)["r"]


def test_a_pointer_maker_checks_each_array_as_a_call_does():
    """The fast call binds each new tensor's arrays with a maker per buffer, planned once: it refuses
    what a call refuses, naming the parameter, and makes the pointer a call would pass."""
    k = backend.compile_function(filter_nonzeros(name="sparsify_maker"))
    make = k.pointer_maker("x")
    assert k.pointer_maker("n") is None   # (a scalar)
    x = np.array([0.0, 1.5, 2.0])
    assert list(make(x)[0:3]) == [0.0, 1.5, 2.0]
    with pytest.raises(DTypeError, match="argument x must have dtype float64, got float32"):
        make(x.astype(np.float32))
    with pytest.raises(ValueError, match="argument x must be C-contiguous"):
        make(np.arange(6.0)[::2])
    with pytest.raises(TypeError, match="argument x must be a numpy array"):
        make([1.0])
