"""A collapse of a sum under the lattice strategy (issue 30): ``collapse(A + B, (i, j) -> k)`` is
``collapse(A) ∪ collapse(B)``, a union of products ``(i_A × j_A) ∪ (i_B × j_B)``, where Fig. 11's
rules gave ``(i_A ∪ i_B) × (j_A ∪ j_B)``, a union in a product's right operand, which the lattice
refused ('lower it with strategy='looplets''). ``(A + B).ravel()`` is one lattice kernel; so is
``(A + x[None, :]).ravel()``, a term broadcast along one index being that index's universe in its
collapse. Against numpy, the dense oracle, the IR interpreter and the CFIR interpreter."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler import evaluate
from compiler.tensor import Tensor

sys.path.insert(0, str(Path(__file__).parent))
from test_seq_nestings import filled  # noqa: E402
from test_seqemit import run_all  # noqa: E402


def collapse_sum_program(n_terms, product, column_major, times_y):
    """``c[k] = collapse(M0[i, j] + M1[i, j] (+ M2...), (i, j) -> k)``, the first term ``M0 * M1``
    when ``product``, collapsed ``(j, i)`` when ``column_major``, times ``y[k]`` when ``times_y``."""
    names = [f"M{m}" for m in range(n_terms + product)]
    terms = [f"{n}[i, j]" for n in names]
    if product:
        terms[:2] = [f"{terms[0]} * {terms[1]}"]
    order = "(j, i)" if column_major else "(i, j)"
    rhs = f"collapse({' + '.join(terms)}, {order} -> k)"
    return f"c[k] = {rhs}{' * y[k]' if times_y else ''}", names


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(0, 3), st.integers(0, 4)), n_terms=st.integers(2, 3), product=st.booleans(),
       column_major=st.booleans(), times_y=st.booleans(), fmts=st.lists(st.sampled_from(["csr", "coo", "dense",
                                                                                         "dcsr"]), min_size=4, max_size=4),
       out=st.sampled_from([None, "sparse_vector"]), seed=st.integers(0, 2 ** 16))
@example(shape=(3, 4), n_terms=2, product=False, column_major=False, times_y=False, fmts=["csr", "coo", "csr", "csr"],
         out="sparse_vector", seed=0)   # refused before
@example(shape=(2, 3), n_terms=3, product=True, column_major=True, times_y=True, fmts=["dense", "csr", "coo", "csr"],
         out=None, seed=1)
@example(shape=(0, 3), n_terms=2, product=False, column_major=False, times_y=True, fmts=["coo", "dcsr", "csr", "csr"],
         out="sparse_vector", seed=2)
def test_a_collapse_of_a_sum(shape, n_terms, product, column_major, times_y, fmts, out, seed):
    rng = np.random.default_rng(seed)
    program, names = collapse_sum_program(n_terms, product, column_major, times_y)
    # (a column-major collapse walks j outside i: its operands stored columns first, CSC)
    fmts = ["csc"] * len(fmts) if column_major else fmts
    # (stored NaN and ±inf where nothing multiplies: the lattice's intersections skip a factor's 0,
    # so it refuses * over values that may be NaN or inf)
    draw = (lambda s: np.where(rng.random(s) < 0.5, rng.choice([1.0, -2.5, 3.0], s), 0.0)) \
        if product or times_y else (lambda s: filled(rng, s, 0.5, 0.0))
    arrays = {n: draw(shape) for n in names}
    tensors = {n: Tensor.from_numpy(a, f) for (n, a), f in zip(arrays.items(), fmts)}
    order = "F" if column_major else "C"
    vals = [arrays[n] for n in names]
    total = (vals[0] * vals[1] + sum(vals[2:])) if product else sum(vals)
    want = total.ravel(order=order)
    if times_y:
        y = draw(want.shape)
        tensors["y"], want = Tensor.from_numpy(y, "sparse"), want * y
    np.testing.assert_array_equal(evaluate(program, **tensors)[0], want)
    output = None if out is None else ss.parse_format(out, ndim=1)
    np.testing.assert_array_equal(run_all(program, tensors, out=output), want)


def test_the_array_front_end_ravels_a_sum_in_one_lattice_kernel():
    a, b = np.array([[0, 1.0, 0], [2.0, 0, 0]]), np.array([[3.0, 0, 0], [0, 0, 4.0]])
    A, B = xp.asarray(ss.Tensor.from_numpy(a, "csr")), xp.asarray(ss.Tensor.from_numpy(b, "coo"))
    v = np.arange(6.0)
    for expr, want in [((A + B).reshape(-1), (a + b).ravel()), ((A + B).reshape(-1) @ xp.asarray(v), (a + b).ravel() @ v)]:
        kernel = ss.lower(expr, strategy="lattice")
        assert kernel.trace.find("materialize") == [] and "collapse(" in str(kernel.program), kernel.trace
        np.testing.assert_array_equal(kernel().to_numpy(), want)


def broadcast_sum_program(kinds, product, column_major):
    """``c[k] = collapse(t0 + t1 (+ t2), order -> k)``, each term by its kind: ``M`` a matrix
    ``Mm[i, j]``, ``row`` a vector along the rows ``Vm[i]``, ``col`` one along the columns ``Vm[j]``,
    ``lit`` the constant 2; the first term times ``P[i, j]`` when ``product``."""
    form = {"M": "M{m}[i, j]", "row": "V{m}[i]", "col": "V{m}[j]", "lit": "2"}
    terms = [form[kind].format(m=m) for m, kind in enumerate(kinds)]
    if product:
        terms[0] = f"P[i, j] * {terms[0]}"
    order = "(j, i)" if column_major else "(i, j)"
    return f"c[k] = collapse({' + '.join(terms)}, {order} -> k)"


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(0, 3), st.integers(0, 4)),
       kinds=st.lists(st.sampled_from(["M", "row", "col", "lit"]), min_size=2, max_size=3),
       product=st.booleans(), column_major=st.booleans(),
       fmts=st.lists(st.sampled_from(["csr", "coo", "dense", "dcsr"]), min_size=4, max_size=4),
       vec=st.sampled_from(["sparse", "dense"]), out=st.sampled_from([None, "sparse_vector"]),
       seed=st.integers(0, 2 ** 16))
@example(shape=(3, 4), kinds=["M", "col"], product=False, column_major=False, fmts=["csr"] * 4, vec="sparse",
         out="sparse_vector", seed=0)   # refused before: (i_A ∪ U_i) × (j_A ∪ j_V1)
@example(shape=(2, 3), kinds=["row", "M", "col"], product=True, column_major=True, fmts=["coo", "dense", "csr", "csr"],
         vec="dense", out=None, seed=1)
@example(shape=(3, 2), kinds=["row", "col"], product=False, column_major=False, fmts=["csr"] * 4, vec="sparse",
         out="sparse_vector", seed=2)   # an outer sum, no matrix
@example(shape=(0, 3), kinds=["M", "lit", "row"], product=False, column_major=True, fmts=["dcsr"] * 4,
         vec="sparse", out="sparse_vector", seed=3)
@example(shape=(2, 0), kinds=["col", "M"], product=True, column_major=False, fmts=["coo"] * 4, vec="sparse",
         out="sparse_vector", seed=4)
def test_a_collapse_of_a_sum_with_broadcast_terms(shape, kinds, product, column_major, fmts, vec, out, seed):
    """A term that does not vary with one of the collapsed indices (a vector broadcast along the
    other, a constant) is that index's universe in its collapse: ``collapse(A[i, j] + x[j])`` is
    ``(i_A × j_A) ∪ (U_i × j_x)``. It was refused (a union in a product's right operand)."""
    if "M" not in kinds and not {"row", "col"} <= set(kinds):
        kinds[-1] = "M"     # (the sum must vary with both indices to be collapsed)
    rng = np.random.default_rng(seed)
    program = broadcast_sum_program(kinds, product, column_major)
    fmts = ["csc"] * len(fmts) if column_major else fmts
    draw = (lambda s: np.where(rng.random(s) < 0.5, rng.choice([1.0, -2.5, 3.0], s), 0.0)) \
        if product else (lambda s: filled(rng, s, 0.5, 0.0))
    n, m = shape
    arrays, tensors, values = {}, {}, []
    for t, kind in enumerate(kinds):
        if kind == "lit":
            values.append(np.full(shape, 2.0))
            continue
        name, s = (f"M{t}", shape) if kind == "M" else (f"V{t}", (n,) if kind == "row" else (m,))
        arrays[name] = a = draw(s)
        tensors[name] = Tensor.from_numpy(a, fmts[t] if kind == "M" else vec)
        values.append(np.broadcast_to(a if kind != "row" else a[:, None], shape))
    if product:
        p = draw(shape)
        tensors["P"], values[0] = Tensor.from_numpy(p, fmts[3]), p * values[0]
    want = sum(values).ravel(order="F" if column_major else "C")
    np.testing.assert_array_equal(evaluate(program, **tensors)[0], want)
    output = None if out is None else ss.parse_format(out, ndim=1)
    np.testing.assert_array_equal(run_all(program, tensors, out=output), want)


@pytest.mark.parametrize("key", ["cols", "rows"])
def test_the_array_front_end_ravels_a_broadcast_sum_in_one_lattice_kernel(key):
    a = np.array([[0, 1.0, 0], [2.0, 0, 0]])
    x = np.array([0, 0, 4.0]) if key == "cols" else np.array([5.0, 0])
    A, X = xp.asarray(ss.Tensor.from_numpy(a, "csr")), xp.asarray(ss.Tensor.from_numpy(x, "sparse"))
    expr, want = ((A + X[None, :]), a + x[None, :]) if key == "cols" else ((A + X[:, None]), a + x[:, None])
    kernel = ss.lower(expr.reshape(-1), strategy="lattice")
    assert kernel.trace.find("materialize") == [] and "collapse(" in str(kernel.program), kernel.trace
    np.testing.assert_array_equal(kernel().to_numpy(), want.ravel())


@pytest.mark.parametrize("program, fmt, arrays", [
    ("c[k] = collapse(M[i, j] + V1[i] + V2[i], (j, i) -> k)", "csc", {"V1": [0.0, 0], "V2": [2.0, 3]}),
    ("c[k] = collapse(M[i, j] + V1[j] + 2, (i, j) -> k)", "csr", {"V1": [0.0, 0]}),
    ("c[k] = collapse(M[i, j] + V1[j] + 2, (i, j) -> k)", "csr", {"V1": [0.0, 5]})])
def test_two_broadcast_terms_walk_their_universes_apart(program, fmt, arrays):
    # (two terms' U_j × ... shared one cursor of j: the empty vector's product ran it to its end,
    # or each product advanced it, and the other term's entries were lost: [1, 0, 0, 0] for
    # [3, 3, 2, 3]; found by the property above)
    tensors = {"M": Tensor.from_numpy(np.array([[1.0, 0], [0, 0]]), fmt)}
    tensors.update({n: Tensor.from_numpy(np.array(a), "sparse") for n, a in arrays.items()})
    want = evaluate(program, **tensors)[0]
    np.testing.assert_array_equal(run_all(program, tensors, out=ss.parse_format("sparse_vector", ndim=1)), want)
