"""The C back end: emit C from the imperative IR, build it, cache it, call it.

>>> from compiler.imperative.examples import csr_spmv
>>> print(emit_c(csr_spmv()).splitlines()[0])
/* sparsescope kernel spmv */
"""

from .build import DEFAULT_FLAGS, build_library, cache_dir, compiler_identity, load_library
from .c_emitter import c_arguments, c_declarations, emit_c, emit_c_with_provenance
from .kernel import Kernel, clear_memory_cache, compile_function, reset_stats, stats

__all__ = [
    "DEFAULT_FLAGS", "Kernel", "build_library", "c_arguments", "c_declarations", "cache_dir",
    "clear_memory_cache", "compile_function", "compiler_identity", "emit_c", "emit_c_with_provenance", "load_library",
    "reset_stats", "stats",
]
