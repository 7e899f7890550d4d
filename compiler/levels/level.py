"""The level abstraction shared by every level format, and helpers the formats share.

A tensor is a tree of levels, outermost first, ending in a leaf (:class:`Element`
or :class:`Pattern`). Each level stores one mode (SparseCOO stores several) and
hands out sub-fibers by *position*: the root fiber is position 0 of the outermost
level, and the leaf holds one value per position of the innermost level.

A level built without arrays is a *format spec*; ``Dense(SparseList(Element(0.0)))``
is CSR. Filled with arrays it is a *stored level*, as in Finch.

Every level implements:

- ``name`` (Finch's name), ``nmodes``, ``child``, ``is_leaf``;
- the TACO properties ``ordered, unique, full, branchless, compact, locatable``;
- how the lattice strategy reads it: ``compressed, crd_array, hashed, child_array,
  located_by_coordinate`` (strategies ask these; they never test a level's name);
- what a kernel writing it may do: ``random_write, slot_per_coordinate, at_most_one,
  starts_array, appends_nested, inserts_nested, locates_under_appended, marks_slots, keys_in_table,
  appends_coordinates, appends_runs, appends_band, appends_blocks`` (strategies ask these; they never
  test a level's name);
- which of its arrays a call allocates for a kernel writing it, and how long each is
  (``allocated_arrays()``), and which hold positions (``position_arrays()``): the runtime asks
  these, never an array's name;
- ``arrays()``, ``format_key()``, ``spec()``, ``spec_str()``, ``count(parent_count)``;
- ``children(parents)``: the stored children of a vector of parent positions,
  as ``(parent_index, coords, child_positions)``, used to enumerate a tensor;
- ``fiber(p, limit)``: the first ``limit`` children of one fiber (for drawings);
- ``from_entries(...)``: build a stored level (and its children) from
  lexicographically sorted, unique coordinates grouped by parent position;
- ``check(parent_count, where)``: validate the arrays, return the child count.
"""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import numpy as np

from ..dtypes import index_dtype as _index_dtype
from ..dtypes import LARGEST_EXTENT, cast_values, is_integer, value_dtype
from ..errors import DTypeError, FormatError

#: the integer type used for positions while converting (wide enough for any level)
POS = np.int64


@dataclasses.dataclass(frozen=True)
class ArrayLength:
    """How long an array a kernel writes in place is, from its level's parent positions and extent,
    known before the call (:meth:`Level.allocated_arrays`): one entry per parent position, times the
    level's extent where ``per_coordinate`` (a slot per coordinate), plus ``extra`` (a starts array's
    one more); ``kept``: an update of a given output starts from the given tensor's array, not zeros.

    >>> ArrayLength(extra=1).length(parents=3, size=5), ArrayLength(per_coordinate=True).length(3, 5)
    (4, 15)
    >>> ArrayLength(extra=1).expression("n0 * n1", "n2"), ArrayLength(per_coordinate=True).expression("", "n0")
    ('n0 * n1 + 1', 'n0')
    """

    per_coordinate: bool = False
    extra: int = 0
    kept: bool = False

    def __repr__(self) -> str:   # (the fields set, as the doctests show them)
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)
                 if getattr(self, f.name) != f.default]
        return f"ArrayLength({', '.join(shown)})"

    def length(self, parents: int, size: int) -> int:
        """The length under ``parents`` parent positions, the level's extent ``size``."""
        return parents * (size if self.per_coordinate else 1) + self.extra

    def expression(self, parents: str, size: str) -> str:
        """:meth:`length` as a Python expression of the expressions ``parents`` (``""``: one
        position, the level outermost) and ``size``, for generated code."""
        factors = [f for f in (parents, size if self.per_coordinate else "") if f]
        if not factors:
            return str(1 + self.extra)
        product = " * ".join(factors)
        return f"{product} + {self.extra}" if self.extra else product


