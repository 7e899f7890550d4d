"""The output of a shape-operator kernel under the lattice strategy (:mod:`compiler.lattice.seqemit`):
stored by position when dense, appended in order when sparse.

The CIN's loops run in the output's mode order and a lattice's series of loops visits its
coordinates in increasing order, each once (a concatenation's fissioned loops too: the offset
loop's coordinates follow the first's), so the entries come in the output's storage order and a
compressed level can append them: a sparse vector, CSR or CSC (Dense levels over one SparseList)
or COO (one SparseCOO level), in any mode order. A value equal to the output's fill is not stored.
Which output is which is asked of its levels' capabilities, never their arrays' names (a band's
``ofs`` and ``idx`` are no SparseList's ``pos`` and ``idx``); any other sparse output is assembled
by the lattice emission's code (:mod:`compiler.lattice.seqassembly`).

>>> from compiler.format import csr
>>> out = SeqOutput("C", csr(), (2, 3), "float64")
>>> print("\\n".join(str(s) for s in out.store(("i", "j"), Var("v"))))
if (v != 0.0) {
    grow C1_idx to pC1 + 1;
    grow C_val to pC1 + 1;
    C1_idx[pC1] = j;
    C_val[pC1] = v;
    C1_pos[i + 1] += 1;
    pC1 += 1;
}
>>> print("\\n".join(str(s) for s in out.end()))
for (int64 q = 0; q < 2; q++) {
    C1_pos[q + 1] += C1_pos[q];
}
"""

from __future__ import annotations

import numpy as np

from ..binding import array_name
from ..errors import StrategyError
from ..imperative import ir
from ..imperative.ir import BinOp, Cast, Const, Grow, Load, Store, Var
from ..kept_rows import kept_row_entries
from ..notation.ast import accesses as accesses_of
from ..notation.ast import walk as walk_notation
from ..notation.shape import Slice
from .exprs import not_fill
from .seqwalk import storage_iterators, walk_kind


def _c(n: int) -> Const:
    return Const(int(n), "int64")


def output_kind(fmt) -> str | None:
    """``dense`` (levels located by coordinate only), ``list`` (those over one level appended as a
    sorted list of coordinates, a SparseList or a SparsePoint, whose fibers each call checks, or a
    one-mode list of coordinate tuples, a COO vector), ``coo`` (one list of coordinate tuples,
    SparseCOO), or None for an output the sequence emitter does not append to itself. Asked of the
    levels' declared capabilities: a level that stores its coordinates otherwise (a band, blocks,
    runs) is none of these, whatever its arrays are called.

    >>> from compiler.format import csr, csc, coo, dcsr, parse_format
    >>> [output_kind(f) for f in (csr(), coo(), csc(), dcsr())]
    ['list', 'coo', 'list', None]
    >>> output_kind(parse_format("Dense(SparseBand(Element(0.0)))")) is None
    True
    """
    if all(lvl.located_by_coordinate for lvl in fmt.levels):
        return "dense"     # (a 0-d output too: no level)
    *above, last = fmt.levels
    if not all(lvl.located_by_coordinate for lvl in above) or (last.nmodes != 1 and above):
        return None
    # (any mode order: the loops run in the output's, so a CSC output comes column by column)
    if last.nmodes == 1 and (last.appends_coordinates or last.coordinate_list):
        return "list"
    return "coo" if last.coordinate_list else None


