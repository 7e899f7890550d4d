"""A row-major matrix read raveled under the looplets strategy (issue 30): where a split or a stack split
into straddling rows reads a collapse at a computed index, ``ravel(A)[q + p * J]`` walks ``A``'s stored
entries in order (CSR: the row moving on as the position passes its end; COO: each tuple's raveled
coordinate; dense: its own slots), each output row's window seeking once and the cursor carried from
one row to the next, where the quotient and remainder searched for every coordinate (the trace's
``gather``). Against numpy, the dense oracle and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.looplets.shapes import shape_program
from compiler.notation import parse
from compiler.reference import evaluate

nan = np.nan
STACK_ROWS = ("C[r, q] = split(concat((collapse(A[i, j], (i, j) -> k), collapse(B[m, n], (m, n) -> p)), (k, p) -> l), "
              "l -> (r:{R}, q:{J}))")
RESHAPE = "C[r, q] = split(collapse(A[i, j], (i, j) -> k), k -> (r:{R}, q:{J}))"


def data(shape, fill, seed, density=0.5):
    r = np.random.default_rng(seed)
    return np.where(r.random(shape) < density, r.choice([1.0, -2.0, 3.5, np.inf], shape), fill)


def check(prog, want, out, **tensors):
    """The looplets kernel of ``prog`` against ``want``, the oracle and the interpreter; the kernel."""
    oracle, oracle_fill = evaluate(prog, **tensors)
    np.testing.assert_array_equal(oracle, want)
    kernel = ss.lower(prog, "looplets", **tensors, C=ss.parse_format(out, ndim=2, fill=oracle_fill.item()))
    got = kernel(**tensors)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(**tensors).to_numpy(), want)
    return kernel


def test_a_stack_split_into_straddling_rows_walks_each_operand_once():
    # 4x5 CSR operands, rows of 8: row 2 ends A and starts B; A's row 1 empty (the walk steps over it)
    a, b = data((4, 5), 0.0, 3), data((4, 5), 0.0, 4)
    a[1] = 0.0
    A, B = ss.Tensor.from_numpy(a, "csr"), ss.Tensor.from_numpy(b, "csr")
    expr = xp.stack([xp.asarray(A), xp.asarray(B)]).reshape(5, 8)
    kernel = expr.lower("csr", strategy="looplets")
    want = np.stack([a, b]).reshape(5, 8)
    np.testing.assert_array_equal(np.asarray(kernel()), want)
    np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)
    assert [s.note.split(": ")[-1] for s in kernel.trace.find("walk-ravel")] == \
        ["ravel(A) walks its entries in storage order", "ravel(B) walks its entries in storage order"]
    assert kernel.trace.find("gather") == [], kernel.trace
    # (each cursor declared once, before the rows: one pass over each operand, no quotient per entry)
    (carry,), = [kernel.trace.find("carry")]
    assert "A on" in carry.note and "B on" in carry.note
    assert "floordiv" not in kernel.c_source and "ss_mod" not in kernel.c_source
    prog, _, _ = shape_program(parse(STACK_ROWS.format(R=5, J=8)), {"A": A.format, "B": B.format, "C": ss.csr()})
    assert "coalesce(ravel(A)[permit(q + r * 8)], ravel(B)[permit(q + r * 8 - size(A, 0) * size(A, 1))])" in \
        str(prog.body), prog.body


@pytest.mark.parametrize("fmt", ["csr", "coo", "dense"])
def test_a_reshape_of_one_matrix_walks_it_raveled(fmt):
    # A.reshape(-1).reshape(r, c), its rows cutting A's: rows of 6 over a 4x9 matrix
    a = data((4, 9), nan, 5)
    A = ss.Tensor.from_numpy(a, fmt, fill=nan)
    kernel = check(RESHAPE.format(R=6, J=6), a.reshape(6, 6), "csr", A=A)
    assert kernel.trace.find("walk-ravel") and kernel.trace.find("gather") == [], kernel.trace
    expr = xp.asarray(A).reshape(-1).reshape(6, 6)
    np.testing.assert_array_equal(np.asarray(expr.compute(strategy="looplets")), a.reshape(6, 6))


@settings(max_examples=6, deadline=None)
@given(rows=st.tuples(st.integers(0, 3), st.integers(0, 3)), cols=st.integers(0, 4),
       form=st.sampled_from(["stack", "reshape"]), fmts=st.tuples(*[st.sampled_from(["csr", "coo", "dense"])] * 2),
       fill=st.sampled_from([0.0, nan]), out=st.sampled_from(["csr", "coo", "dense"]),
       density=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 2 ** 16))
@example(rows=(3, 2), cols=3, form="stack", fmts=("csr", "coo"), fill=0.0, out="csr", density=0.3, seed=0)
@example(rows=(0, 2), cols=2, form="stack", fmts=("coo", "csr"), fill=nan, out="coo", density=1.0, seed=1)  # empty A
@example(rows=(3, 3), cols=0, form="stack", fmts=("csr", "csr"), fill=0.0, out="csr", density=0.3, seed=2)  # no columns
@example(rows=(3, 0), cols=4, form="reshape", fmts=("csr", "dense"), fill=nan, out="csr", density=0.0, seed=3)
def test_raveled_reads_by_property(rows, cols, form, fmts, fill, out, density, seed):
    # rows of the smallest width dividing the size but not A's part (a straddling row), if any
    a, b = data((rows[0], cols), fill, seed, density), data((rows[1], cols), fill, seed + 1, density)
    whole = np.concatenate([a, b]) if form == "stack" else a
    size, first = whole.size, a.size
    J = next((w for w in range(2, size + 1) if size % w == 0 and (form == "reshape" or first % w)), max(size, 1))
    R = size // J
    T = dict(A=ss.Tensor.from_numpy(a, fmts[0], fill=fill))
    if form == "stack":
        T["B"] = ss.Tensor.from_numpy(b, fmts[1], fill=fill)
    kernel = check((STACK_ROWS if form == "stack" else RESHAPE).format(R=R, J=J), whole.reshape(R, J), out, **T)
    # (a dense output takes the collapse's own loops where it can: no raveled read then)
    assert kernel.trace.find("gather") == [], kernel.trace
    assert kernel.trace.find("walk-ravel") or (out == "dense" and form == "reshape"), kernel.trace
