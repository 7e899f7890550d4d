"""The Finch loop-program IR: loops, sieves, definitions, blocks, declarations and assignments.

Every node is a frozen dataclass, printed in a readable Finch-like syntax. Extents
are half-open ``[start, stop)`` and coordinates 0-based (the papers' 1-based,
inclusive ``a:b`` becomes ``a-1:b`` here). ``line`` fields hold the line of the
user's Python program a node came from (0 when unknown); they take no part in
equality.

>>> from compiler.algebra import lookup
>>> i, j = Index("i"), Index("j")
>>> prog = Block((Declare(TensorRef("y"), Literal(0.0)),
...               Loop(i, None, Loop(j, None,
...                    Assign(Access(TensorRef("y"), (i,)), lookup("+"),
...                           Call(lookup("*"), (Access(TensorRef("A"), (i, j)), Access(TensorRef("x"), (j,)))))))))
>>> print(prog)
y .= 0.0
for i = _
  for j = _
    y[i] += A[i, j] * x[j]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from operator import is_
from typing import Any

import numpy as np

from .. import serialize
from ..algebra import Operator
from ..imperative import ir


class _Missing:
    """Finch's ``missing``: the value of an out-of-bounds (permissive) read."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "missing"

    def __reduce__(self):
        return (_Missing, ())


#: the ``missing`` value: ``f(..., missing, ...)`` is missing except for ``coalesce``
MISSING = _Missing()


class Node:
    """Base of program nodes; ``str()`` gives the Finch-like text."""

    def __str__(self) -> str:
        return "\n".join(show_stmt(self, 0)) if isinstance(self, Stmt) else show_expr(self)

    def pretty(self) -> str:
        return str(self)


class Expr(Node):
    """Base of program expressions."""


class Stmt(Node):
    """Base of program statements."""


# --------------------------------------------------------------------------- expressions


@serialize.node
@dataclass(frozen=True, eq=False)
class Literal(Expr):
    """A constant known at compile time (a bool, int, float or :data:`MISSING`).

    Equality is by type and value (NaN equals NaN), so the simplifier can match it. ``fills``:
    the program's tensors whose fills it was folded from (a fill region's ``A[i] * 2 + 1`` is
    ``1.0`` from A's fill 0), which the statement writing it is tagged with, as ``Value.source``
    is (:mod:`compiler.notation.node_provenance`); not part of its equality. ``dtype``: the numpy
    dtype it is a value of (a tensor's fill, or what was folded from one), None for a literal of the
    program, which takes the dtype of what it meets as numpy's Python scalars do (:meth:`typed`);
    not part of its equality either.

    >>> Literal(np.int32(7)).dtype, Literal(7).dtype, Literal(7) == Literal(7, dtype="int32")
    ('int32', None, True)
    """

    value: Any
    fills: tuple = field(default=(), kw_only=True, repr=False)
    dtype: str | None = field(default=None, kw_only=True, repr=False)

    def __post_init__(self):
        v = self.value
        if isinstance(v, np.generic):
            if self.dtype is None:
                object.__setattr__(self, "dtype", v.dtype.name)
            object.__setattr__(self, "value", v.item())

    def typed(self):
        """The value as numpy computes with it: a scalar of :attr:`dtype`, or the Python value (weak).

        >>> type(Literal(7, dtype="int32").typed()).__name__, type(Literal(7).typed()).__name__
        ('int32', 'int')
        """
        return self.value if self.dtype is None else np.asarray(self.value, dtype=self.dtype)[()]

    def _key(self):
        v = self.value
        if v is MISSING:
            return ("missing",)
        return (type(v).__name__, "nan" if isinstance(v, (float, complex)) and v != v else v)

    def __eq__(self, other):
        return isinstance(other, Literal) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


def folded(value, *parts, dtype: str | None = None) -> Literal:
    """The literal ``value`` (of ``dtype``) folded from ``parts`` (literals, or names of tensors whose fills it
    computes with): it keeps the fills they were folded from.

    >>> folded(1.0, folded(0.0, "A"), Literal(1.0)).fills
    ('A',)
    """
    names = {n for p in parts for n in ((p,) if isinstance(p, str) else getattr(p, "fills", ()))}
    return Literal(value, fills=tuple(sorted(names)), dtype=dtype)


