"""The Array API's creation functions: arrays of one value, identities and ranges, stored dense or in a
sparse format. A sparse array of one value stores nothing: the value is its fill, so
``full((n, n), 1.0, format="csr")`` costs what an empty matrix does, and ``eye`` stores its diagonal.

>>> import numpy as np
>>> from compiler import array as xp
>>> ones = xp.ones((2, 3), format="csr")
>>> ones.fill_value, ones.compute().nnz, (ones * 2).todense().tolist()
(1.0, 0, [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]])
>>> xp.eye(3, k=1, format="csr").todense().tolist()
[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
"""

from __future__ import annotations

import numpy as np

from ..errors import DTypeError, ShapeError, UsageError
from ..tensor import Tensor
from . import build
from .lazy import Array, asarray, broadcast_to, check_device, where


#: numpy's most dimensions of an array
_MOST_DIMENSIONS = 64


def _shape(what: str, shape) -> tuple:
    """``shape`` (an integer or integers) as a tuple, or a ShapeError naming ``what``."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    elif not np.iterable(shape) or isinstance(shape, (str, bytes)):
        raise ShapeError(f"{what}: shape must be an integer or a tuple of integers, got {shape!r}")
    shape = tuple(shape)
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise ShapeError(f"{what}: shape must be non-negative integers, got {shape!r}")
    if len(shape) > _MOST_DIMENSIONS:
        raise ShapeError(f"{what}: shape {shape} has {len(shape)} dimensions; an array has at most {_MOST_DIMENSIONS}")
    return tuple(int(n) for n in shape)


def _dtype(what: str, dtype) -> np.dtype:
    """``dtype`` as numpy's, or a UsageError naming ``what``."""
    try:
        return np.dtype(dtype)
    except TypeError:
        raise UsageError(f"{what}: dtype {dtype!r} is not a dtype numpy knows (float64, int32, bool, ...)") from None


def _integer(what: str, name: str, value, least=None) -> int:
    """``value`` as an int (a Python or numpy integer, not a bool), at least ``least``, or a UsageError."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise UsageError(f"{what}: {name} must be an integer, got {value!r}")
    if least is not None and value < least:
        raise UsageError(f"{what}: {name} must be at least {least}, got {value}")
    return int(value)


def _number(what: str, name: str, value):
    """``value`` if it is a real number (Python or numpy, finite or not), else a UsageError."""
    if isinstance(value, (bool, int, float, np.integer, np.floating, np.bool_)):
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf":
        return value[()]
    raise UsageError(f"{what}: {name} must be a real number, got {value!r}")


def _allocated(what: str, shape: tuple, make):
    """``make()`` (numpy allocating an array of ``shape``), a MemoryError naming ``what`` where the
    array cannot be held (numpy says "array is too big" as a ValueError past its largest size)."""
    try:
        return make()
    except ValueError as e:
        if "too big" in str(e) or "maximum" in str(e).lower():
            raise MemoryError(f"{what}: an array of shape {shape} is too large to allocate ({e}); a sparse "
                              f"format (format='csr', ...) stores none of its entries") from None
        raise


def full(shape, fill_value, *, dtype=None, device=None, format=None) -> Array:
    """An array of ``shape`` holding ``fill_value`` everywhere (dtype: ``fill_value``'s, as numpy's).
    Stored dense by default; in a sparse ``format`` it stores no entry, ``fill_value`` being its fill.

    >>> from compiler import array as xp
    >>> xp.full((2, 2), 300, dtype="int8")
    Traceback (most recent call last):
    ...
    compiler.errors.DTypeError: full: fill value 300 does not fit dtype int8 (Python integer 300 out of bounds for int8)
    """
    check_device("full", device)
    return _full("full", shape, fill_value, dtype, format)


def _full(what: str, shape, fill_value, dtype, format) -> Array:
    """:func:`full`, its errors naming ``what`` (the function the user called)."""
    shape = _shape(what, shape)
    dt = _dtype(what, dtype) if dtype is not None else np.asarray(fill_value).dtype
    if dt.kind not in "biufc":
        raise UsageError(f"{what}: dtype {dt.name} is no value dtype of a tensor (bool, integers, floats, complex)")
    if np.iscomplexobj(fill_value) and dt.kind != "c":   # (numpy would drop its imaginary part, warning)
        raise DTypeError(f"{what}: fill value {fill_value!r} is complex; dtype {dt.name} is real (pass dtype=complex128)")
    try:
        value = np.asarray(fill_value).astype(dt)[()] if np.asarray(fill_value).dtype != dt else \
            np.asarray(fill_value)[()]
        np.array(fill_value, dtype=dt)   # (numpy's own refusal of a Python integer out of the dtype's range)
    except (OverflowError, ValueError, TypeError) as e:
        raise DTypeError(f"{what}: fill value {fill_value!r} does not fit dtype {dt.name} ({e})") from None
    if format is None or format == "dense":
        return asarray(_allocated(what, shape, lambda: np.full(shape, value, dtype=dt)))
    return asarray(Tensor.from_coords(np.zeros((len(shape), 0), np.int64), np.zeros(0, dt), shape,
                                      format=format, fill=value, dtype=dt.name))


def zeros(shape, *, dtype=None, device=None, format=None) -> Array:
    """An array of zeros (in a sparse ``format``: no entry stored); float64 unless ``dtype`` says otherwise."""
    check_device("zeros", device)
    dtype = _dtype("zeros", dtype)
    return _full("zeros", shape, np.zeros((), dtype)[()], dtype, format)


def ones(shape, *, dtype=None, device=None, format=None) -> Array:
    """An array of ones (in a sparse ``format``: no entry stored, its fill 1); float64 unless ``dtype`` says
    otherwise."""
    check_device("ones", device)
    dtype = _dtype("ones", dtype)
    return _full("ones", shape, np.ones((), dtype)[()], dtype, format)


def full_like(x, /, fill_value, *, dtype=None, device=None, format=None) -> Array:
    """``full`` of ``x``'s shape (and dtype, unless given)."""
    x = asarray(x)
    return full(x.shape, fill_value, dtype=x.dtype if dtype is None else dtype, device=device, format=format)


