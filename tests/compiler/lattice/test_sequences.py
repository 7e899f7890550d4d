"""BURRITO's sequence expressions: set semantics (the notes' §10.1), sizes, density, printing,
and the reference iterators of §8.3 against the set semantics."""


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import serialize
from compiler.lattice.seqiter import Cursors, SeqIterator, enter
from compiler.lattice.sequences import (ABSENT, Concat, Empty, Full, Intersect, Level, Offset, Pad, Product,
                                        Project, SequenceError, Slice, Union, Universe, bind, coordinates)

from seqgen import seqs


def lv(t, n, kind="compressed", mode=0, index="i"):
    return Level(t, mode, kind, n, index)


def vec(*xs):
    return {(x,) for x in xs}


def test_product_concat_projection_slice_examples():
    # S9, S10, S11, S8 of the notes
    A, B = lv("A", 3), lv("B", 2)
    d = {"A": vec(0, 2), "B": vec(1)}
    assert coordinates(Product(A, B), d) == {1, 5} and Product(A, B).size() == 6
    assert coordinates(Concat(A, B), d) == {0, 2, 4} and Concat(A, B).size() == 5
    a = lv("a", 9)
    d = {"a": vec(1, 5, 6)}
    assert coordinates(Project(0, a, 3), d) == {0, 1, 2} and Project(0, a, 3).size() == 3
    p1 = Project(1, a, 3)
    fibers = {g: coordinates(p1, d, {p1.group_key: g}) for g in range(3)}
    assert fibers == {0: {1}, 1: {2}, 2: {0}} and p1.size() == 3
    b = lv("b", 8)
    s = Slice(b, 1, 8, 3)
    assert coordinates(s, {"b": vec(1, 2, 4, 7)}) == {0, 1, 2} and s.size() == 3
    s = Slice(b, 2, 5)
    assert coordinates(s, {"b": vec(*range(8))}) == {0, 1, 2}


def test_collapse_of_a_matrix_reads_each_row_under_its_coordinate():
    # S1: B 2x3 with (0,1), (1,0), (1,2) collapses row-major to 1, 3, 5
    i, j = lv("B", 2, "dense", 0, "i"), lv("B", 3, "compressed", 1, "j")
    assert coordinates(Product(i, j), {"B": {(0, 1), (1, 0), (1, 2)}}) == {1, 3, 5}
    # a compressed row level: rows 0 and 1 stored, the empty row 2 contributes nothing
    i = lv("B", 3, "compressed", 0, "i")
    assert coordinates(Product(i, j), {"B": {(0, 2), (2, 0)}}) == {2, 6}


def test_universe_empty_full_offset_pad():
    assert coordinates(Universe(4, "l"), {}) == {0, 1, 2, 3}
    assert coordinates(Empty(3), {}) == set() and coordinates(Full(3), {}) == set()
    a = lv("a", 3)
    assert coordinates(Offset(5, a), {"a": vec(0, 2)}) == {5, 7} and Offset(5, a).size() == 8
    assert coordinates(Pad(a, 4), {"a": vec(0, 2)}) == {0, 2} and Pad(a, 4).size() == 7


def test_density():
    d, c, u = lv("d", 4, "dense"), lv("c", 4), Universe(4)
    assert d.dense and u.dense and not c.dense and Full(4).dense and not Empty(4).dense
    assert Union(d, u).dense and not Union(d, c).dense and not Intersect(c, d).dense
    assert Product(d, u).dense and Concat(d, u).dense and Project(0, d, 2).dense and Slice(d, 1, 3).dense
    # an offset or pad misses part of its dimension: never dense (unlike the artifact's)
    assert not Offset(2, d).dense and not Pad(d, 2).dense


def test_iters_and_iterated():
    a, b, c = lv("a", 2), lv("b", 2), lv("c", 2)
    s = Union(Concat(a, b), Product(lv("x", 2), lv("y", 2)))
    assert {str(x) for x in s.iters()} == {"i_a", "i_b", "i_x", "i_y"}
    # a concatenation's loop advances only its left side (its right side is a later loop)
    assert {str(x) for x in s.iterated()} == {"i_a", "i_x", "i_y"}
    assert Union(a, c).iterated() == {a, c}


