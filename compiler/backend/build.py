"""Compile C to a shared library with the system C compiler and load it with cffi.

The compiler runs directly (``$CC``, else ``cc``) with :data:`DEFAULT_FLAGS`
(override with ``$SPARSESCOPE_CFLAGS`` or the ``flags`` argument), and the
library is loaded in cffi's ABI mode (``FFI.cdef`` + ``dlopen``): much faster
than cffi's setuptools-based API mode.

Libraries are cached on disk in ``platformdirs.user_cache_dir("sparsescope")``
(or ``$SPARSESCOPE_CACHE_DIR``), named by a sha256 of the source, the flags,
the compiler's identity (its ``--version``, asked once per process) and the
platform and CPU (``-march=native`` code is not portable). Files are written
to a temporary name and renamed, so a parallel process never loads a
half-written library. ``$SPARSESCOPE_SANITIZE=address`` adds AddressSanitizer's
flags to whichever are chosen (see :mod:`compiler.backend.sanitize`).

>>> compiler_command({"CC": "clang -m64"})
['clang', '-m64']
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from ..errors import CompileError, CompilerNotFoundError, UserCodeError
from .quick_build import PRELUDE, quick_applies, quick_build, quick_compiler, quick_identity, quick_takes
from .sanitize import check_runtime, compiler_environ, sanitize_flags

# -fwrapv: signed overflow wraps, as numpy integers do, instead of being undefined.
DEFAULT_FLAGS = ("-O3", "-march=native", "-fwrapv", "-fPIC", "-shared", "-std=c11")
#: added to the defaults for GCC: it vectorizes only the loops marked ``#pragma omp simd``
#: (by :mod:`compiler.imperative.vectorize`), not gathers it would choose itself, and those
#: only where its cost model finds the lanes pay (a short count loop runs scalar); loops
#: start on 32-byte boundaries (SpMV's inner loop straddling one ran 10% slower); vectors of 256
#: bits where the CPU has 512 (-march=native on an AVX-512 EPYC VM made the COO vstack's block copy,
#: with its masked count of dropped values, 16x slower: 15.2 against 0.95 ms for 1M entries)
GCC_FLAGS = ("-fvect-cost-model=very-cheap", "-fsimd-cost-model=dynamic", "-falign-loops=32",
             "-mprefer-vector-width=256")

_INSTALL_HINT = (
    "sparsescope needs a C compiler to build kernels. Install gcc or clang "
    "(Debian/Ubuntu: `apt-get install gcc`; Fedora: `dnf install gcc`; "
    "macOS: `xcode-select --install`; conda: `conda install -c conda-forge c-compiler`), "
    "or set the CC environment variable to a working compiler."
)

_identity_lock = threading.Lock()
_identities: dict[tuple[str, ...], str] = {}
_platform_id: str | None = None


def compiler_command(environ=None) -> list[str]:
    """The compiler command: ``$CC`` split like a shell would, else ``cc``."""
    env = os.environ if environ is None else environ
    return shlex.split(env.get("CC") or "cc")


def compiler_flags(flags=None) -> tuple[str, ...]:
    """``flags`` if given, else ``$SPARSESCOPE_CFLAGS``, else :data:`DEFAULT_FLAGS`
    (and :data:`GCC_FLAGS` when the compiler is GCC); then the sanitizer's flags
    (``$SPARSESCOPE_SANITIZE``), which so also key the caches."""
    if flags is not None:
        chosen = tuple(flags)
    elif os.environ.get("SPARSESCOPE_CFLAGS"):
        chosen = tuple(shlex.split(os.environ["SPARSESCOPE_CFLAGS"]))
    else:
        chosen = DEFAULT_FLAGS + GCC_FLAGS if is_gcc() else DEFAULT_FLAGS
    return chosen + tuple(f for f in sanitize_flags() if f not in chosen)


#: a C source longer than this (in characters) is compiled at -O1 instead of the default -O3:
#: GCC's time at -O2 and -O3 grows much faster than the source on functions this large (a 384 KB
#: lattice kernel took 90 s at -O3 and 7 s at -O1; a 1.7 MB looplet kernel, 18 s at -O1 and minutes at -O3)
LARGE_SOURCE = 256 * 1024


#: the optimization levels ``$SPARSESCOPE_OPT`` may choose, fastest to build first
OPT_LEVELS = ("-O0", "-O1", "-Os", "-O2", "-O3")


def opt_flags(environ=None) -> tuple[str, ...]:
    """The optimization flags of default builds: ``$SPARSESCOPE_OPT`` if set (a level, then any ``-f``
    options), else ``-O3``. A lower level builds faster and runs (somewhat) slower: the test suite, which
    builds thousands of kernels and times none, uses ``-O1 -ftree-vectorize``, which still vectorizes the
    loops marked ``omp simd`` as -O3 does.

    >>> opt_flags({"SPARSESCOPE_OPT": "-O1 -ftree-vectorize"})
    ('-O1', '-ftree-vectorize')
    """
    env = os.environ if environ is None else environ
    chosen = tuple(shlex.split(env.get("SPARSESCOPE_OPT", ""))) or ("-O3",)
    if chosen[0] not in OPT_LEVELS or not all(f.startswith("-f") for f in chosen[1:]):
        raise ValueError(f"SPARSESCOPE_OPT must be an optimization level ({', '.join(OPT_LEVELS)}) and then "
                         f"any -f options, not {env.get('SPARSESCOPE_OPT')!r}")
    return chosen


def sized_flags(flags: tuple[str, ...], source: str, checked: bool = False) -> tuple[str, ...]:
    """``flags`` for compiling ``source``: the default flags (with or without the sanitizer's) at
    :func:`opt_flags`; at -O0 for a checked build (a debugging build: every access bounds-checked, so
    optimizing buys it little and costs most of its compile time), and at -O1 at most when the source is
    past :data:`LARGE_SOURCE`. Flags the user chose (``$SPARSESCOPE_CFLAGS``) are kept as they are.

    >>> sized_flags(DEFAULT_FLAGS, "x" * (LARGE_SOURCE + 1))[0] in ("-O0", "-O1")   # (-O0 if $SPARSESCOPE_OPT asks)
    True
    >>> sized_flags(DEFAULT_FLAGS, "int k(void) { return 0; }", checked=True)[0]
    '-O0'
    """
    if os.environ.get("SPARSESCOPE_CFLAGS"):
        return tuple(flags)
    chosen = tuple(f for f in flags if f not in sanitize_flags())   # the sanitizer's are added to any
    if chosen not in (DEFAULT_FLAGS, DEFAULT_FLAGS + GCC_FLAGS):
        return tuple(flags)
    opt = opt_flags()
    if checked:
        opt = ("-O0",)
    elif len(source) > LARGE_SOURCE:
        opt = (min(opt[0], "-O1", key=OPT_LEVELS.index), *opt[1:])
    out = []
    for f in flags:
        out += opt if f == "-O3" else [f]
    return tuple(out)


def flags_note(flags: tuple[str, ...], built_with: tuple[str, ...], source: str, checked: bool) -> str:
    """Why a kernel was built with ``built_with`` rather than ``flags`` ("" when it was not), for the
    trace's compile step.

    >>> flags_note(DEFAULT_FLAGS, sized_flags(DEFAULT_FLAGS, "int k;", checked=True), "int k;", True)[:30]
    ' at -O0, as a checked build is'
    """
    if built_with == flags:
        return ""
    if checked:
        return (" at -O0, as a checked build is for finding a bad access, not for speed "
                "(SPARSESCOPE_CFLAGS chooses other flags)")
    if len(source) > LARGE_SOURCE and "-O1" in built_with and "-O1" not in flags:
        return (f" at -O1, as its C is {len(source) // 1024} KB (past {LARGE_SOURCE // 1024} KB, where -O3's "
                f"time grows much faster than the source; SPARSESCOPE_CFLAGS chooses other flags)")
    return f" at {' '.join(opt_flags())}, as SPARSESCOPE_OPT chooses"


def is_gcc(cc: list[str] | None = None) -> bool:
    """Whether the compiler is GCC (``cc`` often is), from its ``--version``."""
    ident = compiler_identity(cc)
    return "Free Software Foundation" in ident and "clang" not in ident.lower()


def cache_dir() -> Path:
    """Where compiled kernels are kept (created on demand)."""
    env = os.environ.get("SPARSESCOPE_CACHE_DIR")
    if env:
        path = Path(env)
    else:
        import platformdirs
        path = Path(platformdirs.user_cache_dir("sparsescope"))
    path = path / "kernels"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _not_found(cc: list[str], detail: str = "") -> CompilerNotFoundError:
    origin = "from $CC" if os.environ.get("CC") else "the default"
    extra = f" ({detail})" if detail else ""
    return CompilerNotFoundError(f"no working C compiler: could not run {shlex.join(cc)!r} "
                                 f"({origin}){extra}. {_INSTALL_HINT}")


def compiler_identity(cc: list[str] | None = None) -> str:
    """The compiler's ``--version`` output, computed once per process and command."""
    cc = compiler_command() if cc is None else cc
    key = tuple(cc)
    with _identity_lock:
        ident = _identities.get(key)
        if ident is None:
            try:
                r = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=60,
                                   env=compiler_environ())
            except (FileNotFoundError, PermissionError, NotADirectoryError) as e:
                raise _not_found(cc, e.strerror or type(e).__name__) from None
            if r.returncode != 0:
                raise _not_found(cc, f"`--version` failed: {(r.stderr or r.stdout).strip()[:200]}")
            ident = _identities[key] = r.stdout.strip()
    return ident


