"""The array operators on expression nodes: shapes, dtypes and axes checked as numpy checks them.

Each function takes nodes (or Python scalars where an operand may be one) and returns a node;
:mod:`compiler.array.lazy` wraps them as the :class:`~compiler.array.lazy.Array` API. Errors name
the operator and the shapes or axis at fault.

>>> import numpy as np
>>> from compiler.interop import to_tensor
>>> from compiler.array.nodes import Leaf
>>> a = Leaf(to_tensor(np.ones((2, 3)))); b = Leaf(to_tensor(np.ones(4)))
>>> elementwise("add", a, b)
Traceback (most recent call last):
...
compiler.errors.ShapeError: add: shapes (2, 3) and (4,) do not broadcast (axis -1 has extent 3 and 4)
>>> matmul(a, Leaf(to_tensor(np.ones(3)))).shape
(2,)
"""

from __future__ import annotations

import math

import numpy as np

from ..algebra import UnknownOperatorError, lookup
from ..user_functions import user_function
from ..dtypes import is_integer
from ..errors import AxisError, DTypeError, ShapeError, UsageError
from ..notation.subscripts import parse_subscripts
from .nodes import Broadcast, Map, Node, Permute, Reduction, Scalar, ShapeOp

#: numpy's where as a three-argument operator (C's conditional), fused like any other call
WHERE = user_function("where", lambda c, x, y: np.where(c, x, y), "return x ? y : z;", arity=3, selects=(1, 2))


def real_only(what: str, *operands, why: str = "complex numbers have no order") -> None:
    """Refuse a complex operand of ``what`` (a function the Array API standard leaves undefined for
    complex numbers: an order, a floor, a sign bit), naming the function and the dtype.

    >>> real_only("sort", np.array([1j]))
    Traceback (most recent call last):
    ...
    compiler.errors.DTypeError: sort is not defined for complex128: complex numbers have no order (the Array API standard leaves it undefined); apply it to real(x), imag(x) or abs(x)
    """
    for x in operands:
        dt = getattr(x, "dtype", None)
        if dt is not None and np.dtype(dt).kind == "c":
            raise DTypeError(f"{what} is not defined for {np.dtype(dt).name}: {why} (the Array API standard leaves "
                             f"it undefined); apply it to real(x), imag(x) or abs(x)")


def scalar(value, others) -> Scalar:
    """A Python scalar typed as numpy 2 types it beside arrays of ``others``' dtypes: it takes
    their dtype when of a kind that holds it (1 beside int32 is int32, 0.5 beside float32 float32,
    1j beside complex64 complex64), else bool, int64, float64 or complex128."""
    if isinstance(value, np.generic):
        return Scalar(value.item(), value.dtype)
    if not isinstance(value, (bool, int, float, complex)):
        raise UsageError(f"an array operand must be an array or a bool, int, float or complex, not "
                         f"{type(value).__name__}")
    kinds = "b" if isinstance(value, bool) else "iufc" if isinstance(value, int) else \
        "fc" if isinstance(value, float) else "c"
    natural = np.dtype("bool" if isinstance(value, bool) else "int64" if isinstance(value, int) else
                       "float64" if isinstance(value, float) else "complex128")
    dts = [o.dtype for o in others if not isinstance(o, Scalar)]
    dt = np.result_type(*dts) if dts else natural
    # (numpy 2's weak scalar of a higher kind: 1j beside float32 is complex64, 0.5 beside int32 float64)
    dt = dt if dt.kind in kinds else np.result_type(dt, value) if dts else natural
    if dt.kind in "iu" and not (np.iinfo(dt).min <= value <= np.iinfo(dt).max):
        raise DTypeError(f"the Python int {value} does not fit the operand's dtype {dt.name}")
    return Scalar(dt.type(value).item(), dt)


def _operands(args) -> tuple:
    nodes = [a for a in args if isinstance(a, Node)]
    return tuple(a if isinstance(a, Node) else scalar(a, nodes) for a in args)


