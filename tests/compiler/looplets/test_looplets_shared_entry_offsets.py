"""A stack of concatenations under the looplets strategy (issue 30): ``stack([A, concat([B, C]) - D.T])``
writes its second part through ``offset(out, 1, 0, 0)[m, n, k]`` and ``offset(out, 1, size(B, 0), 0)[m, p, k]``,
two loops writing one entry (``m + 1``) of the output's first level. The two accesses share the entry's
looplet nest, shifted by the offset; each lowering pushed the shift down anew, so each loop appended the entry
again (on main a CSF output failed ``validate``: "idx is not strictly increasing ... (duplicate coordinate)";
the COO and Dense-outer outputs, which append no such entry, are variants). Against numpy, the dense oracle
and the IR interpreter; every result validated."""

import operator

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from compiler.format import Format, coo, csc, csf, csr, dense
from compiler.imperative.ir import Const
from compiler.levels import Dense, Element, RunList, SparseBlockList, SparseList
from compiler.looplets.looplet_access import looplets_of, replace_looplets
from compiler.looplets.looplets import Lookup, Shift
from compiler.looplets.program import Access, Assign, Block, Index, Literal
from compiler.reference import evaluate

nan, inf = np.nan, np.inf

#: the formats of the operands (the probe's: a CSC, a blocked and a run-length Dense outer)
OPERANDS = {
    "csc": csc, "csr": csr, "coo": lambda fill: coo(2, fill), "dense": lambda fill: dense(2, fill),
    "blocks": lambda fill: Format(Dense(SparseBlockList(Element(fill)))),
    "runs": lambda fill: Format(Dense(RunList(Element(fill)))),
}
#: the formats of the 3-D output
OUTPUTS = {
    "csf": lambda fill: csf(3, fill), "coo": lambda fill: coo(3, fill),
    "dense-list-list": lambda fill: Format(Dense(SparseList(SparseList(Element(fill))))),
}
#: an operator keeping the fill, so the stack's parts share it (1 - 1 is not 1: 1 multiplies)
OPS = {0.0: operator.sub, 1.0: operator.mul}
#: the stack's parts: ``p`` an operand, ``c`` the concatenation of two operands less an operand transposed
#: (the looplets split a concatenation's loop one way: every ``c`` of a stack concatenates the same two)
LAYOUTS = ("pc", "cp", "pcp", "ppc", "pcc")


def operand(shape, fmt, fill, seed, density=0.5, odd=()):
    """A numpy matrix of ``shape`` (``odd`` stored first) and it as a lazy Array of ``fmt``."""
    r = np.random.default_rng(seed)
    a = np.where(r.random(shape) < density, r.choice([2.0, -1.0, 0.5, 3.0], shape), fill)
    a.flat[:min(len(odd), a.size)] = odd[:a.size]
    return a, xp.asarray(Tensor.from_numpy(a, OPERANDS[fmt](fill)))


def stacked(layout, rows, cols, fmts, fill, seed, density=0.5, odd=()):
    """The parts of ``layout`` (:data:`LAYOUTS`), of ``sum(rows)`` rows: (numpy, lazy Array) pairs."""
    op = OPS.get(fill, operator.sub)
    b, B = operand((rows[0], cols), fmts[0], fill, seed, density, odd)
    c, C = operand((rows[1], cols), fmts[1], fill, seed + 1, density)
    parts = []
    for k, kind in enumerate(layout):
        d, D = operand((cols, sum(rows)) if kind == "c" else (sum(rows), cols), fmts[(k + 2) % len(fmts)], fill,
                       seed + 2 + k, density, odd[::-1])
        if kind == "p":
            parts.append((d, D))
            continue
        with np.errstate(invalid="ignore"):     # (inf - inf, 0 * inf stored at one place: NaN)
            parts.append((op(np.concatenate([b, c]), d.T), op(xp.concat([B, C], axis=0), xp.permute_dims(D, (1, 0)))))
    return parts


def check(parts, out, fill):
    """The stack of ``parts`` ((numpy, Array) pairs) as one looplets kernel storing ``out``, right against
    numpy, the dense oracle and the interpreter, each result valid; the kernel."""
    want = np.stack([w for w, _ in parts])
    stored_fill = float(OPS.get(fill, operator.sub)(fill, fill))     # (every part's)
    kernel = xp.stack([a for _, a in parts]).lower(OUTPUTS[out](stored_fill), strategy="looplets")
    assert kernel.trace.find("retry") == [] and kernel.trace.find("materialize") == []
    got = kernel()
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(evaluate(kernel.program, **kernel.arguments)[0], want)
    interpreted = kernel.interpret()
    interpreted.validate()
    np.testing.assert_array_equal(interpreted.to_numpy(), want)
    if out == "csf":    # (each part's entry of the first level appended by one statement, whatever writes it)
        assert kernel.c_source.count("out0_idx[out0_nnz] =") == len(parts), kernel.c_source
    return kernel