def test_printer_paper_and_ascii():
    A0, A1 = lv("A", 2, "dense", 0, "i"), lv("A", 3, "compressed", 1, "j")
    a = lv("a", 6, index="k")
    s = Intersect(Union(Product(A0, A1), Slice(a, 0, 6, 2).a), Project(0, lv("b", 12, index="k"), 2))
    assert str(s) == "((i_A × j_A) ∪ k_a) ∩ π0(k_b, 2)"
    assert s.text(ascii=True) == "((i_A * j_A) | k_a) & pi0(k_b, 2)"
    assert str(Slice(a, 1, 5, 2)) == "k_a[1:5:2]" and str(Slice(a, 1, 5)) == "k_a[1:5]"
    assert str(Concat(a, lv("b", 2, index="j"))) == "k_a ⊔ j_b"
    assert Concat(a, a).text(ascii=True) == "k_a ++ k_a"
    assert str(Offset(6, lv("b", 2, index="j"), "|k_a|")) == "|k_a| + j_b"
    assert str(Pad(a, 2)) == "k_a + 2"
    assert str(Union(Empty(2), Full(2))) == "∅ ∪ Ƒ" and Union(Empty(2), Full(2)).text(True) == "empty(2) | full(2)"
    assert str(Universe(3, "l")) == "U_l" and str(Project(1, a, 3)) == "π1(k_a, 3)"


def test_sizes_and_errors_name_the_operands():
    a, b = lv("a", 3), lv("b", 4)
    with pytest.raises(SequenceError, match=r"i_a ∪ i_b: .*different sizes \(3 and 4\)"):
        Union(a, b)
    with pytest.raises(SequenceError, match="i_a ∩ i_b"):
        Intersect(a, b)
    with pytest.raises(SequenceError, match=r"step must be at least 1"):
        Slice(a, 0, 2, 0)
    with pytest.raises(SequenceError, match=r"need 0 <= start <= stop <= 3 \(the size of i_a\)"):
        Slice(a, 1, 4)
    with pytest.raises(SequenceError, match=r"2 does not divide the size 3 of i_a"):
        Project(0, a, 2)
    with pytest.raises(SequenceError, match="kind 'sparse'"):
        Level("A", 0, "sparse", 3)
    assert Slice(lv("c", 10), 1, 8, 3).size() == 3 and Slice(a, 2, 2).size() == 0
    assert Product(a, b).size() == 12 and Concat(a, b).size() == 7 and Project(0, lv("c", 12), 4).size() == 3


def test_unbound_parent_is_refused_and_absent_parent_is_empty():
    j = lv("A", 3, "compressed", 1, "j")
    with pytest.raises(SequenceError, match=r"level 1 of A \(j_A\) is read outside a loop over its parent level 0"):
        coordinates(j, {"A": {(0, 1)}})
    assert coordinates(j, {"A": {(0, 1)}}, {("A", 0): ABSENT}) == set()
    assert coordinates(j, {"A": {(0, 1), (1, 2)}}, {("A", 0): 1}) == {2}
    # a dense level under a parent that is not there has no fiber either
    assert coordinates(lv("A", 3, "dense", 1, "j"), {"A": set()}, {("A", 0): ABSENT}) == set()


def test_bind_fixes_the_leaves_at_a_coordinate():
    A, B = lv("A", 4), lv("B", 4)
    d = {"A": vec(1, 3), "B": vec(3)}
    e = bind(Union(A, B), 1, d)
    assert e[("A", 0)] == 1 and e[("B", 0)] is ABSENT
    e = bind(Concat(A, B), 7, d)
    assert e[("B", 0)] == 3 and e[("A", 0)] is ABSENT
    e = bind(Product(A, B), 3 * 4 + 3, d)
    assert e[("A", 0)] == 3 and e[("B", 0)] == 3


def test_sequences_serialize():
    for s in (Union(Product(lv("A", 2, "dense"), lv("A", 3, mode=1, index="j")),
                    Offset(2, Slice(lv("b", 12), 0, 12, 3), "|x|")),
              Concat(Pad(Project(0, lv("c", 6), 3), 1), Universe(4, "l"))):
        back = serialize.decode(serialize.encode(s))
        assert back == s and str(back) == str(s)


# -- reference iterators ---------------------------------------------------------------------


def iterate(s, data, env=None, state=None):
    st_ = state or Cursors(data, env)
    it = SeqIterator(s, st_)
    it.init()
    out = []
    while it.valid():
        assert len(out) <= s.size(), "the iterator does not terminate"
        out.append(it.eval())
        it.next()
    return out


def test_projection_loops_share_the_cursor_and_drain_groups():
    # S11 as loops: the π1 loop inside the π0 loop reads the group's residues, and the π0 loop's
    # next drains what the inner loop left (here the inner loop stops after one coordinate)
    a = lv("a", 9)
    p0, p1 = Project(0, a, 3), Project(1, a, 3)
    d = {"a": vec(1, 2, 5, 6, 7)}
    st_ = Cursors(d)
    outer = SeqIterator(p0, st_)
    outer.init()
    seen = []
    while outer.valid():
        g = outer.eval()
        enter(p0, st_)
        inner = SeqIterator(p1, st_)
        inner.init()
        first = inner.eval()
        seen.append((g, first, inner.equals(first)))
        outer.next(g)
    assert seen == [(0, 1, True), (1, 2, True), (2, 0, True)]
    # without the enclosing π0 loop, a π1 has no group
    with pytest.raises(SequenceError, match=r"π1\(i_a, 3\) is iterated outside a loop over π0\(i_a, 3\)"):
        SeqIterator(p1, Cursors(d)).init()