def broadcast_shape(what: str, shapes) -> tuple:
    """numpy's broadcast of ``shapes``, or a ShapeError naming ``what`` and the shapes."""
    out = []
    for k in range(1, max((len(s) for s in shapes), default=0) + 1):
        sizes = {s[-k] for s in shapes if len(s) >= k} - {1}
        if len(sizes) > 1:
            listed = " and ".join(str(tuple(s)) for s in shapes)
            extents = " and ".join(str(s[-k]) for s in shapes if len(s) >= k)
            raise ShapeError(f"{what}: shapes {listed} do not broadcast (axis -{k} has extent {extents})")
        out.append(sizes.pop() if sizes else 1)
    return tuple(reversed(out))


#: numpy's + and * of two bool arrays are logical: or and and (the notation's add of bools counts)
_BOOL_OPS = {"add": "or", "mul": "and"}


def elementwise(name: str, *args, function: str | None = None) -> Map:
    """``name`` (an operator of the notation: add, lt, sqrt, ...) applied with broadcasting; an error
    names ``function``, the array function the user called (``less`` for ``lt``), before the operator.

    >>> elementwise("lt", Scalar(1j, np.dtype("complex128")), Scalar(1.0, np.dtype("float64")), function="less")
    Traceback (most recent call last):
    compiler.errors.DTypeError: less: operator < (lt) is not defined for complex128 (argument 0): complex numbers have no order; apply it to real(x), imag(x) or abs(x)
    """
    op = lookup(name)
    nodes = _operands(args)
    function = function or name
    if all(n.dtype.kind == "b" for n in nodes):
        if op.name in ("sub", "neg"):
            raise DTypeError(f"{function} of bool arrays: numpy refuses it too; use ^ (xor) or ~ (not)")
        op = lookup(_BOOL_OPS.get(op.name, op.name))
    broadcast_shape(function, [n.shape for n in nodes])
    try:
        return Map(op, nodes)
    except DTypeError as e:
        named = type(e)(f"{function}: {e}")
        named.position = getattr(e, "position", None)
        raise named from None


def astype(x: Node, dtype) -> Node:
    """``x`` converted to ``dtype`` (``x`` itself if it has it)."""
    dt = np.dtype(dtype)
    if dt == x.dtype:
        return x
    try:
        return Map(lookup("astype", dt.name), (x,))
    except UnknownOperatorError as e:
        raise DTypeError(f"astype: {e}") from None


def where(cond, x, y) -> Map:
    """numpy's ``where(cond, x, y)``."""
    nodes = _operands((cond, x, y))
    broadcast_shape("where", [n.shape for n in nodes])
    if nodes[0].dtype.kind != "b":
        nodes = (Map(lookup("ne"), (nodes[0], scalar(0, [nodes[0]]))),) + nodes[1:]
    return Map(WHERE, nodes)


def matrix_offset(what: str, x: Node, offset, name: str = "k") -> int:
    """``offset`` as an int, ``x`` having the two axes a diagonal needs; else the error naming ``what``.

    >>> matrix_offset("tril", Scalar(1.0, np.dtype("float64")), 0)
    Traceback (most recent call last):
    compiler.errors.ShapeError: tril needs at least 2 dimensions; shape ()
    """
    if len(x.shape) < 2:
        raise ShapeError(f"{what} needs at least 2 dimensions; shape {tuple(x.shape)}")
    if not isinstance(offset, (int, np.integer)):
        raise UsageError(f"{what}: {name} must be an integer, got {offset!r}")
    return int(offset)


def integer_shape(what: str, shape) -> tuple:
    """``shape`` (an int or a sequence of ints) as a tuple of ints; a float, string, bool or None
    in it is a UsageError naming ``what``, as numpy refuses them (``int()`` would take 2.5 as 2).

    >>> integer_shape("reshape", (2, np.int64(3)))
    (2, 3)
    >>> integer_shape("reshape", (2.5, 4))
    Traceback (most recent call last):
        ...
    compiler.errors.UsageError: reshape: a shape is a tuple of ints, not (2.5, 4)
    """
    items = (shape,) if is_integer(shape) else shape
    if not np.iterable(items) or isinstance(items, str) or not all(is_integer(s) for s in items):
        raise UsageError(f"{what}: a shape is a tuple of ints, not {shape!r}")
    return tuple(int(s) for s in items)


