"""What an operand of a loop program's expression may hold, traced to the tensors it reads.

The simplifier may drop ``x * 0`` only where ``x`` holds no NaN or infinity (``0 * inf`` is
NaN). :class:`OperandFacts` tells it what each operand may hold from the tensors that operand
reads, as the lowering assumes their stored values (:func:`compiler.values.assumed`) and
their fills, so one tensor holding NaN sends only the products that read it down the exact
path. An operand not traced to tensors (a local, a lowered expression of several) may hold
what any tensor of the program may (:attr:`OperandFacts.pooled`).

>>> import numpy as np
>>> from compiler.format import parse_format
>>> from compiler.looplets.fibers import TensorInfo
>>> from compiler.looplets.program import Access, Index, Literal
>>> from compiler import values
>>> infos = {t: TensorInfo(t, parse_format("dense", ndim=1), "input") for t in "xz"}
>>> with values.assuming({"x": values.FINITE, "z": values.Facts(nan=True)}):
...     of = OperandFacts(infos)
>>> str(of(Access(infos["x"].root(), (Index("i"),), source="x"))), str(of(Access(infos["z"].root(), (Index("i"),), source="z")))
('finite', 'may hold NaN')
>>> of(Literal(np.inf)).posinf, of.pooled.nan
(True, True)
"""

from __future__ import annotations

from .. import values
from ..algebra import Operator
from ..imperative.ir import Load
from .program import Access, Call, Literal, Value


class OperandFacts:
    """``facts(expr)``: what ``expr`` may hold (see the module docstring); ``tensors`` maps
    names to :class:`~compiler.looplets.levels.TensorInfo`. Build it inside the lowering's
    :func:`compiler.values.assuming`."""

    def __init__(self, tensors: dict):
        self.of_tensor = {name: values.assumed(name) | values.of_value(info.fill) for name, info in tensors.items()}
        #: what any operand may hold: every tensor's stored values and fill
        self.pooled = values.FINITE
        for f in self.of_tensor.values():
            self.pooled = self.pooled | f
        # a leaf read is lowered to a load from the tensor's values array
        self.vals = {info.array(None, "vals"): name for name, info in tensors.items()}

    def __call__(self, expr) -> values.Facts:
        # (finite and small: + - * of them stay finite; a complex sin of finite values may not be)
        if self.pooled.small and not self.pooled.complex:
            return self.pooled
        if isinstance(expr, Literal):
            return values.of_value(expr.value)
        if isinstance(expr, Access) and expr.mode == "read" and expr.source in self.of_tensor:
            return self.of_tensor[expr.source]
        if isinstance(expr, Value) and isinstance(expr.expr, Load) and expr.expr.buffer in self.vals:
            return self.of_tensor[self.vals[expr.expr.buffer]]
        if isinstance(expr, Call) and isinstance(expr.op, Operator):
            return values.of_call(expr.op, [self(a) for a in expr.args])
        return self.pooled


__all__ = ["OperandFacts"]
