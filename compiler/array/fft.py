"""The Array API's Fourier transform extension (``xp.fft``).

A discrete Fourier transform of a sparse array is dense: every frequency mixes every entry, so the
transforms are no sparse kernel. They compute their operand (an expression is one kernel of its own),
densify it, and run numpy's FFT (pocketfft), returning a dense Array whose trace says so; ``fftshift`` and
``ifftshift`` are rolls, so they fuse with the expression around them and keep a sparse operand sparse.
Dtypes follow the standard: a real ``float32`` or ``complex64`` operand gives ``complex64`` (``float32``
for ``irfft``/``hfft``), anything else the double precision ones.

>>> import numpy as np
>>> from compiler import array as xp
>>> v = xp.asarray(np.array([1.0, 0, 0, 0]), format="sparse")
>>> xp.fft.fft(v).todense().tolist()
[(1+0j), (1+0j), (1+0j), (1+0j)]
>>> xp.fft.fftshift(xp.asarray(np.arange(5.0))).todense().tolist()
[3.0, 4.0, 0.0, 1.0, 2.0]
>>> xp.fft.fftfreq(4, d=0.5).todense().tolist()
[0.0, 0.5, -1.0, -0.5]
"""

from __future__ import annotations

import numpy as np

from ..errors import DTypeError, ShapeError, UsageError
from . import build
from .derived import roll
from .lanes import dense, operand, result
from .lazy import Array, asarray

_NORMS = ("backward", "ortho", "forward")


def _real_kind(dtype: np.dtype) -> np.dtype:
    """The float dtype of a transform's working precision: single for float32/complex64, else double."""
    return np.dtype("float32") if dtype in (np.float32, np.complex64) else np.dtype("float64")


def _checked(what: str, x, norm: str, *, real: bool = False) -> tuple[np.ndarray, str]:
    """``x``'s values as a dense numpy array of the transform's dtype, and how they were had."""
    if norm not in _NORMS:
        raise UsageError(f"fft.{what}: norm is one of {', '.join(map(repr, _NORMS))}, not {norm!r}")
    t, how = operand(x, f"fft.{what}")
    dt = t.dtype
    if dt.kind not in "biufc":
        raise DTypeError(f"fft.{what} takes a numeric array, not {dt.name}")
    if real and dt.kind == "c":
        raise DTypeError(f"fft.{what} transforms a real array, not {dt.name}")
    values = t.to_numpy()
    work = _real_kind(dt)
    return values.astype(work if real else np.result_type(work, np.complex64), copy=False), how


def _length(what: str, name: str, n, default: int) -> int:
    if n is None:
        return default
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise UsageError(f"fft.{what}: {name} is a positive int, not {n!r}")
    return int(n)


def _one_axis(what: str, x, n, axis: int, norm: str, fn, *, real: bool = False, default=None) -> Array:
    values, how = _checked(what, x, norm, real=real)
    if values.ndim == 0:
        raise ShapeError(f"fft.{what}: a 0-d array has no axis to transform")
    (ax,) = build.normalize_axes(f"fft.{what}", axis, values.ndim)
    size = _length(what, "n", n, default(values.shape[ax]) if default else values.shape[ax])
    if default and size < 1:   # (irfft/hfft of a length-1 axis: 2*(1-1) points)
        raise ShapeError(f"fft.{what}: axis {ax} of length {values.shape[ax]} gives no output points; pass n")
    out = fn(values, n=size, axis=ax, norm=norm)
    return result(dense(out), f"{how}; numpy's FFT transformed it (a dense result)")


def _many_axes(what: str, x, s, axes, norm: str, fn, *, real: bool = False, last_default=None) -> Array:
    values, how = _checked(what, x, norm, real=real)
    if axes is None:
        axes = tuple(range(values.ndim)) if s is None else tuple(range(values.ndim - len(s), values.ndim))
    axes = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)
    normalized = [build.normalize_axes(f"fft.{what}", a, values.ndim)[0] for a in axes]
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"fft.{what}: axes {axes} name an axis twice")
    if s is None:
        s = [values.shape[a] for a in normalized]
        if last_default and s:
            s[-1] = last_default(s[-1])
    else:
        s = list(s) if isinstance(s, (tuple, list)) else [s]
        if len(s) != len(normalized):
            raise ShapeError(f"fft.{what}: s has {len(s)} entries for {len(normalized)} axes")
        # (-1: the axis as it is; for the inverse of a halved transform, its full length)
        s = [_length(what, "each of s", k, 0) if k != -1 else
             last_default(values.shape[a]) if last_default and j == len(s) - 1 else values.shape[a]
             for j, (a, k) in enumerate(zip(normalized, s))]
    if any(k < 1 for k in s):
        raise ShapeError(f"fft.{what}: the transform along axes {tuple(normalized)} has no points (s = {s})")
    out = fn(values, s=s, axes=normalized, norm=norm)
    return result(dense(out), f"{how}; numpy's FFT transformed it (a dense result)")


