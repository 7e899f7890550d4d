"""numpy's operators and methods on a stored :class:`~compiler.tensor.Tensor`, each computed at once by one kernel of
the array language (:mod:`compiler.array`), as scipy.sparse's and pydata/sparse's are: ``A.T``, ``A[1:3, ::-1]``,
``A.reshape(6, 2)``, ``A + 1``, ``-A``, ``A < 0``, ``A.sum(axis=0)`` and ``A @ x`` each return a Tensor.

An expression of several operators is one kernel with nothing computed in between only when it is lazy:
``compiler.asarray(A)`` makes an :class:`~compiler.array.Array` of it, whose operators build the expression and
whose ``compute()`` lowers it whole.

``==`` and ``!=`` keep comparing Tensors by identity (a Tensor is a key of dicts and sets, as a numpy array cannot
be): ``compiler.array.equal(A, B)`` compares their entries. A Tensor is not iterable (each row would be a kernel):
index it, or convert it with ``numpy.asarray``.

>>> import numpy as np
>>> import compiler
>>> A = compiler.Tensor.from_numpy(np.array([[0, 2.0, 0], [1.0, 0, 3.0]]), "csr")
>>> A.T.shape, A[1, ::-1].to_numpy().tolist(), (A * 2 + 1).to_numpy().tolist()
((3, 2), [3.0, 0.0, 1.0], [[1.0, 5.0, 1.0], [3.0, 1.0, 7.0]])
>>> A.sum(axis=0).to_numpy().tolist(), A.reshape(3, 2).to_numpy().tolist()
([1.0, 2.0, 3.0], [[0.0, 2.0], [0.0, 1.0], [0.0, 3.0]])
"""

from __future__ import annotations

import math

from .errors import UsageError

#: ``tensor -> Array`` (:func:`compiler.array.asarray`), set by :mod:`compiler.array`, which builds on Tensor
ASARRAY: list = []


def lazy(tensor):
    """``tensor`` as a lazy array of the array language (:func:`compiler.array.asarray`)."""
    if not ASARRAY:
        raise UsageError("a Tensor's operators are the array language's: import compiler.array first")
    return ASARRAY[0](tensor)


def _computed(name: str):
    """The Tensor method ``name``: the lazy array's, computed."""
    def method(self, *args, **kwargs):
        result = getattr(lazy(self), name)(*args, **kwargs)
        return result if result is NotImplemented else result.compute()
    method.__name__ = name
    method.__doc__ = f"numpy's ``{name}``, computed by one kernel: a Tensor (:mod:`compiler.tensor_operators`)."
    return method


def _computed_property(name: str):
    return property(lambda self: getattr(lazy(self), name).compute(),
                    doc=f"numpy's ``.{name}``, computed by one kernel: a Tensor (:mod:`compiler.tensor_operators`).")


#: the arithmetic, bitwise and order operators a Tensor computes (each with its reflected form where it has one)
_BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift", "matmul")
_ORDER = ("lt", "le", "gt", "ge")
_UNARY = ("neg", "pos", "abs", "invert")
_METHODS = ("reshape", "astype", "sum", "prod", "min", "max", "any", "all")


class ArrayOperators:
    """numpy's operators, ``.T``, ``.mT``, indexing and reductions on a Tensor, each computed by one kernel."""

    __slots__ = ()

    #: numpy leaves ``x + tensor`` and ``ufunc(tensor)`` to the Tensor (which has no ufuncs)
    __array_ufunc__ = None
    #: (not iterable: the sequence protocol would compute a kernel per row, and run on past the end of a
    #: first axis its indexing does not bound)
    __iter__ = None

    T = _computed_property("T")
    mT = _computed_property("mT")
    __getitem__ = _computed("__getitem__")

    @property
    def size(self) -> int:
        """The number of entries, stored or not (numpy's and the Array API's ``size``)."""
        return math.prod(self.shape)


for _name in _BINARY:
    setattr(ArrayOperators, f"__{_name}__", _computed(f"__{_name}__"))
    setattr(ArrayOperators, f"__r{_name}__", _computed(f"__r{_name}__"))
for _name in _ORDER + _UNARY:
    setattr(ArrayOperators, f"__{_name}__", _computed(f"__{_name}__"))
for _name in _METHODS:
    setattr(ArrayOperators, _name, _computed(_name))