def test_locate_is_a_lower_bound_and_products_locate_row_then_column():
    a = lv("a", 10)
    st_ = Cursors({"a": vec(2, 5, 7)})
    it = SeqIterator(a, st_)
    it.init()
    it.locate(4)
    assert it.eval() == 5 and not it.equals(4)
    i, j = lv("D", 3, "dense", 0, "i"), lv("D", 4, "dense", 1, "j")
    st_ = Cursors({"D": set()})
    it = SeqIterator(Product(i, j), st_)
    it.init()
    it.locate(9)
    assert it.eval() == 9 and it.equals(9)
    # a slice starts at its first coordinate on the stride, located (not stepped to)
    it = SeqIterator(Slice(a, 3, 10, 2), Cursors({"a": vec(1, 2, 4, 5, 9)}))
    it.init()
    assert it.eval() == 1   # a = 5 -> (5 - 3) / 2


@settings(max_examples=75, deadline=None, suppress_health_check=list(HealthCheck))
@given(seqs(inner=True, universe=True), st.integers(0, 2 ** 32 - 1))
def test_iterators_visit_the_set_semantics_in_order(s, seed):
    """Without a union or concatenation (whose loops end when one side runs out, the lattice's
    business) one iterator visits the sequence's coordinates, increasing."""
    import numpy as np
    from compiler.lattice.seqcheck import random_data
    d = random_data(s, np.random.default_rng(seed))
    assert iterate(s, d) == sorted(coordinates(s, d))


def test_product_skips_empty_inner_fibers_on_init_and_next():
    # Fig. 20: rows 0, 2 and 3 of a CSR are empty; the product starts at row 1 and ends after it
    i, j = lv("A", 4, "dense", 0, "i"), lv("A", 3, "compressed", 1, "j")
    assert iterate(Product(i, j), {"A": {(1, 0), (1, 2)}}) == [3, 5]
    assert iterate(Product(i, j), {"A": set()}) == []
    # the product of two independent compressed vectors restarts the inner one per outer one
    assert iterate(Product(lv("a", 3), lv("b", 2)), {"a": vec(0, 2), "b": vec(1)}) == [1, 5]


def test_union_and_intersection_drop_out_and_conditional_next():
    a, b = lv("a", 6), lv("b", 6)
    st_ = Cursors({"a": vec(1, 4), "b": vec(1, 2, 5)})
    u = SeqIterator(Union(a, b), st_)
    u.init()
    seen = []
    while u.valid():        # valid while both are: stops once a runs out (the lattice's next loop)
        x = u.eval()
        seen.append((x, u.equals(x)))
        u.next(x)           # only the operands at x
    assert seen == [(1, True), (2, False), (4, False)]
    assert SeqIterator(b, st_).eval() == 5      # b is where the loop over b alone continues
    st_ = Cursors({"a": vec(1, 3, 4), "b": vec(0, 3, 4, 5)})
    assert iterate(Intersect(a, b), {}, state=st_) == [3, 4]


def test_offset_pad_and_concat_iterators():
    a, b = lv("a", 3), lv("b", 4)
    d = {"a": vec(0, 2), "b": vec(1, 3)}
    assert iterate(Offset(3, b), d) == [4, 6]
    assert iterate(Pad(a, 4), d) == [0, 2]
    assert iterate(Concat(a, b), d) == [0, 2]     # its loop iterates the left side only
    st_ = Cursors(d)
    it = SeqIterator(Offset(3, b), st_)
    it.init()
    it.locate(6)
    assert it.eval() == 6 and it.equals(6) and not it.equals(3)


def test_projection_inner_locate_uses_the_group():
    a = lv("a", 12, "dense")
    p0, p1 = Project(0, a, 4), Project(1, a, 4)
    st_ = Cursors({"a": set()})
    SeqIterator(p0, st_).init()
    SeqIterator(p0, st_).locate(2)
    enter(p0, st_)
    inner = SeqIterator(p1, st_)
    inner.init()
    assert inner.eval() == 0 and SeqIterator(a, st_).eval() == 8
    inner.locate(3)
    assert SeqIterator(a, st_).eval() == 11 and inner.equals(3)
