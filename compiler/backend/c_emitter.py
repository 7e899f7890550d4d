"""Emit readable C for an imperative-IR :class:`~compiler.imperative.ir.Function`.

The calling convention (see :func:`c_arguments`), in parameter order:

- ``Scalar``: passed by value (``int64_t m``);
- ``Buffer``: a pointer to the numpy data, ``const T *restrict`` for ``in``
  buffers (they must not overlap an ``inout`` buffer), ``T *`` for ``inout``;
  in checked mode followed by its length (``int64_t A_idx_len``);
- ``OutScalar``: a pointer the kernel stores the final value through
  (``int64_t *B_nnz_out``); in the body it is a local of the same name;
- ``Growable``: a pointer to a pointer that starts ``NULL`` (``double **B_val_out``);
  the body uses a local ``B_val`` with capacity ``B_val_cap`` and stores the
  buffer through ``B_val_out`` after every reallocation, so the caller frees
  it with the exported ``<name>_free`` even when the kernel fails;
- checked mode, or a kernel with a :class:`~compiler.imperative.guard.CheckCoordinate`: a
  final ``int64_t *error`` of 4 slots that receives (access, buffer id, index, length) of
  the first out-of-bounds access (checked mode; access 0 is a read, 1 a write; buffer ids
  number the buffers and growables in parameter order), or (site, value, extent) of a
  computed coordinate out of range (sites numbered by
  :func:`~compiler.imperative.guard.coordinate_sites`).

The kernel returns 0 on success, 1 on an out-of-bounds access (checked mode),
2 when growing an output or allocating a scratch array (:class:`Allocate`) runs
out of memory, 3 when a computed coordinate is outside its extent (any build). Scratch arrays are freed at the end of their scope, and on every
early exit (out of memory; in checked mode, a bounds error frees the ones it
registered). A :class:`~compiler.imperative.ir.View` is a pointer into a scratch
array (one thread's part of a workspace): ``double *restrict w = w_all + k;``.

>>> from compiler.imperative.examples import csr_spmv
>>> print(emit_c(csr_spmv()), end="")
/* sparsescope kernel spmv */
#include <stdbool.h>
#include <stdint.h>
<BLANKLINE>
int spmv(
    int64_t m,
    const int64_t *restrict A_pos,
    const int64_t *restrict A_idx,
    const double *restrict A_val,
    const double *restrict x,
    double *y)
{
    for (int64_t i = 0; i < m; i++) {
        double acc = 0.0;
        for (int64_t pA = A_pos[i]; pA < A_pos[i + 1]; pA++) {
            acc += A_val[pA] * x[A_idx[pA]];
        }
        y[i] = acc;
    }
    return 0;
}
"""

from __future__ import annotations

import cmath
import re
from dataclasses import dataclass

from ..dtypes import COMPLEX_DTYPES, c_type
from ..imperative.cleanup import reads_before_set
from ..imperative.guard import STATUS_COORDINATE, STORED, CheckCoordinate, coordinate_sites
from ..imperative.ir import (BIT_FUNCTIONS, MATH_FUNCTIONS, SEARCH_FUNCTIONS, THREAD_FUNCTIONS, Allocate, BinOp, Buffer,
                             Call, Const, Function, Grow, Growable, Load, OutScalar, Pragma, Prefetch, Scalar, Store, View,
                             spelled_real)
from ..imperative.search import search_helpers
from ..imperative.traverse import walk
from ..imperative.vectorize import simd_exit
from ..imperative.printer import INDENT, Printer
from ..names import FreshNames

STATUS_OUT_OF_BOUNDS = 1
STATUS_OUT_OF_MEMORY = 2
ACCESS_NAMES = ("read", "write")


@dataclass(frozen=True)
class CArg:
    """One C argument of a kernel: ``kind`` is scalar, buffer, length, out, growable or error."""

    kind: str
    name: str          # the IR parameter it belongs to
    c_name: str        # its name in C
    dtype: str | None  # element / value dtype


def _user_names(fn: Function, found: "_Found") -> set[str]:
    """The names ``fn`` uses (``found``: what its body's nodes name), which no fresh name may take."""
    names = {fn.name, *found.names}
    for p in fn.params:
        names.add(p.name)
    for h in fn.helpers:
        names.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", h.source))
    return names


def _has_product(e) -> bool:
    return any(isinstance(n, BinOp) and n.op == "*" for n in walk(e))


def _sum_of_product(e) -> bool:
    return any(isinstance(n, BinOp) and n.op == "+" and _has_product(n) for n in walk(e))


