"""A merged union whose operands include intersections (:mod:`compiler.lattice.seqmerge`, issue 30): the rows of
``concat([A * B, C, A], axis=1)`` are ``((i_A ∩ i_B) ∪ i_C) ∪ i_A'``. The intersection is one operand of the merged
loop: its iterator meets its levels, the loop visits the least coordinate of the operands left and runs until all
ran out, and a part reading it is tested on both levels at once. Before, such a union kept the paper's lattice:
7 points and 2,155 lines of C for the matrices, 16 points and 7,678 lines for four vectors stacked.

Each kernel against numpy, the dense oracle and the IR interpreter (``one_lattice_kernel``), and the sequence
CFIR's interpreter (``seq_evaluate``)."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.lattice.seqcfir import Assign, Block, Forall, Read, build_cfir
from compiler.lattice.seqinterp import interpret
from compiler.lattice.sequences import Intersect, Level, Union
from tests.compiler.lattice.test_seqmerge import checked, merged_loops

nan, inf = np.nan, np.inf

# (A's last rows are past B's: where the loop visits them for C or A's second read, A is at the row, but
# A ∩ B ran out, so A * B's part is not there)
A = np.array([[1.0, 0, 2], [0, 0, 0], [3, 0, 0], [0, 0, 0], [0, 4, 5], [6, 0, 0]])
B = np.array([[2.0, 0, 0], [0, 7, 0], [1, 0, 8], [0, 0, 0], [0, 0, 0], [0, 0, 0]])
C = np.array([[0.0, 0, 0], [0, 0, 1], [0, 0, 0], [2, 0, 0], [0, 0, 0], [0, 0, 0]])


def matrices(*fmts):
    return [xp.asarray(Tensor.from_numpy(v, f)) for v, f in zip((A, B, C), fmts)]


def test_rows_of_a_concat_whose_part_reads_two_matrices_are_one_loop():
    a, b, c = matrices("coo", "coo", "coo")
    k = checked(xp.concat([a * b, c, a], axis=1), np.concatenate([A * B, C, A], axis=1))
    assert merged_loops(k) == ["i"]
    assert k.trace.find("lattice")[0].note == "forall i: 1 point(s)"
    cfir = k.trace.find("cfir")[0].after_text
    assert cfir.startswith("while i <- ((i_A ∩ i_B) ∪ i_C) ∪ i_A' until all ran out"), cfir
    # (the lattice's 7 points had 2,155 lines; the looplets' merged walks 361)
    assert len(k.c_source.splitlines()) < 600, len(k.c_source.splitlines())


def test_a_part_of_dense_rows_beside_an_intersection():
    # (a CSR's rows are dense: A ∩ B is B's rows, not an intersection, and the other parts merge as before)
    a, b, c = matrices("csr", "coo", "dcsr")
    k = checked(xp.concat([a * b, c, a], axis=1), np.concatenate([A * B, C, A], axis=1), "csr")
    assert merged_loops(k) == ["i"]


def vectors():
    values = [np.array([0, 1.5, 0, -2, 0, 3.0, 0]) * (k + 1) for k in range(5)]
    values[1], values[4] = np.roll(values[1], 1), np.roll(values[4], 2)
    return [xp.asarray(Tensor.from_numpy(v, "sparse")) for v in values], values


def test_vectors_stacked_test_an_intersection_as_one_case():
    arrays, values = vectors()
    x = arrays
    k = checked(xp.stack([x[0] * x[1], x[2] * 2, x[3] * x[4], x[2] + 1], axis=1),
                np.stack([values[0] * values[1], values[2] * 2, values[3] * values[4], values[2] + 1], axis=1))
    assert merged_loops(k) == ["i"]
    cfir = k.trace.find("cfir")[0].after_text
    # (C, read in two parts, is walked once: its index i is bound by no part; it was C and C', two cursors)
    assert cfir.startswith("while i <- (((i_A ∩ i_B) ∪ i_C) ∪ (i_D ∩ i_E)) ∪ U_i#n until all ran out")
    cases = [line.strip() for line in cfir.splitlines() if line.strip().startswith("case")]
    assert cases == ["case i_A ∩ i_B:", "case i_C:", "case i_D ∩ i_E:", "case i_C:", "case U_i#n:"], cfir
    # (its least coordinate reads an intersection's first level: its levels met, no minimum of both)
    kernel = k.c_source.split("int lattice_out(")[1]
    assert "A0_idx[pA0] < i)" in kernel and " ? " not in kernel, kernel


def test_a_product_holding_infinity_is_a_union_of_cases():
    # (0 * inf is NaN: where b holds inf, a * b is not an intersection, and its part is tested on each set of them)
    arrays, values = vectors()
    values[1][2] = inf
    x = [xp.asarray(Tensor.from_numpy(v, "sparse")) for v in values]
    with np.errstate(invalid="ignore"):
        k = checked(xp.stack([x[0] * x[1], x[2] * 2, x[3] * x[4]], axis=1),
                    np.stack([values[0] * values[1], values[2] * 2, values[3] * values[4]], axis=1))
    cfir = k.trace.find("cfir")[0].after_text
    assert "case i_A ∪ i_B:" in cfir and "case i_D ∩ i_E:" in cfir, cfir


def test_interpreter_visits_an_intersection_where_its_levels_meet():
    a, b, c, d = (Level(t, 0, "compressed", 8) for t in "abcd")
    parts = [Assign("oab", ("i",), Read("a", (a,))), Assign("oc", ("i",), Read("c", (c,))),
             Assign("od", ("i",), Read("d", (d,)))]
    prog = Forall("i", Union(Union(Intersect(a, b), c), d), Block(tuple(parts)))
    cf = build_cfir(prog)
    assert cf.text().startswith("while i <- ((i_a ∩ i_b) ∪ i_c) ∪ i_d until all ran out"), cf.text()
    # (a at 6 after b ran out, where d is: a ∩ b is not there)
    data = {"a": {(1,): 1.0, (3,): 2.0, (6,): 3.0}, "b": {(0,): 9.0, (3,): 8.0}, "c": {(2,): 4.0}, "d": {(6,): 5.0}}
    run = interpret(cf, data)
    assert run.outputs == {"oab": {(3,): 2.0}, "oc": {(2,): 4.0}, "od": {(6,): 5.0}}
    assert [key for _, key, _ in run.writes] == [(2,), (3,), (6,)]


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 5), fmts=st.lists(st.sampled_from(["coo", "csr", "dcsr", "dense"]), min_size=10, max_size=10),
       two=st.lists(st.sampled_from(["*", "+", "max", None]), min_size=5, max_size=5), rows=st.integers(0, 5),
       cols=st.integers(1, 3), seed=st.integers(0, 2 ** 16), density=st.sampled_from([0.0, 0.4, 1.0]),
       special=st.booleans(), stacked=st.booleans())
@example(n=3, fmts=["coo"] * 10, two=["*", None, "*", None, None], rows=5, cols=2, seed=3, density=0.4,
         special=False, stacked=False)
def test_joins_of_parts_reading_two_operands_against_numpy(n, fmts, two, rows, cols, seed, density, special,
                                                            stacked):
    # (each part reads its own operands: one, or two joined by *, + or max; with NaN and ±inf stored, a product
    # is a union of cases, not an intersection)
    rng = np.random.default_rng(seed)
    choices = [1.0, -2.0, 0.5] + ([nan, inf, -inf] if special else [])
    values = [np.where(rng.random((rows, cols)) < density, rng.choice(choices, (rows, cols)), 0.0)
              for _ in range(2 * n)]
    arrays = [xp.asarray(v if f == "dense" else Tensor.from_numpy(v, f)) for v, f in zip(values, fmts)]
    ops = {"*": lambda a, b: a * b, "+": lambda a, b: a + b,
           "max": lambda a, b: xp.maximum(a, b) if isinstance(a, xp.Array) else np.maximum(a, b)}

    def part(k, xs):
        return ops[two[k]](xs[2 * k], xs[2 * k + 1]) if two[k] else xs[2 * k] * 2

    join, np_join = (xp.stack, np.stack) if stacked else (xp.concat, np.concatenate)
    with np.errstate(invalid="ignore"):
        want = np_join([part(k, values) for k in range(n)], axis=1)
        checked(join([part(k, arrays) for k in range(n)], axis=1), want, None)
