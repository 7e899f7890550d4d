"""The embedded front end: loop programs written as ordinary Python functions.

Decorate a function with :func:`loop_program`. Its parameters name tensors; its body
is parsed (never run) with Python's :mod:`ast` module into the loop-program IR:

=================================  =================================================
Python                             loop program
=================================  =================================================
``for i in _:``                    ``for i = _`` (extent inferred from the tensors)
``for i in range(n)`` / ``(a, b)`` ``for i = 0:n`` / ``a:b`` (integer constants)
``if cond:`` (no ``else``)         a sieve
``t = expr`` (``t`` not a tensor)  ``let t = expr`` over the rest of the block
``y[...] = 0``                     ``y .= 0``: declare (reset) an output to a fill
``y[i] = e``, ``y[i] += e``        assignments (``*=``, ``|=``, ``&=``, ``^=`` too)
``y[i] <<= min, e``                ``y[i] <<min>>= e``: reduce with any operator
``s += e`` (``s`` a 0-d tensor)    ``s[] += e``
``A[i + 1]``, ``A[i + j]``,        offsets, Toeplitz and permissive (padded) reads;
``A[~i]``, ``coalesce(a, 0)``      ``coalesce`` gives the first non-missing argument
``A[2:5][i]``, ``A[1:, :][i, j]``  windows (numpy slices, then indices; a negative
``A[window(i, lo, hi)]``           bound counts from the end): ``i`` runs over
                                   ``0:hi-lo`` and reads ``A[lo + i]``; reads or writes
``swizzle(A, 1, 0)[i, j]``         a lazy transpose (``A.transpose(1, 0)``): ``A[j, i]``
``A.shape[m]``, ``len(A)``         the size of a mode (window bounds, expressions)
``min max abs sqrt exp log pow``   builtin operators; ``ifelse(c, a, b)``,
                                   ``a if c else b``; any :class:`~compiler.algebra.Operator`
                                   in scope (user functions) can be called or reduce
``sin cos tan floor ceil trunc``   numpy's functions of one argument (``sin cos tan``
                                   give ``float64`` for integers; the others keep them);
                                   also ``round`` (ties to even), ``asin ... atanh``,
                                   ``expm1 log1p log2 log10``, ``atan2 hypot copysign nextafter``
``a // b``, ``a % b``              numpy's floor division and remainder
``a << b``, ``a >> b``              numpy's integer shifts
=================================  =================================================

Errors name the line of the function in its file.

>>> @loop_program
... def spmv(y, A, x):
...     y[...] = 0
...     for i in _:
...         for j in _:
...             y[i] += A[i, j] * x[j]
>>> print(spmv)
y .= 0
for i = _
  for j = _
    y[i] += A[i, j] * x[j]
>>> spmv.tensors
('y', 'A', 'x')
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
from dataclasses import dataclass

from ..algebra import Operator, UnknownOperatorError, lookup
from ..imperative.ir import Const
from .errors import ProgramError
from .statement_trees import statement_trees
from .program import (MISSING, Access, Assign, Block, Call, Declare, Define, Extent, Index, Literal, Loop,
                      Sieve, Size, Swizzle, TensorRef, Variable, block)

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.BitAnd: "&", ast.BitOr: "|",
           ast.BitXor: "^", ast.Pow: "pow", ast.FloorDiv: "//", ast.Mod: "%",
           ast.LShift: "<<", ast.RShift: ">>"}
_CMPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_AUG = {ast.Add: "+", ast.Mult: "*", ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^", ast.Sub: "-"}
_FUNCS = ("min", "max", "abs", "sqrt", "exp", "log", "pow")


#: what :meth:`LoopProgram.lower` calls: :mod:`compiler.looplets.compile` installs its ``compile_program``
#: here when imported (the package's ``__init__`` imports it), so the language need not import the
#: compiler that reads its programs
_COMPILER: list = []


def install_compiler(compile_program) -> None:
    """Make :meth:`LoopProgram.lower` compile with ``compile_program`` (``compile`` calls this once)."""
    _COMPILER[:] = [compile_program]


def _all_slices(node) -> bool:
    """``y[:]`` or ``y[:, :]``: a whole-tensor declaration, like ``y[...]``."""
    elts = node.elts if isinstance(node, ast.Tuple) else [node]
    return bool(elts) and all(isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None
                              for e in elts)


@dataclass(frozen=True, eq=False)
class LoopProgram:
    """A parsed loop program: its tensors (the parameters), body and source."""

    name: str
    tensors: tuple
    body: object
    source: str = ""
    first_line: int = 1
    #: ``(name, format)`` of each temporary (a parameter with a default): a workspace the
    #: kernel allocates itself (``Allocate``), neither passed in nor returned
    temporaries: tuple = ()

    def __str__(self):
        return str(self.body)

    def pretty(self) -> str:
        return str(self)

    def statement_trees(self) -> dict:
        """``{line: nodes}``: each statement's expression tree, by its line (:mod:`.statement_trees`),
        whose nodes name the code they compute (:func:`compiler.notation.node_provenance.name_nodes`)."""
        return statement_trees(self.body)

    def tensor_ndims(self) -> dict:
        """The order of each tensor, from its accesses (for the runtime's format parsing)."""
        from .program import walk
        out = {}
        temps = {t for t, _ in self.temporaries}
        for n in walk(self.body):
            if isinstance(n, Access) and isinstance(n.tns, TensorRef) and n.tns.name not in temps:
                out.setdefault(n.tns.name, len(n.idxs))  # a swizzle has as many modes as its tensor
        return out

    def written(self) -> set:
        """The tensors the program writes (updates, or declares), its temporaries included.

        >>> sorted(loop_program(source="def k(y, x):\\n    for i in _:\\n        y[i] = x[i]\\n").written())
        ['y']
        """
        from .program import walk
        return {n.tns.name for n in walk(self.body) if isinstance(n, (Access, Declare)) and isinstance(n.tns, TensorRef)
                and (isinstance(n, Declare) or n.mode == "update")}

    def where(self, line: int) -> str:
        """Line ``line`` of the program as an error names it: ``line 4 of k: y[i] = x[i + 1]``."""
        lines = (self.source or "").splitlines()
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return f"line {line + self.first_line - 1} of {self.name}" + (f" ({text})" if text else "")

    def error(self, err: ProgramError) -> ProgramError:
        """``err`` with this program's name, file line and source line."""
        return err.with_source(self.source, self.name, self.first_line)

    def lower(self, **tensors):
        """Compile for the given tensors/formats; see :func:`compiler.looplets.compile_program`."""
        return _COMPILER[0](self, **tensors)


def loop_program(fn=None, *, source: str | None = None, name: str | None = None):
    """Parse a Python function (or ``source`` text of one) into a :class:`LoopProgram`.

    >>> p = loop_program(source="def k(s, A):\\n    for i in _:\\n        s += A[i] * 2\\n")
    >>> print(p)
    for i = _
      s[] += A[i] * 2
    """
    if fn is None and source is None:
        return lambda f: loop_program(f, name=name)
    env = {}
    first = 1
    if source is None:
        try:
            source = textwrap.dedent(inspect.getsource(fn))
        except (OSError, TypeError) as e:
            raise ProgramError(f"cannot read the source of {getattr(fn, '__name__', fn)!r}: {e}") from None
        first = fn.__code__.co_firstlineno
        env = dict(fn.__globals__)
        if fn.__closure__:
            for n, c in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    env[n] = c.cell_contents
                except ValueError:  # a name the enclosing function assigns later (e.g. `_`)
                    pass
    src = textwrap.dedent(source)
    tree = ast.parse(src)
    fdef = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if fdef is None:
        raise ProgramError("a loop program is a function definition (def name(tensors...): ...)")
    # decorators sit above the def: report lines of the def's own body relative to the source
    params = tuple(a.arg for a in fdef.args.args)
    # parameters with a default are temporaries (workspaces): the default is their format
    defaults = fdef.args.defaults
    temp_names = params[len(params) - len(defaults):] if defaults else ()
    temporaries = []
    given = list(getattr(fn, "__defaults__", None) or ()) if fn is not None else []
    for n_, (t, d) in enumerate(zip(temp_names, defaults)):
        if len(given) == len(defaults):
            temporaries.append((t, given[n_]))
            continue
        try:
            fmt = eval(compile(ast.Expression(d), "<default>", "eval"), dict(env))  # noqa: S307
        except Exception as e:  # noqa: BLE001
            raise ProgramError(f"line {d.lineno}: the default of {t} must be the format of a temporary "
                               f"(e.g. SparseByteMap(Element(0.0))): {e}") from None
        temporaries.append((t, fmt))
    parser = _Parser(params, env)
    try:
        body = parser.block(fdef.body)
    except ProgramError as e:
        raise e.with_source(src, name or fdef.name, first) from None
    real = tuple(p for p in params if p not in temp_names)
    return LoopProgram(name or fdef.name, real, body, src, first, tuple(temporaries))


class _Parser:
    def __init__(self, tensors, env):
        self.tensors = set(tensors)
        self.env = env
        self.indices: list[str] = []
        self.locals: list[str] = []

    def fail(self, node, msg):
        raise ProgramError(msg, getattr(node, "lineno", 0))

    # -- statements
    def block(self, stmts):
        out = []
        for k, s in enumerate(stmts):
            if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                continue  # docstring
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                    and s.targets[0].id not in self.tensors:
                var = s.targets[0].id
                val = self.expr(s.value)
                self.locals.append(var)
                try:
                    rest = self.block(stmts[k + 1:])
                finally:
                    self.locals.pop()
                out.append(Define(Variable(var), val, rest, line=s.lineno))
                return block(*out) if out else Block(())
            out.append(self.stmt(s))
        return block(*out) if out else Block(())

    def stmt(self, s):
        if isinstance(s, ast.Pass):
            return Block(())
        if isinstance(s, ast.For):
            if s.orelse:
                self.fail(s, "for ... else is not supported in loop programs")
            if not isinstance(s.target, ast.Name):
                self.fail(s, "a loop binds one index: write `for i in _:`")
            i = s.target.id
            ext = self.extent(s.iter)
            self.indices.append(i)
            try:
                body = self.block(s.body)
            finally:
                self.indices.pop()
            return Loop(Index(i), ext, body, line=s.lineno)
        if isinstance(s, ast.If):
            if s.orelse:
                self.fail(s, "loop programs have no else (Finch's `if` is a sieve); write a second `if` "
                             "with the negated condition")
            return Sieve(self.expr(s.test), self.block(s.body), line=s.lineno)
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                self.fail(s, "assign one target at a time")
            t = s.targets[0]
            if isinstance(t, ast.Subscript) and (isinstance(t.slice, ast.Constant) and t.slice.value is Ellipsis
                                                 or _all_slices(t.slice)):
                name = self.tensor_name(t.value)
                return Declare(TensorRef(name), self.expr(s.value), line=s.lineno)
            return Assign(self.target(t), None, self.expr(s.value), line=s.lineno, column=s.col_offset)
        if isinstance(s, ast.AugAssign):
            lhs = self.target(s.target)
            if isinstance(s.op, ast.LShift):
                if not (isinstance(s.value, ast.Tuple) and len(s.value.elts) == 2):
                    self.fail(s, "a reduction with an operator is written `y[i] <<= op, value` (e.g. `<<= min, d`)")
                op = self.operator(s.value.elts[0])
                return Assign(lhs, op, self.expr(s.value.elts[1]), line=s.lineno, column=s.col_offset)
            sym = _AUG.get(type(s.op))
            if sym is None:
                self.fail(s, f"unsupported update {type(s.op).__name__}=; use `<<= op, value`")
            return Assign(lhs, lookup(sym), self.expr(s.value), line=s.lineno, column=s.col_offset)
        if isinstance(s, ast.Expr):
            self.fail(s, "a statement of a loop program must be a loop, an if, an assignment or a definition")
        self.fail(s, f"{type(s).__name__} statements are not supported in loop programs")

    def extent(self, it):
        if isinstance(it, ast.Name) and it.id == "_":
            return None
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
                and 1 <= len(it.args) <= 2:
            vals = [self.const_int(a) for a in it.args]
            lo, hi = (0, vals[0]) if len(vals) == 1 else vals
            return Extent(Const(lo, "int64"), Const(hi, "int64"))
        self.fail(it, "loop over `_` (inferred) or range(n) / range(a, b) with integer constants")

    def const_int(self, a, what="range bounds must be integer constants"):
        if isinstance(a, ast.Constant) and isinstance(a.value, int) and not isinstance(a.value, bool):
            return a.value
        if isinstance(a, ast.Name) and isinstance(self.env.get(a.id), int) and a.id not in self.indices:
            return self.env[a.id]
        if isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub):
            return -self.const_int(a.operand, what)
        self.fail(a, what)

    def tensor_name(self, node):
        if not isinstance(node, ast.Name) or node.id not in self.tensors:
            self.fail(node, f"{ast.unparse(node)} is not a tensor parameter of the program")
        return node.id

    def target(self, t):
        if isinstance(t, ast.Name):
            if t.id in self.tensors:
                return Access(TensorRef(t.id), (), "update", line=t.lineno)
            self.fail(t, f"{t.id} is not a tensor; locals are defined once (`{t.id} = ...`) and not updated")
        if isinstance(t, ast.Subscript):
            return self.access(t, "update")
        self.fail(t, f"cannot assign to {ast.unparse(t)}")

    def access(self, node, mode="read"):
        """``A[idx...]``, ``swizzle(A, ...)[idx...]`` or a slice then indices, ``A[2:5, :][i, j]``."""
        line = node.lineno
        if isinstance(node.value, ast.Subscript) and not self.is_size(node.value):
            sliced = node.value
            tns = self.tensor_of(sliced.value)
            idxs = self.indices_of(node.slice)
            return Access(tns, self.windows(tns, sliced.slice, idxs, node), mode, line=line)
        tns = self.tensor_of(node.value)
        if isinstance(node.slice, ast.Tuple) and not node.slice.elts:
            return Access(tns, (), mode, line=line)
        return Access(tns, self.indices_of(node.slice), mode, line=line)

    def tensor_of(self, node):
        """A tensor parameter, or a swizzle of one (``swizzle(swizzle(A, p), q)`` composes)."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "swizzle":
            if not node.args:
                self.fail(node, "swizzle(A, *axes) takes a tensor and a permutation of its modes")
            inner = self.tensor_of(node.args[0])
            axes = []
            for a in node.args[1:]:
                v = self.const_int(a, "the axes of swizzle(A, *axes) must be integer constants")
                axes.append(v)
            if sorted(axes) != list(range(len(axes))):
                self.fail(node, f"{ast.unparse(node)}: the axes must be a permutation of "
                                f"0..{len(axes) - 1} (each mode once), like numpy's A.transpose(axes)")
            if isinstance(inner, Swizzle):
                if len(inner.axes) != len(axes):
                    self.fail(node, f"{ast.unparse(node)}: {len(axes)} axes for a swizzle of "
                                    f"{len(inner.axes)} modes")
                axes = [inner.axes[a] for a in axes]  # A.transpose(p).transpose(q) = A.transpose(p[q])
            return Swizzle(inner.name, tuple(axes))
        return TensorRef(self.tensor_name(node))

    def windows(self, tns, sl, idxs, node):
        """The indices of ``tns[sl][idxs]``: each slice ``lo:hi`` consumes the next index as
        ``window(i, lo, hi)`` (``:`` the index itself); modes after the slices take the
        remaining indices, as in numpy."""
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        out, k = [], 0
        for e in elts:
            if not isinstance(e, ast.Slice):
                # a fixed coordinate before a windowed mode is not lowered by the looplet
                # strategy yet (a bound index followed by a modified one)
                self.fail(e, f"{ast.unparse(node)}: every entry of a window slice is lo:hi or ':'; "
                             f"index a fixed coordinate directly (A[{ast.unparse(e)}, j])")
            if e.step is not None:
                self.fail(e, "a window is a slice lo:hi without a step")
            if k >= len(idxs):
                self.fail(node, f"{ast.unparse(node)}: each slice needs an index after it "
                                f"(e.g. A[2:5][i])")
            x = idxs[k]
            k += 1
            if e.lower is None and e.upper is None:
                out.append(x)
                continue
            mode = len(out)
            if isinstance(tns, Swizzle):
                mode = tns.axes[mode] if mode < len(tns.axes) else mode
            size = Size(None, "int64", tns.name, mode)
            lo = Literal(0) if e.lower is None else self.slice_bound(e.lower, size)
            hi = size if e.upper is None else self.slice_bound(e.upper, size)
            out.append(Call("window", (x, lo, hi)))
        return tuple(out) + tuple(idxs[k:])

    def slice_bound(self, node, size):
        """A slice bound; a negative integer counts from the end, as in numpy (``1:-1``)."""
        b = self.expr(node)
        if isinstance(b, Literal) and isinstance(b.value, int) and b.value < 0:
            return Call(lookup("-"), (size, Literal(-b.value)))
        return b

    def is_size(self, node) -> bool:
        """``A.shape[m]``."""
        return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
            and node.value.attr == "shape"

    def size_of(self, node):
        """``A.shape[m]``, ``len(A)`` or ``size(A, m)``: a :class:`Size`."""
        if self.is_size(node):
            name = self.tensor_name(node.value.value)
            return Size(None, "int64", name, self.const_int(node.slice, "A.shape[m] takes an integer mode"))
        args = node.args
        if node.func.id == "len" and len(args) == 1:
            return Size(None, "int64", self.tensor_name(args[0]), 0)
        if node.func.id == "size" and len(args) == 2:
            return Size(None, "int64", self.tensor_name(args[0]),
                        self.const_int(args[1], "size(A, m) takes an integer mode"))
        self.fail(node, "write the size of a mode as A.shape[m], size(A, m) or len(A)")

    def indices_of(self, sl):
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        for e in elts:
            if isinstance(e, ast.Slice):
                self.fail(e, "slices are not indices in loop programs; write `y[...] = 0` (or `y[:] = 0`) "
                             "to declare an output, loop over an index to read or update its elements, "
                             "and index a slice to read a window of a tensor (A[2:5][i])")
        return tuple(self.expr(e, in_index=True) for e in elts)

    def operator(self, node):
        if isinstance(node, ast.Name):
            if node.id in self.env and isinstance(self.env[node.id], Operator):
                return self.env[node.id]
            try:
                return lookup(node.id)
            except UnknownOperatorError as e:
                self.fail(node, str(e))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                return lookup(node.value)
            except UnknownOperatorError as e:
                self.fail(node, str(e))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "choose":
            return lookup("choose", *[self.literal_value(a) for a in node.args])
        self.fail(node, f"{ast.unparse(node)} is not an operator")

    def literal_value(self, a):
        e = self.expr(a)
        if not isinstance(e, Literal):
            self.fail(a, "expected a constant")
        return e.value

    # -- expressions
    def expr(self, e, in_index=False):
        line = getattr(e, "lineno", 0)
        if isinstance(e, ast.Constant):
            if isinstance(e.value, (bool, int, float)):
                return Literal(e.value)
            self.fail(e, f"unsupported constant {e.value!r}")
        if isinstance(e, ast.Name):
            n = e.id
            if n in self.indices:
                return Index(n)
            if n in self.locals:
                return Variable(n)
            if n in self.tensors:
                return Access(TensorRef(n), (), line=line)
            if n in ("missing",):
                return Literal(MISSING)
            if n in ("inf", "Inf"):
                return Literal(math.inf)
            if n in ("True", "False"):
                return Literal(n == "True")
            v = self.env.get(n)
            if isinstance(v, (bool, int, float)):
                return Literal(v)
            self.fail(e, f"unknown name {n!r}: not a loop index, a local, a tensor or a constant")
        if isinstance(e, ast.Subscript):
            if self.is_size(e):
                return self.size_of(e)
            return self.access(e)
        if isinstance(e, ast.BinOp):
            sym = _BINOPS.get(type(e.op))
            if sym is None:
                self.fail(e, f"unsupported operator {type(e.op).__name__}")
            return Call(lookup(sym), (self.expr(e.left, in_index), self.expr(e.right, in_index)))
        if isinstance(e, ast.UnaryOp):
            x = self.expr(e.operand, in_index)
            if isinstance(e.op, ast.USub):
                if isinstance(x, Literal) and not isinstance(x.value, bool):
                    return Literal(-x.value)
                return Call(lookup("neg"), (x,))
            if isinstance(e.op, ast.Not):
                return Call(lookup("not"), (x,))
            if isinstance(e.op, ast.Invert):
                if not in_index:
                    self.fail(e, "~ marks a permissive index and is only allowed inside A[...]")
                return Call("permit", (x,))
            if isinstance(e.op, ast.UAdd):
                return x
        if isinstance(e, ast.BoolOp):
            op = lookup("and" if isinstance(e.op, ast.And) else "or")
            out = self.expr(e.values[0])
            for v in e.values[1:]:
                out = Call(op, (out, self.expr(v)))
            return out
        if isinstance(e, ast.Compare):
            parts = []
            left = self.expr(e.left, in_index)
            for op, right in zip(e.ops, e.comparators):
                r = self.expr(right, in_index)
                sym = _CMPS.get(type(op))
                if sym is None:
                    self.fail(e, f"unsupported comparison {type(op).__name__}")
                parts.append(Call(lookup(sym), (left, r)))
                left = r
            out = parts[0]
            for p in parts[1:]:
                out = Call(lookup("and"), (out, p))
            return out
        if isinstance(e, ast.IfExp):
            return Call("ifelse", (self.expr(e.test), self.expr(e.body), self.expr(e.orelse)))
        if isinstance(e, ast.Call):
            if not isinstance(e.func, ast.Name):
                self.fail(e, f"cannot call {ast.unparse(e.func)}")
            f = e.func.id
            args = tuple(self.expr(a, in_index) for a in e.args)
            if f == "coalesce":
                return Call("coalesce", args)
            if f in ("len", "size") and f not in self.env:
                return self.size_of(e)
            if f == "window":
                if not in_index or len(args) != 3:
                    self.fail(e, "window(i, lo, hi) is a window of one index inside A[...]: i runs over "
                                 "0:hi-lo and reads A[lo + i]")
                return Call("window", args)
            if f in ("gallop", "walk", "follow"):
                if not in_index or len(args) != 1:
                    self.fail(e, f"{f}(i) is a protocol annotation of one index inside A[...]")
                return Call(f, args)
            if f == "ifelse":
                if len(args) != 3:
                    self.fail(e, "ifelse(cond, a, b) takes three arguments")
                return Call("ifelse", args)
            if isinstance(self.env.get(f), Operator):
                op = self.env[f]
            else:
                try:
                    op = lookup(f)
                except UnknownOperatorError as err:
                    self.fail(e, str(err))
            if op.arity != len(args):
                if op.arity == 2 and len(args) > 2 and op.associative:
                    out = args[0]
                    for a in args[1:]:
                        out = Call(op, (out, a))
                    return out
                self.fail(e, f"{f} takes {op.arity} argument(s), got {len(args)}")
            return Call(op, args)
        self.fail(e, f"unsupported expression {ast.unparse(e)}")