class Level:
    """Base class of all level formats; see the module docstring."""

    name: ClassVar[str] = "Level"
    is_leaf: ClassVar[bool] = False
    # TACO level properties (see notes/taco.md section 1.2)
    ordered: ClassVar[bool] = True
    unique: ClassVar[bool] = True
    full: ClassVar[bool] = False
    branchless: ClassVar[bool] = False
    compact: ClassVar[bool] = True
    locatable: ClassVar[bool] = False
    # What a kernel writing this level may do (strategies ask these, never a level's name):
    #: writes may come in any coordinate order (a slot per coordinate, or a table to probe)
    random_write: ClassVar[bool] = False
    #: a slot per coordinate below each parent, so an output's values are written in place:
    #: it need not be assembled, starts from the values given at the call, and a slot may be
    #: overwritten with the fill
    slot_per_coordinate: ClassVar[bool] = False
    #: each fiber holds at most one entry (or run); a kernel may write more, so its output is checked
    at_most_one: ClassVar[bool] = False
    #: the array of fiber starts (one more than the parent's positions) a sparse output's freeze carries forward
    starts_array: ClassVar[str] = "pos"
    #: appended in order under a parent that is itself appended (DCSR's, CSF's lower levels): a
    #: fiber starts where the one before it ended, so its starts array grows with the parent's entries
    appends_nested: ClassVar[bool] = False
    #: written at random under a parent that is itself written so (a hash under a hash): its fibers
    #: are keyed by the parent's positions, in whatever order the parent makes them
    inserts_nested: ClassVar[bool] = False
    #: a fiber is ``size`` slots located from its parent's position, so under a parent that is
    #: appended (TACO's ``{sparse, dense}``: a SparseList of dense rows) it is assembled as the
    #: parent appends: the parent's next position gets a block of slots holding the fill, the
    #: kernel stores into it, and the parent keeps the coordinate if a slot got another value
    locates_under_appended: ClassVar[bool] = False
    #: appended in order as a SparseList is (``pos``, :attr:`crd_array`) while each coordinate's
    #: slot ``parent * size + i`` holds its child and a mark in :attr:`mark_array` (TACO's insert into
    #: a level with a slot per coordinate): under levels located by coordinate, an output's entry is
    #: appended, marked and stored in its slot, the slots starting at the fill
    marks_slots: ClassVar[bool] = False
    #: the array of marks of :attr:`marks_slots` (one per slot)
    mark_array: ClassVar[str | None] = None
    #: ``(key array, table array)`` of a level appended in order as a SparseList is (``pos``,
    #: :attr:`crd_array`, each entry its own child in :attr:`child_array`) that also keeps each
    #: entry's key ``parent * size + i`` and a table of the keys, built when the level is finished
    #: by inserting them in order (TACO's insert into a hashed level); None for other levels
    keys_in_table: ClassVar[tuple[str, str] | None] = None
    #: appended in storage order as a sorted list of coordinates (TACO's append into a compressed
    #: level): ``pos`` and :attr:`crd_array`, each entry its own child; where the level holds
    #: :attr:`at_most_one` entry per fiber, a kernel's output is checked after each call
    appends_coordinates: ClassVar[bool] = False
    #: can be written out of its storage order by a two-phase scatter, as the innermost level under
    #: levels located by coordinate: each fiber's entries counted, their prefix sum its starts
    #: (:attr:`starts_array`), then each entry stored at its fiber's next slot in :attr:`crd_array`,
    #: each entry its own child (scipy's ``tocsc``: a sorted list of coordinates per fiber)
    scatters: ClassVar[bool] = False
    #: appended in storage order as runs of equal values, one child per run (TACO's append into a
    #: run-length level): ``pos``, each run's exclusive end in :attr:`run_end_array` and, for a level
    #: that is not full, its start in :attr:`run_start_array`. An entry at the coordinate where the
    #: fiber's last run ends, of that run's value (as ``==`` compares, NaN equal to NaN: a NaN extends
    #: a run of NaN, a -0.0 extends a 0.0's), extends the run; any other starts one. A full level
    #: (RunList) covers its fibers with runs: a gap between entries, and a fiber's end, is a run of the fill
    appends_runs: ClassVar[bool] = False
    #: the array of the runs' first coordinates of :attr:`appends_runs` (None: a run starts where the
    #: one before it in its fiber ends)
    run_start_array: ClassVar[str | None] = None
    #: the array of the runs' exclusive ends of :attr:`appends_runs`
    run_end_array: ClassVar[str] = "right"
    #: the array of band ends of a level that stores one range of coordinates per fiber, from its
    #: first entry to its last, the coordinates between holding the fill too (its fibers' children
    #: start at :attr:`starts_array`): an output's entries are appended in order, the gap before each
    #: filled with the fill, and the band ends after the last (SparseBand); None for other levels
    appends_band: ClassVar[str | None] = None
    #: ``(block ends, block starts)`` of a level that stores each fiber as blocks of consecutive
    #: coordinates (each fiber's blocks start at :attr:`starts_array`): an output's entries are
    #: appended in order, one coordinate after the last extending its block and a gap starting a
    #: new one (SparseBlockList); None for other levels
    appends_blocks: ClassVar[tuple[str, str] | None] = None
    # How the lattice strategy reads the level (TACO's mode capabilities, notes/taco.md §1.2): its
    # iterators are built from these, so a subclass reads as its base does.
    #: TACO's compressed level: position iteration over one sorted, unique list of coordinates per
    #: fiber (``pos[p]`` to ``pos[p + 1]`` in :attr:`crd_array`), each position its own child, so a
    #: loop over it may gallop, bisect it for a diagonal's coordinate and walk its positions flat
    compressed: ClassVar[bool] = False
    #: the array of coordinates that position iteration reads (TACO's crd; a byte map's sorted list)
    crd_array: ClassVar[str] = "idx"
    #: TACO's hashed level: a locate probes a table of keys ``parent * size + i``; iterated, the
    #: level is read through its sorted view
    hashed: ClassVar[bool] = False
    #: the array holding the child of each position of the sorted view (a hash's), or None when
    #: each position is its own child
    child_array: ClassVar[str | None] = None
    #: TACO's COO: the level's modes store one list of coordinate tuples under one ``pos`` (every
    #: mode but the last a non-unique segment), which the lattice strategy reads and assembles only
    #: as the innermost level
    coordinate_list: ClassVar[bool] = False

    @property
    def located_by_coordinate(self) -> bool:
        """Whether every coordinate has its slot, ``parent * size + i`` (TACO's dense level: full,
        coordinate value iteration and locate), so a loop locates it rather than iterating it.

        >>> from compiler.levels import Dense, Element, SparseByteMap
        >>> Dense(Element(0.0)).located_by_coordinate, SparseByteMap(Element(0.0)).located_by_coordinate
        (True, False)
        """
        return self.full and self.slot_per_coordinate

    def allocated_arrays(self) -> dict[str, "ArrayLength"]:
        """``{array: ArrayLength}``: the arrays of this level that a kernel writing it as an output
        under levels located by coordinate takes as buffers allocated before the call, and how long
        each is: the fibers' starts (:attr:`starts_array`, one more than the parent's positions), the
        band ends (:attr:`appends_band`, one per parent position) and the marks (:attr:`mark_array`,
        one per slot, an update of a given output starting from its marks). The runtime asks this,
        never an array's name; a format whose arrays are sized otherwise overrides it.

        >>> from compiler.levels import Element, SparseBand, SparseByteMap
        >>> SparseBand(Element(0.0)).allocated_arrays()
        {'ofs': ArrayLength(extra=1), 'idx': ArrayLength()}
        >>> SparseByteMap(Element(0.0)).allocated_arrays()["tbl"].length(parents=3, size=4)
        12
        """
        out = {self.starts_array: ArrayLength(extra=1)}
        if self.appends_band is not None:
            out[self.appends_band] = ArrayLength()
        if self.mark_array is not None:
            out[self.mark_array] = ArrayLength(per_coordinate=True, kept=True)
        return out

    def position_arrays(self) -> tuple[str, ...]:
        """The arrays of this level holding positions (counts of entries), not coordinates: its fibers'
        starts (:attr:`starts_array`), a block list's block starts (``appends_blocks[1]``) and the
        children of a hash's sorted view (:attr:`child_array`). A narrow index dtype's count stored
        into one is checked as it grows (:func:`compiler.lowering.count_limit`).

        >>> from compiler.levels import Element, SparseBand, SparseHash
        >>> SparseBand(Element(0.0)).position_arrays(), SparseHash(Element(0.0)).position_arrays()
        (('ofs',), ('pos', 'ptr'))
        """
        blocks = () if self.appends_blocks is None else (self.appends_blocks[1],)
        return (self.starts_array, *blocks, *(() if self.child_array is None else (self.child_array,)))

    def check_at_most_one(self, parent_count: int, where: str) -> None:
        """Raise :class:`FormatError` (naming ``where``) if a fiber of a level that holds
        :attr:`at_most_one` entry or run holds more: what a kernel's output is checked for after
        each call. Other levels hold any number."""

    #: the arrays whose every entry is a stored coordinate of the level's (first) mode, in ``[0, size)``,
    #: as :meth:`check` validates (the looplet lowering's facts: ``A1_idx[q] < 0`` never holds)
    coordinate_arrays: ClassVar[tuple[str, ...]] = ()

    def stored_coordinates(self) -> dict[str, int]:
        """``{array: mode}``: each array whose entries are coordinates of the level's mode ``mode``
        (0 for a level of one mode), all in ``[0, size)``; :attr:`coordinate_arrays` by default.

        >>> from compiler.levels import Dense, Element, SparseCOO, SparseList
        >>> SparseList(Element(0.0)).stored_coordinates(), Dense(Element(0.0)).stored_coordinates()
        ({'idx': 0}, {})
        >>> SparseCOO(2, Element(0.0)).stored_coordinates()
        {'idx0': 0, 'idx1': 1}
        """
        return {a: 0 for a in self.coordinate_arrays}

    def crd_of(self, mode: int) -> str:
        """The array of coordinates of the level's mode ``mode`` (:attr:`crd_array`; a level of
        several modes keeps one per mode)."""
        return self.crd_array

    @property
    def nmodes(self) -> int:
        """How many modes this level consumes (leaves consume none)."""
        return 0 if self.is_leaf else 1

    @property
    def sizes(self) -> tuple:
        """The extent of each mode this level stores (``None`` where unknown)."""
        return ()

    def arrays(self) -> dict[str, np.ndarray]:
        """The numpy arrays this level owns, by short name (empty for a spec)."""
        return {}

    def array_dtypes(self) -> dict[str, np.dtype]:
        """The arrays this format owns, by short name, with their dtypes; known from a spec.

        Kernels take these arrays as parameters (see :mod:`compiler.binding`).
        """
        return {}

    def with_arrays(self, arrays: dict[str, np.ndarray]) -> "Level":
        """A copy of this level (not its children) holding ``arrays``, keyed as :meth:`array_dtypes`."""
        return self

    def assembled(self, arrays: dict[str, np.ndarray], child: "Level | None") -> "Level":
        """A copy of this sized spec holding a kernel's output ``arrays`` above ``child``.

        The kernel runtime calls it on every call, so subclasses whose arrays are plain
        fields skip :meth:`with_arrays`' validation: the arrays come from a compiled
        kernel with exactly the dtypes of :meth:`array_dtypes` (checked runs validate
        the whole tensor instead).
        """
        level = self.with_arrays(arrays)
        return level if child is None else dataclasses.replace(level, child=child)

    def _copy_with(self, fields: dict) -> "Level":
        # A frozen dataclass copy without __post_init__: the fields are already normal.
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.__dict__.update(fields)
        return new

    @property
    def has_data(self) -> bool:
        """Whether this level holds its arrays (a spec does not)."""
        return True

    def spec(self) -> "Level":
        """A data-free, size-free copy of this level and its children."""
        raise NotImplementedError

    def format_key(self) -> tuple:
        """A hashable, data-free description for kernel cache keys."""
        raise NotImplementedError

    def spec_str(self) -> str:
        """The constructor spelling of the spec, e.g. ``Dense(SparseList(Element(0.0)))``."""
        raise NotImplementedError

    def count(self, parent_count: int) -> int:
        """How many positions this level holds when its parent holds ``parent_count``."""
        raise NotImplementedError

    def with_sizes(self, sizes) -> "Level":
        """A copy with the mode sizes of this level and its descendants set from ``sizes``."""
        raise NotImplementedError

    def children(self, parents: np.ndarray):
        """Enumerate the stored children of the parent positions ``parents``.

        Returns ``(parent_index, coords, child_positions)``: for each child, the index
        into ``parents`` of its parent, one coordinate array per mode of this level,
        and its position in this level. Children come in storage order.
        """
        raise NotImplementedError

    def fiber(self, p: int, limit: int):
        """The first ``limit`` children of fiber ``p``: ``(coords, child_positions, total)``."""
        raise NotImplementedError

    def from_entries(self, parent_count: int, parent_pos: np.ndarray, coords: list,
                     vals: np.ndarray, sizes: list) -> "Level":
        """Build this level (with data) and its children from sorted, unique entries.

        ``parent_pos[e]`` is the parent position of entry ``e``; ``coords`` holds one
        array per remaining storage mode, ``sizes`` their extents, ``vals`` the values.
        Entries are lexicographically sorted by ``(parent_pos, *coords)``.
        """
        raise NotImplementedError

    def structure(self) -> tuple | None:
        """What a check of this level's arrays in C verifies (:mod:`compiler.recheck`): ``(pos,
        keys, extents)`` for a level storing each fiber's coordinates ``keys`` (one array per mode, strictly
        increasing within a fiber, each inside its extent) between ``pos[f]`` and ``pos[f + 1]``;
        ``()`` for a level with no such array to check; ``None`` (the default) when it says nothing,
        and a tensor holding it is validated whole instead.

        >>> from compiler.levels import SparseList, Element, Dense
        >>> lvl = SparseList(Element(0.0), 4, np.array([0, 2]), np.array([1, 3]))
        >>> [a.tolist() for a in lvl.structure()[1]], lvl.structure()[2], Dense(lvl, 1).structure()
        ([[1, 3]], (4,), ())
        """
        return None

    def check(self, parent_count: int, where: str) -> int:
        """Validate this level's data under ``parent_count`` parents; return its count."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.spec_str() if not self.has_data else self._data_repr()

    def _data_repr(self) -> str:
        return self.spec_str()


# --- shared helpers -------------------------------------------------------------------------

def index_array(a, what: str) -> np.ndarray:
    """A 1-D contiguous int32/int64 array from ``a`` without copying when it already is one."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "iu" and arr.size:
        raise DTypeError(f"{what} must hold integers, not {arr.dtype.name}")
    if arr.dtype.kind not in "iu":
        arr = arr.astype(POS)  # an empty list arrives as float64
    elif arr.dtype.name not in ("int32", "int64"):
        _index_dtype(arr.dtype)  # raises DTypeError naming the dtype
    if arr.ndim != 1:
        raise FormatError(f"{what} must be a 1-D array, got shape {arr.shape}")
    return np.ascontiguousarray(arr)   # (a strided view is copied: kernels read arrays as C arrays)


