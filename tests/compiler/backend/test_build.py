import os
import subprocess
import sys
import textwrap

import pytest

from compiler.backend import build
from compiler.errors import CompileError, CompilerNotFoundError, UsageError

SOURCE = "int answer(void) { return 42; }\n"


def test_build_load_and_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    path, cached = build.build_library(SOURCE, "answer")
    assert not cached and path.exists() and path.parent == tmp_path / "kernels"
    assert path.with_suffix(".c").read_text() == SOURCE
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temp files left
    ffi, lib = build.load_library(path, "int answer(void);")
    assert lib.answer() == 42
    again, cached = build.build_library(SOURCE, "answer")
    assert cached and again == path
    # different flags are a different library
    other, cached = build.build_library(SOURCE, "answer", flags=("-O0", "-fPIC", "-shared"))
    assert not cached and other != path


def test_missing_compiler(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "/nonexistent/sparsescope-cc")
    with pytest.raises(CompilerNotFoundError) as info:
        build.build_library(SOURCE, "answer")
    message = str(info.value)
    assert "/nonexistent/sparsescope-cc" in message and "$CC" in message
    assert "apt-get install gcc" in message and "xcode-select --install" in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_compile_error_shows_message_and_numbered_source(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    bad = "int f(void)\n{\n    return undefined_name;\n}\n"
    with pytest.raises(CompileError) as info:
        build.build_library(bad, "broken")
    message = str(info.value)
    assert "undefined_name" in message and "broken.c" in message
    assert "3 |     return undefined_name;" in message
    assert not list((tmp_path / "kernels").iterdir())  # nothing half-written is left


def test_cache_dir_default_uses_platformdirs(monkeypatch):
    monkeypatch.delenv("SPARSESCOPE_CACHE_DIR", raising=False)
    import platformdirs
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda app: os.path.join(os.environ.get("TMPDIR", "/tmp"), "ss-test-" + app))
    assert build.cache_dir().parts[-2:] == ("ss-test-sparsescope", "kernels")


