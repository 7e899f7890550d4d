"""The extents of a kernel's output, from its inputs' shapes: an output extent is an int, an input's
mode ``(tensor, mode)``, or an operator over extents (``("+", ("a", 0), ("b", 0))`` for a
concatenation), as a strategy's :class:`compiler.runtime.Lowered` gives them; and the check that a
loop program's writes stay inside the output's extents, and that the extents a kernel walks as one
agree (:func:`check_walked_together`).

>>> import numpy as np
>>> extent_value(("max", ("a", 0), 2), {"a": np.zeros(3)})
3
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ShapeError
from .notation.infer import extent_text

__all__ = ["EXTENT_OPS", "check_output_writes", "check_walked_together", "entry_tensors", "extent_value"]


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


def entry_tensors(entry) -> set:
    """The tensors whose shapes an extent entry (:func:`extent_value`'s) reads.

    >>> sorted(entry_tensors(("+", ("A", 1), 3))), entry_tensors(4)
    (['A'], set())
    """
    if isinstance(entry, tuple) and entry and isinstance(entry[0], str) and len(entry) == 2 \
            and isinstance(entry[1], int):
        return {entry[0]}
    if isinstance(entry, tuple):
        return set().union(*(entry_tensors(e) for e in entry[1:]))
    return set()


def check_walked_together(agree: tuple, inputs: dict) -> None:
    """Refuse a call whose tensors' extents differ where the kernel walks them as one: ``agree`` holds
    ``(index, walked, read)`` (``Lowered.agree``), ``walked`` the extents of the kernel's loops and
    ``read`` those of a tensor read at the same loops (``A.reshape(-1) + Z.reshape(-1)`` under looplets,
    both flattens of ``k`` walked by one pair of loops): no read may pass the end of a mode. An agreement
    naming a tensor not in ``inputs`` (a lowering given formats) is left to the call.

    >>> flat = (("k", (("A", 0), ("A", 1)), (("Z", 0), ("Z", 1))),)
    >>> check_walked_together(flat, {"A": np.zeros((3, 4)), "Z": np.zeros((3, 4))})
    >>> check_walked_together(flat, {"A": np.zeros((3, 4)), "Z": np.zeros((4, 3))})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    compiler.errors.ShapeError: k flattens A.shape[0] × A.shape[1] and Z.shape[0] × Z.shape[1] in one walk: ... \
but A has shape (3, 4) and Z (4, 3); lower with strategy='lattice' to flatten tensors of different shapes into one index
    """
    for index, walked, read in agree:
        names = list(dict.fromkeys(t for pair in (walked, read) for e in pair for t in sorted(entry_tensors(e))))
        if not all(t in inputs for t in names):
            continue   # (lowered for formats alone: the call checks them)
        have = [tuple(extent_value(e, inputs) for e in pair) for pair in (walked, read)]
        if have[0] == have[1]:
            continue
        shapes = [f"{t} has shape {tuple(np.shape(inputs[t]))}" if k == 0 else f"{t} {tuple(np.shape(inputs[t]))}"
                  for k, t in enumerate(names)]
        shapes = " and ".join([", ".join(shapes[:-1]), shapes[-1]] if len(shapes) > 1 else shapes)
        raise ShapeError(f"{index} flattens {' × '.join(map(extent_text, walked))} and "
                         f"{' × '.join(map(extent_text, read))} in one walk: the kernel's loops run over "
                         f"{' × '.join(map(str, have[0]))} and read both at each pair, so these extents must agree "
                         f"pairwise, but {shapes}; lower with strategy='lattice' to "
                         f"flatten tensors of different shapes into one index")
