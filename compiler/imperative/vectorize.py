"""Loop vectorization: the loops worth running in SIMD lanes are marked ``#pragma omp simd``.

This pass, not the C compiler, decides which loops are vectorized: kernels are built
with GCC's ``-fvect-cost-model=very-cheap`` (see :mod:`compiler.backend.build`), which
vectorizes a loop only when it is marked. Left to itself, GCC at ``-O3 -march=native``
vectorizes CSR SpMV's ``t += A_val[p] * x_val[A1_idx[p]]`` with gathers, 15% slower
than the scalar loop, and GCC 12 has no pragma to refuse one loop.

Two kinds of loop are marked.

*Map loops*, ``#pragma omp simd``: an innermost loop whose stores all go to
``buffer[index]`` with one index per buffer, an index that moves with the loop and
reads no memory, where every read of a stored buffer is at that same index (so no
iteration reads what another writes), no read is a gather, and nothing outside the
loop body is assigned. Dense elementwise loops and a dense convolution's scatter
``out[p + d] += A[p] * f`` are map loops.

*Reductions*, ``#pragma omp simd reduction``:
``for (j = lo; j < hi; j++) acc += a[q + j] * x[j];`` runs at one add per
floating-point latency (about four cycles): each add waits for the one before,
because C's floating-point addition is not associative and the C compiler keeps
the written order. The pragma lets it keep one partial sum per SIMD lane and add
the lanes at the end, which only changes rounding (the tests compare floats with
a tolerance). Integer sums (sorting's rank counts) are marked too: integer
addition is associative, so lanes change nothing. Only loops that read memory
contiguously are marked: with an indirect read such as ``x[idx[q]]`` the lanes
would need gathers, which cost more than the add chain saves.

Marked loops still pass GCC's cost model (``-fsimd-cost-model=dynamic``): a loop
too short to pay for its lanes runs scalar (forcing lanes on the rank counts of
short coordinate lists measured 1.5x slower).

>>> from compiler.imperative.ir import Var, For, Load, CompoundAssign, Block
>>> j, acc = Var("j"), Var("acc")
>>> loop = For(j, 0, Var("n"), [CompoundAssign("+", acc, Load("a", j) * Load("x", j))])
>>> for s in vectorize([loop], {"acc": "float64"}):
...     print(str(s).strip())
#pragma omp simd reduction(+:acc)
for (int64 j = 0; j < n; j++) {
    acc += a[j] * x[j];
}
>>> gather = For(j, 0, Var("n"), [CompoundAssign("+", acc, Load("x", Load("idx", j)))])
>>> vectorize([gather], {"acc": "float64"}) == [gather]
True
>>> axpy = For(j, 0, Var("n"), [Store("y", j, Load("a", j) * 2.0, "+")])
>>> print(vectorize([axpy])[0])
#pragma omp simd
"""

from __future__ import annotations

from .guard import CheckCoordinate
from .ir import (Allocate, Assign, BinOp, Block, Break, Call, Cast, Comment, CompoundAssign, Const, Declare, Expr, For,
                 Grow, If, Load, MATH_FUNCTIONS, Pragma, Select, Store, Tagged, Var, While)
from .traverse import map_bodies, statements, untagged, var_names, walk
from .cleanup import assigns
from .privatize import is_parallel_pragma, with_clauses

#: the reductions the pragma may reorder (C's ``+`` and ``*`` on the accumulator)
REDUCTION_OPS = ("+", "*")


def _contiguous(e: Expr) -> bool:
    """Whether every load in ``e`` has an index without loads (no gathers) and every call is math."""
    for n in walk(e):
        if isinstance(n, Load) and any(isinstance(m, Load) for m in walk(n.index)):
            return False
        if isinstance(n, Call) and n.function not in MATH_FUNCTIONS:
            return False
    return True


def _last_after_index_arithmetic(loop, kind):
    """The last statement of a ``For`` loop's body if it is a ``kind`` and every statement before
    it declares index arithmetic such as ``p = i * n + j`` (a load there would be a gather)."""
    if not isinstance(loop, For):
        return None
    body = [s for s in untagged(loop.body.body) if not isinstance(s, Comment)]
    if not body or not isinstance(body[-1], kind):
        return None
    s = body[-1]
    for d in body[:-1]:
        if (not isinstance(d, Declare) or d.init is None or d.var.name == s.target.name
                or any(isinstance(n, (Load, Call)) for n in walk(d.init))):
            return None
    return s


