"""A reduction of a reduction read against a tensor's storage order, computed in nested workspaces.

``out[i] = max[j](min[k](A[j, k, i]))`` with ``A`` stored ``j, k, i`` (Dense(Dense(SparseList))):
the loops ``j, i`` around the min bind ``i`` before ``k``, against ``A``'s order, and no single
workspace helps, as the max over ``j`` cannot move inside the min over ``k``
(:func:`~compiler.lattice.precompute.precompute_expr` says so). TACO's answer is a workspace per
iteration of ``j`` (precompute): the loop over ``i`` moves inside the min, whose scalar temporary
becomes a dense workspace ``w[i]`` (starting at inf), filled by loops ``k, i`` in ``A``'s order for each
``j``, and the max takes each row of it in, ``out[i] max= w[i]`` (:func:`nest_workspaces` shows it).

A workspace starts at its reduction's identity, as the scalar did, and the loops inside it
fold in the operands' fills as they would for the scalar (a row of ``A`` that stores nothing
gives ``w[i] = min(inf, fill)``). Through nested reductions (``max[j](prod[k](sum[l](...)))``)
the same happens at each level that still reads against the storage: a workspace inside the
producer of another, each loop over the workspace's indices innermost in its producer.

Only all-dense tensors are located in any order; only the others are read "against" their storage.

A sparse output updated by a reduction that runs outside its index, over one nested inside it
(``out[i] = prod[j, k](sum[l](A[j, i, l] * B[l, k]))``, ``A`` stored ``j, i, l``), is gathered whole in a dense
workspace first and appended from it after (:func:`gather_output`, the automatic workspace's last resort).
"""

from __future__ import annotations

from dataclasses import replace

from ..algebra import NOVALUE
from ..notation.ast import Access, Call, Reduce, reduction_name
from .cin import (Assignment, Forall, Sequence, Stmt, Temporary, Where, assignments, expr_accesses, loop_chain, names_in,
                  wrap_loops)
from .iteration_graph import is_all_dense, storage_path


def loops_inside(bound: list, paths: list) -> list:
    """The loops of ``bound`` (outermost first) that a reduction with operands stored along
    ``paths`` must run inside: from the first loop bound before an index its storage puts
    first on. The loops before it stay around the reduction's workspace.

    ``C[i, j] = sum[k](A[i, k] * B[k, j])`` in loops ``i, j``: B needs ``k`` before ``j``,
    so the workspace is ``w[j]``, computed per ``i``, not ``w[i, j]`` before every loop.

    >>> from compiler.notation.ast import Index
    >>> i, j, k = Index("i"), Index("j"), Index("k")
    >>> loops_inside([i, j], [(i, k), (k, j)])
    [Index(name='j')]
    """
    first = len(bound)
    while True:
        outside = set(bound[:first])
        late = [bound.index(p) for path in paths for k, p in enumerate(path)
                if p in outside and not all(q in outside for q in path[:k])]
        if not late:
            return bound[first:]
        first = min(late)


def _against(path, bound: list) -> bool:
    """Whether the loops ``bound`` (outermost first) bind an index of ``path`` before one stored ahead of it."""
    held = [p in bound for p in path]
    return any(held[k] and not held[k - 1] for k in range(1, len(held)))


def _stored_paths(s: Stmt, formats) -> list:
    """``(access, storage path)`` of each access read in ``s`` whose tensor is not all dense
    (an all-dense one is located in any order)."""
    out = []
    for a in assignments(s):
        for acc in expr_accesses(a.rhs):
            if acc.tensor in formats and not is_all_dense(formats[acc.tensor]):
                out.append((acc, storage_path(acc, formats[acc.tensor])[0]))
    return out


