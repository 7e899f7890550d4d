"""The looplet simplifier: rewrite rules on loop programs, run by the shared engine.

Rules (each recorded as (rule, before, after) by :func:`compiler.rewrite.rewrite`):

* ``fold``: an operator applied to literals is evaluated;
* ``identity``/``annihilator``: from operator properties (``x + 0 -> x``, ``x * 0 -> 0``);
* ``select``: an operator that selects one of some arguments (``where(c, x, y)``) given the same
  literal in each of them is that literal, whatever its other arguments (``where(c, 0, 0) -> 0``);
* ``missing``: ``f(..., missing, ...) -> missing`` (not ``coalesce``), ``coalesce`` drops
  missing arguments and stops at the first argument that cannot be missing;
* ``noop-update``: ``a[...] += 0`` (the operator's identity) is ``pass``; so is an
  assignment of ``missing``;
* ``sieve-true``/``sieve-false``: ``if true: b -> b``, ``if false: b -> pass``;
* ``ifelse``: a literal condition picks its branch;
* ``empty-loop``: a loop whose body is ``pass`` is ``pass``; blocks are flattened;
* ``define-literal``: ``let v = 2.0: body`` substitutes the literal into ``body``;
* ``never``: ``inf < x``, ``x < -inf`` (and ``>`` mirrored) are false for any ``x``, NaN too;
* ``integrate``: a loop over ``[a, b)`` of ``s[...] += x`` with ``x`` and the target
  invariant in the loop index is ``s[...] += (b - a) * x``; idempotent operators
  (min, max, or, and, overwrite) update once: ``if b > a: s[...] <<op>>= x``.

>>> from compiler.algebra import lookup
>>> from compiler.looplets.program import *
>>> s = Access(TensorRef("s"), (), "update")
>>> prog = Loop(Index("i"), Extent(0, 8), Assign(s, lookup("+"), Call(lookup("*"),
...        (Literal(0.0), Access(TensorRef("x"), (Index("i"),))))))
>>> log = []
>>> print(simplify(prog, log))
pass
>>> [r.rule for r in log]
['annihilator', 'noop-update', 'empty-loop']
"""

from __future__ import annotations

import math

import numpy as np

from .. import values
from ..algebra import NOVALUE, Operator
from ..imperative.ir import BinOp, Const
from ..rewrite import Rule, rewrite
from . import extents as X
from .program import (MISSING, Access, Assign, Block, Call, Count, Define, Literal, Loop, Sieve, Value, folded, is_pass,
                      substitute, uses, walk)

INF = math.inf

PASS = Block(())


def _lit(e):
    return isinstance(e, Literal)


def same_literal(a, b) -> bool:
    """Whether two literal values are the same value: NaN is NaN, a bool is not an int
    (``True`` and ``1`` are written differently in C).

    >>> same_literal(float("nan"), float("nan")), same_literal(True, 1), same_literal(1, 1.0)
    (True, False, True)
    """
    return isinstance(a, bool) == isinstance(b, bool) and values.same_value(a, b)


def _is(e, v) -> bool:
    """Whether ``e`` is the literal ``v`` (with infinities matching the operator's extremes)."""
    return _lit(e) and e.value is not MISSING and v is not NOVALUE and same_literal(e.value, v) and \
        (isinstance(e.value, bool) == isinstance(v, bool))


def applied(op: Operator, args, parts=None) -> Literal | None:
    """``op`` of the literals ``args`` folded as numpy computes it (None where it cannot be): those of a dtype
    (a tensor's fill, or folded from one) in it, so an int32 product wraps as numpy's does, the program's own
    taking the dtype they meet as numpy's Python scalars do; the literal keeps the fills of ``parts`` (``args``).

    >>> from compiler.algebra import lookup
    >>> big = Literal(50000, dtype="int32")
    >>> product = applied(lookup("mul"), (big, big))
    >>> product.value, product.dtype, applied(lookup("mul"), (Literal(50000), Literal(50000))).value
    (-1794967296, 'int32', 2500000000)
    >>> applied(lookup("gt"), (product, Literal(0))).value, applied(lookup("add"), (big, Literal(0.5))).dtype
    (False, 'float64')
    """
    typed = [a.dtype for a in args if a.dtype is not None]
    try:
        if typed:
            to = np.result_type(*typed, *[a.value for a in args if a.dtype is None])
            values_ = [a.typed() if a.dtype is not None else np.asarray(a.value, dtype=to)[()] for a in args]
        else:
            values_ = [a.value for a in args]
        with np.errstate(all="ignore"):
            v = np.asarray(op(*values_))[()]
    except Exception:
        return None
    return folded(v.item(), *(args if parts is None else parts), dtype=v.dtype.name if typed else None)


