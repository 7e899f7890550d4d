"""Exact fill-value algebra under NaN and infinities (issue 28, item 3 and the fast path): an
annihilator skips work only where what the other operands may hold allows it, by both
strategies, and the sparse path is still taken for finite values."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, evaluate
from compiler.levels import Element
from compiler.looplets import compile_program
from compiler.looplets.language import loop_program

STRATEGIES = ["lattice", "looplets"]
NAN, INF = float("nan"), float("inf")


def decisions(kernel) -> list[tuple[str, str]]:
    """The value-facts step's (rule, expression) pairs; the looplets strategy names the operator
    and the annihilator's argument (``* with 0.0 at argument 1``), not the program's expression."""
    out = [(r.rule, r.before) for s in kernel.trace.find("value-facts") for r in s.rewrites]
    if kernel.strategy == "looplets":
        return [(rule, expr) for rule, _ in out for expr in EXPRESSIONS]
    return out


# (what a looplets decision stands for in these tests: each program has one annihilating call)
EXPRESSIONS = ["x[i] * z[i]", "W[i, j] + d[j]"]


def run(program, strategy, **tensors):
    k = ss.lower(program, strategy=strategy, **tensors)
    got = k(**tensors).to_numpy()
    want, _ = evaluate(program, **tensors)
    np.testing.assert_array_equal(got, want)
    return k, got


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_stored_nan_or_inf_times_the_other_operands_fill_zero_is_nan(strategy):
    # issue 28, item 3: both strategies gave [0, 0, 6]
    x = Tensor.from_numpy(np.array([0.0, 0.0, 2.0]), "sparse_vector", name="x")
    z = Tensor.from_numpy(np.array([NAN, INF, 3.0]), "sparse_vector", name="z")
    k, got = run("C[i] = x[i] * z[i]", strategy, x=x, z=z)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got, np.array([0.0, 0.0, 2.0]) * np.array([NAN, INF, 3.0]))
    assert ("exact-path", "x[i] * z[i]") in decisions(k)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_finite_values_keep_the_sparse_path(strategy):
    x = Tensor.from_numpy(np.array([0.0, 0.0, 2.0, 0.0]), "sparse_vector", name="x")
    z = Tensor.from_numpy(np.array([5.0, 0.0, 3.0, 1.0]), "sparse_vector", name="z")
    k, got = run("C[i] = x[i] * z[i]", strategy, x=x, z=z)
    assert ("sparse-path", "x[i] * z[i]") in decisions(k) and ("exact-path", "x[i] * z[i]") not in decisions(k)
    if strategy == "lattice":   # x ∩ z: one loop while both have entries
        rules = [r for s in k.trace.find("lattice") for r in s.rewrites]
        assert any(r.rule == "derive:annihilator" and r.before == "x[i] * z[i]" for r in rules)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_kernel_lowered_for_finite_values_runs_the_exact_variant_for_nan(strategy):
    x = Tensor.from_numpy(np.array([0.0, 2.0, 0.0]), "sparse_vector", name="x")
    finite = Tensor.from_numpy(np.array([1.0, 3.0, 0.0]), "sparse_vector", name="z")
    odd = Tensor.from_numpy(np.array([NAN, 3.0, -INF]), "sparse_vector", name="z")
    k = ss.lower("C[i] = x[i] * z[i]", strategy=strategy, x=x, z="sparse_vector")   # a format: assumed finite
    assert k.facts["z"].finite and ("sparse-path", "x[i] * z[i]") in decisions(k)
    np.testing.assert_array_equal(k(x=x, z=finite).to_numpy(), [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(k(x=x, z=odd).to_numpy(), [NAN, 6.0, NAN])
    exact = k.for_values({"x": x, "z": odd})
    assert exact is not k and not exact.facts["z"].finite and exact.c_source != k.c_source
    # lower()'s cache keys on the facts: the tensors' values pick the kernel
    assert ss.lower("C[i] = x[i] * z[i]", strategy=strategy, x=x, z=odd) is exact
    assert ss.lower("C[i] = x[i] * z[i]", strategy=strategy, x=x, z=finite) is k
    # a numpy array given at the call is looked at too
    np.testing.assert_array_equal(k(x=x, z=odd).to_numpy(), evaluate("C[i] = x[i] * z[i]", x=x, z=odd)[0])


@loop_program
def times(y, x, z):
    for i in _:
        y[i] = x[i] * z[i]


@loop_program
def dot(s, x, z):
    for i in _:
        s += x[i] * z[i]


@pytest.mark.parametrize("z_format", ["dense", "sparse_vector"])
def test_a_loop_program_lowered_for_finite_values_runs_the_exact_variant_for_nan(z_format):
    """compile_program and lower(prog, strategy="looplets") lowered for a finite z, called with a z
    holding NaN and infinities where x is absent (0): numpy's answer, from the exact variant."""
    xv, zv = np.array([0.0, 0.0, 2.0, 0.0, 1.0]), np.array([NAN, INF, 3.0, -INF, 4.0])
    x = Tensor.from_numpy(xv, "sparse_vector", name="x")
    finite = Tensor.from_numpy(np.array([1.0, 0.0, 3.0, 0.0, 4.0]), z_format, name="z")
    odd = Tensor.from_numpy(zv, z_format, name="z")
    with np.errstate(invalid="ignore"):
        want = xv * zv
    k = compile_program(times, y="dense", x=x, z=finite)
    assert k.facts["z"].finite
    np.testing.assert_array_equal(k(x=x, z=finite).to_numpy(), xv * finite.to_numpy())
    np.testing.assert_array_equal(k(x=x, z=odd).to_numpy(), want)
    lowered = ss.lower(times, strategy="looplets", y="dense", x=x, z=z_format)
    np.testing.assert_array_equal(lowered(x=x, z=odd).to_numpy(), want)
    np.testing.assert_array_equal(lowered.interpret(x=x, z=odd).to_numpy(), want)
    # a 0-d output comes back as a value from the variant too, as from the kernel it varies
    s = compile_program(dot, s=Element(0.0), x=x, z=finite)
    assert s(x=x, z=finite) == 10.0
    got = s(x=x, z=odd)
    assert isinstance(got, np.floating) and np.isnan(got)


