"""The Array API's statistical function whose every entry depends on those before it: ``cumulative_sum``
(``sum``, ``mean``, ``var``, ... are reductions, fused). Its result is dense whatever its operand (after the
first stored entry every running sum differs from the fill), so it is summed in its own buffer: the fill,
then each stored entry written at its place, then numpy's running sum along the axis, in place.

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
    t, how = operand(x, "cumulative_sum")
    if axis is None:
        if t.ndim != 1:
            raise ShapeError(f"cumulative_sum: axis may be None only for a 1-D array; shape {t.shape} needs one")
        axis = 0
    (ax,) = build.normalize_axes("cumulative_sum", axis, t.ndim)
    if t.format.is_dense:
        out = np.cumulative_sum(t.to_numpy(), axis=ax, dtype=dtype, include_initial=include_initial)
    else:
        ls = lanes(t, ax)
        dt = np.cumulative_sum(np.zeros(1, t.dtype), dtype=dtype).dtype
        lead = 1 if include_initial else 0
        # (each lane in a row of the result's buffer: its initial 0, the fill, its stored entries; summed there)
        out = np.zeros((ls.count, ls.n + lead), dtype=dt)
        with np.errstate(invalid="ignore"):
            out[:, lead:] = np.asarray(t.fill, dtype=t.dtype).astype(dt)
            out[ls.lane, ls.pos + lead] = ls.vals.astype(dt)
        np.cumsum(out, axis=1, out=out)
        out = np.moveaxis(out.reshape(ls.outer + (ls.n + lead,)), -1, ax)
    return result(dense(out), how)


__all__ = ["cumulative_sum"]
