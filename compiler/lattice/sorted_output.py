"""A sparse output of three or more modes whose loops run out of its storage order, every entry sorted before
it is appended, instead of built in the loops' order and converted after the call.

``out[i, j, k] = sum[l](A[k, i, l] * B[l, j])`` (numpy's ``permute_dims(a3 @ b, (1, 2, 0))``, a CSF ``A``, a
CSR ``B``) into a CSF stored ``i, j, k``: no loop order walks ``A`` (``k`` before ``i``), ``B`` and ``out`` as
stored, so the plan (:mod:`compiler.lattice.conversions`) builds ``out`` as a CSF in mode order 2, 0, 1 (the
loops' ``k, i, j``, ``j`` gathered in a workspace) and converts it after each call. A transpose, as TACO's users
write one, or scipy's ``tocsr`` of a COO: its entries sorted. Here the kernel sorts them itself, once, at the
end, as a sequence kernel sorts an output its loops cannot follow (:mod:`compiler.lattice.seqentrysort`, the
same code): phase 1 counts each entry in its first stored mode's bucket, phase 2 places its other stored
coordinates as one int64 key and its value at its bucket's next slot, then each bucket is sorted by key and
appended level by level (:mod:`compiler.lattice.emit_sorted`).

:func:`entry_sort_setup` decides it where the plan converts the output alone, only for its mode order (the
format built is the one given in the loops' mode order, no input converted), the output has three or more
modes the lattice emission appends (``csf``, ``coo``; Dense levels over one SparseList are scattered instead:
:mod:`compiler.lattice.scatter_output`), and no schedule, update, thread or two-phase assembly was asked for.
The plan's setup is kept (its loops and workspaces: each of the output's coordinates assigned once, as for an
output appended in the loops' order) and carries the format asked in ``entry_sorted``.

>>> from compiler.format import Format, csf, csr
>>> from compiler.notation import parse
>>> from compiler.lattice.conversions import setup_converting
>>> p = parse("out[i, j, k] = sum[l](A[k, i, l] * B[l, j])")
>>> formats = {"A": csf(3), "B": csr(), "out": csf(3)}
>>> _, setup, conv = setup_converting(p, formats, None, None)
>>> found = entry_sort_setup(p, formats, setup, conv, None, None)
>>> found[0].entry_sorted.shorthand, found[0].output_format.mode_order
('csf', (2, 0, 1))
>>> print(found[1])  # doctest: +ELLIPSIS
out is csf, and loops in its storage order do not walk the inputs as stored (no loop order ...): they run k, i, j, the inputs' order, and sort every entry before out appends it: phase 1 counts each i's entries, ...
"""

from __future__ import annotations

from ..format import Format
from ..stand_in import scatters
from .iteration_graph import storage_path
from .plan import Setup
from .plan_steps import output_order
from .schedule import as_schedule
from .seqentrysort import entry_sort_note
from .seqsumsort import sorts_sums


def entry_sort_setup(program, formats: dict, setup: Setup, conversions, schedule, assembly) -> tuple | None:
    """``(setup, note)``: ``setup`` (the plan's, of ``program`` over ``formats``, building the output in the
    loops' mode order and converting it: ``conversions``) building the output in its own format by sorting
    every entry (see the module docstring), and what the trace says of it; None where that does not apply."""
    out = program.lhs.tensor
    given = formats.get(out)
    if len(conversions) != 1 or given is None or program.op is not None or assembly == "two-phase" \
            or setup.parallel is not None or as_schedule(schedule).commands:
        return None
    tensor, _, built, why, source = conversions[0]
    if tensor != out or source is not None or built != Format(given.root, built.mode_order) or not sorts_sums(given) \
            or scatters(given, pattern=True):
        return None   # (an input converted too, another format built, or an output built another way)
    setup.entry_sorted = given
    stored = tuple(i.name for i in storage_path(setup.output, given)[0])
    order = tuple(i.name for i in output_order(setup.statement) if i in setup.output.indices)
    return setup, entry_sort_note(out, given, stored, order, why)


__all__ = ["entry_sort_setup"]
