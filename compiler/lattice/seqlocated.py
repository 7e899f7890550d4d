"""Reads at constant coordinates only (``w[1]``, ``A[2, 3]``) in the sequence lowering: each entry located
once, before the loops, and read by every use as a scalar; and reads at a loop's index, then constants, of a
tensor whose first level is located by coordinate (``A[i, 1]`` of a CSR matrix): located at each ``i``.

``square(sign(w))[1]`` reads ``w[1]`` six times; walked as a sequence of one coordinate, each read had its
own cursor, and the cases of each nested in the others' (5,067 lines of C for a NaN fill). Here each
distinct entry becomes a 0-d stand-in (``w_1[]``), a value every coordinate has, so the lattice walks
nothing for it; the kernel computes it once at its start: each level of the tensor located at its
constant as the level's iterator says (TACO's locate for a Dense level's slot, a SparseByteMap's mark or
a SparseHash's probe; a search of a sorted fiber, a SparseCOO's non-last mode a segment of equal
coordinates, :class:`~compiler.lattice.diagonal.Found`), the stored value where every level holds it and
the tensor's fill where one does not. The stand-in may hold what the tensor stores and its fill
(:func:`stand_in_facts`), so an operator that only a finite value annihilates walks every coordinate.

>>> from compiler.notation import parse
>>> from compiler.format import Format
>>> from compiler.levels import Element, SparseList
>>> program, reads = located_reads(parse("y[i] = w[1] * w[1] + v[i] * w[2]"), {"y", "v", "w"})
>>> print(program)
y[i] = w_1[] * w_1[] + v[i] * w_2[]
>>> reads[0]
LocatedRead(name='w_1', tensor='w', coords=(1,), start=0, stop=None, step=1)
>>> from compiler.names import FreshNames
>>> stmts, var = located_stmts(reads[0], Format(SparseList(Element(float("nan")))), FreshNames())
>>> print(*stmts, sep=chr(10))
float64 w_1 = nan;
int64 end = w0_pos[1];
int64 lo = lower_bound(w0_idx, w0_pos[0], end, 1);
int64 pw0 = lo < end && w0_idx[lo] == 1 ? lo : -1;
if (pw0 >= 0) {
    w_1 = w_val[pw0];
}

A column of a CSR matrix read at the loop's index, ``A[i, 1]``, is walked as ``i_A × 1_A[1:2]``: rows
where column 1 is stored. Three columns of two matrices (a cross product, ``A[i, 1] * B[i, 2] - A[i, 2] *
B[i, 1]`` and two more) were six such sequences, whose lattice at ``i`` took every subset of them that can
meet (73,349 lines of C, 97 s to lower). Each is a 1-d Dense stand-in instead, ``A_i_1[i]``, its value at
``i`` located in row ``i`` (a search of the row, as each walk searched): once a row at the top of the loop over
``i`` where its body runs at every coordinate (:func:`read_at`), else by each statement reading it. The
derivation gives it no sequence: it constrains nothing, and the loop over ``i`` is one case (241 lines).
A slice of the rows, ``A[::-1][i, 1]``, is one too, ``A_rev_i_1[i]``, located in row ``5 - i``.

The columns of a tensor whose rows are walked (a COO, a DCSR: :func:`rows_walked`) are such stand-ins too, located
in row ``i`` the same way, but each walks its tensor's first level: the rows where the column may be stored. Each
was ``i_A × 1_A[1:2]``: a cross product of two COO matrices made a lattice of every subset of six such products
that can meet (83,242 lines of C, 93 s to lower). The six walks of rows run out by threes (a tensor's run out
together) and fold to one a tensor (:func:`one_walk_of_rows`), so the loop is one point, ``i_A ∩ i_B`` for fill 0,
each column sought in the segment of the row its walk is at (329 lines, 0.4 s).

>>> from compiler.format import csr
>>> program, reads = located_reads(parse("y[i] = A[i, 1] * v[i]"), {"y", "v", "A"},
...                                rows=row_locatable({"A": csr()}, {"i"}))
>>> print(program)
y[i] = A_i_1[i] * v[i]
>>> stmts, var = located_stmts(reads[0], csr(), FreshNames())
>>> print(*stmts, sep=chr(10))
float64 A_i_1 = 0.0;
int64 end = A1_pos[i + 1];
int64 lo = lower_bound(A1_idx, A1_pos[i], end, 1);
int64 pA1 = lo < end && A1_idx[lo] == 1 ? lo : -1;
if (pA1 >= 0) {
    A_i_1 = A_val[pA1];
}
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .. import values
from ..binding import array_name
from ..format import Format, dense
from ..imperative.ir import Assign as IRAssign
from ..imperative.identities import arith
from ..imperative.ir import BinOp, Comment, Const, Declare, If, Load, Var
from ..imperative.search import lower_bound_call
from ..names import FreshNames
from ..notation.ast import Access, Assign
from ..notation.ast import walk as walk_notation
from ..notation.shape import Slice
from .diagonal import Found
from .iterators import hash_capacity_stmts, mode_iterators
from .seqcfirvalues import Read, value_children
from .seqreads import map_accesses
from .seqstmts import Assign as CFAssign
from .seqstmts import Bind, Reduce, Switch, While
from .sequences import Intersect, Level, Seq, Union, rebuild, walk

I64 = "int64"


@dataclass(frozen=True)
class LocatedRead:
    """The entry of ``tensor`` at ``coords`` (one per logical mode, in range), read in the statement as
    the 0-d stand-in ``name``; a loop's index among ``coords`` (its name, at the first stored mode) makes it a
    1-d Dense stand-in read at that index, located at each of its coordinates."""

    name: str
    tensor: str
    coords: tuple
    #: a 1-d stand-in's rows, ``start + step * index`` short of ``stop`` (None: the tensor's extent), as the
    #: slice it stands in for, ``A[::-1][i, 1]``, reads them
    start: int = 0
    stop: int | None = None
    step: int = 1

    @property
    def index(self) -> str | None:
        """The loop index the stand-in is read at (None: a 0-d stand-in, located once)."""
        return next((c for c in self.coords if isinstance(c, str)), None)

    def rows(self, extent: int) -> range:
        """The rows of its tensor (of ``extent`` rows) a 1-d stand-in reads, in its order."""
        return range(self.start, extent if self.stop is None else self.stop, self.step)


def row_locatable(formats: dict, loops) -> object:
    """Whether an access (of a tensor of ``formats``) is read at one of ``loops`` (index names: the output's
    and the sums', each a loop's variable wherever the access is read), then constants only, that loop's index
    at the tensor's first stored level, which is located by coordinate (a CSR matrix's row, not a COO's)."""
    def test(x: Access, at=None) -> bool:
        """(``at``: the loop index a slice of ``x`` binds its first index to)"""
        fmt = formats.get(x.tensor)
        if fmt is None or len(x.indices) < 2 or not all(isinstance(i, int) for i in x.indices[1:]):
            return False
        first = fmt.mode_order[0]
        # (a first level walked, a COO's or a DCSR's, is walked for the rows the column may be in, each
        # located by coordinate as a CSR's: rows_walked; a slice of its rows is not, read as before)
        return first == 0 and str(at or x.indices[0]) in loops and (fmt.levels[0].located_by_coordinate
                                                                    or at is None)
    return test


