"""Loop order of concrete index notation: the workspaces (``where``) of a statement, and each
chain of ``forall``s put in an order its iteration graph allows.

Both the CFIR plan (:mod:`compiler.lattice.cfir`) and the scheduling language
(:mod:`compiler.lattice.schedule`) order statements, so this lives apart from either.

>>> from compiler.lattice.cin import concretize
>>> from compiler.notation import parse
>>> stmt = concretize(parse("y[i] = A[i, j] * x[j]"))
>>> wheres(stmt)
[]
"""

from __future__ import annotations

from ..errors import StrategyError
from ..notation.ast import Index
from .cin import Forall, Sequence, Stmt, Where, assignments, expr_accesses, foralls, loop_chain, wrap_loops
from .iteration_graph import IterationGraph


def wheres(s) -> list:
    """The ``where`` statements of ``s``, producers before their consumers."""
    if isinstance(s, Where):
        return wheres(s.producer) + [s] + wheres(s.consumer)
    if isinstance(s, Forall):
        return wheres(s.body)
    if isinstance(s, Sequence):
        return wheres(s.define) + wheres(s.mutate)
    return []


def side_graph(graph: IterationGraph, s: Stmt) -> IterationGraph:
    """``graph`` restricted to the accesses of ``s`` (one side of a ``where``)."""
    return graph.restricted(x for a in assignments(s) for x in [a.lhs, *expr_accesses(a.rhs)])


def order_statement(s: Stmt, graph: IterationGraph, order=None, top: bool = True) -> Stmt:
    """Put each chain of foralls in an order the iteration graph allows (or ``order``); the top
    chain's loops that a nested reduction's operands store after its own index come last."""
    chain, body = loop_chain(s)
    if chain:
        if order is not None:
            wanted = [Index(i) if isinstance(i, str) else i for i in order]
            if sorted(i.name for i in wanted) != sorted(i.name for i in chain):
                nested = set(foralls(body)) if body is not None else set()
                inner = [i.name for i in wanted if i not in chain and i in nested]
                why = (f": {', '.join(inner)} {'is a loop' if len(inner) == 1 else 'are loops'} of a nested reduction "
                       f"or a workspace, run inside the loops {', '.join(i.name for i in chain)}; reorder orders "
                       f"the loops around the assignment to the output (a reduction precomputed into a workspace "
                       f"orders its own loops as its operands' formats need)" if inner else "")
                names = [i.name for i in wanted]
                twice = sorted({n for n in names if names.count(n) > 1})
                if twice and not why:
                    why = f": {', '.join(twice)} {'is' if len(twice) == 1 else 'are'} listed twice"
                raise StrategyError(f"schedule: order {[i.name for i in wanted]} must list the loops "
                                    f"{[i.name for i in chain]}{why}")
            allowed = graph.order(chain, prefer=wanted)
            if allowed != wanted:
                for e_before, e_after, p in graph.edges():
                    if e_before in wanted and e_after in wanted and \
                            wanted.index(e_before) > wanted.index(e_after):
                        raise StrategyError(
                            f"reorder({', '.join(i.name for i in wanted)}) does not apply: {p.access} is "
                            f"stored with {e_before} before {e_after}")
            chain = wanted
        else:
            # (the loops of the nested reductions run inside this chain)
            chain = graph.order(chain, prefer=chain, inner={i for i in graph.variables if i not in chain}
                                if top else ())
    if isinstance(body, Where):
        body = Where(order_statement(body.consumer, side_graph(graph, body.consumer), top=False),
                     order_statement(body.producer, side_graph(graph, body.producer), top=False), body.temp)
    return wrap_loops(chain, body)
