"""The imperative IR: a small C-like language that every lowering strategy ends in.

Nodes are frozen dataclasses registered with :func:`compiler.serialize.node`; every
field is a string, a number, a node or a tuple of those, so a whole
:class:`Function` is hashable (it is the key of the kernel cache) and can be saved
in a trace. Extents are half-open: ``For(i, 0, n, body)`` runs ``i = 0, ..., n - 1``.

Dtypes are numpy dtype names (``"float64"``, ``"int32"``, ...); buffers are named
by strings. Expression nodes overload arithmetic, bitwise and ordering operators,
so kernels read naturally when written by hand; ``==`` stays structural equality,
so use :meth:`Expr.eq` and :meth:`Expr.ne` for C's ``==`` and ``!=``.

>>> i = Var("i")
>>> A_pos = Buffer("A_pos", "int64")
>>> A_pos[i + 1] - A_pos[i]
BinOp(op='-', left=Load(buffer='A_pos', index=BinOp(op='+', left=Var(name='i'), right=Const(value=1, dtype='int64'))), right=Load(buffer='A_pos', index=Var(name='i')))
>>> print(A_pos[i + 1] - A_pos[i])
A_pos[i + 1] - A_pos[i]
>>> hash(For(i, 0, 10, [Break()])) == hash(For(i, 0, 10, Block((Break(),))))
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Union

import numpy as np

from .. import serialize
from ..dtypes import VALUE_DTYPES, dtype_name
from .c_names import (BIT_FUNCTIONS, C_LIBRARY_NAMES, MATH_FUNCTIONS, RESERVED, SEARCH_FUNCTIONS,  # noqa: F401
                      THREAD_FUNCTIONS, c_name_problem, check_name, is_c_name)

#: how a node prints itself: :mod:`compiler.imperative.printer` installs its ``pretty`` here when it is
#: imported (the package's ``__init__`` imports it, so before any node exists); the nodes so need not
#: import the printer that imports them
_PRINTER: list = []


def install_printer(pretty) -> None:
    """Make ``str(node)`` print with ``pretty`` (the printer module calls this once)."""
    _PRINTER[:] = [pretty]


def printed(node) -> str:
    """``node``'s pseudo-C text, by the installed printer.

    >>> printed(BinOp("+", Var("i"), Const(1, "int64")))
    'i + 1'
    """
    return _PRINTER[0](node)


BINARY_OPS = ("+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||",
              "&", "|", "^", "<<", ">>")
UNARY_OPS = ("-", "!", "~")
#: operators allowed in ``x op= value``
COMPOUND_OPS = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")

def _dtype(dtype) -> str:
    name = dtype_name(dtype)
    if name not in VALUE_DTYPES:
        raise ValueError(f"dtype {name} is not supported in the imperative IR; use one of {', '.join(VALUE_DTYPES)}")
    return name


def _set(obj, name, value):
    object.__setattr__(obj, name, value)


# --------------------------------------------------------------------------- expressions


class Expr:
    """Base of expression nodes: operators build :class:`BinOp` / :class:`UnOp` nodes."""

    def __add__(self, o): return BinOp("+", self, o)
    def __radd__(self, o): return BinOp("+", o, self)
    def __sub__(self, o): return BinOp("-", self, o)
    def __rsub__(self, o): return BinOp("-", o, self)
    def __mul__(self, o): return BinOp("*", self, o)
    def __rmul__(self, o): return BinOp("*", o, self)
    def __truediv__(self, o): return BinOp("/", self, o)
    def __rtruediv__(self, o): return BinOp("/", o, self)
    def __mod__(self, o): return BinOp("%", self, o)
    def __rmod__(self, o): return BinOp("%", o, self)
    def __and__(self, o): return BinOp("&", self, o)
    def __rand__(self, o): return BinOp("&", o, self)
    def __or__(self, o): return BinOp("|", self, o)
    def __ror__(self, o): return BinOp("|", o, self)
    def __xor__(self, o): return BinOp("^", self, o)
    def __rxor__(self, o): return BinOp("^", o, self)
    def __lshift__(self, o): return BinOp("<<", self, o)
    def __rshift__(self, o): return BinOp(">>", self, o)
    def __lt__(self, o): return BinOp("<", self, o)
    def __le__(self, o): return BinOp("<=", self, o)
    def __gt__(self, o): return BinOp(">", self, o)
    def __ge__(self, o): return BinOp(">=", self, o)
    def __neg__(self): return UnOp("-", self)
    def __invert__(self): return UnOp("~", self)

    def eq(self, o) -> "BinOp":
        """C's ``self == o`` (Python's ``==`` compares nodes)."""
        return BinOp("==", self, o)

    def ne(self, o) -> "BinOp":
        """C's ``self != o``."""
        return BinOp("!=", self, o)

    def __str__(self) -> str:
        return printed(self)

    def pretty(self) -> str:
        return str(self)


