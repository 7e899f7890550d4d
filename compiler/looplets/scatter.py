"""A sparse output whose loops run out of its storage order, assembled by a two-phase scatter.

A CSC ``C[i, j] = A[i, j] * 2`` of a CSR ``A`` runs its loops i, j (A's rows, walked), so a
column of C gets one entry per row: it cannot be appended as the loops visit it. Rather than
build C as CSR and convert it after the call, the looplets lower the nest twice, as scipy's
``tocsc`` assembles a matrix (and as the lattice strategy's scatter does,
:mod:`compiler.lattice.scatter_output`):

* **count**: the output's scattered level unfurls to ``Lookup(i -> Thunk(C1_next[p] += 1))``, each
  write counting in its fiber ``p`` (located by the Dense levels above) and computing no value;
* a prefix sum of the counts gives the fibers' starts (``C1_pos``), each fiber's next slot, and the
  room for every entry counted, grown once;
* **store**: the level unfurls to ``Lookup(i -> Thunk(v = fill; v = ...; if v is not the fill:
  q = C1_next[p], C1_idx[q] = i, C[q] = v, C1_next[p] = q + 1))``: the entry is computed in a local
  and takes a slot only when it is kept (as the lattice's scatter does: the test waits on the value,
  not on the slot's load); the loops reach a fiber's coordinates in increasing order, so each fiber
  stays sorted;
* the gaps the fill left close (each fiber's entries move down to follow the previous one's).

A reduction into the output (SpGEMM ``C[i, j] += A[i, k] * B[k, j]`` into a CSC, loops i, k, j)
updates an entry several times. As scipy's SpGEMM, the count is exact: a coordinate counts once in
its fiber (``C1_last[p]`` marks the last counted), so the room is the entries', not the products';
and an update combines with its fiber's last entry when that is at its coordinate, else starts one
(:func:`combines_in_order`: the loop of the scattered index runs outside the reduction's, so an
entry's updates come together). A sum may pass through the fill and leave it, so every entry takes a
slot and those left at the fill are dropped as the gaps close.

A level takes part when it says it can be so written (:attr:`compiler.levels.level.Level.scatters`:
a sorted list of coordinates, each its own child) as the innermost level under levels located by
coordinate, or under one more such list (a DCSC: its fibers filled as a Dense level's, those
holding entries listed after) (:func:`compiler.stand_in.scatters`). A user's loop program is
scattered in its own loop order. The trace records a ``scatter`` step per pass with the level's
looplet nest.

>>> from compiler.format import csc
>>> from compiler.looplets.fibers import TensorInfo, UnfurlContext
>>> from compiler.looplets.looplets import nest_text
>>> info = TensorInfo("C", csc(), "output")
>>> ctx = UnfurlContext()
>>> ctx.scattered["C"] = "count"
>>> print(nest_text(scatter_unfurl(SubFiber(info, 1, Var("j"), "update"), ctx)))
Lookup(i -> count in C1_next[j])
>>> ctx.scattered["C"] = "store"
>>> print(nest_text(scatter_unfurl(SubFiber(info, 1, Var("j"), "update"), ctx)))
Lookup(i -> unless the fill, store at C1_next[j]++)
"""

from __future__ import annotations

from dataclasses import replace

from ..format import Format
from ..imperative import ir
from ..imperative.ir import BinOp, Comment, Const, Declare, For, If, Load, Store, Var
from ..imperative.traverse import map_bodies, var_names
from ..levels import Element
from ..stand_in import fiber_word, format_text, scatters
from ..trace import Artifact
from . import extents as X
from .fibers import SubFiber, TensorInfo, UnfurlContext, child_fiber, fiber_tag
from .levels import not_fill, unfurl_dense
from .looplets import Fill, Lookup, Thunk, nest_dot, nest_text
from .output_order import (fewest_reads_out_of_order, loops_of, one_step_loops, perfect_nest, reads_out_of_order,
                           reordered, written_loop)
from .program import Assign, Declare as PDeclare, Freeze, Literal, TensorRef, walk

