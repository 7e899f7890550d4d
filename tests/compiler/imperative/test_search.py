"""The searches' C helpers (compiler/imperative/search.py): the compiled helper, the interpreter
and numpy's searchsorted agree at the boundaries and on random sorted arrays; a kernel defines the
helpers it calls and no other; checked mode checks the helper's reads."""

import re

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler.backend.c_emitter import emit_c
from compiler.backend.kernel import compile_function
from compiler.errors import KernelError
from compiler.imperative import Assign, Buffer, Function, OutScalar, Scalar, interpret, pretty
from compiler.imperative.search import gallop_back_stmts, gallop_stmts, lower_bound_call


def searches(dtype: str) -> Function:
    """``seek``, ``seek_back`` and ``lower_bound`` of ``idx`` between ``a`` and ``b`` for ``target``."""
    a, b, t = (Scalar(n, "int64") for n in ("a", "b", "target"))
    s, back, lb = (OutScalar(n, "int64") for n in ("s", "back", "lb"))
    body = [*gallop_stmts(s.var, "idx", b.var, t.var), *gallop_back_stmts(back.var, "idx", b.var, t.var),
            Assign(lb.var, lower_bound_call("idx", a.var, b.var, t.var))]
    return Function(f"searches_{dtype}", (Buffer("idx", dtype), a, b, t, s, back, lb),
                    [Assign(s.var, a.var), Assign(back.var, a.var), *body])


def expected(idx, a: int, b: int, target: int) -> tuple[int, int, int]:
    """(seek, seek_back, lower_bound) by numpy: the first p in [a, b) with idx[p] >= target (b if
    none; a if a >= b), the last p in (b, a] with idx[p] <= target (b if none; a if a <= b)."""
    seek = a if a >= b else a + int(np.searchsorted(idx[a:b], target, "left"))
    back = a if a <= b else b + int(np.searchsorted(idx[b + 1:a + 1], target, "right"))
    return seek, back, seek


KERNELS: dict = {}


def run(idx, a, b, target, checked=False):
    """The three results compiled (one kernel per dtype, built once) and interpreted."""
    fn = searches(idx.dtype.name)
    key = (idx.dtype.name, checked)
    if key not in KERNELS:
        KERNELS[key] = compile_function(fn, checked=checked)
    got = KERNELS[key](idx=idx, a=a, b=b, target=target)
    interpreted = interpret(fn, idx=idx, a=np.int64(a), b=np.int64(b), target=np.int64(target))
    return tuple(int(got[n]) for n in ("s", "back", "lb")), tuple(int(interpreted[n]) for n in ("s", "back", "lb"))


IDX = np.array([2, 4, 4, 4, 9], np.int64)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("a,b", [(0, 5), (1, 4), (2, 2), (0, 0), (5, 5), (4, 1), (3, 2), (4, -1), (0, -1),
                                 (-1, -1)])
def test_boundaries(dtype, a, b):
    """Targets before the first entry, past the last, on runs of equal entries and between
    entries; empty ranges (a == b) and ranges walked down (a > b)."""
    idx = IDX.astype(dtype)
    for target in (-7, 1, 2, 3, 4, 5, 8, 9, 10, 2 ** 40):
        if (a < b and not 0 <= a < b <= len(idx)) or (a > b and not -1 <= b < a < len(idx)):
            continue
        compiled, interpreted = run(idx, a, b, target)
        assert compiled == interpreted == expected(idx, a, b, target), (a, b, target)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-3, 30), max_size=40), st.data(), st.sampled_from(["int32", "int64"]))
@example([5, 5, 5, 5, 5, 5, 5, 5, 5], None, "int64")     # one run of equal entries: every probe hits it
def test_searches_agree_with_searchsorted(values, data, dtype):
    idx = np.array(sorted(values), dtype)
    n = len(idx)
    if data is None:
        cases = [(0, n, 5), (n - 1, -1, 5), (0, n, 6), (n - 1, -1, 4)]
    else:
        lo, hi = sorted(data.draw(st.tuples(st.integers(0, n), st.integers(0, n))))
        target = data.draw(st.integers(-5, 35))
        cases = [(lo, hi, target), (hi - 1, lo - 1, target)]
    for a, b, target in cases:
        compiled, interpreted = run(idx, a, b, target)
        assert compiled == interpreted == expected(idx, a, b, target), (a, b, target)


def test_a_kernel_defines_the_helpers_it_calls_once_and_no_other():
    q, stop, j, k = (Scalar(n, "int64") for n in ("q", "stop", "j", "k"))
    out = OutScalar("p", "int64")
    body = [Assign(out.var, q.var), *gallop_stmts(out.var, "A1_idx", stop.var, j.var),
            *gallop_stmts(out.var, "A1_idx", stop.var, k.var), *gallop_stmts(out.var, "B1_idx", stop.var, k.var)]
    fn = Function("two_seeks", (Buffer("A1_idx", "int32"), Buffer("B1_idx", "int64"), q, stop, j, k, out), body)
    source = emit_c(fn)
    assert re.findall(r"static inline int64_t (\w+)\(", source) == ["seek_int32", "seek_int64"]
    assert source.count("p = seek_int32(A1_idx, p, stop, ") == 2 and "p = seek_int64(B1_idx, p, stop, k);" in source
    assert "lower_bound" not in source and "seek_back" not in source
    # the pseudo-C names the search; the C names the helper of the array's dtype
    assert pretty(body[1]) == "p = seek(A1_idx, p, stop, j);"


def test_checked_mode_checks_the_helpers_reads():
    """A search told to read past the array's end fails with the kernel's bounds error, compiled
    (checked) and interpreted alike; unchecked, the same call inside the array gives the answer."""
    idx = IDX.copy()
    with pytest.raises(KernelError, match=r"read of idx\[6\] is out of bounds"):   # (the bisection's probe past it)
        interpret(searches("int64"), idx=idx, a=np.int64(0), b=np.int64(7), target=np.int64(100))
    checked = compile_function(searches("int64"), checked=True)
    with pytest.raises(KernelError, match=r"read of idx\[6\] is out of bounds"):
        checked(idx=idx, a=0, b=7, target=100)
    assert int(checked(idx=idx, a=0, b=5, target=100)["s"]) == 5
    assert "check_index(check, READ, buffer, mid, length)" in checked.c_source
