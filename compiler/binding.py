"""How tensors cross into kernels: parameter names, arguments and result tensors.

Both lowering strategies name a tensor's arrays the same way, so one runtime binds
any kernel (see :mod:`compiler.lowering`):

=======================  ============================  ======================
what                     name                          example (CSR ``A``)
=======================  ============================  ======================
extent of storage mode   ``{A}{m}_size`` (scalar)      ``A0_size``, ``A1_size``
array of storage level   ``{A}{k}_{kind}`` (buffer)    ``A1_pos``, ``A1_idx``
values of the leaf       ``{A}_val`` (buffer)          ``A_val``
=======================  ============================  ======================

Kinds are the keys of :meth:`compiler.levels.level.Level.array_dtypes` (``pos``,
``idx``, ``idx0`` ...); a leaf's ``vals`` becomes ``_val``. Numbers are 0-based, like
``A.levels[1]``, so ``A1_pos`` is ``A.levels[1].pos``.

>>> import numpy as np
>>> from compiler import Tensor, csr
>>> [p.name for p in input_params("A", csr())]
['A0_size', 'A1_size', 'A1_pos', 'A1_idx', 'A_val']
>>> A = Tensor.from_numpy(np.array([[0, 2.0], [3.0, 0]]), csr())
>>> sorted(input_args("A", A))
['A0_size', 'A1_idx', 'A1_pos', 'A1_size', 'A_val']
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from typing import Callable, NamedTuple

import numpy as np

from . import recheck, sealing
from .format import Format, with_index_dtype
from .imperative.ir import Buffer, Scalar
from .interop import holding, is_foreign, still_holds, to_tensor
from .levels import Dense, Element, flatten
from .levels.level import IndexedLevel, fill_key
from .tensor import Tensor


def array_name(tensor: str, level: int | None, kind: str) -> str:
    """The kernel parameter name of one array or size of ``tensor``.

    >>> array_name("A", 1, "pos"), array_name("A", None, "vals"), array_name("B", 0, "size")
    ('A1_pos', 'A_val', 'B0_size')
    """
    if kind in ("val", "vals"):
        return f"{tensor}_val"
    return f"{tensor}{level}_{kind}"


def level_arrays(fmt: Format) -> list[tuple[int | None, str, np.dtype]]:
    """Every array of ``fmt`` as ``(level number or None for the leaf, kind, dtype)``."""
    levels, leaf = flatten(fmt.root)
    out = [(k, kind, np.dtype(dt)) for k, lvl in enumerate(levels) for kind, dt in lvl.array_dtypes().items()]
    out += [(None, kind, np.dtype(dt)) for kind, dt in leaf.array_dtypes().items()]
    return out


def input_params(name: str, fmt: Format) -> tuple:
    """IR parameters for an input tensor: its storage-mode extents, then its arrays."""
    sizes = tuple(Scalar(array_name(name, m, "size"), "int64") for m in range(fmt.ndim))
    arrays = tuple(Buffer(array_name(name, k, kind), dt.name, "in") for k, kind, dt in level_arrays(fmt))
    return sizes + arrays


def input_args(name: str, tensor: Tensor) -> dict:
    """The arguments for :func:`input_params`, taken from ``tensor`` without copying."""
    args = {array_name(name, m, "size"): int(s) for m, s in enumerate(tensor.storage_shape)}
    for k, lvl in enumerate(tensor.levels):
        for kind, arr in lvl.arrays().items():
            args[array_name(name, k, kind)] = arr
    for kind, arr in tensor.leaf.arrays().items():
        args[array_name(name, None, kind)] = arr
    return args


def output_tensor(name: str, fmt: Format, shape, arrays: dict, check: bool = True) -> Tensor:
    """Build the result tensor from the arrays a kernel returned.

    ``arrays`` maps parameter names (:func:`array_name`) to numpy arrays. With
    ``check`` the result is validated like user input (which costs a pass over it).

    >>> from compiler import dense
    >>> output_tensor("y", dense(1), (3,), {"y_val": np.array([1.0, 0.0, 2.0])}).to_numpy()
    array([1., 0., 2.])
    """
    levels, leaf = flatten(fmt.root)

    def take(k, lvl):
        kinds = lvl.array_dtypes()
        missing = [array_name(name, k, kind) for kind in kinds if array_name(name, k, kind) not in arrays]
        if missing:
            raise KeyError(f"the kernel returned no {', '.join(missing)} for output {name}")
        return lvl.with_arrays({kind: arrays[array_name(name, k, kind)] for kind in kinds})

    node = take(None, leaf)
    for k in reversed(range(len(levels))):
        node = dataclasses.replace(take(k, levels[k]), child=node)
    return Tensor(node, shape=tuple(shape), mode_order=fmt.mode_order, name=name, check=check)


def check_at_most_one(name: str, t: Tensor) -> None:
    """Refuse a kernel's output ``t`` (named ``name``) where a level that holds at most one entry
    or run per fiber (SparsePoint, SparseInterval) holds more in one: a program may write more.
    One pass over those levels' ``pos``, where validating the whole output reads every array.

    >>> from compiler.levels import Dense, Element, SparsePoint
    >>> fmt = Format(Dense(SparsePoint(Element(0.0))))
    >>> arrays = {"C1_pos": np.array([0, 2, 2]), "C1_idx": np.array([0, 1]), "C_val": np.array([1.0, 2.0])}
    >>> check_at_most_one("C", output_tensor("C", fmt, (2, 2), arrays, check=False))
    Traceback (most recent call last):
    ...
    compiler.errors.FormatError: C: level 1 (SparsePoint): fiber 0 stores 2 coordinates; a SparsePoint fiber stores at most one; use SparseList
    """
    count = 1
    for k, lvl in enumerate(t.levels):
        lvl.check_at_most_one(count, f"{name}: level {k} ({lvl.name})")
        count = lvl.count(count)


#: the stored values from which a call that checks a tensor's arrays again asks whether the kernel
#: needs their facts (:meth:`InputPlan.checks_values`): a look at 2**18 doubles takes about 75 µs,
#: asking (lowering once more, for the kernel's life) 5-10 ms
VALUES_ASKED_FROM = 1 << 18


class InputPlan:
    """Parameter names of one input tensor's arrays, worked out once per kernel.

    :func:`input_args` names every array on every call; a kernel binds the same
    format each time, so it keeps one plan per tensor instead. Given the kernel's
    ``params``, the plan binds only those.

    >>> from compiler import Tensor, csr
    >>> A = Tensor.from_numpy(np.array([[0, 2.0], [3.0, 0]]), csr())
    >>> plan = InputPlan("A", A.format)
    >>> plan.args(A).keys() == input_args("A", A).keys()
    True
    """

    def __init__(self, name: str, fmt: Format, params=None):
        levels, leaf = flatten(fmt.root)
        used = (lambda pname: True) if params is None else params.__contains__   # (only what the kernel takes)
        self.sizes = tuple(array_name(name, m, "size") for m in range(fmt.ndim))
        self.sizes_used = tuple((m, pname) for m, pname in enumerate(self.sizes) if used(pname))
        self.arrays = tuple(tuple((kind, array_name(name, k, kind)) for kind in lvl.array_dtypes()
                                  if used(array_name(name, k, kind)))
                            for k, lvl in enumerate((*levels, leaf)))
        self.flat = all(_plain_arrays(lvl) for lvl in (*levels, leaf))
        # (each level's assembly keeps a kernel's arrays as they are: a result not yet assembled
        # is bound from them, see args)
        self.direct = self.flat and all(type(lvl).assembled in _PLAIN_ASSEMBLY for lvl in (*levels, leaf))

        # a numpy argument for an all-Dense format is wrapped without Tensor.from_numpy's checks
        self.format = fmt
        self.dense_dtype = (leaf.dtype if fmt.is_dense
                            and isinstance(leaf, Element) and leaf.dtype is not None else None)
        self._sized: tuple = (None, None)
        #: scipy/pydata arrays bound in place: id -> :class:`KeptForeign`
        self.foreign: dict = {}
        #: a function of no argument, whether the kernel's C depends on what this input's values hold
        #: (:meth:`compiler.runtime.Kernel.depends_on_values`, set by the kernel's plan); None: taken to
        self.values_matter: Callable[[], bool] | None = None
        #: the kernel checks this input's coordinates as it reads them: a call that checks its arrays again checks
        #: the positions alone (:mod:`compiler.owned_inputs`, set by the kernel's plan)
        self.coordinates_checked = False

    def checks_values(self, tensor: Tensor) -> bool:
        """Whether a call that checks ``tensor``'s arrays again (an owner may have written them) looks
        at its values too, for NaN and infinities: a pass as long as the check of its index arrays,
        made where the kernel's C depends on them, and wherever they are fewer than
        :data:`VALUES_ASKED_FROM`, below which the look costs less than asking, unless its index arrays are
        sealed (:mod:`compiler.sealing`): then the look would be each call's only pass, and the kernel is asked
        (once).

        >>> import scipy.sparse as sp, compiler as ss
        >>> k = ss.lower("y[i] = A[i, j] * x[j]", A="csr", x="dense")
        >>> plan, n = k._plan().inputs["A"], VALUES_ASKED_FROM
        >>> [plan.checks_values(Tensor.from_scipy(sp.identity(m, format="csr"))) for m in (n - 1, n)]
        [True, False]
        """
        if self.values_matter is None:
            return True
        vals = tensor.leaf.arrays().get("vals")
        if vals is None:
            return True
        if len(vals) < VALUES_ASKED_FROM and not sealing.sealed(sealing.index_writers(tensor)):
            return True
        return self.values_matter()

    def tensor(self, name: str, value) -> Tensor:
        """``value`` (a numpy array, an array-like, a scipy.sparse or pydata/sparse array) as a
        tensor of this plan's format; a sparse array in that layout shares its arrays."""
        if is_foreign(value):
            kept = self.kept_foreign(value)
            if kept is not None:
                return kept
            # (shared where its layout is this format; else converted, its fill's entries stored)
            t = to_tensor(value, name)
            t = t if t.format == self.format else t.asformat(self.format)
            buffers = _buffers(value)
            if buffers and all(any(np.shares_memory(b, a) for a in _arrays_of(t)) for b in buffers):
                # a tensor over the same buffers: the next call with this object takes it again, as a
                # Tensor's arrays are taken (their contents may change; the arrays are the same ones)
                if len(self.foreign) >= 8:
                    for old in list(self.foreign)[:1]:
                        self.foreign.pop(old, None)   # (a call on another thread may have taken it)
                self.foreign[id(value)] = KeptForeign.of(value, t, self.checks_values(t), not self.coordinates_checked)
            return t
        arr = np.asarray(value)
        fmt = self.format
        if self.dense_dtype is None or arr.dtype != self.dense_dtype or arr.ndim != fmt.ndim:
            return Tensor.from_numpy(arr, fmt, name=name)
        storage = tuple(arr.shape[m] for m in fmt.mode_order)
        if self._sized[0] != storage:
            self._sized = (storage, flatten(fmt.root.with_sizes(storage)))
        levels, leaf = self._sized[1]
        node = leaf.assembled({"vals": np.ascontiguousarray(arr.transpose(fmt.mode_order)).ravel()}, None)
        for lvl in reversed(levels):
            node = lvl.assembled({}, node)
        return Tensor.assembled(node, arr.shape, fmt.mode_order, name, fmt)

    def kept_foreign(self, value) -> Tensor | None:
        """The tensor this plan made over ``value`` (a scipy or pydata array) before, if it still
        holds the same buffers and shape (so it shares them: nothing was converted), else None.
        Its owner may have written the buffers since: they are checked again (in C, see
        :mod:`compiler.recheck`), and a FormatError names what is wrong with them now."""
        kept = self.kept_foreign_facts(value)
        return None if kept is None else kept[0]

    def kept_foreign_facts(self, value) -> tuple | None:
        """``(tensor, facts of its values)`` of :meth:`kept_foreign` (one pass over the arrays
        checks them and finds the facts), or None."""
        kept = self.foreign.get(id(value))
        if kept is None:
            return None
        ref, held, sized, shape, t, check, _, chain = kept
        if ref() is not value or not still_holds(value, held, shape) or chain and not sealing.sealed(chain):
            return None
        facts = check() if check is not None else None
        if facts is None:
            recheck.validate_as_given(t)   # (raises naming the array at fault, as its owner names it)
            if check is not None:
                return None   # (the C check and validate disagree: the call builds the tensor afresh)
            facts = t.value_facts
        return t, facts

    def has_bound(self, tensor: Tensor) -> bool:
        """Whether :meth:`args` bound ``tensor`` before (so its format is this plan's)."""
        return tensor.__dict__.get("_bound_args", (None,))[0] is self

    def args(self, tensor: Tensor) -> dict:
        # a tensor's levels never change after it is built, nor do the arrays they hold (their
        # contents may): the names-to-arrays map is kept on the tensor for this plan's next call
        cached = tensor.__dict__.get("_bound_args")
        if cached is not None and cached[0] is self:
            return cached[1]
        return self._bind(tensor)[1]

    def writers(self, tensor: Tensor) -> tuple:
        """The arrays through which the index arrays of ``tensor`` (every level's, not its values) may be written
        (:func:`compiler.sealing.writers`): a call reads ``tensor`` unchecked where none of them is
        writeable (:func:`compiler.sealing.sealed`), else checks its arrays again.

        >>> from compiler import Tensor, csr
        >>> A = Tensor.from_numpy(np.array([[0, 2.0], [3.0, 0]]), csr())
        >>> sealing.sealed(InputPlan("A", A.format).writers(A))
        True
        """
        cached = tensor.__dict__.get("_bound_args")
        if cached is not None and cached[0] is self:
            return cached[2]
        return self._bind(tensor)[2]

    def _bind(self, tensor: Tensor) -> tuple:
        storage = tensor.storage_shape
        out = {pname: storage[m] for m, pname in self.sizes_used}
        pending = tensor.__dict__.get("_pending")
        if pending is not None and pending[0] is assemble_result and self.direct:
            # a kernel's result not yet assembled (a round's, the next round's input): its arrays by
            # level and kind, where assembly would put them, without building levels no one reads
            sized, made = pending[1]
            for (_, held), names in zip(reversed(sized), self.arrays):
                if names:
                    kinds = dict(held)
                    for kind, pname in names:
                        out[pname] = made[kinds[kind]]
            # (no one else has seen them: every level's arrays, not the leaf's values, sealed as assembly
            # would seal them)
            chain = sealing.writers([made[pname] for _, held in sized[1:] for _, pname in held])
            sealing.seal(chain)
        else:
            chain = sealing.index_writers(tensor)
            for lvl, names in zip((*tensor.levels, tensor.leaf), self.arrays):
                if not names:
                    continue
                if self.flat:  # the arrays are the level's fields of the same names
                    for kind, pname in names:
                        out[pname] = getattr(lvl, kind)
                else:
                    arrays = lvl.arrays()
                    for kind, pname in names:
                        out[pname] = arrays[kind]
        bound = tensor._bound_args = (self, out, chain)
        return bound


