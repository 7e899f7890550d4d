"""Index notation with shape operators to sequence expressions and their CIN (BURRITO's Fig. 11
and §4.4 of shape-operators.md), run by the sequence CFIR's interpreter.

:func:`derive_seq` is ``Seq(expr, i)``: an access gives its level of ``i`` (its kind asked of the
tensor's level: a full level is ``dense``, the lower modes of a multi-mode level such as COO are
``singleton``, the others ``compressed``), ``+`` is ``∪``, ``*`` is ``∩`` (of operands of fill 0; any
other elementwise operator, or other fills, :mod:`compiler.lattice.seqvalues`), a sum gives its
summand's, ``broadcast(i, a)`` is ``U_i``, ``collapse`` ``×`` (of a sum, the ``∪`` of the terms'
collapses: ``collapse(A + B)`` is ``(i_A × j_A) ∪ (i_B × j_B)``, where ``(i_A ∪ i_B) × (j_A ∪ j_B)``
would put a union in a product's right operand, which the lattice does not take; a term constant
along an index has that index's universe, its own: ``collapse(A + x[j])`` is ``(i_A × j_A) ∪ (U_i#2
× j_x)``), ``concat`` ``⊔`` on its index and
``∪`` on the others (line 12), ``split`` ``π0``/``π1`` and ``slice`` a slice. An expression that
does not vary with ``i`` (an access without it, a literal) constrains nothing under ``*`` and is
there at every coordinate under ``+`` (``U_i``, an implicit broadcast). Each node records the
rule that fired (:class:`Derivation`).

:func:`build_cin` turns an :class:`~compiler.notation.ast.Assign` into the CIN of
:mod:`compiler.lattice.seqcfir`: one forall per output index in the output's mode order, a
``where`` (an :class:`~compiler.lattice.seqcfir.Alloc`'d temporary and its producer loops) per
sum (and per max, min, prod, any or all, into a scalar started at the operator's identity: :func:`other_reduction`),
reads with the shape operators erased but concatenation (:class:`~compiler.lattice.seqcfirvalues.Cat`).
:func:`seq_evaluate` lowers that through the sequence lattices and CFIR and interprets it over the
tensors' stored entries.

>>> import numpy as np
>>> from compiler.tensor import Tensor
>>> A = Tensor.from_numpy(np.array([[0, 1.0, 0], [2.0, 0, 3.0]]), "csr")
>>> b = Tensor.from_numpy(np.array([0, 0, 0, 0, 5.0, 0]), "sparse")
>>> low = seq_lower("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]", A=A, b=b)
>>> print(low.cin)
forall k ∈ (i_A × j_A) ∪ k_b
  c(k) = A(i_A, j_A) + b(k_b)
>>> print(low.derivations[0].text())
Seq(collapse(A[i, j], (i, j) -> k) + b[k], k) = (i_A × j_A) ∪ k_b   [line 4: + is ∪]
  Seq(collapse(A[i, j], (i, j) -> k), k) = i_A × j_A   [line 9: collapse into k is ×]
    Seq(A[i, j], i) = i_A   [line 3: level 0 of A (dense)]
    Seq(A[i, j], j) = j_A   [line 3: level 1 of A (compressed)]
  Seq(b[k], k) = k_b   [line 3: level 0 of b (compressed)]
-> forall k ∈ (i_A × j_A) ∪ k_b   [its lattice's loops in the C]
>>> seq_evaluate("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]", A=A, b=b)
array([0., 1., 0., 2., 5., 3.])
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .. import values
from ..errors import StrategyError
from ..format import dense
from ..interop import to_tensor
from ..tensor import Tensor
from ..notation import parse
from ..notation import parse_expr
from ..notation.ast import Access, Assign, Call, Index, Literal, Reduce, free_indices
from ..notation.ast import accesses as accesses_of
from ..notation.ast import walk as walk_notation
from ..notation.drawing import expression_nodes
from ..notation.dtypes import expr_dtype, reduce_dtype
from ..notation.infer import infer_shapes
from ..notation.shape import Broadcast, Collapse, Concat, Slice, Split, distinct_bindings
from .seqconstants import with_constants
from .seqlocated import (located_reads, located_value, one_walk_of_rows, row_locatable, rows_walked, stand_in_facts,
                         stand_in_format)
from .seqreads import separate_reads
from ..notation.shapedata import shape_data
from ..trace import Artifact, Trace
from . import seqcfir as cin
from .seqhoist import hoisted_body
from .seqworkspace import split_sums, sums_under_operators, workspace_body
from .seqinterp import interpret
from .seqnesting import DiscordantWalk, LoopOrder, check_concordant, check_split_nesting, nest_paths
from .seqwalk import stored_entries
from .sequences import Level, Seq, SequenceError, Union, Universe
from .seqparts import part_keys, walked_whole
from .seqvalues import Fills, call_kind, expr_fill, fill_fold, in_order, real_constant, reduction_fill, wild_product
from .seqrules import AccessLevels, Derivation, Deriver, level_kinds


# -- the CIN ---------------------------------------------------------------------------------------


@dataclass
class SeqLowering:
    """What :func:`seq_lower` built: the CIN, each loop's derivation, the CFIR, the trace, the
    output's shape and the stored entries the interpreter reads (per name, in storage order)."""

    program: Assign
    cin: cin.Stmt
    derivations: list
    cfir: cin.SeqCFIR
    trace: Trace
    shape: tuple
    data: dict
    fill: object = None       # the result's fill where the inputs' is not 0 (a copy: copy_fill)
    #: how the output is written: appended in the loops' order (""), ``accumulate`` (a sum whose loops run around
    #: the output's: seqhoist), ``scatter`` (seqscatter), ``group-sort`` (seqgroupsort), ``straddle-sort``
    #: (seqstraddlesort), ``sort`` (every entry sorted: seqentrysort), ``column-major`` (seqcolmajor: sorted by the
    #: flat coordinate) or ``flat`` (seqcolmajor: its loops in the flat coordinate's order, appended as it comes),
    #: in compiler.lattice
    assembly: str = ""
    #: the workspaces of sums under operators (:class:`~compiler.lattice.seqworkspace.SumWorkspace`)
    workspaces: tuple = ()
    #: a column-major flatten undone (``column-major``, :mod:`compiler.lattice.seqcolmajor`): the output's one
    #: index, which the program's two or more are stored at
    flattened: str = ""
    #: ``(LocatedRead, format)`` of each entry read at constants only, located once before the loops and
    #: read as a 0-d stand-in (:mod:`compiler.lattice.seqlocated`)
    located: tuple = ()
    #: the Level each 1-d stand-in of a tensor whose rows are walked walks
    #: (:func:`~compiler.lattice.seqlocated.rows_walked`)
    row_walks: tuple = ()


