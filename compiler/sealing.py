"""Index arrays a tensor owns, sealed read-only once they are known to be well formed.

A kernel trusts a tensor's ``pos`` and ``idx``: it reads ``x[idx[p]]`` for ``p`` in
``[pos[i], pos[i + 1])`` without a bounds check. A tensor validates them when it is built; a
tensor the compiler built itself (:meth:`~compiler.tensor.Tensor.from_numpy`, ``from_coords``,
``asformat``, a kernel's result) then seals them (numpy's ``writeable`` flag cleared on each
array and on every array it is a view of), so a later ``t.levels[1].idx[0] = 7`` raises
numpy's "assignment destination is read-only" instead of sending a kernel out of its buffers.
Nothing is scanned per call for such a tensor: a call looks at the flags of its index arrays
(:func:`sealed`, a few attribute reads). Arrays a tensor shares with their owner (a scipy
matrix's ``indices`` under ``Tensor.from_scipy``, arrays a user passed to the level
constructors) are not sealed, and neither is a sealed array a user made writeable again: each
call checks those again (:func:`compiler.recheck.check_again`).

>>> import numpy as np
>>> idx = np.array([0, 2])
>>> seal([idx[:1]])
>>> idx.flags.writeable, sealed(writers([idx[:1]]))
(False, True)
>>> idx.flags.writeable = True      # (the user's choice: calls check the arrays again)
>>> sealed(writers([idx[:1]]))
False
"""

from __future__ import annotations

import numpy as np

__all__ = ["index_writers", "seal", "sealed", "writers", "unseal"]


def writers(arrays) -> tuple:
    """Every numpy array through which ``arrays``' memory may be written: each array and each
    array it is a view of (numpy refuses to make a view writeable while its base is not, but the
    base itself may be made writeable again).

    >>> a = np.zeros(4)
    >>> [w is a for w in writers([a[1:]])]
    [False, True]
    """
    out = []
    for a in arrays:
        while a.__class__ is np.ndarray or isinstance(a, np.ndarray):
            out.append(a)
            a = a.base
    return tuple(out)


def sealed(chain: tuple) -> bool:
    """Whether no array of ``chain`` (:func:`writers`) is writeable."""
    for a in chain:
        if a.flags.writeable:
            return False
    return True


def seal(arrays) -> None:
    """Clear the ``writeable`` flag of each of ``arrays`` and of every array it is a view of."""
    for a in writers(arrays):
        a.flags.writeable = False


def unseal(arrays) -> None:
    """Make ``arrays`` writeable again where numpy allows it (each array that owns its memory, then
    its views): for a kernel's result handed back to the runtime to write into (``reuse(...)``).

    >>> a = np.zeros(2); seal([a]); unseal([a]); a.flags.writeable
    True
    """
    for a in reversed(writers(arrays)):
        if not a.flags.writeable:
            try:
                a.flags.writeable = True
            except ValueError:   # (memory numpy holds read-only for good: the caller's check says so)
                pass


def index_writers(tensor) -> tuple:
    """:func:`writers` of the arrays of ``tensor``'s levels (not its values), kept on the tensor
    (its levels, and the arrays they hold, never change).

    >>> from compiler import Tensor
    >>> sealed(index_writers(Tensor.from_numpy(np.eye(2), "csr")))
    True
    """
    d = tensor.__dict__
    chain = d.get("_index_writers")
    if chain is None:
        chain = d["_index_writers"] = writers([a for lvl in tensor.levels for a in lvl.arrays().values()])
    return chain