def normalize_axes(what: str, axis, ndim: int, ordered: bool = False) -> tuple:
    """``axis`` (None, an int or a tuple, negative counting from the end) as sorted axes, or in their given order
    (``ordered``: ``moveaxis``'s source and destination pair up by place)."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in items:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise UsageError(f"{what}: an axis is an int, not {a!r}")
        if not -ndim <= a < ndim:
            raise AxisError(f"{what}: axis {a} is out of range for an array of {ndim} dimension(s)")
        a = int(a) % ndim
        if a in out:
            raise ShapeError(f"{what}: axis {a} is repeated in {axis}")
        out.append(a)
    return tuple(out if ordered else sorted(out))


#: numpy's name of each reduction
_REDUCTIONS = {"sum": "add", "prod": "mul", "min": "min", "max": "max", "any": "or", "all": "and"}


#: the dtype a sum of each narrow float dtype accumulates in (:func:`reduce`)
WIDER_SUMS = {"float32": "float64", "complex64": "complex128"}


def reduce(name: str, x: Node, axis=None, keepdims: bool = False, dtype=None) -> Node:
    """``sum``, ``prod``, ``min``, ``max``, ``any`` or ``all`` over ``axis``, with numpy's result
    dtype (a sum of int32 or bool is int64; a float32 sum accumulates in float64, :data:`WIDER_SUMS`).

    >>> x = Scalar(1.0, np.dtype("float32"))
    >>> total = reduce("sum", Map(lookup("mul"), (x, x)), None)
    >>> total.op.name, total.dtype.name, total.args[0].dtype.name   # (the float64 sum, cast back)
    ('astype', 'float32', 'float64')
    """
    axes = normalize_axes(name, axis, x.ndim)
    op = lookup(_REDUCTIONS[name])
    if dtype is not None and name in ("sum", "prod") and np.dtype(dtype) != x.dtype:
        # (numpy's: the values cast to dtype, then summed in it; a narrow integer's sum counts in 64 bits and
        # wraps back to dtype at the end, which is the same modulo 2^bits)
        dtype = np.dtype(dtype)
        counted = reduce(name, astype(x, dtype), axis, keepdims)
        return astype(counted, dtype)
    if dtype is None:
        if name in ("sum", "prod"):
            dtype = getattr(np, name)(np.zeros(1, x.dtype)).dtype
        elif name in ("any", "all"):
            dtype = np.dtype(bool)
        else:
            dtype = x.dtype
    dtype = np.dtype(dtype)
    if name == "sum" and dtype.name in WIDER_SUMS and x.dtype == dtype:
        # (a float32 sum accumulates in float64, rounded once at the end: a running float32 sum of 2e7
        # values of 0.1 was 2.4% short, where numpy's pairwise sum is within a few roundings)
        wide = np.dtype(WIDER_SUMS[dtype.name])
        return astype(Reduction(op, astype(x, wide), axes, bool(keepdims), wide), dtype)
    if name in ("min", "max"):
        real_only(name, x)
    if name in ("min", "max") and any(x.shape[a] == 0 for a in axes):
        raise ShapeError(f"{name}: axis {next(a for a in axes if x.shape[a] == 0)} of shape {x.shape} is "
                         f"empty, and {name} has no identity")
    if name in ("any", "all") and x.dtype.kind != "b":
        x = Map(lookup("ne"), (x, scalar(0, [x])))
    return Reduction(op, x, axes, bool(keepdims), dtype)


def permute_dims(x: Node, axes) -> Node:
    """``x``'s axes reordered (numpy's transpose): result axis k is ``x``'s axis ``axes[k]``."""
    given = tuple(axes)
    if given == tuple(range(x.ndim)) and all(a.__class__ is int for a in given):
        return x   # (most calls, from contract(): none checked further)
    if not all(is_integer(a) for a in given):
        raise UsageError(f"permute_dims: axes are ints, not {given!r}")
    if sorted(a % x.ndim if x.ndim else a for a in given) != list(range(x.ndim)) or len(given) != x.ndim:
        raise ShapeError(f"permute_dims: axes {given} are not a permutation of the {x.ndim} axes of shape {x.shape}")
    axes = tuple(a % x.ndim for a in given)
    return x if axes == tuple(range(x.ndim)) else Permute(x, axes)


