"""Operators with algebraic properties and fill-value inference (user-defined functions: :mod:`compiler.user_functions`).

An :class:`Operator` is a scalar function that knows how to run on numpy arrays
(the oracle), how to print itself in C, what dtype it returns, and its algebraic
properties: identity, annihilator, idempotence, commutativity, associativity.
The properties drive both lowering strategies (iteration spaces, early exit,
reduction shortcuts) and fill-value inference (:meth:`Operator.fill`,
:meth:`Operator.reduce_fill`).

>>> add = lookup("+")
>>> add.identity, add.commutative, add.c_expr(["a", "b"], "float64")
(0, True, '(a + b)')
>>> lookup("min").fill(float("inf"), 3.0)
np.float64(3.0)
>>> lookup("+").reduce_fill(2.0, 5)            # sum of five 2.0s
np.float64(10.0)
>>> lookup("max").reduce_fill(7, 1000)        # idempotent: one copy is enough
np.int64(7)

Semantics chosen (see also each operator's ``doc``):

* dtypes follow numpy promotion restricted to :data:`compiler.dtypes.VALUE_DTYPES`,
  except that arithmetic (``+ - * neg abs pow``) on booleans gives ``int64``
  (``True + True == 2``, as in Python); ``/`` is true division (ints give
  ``float64``); ``& | ^`` accept ints and bools only (logical on bools);
  ``and or not`` and comparisons accept anything and give ``bool``.
  ``sqrt exp log sin cos tan`` and the other functions of <math.h> (``asin acos atan
  sinh cosh tanh asinh acosh atanh expm1 log1p log2 log10``, ``atan2 hypot copysign nextafter`` of
  two) give a float (``float64`` for integers and bools, as numpy's ufuncs do); ``floor ceil trunc round`` give a float back rounded (``round`` to
  the nearest, ties to even, as numpy's) and an
  integer or bool unchanged, in its dtype (as numpy 2 does).
* NaN: ``min``/``max`` propagate NaN like :func:`numpy.minimum` (the C code
  guards with ``isnan``); comparisons with NaN are false except ``!=``;
  ``choose(nan)`` never matches. An annihilator may hold only where the other
  operands avoid some values: :attr:`Operator.annihilators` says which (``0 * y``
  is 0 for a finite ``y``; ``inf + y`` is ``inf`` unless ``y`` is NaN or ``-inf``;
  ``min(-inf, y)`` is ``-inf`` unless ``y`` is NaN), and :mod:`compiler.values`
  decides from what the operands may hold.
* ``//`` (``floordiv``) and ``%`` (``mod``) are numpy's ``floor_divide`` and
  ``remainder``: the quotient rounds toward minus infinity and the remainder takes
  the divisor's sign (C's ``/`` and ``%`` truncate), an integer ``x // 0`` and
  ``x % 0`` are 0 (numpy warns; the C helper does not trap) and ``INT_MIN // -1``
  wraps. ``<< >>`` accept integers and bools only and shift as numpy does: by a
  negative count or the width or more, ``<<`` gives 0 and ``>>`` 0 or -1.
* Integer overflow wraps (two's complement) as in numpy. ``pow`` on integers
  with a negative exponent truncates ``1 / a**-b`` toward zero (0 unless
  ``a`` is 1 or -1; 0 also for ``a == 0``) instead of raising as numpy does.
"""

from __future__ import annotations

import difflib
import enum
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import serialize
from .dtypes import VALUE_DTYPES, c_type, value_dtype
from .dtypes import result_dtype as _promote
from .errors import DTypeError, SparsescopeError, UserCodeError
from .opimpls import (BINARY_MATH, COMPLEX_HELPED, COMPLEX_PARTS, C_EXPRS, DTYPE_RULES, IMPLS, REDUCE_UFUNCS, UNARY_MATH,
                      c_cdiv_helper, c_cmul_helper, c_complex_helper, c_cpow_helper,
                      c_divmod_helper, c_ipow_helper, c_shift_helper)
from .opimpls import dtype_error, real_part_dtype, with_real_operand
from .opimpls import c_literal, ieee_pow  # noqa: F401  (re-exported: public names of compiler.algebra)


@serialize.node
class _NoValue(enum.Enum):
    NOVALUE = "NOVALUE"

    def __repr__(self):
        return "NOVALUE"


#: Marks an absent property (no identity, no annihilator) or an unknown fill value.
NOVALUE = _NoValue.NOVALUE


class UnknownOperatorError(SparsescopeError, LookupError):
    """An operator or function name that is not registered."""

    def __str__(self):
        return str(self.args[0])


def _same(a, b) -> bool:
    """Value equality where NaN equals NaN and NOVALUE only equals itself."""
    if a is NOVALUE or b is NOVALUE:
        return a is b
    try:
        if bool(np.isnan(a)) and bool(np.isnan(b)):
            return True
    except TypeError:
        pass
    return bool(a == b)


def _scalar(x):
    """A numpy scalar (keeps the dtype, unlike a Python number)."""
    return np.asarray(x)[()]


