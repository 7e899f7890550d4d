"""A scipy.sparse matrix's own arrays checked before scipy, or a tensor over them, reads them.

scipy checks a matrix's arrays when it is built, not when they are assigned or written later
(``m.indptr = ...``, ``m.indices[0] = 7``), and its C++ routines (sorting indices, summing
duplicates, converting CSR to CSC or COO to CSR) index by ``indptr`` and ``indices`` without
bounds checks: a malformed matrix crashes the process inside them. :func:`check_scipy_arrays`
checks what those routines index by, in scipy's names for the arrays, before
:meth:`compiler.Tensor.from_scipy` asks scipy anything about them.

>>> import numpy as np, scipy.sparse as sp
>>> m = sp.csr_matrix(np.eye(3))
>>> m.indptr = np.array([0, 9, 2, 3])
>>> check_scipy_arrays(m, "A")
Traceback (most recent call last):
    ...
compiler.errors.FormatError: A (csr_matrix of shape (3, 3)): indptr is not non-decreasing: indptr[1]=9 > indptr[2]=2
"""

from __future__ import annotations

import numpy as np

from .errors import FormatError
from .levels.level import check_pos, check_range

__all__ = ["check_scipy_arrays"]


def check_scipy_arrays(m, label: str) -> None:
    """Raise a FormatError naming ``label`` and scipy's array if ``m``'s index arrays cannot be read
    safely: a CSR, CSC or BSR matrix's ``indptr`` (its length, ``indptr[0] == 0``, non-decreasing,
    its last entry within ``indices`` and ``data``, which have one length) and ``indices`` (inside
    the extent), a COO matrix's ``row``/``col`` (as long as ``data``, inside the shape). Order and duplicates are not
    errors: from_scipy sorts and sums them. Other formats keep no such arrays and pass.

    >>> import scipy.sparse as sp
    >>> m = sp.coo_array((np.ones(2), (np.array([0, 1]), np.array([0, 1]))), shape=(2, 2))
    >>> m.col = np.array([0, -1])
    >>> check_scipy_arrays(m, "B")
    Traceback (most recent call last):
        ...
    compiler.errors.FormatError: B (coo_array of shape (2, 2)): col[1]=-1 is out of range [0, 2)
    """
    what = f"{label} ({type(m).__name__} of shape {m.shape})"
    if m.format in ("csr", "csc", "bsr"):
        _check_compressed(m, what)
    elif m.format == "coo" and len(m.shape) == 2:
        row, col = _index_array(m, "row", what), _index_array(m, "col", what)
        data = np.asarray(m.data)
        if not len(row) == len(col) == len(data):
            raise FormatError(f"{what}: row, col and data have lengths {len(row)}, {len(col)} and {len(data)}; "
                              f"a COO matrix has one row, column and value per entry")
        _check_inside(row, m.shape[0], "row", what)
        _check_inside(col, m.shape[1], "col", what)


def _check_compressed(m, what: str) -> None:
    rows, cols = m.shape
    block = m.blocksize if m.format == "bsr" else (1, 1)
    outer, inner = (rows // block[0], cols // block[1]) if m.format != "csc" else (cols, rows)
    indptr, indices = _index_array(m, "indptr", what), _index_array(m, "indices", what)
    if len(indices) != len(m.data):
        raise FormatError(f"{what}: indices has length {len(indices)} but data {len(m.data)}; scipy keeps one "
                          f"value per index")
    # (entries past indptr[-1] are scipy's to prune, so they are no error)
    stored = min(int(indptr[-1]), len(indices)) if len(indptr) else 0
    check_pos(indptr, outer, stored, "indices", what, "indptr")
    _check_inside(indices[:stored], inner, "indices", what)


def _index_array(m, name: str, what: str) -> np.ndarray:
    arr = np.asarray(getattr(m, name))
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise FormatError(f"{what}: {name} must be a 1-D integer array, got {arr.dtype} of shape {arr.shape}")
    return arr


def _check_inside(idx: np.ndarray, extent: int, name: str, what: str) -> None:
    # (two reductions, no temporary arrays: the entry at fault is looked for only when there is one)
    if len(idx) and (idx.min() < 0 or idx.max() >= extent):
        check_range(idx, extent, name, what)
