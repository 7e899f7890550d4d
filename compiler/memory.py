"""Refusing an array that cannot fit before it is allocated.

Linux grants an allocation larger than the free memory (overcommit) and kills the process when
the array is filled, so numpy's own MemoryError never comes: a CSR matrix of 3e9 rows asks
for a 24 GB row array, and the process dies writing it. An array that is filled as soon as
it is made (row positions, a dense array at its fill) is checked here first, against the
memory the kernel says is available.

>>> require(8, "x's values", "use less")   # (8 bytes fit)
>>> human(3 * 2**30)
'3.0 GB'
"""

from __future__ import annotations


def available_bytes() -> int | None:
    """The memory available to new allocations (Linux's MemAvailable), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def human(nbytes: int) -> str:
    for unit, size in (("PB", 2**50), ("TB", 2**40), ("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if nbytes >= size:
            amount = nbytes / size
            return f"{amount:.1f} {unit}" if amount < 10**5 else f"{amount:.1e} {unit}"
    return f"{nbytes} bytes"


SMALL = 1 << 26   # 64 MB: an array this small is taken to fit (a kernel call reads no file for it)


def require(nbytes: int, what: str, hint: str) -> None:
    """Raise a MemoryError saying ``what`` needs ``nbytes`` and ``hint`` when more than the
    available memory; nothing otherwise (or where the available memory is unknown).

    >>> require(2**62, "A: level 1 (SparseList)", "use dcsr")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    MemoryError: A: level 1 (SparseList) needs 4096.0 PB, more than the ... of memory available; use dcsr
    """
    if nbytes <= SMALL:
        return
    available = available_bytes()
    # (a fifth is left for what comes with the array: scipy's copy, a conversion's sort, a check)
    if available is not None and nbytes > 0.8 * available:
        raise MemoryError(f"{what} needs {human(nbytes)}, {'more than' if nbytes > available else 'most of'} "
                          f"the {human(available)} of memory available; {hint}")
