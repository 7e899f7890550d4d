"""Recursive lowering of loop programs to the imperative IR, one loop at a time.

:class:`Lowerer` lowers a normalized loop program's statements: assignments, sieves, lets and
the life cycle (declare, freeze: :mod:`.lifecycle_lowering`). At each loop ``for i = ext`` it
unfurls every access whose first (storage-order) index is ``i`` to a looplet nest, then lowers
the looplets found there by their styles (:mod:`.looplet_rules`, which also gives the priority
order); the expressions left at the leaves become IR expressions (:mod:`.expression_lowering`).
An access whose next index is already bound (an expression, not a loop index) is read through a
loop of length one (concordization), located by its level's ``follow`` protocol where it has one of
its own (a search, not a walk), every read of the same fiber at that coordinate through the same
one; statements writing one entry of an output level appended in order (a row of a DCSR written
by two loops, an hstack row by row) share its looplet nest and go through one such loop together,
so the entry is appended once. Every unfurl, looplet lowering
and simplification is a step of the trace (:mod:`.looplet_provenance`).

>>> Lowerer.lower_lookup.__module__, Lowerer.expr.__module__
('compiler.looplets.looplet_rules', 'compiler.looplets.expression_lowering')
"""

from __future__ import annotations

from dataclasses import replace

from ..algebra import Operator
from ..imperative import cints, ir
from ..imperative.ir import Assign as IAssign, CompoundAssign, Const, Declare, If, Load, Origin, Store, Tagged, Var
from ..levels import Pattern
from ..notation.node_provenance import computing
from ..trace import Artifact
from . import extents as X
from .carried import carry_cursors
from .coordinates import Computed, coordinate_checks
from .counted_gaps import LoopHome
from .expression_lowering import ExpressionLowering, compound_symbol
from .errors import ProgramError
from .facts import OperandFacts
from .fibers import SubFiber, fill_value
from .fill_write import FILL_WRITE
from .level_writers import appends_in_order, enters_entries
from .levels import locates, unfurl
from .lifecycle_lowering import LifecycleLowering
from .looplet_access import read_key
from .looplet_provenance import MAX_LOOPLETS, printed_step, step_text
from .looplet_rules import LoopletRules
from .looplets import Fill, Looplet, Run, nest_dot, nest_text
from .modifiers import Offset, Permit, Protocol, Window
from .program import (MISSING, Access, Assign, Block, Declare as PDeclare, Define, Extent, Freeze, Index,
                      IndexModifier, Literal, Loop, Sieve, Thaw, Value, is_pass, postmap, substitute, walk)
from .scalars import ScalarLowering
from .scatter import lower_scattered, scatter_unfurl, scattered_block
from .simplify import simplify
from .wrappers import FillFiber, apply_modifiers, base_index, modifier_chain, protocol_of, read_below


def _bound_coordinate(x) -> bool:
    """Whether ``x`` is a bound value read permissively, at an offset or in a window, not a loop's index:
    ``~v`` (a let-bound quotient of a gather that may fall outside the tensor), ``v + d`` with ``v`` and
    ``d`` lowered (a split ``A[k + i * 2, j]`` of a CSC's row index, read under the loop over ``j``
    after the loops over ``i`` and ``k``), or ``window(v, lo, hi)`` (a row's window read at a bound ``v``:
    ``A[2, 2:5][i]`` under the loop over ``i``, its constant row located first)."""
    mods, base = modifier_chain(x)
    return bool(mods) and all(isinstance(m, (Permit, Window)) or isinstance(m, Offset) and
                              not any(isinstance(n, Index) for n in walk(m.delta)) for m in mods) \
        and not isinstance(base, Index)


