"""The sequence CFIR's interpreter (§5.3): the CFIR run over concrete data with the reference
iterators of :mod:`compiler.lattice.seqiter`. The iterators of a series of loops are initialized
once, a nested series on each entry; after a switch only the sub-iterators at the coordinate
advance. The C the emitter writes (:mod:`compiler.lattice.seqemit`) does the same. Entries holding a NaN or
inf that the CFIR was built assuming absent (:attr:`SeqCFIR.assumed`: finite outside
:func:`compiler.values.assuming`, where an intersection skips ``inf * 0``) are refused, naming the tensor;
:func:`~compiler.lattice.seqderive.seq_evaluate` builds the CFIR for the tensors' values.

>>> from compiler.lattice.sequences import Level, Union
>>> from compiler.lattice.seqcfir import Add, Assign, Forall, Read, build_cfir
>>> a = Level("a", 0, "compressed", 4); b = Level("b", 0, "compressed", 4)
>>> cf = build_cfir(Forall("i", Union(a, b), Assign("c", ("i",), Add(Read("a", (a,)), Read("b", (b,))))))
>>> interpret(cf, {"a": {(0,): 1.0, (2,): 2.0}, "b": {(2,): 10.0, (3,): 20.0}}).outputs["c"]
{(0,): 1.0, (2,): 12.0, (3,): 20.0}

A CFIR that assumed ``b`` finite refuses an ``inf`` of ``b``'s:

>>> from dataclasses import replace
>>> from compiler import values
>>> interpret(replace(cf, assumed={"b": values.FINITE}), {"a": {}, "b": {(1,): float("inf")}})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
compiler.errors.UsageError: b may hold +inf, but the sequence CFIR was built assuming b finite (...); lower it under ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .. import values
from .seqcfir import (Add, Alloc, Assign, Bind, Block, Cat, Fold, Lit, Mul, Op, Read, Reduce, SeqCFIR, Skip, Switch,
                      Temp, While)
from .seqmerge import chained, merged_split, operand_leaves, union_operands, walks_group
from .seqiter import Cursors, advance, enter, equals, eval_, init, locate, next_, resume, valid, walked_inside
from .seqlattice import edges
from .seqrewind import loop_repeats, rewind, save_start
from .sequences import SequenceError, at_index
from .seqwhiles import inner_sequences


@dataclass
class Run:
    """What :func:`interpret` computed: each output's entries, and every write in order."""

    outputs: dict
    writes: list


