"""Peephole cleanup of generated imperative IR: known flags folded, overwritten stores dropped.

Level protocols write code that is right in every context and redundant in many: a
sparse output's update sets a dirty flag and then tests it (``dirty = true; if
(dirty) {...}``), and a fresh output slot is set to the fill just before its value
is stored. The C compiler would fold both; the students reading the C should not
have to. Nine rewrites, each exact:

* :func:`fold_flags`: an ``if`` on a boolean local whose value is known there (set by
  a constant in the same block, with nothing in between assigning it) becomes the
  branch that runs; a flag that is then never read loses its declaration and
  assignments;
* :func:`drop_unused_locals`: a local nothing reads (a merge case's coordinate in a
  phase that stores only values) is not declared;
* :func:`drop_overwritten_stores`: ``b[i] = x; b[i] = y;`` (adjacent, and ``y`` does
  not read ``b``) keeps only the second store;
* :func:`drop_dead_assignments`: ``n = x; ...; n = y;`` (nothing between reads ``n``)
  keeps only the second assignment;
* :func:`~compiler.imperative.deadstores.drop_dead_stores`: an assignment to a local that
  nothing reads before the local's scope ends or it is set again (``i = phase_stop;`` at the
  end of a merge that no phase follows) goes;
* :func:`drop_idle_loops`: a ``while`` loop that only advances locals of its block that
  nothing reads after it (``while (j < n) { j += 1; }``, where no case of the rest of
  ``j``'s universe does anything) is dropped;
* :func:`drop_empty`: a ``for`` loop or an ``if`` left with nothing in it once the locals it
  declared were dropped (a phase of rows walked for nothing: ``for (j = 0; j < 3; j++) { int k = 0; }``)
  goes, and so does an empty ``else``;
* :func:`drop_unread_scratch`: a scratch array nothing reads (the bitmap of a workspace
  whose producer lists each coordinate once, so nothing tests it) is not allocated, and
  the stores into it go; a ``for`` loop left with nothing to do goes too;
* :func:`reuse_declared`: a second declaration of a local in the same C scope (with
  the same type) becomes an assignment.

Two more are the lowering's to call. :func:`first_grows` marks the growths of output
buffers that are still empty (C allocates them without testing a capacity known to be 0).
:func:`reuse_dead_locals` runs after the SIMD pass has placed its pragmas: a loop's local
that would hide a dead local of the same name outside assigns that one.

>>> from compiler.imperative.ir import Var, Declare, Assign, If, Store, Const, Load
>>> d = Var("dirty")
>>> body = [Declare(d, "bool", Const(False, "bool")), Store("v", 0, Const(0.0, "float64")),
...         Store("v", 0, Load("w", 3)), Assign(d, Const(True, "bool")), If(d, [Store("idx", 0, 3)])]
>>> for s in cleanup(body):
...     print(str(s).strip())
v[0] = w[3];
idx[0] = 3;
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import replace

from .deadstores import drop_dead_stores
from .ir import (Allocate, Assign, BinOp, Block, Break, BufferArg, Comment, CompoundAssign, Const, Declare, For, Grow, If, Load,
                 Pragma, Prefetch, Store, Tagged, UnOp, Var, View, While)
from .traverse import map_bodies, pure, statements, untagged, var_names, walk


def assigns(s, name: str) -> bool:
    """Whether ``s`` (or a statement in it) declares or assigns the local ``name``."""
    return any(isinstance(n, (Assign, CompoundAssign)) and n.target.name == name
               or isinstance(n, Declare) and n.var.name == name for n in statements(s))


def _assigned(nodes) -> set:
    """The locals that the IR ``nodes`` (a walk) declare or assign: those :func:`assigns` finds."""
    return {n.target.name if isinstance(n, (Assign, CompoundAssign)) else n.var.name
            for n in nodes if isinstance(n, (Assign, CompoundAssign, Declare))}


def _flag_value(cond, known: dict):
    """The value of ``cond`` if it is a known flag or its negation, else None."""
    if isinstance(cond, Var) and cond.name in known:
        return known[cond.name]
    if isinstance(cond, UnOp) and cond.op == "!" and isinstance(cond.operand, Var) and cond.operand.name in known:
        return not known[cond.operand.name]
    return None


def _fold_cond(cond, known: dict):
    """``cond`` with the known flags of its ``&&``/``||`` chain folded away: a sparse output's
    append tests ``dirty && v != fill`` where ``dirty`` was just set (its value folds to ``v != fill``).

    >>> print(_fold_cond(BinOp("&&", Var("dirty"), BinOp("!=", Var("v"), Var("z"))), {"dirty": True}))
    v != z
    """
    if isinstance(cond, BinOp) and cond.op in ("&&", "||"):
        left, right = _fold_cond(cond.left, known), _fold_cond(cond.right, known)
        absorbing = cond.op == "||"    # (true absorbs ||, false absorbs &&)
        for side, other in ((left, right), (right, left)):
            v = _flag_value(side, known) if not isinstance(side, Const) else _bool_const(side)
            if v is absorbing:
                return Const(absorbing, "bool")
            if v is (not absorbing):
                return other
        return cond if (left, right) == (cond.left, cond.right) else replace(cond, left=left, right=right)
    return cond


def _bool_const(e):
    return e.value if isinstance(e, Const) and isinstance(e.value, bool) else None


def _fold(stmts, known: dict) -> list:
    out = []
    for s in stmts:
        if isinstance(s, Declare) and s.dtype == "bool" and _bool_const(s.init) is not None:
            known[s.var.name] = _bool_const(s.init)
            out.append(s)
            continue
        if isinstance(s, Assign) and _bool_const(s.value) is not None:
            known[s.target.name] = _bool_const(s.value)
            out.append(s)
            continue
        if isinstance(s, If):
            cond = _fold_cond(s.cond, known)
            s = s if cond is s.cond else replace(s, cond=cond)
            v = _flag_value(s.cond, known) if not isinstance(s.cond, Const) else _bool_const(s.cond)
            if v is True:
                out += _fold(s.then.body, known)
                continue
            if v is False:
                out += _fold(s.otherwise.body, known) if s.otherwise is not None else []
                continue
            # (each branch on its own copy of what is known)
            s = map_bodies(s, lambda body: _fold(body, dict(known)))
        elif isinstance(s, (For, While)):
            s = map_bodies(s, lambda body: _fold(body, {}))   # a body may run many times
        elif isinstance(s, (Allocate, Tagged, Block)):
            # straight-line containers: what they know afterwards is already in `known`
            out.append(map_bodies(s, lambda body: _fold(body, known)))
            continue
        if known:
            for name in _assigned(walk(s)) & known.keys():   # (one walk, not one a flag)
                del known[name]
        out.append(s)
    return out


def _reads(nodes) -> set:
    """Names read by the expressions of ``nodes`` (every node of some statements)."""
    out = set()
    for n in nodes:
        if isinstance(n, CompoundAssign):
            out.add(n.target.name)   # x op= v reads x
        fields = _EXPR_FIELDS.get(type(n))
        if fields is None:
            fields = _expr_fields(type(n))
        for field in fields:
            e = getattr(n, field, None)
            if e is not None and not isinstance(e, (Block, tuple)) and hasattr(e, "__dataclass_fields__"):
                out |= var_names(e)
    return out


#: the fields of IR nodes that hold expressions a statement reads
_READ_FIELDS = ("cond", "value", "index", "start", "stop", "init", "needed", "length", "offset")
_EXPR_FIELDS: dict = {}   # a node type -> those of _READ_FIELDS it may have


def _expr_fields(tp) -> tuple:
    """The names of :data:`_READ_FIELDS` a node of type ``tp`` may have: all of them but, for a
    dataclass that answers no attribute itself, those neither its fields nor its class has."""
    known = getattr(tp, "__dataclass_fields__", None)
    if known is None or hasattr(tp, "__getattr__"):
        found = _READ_FIELDS
    else:
        found = tuple(f for f in _READ_FIELDS if f in known or hasattr(tp, f))
    _EXPR_FIELDS[tp] = found
    return found


def _drop_locals(stmts, unread: set) -> list:
    """``stmts`` without the declarations of, and assignments to, the locals in ``unread``."""
    out = []
    for s in stmts:
        if isinstance(s, Declare) and s.var.name in unread or isinstance(s, Assign) and s.target.name in unread:
            continue
        out.append(map_bodies(s, lambda body: _drop_locals(body, unread)))
    return out


def drop_unused_locals(stmts) -> list:
    """``stmts`` without locals that nothing reads: their declarations and assignments go
    (when computing the value has no other effect). A local is looked for where C sees it,
    after its declaration in the same block, since separate blocks may reuse a name.

    >>> from compiler.imperative.ir import Var, Declare, Store, Load
    >>> j, jA = Var("j"), Var("jA")
    >>> body = [Declare(jA, "int64", Load("idx", 0)), Declare(j, "int64", jA), Store("v", 0, 1.0)]
    >>> [str(s).strip() for s in drop_unused_locals(body)]
    ['v[0] = 1.0;']
    """
    return _drop_unused_locals(stmts, {})


def _drop_unused_locals(stmts, memo: dict, outer: tuple[Counter, Counter] | None = None) -> list:
    """``outer``: what the statements after ``stmts`` read (and keep), when ``stmts`` is the body of a
    tag or a block, which C does not see: their declarations are visible after them."""
    out = _cleaned_bodies(list(stmts), memo, outer)
    # What the statements after a declaration read (and assign by a computation with another effect)
    # is the sum of each one's summary, computed once per statement and subtree: walking the rest
    # again for every declaration of every block took minutes on deep looplet nests.
    after_reads, after_kept = (Counter(), Counter()) if outer is None else (outer[0].copy(), outer[1].copy())
    k = len(out) - 1
    while k >= 0:   # from the last declaration up: dropping one may leave an earlier one unread
        s = out[k]
        if isinstance(s, Declare) and pure(s.init) and not after_reads[s.var.name] and not after_kept[s.var.name]:
            name = s.var.name
            for j in range(k + 1, len(out)):
                if out[j] is not None and name in _summary(out[j], memo)[2]:
                    reads, kept, _, _ = _summary(out[j], memo)   # (the assignments go, and what their values read)
                    after_reads.subtract(reads)
                    after_kept.subtract(kept)
                    out[j:j + 1] = _drop_locals([out[j]], {name}) or [None]
                    if out[j] is not None:
                        reads, kept, _, _ = _summary(out[j], memo)
                        after_reads.update(reads)
                        after_kept.update(kept)
            out[k] = None
        else:
            reads, kept, _, _ = _summary(s, memo)
            after_reads.update(reads)
            after_kept.update(kept)
        k -= 1
    return [s for s in out if s is not None]


def _cleaned_bodies(stmts: list, memo: dict, outer) -> list:
    """``stmts`` with the statement lists inside each cleaned: a loop's or a branch's alone (a scope of
    its own in C), a tag's or a block's knowing what the statements after it read."""
    if not any(isinstance(s, (Tagged, Block)) for s in stmts):
        return [map_bodies(s, lambda body: _drop_unused_locals(body, memo)) for s in stmts]
    out = list(stmts)
    reads, kept = (Counter(), Counter()) if outer is None else (outer[0].copy(), outer[1].copy())
    for k in range(len(out) - 1, -1, -1):
        s = out[k]
        if isinstance(s, (Tagged, Block)):
            after = (reads.copy(), kept.copy())
            out[k] = map_bodies(s, lambda body: _drop_unused_locals(body, memo, after))
        else:
            out[k] = map_bodies(s, lambda body: _drop_unused_locals(body, memo))
        r, kp, _, _ = _summary(stmts[k], memo)   # (what it read before its cleaning: at least as much)
        reads.update(r)
        kept.update(kp)
    return out


def _summary(s, memo: dict) -> tuple[set, set, set, bool]:
    """``(read, kept, assigned, breaks)`` of ``s`` and everything in it: the locals its expressions
    read, those it assigns a value whose computation may do more than compute it, those it declares
    or assigns, and whether a ``break`` is in it. Kept in ``memo`` by identity (with ``s``, so the
    identity stays its own)."""
    got = memo.get(id(s))
    if got is not None:
        return got[1]
    if type(s) in _PLAIN:
        # (its own fields alone: what its expressions' nodes read is in what the fields read, and no
        # statement is in them; a copy without its bodies, walked, was most of this pass's time)
        reads = _reads((s,))
        kept = {s.target.name} if type(s) is Assign and not pure(s.value) else set()
        assigned = {s.target.name} if type(s) in (Assign, CompoundAssign) else \
            {s.var.name} if type(s) is Declare else set()
        breaks = type(s) is Break
    else:
        nodes = list(walk(map_bodies(s, lambda body: [])))
        reads = _reads(nodes)
        kept = {n.target.name for n in nodes if isinstance(n, Assign) and not pure(n.value)}
        assigned = {n.target.name for n in nodes if isinstance(n, (Assign, CompoundAssign))} | \
            {n.var.name for n in nodes if isinstance(n, Declare)}
        breaks = any(isinstance(n, Break) for n in nodes)
    # (the sets above are this call's own: the children's are added in place, not copied per child)
    for body in _bodies(s):
        for c in body:
            r, k, a, b = _summary(c, memo)
            reads |= r
            kept |= k
            assigned |= a
            breaks = breaks or b
    memo[id(s)] = (s, (reads, kept, assigned, breaks))
    return reads, kept, assigned, breaks


#: the statements whose expressions all sit in fields :func:`_reads` reads (the others hold a target, a
#: loop's index or statement lists)
_PLAIN = frozenset((Allocate, Assign, Block, Break, Comment, CompoundAssign, Declare, For, Grow, If, Pragma, Prefetch,
                    Store, Tagged, View, While))


def _bodies(s) -> list:
    """The statement lists directly inside ``s`` (those :func:`map_bodies` maps)."""
    found = []
    map_bodies(s, lambda body: found.append(body) or body)
    return found


def fold_flags(stmts) -> list:
    """``stmts`` with ifs on known boolean flags replaced by their taken branch, and flags
    nobody reads any more removed."""
    folded = _fold(list(stmts), {})
    nodes = list(statements(tuple(folded)))   # (one walk: a kernel of many flags made this quadratic)
    flags = {n.var.name for n in nodes if isinstance(n, Declare) and n.dtype == "bool"
             and _bool_const(n.init) is not None}
    assigned_other = {n.target.name for n in nodes if isinstance(n, (Assign, CompoundAssign))
                      and n.target.name in flags and _bool_const(n.value) is None}
    unread = flags - assigned_other
    if unread:   # (what the expressions read is asked only where a flag may go)
        memo: dict = {}
        for s in folded:   # (by statement summaries: no walk through the expressions' nodes)
            unread -= _summary(s, memo)[0]
    return _drop_locals(folded, unread) if unread else folded


def drop_overwritten_stores(stmts) -> list:
    """``stmts`` without a store that a later statement of the same block overwrites before anything
    reads it: the next statement, or one after statements that neither mention the array nor change
    the store's index nor leave the block (a ``break``): a fiber's end ``C0_pos[1] = C0_nnz;`` stored
    after each of two loops appending the fiber (a concatenation), of which the last counts.

    >>> from compiler.imperative.ir import Var, Store, Assign, For
    >>> n = Var("nnz")
    >>> body = [Store("pos", 1, n), For(Var("p"), 0, 4, [Assign(n, n + 1)]), Store("pos", 1, n)]
    >>> [str(s).strip().splitlines()[0] for s in drop_overwritten_stores(body)]
    ['for (int64 p = 0; p < 4; p++) {', 'pos[1] = nnz;']
    """
    out = []
    for s in stmts:
        s = map_bodies(s, drop_overwritten_stores)
        # (the next statement may be a store in a provenance tag: the statement computing the
        # expression, tagged with its nodes, overwrites the fill an output's append put there)
        if out and _overwrites(out[-1], _first_of_tags(s)):
            out[-1] = s
            continue
        out.append(s)
    return _without_overwritten(out)


def _overwrites(earlier, s) -> bool:
    """Whether ``s`` stores ``earlier``'s slot (a store) without reading its array."""
    return (isinstance(earlier, Store) and isinstance(s, Store) and s.op is None and earlier.buffer == s.buffer
            and earlier.index == s.index and not any(isinstance(n, Load) and n.buffer == s.buffer
                                                     for n in walk((s.value, s.index))))