def test_looplets_decide_each_product_by_the_tensors_its_operands_read():
    """A NaN in z does not send x * w down the exact path (the looplets strategy pooled the facts
    of all the program's tensors); x * z still takes it, and every answer is numpy's."""
    x = Tensor.from_numpy(np.array([0.0, 0.0, 2.0, 0.0, 1.0]), "sparse_vector", name="x")
    w = Tensor.from_numpy(np.array([0.0, 1.0, 2.0, 0.0, 3.0]), "sparse_vector", name="w")
    z = Tensor.from_numpy(np.array([NAN, 1.0, 2.0, INF, 0.0]), "sparse_vector", name="z")
    paths = {}
    for program in ["y[i] = x[i] * w[i] + z[i]", "y[i] = x[i] * z[i] + w[i]", "y[i] = x[i] * (w[i] + z[i])"]:
        k, _ = run(program, "looplets", x=x, w=w, z=z)
        paths[program] = {r.rule for s in k.trace.find("value-facts") for r in s.rewrites}
    assert paths["y[i] = x[i] * w[i] + z[i]"] == {"sparse-path"}
    assert "exact-path" in paths["y[i] = x[i] * z[i] + w[i]"]
    assert "exact-path" in paths["y[i] = x[i] * (w[i] + z[i])"]


def test_a_checked_kernel_sees_values_changed_in_place():
    x = Tensor.from_numpy(np.array([0.0, 2.0, 0.0]), "sparse_vector", name="x")
    z = Tensor.from_numpy(np.array([1.0, 3.0, 4.0]), "sparse_vector", name="z")
    k = ss.lower("C[i] = x[i] * z[i]", checked=True, x=x, z=z)
    assert z.value_facts.finite
    z.vals[0] = np.inf    # the user changes the stored values in place
    np.testing.assert_array_equal(k(x=x, z=z).to_numpy(), [NAN, 6.0, 0.0])
    assert not z.value_facts.finite


