"""What the looplets' slice tests share: a numpy slice's bounds as the notation writes them, a CSC's rows
sliced in the notation, and random matrices holding NaN and ±inf among their stored values."""

import numpy as np

STORED = [1.0, -2.0, np.nan, np.inf, -np.inf]


def bounds(n, r, lo, hi):
    """numpy's ``[lo:hi:r]`` of an extent ``n`` as the notation's normalized (start, stop).

    >>> bounds(10, 2, 1, 7), bounds(10, -3, None, None), bounds(4, -1, 2, 3)
    ((1, 7), (9, -1), (2, 2))
    """
    start, stop, _ = slice(lo, hi, r).indices(n)
    if r > 0:
        return start, max(start, stop)
    return start, min(start, stop) if start >= 0 else -1


def matrix(shape, density, fill, seed):
    """A random matrix of ``shape``: about ``density`` of its entries drawn from :data:`STORED`, the
    rest ``fill``."""
    rng = np.random.default_rng(seed)
    return np.where(rng.random(shape) < density, rng.choice(STORED, shape), fill)


def slice_program(n, key):
    """The notation's row slice of an ``n``-row ``A`` for numpy's ``key``.

    >>> slice_program(10, np.s_[::-2])
    'S[k, i] = slice(A[j, i], j -> k, (9, -1, -2))'
    """
    r = key.step or 1
    start, stop = bounds(n, r, key.start, key.stop)
    return f"S[k, i] = slice(A[j, i], j -> k, ({start}, {stop}, {r}))"
