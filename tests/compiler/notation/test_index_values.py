"""An index used as a value (TACO #514: ``A[i, j] = B[i, j] * i``): parsed, computed by the oracle
and by both strategies against numpy and the IR interpreter, over formats, fills (NaN, inf) and
dtypes; the fill-value algebra keeps ``B * i`` as sparse as B and makes ``B + i`` dense."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.errors import ParseError
from compiler.lattice.algebra import derive
from compiler.notation import parse
from compiler.notation.ast import IndexValue

STRATEGIES = ["lattice", "looplets"]
B = np.array([[0, 2.0, 0], [1.0, 0, 3.0]])
X = np.array([1.0, 0, 2.0])

#: programs with an index as a value, with what numpy computes for them
PROGRAMS = {
    "C[i, j] = B[i, j] * i": lambda b, x, I, J: b * I,
    "C[i, j] = B[i, j] + j": lambda b, x, I, J: b + J,
    "C[i, j] = B[i, j] * (i == j)": lambda b, x, I, J: b * (I == J),
    "y[i] = B[i, j] * j": lambda b, x, I, J: (b * J).sum(axis=1),
    "y[i] = sum[j](B[i, j] * (i - j))": lambda b, x, I, J: (b * (I - J)).sum(axis=1),
    "y[i] = x[i] * i + 1": lambda b, x, I, J: x * np.arange(x.size) + 1,
    "y[i] = x[i] + i": lambda b, x, I, J: x + np.arange(x.size),
    "y[i] = min(x[i], i)": lambda b, x, I, J: np.minimum(x, np.arange(x.size)),
}


def run(program, strategy, b, x, fmt="dense", fill=0.0, out=None):
    tensors = {"B": ss.Tensor.from_numpy(b, "csr" if fmt == "sparse" else "dense", fill=fill),
               "x": ss.Tensor.from_numpy(x, fmt, fill=fill)}
    tensors = {n: t for n, t in tensors.items() if f"{n}[" in program.split("=", 1)[1]}
    I, J = np.indices(b.shape)
    with np.errstate(all="ignore"):
        want = PROGRAMS[program](b, x, I, J)
    oracle, _ = ss.evaluate(program, **tensors)
    np.testing.assert_allclose(oracle, want, rtol=1e-12)
    assert oracle.dtype == want.dtype
    kw = dict(tensors, **({program.split("[")[0]: out} if out is not None else {}))
    kernel = ss.lower(program, strategy, **kw)
    got = kernel(**tensors)
    np.testing.assert_allclose(got.to_numpy(), oracle, rtol=1e-12)
    np.testing.assert_allclose(kernel.interpret(**tensors).to_numpy(), oracle, rtol=1e-12)
    return got


def test_an_index_in_value_position_parses_and_prints():
    prog = parse("A[i, j] = B[i, j] * i")
    assert prog.rhs.args[1] == IndexValue(ss.notation.ast.Index("i"))
    assert str(prog) == "A[i, j] = B[i, j] * i"
    # an index only used as a value is reduced as any other: y[i] = sum over j of B[i, j] * j
    assert str(parse("y[i] = B[i, j] * j")) == "y[i] = sum[j](B[i, j] * j)"


def test_a_bare_name_that_is_no_index_is_refused():
    # (it was "missing index list after s: write s[i, ...]")
    with pytest.raises(ParseError, match=r"s is no index of the statement, so it has no value: write s\[\] "
                                         r"for a 0-d tensor"):
        parse("y[i] = x[i] * s")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize("fmt", ["dense", "sparse"])
def test_an_index_value_is_its_coordinate(strategy, program, fmt):
    run(program, strategy, B, X, fmt)


@settings(max_examples=15)
@given(program=st.sampled_from(sorted(PROGRAMS)), strategy=st.sampled_from(STRATEGIES),
       fmt=st.sampled_from(["dense", "sparse"]), fill=st.sampled_from([0.0, 1.0, np.nan, np.inf]),
       b=st.lists(st.sampled_from([0.0, 1.0, 2.5, -1.0, np.nan, np.inf]), min_size=6, max_size=6),
       x=st.lists(st.sampled_from([0.0, 1.0, -3.0, np.nan, -np.inf]), min_size=3, max_size=3),
       dtype=st.sampled_from(["float64", "float32", "int32", "uint8"]))
# (the lattice's check drew negative coordinates, where min(0, i) of a uint8 0 is not 0, and called the lattice
# that skips x's fills unsound: "a bug in sparsescope")
@example(program="y[i] = min(x[i], i)", strategy="lattice", fmt="dense", fill=0.0, b=[0.0] * 6, x=[0.0] * 3,
         dtype="uint8")
def test_index_values_agree_with_numpy_over_fills_values_and_dtypes(program, strategy, fmt, fill, b, x, dtype):
    b, x = np.array(b).reshape(2, 3), np.array(x)
    if np.dtype(dtype).kind != "f":   # integers hold no NaN or inf
        b, x = np.nan_to_num(b, nan=3, posinf=4, neginf=0), np.nan_to_num(x, nan=3, posinf=4, neginf=0)
        fill = 0.0 if not np.isfinite(fill) else fill
    run(program, strategy, b.astype(dtype), x.astype(dtype), fmt, fill)


def test_b_times_i_keeps_bs_sparsity_and_b_plus_i_is_dense():
    fill0 = lambda acc: 0.0   # noqa: E731
    assert str(derive(parse("C[i, j] = B[i, j] * i").rhs, fill0)[0]) == "B[i, j]"
    assert str(derive(parse("C[i, j] = B[i, j] + j").rhs, fill0)[0]) == "U"
    # NaN * 0 is NaN: a NaN fill annihilates nothing, so B * i visits every coordinate
    assert str(derive(parse("C[i, j] = B[i, j] * i").rhs, lambda acc: np.nan)[0]) == "U"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_b_times_i_into_csr_stores_what_b_stores(strategy):
    got = run("C[i, j] = B[i, j] * i", strategy, B, X, "sparse", out="csr")
    assert got.nnz == np.count_nonzero(B * np.indices(B.shape)[0])   # row 0 is i = 0: dropped
    got = run("C[i, j] = B[i, j] + j", strategy, B, X, "sparse", out="csr")
    assert got.nnz == np.count_nonzero(B + np.indices(B.shape)[1])


def test_the_lattice_kernel_of_b_times_i_visits_only_bs_entries():
    k = ss.lower("C[i, j] = B[i, j] * i", "lattice", B=ss.Tensor.from_numpy(B, "csr"), C="csr")
    assert "for (int64_t pB1 = B1_pos[i]; pB1 < B1_pos[i + 1]; pB1++)" in k.c_source
    assert "B1_size" not in k.c_source   # no loop over every column


def test_shape_inference_reads_an_index_value():
    # (it raised TypeError 'not an index-notation expression: IndexValue(...)', reached once a
    # shorthand output of any statement had its index dtype chosen from the inferred shapes)
    from compiler.notation.infer import infer_shapes
    info = infer_shapes(parse("C[i, j] = B[i, j] * i"), {"B": (3, 4)})
    assert info.output == (3, 4)
    assert infer_shapes(parse("y[i] = sum[j](B[i, j] * j) + i"), {"B": (2, 5)}).output == (2,)