def unify_index_dtype(arrays: list, requested, names=None) -> tuple[list, np.dtype]:
    """Give all index arrays one dtype: ``requested`` if given, else the widest present.

    Arrays already of that dtype are returned as they are (no copy). A value the narrower
    dtype cannot hold is refused (a cast would wrap it, and a kernel would index with it).

    >>> unify_index_dtype([np.array([0, 2 ** 31])], "int32", ["SparseList idx"])
    Traceback (most recent call last):
    ...
    compiler.errors.FormatError: SparseList idx holds 2147483648, more than index_dtype int32 holds (at most 2147483647); use index_dtype='int64'
    """
    if requested is not None:
        dt = _index_dtype(requested)
    elif arrays:
        dt = np.dtype("int64") if any(a.dtype == np.int64 for a in arrays) else np.dtype("int32")
    else:
        dt = np.dtype("int64")
    info = np.iinfo(dt)
    for k, a in enumerate(arrays):
        if a.dtype != dt and a.size and a.dtype.itemsize >= dt.itemsize:
            lo, hi = int(a.min()), int(a.max())
            if hi > info.max or lo < info.min:
                what = names[k] if names else "an index array"
                bad = hi if hi > info.max else lo
                raise FormatError(f"{what} holds {bad}, more than index_dtype {dt.name} holds (at most "
                                  f"{info.max}); use index_dtype='int64'")
    return [a if a.dtype == dt else a.astype(dt) for a in arrays], dt


