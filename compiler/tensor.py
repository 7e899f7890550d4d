"""Tensor: a tree of stored levels, a logical shape, a mode order and a name.

Build one from levels (validated), from numpy into any format, or from scipy.sparse
(sharing its arrays when the layout already matches):

>>> import numpy as np
>>> A = Tensor.from_numpy(np.array([[0, 1.5, 0], [0, 0, 0], [2.0, 0, 3.0]]), "csr", name="A")
>>> A
Tensor(A, csr: Dense(SparseList(Element(0.0))), shape=(3, 3), dtype=float64, fill=0.0, nnz=3)
>>> A.levels[1].pos.tolist(), A.levels[1].idx.tolist(), A.vals.tolist()
([0, 1, 1, 3], [1, 0, 2], [1.5, 2.0, 3.0])
>>> A.asformat("coo").to_numpy().tolist() == A.to_numpy().tolist()
True

Levels built by hand are checked:

>>> Tensor(Dense(SparseList(Element(0.0, [1.0, 2.0]), 3, pos=[0, 2], idx=[2, 1]), 1), name="B")
Traceback (most recent call last):
...
compiler.errors.FormatError: B: level 1 (SparseList): idx is not strictly increasing in fiber 0: idx[1]=1 follows idx[0]=2
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from . import memory, sealing
from .deferred_levels import PendingLevels
from .dtypes import LARGEST_EXTENT, cast_values, is_integer, value_dtype
from .entries import canonical_coo, check_index_room, from_entries, require_dense_prefix, storage_sort, sum_duplicates
from .errors import DTypeError, FormatError, ShapeError, SparsescopeError, UsageError
from .format import Format, checked_mode_order, parse_format
from .levels import Dense, Element, Level, Pattern, SparseCOO, SparseList, flatten
from .levels.level import POS, is_fill, normalize_fill
from .scipy_arrays import check_scipy_arrays
from .tensor_operators import ArrayOperators

#: the mode order of a tensor stored in its modes' order, by rank
_IN_ORDER = {n: tuple(range(n)) for n in range(33)}


def replace_leaf(root: Level, leaf: Level) -> Level:
    """``root``'s chain of levels with its leaf (the Element) replaced by ``leaf``.

    >>> from compiler.levels import Dense, Element
    >>> replace_leaf(Dense(Element(0.0)), Element(1.0)).child.fill
    1.0
    """
    if root.is_leaf:
        return leaf
    return replace(root, child=replace_leaf(root.child, leaf))


def replace_level(root: Level, depth: int, change) -> Level:
    """``root``'s chain with its level at ``depth`` (0: ``root``) replaced by ``change(level)``."""
    if depth == 0:
        return change(root)
    return replace(root, child=replace_level(root.child, depth - 1, change))


def _same_fill(a, b) -> bool:
    """Whether fill ``a`` equals fill ``b`` (NaN equals NaN)."""
    return bool(is_fill(np.asarray([a]), b)[0])


