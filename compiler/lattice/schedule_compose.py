"""Schedules composed: ``reorder`` after ``split``, ``pos`` and ``fuse`` (taco.md §2.10).

The derived-space commands add relations and leave the statement's foralls as they were
(:mod:`compiler.lattice.derived`); a later ``reorder`` names the loops that now run: the
variables nothing has transformed yet (``i0, i1, jpos0, k, jpos1`` after ``split(i, i0, i1)``,
``pos(j, jpos, A)`` and ``split(jpos, jpos0, jpos1)``). It applies in two parts:

* the order of the original loops, read off the names (each derived variable stands for the
  loop it came from, a fused one for both of its loops), is put on the statement as a
  ``reorder`` before them would (TACO's SpMV ``split(i, i0, i1).reorder(i0, i1, j)``);
* when the names interleave the loops of different original loops (TACO's SpMM names ``k``
  between ``jpos0`` and ``jpos1``; a tiling ``i0, j0, k0, i1, j1, k1``), a :class:`LoopOrder`
  relation has the emitter move the loops it built into that order (:func:`permute_loops`):
  ``for jpos0 { for k { for jpos1 { j = A_idx[jpos]; ... } } }``.

>>> from compiler.lattice.derived import Pos, Split
>>> rels = (Split("i", "i0", "i1", 16), Pos("j", "jpos", "A"), Split("jpos", "jpos0", "jpos1", 8))
>>> derived_order(["i0", "i1", "jpos0", "k", "jpos1"], ["i", "j", "k"], rels, "reorder(...)")
(['i', 'j', 'k'], (LoopOrder(loops=('i0', 'i1', 'jpos0', 'k', 'jpos1')),))
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import serialize
from ..errors import StrategyError
from ..imperative.ir import (Assign, Block, Break, Comment, CompoundAssign, Declare, For, Grow, If, Load, Store,
                             Tagged, Var)
from ..imperative.traverse import walk as ir_walk
from .derived import Fuse, Pos, Split


@serialize.node
@dataclass(frozen=True)
class LoopOrder:
    """The loops of the statement's outer nest, by the names a reorder after split, pos or fuse
    gave them (``i0, j0, k0, i1, j1, k1``: a tiling). The emitter builds each original loop's
    derived loops together (``i0, i1, j0, j1, ...``), then moves them into this order
    (:func:`permute_loops`)."""

    loops: tuple

    def __str__(self) -> str:
        return f"order({', '.join(self.loops)})"

    @property
    def derived(self) -> tuple:
        return ()


def origins(relations) -> dict:
    """Each variable the relations name, mapped to the original loops it iterates, outermost first.

    >>> origins((Fuse("i", "j", "f"), Pos("f", "fp", "B"), Split("fp", "c", "d", 4)))["d"]
    ('i', 'j')
    """
    out: dict = {}
    for r in relations:
        if isinstance(r, Fuse):
            out[r.fused] = out.get(r.outer, (r.outer,)) + out.get(r.inner, (r.inner,))
        elif isinstance(r, (Split, Pos)):
            for v in r.derived:
                out[v] = out.get(r.index, (r.index,))
    return out


def live_variables(loops, relations) -> list:
    """The variables that run as loops: the original loops and derived variables nothing transformed."""
    consumed = {r.index for r in relations if isinstance(r, (Split, Pos))} | \
        {v for r in relations if isinstance(r, Fuse) for v in (r.outer, r.inner)}
    made = [v for r in relations for v in r.derived]
    return [v for v in list(loops) + made if v not in consumed]


def leaves(name: str, relations) -> list:
    """The loops that iterate the original loop ``name`` after ``relations``, outermost first
    (empty for the inner loop of a fuse, which its outer loop's fused variable iterates).

    >>> leaves("j", (Pos("j", "jpos", "A"), Split("jpos", "jpos0", "jpos1", 8)))
    ['jpos0', 'jpos1']
    """
    if any(isinstance(r, Fuse) and r.inner == name for r in relations):
        return []
    for r in relations:
        if isinstance(r, Fuse) and r.outer == name:
            return leaves(r.fused, relations)
        if isinstance(r, Pos) and r.index == name:
            return leaves(r.position, relations)
        if isinstance(r, Split) and r.index == name:
            return leaves(r.outer, relations) + leaves(r.inner, relations)
    return [name]


def derived_order(names, loops, relations, what: str) -> tuple[list, tuple]:
    """``(order of the original loops, relations to add)`` for ``reorder(*names)`` after ``relations``.

    ``loops`` are the statement's loops around the assignment to the output, outermost first.
    Each name must be a variable that runs as a loop. The original loops are ordered by where each first appears; when the names
    interleave the loops of different original loops (a loop between a split's two loops), a
    :class:`LoopOrder` relation asks the emitter to move the loops so.
    """
    made = origins(relations)
    live = live_variables(loops, relations)
    for n in names:
        if not isinstance(n, str):
            raise StrategyError(f"schedule: {what} needs index names (strings), e.g. reorder('i', 'j')")
        if n not in live:
            by = next((r for r in relations if n in (getattr(r, "index", None), getattr(r, "outer", None),
                                                      getattr(r, "inner", None))
                       and n not in r.derived), None)
            if by is not None:
                raise StrategyError(f"schedule: {what} does not apply: {n} is iterated through {by}; name the "
                                    f"variables that run as loops ({', '.join(live)})")
            raise StrategyError(f"schedule: {what} does not apply: {n} is not a loop of the statement (its loops "
                                f"run as {', '.join(live)})")
    twice = sorted({n for n in names if list(names).count(n) > 1})
    if twice:
        raise StrategyError(f"schedule: {what} does not apply: {', '.join(twice)} listed twice")
    missing = [v for v in live if v not in names and made.get(v, (v,))[0] in loops]
    if missing:
        raise StrategyError(f"schedule: {what} does not apply: it must list every loop around the assignment to "
                            f"the output; {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing")
    order = _originals(names, relations)
    natural = [v for o in order for v in leaves(o, relations)]
    return order, (() if natural == list(names) else (LoopOrder(tuple(names)),))


def _originals(names, relations) -> list:
    """The original loops of ``names``, ordered by where each first appears."""
    made = origins(relations)
    order = []
    for n in names:
        for o in made.get(n, (n,)):
            if o not in order:
                order.append(o)
    return order


def moved_loops(order: LoopOrder, relations) -> list:
    """The loops of ``order`` from the first to the last that is not where the emitter builds it
    (each original loop's loops together): only these move.

    >>> rels = (Split("i", "i0", "i1", 4), Pos("j", "jpos", "A"), Split("jpos", "jpos0", "jpos1", 2))
    >>> moved_loops(LoopOrder(("i0", "i1", "jpos0", "k", "jpos1")), rels)
    ['k', 'jpos1']
    """
    names = list(order.loops)
    natural = [v for o in _originals(names, relations) for v in leaves(o, relations)]
    differ = [k for k, (a, b) in enumerate(zip(names, natural)) if a != b]
    return names[differ[0]:differ[-1] + 1] if differ else []


def check_precompute_after(command, relations) -> None:
    """Refuse ``precompute`` over a loop that ``relations`` transform: the workspace's loops are
    new loops of the index (a producer's and a consumer's), which the relation does not name.
    Over other loops it applies as before them (TACO's MTTKRP: ``split(i, i1, i2)``, a reorder,
    then ``precompute(j, w, B[i, k, l] * C[k, j])``).

    >>> from compiler.lattice.schedule import Command
    >>> check_precompute_after(Command("precompute", ("j", "w")), (Split("i", "i0", "i1", 4),))
    >>> check_precompute_after(Command("precompute", ("i", "w")), (Split("i", "i0", "i1", 4),))
    Traceback (most recent call last):
    ...
    compiler.errors.StrategyError: schedule: precompute over i does not apply after split(i, i0, i1, 4, down): \
the workspace's loops over i would be new loops that split(i, i0, i1, 4, down) does not transform; \
precompute before the split, or over a loop no relation names
    """
    index = command.args[0] if command.args else None
    indices = list(index) if isinstance(index, (tuple, list)) else str(index).replace(",", " ").split()
    for r in relations:
        if not r.derived:
            continue
        named = set(origins((r,))[r.derived[0]])
        hit = [i for i in indices if i in named]
        if hit:
            raise StrategyError(f"schedule: precompute over {', '.join(hit)} does not apply after {r}: the "
                                f"workspace's loops over {', '.join(hit)} would be new loops that {r} does not "
                                f"transform; precompute before the {type(r).__name__.lower()}, or over a loop no "
                                f"relation names")


def permute_loops(stmts: list, order: list, what: str, once=frozenset()) -> tuple[list, int]:
    """``(stmts, how many nests it moved)``: each nest of loops over the variables ``order`` names
    (``for i0 { for i1 { ... for k1 {...} } }``) moved into that order by swapping neighbours.

    Two neighbours swap when the inner loop's bounds do not depend on the outer loop (nor on what
    the outer one declares before it: a block's coordinate, a located position), the outer loop
    does nothing but declare before the inner one (and its tail guard, ``if (v >= hi) break``), and
    the innermost body only adds into arrays (``+=``, ``*=``, ``&=``, ``|=``, ``^=``), sets its
    own locals, and sets (``=``) only the arrays in ``once``, each element of which one iteration
    sets: then every iteration runs once either way, and each element's updates are combined by a
    commutative, associative operator. What the outer loop declared is declared again
    inside, in each iteration of the loop moved around it.
    """
    names = set(order)
    out, moved = [], 0
    for s in stmts:
        found = _peel(s, names)
        if found is not None and len(_chain(found[2], names)) == len(names):
            pre, wrappers, loop, post = found
            out += list(pre) + [_rewrap(wrappers, _sorted_nest(loop, order, what, once))] + list(post)
            moved += 1
            continue
        from ..imperative.traverse import map_bodies
        count = [0]

        def inside(body):
            new, k = permute_loops(list(body), order, what, once)
            count[0] += k
            return new
        out.append(map_bodies(s, inside))
        moved += count[0]
    return out, moved


def _peel(s, names):
    """``(before, tags, loop, after)``: the loop over one of ``names`` that ``s`` is, or ends a tag or
    block of (the tag's other statements come before or after it), or None."""
    if isinstance(s, For):
        return ((), (), s, ()) if s.var.name in names else None
    if isinstance(s, (Tagged, Block)):
        found = _in_list(list(s.body.body if isinstance(s, Tagged) else s.body), names)
        if found is not None:
            pre, wrappers, loop, post = found
            return pre, ((s,) if isinstance(s, Tagged) else ()) + tuple(wrappers), loop, post
    return None


def _in_list(stmts: list, names):
    for k, s in enumerate(stmts):
        found = _peel(s, names)
        if found is not None:
            pre, wrappers, loop, post = found
            return stmts[:k] + list(pre), wrappers, loop, list(post) + stmts[k + 1:]
    return None


def _rewrap(wrappers, s):
    for w in reversed(wrappers):
        s = Tagged(w.tag, [s], w.what, w.origin)
    return s


def _chain(loop: For, names) -> list:
    """The nest of loops over ``names`` that starts at ``loop``, outermost first."""
    chain = [loop]
    while True:
        found = _in_list(list(chain[-1].body.body), names)
        if found is None:
            return chain
        chain.append(found[2])


def _sorted_nest(loop: For, order: list, what: str, once) -> For:
    """The nest at ``loop`` with its loops in ``order`` (a bubble sort of neighbour swaps)."""
    rank = {n: k for k, n in enumerate(order)}
    for _ in range(len(order) ** 2):
        swapped = _swap_first_misordered(loop, rank, what, once)
        if swapped is None:
            return loop
        loop = swapped
    raise AssertionError("the loop nest did not settle")


def _swap_first_misordered(loop: For, rank, what, once):
    """``loop`` with the outermost pair of neighbouring loops out of ``rank``'s order swapped, or None."""
    found = _in_list(list(loop.body.body), rank)
    if found is None:
        return None
    before, wrappers, inner, after = found
    if rank[loop.var.name] < rank[inner.var.name]:
        deeper = _swap_first_misordered(inner, rank, what, once)
        if deeper is None:
            return None
        return For(loop.var, loop.start, loop.stop, list(before) + [_rewrap(wrappers, deeper)] + list(after),
                   loop.dtype)
    why = _why_not_swapped(loop, before, inner, after)
    if why:
        raise StrategyError(f"{what}: the loop over {inner.var.name} cannot run outside the loop over "
                            f"{loop.var.name}: {why}")
    _check_reorderable(inner, what, once)
    moved = For(loop.var, loop.start, loop.stop, list(before) + list(inner.body.body), loop.dtype)
    return For(inner.var, inner.start, inner.stop, [_rewrap(wrappers, moved)], inner.dtype)


def _why_not_swapped(loop: For, before, inner: For, after) -> str:
    """Why ``inner`` cannot move around ``loop`` (empty when it can)."""
    declared = {x.var.name for x in before if isinstance(x, Declare)} | {loop.var.name}
    for x in before:
        if not isinstance(x, (Declare, Comment)) and not _is_guard(x):
            return f"the loop over {loop.var.name} does more than declare its coordinate before it"
    if any(not isinstance(x, Comment) for x in after):
        return f"the loop over {loop.var.name} does more after it"
    used = {n.name for e in (inner.start, inner.stop) for n in ir_walk(e) if isinstance(n, Var)}
    if used & declared:
        return (f"its bounds depend on {', '.join(sorted(used & declared))}, which the loop over {loop.var.name} "
                f"sets (a loop over the positions of a level below it, or the inner loop of its own split)")
    return ""


def _is_guard(s) -> bool:
    """``if (v >= hi) break;``: a block's tail guard (the loop's later iterations are past the end too)."""
    return isinstance(s, If) and s.otherwise is None and all(isinstance(x, Break) for x in s.then.body)


#: the updates that may run in another order: commutative and associative
_REORDERABLE = ("+", "*", "&", "|", "^")


def _check_reorderable(loop: For, what: str, once=frozenset()) -> None:
    declared = {n.var.name for n in ir_walk(loop.body) if isinstance(n, Declare)}
    stored = {n.buffer for n in ir_walk(loop.body) if isinstance(n, Store)}
    for n in ir_walk(loop.body):
        if isinstance(n, (Assign, CompoundAssign)) and n.target.name not in declared:
            raise StrategyError(f"{what}: the loop over {_name(loop)} sets {n.target.name}, which the iterations "
                                f"share, so their order matters")
        if isinstance(n, Store) and n.op not in _REORDERABLE and not (n.op is None and n.buffer in once):
            raise StrategyError(f"{what}: the loop over {_name(loop)} stores into {n.buffer} "
                                f"{'by =' if n.op is None else f'by {n.op}='}, and loops move past each other only "
                                f"where every store is an update that combines in any order (+, *, &, |, ^)")
        if isinstance(n, Load) and n.buffer in stored:   # (an update b[p] += v reads b itself, not by a Load)
            raise StrategyError(f"{what}: the loop over {_name(loop)} reads {n.buffer}, which it also writes, so its "
                                f"iterations' order matters")
        if isinstance(n, Grow):
            raise StrategyError(f"{what}: the loop over {_name(loop)} appends to {n.buffer}, in order")
    # (a block's tail guard may stay: the coordinate it tests grows with every loop of the nest, so
    # past the end in one loop's iteration it is past the end in that loop's later iterations too)
    for s in _top_level([x for x in loop.body.body if not _is_guard(x)]):
        if isinstance(s, Break):
            raise StrategyError(f"{what}: the loop over {_name(loop)} stops early (a break)")


def _top_level(stmts):
    """The statements of ``stmts`` and of their branches, but not of nested loops."""
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from _top_level(s.then.body)
            yield from _top_level(s.otherwise.body if s.otherwise is not None else ())
        elif isinstance(s, (Tagged, Block)):
            yield from _top_level(s.body.body if isinstance(s, Tagged) else s.body)


def _name(loop: For) -> str:
    return loop.var.name


__all__ = ["LoopOrder", "check_precompute_after", "derived_order", "leaves", "live_variables", "moved_loops", "origins",
           "permute_loops"]
