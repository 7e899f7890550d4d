"""The quick compiler for unoptimized builds ($SPARSESCOPE_QUICK_CC, compiler/backend/quick_build.py):
what it builds is right and said so, what it refuses the default compiler builds, and it is never
asked for an optimized, threaded, sanitized or debugging build."""

import shutil

import numpy as np
import pytest

import compiler as ss
from compiler.backend import build, kernel
from compiler.backend.quick_build import quick_applies

needs_tcc = pytest.mark.skipif(shutil.which("tcc") is None, reason="tcc is not installed (./dev test installs it)")
UNOPTIMIZED = ("-O0", "-fwrapv", "-fPIC", "-shared", "-std=c11")


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SPARSESCOPE_QUICK_CC", "tcc")
    # (a kernel another test of this process built is in the memory cache: built here, it says by whom)
    kernel.clear_memory_cache()
    return tmp_path


def spy_on(commands: list):
    """subprocess.run that notes each command in ``commands`` first."""
    run = build.subprocess.run

    def spy(cmd, *args, **kwargs):
        commands.append(list(cmd))
        return run(cmd, *args, **kwargs)
    return spy


@pytest.fixture
def commands(monkeypatch):
    """The commands the quick compiler runs in the test."""
    ran = []
    monkeypatch.setattr("compiler.backend.quick_build.subprocess.run", spy_on(ran))
    return ran


@needs_tcc
def test_a_kernel_built_by_the_quick_compiler_is_right_and_its_trace_says_so(fresh, monkeypatch):
    monkeypatch.setenv("SPARSESCOPE_OPT", "-O0")
    a = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0], [4.0, 5.0, 0.0]])
    A, x = ss.Tensor.from_numpy(a, "csr"), np.array([1.0, -2.0, 0.5])
    for strategy in ("lattice", "looplets"):
        k = ss.lower("y[i] = A[i, j] * x[j]", strategy, trace=ss.Trace(), A=A, x=x, y="dense")
        note = [s.note for s in k.trace.steps if s.stage == "compile"][-1]
        assert "compiled at -O0" in note and ", by tcc ($SPARSESCOPE_QUICK_CC)" in note
        np.testing.assert_allclose(k(A=A, x=x).to_numpy(), a @ x)


@needs_tcc
def test_c_the_quick_compiler_refuses_is_built_by_the_default_one(fresh):
    # (TCC has no __builtin_popcountll: an implicit declaration, refused as an error, not left to fail
    # when called)
    source = "int ones(unsigned long long x) { return __builtin_popcountll(x); }\n"
    path, cached = build.build_library(source, "ones", UNOPTIMIZED)
    assert not cached and build.built_by(path) is None
    _, lib = build.load_functions(path, {"ones": "int (*)(unsigned long long)"})
    assert lib.ones(0b1011) == 3


@needs_tcc
def test_the_prelude_counts_trailing_zeros_as_gcc_does(fresh, monkeypatch):
    source = "int zeros(unsigned long long x) { return __builtin_ctzll(x); }\n"
    quick, _ = build.build_library(source, "zeros", UNOPTIMIZED)
    assert build.built_by(quick) == ["tcc"]
    monkeypatch.delenv("SPARSESCOPE_QUICK_CC")
    full, _ = build.build_library(source, "zeros", UNOPTIMIZED)
    assert full != quick and build.built_by(full) is None    # (each compiler's libraries cached apart)
    _, by_tcc = build.load_functions(quick, {"zeros": "int (*)(unsigned long long)"})
    _, by_cc = build.load_functions(full, {"zeros": "int (*)(unsigned long long)"})
    for word in (1, 2, 8, 96, 1 << 40, (1 << 63) | (1 << 5), (1 << 64) - 1, 1 << 63):
        assert by_tcc.zeros(word) == by_cc.zeros(word) == (word & -word).bit_length() - 1