def expand_dims(x: Node, axis=0) -> Node:
    """``x`` with a new axis of extent 1 at ``axis`` (negative counts from the end of the result)."""
    nd = x.ndim + 1
    if not is_integer(axis):
        raise UsageError(f"expand_dims: an axis is an int, not {axis!r}")
    if not -nd <= axis < nd:
        raise AxisError(f"expand_dims: axis {axis} is out of range for a result of {nd} dimension(s)")
    axis %= nd
    shape = x.shape[:axis] + (1,) + x.shape[axis:]
    return Broadcast(x, shape, tuple(k if k < axis else k + 1 for k in range(x.ndim)))


def broadcast_to(x: Node, shape) -> Node:
    """``x`` broadcast to ``shape`` as numpy does."""
    shape = integer_shape("broadcast_to", shape)
    if len(shape) < x.ndim or broadcast_shape("broadcast_to", [x.shape, shape]) != shape:
        raise ShapeError(f"broadcast_to: shape {x.shape} cannot be broadcast to {shape}")
    if shape == x.shape:
        return x
    lead = len(shape) - x.ndim
    return Broadcast(x, shape, tuple(range(lead, len(shape))))


def contract(what: str, operands, labels, out_labels) -> Node:
    """The einsum ``labels[0],labels[1],...->out_labels``: the operands multiplied with their axes
    aligned by label (extent-1 axes broadcast), summed over the labels not in ``out_labels``. A
    product of bools is and-ed and or-ed, as numpy's matmul of bools is."""
    position: dict = {}   # label -> its place among every operand's labels, in the order met
    for ls in labels:
        for c in ls:
            position.setdefault(c, len(position))
    everything = list(position)
    extents = {}
    for node, ls in zip(operands, labels):
        shape = node.shape
        if len(ls) != len(shape):
            raise ShapeError(f"{what}: operand of shape {shape} has {len(shape)} axes but "
                             f"{len(ls)} labels {''.join(map(str, ls))!r}")
        if len(set(ls)) != len(ls):
            raise UsageError(f"{what}: a label repeated in one operand ({''.join(map(str, ls))!r}: a diagonal) "
                             f"is not supported; take the diagonal first")
        for c, n in zip(ls, shape):
            if extents.get(c, 1) not in (1, n) and n != 1:
                shapes = " and ".join(str(o.shape) for o in operands)
                raise ShapeError(f"{what}: shapes {shapes} do not match: axis {c!r} has extent "
                                 f"{extents[c]} and {n}")
            extents[c] = max(extents.get(c, 1), n)
    for c in out_labels:
        if c not in extents:
            raise UsageError(f"{what}: output label {c!r} is in no operand")
    aligned = []
    for node, ls in zip(operands, labels):
        order = sorted(range(len(ls)), key=lambda k: position[ls[k]])
        node = permute_dims(node, order)
        placed = [position[ls[k]] for k in order]
        at = dict(zip(placed, node.shape))
        shape = tuple(at.get(p, 1) for p in range(len(everything)))
        if shape != node.shape:
            node = Broadcast(node, shape, tuple(placed))
        aligned.append(node)
    boolean = all(o.dtype.kind == "b" for o in operands)
    mul = lookup("and" if boolean else "mul")
    prod = aligned[0]
    for node in aligned[1:]:
        prod = Map(mul, (prod, node))
    if len(aligned) == 1:
        prod = Map(mul, (prod, scalar(True if boolean else 1, [prod])))   # (a copy, typed as numpy's)
    summed = [k for k, c in enumerate(everything) if c not in out_labels]
    if summed:
        prod = Reduction(lookup("or" if boolean else "add"), prod, tuple(summed), False, prod.dtype)
    kept = [c for c in everything if c in out_labels]
    return permute_dims(prod, [kept.index(c) for c in out_labels])


