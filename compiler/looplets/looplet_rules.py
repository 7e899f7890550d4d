"""The looplet lowering rules: a loop's body, its accesses on the loop index unfurled to looplets,
lowered to the imperative IR by the styles of those looplets.

At each loop ``for i = ext`` the lowerer (:mod:`.lowerers`) unfurls every access whose first
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
import re

from ..imperative import ir, pretty
from ..imperative.ir import Assign as IAssign, BinOp, Cast, CompoundAssign, Const, Declare, If, Tagged, Var, While
from ..imperative.traverse import statements, untagged, walk
from . import extents as X
from .counted_gaps import plan_counted, update_key
from .errors import ProgramError
from .fill_write import FILL_WRITE
from .idempotent_gaps import added_per_gap, adds_by_count, gap_once, updates_of
from .looplet_access import (cut_alike, looplets_of, operands_on, replace_looplets, style_of, truncate_others,
                             truncate_strict, writes_only_runs)
from .looplet_provenance import looplet_origin, looplet_what, too_many_looplets
from .looplets import (AcceptRun, Case, Fill, Jumper, Lookup, Run, Sequence, Spike, Stepper, Switch, Thunk,
                       resolve, truncate, unshift)
from .merged_walks import (MOST_REGIONS, MOST_TRIED, fewest_moved_first, merged_walk, mergeable_walks,
                           present_chunk, running, walks_end, walks_of_parts)
from .phase_order import merge_order
from .point_steps import required_of, spike_parts
from .program import Extent, Index, Loop, Value, is_pass, substitute, uses
from .simplify import simplify
from .switch_arms import merge_arms, minimal_sets


def _code_text(code) -> str:
    """``code`` as text, the locals it declares renamed in order (``_v0``, ``_v1``, ...): the text of
    two arms is the same when their C is, but for fresh names (and the looplets' provenance tags,
    which print as nothing)."""
    text = "\n".join(pretty(st) for st in code)
    # (declarations and loops are statements: the arms' expressions are not walked for them)
    names = list(dict.fromkeys(n.var.name for st in code for n in statements(st) if isinstance(n, (Declare, ir.For))))
    if names:
        renamed = {name: f"_v{k}" for k, name in enumerate(names)}
        text = re.sub(r"\b(" + "|".join(map(re.escape, names)) + r")\b", lambda m: renamed[m.group(1)], text)
    return text


def _always(cond) -> bool:
    return isinstance(cond, Const) and cond.value is True


def _position(stepper: Stepper):
    """The local a stepper's seek and next move, or None (a shifted stepper without positions)."""
    return stepper.positions.q if stepper.positions is not None else stepper.state


def advance_when(stepper: Stepper, ends) -> tuple:
    """A stepper's ``next`` run only when its child ends at this step (``ends``, a test): a position
    moved by one, ``q += 1``, as ``q += (int64)ends``, without a branch (a merge of two lists moves
    the one or the other as their coordinates fall: a branch there is mispredicted about once an
    entry, which made CSR .* CSR twice the lattice's time), any other ``next`` under ``if (ends)``.

    >>> from compiler.looplets.looplets import Fill
    >>> q = Var("qA")
    >>> s = Stepper(lambda v: (), BinOp("+", Var("jA"), Const(1, "int64")), Fill(0.0),
    ...             (CompoundAssign("+", q, Const(1, "int64")),))
    >>> print(advance_when(s, BinOp("==", s.stop, Var("step_stop")))[0])
    qA += (int64)(jA + 1 == step_stop);
    """
    if unit_step(stepper):
        return (CompoundAssign("+", stepper.next[0].target, Cast("int64", ends)),)
    return (If(ends, list(stepper.next)),)


def unit_step(stepper: Stepper) -> bool:
    """Whether a stepper's ``next`` moves its position by one (``q += 1``)."""
    nxt = tuple(stepper.next)
    return len(nxt) == 1 and isinstance(nxt[0], CompoundAssign) and nxt[0].op == "+" and \
        nxt[0].value == Const(1, "int64")


def _at(start, stepper: Stepper) -> bool:
    """Whether a stepper's cursor is at the first stored coordinate at or past ``start`` before any
    seek: it starts at its fiber's first position (not carried down from its end) and no stored
    coordinate is below ``start`` (a lower bound of the first; coordinates are not negative)."""
    if stepper.from_end:
        return False
    P = stepper.positions
    return X.prove_le(start, Const(0, "int64") if P is None else P.first)