def const(value, dtype=None) -> "Const":
    """A constant; the dtype defaults to int64, float64 or bool from the Python type."""
    if dtype is None:
        if isinstance(value, (bool, np.bool_)):
            dtype = "bool"
        elif isinstance(value, np.generic):
            dtype = value.dtype.name
        elif isinstance(value, int):
            dtype = "int64"
        elif isinstance(value, float):
            dtype = "float64"
        elif isinstance(value, complex):
            dtype = "complex128"
        else:
            raise TypeError(f"cannot make an IR constant from {value!r}")
    return Const(value, dtype)


def as_expr(value) -> Expr:
    """Coerce Python numbers to :class:`Const`; leave expressions alone."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, (Scalar, OutScalar)):
        return Var(value.name)
    return const(value)


@serialize.node
@dataclass(frozen=True)
class Var(Expr):
    """A scalar variable: a kernel parameter, a loop variable or a declared local."""

    name: str

    def __post_init__(self):
        check_name(self.name, "variable name")


@serialize.node
@dataclass(frozen=True)
class Const(Expr):
    """A literal of a given dtype; ``value`` is normalized to ``bool``, ``int``, ``float`` or ``complex``."""

    value: Union[bool, int, float, complex]
    dtype: str

    def __post_init__(self):
        dt = _dtype(self.dtype)
        _set(self, "dtype", dt)
        kind, low, high = _KINDS.get(dt) or _kind(dt)
        if kind == "b":
            _set(self, "value", bool(self.value))
        elif kind in "iu":
            v = int(self.value)
            if not low <= v <= high:
                raise ValueError(f"constant {v} does not fit in {dt}")
            _set(self, "value", v)
        elif kind == "c":
            _set(self, "value", complex(self.value))
        else:
            _set(self, "value", float(self.value))


#: a dtype name -> its kind and, for an integer dtype, its range: the lowerings make thousands of
#: constants, and asking numpy for the dtype and its ``iinfo`` each time was most of their making
_KINDS: dict[str, tuple] = {}


def _kind(dt: str) -> tuple:
    kind = np.dtype(dt).kind
    info = np.iinfo(dt) if kind in "iu" else None
    _KINDS[dt] = found = (kind, int(info.min), int(info.max)) if info is not None else (kind, None, None)
    return found


@serialize.node
@dataclass(frozen=True)
class BinOp(Expr):
    """``left op right`` with C semantics (``/`` truncates for integers, ``&&`` short-circuits)."""

    op: str
    left: Expr
    right: Expr

    def __post_init__(self):
        if self.op not in BINARY_OPS:
            raise ValueError(f"unknown binary operator {self.op!r}; use one of {' '.join(BINARY_OPS)}")
        _set(self, "left", as_expr(self.left))
        _set(self, "right", as_expr(self.right))


@serialize.node
@dataclass(frozen=True)
class UnOp(Expr):
    """``op operand`` for ``-``, ``!`` and ``~``."""

    op: str
    operand: Expr

    def __post_init__(self):
        if self.op not in UNARY_OPS:
            raise ValueError(f"unknown unary operator {self.op!r}; use one of {' '.join(UNARY_OPS)}")
        _set(self, "operand", as_expr(self.operand))


@serialize.node
@dataclass(frozen=True)
class Call(Expr):
    """A call of a C math function (:data:`MATH_FUNCTIONS`) or of a helper by name."""

    function: str
    args: tuple[Expr, ...] = ()

    def __post_init__(self):
        check_name(self.function, "function name")
        _set(self, "args", tuple(as_expr(a) for a in self.args))


@serialize.node
@dataclass(frozen=True)
class Load(Expr):
    """``buffer[index]``."""

    buffer: str
    index: Expr

    def __post_init__(self):
        _set(self, "buffer", _buffer_name(self.buffer))
        _set(self, "index", as_expr(self.index))


@serialize.node
@dataclass(frozen=True)
class BufferArg(Expr):
    """A buffer passed to a function, as a pointer: the array a search reads
    (``seek(A1_idx, q, q_stop, j)``); it reads the buffer as a :class:`Load` does."""

    buffer: str

    def __post_init__(self):
        _set(self, "buffer", _buffer_name(self.buffer))


@serialize.node
@dataclass(frozen=True)
class Cast(Expr):
    """``(dtype) value`` with C conversion rules (float to int truncates)."""

    dtype: str
    value: Expr

    def __post_init__(self):
        _set(self, "dtype", _dtype(self.dtype))
        _set(self, "value", as_expr(self.value))


@serialize.node
@dataclass(frozen=True)
class Select(Expr):
    """``cond ? then : otherwise``; only the chosen branch is evaluated."""

    cond: Expr
    then: Expr
    otherwise: Expr

    def __post_init__(self):
        for f in ("cond", "then", "otherwise"):
            _set(self, f, as_expr(getattr(self, f)))


def and_(*terms) -> Expr:
    """Short-circuit conjunction of one or more terms."""
    out = as_expr(terms[0])
    for t in terms[1:]:
        out = BinOp("&&", out, t)
    return out


def or_(*terms) -> Expr:
    """Short-circuit disjunction of one or more terms."""
    out = as_expr(terms[0])
    for t in terms[1:]:
        out = BinOp("||", out, t)
    return out


def not_(term) -> Expr:
    """``!term``; ``!!c`` of a comparison or a logical operator ``c`` is ``c`` (already 0 or 1).

    >>> not_(not_(BinOp("<", Var("p"), Var("end")))) == BinOp("<", Var("p"), Var("end"))
    True
    """
    if isinstance(term, UnOp) and term.op == "!" and isinstance(term.operand, BinOp) and \
            term.operand.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
        return term.operand
    return UnOp("!", term)


def call(function: str, *args) -> Call:
    return Call(function, tuple(args))


def spelled_real(value: complex) -> bool:
    """Whether C spells the complex constant ``value`` as its real part: its imaginary part is +0.0, which a
    real value converted to the complex type has by itself.

    >>> spelled_real(1 + 0j), spelled_real(complex(1, -0.0)), spelled_real(1j)
    (True, False, False)
    """
    return value.imag == 0 and math.copysign(1.0, value.imag) > 0


def fmin(a, b) -> Call: return Call("fmin", (a, b))
def fmax(a, b) -> Call: return Call("fmax", (a, b))


# --------------------------------------------------------------------------- statements


class Stmt:
    """Base of statement nodes."""

    def __str__(self) -> str:
        return printed(self)

    def pretty(self) -> str:
        return str(self)


def as_block(body) -> "Block":
    """Coerce a statement, a list of statements or ``None`` to a :class:`Block`."""
    if isinstance(body, Block):
        return body
    if body is None:
        return Block(())
    if isinstance(body, Stmt):
        return Block((body,))
    return Block(tuple(body))


@serialize.node
@dataclass(frozen=True)
class Block(Stmt):
    """A sequence of statements; nested blocks are flattened when printed."""

    body: tuple[Stmt, ...] = ()

    def __post_init__(self):
        body = tuple(self.body)
        for s in body:
            if not isinstance(s, Stmt):
                raise TypeError(f"a Block holds statements, got {s!r}")
        _set(self, "body", body)


def block(*stmts) -> Block:
    return Block(tuple(stmts))


@serialize.node
@dataclass(frozen=True)
class Declare(Stmt):
    """Declare a local ``var`` of ``dtype``, optionally initialized."""

    var: Var
    dtype: str
    init: Expr | None = None

    def __post_init__(self):
        _set(self, "var", _var(self.var))
        _set(self, "dtype", _dtype(self.dtype))
        if self.init is not None:
            _set(self, "init", as_expr(self.init))


@serialize.node
@dataclass(frozen=True)
class Assign(Stmt):
    """``target = value`` (the value converts to the target's declared dtype)."""

    target: Var
    value: Expr

    def __post_init__(self):
        _set(self, "target", _var(self.target))
        _set(self, "value", as_expr(self.value))


@serialize.node
@dataclass(frozen=True)
class CompoundAssign(Stmt):
    """``target op= value``."""

    op: str
    target: Var
    value: Expr

    def __post_init__(self):
        if self.op not in COMPOUND_OPS:
            raise ValueError(f"unknown compound operator {self.op!r}=; use one of {' '.join(COMPOUND_OPS)}")
        _set(self, "target", _var(self.target))
        _set(self, "value", as_expr(self.value))


@serialize.node
@dataclass(frozen=True)
class Store(Stmt):
    """``buffer[index] = value``, or ``buffer[index] op= value`` when ``op`` is given."""

    buffer: str
    index: Expr
    value: Expr
    op: str | None = None

    def __post_init__(self):
        _set(self, "buffer", _buffer_name(self.buffer))
        _set(self, "index", as_expr(self.index))
        _set(self, "value", as_expr(self.value))
        if self.op is not None and self.op not in COMPOUND_OPS:
            raise ValueError(f"unknown compound operator {self.op!r}=; use one of {' '.join(COMPOUND_OPS)}")


@serialize.node
@dataclass(frozen=True)
class For(Stmt):
    """``for (var = start; var < stop; var++) body`` over the half-open range ``[start, stop)``.

    The loop declares ``var`` (of ``dtype``, int64 by default); ``stop`` is
    re-evaluated before every iteration, as in C.
    """

    var: Var
    start: Expr
    stop: Expr
    body: Block
    dtype: str = "int64"

    def __post_init__(self):
        _set(self, "var", _var(self.var))
        _set(self, "start", as_expr(self.start))
        _set(self, "stop", as_expr(self.stop))
        _set(self, "body", as_block(self.body))
        _set(self, "dtype", _dtype(self.dtype))


@serialize.node
@dataclass(frozen=True)
class While(Stmt):
    """``while (cond) body``."""

    cond: Expr
    body: Block

    def __post_init__(self):
        _set(self, "cond", as_expr(self.cond))
        _set(self, "body", as_block(self.body))


@serialize.node
@dataclass(frozen=True)
class If(Stmt):
    """``if (cond) then else otherwise``; an ``otherwise`` that is one ``If`` prints as ``else if``."""

    cond: Expr
    then: Block
    otherwise: Block | None = None

    def __post_init__(self):
        _set(self, "cond", as_expr(self.cond))
        _set(self, "then", as_block(self.then))
        if self.otherwise is not None:
            other = as_block(self.otherwise)
            _set(self, "otherwise", other if other.body else None)


@serialize.node
@dataclass(frozen=True)
class Break(Stmt):
    """Leave the innermost ``For`` or ``While``."""


@serialize.node
@dataclass(frozen=True)
class Pragma(Stmt):
    """A ``#pragma text`` line before the next statement (e.g. ``omp parallel for``).

    The interpreter ignores it; the C backend builds kernels with ``#pragma omp``
    with OpenMP (see :mod:`compiler.backend.build`).
    """

    text: str

    def __post_init__(self):
        if "\n" in self.text:
            raise ValueError("a Pragma is one line")


@serialize.node
@dataclass(frozen=True)
class Prefetch(Stmt):
    """A hint that ``buffer[index]`` will be read soon (the C compiler's ``__builtin_prefetch``).

    Not an access: ``index`` may lie past the buffer's end (a prefetch never faults), and
    the interpreter ignores it. See :mod:`compiler.imperative.prefetch`.
    """

    buffer: str
    index: Expr

    def __post_init__(self):
        _set(self, "buffer", _buffer_name(self.buffer))
        _set(self, "index", as_expr(self.index))


@serialize.node
@dataclass(frozen=True)
class View(Stmt):
    """``buffer`` names the ``length`` elements of the scratch array ``of`` from ``offset`` on.

    Declared like a local, it lasts to the end of its block. A parallel loop gives each
    thread its own part of a workspace this way (:mod:`compiler.imperative.privatize`):
    the array holds one part per thread and each iteration views its thread's part.

    >>> from compiler.imperative import Call, pretty
    >>> print(pretty(View("w", "float64", "w_all", Call("thread_id") * 8, 8)))
    float64 w[8] = &w_all[thread_id() * 8];
    """

    buffer: str
    dtype: str
    of: str
    offset: Expr
    length: Expr

    def __post_init__(self):
        _set(self, "buffer", check_name(self.buffer, "buffer name"))
        _set(self, "dtype", _dtype(self.dtype))
        _set(self, "of", _buffer_name(self.of))
        _set(self, "offset", as_expr(self.offset))
        _set(self, "length", as_expr(self.length))


@serialize.node
@dataclass(frozen=True)
class Comment(Stmt):
    """A comment line in the printed and emitted code."""

    text: str

    def __post_init__(self):
        if "*/" in self.text or "\n" in self.text:
            raise ValueError("a Comment is one line and cannot contain '*/'")


@serialize.node
@dataclass(frozen=True)
class Grow(Stmt):
    """Make the growable ``buffer`` hold at least ``needed`` elements (capacity doubles).

    A ``hint`` only reserves room ahead: when memory is short it does nothing (the growth
    checks that follow still make room as needed), and the interpreter skips it. A ``first``
    growth runs before anything else grew the buffer (:func:`compiler.imperative.cleanup.first_grows`):
    it has no room yet, so the C allocates without testing the capacity.
    """

    buffer: str
    needed: Expr
    hint: bool = False
    first: bool = False

    def __post_init__(self):
        _set(self, "buffer", _buffer_name(self.buffer))
        _set(self, "needed", as_expr(self.needed))


@serialize.node
@dataclass(frozen=True)
class Allocate(Stmt):
    """A scratch array: ``buffer`` holds ``length`` elements of ``dtype`` while ``body`` runs.

    Every element starts at ``init`` (left unset when ``init`` is None); the array is
    freed after ``body``. Workspaces live here: dense accumulators, bitmaps, index lists.
    A ``shared`` array stays one array for all threads of a parallel loop in ``body``
    (each iteration touches only its own elements); any other array a parallel loop
    writes gets a part per thread (:mod:`compiler.imperative.privatize`). A ``stack`` array
    (its length a constant) is a C array on the stack: no allocation, nothing to free.

    >>> from compiler.imperative import Var, For, pretty
    >>> k = Var("k")
    >>> print(pretty(Allocate("w", "float64", 8, 0.0, [For(k, 0, 8, [Store("w", k, 1.0)])])))
    float64 w[8] = {0.0, ...};
    for (int64 k = 0; k < 8; k++) {
        w[k] = 1.0;
    }
    free(w);
    """

    buffer: str
    dtype: str
    length: Expr
    init: Optional[Expr]
    body: Block
    shared: bool = False
    stack: bool = False

    def __post_init__(self):
        _set(self, "buffer", check_name(self.buffer, "buffer name"))
        _set(self, "dtype", _dtype(self.dtype))
        _set(self, "length", as_expr(self.length))
        if self.init is not None:
            _set(self, "init", as_expr(self.init))
        _set(self, "body", as_block(self.body))
        if self.stack and not isinstance(self.length, Const):
            raise ValueError(f"a stack array's length is a constant, not {self.length}")

    def __getitem__(self, index) -> "Load":
        return Load(self.buffer, index)

    def store(self, index, value, op: str | None = None) -> "Store":
        return Store(self.buffer, index, value, op)


@serialize.node
@dataclass(frozen=True)
class Origin:
    """What made a tagged piece of code, as data the explorer reads (never parsed from text):
    the strategy's ``kind`` (``"lattice"``, ``"looplet"`` or ``"expression"``), the ``index`` it
    iterates, the ``operands`` (tensor names) it coiterates or reads, and a looplet's ``style``
    (its lowering rule). A statement computing the program's expression (kind ``"expression"``)
    says which tensor it ``writes`` (``None``: a temporary), the ``line`` and ``column`` where the
    loop program's statement it computes starts (``None``: index notation's one statement), the
    tensors whose ``fills`` it computes with in place of their entries and, once named, the
    ``nodes`` of that statement's expression tree it computes
    (:mod:`compiler.notation.node_provenance`) and, for one node, its ``depth`` in that tree
    (``None``: the assignment and its written access, the statement itself): the explorer names a
    line computing ``A[i] * B[i] + C[i]`` by ``+``, the outermost node it computes, not by ``A[i]``.

    >>> Origin("looplet", "j", ("A",), "Stepper")
    Origin(kind='looplet', index='j', operands=('A',), style='Stepper', writes=None, nodes=(), line=None, column=None, fills=(), depth=None)
    """

    kind: str
    index: str | None = None
    operands: tuple[str, ...] = ()
    style: str | None = None
    writes: str | None = None
    nodes: tuple[str, ...] = ()
    line: int | None = None
    column: int | None = None
    fills: tuple[str, ...] = ()
    depth: int | None = None

    def __post_init__(self):
        _set(self, "operands", tuple(str(o) for o in self.operands))
        _set(self, "nodes", tuple(str(o) for o in self.nodes))
        _set(self, "fills", tuple(str(o) for o in self.fills))

    def as_dict(self) -> dict:
        """JSON-able form, as the C artifact's ``data["origins"]`` holds it."""
        out = {"kind": self.kind, "index": self.index, "operands": list(self.operands), "style": self.style}
        if self.kind == "expression":
            out.update(writes=self.writes, nodes=list(self.nodes), depth=self.depth)
        return out


@serialize.node
@dataclass(frozen=True)
class Tagged(Stmt):
    """``body``, marked as produced by ``tag`` (a lattice point, a looplet, ...).

    Tags change nothing in the program: the C emitter records which C lines each tag
    produced, so the explorer can colour a lattice point or looplet and its C alike.
    ``what`` says, in the user's terms, what the tag stands for (the lattice point's
    expression, the looplet lowered): the explorer's tooltips show it instead of the tag.

    ``origin`` says, as data, which lattice point or looplet made it (:class:`Origin`). ``also``
    names further tags that stand for the same statements, as if nested inside this one: the many
    expression-tree nodes one statement computes, where a tag nested per node would nest the
    program as deep as the tree is large (:mod:`compiler.notation.node_provenance`).

    >>> from compiler.imperative import pretty
    >>> print(pretty(Tagged("lattice:j:A", [Break()], "while j <- A1", Origin("lattice", "j", ("A",)))))
    break;
    >>> Tagged("expr:n0", [Break()], also=("expr:n1",)).tags
    ('expr:n0', 'expr:n1')
    """

    tag: str
    body: Block
    #: a text, or a :class:`~compiler.trace.LaterText` made when read (``str`` gives it); not
    #: compared: a description changes nothing in the program (and comparing would make it)
    what: str = field(default="", compare=False)
    origin: Origin | None = None
    also: tuple[str, ...] = ()

    @property
    def tags(self) -> tuple[str, ...]:
        """This statement's tag and those it also stands for, outermost first."""
        return (self.tag, *self.also)

    def __post_init__(self):
        _set(self, "body", as_block(self.body))
        _set(self, "also", tuple(self.also))


def _var(v) -> Var:
    if isinstance(v, Var):
        return v
    if isinstance(v, (Scalar, OutScalar)):
        return Var(v.name)
    if isinstance(v, str):
        return Var(v)
    raise TypeError(f"expected a variable, got {v!r}")


def _buffer_name(b) -> str:
    if isinstance(b, (Buffer, Growable)):
        return b.name
    if isinstance(b, Allocate):
        return b.buffer
    return check_name(b, "buffer name")


# --------------------------------------------------------------------------- parameters


class _Indexable:
    """Buffers index into :class:`Load` nodes and build :class:`Store` statements."""

    def __getitem__(self, index) -> Load:
        return Load(self.name, index)

    def store(self, index, value, op: str | None = None) -> Store:
        return Store(self.name, index, value, op)


@serialize.node
@dataclass(frozen=True)
class Scalar:
    """A scalar input passed by value."""

    name: str
    dtype: str

    def __post_init__(self):
        check_name(self.name, "parameter name")
        _set(self, "dtype", _dtype(self.dtype))

    @property
    def var(self) -> Var:
        return Var(self.name)


@serialize.node
@dataclass(frozen=True)
class Buffer(_Indexable):
    """A numpy array passed without copying; ``intent`` is ``"in"`` (read only) or ``"inout"``."""

    name: str
    dtype: str
    intent: str = "in"

    def __post_init__(self):
        check_name(self.name, "parameter name")
        _set(self, "dtype", _dtype(self.dtype))
        if self.intent not in ("in", "inout"):
            raise ValueError(f"buffer {self.name}: intent must be 'in' or 'inout', not {self.intent!r}")


@serialize.node
@dataclass(frozen=True)
class Growable(_Indexable):
    """An output buffer that starts empty and grows inside the kernel with :class:`Grow`.

    ``length`` names the :class:`OutScalar` whose final value is the number of
    valid elements; the kernel returns the first ``length`` elements (several
    growables may share one length, like the ``idx`` and ``val`` of a sparse vector).
    """

    name: str
    dtype: str
    length: str

    def __post_init__(self):
        check_name(self.name, "parameter name")
        _set(self, "dtype", _dtype(self.dtype))
        _set(self, "length", self.length.name if isinstance(self.length, OutScalar) else self.length)


@serialize.node
@dataclass(frozen=True)
class OutScalar:
    """A scalar the kernel returns: a local variable starting at ``init``."""

    name: str
    dtype: str
    init: Union[bool, int, float] = 0

    def __post_init__(self):
        check_name(self.name, "parameter name")
        _set(self, "dtype", _dtype(self.dtype))
        _set(self, "init", Const(self.init, self.dtype).value)

    @property
    def var(self) -> Var:
        return Var(self.name)


Param = Union[Scalar, Buffer, Growable, OutScalar]


@serialize.node
@dataclass(frozen=True)
class Helper:
    """C source of a ``static inline`` function the kernel calls by ``name``.

    The interpreter needs a Python implementation of it, passed as
    ``interpret(fn, helpers={name: callable})``.
    """

    name: str
    source: str

    def __post_init__(self):
        check_name(self.name, "helper name")


@serialize.node
@dataclass(frozen=True)
class Function:
    """A kernel: ``name``, parameters, body and helper functions.

    Parameter names must be unique; every :class:`Growable`'s length must name
    an :class:`OutScalar`.
    """

    name: str
    params: tuple[Param, ...]
    body: Block
    helpers: tuple[Helper, ...] = ()

    def __post_init__(self):
        check_name(self.name, "function name")
        _set(self, "params", tuple(self.params))
        _set(self, "body", as_block(self.body))
        _set(self, "helpers", tuple(self.helpers))
        seen = set()
        for p in self.params:
            if not isinstance(p, (Scalar, Buffer, Growable, OutScalar)):
                raise TypeError(f"function {self.name}: {p!r} is not a parameter (Scalar, Buffer, Growable, OutScalar)")
            if p.name in seen:
                raise ValueError(f"function {self.name}: parameter {p.name!r} appears twice")
            seen.add(p.name)
        outs = {p.name for p in self.params if isinstance(p, OutScalar)}
        for p in self.params:
            if isinstance(p, Growable) and p.length not in outs:
                raise ValueError(f"function {self.name}: growable {p.name} has length {p.length!r}, "
                                 f"which is not an OutScalar parameter")
        names = [h.name for h in self.helpers]
        if len(set(names)) != len(names):
            raise ValueError(f"function {self.name}: helper names are not unique: {names}")

    def __hash__(self) -> int:
        # Hashing a large tree is not free and the kernel cache hashes on every lookup: hashed once,
        # when first asked (the cleanup passes rebuild a kernel's Function many times, hashed never;
        # kept out of the dataclass fields so it is never serialized)
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.name, self.params, self.body, self.helpers))
            _set(self, "_hash", h)
        return h

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"function {self.name} has no parameter {name!r}")

    def __str__(self) -> str:
        return printed(self)

    def pretty(self) -> str:
        return str(self)
