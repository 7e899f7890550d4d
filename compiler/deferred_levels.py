"""The levels of a kernel's result, built when first read (:meth:`compiler.tensor.Tensor.deferred_result`).

A solver reads most results once, often only their values, so a result keeps the call that builds
its level objects (``_pending``) until something reads ``_root``, ``_levels`` or ``_leaf``. Each of
the three is a :class:`PendingLevels` on the class: a non-data descriptor, so once the instance holds
the value its own dictionary answers and the descriptor is never consulted again. (A ``__getattr__``
on the class did the same, but it made every attribute of every Tensor a slow lookup: CPython
specializes no attribute read on a class with its own ``__getattr__``.)

>>> class T:
...     _root = PendingLevels()
...     _levels = PendingLevels()
...     _leaf = PendingLevels()
>>> t = T()
>>> t._pending = (lambda: ("root", (("level",), "leaf")), ())
>>> t._levels, "_pending" in t.__dict__, t.__dict__["_root"]
(('level',), False, 'root')
"""

from __future__ import annotations


class PendingLevels:
    """``_root``, ``_levels`` or ``_leaf`` of an object whose ``_pending`` is ``(build, args)``,
    ``build(*args)`` returning ``(root, (levels, leaf))``; all three are set at once."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        d = obj.__dict__
        pending = d.get("_pending")
        if pending is None:
            raise AttributeError(f"'{type(obj).__name__}' object has no attribute '{self.name}'")
        # (built before _pending goes: a build that raises, a consumed result's, raises again)
        root, (levels, leaf) = pending[0](*pending[1])
        d["_root"], d["_levels"], d["_leaf"] = root, levels, leaf
        del d["_pending"]
        return d[self.name]


__all__ = ["PendingLevels"]
