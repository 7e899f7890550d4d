"""The forms :func:`compiler.array.fuse.lower_node` tries for an array expression, what its trace says of
each (``retry`` steps), and the choice it made for a statement, kept: an expression computed again
(``(A @ x).compute()`` in a solver's loop) is emitted as a statement, and where that statement and its
tensors' formats, shapes, value facts and stored counts are those of a statement lowered before, the
kernel chosen then is taken again, with the refusals it met, without lowering the statement's forms
again (most of the front end's time per compute on small arrays).

>>> import numpy as np
>>> from compiler.array import asarray
>>> x = asarray(np.arange(3.0))
>>> ((x + 1) * 2).compute() is not None and len(CHOSEN) > 0
True
"""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

from ..format import Format
from ..levels.level import exact_key
from ..lowering import forget_with_cache
from ..tensor import Tensor
from ..trace import Trace
from .default_output import ORDER_WHY, has_shape_ops
from .nodes import Broadcast, Leaf, Map, Node, Permute, Reduction, Scalar, ShapeOp, is_all_true

__all__ = ["CHOSEN", "CHOSEN_KEPT", "Chosen", "FILL_ROWS_WHY", "PREPARED", "PREPARED_KEPT", "PUSHED_WHY", "Prepared",
           "REFINED_WHY", "RESHAPES_AS", "attempt_text", "called_key", "chosen", "chosen_key", "keep_chosen",
           "keep_prepared", "prepared", "structure"]

#: what the ``array`` step adds where the reshapes were refined because the statement read an input converted
REFINED_WHY = ("; each reshape of several axes to several as each axis split into the pieces both sides' axes "
               "divide, then collapsed (compiler.array.reshapes.refined_group): a split after a collapse read an "
               "input converted before each call")
#: why instead where the split after a collapse walked a part of another fill as a union of products
FILL_ROWS_WHY = "walked a part of another fill as a union of products (the trace's fill-rows step)"
# (the forms of lower_node's attempts that fuse shape operators other than as written, each as the trace says it)
RESHAPES_AS = {"whole": "each reshape a split of its whole ravel",
               "refined": "each reshape's axes split before they are collapsed",
               "pushed": "each reshape of an elementwise operator on its operands",
               "sliced": "each slice of a concatenation on the parts it takes"}
#: what the ``array`` step adds where a shape operator was moved onto its operands (by the attempt's name)
PUSHED_WHY = {"pushed": "; each reshape of an elementwise operator as the operator of its operands reshaped "
                        "(compiler.array.pushed_reshapes): the reshape of the operator was refused",
              "sliced": "; each slice of a concatenation or a stack along its axis as the concatenation of the "
                        "parts it takes, each sliced (compiler.array.pushed_slices): the slice of the "
                        "concatenation was refused"}


def attempt_text(node: Node, format, split: bool, default_sparse: bool, fuse, order) -> str:
    """What one attempt of :func:`lower_node` lowers (``format``: the one asked for), for the
    trace's ``retry`` steps.

    >>> import numpy as np
    >>> from compiler.interop import to_tensor
    >>> from compiler.array import build
    >>> A = Leaf(to_tensor(np.eye(2), "A").asformat("csr"))
    >>> attempt_text(build.reshape(A, (4,)), None, False, True, "whole", None)
    'the statement with its shape operators, each reshape a split of its whole ravel, into the default sparse vector'
    >>> attempt_text(build.reshape(A, (4,)), None, True, False, False, None).split(", ")
    ['its shape operators computed on their stored entries', 'reductions under an operator by their own kernels', 'into a dense result']
    """
    if fuse:
        text = "the statement with its shape operators"
        if fuse in RESHAPES_AS:
            text += f", {RESHAPES_AS[fuse]}"
    else:
        text = ("its shape operators computed on their stored entries" if has_shape_ops(node)
                else "the fused statement")
    if split:
        text += ", reductions under an operator by their own kernels"
    if order is not None:
        text += f", into {order.upper()} ({ORDER_WHY[order]})"
    elif format is None and not default_sparse:
        text += ", into a dense result"
    elif format is None and node.ndim and not all(n.tensor.format.is_dense for n in _leaves(node)):
        text += f", into the default {({1: 'sparse vector', 2: 'CSR'}).get(node.ndim, 'COO')}"
    return text