@serialize.node
@dataclass(frozen=True)
class Annihilator:
    """``f(..., value, ...) == value`` for a ``value`` at ``positions`` (None: any), provided no
    other argument holds one of ``unless`` (``"nan"``, ``"+inf"``, ``"-inf"``); ``kinds`` are
    the dtype kinds it holds for (``"f"``: floats only; empty: all).

    >>> [(a.value, a.unless) for a in lookup("+").annihilators]
    [(inf, ('nan', '-inf')), (-inf, ('nan', '+inf'))]
    """

    value: Any
    positions: tuple[int, ...] | None = None
    unless: tuple[str, ...] = ()
    kinds: str = ""

    def holds_for(self, dtype) -> bool:
        return not self.kinds or np.dtype(dtype).kind in self.kinds

    def value_for(self, dtype):
        """The annihilator as a value of ``dtype`` (infinities: the integer extremes)."""
        return _value_for(self.value, dtype)


@serialize.node
@dataclass(frozen=True, repr=False)
class Operator:
    """A scalar operator, built in or user defined.

    ``identity`` and ``annihilator`` are :data:`NOVALUE` when absent. An identity
    ``e`` means ``f(e, y) == y`` and ``f(x, e) == x``; with ``identity_positions``
    only an argument at those positions may be ``e`` (``x - 0 == x`` but
    ``0 - x != x``: ``sub`` has identity 0 at position 1). An annihilator ``a``
    means ``f(..., a, ...) == a`` for an ``a`` at any position (or at
    ``annihilator_positions``). Infinite identities/annihilators (of ``min``,
    ``max``) mean the dtype's extreme value for integers and True/False for
    bools: see :meth:`identity_for`.

    The numpy implementation is not a field: builtins find theirs by name, user
    functions in a per-process registry filled by :func:`user_function`. So an
    operator loaded from JSON compares equal to the original and, in the same
    process, still runs.

    >>> lookup("-").identity, lookup("-").identity_positions
    (0, (1,))
    >>> int(lookup("min").identity_for("int32")) == np.iinfo(np.int32).max
    True
    """

    name: str
    symbol: str
    arity: int
    identity: Any = NOVALUE
    annihilator: Any = NOVALUE
    idempotent: bool = False
    commutative: bool = False
    associative: bool = False
    identity_positions: tuple[int, ...] | None = None
    annihilator_positions: tuple[int, ...] | None = None
    #: the parameter of a parametric builtin (the ``z`` of ``choose(z)``)
    param: Any = NOVALUE
    #: C body of a user function (``None`` for builtins)
    c_body: str | None = None
    #: C parameter names of a user function
    params: tuple[str, ...] = ()
    #: fixed result dtype of a user function (``None``: numpy promotion of the operands)
    dtype: str | None = None
    #: an explicit iteration algebra of a user function, opaque here
    algebra: Any = None
    #: cheaper C bodies of a user function for the lattice cases where only some arguments
    #: are absent, at given values: ``((present params, body, absent values), ...)``; see
    #: :func:`user_function`
    cases: tuple = ()
    #: the values (``"nan"``, ``"+inf"``, ``"-inf"``) the other arguments must not hold for
    #: ``annihilator`` to annihilate (``0 * inf`` is NaN)
    annihilator_unless: tuple[str, ...] = ()
    #: further annihilators (:class:`Annihilator`), each with its condition: ``+``'s ``±inf``
    more_annihilators: tuple = ()
    #: the argument positions whose value the result always is (``where(c, x, y)`` is ``x`` or
    #: ``y``): where those arguments all hold one fill, so does the result, whatever the others hold
    selects: tuple[int, ...] = ()

    def __post_init__(self):
        # ("x & !y", {"y": 1}): the assumed fills as sorted pairs, so the operator hashes (the
        # lattice keys expressions by their calls) and compares equal after a JSON round trip
        object.__setattr__(self, "selects", tuple(self.selects))
        alg = self.algebra
        if isinstance(alg, (tuple, list)) and len(alg) == 2 and isinstance(alg[0], str):
            pairs = alg[1].items() if isinstance(alg[1], dict) else alg[1]
            object.__setattr__(self, "algebra", (alg[0], tuple(sorted((str(k), v) for k, v in pairs))))

    # -- identification -------------------------------------------------------

    @property
    def is_user(self) -> bool:
        """True for a function made by :func:`user_function`."""
        return self.c_body is not None

    @property
    def annihilators(self) -> tuple[Annihilator, ...]:
        """Every annihilator with the values the other arguments must avoid for it to hold.

        >>> [(a.value, a.unless) for a in lookup("*").annihilators]
        [(0, ('nan', '+inf', '-inf'))]
        """
        main = () if self.annihilator is NOVALUE else (
            Annihilator(self.annihilator, self.annihilator_positions, self.annihilator_unless),)
        return main + tuple(self.more_annihilators)

    @property
    def reducible(self) -> bool:
        """Whether the operator can reduce: binary and associative."""
        return self.arity == 2 and self.associative

    def __repr__(self):
        if self.param is not NOVALUE:
            return f"Operator({self.name}({self.param!r}))"
        return f"Operator({self.name})"

    def __str__(self):
        if self.param is not NOVALUE and not self.is_user:  # a user function's case is named by its arguments
            return f"{self.name}({_literal_text(self.param)})"
        return self.symbol

    def impl_key(self):
        """The key of this operator's numpy implementation in ``opimpls.IMPLS`` (a user function's
        is its name, body and arity: two functions of one name may differ)."""
        if not self.is_user:
            return self.name
        key = ("user", self.name, self.c_body, self.arity)
        return key + (self.param,) if self.param is not NOVALUE else key

    def specialize(self, present: tuple[int, ...], fills: dict):
        """The case of a user function for a lattice case where only the arguments at
        ``present`` are there (the others, ``{position: value}`` in ``fills``, hold their
        fill): an operator of the present arguments with the case's body, or None when
        the function gives no body for that case, or gives it for other absent values (a
        body written for ``0,y`` is wrong where ``x`` is absent as 1).

        >>> from compiler.user_functions import user_function
        >>> gcd = user_function("gcd2", math.gcd, "while (y) { int64_t t = x % y; x = y; y = t; } return x;",
        ...                     cases={("x",): "return x < 0 ? -x : x;"})
        >>> g = gcd.specialize((0,), {1: 0})
        >>> g.name, g.params, g.c_body, int(g(np.int64(-4)))
        ('gcd2_x', ('x',), 'return x < 0 ? -x : x;', 4)
        >>> gcd.specialize((1,), {0: 0}) is None, gcd.specialize((0,), {1: 1}) is None
        (True, True)
        """
        names = tuple(self.params[k] for k in present)
        found = [(body, dict(absent)) for key, body, absent in self.cases if key == names]
        if not found:
            return None
        body, absent = found[0]
        if not all(_same(_scalar(v), absent[self.params[k]]) for k, v in fills.items()):
            return None
        fixed = tuple(sorted((k, _scalar(v).item()) for k, v in fills.items()))
        case = f"{self.name}_{'_'.join(names)}"
        op = Operator(name=case, symbol=case, arity=len(present),
                      param=fixed, c_body=body, params=names, dtype=self.dtype)
        full = IMPLS.get(self.impl_key())
        if full is not None and op.impl_key() not in IMPLS:
            def impl(op_, arrays, rdt, full=full, present=present, fixed=fixed, arity=self.arity, parent=self):
                args = [None] * arity
                for k, a in zip(present, arrays):
                    args[k] = a
                for k, v in fixed:
                    args[k] = np.asarray(v)
                return full(parent, args, rdt)
            IMPLS[op.impl_key()] = impl
        return op

    # -- dtypes ---------------------------------------------------------------

    def result_dtype(self, *dtypes) -> np.dtype:
        """The result dtype for operands of ``dtypes``; :class:`DTypeError` if not accepted.

        The error names the operator and the offending argument (its position is
        in the exception's ``position`` attribute, for callers that can name the
        tensor).

        >>> lookup("/").result_dtype("int32", "int64").name
        'float64'
        >>> lookup("^").result_dtype("int64", "float32")
        Traceback (most recent call last):
        ...
        compiler.errors.DTypeError: operator ^ (bitxor) does not accept float32 (argument 1): it needs integer or bool operands
        """
        if len(dtypes) != self.arity:
            raise TypeError(f"operator {self.name} takes {self.arity} argument(s), got {len(dtypes)}")
        dts = []
        for k, d in enumerate(dtypes):
            try:
                dts.append(value_dtype(d))
            except DTypeError as e:
                raise dtype_error(f"operator {self.label}: {e}", k) from None
        if self.is_user:
            return value_dtype(self.dtype) if self.dtype is not None else _promote(*dts)
        rule = DTYPE_RULES[self.name]
        return rule(self, dts)

    @property
    def label(self) -> str:
        """The operator as errors name it: ``^ (bitxor)``, or ``min`` when symbol and name agree."""
        return self.name if self.symbol == self.name else f"{self.symbol} ({self.name})"

    # -- values ---------------------------------------------------------------

    def identity_for(self, dtype):
        """The identity as a value of ``dtype`` (a numpy scalar), or :data:`NOVALUE`.

        >>> lookup("max").identity_for("bool"), lookup("&").identity_for("int64")
        (np.False_, np.int64(-1))
        """
        return _value_for(self.identity, dtype)

    def neutral_for(self, dtype):
        """The identity as a value of ``dtype`` where applying the operator with it changes no value of ``dtype``, so
        that a coordinate holding it may be skipped, or an operand that is it dropped; else :data:`NOVALUE`. Of
        complex values, 1 is no such identity of a product or a quotient: numpy's ``(inf + inf j) * (1 + 0j)`` is
        ``nan + nan j``, and ``(1 + 0j) * inf`` (the real made complex, as numpy makes it) is ``inf + nan j``.

        >>> lookup("mul").neutral_for("float64"), lookup("mul").neutral_for("complex128") is NOVALUE
        (np.float64(1.0), True)
        """
        if not self.is_user and self.name in ("mul", "div") and np.dtype(dtype).kind == "c":
            return NOVALUE
        return self.identity_for(dtype)

    def annihilator_for(self, dtype):
        """The annihilator as a value of ``dtype`` (a numpy scalar), or :data:`NOVALUE`."""
        return _value_for(self.annihilator, dtype)

    def __call__(self, *args):
        """Apply elementwise to numpy arrays or scalars (broadcasting), as the oracle does.

        >>> lookup("choose", 0)(np.array([0, 3, 0]), np.array([5, 6, 7]))
        array([5, 3, 7])
        """
        arrays = [np.asarray(a) for a in args]
        rdt = self.result_dtype(*[a.dtype for a in arrays])
        impl = IMPLS.get(self.impl_key())
        if impl is None:
            raise SparsescopeError(
                f"user function {self.name} has no Python implementation in this process "
                f"(it was probably loaded from JSON); recreate it with user_function(...)")
        with np.errstate(all="ignore"):
            try:
                return np.asarray(impl(self, arrays, rdt)).astype(rdt, copy=False)
            except OverflowError as e:   # (a Python int out of the result dtype's range)
                if not self.is_user:
                    raise
                raise UserCodeError(f"user function {self.name}: its Python implementation returned a value "
                                    f"{rdt.name} cannot hold ({e})") from None

    def reduce(self, array, axis: int = -1):
        """Reduce ``array`` along ``axis`` in index order (the oracle of a reduction).

        An empty axis gives the identity (an error if there is none).

        >>> lookup("max").reduce(np.array([[1, 5], [7, 2]]), axis=1)
        array([5, 7])
        >>> lookup("+").reduce(np.array([True, True, False]))
        np.int64(2)
        """
        if not self.reducible:
            raise SparsescopeError(f"operator {self.label} is not a binary associative operator "
                                   f"and cannot be used as a reduction")
        arr = np.asarray(array)
        rdt = self.result_dtype(arr.dtype, arr.dtype)
        arr = np.moveaxis(arr, axis, -1)
        ufunc = REDUCE_UFUNCS.get(self.impl_key())
        if arr.shape[-1] == 0:
            ident = self.identity_for(rdt)
            if ident is NOVALUE:
                raise SparsescopeError(f"cannot reduce an empty extent with {self.label}: it has no identity")
            # (in the dtype a non-empty reduction gives: numpy sums int32 in int64)
            out = ufunc.reduce(np.zeros(1, rdt)).dtype if ufunc is not None else rdt
            return _scalar(np.full(arr.shape[:-1], ident, dtype=out))
        with np.errstate(all="ignore"):
            if ufunc is not None:
                return _scalar(ufunc.reduce(arr.astype(rdt), axis=-1))
            acc = arr[..., 0].astype(rdt)
            for k in range(1, arr.shape[-1]):
                acc = self(acc, arr[..., k])
            return _scalar(acc)

    # -- fill values ----------------------------------------------------------

    def fill(self, *fills):
        """The fill of ``f(args)`` given the arguments' fills.

        Known fills are constant-propagated through the operator. When some fill
        is unknown (:data:`NOVALUE`), the annihilator and identity shortcuts of the
        sparse-array-programming note apply: an annihilator fill anywhere (at an
        annihilator position) gives the annihilator; an identity fill leaves the
        other argument's fill; otherwise the result is unknown.

        >>> mul = lookup("*")
        >>> mul.fill(0.0, NOVALUE), mul.fill(1, NOVALUE), mul.fill(2, NOVALUE)
        (np.float64(0.0), NOVALUE, NOVALUE)
        >>> lookup("max").fill(float("-inf"), 42.0)
        np.float64(42.0)
        """
        if len(fills) != self.arity:
            raise TypeError(f"operator {self.name} takes {self.arity} argument(s), got {len(fills)}")
        if all(f is not NOVALUE for f in fills):
            return _scalar(self(*fills))
        chosen = self.selected_fill(fills)
        if chosen is not NOVALUE:
            return chosen
        if self.annihilator is not NOVALUE:
            positions = self.annihilator_positions or range(self.arity)
            for k in positions:
                f = fills[k]
                if f is not NOVALUE and _same(f, self.annihilator_for(np.asarray(f).dtype)):
                    return _scalar(f)
        if self.identity is not NOVALUE and self.arity == 2:
            positions = self.identity_positions or range(2)
            for k in positions:
                f = fills[k]
                if f is not NOVALUE and _same(f, self.identity_for(np.asarray(f).dtype)):
                    other = fills[1 - k]
                    return other if other is NOVALUE else _scalar(other)
        return NOVALUE

    def selected_fill(self, fills):
        """The one fill of the arguments this operator selects from (:attr:`selects`), if they share
        one, as the result's type: then the result is that fill whatever the other arguments hold.

        >>> from compiler.user_functions import user_function
        >>> pick = user_function("pick", lambda c, x, y: y if c else x, "return x ? z : y;", arity=3, selects=(1, 2))
        >>> pick.selected_fill((NOVALUE, 0.0, 0.0)), pick.selected_fill((NOVALUE, 0.0, 1.0))
        (np.float64(0.0), NOVALUE)
        """
        chosen = [fills[k] for k in self.selects]
        if not chosen or any(f is NOVALUE for f in chosen) or not all(_same(f, chosen[0]) for f in chosen[1:]):
            return NOVALUE
        return _scalar(self(*[chosen[0] if f is NOVALUE else f for f in fills]))   # (any other value gives it)

    def selected_by(self, values):
        """The argument position (one of :attr:`selects`) whose value the result is where every
        other argument (a condition) holds its value in ``values`` (its fill, say; the values at
        the selected positions are not read); None when a condition's value is unknown or the
        choice does not follow from them.

        >>> from compiler.user_functions import user_function
        >>> pick = user_function("pick", lambda c, x, y: np.where(c, x, y), "return x ? y : z;", arity=3,
        ...                      selects=(1, 2))
        >>> pick.selected_by((False, 0.0, 1.0)), pick.selected_by((np.nan, NOVALUE, NOVALUE))
        (2, 1)
        >>> pick.selected_by((NOVALUE, 0.0, 1.0)) is None
        True
        """
        if not self.selects or any(v is NOVALUE for k, v in enumerate(values) if k not in self.selects):
            return None
        # (distinct markers at the selected positions: the result names the one chosen)
        marks = {k: n + 1 for n, k in enumerate(self.selects)}
        try:
            got = self(*[marks.get(k, v) for k, v in enumerate(values)])
        except Exception:   # (a user function without a Python implementation, say)
            return None
        hit = [k for k, m in marks.items() if _same(got, m)]
        return hit[0] if len(hit) == 1 else None

    def reduce_fill(self, fill, count: int):
        """The fill of a reduction of ``count`` copies of ``fill``.

        ``count == 0`` gives the identity; idempotent operators give ``fill``;
        ``+`` gives ``count * fill``, ``*`` gives ``fill ** count``; an identity
        or annihilator fill is a fixed point; other associative operators fold
        by repeated squaring (O(log count) applications).

        >>> lookup("^").reduce_fill(6, 3), lookup("^").reduce_fill(6, 4)
        (np.int64(6), np.int64(0))
        >>> lookup("min").reduce_fill(5.0, 0)
        np.float64(inf)
        >>> lookup("mul").reduce_fill(complex(0.5, np.inf), 2), lookup("mul").reduce_fill(0.1, 3)
        (np.complex128(nan+nanj), np.float64(0.0010000000000000002))
        """
        if not self.reducible:
            raise SparsescopeError(f"operator {self.label} is not associative and cannot reduce")
        if count < 0:
            raise ValueError("count must be >= 0")
        if fill is NOVALUE:
            return NOVALUE if count else self.identity
        dt = np.asarray(fill).dtype
        rdt = self.result_dtype(dt, dt)
        if count == 0:
            return self.identity_for(rdt)
        fill = _scalar(np.asarray(fill).astype(rdt))
        if count == 1 or self.idempotent:
            return fill
        if self.name == "add" and not self.is_user:
            with np.errstate(all="ignore"):
                if rdt.kind == "c":   # (a real count times each part, as the kernel's sum: inf + 0j stays so)
                    return _scalar(with_real_operand("*", fill, real_part_dtype(rdt).type(count)).astype(rdt))
                return _scalar(np.multiply(np.asarray(count).astype(rdt), fill).astype(rdt))
        if self.name == "mul" and not self.is_user:
            if rdt.kind in "fc" and count <= IN_ORDER_MOST:
                # (in numpy's order, from 1: a product of floats is not associative where it rounds, overflows or is
                # complex and infinite, (1 + 0j) * (0.5 + inf j) * (0.5 + inf j) being nan + nan j, where squaring
                # gives -inf + inf j)
                with np.errstate(all="ignore"):
                    return _scalar(np.multiply.reduce(np.full(count, fill, dtype=rdt)))
            return _scalar(self(_ipow_fill(fill, count, self), rdt.type(1)))   # (a Python 1 makes uint64 float64)
        for special in (self.identity_for(rdt), self.annihilator_for(rdt)):
            if special is not NOVALUE and _same(fill, special):
                return fill
        return _ipow_fill(fill, count, self)

    # -- C --------------------------------------------------------------------

    def c_expr(self, args: Sequence[str], dtype) -> str:
        """A C expression applying the operator to the C expressions ``args``.

        ``dtype`` is the operand dtype: one dtype for all arguments, or a sequence
        with one dtype per argument. Arguments may be evaluated more than once,
        so pass names or other side-effect-free expressions. Needs ``<math.h>``,
        ``<stdbool.h>`` and ``<stdint.h>``, plus :meth:`c_helper` when it is not
        empty.

        >>> lookup("min").c_expr(["a", "b"], "int64")
        '(a < b ? a : b)'
        >>> lookup("min").c_expr(["a", "b"], "float64")
        '(isnan(a) || a < b ? a : b)'
        >>> lookup("pow").c_expr(["a", "b"], "float32")
        'powf(a, b)'
        >>> lookup("/").c_expr(["a", "b"], "int32")
        '((double)a / (double)b)'
        """
        args = list(args)
        if len(args) != self.arity:
            raise TypeError(f"operator {self.name} takes {self.arity} argument(s), got {len(args)}")
        dts = self._operand_dtypes(dtype)
        if self.is_user:
            return f"{self._c_name(dts)}({', '.join(args)})"
        return C_EXPRS[self.name](self, args, dts)

    def c_helper(self, dtype) -> str:
        """C definitions that :meth:`c_expr` relies on (``""`` if none).

        For a user function this is its body as a ``static inline`` function
        specialized to the operand dtype(s). A bool argument of a function whose result
        is a number takes the result's type, as the Python implementation sees ``True``
        as 1 in arithmetic (a C ``bool`` parameter would turn ``y = 2`` into 1).

        >>> from compiler.user_functions import user_function
        >>> print(user_function("smin", min, "return x < y ? x : y;").c_helper("int64"))
        static inline int64_t ss_smin_int64(int64_t x, int64_t y) {
            return x < y ? x : y;
        }
        >>> print(user_function("g", max, "return x > y ? x : y;", dtype="int64").c_helper(["int64", "bool"]))
        static inline int64_t ss_g_int64_bool(int64_t x, int64_t y) {
            return x > y ? x : y;
        }
        """
        dts = self._operand_dtypes(dtype)
        if self.is_user:
            rdt = self.dtype if self.dtype is not None else _promote(*dts)
            rdt = np.dtype(rdt)
            sig = ", ".join(f"{c_type(rdt if d.kind == 'b' and rdt.kind != 'b' else d)} {p}"
                            for d, p in zip(dts, self.params))
            body = "\n".join("    " + line if line.strip() else "" for line in self.c_body.strip().splitlines())
            return f"static inline {c_type(rdt)} {self._c_name(dts)}({sig}) {{\n{body}\n}}"
        if self.name == "pow":
            rdt = self.result_dtype(*dts)
            if rdt.kind in "iu":
                return c_ipow_helper(rdt)
            if rdt.kind == "c":
                return c_cpow_helper(rdt)
        if self.name in ("mul", "div") and self.result_dtype(*dts).kind == "c":
            return (c_cmul_helper if self.name == "mul" else c_cdiv_helper)(self.result_dtype(*dts))
        if self.name in ("floordiv", "mod"):
            return c_divmod_helper(self.name, self.result_dtype(*dts))
        if self.name in ("lshift", "rshift"):
            return c_shift_helper(self.name, self.result_dtype(*dts))
        if self.name in COMPLEX_HELPED and self.result_dtype(*dts).kind == "c":
            return c_complex_helper(self.name, self.result_dtype(*dts))
        return ""

    def _operand_dtypes(self, dtype) -> list[np.dtype]:
        if isinstance(dtype, (list, tuple)):
            if len(dtype) != self.arity:
                raise TypeError(f"operator {self.name} takes {self.arity} argument(s), got {len(dtype)} dtypes")
            return [value_dtype(d) for d in dtype]
        return [value_dtype(dtype)] * self.arity

    def _c_name(self, dts) -> str:
        suffix = "_".join(sorted({d.name for d in dts}, key=[d.name for d in dts].index))
        return f"ss_{self.name}_{suffix}"