@serialize.node
@dataclass(frozen=True)
class Index(Expr):
    """A loop index."""

    name: str


@serialize.node
@dataclass(frozen=True)
class Variable(Expr):
    """A local defined by :class:`Define` (``let``)."""

    name: str


@serialize.node
@dataclass(frozen=True)
class Value(Expr):
    """An already-lowered host (C) expression of ``dtype``: Finch's ``$value``. A read of a
    tensor's value says which tensor (``source``), as the access it replaces did: the statement
    computing with it is tagged with the tensors it reads (:mod:`compiler.notation.node_provenance`)."""

    expr: Any
    dtype: str
    source: str | None = field(default=None, compare=False, kw_only=True)


@serialize.node
@dataclass(frozen=True)
class Count(Value):
    """The number of copies of a value a loop adds (:func:`compiler.looplets.simplify.integrate`'s ``n`` in
    ``n * v``): the lowering multiplies each part of a complex ``v`` by it, as the copies' sum does, where numpy's
    product with ``n`` made complex would give ``(inf + 0j) * 3`` an imaginary part ``inf * 0``. No program's
    operand is one (a tensor's value read at a leaf is a plain :class:`Value`).

    >>> from compiler.imperative.ir import Var
    >>> Count(Var("n"), "int64") == Value(Var("n"), "int64"), isinstance(Count(Var("n"), "int64"), Value)
    (False, True)
    """


@serialize.node
@dataclass(frozen=True)
class Size(Value):
    """``size(A, m)`` (written ``A.shape[m]`` or ``len(A)``): the size of logical mode ``mode``
    of ``tensor``, an int64 kernel parameter. The parser leaves ``expr`` None; wrapperization
    resolves it to the tensor's storage size parameter (``A0_size``).

    >>> print(show_expr(Size(None, "int64", "A", 1)))
    size(A, 1)
    """

    tensor: str = ""
    mode: int = 0


@serialize.node
@dataclass(frozen=True)
class TensorRef(Expr):
    """A tensor named by the program (an input, an output or a temporary)."""

    name: str


@serialize.node
@dataclass(frozen=True)
class Swizzle(TensorRef):
    """``swizzle(A, *axes)``: a lazy transpose, numpy's ``A.transpose(axes)``: mode ``d`` of
    the swizzle is mode ``axes[d]`` of ``A``, so ``swizzle(A, 1, 0)[i, j]`` reads ``A[j, i]``.

    It is a :class:`TensorRef` (naming ``A``) so passes that look for tensors find it;
    wrapperization compiles it away by permuting the access's indices.
    """

    axes: tuple = ()

    def permute(self, idxs) -> tuple:
        """The indices of ``A`` for indices ``idxs`` of the swizzle.

        >>> Swizzle("A", (1, 2, 0)).permute(("i", "j", "k"))
        ('k', 'i', 'j')
        """
        out = [None] * len(self.axes)
        for d, a in enumerate(self.axes):
            out[a] = idxs[d]
        return tuple(out)


@serialize.node
@dataclass(frozen=True)
class Raveled(TensorRef):
    """``ravel(A)``: a row-major matrix read as the vector of its entries, ``ravel(A)[n]`` being
    ``A[n // |j|, n % |j|]`` (a collapse read where another operator computes its index); unfurled
    as one walk over the stored entries (:mod:`compiler.looplets.raveled`)."""


@serialize.node
@dataclass(frozen=True)
class Strided(TensorRef):
    """``stride(A, m, start:stop:step)``: ``A`` with its logical mode ``m`` read at ``start + step * k``
    for ``k`` of its loop, the rows ``[start, stop)`` (``(stop, start]`` for a negative step) a
    strided slice keeps (a CSC's rows sliced inside the loop over its columns); unfurled as a walk
    over the stored entries the slice keeps, where the level can (:mod:`compiler.looplets.stepped`).

    >>> print(show_expr(Access(Strided("A", 0, 8, -1, -2), (Index("k"), Index("i")))))
    stride(A, 0, 8:-1:-2)[k, i]
    """

    mode: int = 0
    start: int = 0
    stop: int = 0
    step: int = 1


