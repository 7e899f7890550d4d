"""Compiled kernels: emit C, build or fetch the library, and call it on numpy arrays.

:func:`compile_function` caches kernels in memory by ``(function, checked,
flags, compiler)``, so asking again neither re-emits nor re-compiles; below
that sits the disk cache of :mod:`compiler.backend.build`. :func:`stats`
counts emits, compiles, disk hits and memory hits.

A :class:`Kernel` is called with keyword arguments: scalars as Python or numpy
numbers, buffers as C-contiguous numpy arrays of exactly the declared dtype,
passed without copying. It returns a dict of the inout buffers (the arrays
passed in, updated in place), the out scalars (numpy scalars) and the growable
outputs (numpy arrays that own the C memory and free it when collected).

The argument checks and the call are generated as one small Python function
when the kernel is loaded, so a call does no string work and little else.
"""

from __future__ import annotations

import functools
import os
import shlex
import threading
import time
from dataclasses import dataclass

import numpy as np

from ..dtypes import c_type
from ..errors import DTypeError, FormatError, KernelError
from ..imperative.guard import STATUS_COORDINATE, STORED, coordinate_message, coordinate_sites
from ..imperative.ir import Allocate, BinOp, Buffer, Const, Function, Growable, OutScalar, Scalar, Var, View
from ..imperative.traverse import tag_descriptions, tag_origins, walk
from ..imperative.printer import pretty
from ..trace import Artifact, Later, Trace
from . import build
from .build import c_typeof
from .c_emitter import (ACCESS_NAMES, STATUS_OUT_OF_BOUNDS, STATUS_OUT_OF_MEMORY, c_arguments,
                        c_function_types, emit_c_with_provenance, free_function)


@dataclass
class _Stats:
    emits: int = 0
    compiles: int = 0
    disk_hits: int = 0
    memory_hits: int = 0


_stats = _Stats()
_memory: dict[tuple, "Kernel"] = {}
_lock = threading.RLock()


def stats() -> dict:
    """Counters since the last :func:`reset_stats`: emits, compiles, disk_hits, memory_hits."""
    return dict(vars(_stats))


def reset_stats() -> None:
    global _stats
    _stats = _Stats()


def clear_memory_cache() -> None:
    """Forget compiled kernels in this process (the disk cache stays)."""
    with _lock:
        _memory.clear()


def _c_artifact(fn: Function, source: str, provenance: dict) -> Artifact:
    """The C source as an artifact; ``data["provenance"]`` maps tags to their C lines,
    ``data["tags"]`` each tag to what it stands for (its :class:`Tagged` ``what``) and
    ``data["origins"]`` each tag to its :class:`~compiler.imperative.ir.Origin` as a dict."""
    if not provenance:
        return Artifact("c", fn.name, source)

    def data():   # (made when read: describing each tag prints the looplet programs they lowered)
        what, origins = tag_descriptions(fn.body), tag_origins(fn.body)
        return {"provenance": provenance, "tags": {t: what[t] for t in provenance if t in what},
                "origins": {t: origins[t].as_dict() for t in provenance if t in origins}}
    return Artifact("c", fn.name, source, data=Later(data))


