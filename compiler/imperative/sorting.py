"""Sorting a workspace's coordinate list, as imperative IR (both strategies' workspaces use it).

A sparse workspace (TACO's, or a SparseByteMap level in the looplet strategy) records
each coordinate the first time it is written, so its list is in write order; an
ordered consumer (a sorted output level, a merge) needs it sorted.
:func:`sort_coordinates_ir` picks the method per list, at run time:

* the list holds at least 1/:data:`SCAN_RATIO` of the extent: rebuild it in order by
  scanning the bitmap (branch-free);
* more than :data:`BIT_SORT_MIN` entries, with the extent at most
  :data:`BIT_SORT_SPAN` columns per entry: mark them in a bitmap of words and read the
  words back in order (:func:`bit_sort_ir`: linear in the entries);
* at most :data:`RANK_SORT_MAX` entries: rank sort (:func:`rank_sort_ir`);
* else merge its ascending runs (:func:`merge_runs_ir`), or heapsort past
  :data:`MERGE_MAX_RUNS` runs (:func:`heapsort_ir`).

Everything is plain IR, so the interpreter runs it and the C is readable.
"""

from __future__ import annotations

from .ir import (Allocate, Assign, BinOp, Break, Call, Cast, Comment, CompoundAssign, Const, Declare, For, If, Load,
                 Select, Store, While, and_, or_)


#: lists of at most this many coordinates are rank-sorted (:func:`rank_sort_ir`)
RANK_SORT_MAX = 64
#: the coordinate list is rebuilt by scanning the bitmap when it holds at least 1/SCAN_RATIO of the extent
SCAN_RATIO = 16
#: past this many runs, a long list is heapsorted instead of merged
MERGE_MAX_RUNS = 32
#: lists longer than this are bit-sorted when the extent allows (:func:`bit_sort_ir`)
BIT_SORT_MIN = 16
#: bit sort when the extent is at most this many columns per listed coordinate (its
#: cost has a term per 4096 columns: the summary words it reads)
BIT_SORT_SPAN = 4096
#: a sum's terms are sorted by counting their keys (:func:`count_sort_pairs_ir`) where the keys' span is at most
#: this many times the terms (counting takes about 2 steps per key of the span and 3 per term, a merge sort 2 per
#: term and merge pass, each with a branch it mispredicts about half the time), else merged
#: (:func:`merge_sort_pairs_ir`)
COUNTED_SPAN = 8


def bit_sort_words(extent):
    """The sizes of :func:`bit_sort_ir`'s two scratch arrays (zeroed, and left zeroed): words, summary words."""
    return (BinOp("+", BinOp(">>", extent, 6), 1), BinOp("+", BinOp(">>", extent, 12), 1))


def bit_sort_ir(buf: str, n, extent, words: str, summary: str, fresh) -> list:
    """IR sorting ``buf[0:n]`` (distinct coordinates in ``[0, extent)``) through a bitmap of words.

    Each coordinate ``j`` sets bit ``j % 64`` of ``words[j / 64]`` and, for that word,
    bit ``(j / 64) % 64`` of ``summary[j / 4096]``. Reading the summary words in order,
    then the words they mark, then the bits of each word (``lowest_bit``, then clear
    it), gives the coordinates in order and leaves both arrays zero again. It costs a
    few steps per coordinate plus one per summary word (``extent / 4096``), with no
    comparisons between coordinates. Bit 63 is the sign bit of the ``int64`` words: the
    C is built with ``-fwrapv``, and GCC and Clang define ``1 << 63`` there.

    >>> import numpy as np
    >>> from compiler.imperative import Buffer, Function, Scalar, interpret
    >>> from compiler.imperative.ir import Var
    >>> names = iter(range(1000))
    >>> fresh = lambda base: Var(f"{base}_{next(names)}")
    >>> f = Function("b", (Buffer("a", "int64", "inout"), Buffer("w", "int64", "inout"), Buffer("s", "int64", "inout"),
    ...                    Scalar("n", "int64"), Scalar("m", "int64")),
    ...              bit_sort_ir("a", Var("n"), Var("m"), "w", "s", fresh))
    >>> out = interpret(f, a=np.array([4100, 63, 64, 0, 4095, 4096]), w=np.zeros(65, np.int64),
    ...                 s=np.zeros(2, np.int64), n=6, m=4101)
    >>> out["a"].tolist(), int(out["w"].any()), int(out["s"].any())
    ([0, 63, 64, 4095, 4096, 4100], 0, 0)
    """
    one = Const(1, "int64")
    q, j, o, g, m, w, b = (fresh(x) for x in ("b_q", "b_j", "b_out", "b_group", "b_marked", "b_word", "b_bits"))
    low = lambda x: BinOp("&", x, BinOp("-", x, one))  # noqa: E731  (x without its lowest set bit)
    bit = Cast("int64", one)  # a 64-bit 1: C's plain 1 is an int, 32 bits wide
    mark = [For(q, 0, n, [
        Declare(j, "int64", Load(buf, q)),
        Store(words, BinOp(">>", j, 6), BinOp("<<", bit, BinOp("&", j, 63)), "|"),
        Store(summary, BinOp(">>", j, 12), BinOp("<<", bit, BinOp("&", BinOp(">>", j, 6), 63)), "|")])]
    read = [Declare(o, "int64", Const(0, "int64")),
            For(g, 0, BinOp("+", BinOp(">>", extent, 12), 1), [
                Declare(m, "int64", Load(summary, g)),
                Store(summary, g, Const(0, "int64")),
                While(BinOp("!=", m, Const(0, "int64")), [
                    Declare(w, "int64", BinOp("+", BinOp("*", g, 64), Call("lowest_bit", (m,)))),
                    Assign(m, low(m)),
                    Declare(b, "int64", Load(words, w)),
                    Store(words, w, Const(0, "int64")),
                    While(BinOp("!=", b, Const(0, "int64")), [
                        Store(buf, o, BinOp("+", BinOp("*", w, 64), Call("lowest_bit", (b,)))),
                        CompoundAssign("+", o, one),
                        Assign(b, low(b))])])])]
    return mark + read


