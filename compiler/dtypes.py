"""The value and index dtypes sparsescope supports, and their C spellings.

>>> c_type("float64"), c_type(np.int32)
('double', 'int32_t')
>>> value_dtype("float16")
Traceback (most recent call last):
...
compiler.errors.DTypeError: dtype float16 is not supported; use one of float64, float32, complex128, complex64, int64, int32, int16, int8, uint64, uint32, uint16, uint8, bool
>>> c_type("complex64"), result_dtype("float64", "complex64").name
('float _Complex', 'complex128')
>>> c_type("uint8"), result_dtype("uint8", "int8").name, result_dtype("uint64", "int64").name
('uint8_t', 'int16', 'float64')
"""

from __future__ import annotations

import numpy as np

from .errors import DTypeError

#: value dtypes, in the order used by error messages
VALUE_DTYPES = ("float64", "float32", "complex128", "complex64", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool")
#: the complex value dtypes (C99's ``double _Complex`` and ``float _Complex``, of <complex.h>)
COMPLEX_DTYPES = ("complex128", "complex64")
#: dtypes allowed for position and coordinate arrays
INDEX_DTYPES = ("int64", "int32")

_C_TYPES = {
    "float64": "double",
    "float32": "float",
    "complex128": "double _Complex",
    "complex64": "float _Complex",
    "int64": "int64_t",
    "int32": "int32_t",
    "int16": "int16_t",
    "int8": "int8_t",
    "uint64": "uint64_t",
    "uint32": "uint32_t",
    "uint16": "uint16_t",
    "uint8": "uint8_t",
    "bool": "bool",
}


# numpy computes a dtype's name anew on every access (about 10 µs: it is a property that formats
# the type), and a lowering asks for names and normalized dtypes hundreds of thousands of times;
# these memos are keyed by what the caller passed (a name, a type or a dtype), never by an array.
_NAMES: dict = {}
_VALUE_DTYPES: dict = {}
_SCALAR_TYPES: dict = {}


def dtype_name(dtype) -> str:
    """``np.dtype(dtype).name``, memoized.

    >>> dtype_name("f8"), dtype_name(np.float32), dtype_name(np.dtype("uint8"))
    ('float64', 'float32', 'uint8')
    """
    try:
        return _NAMES[dtype]
    except KeyError:
        name = _NAMES[dtype] = np.dtype(dtype).name
        return name
    except TypeError:  # unhashable: not memoized
        return np.dtype(dtype).name


def value_dtype(dtype) -> np.dtype:
    """Normalize ``dtype`` to a supported value dtype or raise :class:`DTypeError`.

    >>> value_dtype("f4"), value_dtype(bool)
    (dtype('float32'), dtype('bool'))
    """
    try:
        return _VALUE_DTYPES[dtype]
    except (KeyError, TypeError):
        pass
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{dtype!r} is not a dtype; use one of {', '.join(VALUE_DTYPES)}") from None
    if dt.name not in VALUE_DTYPES:
        raise DTypeError(f"dtype {dt.name} is not supported; use one of {', '.join(VALUE_DTYPES)}")
    try:
        _VALUE_DTYPES[dtype] = dt
    except TypeError:
        pass
    return dt


#: the largest extent a mode may have: coordinates are int64 in the generated C
LARGEST_EXTENT = 2 ** 63 - 1


def is_integer(x) -> bool:
    """Whether ``x`` is a Python or numpy integer, not a bool (``True`` is an int to Python).

    >>> is_integer(3), is_integer(np.int32(3)), is_integer(True), is_integer(3.0)
    (True, True, False, False)
    """
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def cast_values(arr: np.ndarray, dt, label: str) -> np.ndarray:
    """``arr`` as ``dt``, refusing values the cast would change: an integer out of ``dt``'s
    range, a fraction or a non-finite float into integers, a finite float that overflows to
    inf, a complex value into a real dtype, or a dtype that is no number (dates, strings).
    Floats are rounded to a narrower float (2^24 + 1 in float32), and numbers into bool are
    their truth values, as in numpy.

    >>> cast_values(np.array([1.0, 2.5]), np.dtype("int64"), "x")
    Traceback (most recent call last):
    ...
    compiler.errors.DTypeError: x: value 2.5 (float64) cannot be stored as int64 exactly
    >>> cast_values(np.array([1e300]), np.dtype("float32"), "x")
    Traceback (most recent call last):
    ...
    compiler.errors.DTypeError: x: value 1e+300 (float64) overflows float32 (floats are rounded, not refused)
    """
    dt = np.dtype(dt)
    if arr.dtype == dt:
        return arr
    if arr.dtype.kind not in "biufc":
        raise DTypeError(f"{label}: {arr.dtype.name} values cannot be stored as {dt.name}; sparsescope stores "
                         f"bool, integers, floats and complex numbers")
    if arr.dtype.kind == "c" and dt.kind != "c":
        raise DTypeError(f"{label}: {arr.dtype.name} values cannot be stored as {dt.name}: a complex value is no "
                         f"real one (store it as complex128, or take its real part)")
    bad = None
    with np.errstate(invalid="ignore", over="ignore"):
        if dt.kind in "iu" and arr.dtype.kind in "iuf" and arr.size:
            top = np.iinfo(dt)
            if arr.dtype.kind == "f":   # (float(top.max) + 1 is 2^63 exactly for int64, where top.max rounds up)
                bad = ~np.isfinite(arr) | (arr != np.trunc(arr)) | (arr < float(top.min)) | \
                    (arr >= float(top.max) + 1)
            else:
                bad = (arr < top.min) | (arr > top.max)
        elif dt.kind in "fc" and arr.dtype.kind == dt.kind and dt.itemsize < arr.dtype.itemsize and arr.size:
            over = np.isfinite(arr) & ~np.isfinite(arr.astype(dt))
            if over.any():
                raise DTypeError(f"{label}: value {arr[over].flat[0].item()!r} ({arr.dtype.name}) overflows "
                                 f"{dt.name} (floats are rounded, not refused)")
        if bad is not None and bad.any():
            raise DTypeError(f"{label}: value {arr[bad].flat[0].item()!r} ({arr.dtype.name}) cannot be stored as "
                             f"{dt.name} exactly")
        return arr.astype(dt)


def index_dtype(dtype) -> np.dtype:
    """Normalize ``dtype`` to a supported index dtype or raise :class:`DTypeError`."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"index dtype {dtype!r} is not a dtype; use int32 or int64") from None
    if dt.name not in INDEX_DTYPES:
        raise DTypeError(f"index dtype {dt.name} is not supported; use int32 or int64")
    return dt


def typed_scalar(value, dtype):
    """``value`` as a numpy scalar of ``dtype`` (a fill, an identity): arithmetic on it then rounds
    as the kernel's does (a float32 fill times itself is not the float64 product).

    >>> typed_scalar(0.1, "float32") * typed_scalar(0.1, "float32") == np.float32(0.1) * np.float32(0.1)
    np.True_
    """
    try:
        if type(value) is _SCALAR_TYPES[dtype]:  # already one: the common case, kept cheap
            return value
    except KeyError:
        _SCALAR_TYPES[dtype] = np.dtype(dtype).type
    except TypeError:  # an unhashable dtype argument
        pass
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(dtype)[()]


def c_type(dtype) -> str:
    """The C type name of a supported dtype (``bool`` needs ``<stdbool.h>``)."""
    name = dtype_name(dtype)
    try:
        return _C_TYPES[name]
    except KeyError:
        raise DTypeError(f"dtype {name} has no C type in sparsescope") from None


def result_dtype(*dtypes) -> np.dtype:
    """The dtype numpy would give combining ``dtypes`` (``np.result_type``: uint64 with a signed
    integer gives float64, as numpy's), restricted to supported ones.

    >>> result_dtype("int32", "float32").name
    'float64'
    """
    try:   # (memoized as dtype_name is: a lowering asks it of every operation it types)
        return _RESULTS[dtypes]
    except KeyError:
        dt = _RESULTS[dtypes] = _result_dtype(dtypes)
        return dt
    except TypeError:  # an unhashable dtype argument: not memoized
        return _result_dtype(dtypes)


_RESULTS: dict = {}


def _result_dtype(dtypes: tuple) -> np.dtype:
    dt = np.result_type(*[np.dtype(d) for d in dtypes])
    if dt.name not in VALUE_DTYPES:
        # e.g. float16 from mixing; fall back to the widest supported kind
        dt = np.dtype({"f": "float64", "c": "complex128"}.get(dt.kind, "int64"))
    return dt


def is_narrow(dtype) -> bool:
    """Whether C promotes ``dtype`` to ``int`` before arithmetic (an 8- or 16-bit integer): a
    result of that dtype must be cast back, so ``uint8`` 250 + 10 wraps to 4 as numpy's does.

    >>> is_narrow("uint8"), is_narrow("int16"), is_narrow("int32"), is_narrow("bool")
    (True, True, False, False)
    """
    dt = np.dtype(dtype)
    return dt.kind in "iu" and dt.itemsize < 4


def weak_literal_dtype(value, other_dtypes):
    """The dtype an int literal written in a program takes beside operands of ``other_dtypes``:
    an unsigned integer operand's (the widest) when the value fits it, as numpy gives a Python
    int the other operand's dtype (``x + 1`` of uint8 ``x`` stays uint8, and a uint64 mask
    ``m & 1`` stays uint64 where an int64 ``1`` would make it float64); else None (the literal
    stays int64, as literals are beside every other dtype).

    >>> weak_literal_dtype(1, [np.dtype("uint8")]), weak_literal_dtype(-1, [np.dtype("uint8")])
    (dtype('uint8'), None)
    >>> weak_literal_dtype(1, [np.dtype("int32")]) is None
    True
    """
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    unsigned = [d for d in other_dtypes if d.kind == "u"]
    if not unsigned:
        return None
    dt = max(unsigned, key=lambda d: d.itemsize)
    return dt if 0 <= value <= np.iinfo(dt).max else None