def zeros_like(x, /, *, dtype=None, device=None, format=None) -> Array:
    """Zeros of ``x``'s shape and dtype."""
    x = asarray(x)
    return full_like(x, np.zeros((), x.dtype if dtype is None else dtype)[()], dtype=dtype, device=device,
                     format=format)


def ones_like(x, /, *, dtype=None, device=None, format=None) -> Array:
    """Ones of ``x``'s shape and dtype."""
    x = asarray(x)
    return full_like(x, np.ones((), x.dtype if dtype is None else dtype)[()], dtype=dtype, device=device,
                     format=format)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype=None, device=None, format=None) -> Array:
    """Ones on the ``k``-th diagonal (above the main one for ``k > 0``), zeros elsewhere (float64 unless ``dtype``
    says otherwise); in a sparse ``format`` (``"csr"``, ...) only the diagonal is stored, as
    ``scipy.sparse.eye_array``'s."""
    check_device("eye", device)
    n_cols = n_rows if n_cols is None else n_cols
    rows, cols = _shape("eye", (n_rows, n_cols))
    k = _integer("eye", "k", k)
    dtype = _dtype("eye", dtype)
    if format is None or format == "dense":
        return asarray(_allocated("eye", (rows, cols), lambda: np.eye(rows, cols, k=k, dtype=dtype)))
    start, stop = max(0, -k), min(rows, cols - k)
    i = np.arange(start, max(start, stop), dtype=np.int64)
    return asarray(Tensor.from_coords(np.stack([i, i + k]), np.ones(len(i), dtype), (rows, cols), format=format,
                                      dtype=np.dtype(dtype).name))


def arange(start, /, stop=None, step=1, *, dtype=None, device=None) -> Array:
    """numpy's ``arange`` as a dense array (``arange(5)``, ``arange(2, 10, 3)``)."""
    check_device("arange", device)
    start, step = _number("arange", "start", start), _number("arange", "step", step)
    stop = None if stop is None else _number("arange", "stop", stop)
    dtype = None if dtype is None else _dtype("arange", dtype)
    if step == 0:
        raise UsageError("arange: step cannot be 0 (numpy divides by it)")
    for name, value in (("start", start), ("stop", stop), ("step", step)):
        if value is not None and not np.isfinite(value):
            raise UsageError(f"arange: {name} must be finite, got {value!r} (the count of values would be infinite)")
    count = np.ceil(((start if stop is not None else 0) - (stop if stop is not None else start)) / -step)
    return asarray(_allocated("arange", (max(0, int(count)),), lambda: (
        np.arange(start, stop, step, dtype=dtype) if stop is not None else
        np.arange(start, step=step, dtype=dtype) if step != 1 else np.arange(start, dtype=dtype))))