def reduction(loop) -> CompoundAssign | None:
    """The ``acc op= value`` a ``For`` loop's body ends with, if the loop may run in SIMD lanes.

    The body is that one statement, after declarations of index arithmetic.
    """
    s = _last_after_index_arithmetic(loop, CompoundAssign)
    if s is None or s.op not in REDUCTION_OPS or s.target.name == loop.var.name:
        return None
    used = {n.name for n in walk(s.value) if isinstance(n, Var)}
    if s.target.name in used or not _contiguous(s.value) or isinstance(s.value, Const):
        return None
    return s


def extremum(loop, dtypes: dict):
    """``(acc, "max" or "min", value)`` when a ``For`` loop's body ends with a running max or min
    ``acc = isnan(acc) || acc > value ? acc : value`` (floats: a NaN wins, as in numpy) or
    ``acc = acc > value ? acc : value`` (integers), after declarations of index arithmetic.
    """
    s = _last_after_index_arithmetic(loop, Assign)
    if s is None or not isinstance(s.value, Select) or s.value.then != s.target:
        return None
    acc, e = s.target, s.value
    dt, value = dtypes.get(acc.name, ""), e.otherwise
    guarded = isinstance(e.cond, BinOp) and e.cond.op == "||" and e.cond.left == Call("isnan", (acc,))
    cmp = e.cond.right if guarded else e.cond
    if not (isinstance(cmp, BinOp) and cmp.op in (">", "<") and cmp.left == acc and cmp.right == value):
        return None
    if guarded != dt.startswith("float") or not dt.startswith(("float", "int", "uint")):
        return None
    if acc.name in {n.name for n in walk(value) if isinstance(n, Var)} or not _contiguous(value) \
            or isinstance(value, Const):
        return None
    return acc, ("max" if cmp.op == ">" else "min"), value


def _extremum_lanes(loop, acc: Var, op: str, value, dtype: str, taken: set, start=None) -> list:
    """The running ``op`` of ``loop`` in SIMD lanes, each keeping its own extremum.

    OpenMP's max and min compare with ``>`` and ``<``, which pass a NaN over; a float loop
    also ORs a flag set by any NaN (``v != v``) and makes the result NaN after the loop.
    The flag starts as ``isnan(acc)``, or as a constant when ``acc`` was just set to the
    constant ``start`` (``-INFINITY``, say).
    """
    better = Select(BinOp(">" if op == "max" else "<", value, acc), value, acc)
    if not dtype.startswith("float"):
        return [Pragma(f"omp simd reduction({op}:{acc.name})"), _with_last(loop, [Assign(acc, better)])]
    name, k = f"{acc.name}_nan", 2
    while name in taken:
        name, k = f"{acc.name}_nan_{k}", k + 1
    taken.add(name)
    flag = Var(name)
    return [Comment(f"each SIMD lane keeps its own {op}; {name} records a NaN, which {op} would pass over "
                    f"and numpy's keeps"),
            Declare(flag, "int64", Cast("int64", Call("isnan", (acc,))) if not isinstance(start, Const)
                    else Const(int(start.value != start.value), "int64")),
            Pragma(f"omp simd reduction({op}:{acc.name}) reduction(|:{name})"),
            _with_last(loop, [Assign(acc, better), CompoundAssign("|", flag, Cast("int64", BinOp("!=", value, value)))]),
            If(flag, [Assign(acc, Const(float("nan"), dtype))])]


def _set_before(stmts: list, acc: Var):
    """The value the last statement of ``stmts`` that sets ``acc`` gives it, when that is a plain
    declaration or assignment; else None. (Comments and prefetches may come between.)"""
    for s in reversed(untagged(stmts)):
        if isinstance(s, Declare) and s.var == acc:
            return s.init
        if isinstance(s, Assign) and s.target == acc:
            return s.value
        if assigns(s, acc.name):
            return None
    return None


def _with_last(loop, new: list):
    """``loop`` with the last statement of its body (inside any tags) replaced by ``new``."""
    def last(stmts):
        stmts = list(stmts)
        if isinstance(stmts[-1], (Tagged, Block)):
            return stmts[:-1] + [map_bodies(stmts[-1], last)]
        return stmts[:-1] + new
    return map_bodies(loop, last)