def fold(t):
    if isinstance(t, Call) and isinstance(t.op, Operator) and t.args and all(_lit(a) for a in t.args) \
            and all(a.value is not MISSING for a in t.args):
        return applied(t.op, t.args)
    if isinstance(t, Call) and t.op == "ifelse" and _lit(t.args[0]) and t.args[0].value is not MISSING:
        return t.args[1] if t.args[0].value else t.args[2]
    return None


def identity(t):
    if not (isinstance(t, Call) and isinstance(t.op, Operator) and t.op.arity == 2):
        return None
    op = t.op
    if op.identity is NOVALUE:
        return None
    positions = op.identity_positions or (0, 1)
    for k in positions:
        other = t.args[1 - k]
        # (a complex 1 is no identity of a product: Operator.neutral_for)
        if _is(t.args[k], op.identity) and not _lit(other) and \
                op.neutral_for(np.asarray(t.args[k].value).dtype) is not NOVALUE:
            return other
    return None


def select(t):
    """``where(c, 0.0, 0.0) -> 0.0``: the arguments an operator selects from (``op.selects``) are
    the same literal, so the result is it, typed as the operator types it."""
    if not (isinstance(t, Call) and isinstance(t.op, Operator) and t.op.selects) or all(_lit(a) for a in t.args):
        return None
    chosen = [t.args[k] for k in t.op.selects]
    if not all(_lit(a) and a.value is not MISSING for a in chosen) or \
            not all(same_literal(a.value, chosen[0].value) for a in chosen[1:]) or \
            any(_lit(a) and a.value is MISSING for a in t.args):
        return None
    return applied(t.op, [a if _lit(a) else chosen[0] for a in t.args], chosen)


def annihilator(t, facts=values.FINITE):
    """``x * 0 -> 0``, ``inf + x -> inf``: only where the other arguments cannot hold a value the
    annihilator does not annihilate (``0 * inf`` is NaN; ``min(nan, -inf)`` is NaN). A literal
    argument is known; any other may hold what ``facts`` say: the program's tensors' (their
    stored values as the lowering assumes them, and their fills), or, given a function of the
    argument (:class:`~compiler.looplets.facts.OperandFacts`), the tensors that argument reads."""
    if not (isinstance(t, Call) and isinstance(t.op, Operator)):
        return None
    for ann in t.op.annihilators:
        for k in ann.positions or range(len(t.args)):
            a = t.args[k]
            # (``false * x`` is ``0 * x`` as C and numpy convert a bool, and ``false & x`` is
            # ``0 & x``: the facts below still keep NaN and infinities on the exact path)
            if not (_is(a, ann.value) or _bool_as(a, ann.value)) or (ann.kinds and not isinstance(a.value, float)):
                continue
            if any(_lit(x) and x.value is MISSING for x in t.args):
                return a   # (the annihilator wins over a missing argument)
            others = [_may_hold(x, facts) for n, x in enumerate(t.args) if n != k]
            ok, why = values.annihilates(t.op, ann, others)
            if ann.unless:   # (once per operator and annihilator: the looplets' cases repeat it)
                values.decide("sparse-path" if ok else "exact-path", f"{t.op.symbol} with {a} at argument {k + 1}",
                              f"it annihilates: {why}" if ok else why)
            if ok:
                return a
    return None


def missing(t):
    if isinstance(t, Call) and t.op == "coalesce":
        args = [a for a in t.args if not (_lit(a) and a.value is MISSING)]
        if not args:
            return Literal(MISSING)
        # a value that cannot be missing ends the search
        for k, a in enumerate(args):
            if not _maybe_missing(a):
                args = args[:k + 1]
                break
        if len(args) == 1:
            return args[0]
        return Call("coalesce", tuple(args)) if len(args) != len(t.args) else None
    if isinstance(t, Call) and any(_lit(a) and a.value is MISSING for a in t.args):
        return Literal(MISSING)
    if isinstance(t, Assign) and _lit(t.rhs) and t.rhs.value is MISSING:
        return PASS
    return None


def _maybe_missing(e) -> bool:
    """Only literals and permissive accesses not yet lowered can be missing."""
    if _lit(e):
        return e.value is MISSING
    if isinstance(e, Value):
        return False
    if isinstance(e, Access):
        return any(type(i).__name__ == "Permit" for i in e.idxs) or _maybe_missing_tns(e.tns)
    if isinstance(e, Call):
        return any(_maybe_missing(a) for a in e.args)
    return False


