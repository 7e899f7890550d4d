"""explorer.whatchanged: the C and lattices / nests of two lowerings, diffed from the traces."""

import compiler
from compiler import Trace
from explorer import explore
from explorer.whatchanged import what_changed

SPMV = "y[i] = A[i, j] * x[j]"


def test_the_same_lowering_changes_nothing():
    a = compiler.lower(SPMV, "lattice", A="csr", x="dense").trace
    w = what_changed(a, a)
    assert [c.title for c in w.changes] == ["C", "lattice forall i", "lattice forall j"]
    assert all(c.comparable and not c.changed and c.diff == "" for c in w.changes)
    assert "(unchanged)" in w.html() and "(no change)" in w.html()


def test_a_format_change_diffs_the_c_and_the_lattices():
    a = compiler.lower(SPMV, "lattice", A="csr", x="dense").trace
    b = compiler.lower(SPMV, "lattice", A="dcsr", x="dense").trace
    w = what_changed(a, b, "csr", "dcsr")
    c = w.changes[0]
    assert c.title == "C" and c.changed
    added = [line for line in c.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert any("A0_pos" in line for line in added)   # DCSR's outer level is compressed
    assert c.diff.splitlines()[:2] == ["--- csr", "+++ dcsr"]
    lattice_i = next(x for x in w.changes if x.title == "lattice forall i")
    # the lattice of i iterates A under DCSR (A stores rows), all of i under CSR
    assert lattice_i.changed and lattice_i.diff
    html = w.html()
    assert "what changed: csr &rarr; dcsr" in html and 'data-changed="true"' in html


def test_a_strategy_change_shows_each_representation_once_not_diffed_across():
    a = compiler.lower(SPMV, "lattice", A="csr", x="dense").trace
    b = compiler.lower(SPMV, "looplets", A="csr", x="dense").trace
    w = what_changed(a, b, "lattice", "looplets")
    titles = [c.title for c in w.changes]
    assert titles == ["C", "lattices", "looplet nests"]
    lattices, nests = w.changes[1], w.changes[2]
    assert not lattices.comparable and lattices.after == "" and "lattice forall j:" in lattices.before
    assert not nests.comparable and nests.before == "" and "looplet nest A.lvl1[i][j]:" in nests.after
    assert "only lattice has it" in w.html() and "only looplets has it" in w.html()


def test_a_failed_lowering_says_it_has_no_c():
    a = compiler.lower(SPMV, "lattice", A="csr", x="dense").trace

    def broken(trace: Trace):
        compiler.lower(SPMV, "lattice", trace=trace, A="SparseBand", x="dense")

    b = explore(broken)
    assert b.error
    c = what_changed(a, b).changes[0]
    assert c.after.startswith("/* no C: ") and "SparseBand" in c.after and c.changed
