"""Tensors over other libraries' arrays: numpy, scipy.sparse and pydata/sparse, sharing buffers.

A numpy array becomes a dense tensor over the same memory when it is contiguous (C order, or
Fortran order stored column-major); a CSR or CSC matrix (scipy, or pydata's 2-D ``GCXS``) shares
its ``indptr``/``indices``/``data``; a canonical COO (scipy's or pydata's) its coordinates and
data. Anything else is converted.

>>> import scipy.sparse as sp
>>> m = sp.csr_matrix(np.array([[0, 2.0], [3.0, 0]]))
>>> t = to_tensor(m, "A")
>>> t.format.shorthand, np.shares_memory(t.vals, m.data)
('csr', True)
>>> a = np.arange(6.0).reshape(2, 3)
>>> np.shares_memory(to_tensor(a, "a").vals, a)
True
"""

from __future__ import annotations

import weakref

import numpy as np

from .dtypes import value_dtype
from .errors import DTypeError, FormatError, ShapeError, UsageError
from .levels import Dense, Element, SparseCOO, SparseList
from .levels.level import check_pos, check_range, normalize_fill
from .recheck import check_again, owned_by
from .scipy_arrays import check_scipy_arrays
from .tensor import Tensor


def is_scipy_sparse(obj) -> bool:
    """Whether ``obj`` is a scipy.sparse matrix or array (without importing scipy for others)."""
    return type(obj).__module__.startswith("scipy.sparse")


def is_pydata_sparse(obj) -> bool:
    """Whether ``obj`` is a pydata/sparse array (``sparse.COO``, ``sparse.GCXS``, ...)."""
    return type(obj).__module__.split(".")[0] == "sparse" and hasattr(obj, "fill_value")


def is_foreign(obj) -> bool:
    """Whether ``obj`` is a sparse array of another library that :func:`to_tensor` takes."""
    return is_scipy_sparse(obj) or is_pydata_sparse(obj)


def to_tensor(obj, name: str | None = None, checked: bool = True) -> Tensor:
    """``obj`` (a Tensor, numpy array or scalar, scipy.sparse or pydata/sparse array) as a Tensor,
    sharing its buffers where the layout allows; a Tensor is returned as it is.

    A scipy or pydata array given again, holding the same arrays and shape, is the same Tensor (:func:`kept`: its
    format, its pointers bound by a kernel, lower()'s first look, are found again), its arrays checked again, as
    their owner may have written them in place (one pass in C, :func:`compiler.recheck.check_again`; not
    ``checked``: the caller checks them before a kernel reads them). A fault is named as scipy names the
    matrix's arrays, as it was the first time (:func:`compiler.recheck.owned_by`).

    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix(np.array([[0, 2.0], [3.0, 0]]))
    >>> to_tensor(m, "A") is to_tensor(m, "A"), to_tensor(m, "A") is to_tensor(m.copy(), "A")
    (True, False)
    >>> m.indices[0] = 5
    >>> to_tensor(m, "A")
    Traceback (most recent call last):
    ...
    compiler.errors.FormatError: A (csr_matrix of shape (2, 2)): indices[0]=5 is out of range [0, 2)
    """
    if isinstance(obj, Tensor):
        return obj
    if hasattr(obj, "operand_tensor"):   # (an array of compiler.array: its tensor, or the expression computed)
        return obj.operand_tensor()
    if is_scipy_sparse(obj) or is_pydata_sparse(obj):
        tensor = kept(obj, name)
        if tensor is not None:
            if checked:
                check_again(tensor, name)
            return tensor
        try:
            tensor = _from_scipy(obj, name) if is_scipy_sparse(obj) else _from_pydata(obj, name)
        except DTypeError as e:   # (the library's array says no name: the message gives the tensor's)
            raise DTypeError(f"{name or 'array'} ({type(obj).__name__} of shape {obj.shape}): {e}; "
                             f"convert it with .astype(...)") from None
        _keep(obj, name, tensor)
        return tensor
    if isinstance(obj, (list, tuple)) or np.isscalar(obj) or isinstance(obj, (np.ndarray, np.generic)) \
            or hasattr(obj, "__array__"):
        try:
            arr = np.asarray(obj)
        except ValueError as e:   # (nested lists of different lengths)
            raise ShapeError(f"{name or 'array'}: nested lists of different lengths are not an array of one "
                             f"shape ({e})") from None
        return dense_view(arr, name)
    raise UsageError(f"{name or 'array'}: expected a numpy array, a scipy.sparse matrix or array, a "
                     f"pydata/sparse array or a Tensor, not {type(obj).__name__}")