def read_against_storage(s: Stmt, formats, bound=()):
    """``(access, storage path)`` of the first access that the loops of ``s`` bind against its
    storage order (through workspaces' producers too), or None. The lattice refuses such a read.

    >>> from compiler.notation import parse
    >>> from compiler.format import csc
    >>> from compiler.lattice.cin import concretize
    >>> read_against_storage(concretize(parse("y[i] = A[i, j]")), {"A": csc()})[0]
    Access(tensor='A', indices=(Index(name='i'), Index(name='j')))
    """
    if isinstance(s, Forall):
        return read_against_storage(s.body, formats, (*bound, s.index))
    if isinstance(s, Where):
        return read_against_storage(s.producer, formats, bound) or read_against_storage(s.consumer, formats, bound)
    if isinstance(s, Sequence):
        return read_against_storage(s.define, formats, bound) or read_against_storage(s.mutate, formats, bound)
    if isinstance(s, Assignment):
        for acc, path in _stored_paths(s, formats):
            order = [bound.index(p) for p in path if p in bound]
            if order != sorted(order):
                return acc, path
    return None


def retemp(s, name: str, access: Access):
    """``s`` (a statement or an expression) with each access to the temporary ``name`` made ``access``.

    >>> from compiler.notation.ast import Index
    >>> i = Index("i")
    >>> print(retemp(Assignment(Access("t", ()), None, Access("A", (i,))), "t", Access("w", (i,))))
    w[i] = A[i]
    """
    if isinstance(s, Access):
        return access if s.tensor == name else s
    if isinstance(s, Call):
        return replace(s, args=tuple(retemp(a, name, access) for a in s.args))
    if isinstance(s, Reduce):
        return replace(s, body=retemp(s.body, name, access))
    if isinstance(s, Assignment):
        return replace(s, lhs=retemp(s.lhs, name, access), rhs=retemp(s.rhs, name, access))
    if isinstance(s, Forall):
        return replace(s, body=retemp(s.body, name, access))
    if isinstance(s, Where):
        return replace(s, consumer=retemp(s.consumer, name, access), producer=retemp(s.producer, name, access))
    if isinstance(s, Sequence):
        return replace(s, define=retemp(s.define, name, access), mutate=retemp(s.mutate, name, access))
    return s


class _Nesting:
    """One pass of :func:`nest_workspaces`: fresh names and the notes of what it did."""

    def __init__(self, formats, taken: set):
        from ..names import FreshNames
        self.formats, self.fresh, self.notes = formats, FreshNames(taken), []

    def stmt(self, s: Stmt, bound: list) -> Stmt | None:
        chain, body = loop_chain(s)
        if isinstance(body, Where) and not body.temp.workspace:
            against = [(acc, path) for acc, path in _stored_paths(body.producer, self.formats)
                       if _against(path, [*bound, *chain])]
            if against:
                return self.workspace(chain, body, bound, against)
        inner = self.parts(body, [*bound, *chain])
        return None if inner is None else wrap_loops(chain, inner)

    def parts(self, s: Stmt, bound: list) -> Stmt | None:
        if isinstance(s, Where):
            consumer, producer = self.stmt(s.consumer, bound), self.stmt(s.producer, bound)
            return None if consumer is None or producer is None else replace(s, consumer=consumer, producer=producer)
        if isinstance(s, Sequence):
            define, mutate = self.stmt(s.define, bound), self.stmt(s.mutate, bound)
            return None if define is None or mutate is None else replace(s, define=define, mutate=mutate)
        return s

    def workspace(self, chain: list, where: Where, bound: list, against: list) -> Stmt | None:
        """``chain`` around ``where``, a scalar temporary whose producer reads ``against`` its
        storage: the loops it must not bind first go inside, the temporary a workspace over them."""
        loops = loops_inside([*bound, *chain], [path for _, path in against])
        if not loops or len(loops) > len(chain) or where.temp.op is None:
            return None   # (a loop of another where's nest, or no reduction to start a workspace from)
        outer = chain[:len(chain) - len(loops)]
        name = self.fresh("w")
        ws = Temporary(name, where.temp.op, where.temp.init, tuple(loops), "dense")
        consumer = wrap_loops(loops, retemp(where.consumer, where.temp.name, ws.access()))
        reduced, inner = loop_chain(retemp(where.producer, where.temp.name, ws.access()))
        acc, path = against[0]
        over = ", ".join(i.name for i in loops)
        per = f"for each {', '.join(i.name for i in [*bound, *outer])}, " if [*bound, *outer] else ""
        self.notes.append(f"{acc} is stored in the order {', '.join(p.name for p in path)}, so the "
                          f"{reduction_name(where.temp.op)} over {', '.join(i.name for i in reduced)} cannot run "
                          f"inside the loop over {over}: {per}it runs first into a dense workspace {name}[{over}], "
                          f"the loop over {over} innermost")
        nested = self.parts(Where(consumer, wrap_loops([*reduced, *loops], inner), ws), [*bound, *outer])
        return None if nested is None else wrap_loops(outer, nested)


