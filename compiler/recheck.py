"""A foreign array's structure and values, checked again in C at every call that reads it in place.

A scipy or pydata array that a kernel reads in place (:meth:`compiler.binding.InputPlan.tensor`)
stays its owner's: between two calls the owner may write its ``indices`` or ``indptr`` in
place, and a kernel reading a coordinate past its operand reads out of bounds. The tensor over
it was validated once, when it was built; each later call that takes the same buffers runs this
module's check instead of the tensor's :meth:`~compiler.tensor.Tensor.validate` (the same rules:
``pos[0] == 0``, ``pos`` non-decreasing up to the stored count, every coordinate inside its
extent, each fiber's coordinates strictly increasing), one C call over the arrays' addresses,
which also says whether the values hold NaN or infinities (the facts a kernel assumed).

Levels say what to check (:meth:`compiler.levels.level.Level.structure`); a tensor with a level
that does not say is not rechecked here (:func:`checker` gives None) and is validated whole.

>>> import numpy as np, scipy.sparse as sp
>>> from compiler import Tensor
>>> m = sp.csr_matrix(np.array([[0, 2.0], [3.0, np.inf]]))
>>> check = checker(Tensor.from_scipy(m))
>>> str(check())
'may hold +inf'
>>> m.indices[1] = 7              # (in place: the kernel would read x[7])
>>> check() is None
True
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from . import sealing, values
from .errors import FormatError

__all__ = ["FACTS", "array_facts", "c_check", "CHECKED", "check_again", "checked_now", "checker", "kept_checker",
           "revalidator", "values_facts"]

_SOURCE = r"""
#include <stdint.h>
#include <string.h>

/* a compressed level's pos over its coordinate keys ((address, extent) pairs): 0 if well formed.
   Each test is a reduction over the whole array with no early exit, which the compiler vectorizes
   (an early return in the loop kept it scalar: ten times memory speed over a million entries). */
