"""The output of a shape-operator kernel that the sequence emitter (:mod:`compiler.lattice.seqemit`)
cannot append itself, assembled as the lattice emission assembles it, by its own code.

The sequence lowering's loops run in the output's mode order, each visiting its coordinates once,
in increasing order (a concatenation's fissioned loops too), as the lattice emission's one-pass
loops do. So every output level the lattice emission assembles in one pass
(:func:`~compiler.lattice.output_build.assembles`: DCSR's and CSF's lists, a SparseList of Dense
rows, Dense levels between two lists, a SparseHash, SparseByteMap, SparseBand, SparseBlockList,
runs, points...) is assembled here by the lattice emission's own output mixins
(:mod:`compiler.lattice.emit_output` and the modules it names): each loop over an output index wraps its body with the level's segment
(:meth:`~compiler.lattice.emit_output.OutputAssembly.case_body`), and each entry is appended, or
stored in its block of Dense slots, at the innermost level. The output's extents are the kernel's
own (a shape-operator kernel is specialized to its shapes): locals, not parameters.

A DCSR's row ``i`` is kept (its coordinate appended, its fiber's end stored) if the loop over its
columns appended entries:

>>> from compiler.format import dcsr
>>> from compiler.imperative.ir import Var
>>> from compiler.names import FreshNames
>>> out = SeqAssembly("C", dcsr(), ("i", "j"), (2, 3), "float64", FreshNames())
>>> [p.name for p in out.params()]
['pC0', 'C0_idx', 'C0_pos', 'pC1', 'C1_idx', 'C1_pos_len', 'C1_pos', 'C_val']
>>> print("\\n".join(str(s) for s in out.case("i", out.store(("i", "j"), Var("v")))))
int64 pC1_begin = pC1;
if (v != 0.0) {
    grow C1_idx to pC1 + 1;
    grow C_val to pC1 + 1;
    C1_idx[pC1] = j;
    C_val[pC1] = v;
    pC1 += 1;
}
if (pC1 > pC1_begin) {
    grow C0_idx to pC0 + 1;
    C0_idx[pC0] = i;
    pC0 += 1;
    grow C1_pos to pC0 + 1;
    C1_pos[pC0] = pC1;
    C1_pos_len = pC0 + 1;
}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import binding
from ..dtypes import typed_scalar
from ..imperative.ir import Const, Declare, Var
from ..notation.ast import Access, Index
from .emit_blocks import BlockAssembly
from .emit_output import OutputAssembly
from .emit_ranges import RangeAssembly
from .emit_run_output import RunAssembly
from .output_build import building_output
from .seqoutput import SeqOutput, output_kind, reserve_room


@dataclass(frozen=True)
class OutputTarget:
    """What the lattice emission's output assembly reads of a plan's setup: the output access
    (tensor and indices), its format, dtype and fill; a sequence kernel scatters nothing and runs on
    no threads."""

    output: Access
    output_format: Any
    out_dtype: str
    out_fill: Any
    scattered: Any = None
    entry_sorted: Any = None
    parallel: Any = None

    @property
    def out_fill_value(self):
        return self.out_fill.item() if hasattr(self.out_fill, "item") else self.out_fill


class SeqAssembly(OutputAssembly, BlockAssembly, RunAssembly, RangeAssembly):
    """Output ``name`` of ``fmt`` at ``indices`` (names, in the program's order) of extents ``shape`` (in
    that order too), assembled in one pass as the lattice emission assembles it; names from ``fresh``."""

    kind = "assembled"

    def __init__(self, name: str, fmt, indices: tuple, shape: tuple, dtype: str, fresh):
        self.tensor = name
        self.setup = OutputTarget(Access(name, tuple(Index(i) for i in indices)), fmt, dtype,
                                  typed_scalar(fmt.fill, dtype))
        self.name_of, self.cache, self.shape = fresh, {}, tuple(shape)
        # (the output's arrays are named by its levels: no counter may take one's name)
        fresh.taken |= {binding.array_name(name, k, kind) for k, kind, _ in binding.level_arrays(fmt)}
        fresh.taken |= {binding.array_name(name, m, "size") for m in range(fmt.ndim)}
        self.out_params, self.init, self.final, self.notes = [], [], [], []
        # (the lattice emission's state for the kernels it assembles otherwise: one pass, no threads,
        # no workspace)
        self.phase, self.par_rows, self.producing, self.drop_in_compute = None, False, 0, False
        self.read_counter, self.reading = None, False
        self.setup_output()

    def name(self, key, base: str) -> str:
        if key not in self.cache:
            self.cache[key] = self.name_of(base)
        return self.cache[key]

    def params(self) -> list:
        return list(self.out_params)

    def start(self, inputs: dict | None = None, rhs=None) -> list:
        """The output's extents (the kernel's, as locals) and its first statements; ``inputs``
        (name -> Format), read by the kernel, bound its entries where one is appended per entry
        (:func:`~compiler.lattice.seqoutput.reserve_room`)."""
        # (the sizes are of the storage modes, the shape in the program's order: one stored i, k, j
        # took k's extent for j's)
        order = self.setup.output_format.mode_order
        sizes = [Declare(Var(p.name), "int64", Const(int(self.shape[order[m]]), "int64"))
                 for m, p in enumerate(self.out_sizes)]
        last = self.levels_info[-1]
        one_each = self.block is None and last.slots is None and last.runs is None and last.ranged is None
        room = reserve_room(self.appended_arrays(), inputs, rhs, self.name_of) if one_each else []
        return sizes + list(self.init) + room

    def case(self, index: str, stmts: list) -> list:
        """``stmts``, the body of a loop over ``index``, with the segment of the output level it
        indexes (a coordinate kept if its fiber below got entries)."""
        return self.case_body(Index(index), stmts) if stmts else stmts

    def store(self, idxs: tuple, value) -> list:
        """Append the entry ``value`` at the coordinates of the loops around (or store it in its
        block of Dense slots); a value equal to the fill is not kept."""
        dt = self.setup.out_dtype
        return self.block_store(value, dt) if self.block is not None else self.append(value, dt)

    def around(self, emit) -> list:
        """The code of the loops (``emit()``): the assembly's segments wrap each loop's body itself."""
        return emit()

    def end(self) -> list:
        return list(self.final)


def sequence_output(name: str, fmt, indices: tuple, shape: tuple, dtype: str, fresh):
    """The output ``name`` of ``fmt`` (at ``indices``, of extents ``shape``) as the sequence emitter
    writes it: stored or appended by :class:`~compiler.lattice.seqoutput.SeqOutput`, or, for any other
    format the lattice emission assembles, a :class:`SeqAssembly`."""
    if sequence_assembled(fmt):
        return SeqAssembly(name, fmt, indices, shape, dtype, fresh)
    return SeqOutput(name, fmt, shape, dtype, fresh)


def sequence_assembled(fmt) -> bool:
    """Whether :class:`SeqAssembly` writes ``fmt``: a sparse format the sequence emitter does not
    append itself (:func:`~compiler.lattice.seqoutput.output_kind`) whose every level the lattice
    emission assembles in one pass.

    >>> from compiler.format import csr, dcsr, parse_format
    >>> sequence_assembled(dcsr()), sequence_assembled(csr())
    (True, False)
    >>> sequence_assembled(parse_format("SparseBand(SparseHash(Element(0.0)))"))
    False
    """
    return output_kind(fmt) is None and building_output(fmt, "C") is None


def sequence_building(fmt, tensor: str):
    """``(built, why)``: the format the sequence lowering builds output ``tensor`` of format ``fmt``
    in, converted to ``fmt`` after each call (``Tensor.asformat``), and why: the lattice emission's
    own stand-in (:func:`~compiler.lattice.output_build.building_output`, SparseList levels in place
    of those it does not assemble); None when it writes ``fmt`` itself.

    >>> from compiler.format import dcsr, parse_format
    >>> print(sequence_building(parse_format("SparseBand(SparseHash(Element(0.0)))"), "C")[0])
    SparseList(SparseHash(Element(0.0)))
    >>> sequence_building(dcsr(), "C") is None
    True
    """
    return None if output_kind(fmt) is not None else building_output(fmt, tensor)


__all__ = ["OutputTarget", "SeqAssembly", "sequence_assembled", "sequence_building", "sequence_output"]
