"""The two-phase scatter's pieces (compiler.lattice.seqtwophase) run by the IR interpreter: count, prefix
sum and place make a stable counting sort (numpy's stable argsort the oracle), over every key or over the
keys a workspace met; the marked key list comes out sorted and its marks cleared after."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.imperative import Buffer, Function, Scalar, interpret
from compiler.imperative.ir import Const, Declare, For, Load, Store, Var
from compiler.lattice.seqtwophase import MarkedKeys, counted, placed, starts_in_place
from compiler.names import FreshNames

I64 = "int64"
# (extents past 16 times the keys met sort them by rank, else by a scan of the marks: compiler.imperative.sorting)
entries = st.sampled_from([1, 3, 9, 300]).flatmap(lambda extent: st.tuples(
    st.just(extent), st.lists(st.integers(0, extent - 1), max_size=30)))


def counting_sort(extent: int, listed: bool) -> Function:
    """Entries ``key[q], val[q]`` placed in ``out`` by key, keeping their order within a key: every key
    summed (``listed`` False) or only the ones met, in the order ``MarkedKeys`` sorts them."""
    fresh = FreshNames({"key", "val", "out", "next", "n"})
    q, k, slot = Var("q"), Var("k"), Var("slot")
    met = MarkedKeys("seen", "keys", "keys_tmp", Var("n_keys"), extent)
    count = [For(q, 0, Var("n"), [Declare(k, I64, Load("key", q)), *counted("next", k),
                                  *(met.meet(k) if listed else [])])]
    start, c, key = Var("start"), Var("c"), Var("kk")
    if listed:
        prefix = [*met.sort(lambda base: Var(fresh(base)), "j"),
                  *starts_in_place("next", key, start, c, listed=("keys", met.n, Var("t")))]
    else:
        prefix = starts_in_place("next", key, start, c, keys=Const(extent, I64))
    place = [For(q, 0, Var("n"), [Declare(k, I64, Load("key", q)),
                                  *placed("next", k, slot, [Store("out", slot, Load("val", q))])])]
    clear = [For(q, 0, met.n, [met.unmark(Load("keys", q))])] if listed else []
    return Function("counting_sort", (
        Buffer("key", I64), Buffer("val", I64), Buffer("out", I64, "inout"), Buffer("next", I64, "inout"),
        Buffer("seen", "bool", "inout"), Buffer("keys", I64, "inout"), Buffer("keys_tmp", I64, "inout"),
        Scalar("n", I64)), [Declare(met.n, I64, Const(0, I64)), *count, *prefix, *place, *clear])


@settings(max_examples=25, deadline=None)
@given(entries, st.booleans())
def test_count_prefix_place_is_a_stable_counting_sort(drawn, listed):
    extent, keys = drawn
    key = np.array(keys, dtype=np.int64)
    val = np.arange(len(keys), dtype=np.int64) * 10 + 1
    args = dict(key=key, val=val, out=np.zeros(len(keys), np.int64), next=np.zeros(extent, np.int64),
                seen=np.zeros(extent, bool), keys=np.zeros(extent, np.int64), keys_tmp=np.zeros(extent, np.int64),
                n=len(keys))
    got = interpret(counting_sort(extent, listed), **args)
    np.testing.assert_array_equal(got["out"], val[np.argsort(key, kind="stable")])
    # (each key's next slot ends at its last entry's: the next key's start)
    np.testing.assert_array_equal(got["next"][np.unique(key)], np.cumsum(np.bincount(key, minlength=extent))[
        np.unique(key)])
    if listed:
        distinct = np.unique(key)
        np.testing.assert_array_equal(got["keys"][:len(distinct)], distinct)
        assert not got["seen"].any()
