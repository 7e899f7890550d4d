"""Merged unions (:mod:`compiler.lattice.seqmerge`, issue 30): a stack along axis 1 or 2 of ``n`` COO matrices walks
the union of their rows (and columns), whose lattice has ``2^n - 1`` points and whose first point has ``2^(n-1)``
cases, each the parts of the matrices there: 725, 2,717, 10,341, 38,245 and 137,221 lines of C for 2 to 6 parts
on axis 1 before. Each operand feeds only its own part, so the loop is one, until all of them ran out, each part
tested on its own operand. Each kernel against numpy, the dense oracle and the IR interpreter
(``one_lattice_kernel``), and the sequence CFIR's interpreter (``seq_evaluate``)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.lattice.seqcfir import Assign, Block, Forall, Read, build_cfir
from compiler.lattice.seqderive import seq_evaluate
from compiler.lattice.seqinterp import interpret
from compiler.lattice.sequences import Level, Union
from tests.compiler.lattice.split_kernels import one_lattice_kernel

M = np.array([[1.0, 0, -3], [0.5, 0, 2], [0, 0, 0], [0, 4, 0]])


def parts(fmts):
    """One matrix per format of ``fmts``, another multiple of ``M`` each, its rows rolled (the parts' rows
    differ): the arrays and numpy's."""
    values = [np.roll(M * (k + 1), k, axis=0) for k in range(len(fmts))]
    return [xp.asarray(Tensor.from_numpy(v, f)) for v, f in zip(values, fmts)], values


def merged_loops(kernel) -> list:
    """The indices whose loops merged, outer first."""
    return [s.before.split()[1] for s in kernel.trace.find("lattice") if any(r.rule == "merged-union" for r in s.rewrites)]


def checked(expr, want, out="coo"):
    """``expr`` lowered by the lattice, right against numpy, the oracles and the sequence CFIR's interpreter."""
    k = one_lattice_kernel(expr, want, out)
    np.testing.assert_array_equal(seq_evaluate(k.program, **k.arguments), want)
    return k


@pytest.mark.parametrize("axis, merged", [(1, ["i"]), (2, ["i", "j"])])
def test_stack_of_coo_matrices_is_one_loop(axis, merged):
    arrays, values = parts(["coo"] * 4)
    k = checked(xp.stack([a * 2 for a in arrays], axis=axis), np.stack([v * 2 for v in values], axis=axis))
    assert merged_loops(k) == merged
    notes = [s.note for s in k.trace.find("lattice")]
    assert notes[0] == "forall i: 1 point(s)", notes
    cfir = k.trace.find("cfir")[0].after_text
    # (each part reads its matrix in the loops over its row, under a row not there empty: no test at i; on axis 2
    # the merged loop over the columns tests each part at j)
    assert "until all ran out" in cfir and "switch i" not in cfir and cfir.count("switch j") == 4 * (axis - 1), cfir
    assert "!!" not in k.c_source


@pytest.mark.parametrize("fmt", ["coo", "csr"])
def test_hstack_of_coo_matrices_is_one_loop(fmt):
    arrays, values = parts(["coo", fmt, "coo", "coo"])
    k = checked(xp.concat([a * 2 for a in arrays], axis=1), np.concatenate([v * 2 for v in values], axis=1), fmt)
    assert merged_loops(k) == ["i"]
    # (on main, of 3 to 6 COO parts: 2,064, 7,713, 28,162 and 100,083 lines, 90 s to lower the last)
    lines = [len(checked(xp.concat([a * 2 for a in parts(["coo"] * n)[0]], axis=1),
                         np.concatenate([v * 2 for v in parts(["coo"] * n)[1]], axis=1)).c_source.splitlines())
             for n in (3, 4, 5)]
    assert lines[2] - lines[1] == lines[1] - lines[0] < lines[0] / 3, lines