def _platform_identity() -> str:
    global _platform_id
    if _platform_id is None:
        parts = [sys.platform, platform.machine(), platform.processor()]
        try:
            # The CPU model and feature flags decide what -march=native emits.
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith(("model name", "flags", "Features")):
                        parts.append(line.strip())
                        if len(parts) >= 5:
                            break
        except OSError:
            pass
        _platform_id = "\n".join(parts)
    return _platform_id


def library_key(source: str, flags: tuple[str, ...], cc: list[str]) -> str:
    """The sha256 naming a compiled library."""
    h = hashlib.sha256()
    for part in (source, "\0".join(flags), "\0".join(cc), compiler_identity(cc), _platform_identity()):
        h.update(part.encode())
        h.update(b"\x00\x01")
    return h.hexdigest()


_HELPER = re.compile(r"In function .(ss_(\w+?)((?:_(?:bool|u?int\d+|float\d+))+)).")


def _user_function_at_fault(message: str) -> str | None:
    """The user function whose C helper (``ss_<name>_<dtypes>``) holds the compiler's errors, or None.

    >>> _user_function_at_fault("k.c: In function ‘ss_badc_float64’:\\nk.c:7:16: error: expected expression")
    'badc'
    """
    faults = _HELPER.findall(message)
    names = {name for _, name, _ in faults if name != "pow"}   # pow's integer helper is built in
    return next(iter(names)) if len(names) == 1 and len(faults) == message.count("In function") else None