class CinBuilder:
    """The CIN of one program (§4.4): foralls in the output's mode order, a ``where`` per sum."""

    def __init__(self, deriver: Deriver):
        self.d = deriver
        self.derivations: list[Derivation] = []
        self.loops: list = []        # (index, sequence) in nesting order, for the concordance check
        self.temps = 0

    def nest(self, program: Assign, order: tuple) -> cin.Stmt:
        """``program``'s assignment inside one forall per output index, in ``order`` (its modes)."""
        lhs = program.lhs
        pre, v = self.value(program.rhs)
        body = _block(pre + [cin.Assign(lhs.tensor, tuple(map(str, lhs.indices)), v)])
        for m in reversed(order):
            body = self.forall(lhs.indices[m], program.rhs, body)
        return body

    def forall(self, i: Index, e, body: cin.Stmt, every: bool = False) -> cin.Forall:
        """The loop over ``i`` of ``body``, at the coordinates ``e`` has along it (``every``: at every one, where a
        product multiplies its fill in order, :func:`~compiler.lattice.seqvalues.in_order`)."""
        log = Derivation(str(i))
        s = self.d.seq(e, i, log)
        self.derivations.append(log)
        if s is None:
            s = Universe(self.d.size(i), str(i))
            log.steps.append((0, str(e), str(i), "does not vary with it: U", str(s)))
        elif every:
            was, s = s, Union(s, Universe(self.d.size(i), str(i)))
            log.steps.append((0, str(e), str(i), f"a product multiplies its fill in order where {was} has no "
                                                 f"coordinate: ∪ U", str(s)))
        once = one_walk_of_rows(s)
        if once is not s:
            log.steps.append((0, str(e), str(i), "the columns of a tensor walk its rows, one set of coordinates: "
                                                 "those rows walked once", str(once)))
            s = once
        self.loops.append((i, s))
        return cin.Forall(str(i), s, body)

    def value(self, e) -> tuple[list, cin.Value]:
        """The statements computing ``e``'s sums, and its value with shape operators erased."""
        if isinstance(e, Access):
            fill = self.d.fills.get(e.tensor)
            fill = 0.0 if fill is None else fill
            # (a tensor whose values are surely finite: 0 times it is 0, so where only it is stored
            # under an exact product, nothing is written)
            finite = values.assumed(e.tensor).small and values.small_value(fill)
            dt = np.dtype(getattr(self.d.fills, "dtypes", {}).get(e.tensor, "float64"))
            typed = dt.name if dt.kind in "iu" and dt.name != "int64" else None
            # (an integer's fill stays an integer: t += 0.0 of an int64 sum computes it in double, to 53 bits)
            fill = 0.0 if _plain_zero(fill) and dt.kind not in "iu" else fill
            if e.tensor in self.d.located_rows:
                # (a column located at each coordinate of its index, in the statement: no level to walk)
                return [], cin.Read(self.d.access_levels[e].name, (), fill, finite, tuple(map(str, e.indices)), typed)
            return [], cin.Read(self.d.access_levels[e].name, self.d.access_levels[e].levels, fill, finite,
                                typed=typed)
        if isinstance(e, Literal):
            if isinstance(e.value, bool):
                raise StrategyError(f"{e}: the sequence lowering computes numbers, not booleans")
            if e.dtype.kind in "iu":   # (an integer stays one: a sum of int64 times 1 is no sum of doubles)
                return [], cin.Lit(int(e.value), None if e.dtype.name == "int64" else e.dtype.name)
            return [], cin.Lit(real_constant(e.value, e))
        if isinstance(e, Call):
            parts = [self.value(a) for a in e.args]
            pre = [x for p, _ in parts for x in p]
            if e.op.is_user or call_kind(e, self.d.fills, self.d.extents) not in ("sum", "product"):
                # (Mul folds 0 * x to 0, which only the paper's ∩ of fill-0 factors may: where a factor of
                # another fill is absent, x * 0 is computed, NaN for a stored NaN or inf)
                return pre, cin.Op(e.op, tuple(v for _, v in parts))
            return pre, (cin.Add if e.op.name == "add" else cin.Mul)(parts[0][1], parts[1][1])
        if isinstance(e, Concat):
            pre, out = self.value(e.operands[0])
            keys = [part_keys(p) for p in self.d.concat_parts(e)]
            for n, x in enumerate(e.operands[1:], 1):
                p, v = self.value(x)
                # (each side's leaf keys: the CFIR takes the side whose leaves the loops are at)
                fill = real_constant(self.d.fill(e), e)
                pre, out = pre + p, cin.Cat(out, v, frozenset().union(*keys[:n]), keys[n], fill)
            return pre, out
        if isinstance(e, (Collapse, Split, Slice, Broadcast)):
            return self.value(e.operand)
        if isinstance(e, Reduce):
            # (a sum, or max, min or a product into a scalar: t = max(t, v))
            op = None if not e.op.is_user and e.op.name == "add" else other_reduction(e)
            self.temps += 1
            t = f"t{self.temps}" if self.temps > 1 else "t"
            pre, v = self.value(e.body)
            # (a summand of another fill than 0 counts the coordinates its loops sum: each one they skip adds
            # that fill, folded in after them; another reduction's, where it is not its identity; an integer
            # product's of another fill, 2 or -3, to the power of the coordinates skipped; a floating-point
            # product's of another fill than 1, or a complex one's, multiplied in order at every coordinate)
            fill = expr_fill(e.body, self.d.fills, self.d.extents)
            counted, power, folded = fill_fold(op, fill, e)
            n = f"n_{t}" if counted else ""
            ordered = in_order(op, fill)
            body: cin.Stmt = _block(pre + [cin.Reduce(t, (), v, n, op, ordered)])
            for j in reversed(e.indices):
                body = self.forall(j, e.body, body, ordered)
            fold = [cin.Fold(t, n, int(np.prod([self.d.size(j) for j in e.indices])), folded, op=op, power=power)] \
                if n else []
            return [cin.Alloc(t, n, 0.0 if op is None else op.identity, self.reduced_dtype(e)), body] + fold, \
                cin.Temp(t)
        raise StrategyError(f"{e}: the sequence lowering does not take this node")

    def reduced_dtype(self, e: Reduce) -> str:
        """The dtype the reduction ``e`` accumulates in (:func:`~compiler.notation.dtypes.reduce_dtype` of its
        body's), or "" (the output's) where a tensor's dtype is not known."""
        known = self.d.fills.dtypes if isinstance(self.d.fills, Fills) else {}
        if any(a.tensor not in known for a in accesses_of(e.body)):
            return ""
        return reduce_dtype(e.op, expr_dtype(e.body, lambda a: known[a.tensor])).name


