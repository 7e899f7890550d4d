"""Walks of many sparse fibers merged into one loop, as the lattice merges its loops (issue 30).

A SparseList fiber unfurls to two phases, its stored entries up to ``last`` (a Stepper) and its
fill after them. A loop coiterating k such fibers lowers the product of their phases: 2^k
combinations, each a loop of its own over the steppers still walking, whose step is a case per
subset of them (3^k cases in all). ``where(a != b, where(c == d, d, e), 0.0)`` over five sparse
vectors of different fills was thousands of lines of C; r7 of issue 30 stopped after 20,000
looplet lowerings.

From four fibers on, where the product would lower more than seven loops (more than seven of its
combinations do something, each differently: the lattice's threshold), each walk runs on past its
last entry until the last of them ends: its stepper's child past its entries is its fill to the end
of that region (a position out of entries holds a stop no step reaches: its test of the step's end
fails, and it reads nothing). The k sequences then share their phase stop, ``max(lastA, lastB,
...)``: of the 2^k combinations one walks them all, one is all fills, and every mixed one is
provably empty. The step's 2^k cases stay, each once. Where one walk past its entries makes
others idle, as ``(a & b & c) | d`` or the bitwise erosion's rows beside their padding, the
product's combinations are few regions, whose steps are each one point (:mod:`.point_steps`):
cheaper than the merged step's cases, they stay.

The walks are a SparseList's entries or a SparseCOO mode's segments (its tuples sharing a coordinate,
:class:`~.looplets.Entries`), at any level of a nest. A step of merged walks is one case
(:func:`present_chunk`): each walk's child is there where it ends at the step and absent elsewhere
(:attr:`~.fibers.SubFiber.present`: a list's or COO's positions none, a value its fill), where a
Switch per walk lowered 2^k arms, each again at every level below (issue 30's r7, nested ``where``s
over 3-D COO and CSF operands, stopped after 20,000 looplet lowerings). Walks of fibers above others
merge from three (:data:`MERGE_NESTED_FROM`); the product's regions are counted on at most
:data:`MOST_TRIED` combinations, those with the fewest walks past their entries first
(:func:`fewest_moved_first`), not 2^k.

>>> from compiler.format import csr
>>> from compiler.looplets.fibers import TensorInfo, UnfurlContext, child_fiber
>>> from compiler.looplets.levels import unfurl
>>> from compiler.imperative.ir import Var
>>> ctx = UnfurlContext()
>>> seqs = [unfurl(child_fiber(TensorInfo.from_format(t, csr()).root(), Var("i")), ctx, "read").body
...         for t in "ABCD"]
>>> walks = mergeable_walks(seqs)
>>> merged = merged_walk(walks[0], Var("walks_end"), ctx.fresh)
>>> print(merged.phases[0].stop, "/", walks_end(walks[:2]))
walks_end / lastA > lastB ? lastA : lastB
>>> print(str(merged.phases[0].body.preamble[0]).strip())
int64 jA = qA < qA_stop ? A1_idx[qA] : 0;
>>> print(str(merged.phases[0].body.preamble[1]).strip())
int64 qA_end = qA < qA_stop ? jA + 1 : walks_end + 1;
>>> mergeable_walks(seqs[:3]) is None
True
"""

from __future__ import annotations

from dataclasses import replace

from ..imperative import ir
from ..imperative.ir import Assign, BinOp, CompoundAssign, Const, Declare, If, Select, Var, While
from ..imperative.traverse import pure
from . import extents as X
from .fibers import SubFiber
from .absent_fibers import can_be_absent
from .looplet_access import looplets_of
from .looplets import Fill, Phase, Run, Sequence, Spike, Stepper, unshift
from .program import Block, Literal, Value
from .wrappers import FillFiber

#: the fewest walks merged into one loop: four (2^4 = 16 combinations of phases; three keep the
#: product, whose loops a student compares with the papers', as the lattice keeps TACO's seven)
MERGE_FROM = 4

#: the most phase combinations looked at to count the product's regions: 2^7 (from eight walks on,
#: the product would lower more; merged, they are one loop)
MOST_TRIED = 128

#: the fewest walks of fibers above others merged: three (each of the product's combinations is a nest
#: of loops whose steps are products again: 2^3 at each of three levels of 3-D operands was 17,000 lines)
MERGE_NESTED_FROM = 3

