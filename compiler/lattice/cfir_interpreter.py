"""The CFIR interpreter: runs a CFIR (:mod:`compiler.lattice.cfir`) on tensors, a test oracle for
the lowering to the imperative IR.

It walks each loop as the CFIR says (iterators' fibers from the tensors' own arrays, the least
coordinate, locates, the first case whose iterators are at it) and checks the claims the
lowering trusts, such as a workspace's producer setting each coordinate once, in order, and
each tensor's stored values holding no NaN or inf the lowering assumed absent (a CFIR built
outside :func:`compiler.values.assuming` skips ``inf * 0`` where a factor is not stored: run on
an ``inf``, it would leave out the NaN). :func:`cfir_evaluate` builds the CFIR for the tensors'
values, as ``lower()`` does.

>>> import numpy as np
>>> from compiler import Tensor
>>> from compiler.notation import parse
>>> from compiler.format import csr, dense
>>> from compiler.lattice.plan import Setup
>>> from compiler.lattice.cfir_builder import build_cfir
>>> setup = Setup.create(parse("y[i] = A[i, j] * x[j]"), {"A": csr(), "x": dense(1)})
>>> A = Tensor.from_numpy(np.array([[0, 1.0], [2.0, 3.0]]), "csr")
>>> x = Tensor.from_numpy(np.ones(2), "dense")
>>> interpret_cfir(build_cfir(setup.statement, setup), setup, A=A, x=x)
array([1., 5.])
"""

from __future__ import annotations

import numpy as np

from .. import values
from ..dtypes import typed_scalar
from ..notation.ast import Access, Call, IndexValue, Literal
from ..values import same_value
from .cfir import CAlloc, CAssign, CDenseWorkspace, CForall, CSeq, CSkip, CWorkspace
from .cfir_builder import build_cfir
from .conversions import setup_converting
from .diagonal import Found
from .iterators import ModeIterator, py_arrays
from .lattice import literal
from .plan import Setup, init_of