def bellman_ford(n, seed=0):
    S = sp.random(n, n, density=0.2, format="csr", random_state=seed)
    return Tensor.from_scipy(S, fill=INF, name="W")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_bellman_ford_skips_absent_edges_when_d_holds_no_nan_or_minus_inf(strategy):
    W = bellman_ford(9)
    d = np.random.default_rng(1).random(9)
    k, _ = run("y[i] = min[j](W[i, j] + d[j])", strategy, W=W, d=d)
    assert ("sparse-path", "W[i, j] + d[j]") in decisions(k)
    if strategy == "lattice":
        # the algebra of W[i, j] + d[j] is W's region alone: d is located where W stores an edge
        rules = [r for s in k.trace.find("lattice") for r in s.rewrites]
        assert any(r.rule == "derive:annihilator" and r.before == "W[i, j] + d[j]" for r in rules)
    for odd in (-INF, NAN):
        e = d.copy()
        e[3] = odd
        k2, got = run("y[i] = min[j](W[i, j] + d[j])", strategy, W=W, d=e)
        assert ("exact-path", "W[i, j] + d[j]") in decisions(k2)


def test_min_and_max_annihilators_propagate_nan_as_the_reference_does():
    a = Tensor.from_numpy(np.array([-INF, -INF, 1.0]), "sparse_vector", fill=-INF, name="a")
    b = Tensor.from_numpy(np.array([NAN, 2.0, 5.0]), "sparse_vector", name="b")
    for strategy in STRATEGIES:
        _, got = run("c[i] = min(a[i], b[i])", strategy, a=a, b=b)
        np.testing.assert_array_equal(got, np.minimum([-INF, -INF, 1.0], [NAN, 2.0, 5.0]))


# -- property tests: formats, fills and stored values with NaN and infinities -----------------

VALUES = st.sampled_from([0.0, 1.0, -2.5, 3.0, INF, -INF, NAN])
FILLS = st.sampled_from([0.0, 1.0, INF, -INF, NAN])
FORMATS = st.sampled_from(["dense", "sparse_vector"])
PROGRAMS = ["c[i] = x[i] * y[i]", "c[i] = x[i] + y[i]", "c[i] = min(x[i], y[i])", "c[i] = max(x[i], y[i])",
            "c[i] = x[i] * (y[i] + z[i])", "c[i] = min(x[i] + y[i], z[i]) * x[i]", "s[] = sum[i](x[i] * y[i])",
            "s[] = min[i](x[i] + y[i])"]


def vector(draw, n):
    fill = draw(FILLS)
    vals = draw(st.lists(st.one_of(st.just(fill), VALUES), min_size=n, max_size=n))
    return np.array(vals, dtype=float), fill


@st.composite
def cases(draw):
    n = draw(st.integers(0, 6))
    tensors = {}
    for name in "xyz":
        vals, fill = vector(draw, n)
        tensors[name] = Tensor.from_numpy(vals, draw(FORMATS), fill=fill, name=name)
    return draw(st.sampled_from(PROGRAMS)), tensors


@pytest.mark.parametrize("strategy", STRATEGIES)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cases())
@example(case=("c[i] = x[i] * y[i]", {
    "x": Tensor.from_numpy(np.array([0.0, 0.0, 2.0]), "sparse_vector", name="x"),
    "y": Tensor.from_numpy(np.array([NAN, INF, 3.0]), "sparse_vector", name="y"),
    "z": Tensor.from_numpy(np.zeros(3), "dense", name="z")}))
@example(case=("s[] = min[i](x[i] + y[i])", {
    "x": Tensor.from_numpy(np.array([INF, 1.0, INF]), "sparse_vector", fill=INF, name="x"),
    "y": Tensor.from_numpy(np.array([-INF, 2.0, 0.0]), "dense", name="y"),
    "z": Tensor.from_numpy(np.zeros(3), "dense", name="z")}))
def test_kernels_match_the_reference_under_nan_and_infinities(strategy, case):
    program, tensors = case
    used = {k: v for k, v in tensors.items() if f"{k}[" in program}
    want, _ = evaluate(program, **used)
    dense = {k: v.to_numpy() for k, v in used.items()}
    with np.errstate(all="ignore"):   # numpy itself, on the dense arrays
        if program.startswith("c[i] = x[i] * y[i]"):
            np.testing.assert_array_equal(want, dense["x"] * dense["y"])
    got = ss.lower(program, strategy=strategy, **used)(**used).to_numpy()
    np.testing.assert_array_equal(got, want)