@pytest.mark.parametrize("first", [0, 1])
@pytest.mark.parametrize("fmt", ["coo", "csr", "dense"])
def test_hstack_of_parts_of_two_fills_is_one_loop(fmt, first):
    # (each part of another fill than the result's walks every row, a universe beside its rows; its loops over
    # the columns left once its entries ran out, U_n alone, continue the series its first loop starts: below its
    # rows too. Before, of 4 COO parts: the rows' lattice of 16 points, 17,390 lines of C. A CSR part of another
    # fill than the first's has its rows' universe located on its dense rows, at every row: coo, csr, coo of
    # A * 2, B + 1 and C * 2 was a lattice of 4 points, 1,783 lines)
    ops = [lambda a: a + 1, lambda a: a * 2][first:] + [lambda a: a + 1][:first]
    lines = []
    for n in (3, 4, 5):
        arrays, values = parts(["coo", fmt] + ["coo"] * (n - 2))
        k = checked(xp.concat([ops[k % 2](a) for k, a in enumerate(arrays)], axis=1),
                    np.concatenate([ops[k % 2](v) for k, v in enumerate(values)], axis=1), None)
        assert merged_loops(k) == ["i"]
        lines.append(len(k.c_source.splitlines()))
    assert lines[2] - lines[0] < lines[0], lines   # (two more parts add less than the first three make)


def test_vectors_stacked_as_columns_test_each_part():
    # (each part reads its vector at the merged loop's coordinate: tested there, one case each)
    values = [np.array([0, 1.5, 0, -2, 0, 0]) * (k + 1) for k in range(4)]
    values[2][0] = np.nan
    arrays = [xp.asarray(Tensor.from_numpy(v, "sparse")) for v in values]
    k = checked(xp.stack([a * 2 for a in arrays], axis=1), np.stack([v * 2 for v in values], axis=1))
    assert merged_loops(k) == ["i"]
    cfir = k.trace.find("cfir")[0].after_text
    assert cfir.count("switch i") == 4 and "case i_A:" in cfir, cfir


@pytest.mark.parametrize("axis", [1, 2])
@pytest.mark.parametrize("fmts", [("coo",), ("coo", "csr"), ("coo", "dense")])
def test_each_part_adds_the_same_code(axis, fmts):
    lines = []
    for n in range(3, 8):
        arrays, values = parts([fmts[k % len(fmts)] for k in range(n)])
        k = checked(xp.stack([a - 1 if k % 2 else a * 2 for k, a in enumerate(arrays)], axis=axis),
                    np.stack([v - 1 if k % 2 else v * 2 for k, v in enumerate(values)], axis=axis), None)
        lines.append(len(k.c_source.splitlines()))
    # (each two parts, one of each fill, add the same code; before, of COO parts on axis 1: 2,717, 10,341, 38,245
    # and 137,221 lines for 3 to 6 parts)
    pairs = np.diff(lines[::2])
    assert pairs[0] == pairs[1] and pairs[0] < lines[0], lines


def test_parts_of_another_fill_write_it_where_their_operand_is_not():
    # (a + 1 is 1 where a is not: the loop walks every row, a universe beside the levels, and b's part writes
    # 0 where b is not, its default case)
    arrays, values = parts(["coo"] * 3)
    k = checked(xp.stack([arrays[0] + 1, arrays[1] * 2, arrays[2] + 1], axis=2),
                np.stack([values[0] + 1, values[1] * 2, values[2] + 1], axis=2), None)
    assert merged_loops(k) == ["i", "j"]
    cfir = k.trace.find("cfir")[0].after_text
    assert "case U_j" in cfir, cfir


def test_dense_parts_located_at_the_merged_coordinate():
    arrays, values = parts(["dense", "csr", "coo", "coo", "coo"])
    k = checked(xp.stack([a * 2 for a in arrays], axis=1), np.stack([v * 2 for v in values], axis=1))
    assert merged_loops(k) == ["i"]
    assert " with i_B = " in k.trace.find("cfir")[0].after_text


def test_two_operands_keep_the_papers_lattice():
    arrays, values = parts(["coo"] * 2)
    k = checked(xp.stack(arrays, axis=1), np.stack(values, axis=1))
    assert merged_loops(k) == [] and k.trace.find("lattice")[0].note == "forall i: 3 point(s)"


def test_a_part_reading_two_matrices_reads_them_in_its_rows():
    # (A + B's part walks k_A ∪ k_B inside row i: under a row not there, its fiber is empty)
    arrays, values = parts(["coo"] * 4)
    k = checked(xp.stack([arrays[0] + arrays[1], arrays[2], arrays[3]], axis=1),
                np.stack([values[0] + values[1], values[2], values[3]], axis=1))
    assert merged_loops(k) == ["i"]