def rows_walked(fmt: Format) -> bool:
    """Whether a 1-d stand-in of a tensor of ``fmt`` (:func:`row_locatable`) walks its tensor's first level for the
    rows its column may be in: a first level that no coordinate locates (a COO's, a DCSR's), which an empty row is
    absent from. Each column walks that level under a name of its own (``A'``, ``A''``), and their leaves run out
    together (:attr:`~compiler.lattice.sequences.Level.rows_of`): the lattice has a point for the rows, not one for
    each subset of the columns that can meet.

    >>> from compiler.format import coo, csr
    >>> rows_walked(coo()), rows_walked(csr())
    (True, False)
    """
    return not fmt.levels[0].located_by_coordinate


def located_reads(program: Assign, taken, rows=None) -> tuple[Assign, tuple]:
    """``program`` with each access at constants only replaced by a 0-d stand-in (one per distinct entry),
    and each access ``rows`` accepts (:func:`row_locatable`) by a 1-d one read at its index, and the
    :class:`LocatedRead` of each; ``taken``: the names the stand-ins must not take (the tensors').
    A statement reading no entry is returned as it is."""
    found: dict = {}
    names = FreshNames(set(taken) | {a.tensor for a in walk_notation(program) if isinstance(a, Access)})

    def located(x, at=None, rows_of=(0, None, 1)):
        row = rows is not None and rows(x, at)
        if not (x.indices and all(isinstance(i, int) for i in x.indices)) and not row:
            return x
        index = at or x.indices[0]
        coords = tuple(str(index) if row and k == 0 else c for k, c in enumerate(x.indices))
        # (one stand-in a column, whatever index a slice of it bound)
        key = (x.tensor, coords, *rows_of) if row else x
        if key not in found:
            how = "" if rows_of == (0, None, 1) else "rev_" if rows_of[2] < 0 else "sl_"   # (a slice's rows)
            found[key] = LocatedRead(names(f"{x.tensor}_{how}" + "_".join(map(str, coords))), x.tensor, coords,
                                     *rows_of)
        return Access(found[key].name, (index,) if row else ())

    def sliced(s):
        # (a slice of such a column, A[::-1][i, 1]: its rows located at start + step * i)
        if not (isinstance(s, Slice) and isinstance(s.operand, Access) and s.operand.indices[:1] == (s.index,)
                and rows is not None and rows(s.operand, s.result)):
            return None
        return located(s.operand, s.result, (s.start, s.stop, s.step))

    rhs = map_accesses(program.rhs, located, sliced)
    if not found:
        return program, ()
    return replace(program, rhs=rhs), tuple(found.values())


