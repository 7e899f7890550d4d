"""A sum whose plan reads an input converted (issue 30), lowered instead as one kernel by the sequence lowering:
its terms bucketed by the output's first stored mode (:mod:`compiler.lattice.seqsumscatter`,
:mod:`compiler.lattice.seqsumsort`).

``out[i, j] = sum[k](A[k, i, j])`` (numpy's ``sum(a3, axis=0)``, a CSF ``a3``) into a CSR: the loops in the
output's order walk ``A`` against its storage order (``i`` before ``k``), and ``k`` outermost would gather the
whole output in a dense workspace, so the plan reads ``A`` in mode order 1, 0, 2, converted before each call
(``asformat``: a sort of its every entry). The sequence lowering runs the sum's loops in ``A``'s order around
the output's instead: two passes count each row's terms and place them, then each row's terms are added into
a row workspace, its columns sorted and appended; no input is converted. It holds the tensors' extents, so the
kernel is lowered for their shapes: only where they are given (the array front end gives them,
:func:`compiler.array.fuse.lower_node`).

:func:`buckets_over_converting` takes it where the plan converts one input, not the output, of a sum, and the
sequence lowering lowers the statement without converting one; chosen by measurement
(``benchmarks/bench_sum_buckets.py``: the row buckets cost less than the conversion in every case measured).

>>> from compiler.format import csf, csc
>>> from compiler.notation import parse
>>> from compiler.trace import Trace
>>> from compiler.lattice.conversions import setup_converting
>>> p = parse("out[i, j] = sum[k](A[i, k, j])")
>>> formats = {"A": csf(3), "out": csc()}
>>> _, setup, conv = setup_converting(p, formats, None, None)
>>> [(name, new.mode_order) for name, _, new, _, _ in conv]
[('A', (2, 0, 1))]
>>> trace = Trace()
>>> low = buckets_over_converting(p, formats, conv, (("A", (2, 3, 4)),), trace, None)
>>> low.conversions, low.shapes
((), (('A', (2, 3, 4)),))
>>> print(trace.find("loop-order")[0].note.split("; rather than")[1])  # doctest: +ELLIPSIS
 reading A as csf in mode order 2, 0, 1, converted before each call (A.asformat, ...)
"""

from __future__ import annotations

from ..errors import StrategyError
from ..notation.ast import Reduce, walk
from ..stand_in import conversion_cost, format_text
from ..trace import Trace
from .sequences import SequenceError
from .seqlower import lower_shape_lattice


def buckets_over_converting(program, formats: dict, conversions, shapes, trace: Trace, name: str | None):
    """The :class:`~compiler.runtime.Lowered` kernel of ``program`` (a sum over ``formats``, whose plan reads one
    input converted: ``conversions``) by the sequence lowering for the tensors' ``shapes``, its steps recorded
    in ``trace``; None where that does not apply (no shapes, no sum, another conversion) or the sequence lowering
    refuses it or converts an input too."""
    out = program.lhs.tensor
    if not shapes or len(conversions) != 1 or not any(isinstance(n, Reduce) for n in walk(program.rhs)):
        return None
    tensor, given, read, _, source = conversions[0]
    if tensor == out or source is not None:
        return None
    steps = Trace()
    try:
        low = lower_shape_lattice(program, formats, steps, shapes, name, convert=False)
    except (StrategyError, SequenceError):
        return None
    if low.conversions or steps.find("convert"):
        return None
    why = f"rather than reading {tensor} as {format_text(read)}, converted before each call ({tensor}.asformat, " \
          f"{conversion_cost(given, read)})"
    ordered = steps.find("loop-order")
    if ordered:
        ordered[0].note = f"{ordered[0].note}; {why}"
    else:
        trace.record("loop-order", before=program, after=program,
                     note=f"the sum's loops walk every input as stored, its terms into {out} in one kernel; {why}")
    trace.steps += steps.steps
    return low


__all__ = ["buckets_over_converting"]
