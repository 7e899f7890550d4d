"""Searches of a sorted index array, in the imperative IR: each is one call of a small C helper.

Both strategies skip ahead in a fiber with them: the looplets' ``gallop`` protocol and
phases that seek, and the lattice strategy's intersection with a fiber it scans again
for every enclosing iteration (a DCSR ``B``'s rows in ``A[i, k] * B[k, j]``). A search is
a :class:`~compiler.imperative.ir.Call` of one of :data:`~compiler.imperative.ir.SEARCH_FUNCTIONS`
with the index array as a :class:`~compiler.imperative.ir.BufferArg`; the C backend defines
each helper a kernel calls once, for the index dtype it searches (:func:`search_helpers`), and
the interpreter runs the same algorithm (:func:`run_search`). Written inline, a gallop was 18
lines of C at every seek: 43% of the C of Finch's cross erosion, and GCC's time with it.

>>> from compiler.imperative import Var, pretty
>>> print(pretty(gallop_stmts(Var("q"), "idx", Var("q_end"), Var("k"), str)[0]))
q = seek(idx, q, q_end, k);
>>> print(SearchHelper("seek", "int64").c_source())
/* The first p in [q, stop) with idx[p] >= target (stop if none; q if q >= stop): gallops from q. */
static inline int64_t seek_int64(const int64_t *idx, int64_t q, int64_t stop, int64_t target)
{
    if (q >= stop || idx[q] >= target)
        return q;
    int64_t step = 1;  /* idx[q + step / 2] < target: exponential steps, then bisect the last one */
    while (q + step < stop && idx[q + step] < target)
        step = step * 2;
    int64_t lo = q + step / 2 + 1;
    int64_t hi = q + step < stop ? q + step : stop;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (idx[mid] < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..dtypes import c_type
from .ir import SEARCH_FUNCTIONS, Assign, BufferArg, Call

#: what each search finds, for its helper's comment (p ranges over positions)
_MEANING = {
    "seek": "The first p in [q, stop) with idx[p] >= target (stop if none; q if q >= stop): gallops from q.",
    "seek_back": "The last p in (lo, q] with idx[p] <= target (lo if none; q if q <= lo): gallops down from q.",
    "lower_bound": "The first p in [lo, hi) with idx[p] >= target (hi if none): a binary search.",
}
_PARAMS = {"seek": ("q", "stop"), "seek_back": ("q", "lo"), "lower_bound": ("lo", "hi")}


def _body(kind: str, read: Callable[[str], str]) -> list[str]:
    """The C statements of a search, ``read(p)`` spelling a read of ``idx[p]`` (checked or not)."""
    if kind == "seek":
        return [f"if (q >= stop || {read('q')} >= target)",
                "    return q;",
                "int64_t step = 1;  /* idx[q + step / 2] < target: exponential steps, then bisect the last one */",
                f"while (q + step < stop && {read('q + step')} < target)",
                "    step = step * 2;",
                "int64_t lo = q + step / 2 + 1;",
                "int64_t hi = q + step < stop ? q + step : stop;",
                # (then the binary search of lower_bound over [lo, hi))
                *_body("lower_bound", read)]
    if kind == "seek_back":
        # (idx[hi] > target; idx[bottom] <= target or bottom is lo: the answer is bottom)
        return [f"if (q <= lo || {read('q')} <= target)",
                "    return q;",
                "int64_t step = 1;  /* idx[q - step / 2] > target: exponential steps, then bisect the last one */",
                f"while (q - step > lo && {read('q - step')} > target)",
                "    step = step * 2;",
                "int64_t bottom = q - step > lo ? q - step : lo;",
                "int64_t top = q - step / 2;",
                "while (top - bottom > 1) {",
                "    int64_t mid = bottom + (top - bottom) / 2;",
                f"    if ({read('mid')} <= target)",
                "        bottom = mid;",
                "    else",
                "        top = mid;",
                "}",
                "return bottom;"]
    return ["while (lo < hi) {",
            "    int64_t mid = lo + (hi - lo) / 2;",
            f"    if ({read('mid')} < target)",
            "        lo = mid + 1;",
            "    else",
            "        hi = mid;",
            "}",
            "return lo;"]


@dataclass(frozen=True)
class SearchHelper:
    """One C helper a kernel calls: the search ``kind`` (of :data:`SEARCH_FUNCTIONS`) over an
    index array of ``dtype``.

    >>> SearchHelper("lower_bound", "int32").c_name
    'lower_bound_int32'
    """

    kind: str
    dtype: str

    @property
    def c_name(self) -> str:
        return f"{self.kind}_{self.dtype}"

    def c_source(self, checked: tuple[str, str, str] | None = None, indent: str = "    ") -> str:
        """The helper's C definition. ``checked`` = (the bounds-check struct's type, the check
        function, the read access's constant): the helper then takes the check, the buffer's id and
        its length first, and checks every read as the kernel's own reads are checked."""
        a, b = _PARAMS[self.kind]
        params = [f"const {c_type(self.dtype)} *idx", f"int64_t {a}", f"int64_t {b}", "int64_t target"]
        if checked is None:
            def read(p):
                return f"idx[{p}]"
        else:
            struct, check, access = checked
            params[:0] = [f"struct {struct} *check", "int buffer", "int64_t length"]

            def read(p):
                return f"idx[{check}(check, {access}, buffer, {p}, length)]"
        head = f"static inline int64_t {self.c_name}({', '.join(params)})"
        if len(head) > 100:   # (a checked helper's: one parameter a line)
            head = f"static inline int64_t {self.c_name}(\n{indent}" + f",\n{indent}".join(params) + ")"
        lines = [f"/* {_MEANING[self.kind]} */", head, "{"]
        lines += [indent + line.replace("    ", indent) for line in _body(self.kind, read)]
        return "\n".join(lines + ["}"])


