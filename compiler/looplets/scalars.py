"""Scalars: 0-D tensors of loop programs (Finch §3.3.3): Scalar, SparseScalar, ShortCircuitScalar.

A 0-D tensor is written ``s`` in a loop program (Finch's ``s[]``): ``s[...] = 0`` declares
it, ``s += e`` / ``s <<= op, e`` reduce into it and ``s`` reads it. Give one as a kernel
output (``compile_program(k, s=Scalar(0.0), ...)``) or as a temporary (a parameter whose
default is its format: ``def k(y, x, p=ShortCircuitScalar(False))``); a temporary lives in
C locals only.

* :class:`Scalar`: a dense scalar that, unlike a ``let`` variable, supports reduction.
* :class:`SparseScalar`: a scalar with a dirty bit. A read lowers to
  ``Switch(dirty => value, else => fill)`` around the statement that reads it, so the
  clean branch is specialized on the (literal) fill and simplifies: ``y[i] += p * x[i]``
  with fill 0 does nothing when ``p`` was never written (notes: finch.md pitfall 17).
* :class:`ShortCircuitScalar`: when a reduction into it reaches the operator's
  annihilator, every stepper or lookup loop that reduces into it re-specializes: each
  iteration starts with the case split ``if isannihilator(op, p) { the rest of the loop
  without the reduction; break }`` (pitfall 16). It is a structural early exit: the
  other statements of the loop still run over the remaining iterations.

The formats are :class:`~compiler.format.Format` s of one :class:`~compiler.levels.Element`
that also name their kind:

>>> ShortCircuitScalar(0), Scalar(0.0).fill, SparseScalar(False).dtype
(ShortCircuitScalar(0), 0.0, dtype('bool'))
>>> Scalar(0.0) == SparseScalar(0.0)
False

A BFS pull step reduces the first frontier parent of each vertex and stops there
(``choose(-1)`` keeps the first value other than ``-1``; any such value annihilates it):

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.looplets import compile_program, loop_program
>>> @loop_program
... def first_parent(q, F, A, p=ShortCircuitScalar(-1)):
...     p[...] = -1
...     for j in _:
...         if F[j] and A[j]:
...             p <<= choose(-1), j
...     q += p
>>> F = Tensor.from_numpy(np.array([False, True, True, True]), "dense")
>>> A = Tensor.from_numpy(np.array([0, 0, 1.0, 1.0]), "sparse")
>>> k = compile_program(first_parent, q=Scalar(0), F=F, A=A)
>>> int(k(F=F, A=A))
2
>>> "break;" in k.c_source
True
"""

from __future__ import annotations


import numpy as np

from ..algebra import is_annihilator, reduction_annihilator
from ..dtypes import typed_scalar, value_dtype
from ..format import Format
from ..imperative.ir import (Assign as IAssign, BinOp, Break, Const, Declare, If, Load, Origin, Store, Tagged, UnOp,
                             Var)
from ..levels import Element
from ..trace import Artifact
from .errors import ProgramError
from .fibers import SubFiber, TensorInfo
from .looplets import Case, Fill, Run, Switch, nest_dot, nest_text
from .program import (Access, Assign, Block, Declare as PDeclare, Define, Literal, Loop, Sieve, TensorRef,
                      Value, postmap, walk)
from .simplify import same_literal

SCALAR_KINDS = ("Scalar", "SparseScalar", "ShortCircuitScalar")


class ScalarFormat(Format):
    """The format of a 0-D tensor of one of the kinds in :data:`SCALAR_KINDS`.

    ``fill`` is the value before any write (and the declared value of a SparseScalar);
    ``dtype`` defaults to the fill's (``0`` int64, ``0.0`` float64, ``False`` bool).
    """

    kind = "Scalar"

    def __init__(self, fill=0.0, dtype=None):
        dt = value_dtype(np.asarray(fill).dtype if dtype is None else dtype)
        super().__init__(Element(fill, dtype=dt))

    def key(self) -> tuple:
        return (self.kind, Format.key(self))

    def __eq__(self, other):
        return isinstance(other, Format) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def plain(self) -> Format:
        """The same storage as an ordinary 0-D format (what a kernel returns)."""
        return Format(self.root)

    def __str__(self):
        fill = self.fill.item() if isinstance(self.fill, np.generic) else self.fill
        default = value_dtype(np.asarray(fill).dtype)
        dt = "" if self.dtype == default else f", dtype={self.dtype.name!r}"
        return f"{self.kind}({fill!r}{dt})"

    __repr__ = __str__


