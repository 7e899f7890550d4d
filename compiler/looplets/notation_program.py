"""Index notation as a loop program: a reduction inside the right-hand side becomes a scalar.

The looplets lower loop programs. Index notation becomes one: its output's indices are the
outermost loops, a reduction at the top of the right-hand side is the update of the output
inside loops over its indices, and every other reduction is *hoisted* into a 0-D temporary
computed where its free indices are bound, as Finch's programs do with a ``Scalar``:

>>> from compiler.notation import parse
>>> prog, hoisted = notation_program(parse("y[i] = b[i] + A[i, j] * x[j]"))
>>> print(prog)
for i = _
  t .= 0.0
  for j = _
    t[] += A[i, j] * x[j]
  y[i] = b[i] + t[]
>>> print(hoisted[0])
t[] = sum[j](A[i, j] * x[j]) (in the loop over i; Scalar(0.0))

An operator call the right-hand side reads more than once (the same node, or one built twice alike)
is computed once, into a local (``let``) that each read names; a reduction's body keeps its own, as it
is computed in loops of its own:

>>> print(notation_program(parse("y[i] = (A[i] + B[i]) * (A[i] + B[i])"))[0])
for i = _
  let sub = A[i] + B[i]
    y[i] = sub * sub

A temporary starts at its reduction's identity, which is also its fill, so the simplifier's
annihilations around a read of it are decided by what it may hold (its identity among them:
a ``max`` of no values is ``-inf``); :func:`note_facts` tells the lowering.

A reduction whose operator has an annihilator (``any``, ``all``, ``min``, ``max``, ``prod``)
reduces into a :class:`~compiler.looplets.scalars.ShortCircuitScalar`, whose loops stop once it
holds the annihilator, when that is exact and can happen (:func:`compiler.shortcircuit.early_exit`): ``0 * inf`` is
NaN, so a product stops at 0 only where its values are finite.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import values
from ..algebra import NOVALUE, reduction_annihilator
from ..shortcircuit import early_exit
from ..errors import StrategyError
from ..lattice.algebra import expr_facts
from ..lattice.iteration_graph import storage_levels
from ..notation import ast as N
from ..notation.dtypes import expr_dtype
from ..values import same_value
from .language import LoopProgram
from .program import Access, Assign, Block, Call, Declare, Define, Index, Literal, Loop, TensorRef, Variable
from .scalars import Scalar, ShortCircuitScalar


@dataclass(frozen=True)
class Hoisted:
    """A reduction computed into the temporary ``name`` inside the loops ``bound`` (outermost
    first), of format ``fmt``; ``why`` says whether, and why (not), its loops stop early."""

    name: str
    reduce: N.Reduce
    bound: tuple
    fmt: object
    facts: values.Facts
    why: str = ""

    def __str__(self):
        where = f"in the loop over {self.bound[-1]}" if self.bound else "before the loops"
        return f"{self.name}[] = {self.reduce} ({where}; {self.fmt})"


def notation_program(stmt, dtype=None, formats=None) -> tuple[LoopProgram, list[Hoisted]]:
    """``stmt`` (index notation) as a loop program, and the reductions hoisted into temporaries.

    ``dtype`` is the result's (when known): a top reduction's output starts at its identity for
    it (a max of bools at False, not at -inf, which C reads as true). ``formats`` (when given)
    type the temporaries and tell what their values may hold; without them they are float64.
    """
    fill_of = (lambda a: formats[a.tensor].fill) if formats else (lambda a: 0.0)

    def dtype_of(e):
        if formats:
            try:
                return np.dtype(expr_dtype(e, lambda a: formats[a.tensor].dtype))
            except (KeyError, TypeError):
                pass
        return np.dtype("float64") if dtype is None else np.dtype(dtype)

    names = []
    for n in N.walk(stmt):
        if isinstance(n, N.Access) and n.tensor not in names:
            names.append(n.tensor)
    taken = set(names)
    hoisted: list[Hoisted] = []
    temporaries: list = []

    def fresh():
        k, name = 1, "t"
        while name in taken:
            k += 1
            name = f"t{k}"
        taken.add(name)
        return name

    indices = {i.name for n in N.walk(stmt) for i in getattr(n, "indices", ()) if isinstance(i, N.Index)}

    def fresh_index(name):
        k = 2
        while f"{name}_{k}" in indices:
            k += 1
        indices.add(f"{name}_{k}")
        return f"{name}_{k}"

    def fresh_local(k):
        return "sub" if k == 0 else f"sub_{k + 1}"

    def unbound(e, order):
        """The indices ``e`` reads outside its reductions that no loop of ``order`` binds."""
        return [i.name for i in N.free_indices(e) if i.name not in order]

    def nest(order, k, last, pre):
        """The loops ``order[k:]`` around ``last``, with ``pre[d]`` before the loop at depth d."""
        stmts = list(pre.get(k, ()))
        if k == len(order):
            return stmts + [last]
        return stmts + [Loop(Index(order[k]), None, _block(nest(order, k + 1, last, pre)))]

    def conv(e, order, start, pre):
        """``e`` as a loop-program expression inside the loops ``order``, its reductions hoisted
        to ``pre`` (by depth, at least ``start``: within the loops being built)."""
        if isinstance(e, N.Access):
            return Access(TensorRef(e.tensor), tuple(Index(i.name) for i in e.indices))
        if isinstance(e, N.Literal):
            return Literal(e.value)
        if isinstance(e, N.IndexValue):   # the loop's index, as Finch reads one in a value
            return Index(e.index.name)
        if isinstance(e, N.Call):
            return Call(e.op, tuple(conv(a, order, start, pre) for a in e.args))
        if isinstance(e, N.Reduce):
            name = hoist(e, order, start, pre)
            return Access(TensorRef(name), ())
        raise StrategyError(f"the looplet strategy cannot convert {e!r}")

    def hoist(r, order, start, pre):
        """Compute the reduction ``r`` into a fresh temporary at the depth where its free
        indices are bound (the loops ``order[:depth]``); its name."""
        free = [i.name for i in N.free_indices(r)]
        depth = max([start, *(order.index(i) + 1 for i in free if i in order)])
        # (an index the reduction binds that a loop around it binds too names another index inside)
        clash = {i.name: fresh_index(i.name) for i in r.indices if i.name in order[:depth]}
        if clash:
            r = _renamed(r, clash)
        own = [i.name for i in r.indices]
        inner = [*order[:depth], *own]
        inner += [i for i in unbound(r.body, inner) if i not in inner]
        dt = np.dtype(dtype_of(r))
        ident = r.op.identity_for(dt)
        if ident is NOVALUE:
            raise StrategyError(f"{r}: the looplet strategy computes a reduction inside an expression into a "
                                f"temporary that starts at the operator's identity, and {r.op} has none")
        ident = ident.item() if hasattr(ident, "item") else ident
        facts = _facts(r, fill_of) if formats else values.FINITE
        stop, why = early_exit(r.op, dt, _facts(r.body, fill_of) if formats else values.FINITE)
        why = why if reduction_annihilator(r.op) is not None else ""   # (a sum never stops early: say nothing)
        name = fresh()
        fmt = (ShortCircuitScalar if stop else Scalar)(ident, dtype=dt)
        temporaries.append((name, fmt))
        hoisted.append(Hoisted(name, r, tuple(order[:depth]), fmt, facts, why))
        sub: dict = {}
        body = conv(r.body, inner, depth, sub)
        stmts = [Declare(TensorRef(name), Literal(ident)),
                 *nest(inner, depth, Assign(Access(TensorRef(name), (), "update"), r.op, body), sub)]
        pre.setdefault(depth, []).extend(stmts)
        return name

    out_idx = [i.name for i in stmt.lhs.indices]
    rhs, op, init = stmt.rhs, stmt.op, None
    top: list = []
    # (a top reduction that may stop early is hoisted like any other, into a ShortCircuitScalar; not where
    # its loop inside the output's would search an operand for each output coordinate: a CSR's columns)
    hoisted_top = isinstance(rhs, N.Reduce) and op is None and early_exit(
        rhs.op, dtype_of(rhs) if dtype is None else np.dtype(dtype),
        _facts(rhs.body, fill_of) if formats else values.FINITE)[0] and not _searched_inside(stmt, formats)
    # (so is one into a sparse output of another fill: its entries start at the fill, the sum at 0)
    hoisted_top = hoisted_top or isinstance(rhs, N.Reduce) and op is None and _starts_elsewhere(
        (formats or {}).get(stmt.lhs.tensor), rhs.op, dtype_of(rhs) if dtype is None else np.dtype(dtype))
    if isinstance(rhs, N.Reduce) and (op is None or op == rhs.op) and not hoisted_top:
        top = [i.name for i in rhs.indices]
        if op is None:   # y[i] = sum_j(...): y starts at the reduction's identity
            ident = rhs.op.identity if dtype is None else rhs.op.identity_for(np.dtype(dtype))
            if ident is NOVALUE:   # (started at 0, a row of negatives had the max 0)
                raise StrategyError(f"{rhs}: the looplet strategy starts the output at the reduction's identity, "
                                    f"and {rhs.op} has none; declare one (user_function(..., identity=...), "
                                    f"-inf for a max)")
            init = Literal(ident)
        op, rhs = rhs.op, rhs.body
    order = list(dict.fromkeys([*out_idx, *top]))
    order += [i for i in unbound(rhs, order) if i not in order]
    pre: dict = {}
    lhs = Access(TensorRef(stmt.lhs.tensor), tuple(Index(i) for i in out_idx), "update")
    # (a subexpression read more than once is computed once, into a local its reads name: r7's
    # ``where(a > b, e, where(c != e, d, f))`` nested N deep read as a tree doubles with each level)
    keys = _Keys()
    shared, lets, bound = shared_subexpressions(rhs, keys), [], {}

    def conv_shared(e):
        k = keys(e)
        if k in bound:
            return bound[k]
        if not isinstance(e, N.Call):
            return conv(e, order, 0, pre)
        out = Call(e.op, tuple(conv_shared(a) for a in e.args))
        if k in shared:
            bound[k] = Variable(fresh_local(len(lets)))
            lets.append((bound[k], out))
            return bound[k]
        return out
    last = Assign(lhs, op, conv_shared(rhs))
    for var, val in reversed(lets):
        last = Define(var, val, last)
    body = nest(order, 0, last, pre)
    if init is not None:
        body.insert(0, Declare(TensorRef(stmt.lhs.tensor), init))
    prog = LoopProgram(stmt.lhs.tensor + "_kernel", tuple(names), Block(tuple(body)), str(stmt), 1,
                       tuple(temporaries))
    return prog, hoisted


class _Keys:
    """Structural identities of notation expressions, as small ints: equal subtrees get one, whether
    the same object or built twice. Memoized by object, so a DAG is keyed in time linear in its
    nodes (hashing its tree would take the tree's, doubling with each shared level)."""

    def __init__(self):
        self.by_id: dict = {}
        self.interned: dict = {}
        self.kept: list = []   # (the keyed objects stay alive: their ids are not reused)

    def __call__(self, e) -> int:
        k = self.by_id.get(id(e))
        if k is not None:
            return k
        if isinstance(e, N.Call):
            parts = ("call", id(e.op), tuple(self(a) for a in e.args))
        elif isinstance(e, N.Literal):   # (by repr: -0.0 is not 0.0 here, NaN is NaN)
            parts = ("literal", type(e.value).__name__, repr(e.value), e.typed)
        elif isinstance(e, N.Reduce):
            parts = ("reduce", id(e))   # (hoisted into a temporary each: never shared here)
        else:
            parts = ("leaf", e)
        k = self.interned.setdefault(parts, len(self.interned))
        self.by_id[id(e)] = k
        self.kept.append(e)
        return k


def shared_subexpressions(e, keys=None) -> set:
    """The keys (:class:`_Keys`) of the operator calls in ``e`` read more than once, outside the
    reductions in it (each hoisted into a temporary of its own): those computed once into a local.
    A call read only inside a shared one is read once, by it.

    >>> from compiler.notation import parse
    >>> rhs = parse("y[i] = (A[i] * B[i]) + (A[i] * B[i]) * C[i]").rhs
    >>> keys = _Keys()
    >>> [str(n) for n in N.walk(rhs) if keys(n) in shared_subexpressions(rhs, keys)][:1]
    ['A[i] * B[i]']
    """
    keys = keys or _Keys()
    uses: dict = {}
    seen: set = set()
    stack = [e]
    while stack:   # (each distinct call once: its operands' reads counted from it)
        n = stack.pop()
        k = keys(n)
        if k in seen or not isinstance(n, N.Call):
            continue
        seen.add(k)
        for a in n.args:
            if isinstance(a, N.Call):
                uses[keys(a)] = uses.get(keys(a), 0) + 1
                stack.append(a)
    return {k for k, n in uses.items() if n > 1}


def _renamed(e, names: dict):
    """``e`` with the indices ``names`` maps renamed (a reduction's own indices included).

    >>> from compiler.notation import parse
    >>> print(_renamed(parse("y[j] = sum[i](A[i, j])").rhs, {"i": "i_2"}))
    sum[i_2](A[i_2, j])
    """
    def idx(i):
        return N.Index(names.get(i.name, i.name)) if isinstance(i, N.Index) else i
    if isinstance(e, N.Access):
        return N.Access(e.tensor, tuple(idx(i) for i in e.indices))
    if isinstance(e, N.IndexValue):
        return N.IndexValue(idx(e.index))
    if isinstance(e, N.Call):
        return N.Call(e.op, tuple(_renamed(a, names) for a in e.args))
    if isinstance(e, N.Reduce):
        return N.Reduce(e.op, tuple(idx(i) for i in e.indices), _renamed(e.body, names))
    return e


def _searched_inside(stmt, formats) -> bool:
    """Whether ``stmt``, a top reduction by an idempotent operator (``any``, ``all``, ``min``, ``max``, whose
    gaps make no update or one folded in by a count: :mod:`compiler.looplets.counted_gaps`) into an output
    written at random (every level dense), reads an operand that stores a reduced index before an output
    index at a level that finds a coordinate by a search (a column's ``any`` over a CSR): inside the loop
    over the output, the reduction's loop would search each row for the column, where the loops in the
    operand's order walk its entries once and update the output at random.

    >>> from compiler.format import parse_format
    >>> from compiler.notation import parse
    >>> stmt = parse("y[j] = any[i](A[i, j] > 2)")
    >>> [_searched_inside(stmt, {"A": parse_format(f)}) for f in ("csr", "csc", "dense", "coo")]
    [True, False, False, True]
    """
    out = formats.get(stmt.lhs.tensor) if formats else None
    if not formats or not stmt.lhs.indices or out is not None and not all(l.located_by_coordinate for l in out.levels):
        return False
    if not stmt.rhs.op.idempotent:
        return False   # (a product's gaps multiply at each coordinate: stopping at a column's first 0 is faster)
    reduced = {i.name for i in stmt.rhs.indices}
    outputs = {i.name for i in stmt.lhs.indices if isinstance(i, N.Index)}
    for a in N.walk(stmt.rhs.body):
        fmt = formats.get(a.tensor) if isinstance(a, N.Access) else None
        if fmt is None or len(fmt.mode_order) != len(a.indices) or not all(isinstance(i, N.Index) for i in a.indices):
            continue
        levels = storage_levels(fmt)   # (a COO's one level holds both modes)
        stored = [a.indices[m].name for m in fmt.mode_order]
        first_reduced = next((k for k, i in enumerate(stored) if i in reduced), None)
        if first_reduced is not None and any(i in outputs and not levels[k].located_by_coordinate
                                             for k, i in enumerate(stored) if k > first_reduced):
            return True
    return False


def _starts_elsewhere(fmt, op, dtype) -> bool:
    """Whether an output of ``fmt`` (None: not known) is sparse and its fill is not ``op``'s identity.
    A level that covers its fibers without a slot per coordinate (a RunList's runs) is written as a
    sparse one is: its entries start at the fill too.

    >>> from compiler.format import parse_format
    >>> from compiler.algebra import lookup
    >>> [_starts_elsewhere(parse_format(f, fill=x), lookup("+"), np.dtype("float64"))
    ...  for f, x in (("csr", 0.0), ("csr", float("nan")), ("dense", float("nan")),
    ...               ("RunList(Element(1.0))", 1.0), ("RunList(Element(0.0))", 0.0))]
    [False, True, False, True, False]
    """
    if fmt is None or all(lvl.located_by_coordinate for lvl in fmt.levels):
        return False
    ident = op.identity_for(dtype)
    return ident is NOVALUE or not same_value(fmt.fill, ident.item() if hasattr(ident, "item") else ident)


def _block(stmts):
    return stmts[0] if len(stmts) == 1 else Block(tuple(stmts))


def _facts(e, fill_of) -> values.Facts:
    return expr_facts(e, fill_of)


def from_index_notation(stmt, dtype=None) -> LoopProgram:
    """Index notation as a loop program: output indices outermost, then reduction indices
    (see :func:`notation_program`).

    >>> from compiler.notation import parse
    >>> print(from_index_notation(parse("y[i] = A[i, j] * x[j]")))
    y .= 0
    for i = _
      for j = _
        y[i] += A[i, j] * x[j]
    """
    return notation_program(stmt, dtype)[0]


def note_facts(hoisted) -> None:
    """Tell the lowering what each temporary may hold (:func:`compiler.values.assume`)."""
    for h in hoisted:
        values.assume(h.name, h.facts)


__all__ = ["Hoisted", "notation_program", "from_index_notation", "note_facts"]