def _value_for(value, dtype):
    if value is NOVALUE:
        return NOVALUE
    dt = np.dtype(dtype)
    if isinstance(value, float) and math.isinf(value):
        if dt.kind == "b":
            return np.bool_(value > 0)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return dt.type(info.max if value > 0 else info.min)
    return _scalar(np.asarray(value).astype(dt))


#: the most copies of a floating-point fill :meth:`Operator.reduce_fill` multiplies one by one, in numpy's order (1 MB
#: of complex values); past it, by repeated squaring
IN_ORDER_MOST = 1 << 16


def _ipow_fill(x, n: int, op: Operator):
    """``x op x op ... op x`` (``n`` copies) by repeated squaring; needs associativity."""
    result = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else _scalar(op(result, base))
        n >>= 1
        if n:
            base = _scalar(op(base, base))
    return result


def _literal_text(value) -> str:
    if isinstance(value, str):   # (a dtype: astype(float32))
        return value
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    return str(int(value)) if isinstance(value, (int, np.integer)) else repr(value)


# -- the builtins and the registry ---------------------------------------------

INF = float("inf")


def _op(name, symbol, arity, **props) -> Operator:
    return Operator(name=name, symbol=symbol, arity=arity, **props)


_BUILTINS: list[Operator] = [
    _op("add", "+", 2, identity=0, commutative=True, associative=True,
        more_annihilators=(Annihilator(INF, None, ("nan", "-inf"), "f"), Annihilator(-INF, None, ("nan", "+inf"), "f"))),
    _op("sub", "-", 2, identity=0, identity_positions=(1,),
        more_annihilators=(Annihilator(INF, (0,), ("nan", "+inf"), "f"), Annihilator(-INF, (0,), ("nan", "-inf"), "f"))),
    _op("mul", "*", 2, identity=1, annihilator=0, commutative=True, associative=True,
        annihilator_unless=("nan", "+inf", "-inf")),
    _op("div", "/", 2, identity=1, identity_positions=(1,)),
    _op("min", "min", 2, identity=INF, annihilator=-INF, idempotent=True, commutative=True, associative=True,
        annihilator_unless=("nan",)),   # (NaN-propagating, as numpy.minimum and the reference)
    _op("max", "max", 2, identity=-INF, annihilator=INF, idempotent=True, commutative=True, associative=True,
        annihilator_unless=("nan",)),
    _op("bitand", "&", 2, identity=-1, annihilator=0, idempotent=True, commutative=True, associative=True),
    _op("bitor", "|", 2, identity=0, annihilator=-1, idempotent=True, commutative=True, associative=True),
    _op("bitxor", "^", 2, identity=0, commutative=True, associative=True),
    _op("and", "and", 2, identity=True, annihilator=False, idempotent=True, commutative=True, associative=True),
    _op("or", "or", 2, identity=False, annihilator=True, idempotent=True, commutative=True, associative=True),
    _op("not", "!", 1),
    _op("neg", "-", 1),
    _op("isnan", "isnan", 1),
    _op("lt", "<", 2), _op("le", "<=", 2), _op("gt", ">", 2), _op("ge", ">=", 2),
    _op("eq", "==", 2, commutative=True), _op("ne", "!=", 2, commutative=True),
    _op("overwrite", "overwrite", 2, idempotent=True, associative=True),
    _op("pow", "pow", 2, identity=1, identity_positions=(1,), annihilator=1, annihilator_positions=(0,)),
    _op("ldexp", "ldexp", 2, identity=0, identity_positions=(1,), annihilator=0, annihilator_positions=(0,)),
    _op("abs", "abs", 1), *[_op(n, n, 1) for n in COMPLEX_PARTS], _op("sqrt", "sqrt", 1), _op("exp", "exp", 1), _op("log", "log", 1),
    *[_op(n, n, 1) for n in UNARY_MATH], _op("round", "round", 1),
    *[_op(n, n, 2) for n in BINARY_MATH],
    # (x // 1 is not x for a float; 0 // 0 is NaN: no identity or annihilator)
    _op("floordiv", "//", 2), _op("mod", "%", 2),
    # x << 0 is x, and 0 shifted either way stays 0
    _op("lshift", "<<", 2, identity=0, identity_positions=(1,), annihilator=0, annihilator_positions=(0,)),
    _op("rshift", ">>", 2, identity=0, identity_positions=(1,), annihilator=0, annihilator_positions=(0,)),
]