def test_accesses_sharing_a_shifted_nest_keep_one_looplet_once_it_is_pushed_down():
    # (two writes of one offset entry: each push of the shift made its own looplet, each appended the entry)
    i = Index("i")
    shared = Shift(Const(1, "int64"), Lookup(lambda j: Literal(1.0), "x"))
    body = Block(tuple(Assign(Access(shared, (i,), "update"), None, Literal(v)) for v in (1.0, 2.0)))
    found = looplets_of(replace_looplets(body, i, lambda l: l), i)
    assert len(found) == 1 and isinstance(found[0], Lookup) and found[0].text == "x (shifted 1)"


@pytest.mark.parametrize("out", list(OUTPUTS))
def test_the_probe_appends_each_stacked_entry_once(out):
    # (the probe: a zero 3x1 CSC, then a zero blocked row pair and a run row, less a CSC's transpose)
    a = np.zeros((3, 1))
    A = xp.asarray(Tensor.from_numpy(a, csc()))
    b, r, d = np.zeros((2, 1)), np.array([[2.0]]), np.array([[2.0, 0.0, 1.0]])
    B = xp.asarray(Tensor.from_numpy(b, OPERANDS["blocks"](0.0)))
    R = xp.asarray(Tensor.from_numpy(r, OPERANDS["runs"](0.0)))
    D = xp.asarray(Tensor.from_numpy(d, csc()))
    check([(a, A), (np.concatenate([b, r]) - d.T, xp.concat([B, R], axis=0) - xp.permute_dims(D, (1, 0)))], out, 0.0)


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("out", list(OUTPUTS))
@pytest.mark.parametrize("layout", ["pc", "cp"])
def test_a_stack_of_two_parts(layout, out, fill):
    check(stacked(layout, (1, 2), 3, ("blocks", "runs", "csc", "csr"), fill, 1, odd=(nan, inf, -inf)), out, fill)


@pytest.mark.parametrize("layout, out, fill", [
    ("pcp", "csf", 0.0), ("pcp", "coo", nan), ("pcp", "dense-list-list", 1.0),
    ("ppc", "csf", nan), ("ppc", "coo", 1.0), ("ppc", "dense-list-list", 0.0),
    ("pcc", "csf", 1.0), ("pcc", "coo", 0.0), ("pcc", "dense-list-list", nan),
])
def test_a_stack_of_three_parts(layout, out, fill):
    check(stacked(layout, (2, 1), 2, ("csc", "coo", "csr", "dense", "runs"), fill, 7, odd=(inf, nan)), out, fill)


@pytest.mark.parametrize("out", list(OUTPUTS))
@pytest.mark.parametrize("case", ["empty operand", "all fill", "stored beside all fill"])
def test_empty_and_all_fill_parts(case, out):
    rows = (0, 3) if case == "empty operand" else (1, 2)
    parts = stacked("pcp", rows, 2, ("blocks", "csr", "csc"), 0.0, 13, 0.0 if case != "empty operand" else 0.5)
    if case == "stored beside all fill":    # (the plain parts stored, the concatenation all fill)
        parts[0] = operand((3, 2), "csr", 0.0, 17, 1.0, (inf,))
    check(parts, out, 0.0)


@settings(max_examples=7, deadline=None)
@given(layout=st.sampled_from(LAYOUTS), rows=st.tuples(st.integers(0, 2), st.integers(0, 2)), cols=st.integers(1, 3),
       fmts=st.tuples(*[st.sampled_from(list(OPERANDS))] * 3), fill=st.sampled_from([0.0, 1.0, nan]),
       out=st.sampled_from(list(OUTPUTS)), density=st.sampled_from([0.0, 0.4, 1.0]),
       odd=st.sampled_from([(), (nan,), (inf, -inf)]), seed=st.integers(0, 2 ** 16))
@example(layout="pc", rows=(2, 1), cols=1, fmts=("blocks", "runs", "csc"), fill=0.0, out="csf", density=0.4,
         odd=(), seed=0)
@example(layout="pcc", rows=(0, 2), cols=2, fmts=("coo", "csc", "csr"), fill=nan, out="coo", density=1.0,
         odd=(inf, -inf), seed=1)
def test_stacked_concatenations_by_property(layout, rows, cols, fmts, fill, out, density, odd, seed):
    check(stacked(layout, rows, cols, fmts, fill, seed, density, odd), out, fill)
