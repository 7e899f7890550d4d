"""Merged unions of row walks (:func:`compiler.lattice.seqmerge.row_walk`, issue 30): the ravel of an hstack of ``n``
matrices, ``reshape(concat([A, B, C], axis=1), (-1,))``, walks ``(j_A × (l_A + 2)) ∪ (j_B × ((1 + m_B) + 1)) ∪
(j_C × (2 + n_C))``, each part's rows and its columns shifted into the row. No two parts are ever at one coordinate,
yet the union's lattice had ``2^n - 1`` points: 748, 1,818 and 4,364 lines of C for 3 to 5 CSR parts before. Each
part is now one case of one loop, until all of them ran out. Each kernel against numpy, the dense oracle and the IR
interpreter (``one_lattice_kernel``), and the sequence CFIR's interpreter (``seq_evaluate``)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.lattice.seqderive import seq_evaluate
from compiler.lattice.seqmerge import row_walk, union_operands
from compiler.lattice.sequences import Level, Offset, Pad, Product, Union
from tests.compiler.lattice.split_kernels import one_lattice_kernel
from tests.compiler.lattice.test_seqmerge import merged_loops

M = np.array([[1.0, 0, -3], [0.5, 0, 2], [0, 0, 0], [0, 4, 0]])


def raveled(fmts, widths=None, fill=0.0):
    """The ravel of the hstack of a matrix per format of ``fmts`` (``widths``: each one's columns of ``M``), each
    another multiple of ``M``, its rows rolled: the kernel, right against numpy and every oracle."""
    widths = widths or [3] * len(fmts)
    values = [np.roll(M[:, :w] * (k + 1), k, axis=0) for k, w in enumerate(widths)]
    arrays = [xp.asarray(v if f == "dense" else Tensor.from_numpy(v, f, fill=fill)) for v, f in zip(values, fmts)]
    want = np.concatenate(values, axis=1).reshape(-1)
    k = one_lattice_kernel(xp.reshape(xp.concat(arrays, axis=1), (-1,)), want, None)
    np.testing.assert_array_equal(seq_evaluate(k.program, **k.arguments), want)
    return k


def test_a_row_walk_is_one_tensors_levels_shifted():
    j, l, m = Level("A", 0, "compressed", 4, "j"), Level("A", 1, "compressed", 3, "l"), Level("B", 1, "dense", 3, "m")
    assert row_walk(Product(j, Offset(2, l))) and row_walk(Product(j, Pad(Offset(1, l), 1)))
    # (two tensors' levels: the rows of one walked with the other's columns, not one part's walk)
    assert not row_walk(Product(j, m)) and not row_walk(j) and not row_walk(Product(j, j))
    # (a level walked from its last coordinate to its first, a slice with a negative step, steps up as well)
    assert row_walk(Product(j, Level("A", 1, "compressed", 3, "l", reverse=True)))
    walks = [Product(Level(t, 0, "compressed", 4, "j"), Pad(Offset(3 * k, Level(t, 1, "compressed", 3, "l")), 6 - 3 * k))
             for k, t in enumerate("ABC")]
    assert union_operands(Union(Union(walks[0], walks[1]), walks[2])) == tuple(walks)


@pytest.mark.parametrize("fmts", [("csr",) * 3, ("coo", "csr", "coo", "dense"), ("coo",) * 5])
def test_a_ravel_of_an_hstack_is_one_loop(fmts):
    k = raveled(fmts)
    assert merged_loops(k) == ["i"]
    assert k.trace.find("lattice")[0].note == "forall i: 1 point(s)"
    cfir = k.trace.find("cfir")[0].after_text
    # (a case per sparse part; a dense part, at every coordinate of its rows, is one too: its rows are walked)
    assert "until all ran out" in cfir and cfir.count("case ") == len(fmts), cfir
    assert cfir.count("while i") == 1, cfir


def test_each_part_of_a_ravel_adds_the_same_code():
    lines = [len(raveled(["csr"] * n).c_source.splitlines()) for n in range(3, 8)]
    # (before: 748, 1,818 and 4,364 lines for 3 to 5 parts)
    steps = np.diff(lines)
    assert len(set(steps)) == 1 and steps[0] < lines[0] / 3, lines


def test_two_parts_keep_the_papers_lattice():
    k = raveled(["csr", "coo"])
    assert merged_loops(k) == [] and k.trace.find("lattice")[0].note == "forall i: 3 point(s)"


def test_a_ravel_of_a_sum_keeps_its_lattice():
    # (A + B + C raveled: the three walks meet at each coordinate; no part reads one of them alone)
    values = [np.roll(M * (k + 1), k, axis=0) for k in range(3)]
    arrays = [xp.asarray(Tensor.from_numpy(v, "csr")) for v in values]
    want = sum(values).reshape(-1)
    k = one_lattice_kernel(xp.reshape(arrays[0] + arrays[1] + arrays[2], (-1,)), want, None)
    assert merged_loops(k) == [] and k.trace.find("lattice")[0].note == "forall i: 7 point(s)"


@settings(max_examples=20, deadline=None)
@given(n=st.integers(3, 5), fmts=st.lists(st.sampled_from(["coo", "csr", "csr", "dense"]), min_size=5, max_size=5),
       widths=st.lists(st.integers(1, 3), min_size=5, max_size=5), rows=st.integers(0, 4),
       seed=st.integers(0, 2 ** 16), density=st.sampled_from([0.0, 0.3, 1.0]), fill=st.sampled_from([0.0, -np.inf]),
       ops=st.lists(st.integers(0, 3), min_size=5, max_size=5), out=st.sampled_from(["coo", None]))
@example(n=3, fmts=["csr"] * 5, widths=[1] * 5, rows=0, seed=0, density=0.0, fill=0.0, ops=[0] * 5, out=None)
@example(n=4, fmts=["coo", "dense", "csr", "coo", "csr"], widths=[2, 1, 3, 1, 1], rows=3, seed=7, density=0.3,
         fill=-np.inf, ops=[1, 0, 2, 0, 0], out="coo")
@example(n=3, fmts=["csr", "coo", "csr", "csr", "csr"], widths=[3, 2, 2, 1, 1], rows=4, seed=3, density=0.3, fill=0.0,
         ops=[3, 0, 3, 0, 0], out=None)
def test_ravels_of_hstacks_against_numpy(n, fmts, widths, rows, seed, density, fill, ops, out):
    """Parts of every format, empty and full, NaN and infinities among their values, fills 0 and -inf, parts of
    another fill than the others' (``a + 1``) and parts walked backwards (``a[::-1, ::-1]``)."""
    rng = np.random.default_rng(seed)
    values = [np.where(rng.random((rows, w)) < density, rng.choice([1.0, -2.0, 0.5, np.nan, np.inf], (rows, w)), fill)
              for w in widths[:n]]
    arrays = [xp.asarray(v if f == "dense" else Tensor.from_numpy(v, f, fill=fill)) for v, f in zip(values, fmts)]
    forms = [lambda a: a, lambda a: a * 2, lambda a: a + 1, lambda a: a[::-1, ::-1]]
    with np.errstate(invalid="ignore"):
        want = np.concatenate([forms[o](v) for o, v in zip(ops, values)], axis=1).reshape(-1)
        k = one_lattice_kernel(xp.reshape(xp.concat([forms[o](a) for o, a in zip(ops, arrays)], axis=1), (-1,)),
                               want, out, retried=True)
        np.testing.assert_array_equal(seq_evaluate(k.program, **k.arguments), want)