class _Found:
    """What a plan asks of a kernel's nodes, found in one pass over them (a pass per question, each
    through a generator, was most of a large kernel's plan): its scratch arrays and views by buffer, whether
    it grows a buffer (and by a hint, past a first growth), calls a bit or thread helper, a math function or
    has a constant that is not finite, has a complex dtype, and whether it reads and writes buffers; and
    the names the nodes give (a ``name`` field, a scratch array's buffer), which no fresh name may take."""

    def __init__(self, nodes):
        self.locals, self.views, self.accesses, self.names = {}, {}, set(), set()
        self.grows = self.room = self.lowest_bit = self.threads = self.math = self.complex = False
        for n in nodes:
            name = getattr(n, "name", None)
            if isinstance(name, str):
                self.names.add(name)
            if isinstance(n, Allocate):
                self.names.add(n.buffer)
                self.locals[n.buffer] = n
            if isinstance(n, View):
                self.views[n.buffer] = n
            if isinstance(n, Grow):
                self.grows = True
                if n.hint and not n.first:
                    self.room = True
            if isinstance(n, Call):
                f = n.function
                if f in BIT_FUNCTIONS:
                    self.lowest_bit = True
                if f in THREAD_FUNCTIONS:
                    self.threads = True
                if f in MATH_FUNCTIONS:
                    self.math = True
            elif isinstance(n, Const) and isinstance(n.value, (float, complex)) and not cmath.isfinite(n.value):
                self.math = True
            if not self.complex and getattr(n, "dtype", None) in COMPLEX_DTYPES:
                self.complex = True
            if isinstance(n, Load):
                self.accesses.add("read")
            elif isinstance(n, Store):
                self.accesses.add("write")


class _Plan:
    """The fresh names and the calling convention of one emitted kernel."""

    def __init__(self, fn: Function, checked: bool):
        self.fn, self.checked = fn, checked
        nodes = list(walk(fn.body))   # (one walk serves every question below)
        found = _Found(nodes)
        fresh = FreshNames(_user_names(fn, found) | {"free", "realloc", "longjmp", "setjmp", "jmp_buf", "lowest_bit",
                                              *THREAD_FUNCTIONS, "omp_get_max_threads", "omp_get_thread_num"})
        self.params = {p.name: p for p in fn.params}
        self.args: list[CArg] = []
        self.length: dict[str, str] = {}    # buffer -> its length (checked) or capacity (growable)
        self.out: dict[str, str] = {}       # out scalar / growable -> pointer parameter
        self.buffer_id: dict[str, str] = {}
        self.buffer_order: list[str] = []
        for p in fn.params:
            if isinstance(p, Scalar):
                self.args.append(CArg("scalar", p.name, p.name, p.dtype))
            elif isinstance(p, Buffer):
                self.args.append(CArg("buffer", p.name, p.name, p.dtype))
                self.buffer_order.append(p.name)
                if checked:
                    self.length[p.name] = fresh(f"{p.name}_len")
                    self.args.append(CArg("length", p.name, self.length[p.name], "int64"))
            elif isinstance(p, OutScalar):
                self.out[p.name] = fresh(f"{p.name}_out")
                self.args.append(CArg("out", p.name, self.out[p.name], p.dtype))
            elif isinstance(p, Growable):
                self.out[p.name] = fresh(f"{p.name}_out")
                self.length[p.name] = fresh(f"{p.name}_cap")
                self.buffer_order.append(p.name)
                self.args.append(CArg("growable", p.name, self.out[p.name], p.dtype))
        # scratch arrays: local buffers, numbered after the parameters in checked mode
        self.locals = found.locals
        self.scratch_slot = {name: k for k, name in enumerate(self.locals)}
        # views into scratch arrays (a thread's part of a workspace), numbered after them
        self.views = found.views
        for name in (*self.locals, *self.views):
            self.buffer_order.append(name)
            if checked:
                self.length[name] = fresh(f"{name}_len")
        # computed coordinates are checked in every build: a kernel with any reports through error
        self.sites = {site: k for k, site in enumerate(coordinate_sites(fn.body, nodes))}
        if checked or self.sites:
            self.error = fresh("error")
            self.args.append(CArg("error", "", self.error, "int64"))
        if checked:
            self.check, self.check_index = fresh("check"), fresh("check_index")
            self.check_type = fresh("bounds_check")
            for name in self.buffer_order:
                self.buffer_id[name] = fresh(f"ID_{name}")
            self.read, self.write = fresh("READ"), fresh("WRITE")
        self.growables = [p for p in fn.params if isinstance(p, Growable)]
        self.grows = found.grows
        self.grow_buffer = fresh("grow_buffer") if self.grows else None
        self.resize = fresh("resize") if self.grows else None
        self.room = fresh("room") if found.room else None
        self.lowest_bit = found.lowest_bit
        self.threads = found.threads
        # (a stack array is neither allocated nor freed: it needs none of the allocation's helpers)
        self.heap = [n for n in self.locals.values() if not n.stack]
        self.alloc_array = fresh("alloc_array") if self.heap else None
        # a scratch array's length that multiplies sizes is computed with an overflow check
        lengths = [n.length for n in self.heap]
        self.length_product = fresh("length_product") if any(_has_product(e) for e in lengths) else None
        self.length_sum = fresh("length_sum") if any(_sum_of_product(e) for e in lengths) else None
        self.free = fresh(f"{fn.name}_free") if self.growables else None
        self.out_of_memory = fresh("KERNEL_OUT_OF_MEMORY") if self.grows or self.heap else None
        self.fresh = fresh
        self.out_of_bounds = fresh("KERNEL_OUT_OF_BOUNDS") if checked else None
        self.out_of_range = fresh("KERNEL_COORDINATE_OUT_OF_RANGE") if self.sites else None
        self.coordinate_error = fresh("coordinate_error") if self.sites else None
        self.uses_math = bool(fn.helpers) or found.math
        self.uses_complex = any(getattr(p, "dtype", None) in COMPLEX_DTYPES for p in fn.params) or found.complex
        self.accesses = found.accesses
        # the searches' helpers this kernel calls, each defined once (they read their buffers)
        self.searches = search_helpers(nodes, self.dtype_of)
        if self.searches:
            self.accesses.add("read")

    def dtype_of(self, buffer: str) -> str:
        """The element dtype of ``buffer``, a buffer parameter, scratch array or view."""
        p = self.params.get(buffer)
        if isinstance(p, (Buffer, Growable)):
            return p.dtype
        known = self.locals.get(buffer) or self.views.get(buffer)
        if known is None:
            raise ValueError(f"kernel {self.fn.name}: a search of {buffer}, which is not a buffer")
        return known.dtype

    def for_printing(self) -> "_Plan":
        """This plan with fresh names of its own, which printing takes from: the plan :func:`_plan`
        keeps answers the interface's questions with the names it was made with, and a second
        printing of the function prints the same C.

        >>> from compiler.imperative import Buffer, Function
        >>> plan = _Plan(Function("k", (Buffer("y", "float64", "inout"),), []), False)
        >>> plan.for_printing().fresh("t"), plan.for_printing().fresh("t"), plan.fresh("y")
        ('t', 't', 'y_2')
        """
        copy = object.__new__(_Plan)
        copy.__dict__.update(self.__dict__)
        copy.fresh = FreshNames(self.fresh.taken)
        return copy


