"""User-defined scalar functions: an :class:`~compiler.algebra.Operator` from a Python oracle and
a C body, with the algebraic properties the user declares and cheaper bodies for the lattice
cases where some arguments are absent (the sparse array programming paper's ``x,0 => {...}``).

>>> f = user_function("clamp1", lambda x: min(x, 1.0), "return x < 1.0 ? x : 1.0;", arity=1)
>>> f.is_user, f.c_expr(["a"], "float64"), float(f(np.float64(3.0)))
(True, 'ss_clamp1_float64(a)', 1.0)
"""

from __future__ import annotations

import keyword
import re
from dataclasses import replace
from typing import Callable

import numpy as np

from .algebra import NOVALUE, Operator
from .dtypes import value_dtype
from .opimpls import IMPLS
from .values import same_value

_PARAM_NAMES = ("x", "y", "z", "w")


def user_function(name: str, py: Callable, c_body: str, arity: int = 2, params=None,
                  identity=NOVALUE, annihilator=NOVALUE, idempotent: bool = False,
                  commutative: bool = False, associative: bool = False, algebra=None,
                  dtype=None, cases: dict | None = None, selects: tuple = ()) -> Operator:
    """An operator for a user-defined scalar function.

    ``py`` is the oracle implementation (a numpy ufunc is used as is, any other
    callable is applied elementwise); ``c_body`` is the body of a C function of
    the parameters ``params`` (default ``x, y, z, w`` or ``x0, x1, ...``), emitted
    by :meth:`Operator.c_helper`. ``dtype`` fixes the result dtype (default: numpy
    promotion of the operands). ``algebra`` is an optional explicit iteration
    algebra, kept for the lowering: where the arguments are outside it, the
    function is one value, its fill (``"x & y"``: 0 wherever ``x`` or ``y`` is 0).
    Both lattices check it before they trust it, and refuse one its ``py``
    contradicts, naming the counterexample: ``py`` at each pattern of present and
    absent arguments outside the stated region, an absent one at its fill, a
    present one at 0, ±1, 2, ±0.5, the fills and NaN, ±inf where that argument may
    hold them (``x * y`` stated ``"x & y"`` is refused for an ``x`` storing inf:
    ``inf * 0`` is NaN). ``c_body`` must agree with ``py``: the first lowering that uses
    the function at some operand dtypes, under either strategy, builds its C helper
    alone, runs it on probe values (0, ±1, 2, ±0.5, the values the function names, NaN
    and ±inf where the kernel's tensors may hold them; integers for integer arguments)
    and refuses it, naming the arguments, the C result and ``py``'s, where the two
    disagree (floats within a few units in the last place); the trace's
    ``user-functions`` step says what was checked (:mod:`compiler.user_function_check`).
    Not checked: values other than those probes. ``py`` is not part of equality, hashing or
    JSON: an operator is identified by its name, C body and properties.

    ``cases`` gives cheaper bodies for the lattice cases where only some arguments are
    present, as the sparse array programming paper's ``x,0 => {...}``: it maps the case to a
    C body of the present parameters only. The case is written as in the paper, ``"x,0"``
    (``x`` present, ``y`` absent as 0; any number, ``inf``, ``nan``, ``true`` or ``false``
    for an absent value), or as the present parameters alone (``("x",)`` or ``"x"``: the
    others absent as 0). A case body must equal the general body with the other arguments
    at those values (checked with ``c_body``, at the probes); the lattice strategy emits it
    only where the absent arguments' fills are those values, and the general body elsewhere
    (the oracle runs ``py`` on every argument).

    ``annihilator`` is checked against ``py`` when the function is made: another argument at 0, ±1,
    2 and ±0.5 must leave it (else a ValueError names the counterexample), and the non-finite
    values of another argument that do not (``0 * inf`` is NaN) are kept as the annihilator's
    conditions (:attr:`~compiler.algebra.Operator.annihilator_unless`): a kernel skips work by it
    only where the other operands cannot hold them, as for the builtin ``*``. Probes ``py`` cannot
    take (``math.gcd`` of a float) are not checked.

    ``selects`` names the arguments whose value the result always is (a conditional's two
    branches): where they share a fill the result has it whatever the others hold, so both
    strategies skip the coordinates where only the others are stored (``where(j <= i, A, 0)``
    visits A's entries, not every (i, j)).

    >>> import math
    >>> gcd = user_function("gcd", math.gcd, "while (y) { int64_t t = x % y; x = y; y = t; } "
    ...                     "return x < 0 ? -x : x;", identity=0, commutative=True, associative=True)
    >>> gcd(np.array([12, 7, 0]), np.array([18, 0, 5]))
    array([6, 7, 5])
    >>> gcd.c_expr(["a", "b"], "int64"), gcd.fill(0, 0)
    ('ss_gcd_int64(a, b)', np.int64(0))
    """
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"user function name {name!r} must be an identifier")
    if name in {"and", "or", "not", "true", "false", "inf", "nan"}:
        raise ValueError(f"user function name {name!r} is reserved")
    if arity < 1:
        raise ValueError("a user function takes at least one argument")
    if params is None:
        params = _PARAM_NAMES[:arity] if arity <= len(_PARAM_NAMES) else tuple(f"x{k}" for k in range(arity))
    params = tuple(params)
    if len(params) != arity or not all(re.fullmatch(r"[A-Za-z_]\w*", p) for p in params):
        raise ValueError(f"user function {name}: params must be {arity} C identifiers, got {params!r}")
    if associative and arity != 2:
        raise ValueError(f"user function {name}: only binary functions can be associative")
    selects = tuple(selects)
    if not all(isinstance(k, int) and 0 <= k < arity for k in selects):
        raise ValueError(f"user function {name}: selects must be argument positions below {arity}, got {selects!r}")
    if dtype is not None:
        dtype = value_dtype(dtype).name
    op = Operator(name=name, symbol=name, arity=arity, identity=identity, annihilator=annihilator,
                  idempotent=idempotent, commutative=commutative, associative=associative,
                  c_body=c_body, params=params, dtype=dtype, algebra=algebra,
                  cases=_check_cases(name, params, cases), selects=selects)
    if isinstance(py, np.ufunc):
        IMPLS[op.impl_key()] = lambda op, arrays, rdt: py(*arrays)
    else:
        vec = np.frompyfunc(py, arity, 1)

        def impl(op, arrays, rdt, vec=vec):
            out = vec(*arrays)
            return np.asarray(out, dtype=object).astype(rdt) if isinstance(out, np.ndarray) else out
        IMPLS[op.impl_key()] = impl
    if annihilator is not NOVALUE:
        op = replace(op, annihilator_unless=_annihilator_unless(op))
    return op