def matmul(a: Node, b: Node) -> Node:
    """numpy's ``a @ b``: 1-D operands are vectors, more than 2-D ones stacks of matrices."""
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: operands must have at least one axis, got shapes {a.shape} and {b.shape}")
    ka, kb = a.shape[-1], b.shape[-2] if b.ndim > 1 else b.shape[-1]
    if ka != kb:
        raise ShapeError(f"matmul: shapes {a.shape} and {b.shape} do not match: {ka} (last axis of the first) "
                         f"!= {kb} ({'second-to-last' if b.ndim > 1 else 'only'} axis of the second)")
    batch = broadcast_shape("matmul", [a.shape[:-2], b.shape[:-2]])
    nb = len(batch)
    bl = [f"b{k}" for k in range(nb)]
    la = bl[nb - (a.ndim - 2):] + ["i", "k"] if a.ndim > 1 else ["k"]
    lb = bl[nb - (b.ndim - 2):] + ["k", "j"] if b.ndim > 1 else ["k"]
    out = bl + (["i"] if a.ndim > 1 else []) + (["j"] if b.ndim > 1 else [])
    return contract("matmul", (a, b), (la, lb), out)


def tensordot(a: Node, b: Node, axes=2) -> Node:
    """numpy's tensordot: ``axes`` an int (the last n of ``a`` with the first n of ``b``) or two
    sequences of axes."""
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot: axes={n} for shapes {a.shape} and {b.shape}")
        pa, pb = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        pa, pb = ([x] if isinstance(x, int) else list(x) for x in axes)
        if len(pa) != len(pb):
            raise ShapeError(f"tensordot: {len(pa)} axes of the first operand but {len(pb)} of the second")
        pa = [a_ % a.ndim for a_ in pa]
        pb = [b_ % b.ndim for b_ in pb]
    for x, y in zip(pa, pb):
        if a.shape[x] != b.shape[y]:
            raise ShapeError(f"tensordot: axis {x} of {a.shape} has extent {a.shape[x]} but axis {y} of "
                             f"{b.shape} has {b.shape[y]}")
    la = [f"a{k}" for k in range(a.ndim)]
    lb = [f"b{k}" for k in range(b.ndim)]
    for x, y in zip(pa, pb):
        lb[y] = la[x]
    out = [la[k] for k in range(a.ndim) if k not in pa] + [lb[k] for k in range(b.ndim) if k not in pb]
    return contract("tensordot", (a, b), (la, lb), out)


def einsum(subscripts: str, *operands: Node) -> Node:
    """numpy's einsum ``"ij,jk->ik"`` (implicit output: the labels used once, sorted)."""
    ins, out = parse_subscripts(subscripts, len(operands))
    return contract(f"einsum {subscripts!r}", operands, [list(s) for s in ins], list(out))


# -- shape operators (materialized: see compiler.array.shapeops) ---------------------------------