@pytest.mark.parametrize("op", ["+", "*"])
def test_a_part_reading_two_vectors_tests_each_set_of_them(op):
    # (a + b's part is at a row where either vector is: its cases are those of their own lattice, both there
    # first, each compiled where the other is not; a * b's where A alone is writes 0 * A, nothing, but B holds
    # inf: 0 * B is NaN there, a case. The other parts one case each. It was the rows' lattice of 15 points)
    values = [np.array([0, 1.5, 0, -2, 0, 3.0]) * (k + 1) for k in range(4)]
    values[1] = np.roll(values[1], 1)
    values[1][2] = np.inf
    arrays = [xp.asarray(Tensor.from_numpy(v, "sparse")) for v in values]
    both = (lambda a, b: a + b) if op == "+" else (lambda a, b: a * b)
    with np.errstate(invalid="ignore"):
        k = checked(xp.stack([both(arrays[0], arrays[1]), arrays[2] * 2, arrays[3] * 2], axis=1),
                    np.stack([both(values[0], values[1]), values[2] * 2, values[3] * 2], axis=1))
    assert merged_loops(k) == ["i"]
    cfir = k.trace.find("cfir")[0].after_text
    cases = ["case i_A ∪ i_B:", "case i_A:", "case i_B:"] if op == "+" else ["case i_A ∪ i_B:", "case i_B:"]
    assert [line.strip() for line in cfir.splitlines() if "case i_A" in line or "case i_B" in line] == cases, cfir


def test_interpreter_runs_until_every_operand_ran_out():
    a, b, c = (Level(t, 0, "compressed", 6) for t in "abc")
    prog = Forall("i", Union(Union(a, b), c), Block(tuple(Assign(f"o{x.tensor}", ("i",), Read(x.tensor, (x,)))
                                                          for x in (a, b, c))))
    cf = build_cfir(prog)
    assert cf.text().startswith("while i <- (i_a ∪ i_b) ∪ i_c until all ran out"), cf.text()
    data = {"a": {(0,): 1.0}, "b": {(2,): 2.0, (5,): 3.0}, "c": {}}
    run = interpret(cf, data)
    assert run.outputs == {"oa": {(0,): 1.0}, "ob": {(2,): 2.0, (5,): 3.0}}
    assert [key for _, key, _ in run.writes] == [(0,), (2,), (5,)]


@settings(max_examples=20, deadline=None)
@given(n=st.integers(3, 5), axis=st.integers(1, 2), fmts=st.lists(st.sampled_from(["coo", "coo", "csr", "dense"]),
       min_size=5, max_size=5), rows=st.integers(0, 4), cols=st.integers(1, 4), seed=st.integers(0, 2 ** 16),
       density=st.sampled_from([0.0, 0.3, 1.0]), out=st.sampled_from(["coo", None]), stacked=st.booleans())
@example(n=5, axis=2, fmts=["coo"] * 5, rows=4, cols=4, seed=0, density=0.3, out=None, stacked=True)
@example(n=4, axis=1, fmts=["coo", "csr", "coo", "coo", "coo"], rows=2, cols=1, seed=0, density=0.0, out=None,
         stacked=False)
