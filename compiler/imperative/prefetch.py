"""Prefetching: a row loop fetches the next rows' entries ahead of its position loop.

In ``for (i ...) for (p = pos[i]; p < pos[i + 1]; p++) ... idx[p] ... val[p]`` the
arrays read at ``p`` are streamed from start to end across the rows, but each row
is short (CSR SpMV's rows hold about ten entries), and the CPU's own prefetcher
keeps too little ahead of such a stream of short loops. So before each row's loop,
the entries ``DISTANCE`` past the row's end are fetched, in every array the loop
reads at ``p``:

>>> from compiler.imperative.ir import CompoundAssign, For, Load, Var
>>> i, p, t = Var("i"), Var("p"), Var("t")
>>> rows = For(i, 0, Var("n"), [For(p, Load("pos", i), Load("pos", i + 1),
...                                  [CompoundAssign("+", t, Load("val", p) * Load("x", Load("idx", p)))])])
>>> from compiler.imperative import pretty
>>> print(pretty(prefetch([rows])[0]))
for (int64 i = 0; i < n; i++) {
    // fetch the entries 64 past this row's end: the CPU's own prefetcher falls behind short rows
    prefetch val[pos[i + 1] + 64];
    prefetch idx[pos[i + 1] + 64];
    for (int64 p = pos[i]; p < pos[i + 1]; p++) {
        t += val[p] * x[idx[p]];
    }
}

Measured on CSR SpMV (100k rows, 1M entries): 8% faster; 24 to 192 entries ahead
all do about as well. ``x`` is not prefetched: its reads are scattered (fetching
``x[idx[p + d]]`` ahead made SpMV 10% slower). Only a ``for`` over a row's positions
is matched. The same fetch before a cursor that ``while`` loops advance was tried
and measured: the looplet strategy's SparseList SpMV ran 2% faster, its
SparseBlockList SpMV 6% slower, and an intersection of two CSR rows (the lattice
merge) 6% slower.

A position loop can also pick *another* tensor's row by the coordinate it reads, as
Gustavson's SpGEMM does (``k = A_idx[p]``, then a loop over ``B``'s row ``k``). Those
rows are scattered, and the CPU cannot know which comes next; the loop knows: it
reads the coordinate ``INDIRECT_DISTANCE`` entries ahead and fetches the start of that
row in every array the inner loop reads, while the rows before it are worked on:

>>> from compiler.imperative.ir import Declare, Store
>>> k, q = Var("k"), Var("q")
>>> gustavson = For(p, Load("A_pos", i), Load("A_pos", i + 1), [
...     Declare(k, "int64", Load("A_idx", p)),
...     For(q, Load("B_pos", k), Load("B_pos", k + 1), [Store("w", Load("B_idx", q), Load("B_val", q), "+")])])
>>> print(pretty(prefetch([For(i, 0, Var("n"), [gustavson])])[0]))
for (int64 i = 0; i < n; i++) {
    // fetch the entries 64 past this row's end: the CPU's own prefetcher falls behind short rows
    prefetch A_idx[A_pos[i + 1] + 64];
    for (int64 p = A_pos[i]; p < A_pos[i + 1]; p++) {
        // fetch the row that the entry 4 ahead reads: those rows are scattered
        if (p + 4 < A_pos[n]) {
            int64 k_ahead = A_idx[p + 4];
            prefetch B_idx[B_pos[k_ahead]];
            prefetch B_val[B_pos[k_ahead]];
        }
        int64 k = A_idx[p];
        for (int64 q = B_pos[k]; q < B_pos[k + 1]; q++) {
            w[B_idx[q]] += B_val[q];
        }
    }
}

The guard keeps the read ``A_idx[p + 4]`` inside the entries that the row loop reads (all
of ``A_pos[0:n]``'s rows; a position loop outside any row loop stays below its own end), so
the last rows' fetch reaches into the next rows. Measured on SpGEMM (20k x 20k, 100k
entries each): 16% faster; 2 to 4 entries ahead do best (6: 14%, 16: 12%), and a fetch
of ``B_pos`` further ahead as well made it slower; fetching only within the row made it
3% faster.
"""

from __future__ import annotations

from .ir import BinOp, Cast, Comment, Const, Declare, For, If, Load, Pragma, Prefetch, Stmt, Tagged, Var, While
from .traverse import map_bodies, walk
from ..names import FreshNames

#: how many entries past the row's end are fetched
DISTANCE = 64
#: how many entries ahead a position loop fetches the row that its coordinate picks
INDIRECT_DISTANCE = 4


def _row_loop(loop: For, row: Var) -> Load | None:
    """``pos[row + 1]`` if ``loop`` runs ``p`` from ``pos[row]`` to ``pos[row + 1]``, else None."""
    start, stop = loop.start, loop.stop
    if not (isinstance(start, Load) and isinstance(stop, Load) and start.buffer == stop.buffer):
        return None
    if start.index != row or stop.index != BinOp("+", row, Const(1, "int64")):
        return None
    return stop


