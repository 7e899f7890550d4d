"""Kernels built with AddressSanitizer (SPARSESCOPE_SANITIZE=address): the property tests of both
strategies and the fuzzing round run again in a Python process with the sanitizer's runtime
preloaded, so that any kernel's read or write outside a buffer fails the suite with a report.

Each run is a subprocess (Python is not instrumented: the runtime must be loaded before it), with its
own kernel cache, and bounded: a property test runs its first :data:`PINNED` pinned ``@example`` cases (the
cases that once found bugs, as written), or its first derandomized example where it has none; the suite's
own run draws the rest and runs every pinned case.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compiler.backend.build import compiler_command
from compiler.backend.sanitize import sanitized_environ

ROOT = Path(__file__).resolve().parents[3]
#: the property tests run under the sanitizer: both strategies' and lower()'s, and the fuzzing round
PROPERTY_TESTS = ["tests/compiler/lattice", "tests/compiler/looplets", "tests/compiler/test_lowering.py",
                  "tests/compiler/backend/test_fuzz_round.py"]
#: drawn examples of a property test that has no @example case (a test with some runs those alone:
#: the first drawn example of each of those 175 tests built 146 of the run's 936 kernels)
EXAMPLES = 1
#: pinned cases of a property test run sanitized (as written, top down): 550 in all in 189 tests, of which
#: 361 past each one's first; the run took 132 s of the suite's 2-worker time, as one test, with all of them,
#: 87 s with each test's first two, 60 s with its first (alone, on an idle machine)
PINNED = 1
TIMEOUT = 900


@pytest.fixture(scope="module")
def asan_env(tmp_path_factory):
    if not sys.platform.startswith("linux"):
        pytest.skip("sanitized kernels are loaded with LD_PRELOAD, which this test uses on Linux only")
    env = sanitized_environ(compiler_command())
    if env is None:
        pytest.skip(f"the C compiler ({' '.join(compiler_command())}) has no AddressSanitizer runtime "
                    f"(-print-file-name=libasan.so finds none): install it (Debian: libasan8 with gcc)")
    env["SPARSESCOPE_CACHE_DIR"] = str(tmp_path_factory.mktemp("asan-cache"))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


def run(env, args, timeout=300):
    """Run ``python args`` in ``env``; a sanitizer report names itself in stderr."""
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def report(r) -> str:
    """What a failed run says: the end of its output and the sanitizer's report, for the assertion."""
    err = r.stderr
    start = err.find("==ERROR: AddressSanitizer")
    shown = err[start:start + 3000] if start >= 0 else err[-3000:]
    return f"exit status {r.returncode}\n--- stdout (end)\n{r.stdout[-3000:]}\n--- stderr\n{shown}"


SCRATCH = textwrap.dedent("""
    import sys
    import numpy as np
    from compiler.backend import build
    path, _ = build.build_library(
        "void fill(double *y, long n, long extra) { for (long i = 0; i < n + extra; i++) y[i] = 1.0; }", "fill")
    ffi, lib = build.load_library(path, "void fill(double *y, long n, long extra);")
    y = np.zeros(12)
    lib.fill(ffi.cast("double *", y.ctypes.data), 12, int(sys.argv[1]))
    print("sum", y.sum())
""")


def test_a_write_past_a_buffer_fails_the_sanitized_run_with_a_report(asan_env, tmp_path):
    script = tmp_path / "scratch.py"
    script.write_text(SCRATCH)
    ok = run(asan_env, [str(script), "0"])
    assert ok.returncode == 0 and "sum 12.0" in ok.stdout, report(ok)
    bad = run(asan_env, [str(script), "1"])
    assert bad.returncode != 0 and "sum" not in bad.stdout
    # the report says what happened and where, in the kernel's C kept in the cache
    assert "ERROR: AddressSanitizer: heap-buffer-overflow" in bad.stderr, report(bad)
    assert "WRITE of size 8" in bad.stderr and "in fill " in bad.stderr and ".c:1" in bad.stderr, report(bad)


@pytest.mark.slow
def test_property_tests_and_the_fuzzing_round_read_and_write_within_buffers(asan_env):
    # (without the project's addopts: no doctests or notebooks here, and nbval's import is slow)
    r = run(asan_env, ["-m", "pytest", "-n", "0", "-q", "-o", "addopts=", "-p", "no:nbval", "-p", "no:cacheprovider",
                       "-p", "tests.compiler.backend.property_run",
                       "--capped-examples", str(EXAMPLES), "--pinned-examples-first", "--pinned-examples-cap", str(PINNED),
                       "--property-tests-only",
                       "--no-header", "-rfE", "-v", *PROPERTY_TESTS], timeout=TIMEOUT)
    assert "AddressSanitizer" not in r.stderr and r.returncode == 0, report(r)
    assert " passed" in r.stdout and "test_fuzz_round" in r.stdout, report(r)


