"""The Array API's statistical functions whose every entry depends on those before it: ``cumulative_sum``
and ``cumulative_prod`` (``sum``, ``mean``, ``var``, ... are reductions, fused). Its result is dense whatever its operand (after the
first stored entry every running sum differs from the fill), so it is run in its own buffer: the fill,
then each stored entry written at its place, then numpy's running sum (or product) along the axis, in place.

>>> import numpy as np, scipy.sparse as sp
>>> from compiler import array as xp
>>> A = sp.csr_array(np.array([[0, 2.0, 0], [1.0, 0, 3.0]]))
>>> xp.cumulative_sum(A, axis=1).todense().tolist()
[[0.0, 2.0, 2.0], [1.0, 1.0, 4.0]]
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from . import build
from .lanes import dense, lanes, operand, result
from .lazy import Array


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial: bool = False) -> Array:
    """The running sums of ``x`` along ``axis`` (which a 1-D ``x`` may leave None), in numpy's dtype of a
    sum (an int32 or bool array sums in int64) or ``dtype``; ``include_initial`` starts each with 0.

    >>> import numpy as np
    >>> cumulative_sum(np.array([1, 2, 3], dtype=np.int32), include_initial=True).todense().tolist()
    [0, 1, 3, 6]
    """
    return _running("cumulative_sum", np.cumulative_sum, np.cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial: bool = False) -> Array:
    """The running products of ``x`` along ``axis``, as :func:`cumulative_sum` (``include_initial``
    starts each with 1).

    >>> import numpy as np
    >>> cumulative_prod(np.array([1.0, 2.0, 3.0]), include_initial=True).todense().tolist()
    [1.0, 1.0, 2.0, 6.0]
    """
    return _running("cumulative_prod", np.cumulative_prod, np.cumprod, 1, x, axis, dtype, include_initial)


def _running(name: str, whole, in_place, initial, x, axis, dtype, include_initial: bool) -> Array:
    t, how = operand(x, name)
    if axis is None:
        if t.ndim != 1:
            raise ShapeError(f"{name}: axis may be None only for a 1-D array; shape {t.shape} needs one")
        axis = 0
    (ax,) = build.normalize_axes(name, axis, t.ndim)
    if t.format.is_dense:
        out = whole(t.to_numpy(), axis=ax, dtype=dtype, include_initial=include_initial)
    else:
        ls = lanes(t, ax)
        dt = whole(np.zeros(1, t.dtype), dtype=dtype).dtype
        lead = 1 if include_initial else 0
        # (each lane in a row of the result's buffer: its initial value, the fill, its stored entries; run there)
        out = np.full((ls.count, ls.n + lead), initial, dtype=dt)
        with np.errstate(invalid="ignore"):
            out[:, lead:] = np.asarray(t.fill, dtype=t.dtype).astype(dt)
            out[ls.lane, ls.pos + lead] = ls.vals.astype(dt)
        with np.errstate(all="ignore"):   # (numpy's running product overflows to inf as it does, silently here)
            in_place(out, axis=1, out=out)
        out = np.moveaxis(out.reshape(ls.outer + (ls.n + lead,)), -1, ax)
    return result(dense(out), how)


__all__ = ["cumulative_sum", "cumulative_prod"]