class _CPrinter(Printer):
    def __init__(self, plan: _Plan):
        super().__init__()
        self.plan = plan
        # the scratch arrays allocated around the statement being printed, by allocation (a workspace's
        # arrays are allocated together)
        self.live: list[tuple[str, ...]] = []

    def out_of_memory_exit(self, depth: int, cond: str, also: list[str] = ()):
        """``if (cond) return KERNEL_OUT_OF_MEMORY;``, freeing ``also`` and the live scratch arrays first."""
        self.exit_if(depth, cond, f"return {self.plan.out_of_memory};", also)

    def exit_if(self, depth: int, cond: str, ret: str, also: list[str] = ()):
        """``if (cond) ret``, freeing ``also`` and the live scratch arrays first."""
        freed = [*self.live, tuple(also)] if also else list(self.live)
        if not freed:
            self.emit(depth, f"if ({cond})")
            self.emit(depth + 1, ret)
            return
        self.emit(depth, f"if ({cond}) {{")
        for group in reversed(freed):
            self.free_all(depth + 1, list(reversed(group)))
        self.emit(depth + 1, ret)
        self.emit(depth, "}")

    def free_all(self, depth: int, buffers: list[str], width: int = 112):
        """``free(b);`` of each of the buffers allocated together, on one line where they fit in ``width``
        columns: every exit frees every live scratch array, and a workspace has up to six, so one to a line
        buried the exit's test."""
        line = ""
        for b in buffers:
            call = f"free({b});"
            if line and len(INDENT * depth) + len(line) + 1 + len(call) > width:
                self.emit(depth, line)
                line = ""
            line = f"{line} {call}" if line else call
        if line:
            self.emit(depth, line)

    def type_name(self, dtype: str) -> str:
        return c_type(dtype)

    special_floats = {"nan": "NAN", "inf": "INFINITY", "-inf": "-INFINITY"}

    def float_literal(self, v: float, dtype: str) -> str:
        return repr(v) + "f" if dtype == "float32" else repr(v)

    def complex_literal(self, v: complex, dtype: str) -> str:
        # a real value converts to the complex type by itself (imaginary part +0.0); others are built
        # by <complex.h>'s CMPLX, which keeps a NaN or infinite part as it is (re + im * I would not)
        part = "float32" if dtype == "complex64" else "float64"
        re, im = (self.const(Const(x, part)) for x in (v.real, v.imag))
        if spelled_real(v):
            return re
        return f"{'CMPLXF' if part == 'float32' else 'CMPLX'}({re}, {im})"

    def int_literal(self, v: int, dtype: str) -> str:
        if dtype in ("uint32", "uint64") and v >= 2 ** 31:   # (a plain literal would be a signed int64)
            return f"{v}u" if dtype == "uint32" else f"UINT64_C({v})"
        if dtype == "int64":
            if v == -2 ** 63:
                return "INT64_MIN"
            if not -2 ** 31 <= v < 2 ** 31:
                return f"INT64_C({v})"
        elif v == -2 ** 31:
            return "INT32_MIN"
        return str(v)

    def _indexed(self, buffer: str, index, access: str) -> str:
        plan = self.plan
        if buffer not in plan.locals and buffer not in plan.views and (buffer not in plan.params
                                          or not isinstance(plan.params[buffer], (Buffer, Growable))):
            raise ValueError(f"kernel {plan.fn.name}: {access} of {buffer}, which is not a buffer parameter")
        idx = self.expr(index)
        if plan.checked:
            mode = plan.read if access == "read" else plan.write
            idx = (f"{plan.check_index}(&{plan.check}, {mode}, {plan.buffer_id[buffer]}, {idx}, "
                   f"{plan.length[buffer]})")
        return f"{buffer}[{idx}]"

    def load(self, e: Load) -> str:
        return self._indexed(e.buffer, e.index, "read")

    def call(self, e: Call) -> str:
        if e.function not in SEARCH_FUNCTIONS:
            return super().call(e)
        plan, buffer = self.plan, e.args[0].buffer
        args = [buffer, *(self.expr(a) for a in e.args[1:])]
        if plan.checked:   # (the checked helper checks its reads as the kernel's are checked)
            args[:0] = [f"&{plan.check}", plan.buffer_id[buffer]]
            args.insert(2, plan.length[buffer])
        return f"{e.function}_{plan.dtype_of(buffer)}({', '.join(args)})"

    def stmt(self, s, depth):
        if isinstance(s, Store):
            op = s.op or ""
            self.emit(depth, f"{self._indexed(s.buffer, s.index, 'write')} {op}= {self.expr(s.value)};")
        elif isinstance(s, Pragma) and self.plan.checked and s.text.split()[:2] == ["omp", "simd"]:
            # the bounds checks' exits keep the loop scalar anyway; say so rather than pretend
            self.emit(depth, f"// checked mode runs this loop in its written order (vectorization asked for: {s.text})")
        elif isinstance(s, Pragma) and self.plan.checked and s.text.split() == ["omp", "atomic"]:
            self.emit(depth, "// checked mode runs on one thread: this update needs no atomic (the schedule asked "
                             "for: omp atomic)")
        elif isinstance(s, Pragma) and self.plan.checked and s.text.split()[:2] == ["omp", "declare"]:
            self.emit(depth, "// checked mode runs on one thread: no threads' results to combine "
                             f"(the schedule asked for: {s.text.split('(')[0]}({s.text.split('(')[1].split()[0]}))")
        elif isinstance(s, Pragma) and self.plan.checked and s.text.split()[:1] == ["omp"]:
            # A bounds error leaves the kernel by longjmp, which must not cross threads.
            self.emit(depth, f"// checked mode runs this loop on one thread (the schedule asked for: {s.text})")
        else:
            super().stmt(s, depth)

    def length(self, e) -> str:
        """A scratch array's length, its products (and sums of them) through the checked helpers:
        ``A1_size * B1_size`` can exceed int64_t (two 2^32-column tensors); the helpers then give
        -1, which ``alloc_array`` refuses (out of memory) rather than allocating a wrapped size."""
        if isinstance(e, BinOp) and e.op == "*":
            return f"{self.plan.length_product}({self.length(e.left)}, {self.length(e.right)})"
        if isinstance(e, BinOp) and e.op == "+" and _has_product(e):
            return f"{self.plan.length_sum}({self.length(e.left)}, {self.length(e.right)})"
        return self.expr(e)

    def allocate(self, s: Allocate, depth: int):
        """Directly nested allocations are made together, with one check for all of them."""
        plan = self.plan
        if s.stack:
            self.stack_array(s, depth)
            return
        chain = [s]
        while len(chain[-1].body.body) == 1 and isinstance(chain[-1].body.body[0], Allocate) \
                and not chain[-1].body.body[0].stack:
            inner, made = chain[-1].body.body[0], {a.buffer for a in chain}
            if any(isinstance(n, Load) and n.buffer in made for n in walk((inner.length, inner.init))):
                break   # its size is read from one of them: allocated after their check
            chain.append(inner)
        for a in chain:
            zero = a.init is None or (isinstance(a.init, Const) and a.init.value == 0)
            self.emit(depth, f"{c_type(a.dtype)} *{a.buffer} = {plan.alloc_array}({self.length(a.length)}, "
                             f"sizeof *{a.buffer}, {'true' if a.init is not None and zero else 'false'});")
        if len(chain) == 1:
            self.out_of_memory_exit(depth, f"{s.buffer} == NULL")
        else:  # free(NULL) does nothing: free them all
            self.out_of_memory_exit(depth, " || ".join(f"!{a.buffer}" for a in chain), [a.buffer for a in chain])
        for a in chain:
            if plan.checked:
                self.emit(depth, f"int64_t {plan.length[a.buffer]} = {self.expr(a.length)};")
                # a bounds error leaves by longjmp: the handler frees what is registered here
                self.emit(depth, f"{plan.check}.scratch[{plan.scratch_slot[a.buffer]}] = {a.buffer};")
            if not (a.init is None or (isinstance(a.init, Const) and a.init.value == 0)):
                k = plan.fresh(f"{a.buffer}_k")
                self.emit(depth, f"for (int64_t {k} = 0; {k} < {self.expr(a.length, 10)}; {k}++)")
                self.emit(depth + 1, f"{a.buffer}[{k}] = {self.expr(a.init)};")
        self.live.append(tuple(a.buffer for a in chain))
        self.stmt(chain[-1].body, depth)
        self.live.pop()
        if not plan.checked:
            self.free_all(depth, [a.buffer for a in reversed(chain)])
        for a in reversed(chain) if plan.checked else ():
            self.emit(depth, f"free({a.buffer});")
            self.emit(depth, f"{plan.check}.scratch[{plan.scratch_slot[a.buffer]}] = NULL;")

    def stack_array(self, s: Allocate, depth: int):
        """A scratch array of constant length on the stack: nothing to allocate, check or free."""
        zero = s.init is not None and isinstance(s.init, Const) and s.init.value == 0
        self.emit(depth, f"{c_type(s.dtype)} {s.buffer}[{self.expr(s.length)}]{' = {0}' if zero else ''};")
        if self.plan.checked:
            self.emit(depth, f"int64_t {self.plan.length[s.buffer]} = {self.expr(s.length)};")
        if s.init is not None and not zero:
            k = self.plan.fresh(f"{s.buffer}_k")
            self.emit(depth, f"for (int64_t {k} = 0; {k} < {self.expr(s.length, 10)}; {k}++)")
            self.emit(depth + 1, f"{s.buffer}[{k}] = {self.expr(s.init)};")
        self.stmt(s.body, depth)   # (not live: an early exit has nothing of it to free)

    def view(self, s: View, depth: int):
        t = c_type(s.dtype)
        self.emit(depth, f"{t} *restrict {s.buffer} = {s.of} + {self.expr(s.offset, 13)};")
        if self.plan.checked:
            self.emit(depth, f"int64_t {self.plan.length[s.buffer]} = {self.expr(s.length)};")

    def check_coordinate(self, s: CheckCoordinate, depth: int):
        plan = self.plan
        value, extent = self.expr(s.value), self.expr(s.extent)
        self.emit(depth, f"// {s.what}")
        if s.noun == STORED:
            # (one unsigned compare, a negative value a huge one, at each entry an input's owner stored: ``v < 0 ||
            # v >= n`` cost a SpMV reading a scipy matrix in place 0.13 ms of 0.64 over a million entries, this 0.03)
            cond = f"(uint64_t){self.expr(s.value, 15)} >= (uint64_t){self.expr(s.extent, 15)}"
        else:
            low = "" if isinstance(s.value, Const) and s.value.value >= 0 else f"{self.expr(s.value, 10)} < 0 || "
            cond = f"{low}{self.expr(s.value, 10)} >= {self.expr(s.extent, 10)}"
        self.exit_if(depth, cond,
                     f"return {plan.coordinate_error}({plan.error}, {plan.sites[s.site]}, {value}, {extent});")

    def prefetch(self, s: Prefetch, depth: int):
        # not an access: no bounds check, and an address past the end does not fault
        self.emit(depth, f"__builtin_prefetch(&{s.buffer}[{self.expr(s.index)}]);")

    def grow(self, s: Grow, depth: int):
        plan = self.plan
        p = plan.params.get(s.buffer)
        if not isinstance(p, Growable):
            raise ValueError(f"kernel {plan.fn.name}: Grow of {s.buffer}, which is not a Growable parameter")
        needed, cap = self.expr(s.needed), plan.length[s.buffer]
        grow = f"{plan.grow_buffer}({s.buffer}, &{cap}, {needed}, sizeof *{s.buffer})"
        if s.first:   # no room yet: nothing to test
            if s.hint:   # NULL when memory is short, as it was, and the capacity stays 0
                self.emit(depth, f"{s.buffer} = {grow};  // if NULL, the loops grow it as they go")
            else:
                self.emit(depth, f"{s.buffer} = {grow};")
                self.out_of_memory_exit(depth, f"{s.buffer} == NULL")
            self.emit(depth, f"*{plan.out[s.buffer]} = {s.buffer};")
            return
        self.emit(depth, f"if ({self.expr(s.needed, 11)} > {cap}) {{")
        if s.hint:
            self.emit(depth + 1, f"void *{plan.room} = {grow};")
            self.emit(depth + 1, f"if ({plan.room} != NULL) {{  // else the loops grow it as they go")
            self.emit(depth + 2, f"{s.buffer} = {plan.room};")
            self.emit(depth + 2, f"*{plan.out[s.buffer]} = {s.buffer};")
            self.emit(depth + 1, "}")
        else:
            self.emit(depth + 1, f"{s.buffer} = {grow};")
            self.out_of_memory_exit(depth + 1, f"{s.buffer} == NULL")
            self.emit(depth + 1, f"*{plan.out[s.buffer]} = {s.buffer};")
        self.emit(depth, "}")