def linspace(start, stop, /, num: int, *, dtype=None, device=None, endpoint: bool = True) -> Array:
    """numpy's ``linspace`` as a dense array.

    >>> from compiler import array as xp
    >>> xp.linspace(0, 1, 2.5)
    Traceback (most recent call last):
    ...
    compiler.errors.UsageError: linspace: num must be an integer, got 2.5
    """
    check_device("linspace", device)
    start, stop = _number("linspace", "start", start), _number("linspace", "stop", stop)
    num = _integer("linspace", "num", num, least=0)
    dtype = None if dtype is None else _dtype("linspace", dtype)
    return asarray(_allocated("linspace", (num,), lambda: np.linspace(start, stop, num, dtype=dtype,
                                                                       endpoint=endpoint)))


def from_dlpack(x, /, *, device=None, copy=None) -> Array:
    """An array of any DLPack producer's data (a numpy array, a torch CPU tensor, another Array),
    shared as numpy's ``from_dlpack`` shares it."""
    check_device("from_dlpack", device)
    kwargs = {} if copy is None else {"copy": copy}
    if not hasattr(x, "__dlpack__"):
        raise UsageError(f"from_dlpack: a {type(x).__name__} is no DLPack producer (it has no __dlpack__); "
                         f"use asarray for it")
    return asarray(np.from_dlpack(x, **kwargs))


def empty(shape, *, dtype=None, device=None, format=None) -> Array:
    """An array whose values the standard leaves unspecified: zeros here (so a sparse one stores nothing)."""
    return zeros(shape, dtype=dtype, device=device, format=format)


def empty_like(x, /, *, dtype=None, device=None, format=None) -> Array:
    """``empty`` of ``x``'s shape and dtype."""
    return zeros_like(x, dtype=dtype, device=device, format=format)


def _triangle(what: str, x, k: int, lower: bool) -> Array:
    x = asarray(x)
    k = build.matrix_offset(what, x.node, k)
    m, n = x.shape[-2:]
    i, j = arange(m)[:, None], arange(n)[None, :]
    keep = (j <= i + k) if lower else (j >= i + k)
    zero = np.zeros((), x.dtype)[()]
    # (where's branches share the fill 0, so both strategies visit x's stored entries only)
    return where(keep, x, zero)


def tril(x, /, *, k: int = 0) -> Array:
    """``x`` with the entries above the ``k``-th diagonal of its last two axes zero: fused, a kernel
    over ``x``'s stored entries, comparing their coordinates.

    >>> import numpy as np
    >>> from compiler import array as xp
    >>> xp.tril(xp.ones((3, 3), format="csr"), k=-1).todense().tolist()
    [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    """
    return _triangle("tril", x, k, lower=True)


def triu(x, /, *, k: int = 0) -> Array:
    """``x`` with the entries below the ``k``-th diagonal of its last two axes zero (see :func:`tril`)."""
    return _triangle("triu", x, k, lower=False)


def meshgrid(*arrays, indexing: str = "xy") -> list:
    """Coordinate grids of 1-D arrays, each broadcast (not copied) to the grid's shape; ``indexing="xy"``
    swaps the first two axes, as numpy's.

    >>> from compiler import array as xp
    >>> [g.todense().tolist() for g in xp.meshgrid(xp.arange(2), xp.arange(3))][0]
    [[0, 1], [0, 1], [0, 1]]
    """
    if indexing not in ("xy", "ij"):
        raise UsageError(f"meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}")
    xs = [asarray(a) for a in arrays]
    for k, a in enumerate(xs):
        if a.ndim != 1:
            raise ShapeError(f"meshgrid: argument {k} has shape {a.shape}; each must be 1-D")
    axes = list(range(len(xs)))
    if indexing == "xy" and len(xs) >= 2:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(xs)
    for a, ax in zip(xs, axes):
        shape[ax] = a.shape[0]
    return [broadcast_to(a.reshape(tuple(-1 if d == ax else 1 for d in range(len(xs)))), tuple(shape))
            for a, ax in zip(xs, axes)]


__all__ = ["full", "zeros", "ones", "full_like", "zeros_like", "ones_like", "eye", "arange", "linspace", "from_dlpack", "empty",
           "empty_like", "tril", "triu", "meshgrid"]
