"""Concatenations of ravels under the looplets strategy (issue 30): a stack of matrices raveled,
``concat((collapse(A), collapse(B)))``, is one loop per operand, each its collapse's two loops
walking the operand in storage order; split into rows that straddle two operands
(``stack([A, B]).reshape(5, 8)``), and a vstack or hstack raveled and split, each part is read
where the row's coordinates fall in it (``coalesce(A[~(m // |j|), m % |j|], B[...])``, each entry
located, the permissive quotient missing outside the part). All were refused, naming the lattice.
Against numpy, the dense oracle and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.errors import StrategyError
from compiler.looplets.shapes import shape_program
from compiler.notation import parse
from compiler.reference import evaluate

nan = np.nan

RAVEL = "c[l] = concat((collapse(A[i, j], (i, j) -> k), collapse(B[m, n], (m, n) -> p)), (k, p) -> l)"
STACK_ROWS = ("C[r, q] = split(concat((collapse(A[i, j], (i, j) -> k), collapse(B[m, n], (m, n) -> p)), (k, p) -> l), "
              "l -> (r:{R}, q:{J}))")
VSTACK_ROWS = "C[r, q] = split(collapse(concat((A[i, j], B[m, j]), (i, m) -> k), (k, j) -> l), l -> (r:{R}, q:{J}))"
HSTACK_ROWS = "C[r, q] = split(collapse(concat((A[i, j], B[i, n]), (j, n) -> k), (i, k) -> l), l -> (r:{R}, q:{J}))"
FORMS = {"stack": STACK_ROWS, "vstack": VSTACK_ROWS, "hstack": HSTACK_ROWS}


def data(shape, fill, seed):
    r = np.random.default_rng(seed)
    return np.where(r.random(shape) < 0.5, r.choice([1.0, -2.0, 3.5, np.inf], shape), fill)


def check(prog, want, out, **tensors):
    """The looplets kernel of ``prog`` against ``want``, the oracle and the interpreter; the kernel."""
    oracle, oracle_fill = evaluate(prog, **tensors)
    np.testing.assert_array_equal(oracle, want)
    ndim = want.ndim
    kernel = ss.lower(prog, "looplets", **tensors,
                      **{prog[0]: ss.parse_format(out, ndim=ndim, fill=oracle_fill.item())})
    got = kernel(**tensors)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(**tensors).to_numpy(), want)
    return kernel


@pytest.mark.parametrize("fa, fb, fill, out", [
    ("csr", "csr", 0.0, "sparse_vector"), ("coo", "dense", nan, "sparse_vector"), ("dense", "csr", 0.0, "dense"),
])
def test_a_stack_of_matrices_raveled_walks_each_operand_in_storage_order(fa, fb, fill, out):
    a, b = data((3, 4), fill, 1), data((2, 4), fill, 2)
    T = dict(A=ss.Tensor.from_numpy(a, fa, fill=fill), B=ss.Tensor.from_numpy(b, fb, fill=fill))
    kernel = check(RAVEL, np.concatenate([a.reshape(-1), b.reshape(-1)]), out, **T)
    assert kernel.trace.find("gather") == []
    # (each operand's rows then its columns: a loop pair per part, B's written after A's entries)
    prog, _, _ = shape_program(parse(RAVEL), {t: v.format for t, v in T.items()})
    assert str(prog.body) == ("for i = 0:A0_size\n  for j = 0:A1_size\n    c[j + i * size(A, 1)] = A[i, j]\n"
                              "for m = 0:B0_size\n  for n = 0:B1_size\n"
                              "    c[n + m * size(B, 1) + size(A, 0) * size(A, 1)] = B[m, n]"), prog.body


@pytest.mark.parametrize("form, fa, fb, fill, out", [
    ("stack", "csr", "csr", 0.0, "csr"), ("stack", "coo", "dense", nan, "coo"),
    ("vstack", "csr", "coo", nan, "csr"), ("vstack", "dense", "csr", 0.0, "dense"),
    ("hstack", "csr", "csr", nan, "csr"), ("hstack", "coo", "dense", 0.0, "coo"),
])
def test_rows_straddling_two_operands_read_each_where_they_fall(form, fa, fb, fill, out):
    # (a stack's row-major operands are walked raveled; a vstack's and an hstack's, collapsed after the
    # concatenation, are gathered)
    # 4x5 operands: 40 entries in rows of 8, row 2 the end of the first and the start of the second
    a, b = data((4, 5), fill, 3), data((4, 5), fill, 4)
    T = dict(A=ss.Tensor.from_numpy(a, fa, fill=fill), B=ss.Tensor.from_numpy(b, fb, fill=fill))
    stacked = np.stack([a, b]) if form == "stack" else np.concatenate([a, b], axis=int(form == "hstack"))
    kernel = check(FORMS[form].format(R=5, J=8), stacked.reshape(5, 8), out, **T)
    walked = ["A", "B"] if form == "stack" else []
    assert [s.note.split("ravel(")[1][0] for s in kernel.trace.find("walk-ravel")] == walked, kernel.trace
    assert bool(kernel.trace.find("gather")) == (form != "stack"), kernel.trace


@settings(max_examples=5, deadline=None)
@given(rows=st.tuples(st.integers(0, 3), st.integers(0, 3)), cols=st.integers(1, 4),
       form=st.sampled_from(["stack", "vstack"]), fmts=st.tuples(*[st.sampled_from(["csr", "coo", "dense"])] * 2),
       fill=st.sampled_from([0.0, nan]), out=st.sampled_from(["csr", "coo", "dense"]), seed=st.integers(0, 2 ** 16))
@example(rows=(3, 2), cols=3, form="stack", fmts=("csr", "csr"), fill=0.0, out="csr", seed=0)     # straddles 9
@example(rows=(0, 2), cols=2, form="vstack", fmts=("coo", "csr"), fill=nan, out="coo", seed=1)    # an empty part
def test_concatenated_ravels_split_into_rows_by_property(rows, cols, form, fmts, fill, out, seed):
    # operands of rows[0] and rows[1] rows (a stack's: any two, as its parts' ravels concatenated);
    # the width the smallest dividing the size but not the first part's (a straddling row) if any
    a, b = data((rows[0], cols), fill, seed), data((rows[1], cols), fill, seed + 1)
    size, first = a.size + b.size, a.size
    J = next((w for w in range(2, size + 1) if size % w == 0 and first % w), max(size, 1))
    R = size // J
    T = dict(A=ss.Tensor.from_numpy(a, fmts[0], fill=fill), B=ss.Tensor.from_numpy(b, fmts[1], fill=fill))
    prog = FORMS[form].format(R=R, J=J)
    check(prog, np.concatenate([a, b]).reshape(R, J), out, **T)


def test_a_csc_raveled_inside_a_stack_is_refused_naming_the_lattice():
    # (its collapse walks rows outside columns: a discordant walk of its compressed rows)
    a = data((3, 4), 0.0, 5)
    with pytest.raises(StrategyError, match=r"discordant walk.*or lower it with strategy='lattice'$"):
        ss.lower(RAVEL, "looplets", A=ss.Tensor.from_numpy(a, "csc"), B=ss.Tensor.from_numpy(a, "csr"))
