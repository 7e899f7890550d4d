"""Execute the imperative IR in Python: the second oracle next to the dense reference.

:func:`interpret` takes the same arguments as the compiled kernel and returns the
same dict: inout buffers (modified in place, as the kernel does), out scalars
as numpy scalars and growable outputs as arrays cut to their length.

Semantics follow C on the platforms sparsescope targets:

- values are numpy scalars of their C type; arithmetic uses C's usual
  conversions (``bool`` and the 8- and 16-bit integers promote to ``int32``; of two
  integers the wider wins, and of equal widths the unsigned one; a float wins over
  integers), and assignments convert to the declared dtype, modulo 2^width for integers;
- integer ``/`` truncates toward zero and ``%`` takes the sign of the dividend;
  integer division by zero raises :class:`KernelError` (C would trap);
- integer overflow wraps around (two's complement). C calls signed overflow
  undefined, so kernels must not rely on it; this only makes the oracle
  deterministic;
- float division by zero and invalid operations give inf/nan silently;
- ``&&``, ``||`` and ``?:`` evaluate lazily; a ``For`` re-evaluates its stop
  before every iteration;
- every load and store is bounds-checked (growables against their capacity),
  raising :class:`KernelError` naming the buffer and index.

>>> from compiler.imperative.ir import *
>>> n, x, s = Scalar("n", "int64"), Buffer("x", "float64"), OutScalar("s", "float64")
>>> i = Var("i")
>>> fn = Function("total", (n, x, s), [For(i, 0, n.var, [CompoundAssign("+", s.var, x[i])])])
>>> float(interpret(fn, n=3, x=np.array([1.0, 2.0, 3.5]))["s"])
6.5
>>> interpret(fn, n=4, x=np.array([1.0, 2.0, 3.5]))
Traceback (most recent call last):
...
compiler.errors.KernelError: kernel total (interpreter): read of x[3] is out of bounds (length 3)
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ..dtypes import VALUE_DTYPES, dtype_name
from ..opimpls import COMPLEX_MATH, NUMPY_MATH, ieee_pow, with_real_operand
from ..errors import DTypeError, FormatError, KernelError
from .guard import STORED, CheckCoordinate, coordinate_message
from .search import run_search
from .ir import (SEARCH_FUNCTIONS, Allocate, Tagged, Assign, BinOp, Block, Break, Buffer, Call, Cast, Comment, CompoundAssign, Const, Pragma,
                 Declare, For, Function, Grow, Growable, If, Load, OutScalar, Prefetch, Scalar, Select, Store,
                 UnOp, Var, View, While, spelled_real)

_TYPES = {name: np.dtype(name).type for name in VALUE_DTYPES}
_PART_TYPES = {"complex128": np.float64, "complex64": np.float32}
# C's integer promotion: what is narrower than int computes as int
#: integers a conversion wraps into (int32 and int64 values come from C arithmetic already in range)
_WRAPPED = frozenset(("int8", "int16", "uint8", "uint16", "uint32", "uint64"))
_PROMOTED = {"bool": "int32", "int8": "int32", "uint8": "int32", "int16": "int32", "uint16": "int32"}

_MATH: dict[str, Callable] = {
    "fmin": lambda a, b: np.fmin(np.float64(a), np.float64(b)),
    "fmax": lambda a, b: np.fmax(np.float64(a), np.float64(b)),
    "pow": lambda a, b: ieee_pow(np.float64(a), np.float64(b)),
    "ldexp": lambda a, b: np.ldexp(np.float64(a), np.int32(b)),
    "sqrt": lambda a: np.sqrt(np.float64(a)),
    "exp": lambda a: np.exp(np.float64(a)),
    "log": lambda a: np.log(np.float64(a)),
    **{n: (lambda f: lambda *a: f(*map(np.float64, a)))(f) for n, f in NUMPY_MATH.items()},
    "nearbyint": lambda a: np.rint(np.float64(a)),
    "nextafterf": lambda a, b: np.nextafter(np.float32(a), np.float32(b)),
    "fabs": lambda a: np.fabs(np.float64(a)),
    "isnan": lambda a: np.int32(bool(np.isnan(np.float64(a)))),
    # <complex.h>: in double _Complex, as C calls them on a float _Complex too
    "cabs": lambda a: np.abs(np.complex128(a)), "creal": lambda a: np.complex128(a).real,
    "cimag": lambda a: np.complex128(a).imag, "conj": lambda a: np.conj(a),
    "cpow": lambda a, b: np.power(np.complex128(a), np.complex128(b)),
    **{"c" + n: (lambda f: lambda a: f(np.complex128(a)))(getattr(np, n) if n in ("sqrt", "exp", "log") else NUMPY_MATH[n])
       for n in COMPLEX_MATH if n != "pow"},
    "lowest_bit": lambda w: np.int64((int(w) & -int(w)).bit_length() - 1),
    # the interpreter runs a parallel loop on one thread
    "thread_count": lambda: np.int64(1),
    "thread_id": lambda: np.int64(0),
}


class _Break(Exception):
    pass


def _usual(a: str, b: str) -> str:
    """C's usual arithmetic conversion of two promoted types: a float wins; of two integers the
    wider, and of equal widths the unsigned one (int64 with uint64 computes in uint64)."""
    if a == b:
        return a
    if a.startswith("complex") or b.startswith("complex"):   # (a complex of the wider real type of the two)
        return "complex128" if {a, b} & {"complex128", "float64"} else "complex64"
    for f in ("float64", "float32"):
        if f in (a, b):
            return f
    da, db = np.dtype(a), np.dtype(b)
    if da.itemsize != db.itemsize:
        return a if da.itemsize > db.itemsize else b
    return a if da.kind == "u" else b


def _promote(*values) -> str:
    """C's usual arithmetic conversion of the operands' types.

    >>> _promote(np.uint8(1), np.uint8(2)), _promote(np.int32(-1), np.uint32(1)), _promote(np.int64(1), np.uint32(1))
    ('int32', 'uint32', 'int64')
    """
    key = tuple(map(type, values))   # (a numpy scalar's type is its dtype's: remembered, as each operation asks)
    out = _PROMOTIONS.get(key)
    if out is None:
        names = [_PROMOTED.get(n, n) for n in (dtype_name(v.dtype) for v in values)]
        out = names[0]
        for n in names[1:]:
            out = _usual(out, n)
        if np.ndarray not in key:   # (a 0-d array's type says no dtype)
            _PROMOTIONS[key] = out
    return out


_PROMOTIONS: dict = {}   # (the operands' types -> :func:`_promote`'s answer)
_COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
                "!=": operator.ne}


def _cdiv(a, b):
    q = abs(int(a)) // abs(int(b))
    return q if (a < 0) == (b < 0) else -q


class _Machine:
    def __init__(self, fn: Function, helpers: dict[str, Callable]):
        self.fn = fn
        self.helpers = helpers
        self.env: dict[str, Any] = {}
        self.types: dict[str, str] = {}
        self.buffers: dict[str, np.ndarray] = {}
        self.growable: dict[str, list] = {}  # name -> [array with capacity]
        self.views: dict[str, str] = {}      # view -> the scratch array it is part of

    def fail(self, message: str):
        raise KernelError(f"kernel {self.fn.name} (interpreter): {message}")

    # ---------------------------------------------------------------- expressions
    def eval(self, e):
        t = type(e)
        if t is Var:
            try:
                return self.env[e.name]
            except KeyError:
                self.fail(f"variable {e.name} is used before it is declared")
        if t is Const:
            if e.dtype in _PART_TYPES and spelled_real(e.value):
                # (C spells it as a real literal, which multiplies each part of a complex: see c_emitter)
                return _PART_TYPES[e.dtype](e.value.real)
            return _TYPES[e.dtype](e.value)
        if t is Load:
            arr = self.array(e.buffer)
            i = self.index(e.index, e.buffer, arr, "read")
            return arr[i]
        if t is BinOp:
            return self.binop(e)
        if t is UnOp:
            v = self.eval(e.operand)
            if e.op == "!":
                return np.bool_(not v)
            v = _TYPES[_promote(v)](v)
            return -v if e.op == "-" else ~v
        if t is Cast:
            return self.convert(self.eval(e.value), e.dtype)
        if t is Select:
            return self.eval(e.then) if self.eval(e.cond) else self.eval(e.otherwise)
        if t is Call:
            if e.function in SEARCH_FUNCTIONS:
                return self.search(e)
            args = [self.eval(a) for a in e.args]
            f = self.helpers.get(e.function) or _MATH.get(e.function)
            if f is None:
                self.fail(f"no Python implementation of helper {e.function}; pass helpers={{'{e.function}': ...}}")
            return f(*args)
        raise TypeError(f"not an expression: {e!r}")

    def search(self, e: Call):
        """A search helper's call (:mod:`compiler.imperative.search`): its probes are checked reads."""
        buffer = e.args[0].buffer
        arr = self.array(buffer)

        def read(p):
            return arr[self.checked_index(p, buffer, arr, "read")]
        # (the C helper takes int64_t positions and target)
        a, b, target = (self.convert(self.eval(x), "int64") for x in e.args[1:])
        return np.int64(run_search(e.function, read, lambda x, y: bool(self.arith("<", x, y)), int(a), int(b), target))

    def binop(self, e: BinOp):
        op = e.op
        if op == "&&":
            return np.bool_(bool(self.eval(e.left)) and bool(self.eval(e.right)))
        if op == "||":
            return np.bool_(bool(self.eval(e.left)) or bool(self.eval(e.right)))
        a, b = self.eval(e.left), self.eval(e.right)
        return self.arith(op, a, b)

    def arith(self, op, a, b):
        if (isinstance(a, np.complexfloating) or isinstance(b, np.complexfloating)) and op in ("+", "-", "*", "/"):
            mixed = with_real_operand(op, a, b)   # (C's complex with a real operand: part by part)
            if mixed is not None:
                return _TYPES[_promote(a, b)](mixed)
        dt = _promote(a, b)
        ty = _TYPES[dt]
        if type(a) is not ty:
            a = ty(a)
        if type(b) is not ty:
            b = ty(b)
        compare = _COMPARISONS.get(op)
        if compare is not None:
            return np.bool_(compare(a, b))
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        is_int = np.dtype(dt).kind in "iu"
        if op == "/":
            if is_int:
                if b == 0:
                    self.fail("integer division by zero")
                return ty(_cdiv(a, b))
            return a / b
        if op == "%":
            if is_int:
                if b == 0:
                    self.fail("integer remainder by zero")
                return ty(int(a) - int(b) * _cdiv(a, b))
            return np.fmod(a, b)
        if not is_int:
            raise DTypeError(f"kernel {self.fn.name}: operator {op} needs integer operands, got {dt}")
        if op == "&":
            return a & b
        if op == "|":
            return a | b
        if op == "^":
            return a ^ b
        if op == "<<":
            return a << b
        if op == ">>":
            return a >> b
        raise ValueError(op)

    def convert(self, v, dtype: str):
        if dtype == "bool":
            return np.bool_(bool(v))
        ty = _TYPES[dtype]
        if type(v) is ty:
            return v
        if dtype in _WRAPPED and not isinstance(v, (float, np.floating)):
            # modulo 2^width, as C converts to an unsigned type (and to a signed one with gcc)
            return np.asarray(int(v) & 0xFFFFFFFFFFFFFFFF, np.uint64).astype(dtype)[()]
        return ty(v)

    def array(self, name: str) -> np.ndarray:
        try:
            return self.buffers[name]
        except KeyError:
            if name in self.growable:
                return self.growable[name][0]
            self.fail(f"{name} is not a buffer parameter")

    def index(self, index_expr, name, arr, access) -> int:
        return self.checked_index(int(self.eval(index_expr)), name, arr, access)

    def checked_index(self, i: int, name, arr, access) -> int:
        if not 0 <= i < arr.shape[0]:
            what = "capacity" if name in self.growable else "length"
            self.fail(f"{access} of {name}[{i}] is out of bounds ({what} {arr.shape[0]})")
        return i

    # ---------------------------------------------------------------- statements
    def run(self, s):
        t = type(s)
        if t is Block:
            for x in s.body:
                self.run(x)
        elif t is Declare:
            self.types[s.var.name] = s.dtype
            v = _TYPES[s.dtype](0) if s.init is None else self.convert(self.eval(s.init), s.dtype)
            self.env[s.var.name] = v
        elif t is Assign:
            self.assign(s.target.name, self.eval(s.value))
        elif t is CompoundAssign:
            old = self.eval(s.target)
            self.assign(s.target.name, self.arith(s.op, old, self.eval(s.value)))
        elif t is Store:
            arr = self.array(s.buffer)
            i = self.index(s.index, s.buffer, arr, "write")
            v = self.eval(s.value)
            if s.op is not None:
                v = self.arith(s.op, arr[i], v)
            arr[i] = self.convert(v, dtype_name(arr.dtype))
        elif t is For:
            name = s.var.name
            self.types[name] = s.dtype
            self.env[name] = self.convert(self.eval(s.start), s.dtype)
            try:
                while self.env[name] < self.eval(s.stop):
                    self.run(s.body)
                    self.env[name] = self.convert(self.env[name] + 1, s.dtype)
            except _Break:
                pass
        elif t is While:
            try:
                while self.eval(s.cond):
                    self.run(s.body)
            except _Break:
                pass
        elif t is If:
            if self.eval(s.cond):
                self.run(s.then)
            elif s.otherwise is not None:
                self.run(s.otherwise)
        elif t is Break:
            raise _Break()
        elif t is Comment or t is Pragma or t is Prefetch:
            pass
        elif t is Tagged:
            self.run(s.body)
        elif t is CheckCoordinate:
            value, extent = int(self.eval(s.value)), int(self.eval(s.extent))
            if not 0 <= value < extent:   # (as the C kernel reports it: the user's access, not a buffer)
                error = FormatError if s.noun == STORED else KernelError   # (an input's owner wrote it)
                raise error(coordinate_message(self.fn.name, s.site, value, extent))
        elif t is Allocate:
            if s.buffer in self.buffers or s.buffer in self.growable:
                self.fail(f"Allocate of {s.buffer}, which is already a buffer")
            n = int(self.eval(s.length))
            if n < 0:
                self.fail(f"Allocate of {s.buffer} with negative length {n}")
            arr = np.zeros(n, dtype=s.dtype)
            if s.init is not None:
                arr[:] = self.convert(self.eval(s.init), s.dtype)
            self.buffers[s.buffer] = arr
            try:
                self.run(s.body)
            finally:   # the array and the views into it end here
                for name in [s.buffer, *(v for v, of in self.views.items() if of == s.buffer)]:
                    self.buffers.pop(name, None)
                    self.views.pop(name, None)
        elif t is View:
            whole = self.array(s.of)
            start, n = int(self.eval(s.offset)), int(self.eval(s.length))
            if start < 0 or n < 0 or start + n > whole.shape[0]:
                self.fail(f"View {s.buffer} of {s.of}[{start}:{start + n}] is out of bounds (length {whole.shape[0]})")
            self.buffers[s.buffer] = whole[start:start + n]   # a numpy view: its writes reach the array
            self.views[s.buffer] = s.of
        elif t is Grow:
            slot = self.growable.get(s.buffer)
            if slot is None:
                self.fail(f"Grow of {s.buffer}, which is not a growable parameter")
            if s.first and slot[0].shape[0]:
                self.fail(f"Grow of {s.buffer} claims to be its first, but it holds {slot[0].shape[0]} elements")
            if s.hint:
                return  # only room ahead: the growth checks that follow make the room they need
            needed = int(self.eval(s.needed))
            arr = slot[0]
            if needed > arr.shape[0]:
                cap = max(arr.shape[0], 16)
                while cap < needed:
                    cap *= 2
                new = np.zeros(cap, arr.dtype)
                new[:arr.shape[0]] = arr
                slot[0] = new
        else:
            raise TypeError(f"not a statement: {s!r}")

    def assign(self, name, value):
        try:
            dtype = self.types[name]
        except KeyError:
            self.fail(f"assignment to {name}, which is not declared")
        self.env[name] = self.convert(value, dtype)