def _without_overwritten(stmts: list) -> list:
    """``stmts`` without each store a later one of their scope overwrites (provenance tags spliced
    out: each loop's tag holds its fiber's end), the statements between neither mentioning its
    array (a load, a growth, a view, a pragma), nor assigning what its index reads, nor breaking out."""
    flat = untagged(stmts)
    if sum(isinstance(s, Store) for s in flat) < 2:
        return stmts
    dead, touched = set(), {}
    for k, s in enumerate(flat):
        if not isinstance(s, Store) or not pure(s.value):
            continue
        index_vars = var_names(s.index)
        for m in range(k + 1, len(flat)):
            if _overwrites(s, flat[m]):
                dead.add(k)
                break
            if m not in touched:   # (each statement walked once, however many stores look past it)
                touched[m] = _touches(flat[m])
            arrays, assigned, breaks = touched[m]
            if breaks or s.buffer in arrays or index_vars & assigned:
                break
    return _without_positions(stmts, dead) if dead else stmts


def _touches(t) -> tuple[set, set, bool]:
    """``(arrays, assigned, breaks)`` of ``t`` and everything in it: the arrays it mentions (a load,
    a store, a growth, a view, a pragma's words, a name), the locals it declares or assigns (a
    loop's index too), and whether a ``break`` is in it."""
    arrays, assigned, breaks = set(), set(), False
    for n in walk(t):
        arrays |= {x for x in (getattr(n, "buffer", None), getattr(n, "of", None)) if isinstance(x, str)}
        if isinstance(n, Pragma):
            arrays |= set(_WORD.findall(n.text))
        elif isinstance(n, Var):
            arrays.add(n.name)   # (an array passed by name)
        elif isinstance(n, (Assign, CompoundAssign)):
            assigned.add(n.target.name)
        elif isinstance(n, (Declare, For)):
            assigned.add(n.var.name)
        breaks = breaks or isinstance(n, Break)
    return arrays, assigned, breaks


