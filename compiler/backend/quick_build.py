"""A quick compiler for unoptimized builds: ``$SPARSESCOPE_QUICK_CC`` (the test suite sets ``tcc``).

The test suite builds thousands of kernels at ``-O0`` and times none: GCC spends about 65 ms on
each (starting its driver and ``cc1``, parsing the system headers, assembling, linking), and
that was a quarter of the suite's CPU time. The Tiny C Compiler builds the same C, unoptimized,
in a tenth of that. Given ``$SPARSESCOPE_QUICK_CC``, a build at ``-O0`` that needs no runtime
(no OpenMP threads, no sanitizer) and no debug information is tried with it first; where it
refuses the C, or the library it makes does not load with every symbol bound, the default
compiler builds the kernel as it would have, so its messages are the ones users see. The
quick compiler's library is cached under a name of its own (its identity is in the key).

The kernels use two GCC builtins that TCC lacks; :data:`PRELUDE` gives them to TCC alone, in a
header included ahead of the kernel (the C source kept and shown is the kernel's own).

Most of TCC's time on a kernel went to the system headers it includes: ``<math.h>`` alone opens some
80 files, after about 300 failed opens along the include path (4.2 of 8.6 ms CPU a kernel were the
kernel's system calls). The kernels include a few sets of them, so TCC preprocesses each set once per
process into one header (:func:`system_headers`: ``tcc -E -dD``, their declarations and macros, in
order), which the kernel's own build reads in their place, the kernel given on TCC's standard input.
A header that fails a kernel the system headers build is set aside for that set.

>>> quick_applies(("-O0", "-fwrapv", "-fPIC", "-shared"), {"SPARSESCOPE_QUICK_CC": "tcc"})
True
>>> quick_applies(("-O3", "-fPIC", "-shared"), {"SPARSESCOPE_QUICK_CC": "tcc"})
False
>>> quick_applies(("-O0", "-fopenmp"), {"SPARSESCOPE_QUICK_CC": "tcc"}), quick_applies(("-O0",), {})
(False, False)
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import threading
from pathlib import Path

ENV = "SPARSESCOPE_QUICK_CC"

#: what the kernels use of GCC's builtins, for a compiler without them (TCC): a prefetch is a hint
#: (nothing, unoptimized), and the trailing zeros of a nonzero word are counted bit by bit
PRELUDE = """\
#define __builtin_prefetch(...) ((void)0)
static inline int quick_ctzll(unsigned long long word)
{
    int zeros = 0;
    while (!(word & 1)) {
        word >>= 1;
        zeros++;
    }
    return zeros;
}
#define __builtin_ctzll quick_ctzll
"""

_lock = threading.Lock()
_answers: dict[tuple[tuple[str, ...], str], str | None] = {}
_prelude_paths: dict[str, Path] = {}


def quick_compiler(environ=None) -> list[str] | None:
    """``$SPARSESCOPE_QUICK_CC`` split as a shell would, if set and it runs (else None)."""
    env = os.environ if environ is None else environ
    text = env.get(ENV, "").strip()
    if not text:
        return None
    cc = shlex.split(text)
    return cc if quick_identity(cc) is not None else None


def quick_identity(cc: list[str]) -> str | None:
    """The quick compiler's ``-v`` output (asked once per process), None where it does not run."""
    return _asked(cc, "-v")


def _asked(cc: list[str], option: str) -> str | None:
    """What ``cc option`` prints (stdout and stderr), asked once per process; None where it fails."""
    key = (tuple(cc), option)
    with _lock:
        if key not in _answers:
            try:
                r = subprocess.run([*cc, option], capture_output=True, text=True, timeout=60)
                _answers[key] = (r.stdout + r.stderr).strip() if r.returncode == 0 else None
            except (OSError, subprocess.SubprocessError):
                _answers[key] = None
        return _answers[key]


def quick_applies(flags: tuple[str, ...], environ=None) -> bool:
    """Whether a build with ``flags`` is tried with the quick compiler first: one at ``-O0``, with
    no OpenMP runtime (``-fopenmp-simd`` only marks loops), no sanitizer and no debug information,
    on Linux, with ``$SPARSESCOPE_QUICK_CC`` set."""
    env = os.environ if environ is None else environ
    return (bool(env.get(ENV, "").strip()) and os.name == "posix" and "-O0" in flags
            and not any(f == "-fopenmp" or f.startswith(("-fsanitize", "-g")) for f in flags))


def quick_takes(source: str) -> bool:
    """Whether the quick compiler is tried on ``source``: not on C with complex values (TCC has no
    ``_Complex``: it refused each such kernel, about 12 ms apiece, before the default compiler built it).

    >>> quick_takes("#include <stdint.h>\\nint f(void);"), quick_takes("#include <complex.h>\\n")
    (True, False)
    """
    return "#include <complex.h>" not in source


