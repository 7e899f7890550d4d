"""Entries read at constants only by the lattice's sequence lowering (compiler.lattice.seqlocated, issue 30):
each distinct entry is located once before the loops, as its levels' iterators say (a search of a sorted
fiber, a SparseHash's probe, a SparseByteMap's mark, a Dense slot, a SparseCOO's segments), and every use
reads that one value, its tensor's fill where it is not stored. Before, each read walked a sequence of one
coordinate with a cursor of its own, the cases of each nested in the others': ``square(sign(w[1]))`` was
5,067 lines of C for a NaN fill, and the front end computed ``square(sign(w))[1]`` in two kernels. Checked
against numpy, the kernel's IR interpreter and (index notation) the dense oracle and the sequence CFIR
interpreter; structure by the searches and lines of C and the trace's steps."""

import re

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from tests.compiler.constant_read_cases import FILLS, drawn_case, lowered_once, oracle_checked, vector

nan, inf = np.nan, np.inf
#: vector formats and the call each located entry makes in the C (None: a byte map's mark, a dense slot)
VECTORS = {"sparse": "lower_bound_int64(", "SparseHash(Element(0.0))": "int64_t slot",
           "SparseByteMap(Element(0.0))": None, "dense": None}
EXPRESSIONS = {
    "w[k] * w[m]": (lambda w, k, m: w[k] * w[m], lambda w, k, m: w[k] * w[m]),
    "square(sign(w[k]))": (lambda w, k, m: xp.square(xp.sign(w[k])), lambda w, k, m: np.square(np.sign(w[k]))),
    "square(sign(w))[k]": (lambda w, k, m: xp.square(xp.sign(w))[k], lambda w, k, m: np.square(np.sign(w))[k]),
    "where(w[k] > w[m], w[k], -w[m])": (lambda w, k, m: xp.where(w[k] > w[m], w[k], -w[m]),
                                        lambda w, k, m: np.where(w[k] > w[m], w[k], -w[m])),
}




def check(expr, want):
    return lowered_once(expr, want, "lattice")


def lines(k) -> int:
    return len(k.c_source.splitlines())


def body(k) -> str:
    return k.c_source.split("int lattice_")[1]


def test_issue_30_entries_read_again_are_one_search_each():
    t, w = vector([-0.0, nan, nan, 2.0, -inf], "sparse", nan)
    x = xp.asarray(t)
    with np.errstate(all="ignore"):
        cases = [(x[1] * x[2], w[1] * w[2], 2), (xp.sign(x[1]), np.sign(w[1]), 1),
                 (xp.square(xp.sign(x[1])), np.square(np.sign(w[1])), 1),
                 (xp.square(xp.sign(x))[1], np.square(np.sign(w))[1], 1)]
    for expr, want, entries in cases:
        k = check(expr, want)
        # (main: 100, 56, 5,067 lines; the last two kernels)
        assert lines(k) < 60 and k.c_source.count("lower_bound_int64(") == 1 + entries, k.c_source
        assert "while (" not in body(k) and "for (" not in body(k), k.c_source


@pytest.mark.parametrize("fmt", sorted(VECTORS))
@pytest.mark.parametrize("fill", FILLS)
@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
@pytest.mark.parametrize("k, m", [(0, 4), (-1, 1), (3, 3)])
def test_entries_of_each_vector_level(fmt, fill, name, k, m):
    # stored NaN, -0.0, +-inf; entry 1 is the fill (not stored)
    kernel = drawn_case([-0.0, fill, nan, 2.0, -inf if fill != -inf else inf], fill, fmt, EXPRESSIONS[name], k, m,
                        check)
    assert lines(kernel) < 80 and "for (" not in body(kernel) and "while (" not in body(kernel).split("slot")[-1], \
        kernel.c_source
    call = VECTORS[fmt]
    if call is not None:
        # (one locate per distinct entry, however often it is read)
        entries = 1 if "w[m]" not in name or k % 5 == m % 5 else 2
        assert kernel.c_source.count(call) == entries + call.startswith("lower_bound"), kernel.c_source


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr", "dense"])
@pytest.mark.parametrize("fill", [0.0, inf, nan])
def test_entries_of_matrices_beside_a_row_and_a_vector(fmt, fill):
    rng = np.random.default_rng(3)
    a_ = np.where(rng.random((4, 6)) < 0.5, rng.choice([-1.0, 2.0, -0.0, nan, inf, -inf], (4, 6)), fill)
    a_[0, 0], a_[3, 5] = 5.0, fill      # (one stored and one not at the corners)
    t = ss.Tensor.from_numpy(a_, fmt, fill=fill)
    v, v_ = vector([1.0, fill, -2.0, nan, 0.0, -0.0], "sparse", fill)
    a, a_, x = xp.asarray(t), t.to_numpy(), xp.asarray(v)
    with np.errstate(all="ignore"):
        check(a[3, -1] * a[0, 0] + a[3, 5], a_[3, -1] * a_[0, 0] + a_[3, 5])
        check((xp.sign(a) * a + a)[2, 3], (np.sign(a_) * a_ + a_)[2, 3])
        # (an entry beside a loop over a row and over a vector: refused by the sequence layer before)
        check(a[1, -1] + a[0], a_[1, -1] + a_[0])
        check(a[2, 0] * x, a_[2, 0] * v_)


