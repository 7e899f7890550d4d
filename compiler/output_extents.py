"""The extents of a kernel's output, from its inputs' shapes: an output extent is an int, an input's
mode ``(tensor, mode)``, or an operator over extents (``("+", ("a", 0), ("b", 0))`` for a
concatenation), as a strategy's :class:`compiler.runtime.Lowered` gives them; and the check that a
loop program's writes stay inside the output's extents.

>>> import numpy as np
>>> extent_value(("max", ("a", 0), 2), {"a": np.zeros(3)})
3
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ShapeError

__all__ = ["EXTENT_OPS", "check_output_writes", "extent_value"]


#: the operators an extent may apply to extents, by name
EXTENT_OPS = {"+": sum, "max": max, "min": min, "*": math.prod, "//": lambda xs: _quotient(*xs)}


def _quotient(a, b):
    return a // b if b else 0


def extent_value(entry, inputs: dict) -> int:
    """Evaluate one output extent: an int, ``(tensor, mode)``, or ``(op, entry, ...)``.

    ``op`` is ``"+"``, ``"max"``, ``"min"``, ``"*"`` or ``"//"``; a concatenation of ``a`` and ``b`` has
    extent ``("+", ("a", 0), ("b", 0))``.

    >>> import numpy as np
    >>> extent_value(("+", ("a", 0), ("b", 0), 1), {"a": np.zeros(3), "b": np.zeros(4)})
    8
    """
    if isinstance(entry, tuple) and entry and entry[0] in EXTENT_OPS:
        return int(EXTENT_OPS[entry[0]](extent_value(e, inputs) for e in entry[1:]))
    if isinstance(entry, tuple):
        t, m = entry
        if t not in inputs:
            raise ShapeError(f"the output's extent comes from {t}, which was not given")
        return int(np.shape(inputs[t])[m])
    return int(entry)


def check_output_writes(output: str, shape: tuple, writes: tuple, inputs: dict) -> None:
    """Refuse a call whose output ``shape`` some write (of ``Lowered.output_writes``) would reach past.

    >>> import numpy as np
    >>> check_output_writes("D", (4, 5), ((1, ("+", ("A", 1), 3), "line 7 of k"),), {"A": np.zeros((4, 3))})
    Traceback (most recent call last):
    ...
    compiler.errors.ShapeError: output D has extent 5 in mode 1, but line 7 of k writes it up to coordinate 5 (extent 6 needed)
    """
    for mode, entry, where in writes:
        need = extent_value(entry, inputs)
        if need > shape[mode]:
            raise ShapeError(f"output {output} has extent {shape[mode]} in mode {mode}, but {where} writes it up "
                             f"to coordinate {need - 1} (extent {need} needed)")