def _c_param(plan: _Plan, a: CArg, restrict: bool, named: bool = True) -> str:
    t = c_type(a.dtype) if a.dtype else ""
    name = a.c_name if named else ""
    if a.kind == "scalar":
        return f"{t} {name}".rstrip()
    if a.kind == "buffer":
        p = plan.params[a.name]
        if p.intent == "in":
            return f"const {t} *{'restrict ' if restrict else ''}{name}"
        return f"{t} *{name}"
    if a.kind == "length":
        return f"int64_t {name}".rstrip()
    if a.kind == "out":
        return f"{t} *{name}"
    if a.kind == "growable":
        return f"{t} **{name}"
    if a.kind == "error":
        return f"int64_t *{name}"
    raise ValueError(a.kind)


def _signature(plan: _Plan, restrict: bool, wrap: bool) -> str:
    params = [_c_param(plan, a, restrict) for a in plan.args] or ["void"]
    one_line = f"int {plan.fn.name}({', '.join(params)})"
    if not wrap or len(one_line) <= 100:
        return one_line
    inner = (",\n" + INDENT).join(params)
    return f"int {plan.fn.name}(\n{INDENT}{inner})"


_PLANS: dict = {}   # (id(fn), checked) -> (fn, plan): the last few functions' plans


def _plan(fn: Function, checked: bool) -> _Plan:
    """``fn``'s plan, made once for the questions about its interface: a kernel asks for its
    arguments, declarations and free function, and each plan walks the whole function (a large
    kernel's walks took seconds). Printing takes a copy (:meth:`_Plan.for_printing`)."""
    key = (id(fn), checked)
    got = _PLANS.get(key)
    if got is not None and got[0] is fn:
        return got[1]
    if len(_PLANS) >= 8:
        _PLANS.clear()
    plan = _PLANS[key] = (fn, _Plan(fn, checked))   # (keeping fn keeps its id from being reused)
    return plan[1]