def _numbered(source: str) -> str:
    lines = source.splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{i:>{width}} | {line}" for i, line in enumerate(lines, 1))


def _suffix() -> str:
    return ".dll" if sys.platform == "win32" else (".dylib" if sys.platform == "darwin" else ".so")


_openmp: dict[tuple[str, ...], str | None] = {}
OPENMP_FLAG = "-fopenmp"
#: the OpenMP wait policy the runtime asks for unless ``$OMP_WAIT_POLICY`` is set (see
#: :func:`default_wait_policy`)
WAIT_POLICY = "PASSIVE"


def default_wait_policy(environ=os.environ) -> str:
    """Set ``OMP_WAIT_POLICY`` to :data:`WAIT_POLICY` unless it is set; return the policy in force.

    Kernels are short parallel loops between Python calls. With OpenMP's default
    (threads spin for a while after a loop ends), the spinning threads keep their cores
    while the Python thread runs on, and every page fault and ``munmap`` of the Python
    thread then interrupts them: parallel SpGEMM (2 threads) ran 1.12-1.15x scipy's
    time with spinning threads and 0.82x with sleeping ones. The OpenMP runtime reads
    the variable once, when it is loaded: this runs before any kernel is, so an
    explicit ``OMP_WAIT_POLICY`` always wins.

    >>> env = {"OMP_WAIT_POLICY": "active"}
    >>> default_wait_policy(env), default_wait_policy({})
    ('active', 'PASSIVE')
    """
    return environ.setdefault("OMP_WAIT_POLICY", WAIT_POLICY)


default_wait_policy()
#: honours ``#pragma omp simd`` only: no OpenMP runtime is linked (gcc and clang)
OPENMP_SIMD_FLAG = "-fopenmp-simd"


