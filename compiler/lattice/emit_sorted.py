"""Emission, a sparse output of three or more modes whose loops run out of its storage order: every entry
sorted, then appended (the plan: :mod:`compiler.lattice.sorted_output`).

A mixin of :class:`~compiler.lattice.emitter.Emitter`. The entries are sorted as a sequence kernel sorts an
output its loops cannot follow, by the same code (:class:`~compiler.lattice.seqentrysort.SortedEntries`): the
loops run twice, phase 1 counting each entry in its first stored mode's bucket (``out_next[i] += 1``), phase 2
placing its other stored coordinates, linearized into one int64 key, and its value at its bucket's next slot;
then each bucket is sorted by key and walked as nested runs of equal coordinates, each run's body wrapped with
the segment of the output level it fills and each entry appended (a value equal to the fill dropped) by this
emitter's own output code (:meth:`~compiler.lattice.emit_output.OutputAssembly.case_body`,
:meth:`~compiler.lattice.emit_output.OutputAssembly.append`), as under loops in the output's order. The
extents are the kernel's parameters: it checks first that the key's span fits (at most 2**62).

Example, ``out[i, j, k] = A[k, i, j] * B[k, i, j]`` of CSF inputs into a CSF stored ``i, j, k``, phase 2's
store at the entry::

    int64 t = out_next[i]; out_terms_key[t] = j * out2_size + k; out_terms_val[t] = vout; out_next[i] = t + 1;
"""

from __future__ import annotations

from itertools import count

from ..imperative.guard import CheckCoordinate
from ..imperative.ir import BinOp, Const, If, Select, Var
from ..notation.ast import Index
from ..stand_in import format_text
from .seqentrysort import SortedEntries
from .seqsumsort import LARGEST_KEY


class EmittedOutput:
    """The emitter's own output assembly as the inner output of a :class:`SortedEntries` (what it asks of a
    sequence kernel's): each run of a coordinate the body of a loop over it, each entry appended. The output's
    parameters, first and last statements are the emitter's."""

    kind = "assembled"

    def __init__(self, em):
        self.em, self.tensor, self.notes = em, em.setup.output.tensor, em.notes

    def params(self) -> list:
        return []

    def start(self, inputs=None, rhs=None) -> list:
        return []

    def end(self) -> list:
        return []

    def around(self, emit) -> list:
        return emit()

    def case(self, index: str, stmts: list) -> list:
        return self.em.case_body(Index(index), stmts) if stmts else stmts

    def store(self, idxs: tuple, value) -> list:
        return self.em.append(value, self.em.setup.out_dtype)


class SortedAssembly:
    """A sparse output whose every entry is sorted before it is appended (a mixin of the emitter)."""

    def sorted_phases(self, cfir) -> list:
        """The kernel's body: the key's span checked, the loops twice (count, place), each bucket sorted and
        appended."""
        s = self.setup
        fmt, out = s.entry_sorted, s.output.tensor
        order = fmt.mode_order
        # (the output's sizes are of its storage modes; the sort takes the program's order)
        shape = tuple(Var(self.out_sizes[order.index(m)].name) for m in range(fmt.ndim))
        fresh_ids = count()
        fresh = lambda base: self.name(("entry-sort", next(fresh_ids)), base)  # noqa: E731
        self.sorter = SortedEntries(EmittedOutput(self), fmt, tuple(i.name for i in s.output.indices), shape,
                                    s.out_dtype, fresh)
        yes = Const(True, "bool")

        def loops() -> list:
            self.sorting = True
            try:
                return [If(yes, self.emit(cfir))]
            finally:
                self.sorting = False

        where = (f"{out} ({format_text(fmt)}) sorts every entry by its modes after the first as one int64 key: "
                 f"the product of their extents must be at most 2**62")
        return [*self.key_span_checks(shape, where), *self.sorter.around(loops)]

    def key_span_checks(self, shape: tuple, where: str) -> list:
        """A check of each extent of the sorted output's modes after its first (of ``shape``, the program's
        order) that the product of those up to it is at most :data:`~compiler.lattice.seqsumsort.LARGEST_KEY`,
        by division, so no product overflows."""
        out, span = [], None
        for m in self.setup.entry_sorted.mode_order[1:]:
            n = shape[m]
            most = Const(LARGEST_KEY, "int64") if span is None else \
                BinOp("/", Const(LARGEST_KEY, "int64"), Select(BinOp(">", span, Const(0, "int64")), span,
                                                               Const(1, "int64")))
            out.append(CheckCoordinate(n, BinOp("+", most, Const(1, "int64")), self.setup.output.tensor, m, where,
                                       noun="extent"))
            span = n if span is None else BinOp("*", span, n)
        return out

    def sorted_entry(self, v, dt: str) -> list:
        """The output's entry ``v`` (of dtype ``dt``) at the coordinates the loops bind: counted in its bucket
        (phase 1), or placed there with its key (phase 2)."""
        decl, val = self.entry_value(v, dt)
        stores = self.sorter.store(self.sorter.indices, val)
        return stores if self.sorter.phase == "count" else decl + stores


__all__ = ["EmittedOutput", "SortedAssembly"]