class IndexModifier(Expr):
    """Base of the index modifiers wrapperization introduces (``Offset``, ``Permit``,
    ``Window``, ``Protocol`` in :mod:`compiler.looplets.passes`).

    Each wraps an ``index`` (another modifier or an :class:`Index`); the outermost
    modifier is the one nearest the tensor. An access with modifiers prints as Finch's
    wrapper tensors, e.g. ``offset(permissive(A, true), i - 1)[j]``: ``wrapper`` names the
    wrapper, :meth:`wrapper_arg` gives this mode's argument, ``neutral`` the argument of
    the modes the wrapper leaves alone.
    """

    wrapper = "?"
    neutral = "_"

    def wrapper_arg(self) -> str:
        return "_"


@dataclass(frozen=True)
class Access(Expr):
    """``tns[idxs...]``. ``tns`` is a :class:`TensorRef`, a wrapper, a looplet or a sub-fiber.

    ``idxs`` are in *storage* order once the program is normalized (the order in
    which levels are unfurled, outermost first). ``mode`` is ``"read"`` or
    ``"update"`` (the left side of an assignment). ``source`` names the program's tensor the
    access reads, kept as ``tns`` is unfurled to looplets: the simplifier asks what the operand
    may hold (:mod:`compiler.looplets.facts`).
    """

    tns: Any
    idxs: tuple = ()
    mode: str = "read"
    line: int = field(default=0, compare=False)
    source: str | None = field(default=None, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "idxs", tuple(self.idxs))



@dataclass(frozen=True)
class Call(Expr):
    """``op(args...)``: an :class:`~compiler.algebra.Operator`, or one of the special
    functions ``"coalesce"`` (first non-missing argument) and ``"ifelse"``."""

    op: Any
    args: tuple

    def __post_init__(self):
        object.__setattr__(self, "args", tuple(self.args))


# --------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Extent:
    """A half-open extent ``[start, stop)`` of imperative-IR expressions."""

    start: Any
    stop: Any

    def __post_init__(self):
        object.__setattr__(self, "start", ir.as_expr(self.start))
        object.__setattr__(self, "stop", ir.as_expr(self.stop))

    def __str__(self):
        return f"{self.start}:{self.stop}"


@dataclass(frozen=True)
class Loop(Stmt):
    """``for idx = ext: body``; ``ext`` is ``None`` (``_``) until dimensionalization."""

    idx: Index
    ext: Extent | None
    body: Stmt
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Sieve(Stmt):
    """``if cond: body`` (Finch's sieve; there is no else)."""

    cond: Expr
    body: Stmt
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Define(Stmt):
    """``let var = val: body``."""

    var: Variable
    val: Expr
    body: Stmt
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Block(Stmt):
    """Statements in order."""

    stmts: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "stmts", tuple(self.stmts))


@dataclass(frozen=True)
class Declare(Stmt):
    """``tns .= init``: reset an output to its fill ``init`` (and thaw it)."""

    tns: TensorRef
    init: Expr
    line: int = field(default=0, compare=False)
    #: inserted by life-cycle automation: the runtime has already filled the output
    implicit: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class Freeze(Stmt):
    """``@freeze(tns)``: finish updates, ready the tensor for reading."""

    tns: TensorRef
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Thaw(Stmt):
    """``@thaw(tns)``: ready a read tensor for updates."""

    tns: TensorRef
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Assign(Stmt):
    """``lhs <<op>>= rhs``; ``op`` None is an overwrite (``lhs = rhs``); ``line`` and ``column``:
    where it starts in the program's source (two statements may share a line); ``overwrites``: why
    an earlier write may have stored at its coordinate, so a fill it writes is kept
    (:mod:`compiler.looplets.overwrites`), or None."""

    lhs: Access
    op: Operator | None
    rhs: Expr
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)
    overwrites: str | None = field(default=None, compare=False)


# --------------------------------------------------------------------------- printing