def dense_view(arr: np.ndarray, name: str | None = None) -> Tensor:
    """A dense tensor over ``arr``'s memory (a copy only when ``arr`` is not contiguous or its
    dtype is not one a kernel takes); its fill is 0 (False for bool), as a numpy input's is."""
    try:
        dt = value_dtype(arr.dtype)
    except DTypeError as e:   # (float16, object, dates, ...)
        raise DTypeError(f"{name or 'array'} of shape {arr.shape}: {e}; convert it with .astype(...)") from None
    if arr.dtype != dt:
        arr = arr.astype(dt)
    order = tuple(range(arr.ndim))
    if arr.flags.c_contiguous:
        flat = arr.reshape(-1)
    elif arr.flags.f_contiguous:
        order = order[::-1]   # stored column-major: the last mode outermost
        flat = arr.transpose(order).reshape(-1)
    else:
        flat = np.ascontiguousarray(arr).reshape(-1)
    root = Element(normalize_fill(dt.type(0).item(), dt), flat, dt)   # (0.0 of float64: normalize_fill's fast path)
    for m in reversed(order):
        root = Dense(root, arr.shape[m])
    # (the format of every dense view of one dtype and order is one: made once, not per array, which an
    # array expression computed in a loop takes anew at each compute)
    t = Tensor.assembled(root, arr.shape, order, name, _DENSE_FORMATS.get((dt, order)))
    if (dt, order) not in _DENSE_FORMATS:
        _DENSE_FORMATS[dt, order] = t.format
    return t


#: (dtype, mode order) -> the format of :func:`dense_view`'s tensors
_DENSE_FORMATS: dict = {}


def holding(value) -> tuple:
    """``(held, shape)``: the array and tuple attributes of a scipy or pydata array (a COO's ``coords`` may be a
    tuple), and its shape, compared later by identity and value (:func:`still_holds`): the same arrays, whose
    contents alone its owner may have changed since.

    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix(np.eye(2))
    >>> held, shape = holding(m)
    >>> sorted(k for k, _ in held), still_holds(m, held, shape)
    (['_shape', 'data', 'indices', 'indptr'], True)
    >>> m.indices = m.indices.copy()
    >>> still_holds(m, held, shape)
    False
    """
    return tuple((k, v) for k, v in vars(value).items() if isinstance(v, (np.ndarray, tuple))), value.shape


def still_holds(value, held: tuple, shape) -> bool:
    """Whether ``value`` holds the attributes ``held`` (the same objects) and has ``shape`` (:func:`holding`): a
    resize in place may change the shape alone, as scipy's csr resized to more columns does."""
    if value.shape != shape:
        return False
    now = value.__dict__
    for k, obj in held:
        if now.get(k) is not obj:
            return False
    return True


#: ``(id, name) -> (weak reference, held, shape, tensor)``: the Tensor made over a scipy or pydata array's own
#: buffers while the array lives (:func:`to_tensor`); a tensor of arrays converted is not kept, as writes to
#: the array would not reach it
_KEPT: dict = {}


def kept(obj, name: str | None):
    """The Tensor :func:`to_tensor` made over ``obj``'s own buffers (named ``name``) if ``obj`` still holds
    them, else None."""
    entry = _KEPT.get((id(obj), name))
    if entry is None or entry[0]() is not obj or not still_holds(obj, entry[1], entry[2]):
        return None
    return entry[3]


def _keep(obj, name, tensor: Tensor) -> None:
    held, shape = holding(obj)
    own = [a for _, v in held for a in (v if isinstance(v, tuple) else (v,)) if isinstance(a, np.ndarray)]
    arrays = [a for level in tensor.level_arrays() for a in level.values() if isinstance(a, np.ndarray)]
    if not arrays or not all(any(np.may_share_memory(a, b) for b in own) for a in arrays):
        return
    key = (id(obj), name)
    try:
        ref = weakref.ref(obj, lambda _, key=key: _KEPT.pop(key, None))
    except TypeError:   # (an array type that takes no weak reference: made anew at each call)
        return
    _KEPT[key] = (ref, held, shape, tensor)
    if is_scipy_sparse(obj):
        def in_scipy_terms(label, ref=ref, held=held, shape=shape):
            # (only while the matrix holds the arrays the tensor reads: others are not the tensor's fault)
            owner = ref()
            if owner is not None and still_holds(owner, held, shape):
                check_scipy_arrays(owner, label or name or "tensor")
        owned_by(tensor, in_scipy_terms)


def _from_scipy(m, name) -> Tensor:
    if len(m.shape) == 1:   # (scipy >= 1.13's 1-D coo_array)
        coo = m.tocoo()
        return Tensor.from_coords(np.asarray(coo.coords), coo.data, m.shape, format="sparse_vector",
                                  name=name)
    return Tensor.from_scipy(m, name=name)