class Tensor(ArrayOperators):
    """A tensor stored as a tree of levels; see the module docstring.

    ``Tensor(root, shape=None, mode_order=None, name=None)``: ``root`` is the outermost
    level. Level sizes may be left out when ``shape`` (logical, one extent per mode)
    is given. A root without any arrays is a format spec and makes an all-fill tensor
    of ``shape``. ``mode_order[k]`` is the mode stored by storage level ``k``.
    """

    def __init__(self, root: Level, shape=None, mode_order=None, name: str | None = None,
                 *, check: bool = True):
        self.name = name
        levels, leaf = flatten(root)
        ndim = sum(lvl.nmodes for lvl in levels)
        try:
            order = checked_mode_order(mode_order, ndim)
        except FormatError as e:
            raise FormatError(f"{self._label}: {e}") from None
        self._mode_order = order

        # storage sizes, from the levels and/or the logical shape
        sizes = [s for lvl in levels for s in lvl.sizes]
        if shape is not None:
            if not (np.iterable(shape) and not isinstance(shape, str) and all(is_integer(s) for s in shape)):
                raise ShapeError(f"{self._label}: shape must be a tuple of integers, got {shape!r}")
            shape = tuple(int(s) for s in shape)
            if len(shape) != ndim:
                raise ShapeError(f"{self._label}: shape {shape} has {len(shape)} modes but "
                                 f"{root.spec_str()} stores {ndim}")
            if any(s < 0 for s in shape):
                raise ShapeError(f"{self._label}: shape {shape} has a negative extent")
            if any(s > LARGEST_EXTENT for s in shape):
                raise ShapeError(f"{self._label}: shape {shape} has an extent past 2^63 - 1, the largest "
                                 f"coordinate count an int64 index holds")
            from_shape = [shape[m] for m in order]
            k = 0
            for lnum, lvl in enumerate(levels):
                for s in lvl.sizes:
                    if s is not None and s != from_shape[k]:
                        raise ShapeError(
                            f"{self._label}: level {lnum} ({lvl.name}) has size {s} but shape {shape} "
                            f"gives {from_shape[k]} for mode {order[k]}")
                    k += 1
            sizes = from_shape
        else:
            k = 0
            for lnum, lvl in enumerate(levels):
                for s in lvl.sizes:
                    if s is None:
                        raise ShapeError(f"{self._label}: level {lnum} ({lvl.name}) has no size; pass shape=")
                    k += 1
            shape = tuple(sizes[order.index(m)] for m in range(ndim))
        self._shape = shape

        # (a tree where no level owning arrays holds them is a format spec)
        owners = [lvl for lvl in (*levels, leaf) if lvl.array_dtypes()]
        with_data = [lvl.has_data for lvl in owners]
        if owners and not any(with_data):
            # a format spec: make the all-fill tensor of this shape
            if isinstance(leaf, Element) and leaf.dtype is None:
                root = replace_leaf(root, Element(leaf.fill, dtype="float64"))
            empty = np.zeros(0, dtype=POS)
            require_dense_prefix(Format(root), sizes, self._label)
            try:
                root = root.spec().from_entries(1, empty, [empty] * ndim,
                                                np.zeros(0, dtype=flatten(root)[1].dtype), sizes)
            except (MemoryError, ValueError) as e:   # numpy: too large for memory, or for an index
                if isinstance(e, SparsescopeError):
                    raise
                raise MemoryError(f"{self._label}: the empty {root.spec_str()} of shape {shape} cannot be "
                                  f"allocated ({e}); a format with no dense level above a sparse one (dcsr or "
                                  f"coo for a matrix) stores only the fibers that have entries") from None
        elif not all(with_data):
            k = [lvl.has_data for lvl in (*levels, leaf)].index(False)
            bad = (*levels, leaf)[k]
            raise FormatError(f"{self._label}: level {k} ({bad.name}) holds no arrays but other levels do; "
                              f"give every level its arrays, or none (a format spec)")
        else:
            root = root.with_sizes(sizes)
        self._root = root
        self._levels, self._leaf = flatten(root)
        self._format = None
        self._nnz = None
        if check:
            self.validate()

    # --- attributes ---------------------------------------------------------------------

    @classmethod
    def assembled(cls, root: Level, shape: tuple, mode_order: tuple, name: str | None = None,
                  format: Format | None = None, flat: tuple | None = None) -> "Tensor":
        """A tensor over a sized ``root`` whose arrays its maker filled and knows well formed, built
        with no check and no sizes derived again: a kernel's output (:class:`compiler.binding.OutputPlan`),
        a dense view of a numpy array (:func:`compiler.interop.dense_view`). ``root`` has every size
        set and ``shape``/``mode_order`` agree with it; ``format``, when given, is its format (one
        shared by many tensors, made once); ``flat``, when given, is ``flatten(root)``.

        >>> from compiler import Dense, Element
        >>> t = Tensor.assembled(Dense(Element(0.0, np.arange(3.0)), 3), (3,), (0,))
        >>> t.to_numpy(), t.format.shorthand
        (array([0., 1., 2.]), 'dense')
        """
        self = cls.__new__(cls)
        self.name = name
        self._mode_order = mode_order
        self._shape = shape
        self._root = root
        self._levels, self._leaf = flatten(root) if flat is None else flat
        self._format = format
        self._nnz = None
        return self

    @classmethod
    def deferred_result(cls, build, args, shape: tuple, mode_order: tuple, name: str | None,
                        fmt: Format, dense_values: np.ndarray | None = None) -> "Tensor":
        """A kernel's result tensor whose levels ``build(*args)`` makes, as ``(root, (levels, leaf))``,
        when first asked for (:mod:`compiler.deferred_levels`): a solver reads most results once, often only
        their values, and building the level objects cost a fifth of a small kernel's call. An
        all-Dense result gives its ``dense_values`` too, which :meth:`to_numpy` reads as they are.

        >>> from compiler import dense
        >>> from compiler.binding import OutputPlan
        >>> t = OutputPlan("y", dense(1)).tensor((2,), {"y_val": np.ones(2)})
        >>> t.to_numpy(), "_root" in t.__dict__
        (array([1., 1.]), False)
        >>> t.levels[0].size, "_root" in t.__dict__
        (2, True)
        """
        self = cls.__new__(cls)
        self.name = name
        self._mode_order = mode_order
        self._shape = shape
        self._pending = (build, args)
        self._sealed = True   # (sealed when its levels are built or it is bound: compiler.sealing)
        self._format = fmt
        self._nnz = None
        if dense_values is not None:
            self._dense_values = dense_values
        return self

    # the levels of a deferred result, built when first read (they are set as plain attributes otherwise)
    _root, _levels, _leaf = PendingLevels(), PendingLevels(), PendingLevels()

    @property
    def _label(self) -> str:
        return self.name or "tensor"

    @property
    def root(self) -> Level:
        return self._root

    @property
    def levels(self) -> tuple[Level, ...]:
        """The non-leaf levels, outermost (storage level 0) first."""
        return self._levels

    @property
    def leaf(self) -> Level:
        return self._leaf

    @property
    def shape(self) -> tuple[int, ...]:
        """The logical shape, one extent per mode."""
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def mode_order(self) -> tuple[int, ...]:
        """``mode_order[k]`` is the mode stored by storage level ``k``."""
        return self._mode_order

    @property
    def storage_shape(self) -> tuple[int, ...]:
        return tuple(self._shape[m] for m in self._mode_order)

    @property
    def dtype(self) -> np.dtype:
        return self._leaf.dtype

    @property
    def fill(self):
        return self._leaf.fill

    @property
    def vals(self) -> np.ndarray:
        """The stored values (a new all-True array for a Pattern leaf)."""
        if isinstance(self._leaf, Pattern):
            return np.ones(self.nnz, dtype=bool)
        return self._leaf.vals

    @property
    def nnz(self) -> int:
        """How many values are stored (fill values stored explicitly included)."""
        if self._nnz is None:
            count = 1
            for lvl in self._levels:
                count = lvl.count(count)
            self._nnz = count
        return self._nnz

    @property
    def format(self) -> Format:
        """The data-free, hashable format (level specs, dtypes, fill, mode order)."""
        if self._format is None:
            self._format = Format(self._root.spec(), self._mode_order)
        return self._format

    @property
    def value_facts(self):
        """Whether the stored values hold NaN, +inf or -inf (:class:`compiler.values.Facts`),
        computed once and kept (again by :meth:`validate`, which a checked kernel calls): a kernel
        takes the sparse path of ``0 * y`` or ``inf + y`` only where the facts allow it.

        >>> str(Tensor.from_numpy(np.array([0.0, np.nan, 1.0]), "sparse_vector").value_facts)
        'may hold NaN'
        """
        if self.__dict__.get("_value_facts") is None:
            vals = self.vals
            from .recheck import array_facts   # (recheck builds its C check through the backend)
            self._value_facts = array_facts(vals[:self.nnz] if vals.ndim == 1 and len(vals) > self.nnz else vals)
        return self._value_facts

    @value_facts.setter
    def value_facts(self, facts) -> None:
        # (what a check of the stored values found them to hold: compiler.recheck's C check, which may find
        # them narrower than before, a NaN written over since)
        self._value_facts = facts

    def level_arrays(self) -> list[dict[str, np.ndarray]]:
        """The arrays of each storage level and then of the leaf."""
        return [lvl.arrays() for lvl in (*self._levels, self._leaf)]

    def seal(self) -> "Tensor":
        """Make the arrays of this tensor's levels (its index arrays, not its values) read-only, and
        every array they are views of (:mod:`compiler.sealing`): for a tensor whose arrays the compiler
        made and knows well formed, so kernels read them with no check per call. Returns the tensor.
        Over a scipy matrix's arrays (:meth:`from_scipy`, validated when built), the matrix's own index
        arrays become read-only, and calls given the matrix itself, or an array expression over it, no longer
        check them again either (its values stay writeable, and are looked at again where a kernel depends on
        them). A view of them taken before keeps its own flag: sealing them is the promise that nothing writes
        them.

        >>> t = Tensor.from_numpy(np.eye(2), "csr")     # (from_numpy seals its result)
        >>> t.levels[1].idx[0] = 1
        Traceback (most recent call last):
        ...
        ValueError: assignment destination is read-only
        """
        sealing.seal([a for lvl in self._levels for a in lvl.arrays().values()])
        self._sealed = True   # (its arrays are the compiler's: reuse() may make them writeable again)
        return self

    def copy(self) -> "Tensor":
        """This tensor with its own copy of every array, the index arrays sealed
        (:meth:`seal`): what a kernel reads with no check per call, however the arrays it was
        made from are written later (``numpy.ndarray.copy``'s name).

        >>> import scipy.sparse as sp
        >>> m = sp.csr_array(np.eye(2))
        >>> t = Tensor.from_scipy(m).copy()
        >>> np.shares_memory(t.levels[1].idx, m.indices), t.levels[1].idx.flags.writeable
        (False, False)
        """
        self.check_unsealed()   # (the arrays it copies are checked once more, as numpy would read them)
        child = None
        for lvl in reversed((*self._levels, self._leaf)):
            child = lvl.assembled({k: np.array(a, copy=True) for k, a in lvl.arrays().items()}, child)
        out = Tensor(child, shape=self.shape, mode_order=self._mode_order, name=self.name, check=False)
        out._value_facts = self.__dict__.get("_value_facts")
        return out.seal()

    def validate(self, as_name: str | None = None) -> "Tensor":
        """Check every level's arrays; raise :class:`FormatError` naming the first problem
        (and the tensor: ``as_name``, the argument a kernel was given it as, else its name)."""
        label = self._label if as_name is None or self.name == as_name else \
            (as_name if self.name is None else f"{as_name} (tensor {self.name})")
        count = 1
        for k, lvl in enumerate((*self._levels, self._leaf)):
            count = lvl.check(count, f"{label}: level {k} ({lvl.name})")
        self._nnz = count
        self._value_facts = None   # (the values may have changed in place since they were taken)
        return self

    def __repr__(self) -> str:
        fmt = self.format
        head = f"{self.name}, " if self.name else ""
        short = f"{fmt.shorthand}: " if fmt.shorthand else ""
        try:
            rest = f"dtype={self.dtype.name}, fill={self.fill!r}, nnz={self.nnz}"
        except UsageError as e:   # (its arrays were handed to a later call: compiler.reused_outputs)
            rest = f"unreadable: {e}"
        return f"Tensor({head}{short}{fmt}, shape={self.shape}, {rest})"

    # --- enumeration -------------------------------------------------------------------------

    def check_unsealed(self) -> "Tensor":
        """Check this tensor's index arrays again where they are not sealed (:mod:`compiler.sealing`:
        shared with their owner, or made writeable again), before numpy or scipy reads them: a
        FormatError naming the level and array, not an IndexError or a huge allocation from a
        ``pos`` written out of range. Returns the tensor.

        >>> t = Tensor.from_numpy(np.eye(2), "csr")
        >>> t.levels[1].pos.flags.writeable = True; t.levels[1].pos[1] = 9
        >>> t.to_numpy()
        Traceback (most recent call last):
        ...
        compiler.errors.FormatError: tensor: level 1 (SparseList): pos is not non-decreasing: pos[1]=9 > pos[2]=2
        """
        if not sealing.sealed(sealing.index_writers(self)):
            from .recheck import check_again   # (recheck builds its C check through the backend)
            check_again(self)
        return self

    def _entries(self) -> tuple[list[np.ndarray], np.ndarray]:
        """Every stored entry: its coordinates in storage order, and its value."""
        self.check_unsealed()
        parents = np.zeros(1, dtype=POS)
        coords: list[np.ndarray] = []
        for lvl in self._levels:
            pix, cs, parents = lvl.children(parents)
            coords = [c[pix] for c in coords] + list(cs)
        return coords, self._leaf.values_at(parents)

    def _all_dense(self) -> bool:
        # (the tensor's levels, not its format's specs: no spec is built on a call's path)
        return all(lvl.located_by_coordinate for lvl in self._levels)

    def __array__(self, dtype=None, copy=None):
        """``numpy.asarray(tensor)``: :meth:`to_numpy` (a new array, so ``copy=False`` cannot be kept).

        >>> np.asarray(Tensor.from_numpy(np.array([1.0, 0, 2]), "sparse"), dtype=np.float32)
        array([1., 0., 2.], dtype=float32)
        """
        if copy is False:
            raise ValueError(f"{self._label}: numpy.asarray(..., copy=False) cannot hold: a Tensor's dense "
                             "array is made from its levels (to_numpy() makes it; .vals is its stored values)")
        out = self.to_numpy()
        return out if dtype is None else out.astype(dtype, copy=False)

    def to_numpy(self) -> np.ndarray:
        """A new dense array: stored values where stored, the fill everywhere else.

        >>> Tensor.from_numpy(np.array([1.0, 0, 2]), "sparse", fill=0.0).to_numpy()
        array([1., 0., 2.])
        """
        order = self._mode_order
        vals = self.__dict__.get("_dense_values")   # (a kernel's all-Dense result, its levels not built)
        if vals is not None or self._all_dense():
            vals = self.vals if vals is None else vals
            if order == _IN_ORDER.get(len(order)):   # (an argsort costs 2 us, a genexpr 0.5: a small result's call)
                return vals.reshape(self._shape).copy()
            return vals.reshape(self.storage_shape).transpose(tuple(np.argsort(order))).copy()
        out = _dense_array(self.shape, self.fill, self.dtype, f"{self._label}: to_numpy",
                           "to_coords() gives the stored entries")
        coords, vals = self._entries()
        index = [None] * self.ndim
        for k, m in enumerate(order):
            index[m] = coords[k]
        out[tuple(index)] = vals
        return out

    # --- constructors -------------------------------------------------------------------------

    @classmethod
    def from_numpy(cls, arr, format=None, fill=None, dtype=None, name: str | None = None) -> "Tensor":
        """Store a numpy array (or anything ``np.asarray`` takes) in any format.

        ``format`` is a shorthand string ("dense", "csr", "csc", "coo", "dcsr", "csf",
        "sparse"/"sv"), a level spec or a :class:`Format`; by default CSR for a matrix, a
        sparse vector for a vector, CSF for more dimensions (:data:`DEFAULT_FORMATS`). ``fill`` defaults to the
        spec's Element fill for specs and to 0 (``False`` for bool) for strings;
        ``dtype`` to the spec's dtype, else the array's. Sparse levels store only
        entries that differ from the fill (a NaN entry under a NaN fill is fill);
        dense levels store everything.

        >>> t = Tensor.from_numpy([[1, 1], [1, 7]], "dcsr", fill=1)
        >>> t.nnz, t.vals.tolist(), t.fill, t.dtype.name
        (1, [7], 1, 'int64')
        >>> print(Tensor.from_numpy([0.0, 2.5, 0.0]).format, Tensor.from_numpy(np.eye(2)).format)
        SparseList(Element(0.0)) Dense(SparseList(Element(0.0)))
        """
        try:
            arr = np.asarray(arr)
        except ValueError as e:   # (nested lists of different lengths)
            raise ShapeError(f"{name or 'tensor'}: not an array of one shape ({e})") from None
        if format is None:
            format = DEFAULT_FORMATS.get(arr.ndim, "csf")
        fmt = _target_format(format, arr.ndim, arr.dtype, fill, dtype, name or "tensor")
        if fmt.ndim != arr.ndim:
            raise ShapeError(f"{name or 'tensor'}: format {fmt} stores {fmt.ndim} modes but the array "
                             f"has {arr.ndim} dimension(s), shape {arr.shape}")
        leaf = fmt.leaf
        arr = cast_values(arr, np.dtype(leaf.dtype), name or "tensor")
        stored = arr.transpose(fmt.mode_order)  # axes in storage order
        if fmt.is_dense:
            # dense levels store everything, in row-major storage order
            n = stored.size
            root = leaf.from_entries(n, np.arange(n, dtype=POS), [], stored.reshape(-1), [])
            for lvl, size in zip(reversed(fmt.levels), reversed(stored.shape)):
                root = replace(lvl, child=root, size=size)   # (a subclass stays itself)
        else:
            mask = ~is_fill(stored, leaf.fill)
            coords = [c.astype(POS, copy=False) for c in np.nonzero(mask)]  # row-major: sorted
            vals = stored[mask]
            root = from_entries(fmt, coords, vals, list(stored.shape), name or "tensor")
        return cls(root, shape=arr.shape, mode_order=fmt.mode_order, name=name, check=False).seal()

    @classmethod
    def from_coords(cls, coords, values, shape, format="coo", fill=None, dtype=None,
                    name: str | None = None) -> "Tensor":
        """A tensor from its entries, without building anything of the whole tensor's size:
        ``coords[m][e]`` is entry ``e``'s coordinate in mode ``m`` and ``values[e]`` its value,
        as in pydata/sparse's ``COO(coords, data, shape)``. Entries come in any order; duplicates
        are summed (or-ed for bool), as scipy.sparse and pydata/sparse do; an entry equal to the
        fill is not stored. ``format``, ``fill`` and ``dtype`` are as in :meth:`from_numpy`.

        >>> t = Tensor.from_coords([[2, 0, 0], [0, 1, 1]], [2.0, 1.0, 3.0], shape=(3, 2), format="csr")
        >>> t.to_numpy().tolist(), t.nnz
        ([[0.0, 4.0], [0.0, 0.0], [2.0, 0.0]], 2)
        >>> Tensor.from_coords([[0], [5]], [1.0], shape=(3, 2), name="A")
        Traceback (most recent call last):
        ...
        compiler.errors.ShapeError: A: entry 0 has coordinate 5 in mode 1, outside 0..1 (shape (3, 2))
        """
        label = name or "tensor"
        shape = _checked_shape(shape, label)
        values = np.asarray(values)
        if values.ndim != 1:
            raise ShapeError(f"{label}: values must be 1-D, one per entry; got shape {values.shape}")
        try:
            coords = np.asarray(coords)
        except ValueError:   # (rows of different lengths)
            raise ShapeError(f"{label}: coords must have one row per mode, each as long as values") from None
        if coords.size == 0:
            coords = coords.reshape(len(shape), 0).astype(POS)
        if coords.ndim != 2 or coords.shape != (len(shape), len(values)):
            raise ShapeError(f"{label}: coords must have shape (modes, entries) = ({len(shape)}, {len(values)}) "
                             f"for shape {shape} and {len(values)} values; got {coords.shape}")
        if coords.dtype.kind not in "iu":
            raise DTypeError(f"{label}: coordinates must be integers, got {coords.dtype.name}")
        for m, (c, n) in enumerate(zip(coords, shape)):
            bad = np.flatnonzero((c < 0) | (c >= n))
            if len(bad):
                raise ShapeError(f"{label}: entry {bad[0]} has coordinate {c[bad[0]]} in mode {m}, outside "
                                 f"0..{n - 1} (shape {shape})")
        fmt = _target_format(format, len(shape), values.dtype, fill, dtype, label)
        if fmt.ndim != len(shape):
            raise ShapeError(f"{label}: format {fmt} stores {fmt.ndim} modes but shape {shape} has {len(shape)}")
        dt = value_dtype(fmt.dtype)
        vals = cast_values(values, dt, label)
        # summed in storage order, which _from_logical_entries then finds sorted (one sort, not two)
        order = fmt.mode_order
        stored, vals = sum_duplicates([coords[m].astype(POS) for m in order], vals, [shape[m] for m in order],
                                        label, order)
        logical = [stored[order.index(m)] for m in range(len(shape))]
        if fmt.is_dense:
            arr = _dense_array(shape, fmt.fill, dt, f"{label}: format {fmt.shorthand or fmt}",
                               "a format with a sparse level stores only the entries")
            arr[tuple(logical)] = vals
            return cls.from_numpy(arr, fmt, name=name)
        keep = ~is_fill(vals, fmt.fill)
        return cls._from_logical_entries(fmt, shape, [c[keep] for c in logical], vals[keep], name)

    def to_coords(self) -> tuple[np.ndarray, np.ndarray]:
        """The stored entries as (coords, values): ``coords`` has one row per logical mode, the
        entries come in storage order; :meth:`from_coords` takes them back.

        >>> c, v = Tensor.from_numpy(np.array([[0, 1.0], [2.0, 0]]), "csc").to_coords()
        >>> c.tolist(), v.tolist()
        ([[1, 0], [0, 1]], [2.0, 1.0])
        """
        storage, vals = self._entries()
        coords = np.zeros((self.ndim, len(vals)), dtype=POS)
        for k, m in enumerate(self._mode_order):
            coords[m] = storage[k]
        return coords, vals.copy()

    @classmethod
    def from_scipy(cls, m, format=None, fill=0, name: str | None = None, *, copy: bool = False) -> "Tensor":
        """Wrap a scipy.sparse matrix or array, sharing its arrays when the layout matches.

        CSR into csr and CSC into csc share ``indptr``/``indices``/``data``; canonical COO
        into coo shares ``row``/``col``/``data``. Non-canonical input (unsorted or
        duplicate indices) is canonicalized on a copy. Other formats are converted.
        ``format`` defaults to the matrix's own format (csr for the other scipy formats).
        Unstored entries take the value ``fill`` (scipy's implicit value is 0).

        Shared arrays stay the matrix's, which may write them in place: each kernel call checks
        them again (one pass over them in C, :mod:`compiler.recheck`). ``copy=True`` makes the
        tensor's own arrays, sealed read-only (:mod:`compiler.sealing`): one copy now, no check
        per call (for a matrix read by many calls). ``Tensor.from_scipy(m).seal()`` seals the matrix's own
        index arrays instead, with no copy (:meth:`seal`).

        >>> import scipy.sparse as sp
        >>> m = sp.csr_array(np.array([[0, 2.0], [3.0, 0]]))
        >>> t = Tensor.from_scipy(m)
        >>> t.format.shorthand, np.shares_memory(t.levels[1].idx, m.indices)
        ('csr', True)
        >>> own = Tensor.from_scipy(m, copy=True)
        >>> np.shares_memory(own.levels[1].idx, m.indices), own.levels[1].idx.flags.writeable
        (False, False)
        """
        import scipy.sparse as sp

        if not sp.issparse(m):
            raise UsageError(f"from_scipy expects a scipy.sparse matrix or array, got {type(m).__name__}")
        if copy:
            # (the copy's arrays are no one else's: sealed, as the compiler's own)
            return cls.from_scipy(m.copy(), format, fill, name).seal()
        label = name or "tensor"
        if len(m.shape) != 2:
            raise ShapeError(f"{label}: from_scipy handles 2-D sparse matrices, got shape {m.shape}")
        shared = cls._shared_compressed(m, format, fill, name)
        if shared is not None:
            return shared
        check_scipy_arrays(m, label)   # (scipy's own routines below trust them)
        dt = value_dtype(m.dtype)
        if m.format not in ("csr", "csc", "coo"):
            m = m.tocsr()
        wide = lambda a: a if a.dtype.name in ("int32", "int64") else a.astype(np.int64)  # noqa: E731
        if m.format == "coo" and not all(a.dtype.name in ("int32", "int64") for a in (m.row, m.col)):
            m = type(m)((m.data, (wide(m.row), wide(m.col))), shape=m.shape)   # (int8, uint32: scipy takes them)
        elif m.format != "coo" and not all(a.dtype.name in ("int32", "int64") for a in (m.indptr, m.indices)):
            m = type(m)((m.data, wide(m.indices), wide(m.indptr)), shape=m.shape)
        if m.format == "coo":
            itype = np.result_type(m.row.dtype, m.col.dtype)
        else:
            itype = np.result_type(m.indptr.dtype, m.indices.dtype)
        itype = itype if itype.name in ("int32", "int64") else np.dtype("int64")
        target = m.format if format is None else format
        if isinstance(target, str):
            fmt = parse_format(target, ndim=2, fill=normalize_fill(fill, dt), dtype=dt, index_dtype=itype)
        else:
            fmt = parse_format(target)
            if fmt.ndim != 2:
                raise ShapeError(f"{label}: format {fmt} stores {fmt.ndim} modes; a scipy matrix has 2")
            if isinstance(fmt.leaf, Element):
                ldt = fmt.leaf.dtype if fmt.leaf.dtype is not None else dt
                fmt = Format(replace_leaf(fmt.root, Element(normalize_fill(fill, ldt), dtype=ldt)),
                             fmt.mode_order)
        short = fmt.shorthand
        leaf = fmt.leaf
        if short in ("csr", "csc") and isinstance(leaf, Element):
            if m.format != short:   # (scipy writes the whole row array: refused first if it cannot fit)
                require_dense_prefix(fmt, m.shape if short == "csr" else m.shape[::-1], label)
            m = m.asformat(short)
            if not m.has_canonical_format:
                m = m.copy()
                m.sum_duplicates()
            inner = fmt.levels[1]
            outer_size, inner_size = m.shape if short == "csr" else m.shape[::-1]
            root = Dense(SparseList(Element(leaf.fill, cast_values(m.data, leaf.dtype, label), leaf.dtype), inner_size,
                                    m.indptr, m.indices, inner.index_dtype), outer_size)
            return cls(root, shape=m.shape, mode_order=fmt.mode_order, name=name)
        row, col, data = canonical_coo(m.tocoo())
        if short == "coo" and isinstance(leaf, Element):
            idt = fmt.levels[0].index_dtype
            root = SparseCOO(2, Element(leaf.fill, cast_values(data, leaf.dtype, label), leaf.dtype), m.shape,
                             np.array([0, len(data)], dtype=idt), (row, col), idt)
            return cls(root, shape=m.shape, mode_order=fmt.mode_order, name=name)
        logical = [row.astype(POS), col.astype(POS)]
        return cls._from_logical_entries(fmt, tuple(m.shape), logical, data, name)

    @classmethod
    def _shared_compressed(cls, m, format, fill, name) -> "Tensor | None":
        """A CSR or CSC matrix as a tensor of its own format over its arrays, checked by one pass in C
        (:func:`compiler.recheck.checker`: every rule of :meth:`validate`, and the facts of its values)
        where numpy's checks, scipy's look at its order and the tensor's validation took four; None
        where that check does not apply or fails (from_scipy's own way then says what is wrong, or
        sorts a copy).

        >>> import scipy.sparse as sp
        >>> m = sp.csr_array(np.array([[0, 2.0], [3.0, np.nan]]))
        >>> t = Tensor._shared_compressed(m, None, 0, "A")
        >>> np.shares_memory(t.levels[1].idx, m.indices), str(t.value_facts)
        (True, 'may hold NaN')
        >>> m.indices[0] = 5
        >>> Tensor._shared_compressed(m, None, 0, "A") is None
        True
        """
        short = m.format
        if short not in ("csr", "csc") or (format is not None and format != short) or fill != 0:
            return None
        indptr, indices, data = m.indptr, m.indices, m.data
        if not (indptr.__class__ is indices.__class__ is data.__class__ is np.ndarray and indptr.dtype == indices.dtype
                and indptr.dtype.name in ("int32", "int64") and indptr.ndim == indices.ndim == data.ndim == 1
                and indptr.flags.c_contiguous and indices.flags.c_contiguous and data.flags.c_contiguous
                and len(indices) == len(data)):
            return None
        dt = value_dtype(m.dtype)
        if data.dtype != dt:
            return None
        outer, inner = m.shape if short == "csr" else m.shape[::-1]
        if len(indptr) != outer + 1:
            return None
        root = Dense(SparseList(Element(normalize_fill(0, dt), data, dt), inner, indptr, indices, indptr.dtype), outer)
        t = cls(root, shape=m.shape, mode_order=(0, 1) if short == "csr" else (1, 0), name=name, check=False)
        from .recheck import kept_checker   # (recheck builds its C check through the backend)
        check = kept_checker(t)
        held = check() if check is not None else None
        if held is None:
            return None
        t._value_facts = held
        return t

    @classmethod
    def _from_logical_entries(cls, fmt: Format, shape, logical, vals, name) -> "Tensor":
        """Build ``fmt`` from unique entries in logical coordinates (any order)."""
        coords = [logical[m] for m in fmt.mode_order]
        check_index_room(fmt, coords, len(vals), name or "tensor")
        sizes = [shape[m] for m in fmt.mode_order]
        order = storage_sort(coords, sizes)
        if order is not None:
            coords = [c[order] for c in coords]
            vals = vals[order]
        leaf = fmt.leaf
        vals = cast_values(vals, leaf.dtype if leaf.dtype is not None else vals.dtype, name or "tensor")
        root = from_entries(fmt, coords, vals, sizes, name or "tensor")
        return cls(root, shape=shape, mode_order=fmt.mode_order, name=name, check=False).seal()

    # --- conversions ------------------------------------------------------------------------------

    def asformat(self, format) -> "Tensor":
        """This tensor in another format (shorthand string, level spec or Format).

        A string keeps this tensor's dtype and fill; a spec or Format may change them
        (a new fill goes through a dense array, so it costs the full size).

        >>> t = Tensor.from_numpy(np.eye(3), "csr").asformat("csc")
        >>> t.mode_order, t.nnz
        ((1, 0), 3)
        """
        if isinstance(format, str):
            fmt = parse_format(format, ndim=self.ndim, fill=self.fill, dtype=self.dtype)
        else:
            fmt = parse_format(format)
            if isinstance(fmt.leaf, Element):
                dt = fmt.leaf.dtype if fmt.leaf.dtype is not None else self.dtype
                fmt = Format(replace_leaf(fmt.root, Element(fmt.leaf.fill, dtype=dt)), fmt.mode_order)
        if fmt.ndim != self.ndim:
            raise ShapeError(f"{self._label}: format {fmt} stores {fmt.ndim} modes but the tensor has "
                             f"{self.ndim}, shape {self.shape}")
        if not _same_fill(self.fill, fmt.fill):
            return Tensor.from_numpy(self.to_numpy(), fmt, name=self.name)
        self.check_unsealed()   # (before scipy's conversion reads them)
        swapped = self._swapped_compressed(fmt)
        if swapped is not None:
            return swapped
        storage, vals = self._entries()
        logical = [None] * self.ndim
        for k, m in enumerate(self._mode_order):
            logical[m] = storage[k]
        vals = cast_values(vals, fmt.dtype, self._label)
        keep = ~is_fill(vals, fmt.fill)
        if not (self._all_dense() and fmt.is_dense):
            logical = [c[keep] for c in logical]
            vals = vals[keep]
        return Tensor._from_logical_entries(fmt, self.shape, logical, vals, self.name)

    def _swapped_compressed(self, fmt: Format) -> "Tensor | None":
        """CSR as CSC or CSC as CSR (``fmt``), by scipy's counting sort (O(nnz + n)): the
        stored entries, each once, transposed in storage; None for any other conversion.
        A kernel that reads a matrix in the other order converts it through here."""
        if not ({self.format.shorthand, fmt.shorthand} == {"csr", "csc"} and isinstance(fmt.leaf, Element)
                and self.dtype.kind in "biuf"):
            return None
        import scipy.sparse as sp

        inner = self.levels[1]
        n0, n1 = self.storage_shape
        idt = np.dtype(fmt.levels[1].index_dtype or "int64")
        # before converting: scipy's pos of a 1 x 2^31 CSR as CSC is 16 GB, for a result refused anyway
        if max(n0, n1, len(self.vals)) > np.iinfo(idt).max:
            return None   # (the general way says which index does not fit)
        try:
            moved = sp.csr_array((self.vals, inner.idx, inner.pos), shape=(n0, n1)).tocsc()
        except (ValueError, TypeError):   # (a dtype or size scipy does not take: the general way)
            return None
        dt = fmt.leaf.dtype if fmt.leaf.dtype is not None else self.dtype
        root = Dense(SparseList(Element(fmt.leaf.fill, cast_values(moved.data, dt, self._label), dt), n0,
                                moved.indptr.astype(idt, copy=False), moved.indices.astype(idt, copy=False), idt), n1)
        return Tensor(root, shape=self.shape, mode_order=fmt.mode_order, name=self.name, check=False).seal()

    def to_scipy(self, format: str = "csr", *, matrix: bool = False):
        """A scipy.sparse array (``matrix=True``: matrix) in "csr", "csc" or "coo".

        Shares this tensor's arrays when the storage matches (csr from CSR, csc from
        CSC, coo from a 2-D SparseCOO); otherwise converts, dropping stored zeros.
        The fill must be 0, scipy's implicit value.

        >>> m = Tensor.from_numpy(np.eye(2), "csc").to_scipy("csc")
        >>> type(m).__name__, m.nnz
        ('csc_array', 2)
        """
        import scipy.sparse as sp

        if self.ndim != 2:
            raise ShapeError(f"{self._label}: to_scipy needs a 2-D tensor, got shape {self.shape}")
        if not (self.fill == 0):
            raise FormatError(f"{self._label}: to_scipy needs fill 0 (scipy.sparse's implicit value), but the "
                              f"fill is {self.fill!r}; use to_numpy(), or from_numpy(..., fill=0) first")
        format = format.lower() if isinstance(format, str) else format
        kinds = {"csr": (sp.csr_array, sp.csr_matrix), "csc": (sp.csc_array, sp.csc_matrix),
                 "coo": (sp.coo_array, sp.coo_matrix)}
        if format not in kinds:
            raise FormatError(f"to_scipy makes csr, csc or coo, not {format!r}")
        klass = kinds[format][1 if matrix else 0]
        vals = self.vals
        short = self.format.shorthand
        if short == format and format in ("csr", "csc"):
            lvl = self._levels[1]
            out = klass(self.shape, dtype=vals.dtype)
            # assign the arrays directly: the constructor may narrow index dtypes (a copy). They are the
            # matrix's too now: scipy's in-place methods (sort_indices, eliminate_zeros) write them, so they
            # are writeable again, and this tensor's calls check them again, as from_scipy's (compiler.sealing)
            sealing.unseal([lvl.pos, lvl.idx])
            out.indptr, out.indices, out.data = lvl.pos, lvl.idx, vals
            out.has_sorted_indices = True
            return out
        if short == format == "coo":
            lvl = self._levels[0]
            out = klass(self.shape, dtype=vals.dtype)
            sealing.unseal([lvl.idx[0], lvl.idx[1]])   # (the matrix's too: as above)
            if hasattr(out, "coords"):  # scipy >= 1.13; the row/col setters there cast to int32
                out.coords = (lvl.idx[0], lvl.idx[1])
            else:
                out.row, out.col = lvl.idx[0], lvl.idx[1]
            out.data = vals
            out.has_canonical_format = True
            return out
        storage, vals = self._entries()
        logical = [None, None]
        for k, m in enumerate(self._mode_order):
            logical[m] = storage[k]
        keep = vals != 0
        coo = sp.coo_array((vals[keep], (logical[0][keep], logical[1][keep])), shape=self.shape)
        out = coo.asformat(format)
        return klass(out) if matrix else out

    # --- drawings -------------------------------------------------------------------------------

    def fiber_tree_dot(self, name: str | None = None, max_children: int = 8) -> str:
        """Graphviz DOT of the coordinate tree; see :mod:`compiler.fibertree`."""
        from .fibertree import fiber_tree_dot
        return fiber_tree_dot(self, name or self._label, max_children=max_children)

    def fiber_tree_text(self, name: str | None = None, max_children: int = 8) -> str:
        """The coordinate tree as indented text; see :mod:`compiler.fibertree`."""
        from .fibertree import fiber_tree_text
        return fiber_tree_text(self, name or self._label, max_children=max_children)


