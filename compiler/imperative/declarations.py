"""Declarations where their local is first set: ``int64_t p; ... p = pos[i];`` becomes ``int64_t p = pos[i];``.

A strategy declares a loop's cursors together, then sets each (the lattice's iterator model declares every cursor
of a series of loops before the first). A student reading the C should meet a local where it gets its value.
:func:`declare_where_set` moves a declaration with no value of its own down to the first statement of its scope
that mentions the local, where that statement is a plain assignment to it whose value does not read it: nothing
between them mentions the local, so nothing can tell. A local a pragma names keeps its place.

>>> from compiler.imperative.ir import Var, Declare, Assign, Load, Store
>>> p, q = Var("p"), Var("q")
>>> for s in declare_where_set([Declare(p, "int64"), Declare(q, "int64"), Assign(p, Load("pos", 0)),
...                             Store("out", p, 1.0), Assign(q, p)]):
...     print(str(s).strip())
int64 p = pos[0];
out[p] = 1.0;
int64 q = p;
"""

from __future__ import annotations

from .ir import Assign, Declare
from .traverse import map_bodies, pragma_names, var_names

__all__ = ["DECLARED_WHERE_SET", "declare_where_set"]

#: what the trace's ``declarations`` step says
DECLARED_WHERE_SET = "each local declared with no value moved to where it is first set: int64_t p = pos[i];"


def declare_where_set(stmts) -> list:
    """``stmts`` with each declaration of no value moved to where its local is first set (module docstring)."""
    return _moved(list(stmts), pragma_names(stmts))


def _moved(stmts: list, pragmas: set) -> list:
    out = [map_bodies(s, lambda body: _moved(list(body), pragmas)) for s in stmts]
    k = 0
    while k < len(out):
        s = out[k]
        if isinstance(s, Declare) and s.init is None and s.var.name not in pragmas:
            name = s.var.name
            j = next((j for j in range(k + 1, len(out)) if name in var_names(out[j])), None)
            first = out[j] if j is not None else None
            if isinstance(first, Assign) and first.target.name == name and name not in var_names(first.value):
                out[j] = Declare(s.var, s.dtype, first.value)
                del out[k]
                continue
        k += 1
    return out