_WORD = re.compile(r"[A-Za-z_]\w*")


def _first_of_tags(s):
    """``s``, or for a provenance tag the first statement inside it (and inside its inner tags)."""
    while isinstance(s, Tagged) and s.body.body:
        s = s.body.body[0]
    return s


def drop_dead_assignments(stmts) -> list:
    """``stmts`` without an assignment to a local that a later assignment in the same block
    replaces before anything reads it (``n = size + 1; ...; n = kept + 1;``). Nothing in
    between may leave the block early (a ``break``).

    >>> from compiler.imperative.ir import Var, Assign, Store, Load
    >>> n = Var("n")
    >>> body = [Assign(n, Var("size") + 1), Store("v", 0, Load("w", 0)), Assign(n, Var("kept") + 1)]
    >>> [str(s).strip() for s in drop_dead_assignments(body)]
    ['v[0] = w[0];', 'n = kept + 1;']
    """
    return _drop_dead_assignments(stmts, {})


def _drop_dead_assignments(stmts, memo: dict) -> list:
    out = [_inside_scope(s, lambda body: _drop_dead_assignments(body, memo)) for s in stmts]
    flat = untagged(out)
    if not any(isinstance(s, Assign) for s in flat):
        return out
    summaries = [_summary(t, memo) for t in flat]   # (each subtree once, not once per enclosing block)
    dead = _dead_positions(flat, [r for r, _, _, _ in summaries], [b for _, _, _, b in summaries])
    return _without_positions(out, dead) if dead else out