def test_a_quick_compiler_that_does_not_run_is_left_out(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SPARSESCOPE_QUICK_CC", "/nonexistent/sparsescope-tcc")
    path, _ = build.build_library("int answer(void) { return 42; }\n", "answer", UNOPTIMIZED)
    assert build.built_by(path) is None
    _, lib = build.load_functions(path, {"answer": "int (*)(void)"})
    assert lib.answer() == 42


@pytest.mark.parametrize("flags", [
    ("-O3", "-fPIC", "-shared"),                      # optimized: timed and shipped, GCC's
    ("-O0", "-fPIC", "-shared", "-fopenmp"),           # threads: OpenMP's runtime
    ("-O0", "-fPIC", "-shared", "-fsanitize=address"),  # the sanitizer's round
    ("-O0", "-g", "-fPIC", "-shared"),                 # a debugging build
])
def test_the_quick_compiler_is_not_asked_for(flags):
    assert not quick_applies(flags, {"SPARSESCOPE_QUICK_CC": "tcc"})
    assert quick_applies(UNOPTIMIZED, {"SPARSESCOPE_QUICK_CC": "tcc"})
    assert quick_applies(UNOPTIMIZED + ("-fopenmp-simd",), {"SPARSESCOPE_QUICK_CC": "tcc"})
    assert not quick_applies(UNOPTIMIZED, {})


CONVERTS = """#include <math.h>
#include <stdint.h>
#include <stdlib.h>
uint64_t whole(double x) { return (uint64_t)x; }
double root(double x) { double *cell = realloc(NULL, sizeof(double)); *cell = sqrt(x); double r = *cell; free(cell); return r; }
"""


@needs_tcc
def test_the_quick_compiler_links_lightly_and_its_kernels_bind_the_c_librarys_symbols(fresh, commands):
    # (the light link leaves libc's and libm's symbols to the process; a conversion TCC calls its runtime for,
    # double to uint64, is linked from libtcc1.a)
    path, _ = build.build_library(CONVERTS, "converts", UNOPTIMIZED)
    assert build.built_by(path) == ["tcc"]
    builds = [c for c in commands if "-shared" in c]
    assert len(builds) == 1 and "-nostdlib" in builds[0] and builds[0][-1].endswith("libtcc1.a"), builds
    _, lib = build.load_functions(path, {"whole": "uint64_t (*)(double)", "root": "double (*)(double)"})
    assert lib.whole(2.0 ** 63 + 2048.0) == 2 ** 63 + 2048 and lib.root(2.25) == 1.5


@needs_tcc
def test_a_lightly_linked_library_that_does_not_load_is_linked_in_full(fresh, tmp_path, monkeypatch):
    from compiler.backend import quick_build
    c = tmp_path / "k.c"
    c.write_text(CONVERTS)
    asked = []

    def loads(path):       # (the light one "lacks a symbol"; the full one loads)
        asked.append(path)
        return len(asked) > 1

    assert quick_build.quick_build(["tcc"], str(c), str(tmp_path / "k.so"), tmp_path, loads)
    assert len(asked) == 2
    assert not quick_build.quick_build(["tcc"], str(c), str(tmp_path / "k.so"), tmp_path, lambda path: False)


def test_complex_c_goes_to_the_default_compiler_without_asking_the_quick_one(fresh, monkeypatch):
    asked = []
    monkeypatch.setattr("compiler.backend.build.quick_build", lambda *a, **k: asked.append(a) or False)
    source = "#include <complex.h>\ndouble size(double re, double im) { return cabs(re + im * I); }\n"
    path, _ = build.build_library(source, "size", UNOPTIMIZED)
    assert not asked and build.built_by(path) is None
    _, lib = build.load_functions(path, {"size": "double (*)(double, double)"})
    assert lib.size(3.0, 4.0) == 5.0


@needs_tcc
def test_the_system_headers_are_preprocessed_once_for_the_kernels_that_include_them(fresh, monkeypatch, commands):
    # (TCC spent half its time on a kernel opening the system headers along its include path)
    from compiler.backend import quick_build
    monkeypatch.setattr(quick_build, "_headers", {})
    libs = []
    for n in range(3):   # (three kernels, one set of headers)
        path, _ = build.build_library(CONVERTS + f"double twice{n}(double x) {{ return isnan(x) ? INFINITY : 2 * x; }}\n",
                                      f"k{n}", UNOPTIMIZED)
        assert build.built_by(path) == ["tcc"]
        libs.append(build.load_functions(path, {f"twice{n}": "double (*)(double)", "root": "double (*)(double)"})[1])
    assert sum("-E" in c for c in commands) == 1
    builds = [c for c in commands if "-shared" in c]
    assert len(builds) == 3 and all("-" in c and any(a.endswith(".h") and "quick_headers-" in a for a in c) for c in builds)
    for n, lib in enumerate(libs):
        assert getattr(lib, f"twice{n}")(1.5) == 3.0 and getattr(lib, f"twice{n}")(float("nan")) == float("inf")
        assert lib.root(2.25) == 1.5


@needs_tcc
def test_preprocessed_headers_that_fail_a_kernel_are_set_aside_for_the_headers_themselves(fresh, monkeypatch):
    from compiler.backend import quick_build
    monkeypatch.setattr(quick_build, "_headers", {})
    # (headers that declare sqrt wrongly: the kernel that calls it is refused with them, and built with
    # the system headers; the next kernel is not tried with them again)
    monkeypatch.setattr(quick_build, "_own_definitions", lambda text: "int sqrt;\n")
    path, _ = build.build_library(CONVERTS, "converts", UNOPTIMIZED)
    assert build.built_by(path) == ["tcc"]
    _, lib = build.load_functions(path, {"root": "double (*)(double)"})
    assert lib.root(2.25) == 1.5
    assert list(quick_build._headers.values()) == [None]
    run = []
    monkeypatch.setattr("compiler.backend.quick_build.subprocess.run", spy_on(run))
    path, _ = build.build_library(CONVERTS + "int other(void) { return 1; }\n", "other", UNOPTIMIZED)
    assert build.built_by(path) == ["tcc"] and not any("-" in c for c in run)