#: builtin operators by name
OPERATORS: dict[str, Operator] = {op.name: op for op in _BUILTINS}

#: other spellings: symbols, reduction names, Python/numpy names
ALIASES: dict[str, str] = {
    "+": "add", "-": "sub", "*": "mul", "/": "div", "&": "bitand", "|": "bitor", "^": "bitxor",
    "!": "not", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne", "**": "pow",
    "=": "overwrite", "sum": "add", "prod": "mul", "any": "or", "all": "and", "xor": "bitxor",
    "minimum": "min", "maximum": "max", "power": "pow", "negative": "neg", "right": "overwrite",
    "//": "floordiv", "%": "mod", "floor_divide": "floordiv", "remainder": "mod",
    "<<": "lshift", ">>": "rshift", "left_shift": "lshift", "right_shift": "rshift",
}

#: operators taking a parameter: name -> constructor
PARAMETRIC: dict[str, Callable[..., Operator]] = {}


def choose(z=0) -> Operator:
    """Finch's ``choose(z)``: ``choose(z)(a, b)`` is ``b`` where ``a == z``, else ``a``.

    It returns its first argument that is not ``z`` (``z`` if both are). ``z`` is
    the identity; it is idempotent and associative but not commutative (when
    both arguments differ from ``z`` the first wins), so a ``<<choose(z)>>=``
    reduction keeps the first non-``z`` value in iteration order. Any non-``z``
    first argument decides the result (a left annihilator that is not a single
    value, so it is not recorded in ``annihilator``).

    >>> choose(0)(np.array([0, 4]), np.array([9, 9]))
    array([9, 4])
    >>> str(choose(0))
    'choose(0)'
    """
    if isinstance(z, np.generic):
        z = z.item()
    return Operator(name="choose", symbol="choose", arity=2, identity=z, idempotent=True,
                    associative=True, param=z)


