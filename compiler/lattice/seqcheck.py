"""The brute-force check of a sequence lattice (Figs. 12, 13): its loops run over random stored
coordinates, each until an edge sequence ends, against every coordinate of the sequence, so each
coordinate is visited once, in order, by the case of the leaves present there.

>>> from compiler.lattice.sequences import Level, Union
>>> from compiler.lattice.seqlattice import build_seq_lattice
>>> a, b = Level("A", 0, "compressed", 6, "i"), Level("B", 0, "compressed", 6, "i")
>>> check_seq_lattice(build_seq_lattice(Union(a, b)), trials=5).exact
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from .seqiter import Cursors, advance, enter, equals, eval_, init, resume, valid
from .seqlattice import SeqLattice, edges
from .seqwalk import stored_entries
from .sequences import (LEAVES, Concat, Intersect, Level, Offset, Pad, Product, Project, Seq,
                        SequenceError, Slice, Stride, Union, bind, coordinates, stride_at)


@dataclass
class SeqCheck:
    """What :func:`check_seq_lattice` found over its trials (each a list of messages)."""

    missing: list = field(default_factory=list)
    extra: list = field(default_factory=list)
    repeated: list = field(default_factory=list)
    unordered: list = field(default_factory=list)
    wrong_case: list = field(default_factory=list)
    trials: int = 0

    @property
    def exact(self) -> bool:
        return not (self.missing or self.extra or self.repeated or self.unordered or self.wrong_case)


def present_leaves(s: Seq, x: int, data, env: Mapping | None = None) -> frozenset:
    """The iterated leaves of ``s`` that are at its coordinate ``x`` (the case that must run)."""
    env = env or {}
    if x not in coordinates(s, data, env):
        return frozenset()
    if isinstance(s, LEAVES):
        return frozenset([s])
    if isinstance(s, (Union, Intersect)):
        return present_leaves(s.a, x, data, env) | present_leaves(s.b, x, data, env)
    if isinstance(s, Product):
        n = s.b.size()
        return present_leaves(s.a, x // n, data, env) | present_leaves(s.b, x % n, data,
                                                                       bind(s.a, x // n, data, env))
    if isinstance(s, Concat):
        return present_leaves(s.a, x, data, env) if x < s.a.size() else frozenset()
    if isinstance(s, Project):
        if s.k == 0:
            return s.a.iterated()
        return present_leaves(s.a, env[s.group_key] * s.J + x, data, env)
    if isinstance(s, Slice):
        return present_leaves(s.a, s.start + s.step * x, data, env)
    if isinstance(s, Stride):
        return present_leaves(s.a, x * s.J + stride_at(s, env), data, env)
    if isinstance(s, Offset):
        return present_leaves(s.a, x - s.n, data, env)
    if isinstance(s, Pad):
        return present_leaves(s.a, x, data, env)
    return frozenset()


def run_lattice(L: SeqLattice, data, env: Mapping | None = None, state: Cursors | None = None,
                every: bool = False):
    """Run the loops of ``L``, each until an edge sequence runs out: ``[(point, case, x)]`` per
    visited coordinate (``case`` None when no sub-point is at ``x``: nothing to do there); a point
    that writes only the fill has no loop (``every``: it has)."""
    st = state or Cursors(data, env)
    visits = []
    if not L.points:
        return visits
    init(L.points[0].seq, st)
    budget = 4 * L.seq.size() + 16
    for n, p in enumerate(L.points):
        if p.writes_fill and not every:
            continue
        if not all(valid(e, st) for e in edges(p.seq)):
            continue     # an edge of this point ran out: not the state the loops reached
        resume(p.seq, st)
        while valid(p.seq, st):
            budget -= 1
            if budget < 0:
                raise SequenceError(f"the loop over {p.seq} does not terminate")
            x = eval_(p.seq, st)
            enter(p.seq, st)
            case = next((k for k in p.subs if equals(L.points[k].seq, st, x)), None)
            visits.append((n, case, x))
            advance(p.seq, st, x)
    return visits


def random_data(seq: Seq, rng, density: float | None = None) -> dict:
    """Random stored coordinates for every tensor ``seq`` reads (sizes from its levels)."""
    sizes: dict = {}
    for leaf in seq.iters():
        if isinstance(leaf, Level):
            sizes.setdefault(leaf.tensor, {})[leaf.mode] = leaf.extent
    data = {}
    rows = {leaf.tensor: leaf.rows_of for leaf in seq.iters() if isinstance(leaf, Level) and leaf.rows_of}
    for t, modes in sizes.items():
        if rows.get(t) in data:   # (the rows of one tensor, walked for each of its columns: one set of coordinates)
            data[t] = data[rows[t]]
            continue
        dims = [modes.get(m, 1) for m in range(max(modes) + 1)]
        p = rng.choice([0.0, 0.2, 0.5, 0.9, 1.0]) if density is None else density
        mask = rng.random(dims) < p
        data[rows.get(t, t)] = data[t] = {tuple(int(c) for c in idx) for idx in zip(*np.nonzero(mask))}
    return data


def check_seq_lattice(L: SeqLattice, *, trials: int = 20, seed: int = 0, data=None,
                      env: Mapping | None = None, tensors: Mapping | None = None) -> SeqCheck:
    """Check ``L`` against the set semantics over ``trials`` random data sets (or ``data``, or the
    entries of ``tensors``, Tensors by the sequences' names, whose fibers their levels' iterators
    read: :func:`~compiler.lattice.seqwalk.stored_entries`): the loops visit each coordinate of
    ``L.seq`` once, in increasing order within a loop, and at each the case whose iterators are
    exactly those at the coordinate; but the coordinates that the points writing only the fill
    (:func:`drop_fill_points`) would visit, which no loop does.

    >>> from compiler import Tensor
    >>> from compiler.format import Format
    >>> from compiler.levels import Dense, Element, SparseBand
    >>> from compiler.lattice.sequences import Product
    >>> from compiler.lattice.seqlattice import build_seq_lattice
    >>> A = Tensor.from_numpy(np.array([[0, 1.0, 2.0], [3.0, 0, 0]]), Format(Dense(SparseBand(Element(0.0)))))
    >>> s = Product(Level("A", 0, "dense", 2, "i"), Level("A", 1, "compressed", 3, "j"))
    >>> check_seq_lattice(build_seq_lattice(s), tensors={"A": A}).exact
    True
    """
    if tensors is not None:
        data = {name: stored_entries(name, t) for name, t in tensors.items()}
    rng = np.random.default_rng(seed)
    res = SeqCheck()
    for _ in range(1 if data is not None else trials):
        d = data if data is not None else random_data(L.seq, rng)
        res.trials += 1
        want = coordinates(L.seq, d, env)
        visits = run_lattice(L, d, env)
        if any(p.writes_fill for p in L.points):
            # (the lattice with every loop visits each coordinate once too, those loops' ones not here)
            whole = [(n, x) for n, case, x in run_lattice(L, d, env, every=True) if case is not None]
            xs = [x for _, x in whole]
            res.repeated += [(x, d) for x in sorted(set(xs)) if xs.count(x) > 1]
            want -= {x for n, x in whole if L.points[n].writes_fill}
        got = [x for _, case, x in visits if case is not None]
        res.missing += [(x, d) for x in sorted(want - set(got))]
        res.extra += [(x, d) for x in sorted(set(got) - want)]
        res.repeated += [(x, d) for x in sorted(set(got)) if got.count(x) > 1]
        for n in range(len(L.points)):
            xs = [x for p, _, x in visits if p == n]
            if xs != sorted(set(xs)):
                res.unordered.append((n, xs, d))
        for n, case, x in visits:
            if case is None:
                continue
            seq = L.points[n].seq
            expect = present_leaves(seq, x, d, env or {})
            if L.points[case].seq.iterated() != expect:
                res.wrong_case.append((n, x, str(L.points[case].seq), sorted(map(str, expect)), d))
    return res


def verify_seq_lattice(L: SeqLattice, **kw) -> SeqCheck:
    """:func:`check_seq_lattice`, raising :class:`SequenceError` when it finds anything."""
    res = check_seq_lattice(L, **kw)
    if not res.exact:
        raise SequenceError(f"the lattice of {L.seq} is wrong: missing {res.missing[:2]}, extra "
                            f"{res.extra[:2]}, repeated {res.repeated[:2]}, unordered {res.unordered[:2]}, "
                            f"wrong case {res.wrong_case[:2]}; this is a bug in sparsescope:\n{L.text()}")
    return res


__all__ = ["SeqCheck", "check_seq_lattice", "present_leaves", "random_data", "run_lattice", "verify_seq_lattice"]
