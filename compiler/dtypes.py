"""The value and index dtypes sparsescope supports, and their C spellings.

>>> c_type("float64"), c_type(np.int32)
('double', 'int32_t')
>>> value_dtype("complex128")
Traceback (most recent call last):
...
compiler.errors.DTypeError: dtype complex128 is not supported; use one of float64, float32, int64, int32, bool
"""

from __future__ import annotations

import numpy as np

from .errors import DTypeError

#: value dtypes, in the order used by error messages
VALUE_DTYPES = ("float64", "float32", "int64", "int32", "bool")
#: dtypes allowed for position and coordinate arrays
INDEX_DTYPES = ("int64", "int32")

_C_TYPES = {
    "float64": "double",
    "float32": "float",
    "int64": "int64_t",
    "int32": "int32_t",
    "bool": "bool",
}


def value_dtype(dtype) -> np.dtype:
    """Normalize ``dtype`` to a supported value dtype or raise :class:`DTypeError`."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{dtype!r} is not a dtype; use one of {', '.join(VALUE_DTYPES)}") from None
    if dt.name not in VALUE_DTYPES:
        raise DTypeError(f"dtype {dt.name} is not supported; use one of {', '.join(VALUE_DTYPES)}")
    return dt


def index_dtype(dtype) -> np.dtype:
    """Normalize ``dtype`` to a supported index dtype or raise :class:`DTypeError`."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"index dtype {dtype!r} is not a dtype; use int32 or int64") from None
    if dt.name not in INDEX_DTYPES:
        raise DTypeError(f"index dtype {dt.name} is not supported; use int32 or int64")
    return dt


def c_type(dtype) -> str:
    """The C type name of a supported dtype (``bool`` needs ``<stdbool.h>``)."""
    name = np.dtype(dtype).name
    try:
        return _C_TYPES[name]
    except KeyError:
        raise DTypeError(f"dtype {name} has no C type in sparsescope") from None


def result_dtype(*dtypes) -> np.dtype:
    """The dtype numpy would give combining ``dtypes``, restricted to supported ones.

    >>> result_dtype("int32", "float32").name
    'float64'
    """
    dt = np.result_type(*[np.dtype(d) for d in dtypes])
    if dt.name not in VALUE_DTYPES:
        # e.g. uint64 from mixing; fall back to the widest supported kind
        dt = np.dtype("float64") if dt.kind == "f" else np.dtype("int64")
    return dt
