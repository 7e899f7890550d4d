"""The nodes of a lazy array expression: small immutable records with their shape, dtype and fill.

Each node knows its result's ``shape``, ``dtype`` and ``fill`` (the value of the entries a sparse
result does not store) when it is built, so errors come at the operator that causes them, not at
compute time. Nodes compare by identity (a graph may hold the same Tensor twice).

>>> import numpy as np
>>> from compiler.tensor import Tensor
>>> a = Leaf(Tensor.from_numpy(np.array([1.0, 0.0]), "sparse_vector"))
>>> m = Map(lookup("add"), (a, Scalar(1.0, np.dtype("float64"))))
>>> m.shape, m.dtype.name, m.fill
((2,), 'float64', 1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..algebra import Operator, lookup   # (lookup: for the doctests)
from ..levels.level import exact_key
from ..tensor import Tensor
from .shapeops import fill_source


def fill_of(op: Operator, args) -> tuple[np.dtype, Any]:
    """The dtype and value of ``op`` applied to the fills of ``args`` (numpy's promotion).

    >>> from compiler.interop import to_tensor
    >>> x = Leaf(to_tensor(np.ones(2, dtype=np.int32), "x"))
    >>> fill_of(lookup("add"), (x, Scalar(0.5, np.dtype("float64"))))
    (dtype('float64'), 0.5)
    """
    # (kept per operator and the arguments' dtypes and fills: an expression built in a loop asks it again for
    # each node, and numpy's scalars cost 10 us)
    def make():
        values = [np.asarray(a.fill, dtype=a.dtype) for a in args]
        with np.errstate(all="ignore"):
            out = np.asarray(op(*values))
        return out.dtype, out[()].item()
    return _kept(op, ("map", *((a.dtype, exact_key(a.fill)) for a in args)), make)


def _kept(op: Operator, key: tuple, make):
    """``make()``, a pure function of ``op`` and what ``key`` holds, kept (the operator with it: an id another
    operator took later is told apart); made afresh where ``key`` holds something no key can."""
    try:
        found = _FILLS.get((id(op), key))
    except TypeError:   # (a fill no key holds)
        return make()
    if found is not None and found[0] is op:
        return found[1]
    made = make()
    if len(_FILLS) >= 2048:
        _FILLS.clear()
    _FILLS[id(op), key] = (op, made)
    return made


#: (id(op), what else the answer depends on) -> (op, answer): :func:`fill_of`'s and a reduction's fill (:func:`_kept`)
_FILLS: dict = {}


def all_true(n: int, name: str) -> Tensor:
    """A dense vector of ``n`` trues, fill True, named ``name``: the factor the notation multiplies by for an output axis no
    operand has (``x * true`` is ``x``, NaN and -0.0 included). One is made per extent and name and kept, read-only, so a
    kept call (:mod:`compiler.array.attempts`) tells it from a value by identity (:func:`is_all_true`).

    >>> t = all_true(3, "one_i")
    >>> t is all_true(3, "one_i"), t.to_numpy().tolist(), is_all_true(t), t.vals.flags.writeable
    (True, [True, True, True], True, False)
    """
    made = _ALL_TRUE.get((n, name))
    if made is None:
        if len(_ALL_TRUE) >= 256:
            _ALL_TRUE.clear()
        made = _ALL_TRUE[n, name] = Tensor.from_numpy(np.ones(n, dtype=bool), "dense", fill=True, name=name)
        made.vals.flags.writeable = False
    return made


def is_all_true(t: Tensor) -> bool:
    """Whether ``t`` is a vector :func:`all_true` made (and keeps)."""
    return len(t.shape) == 1 and _ALL_TRUE.get((t.shape[0], t.name)) is t


#: (extent, name) -> :func:`all_true`'s vector
_ALL_TRUE: dict = {}


@dataclass(frozen=True, eq=False)
class Node:
    """Base: ``shape``, ``dtype`` and ``fill`` are set by each subclass."""

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def children(self) -> tuple:
        return ()


@dataclass(frozen=True, eq=False)
class Leaf(Node):
    """A stored tensor; ``origin`` says how a function whose result depends on its operand's values
    (``argmax``, ``sort``, ...) computed it before the expression around it (the trace's
    ``materialize`` step shows it), None for a tensor the user gave. ``recheck``, for a tensor over
    the buffers of a scipy or pydata array its owner may write in place: a function that checks them
    again (:func:`compiler.recheck.revalidator`), which computing the expression runs first."""

    tensor: Tensor
    origin: str | None = None
    recheck: Any = None

    @property
    def shape(self):
        return self.tensor.shape

    @property
    def dtype(self):
        return self.tensor.dtype

    @property
    def fill(self):
        return self.tensor.fill


@dataclass(frozen=True, eq=False)
class Scalar(Node):
    """A Python scalar in an expression, typed as numpy 2 types it next to an array (weakly)."""

    value: Any
    dtype: np.dtype
    shape: tuple = ()

    @property
    def fill(self):
        return self.value


@dataclass(frozen=True, eq=False)
class Map(Node):
    """``op`` applied elementwise to ``args``, broadcast against each other as numpy does."""

    op: Operator
    args: tuple
    shape: tuple = field(init=False)
    dtype: np.dtype = field(init=False)
    fill: Any = field(init=False)

    def __post_init__(self):
        shapes = [a.shape for a in self.args]
        # (numpy's broadcast_shapes costs 5 us; operands of one shape, as most are, need none)
        same = all(s == shapes[0] for s in shapes[1:])
        object.__setattr__(self, "shape", shapes[0] if same else np.broadcast_shapes(*shapes))
        dt, f = fill_of(self.op, self.args)
        object.__setattr__(self, "dtype", dt)
        object.__setattr__(self, "fill", f)

    def children(self):
        return self.args


#: closed forms of a reduction of n copies of the fill (a floating-point product's is not one: below)
_REPEATED = {"add": lambda f, n: f * n, "mul": lambda f, n: f ** n}


def _reduced_fill(op: Operator, child_dtype, child_fill, dtype, count: int):
    """The reduction by ``op`` of ``count`` copies of ``child_fill`` (of ``child_dtype``), cast to ``dtype``
    first (kept, as :func:`fill_of`'s answers are)."""
    def make():
        f = np.asarray(child_fill, dtype=child_dtype).astype(dtype)[()]
        if count == 0:
            f = np.asarray(op.identity, dtype=dtype)[()]
        elif op.name == "mul" and dtype.kind in "fc":
            # (in numpy's order, Operator.reduce_fill: f ** 2 of f = 0.5 + inf j is -inf + inf j, where numpy's
            # product of [f, f] is nan + nan j)
            f = np.asarray(op.reduce_fill(f, count)).astype(dtype)[()]
        elif op.name in _REPEATED:
            with np.errstate(all="ignore"):
                f = np.asarray(_REPEATED[op.name](f, dtype.type(count) if dtype.kind != "b" else count)).astype(dtype)[()]
        return f.item()
    return _kept(op, ("reduce", child_dtype, exact_key(child_fill), dtype, count), make)


@dataclass(frozen=True, eq=False)
class Reduction(Node):
    """``op`` over the axes ``axes`` of ``child`` (kept as extent 1 with ``keepdims``), first cast
    to ``dtype`` (numpy's sum of an int32 or bool array is int64)."""

    op: Operator
    child: Node
    axes: tuple
    keepdims: bool
    dtype: np.dtype
    shape: tuple = field(init=False)
    fill: Any = field(init=False)

    def __post_init__(self):
        shape = tuple(1 if k in self.axes else n for k, n in enumerate(self.child.shape))
        if not self.keepdims:
            shape = tuple(n for k, n in enumerate(self.child.shape) if k not in self.axes)
        object.__setattr__(self, "shape", shape)
        count = math.prod(self.child.shape[k] for k in self.axes)
        object.__setattr__(self, "fill", _reduced_fill(self.op, self.child.dtype, self.child.fill, self.dtype, count))

    def children(self):
        return (self.child,)


class Rearranged(Node):
    """A node that only moves ``child``'s entries to other coordinates: its dtype and fill."""

    @property
    def dtype(self):
        return self.child.dtype

    @property
    def fill(self):
        return self.child.fill

    def children(self):
        return (self.child,)


@dataclass(frozen=True, eq=False)
class Permute(Rearranged):
    """``child`` with its axes reordered: axis ``k`` of the result is axis ``axes[k]`` of ``child``."""

    child: Node
    axes: tuple
    shape: tuple = field(init=False)

    def __post_init__(self):
        shape = self.child.shape
        object.__setattr__(self, "shape", tuple(shape[a] for a in self.axes))


@dataclass(frozen=True, eq=False)
class Broadcast(Rearranged):
    """``child`` placed in ``shape``: child axis ``k`` becomes axis ``axes[k]``, widened from extent 1
    to the new extent where they differ; the other axes are new (numpy's broadcast_to adds them in
    front, expand_dims anywhere)."""

    child: Node
    shape: tuple
    axes: tuple


@dataclass(frozen=True, eq=False)
class ShapeOp(Node):
    """An operator that moves entries between coordinates: reshape, concat, stack, slicing and
    integer indexing. The emitter of :mod:`compiler.array.fuse` makes each the notation's shape
    operator where one says it; otherwise (or when the strategy refuses them) it is computed on
    the stored entries of its operands (materialized) by the function of
    :mod:`compiler.array.shapeops` that ``kind`` names."""

    kind: str           # "reshape", "concat", "stack", "index"
    args: tuple
    params: tuple
    shape: tuple
    dtype: np.dtype = field(init=False)
    fill: Any = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "dtype", np.result_type(*(a.dtype for a in self.args)))
        lead = fill_source(self.args, self.params[0]) if self.kind == "concat" else self.args[0]
        object.__setattr__(self, "fill", np.asarray(lead.fill, dtype=self.dtype)[()].item())

    def children(self):
        return self.args


def describe(node: Node) -> str:
    """A short name of a node for the trace and messages: ``reshape (6,) -> (2, 3)``."""
    if isinstance(node, Leaf):
        return f"tensor {node.tensor.name or ''} of shape {node.shape}".replace("  ", " ")
    if isinstance(node, Scalar):
        return repr(node.value)
    if isinstance(node, Map):
        return f"{node.op.name} of shape {node.shape}"
    if isinstance(node, Reduction):
        return f"{node.op.name}-reduction over axes {node.axes} of {node.child.shape}"
    if isinstance(node, Permute):
        return f"permute_dims{node.axes}"
    if isinstance(node, Broadcast):
        return f"broadcast {node.child.shape} -> {node.shape}"
    if isinstance(node, ShapeOp):
        shapes = ", ".join(str(a.shape) for a in node.args)
        return f"{node.kind} {shapes} -> {node.shape}"
    return type(node).__name__


def rewritten(node: Node, rule) -> Node | None:
    """``node`` with each node that ``rule(n, visit)`` rewrites replaced by what it returns (``visit`` rewrites a node
    it makes, and on), the others rebuilt around their rewritten children; a node shared in ``node`` shared in the
    result. None where ``rule`` rewrote nothing.

    >>> from compiler.interop import to_tensor
    >>> a = Leaf(to_tensor(np.ones(2), "A"))
    >>> doubled = Map(lookup("add"), (a, a))
    >>> out = rewritten(doubled, lambda n, visit: Map(lookup("mul"), (visit(n.args[0]), Scalar(2.0, np.dtype(float))))
    ...                 if isinstance(n, Map) and n.op.name == "add" else None)
    >>> out.op.name, rewritten(a, lambda n, visit: None)
    ('mul', None)
    """
    done: dict = {}
    moved = []

    def visit(n: Node) -> Node:
        if id(n) in done:
            return done[id(n)][1]
        out = rule(n, visit)
        if out is not None:
            moved.append(n)
        elif isinstance(n, (Leaf, Scalar)):
            out = n
        elif isinstance(n, (Map, ShapeOp)):
            out = replace(n, args=tuple(visit(x) for x in n.args))
        else:
            out = replace(n, child=visit(n.child))     # (a reduction, a transpose, a broadcast)
        done[id(n)] = (n, out)      # (n kept alive: a node made here is not freed and its id reused)
        return out

    out = visit(node)
    return out if moved else None


__all__ = ["rewritten", "Node", "Leaf", "Scalar", "Map", "Reduction", "Rearranged", "Permute", "Broadcast", "ShapeOp", "describe",
           "fill_of"]