def reshape(x: Node, shape) -> Node:
    """``x`` reshaped row-major (C order) to ``shape``, one extent of which may be -1."""
    shape = integer_shape("reshape", shape)
    size = math.prod(x.shape)
    if shape.count(-1) > 1 or any(s < -1 for s in shape):
        raise ShapeError(f"reshape: bad shape {shape} (at most one -1, no other negative extent)")
    if -1 in shape:
        rest = math.prod(s for s in shape if s != -1)
        if rest == 0 or size % rest:
            raise ShapeError(f"reshape: cannot reshape shape {x.shape} ({size} entries) into {shape}")
        shape = tuple(size // rest if s == -1 else s for s in shape)
    if math.prod(shape) != size:
        raise ShapeError(f"reshape: cannot reshape shape {x.shape} ({size} entries) into {shape}")
    if shape == x.shape:
        return x
    return ShapeOp("reshape", (x,), (shape,), shape)


def concat(xs, axis=0) -> Node:
    """The arrays ``xs`` joined along ``axis`` (None: flattened first)."""
    xs = tuple(xs)
    if not xs:
        raise ShapeError("concat: needs at least one array")
    if axis is None:
        xs = tuple(reshape(x, (-1,)) for x in xs)
        axis = 0
    nd = xs[0].ndim
    if any(x.ndim != nd for x in xs) or nd == 0:
        raise ShapeError(f"concat: all arrays need the same number (>= 1) of dimensions; got shapes "
                         f"{', '.join(str(x.shape) for x in xs)}")
    (axis,) = normalize_axes("concat", axis, nd)
    for x in xs[1:]:
        if any(x.shape[k] != xs[0].shape[k] for k in range(nd) if k != axis):
            raise ShapeError(f"concat along axis {axis}: shapes {xs[0].shape} and {x.shape} differ off that axis")
    if len(xs) == 1:
        return xs[0]
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return ShapeOp("concat", xs, (axis,), tuple(shape))


def stack(xs, axis=0) -> Node:
    """The arrays ``xs`` (all one shape) stacked along a new axis ``axis``."""
    xs = tuple(xs)
    if not xs:
        raise ShapeError("stack: needs at least one array")
    if any(x.shape != xs[0].shape for x in xs):
        raise ShapeError(f"stack: all arrays need one shape; got {', '.join(str(x.shape) for x in xs)}")
    nd = xs[0].ndim + 1
    if not -nd <= axis < nd:
        raise AxisError(f"stack: axis {axis} is out of range for a result of {nd} dimension(s)")
    axis %= nd
    shape = xs[0].shape[:axis] + (len(xs),) + xs[0].shape[axis:]
    return ShapeOp("stack", xs, (axis,), shape)


def basic_key(shape: tuple, key) -> tuple[tuple, list]:
    """``key`` (ints, ``start:stop:step`` slices, ``None`` and ``...``) as one item per axis of ``shape``, an int
    or a slice's ``(start, stop, step)`` in range, and the places of the new axes ``None`` makes; an IndexError
    naming what does not fit.

    >>> basic_key((4, 5), (1, slice(None, None, -2), None))
    ((1, (4, -1, -2)), [1])
    """
    key = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can have only one ellipsis ('...')")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > len(shape):
        raise IndexError(f"too many indices: {used} for an array of {len(shape)} dimension(s), shape {shape}")
    # (by identity: ``Ellipsis in key`` compares a numpy array in the key with ``==``)
    if any(k is Ellipsis for k in key):
        at = next(n for n, k in enumerate(key) if k is Ellipsis)
        key = key[:at] + (slice(None),) * (len(shape) - used) + key[at + 1:]
    else:
        key = key + (slice(None),) * (len(shape) - used)
    items, new_axes, out_pos, axis = [], [], 0, 0
    for k in key:
        if k is None:
            new_axes.append(out_pos)
            out_pos += 1
            continue
        n = shape[axis]
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with extent {n}")
            items.append(int(k) % n)
        elif isinstance(k, slice):
            for part in (k.start, k.stop, k.step):
                if part is not None and not isinstance(part, (int, np.integer)):
                    raise IndexError(f"slice bounds are ints or None, not {part!r}")
            if k.step == 0:
                raise IndexError(f"slice step cannot be zero (axis {axis})")
            start, stop, step = k.indices(n)
            # (a step past the extent takes one entry, as one of the extent does: the C's constants stay in int64)
            step = -max(n, 1) if step < -n else max(n, 1) if step > n else step
            items.append((start, stop, step))
            out_pos += 1
        else:
            raise IndexError(f"only ints, slices (start:stop:step), None and ... index an array; got "
                             f"{type(k).__name__} for axis {axis} (advanced indexing is not supported)")
        axis += 1
    return tuple(items), new_axes


def getitem(x: Node, key) -> Node:
    """Basic indexing: ints, ``start:stop:step`` slices (negative steps too), ``None`` and ``...``."""
    items, new_axes = basic_key(x.shape, key)
    out = x
    if any(not (isinstance(it, tuple) and it == (0, x.shape[a], 1)) for a, it in enumerate(items)):
        shape = tuple(len(range(*it)) for it in items if isinstance(it, tuple))
        out = ShapeOp("index", (x,), (items,), shape)
    for pos in new_axes:
        out = expand_dims(out, pos)
    return out


__all__ = ["WHERE", "matrix_offset", "scalar", "broadcast_shape", "elementwise", "where", "integer_shape", "normalize_axes", "reduce",
           "permute_dims", "expand_dims", "broadcast_to", "contract", "matmul", "tensordot", "einsum",
           "reshape", "concat", "stack", "basic_key", "getitem"]