def sort_coordinates_ir(buf: str, tmp: str, n, extent, bitmap: str, fresh, index: str = "j",
                        words: str | None = None, summary: str | None = None, scratch: dict | None = None) -> list:
    """IR sorting the coordinate list ``buf[0:n]`` of a workspace over ``[0, extent)``.

    ``bitmap[j]`` says whether ``j`` is in the list; ``tmp`` is scratch of ``extent``
    entries; ``words`` and ``summary`` (zeroed, sized by :func:`bit_sort_words`; None:
    no bit sort) are the bit sort's; ``fresh(base)`` gives a fresh local ``Var``;
    ``index`` names the scan's loop (``{index}_scan``). ``scratch`` (``{name: (dtype, length,
    init)}``) lists those of ``tmp``, ``words`` and ``summary`` that the IR allocates itself, each in
    the branch that uses it: a list the scan rebuilds (a BFS round over a few vertices) allocates
    nothing; the others the caller holds.

    >>> import numpy as np
    >>> from compiler.imperative import Buffer, Function, Scalar, interpret
    >>> from compiler.imperative.ir import Var
    >>> names = iter(range(1000))
    >>> fresh = lambda base: Var(f"{base}_{next(names)}")
    >>> f = Function("s", (Buffer("a", "int64", "inout"), Buffer("t", "int64", "inout"), Buffer("b", "bool"),
    ...                    Scalar("n", "int64"), Scalar("m", "int64")),
    ...              sort_coordinates_ir("a", "t", Var("n"), Var("m"), "b", fresh))
    >>> a = np.array([9, 3, 5, 0, 0, 0, 0, 0, 0, 0], dtype=np.int64)   # 3 of 200: rank-sorted
    >>> b = np.zeros(200, bool); b[[9, 3, 5]] = True
    >>> interpret(f, a=a, t=np.zeros(200, np.int64), b=b, n=3, m=200)["a"][:3].tolist()
    [3, 5, 9]
    """
    j, c = fresh(f"{index}_scan"), fresh("n_scan")
    scan = [Comment(f"dense enough: rebuild {buf} in order from the bitmap (branch-free)"),
            Declare(c, "int64", Const(0, "int64")),
            For(j, 0, extent, [Store(buf, c, j), CompoundAssign("+", c, Cast("int64", Load(bitmap, j)))])]
    scratch = scratch or {}

    def holding(names, body):
        for name in reversed(names):
            if name in scratch:
                body = [Allocate(name, *scratch[name], body)]
        return body
    rank = rank_sort_ir(buf, tmp, n, fresh)
    if tmp in scratch:   # (a short list's scratch fits on the stack: no allocation)
        rank = [Allocate(tmp, scratch[tmp][0], Const(RANK_SORT_MAX, "int64"), None, rank, stack=True)]
    short = [Comment(f"short: sort {buf}[0:{n}] by rank (each coordinate goes where the count of "
                     f"smaller ones says)")] + rank
    runs = [Comment(f"long: merge the ascending runs of {buf}[0:{n}] (heapsort past "
                    f"{MERGE_MAX_RUNS} runs)")] + holding([tmp], merge_runs_ir(buf, tmp, n, fresh))
    by_size = [If(BinOp("<=", n, RANK_SORT_MAX), short, runs)]
    if words is not None:
        bits = [Comment(f"not short, in a short enough extent: mark {buf}[0:{n}] in a bitmap of words, "
                        f"read the words back in order")] + holding([words, summary],
                                                                    bit_sort_ir(buf, n, extent, words, summary, fresh))
        by_size = [If(and_(BinOp(">", n, BIT_SORT_MIN), BinOp("<=", extent, BinOp("*", n, BIT_SORT_SPAN))),
                      bits, by_size)]
    return [If(BinOp(">=", BinOp("*", n, SCAN_RATIO), extent), scan, by_size)]