def _leaves(node: Node) -> list:
    if isinstance(node, Leaf):
        return [node]
    return [x for c in node.children() for x in _leaves(c)]


class Chosen(NamedTuple):
    """What :func:`~compiler.array.fuse.lower_node` chose for a statement: the index of the attempt that
    lowered, the forms refused before it (``(what, by, why, statement)`` each, as its ``retry`` steps say
    them) and the kernel (lower()'s, whose trace the expression's copy extends)."""

    attempt: int
    refused: tuple
    kernel: object


#: the statements whose choice is kept, the last used last (:func:`chosen_key` -> :class:`Chosen`)
CHOSEN: OrderedDict = OrderedDict()
#: how many choices are kept (each holds a kernel, which lower()'s cache holds too, and no tensor)
CHOSEN_KEPT = 256
forget_with_cache(CHOSEN.clear)   # (a test that clears lower()'s cache lowers afresh)


def chosen_key(node: Node, assign, tensors: dict, format, strategy, checked: bool) -> tuple | None:
    """The key of :data:`CHOSEN` for ``node`` emitted as ``assign`` over ``tensors`` (name -> Tensor), the
    result asked in ``format``: everything the choice depends on (the statement, what the lowering reads of
    each tensor: its format, shape, value facts and stored count, which choose the output's index dtype;
    the result's dtype and fill). None where it is not kept: an expression with shape operators (whose
    forms depend on more than its first statement) or a format given as something else than a name or a
    Format.

    >>> import numpy as np
    >>> from compiler.interop import to_tensor
    >>> from compiler.array import build
    >>> x = Leaf(to_tensor(np.arange(3.0), "x"))
    >>> from compiler.array.fuse import notation
    >>> assign, tensors, _ = notation(build.elementwise("add", x, x))
    >>> key = chosen_key(build.elementwise("add", x, x), assign, tensors, None, None, False)
    >>> str(key[0]), key[-1][:3]
    ('out[i] = x[i] + x[i]', ('x', Format(Dense(Element(0.0))), (3,)))
    """
    if has_shape_ops(node) or not (format is None or isinstance(format, (str, Format))):
        return None
    parts = [assign, format, strategy, checked, node.dtype, exact_key(node.fill)]
    for name, t in tensors.items():
        if t.__class__ is not Tensor:
            return None
        parts.append((name, t.format, t.shape, t.value_facts, t.nnz))
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:   # (a literal or a function the statement holds that is not hashable)
        return None
    return key


def chosen(key: tuple | None) -> Chosen | None:
    """The choice kept for ``key`` (made the last used), or None."""
    return None if key is None else _last_used(CHOSEN, key)


def _last_used(kept: OrderedDict, key):
    """What ``kept`` holds for ``key``, made its last used, or None."""
    found = kept.get(key)
    if found is not None:
        try:
            kept.move_to_end(key)
        except KeyError:   # (left out by another thread since)
            pass
    return found


def keep_chosen(key: tuple, chosen: Chosen) -> None:
    """Keep ``chosen`` for ``key``, the oldest choice left where :data:`CHOSEN_KEPT` are kept."""
    CHOSEN[key] = chosen
    if len(CHOSEN) > CHOSEN_KEPT:
        CHOSEN.popitem(last=False)


class Prepared(NamedTuple):
    """What :func:`~compiler.array.fuse.lower_node` gave for a call of an expression: the kernel (with no trace of
    its own: a call does not look at it) and its tensors by name, each the place of a leaf's tensor among the
    tensors :func:`structure` met (an int), or the :func:`~.nodes.all_true` vector the emitter made for a new axis."""

    kernel: object
    tensors: tuple

    def arguments(self, leaves: list) -> dict:
        """The kernel's tensors for an expression whose leaves hold ``leaves`` (:func:`structure`)."""
        return {name: leaves[t] if t.__class__ is int else t for name, t in self.tensors}


#: the calls of expressions, by :func:`called_key` -> :class:`Prepared`, the last used last: ``(A @ x).compute()``
#: built again in a solver's loop is neither emitted nor lowered again, shape operators and all (no leaf's
#: tensor is held: each call's are put in)
PREPARED: OrderedDict = OrderedDict()
PREPARED_KEPT = 256
forget_with_cache(PREPARED.clear)


