"""A user function's C body checked against its Python oracle before a kernel uses it.

:func:`~compiler.user_functions.user_function` takes two implementations of one function: ``py``,
which the oracles run, and ``c_body``, which the kernels do (and cheaper bodies for some of the
lattice's cases). A C body that disagrees with ``py`` gave kernels whose values differ from the
oracle's, silently. So a lowering notes each user function it applies, with the operand dtypes
(:func:`note`, from both strategies), and :func:`check_noted` builds the function's C helper into a
small library (the kernels' build path and flags, so the C is compiled as a kernel's is) that runs it
on probe values, and compares each result with ``py``'s; each case body is compared with the general
body at the case's absent values. Each function is checked once per process, operand dtypes and
non-finite values probed.

The probes: for a float argument 0, ±1, 2, ±0.5, and NaN, +inf, -inf where the kernel's tensors
(their values or fills) may hold them (as :func:`compiler.lattice.algebra.check_stated` probes them: a
``max`` in C that ignores a NaN disagrees with Python's only on values holding one); for an integer
argument 0, ±1, 2, -2 and 7 (no negatives for an unsigned one); for a bool one both; and for any, the
values the function names (its identity, annihilator, the fills of its stated algebra and the absent
values of its cases).
Results agree where both are NaN, equal infinities, equal integers or bools, or floats within
:data:`ULPS` units of the precision of the least precise float among the operands and the result
(relative to the larger of 1 and the results: C's ``exp`` and numpy's may round differently in the
last place, and a body may compute in its arguments' precision, ``expf`` of a float32). A probe
``py`` raises at (``math.gcd`` of a float) checks nothing; one where the C body traps (an integer
division by zero) is a disagreement, reported as such, not a crash: a kernel would crash there.

>>> from compiler.user_functions import user_function
>>> bad = user_function("clip3", lambda x, y: max(x, y), "return x < y ? x : y;")
>>> check(bad, ("float64", "float64"))
Traceback (most recent call last):
...
compiler.errors.UserCodeError: user function clip3: its C body gives 0.0 at (x=0.0, y=1.0) (float64, float64), its py gives 1.0; the kernels run the C body and the oracles py, so they must agree
>>> mx = user_function("mx", max, "return x > y ? x : y;")
>>> print(check(mx, ("int64", "int64")))
mx: its C body agrees with py at 36 probes (int64, int64)
>>> check(mx, ("float64", "float64"), values.Facts(nan=True))
Traceback (most recent call last):
...
compiler.errors.UserCodeError: user function mx: its C body gives NaN at (x=0.0, y=NaN) (float64, float64), its py gives 0.0; the kernels run the C body and the oracles py, so they must agree
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
import os
import threading

import numpy as np

from . import values
from .algebra import NOVALUE, Operator
from .dtypes import c_type, value_dtype
from .errors import UserCodeError
from .opimpls import IMPLS

#: the values each float argument is probed at (besides the values the function names, and the
#: non-finite ones the kernel's values may hold)
FLOAT_PROBES = (0.0, 1.0, -1.0, 2.0, 0.5, -0.5)

#: the non-finite probes, by the names :meth:`compiler.values.Facts.kinds` gives them
NONFINITE = {"nan": math.nan, "+inf": math.inf, "-inf": -math.inf}

#: the values each integer argument is probed at (the negative ones not for an unsigned argument)
INT_PROBES = (0, 1, -1, 2, -2, 7)

#: at most this many probes of one function (a function of many parameters)
LIMIT = 4096

#: floats agree within this many units of their precision (times the larger of 1 and the
#: results): a transcendental in C and in numpy may differ in the last place
ULPS = 16

_lock = threading.Lock()
_run_lock = threading.Lock()
#: (operator, operand dtypes, non-finite values probed) -> (its Python implementation then, whether
#: they agree, the trace's note or the error's message)
_CHECKED: dict = {}
_NOTED: contextvars.ContextVar = contextvars.ContextVar("noted_user_functions", default=None)


@contextlib.contextmanager
def noting():
    """Collect the user functions a lowering applies (:func:`note`); yields the collection, for
    :func:`check_noted`."""
    noted: dict = {}
    token = _NOTED.set(noted)
    try:
        yield noted
    finally:
        _NOTED.reset(token)


def note(op: Operator, dtypes) -> None:
    """Record that the lowering (if one is :func:`noting`) applies the user function ``op`` to operands
    of ``dtypes`` (its C helper is ``op.c_helper(dtypes)``)."""
    noted = _NOTED.get()
    if noted is not None and op.is_user:
        dts = tuple(value_dtype(d).name for d in dtypes)
        noted.setdefault((op, dts), None)


def check_noted(noted: dict, helpers, trace=None, may_hold: values.Facts = values.FINITE) -> None:
    """Check the C body of each user function in ``noted`` whose helper is among ``helpers`` (the
    lowered function's :class:`~compiler.imperative.ir.Helper` s: a lowering a strategy tried and
    dropped is not checked), at the non-finite values ``may_hold`` (what the kernel's tensors may hold);
    record a ``user-functions`` step in ``trace``. Raises :class:`~compiler.errors.UserCodeError` at the
    first disagreement."""
    sources = {h.source for h in helpers}
    used = [(op, dts) for op, dts in noted if op.c_helper(list(dts)) in sources]
    # (a function before its cases' operators: a wrong case body is named as its case, against the general body)
    used.sort(key=lambda u: u[0].param is not NOVALUE)
    notes = [check(op, dts, may_hold) for op, dts in used]
    if trace is not None and any(notes):
        trace.record("user-functions", note="; ".join(n for n in notes if n),
                     data={"checked": [f"{op.name}({', '.join(dts)})" for op, dts in used]})


def check(op: Operator, dtypes, may_hold: values.Facts = values.FINITE) -> str:
    """Check the C body of the user function ``op`` for operands of ``dtypes`` against its Python
    implementation, and its case bodies against the general one (once per process; see the module
    docstring), at the non-finite values ``may_hold``. Returns what was checked, for the trace; raises
    :class:`UserCodeError` where they disagree.

    >>> from compiler.user_functions import user_function
    >>> f = user_function("half", lambda x, y: x / 2 if y else x, "return y ? x / 2 : x;",
    ...                   cases={"x,0": "return x / 2;"})
    >>> check(f, ("float64", "bool"))
    Traceback (most recent call last):
    ...
    compiler.errors.UserCodeError: user function half: its body for case 'x,0' gives 0.5 at (x=1.0) (float64), its general body gives 1.0 at (x=1.0, y=False); a case body must equal the general body with the other arguments at those values
    """
    dts = tuple(value_dtype(d).name for d in dtypes)
    impl = IMPLS.get(op.impl_key())
    kinds = may_hold.kinds()
    key = (op, dts, kinds)
    with _lock:
        hit = _CHECKED.get(key)
    # (a function redefined with the same C body and another py is checked again)
    if hit is None or hit[0] is not impl:
        hit = (impl, *_check(op, dts, kinds))
        with _lock:
            if len(_CHECKED) >= 4096:
                _CHECKED.pop(next(iter(_CHECKED)))
            _CHECKED[key] = hit
    _, ok, text = hit
    if not ok:
        raise UserCodeError(text)
    return text


def _check(op: Operator, dts: tuple, kinds: tuple) -> tuple[bool, str]:
    """``(agrees, the note or the error's message)`` of ``op``'s C body at operand dtypes ``dts``."""
    shown = f"({', '.join(dts)})"
    if os.name != "posix":
        return True, f"{op.name}: its C body is not checked on this platform {shown}"
    probes = _probes(op, dts, kinds)
    cases = _cases(op, dts, probes)
    try:
        with _run_lock:     # (one trap handler at a time)
            results = _run_c(op, dts, probes, cases)
    except UserCodeError:
        # (a C body that does not compile: the kernel's build says why, with the compiler's message)
        return True, ""
    got, trapped = results[0]
    within = _precision(dts, got.dtype)
    for k, args in enumerate(probes):
        want = _py_value(op, args)
        if want is None:
            continue
        c_value = None if trapped[k] else got[k].item()
        if c_value is None or not _agree(c_value, want, within):
            does = "traps (SIGFPE, as an integer division by zero does)" if c_value is None \
                else f"gives {_text(c_value)}"
            return False, (f"user function {op.name}: its C body {does} at {_args_text(op.params, args)} "
                           f"({', '.join(dts)}), its py gives {_text(want)}; the kernels run the C body "
                           f"and the oracles py, so they must agree")
    for (case, present, case_probes, full), (case_got, case_trapped) in zip(cases, results[1:]):
        for k, args in enumerate(case_probes):
            if trapped[full[k]]:
                continue
            want = got[full[k]].item()
            c_value = None if case_trapped[k] else case_got[k].item()
            if c_value is None or not _agree(c_value, want, within):
                does = "traps (SIGFPE)" if c_value is None else f"gives {_text(c_value)}"
                return False, (f"user function {op.name}: its body for case {case!r} {does} at "
                               f"{_args_text(present, args)} ({', '.join(dts[op.params.index(p)] for p in present)}), "
                               f"its general body gives {_text(want)} at {_args_text(op.params, probes[full[k]])}; "
                               f"a case body must equal the general body with the other arguments at those values")
    checked = f"{op.name}: its C body agrees with py at {len(probes)} probes {shown}"
    if cases:
        checked += f", its case bodies ({', '.join(repr(c[0]) for c in cases)}) with the general body"
    return True, checked


def _named_values(op: Operator) -> list:
    """The values ``op`` names: identity, annihilator, its stated algebra's fills, its cases' absent values."""
    out = [op.identity, op.annihilator]
    if isinstance(op.algebra, tuple):
        out += [v for _, v in op.algebra[1]]
    out += [v for _, _, absent in op.cases for _, v in absent]
    return [v for v in out if v is not NOVALUE and isinstance(v, (bool, int, float, np.generic))]


def _arg_probes(dtype: np.dtype, named: list, kinds: tuple = ()) -> list:
    """The values one argument of ``dtype`` is probed at, as that dtype's scalars, each once."""
    if dtype.kind == "b":
        base = [False, True]
    elif dtype.kind in "iu":
        base = [v for v in INT_PROBES if dtype.kind == "i" or v >= 0]
    else:
        base = [*FLOAT_PROBES, *(NONFINITE[k] for k in kinds)]
    out = []
    for v in [*base, *named]:
        x = _as_probe(v, dtype)
        if x is not None and not any(_same_probe(x, y) for y in out):
            out.append(x)
    return out


def _as_probe(v, dtype: np.dtype):
    """``v`` as a scalar of ``dtype``, or None where it is no value of it (NaN, inf or 0.5 of an
    integer argument, -1 of an unsigned one)."""
    if dtype.kind in "iub" and isinstance(v, float) and not (math.isfinite(v) and v == int(v)):
        return None
    if dtype.kind == "u" and v < 0:
        return None
    with np.errstate(all="ignore"):
        return np.asarray(v).astype(dtype)[()]


def _probes(op: Operator, dts: tuple, kinds: tuple) -> list[tuple]:
    named = _named_values(op)
    return list(itertools.islice(itertools.product(*(_arg_probes(np.dtype(d), named, kinds) for d in dts)), LIMIT))


def _cases(op: Operator, dts: tuple, probes: list) -> list[tuple]:
    """Each case body of ``op`` to compare: ``(case text, present params, probes of the present
    arguments, the index in ``probes`` of the full probe each is)``."""
    out = []
    for names, _, absent in op.cases:
        present = tuple(op.params.index(p) for p in names)
        fixed = {op.params.index(p): v for p, v in absent}
        want = {k: _as_probe(v, np.dtype(dts[k])) for k, v in fixed.items()}
        # (an absent value the argument cannot hold is of a case never emitted for it)
        if all(x is not None for x in want.values()):
            full = [n for n, args in enumerate(probes) if all(_same_probe(args[k], v) for k, v in want.items())]
            text = ",".join(p if p in names else _text(dict(absent)[p]) for p in op.params)
            out.append((text, names, [tuple(probes[n][k] for k in present) for n in full], full))
    return out


def _same_probe(a, b) -> bool:
    """Whether two probe values (numpy scalars) are one: equal, or both NaN, with one sign (0.0, -0.0)."""
    x, y = a.item(), b.item()
    nan = isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)
    return (x == y or nan) and bool(np.all(np.signbit(a) == np.signbit(b)))


def _run_c(op: Operator, dts: tuple, probes: list, cases: list) -> list[tuple]:
    """``(results, trapped)`` of the C helper on ``probes``, then of each case body on its probes."""
    from .backend import build
    rdt = op.result_dtype(*dts)
    lines = ["#define _POSIX_C_SOURCE 200809L", "#include <math.h>", "#include <setjmp.h>", "#include <signal.h>",
             "#include <stdbool.h>", "#include <stddef.h>", "#include <stdint.h>"]
    if any(np.dtype(d).kind == "c" for d in (*dts, rdt)):
        lines.append("#include <complex.h>")
    lines += ["", op.c_helper(list(dts)), ""]
    calls = [(op.c_expr, range(op.arity))]
    for case, names, _, _ in cases:
        present = tuple(op.params.index(p) for p in names)
        case_op = op.specialize(present, {op.params.index(p): v for p, v in _absent(op, names)})
        lines += [case_op.c_helper([dts[k] for k in present]), ""]
        calls.append((case_op.c_expr, present))
    lines += ["/* where the function traps (an integer division by zero), the probe says so and goes on */",
              "static sigjmp_buf trap;", "", "static void on_trap(int signal)", "{",
              "    siglongjmp(trap, signal);", "}", ""]
    for n, (call, positions) in enumerate(calls):
        loads = [f"(({c_type(dts[k])} *)args[{j}])[k]" for j, k in enumerate(positions)]
        expr = call(loads, [dts[k] for k in positions])
        lines += [f"void probe{n}(int64_t n, char **args, char *out, char *trapped)", "{",
                  "    struct sigaction handler = {0}, before;",
                  "    handler.sa_handler = on_trap;",
                  "    sigaction(SIGFPE, &handler, &before);",
                  "    for (volatile int64_t k = 0; k < n; k++) {",
                  "        if (sigsetjmp(trap, 1)) {",
                  "            trapped[k] = 1;",
                  "            continue;",
                  "        }",
                  f"        (({c_type(rdt)} *)out)[k] = {expr};",
                  "    }",
                  "    sigaction(SIGFPE, &before, NULL);",
                  "}", ""]
    source = "\n".join(lines)
    flags = build.compiler_flags(None)
    path, _ = build.build_library(source, f"probe_{op.name}", build.sized_flags(flags, source))
    ffi, lib = build.load_functions(path, {f"probe{n}": "void (*)(int64_t, char **, char *, char *)"
                                           for n in range(len(calls))})
    out = []
    for n, (_, positions) in enumerate(calls):
        rows = probes if n == 0 else cases[n - 1][2]
        columns = [np.array([r[j] for r in rows], dtype=dts[k]) for j, k in enumerate(positions)]
        got = np.zeros(len(rows), dtype=rdt)
        trapped = np.zeros(len(rows), dtype=np.int8)
        pointers = ffi.new("char *[]", [ffi.cast("char *", ffi.from_buffer(c)) for c in columns] or [ffi.NULL])
        getattr(lib, f"probe{n}")(len(rows), pointers, ffi.cast("char *", ffi.from_buffer(got)),
                                  ffi.cast("char *", ffi.from_buffer(trapped)))
        out.append((got, trapped))
    return out


def _absent(op: Operator, names: tuple) -> tuple:
    return next(absent for key, _, absent in op.cases if key == names)


def _py_value(op: Operator, args: tuple):
    """``py`` at ``args`` as a Python value, or None where it does not take them."""
    try:
        return np.asarray(op(*args)).item()
    except Exception:       # (a probe the function does not take, gcd of a float: nothing checked)
        return None


def _precision(dts: tuple, rdt) -> np.dtype:
    """The dtype whose precision results are compared within: the least precise float among the operands
    and the result (a body may compute in its arguments' precision: ``expf`` of a float32), else the result's."""
    floats = [np.dtype(d) for d in (*dts, rdt) if np.dtype(d).kind in "fc"]
    return max(floats, key=lambda d: np.finfo(d).eps) if floats else np.dtype(rdt)


def _agree(a, b, dtype: np.dtype) -> bool:
    """Whether the results ``a`` and ``b`` (Python values) agree (see the module docstring)."""
    if isinstance(a, complex) or isinstance(b, complex):
        a, b = complex(a), complex(b)
        return _agree(a.real, b.real, dtype) and _agree(a.imag, b.imag, dtype)
    if dtype.kind not in "fc":
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    eps = float(np.finfo(dtype).eps)
    return abs(a - b) <= ULPS * eps * max(1.0, abs(a), abs(b))


def _text(v) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return str(v.item() if isinstance(v, np.generic) else v)


def _args_text(params, args) -> str:
    return f"({', '.join(f'{p}={_text(v)}' for p, v in zip(params, args))})"


__all__ = ["noting", "note", "check_noted", "check", "FLOAT_PROBES", "NONFINITE", "INT_PROBES", "LIMIT", "ULPS"]