_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "lt": "<", "le": "<=", "gt": ">",
          "ge": ">=", "eq": "==", "ne": "!=", "and": "&&", "or": "||", "bitand": "&", "bitor": "|",
          "bitxor": "^"}
_PREC = {"or": 1, "and": 2, "lt": 4, "le": 4, "gt": 4, "ge": 4, "eq": 4, "ne": 4, "bitor": 5,
         "bitxor": 6, "bitand": 7, "add": 8, "sub": 8, "mul": 9, "div": 9}
_SHORT = {"add": "+=", "mul": "*=", "bitor": "|=", "bitand": "&=", "or": "|=", "and": "&="}


def literal_text(v) -> str:
    if v is MISSING:
        return "missing"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and math.isinf(v):
        return "Inf" if v > 0 else "-Inf"
    return repr(v)


def op_name(op) -> str:
    return op if isinstance(op, str) else str(op)


def _tns_text(t) -> str:
    if isinstance(t, Swizzle):
        return f"swizzle({t.name}, {', '.join(str(a) for a in t.axes)})"
    if isinstance(t, Raveled):
        return f"ravel({t.name})"
    if isinstance(t, Strided):
        return f"stride({t.name}, {t.mode}, {t.start}:{t.stop}:{t.step})"
    if isinstance(t, TensorRef):
        return t.name
    label = getattr(t, "label", None)
    return label() if callable(label) else str(t)


def _cat(*parts) -> tuple[str, tuple]:
    """The text of ``parts`` (texts, or ``(text, spans)`` pairs) joined, and their spans moved to
    where each part lands in it."""
    texts, spans, at = [], [], 0
    for part in parts:
        if isinstance(part, str):
            text = part
        else:
            text, inner = part
            if inner:   # (most parts hold no access: printing every step's text should stay cheap)
                spans.extend((a + at, b + at, node) for a, b, node in inner)
        texts.append(text)
        at += len(text)
    return "".join(texts), tuple(spans)


def _show(e, spans: bool = False) -> tuple[str, int, tuple]:
    """The text of expression ``e``, its precedence, and with ``spans`` where each access is
    printed in the text: ``((start, end, access), ...)`` (an access inside another's indices is
    the outer's; without, none: a lowering prints its steps' texts often)."""
    if isinstance(e, Literal):
        return literal_text(e.value), 11, ()
    if isinstance(e, (Index, Variable, TensorRef)):
        return e.name, 11, ()
    if isinstance(e, Size):
        return f"size({e.tensor}, {e.mode})", 11, ()
    if isinstance(e, Value):
        # (a constant, as a count of copies added is, needs no mark of a host expression)
        return (literal_text(e.expr.value) if isinstance(e.expr, ir.Const) else f"${{{e.expr}}}"), 11, ()
    if isinstance(e, Access):
        text = _wrapped_access_text(e)
        if text is None:
            text = f"{_tns_text(e.tns)}[{', '.join(show_expr(i) for i in e.idxs)}]"
        return text, 11, ((0, len(text), e),) if spans else ()
    if isinstance(e, Call):
        op = e.op
        name = getattr(op, "name", None)
        if isinstance(op, Operator) and not op.is_user and name == "add" and len(e.args) == 2 and \
                isinstance(e.args[1], Literal) and isinstance(e.args[1].value, (int, float)) and \
                not isinstance(e.args[1].value, bool) and e.args[1].value < 0:
            # i + -1 reads as i - 1 (offsets fold their constants into an addition)
            (lt, lp, ls), p = _show(e.args[0], spans), _PREC["sub"]
            left = ("(", (lt, ls), ")") if lp < p else ((lt, ls),)
            return _with_prec(_cat(*left, f" - {literal_text(-e.args[1].value)}"), p)
        if isinstance(op, Operator) and not op.is_user and name in _INFIX and len(e.args) == 2:
            p = _PREC[name]
            (lt, lp, ls), (rt, rp, rs) = _show(e.args[0], spans), _show(e.args[1], spans)
            left = ("(", (lt, ls), ")") if lp < p else ((lt, ls),)
            right = ("(", (rt, rs), ")") if rp <= p else ((rt, rs),)
            return _with_prec(_cat(*left, f" {_INFIX[name]} ", *right), p)
        if isinstance(op, Operator) and not op.is_user and name in ("not", "neg"):
            t, p, ts = _show(e.args[0], spans)
            inner = ("(", (t, ts), ")") if p < 10 else ((t, ts),)
            return _with_prec(_cat("!" if name == "not" else "-", *inner), 10)
        args = []
        for k, a in enumerate(e.args):
            t, _, ts = _show(a, spans)
            args += [", "] * bool(k) + [(t, ts)]
        return _with_prec(_cat(f"{op_name(op)}(", *args, ")"), 11)
    return _tns_text(e), 11, ()