class _Unkept(Exception):
    """An expression :func:`structure` keeps no key for."""


def structure(node: Node, format, strategy, checked: bool) -> tuple | None:
    """``(key, leaves)``: what the forms :func:`~compiler.array.fuse.lower_node` tries depend on of ``node``
    computed in ``format``, but its tensors' values (every node's operator, axes, parameters and dtype; each
    leaf's tensor's name, format, dtype, shape and fill, or which leaf before it holds the same tensor; which
    nodes are one node read twice), and the tensors of its leaves in the order met. None for an expression
    with a leaf computed before it (``sort``), or a format given as something else than a name or a Format.

    >>> import numpy as np
    >>> from compiler.interop import to_tensor
    >>> from compiler.array import build
    >>> x, y = (Leaf(to_tensor(np.arange(3.0), n)) for n in "xy")
    >>> key = lambda e: structure(e, None, None, False)[0]
    >>> key(build.elementwise("add", x, x)) == key(build.elementwise("add", x, x))
    True
    >>> key(build.elementwise("add", x, x)) == key(build.elementwise("add", x, y))
    False
    """
    if not (format is None or isinstance(format, (str, Format))):
        return None
    leaves: list = []
    places: dict = {}   # id(tensor) -> its place in leaves
    nodes: dict = {}    # id(node) -> how many nodes were met before it

    def walk(n):
        if id(n) in nodes:
            return ("again", nodes[id(n)])
        nodes[id(n)] = len(nodes)
        cls = n.__class__
        if cls is Leaf:
            t = n.tensor
            if n.origin is not None or t.__class__ is not Tensor:
                raise _Unkept
            if id(t) in places:
                return ("same", places[id(t)])
            places[id(t)] = len(leaves)
            leaves.append(t)
            return ("leaf", t.name, t.format, t.dtype, t.shape, exact_key(t.fill))
        if cls is Scalar:
            return ("scalar", exact_key(n.value), n.dtype, n.shape)
        if cls is Map:
            return ("map", n.op, tuple(walk(a) for a in n.args))
        if cls is Reduction:
            return ("reduce", n.op, walk(n.child), n.axes, n.keepdims, n.dtype)
        if cls is Permute:
            return ("permute", walk(n.child), n.axes)
        if cls is Broadcast:
            return ("broadcast", walk(n.child), n.shape, n.axes)
        if cls is ShapeOp:
            return ("shape", n.kind, tuple(walk(a) for a in n.args), n.params, n.shape)
        raise _Unkept

    try:
        key = (walk(node), format, strategy, checked)
        hash(key)
    except (_Unkept, TypeError):   # (a parameter or a literal no key holds)
        return None
    return key, leaves


def called_key(found: tuple) -> tuple:
    """The key of :data:`PREPARED` for an expression of :func:`structure` ``found``: it, with what the lowering
    reads of its leaves' tensors beside their formats and shapes (value facts and stored counts, as
    :func:`chosen_key`'s)."""
    key, leaves = found
    return key, tuple((t.value_facts, t.nnz) for t in leaves)


def prepared(key: tuple) -> Prepared | None:
    """The call kept for ``key`` (made the last used), or None."""
    return _last_used(PREPARED, key)


def keep_prepared(key: tuple, kernel, leaves: list, tensors: dict) -> None:
    """Keep ``kernel`` called with ``tensors`` (name -> Tensor) for the expression of :func:`called_key` ``key``
    whose leaves hold ``leaves``, the oldest left where :data:`PREPARED_KEPT` are kept; not where a tensor is
    neither a leaf's nor an :func:`~.nodes.all_true` vector (a value another call's leaves would not give)."""
    place = {id(t): k for k, t in enumerate(leaves)}
    kept = []
    for name, t in tensors.items():
        if id(t) not in place and not is_all_true(t):
            return
        kept.append((name, place.get(id(t), t)))
    PREPARED[key] = Prepared(kernel.retraced(Trace(), {}), tuple(kept))
    if len(PREPARED) > PREPARED_KEPT:
        PREPARED.popitem(last=False)
