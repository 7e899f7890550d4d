"""Room for a sparse output, reserved up front from a count of the workspace's scatters.

Gustavson's SpGEMM appends, for each row ``i``, one entry per coordinate its workspace
collected, and a coordinate is collected at most once per product ``A[i,k] * B[k,j]``.
Growing the output by doubling copies it about once and touches twice its memory;
counting the products first (a pass over A's entries that reads B's row lengths, far
cheaper than the products) lets one allocation hold them all::

    int64_t n_scatters = 0;
    for (int64_t i = 0; i < A0_size; i++)
        for (int64_t pA1 = A1_pos[i]; pA1 < A1_pos[i + 1]; pA1++) {
            int64_t k = A1_idx[pA1];
            n_scatters += B1_pos[k + 1] - B1_pos[k];
        }

:func:`count_scatters` builds that pass from the emitted loops: each loop whose body
scatters into a workspace (sets its bitmap) becomes ``count += stop - start``; the
loops, conditions and declarations around it stay when they read only inputs, and
everything else goes. The count is a capacity *hint* (a :class:`Grow` with ``hint``):
the per-row growth checks stay, so an output that also takes entries from elsewhere is
still right, and without the memory the kernel grows as before.

>>> from compiler.imperative.ir import Var, For, Declare, Load, Store, Const, If, UnOp, BinOp
>>> i, p, k, j, n = Var("i"), Var("pA1"), Var("k"), Var("j"), Var("n")
>>> mark = If(UnOp("!", Load("w_set", j)), [Store("w_set", j, Const(True, "bool"))])
>>> row = For(i, 0, Var("A0_size"), [For(p, Load("A1_pos", i), Load("A1_pos", i + 1), [
...     Declare(k, "int64", Load("A1_idx", p)),
...     For(Var("pB1"), Load("B1_pos", k), Load("B1_pos", k + 1), [Declare(j, "int64", Load("B1_idx", Var("pB1"))),
...                                                                 mark])])])
>>> for s in count_scatters([row], {"w_set"}, {"A1_pos", "A1_idx", "B1_pos", "B1_idx"}, {"A0_size"}, n):
...     print(str(s).strip())
for (int64 i = 0; i < A0_size; i++) {
    for (int64 pA1 = A1_pos[i]; pA1 < A1_pos[i + 1]; pA1++) {
        int64 k = A1_idx[pA1];
        n += B1_pos[k + 1] - B1_pos[k];
    }
}
"""

from __future__ import annotations

from ..imperative.cleanup import drop_unused_locals
from ..imperative.ir import Assign, BinOp, Break, CompoundAssign, Const, Declare, For, If, Load, Store, Var, While
from ..imperative.traverse import untagged, walk


class _NoCount(Exception):
    """The loops around a scatter read something other than inputs: no count."""


def _is_mark(n, bitmaps) -> bool:
    """``w_set[j] = true``: the first scatter into coordinate ``j`` of a workspace."""
    return isinstance(n, Store) and n.buffer in bitmaps and isinstance(n.value, Const) and n.value.value is True


def _scatters(s, bitmaps) -> bool:
    return any(_is_mark(n, bitmaps) for n in walk(s))


def _leaves_the_loop(s) -> bool:
    """Whether ``s`` may ``break`` out of the loop it is in (not out of a loop of its own)."""
    if isinstance(s, Break):
        return True
    if isinstance(s, If):
        return any(_leaves_the_loop(t) for t in untagged(s.then.body)) or \
            (s.otherwise is not None and any(_leaves_the_loop(t) for t in untagged(s.otherwise.body)))
    return False


def _count(stmts, bitmaps, counter) -> list:
    out = []
    for s in untagged(stmts):
        if not _scatters(s, bitmaps):
            if isinstance(s, Declare) and s.init is not None:
                out.append(s)  # perhaps needed by a bound below; unused ones are dropped
            elif _leaves_the_loop(s):
                # a split's tail guard (``if (j >= n) break;``): the loop stops there too
                if not (isinstance(s, If) and s.otherwise is None and list(untagged(s.then.body)) == [Break()]):
                    raise _NoCount
                out.append(s)
            continue
        if isinstance(s, While):
            raise _NoCount  # a merge around the scatter: its trip count is no difference of bounds
        if isinstance(s, For):
            body = untagged(s.body.body)
            if any(isinstance(t, (For, While)) and _scatters(t, bitmaps) for t in walk(tuple(body))):
                out.append(For(s.var, s.start, s.stop, _count(body, bitmaps, counter)))
            else:  # the innermost loop around the scatter: count its trips
                zero = isinstance(s.start, Const) and s.start.value == 0
                out.append(CompoundAssign("+", counter, s.stop if zero else BinOp("-", s.stop, s.start)))
        elif isinstance(s, If):
            then = _count(s.then.body, bitmaps, counter)
            other = [] if s.otherwise is None else _count(s.otherwise.body, bitmaps, counter)
            out.append(If(s.cond, then, other or None))
        elif _is_mark(s, bitmaps) or isinstance(s, (Store, Assign, CompoundAssign)):
            out.append(CompoundAssign("+", counter, Const(1, "int64")))
        else:
            raise _NoCount
    return out


def _check(stmts, inputs, scalars, bound=frozenset()) -> None:
    """Every load reads an input buffer, every name is a loop variable, a kept declaration or a scalar."""
    known = set(bound)
    for s in stmts:
        if isinstance(s, Break):
            continue
        exprs = {For: lambda s: (s.start, s.stop), If: lambda s: (s.cond,), Declare: lambda s: (s.init,),
                 CompoundAssign: lambda s: (s.value,)}[type(s)](s)
        for e in exprs:
            for n in walk(e):
                if isinstance(n, Load) and n.buffer not in inputs:
                    raise _NoCount
                if isinstance(n, Var) and n.name not in known and n.name not in scalars:
                    raise _NoCount
        if isinstance(s, For):
            _check(s.body.body, inputs, scalars, known | {s.var.name})
        elif isinstance(s, If):
            _check(s.then.body, inputs, scalars, known)
            if s.otherwise is not None:
                _check(s.otherwise.body, inputs, scalars, known)
        elif isinstance(s, Declare):
            known.add(s.var.name)


def count_scatters(stmts, bitmaps, inputs, scalars, counter: Var):
    """The statements that add to ``counter`` one per iteration of each loop scattering into a
    workspace (whose bitmap is in ``bitmaps``), or None when those loops read anything but
    the ``inputs`` buffers and ``scalars`` (or when no workspace is scattered into)."""
    if not any(_scatters(s, bitmaps) for s in stmts):
        return None
    try:
        out = drop_unused_locals(_count(stmts, bitmaps, counter))
        _check(out, inputs, scalars | {counter.name})
    except _NoCount:
        return None
    if any(isinstance(s, Declare) for s in out):
        # a block of its own: the loops that follow declare those names again
        out = [If(Const(True, "bool"), out)]
    return out