def map_loop(loop) -> bool:
    """Whether ``loop`` is a map loop (see the module docstring): its iterations are independent.

    >>> j = Var("j")
    >>> map_loop(For(j, 0, Var("n"), [Store("y", j, Load("a", j) + Load("y", j))]))
    True
    >>> map_loop(For(j, 0, Var("n"), [Store("y", j + 1, Load("y", j))]))      # reads the last store
    False
    >>> map_loop(For(j, 0, Var("n"), [Store("y", Load("idx", j), 1.0)]))      # a scatter
    False
    """
    if not isinstance(loop, For):
        return False
    defs, stores, loads = {}, {}, []          # defs: each local's assigned values
    for n in walk(loop.body):
        if isinstance(n, Declare):
            defs.setdefault(n.var.name, []).extend([] if n.init is None else [n.init])
        elif isinstance(n, (Assign, CompoundAssign)):
            if n.target.name not in defs:       # a value carried to the next iteration (declared first)
                return False
            defs[n.target.name].append(n.value)
        elif isinstance(n, Store):
            if stores.setdefault(n.buffer, n.index) != n.index:
                return False
        elif isinstance(n, Load):
            loads.append(n)
        elif isinstance(n, Call) and n.function not in MATH_FUNCTIONS:
            return False
        elif not isinstance(n, (Block, Tagged, If, Comment, Expr, tuple)):
            return False                        # loops, breaks, allocation: not an innermost map
    indirect = _closure(defs, lambda e, names: any(isinstance(m, Load) or isinstance(m, Var) and m.name in names
                                                   for m in walk(e)), set())
    moving = _closure(defs, lambda e, names: any(isinstance(m, Var) and m.name in names for m in walk(e)),
                      {loop.var.name})

    def reads_memory(e):
        return any(isinstance(m, Load) or isinstance(m, Var) and m.name in indirect for m in walk(e))

    if not stores or any(reads_memory(ix) or not any(isinstance(v, Var) and v.name in moving for v in walk(ix))
                         for ix in stores.values()):
        return False                            # a scatter, or every iteration writes one place
    if any(isinstance(b, Load) and b.buffer in stores for b in walk((loop.start, loop.stop))):
        return False
    return all(not reads_memory(ld.index) and (ld.buffer not in stores or ld.index == stores[ld.buffer])
               for ld in loads)


def _closure(defs: dict, depends, names: set) -> set:
    """``names`` and every local with an assigned value that ``depends(value, names)``, to a fixpoint."""
    names = set(names)
    while True:
        more = {v for v, values in defs.items() if v not in names and any(depends(e, names) for e in values)}
        if not more:
            return names
        names |= more


def vectorize(stmts, dtypes: dict | None = None) -> list:
    """``stmts`` with each map loop and each contiguous sum loop marked ``#pragma omp simd``.

    ``dtypes`` maps names declared outside ``stmts`` to their dtypes; a sum whose
    accumulator's dtype is not there, or is not numeric, is left alone.
    """
    dtypes = dict(dtypes or {})
    # generated names are fresh, so one map serves the whole tree (tags are not C scopes)
    # (declarations are statements, and the names come from var_names, remembered per statement by the
    # passes before: the kernel's expressions are not walked again)
    dtypes.update({d.var.name: d.dtype for d in statements(tuple(stmts)) if isinstance(d, Declare)})
    return _vectorize(stmts, dtypes, set(var_names(tuple(stmts))) | set(dtypes))


def _under_pragma(s, dtypes: dict, taken: set):
    """A loop with its own pragma (a parallel loop, perhaps inside a tag) stays as it is; the
    loops in its body are vectorized like any other."""
    if isinstance(s, For):
        return map_bodies(s, lambda body: _vectorize(body, dtypes, taken))
    if isinstance(s, (Tagged, Block)):
        return map_bodies(s, lambda body: [_under_pragma(x, dtypes, taken) for x in body])
    return s