class Scalar(ScalarFormat):
    """A dense 0-D tensor that supports reduction: ``s += A[i]``.

    >>> print(Scalar(0, dtype="int32"))
    Scalar(0, dtype='int32')
    """

    kind = "Scalar"


class SparseScalar(ScalarFormat):
    """A scalar with a dirty bit: a read is ``Switch(dirty => value, else => fill)``, so code
    downstream of a scalar never written is specialized on its fill (and usually vanishes).

    >>> SparseScalar(0.0).kind
    'SparseScalar'
    """

    kind = "SparseScalar"


class ShortCircuitScalar(ScalarFormat):
    """A scalar whose reductions stop their loops once it holds the operator's annihilator
    (``p <<= choose(-1), j`` stops at the first ``j``; ``p <<= any, x[i] < 0`` at the first
    negative). The operator must have one: ``+`` does not.

    >>> ShortCircuitScalar(False).fill
    False
    """

    kind = "ShortCircuitScalar"


def scalar_kind(info: TensorInfo) -> str | None:
    """The kind of a 0-D tensor (a plain 0-D format is a ``Scalar``), None for other tensors."""
    return info.scalar_kind


def _describe(info: TensorInfo) -> str:
    return f"{scalar_kind(info)} {info.name}"


# --------------------------------------------------------------------------- static checks


def check_scalars(prog, infos: dict) -> None:
    """Reject misuse of scalars before lowering, naming the line of the user's program.

    * a ShortCircuitScalar reduces with one operator, and it must have an annihilator
      that stops the reduction (``+`` has none); overwriting one (``p = e``) is refused,
      since it would make a value that looked final change again;
    * a SparseScalar is declared with its fill (its dirty bit assumes so);
    * a SparseScalar, or any 0-D temporary, is read only after a declaration in the same
      block or an enclosing one (a temporary lives in a C local of that block).
    """
    ops: dict[str, tuple] = {}
    for n in walk(prog):
        if isinstance(n, Assign) and isinstance(n.lhs.tns, TensorRef):
            info = infos.get(n.lhs.tns.name)
            if info is None or scalar_kind(info) != "ShortCircuitScalar":
                continue
            name = info.name
            if n.op is None:
                raise ProgramError(f"ShortCircuitScalar {name} is overwritten (`{name} = ...`); it short-circuits "
                                   f"reductions only: write `{name} <<= op, value` with an operator that has an "
                                   f"annihilator, or make {name} a Scalar", n.line)
            if reduction_annihilator(n.op) is None:
                raise ProgramError(f"ShortCircuitScalar {name} reduces with {n.op}, which has no annihilator: no "
                                   f"value of {name} makes further `{n.op}` reductions a no-op, so a loop could "
                                   f"never stop early. Use an operator with one (*, min, max, and, or, choose(z)) "
                                   f"or make {name} a Scalar", n.line)
            if name in ops and ops[name][0] != n.op:
                raise ProgramError(f"ShortCircuitScalar {name} reduces with {n.op} here but with {ops[name][0]} on "
                                   f"line {ops[name][1]}; it must reduce with one operator, whose annihilator "
                                   f"stops the loop", n.line)
            ops.setdefault(name, (n.op, n.line))
        if isinstance(n, PDeclare) and not n.implicit:
            info = infos.get(n.tns.name)
            if info is not None and scalar_kind(info) == "SparseScalar" and \
                    not (isinstance(n.init, Literal) and same_literal(n.init.value, _py(info.fill))):
                raise ProgramError(f"SparseScalar {info.name} must be declared with its fill value: write "
                                   f"`{info.name}[...] = {_py(info.fill)!r}` (when its dirty bit is clear it reads "
                                   f"as the fill)", n.line)
    _check_declared(prog, infos)


def _py(v):
    return v.item() if isinstance(v, np.generic) else v


def _needs_declaration(info) -> bool:
    kind = scalar_kind(info)
    return kind is not None and (kind == "SparseScalar" or info.role == "temporary")


