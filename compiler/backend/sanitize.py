"""Kernels built with AddressSanitizer, so that a read or write outside a buffer stops the process
with a report instead of corrupting memory silently (``SPARSESCOPE_SANITIZE=address``).

Python is not instrumented, so the sanitizer's runtime must be in the process before any
instrumented library is loaded: start Python with ``LD_PRELOAD`` naming the compiler's libasan
and ``ASAN_OPTIONS`` set, as :func:`sanitized_environ` does::

    SPARSESCOPE_SANITIZE=address LD_PRELOAD=$(gcc -print-file-name=libasan.so) \\
        ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 python my_script.py

Loading an instrumented library into a process without the runtime would make the runtime end
the process, so :func:`check_runtime` refuses to, saying how to start Python instead.

>>> sanitizer({"SPARSESCOPE_SANITIZE": "address"}), sanitizer({})
('address', None)
>>> sanitize_flags({"SPARSESCOPE_SANITIZE": "address"})
('-fsanitize=address', '-fno-omit-frame-pointer', '-g')
"""

from __future__ import annotations

import ctypes
import os
import shlex
import subprocess
from pathlib import Path

from ..errors import UsageError

VARIABLE = "SPARSESCOPE_SANITIZE"
#: the sanitizers a kernel can be built with, and the flags each adds (frame pointers make the
#: report's stack trace complete through the kernel's frames; debug information gives its lines
#: in the kernel's C, which the cache keeps next to the library)
SANITIZERS = {"address": ("-fsanitize=address", "-fno-omit-frame-pointer", "-g")}
#: the runtime options a sanitized run needs: Python never frees some of its memory (leaks would be
#: reported at exit, for no kernel's fault); the first report aborts the process (SIGABRT: a test
#: run cannot pass on it, and pytest's faulthandler prints which test was running); a too-large
#: allocation returns NULL, as it does without the sanitizer, so the project's out-of-memory
#: errors are raised, not a sanitizer report
ASAN_OPTIONS = "detect_leaks=0:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1"


def sanitizer(environ=None) -> str | None:
    """The sanitizer ``$SPARSESCOPE_SANITIZE`` asks for, or None; an unknown one is refused.

    >>> sanitizer({"SPARSESCOPE_SANITIZE": "memory"})
    Traceback (most recent call last):
    ...
    compiler.errors.UsageError: SPARSESCOPE_SANITIZE='memory' is not a sanitizer kernels can be built with; use 'address' (or leave the variable unset)
    """
    env = os.environ if environ is None else environ
    value = (env.get(VARIABLE) or "").strip()
    if not value:
        return None
    if value not in SANITIZERS:
        raise UsageError(f"{VARIABLE}={value!r} is not a sanitizer kernels can be built with; use "
                         f"{' or '.join(map(repr, SANITIZERS))} (or leave the variable unset)")
    return value


def sanitize_flags(environ=None) -> tuple[str, ...]:
    """The compiler flags the sanitizer in force adds (none without one)."""
    name = sanitizer(environ)
    return SANITIZERS[name] if name else ()


def runtime_library(cc: list[str]) -> Path | None:
    """The compiler's AddressSanitizer runtime (``cc -print-file-name=libasan.so``), or None
    where it has none.

    >>> runtime_library(["/nonexistent/cc"]) is None
    True
    """
    try:
        r = subprocess.run([*cc, "-print-file-name=libasan.so"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    path = Path(r.stdout.strip())
    # a compiler without the library prints its bare name back
    return path.resolve() if r.returncode == 0 and path.is_absolute() and path.exists() else None


def sanitized_environ(cc: list[str], environ=None) -> dict[str, str] | None:
    """An environment that runs Python with sanitized kernels: ``environ`` (default ``os.environ``)
    with :data:`VARIABLE`, ``LD_PRELOAD`` and ``ASAN_OPTIONS`` set; None if ``cc`` has no runtime."""
    lib = runtime_library(cc)
    if lib is None:
        return None
    env = dict(os.environ if environ is None else environ)
    env[VARIABLE] = "address"
    env["LD_PRELOAD"] = " ".join([str(lib), *shlex.split(env.get("LD_PRELOAD", ""))])
    env["ASAN_OPTIONS"] = ASAN_OPTIONS
    return env


def runtime_loaded() -> bool:
    """Whether this process has the AddressSanitizer runtime (preloaded, or linked in)."""
    return hasattr(ctypes.CDLL(None), "__asan_init")


def check_runtime(name: str) -> None:
    """Refuse to load the sanitized kernel ``name`` into a process without the sanitizer's runtime."""
    if sanitizer() and not runtime_loaded():
        raise UsageError(
            f"kernel {name} is built with AddressSanitizer ({VARIABLE}={os.environ[VARIABLE]}), but this "
            f"Python process was started without its runtime, and loading the kernel would end the process. "
            f"Start Python with LD_PRELOAD=$(gcc -print-file-name=libasan.so) and "
            f"ASAN_OPTIONS={ASAN_OPTIONS}, or unset {VARIABLE}")


def compiler_environ(environ=None) -> dict[str, str] | None:
    """The environment to run the C compiler in: without a preloaded sanitizer runtime (the compiler
    is not instrumented, and would only run slower with it), or None to inherit ours unchanged."""
    env = os.environ if environ is None else environ
    preload = shlex.split(env.get("LD_PRELOAD", ""))
    kept = [p for p in preload if "libasan" not in Path(p).name]
    if kept == preload:
        return None
    out = dict(env)
    if kept:
        out["LD_PRELOAD"] = " ".join(kept)
    else:
        del out["LD_PRELOAD"]
    return out