#: the two passes, in order, and what each does (the trace's notes)
PASSES = (("count", "each write counts in its fiber's next slot, computing no value"),
          ("store", "each entry goes to its fiber's next slot unless it is the fill"))


def scatters_output(prog, out: str, fmt, alone: bool = False) -> bool:
    """Whether output ``out`` of the loop program ``prog``, of format ``fmt``, can be scattered: the
    format scatters (:func:`compiler.stand_in.scatters`) and one assignment writes it, at loop
    indices (an update, a reduction's, is combined: :func:`combines_in_order`); with ``alone`` (a
    user's loop program), nothing else is written (the loops run twice: another output, or a
    temporary carried across iterations, would be written twice)."""
    if not scatters(fmt):
        return False
    writes = _writes(prog.body, out)
    if len(writes) != 1:
        return False
    if alone and (prog.temporaries or any(isinstance(n, Assign) and n not in writes for n in walk(prog.body))):
        return False
    loops = [written_loop(x, one_step_loops(prog.body)) for x in writes[0].lhs.idxs]
    return None not in loops and len(set(loops)) == len(loops)


def scatter_updates(prog, out: str) -> bool:
    """Whether the one assignment to ``out`` in ``prog`` updates its entry (``+=``: a reduction)."""
    return any(w.op is not None for w in _writes(prog.body, out))


def _writes(body, out: str) -> list:
    return [n for n in walk(body) if isinstance(n, Assign) and isinstance(n.lhs.tns, TensorRef)
            and n.lhs.tns.name == out]


def combines_in_order(body, out: str, fmt) -> bool:
    """Whether the loops of ``body`` let a scatter combine the updates of one entry of ``out``
    (SpGEMM's ``C[i, j] += A[i, k] * B[k, j]`` into a CSC, loops i, k, j): an assignment in place
    needs nothing; an update needs each fiber's coordinates to come in order, equal ones together,
    so that an update meets its entry as its fiber's last. That holds when the loop of the
    scattered level's index (``i``) runs outside every loop the output is not indexed by (``k``).

    >>> from compiler.format import csc
    >>> from compiler.looplets import from_index_notation
    >>> from compiler.looplets.program import Index
    >>> from compiler.notation import parse
    >>> prog = from_index_notation(parse("C[i, j] = A[i, k] * B[k, j]"))
    >>> [lp.idx.name for lp in loops_of(prog.body)], combines_in_order(prog.body, "C", csc())
    (['i', 'j', 'k'], True)
    >>> combines_in_order(reordered(prog.body, [Index("k")]), "C", csc())
    False
    """
    (write,) = _writes(body, out)
    if write.op is None:
        return True
    inner = write.lhs.idxs[fmt.mode_order[-1]]
    loops = [lp.idx for lp in loops_of(body)]
    return inner in loops and all(loops.index(inner) < n for n, i in enumerate(loops) if i not in write.lhs.idxs)


def scatter_program(prog, chosen, out: str, fmt, formats: dict, fixed: bool = False):
    """The program whose loops write output ``out`` (of format ``fmt``) by a scatter, or None when
    the choice of :func:`~compiler.looplets.output_order.choose_output_order` (``chosen``) stands:
    its loops when they write ``out`` out of its storage order (it would be converted); else, unless
    the loops are ``fixed`` (a user's loop program states its own), the
    loops in the order reading the fewest inputs out of their storage order, when that writes ``out``
    out of its order and reads fewer than ``chosen``'s loops do (a transpose ``C[j, i] = A[i, j]`` of
    a CSR ``A`` into CSR walks A's rows rather than searching each row for each ``j``)."""
    if chosen.built is not None:
        return chosen.program if combines_in_order(chosen.program.body, out, fmt) else None
    loops = loops_of(prog.body)
    # (only a perfect nest runs its loops in any order: a sum through a scalar declares it and writes the
    # output beside its inner loop, once per entry)
    if fixed or not loops or len(loops) > 5 or perfect_nest(prog.body) is None:
        return None
    best, least = fewest_reads_out_of_order(prog.body, out, formats)
    if least >= reads_out_of_order(chosen.program.body, out, formats):
        return None
    moved = replace(prog, body=reordered(prog.body, best))
    lhs = next(n for n in walk(moved.body) if isinstance(n, Assign) and isinstance(n.lhs.tns, TensorRef)
               and n.lhs.tns.name == out).lhs
    written = sorted(range(len(lhs.idxs)), key=lambda m: best.index(lhs.idxs[m]))
    return moved if tuple(written) != tuple(fmt.mode_order) and combines_in_order(moved.body, out, fmt) else None