def _dead_positions(flat: list, reads: list, leaves: list) -> set:
    """The positions in ``flat`` of the assignments a later one replaces before anything reads
    them, given what each statement reads and whether it can leave the block (a ``break``)."""
    dead = set()
    for k, s in enumerate(flat):
        if not isinstance(s, Assign) or not pure(s.value):
            continue
        name = s.target.name
        for m in range(k + 1, len(flat)):
            t = flat[m]
            if isinstance(t, Assign) and t.target.name == name and name not in reads[m]:
                dead.add(k)
                break
            if name in reads[m] or leaves[m]:
                break
    return dead


def _without_positions(stmts: list, dead: set) -> list:
    """``stmts`` without the statements at the positions ``dead`` of ``untagged(stmts)``."""
    counter = itertools.count()

    def keep(stmts) -> list:   # in untagged's order, so positions match
        kept = []
        for s in stmts:
            if isinstance(s, (Tagged, Block)):
                kept.append(map_bodies(s, keep))
            elif next(counter) not in dead:
                kept.append(s)
        return kept
    return keep(stmts)


def _inside_scope(s, f):
    """``s`` with ``f`` applied to the statement lists of the scopes it opens (a loop's, a
    branch's, an allocation's body), looking through tags and blocks, which share this one."""
    if isinstance(s, (Tagged, Block)):
        return map_bodies(s, lambda body: [_inside_scope(x, f) for x in body])
    return map_bodies(s, f)


