"""Lazy arrays: the Array API's operators and functions building an expression, computed as one kernel.

>>> import numpy as np, scipy.sparse as sp
>>> A = asarray(sp.csr_array(np.array([[0, 2.0], [1.0, 0]])))
>>> x = asarray(np.array([1.0, 3.0]))
>>> y = (A @ x + 1).sum()
>>> y.shape, y.dtype.name
((), 'float64')
>>> float(y)
9.0
>>> (A.T @ x).compute().to_numpy().tolist()
[3.0, 2.0]
"""

from __future__ import annotations

import builtins
import numpy as np

from .. import binding
from ..errors import UsageError
from ..format import parse_format
from ..interop import is_foreign, to_tensor
from ..recheck import check_again, checked_now, revalidator
from ..sealing import index_writers, sealed
from .. import tensor_operators
from ..tensor import Tensor
from . import build
from .attempts import called_key
from .fuse import checks_itself, lower_node, prepared_call
from .nodes import Leaf, Node


class Array:
    """A lazy array: an immutable expression over stored tensors. Operators and functions build a
    bigger expression; :meth:`compute` lowers it as one kernel and runs it."""

    __array_priority__ = 20   # (numpy defers to Array's operators: ndarray + Array is an Array)

    def __init__(self, node: Node):
        if not isinstance(node, Node):
            raise UsageError(f"Array wraps an expression node; use asarray(...) for {type(node).__name__}")
        self._node = node

    @property
    def node(self) -> Node:
        """The expression node (:mod:`compiler.array.nodes`)."""
        return self._node

    @property
    def shape(self) -> tuple:
        return tuple(self._node.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._node.dtype

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def fill_value(self):
        """The value of the entries a sparse result does not store."""
        return self._node.fill

    def __repr__(self) -> str:
        return f"Array(shape={self.shape}, dtype={self.dtype.name}, fill_value={self.fill_value!r})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    # -- computing ----------------------------------------------------------------------------

    def compute(self, format=None, strategy: str | None = None, checked: bool = False) -> Tensor:
        """The array as a Tensor, computed by one kernel (``format``: a shorthand or Format for the
        result; by default dense when every operand is or for a product with a dense factor, as scipy's
        ``csr @ ndarray``, else sparse of the result's rank). A result
        computed already (``sort(A)``, ``take(A, rows)``: a function of the values, computed on the
        stored entries) is that Tensor, converted only where ``format`` asks another: no copy kernel.

        >>> import numpy as np
        >>> from compiler.array import sort
        >>> s = sort(asarray(np.array([3.0, 1.0])))
        >>> s.compute() is s.node.tensor
        True
        """
        node = self._node
        if isinstance(node, Leaf) and node.origin is not None:
            return _in_format(node.tensor, format)
        unread = {}
        # (the tensors whose coordinates the kernel computed last time checks itself: their positions alone here)
        found, key, kept = prepared_call(node, format, strategy, checked)
        itself = () if kept is None else checks_itself(*kept)
        shared = _check_shared(node, unread, itself)
        # (the tensors' facts as they were, none checked again or none changed by it: the same call)
        if kept is not None and (not shared or called_key(found) == key):
            kernel, tensors = kept
        else:
            kernel, tensors = lower_node(node, format, strategy, checked, traced=False, found=found)
        if unread and _values_widened(kernel, tensors, unread):   # (for what they hold now)
            kernel, tensors = lower_node(node, format, strategy, checked, traced=False, found=found)
        if itself:   # (a kernel other than the one asked: its tensors' coordinates checked here after all)
            again = checks_itself(kernel, tensors)
            for t in shared:
                if id(t) in itself and id(t) not in again:
                    check_again(t, facts=False)
        with checked_now(shared):   # (checked once per compute(): the call does not read them again)
            return kernel(**tensors)

    def operand_tensor(self) -> Tensor:
        """The tensor a function of tensors (:func:`compiler.einsum`) reads for this array: an operand's own (no
        copy), else the array computed.

        >>> import numpy as np
        >>> from compiler import Tensor
        >>> t = Tensor.from_numpy(np.eye(2), "csr")
        >>> asarray(t).operand_tensor() is t, float((asarray(t) * 2).operand_tensor().to_numpy()[1, 1])
        (True, 2.0)
        """
        node = self._node
        return node.tensor if isinstance(node, Leaf) else self.compute()

    def lower(self, format=None, strategy: str | None = None, checked: bool = False):
        """The kernel that computes this array (``.c_source``, ``.trace``); call it with no arguments."""
        _check_shared(self._node)
        return lower_node(self._node, format, strategy, checked)[0]

    def lower_array(self, strategy=None, checked: bool = False, format=None):
        """What :func:`compiler.lower` calls for an array expression."""
        return self.lower(format, strategy, checked)

    def todense(self) -> np.ndarray:
        """The computed array as a dense numpy array."""
        return self.compute().to_numpy()

    def __array__(self, dtype=None, copy=None):
        out = self.todense()
        return out if dtype is None else out.astype(dtype)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The computed array, dense, as a DLPack capsule (``numpy.from_dlpack(x)``, ``torch.from_dlpack``)."""
        if stream is not None:
            raise BufferError("the array lives on the CPU: DLPack takes no stream for it")
        kwargs = {} if max_version is None else {"max_version": max_version}
        return self.todense().__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple:
        return (1, 0)   # (kDLCPU, device 0)

    def to_scipy(self, format: str = "csr"):
        """The computed (2-D) array as a scipy.sparse array."""
        return self.compute(format if format in ("csr", "csc", "coo") else None).to_scipy(format)

    def _scalar(self, kind):
        if self.ndim:
            raise TypeError(f"only a 0-d array converts to {kind.__name__}; this one has shape {self.shape}")
        return kind(self.todense()[()])

    def __bool__(self):
        return self._scalar(bool)

    def __float__(self):
        return self._scalar(float)

    def __int__(self):
        return self._scalar(int)

    def __complex__(self):
        return self._scalar(complex)

    def __index__(self):
        if self.dtype.kind not in "iu":
            raise TypeError(f"an array of dtype {self.dtype.name} is no index")
        return self._scalar(int)

    # -- attributes of the Array API --------------------------------------------------------------

    def __array_namespace__(self, *, api_version=None):
        """The namespace of the array language (:mod:`compiler.array`), for code written against
        the Array API: ``xp = x.__array_namespace__()``."""
        if api_version not in (None, "2022.12", "2023.12"):
            raise ValueError(f"this namespace implements the Array API 2023.12, not {api_version!r}")
        import compiler.array   # (the package imports this module: not at its top)
        return compiler.array

    @property
    def device(self) -> str:
        """Where the array lives: the CPU, the only device."""
        return "cpu"

    def to_device(self, device, /, *, stream=None) -> "Array":
        check_device("to_device", device)
        return self

    @property
    def T(self) -> "Array":
        if self.ndim > 2:
            raise ValueError(f".T is for arrays of at most 2 dimensions (shape {self.shape}); use permute_dims "
                             f"or .mT")
        return Array(build.permute_dims(self._node, tuple(reversed(range(self.ndim)))))

    @property
    def mT(self) -> "Array":
        if self.ndim < 2:
            raise ValueError(f".mT needs at least 2 dimensions; shape {self.shape}")
        axes = tuple(range(self.ndim - 2)) + (self.ndim - 1, self.ndim - 2)
        return Array(build.permute_dims(self._node, axes))

    def __getitem__(self, key) -> "Array":
        if is_mask(key):
            return _ASSIGNMENT[0](self, key)
        key = tuple(_node_or(k) for k in key) if isinstance(key, tuple) else _node_or(key)
        return Array(build.getitem(self._node, key))

    def __setitem__(self, key, value) -> None:
        """``x[key] = value``: ``x`` becomes the expression ``x`` with ``x[key]`` replaced (ints, slices and
        ``...``, or a boolean mask; ``value`` a scalar or an array broadcast to ``x[key]``'s shape, cast to
        ``x``'s dtype). Arrays made from ``x`` before keep its values before; see :mod:`compiler.array.assignment`.

        >>> import numpy as np
        >>> x = asarray(np.zeros(4))
        >>> x[1:3] = 2.0
        >>> x.todense().tolist()
        [0.0, 2.0, 2.0, 0.0]
        """
        if isinstance(key, tuple):
            key = tuple(_node_or(k) for k in key)
        elif not is_mask(key):
            key = _node_or(key)
        self._node = _ASSIGNMENT[1](self, key, value).node

    def reshape(self, *shape) -> "Array":
        return reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape)

    def astype(self, dtype, copy: bool = True) -> "Array":
        return astype(self, dtype, copy=copy)

    def sum(self, axis=None, keepdims=False, dtype=None):
        return sum(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def prod(self, axis=None, keepdims=False, dtype=None):
        return prod(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def min(self, axis=None, keepdims=False):
        return min(self, axis=axis, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return max(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims=False):
        return any(self, axis=axis, keepdims=keepdims)

    def all(self, axis=None, keepdims=False):
        return all(self, axis=axis, keepdims=keepdims)


#: ``x[mask]`` and ``x[key] = value``'s functions, which :mod:`compiler.array.assignment` installs (it builds on this
#: module: they compute a mask, take entries and make a ``where``)
_ASSIGNMENT: list = []


def is_mask(key) -> bool:
    """Whether ``key`` is a boolean array (an Array, a numpy array, a bool): the sole index of ``x[mask]``."""
    if isinstance(key, (bool, np.bool_)):
        return True
    return isinstance(key, (Array, np.ndarray)) and key.dtype == np.bool_


def install_assignment(masked, assigned) -> None:
    """Make ``x[mask]`` read with ``masked(x, mask)`` and ``x[key] = value`` make ``x`` ``assigned(x, key, value)``
    (:mod:`compiler.array.assignment` calls this once)."""
    _ASSIGNMENT[:] = [masked, assigned]


def _node_or(k):
    """An index item as given (an int-valued 0-d Array reads its value, as a slice's bound does: ``x[a:b]`` of
    0-d integer Arrays ``a`` and ``b``, as numpy takes them)."""
    if isinstance(k, slice) and builtins.any(isinstance(p, Array) for p in (k.start, k.stop, k.step)):
        return slice(*(p.__index__() if isinstance(p, Array) else p for p in (k.start, k.stop, k.step)))
    return k.__index__() if isinstance(k, Array) else k


def _node(x) -> Node | object:
    """An operand as a node: an Array's, a stored object wrapped, a Python scalar left as is."""
    if isinstance(x, Array):
        return x.node
    if isinstance(x, (bool, int, float, complex, np.generic)) and not isinstance(x, np.ndarray):
        return x
    return asarray(x).node


def _in_format(t: Tensor, format) -> Tensor:
    """``t`` itself where ``format`` is None or names its format, else ``t`` converted: a shorthand
    names it whatever its index dtype (a kernel's output picks one as the lowering does)."""
    if format is None:
        return t
    if isinstance(format, str) and "(" not in format:
        same = parse_format(format, ndim=t.ndim, fill=t.fill, dtype=t.dtype).shorthand == t.format.shorthand
    else:
        same = parse_format(format) == t.format
    return t if same else t.asformat(format)


def check_device(what: str, device) -> None:
    """Refuse a device other than the CPU, the only one (``device=None`` is the default device, the CPU), with a
    UsageError (a ValueError, as the Array API's libraries raise).

    >>> check_device("zeros", "gpu")
    Traceback (most recent call last):
    ...
    compiler.errors.UsageError: zeros: the only device is 'cpu', not 'gpu'
    """
    if device is not None and device != "cpu":
        raise UsageError(f"{what}: the only device is 'cpu', not {device!r}")


def asarray(obj, format=None, name: str | None = None, *, dtype=None, device=None, copy: bool | None = None) -> Array:
    """An Array over ``obj``: a numpy array, a scipy.sparse matrix or array, a pydata/sparse array,
    a Tensor, an Array, a Python scalar or nested list, sharing its buffers where the layout allows.
    ``format`` converts it (``"csr"``, a Format, ...); ``dtype`` casts its values (as the Array API's
    ``asarray``: a Python float list is float64, an int one int64, unless ``dtype`` says otherwise).

    ``copy`` is the Array API's: None shares the buffers where it can; True makes the Array's own
    copy, its index arrays sealed read-only, so that kernels read them with no check per call (a
    scipy or pydata array's shared index arrays are checked again at each call, as their owner may
    write them in place: one pass over them, unless they were sealed read-only, ``Tensor.from_scipy(m).seal()``);
    False never copies, and raises ValueError where ``obj`` cannot be taken as it is.

    >>> import numpy as np
    >>> a = np.arange(6.0).reshape(2, 3)
    >>> np.shares_memory(asarray(a).node.tensor.vals, a)
    True
    >>> asarray(a, format="csr").node.tensor.format.shorthand
    'csr'
    >>> import scipy.sparse as sp
    >>> m = sp.csr_array(a)
    >>> np.shares_memory(asarray(m, copy=True).node.tensor.vals, m.data)
    False
    >>> asarray(a, format="csr", copy=False)
    Traceback (most recent call last):
    ...
    ValueError: array: copy=False, but format='csr' converts it (a copy); leave copy=None to allow it
    >>> asarray([1, 2], dtype="float32").dtype, asarray(m, dtype="int32").to_scipy().dtype
    (dtype('float32'), dtype('int32'))
    """
    if copy is not None and not isinstance(copy, bool):
        raise UsageError(f"asarray: copy is True, False or None, not {copy!r}")
    check_device("asarray", device)
    if dtype is not None:
        want = np.dtype(dtype)
        if isinstance(obj, (list, tuple, bool, int, float, complex, np.generic)):
            obj = np.asarray(obj, dtype=want)   # (a Python int past int64 fits a uint64 or float64 asked for)
        made = asarray(obj, format, name, copy=copy)
        if made.dtype == want:
            return made
        if copy is False:
            raise ValueError(f"{name or 'array'}: copy=False, but dtype={want.name} converts its {made.dtype} "
                             f"values (a copy); leave copy=None to allow it")
        return made.astype(want)
    if copy:
        made = asarray(obj, format, name)
        tensor = made.compute() if not isinstance(made.node, Leaf) else made.node.tensor
        # a conversion or a kernel already made new arrays: sealed, they are the copy (no second one)
        return Array(Leaf(tensor.seal() if _made_anew(tensor, obj) else tensor.copy()))
    if copy is False:
        if format is not None:
            raise ValueError(f"{name or 'array'}: copy=False, but format={format!r} converts it (a copy); "
                             f"leave copy=None to allow it")
        made = asarray(obj, None, name)
        if not (isinstance(obj, (Array, Tensor)) or _shares(made, obj)):
            raise ValueError(f"{name or 'array'}: copy=False, but a {type(obj).__name__} of this layout is copied "
                             f"to become a Tensor (a format scipy or numpy keeps differently, unsorted or repeated "
                             f"indices, an array not contiguous); leave copy=None to allow it")
        return made
    if isinstance(obj, Array):
        if format is None:
            return obj
        return Array(Leaf(obj.compute(format)))
    if format is not None and not isinstance(obj, Tensor) and isinstance(obj, (np.ndarray, list, tuple)):
        tensor = Tensor.from_numpy(np.asarray(obj), format, name=name)
    else:
        # (a scipy or pydata array taken before, unconverted, is checked again where the expression is computed:
        # Leaf.recheck below; one pass over its arrays, not two)
        made = to_tensor(obj, name, checked=format is not None)
        tensor = made if format is None else made.asformat(format)
        if tensor is made and is_foreign(obj):
            # (it shares the owner's buffers, which the owner may write before the expression is computed)
            return Array(Leaf(tensor, recheck=revalidator(tensor, name)))
    return Array(Leaf(tensor))


def _made_anew(tensor: Tensor, obj) -> bool:
    """Whether none of ``tensor``'s arrays may share memory with an array of ``obj`` (the tensors an
    Array expression reads, a Tensor's arrays, a numpy array, a scipy or pydata array's buffers as
    ``asarray`` takes them): a conversion's or a kernel's result, which ``copy=True`` need not copy.

    >>> m = np.eye(3)
    >>> _made_anew(asarray(m).node.tensor, m), _made_anew(asarray(m, format="csr").node.tensor, m)
    (False, True)
    """
    todo, arrays = [asarray(obj).node], []
    while todo:
        node = todo.pop()
        if isinstance(node, Leaf):
            arrays += [a for level in node.tensor.level_arrays() for a in level.values()]
        todo.extend(node.children())
    if isinstance(obj, np.ndarray):
        arrays.append(obj)
    return not builtins.any(np.may_share_memory(a, b) for level in tensor.level_arrays()
                            for a in level.values() for b in arrays)   # (this module's any is the Array API's)


def _shares(made: Array, obj) -> bool:
    """Whether the tensor of ``made`` (``asarray(obj)``) holds ``obj``'s values where they were: a
    numpy array's memory, or a scipy or pydata array's ``data`` (a list or a scalar is always copied)."""
    source = getattr(obj, "data", None) if is_foreign(obj) else obj
    if not isinstance(source, np.ndarray):
        return False
    return source.size == 0 or np.shares_memory(made.node.tensor.vals, source)


def _check_shared(root: Node, unread: dict | None = None, itself=()) -> list:
    """Check again the arrays of each operand over a scipy or pydata array's buffers (Leaf.recheck),
    and of each tensor whose index arrays are not sealed (:mod:`compiler.sealing`): a FormatError
    where their owner wrote them out of range since, not a kernel reading past them. Each tensor
    once, however many operands read it; returns the tensors checked. Given ``unread`` (a dict), a
    tensor of :data:`~compiler.binding.VALUES_ASKED_FROM` stored values or more (or with sealed index arrays)
    has its index arrays checked alone (a sealed one's not at all), its values left for :func:`_values_widened`,
    and is put in it (by id). A tensor of
    ``itself`` (ids: the kernel checks its coordinates as it reads them) has its positions checked alone."""
    seen, todo, checked = set(), [root], {}
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Leaf) and id(node.tensor) not in checked:
            t = node.tensor
            if node.recheck is not None or (node.origin is None and not sealed(index_writers(t))):
                vals = t.leaf.arrays().get("vals") if unread is not None else None
                # (values looked at with the index arrays, one pass; alone, a sealed tensor's, where they matter)
                look = vals is None or len(vals) < binding.VALUES_ASKED_FROM and not sealed(index_writers(t))
                whole = id(t) not in itself
                if node.recheck is not None:
                    node.recheck(look, whole)
                else:
                    check_again(t, facts=look, coordinates=whole)
                checked[id(t)] = t
                if not look:
                    unread[id(t)] = t
        todo.extend(node.children())
    return list(checked.values())


def _values_widened(kernel, tensors: dict, unread: dict) -> bool:
    """Look at the values of each tensor of ``unread`` (:func:`_check_shared`) among ``kernel``'s
    ``tensors`` where its C depends on them (:meth:`~compiler.runtime.Kernel.depends_on_values`: a
    SpMV's matrix's never do), taking their facts anew; whether some hold more than the kernel was
    lowered for (a NaN their owner wrote since), which it must be lowered again for."""
    widened = False
    for name, t in tensors.items():
        if id(t) in unread and kernel.depends_on_values(name):
            before = t.value_facts
            check_again(t, name)
            widened |= not t.value_facts <= before
    return widened


def compute(*arrays, format=None, strategy: str | None = None):
    """Each array computed (one kernel each): a Tensor for one array, a tuple for several."""
    out = tuple(asarray(a).compute(format, strategy) for a in arrays)
    return out[0] if len(out) == 1 else out


# -- operators ----------------------------------------------------------------------------------

def _binary(name, function, reflected=False):
    def method(self, other):
        if not isinstance(other, (Array, Tensor, np.ndarray, bool, int, float, complex, np.generic)) and \
                not hasattr(other, "tocoo") and not hasattr(other, "fill_value"):
            return NotImplemented
        a, b = (_node(other), self._node) if reflected else (self._node, _node(other))
        return Array(build.elementwise(name, a, b, function=function))
    return method


#: each operator's notation name and the array function it is (an error names the function)
_OPERATORS = {"add": ("add", "add"), "sub": ("sub", "subtract"), "mul": ("mul", "multiply"),
              "truediv": ("div", "divide"), "floordiv": ("floordiv", "floor_divide"), "mod": ("mod", "remainder"),
              "pow": ("pow", "pow"), "and": ("bitand", "bitwise_and"), "or": ("bitor", "bitwise_or"),
              "xor": ("bitxor", "bitwise_xor"), "lshift": ("lshift", "bitwise_left_shift"),
              "rshift": ("rshift", "bitwise_right_shift")}
_COMPARISONS = {"lt": ("lt", "less"), "le": ("le", "less_equal"), "gt": ("gt", "greater"),
                "ge": ("ge", "greater_equal"), "eq": ("eq", "equal"), "ne": ("ne", "not_equal")}
for _dunder, (_op, _fn) in _OPERATORS.items():
    setattr(Array, f"__{_dunder}__", _binary(_op, _fn))
    setattr(Array, f"__r{_dunder}__", _binary(_op, _fn, reflected=True))
for _dunder, (_op, _fn) in _COMPARISONS.items():
    setattr(Array, f"__{_dunder}__", _binary(_op, _fn))
Array.__hash__ = None   # (== builds an array, as numpy's does)
Array.__neg__ = lambda self: Array(build.elementwise("neg", self._node, function="negative"))
Array.__pos__ = lambda self: self
Array.__abs__ = lambda self: Array(build.elementwise("abs", self._node))
# (x ^ all ones: -1 for a signed integer, the largest value for an unsigned one, which -1 does not fit)
Array.__invert__ = lambda self: Array(build.elementwise("not" if self.dtype.kind == "b" else "bitxor",
                                                        *((self._node,) if self.dtype.kind == "b" else
                                                          (self._node, -1 if self.dtype.kind == "i" else
                                                           int(np.iinfo(self.dtype).max))),
                                                        function="bitwise_invert"))
Array.__matmul__ = lambda self, other: matmul(self, other)
Array.__rmatmul__ = lambda self, other: matmul(other, self)


# -- functions --------------------------------------------------------------------------------------

def _unary(name, function=None):
    function = function or name

    def fn(x) -> Array:
        return Array(build.elementwise(name, _node(x), function=function))
    fn.__name__ = function
    fn.__doc__ = f"numpy's {function}, elementwise."
    return fn


def _binary_fn(name, op):
    def fn(x1, x2) -> Array:
        return Array(build.elementwise(op, _node(x1), _node(x2), function=name))
    fn.__name__ = name
    fn.__doc__ = f"numpy's {name}, elementwise with broadcasting."
    return fn


abs = _unary("abs")
negative = _unary("neg", "negative")
sqrt, exp, log = _unary("sqrt"), _unary("exp"), _unary("log")
sin, cos, tan = _unary("sin"), _unary("cos"), _unary("tan")
asin, acos, atan = _unary("asin"), _unary("acos"), _unary("atan")
sinh, cosh, tanh = _unary("sinh"), _unary("cosh"), _unary("tanh")
asinh, acosh, atanh = _unary("asinh"), _unary("acosh"), _unary("atanh")
expm1, log1p, log2, log10 = _unary("expm1"), _unary("log1p"), _unary("log2"), _unary("log10")
floor, ceil, trunc, round = _unary("floor"), _unary("ceil"), _unary("trunc"), _unary("round")
logical_not = _unary("not", "logical_not")
isnan = _unary("isnan")
isnan.__doc__ = """Whether each entry is NaN (a complex one where either part is; never an integer or bool), as numpy's.

    One operator, so ``isnan(x @ y)`` computes the product once (``e != e`` would compute it twice).

    >>> import numpy as np
    >>> isnan(asarray(np.array([1.0, np.nan]))).todense().tolist()
    [False, True]
    """
add, subtract, multiply = _binary_fn("add", "add"), _binary_fn("subtract", "sub"), _binary_fn("multiply", "mul")
divide, floor_divide = _binary_fn("divide", "div"), _binary_fn("floor_divide", "floordiv")
remainder, pow = _binary_fn("remainder", "mod"), _binary_fn("pow", "pow")
minimum, maximum = _binary_fn("minimum", "min"), _binary_fn("maximum", "max")
less, less_equal = _binary_fn("less", "lt"), _binary_fn("less_equal", "le")
greater, greater_equal = _binary_fn("greater", "gt"), _binary_fn("greater_equal", "ge")
equal, not_equal = _binary_fn("equal", "eq"), _binary_fn("not_equal", "ne")
bitwise_and, bitwise_or = _binary_fn("bitwise_and", "bitand"), _binary_fn("bitwise_or", "bitor")
bitwise_xor = _binary_fn("bitwise_xor", "bitxor")
bitwise_left_shift, bitwise_right_shift = _binary_fn("bitwise_left_shift", "lshift"), \
    _binary_fn("bitwise_right_shift", "rshift")
logical_and, logical_or = _binary_fn("logical_and", "and"), _binary_fn("logical_or", "or")
atan2, hypot, copysign = _binary_fn("atan2", "atan2"), _binary_fn("hypot", "hypot"), _binary_fn("copysign", "copysign")
nextafter = _binary_fn("nextafter", "nextafter")


def astype(x, dtype, /, *, copy: bool = True) -> Array:
    """``x`` converted to ``dtype``, with numpy's casting (``bool`` is ``!= 0``; a float converted to an
    integer is truncated, and one with no integer of the dtype, NaN or too large, gives the dtype's minimum
    for int32/int64 and 0 for the others: see :func:`compiler.algebra.astype`). A lazy array is never
    written, so ``copy`` changes nothing.

    >>> import numpy as np
    >>> astype(asarray(np.array([1.7, -0.5, np.nan])), np.int64).todense().tolist()
    [1, 0, -9223372036854775808]
    """
    return Array(build.astype(_node(x) if isinstance(x, Array) else asarray(x).node, dtype))


def where(condition, x1, x2) -> Array:
    """``x1`` where ``condition`` holds, else ``x2`` (broadcast together)."""
    return Array(build.where(_node(condition), _node(x1), _node(x2)))


def _reduction(name):
    def fn(x, axis=None, keepdims=False, dtype=None) -> Array:
        return Array(build.reduce(name, _node(x), axis, keepdims, dtype))
    fn.__name__ = name
    fn.__doc__ = f"numpy's {name} over ``axis`` (None, an int or a tuple; negative from the end)."
    return fn


sum, prod = _reduction("sum"), _reduction("prod")


def min(x, axis=None, keepdims=False) -> Array:
    """numpy's min over ``axis``."""
    return Array(build.reduce("min", _node(x), axis, keepdims))


def max(x, axis=None, keepdims=False) -> Array:
    """numpy's max over ``axis``."""
    return Array(build.reduce("max", _node(x), axis, keepdims))


def any(x, axis=None, keepdims=False) -> Array:
    """Whether any entry is true (nonzero) over ``axis``."""
    return Array(build.reduce("any", _node(x), axis, keepdims))


def all(x, axis=None, keepdims=False) -> Array:
    """Whether every entry is true (nonzero) over ``axis``."""
    return Array(build.reduce("all", _node(x), axis, keepdims))


def matmul(x1, x2) -> Array:
    """numpy's ``x1 @ x2`` (1-D operands are vectors; stacks of matrices broadcast)."""
    return Array(build.matmul(asarray(x1).node, asarray(x2).node))


def tensordot(x1, x2, axes=2) -> Array:
    """numpy's tensordot."""
    return Array(build.tensordot(asarray(x1).node, asarray(x2).node, axes))


def einsum(subscripts: str, *operands) -> Array:
    """numpy's einsum: ``einsum("ij,j->i", A, x)``."""
    return Array(build.einsum(subscripts, *(asarray(o).node for o in operands)))


def permute_dims(x, axes) -> Array:
    """``x`` with its axes reordered (``x.T`` for a matrix)."""
    return Array(build.permute_dims(asarray(x).node, axes))


def matrix_transpose(x) -> Array:
    """The last two axes swapped (``x.mT``)."""
    return asarray(x).mT


def expand_dims(x, axis=0) -> Array:
    """``x`` with a new axis of extent 1 at ``axis``."""
    return Array(build.expand_dims(asarray(x).node, axis))


def broadcast_to(x, shape) -> Array:
    """``x`` broadcast to ``shape``."""
    return Array(build.broadcast_to(asarray(x).node, shape))


def reshape(x, shape) -> Array:
    """``x`` reshaped row-major (one extent may be -1)."""
    return Array(build.reshape(asarray(x).node, shape))


def concat(arrays, axis=0) -> Array:
    """The arrays joined along ``axis`` (None: flattened first)."""
    return Array(build.concat([asarray(a).node for a in arrays], axis))


concatenate = concat


def stack(arrays, axis=0) -> Array:
    """The arrays (one shape) stacked along a new axis ``axis``."""
    return Array(build.stack([asarray(a).node for a in arrays], axis))


tensor_operators.ASARRAY[:] = [asarray]

__all__ = ["Array", "asarray", "compute", "astype", "where", "sum", "prod", "min", "max", "any", "all", "matmul",
           "tensordot", "einsum", "permute_dims", "matrix_transpose", "expand_dims", "broadcast_to",
           "reshape", "concat", "concatenate", "stack", "abs", "negative", "sqrt", "exp", "log", "sin",
           "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "expm1",
           "log1p", "log2", "log10", "atan2", "hypot", "copysign", "nextafter", "floor", "ceil", "trunc", "round",
           "logical_not", "isnan", "add", "subtract", "multiply", "divide",
           "floor_divide", "remainder", "pow", "minimum", "maximum", "less", "less_equal", "greater",
           "greater_equal", "equal", "not_equal", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_left_shift", "bitwise_right_shift", "logical_and", "logical_or"]
