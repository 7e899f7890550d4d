"""The loops of the sequence CFIR (compiler.lattice.seqwhiles): every while under blocks, switches and a nested
product's binding, outer ones first, and the sequences a loop's body walks, which decide the groups it rewinds
(compiler.lattice.seqrewind.loop_repeats) in the kernel and the CFIR interpreter alike (their kernels:
test_seq_repeat_slices.py)."""

from compiler.lattice.seqcfir import Assign, Bind, Block, Lit, Switch, While
from compiler.lattice.seqrewind import loop_repeats
from compiler.lattice.sequences import Level, Product, Project, Universe
from compiler.lattice.seqwhiles import inner_sequences, whiles


def test_every_while_outer_first():
    a = Level("a", 0, "compressed", 6, "l")
    p0, p1 = Project(0, a, 3), Project(1, a, 3)
    deepest = While("l", p1, (), Assign("c", ("k", "l"), Lit(1.0)))
    case = While("n", Universe(2, "n"), (), Bind("k", "n", "l", 3, Block((deepest,))))
    outer = While("k", Product(p0, Universe(2, "n")), (), Switch("k", ((p0, case), (p1, Block(())))))
    assert [w.index for w in whiles(outer)] == ["k", "n", "l"]
    assert inner_sequences(outer) == (Universe(2, "n"), p1)
    assert inner_sequences(deepest) == ()
    # (the π1 two loops down walks the group of the outer loop's π0: rewound after each coordinate)
    assert loop_repeats(outer.seq, inner_sequences(outer)) == (p0,)
    assert loop_repeats(outer.seq, ()) == ()