def read_at(body, index: str) -> set:
    """The stand-ins read at ``index`` (1-d, :attr:`LocatedRead.index`) in the sequence CFIR statement ``body``,
    by name: what a loop over ``index`` whose body runs at each of its coordinates locates once a row.

    >>> from compiler.lattice.seqcfirvalues import Read
    >>> from compiler.lattice.seqstmts import Assign, Block
    >>> sorted(read_at(Block((Assign("y", ("i",), Read("A_i_1", (), at=("i",))),
    ...                       Assign("z", ("i",), Read("B_j_0", (), at=("j",))))), "i"))
    ['A_i_1']
    """
    found, stack = set(), [body]
    while stack:
        x = stack.pop()
        if isinstance(x, (CFAssign, Reduce)):
            stack.append(x.value)
        elif isinstance(x, Read):
            if x.at == (index,):
                found.add(x.tensor)
        elif hasattr(x, "children"):
            stack += x.children()
        else:
            stack += value_children(x)
    return found


def stand_in_format(fmt: Format, read: LocatedRead | None = None) -> Format:
    """The format of a stand-in of an entry of a tensor of ``fmt``: a 0-d Dense of its dtype and fill (1-d
    for a ``read`` at a loop's index)."""
    return dense(0 if read is None or read.index is None else 1, fill=fmt.fill, dtype=fmt.dtype)


def stand_in_facts(read: LocatedRead, fmt: Format) -> values.Facts:
    """What the stand-in may hold: what its tensor stores (as the lowering assumes), and its fill."""
    return values.assumed(read.tensor) | values.of_value(fmt.fill)


def located_value(read: LocatedRead, tensor):
    """The entry's value in the Tensor ``tensor`` (its fill where it stores none): the interpreters' data.

    >>> from compiler.tensor import Tensor
    >>> t = Tensor.from_numpy(np.array([0.0, 2.0, 0.0]), "sparse", fill=0.0)
    >>> located_value(LocatedRead("w_1", "w", (1,)), t), located_value(LocatedRead("w_2", "w", (2,)), t)
    (2.0, 0.0)
    >>> located_value(LocatedRead("A_i_1", "A", ("i", 1)), Tensor.from_numpy(np.eye(3), "csr"))
    array([0., 1., 0.])
    """
    whole = np.asarray(tensor.to_numpy())
    at = whole[tuple(list(read.rows(whole.shape[0])) if isinstance(c, str) else c for c in read.coords)]
    return at if read.index is not None else at.item()


