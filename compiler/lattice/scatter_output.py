"""A sparse output whose loops run out of its storage order, built in its own order by a scatter.

A CSC output of loops in row order (``C[i, j] = A[i, j] + B[i, j]``, CSR ``A`` and ``B``) cannot be
appended as the loops visit it: a column's entries come one per row. Rather than build it as CSR
and convert it after the call, the kernel assembles it as scipy's ``tocsc`` would, fused with the
computation, in two phases: phase 1 counts each column's entries (``C1_next[j] += 1``), a prefix
sum gives the columns' starts, and phase 2 stores each entry at its column's next slot. The rows
come in increasing order, so each column stays sorted; an entry whose value is the fill is skipped
and the gaps it leaves close after. The same holds for any output of Dense levels over one
SparseList (``Dense(Dense(SparseList))`` in mode order 2, 1, 0 under loops i, j, k): the fiber is
located from the Dense levels' coordinates, and within one fiber its coordinate grows as the loops
run, whatever their order, since the loops visit each coordinate in increasing order.

:func:`scatter_setup` decides it, where the plan would convert a tensor (the output, built in the
loops' order, or an input, read in the output's): the loops of a dense output read every input in
storage order (and sweep no pairs of coordinates: an inner product), run out of the output's
storage order, and assign each output coordinate once (no update, no workspace); and the fill the
expression yields where its operands hold theirs is the output's (the loops then visit what a
dense output's would: its entries). The setup is planned as for a dense output (which constrains
no loop order) and carries the format built in ``scattered``.

>>> from compiler.format import csc, csr
>>> from compiler.notation import parse
>>> p = parse("C[i, j] = A[i, j] + B[i, j]")
>>> conv = (("C", csc(), csr(), "why", None),)
>>> setup = scatter_setup(p, {"A": csr(), "B": csr(), "C": csc()}, None, None, None, conv)
>>> setup.scattered.shorthand, str(setup.output_format)
('csc', 'Dense(Dense(Element(0.0))), mode_order=(1, 0)')
>>> print(scatter_note(setup))
C is csc, stored in the order j, i, and the loops run i, j: the kernel builds C in its own order, not as csr converted after the call; phase 1 counts each column's entries, a prefix sum gives the columns' starts (C1_pos), phase 2 stores each entry at its column's next slot (the loops reach a column's rows in increasing order, so it stays sorted), skipping the fill, and the gaps it leaves close after (scipy's tocsc, fused with the computation)
"""

from __future__ import annotations

from .. import binding
from ..algebra import NOVALUE
from ..errors import StrategyError
from ..format import Format
from ..levels import Dense
from ..stand_in import format_text, scatters
from ..values import same_value
from .cin import Assignment, Forall, Sequence, Where
from .conversions import sweeps_pairs
from .iteration_graph import storage_path
from .ordering import wheres
from .plan import Setup, typed_fill
from .plan_steps import output_assignment, output_order
from .schedule import as_schedule


def scatter_setup(program, formats: dict, order, schedule, assembly, conversions) -> Setup | None:
    """The setup of ``program`` building its output by a scatter (see the module docstring), its
    ``scattered`` the output's format, when the plan converts some tensor (``conversions``, from
    :func:`~compiler.lattice.conversions.setup_converting`; no copy read in another order) and a
    dense output's loops would read every input in storage order, visit each of the output's
    coordinates once, and run out of the output's storage order; else None."""
    out = program.lhs.tensor
    given = formats.get(out)
    if not conversions or any(source is not None for *_, source in conversions) or program.op is not None \
            or assembly == "one-pass" or as_schedule(schedule).commands or given is None \
            or not scatters(given, pattern=True):
        return None
    root = given.leaf
    for _ in given.levels:
        root = Dense(root)
    try:
        setup = Setup.create(program, {**formats, out: Format(root, given.mode_order)}, order=order)
    except StrategyError:
        return None   # (the inputs disagree: a conversion stays)
    if setup.rhs_fill is NOVALUE or not same_value(setup.rhs_fill, typed_fill(given)):
        return None   # (the loops would visit coordinates where the fill is not the output's)
    if sweeps_pairs(setup, formats) is not None:
        return None   # (an inner product: the plan's conversion avoids it)
    stmt = setup.statement
    assigned, loops = output_assignment(stmt), output_order(stmt)
    if not isinstance(assigned, Assignment) or assigned.lhs != setup.output or assigned.op is not None \
            or set(setup.output.indices) - set(loops) or _has_sequence(stmt) \
            or any(w.temp.workspace for w in wheres(stmt)):
        return None   # (an entry updated in place, or assigned twice)
    if [i for i in loops if i in setup.output.indices] == list(storage_path(setup.output, given)[0]):
        return None   # (in its storage order: appended as it is)
    setup.scattered = given
    return setup


def scatter_note(setup: Setup) -> str:
    """What the trace says of a scattered output's assembly (the ``output-order`` step)."""
    fmt, out = setup.scattered, setup.output.tensor
    path = [i.name for i in storage_path(setup.output, fmt)[0]]
    loops = [i.name for i in output_order(setup.statement)]
    fiber = "column" if fmt.shorthand == "csc" else "fiber"
    natural = Format(fmt.root, tuple(sorted(range(fmt.ndim), key=lambda m: loops.index(setup.output.indices[m].name))))
    starts = binding.array_name(out, len(fmt.levels) - 1, fmt.levels[-1].starts_array)
    return (f"{out} is {format_text(fmt)}, stored in the order {', '.join(path)}, and the loops run {', '.join(loops)}: "
            f"the kernel builds {out} in its own order, not as {format_text(natural)} converted after the call; "
            f"phase 1 counts each {fiber}'s entries, a prefix sum gives the {fiber}s' starts ({starts}), phase 2 "
            f"stores each entry at its {fiber}'s next slot (the loops reach a {fiber}'s "
            f"{'rows' if fiber == 'column' else 'coordinates'} in increasing order, so it stays sorted), skipping "
            f"the fill, and the gaps it leaves close after (scipy's tocsc, fused with the computation)")


def _has_sequence(s) -> bool:
    if isinstance(s, Sequence):
        return True
    if isinstance(s, Forall):
        return _has_sequence(s.body)
    if isinstance(s, Where):
        return _has_sequence(s.consumer) or _has_sequence(s.producer)
    return False


__all__ = ["scatter_note", "scatter_setup"]