def _from_pydata(x, name) -> Tensor:
    dt = value_dtype(x.dtype)
    fill = normalize_fill(np.asarray(x.fill_value)[()], dt)   # (a 0-d COO's fill_value is a 0-d array)
    kind = type(x).__name__
    if x.ndim == 0:   # (one value, stored or the fill: no coordinates to share)
        return dense_view(np.asarray(x.todense()), name)
    what = f"{name or 'array'} ({kind} of shape {x.shape})"
    if kind == "GCXS" and x.ndim == 2 and len(x.compressed_axes) == 1 and x.dtype == dt:
        axis = x.compressed_axes[0]
        outer, inner = (x.shape[0], x.shape[1]) if axis == 0 else (x.shape[1], x.shape[0])
        itype = np.result_type(x.indptr.dtype, x.indices.dtype)
        if itype.name in ("int32", "int64") and x.indptr.dtype == x.indices.dtype:
            root = Dense(SparseList(Element(fill, x.data, dt), inner, x.indptr, x.indices, itype), outer)
            t = Tensor(root, shape=x.shape, mode_order=(0, 1) if axis == 0 else (1, 0), check=False)
            t.validate(as_name=what)   # (an error names the pydata array, as the user knows it)
            t.name = name
            return t
    if kind == "GCXS":
        check_compressed_arrays(x, what)   # (pydata's tocoo reads them as they are: garbage in, garbage out)
    if kind != "COO":
        try:
            x = x.tocoo()
        except (ValueError, IndexError) as e:   # (pydata's conversion of arrays written out of range)
            raise FormatError(f"{name or 'array'} ({kind} of shape {x.shape}): pydata cannot convert it to "
                              f"COO: {e}") from None
    coords = np.asarray(x.coords)
    if x.ndim > 0 and x.dtype == dt and coords.dtype.name in ("int32", "int64"):
        # pydata's COO sorts and sums its entries when built, so they are canonical: shared
        # (the Tensor's validation says otherwise for a COO built with sorted=True unsorted)
        root = SparseCOO(x.ndim, Element(fill, x.data, dt), tuple(x.shape),
                         np.array([0, len(x.data)], dtype=coords.dtype), tuple(coords), coords.dtype)
        try:
            return Tensor(root, shape=x.shape, name=name)
        except FormatError:
            pass
    return Tensor.from_coords(coords.reshape(x.ndim, -1), np.asarray(x.data), x.shape,
                              format="coo" if x.ndim > 1 else "sparse_vector", fill=fill, name=name)


def check_compressed_arrays(x, what: str) -> None:
    """Raise a FormatError naming ``what`` where a pydata GCXS array's ``indptr`` and ``indices`` are
    not what its shape says (pydata's ``tocoo`` reads them unchecked: an ``indptr`` written out of
    order gives entries of other rows, silently).

    >>> import sparse
    >>> g = sparse.GCXS(sparse.COO.from_numpy(np.arange(8.0).reshape(2, 2, 2)), compressed_axes=[0])
    >>> g.indptr[1] = 9
    >>> check_compressed_arrays(g, "G")
    Traceback (most recent call last):
    ...
    compiler.errors.FormatError: G: indptr is not non-decreasing: indptr[1]=9 > indptr[2]=7
    """
    axes = tuple(x.compressed_axes)
    rows = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    cols = int(np.prod([x.shape[a] for a in range(x.ndim) if a not in axes], dtype=np.int64))
    indptr, indices = np.asarray(x.indptr), np.asarray(x.indices)
    if indptr.ndim != 1 or indices.ndim != 1 or indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu":
        raise FormatError(f"{what}: indptr and indices must be 1-D integer arrays")
    if len(indices) != len(np.asarray(x.data)):
        raise FormatError(f"{what}: indices has length {len(indices)} but data {len(np.asarray(x.data))}")
    check_pos(indptr, rows, len(indices), "indices", what, "indptr")
    check_range(indices, cols, "indices", what)


def tensors_of(tensors: dict) -> dict:
    """``tensors`` with each scipy.sparse or pydata/sparse value made a Tensor (sharing buffers), and each array of
    :mod:`compiler.array` its tensor (or its expression computed); formats, numpy arrays, scalars and Tensors stay
    as they are."""
    def taken(v) -> bool:
        return is_foreign(v) or hasattr(v, "operand_tensor")
    for v in tensors.values():   # (most calls give none: asked on every einsum, return them as given)
        if v.__class__ is not Tensor and v.__class__ is not np.ndarray and v.__class__ is not str and taken(v):
            return {k: (to_tensor(v, k) if taken(v) else v) for k, v in tensors.items()}
    return tensors


__all__ = ["to_tensor", "dense_view", "tensors_of", "is_foreign", "is_scipy_sparse", "is_pydata_sparse", "kept", "holding",
           "still_holds"]