def c_arguments(fn: Function, checked: bool = False) -> tuple[CArg, ...]:
    """The kernel's C arguments in order (the calling convention in the module docstring)."""
    return tuple(_plan(fn, checked).args)


def c_declarations(fn: Function, checked: bool = False) -> str:
    """The exported declarations, for ``cffi.FFI().cdef`` (no ``restrict``)."""
    plan = _plan(fn, checked)
    decls = [_signature(plan, restrict=False, wrap=False) + ";"]
    if plan.free:
        decls.append(f"void {plan.free}(void *p);")
    return "\n".join(decls)


def c_function_types(fn: Function, checked: bool = False) -> dict[str, str]:
    """The exported functions' C types, by name, as function pointers: what
    :func:`~compiler.backend.build.load_functions` looks up (the same functions as
    :func:`c_declarations`; a type's text is shared by the kernels of one signature).

    >>> from compiler.imperative.examples import csr_spmv
    >>> c_function_types(csr_spmv())
    {'spmv': 'int (*)(int64_t, const int64_t *, const int64_t *, const double *, const double *, double *)'}
    """
    plan = _plan(fn, checked)
    params = [_c_param(plan, a, restrict=False, named=False) for a in plan.args] or ["void"]
    types = {fn.name: f"int (*)({', '.join(params)})"}
    if plan.free:
        types[plan.free] = "void (*)(void *)"
    return types