class LoopletRules:
    """The lowering of a loop by its looplets' styles, for :class:`~compiler.looplets.lowerers.Lowerer`
    (which holds ``fresh``, ``facts``, the trace and the statement lowering these rules recurse into).
    Each style's rule is ``lower_<style>(i, ext, body, found, line)``: ``found`` the looplets on ``i``."""

    def lower_looplets(self, i, ext, body, line=0) -> list:
        body = self.simplify(body)
        if is_pass(body):
            return []
        # push shifts down once, so every rule below sees the same looplet objects
        body = replace_looplets(body, i, lambda l: l)
        found = looplets_of(body, i)
        if not found:
            return self.lower_plain_loop(i, ext, body, line)
        style = "Lookup"
        for l in found:
            style = resolve(style, style_of(l))
        fn = getattr(self, f"lower_{style.lower()}")
        # provenance: the code of each looplet lowering is tagged, so C lines map back to it
        self._tags += 1
        if self._tags > self.max_looplets:
            raise ProgramError(too_many_looplets(self.max_looplets, i, operands_on(body, i)), line)
        tag = f"looplet:{style}:{self._tags}"
        self._pending_tag = tag
        origin = looplet_origin(style, i, body)
        # (the looplet being lowered: code it leaves to be emitted elsewhere keeps its tag, .counted_gaps)
        outer, self.looplet_tag = self.looplet_tag, (tag, origin)
        try:
            out = fn(i, ext, body, found, line)
        finally:
            self.looplet_tag = outer
        if not out:
            return out
        return [Tagged(tag, out, looplet_what(style, i, body), origin)]

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
        self._loop_index(v, ext)
        inner = self.lower(substitute(body, {i: Value(v, "int64")}))
        if inner:
            inner = self._short_circuit(i, Extent(v, ext.stop), body, line) + inner
        return [ir.For(v, ext.start, ext.stop, inner)] if inner else []

    def _loop_index(self, v, ext):
        # (a phase inside may prove its skip empty: ``min(-(3 * j), 3)`` is at most 0, where a part of a
        # concatenation split across its loops starts for every j)
        self.ctx.facts.bound(v, ext.start, X.sub(ext.stop, 1), "a for loop's index, from its start to before its stop")

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
        if length != 1:
            self._loop_index(v, ext)
        new = replace_looplets(body, i, lambda l: l.body(v) if isinstance(l, Lookup) else l)
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
        new = replace_looplets(body, i, sub, only=(Run, Fill))
        self.record("lower:Run", body, new, note=self._note("unwrap runs", i, ext))
        return self.lower_looplets(i, ext, new, line)

    # -- AcceptRun
    def lower_acceptrun(self, i, ext, body, found, line):
        """Run-length outputs. Every read left on ``i`` is a Lookup, or the body uses ``i``:
        each index is a run of length one (a Lookup over ``[v, v + 1)`` regions). Otherwise
        the body is the same over the whole extent and only writes the runs (or the extent is
        one index long): it is lowered once, into one run ``[start, stop)`` per output."""
        def per_index(l):
            return Lookup(lambda v, l=l: l, f"i -> {l.text} of length one", l.owner) if isinstance(l, AcceptRun) else l
        opened = []

        def open_run(l):
            pre, child, epi = l.accept(ext.start, ext.stop)
            opened.append((pre, epi))
            return child
        # the cheap tests first: the runs are opened only when they might be used
        whole = None
        # a body also writing a workspace (``t[] += ...`` under ``max(sum(...))``) counts each index,
        # so only a region of one index takes it whole: each index's run of length one ends here
        # (the Lookup below re-enters this rule over [v, v + 1) for it)
        if all(isinstance(l, AcceptRun) for l in found) and \
                (X.difference(ext.stop, ext.start) == 1 or writes_only_runs(body, i)):
            whole = replace_looplets(body, i, open_run, only=(AcceptRun,))
        if whole is None or uses(whole, i):
            new = replace_looplets(body, i, per_index, only=(AcceptRun,))
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
        new = replace_looplets(body, i, sub, only=(Thunk,))
        self.record("lower:Thunk", body, new, note=self._note("hoist preambles", i, ext))
        return pre + self.lower_looplets(i, ext, new, line) + epi

    # -- Switch
    def lower_switch(self, i, ext, body, found, line):
        """The product of all switches' cases, as a first-match if / else if chain; when every switch
        is ``(condition, else)`` (a step's steppers), arms with the same code are one arm
        (:mod:`.switch_arms`)."""
        switches = [l for l in found if isinstance(l, Switch)]
        arms = []
        for combo in itertools.product(*[s.cases for s in switches]):
            conds = [c.cond for c in combo if not (isinstance(c.cond, Const) and c.cond.value is True)]
            pick = {id(s): c.body for s, c in zip(switches, combo)}
            new = replace_looplets(body, i, lambda l: pick.get(id(l), l), only=(Switch,))
            arms.append((conds, new, {n for n, c in enumerate(combo) if c is not switches[n].cases[-1]}))
        self.record("lower:Switch", body, arms[0][1], note=self._note(f"{len(arms)} case(s)", i, ext))
        codes = [self.lower_looplets(i, ext, new, line) for _, new, _ in reversed(arms)][::-1]
        if all(len(s.cases) == 2 and _always(s.cases[-1].cond) and not _always(s.cases[0].cond) for s in switches):
            texts = [_code_text(code) for code in codes]
            merged = merge_arms([(chosen, text) for (_, _, chosen), text in zip(arms, texts)])
            if len(merged) < len(arms):
                self.record("lower:Switch", body, None, note=self._note(
                    f"{len(arms)} arms, {len(merged)} once those with the same code are joined", i, ext))
            chain = []
            for group in merged:
                terms = [ir.and_(*[switches[n].cases[0].cond for n in sorted(s)]) if s else None
                         for s in minimal_sets([arms[k][2] for k in group])]
                chain.append(([] if None in terms else [ir.or_(*terms)], codes[group[0]]))
        else:
            chain = [(conds, code) for (conds, _, _), code in zip(arms, codes)]
        out = None
        for conds, code in reversed(chain):
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
        whole = self.whole_walk(i, ext, body, found, line)
        if whole is not None:
            return whole
        walks = mergeable_walks(seqs)
        if walks is None or not self._regions_above(i, body, seqs, MOST_REGIONS):
            walks = walks_of_parts(body, i, seqs)
        if walks is not None:   # (one loop: merged_walks)
            end = Var(self.fresh("walks_end"))
            merged = {id(s): merged_walk(s, end, self.fresh) for s in walks}
            new = replace_looplets(body, i, lambda l: merged.get(id(l), l), only=(Sequence,))
            self.record("lower:Sequence", body, new, note=self._note(
                f"{len(walks)} walks merged into one loop, each on past its entries to the end of the last", i, ext))
            self.ctx.facts.define(end, walks_end(walks), "where the last of the merged walks ends")
            return running("max", end, [s.phases[0].stop for s in walks]) + self.lower_looplets(i, ext, new, line)
        # (a phase of a fiber coiterated with another's: what a walk there reads is a tail the
        # merge left, the entries of A past B's last in A + B, rarely long; see lower_positions)
        merged = len(seqs) > 1 or getattr(ext, "merged", False)
        pos = Var(self.fresh(i.name))
        out = [Declare(pos, "int64", ext.start)]
        combos = list(itertools.product(*[range(len(s.phases)) for s in seqs]))
        # (a combination ending before one of the phases before it ends is statically empty)
        kept = [key for key in combos if key == combos[-1] or not self._empty_combination(seqs, key, ext)]
        empty = f", {len(combos) - len(kept)} of them provably empty" if len(kept) < len(combos) else ""
        self.record("lower:Sequence", body, None,
                    note=self._note(f"{len(combos)} phase combination(s){empty}", i, ext))
        # the stops of the phases just passed that do nothing (an intersection's phases where one
        # operand is its fill): the position moves past them all at once, before the next phase
        # that does something (none after the last: nothing reads it), in one max whose terms
        # the min/max folding merges: past min(a, s), min(b, s), min(a, b, s) is past min(max(a, b), s)
        pending: list = []

        def skip(stops):
            if not stops:
                return []
            past = Var(self.fresh("phase_stop"))
            moved = [Declare(past, "int64", X.imax(*stops)), If(BinOp("<", pos, past), [IAssign(pos, past)])]
            stops.clear()
            return moved
        # a stepper phase whose stepper is at the running position (its child ends past it) when
        # its next combination starts needs no seek there: true at the start when no stored
        # coordinate is below it, and after each combination of that phase whose code walks the
        # stepper to the combination's stop; a combination of a later phase of its sequence leaves it
        # true (if that one runs, the running position is past this phase for good)
        at_pos = {(id(s), k): _at(ext.start, p.body)
                  for s in seqs for k, p in enumerate(s.phases)
                  if isinstance(p.body, Stepper) and _position(p.body) is not None}
        bodies = self._combination_bodies(i, body, seqs)
        groups = merge_order(kept, bodies, skipped=set(combos) - set(kept))
        for group in groups:
            if len(group) > 1:
                self.record("lower:Sequence", body, bodies(group[0]), note=self._note(
                    f"{len(group)} neighbouring phase combinations {', '.join(map(str, group))} with the same "
                    f"body: one region", i, ext))
        for group in groups:
            key = group[0]
            stops = [self._combination_stop(seqs, k, ext) for k in group]
            stop = stops[0] if len(group) == 1 else X.imax(*stops)
            if len(group) == 1:
                # a phase cut short by the others' stops or the extent's (a diagonal's ``i + 1``) is
                # truncated: a Spike's tail is its phase's last coordinate, which the cut drops
                pick = {id(s): (s.phases[k].body if s.phases[k].stop is None else
                                truncate(s.phases[k].body, ext.start, s.phases[k].stop, stop))
                        for s, k in zip(seqs, key)}
                new = truncate_others(body, i, ext, stop, exclude=(Sequence,))
                new = replace_looplets(new, i, lambda l: pick.get(id(l), l), only=(Sequence,))
            else:
                new = self._merged_body(i, ext, seqs, group, bodies, stop)
            is_last = stop is ext.stop or X.prove_eq(stop, ext.stop)
            # (a stepper phase is at the position only if every combination of the group has it)
            mine = [(s, k) for g in group for s, k in zip(seqs, g) if (id(s), k) in at_pos]
            stable = [(s, k) for n, (s, k) in enumerate(zip(seqs, key)) if all(g[n] == k for g in group)]
            ready = frozenset(id(s.phases[k].body) for s, k in mine if at_pos[id(s), k] and (s, k) in stable)
            if is_last:
                sub = Extent(pos, ext.stop)
                object.__setattr__(sub, "nonempty", True)   # (lowered inside the test that it is)
                object.__setattr__(sub, "merged", merged)
                object.__setattr__(sub, "at_start", ready)
                code = self.lower_looplets(i, sub, new, line)
                if code:
                    out += skip(pending)
                    out.append(If(BinOp("<", pos, ext.stop), code))
                break
            s_var = Var(self.fresh("phase_stop"))
            # (the phase's code may prove things of its stop: a fiber walked to it is walked whole)
            self.ctx.facts.define(s_var, stop, "a phase's stop, the least of its looplets' stops and the extent's")
            # the first phase starts where the extent starts (a constant seeks nothing)
            start = ext.start if len(out) == 1 and not pending else pos
            sub = Extent(start, s_var)
            object.__setattr__(sub, "nonempty", True)
            object.__setattr__(sub, "merged", merged)
            object.__setattr__(sub, "at_start", ready)
            code = self.lower_looplets(i, sub, new, line)
            for s, k in mine:
                at_pos[id(s), k] = at_pos[id(s), k] and (s, k) in stable and self._walked(code, s.phases[k].body, s_var)
            # (a combination of an earlier phase of a sequence moves the position, not its later
            # phases' steppers; one of a later phase leaves a stepper phase be: if it runs, the
            # position is past that phase for good)
            for g in group:
                for s, k in zip(seqs, g):
                    for (sid, k2) in at_pos:
                        if sid == id(s) and k2 > k:
                            at_pos[sid, k2] = False
            if not code:
                pending.append(stop)
                continue
            test = self._entered(start, pos, stop, s_var) if start is ext.start else BinOp("<", pos, s_var)
            out += skip(pending)
            out.append(Declare(s_var, "int64", stop))
            out.append(If(test, code + [IAssign(pos, s_var)]))
        return out

    def _regions_above(self, i, body, seqs, most) -> bool:
        """Whether more than ``most`` combinations of the phases of ``seqs`` do something, each
        differently: the fewest loops their product lowers (neighbours alike are one region,
        :func:`~.phase_order.merge_order`). Few where one walk past its entries makes others idle,
        as in ``(a & b & c) | d``: every combination with ``a``, ``b`` or ``c`` past its entries is
        ``d`` alone."""
        bodies = self._combination_bodies(i, body, seqs)
        seen: list = []
        for n, key in enumerate(fewest_moved_first([len(s.phases) for s in seqs])):
            if n == MOST_TRIED:
                # (no more combinations looked at: 2^k of many walks is what merging avoids, and
                # the product would lower them all)
                return True
            b = bodies(key)
            if b is not None and b not in seen:
                seen.append(b)
                if len(seen) > most:
                    return True
        return False

    def _entered(self, start, pos, stop, s_var):
        """The test that the first combination, from ``pos`` (which is ``start``) to ``s_var`` (which
        is ``stop``), runs: ``pos < s_var``, but from 0 a stop that is a fiber's ``last`` is passed
        exactly when the fiber stores an entry (``qA < qA_stop``; see
        :meth:`~compiler.looplets.bounds.IntFacts.positive_when`), a test that loads no coordinate:
        a CSR row's copy then reads the row from its start, where ``lastA`` read its end first (a
        cache miss each row: 30% of a strided row slice's time). A minimum is passed where each of
        its terms is."""
        facts = self.ctx.facts
        if not X.prove_eq(start, 0) or facts is None:
            return BinOp("<", pos, s_var)
        terms = X.min_terms(stop)
        tests = [facts.positive_test(t) for t in terms]
        if all(t is None for t in tests):
            return BinOp("<", pos, s_var)
        return ir.and_(*[BinOp("<", pos, t) if test is None else test for t, test in zip(terms, tests)])

    @staticmethod
    def _combination_stop(seqs, key, ext):
        """Where a combination of phases ends: the least of its phases' stops and the extent's."""
        stops = [s.phases[k].stop for s, k in zip(seqs, key) if s.phases[k].stop is not None]
        return X.imin(*stops, ext.stop) if stops else ext.stop

    @staticmethod
    def _empty_combination(seqs, key, ext) -> bool:
        """Whether a combination provably runs nowhere: the running position is past the stop of
        every phase before its own (and past the extent's start: a phase below it, a shifted read's
        ``r + 1 < 0``, is empty), so one of its stops at or below one of those is."""
        stops = [s.phases[k].stop for s, k in zip(seqs, key) if s.phases[k].stop is not None]
        lows = [s.phases[k - 1].stop for s, k in zip(seqs, key) if k > 0 and s.phases[k - 1].stop is not None]
        lows.append(ext.start)
        return any(X.prove_le(t, lo) for t in stops for lo in lows)

    def _combination_bodies(self, i, body, seqs):
        """``bodies(key)``: the loop body with the phases of ``key`` picked (shifts pushed down once, so
        a phase is the same looplet in every combination) and runs substituted, simplified, for
        :func:`~.phase_order.merge_order`; None for a body that does nothing (those are passed, not
        merged). ``bodies.phase_bodies`` maps ``(id(sequence), phase)`` to the phase's looplet."""
        phase_bodies = {(id(s), k): unshift(p.body) for s in seqs for k, p in enumerate(s.phases)}
        cache = {}

        def bodies(key):
            if key not in cache:
                pick = {id(s): phase_bodies[id(s), k] for s, k in zip(seqs, key)}
                new = replace_looplets(body, i, lambda l: pick.get(id(l), l), only=(Sequence,))
                new = replace_looplets(new, i, lambda l: l.value if isinstance(l, Fill) else l.body,
                                       only=(Run, Fill))
                new = simplify(new, None, (FILL_WRITE,), self.facts)
                # (two bodies alike read the same phase looplets: each is in the same phase in both)
                cache[key] = None if is_pass(new) else new
            return cache[key]
        bodies.phase_bodies = phase_bodies
        return bodies

    def _merged_body(self, i, ext, seqs, group, bodies, stop):
        """The body of neighbouring combinations ``group`` with the same body over their union
        ``[position, stop)``: each phase it reads (the same in all of them) truncated to ``stop``,
        any other looplet cut from the extent to ``stop``."""
        cut = {}
        for n, (s, k) in enumerate(zip(seqs, group[0])):
            b = bodies.phase_bodies[id(s), k]
            if all(g[n] == k for g in group):
                p = s.phases[k]
                cut[id(b)] = b if p.stop is None else truncate(b, ext.start, p.stop, stop)
        return replace_looplets(bodies(group[0]), i, lambda l: cut[id(l)] if id(l) in cut else
                                truncate(l, ext.start, ext.stop, stop))

    def _walked(self, code, stepper, stop) -> bool:
        """Whether ``code``, whenever it runs, leaves ``stepper`` at its first child ending past
        ``stop``: a loop that walks it there (:attr:`walks`) is one of its top-level statements,
        not inside a branch, and nothing after the loop moves the stepper's position."""
        flat = untagged(code)
        for n, st in enumerate(flat):
            got = self.walks.get(id(st))
            if got is not None and got[0] is st and any(l is stepper for l in got[1]) and got[2] == stop:
                q = _position(stepper).name
                return not any(isinstance(x, (IAssign, ir.CompoundAssign, Declare))
                               and (x.var if isinstance(x, Declare) else x.target).name == q
                               for later in flat[n + 1:] for x in walk(later))
        return False

    # -- Spike
    def lower_spike(self, i, ext, body, found, line):
        """A spike is its body on ``[start, stop - 1)`` and its tail at ``stop - 1``."""
        last = X.sub(ext.stop, 1)
        run_body = truncate_others(body, i, ext, last, exclude=(Spike,))
        run_body = replace_looplets(run_body, i, lambda l: Run(l.body) if isinstance(l, Spike) else l,
                                     only=(Spike,))
        tail = replace_looplets(body, i, lambda l: Run(l.tail) if isinstance(l, Spike) else l, only=(Spike,))
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
        point = self.point_step(i, body, found)
        if point is not None:
            return self._step_loop(i, ext, body, line, Stepper, steppers, [s.stop for s in steppers], None,
                                   f"{len(steppers)} stepper(s), while loop", point=point)

        alone = len(steppers) < 3 and self._meet_only(i, body, steppers)

        def chunk_of(s, step_stop):
            bound = self.ctx.facts.definition(step_stop)
            if bound is not None and X.prove_eq(s.stop, bound):
                return Thunk((), s.chunk, s.next)   # (each step is this child whole: a lone stepper's)
            ends = BinOp("==", s.stop, step_stop)
            present = present_chunk(s, ends)
            if present is not None:
                # (a merged walk: its child where it ends here, else absent, one case for all k walks
                # where arms per stepper would lower 2**k of them, each again at every level below)
                return Thunk((), present, advance_when(s, ends))
            if cut_alike(s.chunk):
                # (a chunk that reads the same whether its child ends at this step or goes on,
                # a run-length level's fill then run: its body once, and the next child only
                # if this one ended; a case per stepper would repeat the body 2**k times)
                return Thunk((), s.chunk, advance_when(s, ends))
            # (the next child after the step's code, under a test of its own: the 2**k arms of the
            # switches then differ only where their bodies do, and those alike are joined,
            # lower_switch: an intersection's arms but the one where all end do nothing, one arm;
            # in (a & b & c) | d, the seven arms writing d alone are one)
            cut = truncate_strict(s.chunk)
            if len(steppers) < 3 and not (unit_step(s) and alone):
                # (two steppers of a union, or moving by more than one, a COO's rows: the next child in
                # the arm where this one ends, no test of its own; a union's arms branch as scipy's
                # merge does, on which lists are at the coordinate, each arm moving those)
                return Switch((Case(ends, Thunk((), s.chunk, s.next)), Case(Const(True, "bool"), cut)))
            return Thunk((), Switch((Case(ends, s.chunk), Case(Const(True, "bool"), cut))), advance_when(s, ends))
        return self._step_loop(i, ext, body, line, Stepper, steppers, [s.stop for s in steppers],
                               chunk_of, f"{len(steppers)} stepper(s), while loop")

    def _step_loop(self, i, ext, body, line, kind, leaders, stops, arm, note, point=None):
        """``while (pos < stop) { step; body; pos = step_stop }`` for Steppers and Jumpers
        (``kind``): each of ``leaders`` seeks first, and within a step becomes
        ``arm(leader, step_stop)``, or the step is ``point(step_stop)`` (:meth:`point_step`); the
        step ends at the smallest of ``stops`` and the extent's stop."""
        pos = Var(self.fresh(i.name))
        out = [Declare(pos, "int64", ext.start)]
        # (each seeks the extent's start, pos as declared: a search for a constant start that no
        # stored coordinate is below, 0, is no search)
        start = ext.start if isinstance(ext.start, (Const, Var)) else pos
        for s in leaders:
            if id(s) not in getattr(ext, "at_start", ()):
                out.extend(s.seek(start))
        step_stop = Var(self.fresh("step_stop"))
        step = [st for s in leaders for st in s.preamble]
        cut = () if kind is Stepper and self._steps_within(leaders, ext) else (ext.stop,)
        if any(getattr(s, "merged", None) is not None for s in leaders):   # (k walks' stops, one a line)
            step += running("min", step_stop, X.min_terms(X.imin(*stops, *cut)))
        else:
            step.append(Declare(step_stop, "int64", X.imin(*stops, *cut)))
        self.ctx.facts.define(step_stop, X.imin(*stops, *cut), "a step's stop, the least of its children's stops")
        if point is not None:
            step += point(step_stop, lambda new, what: self.record(
                f"lower:{kind.__name__}", body, new, note=self._note(f"{note}, {what}", i, ext)))
        else:
            new = truncate_others(body, i, ext, step_stop, exclude=(kind,))
            new = replace_looplets(new, i, lambda l: arm(l, step_stop) if isinstance(l, kind) else l, only=(kind,))
            self.record(f"lower:{kind.__name__}", body, new, note=self._note(note, i, ext))
            sub = Extent(pos, step_stop)
            object.__setattr__(sub, "nonempty", True)
            step += self.lower_looplets(i, sub, new, line)
        step.append(IAssign(pos, step_stop))
        split = self._short_circuit(i, Extent(pos, ext.stop), body, line)
        loop = While(BinOp("<", pos, ext.stop), split + step)
        if kind is Stepper and not split:   # (a split may break out before the stop)
            self.walks[id(loop)] = (loop, tuple(leaders), ext.stop)
        out.append(loop)
        return out

    def _meet_only(self, i, body, steppers) -> bool:
        """Whether a step of ``steppers`` does something only where all their children end (an
        intersection's): with any one of them cut before its child's end (at its fill), the body
        does nothing. Then the other arms are empty and each stepper moves on branch-free, as the
        lattice advances an intersection's iterators."""
        def values(l):
            l = unshift(l)   # (a shifted read's fill: a collapse's, a carried cursor's)
            while isinstance(l, (Run, Fill)):
                l = unshift(l.value if isinstance(l, Fill) else l.body)
            return l
        for s in steppers:
            cut = truncate_strict(s.chunk)
            new = replace_looplets(body, i, lambda l: cut if l is s else l, only=(Stepper,))
            new = replace_looplets(new, i, values, only=(Run, Fill))
            if not is_pass(simplify(new, None, (FILL_WRITE,), self.facts)):
                return False
        return True

    @staticmethod
    def _steps_within(steppers, ext) -> bool:
        """Whether every step of ``steppers`` ends by the extent's stop without a cut there: a stepper
        walking stored positions ends each child at most at its fiber's ``last`` (one past its last
        coordinate), so the least of their children's stops is at most the least of their ``last``,
        which a phase of their fibers' entries ends at (``min(lastA, lastB)``, or past it). A step's
        ``min(jA + 1, jB + 1, phase_stop)`` is then ``min(jA + 1, jB + 1)``: one compare less per
        entry of a merge, and its exit tested once, by the loop."""
        lasts = [s.positions.last for s in steppers if s.positions is not None]
        if bool(lasts) and X.prove_le(X.imin(*lasts), ext.stop):
            return True
        # (merged walks: before their end one of them is inside its entries, the one whose last is that
        # end, and its child ends by it; past its entries a walk's child ends past it, never least)
        ends = [s.merged for s in steppers if s.merged is not None]
        return (bool(ends) and len(ends) == len(steppers) and all(e is ends[0] for e in ends)
                and X.prove_le(ends[0], ext.stop))

    def point_step(self, i, body, found):
        """A step of three or more steppers as its last point alone (:mod:`.point_steps`), when each
        stepper's child is a fill then a stored value, the others on ``i`` are Lookups, the body does
        nothing with every stepper at its fill, and one stepper at least is needed for it to do
        anything: ``point(step_stop, record)``, the step's code (``record(body, what)`` notes it),
        or None. A step of a union (no stepper needed) keeps its arms: its point may be all fills."""
        steppers = [l for l in found if isinstance(l, Stepper)]
        if len(steppers) < 3 or any(not isinstance(l, (Stepper, Lookup)) for l in found):
            return None
        parts = {id(s): spike_parts(s) for s in steppers}
        if any(p is None or not isinstance(p[1], Value) for p in parts.values()):
            return None

        def at(point, value_of):
            new = replace_looplets(body, i, lambda l: value_of(l) if isinstance(l, Stepper) else l.body(point))
            return substitute(new, {i: Value(point, "int64")})

        def picked(s, step_stop):
            # (the stored value only where the child ends at this step: C's ?: reads nothing else)
            fill, value = parts[id(s)]
            return Value(ir.Select(BinOp("==", s.stop, step_stop), value.expr, Const(fill.value, value.dtype)),
                         value.dtype)

        def nothing(new):
            return is_pass(simplify(new, None, (FILL_WRITE,), self.facts))
        if not nothing(at(Var("__gap"), lambda s: parts[id(s)][0])):
            return None
        probe = Var("__step_stop")
        required = required_of(steppers, lambda r: at(X.sub(probe, 1), lambda s: parts[id(s)][0] if s is r else
                                                       picked(s, probe)), nothing)
        if not required:
            return None

        def point(step_stop, record):
            new = at(X.sub(step_stop, 1), lambda s: parts[id(s)][1] if s in required else picked(s, step_stop))
            record(new, f"one point a step: {len(required)} needed, the others' values picked")
            code = self.lower(new)
            out = [If(ir.and_(*[BinOp("==", s.stop, step_stop) for s in required]), code)] if code else []
            return out + [x for s in steppers for x in advance_when(s, BinOp("==", s.stop, step_stop))]
        return point

    def whole_walk(self, i, ext, body, found, line):
        """A lone fiber's entries then its fill (a SparseList's ``Sequence``: its stepper up to one past its last
        entry, then the fill), beside Lookups only, whose gaps and fill all make one idempotent update: the walk
        of its positions over the whole extent, the update made once where the extent has more coordinates than
        entries (:mod:`.idempotent_gaps`). Neither the phase's stop nor the fill phase is lowered: a row's max
        reads no coordinate of the row. None where it does not apply."""
        seqs = [l for l in found if isinstance(l, Sequence)]
        if len(seqs) != 1 or any(not isinstance(l, (Sequence, Lookup)) for l in found):
            return None
        phases = seqs[0].phases
        s = phases[0].body if len(phases) == 2 else None
        if not (isinstance(s, Stepper) and s.positions is not None and phases[0].stop is s.positions.last
                and isinstance(phases[1].body, Fill) and phases[1].stop is None):
            return None
        lookups = [l for l in found if isinstance(l, Lookup)]
        new = replace_looplets(body, i, lambda l: s if l is seqs[0] else l, only=(Sequence,))
        tail = replace_looplets(body, i, lambda l: phases[1].body.value if l is seqs[0] else l, only=(Sequence,))
        return self.lower_positions(i, ext, new, [s, *lookups], line, tail=(tail, body))

    def lower_positions(self, i, ext, body, found, line, tail=None):
        """Finch.jl's single-stepper fast path: ``while (q < q_end) { j = idx[q]; body; q++ }``.

        Applies when exactly one looplet on ``i`` is a Stepper, it has
        :class:`~compiler.looplets.looplets.Positions` and Spike chunks, every other
        looplet is a Lookup, and the program over the stepper's fill region
        simplifies to ``pass`` (so skipping the gaps is exact). The walk needs no
        min and no compare per entry: the end position is found once, by a search
        only when the extent cuts the fiber (``stop < last``), and the seek is skipped
        when the extent starts at the fiber's first possible coordinate.
        Where the gaps make one idempotent update, it is made once after the walk where the extent has
        more coordinates than the walk has entries (:mod:`.idempotent_gaps`); ``tail``, the body with
        the fill past the fiber's last entry and the body with the whole sequence (:meth:`whole_walk`), must
        then make the same update.
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
        filled = replace_looplets(body, i, lambda l: unshift(chunk.body).value if l is s else l, only=(Stepper,))

        def at_gap(name):
            gap = replace_looplets(filled, i, lambda l: l.body(Var(name)) if isinstance(l, Lookup) else l)
            return gap, simplify(gap, None, (FILL_WRITE,), self.facts)   # fill into a sparse output: a no-op there too
        gap, done = at_gap("__gap")
        once, counting = None, False
        if not is_pass(done):
            # (the same idempotent update at every gap: once, where the extent has more coordinates than entries;
            # or at each gap's own coordinate: after the loop around the walks, where one of them had a gap)
            once = gap_once(done, at_gap("__gap_again")[1], body, i)
            counting = once is None
        if tail is not None:
            past = replace_looplets(tail[0], i, lambda l: l.body(Var("__gap")) if isinstance(l, Lookup) else l)
            past = simplify(past, None, (FILL_WRITE,), self.facts)
            # (a counted update's element is a sub-fiber made anew at each gap: compared by what it is; gaps and
            # a fill that do nothing are walked over whole by a flat walk only: Positions.walks_whole)
            if is_pass(done) and not (is_pass(past) and P.walks_whole) or \
                    not is_pass(done) and (update_key(past) != update_key(done) if counting else past != once):
                return None
        counted = plan_counted(self, i, ext, lambda name: at_gap(name)[1], body, done) if counting else None
        if counting and counted is None:
            return None
        out = []
        if not _at(ext.start, s) and id(s) not in getattr(ext, "at_start", ()):
            out.extend(s.seek(ext.start))
        # (a name of its own for the search below to narrow; without one, compiler.imperative.copies
        # gives it back to the fiber's q_stop)
        q_end = Var(self.fresh(f"{P.q.name}_end"))
        out.append(Declare(q_end, "int64", P.q_stop))
        if getattr(ext, "merged", False):
            # (the tail of a merge: no block copy, whose count and test per row cost more than the
            # rare long tail saves; CSR + CSR was 1.1x slower with it)
            self.merged_walks.add(q_end.name)
        if not X.prove_le(P.last, ext.stop):
            out.append(If(BinOp("<", ext.stop, P.last), P.search(q_end, ext.stop)))
        if once is not None:
            missing = Var(self.fresh(f"{i.name}_missing"))
            out.append(Declare(missing, "int64", X.sub(X.sub(ext.stop, ext.start), X.sub(q_end, P.q))))
        if counted is not None:
            out.extend(counted.walked())

        def walk_positions(b, first=False):
            """``while (q < q_end) { j = idx[q]; body; q++ }`` for body ``b``."""
            j = Var(self.fresh(i.name))
            new = replace_looplets(b, i, lambda l: unshift(chunk.tail) if l is s else
                                    (l.body(j) if isinstance(l, Lookup) else l))
            new = substitute(new, {i: Value(j, "int64")})
            if first:
                if tail is not None:
                    self.record("lower:Sequence", tail[1], b, note=self._note(
                        "the entries and the fill past them as one walk", i, ext,
                        "the fill past the last entry makes the gaps' update"))
                self.record("lower:Stepper", b, new,
                            note=self._note("one stepper: while loop over its stored positions", i, ext))
                gaps = ("pass" if once is None and counted is None else "made once after the walk" if counted is None
                        else f"counted: made after the loop, where {counted.entries}[{i.name}] < {counted.walks}")
                self.record("lower:Spike", gap, new,
                            note=self._note("body + tail per position", i, ext,
                                            f"body over the gaps is {gaps}, tail at [{j}, {j} + 1)"))
            inner = self.lower(new)
            if not inner and not first:
                return []
            # a ShortCircuitScalar's remainder walks on from the current position
            split = self.scalars.short_circuit(i, b, walk_positions, line) if inner else []
            count = counted.count(j) if counted is not None else []
            loop = While(BinOp("<", P.q, q_end), [*split, Declare(j, "int64", P.coord(P.q)), *inner, *count, *s.next])
            if first and not split:   # (q ends at q_end: the first entry at or past the stop, or none)
                self.walks[id(loop)] = (loop, (s,), ext.stop)
            return [loop]
        out.extend(walk_positions(body, first=True))
        if counted is not None:
            self.record("lower:Spike", gap, done, note=self._note(
                "the gaps' update counted", i, ext, f"idempotent, made after the loop around the walks where "
                f"{counted.entries}[{i.name}] < {counted.walks}: a walk that had a gap at {i.name}"))
        if once is None:
            return out
        if all(adds_by_count(a) for a in updates_of(once)):
            # (a sum's gaps add the fill once per gap: a loop over their count, which integrate multiplies out)
            summed = added_per_gap(once, Index(self.fresh(f"{i.name}_gap")), Const(0, "int64"), missing)
            self.record("lower:Spike", gap, summed, note=self._note(
                "the gaps' update once", i, ext, f"a sum: the fill added {missing} times, the extent's "
                                                 "coordinates less the entries walked"))
            return out + self.lower(summed)
        # (recorded after the walk's steps: a looplet's tag names the first step that lowers it, the walk's)
        self.record("lower:Spike", gap, once, note=self._note(
            "the gaps' update once", i, ext, f"idempotent, made where {missing} > 0: the extent's coordinates "
                                             "less the entries walked"))
        return out + [If(BinOp(">", missing, Const(0, "int64")), self.lower(once))]

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