#: the reductions other than a sum the sequence lowering takes, into a scalar (each's identity the start)
OTHER_REDUCTIONS = ("max", "min", "mul", "or", "and")


def other_reduction(e: Reduce):
    """The operator of ``e``, a reduction other than a sum that the sequence lowering computes into a scalar
    (``max[i](A[1, i])``, the max of a constant row: ``t = max(t, v)``); else a StrategyError naming it.

    >>> from compiler.notation import parse_expr
    >>> other_reduction(parse_expr("max[i](A[1, i])")).name
    'max'
    """
    if e.op.is_user or e.op.name not in OTHER_REDUCTIONS:
        raise StrategyError(f"{e}: the sequence lowering reduces with sum, max, min, prod, any and all only, not "
                            f"{e.op.name}; lower it with strategy='looplets'")
    return e.op


def _block(stmts: list) -> cin.Stmt:
    return stmts[0] if len(stmts) == 1 else cin.Block(tuple(stmts))


def _plain_zero(f) -> bool:
    return not isinstance(f, bool) and f == 0


def input_fills(program: Assign, tensors: dict) -> Fills:
    """The fill of each tensor ``program`` reads (None read as 0), with its dtype (:class:`~.seqvalues.Fills`)."""
    out = Fills()
    for a in accesses_of(program.rhs):
        if a.tensor in tensors:
            t = tensors[a.tensor]
            out.setdefault(a.tensor, 0.0 if t.fill is None else t.fill)
            dtype = getattr(t, "format", t).dtype   # (a Tensor's, a ShapedFormat's or a Format's)
            if dtype is not None:
                out.dtypes[a.tensor] = np.dtype(dtype)
    return out