@pytest.mark.parametrize("values", [[], [5.0], [inf, inf, inf]], ids=["fill-only", "one", "all-fill"])
@pytest.mark.parametrize("fill", [0.0, inf, nan])
@pytest.mark.parametrize("fmt", ["sparse", "SparseHash(Element(0.0))"])
def test_entries_of_short_and_all_fill_vectors(values, fill, fmt):
    values = [fill if v == inf else v for v in values] or [fill]
    t, w = vector(values, fmt, fill)
    x = xp.asarray(t)
    for at in (0, -1):
        with np.errstate(all="ignore"):
            want = np.square(np.sign(w[at])) + w[at] * w[at]
        k = check(xp.square(xp.sign(x[at])) + x[at] * x[at], want)
        assert lines(k) < 80 and "while (" not in body(k).split("slot")[-1], k.c_source


@pytest.mark.parametrize("program", ["y[i] = A[1, 2] * b[i]", "y[i] = b[i] + A[2, 0] * A[2, 0]",
                                     "y[i] = max(A[0, 3], b[i]) - A[0, 3]", "out[] = A[1, 2] - A[2, 1]"])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr"])
@pytest.mark.parametrize("fill", [0.0, nan])
def test_index_notation_against_the_dense_oracle(program, fmt, fill):
    # (an entry beside loop indices: 'every index is a constant ... beside the loops' on main)
    a_ = np.array([[fill, 2.0, nan, -1.0], [0.5, fill, -0.0, fill], [inf, 3.0, fill, fill]])
    A = ss.Tensor.from_numpy(a_, fmt, fill=fill)
    b = ss.Tensor.from_numpy(np.array([1.0, fill, -inf, 0.0, 4.0]), "sparse", fill=fill)
    k = oracle_checked(program, A=A, b=b)
    # (each entry located once before the loops: A's arrays are read there only, never in a loop)
    code = body(k).split("{", 1)[1]
    before, loops = code.split("while (", 1) if "while (" in code else (code, "")
    assert re.search(r"\bA\d?_(pos|idx|val)\[", before) and not re.search(r"\bA\d?_(pos|idx|val)\[", loops), \
        k.c_source


@given(values=st.lists(st.sampled_from([-1.0, 2.0, -0.0, nan, inf, -inf, 0.0]), min_size=1, max_size=6),
       fill=st.sampled_from(FILLS), fmt=st.sampled_from(sorted(VECTORS)), name=st.sampled_from(sorted(EXPRESSIONS)),
       k=st.integers(-6, 5), m=st.integers(-6, 5))
@example(values=[-1.0, 0.5, inf, 0.0, 0.5], fill=inf, fmt="sparse", name="square(sign(w))[k]", k=1, m=1)
@example(values=[nan], fill=nan, fmt="SparseHash(Element(0.0))", name="where(w[k] > w[m], w[k], -w[m])", k=-1, m=0)
def test_entries_match_numpy(values, fill, fmt, name, k, m):
    drawn_case(values, fill, fmt, EXPRESSIONS[name], k, m, check)


@pytest.mark.parametrize("fmt", ["SparseBand(Element({f}))", "SparseBlockList(Element({f}))", "RunList(Element({f}))",
                                 "SparseRunList(Element({f}))", "SparsePoint(Element({f}))", "SparseCOO(1, Element({f}))"])
@pytest.mark.parametrize("fill", [0.0, nan])
def test_entries_of_the_other_vector_levels(fmt, fill):
    # (each level located as its iterator says: a band's computed position, a block list's search over its blocks,
    # a run list's run, a point's one coordinate, a COO's search)
    values = [fill, fill, 2.0, 3.0, 3.0, fill, -1.0, fill] if "Point" not in fmt else [fill] * 3 + [3.0] + [fill] * 4
    t, w = vector(values, fmt.format(f=fill), fill)
    x = xp.asarray(t)
    for k, m in ((1, 2), (3, -1), (4, 4), (0, 7)):
        with np.errstate(all="ignore"):
            kernel = check(x[k] * x[m] + xp.sign(x[k]), w[k] * w[m] + np.sign(w[k]))
        assert lines(kernel) < 60 and "for (" not in body(kernel), kernel.c_source


@pytest.mark.parametrize("fmt", ["coo", "csf"])
@pytest.mark.parametrize("fill", [0.0, nan])
def test_entries_of_a_3d_tensor(fmt, fill):
    # (a 3-D COO's two modes above its last are segments of equal coordinates, each found by two searches)
    rng = np.random.default_rng(5)
    a_ = np.where(rng.random((3, 4, 5)) < 0.4, rng.choice([1.0, -2.0, nan, -0.0], (3, 4, 5)), fill)
    t = ss.Tensor.from_numpy(a_, fmt, fill=fill)
    a, a_ = xp.asarray(t), t.to_numpy()
    entries = [(i, j, k) for i in range(3) for j in range(4) for k in range(5)]
    for n in range(0, len(entries), 7):
        p, q = entries[n], entries[-1 - n]
        with np.errstate(all="ignore"):
            check(a[p] * a[q] - a[p], a_[p] * a_[q] - a_[p])