def search_helpers(nodes, dtype_of: Callable[[str], str]) -> tuple[SearchHelper, ...]:
    """The helpers the search calls among the IR ``nodes`` need, each once, in a fixed order:
    a kernel defines no helper it does not call. ``dtype_of`` gives a buffer's element dtype.

    >>> from compiler.imperative.ir import Var
    >>> calls = [seek_call("A1_idx", Var("q"), Var("q_stop"), Var("j")), seek_call("B1_idx", Var("p"), Var("p_stop"), Var("j"))]
    >>> search_helpers(calls, {"A1_idx": "int64", "B1_idx": "int32"}.get)
    (SearchHelper(kind='seek', dtype='int32'), SearchHelper(kind='seek', dtype='int64'))
    """
    used = {SearchHelper(n.function, dtype_of(n.args[0].buffer)) for n in nodes
            if isinstance(n, Call) and n.function in SEARCH_FUNCTIONS}
    return tuple(sorted(used, key=lambda h: (SEARCH_FUNCTIONS.index(h.kind), h.dtype)))


def run_search(kind: str, read: Callable[[int], object], less: Callable[[object, object], bool],
               a: int, b: int, target) -> int:
    """The search ``kind`` as its C helper runs it, for the interpreter: ``read(p)`` is ``idx[p]``
    (checked), ``less(x, y)`` compares as C does. The same probes as the C, so an out-of-bounds
    read fails in both.

    >>> idx = [1, 3, 3, 7]
    >>> [run_search("seek", idx.__getitem__, lambda x, y: x < y, 0, 4, t) for t in (0, 3, 4, 8)]
    [0, 1, 3, 4]
    >>> [run_search("seek_back", idx.__getitem__, lambda x, y: x < y, 3, -1, t) for t in (0, 3, 6, 8)]
    [-1, 2, 2, 3]
    """
    if kind == "seek":
        q, stop = a, b
        if q >= stop or not less(read(q), target):
            return q
        step = 1
        while q + step < stop and less(read(q + step), target):
            step *= 2
        lo, hi = q + step // 2 + 1, min(q + step, stop)
    elif kind == "seek_back":
        q, lo = a, b
        if q <= lo or not less(target, read(q)):
            return q
        step = 1
        while q - step > lo and less(target, read(q - step)):
            step *= 2
        bottom, top = max(q - step, lo), q - step // 2
        while top - bottom > 1:
            mid = bottom + (top - bottom) // 2
            if less(target, read(mid)):
                top = mid
            else:
                bottom = mid
        return bottom
    else:
        lo, hi = a, b
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if less(read(mid), target):
            lo = mid + 1
        else:
            hi = mid
    return lo


def seek_call(idx_buf, q, stop, target) -> Call:
    """``seek(idx, q, stop, target)``: the first ``p`` in ``[q, stop)`` with ``idx[p] >= target``
    (``stop`` if none; ``q`` itself if ``q >= stop``), galloping from ``q``: O(log distance)
    probes, so short hops stay short."""
    return Call("seek", (BufferArg(idx_buf), q, stop, target))


def lower_bound_call(idx_buf, lo, hi, target) -> Call:
    """``lower_bound(idx, lo, hi, target)``: the first ``p`` in ``[lo, hi)`` with ``idx[p] >= target``
    (``hi`` if none), by binary search: a located coordinate anywhere in a fiber.

    >>> from compiler.imperative.ir import Var
    >>> print(lower_bound_call("A1_idx", Var("lo"), Var("hi"), Var("i")))
    lower_bound(A1_idx, lo, hi, i)
    """
    return Call("lower_bound", (BufferArg(idx_buf), lo, hi, target))


def gallop_stmts(q, idx_buf, hi, target, fresh=None) -> list:
    """Exponential then binary search: move ``q`` to the first ``p`` in ``[q, hi)`` with
    ``idx[p] >= target`` (``hi`` if none) in O(log distance): short hops stay short.
    (``fresh`` is unused: the helper's locals are its own.)"""
    return [Assign(q, seek_call(idx_buf, q, hi, target))]


def gallop_past(q, idx_buf, hi, target, fresh=None) -> list:
    """:func:`gallop_stmts` where ``idx[q] < target`` is known (the caller tested it; the
    helper tests it again, one compare)."""
    return gallop_stmts(q, idx_buf, hi, target)


def gallop_back_stmts(q, idx_buf, lo, target, fresh=None) -> list:
    """:func:`gallop_stmts` walking down: move ``q`` to the last ``p`` in ``(lo, q]`` with
    ``idx[p] <= target`` (``lo`` if none), a fiber iterated from its end (a slice with a negative
    step).

    >>> from compiler.imperative import pretty
    >>> from compiler.imperative.ir import Var
    >>> print(pretty(gallop_back_stmts(Var("q"), "idx", Var("q_lo"), Var("k"))[0]))
    q = seek_back(idx, q, q_lo, k);
    """
    return [Assign(q, seek_back_call(idx_buf, q, lo, target))]


def seek_back_call(idx_buf, q, lo, target) -> Call:
    """``seek_back(idx, q, lo, target)``: the last ``p`` in ``(lo, q]`` with ``idx[p] <= target``
    (``lo`` if none; ``q`` itself if ``q <= lo``), galloping down from ``q``.

    >>> from compiler.imperative.ir import Var
    >>> print(seek_back_call("A1_idx", Var("q"), Var("lo"), Var("j")))
    seek_back(A1_idx, q, lo, j)
    """
    return Call("seek_back", (BufferArg(idx_buf), q, lo, target))