NOTGIVEN = object()


def copy_fill(program: Assign, tensors: dict, extents: dict | None = None, exact: bool = True):
    """The fill of ``program``'s result, None where it is 0 (the sequences' own algebra). A read
    where its tensor stores nothing is its fill, so the result's is the operators' of the fills
    (:func:`~compiler.lattice.seqvalues.expr_fill`: a slice or a reshape keeps its operand's, a
    concatenation its first operand's; a sum over ``n`` coordinates, ``extents`` giving each
    index's, ``n`` times its summand's). Not ``exact``: the loops' algebra's, 0 where they walk every
    coordinate, a literal added.

    >>> import numpy as np
    >>> from compiler.tensor import Tensor
    >>> A = Tensor.from_numpy(np.array([[1.0, 2.0]]), "csr", fill=1.0)
    >>> copy_fill(parse("y[j] = A[0, j]"), {"A": A}), copy_fill(parse("y[j] = A[0, j] * 2"), {"A": A})
    (1.0, 2.0)
    >>> copy_fill(parse("y[] = A[0, j]"), {"A": A}, {Index("j"): 2})
    2.0
    """
    fill = expr_fill(program.rhs, input_fills(program, tensors), extents, exact)
    return None if _plain_zero(fill) else fill


def _access_levels(program: Assign, tensors: dict, with_data: bool = True, extra: tuple = ()) -> tuple[dict, dict]:
    """Each access's sequence levels, and the stored entries of each name they read under (a
    tensor accessed with other indices again is read under a primed name, its own levels);
    ``tensors`` may be :class:`ShapedFormat` s (no entries: ``with_data=False``); an access at constants
    only (one entry) is refused: :func:`seq_lower` locates it before the loops (:mod:`compiler.lattice.seqlocated`); ``extra``:
    accesses read beside ``program``'s (a sum's workspace, :mod:`compiler.lattice.seqworkspace`)."""
    out: dict = {}
    data: dict = {}
    used: dict = {}
    for n in [*walk_notation(program.rhs), *extra]:
        if not isinstance(n, Access) or n in out:
            continue
        if n.tensor not in tensors:
            raise StrategyError(f"tensor {n.tensor} (in {n}) was not given")
        t = tensors[n.tensor]
        if n.indices and all(isinstance(i, int) for i in n.indices):
            raise StrategyError(f"{n}: every index is a constant (one entry of {n.tensor}), which has no sequence: "
                                f"seq_lower locates it before the loops (compiler.lattice.seqlocated)")
        named = [i for i in n.indices if not isinstance(i, int)]
        if len(set(named)) != len(named):
            raise StrategyError(f"{n}: an index repeated in one access (a diagonal) has no sequence")
        k = used.get(n.tensor, 0)
        used[n.tensor] = k + 1
        name = n.tensor + "'" * k
        kinds = level_kinds(t)
        levels = []
        by_index = {}
        consts = {}
        for s, (m, kind) in enumerate(zip(t.mode_order, kinds)):
            i = n.indices[m]
            lv = Level(name, s, kind, int(t.shape[m]), str(i))
            levels.append(lv)
            if isinstance(i, int):
                consts[s] = i
            else:
                by_index[i] = lv
        seqs = {Index(k): v for k, v in with_constants(levels, consts).items()} if consts else {}
        out[n] = AccessLevels(name, tuple(levels), by_index, seqs)
        if with_data and name not in data and not isinstance(t, ShapedFormat):
            # (the fibers as the levels' iterators read them, which the kernel's walk follows)
            data[name] = stored_entries(name, t)
    return out, data