def compile_function(fn: Function, checked: bool = False, trace: Trace | None = None,
                     flags=None, emitted: tuple[str, dict] | None = None) -> "Kernel":
    """The native kernel for ``fn``; see the module docstring for caching.

    With ``trace``, records the steps ``emit-c`` (the C source) and ``compile``
    (how the library was obtained and how long it took). ``emitted``: ``fn``'s C and its
    provenance, as :func:`~compiler.backend.c_emitter.emit_c_with_provenance` gave them
    for ``checked`` (a caller that looked at the C first does not emit it twice).
    """
    if not isinstance(fn, Function):
        raise TypeError(f"compile_function expects an imperative Function, got {type(fn).__name__}")
    flags = build.compiler_flags(flags)
    cc = tuple(build.compiler_command())
    key = (fn, bool(checked), flags, cc, build.opt_flags())
    start = time.perf_counter()
    with _lock:
        kernel = _memory.get(key)
        if kernel is not None:
            _stats.memory_hits += 1
            if trace is not None:
                trace.record("emit-c", before=fn, after=kernel.c_source, note="from the memory cache",
                             artifacts=[_c_artifact(fn, kernel.c_source, kernel.provenance)])
                trace.record("compile", note=f"memory cache ({_ms(time.perf_counter() - start)})")
            return kernel
        source, provenance = emitted or emit_c_with_provenance(fn, checked)
        _stats.emits += emitted is None
        if trace is not None:
            trace.record("emit-c", before=fn, after=source,
                         artifacts=[_c_artifact(fn, source, provenance)],
                         note=f"{'checked ' if checked else ''}C for kernel {fn.name}")
        t0 = time.perf_counter()
        built_with = build.sized_flags(flags, source, checked)
        path, cached = build.build_library(source, fn.name, built_with)
        if cached:
            _stats.disk_hits += 1
        else:
            _stats.compiles += 1
        ffi, lib = build.load_functions(path, c_function_types(fn, checked))
        kernel = Kernel(fn, checked, source, ffi, lib, path, provenance)
        _memory[key] = kernel
        if trace is not None:
            how = "disk cache" if cached else "compiled"
            how += build.flags_note(flags, built_with, source, checked)
            quick = None if cached else build.built_by(path)
            if quick is not None:
                how += f", by {shlex.join(quick)} ($SPARSESCOPE_QUICK_CC)"
            trace.record("compile", note=f"{how} ({_ms(time.perf_counter() - t0)}): {path.name}")
        return kernel


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


class Kernel:
    """A loaded native kernel; call it with keyword arguments (see the module docstring)."""

    def __init__(self, fn: Function, checked: bool, c_source: str, ffi, lib, path=None,
                 provenance: dict | None = None):
        self.function = fn
        self.checked = checked
        self.c_source = c_source
        #: tag -> 1-based C lines (see :class:`~compiler.imperative.ir.Tagged`)
        self.provenance = provenance or {}
        self.path = path
        self._ffi, self._lib = ffi, lib
        self._call = _make_caller(fn, checked, ffi, lib)
        self._pointer_call = None

    @property
    def name(self) -> str:
        return self.function.name

    def __call__(self, **args) -> dict:
        return self._call(**args)

    @property
    def caller(self):
        """The generated function that checks the arguments and calls the C kernel (what
        calling this object runs, one frame shorter for the runtime's hot path)."""
        return self._call

    @property
    def pointer_caller(self):
        """A caller for a runtime that checked and converted its buffers once (see
        :mod:`compiler.fastcall`): it takes the kernel's scalar and buffer arguments positionally,
        in :meth:`pointer_parameters`' order, each buffer as the cffi pointer of :meth:`pointer`,
        and returns the out scalars and growable outputs; ``None`` for a checked kernel (whose
        buffer lengths are passed too)."""
        if self.checked:
            return None
        if self._pointer_call is None:
            self._pointer_call = _make_caller(self.function, False, self._ffi, self._lib, pointers=True)
        return self._pointer_call

    def pointer_caller_freeing(self, unwanted: frozenset):
        """:attr:`pointer_caller`, but the growable outputs named in ``unwanted`` are freed as soon as the
        C function returns instead of wrapped as arrays (a program's intermediate that its caller never
        reads: an erosion's first pass); they are left out of what it returns. Made once per set.

        >>> from compiler.imperative.examples import filter_nonzeros
        >>> k = compile_function(filter_nonzeros(name="sparsify_doc"))
        >>> x = np.array([0.0, 2.0, 3.0])
        >>> sorted(k.pointer_caller_freeing(frozenset({"B_idx"}))(3, k.pointer("x", x)))
        ['B_nnz', 'B_val']
        """
        if not unwanted:
            return self.pointer_caller
        callers = self.__dict__.setdefault("_freeing_callers", {})
        if unwanted not in callers and not self.checked:
            callers[unwanted] = _make_caller(self.function, False, self._ffi, self._lib, pointers=True,
                                             unwanted=unwanted)
        return callers.get(unwanted)

    @property
    def direct_call(self):
        """``(function, fail)`` for an unchecked kernel whose C takes scalars and buffers only (no out
        scalar, grown output or error report, so it returns nothing but its status): the cffi function
        itself, taking :attr:`pointer_caller`'s arguments, and ``fail(status, scalars)``, which raises
        for a nonzero status as that caller does; None for other kernels. A runtime's fast path calls it
        without the caller's frame (a sixth of a 5x5 SpMV's call).

        >>> from compiler.imperative.examples import csr_spmv, filter_nonzeros
        >>> compile_function(csr_spmv()).direct_call is not None, compile_function(filter_nonzeros()).direct_call
        (True, None)
        """
        if self.checked or any(a.kind not in ("scalar", "buffer") for a in c_arguments(self.function, False)):
            return None
        fail = _failure_reporter(self.function, False, self._ffi, self._lib)
        return getattr(self._lib, self.function.name), lambda status, scalars: fail(status, None, (), scalars)

    def pointer_parameters(self) -> tuple[str, ...]:
        """The names :attr:`pointer_caller` takes, in order (scalars and buffers as the C kernel)."""
        return tuple(a.name for a in c_arguments(self.function, False) if a.kind in ("scalar", "buffer"))

    def pointer_type(self, name: str):
        """The cffi array type of buffer ``name``, for :attr:`from_buffer`."""
        p = next(p for p in self.function.params if p.name == name)
        return c_typeof(f"{c_type(p.dtype)}[]")

    @property
    def from_buffer(self):
        """cffi's ``from_buffer(type, array, require_writable)`` (its backend function: the
        ``ffi`` method is a Python wrapper, a frame per buffer), for arrays a caller checked."""
        return getattr(getattr(self._ffi, "_backend", None), "from_buffer", self._ffi.from_buffer)

    def pointer(self, name: str, array: np.ndarray):
        """The cffi pointer :attr:`pointer_caller` takes for buffer ``name``: ``array`` itself,
        shared, after the checks every call of :meth:`__call__` makes (dtype, C order, writable
        where the kernel writes), which raise naming the parameter."""
        k, p = next((k, p) for k, p in enumerate(self.function.params) if p.name == name)
        _argument_checker(self.function)(k, array)
        return self.from_buffer(self.pointer_type(name), array, p.intent == "inout")

    def pointer_maker(self, name: str):
        """:meth:`pointer` for buffer ``name`` as a function of the array, its parameter, cffi type,
        dtype and intent looked up once: a runtime binding each new tensor (a round's result, the
        next round's input) calls it per array; None for a scalar parameter.

        >>> from compiler.imperative.examples import filter_nonzeros
        >>> k = compile_function(filter_nonzeros(name="sparsify_doc"))
        >>> make = k.pointer_maker("x")
        >>> make(np.ones(3))[2]
        1.0
        """
        k, p = next((k, p) for k, p in enumerate(self.function.params) if p.name == name)
        if not isinstance(p, Buffer):
            return None
        dtype, ctype, writable = np.dtype(p.dtype), self.pointer_type(name), p.intent == "inout"
        check, from_buffer = _argument_checker(self.function), self.from_buffer

        def make(array):
            if array.__class__ is not np.ndarray or array.dtype is not dtype or not array.flags.c_contiguous or (
                    writable and not array.flags.writeable):
                check(k, array)   # (raises naming the parameter; an equal dtype's other object passes)
            return from_buffer(ctype, array, writable)
        return make

    def __repr__(self) -> str:
        return f"<Kernel {self.function.name}{' (checked)' if self.checked else ''}>"