class KeptForeign(NamedTuple):
    """A scipy or pydata array an :class:`InputPlan` bound in place, and what a later call checks
    before it reads the same array again through :attr:`tensor`: the object itself (``ref``), the
    attributes it ``held`` then, each the same object now (its arrays and tuples: its shape where it
    keeps it, scipy's ``_shape``, pydata's ``shape``, ``sized`` says so, else ``shape`` is
    compared; a scipy COO's ``coords``), and ``check``, which reads the arrays again (:func:`compiler.recheck.checker`; None
    where a level cannot say what to check, and the tensor is validated whole). Where its index arrays were
    sealed read-only when bound (:meth:`Tensor.seal <compiler.tensor.Tensor.seal>`), ``check`` reads its values
    alone and ``sealed`` holds the arrays through which they could be written (:func:`compiler.sealing.writers`):
    a call finds none of them writeable, or binds the array again.

    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix(np.eye(2))
    >>> kept = KeptForeign.of(m, Tensor.from_scipy(m))
    >>> sorted(k for k, _ in kept.held), kept.sized
    (['_shape', 'data', 'indices', 'indptr'], True)
    """

    ref: weakref.ref
    held: tuple
    sized: bool
    shape: tuple
    tensor: Tensor
    check: object
    #: ``check``'s C program ``(pointer, size)`` (:func:`compiler.recheck.c_check`), None without one
    ops: tuple | None
    #: the index arrays' writers, all read-only, where ``check`` leaves them out; else ()
    sealed: tuple = ()

    @classmethod
    def of(cls, value, tensor: Tensor, facts: bool = True, coordinates: bool = True) -> "KeptForeign":
        """What to check of ``value`` (``tensor`` over its arrays) at a later call: with ``facts``, its values
        too (:meth:`InputPlan.checks_values`); without ``coordinates``, its positions and not its coordinates
        (:attr:`InputPlan.coordinates_checked`)."""
        # (tuples too, compared by identity: a scipy COO keeps its row and col in a tuple)
        held, shape = holding(value)
        sized = any(v is shape for _, v in held)
        chain = sealing.index_writers(tensor)
        chain = chain if sealing.sealed(chain) else ()
        check = recheck.checker(tensor, facts, coordinates, structure=not chain)
        return cls(weakref.ref(value), held, sized, shape, tensor, check, None if check is None else check.ops, chain)