def heapsort_ir(buf: str, n, fresh) -> list:
    """IR heapsorting ``buf[0:n]`` (int64) in place: build a max-heap, then move the max to the end.

    An in-place loop, readable in the generated C and run by the interpreter;
    ``fresh(base)`` names the locals.
    """
    a, c, r, v, e = (fresh(x) for x in ("s_i", "s_c", "s_r", "s_v", "s_end"))
    one = Const(1, "int64")
    # a counts down the roots while the heap is built; then e shrinks as the max moves out
    sift = [Declare(c, "int64", BinOp("+", BinOp("*", r, 2), one)),
            While(BinOp("<", c, e), [
                If(and_(BinOp("<", BinOp("+", c, one), e), BinOp("<", Load(buf, c), Load(buf, BinOp("+", c, one)))),
                   [CompoundAssign("+", c, one)]),
                If(BinOp(">=", Load(buf, r), Load(buf, c)), [Break()]),
                Declare(v, "int64", Load(buf, r)), Store(buf, r, Load(buf, c)), Store(buf, c, v),
                Assign(r, c), Assign(c, BinOp("+", BinOp("*", r, 2), one))])]
    return [Declare(a, "int64", BinOp("/", n, 2)), Declare(e, "int64", n),
            While(BinOp(">", e, one), [
                Declare(r, "int64", Const(0, "int64")),
                If(BinOp(">", a, 0), [CompoundAssign("-", a, one), Assign(r, a)],
                   [CompoundAssign("-", e, one), Declare(v, "int64", Load(buf, 0)),
                    Store(buf, 0, Load(buf, e)), Store(buf, e, v)]),
                *sift])]



def rank_sort_ir(buf: str, tmp: str, n, fresh) -> list:
    """IR sorting ``buf[0:n]`` (distinct int64) by rank: each entry goes where the count of smaller ones says.

    ``n * n`` comparisons, but branch-free and vectorizable (the inner loop is a
    count), so it beats insertion sort's mispredicted shifts on the short lists of
    a sparse workspace (a row of a sparse product: tens of coordinates). The list
    is copied to ``tmp`` first, and each entry is placed from there.

    >>> import numpy as np
    >>> from compiler.imperative import Buffer, Function, Scalar, interpret
    >>> from compiler.imperative.ir import Var
    >>> fresh = lambda base: Var(base)
    >>> f = Function("r", (Buffer("a", "int64", "inout"), Buffer("t", "int64", "inout"), Scalar("n", "int64")),
    ...              rank_sort_ir("a", "t", Var("n"), fresh))
    >>> interpret(f, a=np.array([7, 2, 9, 0, 4]), t=np.zeros(5, np.int64), n=5)["a"].tolist()
    [0, 2, 4, 7, 9]
    """
    q, a, b, v, rank = (fresh(x) for x in ("r_q", "r_a", "r_b", "r_v", "r_rank"))
    return [For(q, 0, n, [Store(tmp, q, Load(buf, q))]),
            For(a, 0, n, [
                Declare(v, "int64", Load(tmp, a)), Declare(rank, "int64", Const(0, "int64")),
                For(b, 0, n, [CompoundAssign("+", rank, Cast("int64", BinOp("<", Load(tmp, b), v)))]),
                Store(buf, rank, v)])]