def _make_caller(fn: Function, checked: bool, ffi, lib, pointers: bool = False, unwanted: frozenset = frozenset()):
    """Generate the Python function that checks arguments and calls the C kernel (with
    ``pointers``, one that takes checked cffi pointers positionally, see :attr:`Kernel.pointer_caller`;
    the growables named in ``unwanted`` are freed, not returned: :meth:`Kernel.pointer_caller_freeing`)."""
    name = fn.name
    g: dict = {
        "__k_fn": getattr(lib, name),
        "__k_nd": np.ndarray,
        # (cffi's backend function itself: ffi.from_buffer is a Python wrapper, a frame per buffer)
        "__k_fb": getattr(getattr(ffi, "_backend", None), "from_buffer", ffi.from_buffer),
        # (the backend's newp too: ffi.new is a Python wrapper, a frame per out scalar and growable)
        "__k_new": getattr(getattr(ffi, "_backend", None), "newp", ffi.new),
        "__k_null": ffi.NULL,
        "__k_np": np,
    }
    params = fn.params
    inputs = [p for p in params if isinstance(p, (Scalar, Buffer))]
    if pointers:
        taken = [a.name for a in c_arguments(fn, False) if a.kind in ("scalar", "buffer")]
        lines = [f"def {name}({', '.join(taken)}):"]
    else:
        lines = [f"def {name}(*, {', '.join(p.name for p in inputs)}):" if inputs else f"def {name}():"]
    for k, p in enumerate(params):
        if isinstance(p, Buffer) and pointers:
            continue
        if isinstance(p, Buffer):
            g[f"__k_d{k}"] = np.dtype(p.dtype)
            g[f"__k_t{k}"] = c_typeof(f"{c_type(p.dtype)}[]")
            flags_ok = "__k_f.c_contiguous" + (" and __k_f.writeable" if p.intent == "inout" else "")
            lines.append(f"    if {p.name}.__class__ is not __k_nd or {p.name}.dtype is not __k_d{k}: "
                         f"__k_check({k}, {p.name})")
            lines.append(f"    __k_f = {p.name}.flags")
            lines.append(f"    if not ({flags_ok}): __k_check({k}, {p.name})")
        elif isinstance(p, OutScalar):
            g[f"__k_t{k}"] = c_typeof(f"{c_type(p.dtype)} *")
            g[f"__k_s{k}"] = np.dtype(p.dtype).type
            if p.init:
                lines.append(f"    __k_o{k}[0] = {p.init!r}")
    # The cells the C function writes its out scalars and grown buffers' pointers into: made once and
    # kept in a pool, each call taking a set (a call on another thread takes another), all zero again
    # before they go back. New cells every call were most of the cffi allocations of a small call.
    # (pop and catch: a test of the pool, then a pop, lets another thread take the last set between them)
    cells = [(k, p) for k, p in enumerate(params) if isinstance(p, (OutScalar, Growable))]
    if cells:
        new, types = g["__k_new"], tuple(c_typeof(f"{c_type(p.dtype)} *{'*' if isinstance(p, Growable) else ''}")
                                         for _, p in cells)
        g["__k_pool"], g["__k_cells"] = [], lambda: tuple(new(t) for t in types)
        names = ", ".join(f"__k_o{k}" for k, _ in cells)
        lines[1:1] = ["    try:", "        __k_c = __k_pool.pop()", "    except IndexError:", "        __k_c = __k_cells()",
                      f"    {names}{',' if len(cells) == 1 else ''} = __k_c"]
    index = {p.name: k for k, p in enumerate(params)}
    cargs = []
    for a in c_arguments(fn, checked):
        k = index.get(a.name)
        if a.kind == "scalar":
            cargs.append(a.name)
        elif a.kind == "buffer":
            cargs.append(a.name if pointers else f"__k_fb(__k_t{k}, {a.name}, False)")
        elif a.kind == "length":
            cargs.append(f"{a.name}.size")
        elif a.kind in ("out", "growable"):
            cargs.append(f"__k_o{k}")
        elif a.kind == "error":
            g["__k_terr"] = c_typeof("int64_t[4]")
            lines.append("    __k_err = __k_new(__k_terr)")
            cargs.append("__k_err")
    scalars = [p.name for p in params if isinstance(p, Scalar)]
    growables = [(k, p) for k, p in enumerate(params) if isinstance(p, Growable)]
    lines.append("    try:")
    lines.append(f"        __k_status = __k_fn({', '.join(cargs)})")
    lines.append("    except (TypeError, OverflowError) as __k_e:")
    lines.append(f"        __k_scalar_error(__k_e, {{{', '.join(f'{s!r}: {s}' for s in scalars)}}})")
    lines.append("    if __k_status:")
    freed = ", ".join(f"__k_o{k}[0]" for k, _ in growables)
    given = f"{{{', '.join(f'{s!r}: {s}' for s in scalars)}}}"   # (the sizes, to name a scratch array too large)
    reports = any(a.kind == "error" for a in c_arguments(fn, checked))
    lines.append(f"        __k_fail(__k_status, {'__k_err' if reports else 'None'}, "
                 f"({freed}{',' if growables else ''}), {given})")
    result = []
    for k, p in enumerate(params):
        if isinstance(p, Buffer) and p.intent == "inout" and not pointers:
            result.append(f"{p.name!r}: {p.name}")
        elif isinstance(p, OutScalar):
            result.append(f"{p.name!r}: __k_s{k}(__k_o{k}[0])")
        elif isinstance(p, Growable) and p.name in unwanted:
            g["__k_free"] = getattr(lib, free_function(fn))   # (free(NULL) does nothing)
            lines.append(f"    __k_free(__k_o{k}[0])")
        elif isinstance(p, Growable):
            length = index[p.length]
            g[f"__k_w{k}"] = _wrapper(fn, p, ffi, lib)
            result.append(f"{p.name!r}: __k_w{k}(__k_o{k}[0], __k_o{length}[0])")
    if cells:
        lines.append(f"    __k_r = {{{', '.join(result)}}}")
        for k, p in cells:   # (zero again, as new cells are: the pointers now belong to the arrays made)
            lines.append(f"    __k_o{k}[0] = {'__k_null' if isinstance(p, Growable) else '0'}")
        lines.append("    __k_pool.append(__k_c)")
        lines.append("    return __k_r")
    else:
        lines.append(f"    return {{{', '.join(result)}}}")
    g["__k_check"] = _argument_checker(fn)
    g["__k_scalar_error"] = _scalar_error_reporter(fn, ffi)
    g["__k_fail"] = _failure_reporter(fn, checked, ffi, lib)
    code = "\n".join(lines)
    exec(python_code(code, f"<kernel {name} caller>"), g)
    caller = g[name]
    caller.__doc__ = f"Call kernel {name}; generated argument checks:\n\n{code}"
    return caller