def foreign_layout(value) -> tuple:
    """What the format of a scipy.sparse or pydata/sparse ``value`` depends on (its type, scipy
    format or pydata compressed axes, rank, the dtypes of its arrays and its fill), as a key:
    arrays of one key become tensors of one format (:func:`compiler.interop.to_tensor`).

    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix(np.eye(2))
    >>> foreign_layout(m) == foreign_layout(sp.csr_matrix(np.ones((3, 4))))
    True
    >>> foreign_layout(m) == foreign_layout(sp.csr_matrix(np.eye(2, dtype=np.float32)))
    False
    """
    # (asked on calls the fast path did not take: kept to attribute reads; a scipy class says its format)
    held = value.__dict__
    fill = held.get("fill_value")
    return (value.__class__, value.ndim, tuple([v.dtype for v in held.values() if v.__class__ is np.ndarray]),
            None if fill is None else (fill_key(fill), getattr(value, "compressed_axes", None)))


def same_but_index_dtypes(a: Format, b: Format) -> bool:
    """Whether formats ``a`` and ``b`` differ at most in their levels' index dtypes (so a kernel
    lowered for one reads the other's arrays the same way, only their integers' width differs).

    >>> from compiler import csr, csc
    >>> same_but_index_dtypes(csr(index_dtype="int32"), csr()), same_but_index_dtypes(csc(), csr())
    (True, False)
    >>> same_but_index_dtypes(csr(dtype="float32", index_dtype="int32"), csr())
    False
    """
    return a == b or _index_dtypes_wide(a) == _index_dtypes_wide(b)


