"""A COO part walked whole: the two loops of a SparseCOO level's segment walk become one loop over
its positions, where every entry lands in the output one after the other (so the append loop
becomes block copies of a fixed number of entries, whatever the rows' lengths).

The iterator model (:mod:`compiler.lattice.seqemit`) walks a COO level's first mode by segments
of equal coordinates and its second mode through each segment. A COO vstack,
``D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)`` into COO, copies each part so::

    while (pB0 < pB0_end) {
        int64 l = (int64)B0_idx0[pB0];
        pB1 = pB0; pB1_end = pB0_seg;
        while (pB1 < pB1_end) { ...append (l, B0_idx1[pB1], B_val[pB1])...; pB1 += 1; }
        pB0 = pB0_seg; pB0_seg = pB0;
        while (pB0_seg < pB0_end && B0_idx0[pB0_seg] == B0_idx0[pB0]) pB0_seg += 1;
    }

The segments are consecutive and end at ``pB0_end``, so the inner loop's position runs through
``[pB0, pB0_end)`` in order, and within a segment ``B0_idx0[pB0] == B0_idx0[pB1]``: one loop does
the same, the row read at the entry's own position::

    pB1 = pB0;
    while (pB1 < pB0_end) { int64 l = (int64)B0_idx0[pB1]; ...append...; pB1 += 1; }

which :func:`compiler.imperative.blockcopy.block_copy` copies in blocks of :data:`CHUNK` entries
(each output array one loop a block, the bound's memcpy plus the offset of C's rows), whatever the
rows' lengths: a collapse, whose product loop appended entry by entry, ran 2x the hand-written
bound so, 1.1x now; a vstack about 1x. (The chunks bound what a chunk holding a stored fill costs:
it is copied, then appended again entry by entry.)

The outer loop's body must be just that: locals read from the segment's coordinate at ``pB0`` (and
names the loops do not change), the inner loop stepping its position by one and reading neither
``pB0``, the segment nor its end, and the step to the next segment. Anything else (an hstack,
whose rows interleave two parts' entries; a CSR output's row counts, which the block copy cannot
add up) keeps its loops, and so does a loop whose flattened form would not be a block copy.

>>> from compiler.imperative.ir import (Assign, BinOp, CompoundAssign, Declare, Grow, Load, Store,
...     Var, While)
>>> p, e, s, c, ce, n = (Var(x) for x in ("pB0", "pB0_end", "pB0_seg", "pB1", "pB1_end", "n"))
>>> inner = While(BinOp("<", c, ce), [Grow("D_idx", BinOp("+", n, 1)), Grow("D_val", BinOp("+", n, 1)),
...     Store("D_idx", n, Var("l")), Store("D_val", n, Load("B_val", c)), CompoundAssign("+", n, 1),
...     CompoundAssign("+", c, 1)])
>>> outer = While(BinOp("<", p, e), [Declare(Var("l"), "int64", Load("B0_idx0", p)),
...     Declare(c, "int64"), Declare(ce, "int64"), Assign(c, p), Assign(ce, s), inner, Assign(p, s),
...     Assign(s, p), While(BinOp("&&", BinOp("<", s, e), Load("B0_idx0", s).eq(Load("B0_idx0", p))),
...                         [CompoundAssign("+", s, 1)])])
>>> for st in flatten_segments([outer], {"B_val": "float64", "D_val": "float64"}): print(st)
int64 pB1 = pB0;
while (pB1 < pB0_end) {
    // 4096 entries at a time: a chunk holding a fill value is appended again, entry by entry
    int64 pB1_stop = pB1 + 4096 < pB0_end ? pB1 + 4096 : pB0_end;
    while (pB1 < pB1_stop) {
        int64 l = B0_idx0[pB1];
        grow D_idx to n + 1;
        grow D_val to n + 1;
        D_idx[n] = l;
        D_val[n] = B_val[pB1];
        n += 1;
        pB1 += 1;
    }
}
pB0 = pB0_end;
pB0_seg = pB0_end;
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace

from ..imperative.blockcopy import match
from ..imperative.ir import (Assign, BinOp, Break, Comment, CompoundAssign, Const, Declare, If, Load, Select, Tagged,
                             Var, While, not_)
from ..imperative.traverse import assigned_names, fresh_namer, map_bodies, walk


def _lt(cond) -> tuple[str, object] | None:
    """``(name, bound)`` of a loop condition ``name < bound``."""
    if isinstance(cond, BinOp) and cond.op == "<" and isinstance(cond.left, Var):
        return cond.left.name, cond.right
    return None


def _is_segment_step(stmts, p: Var, seg: Var, end: Var) -> str | None:
    """The coordinate array of ``p = seg; seg = p; while (seg < end && idx[seg] == idx[p]) seg += 1;``
    (the step to the next segment, :meth:`SeqEmitter.segment`), or None when ``stmts`` are not that."""
    if len(stmts) != 3 or stmts[0] != Assign(p, seg) or stmts[1] != Assign(seg, p):
        return None
    w = stmts[2]
    if not (isinstance(w, While) and isinstance(w.cond, BinOp) and w.cond.op == "&&"
            and w.cond.left == BinOp("<", seg, end)
            and list(w.body.body) == [CompoundAssign("+", seg, Const(1, "int64"))]):
        return None
    eq = w.cond.right
    if not (isinstance(eq, BinOp) and eq.op == "==" and isinstance(eq.left, Load) and isinstance(eq.right, Load)
            and eq.left.buffer == eq.right.buffer and eq.left.index == seg and eq.right.index == p):
        return None
    return eq.left.buffer


def _subst(e, old, new):
    """``e`` with every ``old`` node replaced by ``new``."""
    if e == old:
        return new
    changes = {}
    for f in fields(e):
        v = getattr(e, f.name)
        if is_dataclass(v):
            changes[f.name] = _subst(v, old, new)
        elif isinstance(v, tuple) and all(is_dataclass(x) for x in v):
            changes[f.name] = tuple(_subst(x, old, new) for x in v)
    return replace(e, **changes) if changes else e


def flatten(loop, dtypes: dict, fresh=None) -> list | None:
    """The statements that walk the COO segment loop ``loop`` as one loop over its positions
    (see the module docstring), or None when ``loop`` is no such loop or its flat form would not
    be a block copy."""
    head = _lt(loop.cond) if isinstance(loop, While) else None
    if head is None or not isinstance(head[1], Var):
        return None
    p, end = Var(head[0]), head[1]
    body = list(loop.body.body)
    locals_ = []
    while body and isinstance(body[0], Declare) and body[0].init is not None:
        locals_.append(body.pop(0))
    if len(body) != 8 or not all(isinstance(s, Declare) and s.init is None for s in body[:2]):
        return None
    c, ce = body[0].var, body[1].var
    if body[2] != Assign(c, p) or not (isinstance(body[3], Assign) and body[3].target == ce
                                       and isinstance(body[3].value, Var)):
        return None
    seg = body[3].value
    idx = _is_segment_step(body[5:], p, seg, end)
    if idx is None:
        return None
    tag, inner = None, body[4]
    if isinstance(inner, Tagged) and len(inner.body.body) == 1:
        tag, inner = inner, inner.body.body[0]
    if not isinstance(inner, While) or inner.cond != BinOp("<", c, ce):
        return None
    steps = list(inner.body.body)
    if not steps or steps[-1] != CompoundAssign("+", c, Const(1, "int64")):
        return None
    frozen = {p.name, seg.name, end.name, ce.name}
    # (the inner loop reads none of the outer cursor's names, moves its position only by its last
    # step, and leaves the loop only where it ends: then it runs through the segment whole)
    if any(isinstance(n, Var) and n.name in frozen or isinstance(n, Break) for n in walk(inner.body)):
        return None
    if c.name in assigned_names(steps[:-1]):
        return None
    changed = assigned_names(steps) | {c.name}
    for d in locals_:
        # (read at the segment's first position: the same coordinate at each of its positions)
        if any(isinstance(n, Load) and (n.buffer != idx or n.index != p)
               or isinstance(n, Var) and (n.name in frozen - {p.name} or n.name in changed) for n in walk(d.init)):
            return None
        if any(isinstance(n, Var) and n == p for n in walk(_subst(d.init, Load(idx, p), Const(0, "int64")))):
            return None
    moved = [replace(d, init=_subst(d.init, Load(idx, p), Load(idx, c))) for d in locals_]
    flat = _chunks(c, end, [*moved, *steps], dtypes, fresh or fresh_namer([loop]))
    if flat is None:
        return None
    flat = flat if tag is None else replace(tag, body=flat)
    return [Declare(c, body[0].dtype, p), flat, Assign(p, end), Assign(seg, end)]


def flatten_product(loop, dtypes: dict, fresh=None) -> list | None:
    """The statements that walk ``loop``, a product of a COO level's two modes in one loop (a
    collapse, ``c[k] = collapse(A[i, j], (i, j) -> k)``), as one loop over its positions, or None
    when ``loop`` is no such loop or its flat form would not be a block copy. The product steps
    the entry's position and, past its segment's end, moves to the next segment::

        while (pA0 < pA0_end && pA1 < pA1_end) {
            ...append (A0_idx0[pA0] * n + A0_idx1[pA1], A_val[pA1])...; pA1 += 1;
            while (pA0 < pA0_end && !(pA1 < pA1_end)) {
                pA0 = pA0_seg; pA0_seg = pA0; ...scan...;
                if (pA0 < pA0_end) { pA1 = pA0; pA1_end = pA0_seg; } else { pA1 = 0; pA1_end = 0; }
            }
        }

    A COO segment is never empty, so from an entry of a segment the loop visits every position
    after it up to ``pA0_end``, in order, the first mode's coordinate the same at each of a
    segment's positions: ``if (pA0 < pA0_end && pA1 < pA1_end) while (pA1 < pA0_end) {...}``."""
    if not (isinstance(loop, While) and isinstance(loop.cond, BinOp) and loop.cond.op == "&&"):
        return None
    outer, inner = _lt(loop.cond.left), _lt(loop.cond.right)
    if outer is None or inner is None or not isinstance(outer[1], Var) or not isinstance(inner[1], Var):
        return None
    p, end, c, ce = Var(outer[0]), outer[1], Var(inner[0]), inner[1]
    body = list(loop.body.body)
    if len(body) < 3 or body[-2] != CompoundAssign("+", c, Const(1, "int64")):
        return None
    adv = body[-1]
    if not (isinstance(adv, While) and adv.cond == BinOp("&&", BinOp("<", p, end), not_(BinOp("<", c, ce)))
            and len(adv.body.body) == 4 and isinstance(adv.body.body[0], Assign)
            and isinstance(adv.body.body[0].value, Var)):
        return None
    seg = adv.body.body[0].value
    idx = _is_segment_step(list(adv.body.body[:3]), p, seg, end)
    zero = Const(0, "int64")
    if idx is None or adv.body.body[3] != If(BinOp("<", p, end), [Assign(c, p), Assign(ce, seg)],
                                               [Assign(c, zero), Assign(ce, zero)]):
        return None
    steps = body[:-2]
    if any(isinstance(n, Break) for n in walk(tuple(steps))) or \
            assigned_names(steps) & {p.name, c.name, seg.name, ce.name, end.name}:
        return None
    # (the first mode's coordinate read at the segment's first position is the entry's own)
    moved = [_subst(st, Load(idx, p), Load(idx, c)) for st in steps]
    if any(isinstance(n, Var) and n.name in {p.name, seg.name, ce.name} for n in walk(tuple(moved))):
        return None
    flat = _chunks(c, end, [*moved, body[-2]], dtypes, fresh or fresh_namer([loop]))
    if flat is None:
        return None
    return [If(loop.cond, [flat, Assign(p, end), Assign(seg, end)])]