@functools.lru_cache(maxsize=1024)
def python_code(source: str, filename: str):
    """``source`` (a generated Python function) compiled, once per process: kernels of the same
    names and signature share their caller's text, and compiling it again took about 3 ms a kernel.

    >>> g = {}; exec(python_code("def f(x):\\n    return x + 1", "<f>"), g); g["f"](1)
    2
    """
    return compile(source, filename, "exec")


def _argument_checker(fn: Function):
    """The slow path of the buffer checks: accept equal dtypes, else raise naming the parameter."""
    params = fn.params

    def check(k: int, value):
        p = params[k]
        where = f"kernel {fn.name}: argument {p.name}"
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{where} must be a numpy array of {p.dtype}, got {type(value).__name__}")
        if value.dtype != np.dtype(p.dtype):
            raise DTypeError(f"{where} must have dtype {p.dtype}, got {value.dtype} "
                             f"(convert with .astype({p.dtype!r}))")
        if not value.flags.c_contiguous:
            raise ValueError(f"{where} must be C-contiguous (use np.ascontiguousarray); "
                             f"it is passed to C without copying")
        if p.intent == "inout" and not value.flags.writeable:
            raise ValueError(f"{where} is written by the kernel but the array is read-only")
    return check


def _scalar_error_reporter(fn: Function, ffi):
    types = {p.name: (p.dtype, c_typeof(f"{c_type(p.dtype)} *")) for p in fn.params if isinstance(p, Scalar)}

    def report(error, values: dict):
        for pname, value in values.items():
            dtype, ctype = types[pname]
            try:
                ffi.new(ctype, value)
            except (TypeError, OverflowError) as e:
                raise type(e)(f"kernel {fn.name}: argument {pname} must be a {dtype} scalar, "
                              f"got {value!r} ({e})") from None
        raise error
    return report