def _streamed(loop: For, pos: str) -> list[str]:
    """The buffers ``loop``'s body reads at its own position (``buffer[p]``), in order of first use."""
    out = []
    for n in walk(loop.body):
        if isinstance(n, Load) and n.index == loop.var and n.buffer != pos and n.buffer not in out:
            out.append(n.buffer)
    return out


def _picked_rows(loop: For) -> list[tuple[Declare, str, list[str]]]:
    """The rows ``loop``'s body picks by the coordinate it reads at its position.

    Each is ``(k = idx[p], pos, arrays)``: the body declares ``k`` from ``idx[p]`` first
    thing, and then runs a loop over ``pos[k]`` to ``pos[k + 1]`` (inside tags only) that
    reads ``arrays`` at its position.
    """
    picks = {}
    for s in loop.body.body:
        if not (isinstance(s, Declare) and isinstance(s.init, Load) and s.init.index == loop.var):
            break
        picks[s.var] = s
    out = []

    def visit(stmts):
        for s in stmts:
            if isinstance(s, Tagged):
                visit(s.body.body)
            elif isinstance(s, For) and isinstance(s.start, Load) and s.start.index in picks:
                pick = picks[s.start.index]
                end = _row_loop(s, pick.var)
                if end is not None and (arrays := _streamed(s, end.buffer)):
                    out.append((pick, end.buffer, arrays))
    visit(loop.body.body)
    return out


def _fetch_picked_rows(loop: For, bound, fresh: FreshNames) -> For:
    """``loop`` fetching, ``INDIRECT_DISTANCE`` entries ahead, the rows its coordinates pick.

    ``bound`` is an end below which ``idx[p + INDIRECT_DISTANCE]`` is read by the loops around.
    """
    fetches = []
    for pick, pos, arrays in _picked_rows(loop):
        ahead = Var(fresh(f"{pick.var.name}_ahead"))
        at = BinOp("+", loop.var, Const(INDIRECT_DISTANCE, "int64"))
        fetches += [Comment(f"fetch the row that the entry {INDIRECT_DISTANCE} ahead reads: those rows are "
                            f"scattered"),
                    If(BinOp("<", at, bound), [Declare(ahead, pick.dtype, Load(pick.init.buffer, at)),
                                               *(Prefetch(b, Load(pos, ahead)) for b in arrays)])]
    return loop if not fetches else For(loop.var, loop.start, loop.stop, [*fetches, *loop.body.body], loop.dtype)


def prefetch(stmts, narrow=frozenset(), fibers=None) -> list:
    """``stmts`` with a :class:`Prefetch` of each streamed array before each row's position loop,
    and of the rows a position loop picks by its coordinates, a few entries ahead.

    ``narrow`` names the position arrays whose entries are narrower than int64: a row's end
    read from one is widened before the distance is added, as the loops use it (an int32 sum
    wraps, under ``-fwrapv``, and its sign extension in every row made int32 CSR SpMV 3% slower).
    ``fibers`` says what a position array's fibers are, for the comment (``{"A1_pos": "column"}``
    for a CSC matrix); "row" where it does not say:

    >>> from compiler.imperative import pretty
    >>> from compiler.imperative.ir import CompoundAssign
    >>> j, p, t = Var("j"), Var("p"), Var("t")
    >>> cols = For(j, 0, Var("n"), [For(p, Load("A1_pos", j), Load("A1_pos", j + 1),
    ...                                 [CompoundAssign("+", t, Load("A_val", p))])])
    >>> print(pretty(prefetch([cols], fibers={"A1_pos": "column"})[0]).splitlines()[1])
        // fetch the entries 64 past this column's end: the CPU's own prefetcher falls behind short columns
    """
    fibers = fibers or {}
    fresh = FreshNames({n.name for n in walk(tuple(stmts)) if isinstance(n, Var)})

    def visit(stmts, row: For | None) -> list:
        """``row`` is the loop around ``stmts`` (None at the top)."""
        out: list[Stmt] = []
        for s in stmts:
            end = _row_loop(s, row.var) if isinstance(s, For) and row is not None else None
            if end is not None:
                streamed = _streamed(s, end.buffer)
                pragmas = []
                while out and isinstance(out[-1], Pragma):   # a pragma stays on its loop
                    pragmas.insert(0, out.pop())
                if streamed:
                    wide = Cast("int64", end) if end.buffer in narrow else end
                    fiber = fibers.get(end.buffer, "row")
                    out.append(Comment(f"fetch the entries {DISTANCE} past this {fiber}'s end: the CPU's own "
                                       f"prefetcher falls behind short {fiber}s"))
                    out += [Prefetch(b, BinOp("+", wide, Const(DISTANCE, "int64"))) for b in streamed]
                out += pragmas
            if isinstance(s, For):
                # the row loop's entries all lie below pos[its stop]; a loop on its own, below its stop
                s = _fetch_picked_rows(s, Load(end.buffer, row.stop) if end is not None else s.stop, fresh)
            # the rows inside are those of the innermost loop around (none inside a while)
            inner = s if isinstance(s, For) else None if isinstance(s, While) else row
            out.append(map_bodies(s, lambda body: visit(body, inner)))
        return out
    return visit(stmts, None)