def _idle(loop, locals_: set) -> bool:
    """Whether ``loop`` is a ``while`` whose body only assigns (computed without effects) the
    locals ``locals_`` of its block."""
    body = untagged(loop.body.body) if isinstance(loop, While) else []
    return bool(body) and all(isinstance(s, (Assign, CompoundAssign)) and s.target.name in locals_
                              and pure(s.value) for s in body)


def _nothing(block) -> bool:
    """Whether ``block`` (None: no block) holds nothing but comments."""
    return block is None or all(isinstance(c, Comment) for c in untagged(block.body))


def _empty(s) -> bool:
    """Whether ``s`` is a ``for`` loop or an ``if`` with nothing but comments in it (its bounds or
    condition computed without effects)."""
    if isinstance(s, For):
        return _nothing(s.body) and pure(s.start) and pure(s.stop)
    if isinstance(s, If):
        return _nothing(s.then) and _nothing(s.otherwise) and pure(s.cond)
    return False


def drop_empty(stmts) -> list:
    """``stmts`` without the ``for`` loops and the ``if`` statements with nothing but comments in them
    (their bounds and conditions computed without effects), inner ones first.

    >>> from compiler.imperative.ir import Var, For, If, Comment, Store
    >>> i, j = Var("i"), Var("j")
    >>> body = [For(i, 0, Var("n"), [For(j, 0, 3, [Comment("the fill")])]), If(Var("go"), []),
    ...         If(Var("ok"), [Store("v", 0, 1.0)], [Comment("nothing to do")])]
    >>> for s in drop_empty(body):
    ...     print(s)
    if (ok) {
        v[0] = 1.0;
    }
    """
    out = []
    for s in stmts:
        s = map_bodies(s, drop_empty)
        if isinstance(s, If) and s.otherwise is not None and _nothing(s.otherwise):
            s = replace(s, otherwise=None)      # (an ``else { }``)
        loop = untagged([s])
        if not (len(loop) == 1 and _empty(loop[0])):
            out.append(s)
    return out


