"""Counted loops: a ``while`` loop that only counts a position up to a fixed end is a ``for`` loop, where
that lets it run in SIMD lanes.

The looplets walk a fiber's stored positions as Finch.jl does, ``while (q < q_stop) { ...; q += 1; }``:
a walk may stop early or share its position with a merge, so it keeps its own cursor. :mod:`.vectorize`
marks only ``for`` loops, so a row's maximum over a CSR matrix ran one compare after another, each
waiting for the last, where the lattice's ``for`` loop over the same positions keeps a maximum per SIMD
lane (1.7 against 0.5 ms over 1M entries).

A ``while (q < end)`` loop is counted when its body ends with ``q += 1``, moves neither ``q`` (before
that) nor anything ``end`` reads, loads nothing in ``end``, breaks out nowhere, and nothing reads ``q``
after the loop (the cursor's final value is then no one's business). It becomes
``for (int64 p = q; p < end; p++)`` with ``q`` read as ``p`` in the body, only where :mod:`.vectorize`
would then mark it (a sum, a running max or min, a map loop): elsewhere the walk reads as it did.

>>> from compiler.imperative.ir import CompoundAssign, Declare, Load, Var, While
>>> q, end, acc = Var("qA"), Var("qA_stop"), Var("acc")
>>> walk = While(q < end, [CompoundAssign("+", acc, Load("A_val", q)), CompoundAssign("+", q, 1)])
>>> for s in counted_loops([Declare(acc, "float64", 0.0), walk], lambda base: base):
...     print(str(s).strip())
float64 acc = 0.0;
for (int64 pA = qA; pA < qA_stop; pA++) {
    acc += A_val[pA];
}
"""

from __future__ import annotations

from .copies import renamed
from .ir import BinOp, Break, CompoundAssign, Const, Declare, For, Load, Var, While
from .traverse import assigned_in, map_bodies, names_read, statements, untagged, walk
from .vectorize import extremum, map_loop, reduction

__all__ = ["counted_loops"]


def counted_loops(stmts, fresh, dtypes: dict | None = None) -> list:
    """``stmts`` with each counted ``while`` loop that would run in SIMD lanes a ``for`` loop (module
    docstring); ``fresh(base)`` names the loops' variables, ``dtypes`` the types of names declared
    outside ``stmts``."""
    walks = [s for s in statements(tuple(stmts)) if isinstance(s, While)]
    if not walks:
        return list(stmts)
    known = dict(dtypes or {})
    known.update({d.var.name: d.dtype for d in statements(tuple(stmts)) if isinstance(d, Declare)})
    # (the loops that would be counted were their cursor not read after them; where none is, the kernel's
    # statements are not walked for what each reads after it)
    counted = {id(w) for w in walks if _as_for(w, frozenset(), lambda base: base, known) is not None}
    if not counted:
        return list(stmts)
    held: set = set()
    for s in stmts:
        _hold(s, counted, held)
    return _counted(list(stmts), frozenset(), fresh, known, held)


def _hold(s, counted: set, held: set) -> bool:
    """Whether ``s`` is or holds one of the loops ``counted``; the ids of those that do added to ``held``."""
    inside = False

    def visit(body):
        nonlocal inside
        for t in body:
            inside = _hold(t, counted, held) or inside
        return body
    map_bodies(s, visit)
    if inside or id(s) in counted:
        held.add(id(s))
        return True
    return False


def _counted(stmts: list, live: frozenset, fresh, dtypes: dict, held: set) -> list:
    """``stmts``, where ``live`` are the names read after them; only the statements ``held`` (a loop to count, or
    around one) are looked into."""
    out = []
    for k, s in enumerate(stmts):
        if id(s) not in held:
            out.append(s)
            continue
        after = live | names_read(tuple(stmts[k + 1:])) if k + 1 < len(stmts) else live
        if isinstance(s, (For, While)):
            # (a loop's body runs again: what the loop reads is read after each of its statements, but for
            # the locals each iteration declares afresh before reading them)
            inner = after | (names_read(s) - _declared_first(s.body.body))
            new = map_bodies(s, lambda body: _counted(list(body), inner, fresh, dtypes, held))
            if isinstance(s, While):
                new = _as_for(new, after, fresh, dtypes) or new
            s = new
        else:
            s = map_bodies(s, lambda body: _counted(list(body), after, fresh, dtypes, held))
        out.append(s)
    return out


def _declared_first(body) -> frozenset:
    """The locals that the statements ``body`` declare (at their own level, through tags) before any of them
    reads the name."""
    seen, first = set(), set()
    for s in untagged(list(body)):
        if isinstance(s, Declare) and s.var.name not in seen:
            first.add(s.var.name)
        seen |= names_read(s)
    return frozenset(first)


def _as_for(loop: While, after: frozenset, fresh, dtypes: dict):
    """``loop`` as a ``for`` loop, or None where it is not counted or would not run in SIMD lanes."""
    cond, body = loop.cond, list(loop.body.body)
    if not (isinstance(cond, BinOp) and cond.op == "<" and isinstance(cond.left, Var)) or not body:
        return None
    q, end = cond.left, cond.right
    step = body[-1]
    if not (isinstance(step, CompoundAssign) and step.op == "+" and step.target == q
            and isinstance(step.value, Const) and step.value.value == 1):
        return None
    rest = tuple(body[:-1])
    moved = assigned_in(rest)
    if (q.name in after or q.name in moved or any(isinstance(n, Load) for n in walk(end))
            or {n.name for n in walk(end) if isinstance(n, Var)} & (moved | {q.name})
            or any(isinstance(n, Break) for n in walk(rest))):
        return None
    p = Var(fresh("p" + q.name[1:] if q.name.startswith("q") and len(q.name) > 1 else q.name + "_p"))
    counted = For(p, q, end, [renamed(s, {q.name: p.name}) for s in rest])
    if reduction(counted) is None and extremum(counted, dtypes) is None and not map_loop(counted):
        return None
    return counted