def openmp_support(cc: list[str] | None = None) -> str | None:
    """None if the compiler builds OpenMP code with :data:`OPENMP_FLAG`, else why not (asked once)."""
    cc = compiler_command() if cc is None else cc
    key = tuple(cc)
    with _identity_lock:
        if key in _openmp:
            return _openmp[key]
    probe = "#include <omp.h>\nint probe(void) { int n = 0;\n#pragma omp parallel reduction(+:n)\nn += 1;\nreturn n; }\n"
    with tempfile.TemporaryDirectory() as d:
        c_path = Path(d) / "probe.c"
        c_path.write_text(probe)
        try:
            r = subprocess.run([*cc, OPENMP_FLAG, "-fPIC", "-shared", "-o", str(Path(d) / f"probe{_suffix()}"),
                                str(c_path)], capture_output=True, text=True, timeout=120, env=compiler_environ())
            why = None if r.returncode == 0 else (r.stderr or r.stdout).strip()[:300]
        except (FileNotFoundError, PermissionError, NotADirectoryError) as e:
            why = e.strerror or type(e).__name__
    with _identity_lock:
        _openmp[key] = why
    return why


def build_library(source: str, name: str = "kernel", flags=None) -> tuple[Path, bool]:
    """Compile ``source`` into a shared library; return its path and whether it was cached.

    A source with ``#pragma omp`` is built with OpenMP (:data:`OPENMP_FLAG`), and only
    such a source; a compiler without OpenMP support gives a clear :class:`CompileError`.
    A source whose only OpenMP pragmas are ``omp simd`` needs no runtime and gets
    :data:`OPENMP_SIMD_FLAG`.
    """
    cc = compiler_command()
    flags = compiler_flags(flags)
    pragmas = [line.strip() for line in source.splitlines() if line.strip().startswith("#pragma omp")]
    if pragmas and all(p.startswith("#pragma omp simd") for p in pragmas):
        if OPENMP_FLAG not in flags and OPENMP_SIMD_FLAG not in flags:
            flags = (*flags, OPENMP_SIMD_FLAG)
    elif pragmas and OPENMP_FLAG not in flags:
        why = openmp_support(cc)
        if why is not None:
            raise CompileError(f"kernel {name} is parallelized with OpenMP, but the C compiler "
                               f"({shlex.join(cc)}) cannot build OpenMP code with {OPENMP_FLAG}: {why}. "
                               f"Install OpenMP support (gcc has it; clang needs libomp) or remove "
                               f"the parallelize schedule")
        flags = (*flags, OPENMP_FLAG)
    # (a library the quick compiler may build is named for it too: each compiler's libraries apart)
    quick = quick_compiler() if quick_applies(flags) and quick_takes(source) else None
    key = library_key(source, flags, cc if quick is None else [*cc, "quick:", *quick, quick_identity(quick), PRELUDE])
    directory = cache_dir()
    path = directory / f"{name}-{key[:40]}{_suffix()}"
    if path.exists():
        return path, True
    c_path = path.with_suffix(".c")
    fd, tmp_c = tempfile.mkstemp(prefix=f".{name}-", suffix=".c", dir=directory)
    with os.fdopen(fd, "w") as f:
        f.write(source)
    fd, tmp_lib = tempfile.mkstemp(prefix=f".{name}-", suffix=_suffix(), dir=directory)
    os.close(fd)
    libs = [] if sys.platform in ("darwin", "win32") else ["-lm"]
    # debug information names the C file the cache keeps, not the temporary one
    debug = [f"-fdebug-prefix-map={tmp_c}={c_path}"] if any(f.startswith("-g") for f in flags) else []

    def compile_and_link(link):
        try:
            return subprocess.run([*cc, *flags, *debug, "-o", tmp_lib, tmp_c, *link],
                                  capture_output=True, text=True, timeout=600, env=compiler_environ())
        except (FileNotFoundError, PermissionError, NotADirectoryError) as e:
            raise _not_found(cc, e.strerror or type(e).__name__) from None

    try:
        r = None
        opened: list = []   # (the handle of the check that the library loads: the kernel's own load takes it)
        loads = functools.partial(_loads, opened=opened)
        if quick is not None and quick_build(quick, tmp_c, tmp_lib, directory, loads, source):
            r = subprocess.CompletedProcess(quick, 0)
            _built_by[str(path)] = quick
        elif _light_link_applies(cc, flags):
            r = compile_and_link(LIGHT_LINK)
            if r.returncode == 0 and not loads(tmp_lib):
                r = None        # it needs a symbol the process does not have: link it in full
            elif r.returncode != 0:
                r = compile_and_link(libs)      # (a C error is reported as the full build gives it)
                if r.returncode == 0:
                    _light_link_failed.add(tuple(cc))   # this compiler cannot link that way (no libgcc)
        if r is None:
            r = compile_and_link(libs)
        if r.returncode != 0:
            message = (r.stderr or r.stdout).strip().replace(tmp_c, f"{name}.c")
            user = _user_function_at_fault(message)
            if user is not None:
                raise UserCodeError(f"the C body of user function {user} does not compile (the C compiler "
                                    f"{shlex.join(cc)} says):\n{message}")
            raise CompileError(f"the C compiler ({shlex.join(cc)}) rejected kernel {name}:\n{message}\n\n"
                               f"source of {name}.c:\n{_numbered(source)}")
        # Keep the source next to the library for people reading the cache; rename last,
        # because the library's presence is what marks the entry complete.
        os.replace(tmp_c, c_path)
        os.replace(tmp_lib, path)
        if opened:
            _trial_loads[str(path)] = opened[-1]
    finally:
        for tmp in (tmp_c, tmp_lib):
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
    return path, False