def quick_build(cc: list[str], c_path: str, lib_path: str, directory: Path, loads=None,
                source: str | None = None) -> bool:
    """Build the C file ``c_path`` into the shared library ``lib_path`` with ``cc`` (TCC), the
    :data:`PRELUDE` included first; whether it did (warnings are refused: an implicit declaration
    is one, and would only fail when called) and, where ``loads`` is given, whether the library loads.

    Where ``loads`` (whether a library loads, every symbol bound) is given, the library is first linked
    lightly, as the default compiler's are (``build.LIGHT_LINK``): with TCC's runtime (``libtcc1.a``) alone,
    the C library's symbols bound where the kernel loads, in a process that has them. Linking against the
    C and math libraries' files was about 1.7 of a kernel's 5.7 ms. Where that library does not load (a
    symbol the process lacks), it is linked in full. Given the kernel's ``source`` (the file's text), its
    system headers are read preprocessed (:func:`system_headers`)."""
    prelude = _prelude(directory)
    includes, rest = _split_includes(source) if source is not None else ((), None)
    headers = system_headers(cc, directory, includes) if includes else None
    runtime = _runtime(cc) if loads is not None else None
    links = ([["-nostdlib", runtime]] if runtime is not None else []) + [["-lm"]]
    for link in links:
        r = None
        if headers is not None:   # (the kernel on standard input, its system headers preprocessed)
            r = _run([*cc, "-shared", "-Werror", "-include", str(prelude), "-include", str(headers),
                      "-o", lib_path, "-", *link], rest)
            if r is not None and r.returncode != 0:
                r = None
        if r is None:
            r = _run([*cc, "-shared", "-Werror", "-include", str(prelude), "-o", lib_path, c_path, *link])
            if r is None or r.returncode != 0:
                return False      # (a C error: the full link would refuse it too)
            if headers is not None:   # (the preprocessed headers failed C that the headers take)
                with _lock:
                    _headers[(tuple(cc), str(directory), includes)] = None
                headers = None
        if loads is None or loads(lib_path):
            return True
    return False


def _run(command: list[str], stdin: str | None = None):
    """The finished ``command`` (its input ``stdin``), or None where it did not run."""
    try:
        return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError):
        return None


def _split_includes(source: str) -> tuple[tuple[str, ...], str]:
    r"""The system headers ``source`` includes (its ``#include <...>`` lines, in order) and the source with
    those lines blank (its other lines where they were).

    >>> _split_includes("#include <math.h>\nint f(void);\n#include <stdint.h>\n")
    (('#include <math.h>', '#include <stdint.h>'), '\nint f(void);\n\n')
    """
    lines = source.split("\n")
    includes = tuple(line for line in lines if line.startswith("#include <") and line.rstrip().endswith(">"))
    kept = set(includes)
    return includes, "\n".join("" if line in kept else line for line in lines)


#: ``(compiler, cache directory, include lines) ->`` the preprocessed header of those system headers in
#: that directory, or None where TCC could not make one or one failed a kernel
_headers: dict = {}


def system_headers(cc: list[str], directory: Path, includes: tuple[str, ...]) -> Path | None:
    """One header in the cache ``directory`` holding what the ``includes`` lines (``#include <math.h>``, ...)
    declare and define, as ``cc`` (TCC) preprocessed them in this process, or None where it could not.

    ``tcc -E -dD`` writes the headers' declarations with their macros' definitions in place. Left out: the
    definitions TCC makes itself before any file (redefined, they would be errors), and its spelling of the
    token-pasting operator (``##``, which TCC 0.9.27 writes as ``<a6>``) mended. Named by its content: every
    process that makes the same header shares the file."""
    key = (tuple(cc), str(directory), includes)
    with _lock:
        if key in _headers:
            return _headers[key]
    made = _run([*cc, "-E", "-dD", "-"], "\n".join(includes) + "\n")
    path = None
    if made is not None and made.returncode == 0:
        text = _own_definitions(made.stdout)
        if text is not None:
            digest = hashlib.sha256(text.encode()).hexdigest()[:24]
            path = directory / f"quick_headers-{digest}.h"
            if not path.exists():
                tmp = directory / f".quick_headers-{os.getpid()}-{threading.get_ident()}.h"
                tmp.write_text(text)
                os.replace(tmp, path)
    with _lock:
        _headers[key] = path
    return path


def _own_definitions(text: str) -> str | None:
    r"""The output of ``tcc -E -dD`` without the block of TCC's own definitions it opens with (the lines
    after ``# 1 "<command line>" 1`` up to the next line marker), ``<a6>`` written ``##``; None where it
    does not open with that block.

    >>> _own_definitions('# 1 "<stdin>"\n# 1 "<command line>" 1\n#define __TINYC__ 927\n'
    ...                  '# 1 "/usr/include/x.h" 1\n#define CAT(a,b) a<a6>b\n')
    '# 1 "<stdin>"\n# 1 "/usr/include/x.h" 1\n#define CAT(a,b) a##b\n'
    """
    lines = text.split("\n")
    start = next((k for k, line in enumerate(lines) if line == '# 1 "<command line>" 1'), None)
    if start is None:
        return None
    stop = start + 1
    while stop < len(lines) and lines[stop].startswith("#define "):
        stop += 1
    return "\n".join(lines[:start] + lines[stop:]).replace("<a6>", "##")


def _runtime(cc: list[str]) -> str | None:
    """TCC's runtime library (``libtcc1.a``, which its code may call for a conversion), from
    ``-print-search-dirs``; None where it names none.

    >>> _runtime(["/nonexistent/sparsescope-tcc"]) is None
    True
    """
    lines = (_asked(cc, "-print-search-dirs") or "").splitlines()
    found = [lines[k + 1].strip() for k, line in enumerate(lines[:-1]) if line.strip() == "libtcc1:"]
    return found[0] if found and os.path.isfile(found[0]) else None


def _prelude(directory: Path) -> Path:
    """The prelude's header in the cache ``directory``, written once (renamed into place whole)."""
    key = str(directory)
    with _lock:
        path = _prelude_paths.get(key)
        if path is None:
            path = directory / "quick_prelude.h"
            if not path.exists() or path.read_text() != PRELUDE:
                tmp = directory / f".quick_prelude-{os.getpid()}-{threading.get_ident()}.h"
                tmp.write_text(PRELUDE)
                os.replace(tmp, path)
            _prelude_paths[key] = path
        return path