PARAMETRIC["choose"] = choose


def astype(dtype) -> Operator:
    """numpy's ``x.astype(dtype)``: ``astype(int32)(x)``. A float without an integer of the dtype (NaN,
    an infinity, out of range: numpy warns, C's cast is undefined) gives the dtype's minimum for int32
    and int64, as numpy on x86-64, and 0 for the others; see :func:`compiler.opimpls.cast_sentinel`.

    >>> astype("int32")(np.array([2.9, -2.9, np.nan]))
    array([          2,          -2, -2147483648], dtype=int32)
    >>> str(astype("float32")), astype("bool")(np.array([0.0, np.nan])).tolist()
    ('astype(float32)', [False, True])
    """
    name = np.dtype(dtype).name
    if name not in VALUE_DTYPES:
        raise UnknownOperatorError(f"astype({dtype}): {name} is no value dtype (one of {', '.join(VALUE_DTYPES)})")
    return Operator(name="astype", symbol="astype", arity=1, param=name)


PARAMETRIC["astype"] = astype



def reduction_annihilator(op: Operator):
    """How a value ``p`` of a reduction ``p = op(p, y)`` is final: ``("==", a)`` when ``p == a``
    annihilates (``op(a, y) == a`` for every ``y``), ``("!=", z)`` for ``choose(z)`` (any value
    but ``z`` does), or None when no value does.

    The accumulator is argument 0, so an annihilator restricted to other positions does not
    count. This is what lets a reduction stop early (Finch's ShortCircuitScalar).

    >>> reduction_annihilator(lookup("*")), reduction_annihilator(choose(0))
    (('==', 0), ('!=', 0))
    >>> reduction_annihilator(lookup("+")) is None
    True
    """
    if op.arity != 2:
        return None
    if not op.is_user and op.name == "choose":
        return ("!=", op.param)
    if op.annihilator is NOVALUE:
        return None
    if op.annihilator_positions is not None and 0 not in op.annihilator_positions:
        return None
    return ("==", op.annihilator)