class _Machine:
    def __init__(self, setup: Setup, tensors: dict):
        self.setup = setup
        self.arrays, self.sizes = {}, {}
        self.once_log: dict[str, list] = {}   # coordinates a producer claimed to set once sets
        self.tallies: dict = {}   # a reduction's index -> cases run per coordinate of the loop inside
        for name, t in tensors.items():
            _check_assumed(setup, name, t)
            a, s = py_arrays(name, t)
            self.arrays.update(a)
            self.sizes.update(s)
        self.tensors = tensors
        shape = []
        for i in setup.output.indices:
            t, m = setup.extent_uses[i][0]
            shape.append(tensors[t].shape[m])
        start = setup.scatter_start()
        fill = setup.out_fill if start is None else start
        self.out = np.full(tuple(shape), fill, dtype=setup.out_dtype)
        self.parent: dict = {}   # (access key, mode) -> parent of that mode
        self.env: dict = {}

    def value(self, acc: Access):
        key = str(acc)
        if acc.tensor in self.setup.temps:
            t, dt = self.setup.temps[acc.tensor]
            if t.workspace:
                return self.arrays[acc.tensor].get(self._at(acc), init_of(t, dt))
            return self.env[acc.tensor]
        t = self.tensors[acc.tensor]
        if key in self.setup.flexible:
            p = 0
            for sm, m in enumerate(t.format.mode_order):
                p = p * t.storage_shape[sm] + self.env[acc.indices[m].name]
        else:
            p = self.parent[(key, len(self.setup.paths[key]))]
            if p == -1:   # a diagonal's entry its last level does not store
                return self.setup.fill_of(acc)
        vals = t.vals
        return np.asarray(vals[p])[()]

    def expr(self, e):
        if isinstance(e, Access):
            return self.value(e)
        if isinstance(e, Literal):
            return typed_scalar(e.value, e.dtype)
        if isinstance(e, IndexValue):
            return np.int64(self.env[e.index.name])
        if isinstance(e, Call):
            with np.errstate(all="ignore"):
                return np.asarray(e.op(*[self.expr(a) for a in e.args]))[()]
        raise TypeError(f"cannot evaluate {e!r}")

    def run(self, n):
        if isinstance(n, CSkip):
            return
        if isinstance(n, CSeq):
            for s in n.stmts:
                self.run(s)
        elif isinstance(n, CAlloc):
            old = self.env.get(n.temp)
            self.env[n.temp] = n.init
            self.run(n.body)
            if old is not None:
                self.env[n.temp] = old
        elif isinstance(n, CWorkspace) and n.once:
            old = self.arrays.get(n.temp)
            self.arrays[n.temp] = {}
            producer, *consumer = n.body.stmts
            self.once_log[n.temp] = []
            self.run(producer)
            # the lowering trusts this claim (no bitmap test, no sort): check it
            log = self.once_log.pop(n.temp)
            if any(a >= b for a, b in zip(log, log[1:])):
                raise AssertionError(f"workspace {n.temp}: the producer claims to set each coordinate once, "
                                     f"ascending, but set {log}")
            for x in consumer:
                self.run(x)
            self.arrays[n.temp] = old
        elif isinstance(n, (CWorkspace, CDenseWorkspace)):
            old = self.arrays.get(n.temp)
            self.arrays[n.temp] = {}
            self.run(n.body)
            self.arrays[n.temp] = old
        elif isinstance(n, CAssign):
            v = self.expr(n.rhs)
            if n.lhs.tensor in self.setup.temps and self.setup.temps[n.lhs.tensor][0].workspace:
                ws = self.arrays[n.lhs.tensor]
                at = self._at(n.lhs)
                with np.errstate(all="ignore"):
                    ws[at] = n.op(self.value(n.lhs), v) if n.op is not None else v
                if n.lhs.tensor in self.once_log:
                    self.once_log[n.lhs.tensor].append(at)
                return
            if n.output:
                at = tuple(self.env[i.name] for i in n.lhs.indices)
                if n.op is not None:
                    with np.errstate(all="ignore"):
                        v = n.op(self.out[at], v)
                self.out[at] = v
            else:
                cur = self.env[n.lhs.tensor]
                with np.errstate(all="ignore"):
                    self.env[n.lhs.tensor] = typed_scalar(n.op(cur, v), self.setup.temps[n.lhs.tensor][1]) \
                        if n.op is not None else v
        elif isinstance(n, CForall):
            self.forall(n)
        else:
            raise TypeError(f"cannot run {n!r}")

    def forall(self, n: CForall):
        fibers, cursor = {}, {}
        for loop in n.loops:
            for it in loop.iterated:
                k = (str(it.name), it.mode)
                if k not in fibers:
                    key = self._key(it)
                    parent = self.parent[(key, it.mode)] if it.mode > 0 else 0
                    # (-1: not at the coordinate above, in a merged loop's one case: an empty fiber)
                    fibers[k] = [] if _absent(parent) else it.py_fiber(self.arrays, self.sizes, parent)
                    cursor[k] = 0
        N = self.sizes[n.extent]
        u, ran = 0, 0
        saved = dict(self.parent)
        per = n.fold.per if n.fold is not None else None
        if per is not None:
            self.tallies[n.index.name] = {}
        for loop in n.loops:
            its = [(it, (it.name, it.mode)) for it in loop.iterated]
            # (a merged loop runs while one of the loops it stands for would; an iterator out of entries
            # is at the extent, where no case tests it true)
            parts = [[(x.name, x.mode) for x in part] for part in loop.any_of] or [[k for _, k in its]]
            while (loop.universe and loop.any_of or any(all(cursor[k] < len(fibers[k]) for k in part)
                                                          for part in parts)) and (not loop.universe or u < N):
                coords = {k: fibers[k][cursor[k]][0] if cursor[k] < len(fibers[k]) else N for _, k in its}
                i = u if loop.universe else min(coords.values())
                self.env[n.index.name] = i
                for loc in loop.located:
                    if isinstance(loc, ModeIterator):
                        key = self._key(loc)
                        par = self.parent[(key, loc.mode)] if loc.mode > 0 else 0
                        self.parent[(key, loc.mode + 1)] = -1 if _absent(par) else \
                            par * self.sizes[loc.param("size")] + i
                    elif isinstance(loc, Found):   # searched once the level above is at i (-1: not stored)
                        key = self._key(loc)
                        above = self.setup.iters[key][loc.mode - 1]
                        k = (above.name, above.mode)
                        if above.kind != "sparse":
                            par = self.parent[(key, loc.mode)]
                        elif above in loop.iterated and coords[k] == i:
                            par = fibers[k][cursor[k]][1]
                        elif above in loop.located:   # (located just before, as the loop's located come in order)
                            par = self.parent[(key, loc.mode)]
                        else:
                            continue   # the level above is not at i: the access is absent
                        self.parent[(key, loc.mode + 1)] = loc.py_find(self.arrays, self.sizes, par, i)
                for it, k in its:
                    if coords[k] == i:
                        self.parent[(self._key(it), it.mode + 1)] = fibers[k][cursor[k]][1]
                for case in loop.cases:
                    if case.fill_absent:
                        # (a merged loop's one case: where one of its loops would be, an operand
                        # not at i read as its fill)
                        if not (loop.universe or any(all(coords[k] == i for k in part) for part in parts)):
                            break
                        for it, k in its:
                            if coords[k] != i:
                                self.parent[(self._key(it), it.mode + 1)] = -1
                    if all(coords[(t.name, t.mode)] == i for t in case.tests) and \
                            all(self._present(key) for key in case.value_tests) and \
                            all(coords[k] == i for it, k in its if self._key(it) in case.present
                                and self._key(it) not in case.fill_absent):
                        if not case.omit:
                            self.run(case.body)
                            ran += 1
                            if n.tally is not None:
                                counts = self.tallies[n.tally.name]
                                counts[i] = counts.get(i, 0) + 1
                        break
                for _, k in its:
                    if coords[k] == i:
                        cursor[k] += 1
                if loop.universe:
                    u += 1
        self.parent = saved
        f = n.fold
        if per is not None:
            counts = self.tallies.pop(n.index.name)
            for j in range(self.sizes[self.setup.extents[per]]):
                if N > counts.get(j, 0):
                    self.env[per.name] = j
                    self.run(CAssign(f.lhs, f.op, literal(f.op.reduce_fill(f.fill, N - counts.get(j, 0))), f.output))
        elif f is not None and N > ran:
            self.run(CAssign(f.lhs, f.op, literal(f.op.reduce_fill(f.fill, N - ran)), f.output))

    def _at(self, acc: Access):
        """A workspace's key for ``acc``: its coordinate, or the tuple of them over several indices."""
        at = tuple(self.env[i.name] for i in acc.indices)
        return at[0] if len(at) == 1 else at

    def _key(self, it) -> str:
        for key, name in self.setup.names.items():
            if name == it.name:
                return key
        raise KeyError(it.name)

    def _present(self, key) -> bool:
        acc = self.setup.access(key)
        v = self.value(acc)
        return not same_value(v, self.setup.fill_of(acc))