def located_stmts(read: LocatedRead, fmt: Format, fresh, walked=None) -> tuple[list, Var]:
    """Statements declaring the variable of ``read``'s value in a tensor of ``fmt`` (its fill where some
    level does not hold it), and that variable: each level located at its constant (or its loop's index, a
    variable of that name) as its iterator says, the next level located only where it is held (see the
    module's docstring). ``walked``: ``(at, position)`` where a loop walks the tensor's first level (a stand-in's
    rows, :func:`rows_walked`): the first level is not sought, the next located under ``position`` (a COO's
    segment, ``(start, end)``) where ``at`` holds, the walk at the row."""
    its = mode_iterators(read.tensor, read.tensor, fmt)
    dt = np.dtype(fmt.dtype).name
    var = Var(fresh(read.name))
    fill = fmt.fill if fmt.fill is not None else 0
    fill = bool(fill) if dt == "bool" else fill
    head = [Declare(var, dt, Const(np.asarray(fill).astype(dt).item(), dt))]
    caps: list = []

    def fibers_above(s: int):
        """IR of the number of fibers of storage level ``s`` (a hash's table counts their keys)."""
        out = Const(1, I64)
        for up in its[:s]:
            if up.fibers_by_size:
                size = Var(up.param("size"))
                out = size if isinstance(out, Const) else BinOp("*", out, size)
            else:
                out = up.stored_count(out)
        return out

    def chain(s: int, parent) -> list:
        if s == len(its):
            return [IRAssign(var, Load(array_name(read.tensor, None, "val"), parent))]
        it = its[s]
        at = read.coords[fmt.mode_order[s]]
        if not isinstance(at, str):
            c = Const(int(at), I64)
        else:   # (a slice's row, start + step * i: 5 - i for a reversal of 6 rows)
            c = arith("*", Var(at), Const(abs(read.step), I64))
            c = arith("-", Const(read.start, I64), c) if read.step < 0 else \
                arith("+", c, Const(read.start, I64)) if read.start else c
        if it.located_by_coordinate:
            return chain(s + 1, it.locate(parent, c))
        if not it.unique:
            # (a SparseCOO's mode above its last: the segment of positions holding c, two searches)
            first, stop = it.bounds(parent)
            lo, hi = Var(fresh(f"lo{read.tensor}{it.level}")), Var(fresh(f"hi{read.tensor}{it.level}"))
            crd = it.param(it.crd)
            return [Declare(lo, I64, lower_bound_call(crd, first, stop, c)),
                    Declare(hi, I64, lower_bound_call(crd, lo, stop, BinOp("+", c, Const(1, I64)))),
                    If(BinOp("<", lo, hi), chain(s + 1, (lo, hi)))]
        cap = None
        if it.probed:
            cap = Var(fresh(f"{read.tensor}{it.level}_cap"))
            caps.extend(hash_capacity_stmts(cap, it.stored_count(fibers_above(s))))
        q = Var(fresh(f"p{read.tensor}{it.level}"))
        return Found(it).find_stmts(q, parent, c, lambda base: Var(fresh(base)), cap) + \
            [If(BinOp(">=", q, Const(0, I64)), chain(s + 1, q))]

    body = chain(0, Const(0, I64)) if walked is None else chain(1, walked[1]) if walked[0] == Const(True, "bool") \
        else [If(walked[0], chain(1, walked[1]))]
    if caps:
        caps.insert(0, Comment(f"{read.tensor}'s hashed level: its table's capacity, the smallest power of two "
                               f"holding twice its keys"))
    return head + caps + body, var


def one_walk_of_rows(s: Seq) -> Seq:
    """``s`` with the walks of one tensor's rows (:attr:`~compiler.lattice.sequences.Level.rows_of`, one a column
    of it) as its first, where the ∪ and ∩ of those walks then fold (``x ∪ x`` and ``x ∩ x`` are ``x``, ``x ∪ (x
    ∩ y)`` is ``x``) until each tensor's rows are walked once: they walk one set of coordinates. Else ``s``: a
    loop cannot walk one level twice, and the walks under names of their own run out together.

    >>> a, a1, b = (Level(t, 0, "compressed", 4, rows_of=t.rstrip("'")) for t in ("A", "A'", "B"))
    >>> print(one_walk_of_rows(Union(Intersect(a1, b), Intersect(b, a))), one_walk_of_rows(Union(a, Intersect(b, a1))))
    i_A ∩ i_B i_A
    >>> c = Level("C", 0, "compressed", 4)
    >>> print(one_walk_of_rows(Union(Intersect(a, b), Intersect(a1, c))))   # (i_A ∩ (i_B ∪ i_C): not folded here)
    (i_A ∩ i_B) ∪ (i_A' ∩ i_C)
    >>> print(one_walk_of_rows(Intersect(Union(a, c), a1)))   # (i_A, but C's value is read at its cursor)
    (i_A ∪ i_C) ∩ i_A'
    """
    walks = [x for x in walk(s) if isinstance(x, Level) and x.rows_of]
    first = {}
    for x in sorted(walks, key=lambda x: (len(x.tensor), x.tensor)):
        first.setdefault((x.rows_of, x.index), x)
    if len(set(walks)) == len(first):
        return s

    def fold(x: Seq) -> Seq:
        if isinstance(x, Level) and x.rows_of:
            return first[x.rows_of, x.index]
        kids = x.children()
        if not isinstance(x, (Union, Intersect)):
            return rebuild(x, tuple(fold(k) for k in kids)) if kids else x
        # (the terms of a chain of one operator, each a set of the other's operands: equal ones and absorbed ones
        # dropped, a term holding all of another's operands absorbed by it; only terms of walks of rows, whose
        # values are located: a level that a read's value is at is walked by its loop)
        other = Intersect if isinstance(x, Union) else Union
        terms = []
        for t in _chain(type(x), x):
            t = fold(t)
            terms.append(frozenset(_chain(other, t)))
        kept = []
        for t in dict.fromkeys(terms):
            rows_only = all(isinstance(y, Level) and y.rows_of for f in t for y in f.iters())
            if not (rows_only and any(u < t for u in terms)):
                kept.append(t)
        out = None
        for t in kept:
            term = None
            for y in sorted(t, key=str):
                term = y if term is None else other(term, y)
            out = term if out is None else type(x)(out, term)
        return out

    folded = fold(s)
    seen = [x for x in walk(folded) if isinstance(x, Level) and x.rows_of]
    return folded if len(seen) == len({(x.rows_of, x.index) for x in seen}) else s