@example(n=4, axis=2, fmts=["coo"] * 5, rows=1, cols=1, seed=0, density=0.0, out="coo", stacked=False)
def test_joins_against_numpy(n, axis, fmts, rows, cols, seed, density, out, stacked):
    # (the second example: concat((A + 1, B * 2, ...), axis=1) wrote 1 at B's zeros, test_seq_concat_fills.py; the
    # third: its rows, a union of four COO matrices' and the universes of their parts of another fill, kept the
    # lattice's 16 points, 17,390 lines of C: the loops over a part's columns once its entries ran out were not
    # taken as below its rows)
    rng = np.random.default_rng(seed)
    values = [np.where(rng.random((rows, cols)) < density, rng.choice([1.0, -2.0, 0.5, np.nan, np.inf], (rows, cols)),
                       0.0) for _ in range(n)]
    arrays = [xp.asarray(v if f == "dense" else Tensor.from_numpy(v, f)) for v, f in zip(values, fmts)]
    join, np_join = (xp.stack, np.stack) if stacked else (xp.concat, np.concatenate)
    axis = axis if stacked else axis - 1
    with np.errstate(invalid="ignore"):
        want = np_join([v * 2 if k % 2 else v + 1 for k, v in enumerate(values)], axis=axis)
    k = one_lattice_kernel(join([a * 2 if k % 2 else a + 1 for k, a in enumerate(arrays)], axis=axis), want, out,
                           retried=True)
    # (no union's lattice of 2^n points, the rows of a join along axis 1 or 2: on main, 5 COO parts stacked on axis 2
    # took minutes to lower; a vstack's rows are a concatenation of the parts, no union)
    assert axis == 0 or all(int(s.note.split(": ")[1].split()[0]) < 2 ** n for s in k.trace.find("lattice"))
    with np.errstate(invalid="ignore"):   # (the sequence CFIR's interpreter, merged loops and all)
        np.testing.assert_array_equal(seq_evaluate(k.program, **k.arguments), want)


# the parts drawn: one operand, or two of them (op, then the operands' index)
UNARY = [lambda a: a * 2, lambda a: a + 1, lambda a: a - 0.5]
BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, lambda a, b: (a + 1) * b]


@settings(max_examples=20, deadline=None)
@given(fmts=st.lists(st.sampled_from(["sparse", "sparse", "dense"]), min_size=3, max_size=6),
       pairs=st.lists(st.booleans(), min_size=6, max_size=6), ops=st.lists(st.integers(0, 11), min_size=6, max_size=6),
       size=st.integers(0, 6), seed=st.integers(0, 2 ** 16), density=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       out=st.sampled_from(["coo", None]))
@example(fmts=["dense", "dense", "sparse", "dense", "sparse"], pairs=[False, True, False, False, False, False],
         ops=[2, 3, 1, 0, 0, 0], size=6, seed=1, density=0.3, out=None)
def test_stacked_vector_parts_against_numpy(fmts, pairs, ops, size, seed, density, out):
    # (parts reading one vector or two, of several fills, NaN and inf among the values: the example, a - 0.5
    # beside (b + 1) * c of dense a, b, wrote only c's rows, test_seq_concat_fills.py)
    rng = np.random.default_rng(seed)
    values = [np.where(rng.random(size) < density, rng.choice([1.0, -2.0, 0.5, np.nan, np.inf, -np.inf], size), 0.0)
              for _ in fmts]
    arrays = [xp.asarray(Tensor.from_numpy(v, f)) for v, f in zip(values, fmts)]
    parts, wanted, k = [], [], 0
    while k < len(fmts):
        two = pairs[len(parts)] and k + 1 < len(fmts)
        op = BINARY[ops[len(parts)] % 4] if two else UNARY[ops[len(parts)] % 3]
        args = (k, k + 1) if two else (k,)
        parts.append(op(*(arrays[a] for a in args)))
        with np.errstate(invalid="ignore"):
            wanted.append(op(*(values[a] for a in args)))
        k += len(args)
    if len(parts) < 2:
        return
    with np.errstate(invalid="ignore"):
        want = np.stack(wanted, axis=1)
        kernel = one_lattice_kernel(xp.stack(parts, axis=1), want, out, retried=True)
        np.testing.assert_array_equal(seq_evaluate(kernel.program, **kernel.arguments), want)


def test_a_part_reading_every_operand_keeps_their_lattice():
    # (a + b + c stacked alone is no part of several: its rows keep the lattice's 7 points, whose later loops test
    # fewer operands as they run out, where a merged loop would test all three at every row)
    values = [np.array([0, 1.5, 0, -2, 0, 3.0]) * (k + 1) for k in range(3)]
    arrays = [xp.asarray(Tensor.from_numpy(v, "sparse")) for v in values]
    k = checked(xp.stack([arrays[0] + arrays[1] + arrays[2]], axis=1), np.stack([sum(values)], axis=1))
    assert merged_loops(k) == [] and k.trace.find("lattice")[0].note == "forall i: 7 point(s)"