def drop_repeated_conditions(stmts) -> list:
    """``stmts`` where an ``if`` whose one statement (through tags) is an ``if`` on the same condition keeps
    the inner one's then-branch alone: nothing runs between the two tests, so the inner is always true
    (a phase's bound checked by the loop around it and again by its first looplet).

    >>> from compiler.imperative.ir import BinOp, Var, If, Store
    >>> go = BinOp("<", Var("j"), Var("n"))
    >>> for s in drop_repeated_conditions([If(go, [If(go, [Store("v", 0, 1.0)], [Store("v", 0, 2.0)])])]):
    ...     print(s)
    if (j < n) {
        v[0] = 1.0;
    }
    """
    out = []
    for s in stmts:
        s = map_bodies(s, drop_repeated_conditions)
        if isinstance(s, If):
            then = _without_if_on(s.then, s.cond)
            s = s if then is s.then else replace(s, then=then)   # (kept as it was: later passes' memos are by identity)
        out.append(s)
    return out


def _without_if_on(block, cond):
    """``block`` with its one statement, where that is an ``if`` on ``cond`` (inside tags), replaced by its
    then-branch."""
    if len(block.body) != 1:
        return block
    (s,) = block.body
    if isinstance(s, Tagged):
        inner = _without_if_on(s.body, cond)
        return block if inner is s.body else replace(block, body=(replace(s, body=inner),))
    if isinstance(s, If) and s.cond == cond:
        return s.then
    return block


def drop_idle_loops(stmts) -> list:
    """``stmts`` without the ``while`` loops that compute nothing the kernel uses: their
    bodies only advance locals of this block, which nothing after the loop reads. (A
    generated loop always ends: its condition bounds the counters it advances.)

    >>> from compiler.imperative.ir import Var, Declare, While, BinOp, CompoundAssign, Store
    >>> j = Var("j")
    >>> body = [Declare(j, "int64", 0), Store("v", j, 1.0), While(BinOp("<", j, Var("n")), [CompoundAssign("+", j, 1)])]
    >>> [str(s).strip() for s in drop_idle_loops(body)]
    ['int64 j = 0;', 'v[j] = 1.0;']
    """
    return _drop_idle_loops(stmts, {})


def _drop_idle_loops(stmts, memo: dict) -> list:
    """:func:`drop_idle_loops`, what each statement reads kept in ``memo`` (:func:`_summary`): a loop of an
    inner block looked past the same statements as the loops around it, each level walking them again."""
    out = [map_bodies(s, lambda body: _drop_idle_loops(body, memo)) for s in stmts]
    kept, locals_ = [], set()
    for k, s in enumerate(out):
        locals_ |= _declared_here(s)
        loop = untagged([s])
        if len(loop) == 1 and _idle(loop[0], locals_):
            advanced = {a.target.name for a in untagged(loop[0].body.body)}
            if not any(advanced & _summary(t, memo)[0] for t in out[k + 1:]):
                continue
        kept.append(s)
    return kept


def drop_unread_scratch(stmts) -> list:
    """``stmts`` without the scratch arrays that nothing reads: each one's allocation and
    the stores into it go, then ``for`` loops left with nothing to do.

    >>> from compiler.imperative.ir import Allocate, Store, Load, For, Var, Const
    >>> q = Var("q")
    >>> body = [Allocate("seen", "bool", 8, Const(False, "bool"), [
    ...     For(q, 0, 8, [Store("seen", q, Const(True, "bool")), Store("v", q, Load("x", q))])])]
    >>> for s in drop_unread_scratch(body):
    ...     print(str(s).strip())
    for (int64 q = 0; q < 8; q++) {
        v[q] = x[q];
    }
    """
    if not any(isinstance(n, Allocate) for n in statements(tuple(stmts))):
        return list(stmts)   # (no scratch array: its expressions are not walked)
    nodes = list(walk(tuple(stmts)))
    read = ({n.buffer for n in nodes if isinstance(n, (Load, Prefetch, BufferArg))} | {n.of for n in nodes if isinstance(n, View)}
            | {n.buffer for n in nodes if isinstance(n, Store) and not pure(n.value)})
    unread = {n.buffer for n in nodes if isinstance(n, Allocate)} - read
    return _drop_scratch(list(stmts), unread) if unread else list(stmts)


def _drop_scratch(stmts, unread: set) -> list:
    out = []
    for s in stmts:
        if isinstance(s, Store) and s.buffer in unread:
            continue
        if isinstance(s, Allocate) and s.buffer in unread:
            out += _drop_scratch(s.body.body, unread)   # an allocation shares its parent's scope
            continue
        s = map_bodies(s, lambda body: _drop_scratch(body, unread))
        if isinstance(s, For) and not drop_unused_locals([c for c in untagged(s.body.body)
                                                           if not isinstance(c, Comment)]):
            continue   # it only stored into the dropped arrays
        out.append(s)
    return out


