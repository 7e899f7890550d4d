"""The index-notation front end: text to an explicit :class:`~compiler.notation.ast.Assign`.

Grammar (lowest binding first; ``&``, ``|``, ``^`` bind tighter than comparisons, as in Python)::

    stmt     := lhs assign expr
    lhs      := NAME [ '[' [NAME {',' NAME}] ']' ]          (``s`` or ``s[]`` is 0-d)
    assign   := '=' | '+=' | '*=' | '|=' | '&=' | '^=' | 'min=' | 'max=' | '<<' opref '>>='
    opref    := NAME [ '(' (literal | NAME) ')' ]            (``choose(0)``, ``astype(int32)``)
    expr     := and {'or' and}
    and      := not {'and' not}
    not      := 'not' not | compare
    compare  := bitor [('<' | '<=' | '>' | '>=' | '==' | '!=') bitor]   (no chaining)
    bitor    := bitxor {'|' bitxor};  bitxor := bitand {'^' bitand};  bitand := shift {'&' shift}
    shift    := sum {('<<' | '>>') sum}
    sum      := term {('+' | '-') term};  term := unary {('*' | '/' | '//' | '%') unary}
    unary    := '-' unary | '!' unary | primary              (``-3`` is the literal -3)
    primary  := NUMBER | 'inf' | 'nan' | 'true' | 'false' | NAME '[' indices ']'
              | opref '(' expr {',' expr} ')'               (a call, or a reduction if unary)
              | opref '[' indices ']' '(' expr ')'           (explicit reduction)
              | '(' expr ')'

Reductions come out explicit (:class:`~compiler.notation.ast.Reduce` nodes):

* ``min[k](e)`` reduces exactly ``k``.
* A one-argument call of a reducible operator (``sum``, ``prod``, ``min``, ``max``,
  ``any``, ``all``, an associative user function) reduces the indices of its
  argument that are not output indices and do not occur outside the call (other
  than inside sibling reductions, which reduce their own copies).
* Whatever indices are still free on the right but absent on the left are
  reduced with the assignment's operator (``+`` for ``=`` and ``+=``). With ``+``,
  the reduction is pushed into each term of a top-level sum/difference
  (einsum semantics, TACO's ``makeReductionNotation``), so a term adds once per
  output coordinate, not once per reduced coordinate.

>>> print(parse("y[i] = A[i, j] * x[j] + d[i]"))
y[i] = sum[j](A[i, j] * x[j]) + d[i]
>>> print(parse("C[i, j] min= A[i, k] + B[k, j]"))
C[i, j] min= min[k](A[i, k] + B[k, j])
>>> print(parse("s = max(A[i, j])"))
s[] = max[i, j](A[i, j])
>>> parse("y[i] = A[i, j * x[j]")
Traceback (most recent call last):
...
compiler.errors.ParseError: unbalanced bracket: '[' is not closed (expected ',' or ']')
    y[i] = A[i, j * x[j]
                  ^
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import numpy as np

from ..algebra import OPERATORS, PARAMETRIC, Operator, UnknownOperatorError, known_names, lookup
from ..errors import ParseError, UsageError
from .ast import Access, Assign, Call, Expr, Index, IndexValue, Literal, Reduce, free_indices, walk
from .shape import SHAPE_OPERATORS, Broadcast, Collapse, Concat, Slice, Split
from .drawing import notation_artifact

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?j?)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<op>->|<<|>>=|>>|//|\+=|-=|\*=|/=|\|=|&=|\^=|==|!=|<=|>=|[<>=+\-*/%&|^!()\[\],:])
""", re.VERBOSE)

_COMPARE = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
_UPDATE = {"+=": "add", "*=": "mul", "|=": "bitor", "&=": "bitand", "^=": "bitxor"}
_CONSTANTS = {"true": True, "false": False, "inf": math.inf, "nan": math.nan}
_KEYWORDS = {"and", "or", "not"}
_INT64_MAX = np.iinfo(np.int64).max
_UINT64_MAX = np.iinfo(np.uint64).max