# issue 28's memory-unsafe loop programs (others fix them): the sanitized run reports their writes
ISSUE_28 = {
    1: """
        @loop_program
        def hstack(D, A):
            for i in _:
                for j in _:
                    D[i, j] = A[i, j]
                    D[i, j + 3] = A[i, j]
        A = ss.Tensor.from_numpy(np.arange(1.0, 13.0).reshape(4, 3), "dense")
        D = ss.Tensor.from_numpy(np.zeros((4, 6)), "dense")
        run(lambda: ss.lower(hstack, strategy="looplets", D=D, A=A)(A=A), np.hstack([A.to_numpy()] * 2))
    """,
    2: """
        @loop_program
        def shift(y, x):
            for i in _:
                y[i] = x[i + 1]
        x = ss.Tensor.from_numpy(np.arange(1.0, 6.0), "dense")
        run(lambda: ss.lower(shift, strategy="looplets", y="dense", x=x)(x=x), np.array([2.0, 3.0, 4.0, 5.0]))
    """,
}
PRELUDE = """
    import numpy as np
    import compiler as ss
    from compiler.looplets import loop_program

    def run(call, want):
        try:
            got = call().to_numpy()
        except ss.errors.SparsescopeError as e:
            print("refused:", e)   # a clear error is a right outcome too
        else:
            assert got.shape == want.shape and np.allclose(got, want), got
"""


def run_items(env, path, prelude: str, items: dict):
    """Run every item of ``items`` in one sanitized process (each process pays for the sanitizer's
    start and for loading numpy and the compiler), in order, each after a line naming it; return
    the run and each item's output. A sanitizer report stops the process at the item that wrote."""
    parts = [textwrap.dedent(prelude)]
    for name, code in items.items():
        parts.append(f"print('=== item {name}', flush=True)\n" + textwrap.dedent(code))
    parts.append("print('=== end', flush=True)\n")
    path.write_text("\n".join(parts))
    r = run(env, [str(path)])
    outputs = dict(zip([str(n) for n in items], r.stdout.split("=== item ")[1:]))
    return r, {name: out.partition("\n")[2] for name, out in outputs.items()}


def test_issue_28_loop_programs_stay_within_their_buffers(asan_env, tmp_path):
    r, _ = run_items(asan_env, tmp_path / "issue28.py", PRELUDE, ISSUE_28)
    assert "AddressSanitizer" not in r.stderr and r.returncode == 0, report(r)
    assert "=== end" in r.stdout, report(r)


# issue 31's loop programs that read or write at a computed coordinate: out of range, a clear error
# (their unchecked kernels wrote or read past the buffer); in range, the right result
ISSUE_31 = {
    "scatter": """
        @loop_program
        def scatter(y, I, x):
            for i in _:
                y[I[i]] += x[i]
        x = ss.Tensor.from_numpy(np.ones(3), "dense")
        for idx, want in (([0, 2, 2], [1.0, 0.0, 2.0]), ([0, 3, 1], None), ([-1, 0, 1], None)):
            I = ss.Tensor.from_numpy(np.array(idx), "dense")
            y = ss.Tensor.from_numpy(np.zeros(3), "dense")
            expect(lambda: compile_program(scatter, y=y, I=I, x=x)(y=y, I=I, x=x), want)
    """,
    "gather": """
        @loop_program
        def gather(y, I, x):
            for i in _:
                y[i] = x[I[i]]
        x = ss.Tensor.from_numpy(np.arange(4.0), "dense")
        for idx, want in (([3, 0], [3.0, 0.0]), ([4, 0], None), ([0, -4], None)):
            I = ss.Tensor.from_numpy(np.array(idx), "dense")
            expect(lambda: compile_program(gather, y="dense", I=I, x=x)(I=I, x=x), want)
    """,
    "histogram": """
        @loop_program
        def hist(bins, v):
            for i in _:
                bins[v[i] // 10] += 1
        for vals, want in (([5, 25, 15, 7], [2, 1, 1]), ([5, 30], None), ([-1], None)):
            v = ss.Tensor.from_numpy(np.array(vals), "dense")
            bins = ss.Tensor.from_numpy(np.zeros(3, np.int64), "dense")
            expect(lambda: compile_program(hist, bins=bins, v=v)(bins=bins, v=v), want)
    """,
    "offset": """
        @loop_program
        def shifted(y, d, x):
            for j in _:
                for i in _:
                    y[i + d[j]] += x[i]
        x = ss.Tensor.from_numpy(np.ones(3), "dense")
        for shifts, want in (([0, 1], [1.0, 2.0, 2.0, 1.0]), ([0, 2], None), ([-1], None)):
            d = ss.Tensor.from_numpy(np.array(shifts), "dense")
            y = ss.Tensor.from_numpy(np.zeros(4), "dense")
            expect(lambda: compile_program(shifted, y=y, d=d, x=x)(y=y, d=d, x=x), want)
    """,
}
EXPECT = """
    from compiler.looplets.compile import compile_program

    def expect(call, want):
        if want is None:
            try:
                call()
            except ss.errors.KernelError as e:
                print("refused:", e)
            else:
                raise AssertionError("an out-of-range coordinate was not refused")
        else:
            got = call().to_numpy()
            assert np.array_equal(got, np.array(want)), got
"""


def test_issue_31_computed_coordinates_stay_within_their_buffers(asan_env, tmp_path):
    r, outputs = run_items(asan_env, tmp_path / "issue31.py", PRELUDE + EXPECT, ISSUE_31)
    assert "AddressSanitizer" not in r.stderr and r.returncode == 0, report(r)
    assert "=== end" in r.stdout and set(outputs) == set(ISSUE_31), report(r)
    for name, out in outputs.items():
        assert out.count("refused: kernel ") == 2, f"item {name}:\n{out}\n{report(r)}"
