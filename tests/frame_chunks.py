"""Freed blocks of CPython's arena allocator kept for reuse, in the test suite's processes.

CPython 3.11 keeps its frames on a stack of 16 KiB chunks. It maps a chunk (``mmap``) when a call crosses into
it and unmaps it (``munmap``) as soon as the frame that crossed returns. The lowering's walkers recurse up and
down across such a boundary all the time. Thirty tests of tests/compiler/lattice/test_seq_other_reductions.py
mapped and unmapped 140,000 chunks: each is two system calls and the first touch of its four pages.
Measured on that whole file in one process: 3.40 s of system time in a 28.6 s run, against 1.51 s and 26.8 s with
the blocks kept. The suite's runs spent 283 s of their 1,565 s of CPU in the kernel.

The chunks come from the interpreter's arena allocator (``PyObject_GetArenaAllocator``), which also maps pymalloc's
arenas. :func:`keep_freed_chunks` puts a small C allocator in front of it. The allocator keeps up to
:data:`KEPT` freed blocks of at most :data:`KEPT_SIZE` bytes (at most 1 MiB in all) and hands them out again to
requests of the same size; everything else goes to the interpreter's own allocator. CPython calls the arena
allocator with the GIL held, so the list needs no lock. Only the suite installs it: a library has no business
replacing its host interpreter's allocator. tests/conftest.py installs it as a worker starts:

    from tests.frame_chunks import keep_freed_chunks
    keep_freed_chunks()    # True where installed

>>> KEPT * KEPT_SIZE // 2 ** 20     # (MiB kept at most)
1
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

#: how many freed blocks are kept, and the largest kept (a frame chunk is 16 KiB; pymalloc's arenas, 1 MiB, pass)
KEPT, KEPT_SIZE = 16, 65536

SOURCE = r"""
#include <stddef.h>

typedef struct {
    void *ctx;
    void *(*alloc)(void *ctx, size_t size);
    void (*free)(void *ctx, void *ptr, size_t size);
} PyObjectArenaAllocator;

void PyObject_GetArenaAllocator(PyObjectArenaAllocator *allocator);
void PyObject_SetArenaAllocator(PyObjectArenaAllocator *allocator);

static PyObjectArenaAllocator interpreters, ours;
static void *kept[KEPT];
static size_t kept_size[KEPT];
static int n_kept = 0;
static long long reused = 0;

static void *keeping_alloc(void *ctx, size_t size)
{
    for (int k = n_kept - 1; k >= 0; k--) {
        if (kept_size[k] == size) {
            void *block = kept[k];
            n_kept -= 1;
            kept[k] = kept[n_kept];
            kept_size[k] = kept_size[n_kept];
            reused += 1;
            return block;
        }
    }
    return interpreters.alloc(interpreters.ctx, size);
}

static void keeping_free(void *ctx, void *block, size_t size)
{
    if (size <= KEPT_SIZE && n_kept < KEPT) {
        kept[n_kept] = block;
        kept_size[n_kept] = size;
        n_kept += 1;
        return;
    }
    interpreters.free(interpreters.ctx, block, size);
}

void keep_freed_blocks(void)
{
    PyObject_GetArenaAllocator(&interpreters);
    ours.ctx = NULL;
    ours.alloc = keeping_alloc;
    ours.free = keeping_free;
    PyObject_SetArenaAllocator(&ours);
}

long long blocks_reused(void)
{
    return reused;
}
"""

_installed: list = []   # (the loaded library, once installed: the process keeps it)


def keep_freed_chunks() -> bool:
    """Install the keeping allocator in this process, once; whether it is installed. Not where there is no GIL (a
    free-threaded build: the list would need a lock) nor outside CPython, nor where the C compiler fails (the suite
    then runs as before, only slower)."""
    if _installed:
        return True
    if sys.implementation.name != "cpython" or sysconfig.get_config_var("Py_GIL_DISABLED"):
        return False
    from compiler.backend.build import compiler_command
    with tempfile.TemporaryDirectory() as tmp:
        source, library = Path(tmp) / "frame_chunks.c", Path(tmp) / "frame_chunks.so"
        source.write_text(SOURCE)
        try:
            built = subprocess.run([*compiler_command(), "-shared", "-fPIC", "-O2", f"-DKEPT={KEPT}",
                                    f"-DKEPT_SIZE={KEPT_SIZE}", "-o", str(library), str(source)],
                                   capture_output=True, timeout=120)
            if built.returncode != 0:
                return False
            lib = ctypes.CDLL(str(library))   # (mapped: the file may go)
        except (OSError, subprocess.SubprocessError):
            return False
    lib.blocks_reused.restype = ctypes.c_longlong
    lib.keep_freed_blocks()
    _installed.append(lib)
    return True


def installed() -> bool:
    """Whether :func:`keep_freed_chunks` installed the keeping allocator in this process."""
    return bool(_installed)


def blocks_reused() -> int:
    """How many blocks the keeping allocator handed out again (0 where it is not installed)."""
    return int(_installed[0].blocks_reused()) if _installed else 0
