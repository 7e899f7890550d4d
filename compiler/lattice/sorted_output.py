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

Where the plan reads an input in another mode order instead, :func:`sort_over_converting` sorts the output when
that costs less than the input's conversion: when the converted input's loops would walk an operand again at
every coordinate of an output index, or when each of the output's entries is one of the input's.

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
from ..stand_in import format_text, scatters
from .cfir_builder import build_cfir
from .cin import expr_accesses
from .conversions import merges_again, output_only_setup
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


def sort_over_converting(program, formats: dict, setup: Setup, conversions, order, schedule, assembly) -> tuple | None:
    """``(setup, note)`` as :func:`entry_sort_setup`'s, where the plan (``setup``) reads one input in another mode
    order (``conversions``) but building the output in another one and sorting its entries in the kernel costs
    less: the input's loops would merge an operand's entries again at every coordinate of an output index
    (:func:`~compiler.lattice.conversions.merges_again`: ``permute_dims(a3 @ b, (2, 0, 1))``, ``b`` read as a
    CSC, every ``i`` walking all of ``a3``), or every entry of the output is one of the converted input's (the
    lattices of the output's loops produce nothing where it is absent: ``permute_dims(a3 * c3, (2, 0, 1))``
    with ``c3`` dense), so sorting them in the kernel sorts no more than converting it before each call would
    (its entries sorted again by ``asformat``). None otherwise (a product whose output outnumbers the input,
    a union with a dense operand): the plan's conversion stays.

    >>> from compiler.format import csf, csr
    >>> from compiler.notation import parse
    >>> from compiler.lattice.conversions import setup_converting
    >>> p = parse("out[i, j, k] = sum[l](A[j, k, l] * B[l, i])")
    >>> formats = {"A": csf(3), "B": csr(), "out": csf(3)}
    >>> _, setup, conv = setup_converting(p, formats, None, None)
    >>> [(name, new.shorthand) for name, _, new, _, _ in conv]
    [('B', 'csc')]
    >>> found = sort_over_converting(p, formats, setup, conv, None, None, None)
    >>> found[0].output_format.mode_order
    (1, 2, 0)
    >>> print(found[1].split("): they run")[1])  # doctest: +ELLIPSIS
     j, k, i, the inputs' order, ...; sorted rather than reading B as csc, converted before each call: at every i the loops walk A[j, k, l] again, merging A[j, k, l] with B[l, i] over l
    """
    out = program.lhs.tensor
    given = formats.get(out)
    if order is not None or len(conversions) != 1 or conversions[0][0] == out or conversions[0][4] is not None \
            or given is None or not sorts_sums(given) or scatters(given, pattern=True):
        return None   # (cheap refusals first: the other loop orders are looked for only for an output it sorts)
    tensor, _, read, why, _ = conversions[0]
    found = output_only_setup(program, formats, schedule)
    if found is None:
        return None
    sorting, built = found
    reason = merges_again(setup, {**formats, tensor: read}) or _within_entries(program, formats, built, tensor)
    if reason is None:
        return None
    sorted_ = entry_sort_setup(program, formats, sorting, ((out, formats[out], built, why, None),), schedule, assembly)
    if sorted_ is None:
        return None
    return sorted_[0], f"{sorted_[1]}; sorted rather than reading {tensor} as {format_text(read)}, converted " \
                       f"before each call: {reason}"


def _within_entries(program, formats: dict, built: Format, tensor: str) -> str | None:
    """Why every entry of ``program``'s output (built in ``built``) is at an entry of ``tensor``: each lattice of
    an output loop produces only where ``tensor`` is present; None when some point produces without it."""
    out = program.lhs.tensor
    setup = Setup.create(program, {**formats, out: built})
    build_cfir(setup.statement, setup, verify_lattices=False)   # (a copy of the plan's: its lattices)
    keys = {str(a) for a in expr_accesses(program.rhs) if a.tensor == tensor}
    indices = {i.name for i in program.lhs.indices}
    if any(L.index.name in indices and not all(keys & set(p.present) for p in L.points if p.producer)
           for L in setup.lattices):
        return None
    return f"each of {out}'s entries is one of {tensor}'s, no more to sort than its conversion sorts"


__all__ = ["entry_sort_setup", "sort_over_converting"]