def scatter_note(out: str, fmt, loops: list, updated: bool = False) -> str:
    """What the trace's ``output-order`` step says of a scattered output (``loops``: the names of the
    loops around its write, outermost first; ``updated``: its entries updated, a reduction's)."""
    word = fiber_word(fmt)
    if updated:
        return (f"{out} is {format_text(fmt)}, and the loops run {', '.join(loops)}, out of its storage order: the "
                f"kernel builds {out} in its own order by a scatter, not in the loops' order converted after the call; "
                f"the loops are lowered twice: pass 1 counts each {word}'s distinct coordinates, a prefix sum gives "
                f"the {word}s' starts, pass 2 combines each update with its {word}'s last entry when that is at its "
                f"coordinate, else starts an entry at the {word}'s next slot (an entry's updates come together: "
                f"the loop of its coordinate runs outside the reduction's), and the entries left at the fill are "
                f"dropped as the gaps close (scipy's SpGEMM, fused with the computation)")
    return (f"{out} is {format_text(fmt)}, and the loops run {', '.join(loops)}, out of its storage order: the kernel "
            f"builds {out} in its own order by a scatter, not in the loops' order converted after the call; the loops "
            f"are lowered twice: pass 1 counts each {word}'s entries, a prefix sum gives the {word}s' starts, pass 2 "
            f"stores each entry at its {word}'s next slot (the loops reach a {word}'s coordinates in increasing order, "
            f"so it stays sorted), skipping the fill, and the gaps it leaves close after (scipy's tocsc, fused with "
            f"the computation)")


def next_array(info) -> str:
    """The scratch array of one count (then next slot) per fiber of the scattered level."""
    return info.array(len(info.levels) - 1, "next")


def scatter_unfurl(f: SubFiber, ctx) -> Lookup:
    """The scattered level's update unfurl in the pass ``ctx.scattered`` names for its tensor
    (see the module's docstring): a Lookup whose body at coordinate ``i`` counts the write in
    fiber ``f.pos`` (``count``) or stores it at the fiber's next slot (``store``)."""
    info, k = f.tensor, f.level
    if k < len(info.levels) - 1:
        # (a DCSC's list of columns: each column's fiber located as a Dense level's, listed after)
        return unfurl_dense(f, ctx, "update")
    nxt = next_array(info)
    combined = info.name in ctx.combined
    if ctx.scattered[info.name] == "count":
        # (the write lands in a fill the lowering ignores: only the count is emitted, no value computed)
        def count(i):
            add = Store(nxt, f.pos, Const(1, "int64"), "+")
            if combined:   # (a coordinate counts once in its fiber: the last one counted is marked)
                last = last_array(info)
                add = If(BinOp("!=", Load(last, f.pos), i), [Store(last, f.pos, i), add])
            return Thunk((add,), Fill(Literal(info.fill, dtype=info.dtype)), (), info)
        return Lookup(count, f"i -> count {'each coordinate once ' if combined else ''}in {nxt}[{f.pos}]", info)
    idx_b = info.array(k, f.lvl.crd_array)
    t = fiber_tag(info)
    if combined:
        return Lookup(lambda i: _combining_store(f, ctx, i, idx_b),
                      f"i -> update the last entry of {nxt}[{f.pos}] at i, or store at {nxt}[{f.pos}]++", info)

    def store(i):
        # (the entry is computed in a local, a 0-D stand-in's, and takes its fiber's next slot only
        # when it is not the fill: the test waits on the value alone, not on the load of the slot)
        v, q = Var(ctx.fresh(f"v{t}")), Var(ctx.fresh(f"q{t}"))
        ctx.entry_locals[v.name] = v
        entry = TensorInfo(v.name, Format(Element(info.fill, dtype=info.dtype)), "temporary")
        pre = (Declare(v, info.dtype, Const(info.fill, info.dtype)),)
        epi = (If(not_fill(info, v), [Declare(q, "int64", Load(nxt, f.pos)), Store(idx_b, q, i),
                                      Store(info.array(None, "vals"), q, v), Store(nxt, f.pos, X.add(q, 1))]),)
        return Thunk(pre, SubFiber(entry, 0, Const(0, "int64"), "update"), epi, info)
    return Lookup(store, f"i -> unless the fill, store at {nxt}[{f.pos}]++", info)