def merge_runs_ir(buf: str, tmp: str, n, fresh) -> list:
    """IR sorting ``buf[0:n]`` (int64, distinct, >= 0) made of ascending runs, by merging the runs.

    A workspace's coordinate list is the concatenation of sorted runs (one per row of
    the producer's inner operand, e.g. B's rows in Gustavson SpGEMM), so sorting it is
    merging them. The sorted prefix grows one run at a time: the next ascending run is
    copied to ``tmp`` and merged into the prefix from the back, branch-free (each step
    moves the larger of the two heads, so only prefix entries above the run's smallest
    coordinate move). A list of more than :data:`MERGE_MAX_RUNS` runs (merging costs
    about ``n * runs / 2`` moves) is heapsorted (:func:`heapsort_ir`) instead.

    >>> import numpy as np
    >>> from compiler.imperative import Buffer, Function, Scalar, interpret
    >>> from compiler.imperative.ir import Var
    >>> names = iter(range(100))
    >>> fresh = lambda base: Var(f"{base}_{next(names)}")
    >>> a = np.array([3, 7, 9, 1, 4, 8, 12, 0, 2, 5, 6, 10, 11, 13, 14], dtype=np.int64)
    >>> f = Function("m", (Buffer("a", "int64", "inout"), Buffer("t", "int64", "inout"), Scalar("n", "int64")),
    ...              merge_runs_ir("a", "t", Var("n"), fresh))
    >>> out = interpret(f, a=a.copy(), t=np.zeros(15, np.int64), n=15)
    >>> out["a"].tolist() == sorted(a.tolist())
    True
    """
    one, zero = Const(1, "int64"), Const(0, "int64")
    m, e, q, a, b, o, x, y, big = (fresh(v) for v in ("m_m", "m_e", "m_q", "m_a", "m_b", "m_o", "m_x", "m_y", "m_big"))
    prev = lambda v: Load(buf, BinOp("-", v, one))  # noqa: E731
    merge = [Declare(m, "int64", one),
             While(and_(BinOp("<", m, n), BinOp("<", prev(m), Load(buf, m))), [CompoundAssign("+", m, one)]),
             While(BinOp("<", m, n), [
                 Declare(e, "int64", BinOp("+", m, one)),
                 While(and_(BinOp("<", e, n), BinOp("<", prev(e), Load(buf, e))), [CompoundAssign("+", e, one)]),
                 For(q, m, e, [Store(tmp, BinOp("-", q, m), Load(buf, q))]),
                 Declare(a, "int64", m), Declare(b, "int64", BinOp("-", e, m)), Declare(o, "int64", e),
                 While(BinOp(">", b, zero), [
                     CompoundAssign("-", o, one),
                     Declare(x, "int64", Select(BinOp(">", a, zero), prev(a), Const(-1, "int64"))),
                     Declare(y, "int64", Load(tmp, BinOp("-", b, one))),
                     Declare(big, "int64", Cast("int64", BinOp(">", x, y))),
                     Store(buf, o, Select(BinOp(">", x, y), x, y)),
                     CompoundAssign("-", a, big), CompoundAssign("-", b, BinOp("-", one, big))]),
                 Assign(m, e)])]
    r, c = fresh("m_runs"), fresh("m_c")
    count = [Declare(r, "int64", one),
             For(c, 1, n, [CompoundAssign("+", r, Cast("int64", BinOp(">", prev(c), Load(buf, c))))])]
    return count + [If(BinOp("<=", r, MERGE_MAX_RUNS), merge, heapsort_ir(buf, n, fresh))]