def _declared_here(s) -> set:
    """The locals ``s`` declares in the scope it is in (a tag's statements share it)."""
    if isinstance(s, Declare):
        return {s.var.name}
    if isinstance(s, Tagged):
        return set().union(*[_declared_here(t) for t in s.body.body])
    return set()


def reuse_declared(stmts, declared: dict | None = None) -> list:
    """``stmts`` where a local declared again in the same C scope with the same type is
    assigned instead (two loops over the universe of ``i`` in one block each start
    ``int64_t i = 0;``, which C refuses). Provenance tags, blocks and scratch arrays
    share their parent's scope; loop and branch bodies open their own."""
    declared = {} if declared is None else declared
    out = []
    for s in stmts:
        if isinstance(s, Declare):
            if declared.get(s.var.name) == s.dtype and s.init is not None:
                s = Assign(s.var, s.init)
            else:
                declared[s.var.name] = s.dtype
        elif isinstance(s, (Tagged, Allocate, Block)):
            s = map_bodies(s, lambda body: reuse_declared(body, declared))
        else:
            s = map_bodies(s, reuse_declared)   # a scope of its own: it may shadow
        out.append(s)
    return out


def first_grows(stmts, known: dict | None = None) -> list:
    """``stmts`` with the growths of output buffers that run before anything else grew them
    marked ``first``: such a buffer is still empty, so C allocates it without testing its
    capacity (``if (1 > C1_pos_cap)`` right after ``C1_pos_cap = 0`` is always true). Only
    the kernel's straight-line start is searched; a loop or a branch ends nothing, but any
    growth inside one counts. ``known`` maps int locals (an output's position counter) to
    their values at the start; a sum still reading one there folds it in: ``pa0 + na`` with
    ``pa0`` at 0 is ``na``.

    >>> from compiler.imperative.ir import Grow, Var
    >>> [str(s).strip() for s in first_grows([Grow("a_idx", Var("pa") + Var("n")), Grow("a_idx", 9)], {"pa": 0})]
    ['grow a_idx to n; (first: empty until now)', 'grow a_idx to 9;']
    """
    stmts = list(stmts)
    known, grown = dict(known or {}), set()
    growing = {n.buffer for n in statements(tuple(stmts)) if isinstance(n, Grow)}

    def visit(stmts) -> list:
        out = []
        for k, s in enumerate(stmts):
            if not known and grown >= growing:   # (nothing left to mark: the rest stays as it is)
                return out + list(stmts[k:])
            if isinstance(s, (Allocate, Tagged, Block)):   # straight on, in the same scope
                # (the visit of its body has walked each of its statements: not walked again here,
                # which at every level of nested tags was quadratic in their depth)
                out.append(map_bodies(s, visit))
                continue
            if isinstance(s, Grow) and s.buffer not in grown:
                s = replace(s, needed=_known_sum(s.needed, known), first=True)
            elif isinstance(s, Declare) and isinstance(s.init, Const) and s.dtype == "int64":
                known[s.var.name] = s.init.value
            # (one walk a statement: a test per known local walked it once each)
            nodes = list(statements(s))
            grown.update(n.buffer for n in nodes if isinstance(n, Grow))
            for name in _assigned(nodes) & known.keys():
                del known[name]
            out.append(s)
        return out
    return visit(stmts)


def _known_sum(e, known: dict):
    """``e`` with the locals in ``known`` replaced by their values and sums with 0 folded."""
    if isinstance(e, Var) and e.name in known:
        return Const(known[e.name], "int64")
    if isinstance(e, BinOp) and e.op == "+":
        left, right = _known_sum(e.left, known), _known_sum(e.right, known)
        if isinstance(left, Const) and isinstance(right, Const):
            return Const(left.value + right.value, "int64")
        if isinstance(left, Const) and left.value == 0:
            return right
        if isinstance(right, Const) and right.value == 0:
            return left
        return BinOp("+", left, right)
    return e


def _names(node) -> set:
    return set(var_names(node))


def reads_before_set(stmts, name: str) -> bool:
    """Whether running ``stmts`` may read the value ``name`` had before them: a read that no
    declaration or plain assignment of ``name`` before it, in its own scope or one around it,
    covers. (A scratch array's body runs straight on, in the same scope.)

    >>> from compiler.imperative.ir import Var, Assign, If, Store, Load
    >>> n = Var("n")
    >>> reads_before_set([Assign(n, 1), Store("v", 0, n)], "n"), reads_before_set([If(Load("c", 0), [Assign(n, 1)]),
    ...                                                                            Store("v", 0, n)], "n")
    (False, True)
    """
    stmts = untagged(stmts)
    for k, s in enumerate(stmts):
        if name not in var_names(s):   # (neither reads nor sets it: a loop's body not searched again, remembered)
            continue
        if isinstance(s, (Declare, Assign)) and (s.var if isinstance(s, Declare) else s.target).name == name:
            value = s.init if isinstance(s, Declare) else s.value
            return value is not None and name in _names(value)
        if isinstance(s, If):
            if name in _names(s.cond) or reads_before_set(s.then.body, name) or (
                    s.otherwise is not None and reads_before_set(s.otherwise.body, name)):
                return True
        elif isinstance(s, (For, While)):
            header = (s.start, s.stop) if isinstance(s, For) else (s.cond,)
            if name in _names(header) or reads_before_set(s.body.body, name):
                return True
        elif isinstance(s, Allocate):
            return name in _names(s.length) or reads_before_set([*s.body.body, *stmts[k + 1:]], name)
        elif name in _names(s):
            return True
    return False