def last_array(info) -> str:
    """The scratch array of the coordinate each fiber last counted (an update's count, phase 1)."""
    return info.array(len(info.levels) - 1, "last")


def _combining_store(f: SubFiber, ctx, i, idx_b: str) -> Thunk:
    """An update at coordinate ``i`` of fiber ``f.pos``, combined with the fiber's last entry when
    that is at ``i`` (updates of one entry come together: :func:`combines_in_order`), else at a new
    entry at the fiber's next slot, starting at the output's initial value (``ctx.combined``). Every
    entry is kept: a sum may pass through the fill and leave it; the fill is dropped as the gaps close."""
    info, nxt = f.tensor, next_array(f.tensor)
    q = Var(ctx.fresh(f"q{fiber_tag(info)}"))
    start = Load(info.array(f.level, f.lvl.starts_array), f.pos)
    new = [ir.Assign(q, X.add(q, 1)), Store(idx_b, q, i), Store(info.array(None, "vals"), q, ctx.combined[info.name]),
           Store(nxt, f.pos, X.add(q, 1))]
    pre = (Declare(q, "int64", BinOp("-", Load(nxt, f.pos), Const(1, "int64"))),
           If(ir.or_(BinOp("<", q, start), BinOp("!=", Load(idx_b, q), i)), new))
    return Thunk(pre, child_fiber(f, q), (), info)


def scattered_block(stmts, scattered: dict):
    """``(a, b)``: the positions in ``stmts`` of a scattered output's declaration and its freeze
    (the loops between them write it), or None."""
    for a, s in enumerate(stmts):
        if isinstance(s, PDeclare) and s.tns.name in scattered:
            b = next((b for b in range(a + 1, len(stmts)) if isinstance(stmts[b], Freeze)
                      and stmts[b].tns.name == s.tns.name), None)
            if b is not None:
                return a, b
    return None