def _with_prec(joined: tuple[str, tuple], prec: int) -> tuple[str, int, tuple]:
    return joined[0], prec, joined[1]


#: the order of wrappers that modify different modes at the same depth (they commute)
_WRAPPER_ORDER = ("permissive", "window", "offset", "protocolize")


def _wrapped_access_text(e) -> str | None:
    """Finch's wrapper-tensor text of an access whose indices carry modifiers, else None.

    Each mode's modifiers are peeled from the tensor side; the ``k``-th modifiers of all
    modes form one layer, printed as one wrapper call per kind (modes commute):
    ``A[~(j + i - 1), k]`` prints ``offset(permissive(A, true, false), i - 1, 0)[j, k]``.
    """
    chains = []
    for x in e.idxs:
        mods = []
        while isinstance(x, IndexModifier):
            mods.append(x)
            x = x.index
        chains.append((mods, x))
    if not any(mods for mods, _ in chains):
        return None
    text = _tns_text(e.tns)
    for layer in range(max(len(mods) for mods, _ in chains)):
        here = [mods[layer] if layer < len(mods) else None for mods, _ in chains]
        for kind in _WRAPPER_ORDER + tuple(sorted({m.wrapper for m in here if m is not None}
                                                  - set(_WRAPPER_ORDER))):
            if not any(m is not None and m.wrapper == kind for m in here):
                continue
            proto = next(m for m in here if m is not None and m.wrapper == kind)
            args = [m.wrapper_arg() if m is not None and m.wrapper == kind else proto.neutral for m in here]
            text = f"{kind}({text}, {', '.join(args)})"
    return f"{text}[{', '.join(show_expr(b) for _, b in chains)}]"


def show_expr(e) -> str:
    """The Finch-like text of an expression."""
    return _show(e)[0]


def assign_text(op) -> str:
    if op is None:
        return "="
    if not op.is_user and op.name in _SHORT:
        return _SHORT[op.name]
    return f"<<{op}>>="


def show_stmt(s, depth: int) -> list[str]:
    """The Finch-like lines of a statement at indentation ``depth``."""
    return [line for line, _ in _stmt_lines(s, depth, False)]


def show_spans(node) -> tuple[str, dict[int, list[tuple[int, int, Node]]]]:
    """The text of a statement or expression (as ``str`` prints it) and the node the printer put at
    each span of each line: ``{1-based line: [(start, end, node)]}``, a loop's head (``for i = _``)
    and each access (``A[i, j]``, ``y.lvl1[i][]``, a looplet waiting on its index), so a reader
    of the text needs no pattern to find them.

    >>> from compiler.algebra import lookup
    >>> i = Index("i")
    >>> text, spans = show_spans(Loop(i, None, Assign(Access(TensorRef("y"), (i,)), lookup("+"),
    ...                                              Access(TensorRef("Run"), (i,)))))
    >>> [(text.splitlines()[n - 1][a:b], type(node).__name__) for n, v in spans.items() for a, b, node in v]
    [('for i = _', 'Loop'), ('y[i]', 'Access'), ('Run[i]', 'Access')]
    """
    if not isinstance(node, Stmt):
        text, _, spans = _show(node, True)
        return text, ({1: list(spans)} if spans else {})
    lines, spans, n = [], {}, 1
    for line, v in _stmt_lines(node, 0, True):
        lines.append(line)
        if v:
            spans[n] = list(v)
        n += 1 + line.count("\n")   # (a statement printing itself may take several lines)
    return "\n".join(lines), spans