def _maybe_missing_tns(t) -> bool:
    from .looplets import Looplet
    return isinstance(t, Looplet)


def noop_update(t):
    if isinstance(t, Assign) and t.op is not None and t.op.identity is not NOVALUE:
        ident = t.op.identity
        # (a complex value times 1 + 0j is no no-op where it is infinite: Operator.neutral_for)
        complex_one = _lit(t.rhs) and np.iscomplexobj(t.rhs.value) and t.op.neutral_for("complex128") is NOVALUE
        if (_is(t.rhs, ident) or _bool_as(t.rhs, ident)) and not complex_one and \
                (t.op.identity_positions in (None, (1,)) or 1 in t.op.identity_positions):
            return PASS
    return None


def _bool_as(e, v) -> bool:
    """Whether ``e`` is a bool literal equal, as C converts it, to the number ``v``: ``F[i] |= false``
    updates by ``|``'s identity 0 whatever ``F`` holds (``&``'s -1 is no bool)."""
    return _lit(e) and isinstance(e.value, bool) and isinstance(v, int) and not isinstance(v, bool) \
        and int(e.value) == v


def sieve(t):
    if isinstance(t, Sieve):
        if _lit(t.cond) and t.cond.value is not MISSING:
            return t.body if t.cond.value else PASS
        if is_pass(t.body):
            return PASS
    if isinstance(t, Define) and is_pass(t.body):
        return PASS
    return None


def define_literal(t):
    """``let v = <literal>: body`` is ``body`` with the literal for ``v`` (Finch substitutes constant
    defines), so the rules see it: ``let d = _D[j] + inf`` over ``A``'s fill region makes
    ``D[i] <<min>>= d`` an update by the identity."""
    if isinstance(t, Define) and _lit(t.val) and t.val.value is not MISSING and \
            not any(isinstance(n, Define) and n.var == t.var for n in walk(t.body)):
        return substitute(t.body, {t.var: t.val})
    return None


#: comparisons false whatever the other operand holds, NaN and infinities included
_NEVER = {("lt", 0): INF, ("lt", 1): -INF, ("gt", 0): -INF, ("gt", 1): INF}


def never(t):
    """``inf < x``, ``x < -inf``, ``-inf > x`` and ``x > inf`` are false for every ``x``: an
    update by what they give, ``F[i] |= d < D[i]`` with ``d`` infinite, does nothing."""
    if isinstance(t, Call) and isinstance(t.op, Operator) and not t.op.is_user and len(t.args) == 2:
        for k in (0, 1):
            bound = _NEVER.get((t.op.name, k))
            v = t.args[k].value if _lit(t.args[k]) else None
            if bound is not None and isinstance(v, float) and v == bound:
                return Literal(False)
    return None


def empty_loop(t):
    if isinstance(t, Loop) and is_pass(t.body):
        return PASS
    if isinstance(t, Block):
        flat = []
        for s in t.stmts:
            if isinstance(s, Block):
                flat.extend(s.stmts)
            else:
                flat.append(s)
        if len(flat) == 1:
            return flat[0]
        if len(flat) != len(t.stmts):
            return Block(tuple(flat))
    return None


def integrate(t, facts=values.FINITE):
    """Loop-invariant reductions: ``+=`` multiplies by the loop length, idempotent ops update once.
    A value that may not be finite (a literal inf or NaN, an operator that can make one of finite values, as
    ``1 / x``; where ``facts`` are not finite, any other) is added only where the loop runs: ``0 * inf`` is NaN,
    while adding nothing leaves the sum as it is."""
    if not (isinstance(t, Loop) and t.ext is not None and isinstance(t.body, Assign)):
        return None
    a = t.body
    if a.op is None or uses(a, t.idx) or _has_looplet(a):
        return None
    length = X.sub(t.ext.stop, t.ext.start)
    if a.op.idempotent:
        if X.prove_lt(Const(0, "int64"), length):
            return a
        return Sieve(Value(BinOp("<", t.ext.start, t.ext.stop), "bool"), a, line=t.line)
    if not a.op.is_user and a.op.name == "add":
        # (a count of n copies added is a Count, never folded with the value as a product: the lowering multiplies
        # each part of a complex value by it, as the copies' sum does, where numpy's product with n made complex
        # has an imaginary part inf * 0 for inf + 0j: compiler.looplets.expression_lowering)
        real = _lit(a.rhs) and not isinstance(a.rhs.value, complex)
        # (a 64-bit count: n copies of an int32 fill are summed in 64 bits, as numpy sums int32s, not multiplied in
        # int32; of a uint64 fill, unsigned: numpy's int64 times uint64 is a float64)
        rhs_dtype = getattr(a.rhs, "dtype", None)
        count = "uint64" if rhs_dtype is not None and np.dtype(rhs_dtype).kind == "u" else "int64"
        n = Literal(length.value, dtype=count) if isinstance(length, Const) and real else Count(length, count)
        if isinstance(length, Const) and length.value == 1:
            return a
        scaled = Assign(a.lhs, a.op, Call(_mul(), (n, a.rhs)), line=a.line, column=a.column)
        finite = _may_hold(a.rhs, facts).finite
        if finite or X.prove_lt(Const(0, "int64"), length):
            return scaled
        return Sieve(Value(BinOp("<", t.ext.start, t.ext.stop), "bool"), scaled, line=t.line)
    return None