def test_parallel_builds_are_atomic(tmp_path):
    # Several processes building the same library at once all end up loading a good one.
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.getcwd()!r})
        from compiler.backend import build
        path, _ = build.build_library({SOURCE!r}, "answer")
        ffi, lib = build.load_library(path, "int answer(void);")
        print(lib.answer())
    """)
    env = dict(os.environ, SPARSESCOPE_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate()[0].strip() for p in procs]
    assert outs == ["42"] * 4
    assert len([p for p in (tmp_path / "kernels").iterdir() if p.suffix != ".c"]) == 1


def test_simd_only_pragmas_build_without_the_openmp_runtime(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    source = textwrap.dedent("""\
        double total(const double *x, long n) {
            double s = 0.0;
            #pragma omp simd reduction(+:s)
            for (long i = 0; i < n; i++)
                s += x[i];
            return s;
        }
        """)
    commands = spy_commands(monkeypatch)
    path, _ = build.build_library(source, "total")
    assert build.OPENMP_SIMD_FLAG in commands[-1] and build.OPENMP_FLAG not in commands[-1]
    ffi, lib = build.load_library(path, "double total(const double *x, long n);")
    x = ffi.new("double[]", [1.0, 2.0, 3.5])
    assert lib.total(x, 3) == 6.5


@pytest.mark.parametrize("identity, gcc", [
    ("gcc (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.", True),
    ("cc (GCC) 13.2.1\nCopyright (C) 2023 Free Software Foundation, Inc.", True),
    ("Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu", False),
    ("Apple clang version 15.0.0 (clang-1500.1.0.2.5)", False),
])
def test_gcc_gets_its_own_flags_and_the_environment_overrides_them(monkeypatch, identity, gcc):
    monkeypatch.delenv("SPARSESCOPE_CFLAGS", raising=False)
    monkeypatch.setattr(build, "compiler_identity", lambda cc=None: identity)
    assert build.is_gcc() == gcc
    assert build.compiler_flags() == build.DEFAULT_FLAGS + (build.GCC_FLAGS if gcc else ())
    monkeypatch.setenv("SPARSESCOPE_CFLAGS", "-O1 -fPIC -shared")
    assert build.compiler_flags() == ("-O1", "-fPIC", "-shared")
    assert build.compiler_flags(("-O0",)) == ("-O0",)


@pytest.mark.parametrize("given, expected", [(None, "PASSIVE"), ("active", "active")])
def test_importing_the_compiler_sets_a_passive_openmp_wait_policy_unless_given(given, expected):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    out = subprocess.run([sys.executable, "-c", "import os, compiler; print(os.environ['OMP_WAIT_POLICY'])"],
                         capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == expected


def test_a_user_function_whose_c_does_not_compile_is_named():
    import numpy as np
    from compiler import lower, user_function
    from compiler.errors import UserCodeError
    bad = user_function("bad_c", lambda a, b: a + b, "return x + ;")
    with pytest.raises(UserCodeError, match=r"(?s)the C body of user function bad_c does not compile .*"
                                            r"expected expression"):
        lower("a[i] = bad_c(b[i], c[i])", functions={"bad_c": bad}, b=np.ones(3), c=np.ones(3))


def test_a_large_source_is_built_at_O1_unless_the_user_chose_the_flags(monkeypatch):
    monkeypatch.delenv("SPARSESCOPE_CFLAGS", raising=False)
    monkeypatch.delenv("SPARSESCOPE_OPT", raising=False)
    large = "x" * (build.LARGE_SOURCE + 1)
    for defaults in (build.DEFAULT_FLAGS, build.DEFAULT_FLAGS + build.GCC_FLAGS):
        assert build.sized_flags(defaults, SOURCE) == defaults
        got = build.sized_flags(defaults, large)
        assert got[0] == "-O1" and got[1:] == defaults[1:]
    assert build.sized_flags(("-O3", "-fPIC", "-shared"), large) == ("-O3", "-fPIC", "-shared")   # given
    monkeypatch.setenv("SPARSESCOPE_CFLAGS", " ".join(build.DEFAULT_FLAGS))
    assert build.sized_flags(build.DEFAULT_FLAGS, large) == build.DEFAULT_FLAGS                   # chosen


def test_a_checked_build_is_compiled_at_O0_and_says_so(tmp_path, monkeypatch):
    """A checked kernel is a debugging build: -O0 (a third of -O3's compile time), noted in its trace;
    the unchecked kernel of the same program keeps -O3, and flags the user chose are kept."""
    import numpy as np

    import compiler as ss
    from compiler.backend import kernel

    monkeypatch.delenv("SPARSESCOPE_CFLAGS", raising=False)
    monkeypatch.delenv("SPARSESCOPE_OPT", raising=False)
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    assert build.sized_flags(build.DEFAULT_FLAGS, SOURCE, checked=True)[0] == "-O0"
    assert build.sized_flags(build.DEFAULT_FLAGS, SOURCE)[0] == "-O3"
    assert build.sized_flags(("-O3", "-fPIC", "-shared"), SOURCE, checked=True)[0] == "-O3"   # given
    kernel.clear_memory_cache()
    A = ss.Tensor.from_numpy(np.array([[1.0, 0.0], [2.0, 3.0]]), "csr")
    notes = {}
    for checked in (False, True):
        trace = ss.Trace()
        k = ss.lower("y[i] = A[i, j] * x[j]", A=A, x=np.ones(2), trace=trace, checked=checked)
        notes[checked] = next(s.note for s in trace.steps if s.stage == "compile")
        np.testing.assert_array_equal(k(A=A, x=np.ones(2)).to_numpy(), [1.0, 5.0])
    assert "at -O0, as a checked build" in notes[True] and "-O0" not in notes[False]
    monkeypatch.setenv("SPARSESCOPE_CFLAGS", " ".join(build.DEFAULT_FLAGS))
    assert build.sized_flags(build.DEFAULT_FLAGS, SOURCE, checked=True) == build.DEFAULT_FLAGS   # chosen
    kernel.clear_memory_cache()


def test_a_kernel_past_the_large_source_size_says_so_in_its_trace(tmp_path, monkeypatch):
    import numpy as np

    import compiler as ss
    from compiler.backend import kernel

    monkeypatch.delenv("SPARSESCOPE_CFLAGS", raising=False)
    monkeypatch.delenv("SPARSESCOPE_OPT", raising=False)
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build, "LARGE_SOURCE", 100)   # (SpMV's C is longer)
    kernel.clear_memory_cache()
    trace = ss.Trace()
    A = ss.Tensor.from_numpy(np.array([[1.0, 0.0], [2.0, 3.0]]), "csr")
    k = ss.lower("y[i] = A[i, j] * x[j]", A=A, x=np.ones(2), trace=trace)
    note = next(s.note for s in trace.steps if s.stage == "compile")
    assert "at -O1, as its C is" in note and "SPARSESCOPE_CFLAGS" in note
    np.testing.assert_array_equal(k(A=A, x=np.ones(2)).to_numpy(), [1.0, 5.0])
    kernel.clear_memory_cache()


def test_the_optimization_of_default_builds_is_chosen_by_SPARSESCOPE_OPT(tmp_path, monkeypatch):
    """$SPARSESCOPE_OPT chooses the level (and -f options) of default builds, never raises a large build
    past -O1, leaves checked builds at -O0 and flags the user chose alone, says so in the trace, and keys
    the caches apart."""
    import numpy as np

    import compiler as ss
    from compiler.backend import kernel

    monkeypatch.delenv("SPARSESCOPE_CFLAGS", raising=False)
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    large = "x" * (build.LARGE_SOURCE + 1)
    for level in build.OPT_LEVELS:
        monkeypatch.setenv("SPARSESCOPE_OPT", level)
        assert build.sized_flags(build.DEFAULT_FLAGS, SOURCE)[0] == level
        assert build.sized_flags(build.DEFAULT_FLAGS, SOURCE, checked=True)[0] == "-O0"
        assert build.sized_flags(build.DEFAULT_FLAGS, large)[0] == ("-O0" if level == "-O0" else "-O1")
        assert build.sized_flags(("-O3", "-fPIC", "-shared"), SOURCE) == ("-O3", "-fPIC", "-shared")   # given
    monkeypatch.setenv("SPARSESCOPE_OPT", "-O1 -ftree-vectorize")
    got = build.sized_flags(build.DEFAULT_FLAGS, SOURCE)
    assert got[:2] == ("-O1", "-ftree-vectorize") and got[2:] == build.DEFAULT_FLAGS[1:]
    for bad in ("fast", "-O2 -g", "-ftree-vectorize"):
        monkeypatch.setenv("SPARSESCOPE_OPT", bad)
        with pytest.raises(ValueError, match=r"SPARSESCOPE_OPT must be an optimization level \(-O0, -O1, -Os, "
                                             r"-O2, -O3\) and then any -f options, not"):
            build.sized_flags(build.DEFAULT_FLAGS, SOURCE)
    A = ss.Tensor.from_numpy(np.array([[1.0, 0.0], [2.0, 3.0]]), "csr")
    notes, libraries = {}, set()
    for opt in ("-O3", "-O2", "-O1 -ftree-vectorize"):
        monkeypatch.setenv("SPARSESCOPE_OPT", opt)
        trace = ss.Trace()
        k = ss.lower("y[i] = A[i, j] * x[j]", A=A, x=np.ones(2), trace=trace)
        notes[opt] = next(s.note for s in trace.steps if s.stage == "compile")
        libraries.add(notes[opt].rsplit(": ", 1)[1])
        np.testing.assert_array_equal(k(A=A, x=np.ones(2)).to_numpy(), [1.0, 5.0])
    assert "SPARSESCOPE_OPT" not in notes["-O3"] and "compiled" in notes["-O3"]
    assert "compiled at -O2, as SPARSESCOPE_OPT chooses" in notes["-O2"]
    assert "compiled at -O1 -ftree-vectorize, as SPARSESCOPE_OPT chooses" in notes["-O1 -ftree-vectorize"]
    assert len(libraries) == 3   # three builds, none taken from another's cache
    kernel.clear_memory_cache()


def test_sanitize_adds_its_flags_to_any_chosen_and_keys_the_library_apart(monkeypatch):
    from compiler.backend import sanitize
    monkeypatch.delenv("SPARSESCOPE_CFLAGS", raising=False)
    monkeypatch.delenv("SPARSESCOPE_SANITIZE", raising=False)
    monkeypatch.delenv("SPARSESCOPE_OPT", raising=False)
    plain = build.compiler_flags()
    monkeypatch.setenv("SPARSESCOPE_SANITIZE", "address")
    flags = build.compiler_flags()
    assert flags == plain + sanitize.SANITIZERS["address"]
    assert build.compiler_flags(("-O0", "-fPIC", "-shared")) == ("-O0", "-fPIC", "-shared") + sanitize.SANITIZERS["address"]
    cc = build.compiler_command()
    assert build.library_key(SOURCE, flags, cc) != build.library_key(SOURCE, plain, cc)
    large = "x" * (build.LARGE_SOURCE + 1)
    assert build.sized_flags(flags, large) == ("-O1",) + flags[1:]       # still -O1 when large
    monkeypatch.setenv("SPARSESCOPE_SANITIZE", "memory")
    with pytest.raises(UsageError, match="SPARSESCOPE_SANITIZE='memory' is not a sanitizer .* use 'address'"):
        build.compiler_flags()


def test_a_sanitized_kernel_is_not_loaded_into_a_process_without_the_runtime(tmp_path, monkeypatch):
    # loading it would make the sanitizer's runtime end the process ("ASan runtime does not come first")
    from compiler.backend import sanitize
    if sanitize.runtime_loaded():
        pytest.skip("this process has the AddressSanitizer runtime")
    if sanitize.runtime_library(build.compiler_command()) is None:
        pytest.skip("the C compiler has no AddressSanitizer runtime")
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SPARSESCOPE_SANITIZE", "address")
    path, _ = build.build_library(SOURCE, "answer")
    with pytest.raises(UsageError, match=r"kernel answer is built with AddressSanitizer .* LD_PRELOAD="):
        build.load_library(path, "int answer(void);")


def test_the_c_compiler_runs_without_a_preloaded_sanitizer_runtime():
    from compiler.backend.sanitize import compiler_environ
    assert compiler_environ({"PATH": "/bin"}) is None
    env = compiler_environ({"PATH": "/bin", "LD_PRELOAD": "/usr/lib/libasan.so.8 /opt/libfoo.so"})
    assert env == {"PATH": "/bin", "LD_PRELOAD": "/opt/libfoo.so"}
    assert compiler_environ({"LD_PRELOAD": "/usr/lib/libasan.so.8"}) == {}


def spy_commands(monkeypatch) -> list[list[str]]:
    commands = []
    real = subprocess.run

    def spy(cmd, *a, **k):
        commands.append(cmd)
        return real(cmd, *a, **k)
    monkeypatch.setattr(build.subprocess, "run", spy)
    return commands


MATH = textwrap.dedent("""\
    #include <math.h>
    #include <stdlib.h>
    #include <string.h>
    double hyp(double a, double b) {
        double *t = malloc(2 * sizeof *t);
        if (!t) return -1.0;
        memset(t, 0, 2 * sizeof *t);
        t[0] = a; t[1] = b;
        double r = sqrt(t[0] * t[0] + t[1] * t[1]) + exp(0.0) - 1.0;
        free(t);
        return r;
    }
    """)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the light link is Linux's")
def test_a_kernel_is_linked_without_the_c_library_and_takes_its_symbols_from_the_process(tmp_path, monkeypatch):
    """libc and libm come from the loading process (reading them took ld a third of a small
    build); the library still calls malloc, memset, sqrt and exp."""
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    commands = spy_commands(monkeypatch)
    path, _ = build.build_library(MATH, "hyp")
    compiles = [c for c in commands if "-o" in c]
    assert len(compiles) == 1 and list(build.LIGHT_LINK) == compiles[0][-2:] and "-lm" not in compiles[0]
    ffi, lib = build.load_library(path, "double hyp(double a, double b);")
    assert lib.hyp(3.0, 4.0) == 5.0
    if subprocess.run(["which", "readelf"], capture_output=True).returncode == 0:
        dynamic = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True).stdout
        assert "libc.so" not in dynamic and "libm.so" not in dynamic, dynamic


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the light link is Linux's")
def test_a_library_needing_a_symbol_the_process_lacks_is_linked_in_full(tmp_path, monkeypatch):
    """atexit is in libc_nonshared.a, not in the process: lightly linked, the library would not
    load, so it is linked again in full, and loads."""
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    commands = spy_commands(monkeypatch)
    source = "#include <stdlib.h>\nstatic void bye(void) {}\nint hook(void) { return atexit(bye) == 0 ? 7 : -1; }\n"
    path, _ = build.build_library(source, "hook")
    compiles = [c for c in commands if "-o" in c]
    assert [c[-2:] == list(build.LIGHT_LINK) for c in compiles] == [True, False], compiles
    assert "-lm" in compiles[1]
    ffi, lib = build.load_library(path, "int hook(void);")
    assert lib.hook() == 7


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the light link is Linux's")
def test_a_compiler_that_cannot_link_lightly_links_in_full_from_then_on(tmp_path, monkeypatch):
    """(a clang without libgcc, say): the full link's library is kept, and later builds skip the
    light link."""
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build, "LIGHT_LINK", ("-nostdlib", "-lsparsescope_no_such_library"))
    monkeypatch.setattr(build, "_light_link_failed", set())
    commands = spy_commands(monkeypatch)
    path, _ = build.build_library(SOURCE, "answer")
    assert build.load_library(path, "int answer(void);")[1].answer() == 42
    build.build_library(SOURCE.replace("42", "43"), "answer")
    links = [c[-1] for c in commands if "-o" in c]
    assert links == ["-lsparsescope_no_such_library", "-lm", "-lm"], links


def test_a_c_error_is_reported_once_as_the_full_build_gives_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    with pytest.raises(CompileError, match="rejected kernel broken"):
        build.build_library("int broken(void) { return }\n", "broken")
    assert not [p for p in (tmp_path / "kernels").iterdir()]   # nothing half-built is kept


C_TYPES = ["double", "float", "double _Complex", "float _Complex", "int64_t", "int32_t", "int16_t", "int8_t",
           "uint64_t", "uint32_t", "uint16_t", "uint8_t", "bool", "unsigned long long"]


@pytest.mark.parametrize("t", C_TYPES)
def test_a_function_pointer_type_is_the_one_cffi_parses(t):
    """A kernel's function type put together from its parts' types is the type cffi's parser makes of
    its text (each parameter kind a kernel's signature has: scalar, input, output, growable)."""
    import cffi
    parsed = cffi.FFI()
    for spec in [f"int (*)({t})", f"int (*)(int64_t, const {t} *, {t} *, {t} **, int64_t *)",
                 f"{t} (*)(const {t} *, int64_t)", "int (*)(void)", "void (*)(void *)"]:
        assert build.c_function_typeof(spec) is parsed.typeof(spec), spec
    assert build.c_function_typeof(f"{t} *") is parsed.typeof(f"{t} *")   # (not a function pointer: parsed)



@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the light link is Linux's")
@pytest.mark.parametrize("source, symbol, opened", [
    # (opened by its name as built, before the rename that completes the cache's entry)
    ("int answer(void) { return 42; }\n", "answer", ["built"]),
    # (lightly linked, it does not load: linked in full, and loaded once, by its own path)
    ("#include <stdlib.h>\nstatic void bye(void) {}\nint answer(void) { return atexit(bye) == 0 ? 42 : -1; }\n",
     "answer", ["built", "cached"]),
])
def test_a_built_library_is_opened_once_by_its_check_and_its_load(tmp_path, monkeypatch, source, symbol, opened):
    """The load that checks a lightly linked library binds every symbol is the kernel's own load: each dlopen
    walks every library the process has loaded, and a second one of the same file cost as much as the first."""
    import ctypes
    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", str(tmp_path))
    paths = []
    real = ctypes.CDLL.__init__

    def counted(self, name, *args, **kwargs):
        paths.append(name)
        real(self, name, *args, **kwargs)
    monkeypatch.setattr(ctypes.CDLL, "__init__", counted)
    path, cached = build.build_library(source, symbol)
    ffi, lib = build.load_functions(path, {symbol: "int (*)(void)"})
    assert not cached and lib.answer() == 42
    assert ["cached" if p == str(path) else "built" for p in paths] == opened, paths
    # loaded from the disk cache in another process's place: opened by its own path
    build._loaded.clear()
    ffi, lib = build.load_functions(path, {symbol: "int (*)(void)"})
    assert lib.answer() == 42 and paths[-1] == str(path)