def nest_workspaces(stmt: Stmt, formats, graph, avoid=frozenset()):
    """``(statement, notes)`` with each nested reduction that reads a tensor against its storage
    computed into a dense workspace, inside the loops it needs (see the module's docstring), or
    None when that leaves a read against a storage order (or there was none to mend).

    >>> from compiler.notation import parse
    >>> from compiler.format import Format, dense
    >>> from compiler.levels import Dense, Element, SparseList
    >>> from compiler.lattice.cin import concretize
    >>> from compiler.lattice.iteration_graph import IterationGraph
    >>> from compiler.lattice.ordering import order_statement
    >>> p = parse("out[i] = max[j](min[k](A[j, k, i]))")
    >>> formats = {"A": Format(Dense(Dense(SparseList(Element(1.0))))), "out": dense(1)}
    >>> graph = IterationGraph.build(p, formats)
    >>> s, notes = nest_workspaces(order_statement(concretize(p), graph), formats, graph)
    >>> print(s)
    forall j:
      where:
        forall i:
          out[i] max= w[i]
      producer:
        w[i] = inf  (workspace: dense over i)
        forall k:
          forall i:
            w[i] min= A[j, k, i]
    """
    from .ordering import order_statement
    if read_against_storage(stmt, formats) is None:
        return None
    nesting = _Nesting(formats, names_in(stmt) | set(avoid) | set(formats))
    new = nesting.stmt(stmt, [])
    if new is None or not nesting.notes:
        return None
    new = order_statement(new, graph, loop_chain(new)[0])
    if read_against_storage(new, formats) is not None:
        return None
    return new, nesting.notes


def gather_output(stmt: Stmt, out: Access, path: tuple, name: str) -> Where | None:
    """``stmt`` computing its output ``out`` into a dense workspace ``name`` over all the output's indices
    (``path``, its storage order), from which the output is appended after, in that order; None unless every
    assignment to ``out`` updates it by one reduction's operator with an identity (the workspace's start).

    The automatic workspace of a reduction both outside the output's index and nested inside it, whose
    workspace a precompute cannot reach (``out[i] = prod[j, k](sum[l](A[j, i, l] * B[l, k]))``, ``A`` stored
    ``j, i, l``: loops ``j, i``, the sum gathered in ``w[k]`` per ``(j, i)``): a sparse output cannot be
    appended inside the loop over ``j``, so the whole product is gathered first, swept once to append.

    >>> from compiler.notation.ast import Index
    >>> from compiler.notation import parse
    >>> from compiler.lattice.cin import concretize
    >>> i = Index("i")
    >>> print(gather_output(concretize(parse("out[i] = prod[j](A[j, i])")), Access("out", (i,)), (i,), "v"))
    where:
      forall i:
        out[i] = v[i]
    producer:
      v[i] = 1  (workspace: dense over i)
      forall i:
        forall j:
          v[i] *= A[j, i]
    """
    ops = {a.op for a in assignments(stmt) if a.lhs.tensor == out.tensor}
    if len(ops) != 1:
        return None
    op = ops.pop()
    if op is None or op.identity is NOVALUE:
        return None
    ws = Temporary(name, op, op.identity, tuple(path), "dense")
    return Where(wrap_loops(list(path), Assignment(out, None, ws.access())), retemp(stmt, out.tensor, ws.access()), ws)


__all__ = ["gather_output", "loops_inside", "nest_workspaces", "read_against_storage", "retemp"]