def _absent(parent) -> bool:
    """Whether ``parent`` marks an access absent below (-1; a segment's parent is a pair)."""
    return not isinstance(parent, tuple) and parent == -1


def _check_assumed(setup: Setup, name: str, t) -> None:
    """Refuse values the CFIR was not built for: a stored NaN or inf the lowering assumed absent."""
    assumed = setup.assumed.get(name)
    if assumed is not None:
        values.check_assumed(name, t.value_facts, assumed, "the CFIR",
                             f"build the Setup and the CFIR under values.assuming({{{name!r}: {name}.value_facts, "
                             f"...}}), or call cfir_evaluate")


def interpret_cfir(cfir, setup: Setup, **tensors) -> np.ndarray:
    """Run the CFIR on tensors (by name); return the dense output as a numpy array."""
    m = _Machine(setup, tensors)
    m.run(cfir)
    return m.out


def cfir_evaluate(program, **tensors) -> np.ndarray:
    """``program`` (index notation without shape operators) computed by the CFIR interpreter
    over ``tensors``: the CFIR built as ``lower()`` builds it for them (assuming what their
    stored values hold; an input read against its storage order converted), a dense array.

    >>> from compiler import Tensor
    >>> from compiler.notation import parse
    >>> A = Tensor.from_numpy(np.array([np.inf, 0.0]), "sparse_vector")
    >>> B = Tensor.from_numpy(np.array([[0.0, 2.0], [1.0, 0.0]]), "csr")
    >>> cfir_evaluate(parse("y[i] = sum[l](A[l] * B[l, i])"), A=A, B=B)     # (inf * B's absent 0)
    array([nan, inf])
    """
    with values.assuming({name: t.value_facts for name, t in tensors.items()},
                         values.limit_of(t.dtype for t in tensors.values())):
        _, setup, conversions = setup_converting(program, {n: t.format for n, t in tensors.items()}, None, None)
        cfir = build_cfir(setup.statement, setup)
    read = dict(tensors)
    for name, _, fmt, _, _ in conversions:
        if name in read:
            read[name] = read[name].asformat(fmt)
    return interpret_cfir(cfir, setup, **read)


__all__ = ["cfir_evaluate", "interpret_cfir"]