def lower_scattered(low, stmts, a: int, b: int) -> list:
    """The statements of ``stmts[a:b + 1]`` (a scattered output's declaration, the loops writing it,
    its freeze) lowered by the Lowerer ``low``: the loops twice, counting then storing, around the
    prefix sum, in a scratch array of one count per fiber; then the gaps closed."""
    name = stmts[a].tns.name
    info = low.tensors[name]
    k = len(info.levels) - 1
    lvl = info.levels[k]
    fibers = info.size(0)
    for m in range(1, k):
        fibers = BinOp("*", fibers, info.size(m))
    pos, idx, vals = info.array(k, lvl.starts_array), info.array(k, lvl.crd_array), info.array(None, "vals")
    nxt, nnz = next_array(info), Var(info.array(k, "nnz"))
    # (a list over the scattered level, a DCSC's: its fibers are filled as a Dense level's, then listed)
    listed = not info.levels[0].located_by_coordinate
    out = low.lower(stmts[a])
    combined = any(isinstance(n, Assign) and n.op is not None and getattr(n.lhs.tns, "tensor", None) is info
                   for s in stmts[a + 1:b] for n in walk(s))
    if combined:   # (an entry updated several times: each update combined with its fiber's last entry)
        low.ctx.combined[name], _ = low.expr(low.simplify(stmts[a].init), stmts[a].line)
    passes = {}
    for phase, what in PASSES:
        low.ctx.scattered[name] = phase
        picture = scatter_unfurl(SubFiber(info, k, Var("p"), "update"),
                                 _picture_context(name, phase, low.ctx.combined.get(name)))
        low.record("scatter", note=f"phase {len(passes) + 1}, {phase}: the loops lowered again, {name}'s level "
                                   f"{k} ({lvl.name}) unfurled to {picture.text}: {what}",
                   artifacts=[Artifact("looplet-nest", f"{name}.lvl{k}[p] ({phase})", nest_text(picture),
                                       nest_dot(picture, f"{name}.lvl{k}"), data={"tensor": name, "phase": phase})],
                   data={"tensor": name, "phase": phase})
        passes[phase] = [x for s in stmts[a + 1:b] for x in low.lower(s)]
    passes["store"] = _computed_where_declared(passes["store"], set(low.ctx.entry_locals))
    low.ctx.entry_locals.clear()
    low.ctx.scattered[name] = None
    low.ctx.combined.pop(name, None)
    p, total = Var(low.fresh("p")), Load(pos, fibers)
    word = fiber_word(info.format)
    count = passes["count"]
    if combined:
        count = [ir.Allocate(last_array(info), "int64", fibers, Const(-1, "int64"), count)]
    body = [Comment(f"phase 1, count: each entry of {name} counts in its {word}'s {nxt}[{word}] (the loops run out "
                    f"of {name}'s storage order)" + (f"; updated several times, it counts once: {last_array(info)}"
                                                     f"[{word}] marks the {word}'s last coordinate counted"
                                                     if combined else "")),
            *count,
            Comment(f"the {word}s' starts (the counts summed), each {word}'s next slot at its start, and room for "
                    f"every entry counted"),
            *([ir.Grow(pos, X.add(fibers, 1))] if listed else []),
            Store(pos, Const(0, "int64"), Const(0, "int64")),
            For(p, 0, fibers, [Store(pos, X.add(p, 1), BinOp("+", Load(pos, p), Load(nxt, p))),
                               Store(nxt, p, Load(pos, p))]),
            ir.Grow(idx, total), ir.Grow(vals, total),
            Comment(f"phase 2, scatter: each entry goes to its {word}'s next slot, skipping the fill "
                    f"({info.fill!r}); the loops reach a {word}'s coordinates in increasing order, so it stays "
                    f"sorted" if not combined else
                    f"phase 2, scatter: an update of the {word}'s last entry combines with it, any other starts an "
                    f"entry at its {word}'s next slot; the loops reach a {word}'s coordinates in increasing order, "
                    f"so it stays sorted"),
            *passes["store"],
            *(_close_gaps(low, pos, (idx, vals), nxt, nnz, fibers, word) if not combined else
              _drop_fill(low, info, pos, (idx, vals), nxt, nnz, fibers, word))]
    if listed:
        body += _list_fibers(low, info, pos, fibers, word)
    return out + [ir.Allocate(nxt, "int64", fibers, Const(0, "int64"), body)]


def _computed_where_declared(stmts, names: set) -> list:
    """``stmts`` with each entry's local (``names``) declared at the value first assigned to it
    (``double vC = 0.0; vC = A_val[qA];`` becomes ``double vC = A_val[qA];``); one left unassigned
    keeps the fill it starts at."""
    out = []
    for s in stmts:
        s = map_bodies(s, lambda body: _computed_where_declared(body, names))
        last = out[-1] if out else None
        first = _first_in_tags(s)
        if isinstance(first, ir.Assign) and isinstance(last, Declare) and last.var == first.target \
                and first.target.name in names and first.target.name not in var_names(first.value):
            # (in a provenance tag, the declaration moves into it: a tag opens no C scope)
            out[-1:] = [_with_first_in_tags(s, replace(last, init=first.value))]
            continue
        out.append(s)
    return out


def _first_in_tags(s):
    """``s``, or for a provenance tag the first statement inside it (and inside its inner tags)."""
    while isinstance(s, ir.Tagged) and s.body.body:
        s = s.body.body[0]
    return s