def _shared_entry(stmts):
    """``(a, b, access)``: the first output entry, bound by an outer loop, that statements ``a`` to ``b``
    (``a < b``) of a block all write (a looplet their accesses share), or None."""
    users: dict = {}
    for k, t in enumerate(stmts):
        for n in walk(t):
            if isinstance(n, Access) and n.mode == "update" and n.idxs and isinstance(n.tns, Looplet) \
                    and not isinstance(n.idxs[0], (Index, IndexModifier)):
                users.setdefault((id(n.tns), repr(n.idxs[0])), []).append((k, n))
    for uses in users.values():
        if uses[-1][0] > uses[0][0]:
            return uses[0][0], uses[-1][0], uses[0][1]
    return None


class Lowerer(LoopletRules, ExpressionLowering, LifecycleLowering):
    """Lowers a normalized loop program; see the module docstring.

    ``tensors`` maps names to :class:`~compiler.looplets.levels.TensorInfo`;
    ``trace`` (optional) receives a step per unfurl, looplet lowering and
    simplification.
    """

    def __init__(self, tensors: dict, ctx, trace=None, max_trace_steps: int = 400,
                 max_looplets: int = MAX_LOOPLETS):
        self.tensors = tensors
        # what each operand may be, from the tensors it reads, stored (as the lowering assumes)
        # or fill: x * 0 is not 0 where x may be NaN or infinite (see simplify.annihilator)
        self.facts = OperandFacts(tensors)
        #: the terms the simplifier left as they were, with these facts and rules (by identity):
        #: a loop body's unchanged subtrees are not simplified again at each looplet lowering
        self.simplified: dict = {}
        self.ctx = ctx
        self.fresh = ctx.fresh
        self.trace = trace
        self.helpers: dict[str, ir.Helper] = {}
        #: each helper's operator, whose Python implementation the interpreter runs
        self.helper_ops: dict[str, Operator] = {}
        self.scalar_locals: dict[str, Var] = {}
        #: 0-D tensors: declarations, SparseScalar reads, ShortCircuitScalar loop splits
        self.scalars = ScalarLowering(self)
        self._budget = max_trace_steps
        self.max_looplets = max_looplets
        self._tags = 0
        self._pending_tag = None
        #: the ends (``qA_end``) of walks over a fiber's entries left after a merge with another
        #: fiber, which the block copy leaves alone (see ``lower_positions``)
        self.merged_walks: set[str] = set()
        #: ``id(while loop) -> (the loop, its steppers, its stop)``: a loop walking each of the
        #: steppers (with positions) to the first child past its stop, as a Sequence's later
        #: phase may know (see ``lower_sequence``)
        self.walks: dict = {}
        #: the loops being lowered, innermost last (:class:`~compiler.looplets.counted_gaps.LoopHome`)
        self.loop_homes: list = []
        #: ``(tag, origin)`` of the looplet being lowered (None outside any)
        self.looplet_tag = None

    # ------------------------------------------------------------------ trace

    def record(self, stage, before=None, after=None, **kw):
        if stage.startswith("lower:") and self._pending_tag is not None and "note" in kw:
            # the step lowering a tagged looplet names its tag as data (the explorer links them)
            kw["note"] = f"{kw['note']} [{self._pending_tag}]"
            kw["data"] = {"tag": self._pending_tag}
            self._pending_tag = None
        if self.trace is not None and self._budget > 0:
            self._budget -= 1
            # (the texts with where their loops, accesses and looplets are: the explorer marks them)
            self.trace.record(stage, **printed_step(before, after, kw.pop("data", None)), **kw)

    def simplify(self, node):
        log = [] if self.trace is not None else None
        out = simplify(node, log, (FILL_WRITE,), self.facts, self.simplified)
        if log:
            self.record("simplify", node, out, rewrites=log, note=f"{len(log)} rewrite(s)")
        return out

    # ------------------------------------------------------------------ statements

    def lower(self, s) -> list:
        """Imperative statements for program statement ``s``."""
        if isinstance(s, Block):
            found = scattered_block(s.stmts, self.ctx.scattered) if self.ctx.scattered else None
            if found is not None:   # (an output assembled by a scatter: its loops lowered twice)
                a, b = found
                return [x for t in s.stmts[:a] for x in self.lower(t)] + lower_scattered(self, s.stmts, a, b) \
                    + [x for t in s.stmts[b + 1:] for x in self.lower(t)]
            shared = _shared_entry(s.stmts)
            if shared is not None:   # (statements appending one entry: entered once around them all)
                a, b, acc = shared
                return [x for t in s.stmts[:a] for x in self.lower(t)] + \
                    self._lower_concordized(Block(s.stmts[a:b + 1]), acc) + self.lower(Block(s.stmts[b + 1:]))
            return [x for t in s.stmts for x in self.lower(t)]
        if isinstance(s, (Loop, Assign, Sieve, Define)):
            split = self.scalars.split_reads(s)  # a SparseScalar read: Switch on its dirty bit
            if split is not None:
                return split
        if isinstance(s, Loop):
            # an output fiber located by an outer index (a Lookup's child) must be entered once
            # around the whole loop nest that reduces into it, not once per inner iteration
            acc = self._bound_update_access(s)
            if acc is not None:
                return self._lower_concordized(s, acc)
            return self.lower_loop(s)
        if isinstance(s, (Assign, Sieve, Define)):
            bound = self._first_bound_access(s)
            if bound is not None:
                return self._lower_concordized(s, bound)
        if isinstance(s, Assign):
            return self.lower_assign(s)
        if isinstance(s, Sieve):
            cond = self.simplify(s.cond)
            if isinstance(cond, Literal):
                return self.lower(s.body) if cond.value else []
            c, _ = self.expr(cond, s.line)
            body = self.lower(s.body)
            return [If(c, body)] if body else []
        if isinstance(s, Define):
            val = self.simplify(s.val)
            if isinstance(val, (Literal, Value)) and (isinstance(val, Literal) or isinstance(val.expr, (Var, Const))):
                return self.lower(substitute(s.body, {s.var: val}))
            e, dt = self.expr(val, s.line)
            v = Var(self.fresh(s.var.name))
            # (tagged with what it reads, as an assignment's line: a shared subexpression computed
            # once keeps the expression tree's tags of the nodes it computes)
            fills = {n for a in walk(val) if isinstance(a, Literal) for n in a.fills}
            local = computing([Declare(v, dt, e)], {a.source for a in walk(val) if isinstance(a, (Access, Value))
                                                    and a.source}, None, s.line, fills=fills)
            return local + self.lower(substitute(s.body, {s.var: Value(v, dt)}))
        if isinstance(s, PDeclare):
            return self.lower_declare(s)
        if isinstance(s, Freeze):
            return self.lower_freeze(s)
        if isinstance(s, Thaw):
            self.ctx.listed.discard(s.tns.name)   # (its given entries are marked, not listed)
            return []
        raise ProgramError(f"cannot lower {type(s).__name__}: {s}", getattr(s, "line", 0))

    # concordization: an access whose next index is already bound (an expression) is
    # read through a loop of length one over [v, v + 1) (Finch: `for s = v:v`); its wrappers
    # stay around the loop's index (a permissive ~v is missing outside the tensor)
    def _first_bound_access(self, s):
        own = [s.lhs, s.rhs] if isinstance(s, Assign) else [s.cond] if isinstance(s, Sieve) else [s.val]
        for part in own:
            for n in walk(part):
                if isinstance(n, Access) and n.idxs and isinstance(n.tns, (SubFiber, Looplet, FillFiber)) \
                        and (not isinstance(n.idxs[0], (Index, IndexModifier)) or _bound_coordinate(n.idxs[0])):
                    if isinstance(n.tns, SubFiber) and n.tns.is_leaf:
                        continue
                    return n
        return None

    def _bound_update_access(self, loop):
        for n in walk(loop.body):
            if isinstance(n, Access) and n.mode == "update" and n.idxs and isinstance(n.tns, Looplet) \
                    and not isinstance(n.idxs[0], (Index, IndexModifier)):
                return n
        return None

    def _entry_key(self, n):
        """What makes two writes enter the same entry of an output level appended in order or keyed in a
        table, one mode per entry (the fiber and the coordinate), or None."""
        t = n.tns
        if n.mode != "update" or not isinstance(t, SubFiber) or t.tensor.name in self.ctx.scattered or \
                not enters_entries(t.lvl) or t.lvl.nmodes != 1:
            return None
        return ("update", id(t.tensor), t.level, repr(t.pos), repr(t.seg), repr(n.idxs[0]))

    def _concordize(self, s, acc):
        if acc.mode == "update" and isinstance(acc.tns, SubFiber) and appends_in_order(acc.tns.lvl) \
                and acc.tns.tensor.name not in self.ctx.scattered:
            raise ProgramError(
                f"output {acc.tns.tensor.name} is written out of order: its {acc.tns.lvl.name} level "
                f"(storage level {acc.tns.level}) is indexed by {step_text(acc.idxs[0])}, which is not the loop "
                f"being lowered; a SparseList can only be appended in index order. Reorder the loops, or "
                f"store {acc.tns.tensor.name} in SparseHash or SparseByteMap, which accept random writes",
                getattr(s, "line", 0))
        line = getattr(s, "line", 0)
        idx, checks = base_index(acc.idxs[0]), []
        if isinstance(idx, Computed):
            v, dt = self.expr(idx.expr, line)
            checks = coordinate_checks(idx, v, dt, self.fresh, line, self.ctx.in_range)
            v = checks[0].var if checks and isinstance(checks[0], Declare) else v
        else:
            v, _ = self.expr(idx, line)
        name = Index(self.fresh("s"))
        key = read_key(acc)
        # (a read of a level that locates a coordinate follows it: one search or probe, its entry or the
        # fill, where a walk over the window of length one lowered a stepper's cases; its entry found or
        # the fill is one value where the statement does something either way, else its cases skip one)
        inner = Protocol(name, "follow" if self.absent_does_nothing(s, acc, key) else "locate") \
            if acc.mode == "read" and isinstance(acc.tns, SubFiber) and protocol_of(acc.idxs[0]) is None \
            and locates(acc.tns) else name

        def around(x):   # (the index's wrappers, now around the loop's)
            return replace(x, index=around(x.index)) if isinstance(x, IndexModifier) else inner
        # (and every access of the same looplet at the same coordinate: statements appending one entry
        # of an output, each writing its own part of the entry's fiber, all go through the one loop)
        # (and every read of the same fiber at the same coordinate: `sign(w[1])` reads `w[1]` three times,
        # one search, where a loop each nested the others' in every case of theirs)
        body = postmap(s, lambda n: replace(n, idxs=(around(n.idxs[0]),) + n.idxs[1:])
                       if isinstance(n, Access) and (n == acc or n.tns is acc.tns and n.idxs[:1] == acc.idxs[:1]
                                                     or key is not None and read_key(n) == key)
                       else None)
        return checks, Loop(name, Extent(v, X.add(v, 1)), body, line=line)

    def absent_does_nothing(self, s, acc, key) -> bool:
        """Whether statement ``s`` does nothing where the read ``acc`` (and every read of ``key``, the same
        fiber at the same coordinate) finds no entry, all its fill: ``C[i, j] += A[i, k] * B[k, j]`` where
        ``B[k, j]`` is 0 and ``A`` finite (the simplifier's verdict, with what the operands may hold)."""
        if acc.mode != "read" or not isinstance(acc.tns, SubFiber):
            return False
        fill = fill_value(acc.tns.tensor)
        absent = postmap(s, lambda n: fill if isinstance(n, Access) and (n is acc or key is not None and
                                                                        read_key(n) == key) else None)
        return is_pass(simplify(absent, None, (FILL_WRITE,), self.facts, self.simplified))

    def _lower_concordized(self, s, acc) -> list:
        checks, loop = self._concordize(s, acc)
        return checks + self.lower(loop)

    def lower_assign(self, s: Assign) -> list:
        lhs = s.lhs
        if isinstance(lhs, Literal):
            return []  # a write into a fill the output ignores (a scatter's count: compiler.looplets.scatter)
        tns = lhs.tns
        if isinstance(tns, (Fill, Run)) and not lhs.idxs:
            tns = tns.value if isinstance(tns, Fill) else tns.body
        if isinstance(tns, Literal):
            return []  # writing into a fill region of an output that ignores it
        if not (isinstance(tns, SubFiber) and tns.is_leaf and not lhs.idxs):
            raise ProgramError(f"cannot assign to {lhs}: it is not a scalar after lowering its loops "
                               f"(is an index of the left side unbound?)", s.line)
        rhs = self.simplify(s.rhs)
        if isinstance(rhs, Literal) and rhs.value is MISSING:
            return []
        val, vdt = self.expr(rhs, s.line)
        info = tns.tensor
        if isinstance(tns.lvl, Pattern):
            return self._write_pattern(s, tns, val)
        dt = info.dtype
        out = []
        local = (self.scalar_locals.get(info.name) or self.ctx.entry_locals.get(info.name)) if not info.levels else None
        if local is not None:
            cur = local
        else:
            buf = info.array(None, "vals")
            cur = Load(buf, tns.pos)
        if s.op is None:
            new = val
        else:
            (cur, dt), (val, vdt) = cints.weak_constants([(cur, dt), (val, vdt)])
            new = self.apply(s.op, [cur, val], [dt, vdt], s.line)
        sym = compound_symbol(s.op, dt, vdt)
        if local is not None:
            out.append(CompoundAssign(sym, local, val) if sym else IAssign(local, new))
        else:
            out.append(Store(buf, tns.pos, val, sym) if sym else Store(buf, tns.pos, new))
        if tns.dirty is not None:
            out.append(IAssign(tns.dirty, Const(True, "bool")))
        if local is not None:
            out += self.scalars.after_write(info)
        # (tagged with what it reads, the fills its constants were folded from, and what it writes:
        # the explorer links the expression tree's nodes to it; a constant written is made of every
        # operand's fill, or an annihilator, whichever identities dropped on the way)
        fills = set(self.tensors) if isinstance(rhs, Literal) else \
            {n for a in walk(rhs) if isinstance(a, Literal) for n in a.fills}
        return computing(out, {a.source for a in walk(rhs) if isinstance(a, (Access, Value)) and a.source}, info.name,
                         s.line, column=s.column, fills=fills)

    def _write_pattern(self, s: Assign, tns, val) -> list:
        """A Pattern leaf stores no values: writing ``true`` keeps the position (sets the dirty
        flag its level's append tests), writing ``false`` (the fill) keeps nothing, and over an
        earlier write (``Assign.overwrites``) drops what it kept."""
        if s.op is not None and s.op.name not in ("or", "overwrite"):
            raise ProgramError(f"{s.lhs} is a Pattern (true where stored): it can be assigned or or-ed into, "
                               f"not reduced with {s.op.name}", s.line)
        if tns.dirty is None:
            raise ProgramError(f"{s.lhs} is a Pattern leaf under a level that cannot drop a position; "
                               f"store it under SparseList or SparseBlockList", s.line)
        if s.op is None and s.overwrites:
            # (an earlier write may have kept the position: a false written after it drops it again)
            return [IAssign(tns.dirty, val)]
        mark = [IAssign(tns.dirty, Const(True, "bool"))]
        if isinstance(val, Const):
            return mark if val.value else []
        return [If(val, mark)]

    # ------------------------------------------------------------------ loops

    def lower_loop(self, loop: Loop) -> list:
        # (the counts its walks' gaps keep, declared around it and folded in after it: .counted_gaps)
        home = LoopHome(loop.idx, {})
        self.loop_homes.append(home)
        try:
            out = self._lower_loop(loop)
        finally:
            self.loop_homes.pop()
        for fold in home.folds.values():
            out = fold.around(out)
        for fold in home.allocations.values():
            out = fold.allocated(out)
        return out

    def _lower_loop(self, loop: Loop) -> list:
        i = loop.idx
        if loop.ext is None:
            raise ProgramError(f"the extent of loop index {i.name} is unknown", loop.line)
        # reads whose windows ascend with i walk their fibers once: cursors declared before the loop
        pre, epi, body, carried = carry_cursors(i, loop.body, self.ctx)
        if not carried:
            return self.lower_looplets(i, loop.ext, self.unfurl_accesses(i, body, loop.line), loop.line)
        self._tags += 1
        tag = f"looplet:Thunk:{self._tags}"
        reads = ", ".join(f"{t} on {j}" for t, j in carried)
        self.record("carry", Loop(i, None, loop.body), Loop(i, None, body),
                    note=f"cursors carried across {i.name} (each walk starts where the last stopped): {reads}",
                    data={"index": i.name, "tag": tag})
        out = pre + self.lower_looplets(i, loop.ext, self.unfurl_accesses(i, body, loop.line), loop.line) + epi
        # (one tag around the cursors' declarations and the loop that reads them: as a Thunk's
        # lowering, a tag's declarations are read inside it)
        origin = Origin("looplet", carried[0][1], tuple(dict.fromkeys(t for t, _ in carried)), "Thunk")
        return [Tagged(tag, out, f"Thunk carried across {i.name}: the cursors of {reads}", origin)]

    def unfurl_accesses(self, i, body, line):
        arts = []
        # identical reads share one looplet nest: `A[i, j] * A[i, j]` walks A's fiber once; so do the
        # writes of one entry of an output level appended in order (`D[i, j]` then `D[i, k + n]`, an
        # hstack into a DCSR): the entry is appended once, its fiber written by each statement in turn;
        # and of one key of a hash, which each write would otherwise insert (both probes before either insert)
        shared = {}

        def visit(n):
            if isinstance(n, Access) and n.idxs and base_index(n.idxs[0]) == i and (
                    (isinstance(n.tns, SubFiber) and not n.tns.is_leaf) or hasattr(n.tns, "unfurl")):
                key = read_key(n) or self._entry_key(n)
                if key is not None and key in shared:
                    return replace(n, tns=shared[key], idxs=(i,) + n.idxs[1:])
                if isinstance(n.tns, SubFiber) and n.mode == "update" and n.tns.tensor.name in self.ctx.scattered \
                        and n.tns.lvl.scatters:
                    l = scatter_unfurl(n.tns, self.ctx)
                elif isinstance(n.tns, SubFiber):
                    l = unfurl(n.tns, self.ctx, n.mode, protocol_of(n.idxs[0]))
                else:
                    l = n.tns.unfurl(self.ctx, n.mode)
                if n.mode == "read":   # (a permit on a later index reaches this level's fill regions)
                    l = read_below(l, n.tns, n.idxs[1:])
                l = apply_modifiers(n.idxs[0], l, n.tns, lambda e: self.expr(self.simplify(e), line)[0])
                arts.append(Artifact("looplet-nest", f"{n.tns.label()}[{i.name}]", nest_text(l),
                                     nest_dot(l, n.tns.label()),
                                     data={"tensor": n.source, "index": i.name, "mode": n.mode}))
                if key is not None:
                    shared[key] = l
                return replace(n, tns=l, idxs=(i,) + n.idxs[1:])
            return None
        new = postmap(body, visit)
        if arts:
            self.record("unfurl", Loop(i, None, body), Loop(i, None, new), artifacts=arts,
                        note=f"unfurl {len(arts)} access(es) on {i.name}", data={"index": i.name})
        return new