def _row_walks(row_located: dict, tensors: dict, access_levels: dict, data: dict | None) -> dict:
    """Each 1-d stand-in of a tensor whose rows are walked (``A_i_1`` of a COO's ``A[i, 1]``,
    :func:`~compiler.lattice.seqlocated.rows_walked`) -> the Level of that tensor's first level it walks: one a tensor,
    under a name no access of it reads (``A'``), whose entries ``data`` gets for the interpreter."""
    out = {}
    taken = {acc.name for acc in access_levels.values()}
    for r in row_located.values():
        t = tensors[r.tensor]
        if not rows_walked(t.format):
            continue
        name = r.tensor
        while name in taken:
            name += "'"
        taken.add(name)
        out[r.name] = Level(name, 0, level_kinds(t)[0], int(t.shape[t.mode_order[0]]), str(r.index), rows_of=r.tensor)
        if data is not None:
            data[name] = stored_entries(name, t)
    return out


@dataclass(frozen=True)
class ShapedFormat:
    """A tensor's format and shape without its entries: what the lattice strategy lowers for.

    >>> from compiler.format import csr
    >>> level_kinds(ShapedFormat(csr(), (2, 3)))
    ('dense', 'compressed')
    """

    format: object
    shape: tuple

    @property
    def fill(self):
        return self.format.fill

    @property
    def mode_order(self):
        return self.format.mode_order

    @property
    def levels(self):
        return self.format.levels