#: the library path -> the quick compiler's command, for each library it built in this process
_built_by: dict[str, list[str]] = {}


def built_by(path) -> list[str] | None:
    """The quick compiler (:mod:`compiler.backend.quick_build`) that built the library at ``path``
    in this process, or None (the default compiler did, or a cache)."""
    return _built_by.get(str(path))


#: how a library is linked on Linux unless it needs a runtime (OpenMP, a sanitizer): without the C
#: library, whose symbols (``realloc``, ``sqrt``, ...) the loading process already has, and with
#: libgcc's helpers linked in. Reading libc.so and libm.so took ld more than a third of a small
#: kernel's build (0.037 of 0.098 s CPU; 0.011 s this way). A library that needs a symbol the process
#: lacks (``atexit`` lives in libc_nonshared.a) fails to load, and is linked in full instead.
LIGHT_LINK = ("-nostdlib", "-lgcc")
_light_link_failed: set[tuple[str, ...]] = set()


def _light_link_applies(cc: list[str], flags: tuple[str, ...]) -> bool:
    return (sys.platform.startswith("linux") and tuple(cc) not in _light_link_failed
            and OPENMP_FLAG not in flags and not any(f.startswith("-fsanitize") for f in flags))


def _loads(path: str, opened: list | None = None) -> bool:
    """Whether the library at ``path`` loads, every symbol bound. Loaded once, it stays: its handle goes on
    ``opened``, and build_library keeps it (:data:`_trial_loads`) for the kernel's own load of the same file,
    renamed, which then opens nothing. Each dlopen walks the list of every library the process has loaded, several times (glibc
    2.36: the file's name and its device and inode against each, then to the list's end), so with the
    thousands of kernels a long session (the test suite's worker) loads, a second open of each was as
    dear as the first: 0.15 ms at 1,000 libraries loaded, 1.2 ms at 5,000, measured."""
    import ctypes
    try:
        handle = ctypes.CDLL(path, mode=os.RTLD_NOW)
    except OSError:
        return False
    if opened is not None:
        opened.append(handle)
    return True


#: a library's final path -> the handle :func:`_loads` opened it by as it was built, until :func:`load_functions`
#: takes it
_trial_loads: dict = {}


_type_ffi = None
_type_lock = threading.Lock()


@functools.lru_cache(maxsize=None)
def c_typeof(spec: str):
    """The cffi type named by ``spec`` (``"double *"``, ``"int64_t[]"``), parsed once per process.

    cffi's types are the backend's, shared by every ``FFI``: one looked up here serves each kernel's
    library. A fresh ``FFI`` per kernel parsed each type name again with pycparser, about 1.7 ms a
    name, several names a kernel (the test suite loads thousands of kernels).

    >>> c_typeof("double *") is c_typeof("double *")
    True
    """
    global _type_ffi
    with _type_lock:
        if _type_ffi is None:
            import cffi
            _type_ffi = cffi.FFI()
        return _type_ffi.typeof(spec)