def _may_hold(e, facts) -> values.Facts:
    """What ``e`` may hold: a literal its value, an operator what it makes of its arguments' (``1 / x``
    and ``x * inf`` may be infinite for a finite ``x``, ``0 / 0`` is NaN), anything else what ``facts``
    say (or, given a function, what it says of that operand)."""
    if _lit(e):
        # (a complex fill's NaN part: 0 * (nan - 1j) is NaN, not 0)
        return values.FINITE if e.value is MISSING else values.of_value(e.value)
    if isinstance(e, Call) and isinstance(e.op, Operator):
        return values.of_call(e.op, [_may_hold(x, facts) for x in e.args])
    return facts(e) if callable(facts) else facts


def _mul():
    from ..algebra import lookup
    return lookup("*")


def _has_looplet(node) -> bool:
    from .looplets import Looplet
    from .program import walk
    return any(isinstance(n, Access) and isinstance(n.tns, Looplet) for n in walk(node))


RULES = [Rule("fold", fold, (Call,)), Rule("identity", identity, (Call,)), Rule("select", select, (Call,)),
         Rule("annihilator", annihilator, (Call,)),
         Rule("missing", missing, (Call, Assign)), Rule("noop-update", noop_update, (Assign,)),
         Rule("sieve", sieve, (Sieve, Define)), Rule("empty-loop", empty_loop, (Loop, Block)),
         Rule("integrate", integrate, (Loop,)), Rule("define-literal", define_literal, (Define,)),
         Rule("never", never, (Call,))]


# the rules that depend on what the values may hold
_with_facts = {"annihilator": lambda facts, pooled: lambda t: annihilator(t, facts),
               "integrate": lambda facts, pooled: lambda t: integrate(t, pooled)}


def _rule_name(r):
    return r.name


def simplify(node, log: list | None = None, extra=(), facts=values.FINITE, fixed=None):
    """Rewrite ``node`` to a fixpoint of :data:`RULES` (and ``extra`` rules), logging to ``log``;
    ``facts`` say what the tensors ``node`` reads may hold, stored or fill, all of them or each
    operand (see :func:`annihilator`). ``fixed``: the terms already simplified with these ``extra``
    and ``facts`` (see :func:`compiler.rewrite.rewrite`), which a lowering keeps across its calls.

    >>> from compiler.algebra import lookup
    >>> from compiler.looplets.program import Call, Literal, Access, TensorRef, Index
    >>> e = Call(lookup("*"), (Literal(0.0), Access(TensorRef("x"), (Index("i"),))))
    >>> print(simplify(e))
    0.0
    >>> from compiler.values import Facts
    >>> print(simplify(e, facts=Facts(posinf=True)))   # x may hold inf: 0 * inf is NaN
    0.0 * x[i]
    """
    pooled = getattr(facts, "pooled", facts)   # (what any operand may hold)
    # (finite complex values do not keep a function's result finite: sin(1000j) is not)
    rules = RULES if pooled.small and not pooled.complex else \
        [Rule(r.name, _with_facts[r.name](facts, pooled), r.types) if r.name in _with_facts else r for r in RULES]
    out = rewrite(node, [*rules, *extra], log, fixed=fixed)
    # the engine reports the sieve rule under one name; name its two cases as the notes do
    if log:
        for k, r in enumerate(log):
            if r.rule == "sieve":
                log[k] = type(r)("sieve-true" if r.after != "pass" else "sieve-false", r.before, r.after)
    return out