def interpret(fn: Function, helpers: dict[str, Callable] | None = None, **args) -> dict:
    """Run ``fn`` on keyword arguments; see the module docstring for the semantics."""
    m = _Machine(fn, dict(helpers or {}))
    for h in fn.helpers:
        if h.name not in m.helpers:
            raise ValueError(f"kernel {fn.name} uses helper {h.name}; pass its Python implementation "
                             f"as interpret(..., helpers={{'{h.name}': ...}})")
    expected = {p.name for p in fn.params if isinstance(p, (Scalar, Buffer))}
    unknown = set(args) - expected
    if unknown:
        raise TypeError(f"kernel {fn.name} got unexpected arguments {sorted(unknown)}")
    for p in fn.params:
        if isinstance(p, (Scalar, Buffer)) and p.name not in args:
            raise TypeError(f"kernel {fn.name} is missing argument {p.name!r}")
        if isinstance(p, Scalar):
            m.types[p.name] = p.dtype
            m.env[p.name] = m.convert(args[p.name], p.dtype)
        elif isinstance(p, Buffer):
            a = args[p.name]
            if not isinstance(a, np.ndarray):
                raise TypeError(f"kernel {fn.name}: argument {p.name} must be a numpy array, got {type(a).__name__}")
            if a.dtype != np.dtype(p.dtype):
                raise DTypeError(f"kernel {fn.name}: argument {p.name} must have dtype {p.dtype}, got {a.dtype}")
            if p.intent == "inout" and not a.flags.c_contiguous:
                raise ValueError(f"kernel {fn.name}: argument {p.name} must be C-contiguous (it is written in place)")
            m.buffers[p.name] = a.reshape(-1)
        elif isinstance(p, OutScalar):
            m.types[p.name] = p.dtype
            m.env[p.name] = m.convert(p.init, p.dtype)
        elif isinstance(p, Growable):
            m.growable[p.name] = [np.zeros(0, p.dtype)]
    with np.errstate(all="ignore"):
        m.run(fn.body)
    out: dict[str, Any] = {}
    for p in fn.params:
        if isinstance(p, Buffer) and p.intent == "inout":
            out[p.name] = args[p.name]
        elif isinstance(p, OutScalar):
            out[p.name] = m.env[p.name]
        elif isinstance(p, Growable):
            n = int(m.env[p.length])
            arr = m.growable[p.name][0]
            if not 0 <= n <= arr.shape[0]:
                m.fail(f"length {p.length} = {n} of growable {p.name} exceeds its capacity {arr.shape[0]}")
            out[p.name] = arr[:n].copy()
    return out