def interpret(cf, data: Mapping, env: Mapping | None = None) -> Run:
    """Run the CFIR ``cf`` (a :class:`SeqCFIR` or a statement) over ``data``: per tensor, a dict
    from stored coordinates to values (a level's unstored coordinate reads 0). Values a :class:`SeqCFIR` was
    built assuming absent (NaN, inf: its ``assumed``) are refused."""
    stmt = cf.cfir if isinstance(cf, SeqCFIR) else cf
    for name, facts in (cf.assumed if isinstance(cf, SeqCFIR) else {}).items():
        if name in data:
            # (a tensor read again is read under a primed name, A')
            tensor = name.rstrip("'")
            held = values.of_array(list(data[name].values()), exact=True)
            values.check_assumed(tensor, held, facts, "the sequence CFIR",
                                 f"lower it under values.assuming({{{tensor!r}: {tensor}.value_facts, ...}}), or "
                                 f"call seq_evaluate")
    run = Run({}, [])
    workspaces = _summed_into(stmt)
    # (a sum's workspace kept in sparse rows is walked where its producer's loops added: its entries so far)
    st = Cursors({**{w: run.outputs.setdefault(w, {}) for w in workspaces if w not in data}, **data}, env)
    temps: dict = {}
    idx: dict = {}
    budget = [10_000_000]

    def value(e):
        if isinstance(e, Read):
            coords = [idx[i] for i in e.at]
            for lv in e.levels:
                if not st.valid_leaf(lv.key):
                    raise SequenceError(f"{e} read with {lv} past its end")
                coords.append(st.coord_leaf(lv.key))
            if e.tensor not in data and e.tensor in workspaces:
                # (a sum's workspace, which its producer's loops wrote: 0 where they added nothing)
                return run.outputs.get(e.tensor, {}).get(tuple(coords), 0.0)
            if e.tensor not in data:
                raise SequenceError(f"no data given for tensor {e.tensor} (read as {e})")
            return data[e.tensor].get(tuple(coords), e.fill)
        if isinstance(e, Lit):
            return e.value
        if isinstance(e, Temp):
            return temps[e.name]
        if isinstance(e, Add):
            return value(e.a) + value(e.b)
        if isinstance(e, Mul):
            return value(e.a) * value(e.b)
        if isinstance(e, Cat):
            return value(e.a) + value(e.b)
        if isinstance(e, Op):
            return e.op(*(value(x) for x in e.args)).item()
        raise TypeError(f"not a value: {e!r}")

    def run_stmt(s):
        if isinstance(s, Assign):
            key = tuple(idx[i] for i in s.idxs)
            v = value(s.value)
            run.outputs.setdefault(s.out, {})[key] = v
            run.writes.append((s.out, key, v))
        elif isinstance(s, Reduce):
            v = value(s.value)
            if s.idxs:
                out = run.outputs.setdefault(s.out, {})
                key = tuple(idx[i] for i in s.idxs)
                out[key] = out.get(key, 0.0) + v if s.op is None else \
                    s.op(_as_value(out.get(key, s.unchanged), v), v).item()
                if s.count:     # (one count per coordinate of the output)
                    counts = temps.setdefault(s.count, {})
                    counts[key] = counts.get(key, 0) + 1
            else:
                temps[s.out] = temps[s.out] + v if s.op is None else s.op(_as_value(temps[s.out], v), v).item()
                if s.count:
                    temps[s.count] += 1
        elif isinstance(s, Alloc):
            temps[s.name] = s.init
            if s.count:
                temps[s.count] = 0
        elif isinstance(s, Fold) and s.idxs:
            out, counts = run.outputs.setdefault(s.out, {}), temps.get(s.count, {})
            for key in np.ndindex(*s.shape):
                if s.op is not None:
                    if counts.get(key, 0) < s.extent:
                        out[key] = s.op(out.get(key, float(s.op.identity)), s.missed(counts.get(key, 0))).item()
                    continue
                missed = s.missed(counts.get(key, 0))
                if missed != 0 or missed != missed:
                    out[key] = out.get(key, 0.0) + missed
        elif isinstance(s, Fold) and s.op is not None:
            if temps[s.count] < s.extent:
                temps[s.out] = s.op(temps[s.out], s.missed(temps[s.count])).item()
        elif isinstance(s, Fold):
            temps[s.out] += s.missed(temps[s.count])
        elif isinstance(s, Block):
            for x in s.stmts:
                run_stmt(x)
        elif isinstance(s, While):
            run_while(s)
        elif isinstance(s, Bind):
            idx[s.index] = idx[s.outer] * s.size + idx[s.inner]
            run_stmt(s.body)
        elif isinstance(s, Switch):
            x = idx[s.index]
            for seq, body in s.cases:
                if equals(seq, st, x):
                    run_stmt(body)
                    break
        elif not isinstance(s, Skip):
            raise TypeError(f"cannot run {s!r}")

    def run_while(w: While):
        for p in w.rewind:
            rewind(p, st)
        for s in w.init:
            init(s, st)
        # (a merged loop over a π0 or π1 of a union: its operands are the union's, its coordinate their least's group
        # or place in the group)
        split = merged_split(w.seq) if w.merged else None
        ops = union_operands(w.seq if split is None else split) if w.merged else None
        # (each operand's coordinate in a merged split's terms, valid where it is in the groups of the loops around)
        terms = ops if split is None else [chained(w.seq, op) for op in ops]
        if ops is None and not all(valid(e, st) for e in edges(w.seq)):
            return      # an edge of this loop ran out before: not the state the loops reached
        resume(w.seq, st)
        # (a group the loop repeats, walked by a π1 loop inside: back to its start after each coordinate)
        repeats = loop_repeats(w.seq, inner_sequences(w))

        # (a merged loop runs until all its operands ran out, at the least of those left)
        while any(valid(q, st) for q in terms) if ops else valid(w.seq, st):
            budget[0] -= 1
            if budget[0] < 0:
                raise SequenceError(f"the loop over {w.seq} does not terminate")
            x = min(eval_(q, st) for q in terms if valid(q, st)) if ops else eval_(w.seq, st)
            idx[w.index] = x
            # (a split's major index walked inside this loop searches its groups at x: sequences.Stride)
            st.env[at_index(w.index)] = x
            if split is not None and w.seq.k == 0:
                st.group[w.seq.group_key] = x    # (the group of the least operand left, whichever it is)
                save_start(w.seq, st)
            else:
                enter(w.seq, st)
            for located, iterated in w.locs:
                if ops:     # (a merged loop's located at its coordinate)
                    locate(located, st, x)
                elif valid(iterated, st):
                    locate(located, st, eval_(iterated, st))
            outside = st.absent
            if ops and (split is None or w.seq.k == 1):
                # (a fiber under an operand not at x is empty: an inner merged loop's)
                st.absent = outside | frozenset(leaf.key for op, q in zip(ops, terms) if not equals(q, st, x)
                                                  for leaf in operand_leaves(op))
            run_stmt(w.body)
            st.absent = outside
            for p in repeats:
                rewind(p, st)
            if split is None:
                advance(w.seq, st, x, walked_inside(w.body))
            elif w.seq.k == 1:
                for op, q in zip(ops, terms):
                    if equals(q, st, x):
                        next_(op, st)
            elif not walks_group(w.body, ops, w.seq.group_key):
                for op, q in zip(ops, terms):   # (what the loops inside left in the group)
                    while equals(q, st, x):
                        next_(op, st)

    run_stmt(stmt)
    return run



def _as_value(acc, v):
    """The accumulator ``acc`` (its operator's identity, a real number, at first) as complex where ``v`` is: the
    output's type, as numpy and the kernel hold it (``mul(1.0, inf + 1j)`` is C's real times complex, ``inf + 1j``;
    numpy's product of a complex row starts at ``1 + 0j``, and ``(1 + 0j) * (inf + 1j)`` is ``inf + nan j``).

    >>> _as_value(1.0, 2j), _as_value(1.0, 2.0)
    ((1+0j), 1.0)
    """
    return complex(acc) if isinstance(v, complex) and not isinstance(acc, complex) else acc


def _summed_into(s) -> set:
    """The tensors the CFIR ``s`` adds into at coordinates (an output, a sum's workspace)."""
    if isinstance(s, Reduce):
        return {s.out} if s.idxs else set()
    if isinstance(s, Block):
        return set().union(*(_summed_into(x) for x in s.stmts))
    if isinstance(s, While):
        return _summed_into(s.body)
    if isinstance(s, Switch):
        return set().union(*(_summed_into(b) for _, b in s.cases))
    return set()


__all__ = ["Run", "interpret"]