def _with_first_in_tags(s, new):
    """``s`` with :func:`_first_in_tags` of it replaced by ``new``."""
    if not isinstance(s, ir.Tagged) or not s.body.body:
        return new
    return replace(s, body=ir.Block((_with_first_in_tags(s.body.body[0], new),) + tuple(s.body.body[1:])))


def _picture_context(name: str, phase: str, init) -> UnfurlContext:
    """A context of its own for the trace's picture of a pass's nest (its fresh names are not the kernel's)."""
    ctx = UnfurlContext()
    ctx.scattered[name] = phase
    if init is not None:
        ctx.combined[name] = init
    return ctx


def _drop_fill(low, info, pos: str, arrays: tuple, nxt: str, nnz: Var, fibers, word: str) -> list:
    """Each fiber's entries (from its start to its next slot) move down to follow the previous
    fiber's, those whose updates left them at the fill dropped (their values are known only now)."""
    vals = info.array(None, "vals")
    f, q, start = (Var(low.fresh(x)) for x in ("f", "q", "start"))
    after = X.add(f, 1)
    moves = [Store(a, nnz, Load(a, q)) for a in arrays]
    return [Comment(f"each {word}'s entries end at {nxt}[{word}]: those not at the fill move down to follow the "
                    f"previous {word}'s"),
            ir.Assign(nnz, Const(0, "int64")), Declare(start, "int64", Const(0, "int64")),
            For(f, 0, fibers, [
                For(q, start, Load(nxt, f), [If(not_fill(info, Load(vals, q)),
                                                moves + [ir.CompoundAssign("+", nnz, Const(1, "int64"))])]),
                ir.Assign(start, Load(pos, after)),
                Store(pos, after, nnz)])]


def _list_fibers(low, info, pos: str, fibers, word: str) -> list:
    """The outer list's entries (a DCSC's columns): the fibers of the level below holding entries,
    in order, their ends moved down to follow (a fiber is never moved up: at most as many are kept
    as were read); then the list's own end, and the length of the starts below it."""
    lvl = info.levels[0]
    crd, nnz = info.array(0, lvl.crd_array), Var(info.array(0, "nnz"))
    f = Var(low.fresh("f"))
    after = X.add(f, 1)
    return [Comment(f"the {word}s holding entries are listed ({crd}), their ends moved down to follow"),
            ir.Grow(crd, fibers), ir.Assign(nnz, Const(0, "int64")),
            For(f, 0, fibers, [If(BinOp(">", Load(pos, after), Load(pos, nnz)), [
                Store(crd, nnz, f), ir.CompoundAssign("+", nnz, Const(1, "int64")),
                Store(pos, nnz, Load(pos, after))])]),
            Store(info.array(0, lvl.starts_array), Const(1, "int64"), nnz),
            ir.Assign(Var(info.array(1, "npos")), X.add(nnz, 1))]


def _close_gaps(low, pos: str, arrays: tuple, nxt: str, nnz: Var, fibers, word: str) -> list:
    """Each fiber's entries (from its start to its next slot) move down to follow the previous
    fiber's; nothing moves before the first gap. ``nnz`` ends at the entries kept."""
    f, q, start, end = (Var(low.fresh(x)) for x in ("f", "q", "start", "end"))
    after = X.add(f, 1)
    moves = [Store(a, nnz, Load(a, q)) for a in arrays]
    return [Comment(f"each {word}'s entries end at {nxt}[{word}]: they move down to follow the previous {word}'s "
                    f"(nothing moves before the first gap)"),
            ir.Assign(nnz, Const(0, "int64")), Declare(start, "int64", Const(0, "int64")),
            For(f, 0, fibers, [
                Declare(end, "int64", Load(nxt, f)),
                If(BinOp("==", nnz, start), [ir.Assign(nnz, end)],
                   [For(q, start, end, moves + [ir.CompoundAssign("+", nnz, Const(1, "int64"))])]),
                ir.Assign(start, Load(pos, after)),
                Store(pos, after, nnz)])]


__all__ = ["PASSES", "combines_in_order", "last_array", "lower_scattered", "next_array", "scatter_note",
           "scatter_program", "scatter_unfurl", "scatter_updates", "scattered_block", "scatters_output"]