def _check_declared(prog, infos: dict) -> None:
    """Every read of a scalar that needs a declaration comes after one, in its block or an
    enclosing block (loop, if and let bodies are blocks of their own)."""

    def visit(s, declared: set):
        if isinstance(s, Block):
            for t in s.stmts:
                visit(t, declared)
            return
        if isinstance(s, PDeclare):
            declared.add(s.tns.name)
            return
        if isinstance(s, Loop):
            visit(s.body, set(declared))
            return
        if isinstance(s, (Sieve, Define)):
            check(s.cond if isinstance(s, Sieve) else s.val, declared)
            visit(s.body, set(declared))
            return
        if isinstance(s, Assign):
            check(s.rhs, declared)
            for x in s.lhs.idxs:
                check(x, declared)

    def check(e, declared):
        for n in walk(e):
            if isinstance(n, Access) and isinstance(n.tns, TensorRef) and n.tns.name not in declared:
                info = infos.get(n.tns.name)
                if info is not None and _needs_declaration(info):
                    what = "its dirty bit does not exist yet" if scalar_kind(info) == "SparseScalar" else \
                        "a temporary has no value before it is declared"
                    raise ProgramError(f"{_describe(info)} is read before it is declared ({what}); declare it "
                                       f"first, in this block or an enclosing one: "
                                       f"`{info.name}[...] = {_py(info.fill)!r}`", n.line)

    visit(prog, set())


# --------------------------------------------------------------------------- lowering


def _scalar_access(n, name=None) -> bool:
    """Whether ``n`` is an access of a 0-D tensor (named ``name``) after binding."""
    return isinstance(n, Access) and isinstance(n.tns, SubFiber) and not n.tns.tensor.levels and not n.idxs \
        and (name is None or n.tns.tensor.name == name)


def _declares(node, name) -> bool:
    return any(isinstance(n, PDeclare) and n.tns.name == name for n in walk(node))


def remove_reductions(body, name):
    """``body`` without its reductions into scalar ``name`` (the loop after it short-circuits)."""
    return postmap(body, lambda n: Block(()) if isinstance(n, Assign) and n.op is not None
                   and _scalar_access(n.lhs, name) else None)


def _const(value, dtype):
    return Const(_py(typed_scalar(value, dtype)), dtype)