class SeqOutput:
    """The parameters, per-entry stores and closing statements of output ``name`` of ``fmt``."""

    def __init__(self, name: str, fmt, shape: tuple, dtype: str, fresh=None):
        # (extents in storage order: the loops run in the output's mode order, e.g. columns first for CSC)
        self.tensor, self.fmt, self.dtype, self.fresh = name, fmt, dtype, fresh or (lambda base: base)
        self.notes = []     # (what the trace says of how it assembles the output: this module says it all)
        self.shape = tuple(tuple(shape)[m] for m in fmt.mode_order) if len(shape) == len(fmt.mode_order) \
            else tuple(shape)
        self.kind = output_kind(fmt)
        if self.kind is None:
            raise StrategyError(f"output {name}: the lattice strategy appends shape operators' results to a "
                                f"dense output, a sparse vector, CSR, CSC or COO, not {fmt}")
        self.val = array_name(name, None, "val")
        #: the room reserved up front holds every entry (the loops walk stored entries only: seqcolmajor's
        #: stored_walk): reserved for sure, and no append checks for room
        self.reserved = False
        if self.kind == "dense":
            return      # (a 0-d output too: no level)
        last = len(fmt.levels) - 1
        self.level = fmt.levels[last]
        base = f"p{name}{last}"
        self.counter = fresh(base) if fresh else base
        self.q = fresh("q") if fresh else "q"
        self.idt = np.dtype(self.level.index_dtype).name
        self.pos = array_name(name, last, self.level.starts_array)
        self.idx = [array_name(name, last, self.level.crd_of(m)) for m in range(self.level.nmodes)]

    def params(self) -> list:
        if self.kind == "dense":
            return [ir.Buffer(self.val, self.dtype, "inout")]
        out = [ir.OutScalar(self.counter, "int64", 0)]
        out += [ir.Growable(x, self.idt, self.counter) for x in self.idx]
        if self.kind == "list":
            out.append(ir.Buffer(self.pos, self.idt, "inout"))     # (zeroed by the runtime)
        else:
            out += [ir.OutScalar(self.pos + "_len", "int64", 2), ir.Growable(self.pos, self.idt, self.pos + "_len")]
        out.append(ir.Growable(self.val, self.dtype, self.counter))
        return out

    def start(self, inputs: dict | None = None, rhs=None) -> list:
        """The output's first statements; ``inputs`` (name -> Format), read by the kernel, bound
        its entries: room for all theirs is reserved up front (:func:`reserve_room`)."""
        out = [Grow(self.pos, _c(2)), Store(self.pos, 0, Const(0, self.idt))] if self.kind == "coo" else []
        if self.kind == "dense":
            return out
        return out + reserve_room((*self.idx, self.val), inputs, rhs, self.fresh, hint=not self.reserved)

    def case(self, index: str, stmts: list) -> list:
        """``stmts``, the body of a loop over ``index``: the entries' stores assemble the levels."""
        return stmts

    def dense_position(self, idxs: tuple, upto: int):
        """The position of the first ``upto`` modes (Dense levels) of an entry at ``idxs``."""
        out = None
        for m in range(upto):
            i = Var(idxs[m])
            out = i if out is None else BinOp("+", BinOp("*", out, _c(self.shape[m])), i)
        return out

    def store(self, idxs: tuple, value) -> list:
        idxs = tuple(idxs[m] for m in self.fmt.mode_order)     # (the entry's indices in storage order)
        if self.kind == "dense":
            at = self.dense_position(idxs, len(idxs))
            return [Store(self.val, _c(0) if at is None else at, value)]
        p = Var(self.counter)
        nxt = BinOp("+", p, _c(1))
        body = [] if self.reserved else [Grow(x, nxt) for x in self.idx] + [Grow(self.val, nxt)]
        coords = idxs[-1:] if self.kind == "list" else idxs
        for x, i in zip(self.idx, coords):
            c = Var(i)
            body.append(Store(x, p, c if self.idt == "int64" else Cast(self.idt, c)))
        body.append(Store(self.val, p, value))
        parent = self.dense_position(idxs, len(idxs) - 1) if self.kind == "list" else None
        if parent is not None:
            # (a row's count, which the block copy of compiler.imperative.blockcopy adds up a run at a time)
            body.append(Store(self.pos, BinOp("+", parent, _c(1)), Const(1, self.idt), "+"))
        body.append(ir.CompoundAssign("+", p, _c(1)))
        # (a value equal to the output's fill is not stored: the fill of the entries copied, or 0;
        # a NaN equal to a NaN fill, as from_numpy drops it)
        return [ir.If(not_fill(value, np.dtype(self.dtype), self.fmt.fill), body)]

    def around(self, emit) -> list:
        """The code of the loops (``emit()``), with what the output needs around it."""
        return emit()

    def accumulate(self, idxs: tuple, value, count: str) -> list:
        raise StrategyError(f"output {self.tensor}: the sequence emitter adds into temporaries only, and into an "
                            f"output whose sum's loops run around its own (compiler.lattice.seqhoist)")

    fold_each = accumulate

    def narrow(self, x):
        """``x`` as the output's index type."""
        return x if self.idt == "int64" else Cast(self.idt, x)

    def end(self) -> list:
        if self.kind == "coo" or self.kind == "list" and len(self.shape) == 1:
            # (a vector's one fiber ends at the counter: stored once here, where pos[1] += 1 per
            # entry loaded what the last entry stored, a chain through memory)
            return [Store(self.pos, 1, self.narrow(Var(self.counter)))]
        if self.kind == "list":
            # each row's count at pos[row + 1]; a prefix sum makes them ends
            rows = 1
            for n in self.shape[:-1]:
                rows *= n
            q = Var(self.q)
            return [ir.For(q, 0, _c(rows), [Store(self.pos, BinOp("+", q, _c(1)), Load(self.pos, q), "+")])]
        return []


