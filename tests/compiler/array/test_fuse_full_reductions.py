"""A reduction over every axis of a reshape or a transpose (compiler.array.fuse, issue 30): it reduces the tensor
under them, walked as stored, since no entry moves in or out. ``xp.sum(a.T.reshape(-1))`` of a CSR was refused by
the lattice (its column-major flatten undone only into a vector output) and the front end computed the transpose
and the ravel by kernels of their own. Each kernel against numpy, the dense oracle of its statement and the IR
interpreter, by both strategies."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.reference import evaluate

nan, inf = np.nan, np.inf
REDUCTIONS = ["sum", "max", "min", "prod", "any", "all"]
VIEWS = {
    "a.T.reshape(-1)": lambda m, a: a.T.reshape(-1),
    "a.reshape(3, 8).T": lambda m, a: a.reshape(3, 8).T,
    "a.T.reshape(2, 12)": lambda m, a: a.T.reshape(2, 12),
    "permute_dims(a.reshape(2, 3, 4), (2, 0, 1)).reshape(-1)":
        lambda m, a: m.permute_dims(a.reshape(2, 3, 4), (2, 0, 1)).reshape(-1),
}


def matrix(fmt, fill, seed=0, density=0.4, odd=(nan, inf, -0.0)):
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((4, 6)) < density, rng.choice([1.5, -2.0, 3.0, 1.0], (4, 6)), fill)
    a.flat[1:1 + len(odd)] = odd
    t = ss.Tensor.from_numpy(a, fmt, fill=fill)
    return xp.asarray(t), t.to_numpy()


def check(name, view, a, a_, strategy):
    """The reduction ``name`` of ``view`` of ``a`` as one kernel of ``strategy`` (no retry, nothing materialized),
    against numpy, the dense oracle and the IR interpreter."""
    e, w = VIEWS[view](xp, a), VIEWS[view](np, a_)
    if name in ("any", "all"):
        e, w = e > 1.0, w > 1.0
    with np.errstate(invalid="ignore", over="ignore"):
        want = np.asarray(getattr(np, name)(w))
        kernel = getattr(xp, name)(e).lower(strategy=strategy)
        assert kernel.trace.find("materialize") == [] and kernel.trace.find("retry") == [], \
            [s.note for s in kernel.trace.find("materialize") + kernel.trace.find("retry")]
        np.testing.assert_array_equal(np.asarray(kernel().to_numpy()), want)
        np.testing.assert_array_equal(np.asarray(evaluate(kernel.program, **kernel.arguments)[0]), want)
        np.testing.assert_array_equal(np.asarray(kernel.interpret().to_numpy()), want)
    # (the statement reads the tensor itself, as stored: no collapse or split left to walk or undo)
    assert "collapse" not in str(kernel.program) and "split" not in str(kernel.program), kernel.program
    return kernel


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("fmt, fill", [("csr", 0.0), ("csc", nan), ("coo", 1.0), ("dcsr", -inf), ("dense", 0.0),
                                       ("csr", inf), ("csc", 2.0)])
def test_a_full_reduction_of_a_transposed_ravel_is_one_kernel(strategy, name, fmt, fill):
    a, a_ = matrix(fmt, fill)
    check(name, "a.T.reshape(-1)", a, a_, strategy)


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_other_reshapes_and_transposes_under_a_full_reduction(view, fmt):
    for name in REDUCTIONS:
        a, a_ = matrix(fmt, nan if name == "max" else 0.0, seed=len(view))
        check(name, view, a, a_, "lattice")


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("fill", [0.0, nan, 2.0])
def test_empty_and_all_fill_matrices(fmt, fill):
    for density in (0.0, 1.0):
        a, a_ = matrix(fmt, fill, density=density, odd=())
        for name in REDUCTIONS:
            check(name, "a.T.reshape(-1)", a, a_, "lattice")


def test_a_partial_or_kept_reduction_still_reads_the_view():
    # (over some axes, or with keepdims, the result's coordinates are the view's: the statement keeps it)
    a, a_ = matrix("csr", 0.0)
    k = xp.sum(a.T.reshape(2, 12), axis=1).lower(strategy="looplets")
    np.testing.assert_array_equal(np.asarray(k().to_numpy()), np.sum(a_.T.reshape(2, 12), axis=1))
    k = xp.sum(a.T.reshape(-1), keepdims=True).lower(strategy="looplets")
    np.testing.assert_array_equal(np.asarray(k().to_numpy()), np.sum(a_.T.reshape(-1), keepdims=True))


@settings(max_examples=10, deadline=None)
@given(name=st.sampled_from(REDUCTIONS), view=st.sampled_from(sorted(VIEWS)),
       fmt=st.sampled_from(["csr", "csc", "coo", "dcsr"]), fill=st.sampled_from([0.0, 1.0, nan, inf, -inf]),
       seed=st.integers(0, 2**16), density=st.sampled_from([0.0, 0.3, 1.0]))
@example(name="prod", view="a.T.reshape(-1)", fmt="csc", fill=-inf, seed=3, density=0.3)
def test_full_reductions_by_property(name, view, fmt, fill, seed, density):
    a, a_ = matrix(fmt, fill, seed=seed, density=density)
    check(name, view, a, a_, "lattice")
