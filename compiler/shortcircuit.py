"""When a reduction may stop early: its accumulator holds the operator's annihilator, which no
later value changes (``any`` at true, ``prod`` at 0, ``min`` at -inf), exactly for what the values
may hold (:mod:`compiler.values`). Both strategies ask it: the looplets reduce into a
:class:`~compiler.looplets.scalars.ShortCircuitScalar`, the lattice strategy breaks out of a
scalar temporary's loops (:mod:`compiler.lattice.early_exit`).

>>> from compiler.algebra import lookup
>>> early_exit(lookup("and"), np.dtype(bool), values.FINITE)
(True, 'and stops at its annihilator false')
"""

from __future__ import annotations

import numpy as np

from . import values
from .algebra import reduction_annihilator


def early_exit(op, dtype, facts: values.Facts) -> tuple[bool, str]:
    """Whether a reduction by ``op`` of values with ``facts`` into ``dtype`` may stop once its
    accumulator holds the annihilator, and why.

    It may when the annihilator is exact for those values (``0 * NaN`` is NaN; ``min(-inf, NaN)``
    NaN, as numpy's) and can be reached: an infinite annihilator of a float reduction only when
    the values may hold that infinity; for an integer ``min``/``max`` it stands for the integer
    extreme, and no loop checks for that (of bools it is true for ``max``, false for ``min``).

    >>> from compiler.algebra import lookup
    >>> early_exit(lookup("or"), np.dtype(bool), values.FINITE)[0]
    True
    >>> early_exit(lookup("*"), np.dtype(float), values.Facts(nan=True))
    (False, 'a value may hold NaN, and 0 * NaN is not 0')
    >>> early_exit(lookup("min"), np.dtype(float), values.FINITE)
    (False, 'the values hold no -inf, so min never reaches its annihilator -inf')
    >>> early_exit(lookup("max"), np.dtype(bool), values.FINITE)
    (True, 'max stops at its annihilator true')
    """
    if op.is_user or reduction_annihilator(op) is None:
        return False, f"{op} has no annihilator"
    if op.name == "choose":
        return True, f"any value but {op.param} annihilates {op}"
    ann = op.annihilators[0]
    if not ann.holds_for(dtype):
        return False, f"{op}'s annihilator does not hold for {np.dtype(dtype).name}"
    if isinstance(ann.value, float) and np.isinf(ann.value) and np.dtype(dtype).kind != "b":
        # (of bools, max's annihilator is true and min's false)
        kind = "+inf" if ann.value > 0 else "-inf"
        if np.dtype(dtype).kind != "f":
            return False, (f"{op}'s annihilator {kind} is the extreme of {np.dtype(dtype).name}, which a check on "
                           f"every iteration would seldom meet")
        if kind not in facts.kinds():
            return False, f"the values hold no {kind}, so {op} never reaches its annihilator {kind}"
    ok, why = values.annihilates(op, ann, [facts])
    # (the operands of each step are the accumulator and one reduced value)
    why = why.replace("the other operands hold", "the values hold").replace("another operand may", "a value may")
    if not ok:
        return False, why
    # (which values would break the annihilation matters for floats only)
    return True, f"{op} stops at its annihilator {_text(ann.value_for(dtype))}" + \
        ("" if why == "always" or np.dtype(dtype).kind != "f" else f" ({why})")


def _text(v) -> str:
    v = v.item() if isinstance(v, np.generic) else v
    return {True: "true", False: "false"}.get(v, str(v)) if isinstance(v, bool) else str(v)


__all__ = ["early_exit"]