def seq_lower(program, trace: Trace | None = None, loop_order=None, result_fill=NOTGIVEN, hoisted=None,
              sparse_rows: bool = False, **tensors) -> SeqLowering:
    """The CIN of ``program`` (text or an :class:`Assign`), its lattices and CFIR, recording a
    ``seq-derive`` step (each loop's Fig. 11 derivation), then ``lattice`` steps and ``cfir``.
    A tensor given as a :class:`ShapedFormat` has no entries (``data`` lacks it). The foralls run
    in ``loop_order`` (the output's mode order: columns first for a CSC output; default its modes').
    ``result_fill``: the output's fill (None: 0), default :func:`copy_fill`'s. ``hoisted``: the order of
    every loop (index names), a sum's among the output's, each term added into the output
    (:func:`~compiler.lattice.seqhoist.hoisted_body`); a sum under an operator into a workspace, which
    the statement's loops, in ``loop_order``, read after (:mod:`compiler.lattice.seqworkspace`; ``sparse_rows``:
    one over both indices of a sparse matrix output kept in sparse rows, :mod:`compiler.lattice.seqsumrows`)."""
    program = parse(program) if isinstance(program, str) else program
    if program.op is not None:
        raise StrategyError(f"{program}: the sequence lowering writes its output with = only")
    # (an access is read through the levels of its indices: two operators binding one name, as in
    # slice(A[j], j -> k, ..) + slice(A[j], j -> k, ..), must read A through two iterators)
    program = replace(program, rhs=distinct_bindings(program.rhs, {str(i) for i in program.lhs.indices}))
    tensors = {name: x if isinstance(x, ShapedFormat) else to_tensor(x, name) for name, x in tensors.items()}
    # (an entry read at constants only is located once before the loops, a 0-d stand-in read by each use; a
    # CSR matrix's column, A[i, 1], a 1-d one located at each i, so the loop at i walks no sequence for it)
    loop_indices = {str(i) for i in program.lhs.indices} | {str(i) for n in walk_notation(program.rhs)
                                                      if isinstance(n, Reduce) for i in n.indices}
    program, located = located_reads(program, tensors, rows=row_locatable(
        {n: t.format for n, t in tensors.items() if n != program.lhs.tensor}, loop_indices))
    row_located = {r.name: r for r in located if r.index is not None}
    for r in located:
        t = tensors[r.tensor]
        values.assume(r.name, stand_in_facts(r, t.format))
        fmt = stand_in_format(t.format, r)
        shape = () if r.index is None else (len(r.rows(t.shape[0])),)
        tensors[r.name] = ShapedFormat(fmt, shape) if isinstance(t, ShapedFormat) else \
            Tensor.from_numpy(np.asarray(located_value(r, t), dtype=fmt.dtype), fmt)
    info = infer_shapes(program, {n: t.shape for n, t in tensors.items() if n != program.lhs.tensor})
    # (and an access read twice, a[i] + a[i] * b[i], through two where an intersection moves its cursor)
    fills = input_fills(program, tensors)
    # (a product of wild factors walks their ∪, its other factors beside them, a dense one intersected: v's two reads
    # in (x + w * v) * v of a w holding NaN, one cursor, read v as absent where only x is)
    def beside(call) -> bool:
        wild = wild_product(call, fills, info.extents)
        return bool(wild) and any(not isinstance(a, Literal) and all(a is not w for w in wild) for a in call.args)
    program = replace(program, rhs=separate_reads(
        program.rhs, lambda call: call_kind(call, fills, info.extents) not in ("sum", "union") or beside(call),
        frozenset(row_located)))
    with_data = not any(isinstance(t, ShapedFormat) for t in tensors.values())
    fill = copy_fill(program, tensors, info.extents) if result_fill is NOTGIVEN else result_fill
    consumer, work = program, []
    if hoisted is not None and sums_under_operators(program):
        # (a sum under an operator, its loops around the output's: into a workspace the statement reads)
        consumer, work = split_sums(program, info.extents, {
            s: reduction_fill(s, fills, info.extents) for s in sums_under_operators(program)},
            rows=(tuple(range(len(program.lhs.indices))) if loop_order is None else tuple(loop_order))
            if sparse_rows else None)
        tensors = {**tensors, **{w.name: ShapedFormat(w.format(), w.shape) for w in work}}
    ws_reads = tuple(a for a in accesses_of(consumer.rhs) if a not in accesses_of(program.rhs))
    access_levels, data = _access_levels(program, tensors, with_data, ws_reads)
    # (each derivation step names its node of the expression tree: the tree's shape is the one the
    # parse step drew, distinct_bindings renaming indices only)
    deriver = Deriver(access_levels, info.extents,
                      input_fills(program, tensors).with_fills({w.name: w.fill for w in work}),
                      {id(e): n.ident for n, e in expression_nodes(program)})
    order = tuple(range(len(program.lhs.indices))) if loop_order is None else tuple(loop_order)
    # (the loops' nesting: the output's in its order, or a sum's among them where they run around it)
    deriver.located_rows = row_located
    deriver.row_walks = _row_walks(row_located, tensors, access_levels, data if with_data else None)
    deriver.depth = {str(program.lhs.indices[m]): d for d, m in enumerate(order)} if hoisted is None else \
        {str(x): d for d, x in enumerate(hoisted)}
    b = CinBuilder(deriver)
    lhs = program.lhs
    if any(isinstance(i, int) for i in lhs.indices) or len(set(lhs.indices)) != len(lhs.indices):
        raise StrategyError(f"{lhs}: the output needs distinct index variables")
    if work:
        body, nests = workspace_body(b, consumer, work, tuple(hoisted), order)
    elif hoisted is not None:
        body = hoisted_body(b, program, tuple(hoisted))
    else:
        body = b.nest(program, order)
    # the CFIR first: each derivation names the loops its sequence becomes (their lattices' points)
    built = cin.build_cfir(body, (), 0.0 if fill is None else fill)
    # (what it assumed each input holds, which the interpreter checks the entries it is given against)
    built = replace(built, assumed={acc.name: values.assumed(a.tensor) for a, acc in access_levels.items()
                                    if a.tensor in tensors})
    if work:
        # (each workspace's producer, then the consumer: loop nests apart, each checked alone)
        derivations = [dv.with_loops(built.lattices) for n in nests for dv in n.derivations]
        loops = [x for n in nests for x in n.loops]
        for n in nests:
            check_concordant(n.loops, {a: access_levels[a] for a in n.reads if a.tensor not in deriver.located_rows})
            check_split_nesting(n.loops)     # (each nest's loops in one another, a sum's among them)
    else:
        # the derivations in nesting order (outer loop first), as the trace shows them
        order = {str(i): k for k, (i, _) in enumerate(reversed(b.loops))}
        derivations = sorted((dv.with_loops(built.lattices) for dv in b.derivations), key=lambda dv: order[dv.index])
        loops = list(reversed(b.loops))
        # (a column located at each coordinate walks no level: seqlocated)
        check_concordant(loops, {a: al for a, al in access_levels.items() if a.tensor not in deriver.located_rows})
        # (the loops around each innermost one, a sum's among the output's: any may come between a
        # split's π0 and π1, and two sums side by side are two such chains)
        for path in nest_paths(body):
            check_split_nesting(path)
    t = trace if trace is not None else Trace()
    filled = [f"{x} has fill {f}, not the {r} of {n} (its first operand's): its part walks every "
              f"coordinate, writing {f} where {x} stores nothing"
              for n in walk_notation(program.rhs) if isinstance(n, Concat) for x, f, r in deriver.filled_parts(n)]
    t.record("seq-derive", before=program, after=body, note="; ".join(filled),
             artifacts=[Artifact.deferred("seq-derivation", f"Seq(..., {dv.index})", dv.artifact_parts)
                        for dv in derivations],
             rewrites=[r for dv in derivations for r in dv.rewrites()],
             data={**shape_data(program, info), "loops": [[str(i), str(s)] for i, s in loops]})
    cf, t = cin.sequence_trace(body, trace=t, fill=0.0 if fill is None else fill, built=built)
    return SeqLowering(program, body, derivations, cf, t, tuple(int(n) for n in info.output), data, fill,
                       "" if hoisted is None or not lhs.indices or work else "accumulate", tuple(work),
                       located=tuple((r, tensors[r.tensor].format) for r in located),
                       row_walks=tuple(deriver.row_walks.values()))