#: the values another argument is probed at, for an annihilator: finite ones must keep it
_FINITE_PROBES = (0.0, 1.0, -1.0, 2.0, 0.5, -0.5)
#: and the non-finite ones that may not, by :class:`~compiler.algebra.Annihilator`'s names
_NONFINITE_PROBES = (("nan", float("nan")), ("+inf", float("inf")), ("-inf", float("-inf")))


def _annihilator_unless(op: Operator) -> tuple:
    """The non-finite values (``"nan"``, ``"+inf"``, ``"-inf"``) which, held by another argument,
    keep ``op``'s annihilator from annihilating, by its ``py``; a ValueError where ``py`` says it
    does not annihilate a finite value.

    >>> mul = user_function("mulu", np.multiply, "return x * y;", annihilator=0.0)
    >>> mul.annihilator_unless
    ('nan', '+inf', '-inf')
    >>> user_function("bad", np.add, "return x + y;", annihilator=0.0)
    Traceback (most recent call last):
    ...
    ValueError: user function bad: annihilator 0.0 does not annihilate: bad(0.0, 1.0) is 1.0, not 0.0
    """
    a = op.annihilator
    unless = []
    for at in range(op.arity):
        for v in _FINITE_PROBES:
            got = _probe(op, at, a, v)
            if got is not None and not same_value(got, a):
                args = ", ".join(repr(a if k == at else v) for k in range(op.arity))
                raise ValueError(f"user function {op.name}: annihilator {a!r} does not annihilate: "
                                 f"{op.name}({args}) is {got!r}, not {a!r}")
        for kind, v in _NONFINITE_PROBES:
            got = _probe(op, at, a, v)
            if got is not None and not same_value(got, a) and kind not in unless:
                unless.append(kind)
    return tuple(k for k, _ in _NONFINITE_PROBES if k in unless)


def _probe(op: Operator, at: int, a, v):
    """``py`` with ``a`` at argument ``at`` and ``v`` at the others, a Python scalar; None where it
    cannot take them."""
    try:
        with np.errstate(all="ignore"):
            got = np.asarray(op(*[a if k == at else v for k in range(op.arity)]))
    except Exception:   # (py refuses a float: math.gcd, a bitwise function)
        return None
    return got.item() if got.size == 1 else None


def _check_cases(name: str, params: tuple, cases) -> tuple:
    """``cases`` as ``((present params, body, ((absent param, value), ...)), ...)`` in
    parameter order, checked."""
    out = []
    for key, body in (cases or {}).items():
        names, absent = _case_key(name, params, key)
        unknown = [n for n in names if n not in params]
        if unknown or not names or len(set(names)) != len(names) or len(names) == len(params):
            raise ValueError(f"user function {name}: case {key!r} must name some, not all, of the parameters "
                             f"{', '.join(params)}, each once (the arguments present in that case)"
                             + (f"; {', '.join(unknown)} is not a parameter" if unknown else ""))
        if not isinstance(body, str) or not body.strip():
            raise ValueError(f"user function {name}: the body of case {key!r} must be C code (a string)")
        absent = tuple((p, absent.get(p, 0)) for p in params if p not in names)
        out.append((tuple(sorted(names, key=params.index)), body, absent))
    return tuple(out)


_CASE_VALUES = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan"),
                "true": True, "false": False}


def _case_key(name: str, params: tuple, key) -> tuple[tuple, dict]:
    """The present parameters and the absent ones' values of a case key: ``"x,0"`` (the
    paper's notation, one entry per parameter) or the present parameters alone."""
    if not (isinstance(key, str) and "," in key):
        return ((key,) if isinstance(key, str) else tuple(key)), {}
    items = [t.strip() for t in key.split(",")]
    if len(items) != len(params):
        raise ValueError(f"user function {name}: case {key!r} must have one entry per parameter "
                         f"({', '.join(params)}): the parameter where it is present, its value where absent")
    names, absent = [], {}
    for p, t in zip(params, items):
        if t == p:
            names.append(p)
            continue
        try:
            absent[p] = _CASE_VALUES[t.lower()] if t.lower() in _CASE_VALUES else \
                (int(t) if re.fullmatch(r"[-+]?\d+", t) else float(t))
        except ValueError:
            raise ValueError(f"user function {name}: case {key!r}: {t!r} is neither the parameter {p} "
                             f"(present) nor a value it is absent as") from None
    return tuple(names), absent


__all__ = ["user_function"]