def _failure_reporter(fn: Function, checked: bool, ffi, lib):
    free = getattr(lib, free_function(fn)) if free_function(fn) else None
    known: dict = {}

    def facts():
        # walked on the first failure only: three whole-function walks per kernel, most never fail
        if not known:
            nodes = list(walk(fn.body))
            # numbered as the emitter numbers them: buffer parameters, then scratch arrays, then views
            buffers = [(p.name, "capacity" if isinstance(p, Growable) else "length")
                       for p in fn.params if isinstance(p, (Buffer, Growable))]
            for kind in (Allocate, View):
                buffers += [(b, "length") for b in dict.fromkeys(n.buffer for n in nodes if isinstance(n, kind))]
            known.update(buffers=buffers, scratch=[a for a in nodes if isinstance(a, Allocate)],
                         sites=coordinate_sites(fn.body))
        return known

    def fail(status: int, err, pointers, scalars: dict):
        for ptr in pointers:
            if ptr != ffi.NULL:
                free(ptr)
        if status == STATUS_OUT_OF_BOUNDS and checked:
            access, buffer, i, length = (int(err[j]) for j in range(4))
            name, what = facts()["buffers"][buffer]
            raise KernelError(f"checked kernel {fn.name}: {ACCESS_NAMES[access]} of {name}[{i}] "
                              f"is out of bounds ({what} {length})")
        if status == STATUS_COORDINATE and facts()["sites"]:
            site, value, extent = (int(err[j]) for j in range(3))
            where = facts()["sites"][site]
            # (a coordinate an input's owner wrote: the input is malformed, as a check before the call would say)
            error = FormatError if where[3] == STORED else KernelError
            raise error(coordinate_message(fn.name, where, value, extent))
        if status == STATUS_OUT_OF_MEMORY:
            why = (_largest_scratch(facts()["scratch"], scalars)
                   or " while growing an output or allocating a scratch array")
            raise MemoryError(f"kernel {fn.name}: out of memory{why}")
        raise KernelError(f"kernel {fn.name} failed with status {status}")
    return fail