def free_function(fn: Function) -> str | None:
    """The exported name that frees growable outputs, or None without growables."""
    return _plan(fn, False).free


def emit_c(fn: Function, checked: bool = False) -> str:
    """Readable C source for ``fn``: includes, support code, helpers, one exported kernel."""
    return emit_c_with_provenance(fn, checked)[0]


def emit_c_with_provenance(fn: Function, checked: bool = False) -> tuple[str, dict[str, list[int]]]:
    """The C source of ``fn`` and, for each :class:`~compiler.imperative.ir.Tagged` tag,
    the 1-based numbers of the C lines its statements produced.

    >>> from compiler.imperative import Buffer, Tagged, Function
    >>> y = Buffer("y", "float64", "inout")
    >>> source, lines = emit_c_with_provenance(Function("k", (y,), [Tagged("zero", [y.store(0, 0.0)])]))
    >>> [source.splitlines()[n - 1].strip() for n in lines["zero"]]
    ['y[0] = 0.0;']
    """
    if not checked:   # (a checked build runs such loops as written: their pragmas are comments there)
        leaving = simd_exit(fn.body.body)
        if leaving is not None:
            raise ValueError(f"kernel {fn.name}: {leaving} is inside a loop marked omp simd, which nothing may "
                             f"leave (OpenMP's rule; GCC refuses the kernel)")
    plan = _plan(fn, checked).for_printing()   # (the one plan of fn, but printing takes fresh names of its own)
    out: list[str] = [f"/* sparsescope kernel {fn.name}{' (checked)' if checked else ''} */"]
    includes = ["stdbool.h", "stdint.h"]
    if plan.uses_math:
        includes.append("math.h")
    if plan.uses_complex:
        includes.append("complex.h")
    if plan.growables or plan.heap:
        includes.append("stdlib.h")
    if checked:
        includes.append("setjmp.h")
    if plan.grows:
        # madvise, for 2 MB pages under growing outputs (Linux; glibc declares it only on request)
        out += ["#ifdef __linux__", "#ifndef _DEFAULT_SOURCE", "#define _DEFAULT_SOURCE", "#endif",
                "#include <sys/mman.h>", "#endif"]
    out += [f"#include <{h}>" for h in sorted(includes)]
    out.append("")

    statuses = []
    if checked:
        statuses.append(f"{plan.out_of_bounds} = {STATUS_OUT_OF_BOUNDS}")
    if plan.out_of_memory:
        statuses.append(f"{plan.out_of_memory} = {STATUS_OUT_OF_MEMORY}")
    if plan.out_of_range:
        statuses.append(f"{plan.out_of_range} = {STATUS_COORDINATE}")
    if statuses:
        out += [f"enum {{ {', '.join(statuses)} }};", ""]

    if checked:
        ids = ", ".join(plan.buffer_id[b] for b in plan.buffer_order)
        modes = ", ".join(m for m, a in ((plan.read, "read"), (plan.write, "write")) if a in plan.accesses)
        if modes:
            out += [f"enum {{ {modes} }};" if modes.startswith(plan.read) else f"enum {{ {plan.write} = 1 }};"]
        if ids:
            out += [f"enum {{ {ids} }};"]
        out += [
            "",
            f"struct {plan.check_type} {{",
            f"{INDENT}jmp_buf escape;",
            f"{INDENT}int64_t *error;",
            *([f"{INDENT}void *volatile scratch[{len(plan.locals)}];  /* scratch arrays to free on leaving */"]
              if plan.locals else []),
            "};",
            "",
        ]
        if plan.accesses:
            out += [
                "/* Return i if it is inside [0, length); otherwise record the access and leave the kernel. */",
                f"static int64_t {plan.check_index}(struct {plan.check_type} *c, int access, int buffer, "
                f"int64_t i, int64_t length)",
                "{",
                f"{INDENT}if (i < 0 || i >= length) {{",
                f"{INDENT * 2}c->error[0] = access;",
                f"{INDENT * 2}c->error[1] = buffer;",
                f"{INDENT * 2}c->error[2] = i;",
                f"{INDENT * 2}c->error[3] = length;",
                f"{INDENT * 2}longjmp(c->escape, 1);",
                f"{INDENT}}}",
                f"{INDENT}return i;",
                "}",
                "",
            ]
    if plan.sites:
        out += [
            "/* Record which computed coordinate is outside its extent, its value and the extent. */",
            f"static int {plan.coordinate_error}(int64_t *error, int64_t site, int64_t value, int64_t extent)",
            "{",
            f"{INDENT}error[0] = site;",
            f"{INDENT}error[1] = value;",
            f"{INDENT}error[2] = extent;",
            f"{INDENT}return {plan.out_of_range};",
            "}",
            "",
        ]
    if plan.lowest_bit:
        out += [
            "/* The index of the lowest set bit of a nonzero word (one instruction on most CPUs). */",
            "static inline int64_t lowest_bit(int64_t word)",
            "{",
            f"{INDENT}return __builtin_ctzll((unsigned long long)word);",
            "}",
            "",
        ]
    if plan.threads:
        out += [
            "#ifdef _OPENMP",
            "#include <omp.h>",
            "#endif",
            "",
            "/* How many threads a parallel loop may run on (1 without OpenMP). */",
            "static inline int64_t thread_count(void)",
            "{",
            "#ifdef _OPENMP",
            f"{INDENT}return omp_get_max_threads();",
            "#else",
            f"{INDENT}return 1;",
            "#endif",
            "}",
            "",
            "/* Which thread runs the calling iteration of a parallel loop (0 without OpenMP). */",
            "static inline int64_t thread_id(void)",
            "{",
            "#ifdef _OPENMP",
            f"{INDENT}return omp_get_thread_num();",
            "#else",
            f"{INDENT}return 0;",
            "#endif",
            "}",
            "",
        ]
    if plan.grows:
        out += [
            "/* realloc(buf, bytes), asking for 2 MB pages under a large buffer, as numpy does for its",
            " * arrays: a fresh buffer's first touch then takes up to 512 times fewer page faults (a hint). */",
            f"static void *{plan.resize}(void *buf, size_t bytes)",
            "{",
            f"{INDENT}void *grown = realloc(buf, bytes);",
            "#ifdef MADV_HUGEPAGE",
            f"{INDENT}if (grown != NULL && bytes >= ((size_t)1 << 22)) {{",
            f"{INDENT * 2}uintptr_t start = (uintptr_t)grown & ~(uintptr_t)4095;  /* from the page it starts in */",
            f"{INDENT * 2}madvise((void *)start, (uintptr_t)grown + bytes - start, MADV_HUGEPAGE);",
            f"{INDENT}}}",
            "#endif",
            f"{INDENT}return grown;",
            "}",
            "",
            "/* Reallocate buf to hold at least `needed` elements, doubling its capacity (a first buffer",
            " * holds just what is needed, at least 16: room reserved up front); NULL if out of memory. */",
            f"static void *{plan.grow_buffer}(void *buf, int64_t *capacity, int64_t needed, size_t size)",
            "{",
            f"{INDENT}if (needed > INT64_MAX / 2 / (int64_t)size)  /* no such size: doubling would overflow */",
            f"{INDENT * 2}return NULL;",
            f"{INDENT}int64_t cap = *capacity > 0 ? *capacity : needed > 16 ? needed : 16;",
            f"{INDENT}while (cap < needed)",
            f"{INDENT * 2}cap *= 2;",
            f"{INDENT}void *grown = {plan.resize}(buf, (size_t)cap * size);",
            f"{INDENT}if (grown != NULL)",
            f"{INDENT * 2}*capacity = cap;",
            f"{INDENT}return grown;",
            "}",
            "",
        ]
    if plan.length_product:
        out += [
            "/* a * b as an array's length, or -1 (no such array) when it is more than int64_t holds. */",
            f"static int64_t {plan.length_product}(int64_t a, int64_t b)",
            "{",
            f"{INDENT}return a < 0 || b < 0 || (b > 0 && a > INT64_MAX / b) ? -1 : a * b;",
            "}",
            "",
        ]
    if plan.length_sum:
        out += [
            "/* a + b as an array's length, or -1 (no such array) when it is more than int64_t holds. */",
            f"static int64_t {plan.length_sum}(int64_t a, int64_t b)",
            "{",
            f"{INDENT}return a < 0 || b < 0 || a > INT64_MAX - b ? -1 : a + b;",
            "}",
            "",
        ]
    if plan.alloc_array:
        out += [
            "/* A scratch array of n elements (zeroed if asked); NULL when out of memory or when no",
            " * such array exists (n < 0: its length overflowed; more bytes than size_t counts). */",
            f"static void *{plan.alloc_array}(int64_t n, size_t size, bool zero)",
            "{",
            f"{INDENT}if (n < 0 || (uint64_t)n > SIZE_MAX / size)",
            f"{INDENT * 2}return NULL;",
            f"{INDENT}size_t count = n > 0 ? (size_t)n : 1;",
            f"{INDENT}return zero ? calloc(count, size) : malloc(count * size);",
            "}",
            "",
        ]
    if plan.free:
        out += [
            "/* Growable outputs are freed by the caller with the allocator that grew them. */",
            f"void {plan.free}(void *p)",
            "{",
            f"{INDENT}free(p);",
            "}",
            "",
        ]
    checks = (plan.check_type, plan.check_index, plan.read) if checked else None
    for h in plan.searches:
        out += [h.c_source(checks, INDENT), ""]
    for h in fn.helpers:
        out += [h.source.strip("\n"), ""]

    printer = _CPrinter(plan)
    out += [_signature(plan, restrict=True, wrap=True), "{"]
    body: list[str] = []
    if checked:
        body += [f"struct {plan.check_type} {plan.check} = {{.error = {plan.error}}};"]
        if plan.locals:
            k = plan.fresh("k")
            body += [f"if (setjmp({plan.check}.escape)) {{",
                     f"{INDENT}for (int {k} = 0; {k} < {len(plan.locals)}; {k}++)",
                     f"{INDENT * 2}free({plan.check}.scratch[{k}]);",
                     f"{INDENT}return {plan.out_of_bounds};",
                     "}"]
        else:
            body += [f"if (setjmp({plan.check}.escape))",
                     f"{INDENT}return {plan.out_of_bounds};"]
    for p in fn.params:
        # (the kernel stores an out scalar through its pointer at the end: that reads it too)
        if isinstance(p, OutScalar) and not reads_before_set([*fn.body.body, Store(p.name, 0, p.var)], p.name):
            body.append(f"{c_type(p.dtype)} {p.name};  // set below, before anything reads it")
        elif isinstance(p, OutScalar):
            body.append(f"{c_type(p.dtype)} {p.name} = {printer.const(Const(p.init, p.dtype))};")
        elif isinstance(p, Growable):
            body.append(f"{c_type(p.dtype)} *{p.name} = NULL;")
            body.append(f"int64_t {plan.length[p.name]} = 0;")
    out += [INDENT + line for line in body]
    printer.stmt(fn.body, 1)
    first = "\n".join(out).count("\n") + 2  # the 1-based line of printer.lines[0]
    # (one int object per line, shared by the tags that hold it: a line sits in every tag around it, and
    # an int of its own per tag was a fifth of what a test worker's kernels held)
    line_of = list(range(first, first + len(printer.lines)))
    provenance = {tag: [line_of[k] for k in ks] for tag, ks in printer.tag_lines.items()}
    out += printer.lines
    for p in fn.params:
        if isinstance(p, OutScalar):
            out.append(f"{INDENT}*{plan.out[p.name]} = {p.name};")
    out += [f"{INDENT}return 0;", "}", ""]
    return "\n".join(out), provenance