def parse_expr(text: str, functions: dict[str, Operator] | None = None) -> Expr:
    """Parse an index-notation *expression* (no assignment), as a schedule names a sub-expression.

    One-argument reducible calls become reductions as in :func:`parse`; no other index
    is reduced (there is no left-hand side to compare with).

    >>> print(parse_expr("C[i, j] + D[i, j]"))
    C[i, j] + D[i, j]
    """
    if not isinstance(text, str):
        raise UsageError(f"parse_expr() needs a string, not {type(text).__name__}")
    p = _Parser(text, functions or {})
    if p.tok.kind == "end":
        raise p.error("expected an expression")
    e = p.expr()
    if p.tok.kind != "end":
        raise p.error(f"unexpected {p.describe(p.tok)} after the end of the expression")
    return p.resolve_implicit(e)


@dataclass
class _Tok:
    kind: str  # "num", "name", "op", "end"
    text: str
    pos: int


class _Implicit(Expr):
    """A one-argument reducible call whose reduced indices are decided after parsing."""

    def __init__(self, op: Operator, arg: Expr, pos: int):
        self.op, self.arg, self.pos = op, arg, pos

    def children(self):
        return (self.arg,)

    def __str__(self):
        return f"{self.op.name}({self.arg})"


def _tokenize(text: str, shown: str) -> list[_Tok]:
    toks, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            what = "operator" if not text[pos].isalnum() else "character"
            raise ParseError(f"unknown {what} {text[pos]!r}", shown, pos)
        if m.lastgroup != "ws":
            toks.append(_Tok(m.lastgroup, m.group(), pos))
        pos = m.end()
    toks.append(_Tok("end", "", len(text)))
    return toks


@functools.lru_cache(maxsize=512)
def _parsed(text: str) -> Assign:
    """``text`` parsed with the builtin operators alone, kept (the AST is immutable): a test's oracle,
    the sequence interpreter and the lowering each parsed the same statement again."""
    return _Parser(text, {}).statement()


def parse(text: str, functions: dict[str, Operator] | None = None, trace=None) -> Assign:
    """Parse an index-notation statement into an :class:`Assign` with explicit reductions.

    ``functions`` maps names to user functions (:func:`compiler.user_functions.user_function`);
    they shadow builtins of the same name. With a :class:`~compiler.trace.Trace`, a
    ``parse`` step is recorded (with the error, if parsing fails). Every syntax error is a
    :class:`~compiler.errors.ParseError` whose message points a caret at the fault.

    >>> print(parse("y[i] += A[i, j] * x[j]"))
    y[i] += sum[j](A[i, j] * x[j])
    >>> print(parse("p[i] <<choose(0)>>= B[i, j] * -2"))
    p[i] <<choose(0)>>= choose(0)[j](B[i, j] * -2)
    """
    if not isinstance(text, str):
        raise UsageError(f"parse() needs a string, not {type(text).__name__}")
    try:
        program = _Parser(text, functions).statement() if functions else _parsed(text)
    except RecursionError:
        error = ParseError("the expression nests too deeply to parse (hundreds of parentheses or terms); split "
                           "it into several statements")
        if trace is not None:
            trace.record("parse", before=text, error=str(error))
        raise error from None
    except ParseError as e:
        if trace is not None:
            trace.record("parse", before=text, error=str(e))
        raise
    if trace is not None:
        trace.record("parse", before=text, after=program, artifacts=[notation_artifact(program)],
                     note="implicit reductions made explicit")
    return program