#: the fewest parts (statements of a loop's body, as a concatenation's, each reading the loop's
#: index) among which two or more walks, each in a part of its own, merge: three, as the lattice's
#: merged loop of a concatenation's parts (:mod:`compiler.lattice.seqmerge`). Each part is then
#: lowered once, not in every combination of the others' phases and every case of their steps
MERGE_PARTS_FROM = 3

#: the most loops the product of phases lowers beside merged walks: seven, as the lattice keeps TACO's
#: seven loops (fewer regions are cheaper unmerged: their steps are points where one walk makes others idle)
MOST_REGIONS = 7


def entries_of(s: Stepper):
    """The stored children ``s`` walks (its :class:`~.looplets.Positions` or
    :class:`~.looplets.Entries`: ``q``, ``q_stop``, ``last``), or None."""
    return s.positions if s.positions is not None else s.entries


def walk_then_fill(seq) -> bool:
    """Whether ``seq`` is a fiber's walk of its stored entries up to its ``last``, then its fill:
    a stepper with positions (a SparseList's) or entries (a SparseCOO mode's segments), whose step
    starts with declarations, and loops moving only those (a COO segment's end)."""
    if not isinstance(seq, Sequence) or len(seq.phases) != 2:
        return False
    (walk, tail) = seq.phases
    s = unshift(walk.body)
    if not isinstance(s, Stepper) or s.from_end or s.merged is not None or entries_of(s) is None:
        return False
    declared = {st.var for st in s.preamble if isinstance(st, Declare)}
    return (tail.stop is None and fill_region(unshift(tail.body)) and walk.stop is not None
            and X.prove_eq(walk.stop, entries_of(s).last)
            and all((isinstance(st, Declare) and pure(st.init)) or _moves_only(st, declared) for st in s.preamble))


def fill_region(l) -> bool:
    """Whether the looplet ``l`` is a region of its tensor's fill: a :class:`~.looplets.Fill`, or a run of a
    fiber of the fill under a wrapper (:class:`~.wrappers.FillFiber`: a fill row of a part an offset or a
    window pads), whose every mode unfurls to the fill.

    >>> from compiler.looplets.program import Literal
    >>> fill_region(Fill(Literal(0.0))), fill_region(Run(Literal(0.0)))
    (True, False)
    """
    return isinstance(l, Fill) or isinstance(l, Run) and isinstance(l.body, FillFiber)


def _moves_only(st, declared) -> bool:
    """Whether ``st`` is a loop (a COO segment's end found) whose test calls nothing and whose body
    only moves locals of ``declared``: run on past the entries, it runs only inside them
    (:func:`_run_on`)."""
    return (isinstance(st, While) and pure(st.cond)
            and all(isinstance(x, (CompoundAssign, Assign)) and x.target in declared for x in st.body.body))


def mergeable_walks(seqs) -> list | None:
    """The walk-then-fill sequences among ``seqs`` (:func:`walk_then_fill`) when there are
    :data:`MERGE_FROM` or more, or :data:`MERGE_NESTED_FROM` of fibers above others, else None."""
    walks = [s for s in seqs if walk_then_fill(s)]
    nested = all(_above_fibers(s) for s in walks)
    return walks if len(walks) >= (MERGE_NESTED_FROM if nested else MERGE_FROM) else None


def walks_of_parts(body, i, seqs) -> list | None:
    """The walk-then-fill sequences among ``seqs`` when there are two or more and ``body`` is
    :data:`MERGE_PARTS_FROM` or more statements reading index ``i`` (parts: a concatenation's, one
    per operand), else None. The product of the walks' phases repeats every part in each combination
    (an hstack of COO, CSR and COO lowered the CSR part's row nine times), where merged each part is
    lowered once.

    >>> from compiler.looplets.program import Access, Block, Index, TensorRef
    >>> i = Index("i")
    >>> part = lambda t: Access(TensorRef(t), (i,), source=t)
    >>> walks_of_parts(Block((part("A"), part("B"), part("C"))), i, []) is None
    True
    """
    if not isinstance(body, Block):
        return None
    walks = [s for s in seqs if walk_then_fill(s)]
    parts = [st for st in body.stmts if looplets_of(st, i)]
    return walks if len(walks) >= 2 and len(parts) >= MERGE_PARTS_FROM else None


def _above_fibers(seq) -> bool:
    """Whether a walk's children are fibers of a level below (not values): each of its phase
    combinations is then a nest of loops of its own."""
    chunk = unshift(unshift(seq.phases[0].body).chunk)
    return isinstance(chunk, Spike) and isinstance(chunk.tail, SubFiber) and not chunk.tail.is_leaf