def _chain(op, x: Seq) -> list:
    """The operands of the chain of ``op`` (Union or Intersect) at ``x``: ``[a, b, c]`` of ``(a ∪ b) ∪ c``."""
    return _chain(op, x.a) + _chain(op, x.b) if type(x) is op else [x]


class RowLocates:
    """The :class:`~compiler.lattice.seqemit.SeqEmitter`'s locates of the 1-d stand-ins (its ``row_located``: name
    -> ``(LocatedRead, format)``; ``located``: name -> the variable holding the value here): once a coordinate at the
    top of the body of the loop over their index where every coordinate runs that body (:meth:`rows_at`), else at the
    top of each case of its switch (:meth:`in_case`), else by each statement reading them (:meth:`stmt`)."""

    def stmt(self, s) -> list:
        """The code of the CFIR statement ``s`` (``statement``'s), after the locates of the columns it reads that no
        loop around located (a read twice, ``a'`` beside ``a``, is one column)."""
        rows = (self.reads(s) & self.row_located.keys()) - self.located.keys() \
            if isinstance(s, (CFAssign, Reduce)) else ()
        if not rows:
            return self.statement(s)
        pre = self.locate_rows(rows)
        try:
            return pre + self.statement(s)
        finally:
            for real in rows:
                del self.located[real]

    def rows_at(self, w: While) -> list:
        """The locates of the columns read at ``w``'s index, once a coordinate at the top of its body, where the body
        runs at each coordinate (no switch of cases); their names pushed on ``hoisted``, for the loop to forget."""
        switched = w.body.body if isinstance(w.body, Bind) else w.body
        names = {self.names[n] for n in read_at(switched, w.index)} if not isinstance(switched, Switch) else set()
        reals = names & self.row_located.keys() - self.located.keys()
        self.hoisted.append(reals)
        # (a loop over one level runs its body at that level's coordinates)
        return self.locate_rows(reals, {w.seq.key} if isinstance(w.seq, Level) and not w.merged else ())

    def in_case(self, index: str, body, emit, seq=None) -> list:
        """``emit()``, the code of a switch's case ``body`` at the loop over ``index``, after the locates of the
        columns the case reads at ``index`` that no loop around located: once a case taken, not once a statement
        (the parts of a stack, each a loop reading the row's column at each of its coordinates). ``seq``: the
        case's sequence, whose levels are at the coordinate where it is taken."""
        reals = {self.names[n] for n in read_at(body, index)} & self.row_located.keys() - self.located.keys()
        pre = self.locate_rows(reals, () if seq is None else {x.key for x in seq.iters() if isinstance(x, Level)})
        try:
            return pre + emit()
        finally:
            for real in reals:
                del self.located[real]

    def locate_rows(self, reals, there=()) -> list:
        """The statements locating each stand-in of ``reals`` here (in name order), their variables in ``located``;
        ``there``: the keys of the levels at the coordinate here."""
        out = []
        for real in sorted(reals):
            stmts, self.located[real] = located_stmts(*self.row_located[real], self.fresh,
                                                      self.walked_row(real, there))
            out += stmts
        return out

    def walked_row(self, real: str, there=()):
        """``(at, position)`` of the loop here walking the rows of the stand-in ``real``'s tensor (its walk, or
        another column's folded into it: :func:`one_walk_of_rows`), for :func:`located_stmts`: the test of the walk
        at the row (true where its level is ``there``), and its position, a COO's segment; None where no loop here
        walks them (each row sought)."""
        r = self.row_located[real][0]
        lv = next((lv for lv in self.row_walks.get(r.tensor, ()) if lv.key in self.leaves and lv.index == r.index),
                  None)
        if lv is None:
            return None
        c = self.leaves[lv.key]
        at = Const(True, "bool") if lv.key in there else self.equals(replace(lv, index=r.index), Var(r.index))
        return at, ((c.p, c.seg) if c.seg is not None else self.position(lv.tensor, 0))


__all__ = ["LocatedRead", "RowLocates", "located_reads", "read_at", "one_walk_of_rows", "row_locatable", "rows_walked", "located_stmts", "located_value", "stand_in_facts", "stand_in_format"]