def fft(x, /, *, n=None, axis: int = -1, norm: str = "backward") -> Array:
    """The one-dimensional discrete Fourier transform along ``axis``, ``n`` points (cropped or padded
    with zeros)."""
    return _one_axis("fft", x, n, axis, norm, np.fft.fft)


def ifft(x, /, *, n=None, axis: int = -1, norm: str = "backward") -> Array:
    """The inverse of :func:`fft`."""
    return _one_axis("ifft", x, n, axis, norm, np.fft.ifft)


def fftn(x, /, *, s=None, axes=None, norm: str = "backward") -> Array:
    """The n-dimensional discrete Fourier transform over ``axes`` (all, or the last ``len(s)``)."""
    return _many_axes("fftn", x, s, axes, norm, np.fft.fftn)


def ifftn(x, /, *, s=None, axes=None, norm: str = "backward") -> Array:
    """The inverse of :func:`fftn`."""
    return _many_axes("ifftn", x, s, axes, norm, np.fft.ifftn)


def rfft(x, /, *, n=None, axis: int = -1, norm: str = "backward") -> Array:
    """The transform of a real array along ``axis``: the ``n // 2 + 1`` non-negative frequencies."""
    return _one_axis("rfft", x, n, axis, norm, np.fft.rfft, real=True)


def irfft(x, /, *, n=None, axis: int = -1, norm: str = "backward") -> Array:
    """The inverse of :func:`rfft`: a real array of ``n`` points (``2 * (m - 1)`` by default)."""
    return _one_axis("irfft", x, n, axis, norm, np.fft.irfft, default=lambda m: 2 * (m - 1))


def rfftn(x, /, *, s=None, axes=None, norm: str = "backward") -> Array:
    """The n-dimensional transform of a real array, halved along the last of ``axes``."""
    return _many_axes("rfftn", x, s, axes, norm, np.fft.rfftn, real=True)


def irfftn(x, /, *, s=None, axes=None, norm: str = "backward") -> Array:
    """The inverse of :func:`rfftn`."""
    return _many_axes("irfftn", x, s, axes, norm, np.fft.irfftn, last_default=lambda m: 2 * (m - 1))


def hfft(x, /, *, n=None, axis: int = -1, norm: str = "backward") -> Array:
    """The transform of a signal with Hermitian symmetry (given by its first half): a real array."""
    return _one_axis("hfft", x, n, axis, norm, np.fft.hfft, default=lambda m: 2 * (m - 1))


def ihfft(x, /, *, n=None, axis: int = -1, norm: str = "backward") -> Array:
    """The inverse of :func:`hfft`, of a real array."""
    return _one_axis("ihfft", x, n, axis, norm, np.fft.ihfft, real=True)


def _frequencies(what: str, n, d, dtype, fn) -> Array:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise UsageError(f"fft.{what}: n is a positive int, not {n!r}")
    dt = np.dtype("float64" if dtype is None else dtype)
    if dt.kind != "f":
        raise DTypeError(f"fft.{what}: the frequencies are real floats, not {dt.name}")
    return asarray(fn(int(n), d=d).astype(dt))


def fftfreq(n, /, *, d: float = 1.0, dtype=None, device=None) -> Array:
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``:
    ``[0, 1, ..., n//2 - 1 (or (n-1)//2), -(n//2), ..., -1] / (d * n)``."""
    return _frequencies("fftfreq", n, d, dtype, np.fft.fftfreq)


def rfftfreq(n, /, *, d: float = 1.0, dtype=None, device=None) -> Array:
    """The ``n // 2 + 1`` non-negative sample frequencies of :func:`rfft`."""
    return _frequencies("rfftfreq", n, d, dtype, np.fft.rfftfreq)


def _shift(what: str, x, axes, sign: int) -> Array:
    x = asarray(x)
    axes = build.normalize_axes(f"fft.{what}", axes, x.ndim)
    if not axes:
        return x
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in axes), axis=axes)


def fftshift(x, /, *, axes=None) -> Array:
    """``x`` with the zero frequency moved to the middle of each of ``axes`` (all by default): a roll by
    half of each extent, fused with the expression around it."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, /, *, axes=None) -> Array:
    """The inverse of :func:`fftshift` (they differ for odd extents)."""
    return _shift("ifftshift", x, axes, -1)


__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]
