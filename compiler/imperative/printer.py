"""A readable, indented pseudo-C rendering of the imperative IR.

The printer shows dtypes by their numpy names and parameters with their
intents; expression syntax and precedence are C's, and the C emitter reuses
:class:`ExprFormatter` so both agree on parentheses.

>>> from compiler.imperative.ir import *
>>> i, x = Var("i"), Var("x")
>>> print(pretty(If(i < 3, [Assign(x, 1)], If(i < 5, [Assign(x, 2)], [Assign(x, (i + 1) * 2)]))))
if (i < 3) {
    x = 1;
} else if (i < 5) {
    x = 2;
} else {
    x = (i + 1) * 2;
}
"""

from __future__ import annotations

import math

from .guard import CheckCoordinate
from .ir import (Allocate, Tagged, Assign, BinOp, Block, Break, Buffer, BufferArg, Call, Cast, Comment, CompoundAssign, Const, Pragma,
                 Declare, Expr, For, Function, Grow, Growable, Helper, If, Load, OutScalar, Prefetch, Scalar,
                 Select, Stmt, Store, UnOp, Var, View, While, install_printer)

INDENT = "    "

#: C operator precedence (higher binds tighter)
PRECEDENCE = {"||": 4, "&&": 5, "|": 6, "^": 7, "&": 8, "==": 9, "!=": 9,
              "<": 10, "<=": 10, ">": 10, ">=": 10, "<<": 11, ">>": 11,
              "+": 12, "-": 12, "*": 13, "/": 13, "%": 13}
_SELECT = 3
_UNARY = 15
_ATOM = 16
# Operators whose mixing compilers warn about (and readers misread): parenthesize them.
_CLARIFY = {"&", "|", "^", "<<", ">>", "&&"}


class ExprFormatter:
    """Formats expressions with minimal but clear parentheses. Subclasses change leaves.

    ``special_floats`` spells NaN and the infinities (the C emitter uses C's macros).
    """

    special_floats = {"nan": "nan", "inf": "inf", "-inf": "-inf"}

    def const(self, c: Const) -> str:
        v = c.value
        if c.dtype == "bool":
            return "true" if v else "false"
        if isinstance(v, float):
            if math.isnan(v):
                return self.special_floats["nan"]
            if math.isinf(v):
                return self.special_floats["inf" if v > 0 else "-inf"]
            return self.float_literal(v, c.dtype)
        if isinstance(v, complex):
            return self.complex_literal(v, c.dtype)
        return self.int_literal(v, c.dtype)

    def complex_literal(self, v: complex, dtype: str) -> str:
        """A complex constant as ``(re + imj)``, numpy's spelling; the C emitter spells it for C."""
        return repr(v)

    def float_literal(self, v: float, dtype: str) -> str:
        return repr(v)

    def int_literal(self, v: int, dtype: str) -> str:
        return str(v)

    def load(self, e: Load) -> str:
        return f"{e.buffer}[{self.expr(e.index)}]"

    def type_name(self, dtype: str) -> str:
        return dtype

    def call(self, e: Call) -> str:
        return f"{e.function}({', '.join(self.expr(a) for a in e.args)})"

    def prec(self, e: Expr) -> int:
        if isinstance(e, BinOp):
            return PRECEDENCE[e.op]
        if isinstance(e, Select):
            return _SELECT
        if isinstance(e, (UnOp, Cast)):
            return _UNARY
        if isinstance(e, Const) and not isinstance(e.value, bool) and (
                self.const(e).startswith("-") or not isinstance(e.value, complex) and e.value < 0):
            return _UNARY
        return _ATOM

    def expr(self, e: Expr, min_prec: int = 0) -> str:
        text = self._expr(e)
        return f"({text})" if self.prec(e) < min_prec else text

    def _expr(self, e: Expr) -> str:
        if isinstance(e, Var):
            return e.name
        if isinstance(e, Const):
            return self.const(e)
        if isinstance(e, Load):
            return self.load(e)
        if isinstance(e, BinOp):
            p = PRECEDENCE[e.op]
            left = self._operand(e.left, e.op, p)
            right = self._operand(e.right, e.op, p + 1)
            return f"{left} {e.op} {right}"
        if isinstance(e, UnOp):
            inner = self.expr(e.operand, _UNARY)
            # "- -x" must not become "--x"
            sep = " " if e.op == "-" and inner.startswith("-") else ""
            return f"{e.op}{sep}{inner}"
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, BufferArg):
            return e.buffer
        if isinstance(e, Cast):
            return f"({self.type_name(e.dtype)}){self.expr(e.value, _UNARY)}"
        if isinstance(e, Select):
            return (f"{self.expr(e.cond, _SELECT + 1)} ? {self.expr(e.then, _SELECT + 1)}"
                    f" : {self.expr(e.otherwise, _SELECT)}")
        raise TypeError(f"not an expression: {e!r}")

    def _operand(self, child: Expr, parent_op: str, min_prec: int) -> str:
        if min_prec > PRECEDENCE[parent_op] and isinstance(child, (Const, UnOp)) \
                and self._expr(child).startswith("-"):
            return f"({self._expr(child)})"  # "a - (-1)" reads better than "a - -1"
        if isinstance(child, BinOp) and child.op != parent_op and (child.op in _CLARIFY or parent_op in _CLARIFY) \
                and PRECEDENCE[child.op] > PRECEDENCE[parent_op] and not (
                    parent_op in ("&&", "||") and PRECEDENCE[child.op] >= PRECEDENCE["=="]):
            return f"({self._expr(child)})"
        return self.expr(child, min_prec)