def _stmt_lines(s, depth: int, spans: bool) -> list[tuple[str, tuple]]:
    """The lines of a statement with, given ``spans``, the spans of each (see :func:`show_spans`)."""
    pad = "  " * depth

    def line(*parts) -> tuple[str, tuple]:
        return _cat(pad, *parts)

    def expr(e) -> tuple[str, tuple]:
        text, _, where = _show(e, spans)
        return text, where
    if isinstance(s, Block):
        if not s.stmts:
            return [(pad + "pass", ())]
        return [x for t in s.stmts for x in _stmt_lines(t, depth, spans)]
    if isinstance(s, Loop):
        head = f"for {s.idx.name} = {'_' if s.ext is None else s.ext}"
        return [line((head, ((0, len(head), s),) if spans else ())), *_stmt_lines(s.body, depth + 1, spans)]
    if isinstance(s, Sieve):
        return [line("if ", expr(s.cond)), *_stmt_lines(s.body, depth + 1, spans)]
    if isinstance(s, Define):
        return [line(f"let {s.var.name} = ", expr(s.val)), *_stmt_lines(s.body, depth + 1, spans)]
    if isinstance(s, Declare):
        return [line(f"{s.tns.name} .= ", expr(s.init))]
    if isinstance(s, Freeze):
        return [(f"{pad}@freeze({s.tns.name})", ())]
    if isinstance(s, Thaw):
        return [(f"{pad}@thaw({s.tns.name})", ())]
    if isinstance(s, Assign):
        return [line(expr(s.lhs), f" {assign_text(s.op)} ", expr(s.rhs))]
    return [(pad + str(s), ())]


# --------------------------------------------------------------------------- traversal


#: what :func:`children`, :func:`walk` and :func:`postmap` do with a node, by its type (remembered per
#: type: the chain of isinstance tests it replaces, per node, was most of a traversal's time)
_BLOCK, _LOOP, _SIEVE, _DEFINE, _ASSIGN, _DECLARE, _ACCESS, _CALL, _MODIFIER, _LEAF = range(10)
_KINDS: dict = {}
_MODIFIER_FIELDS: dict = {}   # an expression type of kind _MODIFIER -> its field names


def _kind(tp) -> int:
    for cls, kind in ((Block, _BLOCK), (Loop, _LOOP), (Sieve, _SIEVE), (Define, _DEFINE), (Assign, _ASSIGN),
                      (Declare, _DECLARE), (Access, _ACCESS), (Call, _CALL)):
        if issubclass(tp, cls):
            break
    else:
        if issubclass(tp, Expr) and hasattr(tp, "__dataclass_fields__") and \
                not issubclass(tp, (Literal, Index, Variable, Value, TensorRef)):
            kind = _MODIFIER   # (an index modifier: its expression fields)
            _MODIFIER_FIELDS[tp] = tuple(f.name for f in fields(tp))
        else:
            kind = _LEAF
    _KINDS[tp] = kind
    return kind


def children(node) -> list:
    """The program sub-nodes of ``node`` (not looking inside looplets or host values)."""
    kind = _KINDS.get(type(node))
    if kind is None:
        kind = _kind(type(node))
    if kind == _LEAF:
        return []
    if kind == _BLOCK:
        return list(node.stmts)
    if kind == _LOOP:
        return [node.body]
    if kind == _SIEVE:
        return [node.cond, node.body]
    if kind == _DEFINE:
        return [node.val, node.body]
    if kind == _ASSIGN:
        return [node.lhs, node.rhs]
    if kind == _DECLARE:
        return [node.init]
    if kind == _ACCESS:
        return list(node.idxs)
    if kind == _CALL:
        return list(node.args)
    return [v for v in (getattr(node, f) for f in _MODIFIER_FIELDS[type(node)]) if isinstance(v, Node)]


def walk(node):
    """Pre-order traversal of program nodes.

    >>> [type(n).__name__ for n in walk(Call("f", (Index("i"), Call("g", (Literal(1),)))))]
    ['Call', 'Index', 'Call', 'Literal']
    """
    # (a stack, not generators nested as deep as the tree: each node passed up through every level)
    stack = [node]
    pop, push = stack.pop, stack.extend
    while stack:
        n = pop()
        yield n
        kids = children(n)
        if kids:
            kids.reverse()
            push(kids)