class ScalarLowering:
    """The lowering of 0-D tensors, for a :class:`~compiler.looplets.lowerers.Lowerer`.

    A declared scalar is a C local (``low.scalar_locals``), a SparseScalar also a dirty
    flag; outputs store their local at freeze, temporaries never touch memory.
    """

    def __init__(self, low):
        self.low = low
        self.dirty: dict[str, Var] = {}

    # -- life cycle
    def declare(self, info: TensorInfo, s: PDeclare, init) -> list:
        """Declare the C local(s) of ``info``: the value, and a SparseScalar's dirty flag."""
        low = self.low
        v = Var(low.fresh(info.name))
        low.scalar_locals[info.name] = v
        if s.implicit:  # an output keeps the value the runtime passed in; a temporary starts at its fill
            init = Load(info.array(None, "vals"), Const(0, "int64")) if info.role == "output" \
                else _const(info.fill, info.dtype)
        out = [Declare(v, info.dtype, init)]
        if scalar_kind(info) == "SparseScalar":
            d = Var(low.fresh(f"{info.name}_dirty"))
            self.dirty[info.name] = d
            out.append(Declare(d, "bool", Const(False, "bool")))
        return out

    def freeze(self, info: TensorInfo) -> list:
        """An output stores its local (later reads load it); a temporary keeps its locals."""
        if info.role != "output":
            return []
        v = self.low.scalar_locals.pop(info.name, None)
        self.dirty.pop(info.name, None)
        return [] if v is None else [Store(info.array(None, "vals"), Const(0, "int64"), v)]

    def after_write(self, info: TensorInfo) -> list:
        """A write into a SparseScalar sets its dirty flag."""
        d = self.dirty.get(info.name)
        return [] if d is None else [IAssign(d, Const(True, "bool"))]

    def read(self, f: SubFiber, line=0):
        """``(IR, dtype)`` of a read of a 0-D tensor: its local, else its stored value."""
        info = f.tensor
        v = self.low.scalar_locals.get(info.name)
        if v is not None:
            return v, info.dtype
        if _needs_declaration(info) and info.role == "temporary":
            raise ProgramError(f"{_describe(info)} is read before it is declared", line)
        from .fibers import leaf_value
        return self.low.expr(leaf_value(f), line)

    # -- SparseScalar reads: a Switch on the dirty bit around the statement
    def split_reads(self, s):
        """Lower ``s`` twice if it reads a declared SparseScalar that ``s`` does not declare:
        once with the value (dirty), once with the literal fill; None if it reads none."""
        for n in walk(s):
            if _scalar_access(n) and n.mode == "read" and n.tns.tensor.name in self.dirty \
                    and not _declares(s, n.tns.tensor.name):
                return self._split(s, n.tns.tensor)
        return None

    def _split(self, s, info):
        low = self.low
        name, v, d = info.name, low.scalar_locals[info.name], self.dirty[info.name]
        value, fill = Value(v, info.dtype), Literal(_py(info.fill), dtype=info.dtype)
        sw = Switch((Case(d, Run(value)), Case(Const(True, "bool"), Fill(fill))))

        def put(x):
            return postmap(s, lambda n: x if _scalar_access(n, name) and n.mode == "read" else None)
        tag = self._tag("Switch")
        self._record("lower:Switch", s, put(value),
                     f"SparseScalar {name}: {len(sw.cases)} case(s), dirty => {v}, else => fill "
                     f"{fill} [{tag}]",
                     [Artifact("looplet-nest", f"{name}[]", nest_text(sw), nest_dot(sw, name),
                               data={"tensor": name, "index": None, "mode": "read"})], tag=tag)
        dirty = low.lower(put(value))
        clean = low.lower(put(fill))
        if not dirty and not clean:
            return []
        what = f"Switch on the SparseScalar {name}: written ({v}) or its fill {fill}"
        origin = Origin("looplet", None, (name,), "Switch")
        if not dirty:
            return [Tagged(tag, [If(UnOp("!", d), clean)], what, origin)]
        return [Tagged(tag, [If(d, dirty, clean or None)], what, origin)]

    # -- ShortCircuitScalar: the case split at the top of each iteration
    def circuits(self, body) -> list:
        """The ShortCircuitScalars ``body`` reduces into (declared outside it), with their operators."""
        out, seen = [], set()
        for n in walk(body):
            if isinstance(n, Assign) and n.op is not None and _scalar_access(n.lhs):
                info = n.lhs.tns.tensor
                if scalar_kind(info) != "ShortCircuitScalar" or info.name in seen or _declares(body, info.name) \
                        or info.name not in self.low.scalar_locals:
                    continue
                seen.add(info.name)
                out.append((info, n.op))
        return out

    def annihilated(self, info, op):
        """The IR condition ``isannihilator(op, p)`` on ``p``'s local."""
        v = self.low.scalar_locals[info.name]
        rel, value = reduction_annihilator(op)
        dt = info.dtype
        if op.name != "choose":
            value = op.annihilator_for(dt)
        if dt == "bool":
            truth = bool(value) if rel == "==" else not bool(value)
            return v if truth else UnOp("!", v)
        return BinOp(rel, v, _const(value, dt))

    def short_circuit(self, i, body, remainder, line=0) -> list:
        """The case split that starts each iteration of a loop over ``i`` whose ``body``
        reduces into ShortCircuitScalars: ``if (annihilated) { remainder; break; }``.

        ``remainder(b)`` lowers the rest of the loop (from the current iteration) for the
        body ``b``, here ``body`` without the reductions into the scalar; with nothing
        else in the loop the split is just ``if (annihilated) break;``.
        """
        out = []
        for info, op in self.circuits(body):
            removed = self.low.simplify(remove_reductions(body, info.name))
            cond = self.annihilated(info, op)
            tag = self._tag("ShortCircuit")
            self._record("lower:ShortCircuit", body, removed,
                         f"{info.name} <<{op}>>= on {i.name}: if isannihilator({op}, {info.name}) the rest of "
                         f"the loop runs without the reduction, then break [{tag}]", tag=tag)
            rest = remainder(removed)
            out.append(Tagged(tag, [If(cond, [*rest, Break()])],
                              f"ShortCircuit on {i.name}: once {info.name} <<{op}>>= reaches an annihilator, "
                              "the rest of the loop without it",
                              Origin("looplet", i.name, (info.name,), "ShortCircuit")))
        return out

    # -- trace
    def _tag(self, style):
        self.low._tags += 1
        return f"looplet:{style}:{self.low._tags}"

    def _record(self, stage, before, after, note, artifacts=(), tag=None):
        low = self.low
        pending, low._pending_tag = low._pending_tag, None  # that tag belongs to the looplet being lowered
        low.record(stage, before, after, note=note, artifacts=list(artifacts), data={"tag": tag} if tag else None)
        low._pending_tag = pending


__all__ = ["SCALAR_KINDS", "ScalarFormat", "Scalar", "SparseScalar", "ShortCircuitScalar", "scalar_kind",
           "check_scalars", "remove_reductions", "ScalarLowering", "is_annihilator"]
