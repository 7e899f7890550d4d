"""Lowering of a loop program's life-cycle statements (declare, freeze) to the imperative IR:
how each output level starts (its values at the fill, its tables empty) and how it is finished
(positions accumulated, hash and byte-map keys sorted, run lists closed), asked of the writer
of its first level that is not Dense (:mod:`compiler.looplets.level_writers`), never of its class. :class:`LifecycleLowering` is the part of
:class:`~compiler.looplets.lowerers.Lowerer` that does it.

>>> value_text(np.float64(0.5)), value_text(3)
('0.5', '3')
"""

from __future__ import annotations

import numpy as np   # (for the doctests)

from ..imperative import ir
from ..imperative.ir import Store, Var
from .level_writers import product, value_text, writer_of
from .program import Declare as PDeclare, Freeze


__all__ = ["LifecycleLowering", "product", "value_text"]


class LifecycleLowering:
    """Declare and freeze statements of a loop program, for :class:`~compiler.looplets.lowerers.Lowerer`
    (which holds the tensors' infos, ``fresh`` and the trace this uses)."""

    def lower_declare(self, s: PDeclare) -> list:
        out = self._lower_declare(s)
        reset = s.tns.name in self.ctx.was_reset and not out[1:]
        self.record("lower:Declare", s, out, note=f"declare {s.tns.name}" + (
            " (its table clear and values at the fill: the runtime's, fresh or an earlier result's "
            "entries cleared; compiler.reused_outputs)" if reset else ""))
        return out

    def lower_freeze(self, s: Freeze) -> list:
        out = self._lower_freeze(s)
        self.record("lower:Freeze", s, out, note=f"freeze {s.tns.name}" + ("" if out else " (a no-op)"))
        return out

    def _lower_declare(self, s: PDeclare) -> list:
        info = self.tensors[s.tns.name]
        init, _ = self.expr(self.simplify(s.init), s.line)
        if not info.levels:
            return self.scalars.declare(info, s, init)
        k = next((k for k, lvl in enumerate(info.levels) if not lvl.located_by_coordinate), None)
        if k is None:   # (Dense levels: a value per slot)
            if s.implicit:
                return []  # the runtime pre-fills a dense output
            n = product([info.size(m) for m in range(info.ndim)])
            p = Var(self.fresh("p"))
            return [ir.For(p, 0, n, [Store(info.array(None, "vals"), p, init)])]
        return writer_of(info, k).declare(self, info, k, s, init)

    def _lower_freeze(self, s: Freeze) -> list:
        info = self.tensors[s.tns.name]
        if not info.levels:
            return self.scalars.freeze(info)
        k = next((k for k, lvl in enumerate(info.levels) if not lvl.located_by_coordinate), None)
        if k is None:
            return []
        return writer_of(info, k).freeze(self, info, k)