def postmap(node, fn):
    """Rebuild ``node`` bottom-up, replacing each sub-node ``n`` by ``fn(n)`` (or ``n`` if None).

    A node none of whose sub-nodes changed is kept itself, not rebuilt (later passes and the
    simplifier's memo see the same object).

    >>> e = Call("f", (Index("i"), Literal(1)))
    >>> postmap(e, lambda n: None) is e, postmap(e, lambda n: Index("j") if n == Index("i") else None)
    (True, Call(op='f', args=(Index(name='j'), Literal(value=1))))
    """
    kind = _KINDS.get(type(node))
    if kind is None:
        kind = _kind(type(node))
    if kind == _LEAF:
        new = node
    elif kind == _BLOCK:
        new = _rebuilt(node, stmts=_mapped(node.stmts, fn))
    elif kind == _LOOP:
        new = _rebuilt(node, body=postmap(node.body, fn))
    elif kind == _SIEVE:
        new = _rebuilt(node, cond=postmap(node.cond, fn), body=postmap(node.body, fn))
    elif kind == _DEFINE:
        new = _rebuilt(node, val=postmap(node.val, fn), body=postmap(node.body, fn))
    elif kind == _ASSIGN:
        new = _rebuilt(node, lhs=postmap(node.lhs, fn), rhs=postmap(node.rhs, fn))
    elif kind == _DECLARE:
        new = _rebuilt(node, init=postmap(node.init, fn))
    elif kind == _ACCESS:
        new = _rebuilt(node, idxs=_mapped(node.idxs, fn))
    elif kind == _CALL:
        new = _rebuilt(node, args=_mapped(node.args, fn))
    else:
        # other expression nodes (index modifiers): map their expression fields
        changes = {f: postmap(getattr(node, f), fn) for f in _MODIFIER_FIELDS[type(node)]
                   if isinstance(getattr(node, f), Node)}
        new = _rebuilt(node, **changes) if changes else node
    out = fn(new)
    return new if out is None else out


def _mapped(nodes: tuple, fn) -> tuple:
    """:func:`postmap` of each of ``nodes``: ``nodes`` itself where none changed."""
    out = [postmap(n, fn) for n in nodes]
    return nodes if all(map(is_, out, nodes)) else tuple(out)


def _rebuilt(node, **fields):
    """``node`` with ``fields`` (its own fields' new values), or ``node`` itself where each is the old."""
    for k, v in fields.items():
        if getattr(node, k) is not v:
            return replace(node, **fields)
    return node


def substitute(node, mapping: dict):
    """Replace indices/variables (keys of ``mapping``) by expressions."""
    return postmap(node, lambda n: mapping.get(n) if isinstance(n, (Index, Variable)) else None)


def uses(node, what) -> bool:
    """Whether ``what`` (an Index or Variable) occurs in ``node``, including inside looplet accesses."""
    return any(n == what for n in walk(node) if isinstance(n, (Index, Variable)))


def block(*stmts) -> Stmt:
    """A block, flattening nested blocks and dropping empty ones; one statement stays itself."""
    out = []
    for s in stmts:
        if isinstance(s, Block):
            out.extend(s.stmts)
        elif s is not None:
            out.append(s)
    return out[0] if len(out) == 1 else Block(tuple(out))


def is_pass(s) -> bool:
    return isinstance(s, Block) and not s.stmts


__all__ = ["MISSING", "Node", "Expr", "Stmt", "Literal", "folded", "Index", "Variable", "Value", "Count", "Size",
           "TensorRef",
           "Swizzle", "Raveled", "Strided", "IndexModifier",
           "Access", "Call", "Extent", "Loop", "Sieve", "Define", "Block", "Declare", "Freeze",
           "Thaw", "Assign", "show_expr", "show_spans", "show_stmt", "walk", "postmap", "substitute", "uses",
           "block", "is_pass", "children", "fields"]