def is_annihilator(op: Operator, value, dtype=None) -> bool:
    """Finch's ``isannihilator(op, p)``: whether a reduction ``p = op(p, y)`` holding ``value``
    can no longer change (see :func:`reduction_annihilator`); ``dtype`` (default: the
    value's) gives infinite annihilators their integer or boolean meaning.

    >>> is_annihilator(choose(0), 3), is_annihilator(choose(0), 0)
    (True, False)
    >>> is_annihilator(lookup("min"), np.iinfo(np.int32).min, "int32"), is_annihilator(lookup("or"), True)
    (True, True)
    >>> is_annihilator(lookup("+"), 0)
    False
    """
    test = reduction_annihilator(op)
    if test is None:
        return False
    dt = np.asarray(value).dtype if dtype is None else np.dtype(dtype)
    target = _value_for(test[1], dt)
    same = _same(_scalar(np.asarray(value).astype(dt)), target)
    return same if test[0] == "==" else not same


def helper_impl(op: Operator, name: str = "") -> Callable:
    """A Python implementation of the C helper :meth:`Operator.c_helper` gives (a user
    function, an integer ``pow``, ``//``, ``%``), on scalars, for the IR interpreter. A complex helper's (its
    ``name`` ends in the complex type) takes each argument as that type, as C converts it to the prototype's: a
    real literal ``1.0`` is ``1 + 0j`` there, not a real factor of each part (``(inf + inf j) * (1 + 0j)`` is
    ``nan + nan j``, ``(inf + inf j) * 1.0`` is not).

    >>> helper_impl(lookup("//"))(np.int64(-7), np.int64(2))
    np.int64(-4)
    >>> with np.errstate(invalid="ignore"):
    ...     helper_impl(lookup("mul"), "ss_mul_complex128")(np.complex128(complex(np.inf, np.inf)), np.float64(1.0))
    np.complex128(nan+nanj)
    """
    part = name.rsplit("_", 1)[-1]
    if part in ("complex64", "complex128"):
        kind = np.dtype(part).type
        return lambda *args: op(*[np.asarray(kind(a)) for a in args])[()]
    return lambda *args: op(*[np.asarray(a) for a in args])[()]