def _assign_declared(stmts, name: str) -> list:
    """``stmts`` with every declaration of ``name`` in them, in any scope, an assignment."""
    out = []
    for s in stmts:
        if isinstance(s, Declare) and s.var.name == name:
            s = Assign(s.var, s.init)
        out.append(map_bodies(s, lambda body: _assign_declared(body, name)))
    return out


def _in_loop(s, f):
    """``s``, a loop perhaps inside tags, with ``f`` applied to the loop's body."""
    if isinstance(s, (For, While)):
        return replace(s, body=Block(tuple(f(s.body.body))))
    return map_bodies(s, lambda body: [_in_loop(x, f) for x in body])


def reuse_dead_locals(stmts) -> list:
    """``stmts`` where a loop that declares a local (anywhere in it) that would hide one of the
    same name and type declared before the loop, in the same block, assigns that local
    instead, when nothing can tell: the loop never reads the outer value (each read comes after
    a declaration of its own), nor does anything after the loop. C's ``-Wshadow`` warns of the
    hidden name, and a reader meets one ``i`` rather than several (a workspace's producer counts
    ``i`` through a merge; the consumer's merge then takes its ``i`` from the list in each
    case). A loop with a pragma, before it or inside it, keeps its own locals: threads or SIMD
    lanes would share the outer one.

    >>> from compiler.imperative.ir import Var, Declare, For, Store, Load
    >>> i, q = Var("i"), Var("q")
    >>> body = [Declare(i, "int64", 0), Store("v", i, 1.0),
    ...         For(q, 0, 4, [Declare(i, "int64", Load("list", q)), Store("v", i, 2.0)])]
    >>> print(str(reuse_dead_locals(body)[-1]).strip())
    for (int64 q = 0; q < 4; q++) {
        i = list[q];
        v[i] = 2.0;
    }
    """
    out = [map_bodies(s, reuse_dead_locals) for s in stmts]
    declared: dict = {}
    last = None   # the statement before ``s``, inside any tags
    for k, s in enumerate(out):
        flat = untagged([s])
        # (nothing declared before the loop: nothing to look for in it)
        nodes = list(statements(flat[0])) if (declared and len(flat) == 1 and isinstance(flat[0], (For, While))
                                         and not isinstance(last, Pragma)) else ()
        if nodes and not any(isinstance(n, Pragma) for n in nodes):
            loop = flat[0]
            inner = [n for n in nodes if isinstance(n, Declare)]   # (a loop's header declares nothing)
            for name, dtype in declared.items():
                mine = [d for d in inner if d.var.name == name]
                if (mine and all(d.dtype == dtype and d.init is not None for d in mine)
                        and not reads_before_set([loop], name) and not reads_before_set(out[k + 1:], name)):
                    s = out[k] = _in_loop(s, lambda body, name=name: _assign_declared(body, name))
        for t in untagged([s]):
            if isinstance(t, Declare):
                declared[t.var.name] = t.dtype
        last = flat[-1] if flat else last
    return out


def cleanup(stmts) -> list:
    """:func:`fold_flags`, :func:`drop_repeated_conditions`, :func:`drop_unread_scratch`, :func:`drop_idle_loops`,
    :func:`drop_dead_assignments`, :func:`~compiler.imperative.deadstores.drop_dead_stores`, :func:`drop_unused_locals`,
    :func:`drop_empty` (the locals then unread dropped too), :func:`drop_overwritten_stores`, then :func:`reuse_declared`."""
    stmts = drop_idle_loops(drop_unread_scratch(drop_repeated_conditions(fold_flags(stmts))))
    memo: dict = {}   # (the statements the first leaves as they were keep their summaries for the last)
    stmts = drop_dead_stores(_drop_dead_assignments(stmts, memo))
    stmts = _drop_unused_locals(stmts, memo)
    emptied = drop_empty(stmts)
    if emptied != stmts:   # (the bounds of a dropped loop may be all that read a local)
        stmts = _drop_unused_locals(emptied, memo)
    return reuse_declared(drop_overwritten_stores(stmts))
