"""A step of several sparse-list steppers lowered as one point: each stepper's value picked
branch-free, not one arm of code per set of the steppers whose child ends at the step.

In a step ``[pos, step_stop)`` of steppers whose children are each a Spike (fill, then a stored
value at the child's last coordinate), every stepper is its fill before ``step_stop - 1``, and at
``step_stop - 1`` it is its stored value exactly when its child ends there (``stop == step_stop``).
When the body does nothing with every operand at its fill (an intersection writing a sparse
output), the step's code is the body at that one point, each stepper's value there
``stop == step_stop ? value : fill``; a stepper whose fill alone makes the body nothing (an operand
of the intersection itself) is a test guarding the point instead. The cross erosion's
``B = ((tr << 63) | (t >> 1)) & V & ((t << 1) | (tl >> 63))`` over four steppers was seven arms of
the same write, operands left out; it is one write under ``if (V ends here)``.

>>> from compiler.looplets.program import Literal
>>> required_of(["a", "b", "c"], lambda k: Literal(0) if k != "b" else Literal(1), lambda e: e == Literal(0))
['a', 'c']
"""

from __future__ import annotations

from .fibers import SubFiber, leaf_value
from .looplets import Fill, Spike, unshift
from .program import Literal, Value


def spike_parts(stepper):
    """``(fill, value)`` of a stepper whose child is a Spike of a literal fill then one stored value
    (program expressions), or None for any other stepper."""
    chunk = unshift(stepper.chunk)
    if not isinstance(chunk, Spike):
        return None
    body, tail = unshift(chunk.body), unshift(chunk.tail)
    if not isinstance(body, Fill) or not isinstance(body.value, Literal):
        return None
    if isinstance(tail, SubFiber) and tail.is_leaf:
        tail = leaf_value(tail)
    if not isinstance(tail, (Literal, Value)):
        return None
    return body.value, tail


def required_of(steppers, body_without, does_nothing) -> list:
    """The steppers whose fill alone makes the body nothing: ``body_without(s)`` is the body with
    ``s`` at its fill (the others at their values), ``does_nothing`` tells a body that does nothing."""
    return [s for s in steppers if does_nothing(body_without(s))]


__all__ = ["spike_parts", "required_of"]