def known_names() -> list[str]:
    """Every name :func:`lookup` accepts."""
    return sorted(set(OPERATORS) | set(ALIASES) | set(PARAMETRIC))


def lookup(name: str, *params) -> Operator:
    """The builtin operator called ``name`` (a name, symbol or alias).

    Parametric operators take their parameters after the name: ``lookup("choose", 0)``.

    >>> lookup("sum") is lookup("+") is lookup("add")
    True
    >>> lookup("mx")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    compiler.algebra.UnknownOperatorError: unknown operator 'mx'; did you mean max? Known operators: ...
    """
    if name in PARAMETRIC:
        if not params:
            raise UnknownOperatorError(f"operator {name} needs a parameter: write {name}(z)")
        return PARAMETRIC[name](*params)
    if params:
        raise UnknownOperatorError(f"operator {name} takes no parameters")
    key = ALIASES.get(name, name)
    try:
        return OPERATORS[key]
    except KeyError:
        raise UnknownOperatorError(_unknown_message("operator", name, known_names())) from None


def _unknown_message(kind: str, name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else "."
    # keep messages readable: list names, not symbols
    words = [k for k in known if k.isidentifier()]
    return f"unknown {kind} {name!r}{hint} Known {kind}s: {', '.join(words)}"


__all__ = ["NOVALUE", "Operator", "UnknownOperatorError", "OPERATORS", "ALIASES", "PARAMETRIC",
           "choose", "lookup", "known_names", "c_literal", "reduction_annihilator",
           "is_annihilator", "Annihilator", "ieee_pow"]