def reserve_room(arrays: tuple, inputs: dict | None, rhs, fresh, hint: bool = True) -> list:
    """Grow ``arrays`` (an output's, one element per entry) up front, a hint, for all the entries of
    ``inputs`` (name -> Format), read by the kernel, as the looplets' reserve does, so the buffers
    do not grow by doubling. An input ``rhs`` (the program's right side) reads only through a slice
    of its rows counts the entries of the rows kept instead. Not a ``hint``: the room is a bound the
    entries never pass (the loops walk stored entries only), grown for sure, out of memory else; a dense
    input (its every coordinate, which those loops never walk) not counted.

    >>> from compiler.format import csr, dense
    >>> print(reserve_room(("C1_idx",), {"A": csr()}, None, None)[0])
    reserve C1_idx for A1_pos[A0_size];
    >>> print(reserve_room(("C1_idx",), {"A": csr(), "d": dense(1)}, None, None, hint=False)[0])
    grow C1_idx to A1_pos[A0_size];
    """
    out, total = [], None
    for name, fmt in sorted((inputs or {}).items()):
        if not hint and all(lvl.located_by_coordinate for lvl in fmt.levels):
            continue
        kept = _row_slice(rhs, name, fmt) if rhs is not None else None
        if kept is None:
            n = stored_count(name, fmt)
        else:
            counting, n = kept_row_entries(array_name(name, 1, fmt.levels[1].starts_array), kept.start,
                                           kept.stop, kept.step, fresh or (lambda base: base))
            out += counting
        total = n if total is None else BinOp("+", total, n)
    if total is None or total == _c(0):
        return out      # (no input, or an empty slice: no room to reserve)
    return out + [Grow(x, total, hint=hint) for x in arrays]


def _row_slice(rhs, name: str, fmt):
    """The :class:`~compiler.notation.shape.Slice` of ``rhs`` through which alone tensor ``name``
    is read, when it slices the rows of a CSR (``fmt``: a Dense level over a SparseList), else None."""
    reads = [a for a in accesses_of(rhs) if a.tensor == name]
    if len(reads) != 1 or len(fmt.levels) != 2 or [walk_kind(it) for it in storage_iterators(name, fmt)] != \
            ["dense", "list"]:
        return None
    rows = reads[0].indices[fmt.mode_order[0]]
    for e in walk_notation(rhs):
        if isinstance(e, Slice) and e.operand == reads[0] and e.index == rows:
            return e
    return None


def stored_count(name: str, fmt):
    """How many entries tensor ``name`` of ``fmt`` stores, as an IR expression of its arrays.

    >>> from compiler.format import csr, coo
    >>> print(stored_count("A", csr()), "|", stored_count("B", coo()))
    A1_pos[A0_size] | B0_pos[1]

    An int32 count is widened, so a sum of two operands' counts cannot overflow int32:

    >>> print(stored_count("A", csr(index_dtype="int32")))
    (int64)A1_pos[A0_size]
    """
    count = None
    for it in storage_iterators(name, fmt):
        if it.sub > 0:
            continue    # (a level of several modes counts its entries once)
        if it.located_by_coordinate:
            size = Var(it.param("size"))
            count = size if count is None else BinOp("*", count, size)
        else:
            # (as the level's iterator counts the positions under its fibers: a block list's are past its blocks)
            count = it.stored_count(_c(1) if count is None else count)
            if np.dtype(getattr(fmt.levels[it.level], "index_dtype", None) or np.int64) != np.int64:
                count = Cast("int64", count)
    return _c(1) if count is None else count


__all__ = ["SeqOutput", "output_kind", "reserve_room", "stored_count"]
