"""The index-notation AST: frozen, hashable, JSON-serializable nodes and their printer.

Binary and unary operators are :class:`Call` nodes of an :class:`~compiler.algebra.Operator`;
reductions are explicit :class:`Reduce` nodes. Printing gives text that
:func:`compiler.notation.parse` reads back to the same tree.

>>> from compiler.algebra import lookup
>>> add, mul = lookup("+"), lookup("*")
>>> spmv = Assign(Access("y", ["i"]), None,
...               Reduce(add, ["j"], Call(mul, (Access("A", ["i", "j"]), Access("x", ["j"])))))
>>> print(spmv)
y[i] = sum[j](A[i, j] * x[j])
>>> [str(i) for i in free_indices(spmv.rhs)]
['i']
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from .. import serialize
from ..algebra import NOVALUE, Operator

# Binding strength of infix operators (higher binds tighter). As in Python,
# comparisons bind looser than | ^ &, which bind looser than << >>, then + -.
BINARY_PRECEDENCE = {
    "or": 1, "and": 2,
    "lt": 4, "le": 4, "gt": 4, "ge": 4, "eq": 4, "ne": 4,
    "bitor": 5, "bitxor": 6, "bitand": 7, "lshift": 8, "rshift": 8,
    "add": 9, "sub": 9, "mul": 10, "div": 10, "floordiv": 10, "mod": 10,
}
COMPARISONS = {"lt", "le", "gt", "ge", "eq", "ne"}
UNARY_PRECEDENCE = 11
PREFIX = {"neg": "-", "not": "!"}
_ATOM = 12

#: how a reduction by each builtin operator is spelled
REDUCTION_NAMES = {"add": "sum", "mul": "prod", "or": "any", "and": "all"}
#: assignment operators with a short spelling; others print as ``<<op>>=``
ASSIGN_SPELLINGS = {"add": "+=", "mul": "*=", "min": "min=", "max": "max=",
                    "bitor": "|=", "bitand": "&=", "bitxor": "^="}


class Expr:
    """Base of the expression nodes."""

    def __str__(self):
        return _show(self)[0]

    def pretty(self) -> str:
        """The readable text of the node (what :func:`parse` reads back)."""
        return str(self)

    def printed_parts(self) -> tuple[str, dict]:
        """The text and where its parts are printed, as a trace step records them (see
        :func:`show_parts`); a step given this node records them in its ``data``."""
        return parts_record([show_parts(self)])

    def children(self) -> tuple:
        return ()


@serialize.node
@dataclass(frozen=True)
class Index:
    """An index variable."""

    name: str

    def __str__(self):
        return self.name


def _indices(items) -> tuple[Index, ...]:
    return tuple(i if isinstance(i, Index) else Index(str(i)) for i in items)


def _access_indices(items) -> tuple:
    # (an int is a constant index: A[2, j] reads row 2)
    return tuple(i if isinstance(i, Index) or (isinstance(i, int) and not isinstance(i, bool)) else Index(str(i))
                 for i in items)


@serialize.node
@dataclass(frozen=True)
class Access(Expr):
    """``tensor[i, j, ...]``; no indices for a 0-d tensor (printed ``s[]``). An int among the indices
    is a constant coordinate (``A[2, j]``; only index notation with shape operators takes one).

    >>> Access("A", (2, "j")).loop_indices
    (Index(name='j'),)
    """

    tensor: str
    indices: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "indices", _access_indices(self.indices))

    @property
    def loop_indices(self) -> tuple[Index, ...]:
        """The index variables of the access (its constant coordinates left out)."""
        return tuple(i for i in self.indices if isinstance(i, Index))

    __str__ = Expr.__str__


@serialize.node
@dataclass(frozen=True, eq=False)
class Literal(Expr):
    """A constant: a bool, int or float (inf and nan allowed).

    Equality is by type and value, with NaN equal to NaN, so that trees (and
    kernel cache keys) containing NaN literals compare equal.

    ``typed`` keeps the dtype of a tensor's fill put in for an absent operand (an int32
    fill stays int32, so ``b[i] + 1`` wraps as ``b[i] + c[i]`` would); a literal written
    in a program is bool, int64 or float64 by its value.

    >>> Literal(float("nan")) == Literal(float("nan")), Literal(1) == Literal(1.0)
    (True, False)
    >>> Literal(1, "int32").dtype.name, Literal(1, "int64") == Literal(1)
    ('int32', True)
    """

    value: Any
    typed: str | None = None

    def __post_init__(self):
        v = self.value
        if isinstance(v, np.generic):
            v = v.item()
        if not isinstance(v, (bool, int, float, complex)):
            raise TypeError(f"a literal must be a bool, int, float or complex, not {type(v).__name__}")
        object.__setattr__(self, "value", v)
        if self.typed is not None:
            typed = np.dtype(self.typed).name
            object.__setattr__(self, "typed", None if typed == self._natural().name else typed)

    def _natural(self) -> np.dtype:
        v = self.value
        if isinstance(v, int) and not isinstance(v, bool) and 2 ** 63 <= v < 2 ** 64:
            return np.dtype("uint64")   # (as numpy types it: an all-ones 64-bit mask)
        return np.dtype("bool" if isinstance(v, bool) else "int64" if isinstance(v, int) else
                        "complex128" if isinstance(v, complex) else "float64")

    @property
    def dtype(self) -> np.dtype:
        """bool, int64 or float64 by the value (literals are not weakly typed), or ``typed``."""
        return np.dtype(self.typed) if self.typed is not None else self._natural()

    def _key(self):
        v = self.value
        return (type(v).__name__, "nan" if isinstance(v, (float, complex)) and v != v else v, self.typed)

    def __eq__(self, other):
        return isinstance(other, Literal) and self._key() == other._key()

    def __hash__(self):
        return hash(("Literal",) + self._key())

    __str__ = Expr.__str__


@serialize.node
@dataclass(frozen=True)
class IndexValue(Expr):
    """An index used as a value (TACO #514: ``A[i, j] = B[i, j] * i``): its coordinate, an int64.

    >>> str(IndexValue(Index("i")))
    'i'
    """

    index: Index

    __str__ = Expr.__str__


@serialize.node
@dataclass(frozen=True)
class Call(Expr):
    """``op(args...)``; infix and prefix operators are calls too."""

    op: Operator
    args: tuple[Expr, ...]

    def __post_init__(self):
        object.__setattr__(self, "args", tuple(self.args))
        if len(self.args) != self.op.arity:
            raise TypeError(f"{self.op.name} takes {self.op.arity} argument(s), got {len(self.args)}")

    def children(self):
        return self.args

    __str__ = Expr.__str__


@serialize.node
@dataclass(frozen=True)
class Reduce(Expr):
    """``op[indices](body)``: reduce ``body`` over ``indices`` (first listed outermost)."""

    op: Operator
    indices: tuple[Index, ...]
    body: Expr

    def __post_init__(self):
        object.__setattr__(self, "indices", _indices(self.indices))

    def children(self):
        return (self.body,)

    __str__ = Expr.__str__


@serialize.node
@dataclass(frozen=True)
class Assign:
    """``lhs = rhs`` (``op`` is None) or ``lhs op= rhs`` (an update with ``op``)."""

    lhs: Access
    op: Operator | None
    rhs: Expr

    def __str__(self):
        return f"{_show(self.lhs)[0]} {assign_spelling(self.op)} {_show(self.rhs)[0]}"

    def pretty(self) -> str:
        return str(self)

    def printed_parts(self) -> tuple[str, dict]:
        """See :meth:`Expr.printed_parts`."""
        return parts_record([show_parts(self)])

    @property
    def reduction_op(self) -> Operator:
        """The operator that implicit reductions use: ``+`` for ``=``, else the update's."""
        from ..algebra import lookup
        return self.op if self.op is not None else lookup("add")


def assign_spelling(op: Operator | None) -> str:
    """``=``, ``+=``, ``min=``, ... or ``<<op>>=``."""
    if op is None:
        return "="
    if not op.is_user and op.name in ASSIGN_SPELLINGS:
        return ASSIGN_SPELLINGS[op.name]
    return f"<<{op_reference(op)}>>="


def op_reference(op: Operator) -> str:
    """The name that refers to ``op`` in text (``choose(0)``, ``gcd``, ``bitand``)."""
    return str(op) if op.param is not NOVALUE and not op.is_user else op.name


def reduction_name(op: Operator) -> str:
    """How a reduction by ``op`` is spelled: ``sum``, ``prod``, ``any``, ``all``, ``min``, ``gcd``..."""
    if not op.is_user and op.name in REDUCTION_NAMES:
        return REDUCTION_NAMES[op.name]
    return op_reference(op)


# -- printer ---------------------------------------------------------------------


def value_text(v) -> str:
    """A value as a literal prints it (a temporary's start value), ``?`` for no value.

    >>> value_text(np.float64(0.0)), value_text(NOVALUE)
    ('0.0', '?')
    """
    if v is NOVALUE:
        return "?"
    try:
        return str(Literal(v.item() if hasattr(v, "item") else v))
    except TypeError:
        return repr(v)


def _literal_text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, complex):   # (2.0j, as Python writes it; else its parts added: (1.0 + 2.0j))
        imag = f"{_literal_text(v.imag)}j" if np.isfinite(v.imag) else f"{_literal_text(v.imag)} * 1j"
        return imag if v.real == 0 and math.copysign(1.0, v.real) > 0 else f"({_literal_text(v.real)} + {imag})"
    return str(v)


