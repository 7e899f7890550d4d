"""numpy's einsum call, ``compiler.einsum("ij,jk->ik", A, B)``, on numpy, scipy.sparse, pydata/sparse
arrays and Tensors, against ``numpy.einsum`` (issue 30: einsum takes what a numpy user has)."""

import numpy as np
import pytest
import scipy.sparse as sp
import sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.errors import UsageError
from compiler.notation.subscripts import from_subscripts

RNG = np.random.default_rng(11)
A = sp.random(5, 4, 0.4, format="csr", random_state=1).toarray()
A[0, 0], A[4, 1] = np.nan, np.inf
B = sp.random(4, 3, 0.5, format="csr", random_state=2).toarray()
S = sp.random(4, 4, 0.5, format="csr", random_state=3).toarray()
X = RNG.standard_normal(4)

KINDS = {"numpy": lambda a: a, "scipy_csr": sp.csr_matrix, "scipy_csc_array": sp.csc_array,
         "pydata_coo": sparse.COO.from_numpy, "tensor_csr": lambda a: ss.Tensor.from_numpy(a, "csr")}


def same(got, want):
    got = got.to_numpy() if hasattr(got, "to_numpy") else np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("strategy", [None, "lattice", "looplets"])
def test_numpys_call_on_every_kind_of_array(kind, strategy):
    a, b, s = KINDS[kind](A), KINDS[kind](B), KINDS[kind](S)
    with np.errstate(invalid="ignore"):
        same(ss.einsum("ij,jk->ik", a, b, strategy=strategy), np.einsum("ij,jk->ik", A, B))
        same(ss.einsum("ij,j", a, X, strategy=strategy), np.einsum("ij,j", A, X))
        same(ss.einsum("ij->ji", a, strategy=strategy), A.T)
        same(ss.einsum("ii->i", s, strategy=strategy), np.diag(S))
        same(ss.einsum("ij,ij->i", a, a, strategy=strategy), np.einsum("ij,ij->i", A, A))
        same(ss.einsum("ij->", a, strategy=strategy), np.einsum("ij->", A))


def test_the_output_format_is_given_as_out():
    got = ss.einsum("ij,jk->ik", sp.csr_matrix(A), sp.csr_matrix(B), out="csr")
    assert got.format.shorthand == "csr"
    with np.errstate(invalid="ignore"):
        same(got, A @ B)


def test_index_notation_keeps_its_positional_strategy():
    same(ss.einsum("y[i] = A[i, j] * x[j]", "looplets", A=sp.csr_matrix(B), x=np.ones(3)), B @ np.ones(3))
    same(ss.einsum("y[i] = A[i, j] * x[j]", None, A=sp.csr_matrix(B), x=np.ones(3)), B @ np.ones(3))


@pytest.mark.parametrize("call, message", [
    (lambda: ss.einsum("ij,jk->ik", A), "names 2 operand"),
    (lambda: ss.einsum("ijk,jk->ik", A, B), "operand 1 has 2 axes"),
    (lambda: ss.einsum("ij,jk->ii", A, B), "repeats i"),
    (lambda: ss.einsum("ij,jk->iz", A, B), "z labels no operand"),
    (lambda: ss.einsum("...j,jk", A, B), "'...' is not supported"),
    (lambda: ss.einsum("ij,jk->ik"), "take their operands in order"),
    (lambda: ss.einsum("y[i] = A[i, j] * x[j]", A, X), "index notation names its tensors"),
])
def test_bad_calls_say_what_is_wrong(call, message):
    with pytest.raises(UsageError, match=message):
        call()


def test_the_translation_is_index_notation():
    assert from_subscripts("ij,jk", (2, 2)) == "out[i, k] = T1[i, j] * T2[j, k]"
    assert from_subscripts("i,i->", (1, 1)) == "out[] = T1[i] * T2[i]"
    assert from_subscripts("ijk->kji", (3,)) == "out[k, j, i] = T1[i, j, k]"


@settings(max_examples=6)
@given(st.data())
def test_property_random_contractions_match_numpy(data):
    """Two operands over random labels from "abcd" (shared, summed, kept, repeated), any kind; given
    no strategy (a repeated label in a COO operand is refused by the lattice: the looplets' kernel)."""
    labels = st.text("abcd", min_size=1, max_size=3)
    la, lb = data.draw(labels, "a's labels"), data.draw(labels, "b's labels")
    used = sorted(set(la + lb))
    out = "".join(data.draw(st.permutations(used), "order")[:data.draw(st.integers(0, len(used)), "kept")])
    extent = {c: data.draw(st.integers(0, 3), f"extent of {c}") for c in used}
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), "seed"))
    make = lambda ls: np.where(rng.random(tuple(extent[c] for c in ls)) < 0.5, 0.0,  # noqa: E731
                               rng.integers(-3, 4, tuple(extent[c] for c in ls)).astype(float))
    a, b = make(la), make(lb)
    kind = data.draw(st.sampled_from(["numpy", "pydata_coo"] + (["scipy_csr"] if len(la) == 2 else [])), "kind")
    spec = f"{la},{lb}->{out}"
    same(ss.einsum(spec, KINDS[kind](a), b), np.einsum(spec, a, b))


def test_a_statement_the_lattice_refuses_is_computed_by_looplets_given_no_strategy():
    """(the property's first find: the lattice searches no COO level for a repeated label)"""
    t = np.zeros((3, 3, 3))
    t[1, 1, 1], t[0, 1, 0], t[2, 2, 2] = 3.0, 1.0, -2.0
    with pytest.raises(ss.StrategyError, match="repeats an index"):
        ss.einsum("aaa,a->", sparse.COO.from_numpy(t), np.ones(3), strategy="lattice")
    same(ss.einsum("aaa,a->", sparse.COO.from_numpy(t), np.arange(3.0)), np.einsum("aaa,a->", t, np.arange(3.0)))
