"""The looplets standing in a loop body's accesses on one index: found, replaced, truncated.

When the lowerer unfurls the accesses of a loop on ``i``, each access whose first index is ``i``
holds a looplet (:mod:`.looplets`) in place of its tensor. The lowering rules
(:mod:`.looplet_rules`) work on the body through these functions: which looplets are there
(:func:`looplets_of`), the body with each replaced (:func:`replace_looplets`; a replacement
that is not a looplet consumes the index), and the body cut to a shorter region
(:func:`truncate_others`, :func:`truncate_strict`).

>>> from compiler.looplets.program import Access, Index, Literal
>>> i = Index("i")
>>> body = Access(Run(Literal(2.0)), (i,))
>>> [type(l).__name__ for l in looplets_of(body, i)], style_of(Fill(Literal(0.0)))
(['Run'], 'Run')
>>> replace_looplets(body, i, lambda l: l.body)
Literal(value=2.0)
"""

from __future__ import annotations

from dataclasses import replace

from .fibers import SubFiber, leaf_value
from .looplets import AcceptRun, Case, Fill, Looplet, Run, Spike, Switch, Thunk, truncate, unshift
from .program import Access, Assign, Literal, Value, folded, postmap, walk
from .wrappers import permissive


def style_of(l) -> str:
    """The lowering style of looplet ``l`` (shifts pushed down): a Fill lowers as a Run."""
    l = unshift(l)
    if isinstance(l, Fill):
        return "Run"
    return l.style


def writes_only_runs(body, i) -> bool:
    """Whether every assignment in ``body`` writes an output taking runs on ``i``: then the
    body over a region where the reads are constant is one write per output, whatever the
    region's length (a reduction into anything else would count every index)."""
    return all(isinstance(n.lhs.tns, AcceptRun) and n.lhs.idxs and n.lhs.idxs[0] == i
               for n in walk(body) if isinstance(n, Assign))


def read_key(n):
    """What makes two read accesses read the same looplet nest on their first index: the tensor's
    fiber, that index (with its modifiers) and which later indices are permissive (a permit there
    reaches this level's fill regions, :func:`~compiler.looplets.wrappers.read_below`); or None for
    writes and accesses that cannot be compared. The later indices themselves do not matter: each
    access reads the sub-fiber on with its own. ``E[i, q]`` in ``t[] += E[i, q] * G[q, l]`` and
    ``E[i, q2]`` beside it, a product's row read once per column block of a concat, walk E's rows
    once, not as three operands whose regions (present here, absent there) multiply.

    >>> from compiler.format import csr
    >>> from compiler.looplets.fibers import TensorInfo
    >>> from compiler.looplets.program import Access, Index
    >>> E = TensorInfo.from_format("E", csr()).root()
    >>> i, q, q2 = Index("i"), Index("q"), Index("q2")
    >>> key = read_key(Access(E, (i, q), "read"))
    >>> key == read_key(Access(E, (i, q2), "read")), key == read_key(Access(E, (q, i), "read"))
    (True, False)
    """
    if n.mode != "read":
        return None
    t = n.tns
    fiber = ((id(t.tensor), t.level, repr(t.pos), repr(t.seg), repr(t.present)) if isinstance(t, SubFiber)
             else (id(t),))
    return fiber + (repr(n.idxs[:1]), tuple(permissive(x) for x in n.idxs[1:]))


def operands_on(body, i) -> list:
    """The program's tensors ``body`` reads through accesses whose first index is ``i``, sorted.

    >>> from compiler.looplets.program import Call, Index, TensorRef
    >>> i, j = Index("i"), Index("j")
    >>> reads = [Access(TensorRef(t), (x,), source=t) for t, x in [("B", i), ("A", i), ("C", j)]]
    >>> operands_on(Call("coalesce", reads), i)
    ['A', 'B']
    """
    return sorted({n.source for n in walk(body) if isinstance(n, Access) and n.idxs and n.idxs[0] == i
                   and n.mode == "read" and n.source})


def looplets_of(body, i) -> list:
    """The looplets of accesses whose first index is ``i`` (shifts pushed down), in order."""
    out, seen = [], set()
    for n in walk(body):
        if isinstance(n, Access) and n.idxs and n.idxs[0] == i and isinstance(n.tns, Looplet):
            l = n.tns
            if id(l) not in seen:
                seen.add(id(l))
                out.append(unshift(l))
    return out


def replace_looplets(body, i, fn, only=None):
    """Replace the looplet of each access on ``i`` (shifts pushed down) by ``fn(looplet)``.

    A replacement that is not a looplet ends the access's use of ``i``: the access
    becomes the value (a fill or a scalar), or the sub-fiber indexed by the rest.
    """
    # a looplet shared by several accesses is rewritten once, and so is a shared Shift: each push
    # makes new looplets, and the accesses of one entry (an offset output's) must keep one nest
    done = {}

    def visit(n):
        if isinstance(n, Access) and n.idxs and n.idxs[0] == i and isinstance(n.tns, Looplet):
            if id(n.tns) not in done:
                l = unshift(n.tns)
                skip = only is not None and not isinstance(l, only)
                done[id(n.tns)] = (n.tns, l if skip else fn(l), skip)  # (n.tns kept alive: its id is not reused)
            _, new, skip = done[id(n.tns)]
            if skip:
                return replace(n, tns=new) if new is not n.tns else None
            if isinstance(new, Looplet):
                return replace(n, tns=new)
            return _consume(new, n)
        return None
    return postmap(body, visit)


def _consume(new, n):
    """The access ``n`` after its first index was consumed, yielding ``new``."""
    rest = n.idxs[1:]
    if isinstance(new, Fill):
        new = new.value
        if not isinstance(new, Literal):
            return new
    if isinstance(new, Literal) and n.source:   # (a fill of n's tensor: the constant is folded from it)
        return folded(new.value, new, n.source, dtype=new.dtype)
    if isinstance(new, (Literal, Value)):
        return new
    if isinstance(new, SubFiber):
        if new.is_leaf and not rest and n.mode == "read":
            return leaf_value(new)
        return replace(n, tns=new, idxs=rest)
    return replace(n, tns=new, idxs=rest)


def truncate_others(body, i, ext, new_stop, exclude=()):
    """``body`` with each looplet on ``i`` but those of the ``exclude`` types cut from ``ext``
    to ``[ext.start, new_stop)``."""
    def fn(l):
        if isinstance(l, exclude):
            return l
        return truncate(l, ext.start, ext.stop, new_stop)
    return replace_looplets(body, i, fn)


def truncate_strict(l):
    """``l`` cut strictly before the end of its region: a Spike loses its tail."""
    l = unshift(l)
    if isinstance(l, Spike):
        return Run(l.body)
    if isinstance(l, Switch):
        return Switch(tuple(Case(c.cond, truncate_strict(c.body)) for c in l.cases))
    if isinstance(l, Thunk):
        return Thunk(l.preamble, truncate_strict(l.body), l.epilogue)
    return l


def cut_alike(l) -> bool:
    """Whether ``l`` reads the same cut strictly before the end of its region as whole
    (:func:`truncate_strict` changes nothing): it holds no Spike whose tail the cut drops.

    >>> from .looplets import Run, Spike
    >>> cut_alike(Run(1)), cut_alike(Spike(1, 2))
    (True, False)
    """
    l = unshift(l)
    if isinstance(l, Spike):
        return False
    if isinstance(l, Switch):
        return all(cut_alike(c.body) for c in l.cases)
    if isinstance(l, Thunk):
        return cut_alike(l.body)
    return True