def _show(e, spans: bool = False) -> tuple[str, int, tuple]:
    """(text, precedence, parts) of a node; with ``spans``, ``parts`` says where each access and
    reduction head is printed in the text: ``((start, end, about, role), ...)`` (see
    :func:`show_parts`), else it is ``()`` (printing a step's program should stay cheap).

    Without ``spans``, kept in the node (nodes are immutable): the lowerings print the same
    accesses and operators again and again, as keys, in notes and in messages, and each shape
    operator's premise printed its whole operand again."""
    if spans:
        return _shown(e, spans)
    kept = getattr(e, "__dict__", None)
    if kept is None:
        return _shown(e, spans)
    hit = kept.get("_shown")
    if hit is None:
        hit = kept["_shown"] = _shown(e, spans)   # (a frozen dataclass's __setattr__ refuses: its dict takes it)
    return hit


def _shown(e, spans: bool) -> tuple[str, int, tuple]:
    if isinstance(e, Access):
        text = f"{e.tensor}[{', '.join(str(i) for i in e.indices)}]"
        return text, _ATOM, ((0, len(text), access_about(e, "read"), "access"),) if spans else ()
    if isinstance(e, IndexValue):
        return e.index.name, _ATOM, ()
    if isinstance(e, Literal):
        text = _literal_text(e.value)
        return text, (UNARY_PRECEDENCE if text.startswith("-") else _ATOM), ()
    if isinstance(e, Reduce):
        head = f"{reduction_name(e.op)}[{', '.join(i.name for i in e.indices)}]"
        text, _, inner = _show(e.body, spans)
        own = ((0, len(head), {"indices": [i.name for i in e.indices]}, "reduce"),) if spans else ()
        return f"{head}({text})", _ATOM, own + _moved(inner, len(head) + 1)
    if isinstance(e, Call):
        op = e.op
        if not op.is_user and op.name in BINARY_PRECEDENCE:
            p = BINARY_PRECEDENCE[op.name]
            (lt, lp, ls), (rt, rp, rs) = _show(e.args[0], spans), _show(e.args[1], spans)
            # left-associative; comparisons do not chain, so both sides need parentheses
            if lp < p or (lp == p and op.name in COMPARISONS):
                lt, ls = f"({lt})", _moved(ls, 1)
            if rp <= p:
                rt, rs = f"({rt})", _moved(rs, 1)
            left = f"{lt} {op.symbol} "
            return left + rt, p, (ls + _moved(rs, len(left))) if spans else ()
        if not op.is_user and op.name in PREFIX:
            t, p, ts = _show(e.args[0], spans)
            # "-3" would read back as the literal -3, not neg(3)
            if p < UNARY_PRECEDENCE or isinstance(e.args[0], Literal):
                t, ts = f"({t})", _moved(ts, 1)
            return PREFIX[op.name] + t, UNARY_PRECEDENCE, _moved(ts, len(PREFIX[op.name]))
        if not spans:
            return f"{op_reference(op)}({', '.join(_show(a)[0] for a in e.args)})", _ATOM, ()
        args = [x for k, a in enumerate(e.args) for x in ([", "] if k else []) + [_show(a, spans)[::2]]]
        return _with_prec(cat_parts(f"{op_reference(op)}(", *args, ")"), _ATOM)
    if hasattr(e, "notation_text"):   # a shape operator (compiler.notation.shape)
        shown = []

        def show(c):
            shown.append(_show(c, spans)[::2])
            return shown[-1][0]
        text = e.notation_text(show)
        # (its operands are printed in order, each once: their parts move to where each landed)
        parts, at = [], 0
        for t, inner in shown:
            k = text.find(t, at) if inner else -1
            if k >= 0:
                parts.extend((a + k, b + k, about, role) for a, b, about, role in inner)
                at = k + len(t)
        return text, _ATOM, tuple(parts)
    raise TypeError(f"not an index-notation node: {e!r}")