def normalize_fill(fill, dtype):
    """``fill`` as a Python scalar of ``dtype`` (or as given when ``dtype`` is None).

    >>> normalize_fill(0, np.dtype("float64")), normalize_fill(1, np.dtype("bool"))
    (0.0, True)
    >>> normalize_fill(1.5, np.dtype("int64"))
    Traceback (most recent call last):
    ...
    compiler.errors.DTypeError: fill value 1.5 cannot be represented in int64
    >>> normalize_fill(1e300, np.dtype("float32"))
    Traceback (most recent call last):
    ...
    compiler.errors.DTypeError: fill value 1e+300 cannot be represented in float32
    """
    if fill.__class__ is float and dtype is not None and dtype == _FLOAT64:
        return fill   # (float64 is Python's float: most fills, and numpy's conversions below cost 5 us)
    if isinstance(fill, np.generic):
        fill = fill.item()
    if not isinstance(fill, (bool, int, float, complex)):   # ("0" or None would pass numpy's conversions)
        raise DTypeError(f"fill value {fill!r} must be a number or a bool, not {type(fill).__name__}")
    if dtype is None:
        return fill
    if dtype.kind == "c":
        with np.errstate(over="ignore"):
            out = complex(dtype.type(fill))
        parts = (fill.real, fill.imag) if isinstance(fill, complex) else (float(fill), 0.0)
        if any(math.isinf(o) and math.isfinite(p) for o, p in zip((out.real, out.imag), parts)):
            raise _unrepresentable(fill, dtype)   # (1e300 as complex64)
        return out
    if isinstance(fill, complex):   # (a real dtype keeps no imaginary part: numpy would drop it silently)
        raise DTypeError(f"fill value {fill!r} is complex; {dtype.name} values are real (use complex128)")
    if dtype.kind == "b":
        if isinstance(fill, float) and math.isnan(fill) or fill not in (0, 1):
            raise _unrepresentable(fill, dtype)
        return bool(fill)
    if dtype.kind in "iu":
        if isinstance(fill, float) and not (math.isfinite(fill) and fill.is_integer()):
            raise _unrepresentable(fill, dtype)
        info = np.iinfo(dtype)
        if not info.min <= fill <= info.max:
            raise _unrepresentable(fill, dtype)
        return int(fill)
    try:
        with np.errstate(over="ignore"):
            out = float(dtype.type(fill))
    except (TypeError, ValueError, OverflowError):
        raise _unrepresentable(fill, dtype) from None
    if math.isinf(out) and math.isfinite(float(fill)):   # (1e300 as float32)
        raise _unrepresentable(fill, dtype)
    return out