def _index_dtypes_wide(fmt: Format) -> Format:
    """``fmt`` with every level's index dtype int64."""
    return with_index_dtype(fmt, "int64")


def _buffers(value) -> tuple:
    """The numpy arrays a scipy.sparse or pydata/sparse array holds (its data and indices)."""
    return tuple(v for v in vars(value).values() if isinstance(v, np.ndarray))


def _arrays_of(t: Tensor) -> list:
    return [a for d in t.level_arrays() for a in d.values() if isinstance(a, np.ndarray)]


#: the level assemblies that keep a kernel's arrays as they are, each in the field of its kind
_PLAIN_ASSEMBLY = (IndexedLevel.assembled, Element.assembled, Dense.assembled)


def _plain_arrays(level) -> bool:
    """Whether each of ``level``'s arrays is the field of the same name (most levels)."""
    fields = {f.name for f in dataclasses.fields(level)} if dataclasses.is_dataclass(level) else set()
    return set(level.array_dtypes()) <= fields


class OutputPlan:
    """How one kernel's output arrays become its result tensor, worked out once.

    The sized level specs are kept for the last storage shape, so a kernel called
    again on inputs of the same shape only puts arrays into copies of them.

    >>> from compiler import dense
    >>> plan = OutputPlan("y", dense(1))
    >>> plan.tensor((3,), {"y_val": np.array([1.0, 0.0, 2.0])}).to_numpy()
    array([1., 0., 2.])
    """

    def __init__(self, name: str, fmt: Format):
        self.name, self.format = name, fmt
        levels, leaf = flatten(fmt.root)
        self.nlevels = len(levels)
        self.arrays = tuple(tuple((kind, array_name(name, k if k < len(levels) else None, kind))
                                  for kind in lvl.array_dtypes())
                            for k, lvl in enumerate((*levels, leaf)))
        self._names = tuple(pname for names in self.arrays for _, pname in names)
        self._order = fmt.mode_order
        #: the last logical shape and its sized level specs (:meth:`sized`)
        self.last: tuple = (None, ())
        # an all-Dense output's values array, which to_numpy reads without building the levels
        # (10 us of a 16-bin histogram's 18 us call): None for any other format
        self.values_array = self.arrays[-1][0][1] if (type(leaf) is Element and self.arrays[-1]
                                                 and fmt.is_dense) else None

    def tensor(self, shape, arrays: dict, check: bool = False) -> Tensor:
        """The result tensor of logical ``shape`` from the kernel's ``arrays`` (validated with ``check``)."""
        if check:
            return output_tensor(self.name, self.format, shape, arrays, check=True)
        for name in self._names:
            if name not in arrays:
                raise KeyError(f"the kernel returned no {name} for output {self.name}")
        return self.result(tuple(shape), arrays)

    def result(self, shape: tuple, arrays: dict) -> Tensor:
        """:meth:`tensor` of a tuple ``shape`` and ``arrays`` holding every array of the output, unchecked
        (the fast path's, on every call: the levels are built when first asked for, see Tensor.deferred_result)."""
        last = self.last
        return Tensor.deferred_result(assemble_result, (last[1] if last[0] == shape else self.sized(shape), arrays),
                                      shape, self._order, self.name, self.format,
                                      None if self.values_array is None else arrays[self.values_array])

    def sized(self, shape: tuple) -> tuple:
        """The sized level specs of a result of logical ``shape`` (leaf first, each with its arrays'
        ``(kind, parameter)`` names), what :func:`assemble_result` takes; kept in :attr:`last`.

        >>> from compiler import dense
        >>> [lvl.size for lvl, _ in OutputPlan("y", dense(1)).sized((3,))[1:]]
        [3]
        """
        storage = tuple(shape[m] for m in self._order)
        sized_levels, sized_leaf = flatten(self.format.root.with_sizes(storage))
        last = self.last = (shape, tuple(zip(reversed((*sized_levels, sized_leaf)), reversed(self.arrays))))
        return last[1]


def assemble_result(sized: tuple, arrays: dict) -> tuple:
    """``(root, (levels, leaf))`` of a kernel's result: each sized level spec of ``sized`` (leaf first,
    with its arrays' ``(kind, parameter)`` names) holding its arrays of ``arrays``."""
    node, built = None, []
    for lvl, names in sized:
        node = lvl.assembled({kind: arrays[pname] for kind, pname in names}, node)
        built.append(node)
    built.reverse()
    # (the kernel made them: sealed before anyone reads them, see compiler.sealing)
    sealing.seal([a for lvl in built[:-1] for a in lvl.arrays().values()])
    return node, (tuple(built[:-1]), built[-1])


def dense_parent_count(fmt: Format, level: int, storage_shape) -> int | None:
    """Positions above ``level`` when all its ancestors are Dense (their sizes' product), else None.

    Kernels may then write that level's ``pos`` into a buffer the runtime allocates.
    """
    levels, _ = flatten(fmt.root)
    if not all(lvl.located_by_coordinate for lvl in levels[:level]):
        return None
    return math.prod(int(s) for s in storage_shape[:level])
