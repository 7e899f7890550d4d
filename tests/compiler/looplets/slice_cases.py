"""What the looplets' slice tests share: a numpy slice's bounds as the notation writes them."""


def bounds(n, r, lo, hi):
    """numpy's ``[lo:hi:r]`` of an extent ``n`` as the notation's normalized (start, stop).

    >>> bounds(10, 2, 1, 7), bounds(10, -3, None, None), bounds(4, -1, 2, 3)
    ((1, 7), (9, -1), (2, 2))
    """
    start, stop, _ = slice(lo, hi, r).indices(n)
    if r > 0:
        return start, max(start, stop)
    return start, min(start, stop) if start >= 0 else -1