class _Parser:
    def __init__(self, text: str, functions: dict[str, Operator]):
        self.text = text
        self.shown = text.replace("\n", " ").replace("\t", " ")
        self.functions = dict(functions)
        for name, op in self.functions.items():
            if not isinstance(op, Operator):
                raise UsageError(f"functions[{name!r}] must be an Operator (see user_function), "
                                f"not {type(op).__name__}")
        self.toks = _tokenize(text, self.shown)
        self.k = 0
        self.outputs: tuple[Index, ...] = ()

    # -- helpers --------------------------------------------------------------

    @property
    def tok(self) -> _Tok:
        return self.toks[self.k]

    def peek(self, n=1) -> _Tok:
        return self.toks[min(self.k + n, len(self.toks) - 1)]

    def advance(self) -> _Tok:
        t = self.toks[self.k]
        self.k = min(self.k + 1, len(self.toks) - 1)
        return t

    def at(self, *texts) -> bool:
        return self.tok.kind in ("op", "name") and self.tok.text in texts

    def error(self, message: str, pos: int | _Tok | None = None):
        if pos is None:
            pos = self.tok
        if isinstance(pos, _Tok):
            pos = pos.pos
        return ParseError(message, self.shown, pos)

    def describe(self, t: _Tok) -> str:
        return "the end of the expression" if t.kind == "end" else repr(t.text)

    def expect(self, text: str, message: str):
        if not self.at(text):
            raise self.error(f"{message} (found {self.describe(self.tok)})")
        return self.advance()

    # -- statement ------------------------------------------------------------

    def statement(self) -> Assign:
        if self.tok.kind != "name" or self.tok.text in _KEYWORDS:
            raise self.error("expected the output tensor, as in y[i] = ...")
        name = self.advance()
        if self.at("["):
            indices = self.index_list(allow_empty=True)
        else:
            indices = ()
        seen = set()
        for t in indices:
            if t.text in seen:
                raise self.error(f"index {t.text} is repeated in the output {name.text}[...]; "
                                 f"an output index may appear only once", t)
            seen.add(t.text)
        lhs = Access(name.text, tuple(Index(t.text) for t in indices))
        self.outputs = lhs.indices
        self.index_values: list[_Tok] = []
        op_tok = self.tok
        op = self.assignment_operator()
        if self.tok.kind == "end":
            raise self.error("expected an expression after the assignment")
        rhs = self.expr()
        if self.tok.kind != "end":
            raise self.error(f"unexpected {self.describe(self.tok)} after the end of the expression")
        self.check_index_values(lhs, rhs)
        rhs = self.resolve_implicit(rhs)
        rhs = self.reduce_leftovers(rhs, op, op_tok)
        return Assign(lhs, op, rhs)

    def check_index_values(self, lhs: Access, rhs: Expr) -> None:
        """Refuse a bare name that indexes nothing: it would have no extent (a 0-d tensor is s[])."""
        known = set(lhs.indices) | {i for n in walk(rhs) if isinstance(n, Access) for i in n.loop_indices}
        known |= {i for n in walk(rhs) if isinstance(n, Reduce) for i in n.indices}
        for t in self.index_values:
            if Index(t.text) not in known:
                raise self.error(f"{t.text} is no index of the statement, so it has no value: write {t.text}[] "
                                 f"for a 0-d tensor, {t.text}[i, ...] for a tensor, or use an index of the "
                                 f"output or of an access as a value", t.pos + len(t.text))

    def assignment_operator(self) -> Operator | None:
        t = self.tok
        if self.at("="):
            self.advance()
            return None
        if t.kind == "op" and t.text in _UPDATE:
            self.advance()
            return OPERATORS[_UPDATE[t.text]]
        if self.at("-=", "/="):
            raise self.error(f"{t.text} is not supported: the operator is not associative; "
                             f"write {'+= -(...)' if t.text == '-=' else '*= 1 / (...)'} instead")
        if t.kind == "name" and self.peek().text == "=" and self.peek().pos == t.pos + len(t.text):
            if t.text in ("min", "max"):
                self.advance()
                self.advance()
                return OPERATORS[t.text]
            raise self.error(f"unknown update {t.text}=; write <<{t.text}>>= for other operators")
        if self.at("<<"):
            self.advance()
            op = self.op_reference()
            if op.arity != 2:
                raise self.error(f"{op.name} takes {op.arity} argument(s); an update needs a binary operator",
                                 t)
            self.expect(">>=", "expected '>>=' to close '<<'")
            return op
        if t.kind == "end":
            raise self.error("'=' is missing: expected an assignment such as y[i] = ...")
        raise self.error(f"'=' is missing: expected '=' or an update such as '+=' before {t.text!r}")

    def op_reference(self) -> Operator:
        """NAME [ '(' literal ')' ] naming an operator."""
        t = self.tok
        if t.kind not in ("name", "op") or t.kind == "end":
            raise self.error("expected an operator name")
        self.advance()
        name = t.text
        if name in self.functions:
            return self.functions[name]
        if name in PARAMETRIC:
            self.expect("(", f"{name} needs a parameter, as in {name}({'float32' if name == 'astype' else 0})")
            param_tok = self.tok
            if param_tok.kind == "name" and param_tok.text not in _CONSTANTS:   # (a dtype: astype(int32))
                param = param_tok.text
                self.advance()
            else:
                param = self.literal_value()
            self.expect(")", f"expected ')' after the parameter of {name}")
            try:
                return lookup(name, param)
            except UnknownOperatorError as e:
                raise self.error(str(e), param_tok) from None
        try:
            return lookup(name)
        except UnknownOperatorError:
            raise self.error(self.unknown_message("operator", name), t) from None

    def unknown_message(self, kind, name) -> str:
        import difflib
        known = sorted({n for n in known_names() if n.isidentifier() and n not in _KEYWORDS}
                       | set(self.functions))
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"unknown {kind} {name!r}{hint} (known: {', '.join(known)})"

    def literal_value(self):
        neg = False
        if self.at("-"):
            self.advance()
            neg = True
        t = self.tok
        if t.kind == "num":
            self.advance()
            v = self.number(t)
            if isinstance(v, int) and v > _INT64_MAX + neg:
                raise self.error(f"integer literal {t.text} does not fit in int64", t)
        elif t.kind == "name" and t.text in _CONSTANTS:
            self.advance()
            v = _CONSTANTS[t.text]
        else:
            raise self.error("expected a literal")
        return -v if neg else v

    def number(self, t: _Tok):
        if re.fullmatch(r"\d+", t.text):
            v = int(t.text)
            if v > _UINT64_MAX:
                raise self.error(f"integer literal {t.text} does not fit in uint64", t)
            return v
        if t.text.endswith("j"):   # (an imaginary literal, as Python's: 2j is complex128)
            return complex(0.0, float(t.text[:-1]))
        return float(t.text)

    def index_list(self, allow_empty: bool, allow_int: bool = False) -> list[_Tok]:
        open_tok = self.expect("[", "expected '['")
        out = []
        if self.at("]"):
            if not allow_empty:
                raise self.error("empty index list: a tensor on the right side needs at least one index",
                                 open_tok)
            self.advance()
            return out
        while True:
            if self.tok.kind == "num" and re.fullmatch(r"\d+", self.tok.text):
                if not allow_int:
                    raise self.error(f"a constant index ({self.tok.text}) is read on the right side only, as in "
                                     f"A[2, j]; here an index name is needed")
                if int(self.tok.text) > _INT64_MAX:
                    raise self.error(f"constant index {self.tok.text} does not fit in int64")
                out.append(self.advance())
            elif self.tok.kind != "name" or self.tok.text in _KEYWORDS:
                if self.tok.kind == "end":
                    raise self.error("unbalanced bracket: '[' is not closed (expected an index name)")
                raise self.error(f"expected an index name, found {self.describe(self.tok)}")
            else:
                out.append(self.advance())
            if self.at(","):
                self.advance()
                continue
            if self.at("]"):
                self.advance()
                return out
            raise self.error("unbalanced bracket: '[' is not closed (expected ',' or ']')")

    # -- expressions ----------------------------------------------------------

    def binary(self, sub, table: dict[str, str]):
        left = sub()
        while self.tok.kind in ("op", "name") and self.tok.text in table:
            op = OPERATORS[table[self.advance().text]]
            left = Call(op, (left, sub()))
        return left

    def expr(self) -> Expr:
        return self.binary(self.and_expr, {"or": "or"})

    def and_expr(self):
        return self.binary(self.not_expr, {"and": "and"})

    def not_expr(self):
        if self.at("not") and self.tok.kind == "name":
            self.advance()
            return Call(OPERATORS["not"], (self.not_expr(),))
        return self.compare()

    def compare(self):
        left = self.bitor()
        if self.tok.kind == "op" and self.tok.text in _COMPARE:
            op = OPERATORS[_COMPARE[self.advance().text]]
            left = Call(op, (left, self.bitor()))
            if self.tok.kind == "op" and self.tok.text in _COMPARE:
                raise self.error("comparisons cannot be chained; use parentheses or 'and'")
        return left

    def bitor(self):
        return self.binary(self.bitxor, {"|": "bitor"})

    def bitxor(self):
        return self.binary(self.bitand, {"^": "bitxor"})

    def bitand(self):
        return self.binary(self.shift, {"&": "bitand"})

    def shift(self):
        return self.binary(self.additive, {"<<": "lshift", ">>": "rshift"})

    def additive(self):
        return self.binary(self.term, {"+": "add", "-": "sub"})

    def term(self):
        return self.binary(self.unary, {"*": "mul", "/": "div", "//": "floordiv", "%": "mod"})

    def unary(self):
        if self.at("-") and self.tok.kind == "op":
            self.advance()
            t = self.tok
            # a minus sign directly on a number is part of the literal
            if t.kind == "num":
                self.advance()
                v = self.number(t)
                if isinstance(v, int) and v > _INT64_MAX + 1:
                    raise self.error(f"integer literal -{t.text} does not fit in int64", t)
                return Literal(-v)
            if t.kind == "name" and t.text == "inf" and self.peek().text not in ("[", "("):
                self.advance()
                return Literal(-math.inf)
            return Call(OPERATORS["neg"], (self.unary(),))
        if self.at("!") and self.tok.kind == "op":
            self.advance()
            return Call(OPERATORS["not"], (self.unary(),))
        return self.primary()

    def primary(self) -> Expr:
        t = self.tok
        if t.kind == "num":
            self.advance()
            v = self.number(t)
            # (past int64 a literal is uint64, as numpy types it: an all-ones 64-bit mask)
            return Literal(v)
        if self.at("("):
            self.advance()
            if self.at(")"):
                raise self.error("expected an expression inside the parentheses")
            e = self.expr()
            if not self.at(")"):
                raise self.error(f"unbalanced parenthesis: '(' at column {t.pos} is not closed "
                                 f"(found {self.describe(self.tok)})")
            self.advance()
            return e
        if t.kind == "name" and t.text not in _KEYWORDS:
            nxt = self.peek()
            if t.text in _CONSTANTS and nxt.text not in ("[", "("):
                self.advance()
                return Literal(_CONSTANTS[t.text])
            if nxt.text == "(" and t.text in SHAPE_OPERATORS and t.text not in self.functions:
                return self.shape_operator()
            if nxt.text == "(":
                return self.call()
            if nxt.text == "[":
                return self.access_or_reduction()
            # an index as a value (TACO #514); a name that is no index of the statement is refused
            # once the whole statement is read (check_index_values)
            self.advance()
            self.index_values.append(t)
            return IndexValue(Index(t.text))
        if t.kind == "end":
            raise self.error("expected an expression, found the end of the input")
        raise self.error(f"unexpected {self.describe(t)}: expected a tensor, literal, call or '('")

    def resolve_function(self, name_tok: _Tok) -> Operator:
        name = name_tok.text
        if name in self.functions:
            self.advance()
            return self.functions[name]
        if name in PARAMETRIC:
            return self.op_reference()
        try:
            op = lookup(name)
        except UnknownOperatorError:
            raise self.error(self.unknown_message("function", name), name_tok) from None
        self.advance()
        return op

    def call(self) -> Expr:
        name_tok = self.tok
        op = self.resolve_function(name_tok)
        if self.at("["):  # choose(0)[j](...)
            return self.explicit_reduction(op, name_tok)
        open_tok = self.expect("(", f"expected '(' after {name_tok.text}")
        args = []
        if self.at(")"):
            raise self.error(f"{name_tok.text}() needs at least one argument")
        while True:
            args.append(self.expr())
            if self.at(","):
                self.advance()
                continue
            if self.at(")"):
                self.advance()
                break
            raise self.error(f"unbalanced parenthesis: '(' at column {open_tok.pos} is not closed "
                             f"(expected ',' or ')', found {self.describe(self.tok)})")
        n = len(args)
        if n == op.arity:
            return Call(op, tuple(args))
        if n == 1 and op.reducible:
            return _Implicit(op, args[0], name_tok.pos)
        if n > 2 and op.reducible:
            e = args[0]
            for a in args[1:]:
                e = Call(op, (e, a))
            return e
        extra = " (it is not associative, so it cannot reduce)" if n == 1 and op.arity == 2 else ""
        raise self.error(f"{name_tok.text} takes {op.arity} argument(s), got {n}{extra}", name_tok)

    def access_or_reduction(self) -> Expr:
        name_tok = self.tok
        # a reduction is NAME [...] ( ... ); find the matching ']' to decide
        j = self.k + 1
        while self.toks[j].kind != "end" and self.toks[j].text != "]":
            j += 1
        if self.toks[j].text == "]" and self.toks[j + 1].text == "(":
            op = self.resolve_function(name_tok)
            return self.explicit_reduction(op, name_tok)
        self.advance()
        indices = self.index_list(allow_empty=True, allow_int=True)   # (s[]: a 0-d tensor, read once)
        return Access(name_tok.text, tuple(int(t.text) if t.kind == "num" else Index(t.text) for t in indices))

    def explicit_reduction(self, op: Operator, name_tok: _Tok) -> Expr:
        open_tok = self.tok
        idx_toks = self.index_list(allow_empty=True)
        if not idx_toks:
            raise self.error(f"a reduction {name_tok.text}[...](...) needs at least one index", open_tok)
        if not op.reducible:
            raise self.error(f"{name_tok.text} cannot reduce: it is not a binary associative operator",
                             name_tok)
        names = []
        for t in idx_toks:
            if t.text in names:
                raise self.error(f"index {t.text} is listed twice in the reduction", t)
            if Index(t.text) in self.outputs:
                raise self.error(f"index {t.text} is an output index and cannot be reduced", t)
            names.append(t.text)
        paren = self.expect("(", f"expected '(' after {name_tok.text}[...]")
        if self.at(")"):
            raise self.error("expected an expression inside the parentheses")
        body = self.expr()
        if self.at(","):
            raise self.error(f"a reduction {name_tok.text}[...](...) takes one expression, the body it reduces; "
                             f"combine two with an operator inside it")
        if not self.at(")"):
            raise self.error(f"unbalanced parenthesis: '(' at column {paren.pos} is not closed "
                             f"(found {self.describe(self.tok)})")
        self.advance()
        free = set(free_indices(body))
        for t in idx_toks:
            if Index(t.text) not in free:
                raise self.error(f"index {t.text} does not appear in the body of the reduction", t)
        return Reduce(op, tuple(Index(n) for n in names), body)

    # -- shape operators --------------------------------------------------------

    def name(self, what: str) -> _Tok:
        if self.tok.kind != "name" or self.tok.text in _KEYWORDS:
            raise self.error(f"expected {what}, found {self.describe(self.tok)}")
        return self.advance()

    def sized_name(self, what: str):
        """NAME [':' INT]: an index and, optionally, its extent."""
        t = self.name(what)
        if not self.at(":"):
            return Index(t.text), None
        self.advance()
        n = self.tok
        if n.kind != "num" or not re.fullmatch(r"\d+", n.text):
            raise self.error(f"expected the extent of {t.text} after ':', a non-negative integer")
        self.advance()
        return Index(t.text), int(n.text)

    def int_value(self, what: str) -> int:
        neg = self.at("-") and self.tok.kind == "op"
        if neg:
            self.advance()
        t = self.tok
        if t.kind != "num" or not re.fullmatch(r"\d+", t.text):
            raise self.error(f"expected {what}, an integer")
        self.advance()
        return -int(t.text) if neg else int(t.text)

    def shape_operator(self) -> Expr:
        """collapse(e, (i, j) -> k) | split(e, k -> (i[:n], j[:n])) | concat((e, ...), (j, ...) -> l)
        | slice(e, j -> k, (start, stop[, step])) | broadcast(l[:n], e)"""
        kw = self.advance()
        what = kw.text
        usage = {"collapse": "collapse(A[i, j], (i, j) -> k)", "split": "split(b[k], k -> (i, j:4))",
                 "concat": "concat((B[i, j], C[i, k]), (j, k) -> l)",
                 "slice": "slice(A[j], j -> k, (1, 9, 2))", "broadcast": "broadcast(l, x[i])"}[what]
        open_tok = self.expect("(", f"expected '(' after {what}")

        def sep(text):
            if not self.at(text):
                raise self.error(f"expected {text!r} in {what}(...), written as {usage} "
                                 f"(found {self.describe(self.tok)})")
            self.advance()

        if what == "collapse":
            operand = self.expr()
            sep(",")
            sep("(")
            i = self.name("the major index")
            sep(",")
            j = self.name("the minor index")
            sep(")")
            sep("->")
            k = self.name("the collapsed index")
            node = Collapse(operand, (i.text, j.text), k.text)
        elif what == "split":
            operand = self.expr()
            sep(",")
            k = self.name("the index to split")
            sep("->")
            sep("(")
            (i, si) = self.sized_name("the major index")
            sep(",")
            (j, sj) = self.sized_name("the minor index")
            sep(")")
            node = Split(operand, k.text, (i, j), (si, sj))
        elif what == "concat":
            sep("(")
            operands = [self.expr()]
            while self.at(","):
                self.advance()
                operands.append(self.expr())
            sep(")")
            sep(",")
            sep("(")
            idx = [self.name("an index of an operand")]
            while self.at(","):
                self.advance()
                idx.append(self.name("an index of an operand"))
            sep(")")
            sep("->")
            l = self.name("the concatenated index")
            if len(operands) < 2 or len(operands) != len(idx):
                raise self.error(f"concat takes two or more operands and one index of each, got "
                                 f"{len(operands)} operand(s) and {len(idx)} index(es)", kw)
            node = Concat(tuple(operands), tuple(t.text for t in idx), l.text)
        elif what == "slice":
            operand = self.expr()
            sep(",")
            j = self.name("the index to slice")
            sep("->")
            k = self.name("the sliced index")
            sep(",")
            sep("(")
            start = self.int_value("the start")
            sep(",")
            stop = self.int_value("the stop")
            step = 1
            if self.at(","):
                self.advance()
                step_tok = self.tok
                step = self.int_value("the step")
                if step == 0:
                    raise self.error("a slice step cannot be 0", step_tok)
            sep(")")
            node = Slice(operand, j.text, k.text, start, stop, step)
        else:
            l, size = self.sized_name("the new index")
            sep(",")
            node = Broadcast(l, self.expr(), size)
        if not self.at(")"):
            raise self.error(f"unbalanced parenthesis: '(' at column {open_tok.pos} is not closed "
                             f"(found {self.describe(self.tok)}); write {usage}")
        self.advance()
        return node

    # -- reductions -----------------------------------------------------------

    def resolve_implicit(self, rhs: Expr) -> Expr:
        """Turn one-argument reducible calls into Reduce nodes (see the module docstring)."""
        occurrences = []  # (index, enclosing scope nodes, binder node or None)

        def collect(n, anc):
            if isinstance(n, Access):
                for i in n.indices:
                    binder = next((a for a in reversed(anc) if isinstance(a, Reduce) and i in a.indices), None)
                    occurrences.append((i, anc, binder))
            elif isinstance(n, (Reduce, _Implicit)):
                for c in n.children():
                    collect(c, anc + (n,))
            else:
                for c in n.children():
                    collect(c, anc)

        collect(rhs, ())
        outputs = set(self.outputs)

        def elsewhere(r, anc) -> set:
            anc_ids = {id(a) for a in anc}
            used = set()
            for i, occ_anc, binder in occurrences:
                ids = [id(a) for a in occ_anc]
                if id(r) in ids:
                    continue
                if any(isinstance(a, _Implicit) and id(a) not in anc_ids for a in occ_anc):
                    continue
                if binder is not None and id(binder) not in anc_ids:
                    continue
                used.add(i)
            return used

        def rebuild(n, anc):
            if isinstance(n, _Implicit):
                arg = rebuild(n.arg, anc + (n,))
                bound_above = {i for a in anc if isinstance(a, Reduce) for i in a.indices}
                # (the indices a shape operator around it consumes are not reduced: collapse needs them)
                bound_above |= {i for a in anc if hasattr(a, "consumed")
                                for k in range(len(a.children())) for i in a.consumed(k)}
                skip = outputs | elsewhere(n, anc) | bound_above
                red = tuple(i for i in free_indices(arg) if i not in skip)
                return Reduce(n.op, red, arg) if red else arg
            if isinstance(n, Reduce):
                return Reduce(n.op, n.indices, rebuild(n.body, anc + (n,)))
            if isinstance(n, Call):
                return Call(n.op, tuple(rebuild(a, anc) for a in n.args))
            if hasattr(n, "with_children"):   # a shape operator
                return n.with_children([rebuild(c, anc + (n,)) for c in n.children()])
            return n

        return rebuild(rhs, ())

    def reduce_leftovers(self, rhs: Expr, op: Operator | None, op_tok: _Tok) -> Expr:
        """Reduce indices free on the right but absent on the left with the assignment's operator."""
        outputs = set(self.outputs)
        leftover = [i for i in free_indices(rhs) if i not in outputs]
        if not leftover:
            return rhs
        rop = op if op is not None else OPERATORS["add"]
        if not rop.reducible:
            names = ", ".join(i.name for i in leftover)
            raise self.error(f"index {names} must be reduced with the update operator {rop.name}, "
                             f"which is not associative; reduce explicitly, e.g. sum[{names}](...)", op_tok)

        def wrap(e):
            red = tuple(i for i in free_indices(e) if i not in outputs)
            return Reduce(rop, red, e) if red else e

        if rop.name == "add" and not rop.is_user:
            def push(e):
                if isinstance(e, Call) and not e.op.is_user and e.op.name in ("add", "sub"):
                    return Call(e.op, tuple(push(a) for a in e.args))
                return wrap(e)
            return push(rhs)
        return wrap(rhs)


__all__ = ["parse"]