def merge_sort_pairs_ir(keys: str, vals: str, tmp_keys: str, tmp_vals: str, lo, hi, fresh) -> list:
    """IR sorting ``keys[lo:hi]`` (int64, repeats allowed) with ``vals[lo:hi]`` moved along, stably: equal keys
    keep their order, so their values are added in the order they came.

    A natural merge sort: each pass merges the slice's ascending runs two by two (a sum's terms come in a run
    per coordinate of the summed index), each pair merged into ``tmp_keys`` / ``tmp_vals`` (scratch over the
    same positions) and copied back, until one run is left: ``O(n log runs)`` steps, a slice in order (one
    writer's terms) scanned once.

    >>> import numpy as np
    >>> from compiler.imperative import Buffer, Function, interpret
    >>> from compiler.imperative.ir import Var
    >>> names = iter(range(100))
    >>> fresh = lambda base: Var(f"{base}_{next(names)}")
    >>> f = Function("p", tuple(Buffer(x, "int64" if x in "kt" else "float64", "inout") for x in "kvtu"),
    ...              merge_sort_pairs_ir("k", "v", "t", "u", Const(1, "int64"), Const(7, "int64"), fresh))
    >>> out = interpret(f, k=np.array([9, 5, 2, 5, 0, 2, 1]), v=np.array([0., 1, 2, 3, 4, 5, 6]),
    ...                 t=np.zeros(7, np.int64), u=np.zeros(7))
    >>> out["k"].tolist(), out["v"].tolist()
    ([9, 0, 1, 2, 2, 5, 5], [0.0, 4.0, 6.0, 2.0, 5.0, 1.0, 3.0])
    """
    one = Const(1, "int64")
    runs, a, mid, end, x, y, o, p, left = (fresh(v) for v in (
        "s_runs", "s_a", "s_mid", "s_end", "s_x", "s_y", "s_o", "s_p", "s_left"))
    ascending = lambda at: and_(BinOp("<", at, hi), BinOp("<=", Load(keys, BinOp("-", at, one)),  # noqa: E731
                                                         Load(keys, at)))
    moved = lambda at, to: [Store(tmp_keys, to, Load(keys, at)), Store(tmp_vals, to, Load(vals, at))]  # noqa: E731
    # (a left head equal to the right one goes first: the sort is stable)
    take_left = and_(BinOp("<", x, mid), or_(BinOp(">=", y, end), BinOp("<=", Load(keys, x), Load(keys, y))))
    merge = [Declare(x, "int64", a), Declare(y, "int64", mid),
             For(o, a, end, [
                 Declare(left, "bool", take_left),
                 If(left, [*moved(x, o), CompoundAssign("+", x, one)], [*moved(y, o), CompoundAssign("+", y, one)])]),
             For(p, a, end, [Store(keys, p, Load(tmp_keys, p)), Store(vals, p, Load(tmp_vals, p))])]
    # (each pass: a run [a, mid), the next [mid, end), merged where there is a next; the runs halve)
    one_pass = [Assign(runs, Const(0, "int64")), Declare(a, "int64", lo),
                While(BinOp("<", a, hi), [
                    Declare(mid, "int64", BinOp("+", a, one)),
                    While(ascending(mid), [CompoundAssign("+", mid, one)]),
                    Declare(end, "int64", mid),
                    If(BinOp("<", end, hi), [
                        CompoundAssign("+", end, one),
                        While(ascending(end), [CompoundAssign("+", end, one)]),
                        *merge]),
                    CompoundAssign("+", runs, one),
                    Assign(a, end)])]
    return [Declare(runs, "int64", Const(2, "int64")), While(BinOp(">", runs, one), one_pass)]


def count_sort_pairs_ir(keys: str, vals: str, tmp_keys: str, tmp_vals: str, counts: str, span, lo, hi,
                        fresh) -> list:
    """IR sorting ``keys[lo:hi]`` (int64 in ``[0, span)``, repeats allowed) with ``vals[lo:hi]`` moved along,
    stably, by counting: each key's terms counted in ``counts[0:span]``, the counts summed into each key's first
    slot, each term placed at its key's next slot of ``tmp_keys`` / ``tmp_vals`` (scratch over the same
    positions) in the order it came, then copied back: ``O(terms + span)`` steps and no comparison of keys (a
    merge sort's are unpredictable branches), where the span is small against the terms.

    >>> from compiler.imperative import Var, pretty
    >>> from compiler.imperative.ir import Block
    >>> print(pretty(Block(tuple(count_sort_pairs_ir("k", "v", "tk", "tv", "c", Const(4, "int64"), Var("lo"),
    ...                                              Var("hi"), Var))[-2:])))
    for (int64 c_p = lo; c_p < hi; c_p++) {
        int64 c_key = k[c_p];
        int64 c_slot = c[c_key];
        tk[c_slot] = c_key;
        tv[c_slot] = v[c_p];
        c[c_key] = c_slot + 1;
    }
    for (int64 c_p = lo; c_p < hi; c_p++) {
        k[c_p] = tk[c_p];
        v[c_p] = tv[c_p];
    }
    """
    one = Const(1, "int64")
    q, p, at, n, seen, key, slot = (fresh(v) for v in ("c_q", "c_p", "c_at", "c_n", "c_seen", "c_key", "c_slot"))
    return [For(q, Const(0, "int64"), span, [Store(counts, q, Const(0, "int64"))]),
            For(p, lo, hi, [Declare(seen, "int64", Load(keys, p)),
                            Store(counts, seen, BinOp("+", Load(counts, seen), one))]),
            # (each key's first slot: the terms of the keys before it, from lo)
            Declare(at, "int64", lo),
            For(q, Const(0, "int64"), span, [Declare(n, "int64", Load(counts, q)), Store(counts, q, at),
                                             CompoundAssign("+", at, n)]),
            For(p, lo, hi, [Declare(key, "int64", Load(keys, p)), Declare(slot, "int64", Load(counts, key)),
                            Store(tmp_keys, slot, key), Store(tmp_vals, slot, Load(vals, p)),
                            Store(counts, key, BinOp("+", slot, one))]),
            For(p, lo, hi, [Store(keys, p, Load(tmp_keys, p)), Store(vals, p, Load(tmp_vals, p))])]