#define CHECK_LEVEL(T, U, T_MAX)                                                                \
static int64_t check_##T(int64_t parents, const T *pos, int64_t stored, int64_t nkeys,          \
                         const int64_t *keys)                                                   \
{                                                                                               \
    if (pos[0] != 0)                                                                            \
        return -2;                                                                              \
    int bad = 0;                                                                                \
    for (int64_t f = 0; f < parents; f++)                                                       \
        bad |= pos[f + 1] < pos[f];                                                             \
    if (bad)                                                                                    \
        return -3;                                                                              \
    if (pos[parents] != stored)                                                                 \
        return -4;                                                                              \
    if (nkeys == 0) /* (its coordinates checked by the kernel that reads them) */               \
        return 0;                                                                               \
    if (nkeys == 1) {                                                                           \
        /* its range and its order in one vectorized pass (two read the index array twice: a    \
           fifth of a SpMV's call over a scipy matrix); strictly increasing within each fiber:   \
           the drops of the whole array less those where a fiber starts (a fiber may start lower) */\
        const T *idx = (const T *)(intptr_t)keys[0];                                            \
        U limit = (U)(keys[1] > (int64_t)T_MAX ? (U)T_MAX + 1 : (U)keys[1]);                     \
        int out = stored > 0 && (U)idx[0] >= limit;                                             \
        T drops = 0;                                                                            \
        for (int64_t q = 1; q < stored; q++) {                                                  \
            out |= (U)idx[q] >= limit;                                                          \
            drops += idx[q] <= idx[q - 1];                                                      \
        }                                                                                       \
        if (out)                                                                                \
            return -5;                                                                          \
        for (int64_t f = 0; f < parents; f++) {                                                 \
            int64_t q = (int64_t)pos[f];                                                        \
            if (q > 0 && q < (int64_t)pos[f + 1])                                               \
                drops -= idx[q] <= idx[q - 1];                                                  \
        }                                                                                       \
        return drops ? -6 : 0;                                                                  \
    }                                                                                           \
    for (int64_t k = 0; k < nkeys; k++) {                                                       \
        const T *idx = (const T *)(intptr_t)keys[2 * k];                                        \
        /* one unsigned compare in the index's own width: a negative index is a huge one */      \
        U limit = (U)(keys[2 * k + 1] > (int64_t)T_MAX ? (U)T_MAX + 1 : (U)keys[2 * k + 1]);     \
        int out = 0;                                                                            \
        for (int64_t q = 0; q < stored; q++)                                                    \
            out |= (U)idx[q] >= limit;                                                          \
        if (out)                                                                                \
            return -5;                                                                          \
    }                                                                                           \
    if (nkeys == 2) {                                                                           \
        /* (a COO pair: the same count, of pairs not after the one before) */                   \
        const T *a = (const T *)(intptr_t)keys[0], *b = (const T *)(intptr_t)keys[2];           \
        T drops = 0;                                                                            \
        for (int64_t q = 1; q < stored; q++)                                                    \
            drops += (a[q] < a[q - 1]) | ((a[q] == a[q - 1]) & (b[q] <= b[q - 1]));              \
        for (int64_t f = 0; f < parents; f++) {                                                 \
            int64_t q = (int64_t)pos[f];                                                        \
            if (q > 0 && q < (int64_t)pos[f + 1])                                               \
                drops -= (a[q] < a[q - 1]) | ((a[q] == a[q - 1]) & (b[q] <= b[q - 1]));          \
        }                                                                                       \
        return drops ? -6 : 0;                                                                  \
    }                                                                                           \
    for (int64_t f = 0; f < parents; f++) {                                                     \
        for (int64_t q = (int64_t)pos[f] + 1; q < pos[f + 1]; q++) {                            \
            int order = 0;                                                                      \
            for (int64_t k = 0; k < nkeys && order == 0; k++) {                                 \
                const T *idx = (const T *)(intptr_t)keys[2 * k];                                \
                order = idx[q] > idx[q - 1] ? 1 : idx[q] < idx[q - 1] ? -1 : 0;                 \
            }                                                                                   \
            if (order <= 0)                                                                     \
                return -6;                                                                      \
        }                                                                                       \
    }                                                                                           \
    return 0;                                                                                   \
}

/* which non-finite values some values hold: 1 NaN, 2 +inf, 4 -inf; in bits 3 to 5 the step of their largest
   finite magnitude (compiler.values.Facts.scale: 0 under 2^SMALL, then under 2^(2 SMALL), 2^(4 SMALL), ...);
   and FLAG, which says the dtype (64 for float32). One vectorized pass takes the largest magnitude as the
   values' bits with the sign cleared (a float's magnitudes order as those integers do; NaN and the infinities
   are the largest, their exponent all ones): that tells small values, and the step of finite ones; only an
   array holding a NaN or an infinity is looked at again, to tell them apart. The bits are integers, so no
   -ffast-math folds the test away */