_FLOAT64 = np.dtype("float64")


def _unrepresentable(fill, dtype) -> DTypeError:
    # (made only where raised: a dtype's name costs half of normalize_fill, run for every level built)
    return DTypeError(f"fill value {fill!r} cannot be represented in {dtype.name}")


def fill_key(fill):
    """A hashable key for a fill value that treats NaN as equal to itself, and -0.0 as other than
    0.0 (where every operand is absent, a kernel of fill -0.0 writes -0.0; ``0.0 + -0.0`` is 0.0).

    >>> fill_key(float("nan")) == fill_key(np.float32("nan")), fill_key(-0.0) == fill_key(0.0)
    (True, False)
    >>> fill_key(complex("nan+1j")) == fill_key(complex("nan+nanj")), fill_key(complex("nan+1j")) == fill_key(
    ...     complex("nan+1j"))
    (False, True)
    """
    if isinstance(fill, (float, np.floating)):
        if math.isnan(fill):
            return "nan"
        if fill == 0 and math.copysign(1.0, fill) < 0:
            return "-0.0"
    if isinstance(fill, (complex, np.complexfloating)):
        # (each part apart, a NaN part one NaN: a kernel computes with the fill's parts, and a sum of copies of
        # -inf + nan j is -inf + nan j, of nan + 0j nan + 0j; -0.0 parts stay apart)
        return ("complex", fill_key(float(fill.real)), fill_key(float(fill.imag)))
    return fill