#: ``"int (*)(int64_t, const double *)"``: a function pointer's result and its parameters' types
_FUNCTION_POINTER = re.compile(r"([A-Za-z_][\w ]*?) ?\(\*\)\(([^()]*)\)")


@functools.lru_cache(maxsize=4096)
def c_function_typeof(spec: str):
    """The cffi type of the function pointer ``spec`` (``"int (*)(int64_t, const double *)"``), put
    together from its result's and parameters' types (each :func:`c_typeof`'s, parsed once per process).

    Each kernel's signature is a new text, which pycparser took about 0.6 ms to parse (0.07 ms put
    together): the suite loads thousands of kernels. cffi's backend makes one type of equal parts, so the type is the one
    ``ffi.typeof(spec)`` gives. A text of another shape is left to :func:`c_typeof`.

    >>> c_function_typeof("int (*)(int64_t, const double *, double **)") is c_typeof("int (*)(int64_t, double *, double **)")
    True
    >>> c_function_typeof("void (*)(void *)"), c_function_typeof("int (*)(void)")
    (<ctype 'void(*)(void *)'>, <ctype 'int(*)()'>)
    """
    m = _FUNCTION_POINTER.fullmatch(spec)
    if m is None:
        return c_typeof(spec)
    result, params = m.groups()
    returns = c_typeof(result)   # (makes the shared FFI)
    args = () if params.strip() in ("", "void") else tuple(c_typeof(a.strip()) for a in params.split(","))
    if any(a.kind == "array" for a in args):   # (a parameter of array type is a pointer: left to cffi's parser)
        return c_typeof(spec)
    backend = _type_ffi._backend
    return backend.new_function_type(args, returns, False, backend.FFI_DEFAULT_ABI)


_loaded: dict[tuple, tuple[object, object]] = {}


class LoadedFunctions:
    """A loaded library's functions, each an attribute (what ``ffi.dlopen`` gives, for the
    functions asked)."""

    def __init__(self, library, functions: dict):
        self.library = library   # (the loader's handle, kept while its functions are)
        self.__dict__.update(functions)


def load_functions(path: Path, types: dict[str, str]):
    """``(ffi, lib)`` for a compiled library: ``lib.name`` calls its function ``name`` of C type
    ``types[name]`` (a function pointer's, ``"int (*)(int64_t, double *)"``), ``ffi`` is the
    process's one (:func:`c_typeof`'s).

    Each function is looked up in the library by the dynamic loader and given its type, which is
    parsed once per process: a kernel's own ``cdef`` was parsed by pycparser on each load, more
    of a small kernel's load than the loading (the test suite loads thousands). Libraries are never
    unloaded, as with :func:`load_library`.

    >>> path, _ = build_library("int twice(long n, double *y) { y[0] = 2.0 * n; return 0; }", "twice_doc")
    >>> ffi, lib = load_functions(path, {"twice": "int (*)(long, double *)"})
    >>> y = ffi.new("double[1]"); lib.twice(21, y), y[0]
    (0, 42.0)
    """
    key = (str(path), tuple(types.items()))
    hit = _loaded.get(key)
    if hit is None:
        import ctypes
        check_runtime(Path(path).name.split("-")[0])
        library = _trial_loads.pop(str(path), None) or ctypes.CDLL(str(path), mode=os.RTLD_NOW)
        c_typeof("int")   # (makes the shared FFI)
        ffi = _type_ffi
        functions = {name: ffi.cast(c_function_typeof(spec), ctypes.cast(getattr(library, name), ctypes.c_void_p).value)
                     for name, spec in types.items()}
        hit = _loaded[key] = (ffi, LoadedFunctions(library, functions))
    return hit


def load_library(path: Path, cdef: str):
    """``(ffi, lib)`` for a compiled library, with ``cdef`` declaring its exports.

    Libraries are never unloaded: arrays returned by kernels free their memory
    through the library, so it must outlive them. With ``$SPARSESCOPE_SANITIZE`` set, a
    process without the sanitizer's runtime is refused (loading would end it).
    """
    key = (str(path), cdef)
    hit = _loaded.get(key)
    if hit is None:
        check_runtime(Path(path).name.split("-")[0])
        import cffi
        ffi = cffi.FFI()
        ffi.cdef(cdef)
        lib = ffi.dlopen(str(path))
        hit = _loaded[key] = (ffi, lib)
    return hit