def seq_evaluate(program, trace: Trace | None = None, loop_order=None, hoisted=None, sparse_rows: bool = False,
                 **tensors) -> np.ndarray:
    """The result of ``program`` computed by the sequence CFIR's interpreter over the stored
    entries of ``tensors`` (Tensors, numpy arrays or scipy.sparse matrices), its loops in
    ``loop_order`` or ``hoisted``, its workspaces' rows sparse or not (as :func:`seq_lower`): a dense array. It
    assumes what the tensors hold (NaN, inf: :attr:`~compiler.tensor.Tensor.value_facts`), as a kernel lowered for
    them does."""
    tensors = {name: to_tensor(x, name) for name, x in tensors.items()}

    def lowered(tensors):
        # (assuming what these tensors hold: a part read densely holds its fill too, which the lowering knows)
        with values.assuming({name: t.value_facts for name, t in tensors.items()},
                             values.limit_of(t.dtype for t in tensors.values())):
            return seq_lower(program, trace=trace, loop_order=loop_order, hoisted=hoisted, sparse_rows=sparse_rows,
                             **tensors)

    try:
        low = lowered(tensors)
    except (StrategyError, SequenceError):
        # (a concatenation's part of another fill under a collapse, read densely, as the kernel reads it)
        program = parse(program) if isinstance(program, str) else program
        extents = infer_shapes(program, {n: t.shape for n, t in tensors.items()}).extents
        whole = walked_whole(program, input_fills(program, tensors), extents)
        if not whole:
            raise
        low = lowered({n: t.asformat(dense(t.ndim, fill=t.fill, dtype=t.dtype)) if n in whole else t
                       for n, t in tensors.items()})
    run = interpret(low.cfir, low.data)
    complexes = any(np.dtype(t.dtype).kind == "c" for t in tensors.values())
    out = np.full(low.shape, 0.0 if low.fill is None else low.fill, dtype=complex if complexes else float)
    for key, val in run.outputs.get(low.program.lhs.tensor, {}).items():
        out[key] = val
    return out