class Printer(ExprFormatter):
    """Pseudo-C printer of statements and functions."""

    def __init__(self):
        self.lines: list[str] = []
        #: tag -> indices into ``lines`` that the tagged statements produced
        self.tag_lines: dict[str, list[int]] = {}

    def emit(self, depth: int, text: str):
        self.lines.append(INDENT * depth + text)

    def stmt(self, s: Stmt, depth: int):
        if isinstance(s, Block):
            for t in s.body:
                self.stmt(t, depth)
        elif isinstance(s, Tagged):
            start = len(self.lines)
            self.stmt(s.body, depth)
            for tag in s.tags:
                self.tag_lines.setdefault(tag, []).extend(range(start, len(self.lines)))
        elif isinstance(s, Declare):
            init = "" if s.init is None else f" = {self.expr(s.init)}"
            self.emit(depth, f"{self.type_name(s.dtype)} {s.var.name}{init};")
        elif isinstance(s, Assign):
            self.emit(depth, f"{s.target.name} = {self.expr(s.value)};")
        elif isinstance(s, CompoundAssign):
            self.emit(depth, f"{s.target.name} {s.op}= {self.expr(s.value)};")
        elif isinstance(s, Store):
            op = s.op or ""
            self.emit(depth, f"{self.load(Load(s.buffer, s.index))} {op}= {self.expr(s.value)};")
        elif isinstance(s, For):
            self.emit(depth, self.for_header(s) + " {")
            self.stmt(s.body, depth + 1)
            self.emit(depth, "}")
        elif isinstance(s, While):
            self.emit(depth, f"while ({self.expr(s.cond)}) {{")
            self.stmt(s.body, depth + 1)
            self.emit(depth, "}")
        elif isinstance(s, If):
            self.if_chain(s, depth)
        elif isinstance(s, Break):
            self.emit(depth, "break;")
        elif isinstance(s, Comment):
            self.emit(depth, f"// {s.text}")
        elif isinstance(s, Pragma):
            self.emit(depth, f"#pragma {s.text}")
        elif isinstance(s, Prefetch):
            self.prefetch(s, depth)
        elif isinstance(s, Grow):
            self.grow(s, depth)
        elif isinstance(s, Allocate):
            self.allocate(s, depth)
        elif isinstance(s, View):
            self.view(s, depth)
        elif isinstance(s, CheckCoordinate):
            self.check_coordinate(s, depth)
        else:
            raise TypeError(f"not a statement: {s!r}")

    def check_coordinate(self, s: CheckCoordinate, depth: int):
        self.emit(depth, f"check 0 <= {self.expr(s.value, 10)} < {self.expr(s.extent, 10)};  // {s.what}")

    def prefetch(self, s: Prefetch, depth: int):
        self.emit(depth, f"prefetch {s.buffer}[{self.expr(s.index)}];")

    def view(self, s: View, depth: int):
        part = f"&{s.of}[{self.expr(s.offset)}]"
        self.emit(depth, f"{self.type_name(s.dtype)} {s.buffer}[{self.expr(s.length)}] = {part};")

    def for_header(self, s: For) -> str:
        v = s.var.name
        return f"for ({self.type_name(s.dtype)} {v} = {self.expr(s.start)}; {v} < {self.expr(s.stop, 10)}; {v}++)"

    def grow(self, s: Grow, depth: int):
        verb = "reserve" if s.hint else "grow"
        prep = "for" if s.hint else "to"
        first = " (first: empty until now)" if s.first else ""
        self.emit(depth, f"{verb} {s.buffer} {prep} {self.expr(s.needed)};{first}")

    def allocate(self, s: Allocate, depth: int):
        init = "" if s.init is None else f" = {{{self.expr(s.init)}, ...}}"
        shared = "  // one array for all threads" if s.shared else ""
        self.emit(depth, f"{self.type_name(s.dtype)} {s.buffer}[{self.expr(s.length)}]{init};{shared}")
        self.stmt(s.body, depth)
        if not s.stack:   # (a stack array ends with its scope)
            self.emit(depth, f"free({s.buffer});")

    def if_chain(self, s: If, depth: int):
        if s.cond == Const(True, "bool") and s.otherwise is None:
            self.emit(depth, "{")   # a block of its own: a scope for its names
            self.stmt(s.then, depth + 1)
            self.emit(depth, "}")
            return
        keyword = "if"
        while True:
            self.emit(depth, f"{keyword} ({self.expr(s.cond)}) {{")
            self.stmt(s.then, depth + 1)
            other = s.otherwise
            if other is None:
                self.emit(depth, "}")
                return
            if len(other.body) == 1 and isinstance(other.body[0], If):
                s, keyword = other.body[0], "} else if"
                continue
            self.emit(depth, "} else {")
            self.stmt(other, depth + 1)
            self.emit(depth, "}")
            return

    def param(self, p) -> str:
        if isinstance(p, Scalar):
            return f"{p.dtype} {p.name}"
        if isinstance(p, Buffer):
            return f"{p.intent} {p.dtype} {p.name}[]"
        if isinstance(p, Growable):
            return f"growable {p.dtype} {p.name}[{p.length}]"
        if isinstance(p, OutScalar):
            return f"out {p.dtype} {p.name} = {self.const(Const(p.init, p.dtype))}"
        raise TypeError(f"not a parameter: {p!r}")

    def function(self, fn: Function):
        for h in fn.helpers:
            self.emit(0, f"helper {h.name}:")
            for line in h.source.strip("\n").splitlines():
                self.emit(1, line)
        self.emit(0, f"kernel {fn.name}({', '.join(self.param(p) for p in fn.params)}) {{")
        self.stmt(fn.body, 1)
        self.emit(0, "}")


def pretty(node) -> str:
    """The pseudo-C text of an expression, statement, parameter or function."""
    p = Printer()
    if isinstance(node, Expr):
        return p.expr(node)
    if isinstance(node, Function):
        p.function(node)
    elif isinstance(node, Stmt):
        p.stmt(node, 0)
    elif isinstance(node, (Scalar, Buffer, Growable, OutScalar)):
        return p.param(node)
    elif isinstance(node, Helper):
        return node.source
    else:
        raise TypeError(f"cannot print {type(node).__name__}")
    return "\n".join(p.lines)


install_printer(pretty)
