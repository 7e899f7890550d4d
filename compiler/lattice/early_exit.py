"""Early exit from a reduction into a scalar temporary once it holds the operator's annihilator.

A ``where`` producer reduces into a scalar temporary (``t_ij = false; forall i, j: t_ij |= A[i, j] > 0``).
When the operator has an annihilator that is exact and reachable for what the values may hold
(:func:`compiler.shortcircuit.early_exit`), no later value changes the temporary once it holds it.
:func:`add_early_exits` then starts each loop that only reduces into the temporary with
``if (t == annihilator) break;``: every loop of the producer (the merge of several operands
and the loops that finish each one) stops at its next iteration, and what follows the loops (a
fold of the coordinates no loop visited) cannot change the temporary either.

A loop qualifies when it assigns the temporary and writes nothing else that outlives it: no
memory, no other temporary (its own locals and the positions of its iterators, which only later
loops of the same producer read, are free).

>>> from compiler.imperative.ir import CompoundAssign, Declare, For, Load, Var, Const
>>> t, i = Var("t"), Var("i")
>>> body = [Declare(t, "bool", Const(False, "bool")),
...         For(i, 0, Var("n"), [CompoundAssign("|", t, Load("x", i))])]
>>> out, done = add_early_exits(body, {"t": t})
>>> print(out[1])
for (int64 i = 0; i < n; i++) {
    if (t) {
        break;
    }
    t |= x[i];
}
>>> done
['t']
"""

from __future__ import annotations

import numpy as np

from ..algebra import reduction_annihilator
from ..dtypes import typed_scalar
from ..imperative.ir import (Allocate, Assign, BinOp, Block, Break, CompoundAssign, Const, Declare, For, Grow, If,
                             Pragma, Store, Tagged, UnOp, Var, View, While)
from ..imperative.traverse import map_bodies, walk
from ..imperative.privatize import is_parallel_pragma
from ..shortcircuit import early_exit
from .algebra import expr_facts
from .ordering import wheres
from .plan import temp_value

_WRITES = (Store, Grow, Allocate, View)


def annihilated(name: str, op, dtype):
    """The IR test ``isannihilator(op, name)`` of a scalar of ``dtype``.

    >>> from compiler.algebra import lookup
    >>> print(annihilated("t", lookup("min"), "float64"), annihilated("t", lookup("and"), "bool"))
    t == (-inf) !t
    """
    v = Var(name)
    rel, value = reduction_annihilator(op)
    if op.name != "choose":
        value = op.annihilator_for(dtype)
    if np.dtype(dtype) == np.dtype(bool):
        return v if bool(value) == (rel == "==") else UnOp("!", v)
    value = typed_scalar(value, dtype)
    return BinOp(rel, v, Const(value.item() if hasattr(value, "item") else value, np.dtype(dtype).name))


def exits(setup) -> dict:
    """``{temporary: (test, why)}`` for each scalar temporary of ``setup`` whose reduction may stop
    early, and ``{temporary: why}`` of those with an annihilator that may not (for the trace).

    >>> from compiler.format import dense
    >>> from compiler.notation import parse
    >>> from compiler.lattice.plan import Setup
    >>> stops, others = exits(Setup.create(parse("s[] = any[i](x[i] > 0)"), {"x": dense(1)}))
    >>> {t: str(test) for t, (test, _) in stops.items()}, others
    ({'t_i': 't_i'}, {})
    """
    stops, not_stopped = {}, {}
    for w in wheres(setup.statement):
        t = w.temp
        if t.workspace or t.op is None or t.name not in setup.temps or reduction_annihilator(t.op) is None:
            continue
        dtype = np.dtype(setup.temps[t.name][1])
        ok, why = early_exit(t.op, dtype, expr_facts(temp_value(w), setup.fill_of))
        if ok:
            stops[t.name] = (annihilated(t.name, t.op, dtype), why)
        else:
            not_stopped[t.name] = why
    return stops, not_stopped


def add_early_exits(stmts, tests: dict, temporaries=()) -> tuple[list, list]:
    """``stmts`` with ``if (test) break;`` at the head of every loop in the scope of a temporary of
    ``tests`` (``{name: test}``) that only reduces into it, writing none of ``temporaries`` (the
    kernel's other temporaries) declared outside it; and the names that got one."""
    done: list = []
    guarded = set(tests) | set(temporaries)

    def qualifies(loop, name) -> bool:
        inner = {n.var.name for n in walk(loop.body) if isinstance(n, (Declare, For))}
        assigns = False
        for n in walk(loop.body):
            if isinstance(n, _WRITES):
                return False
            if isinstance(n, (Assign, CompoundAssign)):
                target = n.target.name
                if target == name:
                    assigns = True
                elif target in guarded and target not in inner:
                    return False
        return assigns

    def visit(body: list, active: dict, threaded: bool = False) -> list:
        """``body`` with its loops checked; ``threaded``: its first statement follows a parallel pragma."""
        out = []
        for k, s in enumerate(body):
            # (a thread cannot break out of the others' iterations: the loops inside one may)
            parallel = (threaded and k == 0) or (k > 0 and isinstance(body[k - 1], Pragma)
                                                  and is_parallel_pragma(body[k - 1]))
            if isinstance(s, Declare) and s.var.name in tests:
                active = {**active, s.var.name: tests[s.var.name]}
                out.append(s)
                continue
            if isinstance(s, (For, While)):
                s = map_bodies(s, lambda b: visit(b, active))
                names = [] if parallel else [n for n in active if qualifies(s, n)]
                if names:
                    name = names[0]
                    s = map_bodies(s, lambda b: [If(active[name], [Break()]), *b])
                    if name not in done:
                        done.append(name)
                out.append(s)
                continue
            if isinstance(s, (Tagged, Block)):
                s = map_bodies(s, lambda b: visit(b, active, parallel))
            elif isinstance(s, (If, Allocate)):
                s = map_bodies(s, lambda b: visit(b, active))
            out.append(s)
        return out

    return visit(list(stmts), {}), done


__all__ = ["exits", "add_early_exits", "annihilated"]