def derive_seq(expr, i, **tensors) -> tuple[Seq | None, Derivation]:
    """``Seq(expr, i)`` (Fig. 11) of an expression (text or a node) over ``tensors``, with its
    derivation; ``expr``'s shapes come from the tensors.

    >>> import numpy as np
    >>> from compiler.tensor import Tensor
    >>> s, dv = derive_seq("split(a[k], k -> (i, j:3)) * B[i, j]", "j",
    ...                    a=Tensor.from_numpy(np.zeros(12), "sparse"), B=np.zeros((4, 3)))
    >>> print(s)
    π1(k_a, 3) ∩ j_B
    """
    e = parse_expr(expr) if isinstance(expr, str) else expr
    tensors = {name: to_tensor(x, name) for name, x in tensors.items()}
    out = Access("_out", tuple(free_indices(e)))
    program = Assign(out, None, e)
    info = infer_shapes(program, {n: t.shape for n, t in tensors.items()})
    copy_fill(program, tensors, info.extents)
    access_levels, _ = _access_levels(program, tensors)
    log = Derivation(str(i))
    return Deriver(access_levels, info.extents, input_fills(program, tensors)).seq(e, Index(str(i)), log), log


__all__ = ["ShapedFormat", "derive_seq", "Derivation", "Deriver", "CinBuilder", "SeqLowering", "seq_lower", "seq_evaluate",
           "level_kinds", "check_concordant", "LoopOrder", "DiscordantWalk", "check_split_nesting", "copy_fill", "input_fills"]
