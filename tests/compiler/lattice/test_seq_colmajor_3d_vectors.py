"""A vector beside a 3-D column-major flatten (issue 30): ``xp.permute_dims(a3, (2, 1, 0)).reshape(-1) * x`` and
``+ x``, ``c[m] = collapse(collapse(A[i, j, k], (k, j) -> l), (l, i) -> m) * x[m]``, with ``x`` a SparseList, COO or
dense vector; refused by the lattice on main (the array front end materialized the transpose). One kernel now
(:mod:`compiler.lattice.seqcolmajor`): ``x`` split back twice, ``split(split(x[m], m -> (m1, i)), m1 -> (k, j))``,
``A``'s entries re-sorted by ``(k, j)`` into a workspace of sparse fibers first, and the loops, in ``m``'s order,
walk it beside ``x`` as stored, appending each entry as it comes.

Each case against the dense oracle (``compiler.evaluate``), numpy, the IR interpreter and the CFIR interpreter of
the lowering the kernel came from: CSF/COO ``A``, dense and sparse outputs, fills 0/1/NaN, NaN/±inf stored,
empty and all-fill vectors, by a property; the array form with no ``retry``, ``materialize`` or ``convert`` step.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp, evaluate, values
from compiler.lattice.seqcolmajor import by_columns, unflattened
from compiler.lattice.seqinterp import interpret
from compiler.notation import parse
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand
from tests.compiler.lattice.test_seq_colmajor_3d import PERMS, program, tensor3

nan, inf = np.nan, np.inf


def vector(n, fmt, seed, fill=0.0, density=0.5, odd=()):
    x = operand(n, "dense", seed, density=density, fill=fill, odd=odd)[0]
    return x, Tensor.from_numpy(x, fmt, fill=fill)


def beside(text, tensors, out=None, fill=0.0):
    """``text`` lowered by the lattice into ``out`` (a format name, None: dense) of ``fill`` as one kernel whose loops
    run in ``m``'s order beside ``A``'s entries re-sorted, against the dense oracle, the IR interpreter and the CFIR
    interpreter of its lowering; its kernel and result (dense)."""
    given_ = {} if out is None else {"c": ss.parse_format(out, ndim=1, fill=fill)}
    k = ss.lower(text, strategy="lattice", **tensors, **given_)
    (step,) = k.trace.find("loop-order")
    assert step.data["order"] == [0, 1, 2] and step.data["resorted"] == ["w"], step.note
    assert "re-sorted by (" in step.note and k.trace.find("convert") == [], step.note
    # (one sort, A's: the output appended as the loops come, in m's order)
    assert k.c_source.count("phase 1") == 1, k.c_source
    result = k(**tensors)
    result.validate()
    got = result.to_numpy()
    with np.errstate(invalid="ignore"):
        want, result_fill = evaluate(text, **tensors)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), got)
    flat = unflattened(parse(text), {t: x.shape for t, x in tensors.items()})
    names = tuple(map(str, flat.lhs.indices))
    # (assuming what the tensors hold, NaN or inf, as the kernel lowered for them does)
    with values.assuming({t: x.value_facts for t, x in tensors.items()}):
        low = by_columns(flat, names, tuple(step.data["walked"]), float(result_fill), tensors)
        run = interpret(low.cfir, low.data)
    cfir = np.full(low.shape, 0.0 if low.fill is None else low.fill)
    for key, v in run.outputs.get("c", {}).items():
        cfir[key] = v
    np.testing.assert_array_equal(cfir.reshape(-1), got)
    return k, got


# (each operator into each output, two of those four pairs with each format of the 3-D operand: all 72 were 8 s of
# the suite)
@pytest.mark.parametrize("afmt, op, out", [("csf", "*", None), ("csf", "+", "sparse"), ("coo", "*", "sparse"),
                                           ("coo", "+", None)])
@pytest.mark.parametrize("xfmt", ["sparse", "coo", "dense"])
@pytest.mark.parametrize("perm", [(2, 1, 0), (1, 2, 0), (0, 2, 1)])
def test_a_vector_beside_a_3d_flatten(afmt, xfmt, perm, op, out):
    a, A = tensor3((2, 3, 4), afmt, 1, odd=(nan, inf, -inf))
    x, X = vector(24, xfmt, 2, odd=(-inf, 0.0, nan))
    with np.errstate(invalid="ignore"):
        want = np.transpose(a, perm).reshape(-1) * x if op == "*" else np.transpose(a, perm).reshape(-1) + x
    got = beside(program(perm, f" {op} x[m]"), {"A": A, "x": X}, out)[1]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("density", [0.0, 0.4, 1.0])
@pytest.mark.parametrize("op", ["*", "+"])
def test_fills_and_empty_or_full_vectors(fill, density, op):
    a, A = tensor3((3, 2, 2), "csf", 3, fill=fill, odd=(nan, -inf))
    x, X = vector(12, "sparse", 4, fill=fill, density=density, odd=(inf, nan) if density else ())
    text = program((2, 1, 0), f" {op} x[m]")
    with np.errstate(invalid="ignore"):
        want = evaluate(text, A=A, x=X)
    got = beside(text, {"A": A, "x": X}, "sparse", float(want[1]))[1]
    np.testing.assert_array_equal(got, want[0])


@pytest.mark.parametrize("case", ["times", "plus"])
def test_the_array_form_is_one_lattice_kernel(case):
    a, A = operand((3, 2, 4), "csf", 5, odd=(nan, inf))
    x, X = operand(24, "sparse", 6, odd=(-inf,))
    flat = xp.permute_dims(A, (2, 1, 0)).reshape(-1)
    with np.errstate(invalid="ignore"):
        expr, want = (flat * X, np.transpose(a, (2, 1, 0)).reshape(-1) * x) if case == "times" else \
            (flat + X, np.transpose(a, (2, 1, 0)).reshape(-1) + x)
    for out in (None, "dense"):
        kernel = one_lattice_kernel(expr, want, out)
        stages = kernel.trace.stages()
        assert not {"retry", "materialize", "convert"} & set(stages), stages
        assert any("re-sorted by (" in s.note for s in kernel.trace.find("loop-order"))


def dense_beside(perm, text, tensors, out=None, fill=0.0):
    """``text`` (a flatten of ``A`` permuted by ``perm``) of a dense ``A`` beside a sparse ``x`` lowered by the lattice
    into ``out`` (of ``fill``) as one kernel: ``A`` walked in its order, ``x``'s entries re-sorted into fibers beside it, the result's sorted by ``m``;
    against numpy (via the dense oracle) and the IR interpreter; its result (dense)."""
    given_ = {} if out is None else {"c": ss.parse_format(out, ndim=1, fill=fill)}
    k = ss.lower(text, strategy="lattice", **tensors, **given_)
    (step,) = k.trace.find("loop-order")
    assert step.data["order"] == list(PERMS[perm][1]) and step.data["resorted"] == ["w"], step.note
    assert "a Dense level over SparseLists" in step.note and k.trace.find("convert") == [], step.note
    result = k(**tensors)
    result.validate()
    with np.errstate(invalid="ignore"):
        want = evaluate(text, **tensors)[0]
    np.testing.assert_array_equal(result.to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    return result.to_numpy()


@pytest.mark.parametrize("xfmt", ["sparse", "coo"])
@pytest.mark.parametrize("perm", [(2, 1, 0), (1, 2, 0), (0, 2, 1)])
@pytest.mark.parametrize("op", ["*", "+"])
@pytest.mark.parametrize("out", [None, "sparse"])
def test_a_dense_3d_tensor_beside_a_sparse_vector(xfmt, perm, op, out):
    # (refused on main, naming the looplets: every entry of a dense A would be re-sorted; instead A keeps its order
    # and x's entries are re-sorted into the fibers of w[i, j, k] walked beside it, as beside a dense matrix)
    a, A = tensor3((2, 3, 4), "dense", 3, odd=(nan, inf, -inf))
    x, X = vector(24, xfmt, 4, odd=(-inf, 0.0, nan))
    got = dense_beside(perm, program(perm, f" {op} x[m]"), {"A": A, "x": X}, out)
    with np.errstate(invalid="ignore"):
        flat = np.transpose(a, perm).reshape(-1)
        np.testing.assert_array_equal(got, flat * x if op == "*" else flat + x)
    expr = xp.permute_dims(xp.asarray(A), perm).reshape(-1)
    expr = expr * xp.asarray(X) if op == "*" else expr + xp.asarray(X)
    kernel = expr.lower(strategy="lattice", format=out)
    assert not {"retry", "materialize", "convert"} & set(kernel.trace.stages()), kernel.trace.stages()
    np.testing.assert_array_equal(kernel(**kernel.arguments).to_numpy(), got)


@settings(max_examples=5, deadline=None)
@given(st.sampled_from(["sparse", "coo"]), st.sampled_from([(2, 1, 0), (1, 2, 0), (0, 2, 1)]),
       st.sampled_from([0.0, 1.0, nan]), st.sampled_from([0.0, 0.4, 1.0]), st.sampled_from([0.0, 0.3, 1.0]),
       st.sampled_from([(), (nan,), (inf, -inf)]), st.sampled_from([(1, 2, 3), (3, 1, 2), (2, 2, 2), (0, 2, 2)]),
       st.sampled_from([None, "sparse", "coo"]), st.sampled_from(["*", "+", "-"]), st.integers(0, 2**16))
@example("coo", (1, 2, 0), nan, 1.0, 0.0, (inf, -inf), (2, 2, 2), "coo", "+", 1)   # all stored beside none
def test_dense_3d_tensors_beside_sparse_vectors_by_property(xfmt, perm, fill, adensity, xdensity, odd, shape, out,
                                                            op, seed):
    a, A = tensor3(shape, "dense", seed, fill=fill, density=adensity, odd=odd)
    x, X = vector(a.size, xfmt, seed + 1, fill=fill, density=xdensity, odd=odd[::-1])
    text = program(perm, f" {op} x[m]")
    with np.errstate(invalid="ignore"):
        want = evaluate(text, A=A, x=X)
    if a.size:
        dense_beside(perm, text, {"A": A, "x": X}, out, float(want[1]))
        return
    # (an extent 0: the vector, holding no entry, read as its fill, no workspace)
    given_ = {} if out is None else {"c": ss.parse_format(out, ndim=1, fill=float(want[1]))}
    k = ss.lower(text, strategy="lattice", A=A, x=X, **given_)
    np.testing.assert_array_equal(k(A=A, x=X).to_numpy(), want[0])


@settings(max_examples=7, deadline=None)
@given(st.sampled_from(["csf", "coo"]), st.sampled_from(["sparse", "coo", "dense"]), st.sampled_from(list(PERMS)),
       st.sampled_from([0.0, 0.0, 1.0, nan]), st.sampled_from([0.0, 0.4, 1.0]), st.sampled_from([0.0, 0.3, 1.0]),
       st.sampled_from([(), (nan,), (inf, -inf)]), st.sampled_from([(1, 2, 3), (3, 1, 2), (2, 2, 2)]),
       st.sampled_from([None, "sparse", "coo"]), st.sampled_from(["*", "+", "-"]), st.integers(0, 2**16))
@example("coo", "coo", (1, 0, 2), nan, 0.4, 1.0, (inf, -inf), (2, 2, 2), "coo", "+", 1)
def test_vectors_beside_3d_flattens_by_property(afmt, xfmt, perm, fill, adensity, xdensity, odd, shape, out, op,
                                                 seed):
    a, A = tensor3(shape, afmt, seed, fill=fill, density=adensity, odd=odd)
    x, X = vector(a.size, xfmt, seed + 1, fill=fill, density=xdensity, odd=odd[::-1])
    text = program(perm, f" {op} x[m]")
    with np.errstate(invalid="ignore"):
        want = evaluate(text, A=A, x=X)
    beside(text, {"A": A, "x": X}, out, float(want[1]))
