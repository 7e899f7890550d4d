"""The Array API's data types, constants and data type functions, as numpy's.

The dtypes are numpy's (``xp.float64 == np.dtype("float64")``), so an array's ``dtype`` compares equal
to them; ``complex64`` and ``complex128`` are C99's ``float _Complex`` and ``double _Complex`` in a kernel.

>>> import numpy as np
>>> from compiler import array as xp
>>> x = xp.asarray(np.array([1, 2], dtype=np.int32))
>>> x.dtype == xp.int32, xp.result_type(x, xp.float32), xp.isdtype(x.dtype, "integral")
(True, dtype('float64'), True)
>>> xp.can_cast(xp.int8, xp.int16), xp.iinfo(xp.uint8).max
(True, 255)
>>> xp.result_type(xp.float64, xp.complex64), xp.finfo(xp.complex64).dtype, xp.isdtype(xp.complex64, "complex floating")
(dtype('complex128'), dtype('float32'), True)
"""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass

import numpy as np

from ..dtypes import VALUE_DTYPES, value_dtype
from .lazy import Array

__array_api_version__ = "2023.12"

#: numpy's scalar types, named as the standard names its dtypes
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float32, float64 = np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128
globals()["bool"] = np.bool_   # (this module's ``bool`` from here on: Python's is builtins.bool)

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None

def _dtype(x) -> np.dtype:
    return x.dtype if isinstance(x, Array) else np.dtype(x)


@dataclass(frozen=True)
class FloatInfo:
    """The Array API's ``finfo`` object: the limits of a floating dtype as Python numbers (numpy's ``finfo``
    gives them as numpy scalars of the dtype, which the standard does not)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    #: the real floating dtype (a complex one's parts')
    dtype: np.dtype


def finfo(type) -> FloatInfo:
    """The limits of a floating dtype or array (of a complex one: its parts' float, as the standard's).

    >>> from compiler import array as xp
    >>> info = xp.finfo(xp.float32)
    >>> info.bits, info.eps, type(info.max).__name__, xp.finfo(xp.complex128).dtype
    (32, 1.1920928955078125e-07, 'float', dtype('float64'))
    """
    info = np.finfo(_dtype(type))
    return FloatInfo(int(info.bits), float(info.eps), float(info.max), float(info.min), float(info.smallest_normal),
                     info.dtype)


def iinfo(type) -> np.iinfo:
    """numpy's ``iinfo`` of an integer dtype or array."""
    return np.iinfo(_dtype(type))


def can_cast(from_, to, /) -> bool:
    """Whether ``from_`` (a dtype or an array) casts to ``to`` by the promotion rules (numpy's safe cast)."""
    return builtins.bool(np.can_cast(_dtype(from_), np.dtype(to)))


def isdtype(dtype, kind) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name (``"bool"``, ``"signed integer"``,
    ``"unsigned integer"``, ``"integral"``, ``"real floating"``, ``"complex floating"``, ``"numeric"``)
    or a tuple of them."""
    return builtins.bool(np.isdtype(np.dtype(dtype), kind))


def result_type(*arrays_and_dtypes) -> np.dtype:
    """The dtype the promotion rules give these arrays, dtypes and Python scalars (numpy 2's)."""
    return np.result_type(*(a.dtype if isinstance(a, Array) else a for a in arrays_and_dtypes))


class _Info:
    """What :func:`__array_namespace_info__` tells: one device, the CPU, and the supported dtypes."""

    def capabilities(self) -> dict:
        # (a boolean index's result, unique_values' and nonzero's have sizes known only from the values: the
        # front end computes what decides them first, compiler.array.assignment)
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self) -> str:
        return "cpu"

    def devices(self) -> list:
        return ["cpu"]

    def default_dtypes(self, *, device=None) -> dict:
        return {"real floating": np.dtype("float64"), "complex floating": np.dtype("complex128"),
                "integral": np.dtype("int64"), "indexing": np.dtype("int64")}

    def dtypes(self, *, device=None, kind=None) -> dict:
        names = [n for n in VALUE_DTYPES if kind is None or np.isdtype(np.dtype(n), kind)]
        return {n: value_dtype(n) for n in names}


def __array_namespace_info__() -> _Info:
    """The namespace's inspection object (devices, default and supported dtypes)."""
    return _Info()


__all__ = ["__array_api_version__", "__array_namespace_info__", "bool", "int8", "int16", "int32", "int64",
           "uint8", "uint16", "uint32", "uint64", "float32", "float64", "complex64", "complex128", "e", "pi", "inf", "nan", "newaxis",
           "finfo", "iinfo", "can_cast", "isdtype", "result_type"]