#: entries a block copy takes at a time: a chunk holding a value the output drops (a stored fill)
#: is copied and then appended again entry by entry, so a chunk bounds what that costs (counted
#: then copied, one block of a whole 500k-entry part read its values from memory twice: slower)
CHUNK = 4096


def _chunks(c: Var, end, body: list, dtypes: dict, fresh):
    """``while (c < end)`` over ``body``, as chunks of :data:`CHUNK` positions each walked by
    an append loop that :func:`~compiler.imperative.blockcopy.block_copy` copies; None when the
    loop would be no such append loop."""
    if match(While(BinOp("<", c, end), body), dtypes) is None:
        return None
    stop = Var(fresh(c.name + "_stop"))
    inner = While(BinOp("<", c, stop), body)
    ahead = BinOp("+", c, Const(CHUNK, "int64"))
    note = Comment(f"{CHUNK} entries at a time: a chunk holding a fill value is appended again, entry by entry")
    return While(BinOp("<", c, end), [note, Declare(stop, "int64", Select(BinOp("<", ahead, end), ahead, end)), inner])


def flatten_segments(stmts, dtypes: dict | None = None) -> list:
    """``stmts`` with each COO segment walk that copies a part whole flattened into one loop over
    its positions (see the module docstring); ``dtypes`` gives the buffers' dtypes, as to
    :func:`~compiler.imperative.blockcopy.block_copy`. The first segment's scan, which the walk
    set up before its loop, goes too when nothing else reads the segment's end."""
    segs = set()
    out = _flatten(list(stmts), dict(dtypes or {}), segs, fresh_namer(stmts))
    for seg in sorted(segs):
        out = _drop_scan(out, seg)
    return out