def cat_parts(*pieces) -> tuple[str, tuple]:
    """The text of ``pieces`` (texts, or ``(text, parts)`` pairs) joined, with their parts moved
    to where each lands in it.

    >>> cat_parts("y = ", ("A[i]", ((0, 4, {}, "access"),)))
    ('y = A[i]', ((4, 8, {}, 'access'),))
    """
    texts, parts, at = [], [], 0
    for piece in pieces:
        text, inner = (piece, ()) if isinstance(piece, str) else piece
        if inner:
            parts.extend((a + at, b + at, about, role) for a, b, about, role in inner)
        texts.append(text)
        at += len(text)
    return "".join(texts), tuple(parts)


def _moved(parts: tuple, by: int) -> tuple:
    """``parts`` moved ``by`` columns right (their text printed after ``by`` others)."""
    return tuple([(a + by, b + by, about, role) for a, b, about, role in parts]) if parts else ()


def _with_prec(joined: tuple[str, tuple], prec: int) -> tuple[str, int, tuple]:
    return joined[0], prec, joined[1]


def access_about(a: Access, mode: str) -> dict:
    """What the explorer links an access by: its tensor, its index variables and whether it is
    read or written (``update``).

    >>> access_about(Access("A", (2, "j")), "read")
    {'tensor': 'A', 'indices': ['j'], 'mode': 'read'}
    """
    return {"tensor": a.tensor, "indices": [i.name for i in a.loop_indices], "mode": mode}