def _largest_scratch(scratch: list, scalars: dict) -> str:
    """``": scratch array w needs ..."`` for the largest scratch array whose length the scalar
    arguments give, when it is more than this machine's memory; "" otherwise.

    >>> from compiler.imperative.ir import Allocate, BinOp, Var
    >>> w = Allocate("w", "float64", BinOp("*", Var("m"), Var("n")), 0.0, [])
    >>> print(_largest_scratch([w], {"m": 2**32, "n": 2**32}))
    : scratch array w needs m * n = 4294967296 * 4294967296 = 18446744073709551616 float64 elements (147.6 EB), more than an int64 length holds
    >>> _largest_scratch([w], {"m": 3, "n": 4})
    ''
    """
    best = None
    for a in scratch:
        n = _int_value(a.length, scalars)
        if n is not None and (best is None or n * np.dtype(a.dtype).itemsize > best[0]):
            best = (n * np.dtype(a.dtype).itemsize, n, a)
    if best is None:
        return ""
    nbytes, n, a = best
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = None
    if n >= 2**63:
        why = "more than an int64 length holds"
    elif memory and nbytes > memory:
        why = f"more than this machine's {_bytes(memory)} of memory"
    else:
        return ""
    text = pretty(a.length)
    values = " * ".join(str(_int_value(f, scalars)) for f in _factors(a.length))
    shown = f"{text} = {values} = {n}" if values != str(n) and values != text else f"{text} = {n}"
    return f": scratch array {a.buffer} needs {shown} {a.dtype} elements ({_bytes(nbytes)}), {why}"


def _factors(e) -> list:
    if isinstance(e, BinOp) and e.op == "*":
        return _factors(e.left) + _factors(e.right)
    return [e]


def _int_value(e, scalars: dict):
    """An integer expression's value from the scalar arguments (exact: no overflow), or None."""
    if isinstance(e, Const) and isinstance(e.value, (int, np.integer)) and not isinstance(e.value, bool):
        return int(e.value)
    if isinstance(e, Var):
        v = scalars.get(e.name)
        return int(v) if isinstance(v, (int, np.integer)) else None
    if isinstance(e, BinOp) and e.op in ("*", "+", "-"):
        a, b = _int_value(e.left, scalars), _int_value(e.right, scalars)
        if a is None or b is None:
            return None
        return a * b if e.op == "*" else a + b if e.op == "+" else a - b
    return None


def _bytes(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000:
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1000
    return f"{n:.1f} EB"


def _wrapper(fn: Function, p: Growable, ffi, lib):
    """Turn a malloc'ed pointer and a length into a numpy array that frees it when collected."""
    dtype = np.dtype(p.dtype)
    itemsize = dtype.itemsize
    free = getattr(lib, free_function(fn))
    # (the backend's gcp: ffi.gc is a Python wrapper around it, a frame per array returned)
    gc = getattr(getattr(ffi, "_backend", None), "gcp", ffi.gc)
    buffer, frombuffer, null = ffi.buffer, np.frombuffer, ffi.NULL

    def wrap(ptr, n):
        if ptr == null:
            if n:
                raise KernelError(f"kernel {fn.name}: {p.length} = {n} but growable {p.name} was never grown")
            return np.empty(0, dtype)
        # The array's base is the cffi buffer, which keeps the gc'ed pointer alive.
        owner = gc(ptr, free)
        if n <= 0:
            if n < 0:
                raise KernelError(f"kernel {fn.name}: {p.length} = {n} is a negative length for {p.name}")
            return np.empty(0, dtype)
        return frombuffer(buffer(owner, n * itemsize), dtype)
    return wrap
