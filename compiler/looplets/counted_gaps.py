"""The gaps of many walks folded in once after their loop, by a count per coordinate: ``y[j] max= A[i, j]``.

A column maximum over a CSR matrix stored around 0 walks each row's entries, and at each gap (each column
the row does not store) makes ``y[j] max= 0``: Finch.jl's looplets visit every ``(i, j)``, the whole
dense matrix. :mod:`.idempotent_gaps` folds the gaps of one walk when they all update one target; here each
gap updates its own, ``y[j]``. But the update is the same at every row's gap at ``j``, and idempotent,
commutative and associative (``min``, ``max``, ``or``, ``and``, ``&``, ``|``): it is made once if any walk
had a gap at ``j``, in any order among the entries' updates. A walk of stored positions stores each
coordinate at most once, so a walk over the whole extent has a gap at ``j`` exactly where it does not
store ``j``. Each walk then counts itself (``j_walks += 1``) and each coordinate it stores
(``j_entries[j] += 1``), and after the loop around the walks one loop over the extent makes the update
where ``j_entries[j] < j_walks``: TACO's lattice folds a reduction's fill in by the same count. A sum's
gaps are counted the same way, and add the fill once per walk that had the gap: ``y[j] += (j_walks -
j_entries[j]) * fill`` (a column sum of a matrix stored around 1).

:func:`gap_counted` decides, :func:`plan_counted` plans the count (:class:`CountedFold`: the loop after);
``lower_positions`` counts.

>>> from compiler.algebra import lookup
>>> from compiler.imperative.ir import Var
>>> from compiler.looplets.fibers import SubFiber, TensorInfo
>>> from compiler.looplets.program import Access, Assign, Literal
>>> from compiler.format import parse_format
>>> y = TensorInfo("y", parse_format("dense", ndim=1), "output")
>>> gap = Assign(Access(SubFiber(y, 1, Var("__gap"), "update"), (), "update", "y"), lookup("max"), Literal(0.0))
>>> gap_counted(gap, gap, "__gap") is gap
True
>>> gap_counted(Assign(gap.lhs, lookup("+"), Literal(1.0)), gap, "__gap") is None   # (the walk updates y by max)
True

A column sum of a matrix stored around 1 adds 1 to ``y[j]`` for each walk that did not store ``j``, after them:
``y[j] += (j_walks - j_entries[j]) * 1.0``.

>>> plus = Assign(gap.lhs, lookup("+"), Literal(1.0))
>>> gap_counted(plus, plus, "__gap") is plus
True
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from numbers import Number

from ..imperative.ir import Allocate, BinOp, CompoundAssign, Const, Declare, For, If, Load, Store, Tagged, Var
from ..imperative.traverse import var_names
from .fibers import SubFiber
from .idempotent_gaps import added_per_gap, adds_by_count, folds_once, updates_of
from .looplets import Lookup
from .program import Access, Assign, Index, Node, walk


def gap_counted(gap, body, coordinate: str, bound=frozenset()):
    """``gap`` (the walk's body simplified at a gap, its coordinate the variable named ``coordinate``) where its
    updates may be made once after the walks, for every coordinate where some walk had a gap, or None.

    Each update is ``target <<op>>= literal`` by an idempotent, commutative, associative operator (or each is
    ``target += literal``, added after the walks once per walk that had the gap), into an output's element
    found from the coordinate and the names in ``bound`` alone (a vector's ``y[j]``; a matrix's ``y[k, j]``
    where the loop over ``k`` is around the loop of the walks: nothing else the loops bind, which the update
    after them could not see); ``body`` updates that output by the same operator only, through random access,
    and never reads it."""
    updates = updates_of(gap)
    if not updates or not (all(folds_once(a) for a in updates) or all(adds_by_count(a) for a in updates)) \
            or not all(_by_coordinate(a.lhs, coordinate, bound) for a in updates):
        return None
    ops = {a.lhs.source: a.op for a in updates}
    for n in walk(body):
        if isinstance(n, Access) and n.source in ops:
            if n.mode == "read" or not isinstance(n.tns, (Lookup, SubFiber)):
                return None
        elif isinstance(n, Assign) and n.lhs.source in ops and n.op != ops[n.lhs.source]:
            return None
    return gap


def update_key(node):
    """A key of ``node`` (a program of the walk's body: an update at a gap) equal for two updates that do the
    same: a :class:`~compiler.looplets.fibers.SubFiber`, which compares by identity (each gap makes its element
    anew), by its tensor, level, position and what it writes; a program node by its type and the fields it
    compares; anything else as it is (IR, operators, literals' values).

    >>> from compiler.algebra import lookup
    >>> from compiler.format import parse_format
    >>> from compiler.imperative.ir import Var
    >>> from compiler.looplets.fibers import SubFiber, TensorInfo
    >>> from compiler.looplets.program import Access, Assign, Literal
    >>> y = TensorInfo("y", parse_format("dense", ndim=1), "output")
    >>> def gap(at): return Assign(Access(SubFiber(y, 1, Var(at), "update"), (), "update", "y"), lookup("max"), Literal(0.0))
    >>> gap("j") == gap("j"), update_key(gap("j")) == update_key(gap("j")), update_key(gap("j")) == update_key(gap("k"))
    (False, True, False)
    """
    if isinstance(node, SubFiber):
        return ("fiber", node.tensor.name, node.level, node.pos, node.mode, node.dirty, node.seg, node.present)
    if isinstance(node, tuple):
        return tuple(update_key(x) for x in node)
    if isinstance(node, Node):
        return (type(node), *(update_key(getattr(node, f.name)) for f in fields(node) if f.compare))
    if isinstance(node, Number) and node != node:
        return ("nan", type(node))   # (a fill NaN made twice: equal as a key, as printed)
    return node


def _by_coordinate(lhs, coordinate: str, bound=frozenset()) -> bool:
    """Whether ``lhs`` is an output's element located by the coordinate named ``coordinate`` and names in
    ``bound`` alone."""
    t = lhs.tns
    if not (isinstance(t, SubFiber) and t.is_leaf and t.tensor.role == "output" and not lhs.idxs):
        return False
    names = var_names(t.pos)
    return coordinate in names and names - {coordinate} <= bound


@dataclass
class CountedFold:
    """The count one loop's walks keep, and the update after it: ``entries`` (a scratch array of ``length``
    zeros) counts each coordinate's entries, ``walks`` the walks; ``update(j)`` is the gaps' update at ``j``
    (lowered statements)."""

    entries: str
    walks: Var
    length: object
    update: object
    coordinate: Var
    #: the :class:`LoopHome` it is declared around, and what it counts there
    home: object = None
    key: tuple = ()
    #: ``(tag, origin)`` of the looplet whose walks count (the update after the loop is its code too)
    tagged: tuple | None = None
    #: the outermost :class:`LoopHome`, where ``home`` is inside other loops: the count is allocated once
    #: around it, and starts at zero again after each fold
    outer: object = None

    def walked(self) -> list:
        """What a walk adds to the count before its entries, ``walks += 1``; the count kept around its loop."""
        self.home.folds.setdefault(self.key, self)
        if self.outer is not None:
            self.outer.allocations.setdefault(self.key, self)
        return [CompoundAssign("+", self.walks, Const(1, "int64"))]

    def count(self, j) -> list:
        """What an entry at coordinate ``j`` adds to the count."""
        return [Store(self.entries, j, Const(1, "int64"), "+")]

    def around(self, loop_code: list) -> list:
        """``loop_code`` (the loop around the walks) with the count declared before it and the update after:
        ``for (j = 0; j < n; j++) if (entries[j] < walks) update(j)`` (and ``entries[j] = 0`` for the next
        iteration of the loops around, where there are)."""
        j = self.coordinate
        again = [Store(self.entries, j, Const(0, "int64"))] if self.outer is not None else []
        fold = For(j, Const(0, "int64"), self.length,
                   [If(BinOp("<", Load(self.entries, j), self.walks), self.update), *again])
        if self.tagged is not None:
            tag, origin = self.tagged
            fold = Tagged(tag, [fold], f"the gaps' update where a walk on {j.name} did not store {j.name}", origin)
        counted = [Declare(self.walks, "int64", Const(0, "int64")), *loop_code, fold]
        return counted if self.outer is not None else self.allocated(counted)

    def allocated(self, code: list) -> list:
        """``code`` with the count's array of zeros allocated around it."""
        return [Allocate(self.entries, "int64", self.length, Const(0, "int64"), list(code))]


def plan_counted(low, i, ext, at_gap, body, done) -> CountedFold | None:
    """The count for a walk on ``i`` over ``ext`` whose gaps ``gap_counted`` folds, shared by every walk of
    the same loop with the same update (``low``: the lowerer, whose :attr:`loop_homes` are the loops being
    lowered, innermost last; ``at_gap(name)``: the body simplified at a gap at the coordinate named so,
    ``done`` that at the lowerer's own gap coordinate, which names the update), or
    None: where the walk is not a loop's own directly inside another's, or its extent is not ``[0, n)``
    with ``n`` a size the kernel is given (the update after the loop runs over it). The count is kept
    around that other loop: inside the loops around it (``y[k, j] max= A[k, i, j]`` counts the walks of
    each ``k``'s rows, and folds after them), its array allocated once around the outermost loop."""
    homes = low.loop_homes
    if len(homes) < 2 or homes[-1].index != i:
        return None
    sizes = {t.size(m).name for t in low.tensors.values() for m in range(t.ndim)}
    if not (isinstance(ext.start, Const) and ext.start.value == 0 and isinstance(ext.stop, (Const, Var))
            and var_names(ext.stop) <= sizes):
        return None
    coordinate = Var(low.fresh(i.name))
    # (the update after the loop of the walks may name the loops around that loop, and the kernel's sizes)
    around = {h.index.name for h in homes[:-2]}
    update = gap_counted(at_gap(coordinate.name), body, coordinate.name, frozenset(around | sizes))
    if update is None:
        return None
    targets = {a.lhs.source for a in updates_of(update)}
    if any(isinstance(n, Assign) and n.lhs.source not in targets for n in walk(body)):
        return None   # (the walk updates nothing else: a ShortCircuitScalar's walk stops early, uncounted)
    home = homes[-2]
    key = (i.name, ext.stop, update_key(done))
    if key in home.folds:
        return home.folds[key]
    entries, walks = low.fresh(f"{i.name}_entries"), Var(low.fresh(f"{i.name}_walks"))
    if all(adds_by_count(a) for a in updates_of(update)):
        # (a sum adds the fill once per walk that had the gap: a loop over that count, which integrate multiplies out)
        update = added_per_gap(update, Index(low.fresh(f"{i.name}_gap")), Load(entries, coordinate), walks)
    return CountedFold(entries, walks, ext.stop, low.lower(update), coordinate, home, key, low.looplet_tag,
                       homes[0] if len(homes) > 2 else None)


@dataclass
class LoopHome:
    """A loop being lowered (its ``index``), with the counts its walks keep (:class:`CountedFold`, by what
    they count) to declare around it, and the counts of loops inside it to allocate around it (the
    outermost loop's)."""

    index: object
    folds: dict
    allocations: dict = field(default_factory=dict)


__all__ = ["CountedFold", "LoopHome", "gap_counted", "plan_counted", "update_key"]