def _flatten(stmts: list, dtypes: dict, segs: set, fresh) -> list:
    out = []
    for s in stmts:
        got = flatten(s, dtypes, fresh)
        if got is not None:
            segs.add(got[-1].target.name)
        else:
            got = flatten_product(s, dtypes, fresh)
        if got is not None:
            out += got
        else:
            out.append(map_bodies(s, lambda body: _flatten(list(body), dtypes, segs, fresh)))
    return out


def _drop_scan(stmts: list, seg: str) -> list:
    """``stmts`` without the segment end ``seg`` where they declare it: its declaration, its
    first scan (``seg = p; while (seg < end && idx[seg] == idx[p]) seg += 1;``) and the flattened
    walk's ``seg = end``, when no other statement reads it."""
    v = Var(seg)
    if not any(isinstance(s, Declare) and s.var == v for s in stmts):
        return [map_bodies(s, lambda body: _drop_scan(list(body), seg)) for s in stmts]

    def dropped(s) -> bool:
        if isinstance(s, Declare):
            return s.var == v and s.init is None
        if isinstance(s, Assign):
            return s.target == v and v not in walk(s.value)
        return (isinstance(s, While) and isinstance(s.cond, BinOp) and s.cond.op == "&&"
                and isinstance(s.cond.left, BinOp) and s.cond.left.left == v
                and list(s.body.body) == [CompoundAssign("+", v, Const(1, "int64"))])

    def strip(body):
        return [map_bodies(s, strip) for s in body if not dropped(s)]
    rest = strip(stmts)
    return stmts if v in walk(tuple(rest)) else rest


__all__ = ["flatten", "flatten_product", "flatten_segments"]