#: the format :meth:`Tensor.from_numpy` stores an array of each number of dimensions in when given none (CSF from 3)
DEFAULT_FORMATS = {0: "dense", 1: "sparse", 2: "csr"}


def _target_format(format, ndim: int, given, fill, dtype, label: str) -> Format:
    """The format a constructor builds: ``format`` (a shorthand, a spec or a Format) with the
    value dtype ``dtype`` (else the format's, else ``given``, the data's) and the fill ``fill``
    (else the format's, else 0 or False). Errors name the tensor (``label``)."""
    try:
        return _resolve_format(format, ndim, given, fill, dtype)
    except DTypeError as e:
        raise DTypeError(f"{label}: {e}") from None


def _resolve_format(format, ndim: int, given, fill, dtype) -> Format:
    if isinstance(format, str):
        dt = value_dtype(given if dtype is None else dtype)
        f = (False if dt.kind == "b" else 0) if fill is None else fill
        return parse_format(format, ndim=ndim, fill=normalize_fill(f, dt), dtype=dt)
    fmt = parse_format(format)
    leaf = fmt.leaf
    if isinstance(leaf, Pattern):
        if dtype is not None and value_dtype(dtype).kind != "b":
            raise DTypeError(f"a Pattern leaf holds bool values, not {np.dtype(dtype).name}")
        if fill is not None and fill is not False and fill != 0:
            raise FormatError(f"a Pattern leaf has fill False, not {fill!r}")
        return fmt
    dt = value_dtype(dtype if dtype is not None else leaf.dtype if leaf.dtype is not None else given)
    f = leaf.fill if fill is None else fill
    return Format(replace_leaf(fmt.root, Element(normalize_fill(f, dt), dtype=dt)), fmt.mode_order)