def fewest_moved_first(counts):
    """The combinations of phases of sequences of ``counts`` phases, those with the fewest past
    their first phase first (then in lexicographic order): the regions of a product that differ
    most, one walk at its fill then two, come before the many alike of an intersection.

    >>> list(fewest_moved_first([2, 2, 2]))[:5]
    [(0, 0, 0), (0, 0, 1), (0, 1, 0), (1, 0, 0), (0, 1, 1)]
    """
    counts = tuple(counts)
    for moved in range(sum(c - 1 for c in counts) + 1):
        yield from _moved_by(counts, moved)


def _moved_by(counts, moved):
    """The combinations of phases ``moved`` past the first in all, in lexicographic order (each
    found directly: the first of many walks is not a scan of 2^k)."""
    if not counts:
        if moved == 0:
            yield ()
        return
    if moved > sum(c - 1 for c in counts):
        return
    for first in range(min(counts[0] - 1, moved) + 1):
        for rest in _moved_by(counts[1:], moved - first):
            yield (first,) + rest


def running(kind: str, var: Var, terms) -> list:
    """``var`` declared as the least (``kind`` ``"min"``) or greatest of ``terms``, one term a line:
    a min of k terms nested as ``a < b ? a : b`` repeats each term 2^k times in C (eight walks' step
    stop was a line of 20,000 characters, and nested too deeply for the passes).

    >>> for st in running("max", Var("walks_end"), [Var("lastA"), Var("lastB"), Var("lastC")]):
    ...     print(str(st).strip())
    int64 walks_end = lastA;
    if (lastB > walks_end) {
        walks_end = lastB;
    }
    if (lastC > walks_end) {
        walks_end = lastC;
    }
    """
    cmp = "<" if kind == "min" else ">"
    return [Declare(var, "int64", terms[0])] + [If(BinOp(cmp, t, var), [Assign(var, t)]) for t in terms[1:]]


def walks_end(walks):
    """Where the last of ``walks`` ends: the greatest of their ``last``."""
    return X.imax(*[s.phases[0].stop for s in walks])


def merged_walk(seq, end, fresh) -> Sequence:
    """The walk-then-fill sequence ``seq`` walking on to ``end`` (a local holding :func:`walks_end`),
    then its fill; ``fresh`` names the local of its child's stop."""
    s = unshift(seq.phases[0].body)
    return Sequence((Phase(end, _run_on(s, end, Var(fresh(f"{entries_of(s).q.name}_end")))), seq.phases[1]))


def _run_on(s: Stepper, end, stop: Var) -> Stepper:
    """``s`` walking on past its entries: a position out of them reads nothing (its step's
    declarations take a zero) and its child, which ends at ``stop``, ends at ``end + 1`` past every
    step before ``end``, so it is cut (its fill) and never moved on. Without positions, so no
    lowering takes it for a lone fiber's walk and no merge takes it again. (``stop`` a local: the
    step's stop is the least of the walks', whose spelled-out terms each least repeats.)"""
    P = entries_of(s)
    inside = BinOp("<", P.q, P.q_stop)
    preamble = tuple(replace(st, init=Select(inside, st.init, Const(0, st.dtype))) if isinstance(st, Declare)
                     else If(inside, [st]) for st in s.preamble)
    preamble += (Declare(stop, "int64", Select(inside, s.stop, X.add(end, 1))),)
    return replace(s, stop=stop, preamble=preamble, positions=None, entries=None, state=P.q, descent=None,
                   merged=end)


def present_chunk(s: Stepper, ends):
    """The child of merged walk ``s`` in a step where it ends exactly when ``ends`` holds: its spike
    whose stored part (its tail) is absent where it does not end (:attr:`~.fibers.SubFiber.present`,
    a value its fill), so a step of k merged walks is one case, not 2^k; None where the tail cannot
    be absent (a level that says it cannot, :func:`~.absent_fibers.can_be_absent`)."""
    chunk = s.chunk
    if not (s.merged is not None and isinstance(chunk, Spike) and fill_region(chunk.body)):
        return None
    tail = chunk.tail
    if isinstance(tail, SubFiber) and can_be_absent(tail):
        present = ends if tail.present is None else ir.and_(tail.present, ends)
        return Spike(chunk.body, replace(tail, present=present))
    if isinstance(tail, Value) and isinstance(chunk.body, Fill) and isinstance(chunk.body.value, Literal):
        fill = Const(chunk.body.value.value, tail.dtype)
        return Spike(chunk.body, Value(Select(ends, tail.expr, fill), tail.dtype))
    return None