def _lanes_too(pragma: Pragma, s, dtypes: dict) -> bool:
    """Whether the parallel loop ``s`` (perhaps in a tag) after ``pragma`` can run in SIMD lanes as
    well: a map loop, or a sum whose accumulator the pragma already reduces over the threads
    (``reduction(+:t)``).

    >>> i, t = Var("i"), Var("t")
    >>> loop = For(i, 0, Var("n"), [CompoundAssign("+", t, Load("x", i))])
    >>> _lanes_too(Pragma("omp parallel for reduction(+:t) schedule(guided)"), loop, {"t": "float64"})
    True
    """
    inner = untagged([s])
    if not is_parallel_pragma(pragma) or "simd" in pragma.text.split() or len(inner) != 1:
        return False
    r = reduction(inner[0]) if isinstance(inner[0], For) else None
    if r is not None:
        return f"reduction({r.op}:{r.target.name})" in pragma.text and _numeric(r.target.name, dtypes)
    return map_loop(inner[0])


def _numeric(name: str, dtypes: dict) -> bool:
    """Whether the variable ``name`` holds numbers (a sum of which may run in SIMD lanes)."""
    return dtypes.get(name, "").startswith(("float", "int", "uint"))


def _vectorize(stmts, dtypes: dict, taken: set, before: tuple = ()) -> list:
    """``stmts`` with SIMD pragmas; ``before`` holds what ran just before them, straight on (the
    statements ahead of a tag that holds them)."""
    out = []
    for s in stmts:
        r = reduction(s)
        x = extremum(s, dtypes) if r is None else None
        if out and isinstance(out[-1], Pragma):
            if _lanes_too(out[-1], s, dtypes):
                # a parallel loop that is a map or a sum of its own: each thread's part in lanes too
                out[-1] = with_clauses(out[-1], "simd")
            out.append(_under_pragma(s, dtypes, taken))
        elif r is not None and _numeric(r.target.name, dtypes):
            out += [Pragma(f"omp simd reduction({r.op}:{r.target.name})"), s]
        elif x is not None:
            out += _extremum_lanes(s, *x, dtypes[x[0].name], taken, _set_before([*before, *out], x[0]))
        elif map_loop(s):
            out += [Pragma("omp simd"), s]
        else:
            # a tag's statements run straight after those before it; a loop's body runs again
            ahead = (*before, *out) if isinstance(s, (Tagged, Block)) else ()
            out.append(map_bodies(s, lambda body: _vectorize(body, dtypes, taken, ahead)))
    return out



def simd_exit(stmts) -> str | None:
    """What would leave a loop marked ``omp simd`` in ``stmts`` (None if nothing does): a ``break``
    of that loop, an output's growth or a scratch array's allocation (each returns when out of
    memory), or a computed coordinate's check (returns its error). OpenMP forbids a branch out of
    the loop, and GCC refuses such a kernel ("invalid branch to/from OpenMP structured block"): the
    C emitter asks this, so that every build finds it, whichever compiler makes it.

    >>> from compiler.imperative.ir import Break, Var, For
    >>> loop = For(Var("j"), 0, Var("n"), [Break()])
    >>> simd_exit([loop]), simd_exit([Pragma("omp simd"), loop])
    (None, 'a break of the loop')
    """
    lists = [list(stmts)]
    while lists:
        body = lists.pop()
        for k, s in enumerate(body):
            if (isinstance(s, Pragma) and s.text.split()[:2] == ["omp", "simd"] and k + 1 < len(body)
                    and isinstance(body[k + 1], For)):
                found = _exit_of(body[k + 1].body.body)
                if found is not None:
                    return found
            map_bodies(s, lambda inner: lists.append(list(inner)) or inner)
    return None



def _exit_of(body) -> str | None:
    """What in a loop's ``body`` leaves the loop (a nested loop's own ``break`` does not)."""
    for n in walk(tuple(body)):
        if isinstance(n, Grow) and not n.hint:   # (a hint does nothing when memory is short)
            return f"the growth of {n.buffer}, which returns when out of memory"
        if isinstance(n, Allocate) and not n.stack:
            return f"the allocation of {n.buffer}, which returns when out of memory"
        if isinstance(n, CheckCoordinate):
            return "a computed coordinate's check, which returns its error"
    return "a break of the loop" if _breaks(body) else None


def _breaks(body) -> bool:
    """Whether a ``break`` in ``body`` leaves the loop whose body it is."""
    for s in body:
        if isinstance(s, Break):
            return True
        if not isinstance(s, (For, While)):
            inner: list = []
            map_bodies(s, lambda stmts: inner.append(stmts) or stmts)
            if any(_breaks(b) for b in inner):
                return True
    return False