def show_parts(e, mode: str = "read") -> tuple[str, tuple]:
    """The text of index-notation node ``e`` (as ``str`` prints it) and where each of its parts is
    printed: ``((start, end, about, role), ...)``, an access (``role`` ``access``, ``about`` from
    :func:`access_about`; an assignment's left side is written, ``update``) and a reduction's head
    (``reduce``, ``about`` its indices). Anything else prints as ``str`` does, with no parts. The
    explorer marks a step's text from them instead of finding its accesses by pattern.

    >>> from compiler.notation import parse
    >>> text, parts = show_parts(parse("y[i] = A[i, j] * x[j]"))
    >>> [(text[a:b], about, role) for a, b, about, role in parts][:2]
    [('y[i]', {'tensor': 'y', 'indices': ['i'], 'mode': 'update'}, 'access'), ('sum[j]', {'indices': ['j']}, 'reduce')]
    """
    if isinstance(e, Assign):
        lhs, _, ls = _show(e.lhs, True)
        rhs, _, rs = _show(e.rhs, True)
        return cat_parts((lhs, tuple((a, b, {**about, "mode": "update"}, role) for a, b, about, role in ls)),
                    f" {assign_spelling(e.op)} ", (rhs, rs))
    if isinstance(e, Expr):
        text, _, parts = _show(e, True)
        if mode != "read":
            parts = tuple((a, b, {**about, "mode": mode}, role) if role == "access" else (a, b, about, role)
                          for a, b, about, role in parts)
        return text, parts
    return str(e), ()


def parts_record(lines) -> tuple[str, dict]:
    """Printed ``lines`` (``(text, parts)`` each) as a trace step records them: the text and
    ``{line: [[start, end, about, role]]}`` (lines 1-based, as strings, those with parts only).

    >>> parts_record([("forall i:", ((0, 8, {"index": "i"}, "loop"),)), ("  skip", ())])
    ('forall i:\\n  skip', {'1': [[0, 8, {'index': 'i'}, 'loop']]})
    """
    return "\n".join(t for t, _ in lines), {str(n): [list(p) for p in parts]
                                             for n, (_, parts) in enumerate(lines, 1) if parts}


# -- queries ---------------------------------------------------------------------


def walk(e) -> Iterator:
    """Every node of ``e`` in pre-order (an :class:`Assign` yields its lhs and rhs trees)."""
    if isinstance(e, Assign):
        yield e
        yield from walk(e.lhs)
        yield from walk(e.rhs)
        return
    yield e
    for c in e.children():
        yield from walk(c)


def accesses(e) -> list[Access]:
    """Every access in ``e``, left to right."""
    return [n for n in walk(e) if isinstance(n, Access)]


def free_indices(e) -> tuple[Index, ...]:
    """The indices of ``e`` not bound by a reduction inside it, by first appearance."""
    def visit(n) -> tuple:
        if isinstance(n, Access):
            return tuple(dict.fromkeys(n.loop_indices))
        if isinstance(n, IndexValue):
            return (n.index,)
        if isinstance(n, Reduce):
            return tuple(i for i in visit(n.body) if i not in n.indices)
        if isinstance(n, Assign):
            return tuple(dict.fromkeys(visit(n.lhs) + visit(n.rhs)))
        free = [visit(c) for c in n.children()]
        if hasattr(n, "free_of"):   # a shape operator binds the indices it consumes
            return n.free_of(free)
        return tuple(dict.fromkeys(i for f in free for i in f))

    return visit(e)


__all__ = ["Expr", "Index", "Access", "Literal", "IndexValue", "Call", "Reduce", "Assign", "walk", "accesses",
           "free_indices", "access_about", "cat_parts", "value_text", "show_parts", "parts_record", "assign_spelling", "reduction_name", "op_reference",
           "BINARY_PRECEDENCE", "UNARY_PRECEDENCE", "COMPARISONS", "PREFIX"]