def exact_key(value) -> tuple:
    """A hashable key that tells apart any two scalars a fill may be, except NaNs of other payloads: -0.0 apart
    from 0.0, 1 from 1.0 and True, and each part of a complex apart (:func:`fill_key` makes a complex's NaNs one),
    for the caches of what is worked out from a fill.

    >>> exact_key(complex("nan-infj")) == exact_key(complex("nan+nanj")), exact_key(-0.0) == exact_key(0.0)
    (False, False)
    >>> exact_key(float("nan")) == exact_key(float("nan")), exact_key(1) == exact_key(True)
    (True, False)
    """
    return value.__class__, repr(value)


def is_fill(values: np.ndarray, fill) -> np.ndarray:
    """A boolean mask of the entries of ``values`` equal to ``fill`` (NaN matches NaN)."""
    if isinstance(fill, (float, complex)) and fill != fill:   # (NaN, or a complex with a NaN part)
        if values.dtype.kind in "fc":
            return np.isnan(values)
        return np.zeros(values.shape, dtype=bool)
    return values == fill


def resolve_value_dtype(dtype):
    """``value_dtype`` that lets ``None`` through (an unspecified spec dtype)."""
    return None if dtype is None else value_dtype(dtype)


def ranges(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate ``range(s, s + c)`` for each pair, vectorized.

    Returns ``(owner, values)`` where ``owner[k]`` is the pair each value came from.

    >>> ranges(np.array([5, 0, 2]), np.array([2, 0, 3]))
    (array([0, 0, 2, 2, 2]), array([5, 6, 2, 3, 4]))
    """
    starts = starts.astype(POS, copy=False)
    counts = counts.astype(POS, copy=False)
    owner = np.repeat(np.arange(len(counts), dtype=POS), counts)
    first = np.cumsum(counts) - counts  # exclusive prefix sum: where each run starts
    values = np.arange(int(counts.sum()), dtype=POS) - first[owner] + starts[owner]
    return owner, values


def group_starts(keys: list) -> np.ndarray:
    """For sorted rows of ``keys`` (one array per column), mark the first row of each distinct row."""
    n = len(keys[0]) if keys else 0
    new = np.ones(n, dtype=bool)
    if n > 1:
        same = np.ones(n - 1, dtype=bool)
        for k in keys:
            same &= k[1:] == k[:-1]
        new[1:] = ~same
    return new


def checked_size(size, level: str) -> int:
    """A level's extent as an int from 0 to 2^63 - 1, or a FormatError naming the level.

    >>> checked_size(3, "Dense"), checked_size(np.int32(2), "Dense")
    (3, 2)
    >>> checked_size(3.5, "SparseList")
    Traceback (most recent call last):
    ...
    compiler.errors.FormatError: SparseList's size is the number of coordinates per fiber, an integer from 0 to 2^63 - 1; got 3.5
    """
    if not is_integer(size) or not 0 <= size <= LARGEST_EXTENT:
        raise FormatError(f"{level}'s size is the number of coordinates per fiber, an integer from 0 to "
                          f"2^63 - 1; got {size!r}")
    return int(size)


def check_pos(pos: np.ndarray, parent_count: int, nstored: int, stored_name: str, where: str, name: str = "pos"):
    """Validate a ``pos`` array (called ``name``: a SparseBand's is ``ofs``): its length,
    ``pos[0] == 0``, monotonicity, and its end."""
    if len(pos) != parent_count + 1:
        raise FormatError(f"{where}: {name} has length {len(pos)}, expected {parent_count + 1} "
                          f"(parent has {parent_count} positions)")
    if pos[0] != 0:
        raise FormatError(f"{where}: {name}[0] must be 0, got {pos[0]}")
    bad = np.flatnonzero(pos[1:] < pos[:-1])
    if bad.size:
        q = int(bad[0])
        raise FormatError(f"{where}: {name} is not non-decreasing: {name}[{q}]={pos[q]} > "
                          f"{name}[{q + 1}]={pos[q + 1]}")
    if pos[-1] != nstored:
        raise FormatError(f"{where}: {name}[-1]={pos[-1]} but {stored_name} has length {nstored}")


def check_range(idx: np.ndarray, size: int, name: str, where: str):
    bad = np.flatnonzero((idx < 0) | (idx >= size))
    if bad.size:
        q = int(bad[0])
        raise FormatError(f"{where}: {name}[{q}]={idx[q]} is out of range [0, {size})")


def not_increasing(pos: np.ndarray, keys: list) -> tuple[int, bool] | None:
    """The first stored entry whose key tuple does not strictly follow its predecessor
    in the same fiber, as ``(q, duplicate)``; None when every fiber is sorted and unique.
    """
    n = len(keys[0])
    if n < 2:
        return None
    gt = np.zeros(n - 1, dtype=bool)
    eq = np.ones(n - 1, dtype=bool)
    for k in keys:
        gt |= eq & (k[1:] > k[:-1])
        eq &= k[1:] == k[:-1]
    first = np.zeros(n, dtype=bool)  # entries that start a fiber have no predecessor to compare
    starts = pos[:-1][pos[:-1] < n]
    first[starts] = True
    bad = np.flatnonzero(~gt & ~first[1:])
    if not bad.size:
        return None
    q = int(bad[0]) + 1
    return q, bool(eq[q - 1])


def fiber_of(pos: np.ndarray, q: int) -> int:
    """The parent position whose fiber holds stored entry ``q``."""
    return int(np.searchsorted(pos, q, side="right") - 1)


def arr_repr(a: np.ndarray) -> str:
    return f"<{len(a)} x {a.dtype.name}>"


_REGISTRY: dict[str, type] = {}


def register(*names: str):
    """Register a level class under its Finch name and any aliases (case-insensitive)."""
    def deco(cls):
        for n in (cls.name, *names):
            _REGISTRY[n.lower()] = cls
        return cls
    return deco


def level_class(name: str) -> type:
    """The level class called ``name``, accepting aliases such as ``"compressed"``.

    >>> level_class("compressed").__name__
    'SparseList'
    """
    if not isinstance(name, str):
        raise FormatError(f"a level format is named by a string such as 'SparseList', got {name!r}")
    try:
        return _REGISTRY[name.lower()]
    except KeyError:
        known = sorted({c.name for c in _REGISTRY.values()})
        raise FormatError(f"unknown level format {name!r}; known: {', '.join(known)}") from None


def level_classes() -> tuple[type, ...]:
    """Every registered level class (leaves too), each once, in the order registered.

    >>> "SparseHash" in [c.name for c in level_classes()]
    True
    """
    return tuple(dict.fromkeys(_REGISTRY.values()))


def flatten(root: Level) -> tuple[tuple[Level, ...], Level]:
    """The non-leaf levels of a tree, outermost first, and its leaf."""
    levels = []
    lvl = root
    while True:
        if not isinstance(lvl, Level):
            raise FormatError(f"expected a level, got {type(lvl).__name__}: {lvl!r}")
        if lvl.is_leaf:
            break
        levels.append(lvl)
        lvl = lvl.child
    return tuple(levels), lvl



def _listing(names) -> str:
    if len(names) == 2:
        return f"both {names[0]} and {names[1]}"
    return ", ".join(names[:-1]) + f" and {names[-1]}"


_ARRAY_NAMES: dict[type, tuple[str, ...]] = {}


class IndexedLevel(Level):
    """A one-mode level whose arrays share one index dtype, plus arrays of fixed dtypes.

    ``index_arrays`` name the arrays of the level's index dtype; ``fixed_arrays``
    maps other array names to their dtype (a byte map's table is bool). Subclasses
    are dataclasses with the fields ``child, size, <arrays...>, index_dtype``; this
    class gives them the bookkeeping every such level shares (validation of the
    arrays' presence and dtype, specs, keys, sizes, printing). Arrays are listed in
    the order the dataclass declares them.

    >>> from compiler.levels import SparseList, Element
    >>> SparseList(Element(0.0), 3, pos=[0, 1], idx=[2]).array_dtypes()
    {'pos': dtype('int64'), 'idx': dtype('int64')}
    >>> SparseList(Element(0.0), 3, pos=[0, 1])
    Traceback (most recent call last):
    ...
    compiler.errors.FormatError: SparseList needs both pos and idx, or neither (a format spec)
    """

    index_arrays: ClassVar[tuple[str, ...]] = ()
    fixed_arrays: ClassVar[dict[str, str]] = {}

    @classmethod
    def _array_names(cls) -> tuple[str, ...]:
        names = _ARRAY_NAMES.get(cls)
        if names is None:  # computed once per class: kernel calls ask for it every time
            wanted = set(cls.index_arrays) | set(cls.fixed_arrays)
            names = _ARRAY_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.name in wanted)
        return names

    def __post_init__(self):
        if self.size is not None:
            object.__setattr__(self, "size", checked_size(self.size, self.name))
        names = self._array_names()
        given = [getattr(self, n) is not None for n in names]
        if any(given) and not all(given):
            none = "neither" if len(names) == 2 else "none"
            raise FormatError(f"{self.name} needs {_listing(names)}, or {none} (a format spec)")
        has = all(given)
        arrays = [index_array(getattr(self, n), f"{self.name} {n}") for n in self.index_arrays] if has else []
        arrays, dt = unify_index_dtype(arrays, self.index_dtype, [f"{self.name} {n}" for n in self.index_arrays])
        for n, a in zip(self.index_arrays, arrays):
            object.__setattr__(self, n, a)
        for n, fixed in self.fixed_arrays.items():
            if has:
                a = np.asarray(getattr(self, n))
                if a.ndim != 1:
                    raise FormatError(f"{self.name} {n} must be a 1-D array, got shape {a.shape}")
                object.__setattr__(self, n, np.ascontiguousarray(cast_values(a, fixed, f"{self.name} {n}")))
        object.__setattr__(self, "index_dtype", dt)

    @property
    def sizes(self):
        return (self.size,)

    @property
    def has_data(self):
        return getattr(self, self._array_names()[0]) is not None

    def arrays(self):
        return {n: getattr(self, n) for n in self._array_names()} if self.has_data else {}

    def array_dtypes(self):
        return {n: np.dtype(self.fixed_arrays.get(n, self.index_dtype)) for n in self._array_names()}

    def with_arrays(self, arrays):
        return dataclasses.replace(self, **{n: arrays[n] for n in self._array_names()})

    def assembled(self, arrays, child):
        fields = {n: arrays[n] for n in self._array_names()}
        if child is not None:
            fields["child"] = child
        return self._copy_with(fields)

    def spec(self):
        return type(self)(self.child.spec(), index_dtype=self.index_dtype)

    def format_key(self):
        return (self.name, self.index_dtype.name, self.child.format_key())

    def spec_str(self):
        extra = "" if self.index_dtype == np.int64 else f", index_dtype={self.index_dtype.name!r}"
        return f"{self.name}({self.child.spec_str()}{extra})"

    def _data_repr(self):
        arrays = ", ".join(f"{n}={arr_repr(getattr(self, n))}" for n in self._array_names())
        return f"{self.name}({self.child!r}, {self.size}, {arrays})"

    def with_sizes(self, sizes):
        return dataclasses.replace(self, child=self.child.with_sizes(sizes[1:]), size=sizes[0])