#define FACTS(T, I, SMALL, SMALLBITS, INFBITS, FLAG)                                            \
static int64_t facts_##T(const T *v, int64_t n)                                                 \
{                                                                                               \
    const I *bits = (const I *)(const void *)v;                                                 \
    const I magnitude = ~((I)1 << (sizeof(I) * 8 - 1));                                         \
    I top = 0;                                                                                  \
    for (int64_t q = 0; q < n; q++) {                                                           \
        I b = bits[q] & magnitude;                                                              \
        top = b > top ? b : top;                                                                \
    }                                                                                           \
    if (top < (I)SMALLBITS)                                                                     \
        return FLAG;                                                                            \
    int64_t held = 0;                                                                           \
    T largest = 0;                                                                              \
    if (top < (I)INFBITS) {                                                                     \
        memcpy(&largest, &top, sizeof largest);                                                 \
    } else {                                                                                    \
        for (int64_t q = 0; q < n; q++) {                                                       \
            T x = v[q];                                                                         \
            I b = bits[q] & magnitude;                                                          \
            if (b >= (I)INFBITS)                                                                \
                held |= b > (I)INFBITS ? 1 : bits[q] < 0 ? 4 : 2;                               \
            else if ((x < 0 ? -x : x) > largest)                                                \
                largest = x < 0 ? -x : x;                                                       \
        }                                                                                       \
    }                                                                                           \
    int64_t step = 0;                                                                           \
    for (T bound = (T)0x1p##SMALL; step < 4 && largest >= bound; step++)                        \
        bound = step < 3 ? bound * bound : bound;                                               \
    return held | step << 3 | FLAG;                                                             \
}

CHECK_LEVEL(int32_t, uint32_t, INT32_MAX)
CHECK_LEVEL(int64_t, uint64_t, INT64_MAX)
FACTS(float, int32_t, 8, 0x43800000, 0x7f800000, 64)
FACTS(double, int64_t, 64, 0x43f0000000000000, 0x7ff0000000000000, 0)

int64_t sparsescope_facts_f32(const float *v, int64_t n) { return facts_float(v, n); }
int64_t sparsescope_facts_f64(const double *v, int64_t n) { return facts_double(v, n); }

/* ops: (1, dtype, parents, pos, stored, nkeys, key, extent, ...) per compressed level and
   (2, dtype, values, count) per value array; the facts of the values, or < 0 for a malformed level */
int64_t sparsescope_recheck(const int64_t *ops, int64_t n)
{
    int64_t held = 0;
    for (int64_t k = 0; k < n;) {
        int64_t op = ops[k], dtype = ops[k + 1];
        if (op == 1) {
            int64_t nkeys = ops[k + 5], r;
            if (dtype == 4)
                r = check_int32_t(ops[k + 2], (const int32_t *)(intptr_t)ops[k + 3], ops[k + 4], nkeys, ops + k + 6);
            else
                r = check_int64_t(ops[k + 2], (const int64_t *)(intptr_t)ops[k + 3], ops[k + 4], nkeys, ops + k + 6);
            if (r < 0)
                return r;
            k += 6 + 2 * nkeys;
        } else {
            if (dtype == 4)
                held |= facts_float((const float *)(intptr_t)ops[k + 2], ops[k + 3]);
            else if (dtype == 8)
                held |= facts_double((const double *)(intptr_t)ops[k + 2], ops[k + 3]);
            k += 4;
        }
    }
    return held;
}
"""

_lock = threading.Lock()
_library: list = []
def _facts_of_mask(m: int) -> values.Facts:
    small = values.finite_of("float32" if m & 64 else "float64")
    if m & 63 == 0:   # (the shared FINITE and FINITE32, which kernels compare by identity)
        return small
    return values.Facts(bool(m & 1), bool(m & 2), bool(m & 4), scale=small.scale << (m >> 3 & 7))


# the facts of each mask the C function returns
_FACTS = [_facts_of_mask(m) for m in range(128)]


def _lib():
    """``(ffi, lib)`` of the checking function, built (or taken from the disk cache) once."""
    with _lock:
        if not _library:
            from .backend import build
            # (the kernels' flags; the NaN test x - x != 0 must survive a user's -ffast-math)
            # (and the dynamic cost model: the kernels' very-cheap one leaves these reductions scalar,
            # whose trip counts are not known, three times slower over a million values)
            flags = (*build.compiler_flags(None), "-fno-finite-math-only", "-fvect-cost-model=dynamic")
            path, _ = build.build_library(_SOURCE, "recheck", flags)
            _library.append(build.load_library(path, "int64_t sparsescope_recheck(const int64_t *, int64_t);\n"
                                                     "int64_t sparsescope_facts_f32(const float *, int64_t);\n"
                                                     "int64_t sparsescope_facts_f64(const double *, int64_t);"))
        return _library[0]


def c_check():
    """The C function a :func:`checker` runs, ``(pointer, size)`` of its ``ops``: the index into
    :data:`FACTS` of what the values hold, below 0 for a malformed level.

    >>> import scipy.sparse as sp
    >>> from compiler import Tensor
    >>> check = checker(Tensor.from_scipy(sp.csr_matrix(np.eye(2))))
    >>> FACTS[c_check()(*check.ops)] is check()
    True
    """
    return _lib()[1].sparsescope_recheck


#: the facts each result of the C functions stands for (by index)
FACTS = _FACTS


def checker(tensor, facts: bool = True, coordinates: bool = True, structure: bool = True):
    """A function of no argument that checks ``tensor``'s arrays again (as it finds them now) and
    gives the facts of its values, or None when a level is malformed; ``None`` instead of a
    function when some level does not say what to check (:meth:`Level.structure`). With
    ``facts=False`` it checks the index arrays alone and says the values are finite (for a kernel
    whose C is the same whatever they hold: :meth:`compiler.runtime.Kernel.depends_on_values`).
    With ``coordinates=False`` it checks each level's positions, not the coordinates between them
    (for a kernel that checks each coordinate as it reads it:
    :mod:`compiler.imperative.owned_coordinates`). With ``structure=False`` it checks no level and
    gives the facts of the values alone (index arrays sealed read-only: :mod:`compiler.sealing`).

    >>> import scipy.sparse as sp
    >>> from compiler import Tensor
    >>> m = sp.csr_matrix(np.array([[0, 2.0], [np.nan, 0]]))
    >>> values_only = checker(Tensor.from_scipy(m), structure=False)
    >>> m.indices[0] = 9   # (no level read: only the values)
    >>> str(values_only()), values_only.ops[1]
    ('may hold NaN', 4)

    The function holds the arrays' addresses: it is for a tensor whose arrays are shared with an
    owner that may change their contents, never their identity (the caller checks that first)."""
    ops: list[int] = []
    keep = []
    count = 1
    for lvl in tensor.levels:
        if not structure:   # (sealed levels: the stored count alone, for the values' length)
            count = lvl.count(count)
            continue
        parts = lvl.structure()
        if parts is None:
            return None
        if not parts:
            count = lvl.count(count)
            continue
        # (the stored count is the keys' length, which the owner cannot change in place; pos may change)
        pos, keys, extents = parts
        parents, count = count, len(keys[0])
        # (the C function reads parents + 1 positions and count keys of each array: arrays shorter than that,
        # a malformed level, are left to validate, which names them, not read past their ends)
        if pos.dtype.itemsize not in (4, 8) or any(k.dtype != pos.dtype for k in keys) or len(pos) < parents + 1 \
                or any(len(k) != count for k in keys):
            return None
        if not coordinates:
            keys, extents = (), ()
        ops += [1, pos.dtype.itemsize, parents, _address(pos), count, len(keys)]
        for key, extent in zip(keys, extents):
            ops += [_address(key), int(extent)]
        keep += [pos, *keys]
    leaf = tensor.leaf
    if leaf.structure() is None:
        return None
    vals = leaf.arrays().get("vals")
    if vals is not None and len(vals) < count:
        return None   # (fewer values than entries: validate says so, where the C function would read past them)
    if facts and vals is not None and vals.dtype.kind in "fc":
        if vals.dtype.kind == "c" or vals.dtype.itemsize not in (4, 8):
            return None   # (float16, complex: whose facts the C function does not take)
        if count:   # (no values to read: no facts)
            ops += [2, vals.dtype.itemsize, _address(vals), count]
            keep.append(vals)
    ffi, lib = _lib()
    program = np.array(ops, dtype=np.int64)
    pointer = ffi.cast("const int64_t *", program.ctypes.data)
    run, size, known = lib.sparsescope_recheck, len(ops), _FACTS

    def check():
        held = run(pointer, size)
        return None if held < 0 else known[held]
    check.arrays = (program, keep)   # (kept alive with the function: the addresses are theirs)
    # (for a caller that runs it in its own lines: FACTS[run(*check.ops)], a malformed level below 0)
    check.ops = (pointer, size)
    return check


def revalidator(tensor, name: str | None = None):
    """A function of no argument that checks ``tensor``'s arrays again, as its owner left them, and
    raises a FormatError naming ``name``'s level and array at fault (:func:`check_again`).

    >>> import scipy.sparse as sp
    >>> from compiler import Tensor
    >>> m = sp.csr_matrix(np.eye(2))
    >>> again = revalidator(Tensor.from_scipy(m), "A")
    >>> again()
    >>> m.indices[1] = 7
    >>> again()
    Traceback (most recent call last):
        ...
    compiler.errors.FormatError: A: level 1 (SparseList): idx[1]=7 is out of range [0, 2)
    """
    def again(facts: bool = True, coordinates: bool = True):
        check_again(tensor, name, facts, coordinates)
    again.tensor = tensor   # (what a caller that checked it already, checked_now, compares)
    return again


def check_again(tensor, name: str | None = None, facts: bool = True, coordinates: bool = True) -> None:
    """Check ``tensor``'s arrays again as they are now (arrays it shares with an owner who may have
    written them since, or a user made writeable again: :mod:`compiler.sealing`), and raise a
    FormatError naming ``name``'s level and array at fault: the C :func:`checker` (built once, kept
    on the tensor) where the levels say what to check, else :meth:`~compiler.tensor.Tensor.validate`.
    Values that now hold NaN or infinities the tensor's facts did not say are taken again
    (validate), so a kernel lowered after it assumes what they hold now; values that hold fewer, the
    facts the C check found. A tensor this thread
    checked already for the call under way (:func:`checked_now`) is not read again. Without ``coordinates``,
    its positions alone (for the kernel that checks each coordinate it reads: :mod:`compiler.owned_inputs`).
    Index arrays sealed read-only, with every array they are views of (:meth:`Tensor.seal
    <compiler.tensor.Tensor.seal>` of a tensor over a scipy matrix seals the matrix's), are not read again:
    no one wrote them since they were validated; the values are, with ``facts``.

    >>> from compiler import Tensor, Dense, SparseList, Element
    >>> idx = np.array([0, 1])
    >>> t = Tensor(Dense(SparseList(Element(0.0, np.ones(2)), 2, np.array([0, 1, 2]), idx), 2))
    >>> check_again(t, "A")
    >>> idx[1] = 5
    >>> check_again(t, "A")
    Traceback (most recent call last):
        ...
    compiler.errors.FormatError: A: level 1 (SparseList): idx[1]=5 is out of range [0, 2)
    """
    if id(tensor) in CHECKED.ids:
        return
    # (index arrays sealed read-only since they were validated, its owner's too: no one wrote them, the values
    # alone looked at again)
    structure = not sealing.sealed(sealing.index_writers(tensor))
    if not (structure or facts):
        return
    check = kept_checker(tensor, facts, coordinates, structure)
    held = check() if check is not None else None
    if held is None or (facts and not held <= tensor.value_facts):
        validate_as_given(tensor, name)
    elif facts and held is not tensor.value_facts:
        # (the facts of exactly its stored values, narrower than before: a NaN written over since, which a kernel
        # lowered after this need not take the exact path for)
        tensor.value_facts = held


#: tensor -> ``check(name)``, which raises the fault of its arrays in their owner's terms (:func:`owned_by`)
_OWNER_TERMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def owned_by(tensor, check) -> None:
    """Say that ``tensor`` is a view of an owner's own arrays (a scipy matrix's, given to a kernel): a fault
    :func:`validate_as_given` finds in them is raised by ``check(name)`` where it finds it, in the terms of
    what the user holds (``A (csr_matrix of shape (3, 3)): indices[7]=30 ...``, not the tensor's level)."""
    _OWNER_TERMS[tensor] = check


def validate_as_given(tensor, name: str | None = None) -> None:
    """``tensor.validate(as_name=name)``, its fault told in its owner's terms where one was given
    (:func:`owned_by`): a scipy matrix given again names its ``indices``, as it did the first time.

    >>> import scipy.sparse as sp
    >>> from compiler.interop import to_tensor
    >>> m = sp.csr_matrix(np.eye(2))
    >>> t = to_tensor(m, "A")
    >>> m.indices[1] = 7
    >>> validate_as_given(t, "A")
    Traceback (most recent call last):
        ...
    compiler.errors.FormatError: A (csr_matrix of shape (2, 2)): indices[1]=7 is out of range [0, 2)
    """
    try:
        tensor.validate(as_name=name)
    except FormatError:
        check = _OWNER_TERMS.get(tensor)
        if check is not None:
            check(name)
        raise


def kept_checker(tensor, facts: bool = True, coordinates: bool = True, structure: bool = True):
    """:func:`checker` of ``tensor``, made once and kept on it (its levels hold the same arrays for good)."""
    d = tensor.__dict__
    key = ("_checker" if facts else "_index_checker") + ("" if coordinates else "_of_positions") + \
        ("" if structure else "_of_values")
    check = d.get(key, False)
    if check is False:
        check = d[key] = checker(tensor, facts, coordinates, structure)
    return check


class _Checked(threading.local):
    ids: frozenset = frozenset()


#: ``.ids``: the tensors this thread's call under way checked already (:class:`checked_now`)
CHECKED = _Checked()


class checked_now:
    """``with checked_now(tensors): kernel(...)``: the kernel call that follows, on this thread, does
    not check again the arrays of ``tensors``, which its caller checked just before (``compute()``
    checks a scipy array's buffers before lowering reads them, and the call would read them again).

    >>> import scipy.sparse as sp
    >>> from compiler import Tensor
    >>> m = sp.csr_matrix(np.eye(2)); t = Tensor.from_scipy(m)
    >>> m.indices[1] = 7
    >>> with checked_now([t]):
    ...     check_again(t)              # (trusted: the caller says it checked t)
    """

    def __init__(self, tensors):
        self.ids = frozenset(id(t) for t in tensors)

    def __enter__(self):
        self.before, CHECKED.ids = CHECKED.ids, CHECKED.ids | self.ids
        return self

    def __exit__(self, *exc):
        CHECKED.ids = self.before
        return False


def values_facts(dtype):
    """A function ``(pointer, count) -> facts`` of a float32 or float64 array given as a cffi pointer
    (a kernel's argument: cffi's pointer types are shared between libraries), None for other dtypes.

    >>> import cffi
    >>> v = np.array([1.0, -np.inf])
    >>> str(values_facts(v.dtype)(cffi.FFI().from_buffer("double[]", v), 2))
    'may hold -inf'
    """
    dtype = np.dtype(dtype)
    if dtype.kind != "f" or dtype.itemsize not in (4, 8):
        return None
    run = getattr(_lib()[1], f"sparsescope_facts_f{dtype.itemsize * 8}")
    facts = _FACTS

    def held(pointer, count):
        return facts[run(pointer, count)]
    held.run = run   # (for a caller that runs it in its own lines: FACTS[held.run(pointer, count)])
    return held


def array_facts(array) -> values.Facts:
    """:func:`compiler.values.of_array`'s facts of ``array``'s values: those of a contiguous float32 array of
    4,096 values or more by the C check's one vectorized pass (numpy's float32 path takes a maximum and a
    minimum, two passes; its float64 path, a dot, is as fast as the C one), any other's by numpy.

    >>> str(array_facts(np.full(5000, np.nan, dtype=np.float32))), str(array_facts(np.arange(3)))
    ('may hold NaN', 'finite')
    """
    if isinstance(array, np.ndarray) and array.dtype == np.float32 and array.size >= 4096 \
            and array.flags.c_contiguous:
        return values_facts(array.dtype)(_lib()[0].cast("void *", array.ctypes.data), array.size)
    return values.of_array(array)


def _address(array: np.ndarray) -> int:
    if not array.flags.c_contiguous:
        raise ValueError("a level's array is not contiguous")   # (never for a tensor's own arrays)
    return array.ctypes.data