def _dense_array(shape, fill, dt, what: str, hint: str) -> np.ndarray:
    """``np.full(shape, fill)``, or a MemoryError saying ``what`` needed it and ``hint``.

    >>> _dense_array((10**12, 10**12), 0.0, np.float64, "A: to_numpy", "use to_coords()")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    MemoryError: A: to_numpy: a dense array of shape (1000000000000, 1000000000000) needs 7.1e+09 PB, more than ...
    """
    size = math.prod(shape)
    memory.require(size * np.dtype(dt).itemsize, f"{what}: a dense array of shape {tuple(shape)}", hint)
    try:
        return np.full(shape, fill, dtype=dt)
    except (MemoryError, ValueError):   # (numpy: too large for memory, or for an index)
        raise MemoryError(f"{what} needs a dense array of shape {tuple(shape)}, "
                          f"{'10^%d' % round(math.log10(size)) if size >= 10**9 else size} elements; "
                          f"{hint}") from None


def _checked_shape(shape, label: str) -> tuple[int, ...]:
    """``shape`` as a tuple of non-negative ints, or a ShapeError naming the tensor."""
    dims = tuple(shape) if np.iterable(shape) and not isinstance(shape, str) else (shape,)
    if not all(is_integer(n) and 0 <= n <= LARGEST_EXTENT for n in dims):
        raise ShapeError(f"{label}: shape must be a tuple of integers from 0 to 2^63 - 1, got {shape!r}")
    return tuple(int(n) for n in dims)
