"""Recursive lowering of loop programs to the imperative IR, one loop at a time.

At each loop ``for i = ext`` the lowerer unfurls every access whose first
(storage-order) index is ``i``, then lowers the looplets found there by style.
Each style is one focused function (``lower_<style>``), chosen by the ONE priority
order :data:`~compiler.looplets.looplets.PRIORITY`:

    Thunk > Switch > Run > Sequence > Spike > Jumper > Stepper > AcceptRun > Lookup

Why this order. The Looplets paper lists Switch > Run > Spike > Pipeline > Jumper >
Stepper > Lookup (simplify early, then hoist control flow); Finch.jl v0.2.0 lowers
Pipeline before Run and Spike (its pairwise rules are not even transitive among
Simplify/Switch/Phase). Both are correct once every looplet truncates. We take:

* Thunk first: preambles only hoist host code, and later rules need their state;
* Switch next, to lift run-time conditions as high as possible (paper and Finch.jl);
* Run (and Fill) before anything that splits the extent: a run is a pure
  substitution, so unwrapping it early gives the paper's early simplification
  (``x * 0 -> 0`` removes whole regions) without ever forcing a truncation;
* Sequence before Spike, as Finch.jl: lowering a spike first would cut every
  pipeline beside it into a body range and a one-element tail (duplicated
  pipeline code); lowering the sequence first only turns the spike, in the last
  phase, into a run-time Switch (pitfall 12);
* Jumper before Stepper (leaders lead);
* AcceptRun (a run-length output taking a whole region as one run) after every
  read-side rule, so the reads have already cut the loop into regions where they
  are constant (Finch: Stepper > AcceptRun > Lookup); Lookup last (a plain for loop).

The order is total, so resolving the styles of a loop's looplets is a maximum:
associative and commutative, independent of the operand order.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from ..algebra import Operator
from ..imperative import ir
from ..imperative.ir import (Assign as IAssign, BinOp, CompoundAssign, Const, Declare, If, Load, Select,
                             Store, UnOp, Var, While)
from ..trace import Artifact
from .coordinates import Computed, coordinate_checks
from . import extents as X
from .errors import ProgramError
from .facts import OperandFacts
from ..opimpls import ROUNDING, UNARY_MATH
from ..imperative import cints
from ..levels import Pattern, SparseList
from .fibers import SubFiber, leaf_value
from .levels import unfurl
from .looplets import (AcceptRun, Case, Fill, Jumper, Looplet, Lookup, Run, Sequence,
                       Spike, Stepper, Switch, Thunk, nest_dot, nest_text, resolve, truncate, unshift)
from .program import (MISSING, Access, Assign, Block, Call, Declare as PDeclare, Define, Extent, Freeze,
                      Index, Literal, Loop, Sieve, Thaw, Value, Variable, is_pass,
                      postmap, substitute, uses, walk)
from .lifecycle_lowering import LifecycleLowering
from .scalars import ScalarLowering
from .simplify import same_value, simplify

from ..imperative.ir import Origin as ir_Origin
from ..imperative.ir import Tagged as ir_Tagged


#: how many looplet lowerings one program may take (each ~0.1 to 0.2 KB of C: the limit stops at a
#: few MB, which GCC takes minutes over, instead of running on)
MAX_LOOPLETS = 20_000


def _too_many_looplets(limit: int, i) -> str:
    """Why a program was stopped at ``limit`` looplet lowerings, the last of them over ``i``.

    >>> print(_too_many_looplets(100, Index("j")))  # doctest: +NORMALIZE_WHITESPACE
    the looplets strategy stopped after 100 looplet lowerings (the last over j): each loop lowers
    every case of its sparse operands' regions (present here, absent there) separately, and the
    cases multiply with each operand a loop coiterates. Lower index notation with
    strategy='lattice' (its lattices merge them), compute the expression in steps, or give
    options={'max_looplets': N} for more
    """
    return (f"the looplets strategy stopped after {limit} looplet lowerings (the last over {i.name}): each loop "
            f"lowers every case of its sparse operands' regions (present here, absent there) separately, and the "
            f"cases multiply with each operand a loop coiterates. Lower index notation with strategy='lattice' "
            f"(its lattices merge them), compute the expression in steps, or give options={{'max_looplets': N}} "
            f"for more")


class Lowerer(LifecycleLowering):
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

    # ------------------------------------------------------------------ trace

    def record(self, stage, before=None, after=None, **kw):
        if stage.startswith("lower:") and self._pending_tag is not None and "note" in kw:
            # the step lowering a tagged looplet names its tag as data (the explorer links them)
            kw["note"] = f"{kw['note']} [{self._pending_tag}]"
            kw["data"] = {"tag": self._pending_tag}
            self._pending_tag = None
        if self.trace is not None and self._budget > 0:
            self._budget -= 1
            self.trace.record(stage, before=_text(before), after=_text(after), **kw)

    def simplify(self, node):
        log = [] if self.trace is not None else None
        out = simplify(node, log, (FILL_WRITE,), self.facts)
        if log:
            self.record("simplify", node, out, rewrites=log, note=f"{len(log)} rewrite(s)")
        return out

    # ------------------------------------------------------------------ statements

    def lower(self, s) -> list:
        """Imperative statements for program statement ``s``."""
        if isinstance(s, Block):
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
            return [Declare(v, dt, e)] + self.lower(substitute(s.body, {s.var: Value(v, dt)}))
        if isinstance(s, PDeclare):
            return self.lower_declare(s)
        if isinstance(s, Freeze):
            return self.lower_freeze(s)
        if isinstance(s, Thaw):
            return []
        raise ProgramError(f"cannot lower {type(s).__name__}: {s}", getattr(s, "line", 0))

    # concordization: an access whose next index is already bound (an expression) is
    # read through a loop of length one over [v, v + 1) (Finch: `for s = v:v`).
    def _first_bound_access(self, s):
        own = [s.lhs, s.rhs] if isinstance(s, Assign) else [s.cond] if isinstance(s, Sieve) else [s.val]
        for part in own:
            for n in walk(part):
                if isinstance(n, Access) and n.idxs and isinstance(n.tns, (SubFiber, Looplet)) \
                        and not isinstance(n.idxs[0], Index) and not _is_modifier(n.idxs[0]):
                    if isinstance(n.tns, SubFiber) and n.tns.is_leaf:
                        continue
                    return n
        return None

    def _bound_update_access(self, loop):
        for n in walk(loop.body):
            if isinstance(n, Access) and n.mode == "update" and n.idxs and isinstance(n.tns, Looplet) \
                    and not isinstance(n.idxs[0], Index) and not _is_modifier(n.idxs[0]):
                return n
        return None

    def _concordize(self, s, acc):
        if acc.mode == "update" and isinstance(acc.tns, SubFiber) and isinstance(acc.tns.lvl, SparseList):
            raise ProgramError(
                f"output {acc.tns.tensor.name} is written out of order: its {acc.tns.lvl.name} level "
                f"(storage level {acc.tns.level}) is indexed by {_text(acc.idxs[0])}, which is not the loop "
                f"being lowered; a SparseList can only be appended in index order. Reorder the loops, or "
                f"store {acc.tns.tensor.name} in SparseHash or SparseByteMap, which accept random writes",
                getattr(s, "line", 0))
        line = getattr(s, "line", 0)
        idx, checks = acc.idxs[0], []
        if isinstance(idx, Computed):
            v, dt = self.expr(idx.expr, line)
            checks = coordinate_checks(idx, v, dt, self.fresh, line)
            v = checks[0].var if isinstance(checks[0], Declare) else v
        else:
            v, _ = self.expr(idx, line)
        name = Index(self.fresh("s"))
        new_acc = replace(acc, idxs=(name,) + acc.idxs[1:])
        body = postmap(s, lambda n: new_acc if n is acc or (isinstance(n, Access) and n == acc) else None)
        return checks, Loop(name, Extent(v, X.add(v, 1)), body, line=line)

    def _lower_concordized(self, s, acc) -> list:
        checks, loop = self._concordize(s, acc)
        return checks + self.lower(loop)

    def lower_assign(self, s: Assign) -> list:
        lhs = s.lhs
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
        local = self.scalar_locals.get(info.name) if not info.levels else None
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
        sym = _compound(s.op, dt, vdt)
        if local is not None:
            out.append(CompoundAssign(sym, local, val) if sym else IAssign(local, new))
        else:
            out.append(Store(buf, tns.pos, val, sym) if sym else Store(buf, tns.pos, new))
        if tns.dirty is not None:
            out.append(IAssign(tns.dirty, Const(True, "bool")))
        if local is not None:
            out += self.scalars.after_write(info)
        return out

    def _write_pattern(self, s: Assign, tns, val) -> list:
        """A Pattern leaf stores no values: writing ``true`` keeps the position (sets the dirty
        flag its level's append tests), writing ``false`` (the fill) keeps nothing."""
        if s.op is not None and s.op.name not in ("or", "overwrite"):
            raise ProgramError(f"{s.lhs} is a Pattern (true where stored): it can be assigned or or-ed into, "
                               f"not reduced with {s.op.name}", s.line)
        if tns.dirty is None:
            raise ProgramError(f"{s.lhs} is a Pattern leaf under a level that cannot drop a position; "
                               f"store it under SparseList or SparseBlockList", s.line)
        mark = [IAssign(tns.dirty, Const(True, "bool"))]
        if isinstance(val, Const):
            return mark if val.value else []
        return [If(val, mark)]

    # ------------------------------------------------------------------ loops

    def lower_loop(self, loop: Loop) -> list:
        i = loop.idx
        if loop.ext is None:
            raise ProgramError(f"the extent of loop index {i.name} is unknown", loop.line)
        body = self.unfurl_accesses(i, loop.body, loop.line)
        return self.lower_looplets(i, loop.ext, body, loop.line)

    def unfurl_accesses(self, i, body, line):
        arts = []
        # identical reads share one looplet nest: `A[i, j] * A[i, j]` walks A's fiber once
        shared = {}

        def visit(n):
            if isinstance(n, Access) and n.idxs and _base_index(n.idxs[0]) == i and (
                    (isinstance(n.tns, SubFiber) and not n.tns.is_leaf) or hasattr(n.tns, "unfurl")):
                key = _read_key(n)
                if key is not None and key in shared:
                    return replace(n, tns=shared[key], idxs=(i,) + n.idxs[1:])
                if isinstance(n.tns, SubFiber):
                    l = unfurl(n.tns, self.ctx, n.mode, _protocol(n.idxs[0]))
                else:
                    l = n.tns.unfurl(self.ctx, n.mode)
                l = _apply_modifiers(n.idxs[0], l, n.tns, lambda e: self.expr(self.simplify(e), line)[0])
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

    def lower_looplets(self, i, ext, body, line=0) -> list:
        body = self.simplify(body)
        if is_pass(body):
            return []
        # push shifts down once, so every rule below sees the same looplet objects
        body = _replace_looplets(body, i, lambda l: l)
        found = _looplets_of(body, i)
        if not found:
            return self.lower_plain_loop(i, ext, body, line)
        style = "Lookup"
        for l in found:
            style = resolve(style, _style(l))
        fn = getattr(self, f"lower_{style.lower()}")
        # provenance: the code of each looplet lowering is tagged, so C lines map back to it
        self._tags += 1
        if self._tags > self.max_looplets:
            raise ProgramError(_too_many_looplets(self.max_looplets, i), line)
        tag = f"looplet:{style}:{self._tags}"
        self._pending_tag = tag
        origin = _looplet_origin(style, i, body)
        out = fn(i, ext, body, found, line)
        if not out:
            return out
        return [ir_Tagged(tag, out, _looplet_what(style, i, body), origin)]

    def _note(self, rule, i, ext, sub=None):
        text = f"{rule} on {i.name} over [{ext.start}, {ext.stop})"
        return text + (f" -> {sub}" if sub else "")

    def lower_plain_loop(self, i, ext, body, line):
        """No looplets left: a for loop if the body uses the index, else the body once."""
        length = X.difference(ext.stop, ext.start)
        loop = self.simplify(Loop(i, ext, body))
        if not isinstance(loop, Loop):
            return self.lower(loop)
        if length == 1:
            return self.lower(substitute(body, {i: Value(ext.start, "int64")}))
        v = Var(self.fresh(i.name))
        inner = self.lower(substitute(body, {i: Value(v, "int64")}))
        if inner:
            inner = self._short_circuit(i, Extent(v, ext.stop), body, line) + inner
        return [ir.For(v, ext.start, ext.stop, inner)] if inner else []

    def _short_circuit(self, i, rest, body, line):
        """The ShortCircuitScalar case split starting each iteration of a loop over ``i``
        (see :mod:`.scalars`); its remainder is the loop over ``rest`` (from the current index)."""
        object.__setattr__(rest, "nonempty", True)
        return self.scalars.short_circuit(i, body, lambda b: self.lower_looplets(i, rest, b, line), line)

    # -- Lookup
    def lower_lookup(self, i, ext, body, found, line):
        """All looplets are Lookups: a for loop reading ``body(i)`` (no loop for length one)."""
        length = X.difference(ext.stop, ext.start)
        v = Var(self.fresh(i.name)) if length != 1 else ext.start
        new = _replace_looplets(body, i, lambda l: l.body(v) if isinstance(l, Lookup) else l)
        new = substitute(new, {i: Value(v, "int64")})
        self.record("lower:Lookup", body, new, note=self._note("for loop" if length != 1 else "length one", i, ext))
        inner = self.lower(new)
        if length == 1:
            return inner
        if inner:
            inner = self._short_circuit(i, Extent(v, ext.stop), body, line) + inner
        return [ir.For(v, ext.start, ext.stop, inner)] if inner else []

    # -- Run / Fill
    def lower_run(self, i, ext, body, found, line):
        """Runs hold one value over the whole extent: substitute it and lower the loop again."""
        def sub(l):
            if isinstance(l, Fill):
                return l.value
            if isinstance(l, Run):
                return l.body
            return l
        new = _replace_looplets(body, i, sub, only=(Run, Fill))
        self.record("lower:Run", body, new, note=self._note("unwrap runs", i, ext))
        return self.lower_looplets(i, ext, new, line)

    # -- AcceptRun
    def lower_acceptrun(self, i, ext, body, found, line):
        """Run-length outputs. Every read left on ``i`` is a Lookup, or the body uses ``i``:
        each index is a run of length one (a Lookup over ``[v, v + 1)`` regions). Otherwise
        the body is the same over the whole extent and only writes the runs: it is lowered
        once, into one run ``[start, stop)`` per output."""
        def per_index(l):
            return Lookup(lambda v, l=l: l, f"i -> {l.text} of length one", l.owner) if isinstance(l, AcceptRun) else l
        opened = []

        def open_run(l):
            pre, child, epi = l.accept(ext.start, ext.stop)
            opened.append((pre, epi))
            return child
        # the cheap tests first: the runs are opened only when they might be used
        whole = None
        if all(isinstance(l, AcceptRun) for l in found) and _writes_only_runs(body, i):
            whole = _replace_looplets(body, i, open_run, only=(AcceptRun,))
        if whole is None or uses(whole, i):
            new = _replace_looplets(body, i, per_index, only=(AcceptRun,))
            self.record("lower:AcceptRun", body, new, note=self._note("runs of length one", i, ext))
            return self.lower_looplets(i, ext, new, line)
        self.record("lower:AcceptRun", body, whole, note=self._note("one run", i, ext))
        out = [x for pre, _ in opened for x in pre] + self.lower(whole) + [x for _, epi in reversed(opened) for x in epi]
        if getattr(ext, "nonempty", False) or X.prove_lt(ext.start, ext.stop):
            return out
        return [If(BinOp("<", ext.start, ext.stop), out)]  # an empty region stores no run

    # -- Thunk
    def lower_thunk(self, i, ext, body, found, line):
        """Hoist each thunk's preamble before the loop and its epilogue after it."""
        pre, epi = [], []

        def sub(l):
            if isinstance(l, Thunk):
                pre.extend(l.preamble)
                epi[:0] = list(l.epilogue)
                return l.body
            return l
        new = _replace_looplets(body, i, sub, only=(Thunk,))
        self.record("lower:Thunk", body, new, note=self._note("hoist preambles", i, ext))
        return pre + self.lower_looplets(i, ext, new, line) + epi

    # -- Switch
    def lower_switch(self, i, ext, body, found, line):
        """The product of all switches' cases, as a first-match if / else if chain."""
        switches = [l for l in found if isinstance(l, Switch)]
        arms = []
        for combo in itertools.product(*[s.cases for s in switches]):
            conds = [c.cond for c in combo if not (isinstance(c.cond, Const) and c.cond.value is True)]
            pick = {id(s): c.body for s, c in zip(switches, combo)}
            new = _replace_looplets(body, i, lambda l: pick.get(id(l), l), only=(Switch,))
            arms.append((conds, new))
        self.record("lower:Switch", body, arms[0][1], note=self._note(f"{len(arms)} case(s)", i, ext))
        out = None
        for conds, new in reversed(arms):
            code = self.lower_looplets(i, ext, new, line)
            if not conds:
                out = code
            else:
                out = [If(ir.and_(*conds), code, out)] if (code or out) else []
        return out or []

    # -- Sequence
    def lower_sequence(self, i, ext, body, found, line):
        """The product of all sequences' phases in lexicographic (topological) order.

        Each combination runs from the running position to the smallest phase stop,
        guarded by ``if (start < stop)``; the other looplets are truncated to it.
        """
        seqs = [l for l in found if isinstance(l, Sequence)]
        pos = Var(self.fresh(i.name))
        out = [Declare(pos, "int64", ext.start)]
        combos = list(itertools.product(*[range(len(s.phases)) for s in seqs]))
        self.record("lower:Sequence", body, None,
                    note=self._note(f"{len(combos)} phase combination(s)", i, ext))
        pruned = 0
        for key in combos:
            stops = [s.phases[k].stop for s, k in zip(seqs, key) if s.phases[k].stop is not None]
            # the running position is past the stop of every phase before this one:
            # a combination ending before one of those is statically empty
            lows = [s.phases[k - 1].stop for s, k in zip(seqs, key) if k > 0 and s.phases[k - 1].stop is not None]
            if any(X.prove_le(t, lo) for t in stops for lo in lows) and key != combos[-1]:
                pruned += 1
                continue
            stop = X.imin(*stops, ext.stop) if stops else ext.stop
            # a phase cut short by the others' stops or the extent's (a diagonal's ``i + 1``) is
            # truncated: a Spike's tail is its phase's last coordinate, which the cut drops
            pick = {id(s): (s.phases[k].body if s.phases[k].stop is None else
                            truncate(s.phases[k].body, ext.start, s.phases[k].stop, stop))
                    for s, k in zip(seqs, key)}
            new = _truncate_others(body, i, ext, stop, exclude=(Sequence,))
            new = _replace_looplets(new, i, lambda l: pick.get(id(l), l), only=(Sequence,))
            is_last = stop is ext.stop or X.prove_eq(stop, ext.stop)
            if is_last:
                sub = Extent(pos, ext.stop)
                code = self.lower_looplets(i, sub, new, line)
                if code:
                    out.append(If(BinOp("<", pos, ext.stop), code))
                break
            s_var = Var(self.fresh("phase_stop"))
            # the first phase starts where the extent starts (a constant seeks nothing)
            start = ext.start if len(out) == 1 else pos
            code = self.lower_looplets(i, Extent(start, s_var), new, line)
            out.append(Declare(s_var, "int64", stop))
            out.append(If(BinOp("<", pos, s_var), code + [IAssign(pos, s_var)]))
        return out

    # -- Spike
    def lower_spike(self, i, ext, body, found, line):
        """A spike is its body on ``[start, stop - 1)`` and its tail at ``stop - 1``."""
        last = X.sub(ext.stop, 1)
        run_body = _truncate_others(body, i, ext, last, exclude=(Spike,))
        run_body = _replace_looplets(run_body, i, lambda l: Run(l.body) if isinstance(l, Spike) else l,
                                     only=(Spike,))
        tail = _replace_looplets(body, i, lambda l: Run(l.tail) if isinstance(l, Spike) else l, only=(Spike,))
        self.record("lower:Spike", body, None, note=self._note("body + tail", i, ext,
                                                               f"[{ext.start}, {last}) and [{last}, {ext.stop})"))
        out = self.lower_looplets(i, Extent(ext.start, last), run_body, line)
        out += self.lower_looplets(i, Extent(last, ext.stop), tail, line)
        if out and not getattr(ext, "nonempty", False) and not X.prove_lt(ext.start, ext.stop):
            return [If(BinOp("<", ext.start, ext.stop), out)]
        return out

    # -- Stepper
    def lower_stepper(self, i, ext, body, found, line):
        """Seek, then a while loop over the smallest current child; ``next`` only for
        steppers whose child ended at this step (notes: pitfalls 1-3).

        A lone stepper that walks stored positions (:class:`Positions`) beside
        Lookups only, whose gaps do nothing, loops over its positions directly
        (:meth:`lower_positions`)."""
        steppers = [l for l in found if isinstance(l, Stepper)]
        fast = self.lower_positions(i, ext, body, found, line)
        if fast is not None:
            return fast

        def chunk_of(s, step_stop):
            full = Thunk((), s.chunk, s.next)
            cut = _truncate_strict(s.chunk)
            return Switch((Case(BinOp("==", s.stop, step_stop), full), Case(Const(True, "bool"), cut)))
        return self._step_loop(i, ext, body, line, Stepper, steppers, [s.stop for s in steppers],
                               chunk_of, f"{len(steppers)} stepper(s), while loop")

    def _step_loop(self, i, ext, body, line, kind, leaders, stops, arm, note):
        """``while (pos < stop) { step; body; pos = step_stop }`` for Steppers and Jumpers
        (``kind``): each of ``leaders`` seeks first, and within a step becomes
        ``arm(leader, step_stop)``; the step ends at the smallest of ``stops`` and the
        extent's stop."""
        pos = Var(self.fresh(i.name))
        out = [Declare(pos, "int64", ext.start)]
        for s in leaders:
            out.extend(s.seek(pos))
        step_stop = Var(self.fresh("step_stop"))
        step = [st for s in leaders for st in s.preamble]
        step.append(Declare(step_stop, "int64", X.imin(*stops, ext.stop)))
        new = _truncate_others(body, i, ext, step_stop, exclude=(kind,))
        new = _replace_looplets(new, i, lambda l: arm(l, step_stop) if isinstance(l, kind) else l, only=(kind,))
        self.record(f"lower:{kind.__name__}", body, new, note=self._note(note, i, ext))
        sub = Extent(pos, step_stop)
        object.__setattr__(sub, "nonempty", True)
        step += self.lower_looplets(i, sub, new, line)
        step.append(IAssign(pos, step_stop))
        step[:0] = self._short_circuit(i, Extent(pos, ext.stop), body, line)
        out.append(While(BinOp("<", pos, ext.stop), step))
        return out

    def lower_positions(self, i, ext, body, found, line):
        """Finch.jl's single-stepper fast path: ``while (q < q_end) { j = idx[q]; body; q++ }``.

        Applies when exactly one looplet on ``i`` is a Stepper, it has
        :class:`~compiler.looplets.looplets.Positions` and Spike chunks, every other
        looplet is a Lookup, and the program over the stepper's fill region
        simplifies to ``pass`` (so skipping the gaps is exact). The walk needs no
        min and no compare per entry: the end position is found once, by a search
        only when the extent cuts the fiber (``stop < last``), and the seek is skipped
        when the extent starts at the fiber's first possible coordinate.
        Returns None when it does not apply.
        """
        steppers = [l for l in found if isinstance(l, Stepper)]
        if len(steppers) != 1 or any(not isinstance(l, (Stepper, Lookup)) for l in found):
            return None
        s = steppers[0]
        P = s.positions
        chunk = unshift(s.chunk)
        if P is None or not isinstance(chunk, Spike) or not isinstance(unshift(chunk.body), Fill):
            return None
        gap = _replace_looplets(body, i, lambda l: unshift(chunk.body).value if l is s else l, only=(Stepper,))
        gap = _replace_looplets(gap, i, lambda l: l.body(Var("__gap")) if isinstance(l, Lookup) else l)
        if not is_pass(simplify(gap, None, (FILL_WRITE,), self.facts)):   # fill into a sparse output: a no-op there too
            return None
        out = []
        if not X.prove_le(ext.start, P.first):
            out.extend(s.seek(ext.start))
        q_end = Var(self.fresh(f"{P.q.name}_end"))
        out.append(Declare(q_end, "int64", P.q_stop))
        if not X.prove_le(P.last, ext.stop):
            out.append(If(BinOp("<", ext.stop, P.last), P.search(q_end, ext.stop)))

        def walk_positions(b, first=False):
            """``while (q < q_end) { j = idx[q]; body; q++ }`` for body ``b``."""
            j = Var(self.fresh(i.name))
            new = _replace_looplets(b, i, lambda l: unshift(chunk.tail) if l is s else
                                    (l.body(j) if isinstance(l, Lookup) else l))
            new = substitute(new, {i: Value(j, "int64")})
            if first:
                self.record("lower:Stepper", b, new,
                            note=self._note("one stepper: while loop over its stored positions", i, ext))
                self.record("lower:Spike", gap, new,
                            note=self._note("body + tail per position", i, ext,
                                            f"body over the gaps is pass, tail at [{j}, {j} + 1)"))
            inner = self.lower(new)
            if not inner and not first:
                return []
            # a ShortCircuitScalar's remainder walks on from the current position
            split = self.scalars.short_circuit(i, b, walk_positions, line) if inner else []
            return [While(BinOp("<", P.q, q_end), [*split, Declare(j, "int64", P.coord(P.q)), *inner, *s.next])]
        out.extend(walk_positions(body, first=True))
        return out

    # -- Jumper
    def lower_jumper(self, i, ext, body, found, line):
        """The largest current child among jumpers sets the step; jumpers whose child
        ends there use their exact body and advance, the others cover several children."""
        jumpers = [l for l in found if isinstance(l, Jumper)]

        def arm(s, step_stop):
            return Switch((Case(BinOp("==", s.stop, step_stop), Thunk((), s.body(True), s.next)),
                           Case(Const(True, "bool"), s.body(False))))
        return self._step_loop(i, ext, body, line, Jumper, jumpers, [X.imax(*[s.stop for s in jumpers])], arm,
                               f"{len(jumpers)} jumper(s)")

    # ------------------------------------------------------------------ expressions

    def expr(self, e, line=0):
        """``(IR expression, dtype)`` of a fully lowered program expression."""
        if isinstance(e, Literal):
            v = e.value
            if v is MISSING:
                raise ProgramError("a missing value reached the generated code; wrap the permissive "
                                   "access in coalesce(..., default)", line)
            if isinstance(v, bool):
                return Const(v, "bool"), "bool"
            if isinstance(v, int):   # (past int64, as numpy types it: uint64 when it fits)
                dt = "uint64" if 2 ** 63 <= v < 2 ** 64 else "int64"
                return Const(v, dt), dt
            return Const(float(v), "float64"), "float64"
        if isinstance(e, Value):
            return e.expr, e.dtype
        if isinstance(e, Access):
            t = e.tns
            if isinstance(t, Fill):
                return self.expr(t.value, line)
            if isinstance(t, SubFiber) and t.is_leaf and not e.idxs:
                if not t.tensor.levels:
                    return self.scalars.read(t, line)
                return self.expr(leaf_value(t), line)
            if isinstance(t, (Literal, Value)):
                return self.expr(t, line)
            raise ProgramError(f"access {e} is not fully indexed (an index of it is never looped over)", line)
        if isinstance(e, Call):
            if e.op == "coalesce":
                return self.expr(e.args[0], line)
            if e.op == "ifelse":
                (c, _), (a, da), (b, db) = (self.expr(x, line) for x in e.args)
                return Select(c, a, b), _promote(da, db)
            parts = [self.expr(a, line) for a in e.args]
            parts = cints.weak_constants(parts)
            return self.apply(e.op, [p[0] for p in parts], [p[1] for p in parts], line), \
                e.op.result_dtype(*[p[1] for p in parts]).name
        if isinstance(e, Index):
            raise ProgramError(f"index {e.name} is used outside of its loop", line)
        if isinstance(e, Variable):
            raise ProgramError(f"variable {e.name} is not defined", line)
        raise ProgramError(f"cannot lower expression {e!r}", line)

    def apply(self, op: Operator, args, dtypes, line=0):
        """IR for ``op(args)``: builtin operators inline, user functions as C helpers."""
        if op.is_user:
            h = op.c_helper(dtypes)
            name = op._c_name([_np(d) for d in dtypes])
            self.helpers.setdefault(name, ir.Helper(name, h))
            self.helper_ops.setdefault(name, op)
            return ir.Call(name, tuple(args))
        n = op.name
        rdt = op.result_dtype(*dtypes).name
        a = args
        if len(set(map(str, dtypes)) | {rdt}) > 1 and n not in ("and", "or", "not", "ldexp", "div"):
            # in numpy's dtype: C would compute int32 + 1 in 32 bits, and int32 < uint32 as unsigned
            common = _promote(*dtypes) if n in ("lt", "le", "gt", "ge", "eq", "ne") else rdt
            a = cints.operands(args, dtypes, common)
            dtypes = [common] * len(dtypes)
        infix = {"add": "+", "sub": "-", "mul": "*", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
                 "eq": "==", "ne": "!=", "and": "&&", "or": "||", "bitand": "&", "bitor": "|", "bitxor": "^"}
        if n in infix:
            return cints.wrap(BinOp(infix[n], a[0], a[1]), rdt)
        if n == "div":
            x, y = a
            if rdt.startswith("float") and not any(d.startswith("float") for d in dtypes):
                x = ir.Cast(rdt, x)
            return BinOp("/", x, y)
        if n in ("min", "max"):
            better = BinOp("<" if n == "min" else ">", a[0], a[1])
            if str(dtypes[0]).startswith("float"):   # a NaN wins, as in numpy (and the vectorizer knows the form)
                better = BinOp("||", ir.Call("isnan", (a[0],)), better)
            return Select(better, a[0], a[1])
        if n == "neg":
            return cints.wrap(UnOp("-", a[0]), rdt)
        if n == "not":
            return UnOp("!", a[0])
        if n == "abs":
            if _np(rdt).kind == "u":
                return a[0]
            return cints.wrap(Select(BinOp("<", a[0], Const(0, dtypes[0] if dtypes[0] != "bool" else "int64")),
                                     UnOp("-", a[0]), a[0]), rdt)
        if n == "overwrite":
            return a[1]
        if n in ("floordiv", "mod", "lshift", "rshift"):   # numpy's semantics where C's differ, in a helper
            name = f"ss_{n}_{rdt}"
            self.helpers.setdefault(name, ir.Helper(name, op.c_helper([rdt, rdt])))
            self.helper_ops.setdefault(name, op)
            return ir.Call(name, tuple(a))
        if n in ROUNDING and _np(rdt).kind in "biu":
            return a[0]   # an integer is its own floor
        if n == "pow" and _np(rdt).kind in "iu":   # integers wrap as numpy's (C's pow computes a double)
            name = f"ss_pow_{rdt}"
            self.helpers.setdefault(name, ir.Helper(name, op.c_helper([rdt, rdt])))
            self.helper_ops.setdefault(name, op)
            return ir.Call(name, tuple(a))
        if n in ("sqrt", "exp", "log", "pow") + UNARY_MATH:
            return ir.Call(n, tuple(a))
        if n == "choose":
            z = Const(op.param, dtypes[0])
            return Select(BinOp("==", a[0], z), a[1], a[0])
        raise ProgramError(f"operator {op} has no C lowering in the looplet strategy", line)


# --------------------------------------------------------------------------- helpers


def _fill_write(t):
    """``C[...] = fill`` into a sparse output (every slot starts at its fill) is a no-op."""
    if not (isinstance(t, Assign) and t.op is None and isinstance(t.rhs, Literal)):
        return None
    tns = t.lhs.tns
    info = tns.tensor if isinstance(tns, SubFiber) else getattr(tns, "owner", None)
    if info is None or all(l.slot_per_coordinate for l in info.levels):
        return None  # dense-addressed storage: a slot may be overwritten with the fill
    if t.rhs.value is not MISSING and same_value(t.rhs.value, info.fill):
        return Block(())
    return None


from ..rewrite import Rule  # noqa: E402

FILL_WRITE = Rule("fill-write", _fill_write)


def _text(x):
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return "\n".join(str(s) for s in x)
    return str(x)


def _np(d):
    import numpy as np
    return np.dtype(d)


def _promote(*dtypes):
    import numpy as np
    return np.result_type(*dtypes).name


def _compound(op, dt, vdt):
    """The C compound operator for ``x op= v`` when it means the same as ``x = op(x, v)``."""
    if op is None or op.is_user:
        return None
    sym = {"add": "+", "mul": "*", "sub": "-", "bitand": "&", "bitor": "|", "bitxor": "^"}.get(op.name)
    if sym is None:
        return None
    if dt == "bool":
        return None
    return sym


def _is_modifier(x) -> bool:
    from .program import IndexModifier
    return isinstance(x, IndexModifier)


def _protocol(x):
    """The protocol annotation (``gallop``/``walk``) among an index's modifiers, or None."""
    while _is_modifier(x):
        if type(x).__name__ == "Protocol":
            return x.name
        x = x.index
    return None


def _base_index(x):
    while _is_modifier(x):
        x = x.index
    return x


def _apply_modifiers(idx, l, fiber, to_ir):
    """Wrap a freshly unfurled looplet for the index modifiers around its index
    (``Permit``, ``Offset``, ``Window``): see :func:`compiler.looplets.wrappers.apply_modifiers`."""
    from .wrappers import apply_modifiers
    return apply_modifiers(idx, l, fiber, to_ir)


def _style(l) -> str:
    l = unshift(l)
    if isinstance(l, Fill):
        return "Run"
    return l.style


def _writes_only_runs(body, i) -> bool:
    """Whether every assignment in ``body`` writes an output taking runs on ``i``: then the
    body over a region where the reads are constant is one write per output, whatever the
    region's length (a reduction into anything else would count every index)."""
    return all(isinstance(n.lhs.tns, AcceptRun) and n.lhs.idxs and n.lhs.idxs[0] == i
               for n in walk(body) if isinstance(n, Assign))


def _read_key(n):
    """What makes two read accesses the same (the tensor's fiber and every index), or None
    for writes and accesses that cannot be compared."""
    if n.mode != "read":
        return None
    t = n.tns
    fiber = (id(t.tensor), t.level, repr(t.pos), repr(t.seg)) if isinstance(t, SubFiber) else (id(t),)
    return fiber + (repr(n.idxs),)


def _looplet_what(style: str, i, body) -> str:
    """What a looplet lowering's code stands for, in the user's terms (the explorer's tooltip):
    the rule, the index, each looplet with the tensor it reads and the statement they are in,
    e.g. ``Stepper on j: Stepper of A, Lookup of x in y.lvl1[i][] += Stepper[j] * ...``."""
    parts = []
    for n in walk(body):
        if isinstance(n, Access) and n.idxs and n.idxs[0] == i and isinstance(n.tns, Looplet):
            head = type(unshift(n.tns)).__name__
            parts.append(f"{head} of {n.source}" if n.source else head)
    text = " ".join(_text(body).split())
    text = text if len(text) <= 100 else text[:99] + "…"
    return f"{style} on {i.name}: {', '.join(dict.fromkeys(parts))} in {text}"


def _looplet_origin(style: str, i, body):
    """The :class:`~compiler.imperative.ir.Origin` of a looplet lowering: its style, its index
    and the tensors whose looplet on ``i`` that rule lowers (``Stepper`` of ``A``, not ``x``'s
    ``Lookup``)."""
    operands = [n.source for n in walk(body)
                if isinstance(n, Access) and n.idxs and n.idxs[0] == i and isinstance(n.tns, Looplet)
                and n.source and _style(n.tns) == style]
    return ir_Origin("looplet", i.name, tuple(dict.fromkeys(operands)), style)


def _looplets_of(body, i) -> list:
    """The looplets of accesses whose first index is ``i`` (shifts pushed down), in order."""
    out, seen = [], set()
    for n in walk(body):
        if isinstance(n, Access) and n.idxs and n.idxs[0] == i and isinstance(n.tns, Looplet):
            l = n.tns
            if id(l) not in seen:
                seen.add(id(l))
                out.append(unshift(l))
    return out


def _replace_looplets(body, i, fn, only=None):
    """Replace the looplet of each access on ``i`` (shifts pushed down) by ``fn(looplet)``.

    A replacement that is not a looplet ends the access's use of ``i``: the access
    becomes the value (a fill or a scalar), or the sub-fiber indexed by the rest.
    """
    done = {}  # a looplet shared by several accesses is rewritten once

    def visit(n):
        if isinstance(n, Access) and n.idxs and n.idxs[0] == i and isinstance(n.tns, Looplet):
            l = unshift(n.tns)
            if only is not None and not isinstance(l, only):
                return replace(n, tns=l) if l is not n.tns else None
            if id(l) not in done:
                done[id(l)] = (l, fn(l))  # keep l alive so its id is not reused
            new = done[id(l)][1]
            if isinstance(new, Looplet):
                return replace(n, tns=new)
            return _consume(new, n)
        return None
    return postmap(body, visit)


def _consume(new, n):
    """The access ``n`` after its first index was consumed, yielding ``new``."""
    rest = n.idxs[1:]
    if isinstance(new, (Literal, Value)):
        return new
    if isinstance(new, Fill):
        return new.value
    if isinstance(new, SubFiber):
        if new.is_leaf and not rest and n.mode == "read":
            return leaf_value(new)
        return replace(n, tns=new, idxs=rest)
    return replace(n, tns=new, idxs=rest)


def _truncate_others(body, i, ext, new_stop, exclude=()):
    def fn(l):
        if isinstance(l, exclude):
            return l
        return truncate(l, ext.start, ext.stop, new_stop)
    return _replace_looplets(body, i, fn)


def _truncate_strict(l):
    """``l`` cut strictly before the end of its region: a Spike loses its tail."""
    l = unshift(l)
    if isinstance(l, Spike):
        return Run(l.body)
    if isinstance(l, Switch):
        return Switch(tuple(Case(c.cond, _truncate_strict(c.body)) for c in l.cases))
    if isinstance(l, Thunk):
        return Thunk(l.preamble, _truncate_strict(l.body), l.epilogue)
    return l
